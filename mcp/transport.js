// The MCP server's stdio transport: newline-delimited JSON-RPC, like the SDK's, but a message
// the server cannot take always gets an answer and never ends the server:
// - a line over the size limit is skipped to its end and answered with an error naming the
//   limit (the SDK's transport closed the connection, and the server exited with code 0);
// - a line that is not JSON gets a parse error (-32700);
// - a request that is not a valid JSON-RPC request (`params: "x"`) gets -32600/-32602 with its
//   id (the SDK's transport dropped it, and the client waited for ever).
// @ts-check
'use strict'

const { randomUUID } = require('node:crypto')

const MAX_MESSAGE_BYTES = 10 * 1024 * 1024

/**
 * JSON text already made (a tool's `data`, serialised by the core), sent as it is: `send` writes
 * it between the parts of the message around it, so a large result is neither parsed nor built
 * into one string again. It must be valid JSON (the core's serialiser made it).
 */
class RawJson {
  /** @param {string} json */
  constructor(json) {
    this.json = json
  }

  /** Another transport's `JSON.stringify` gets the value itself. */
  toJSON() {
    return JSON.parse(this.json)
  }
}

/** @typedef {import('./rpc.js').Message} JSONRPCMessage */

class EddieStdioTransport {
  /**
   * @param {{ stdin?: NodeJS.ReadableStream, stdout?: NodeJS.WritableStream, maxMessageBytes?: number, schema: { safeParse(v: unknown): { success: boolean } } }} options
   */
  constructor(options) {
    this._stdin = options.stdin ?? process.stdin
    this._stdout = options.stdout ?? process.stdout
    this._max = options.maxMessageBytes ?? MAX_MESSAGE_BYTES
    this._schema = options.schema
    /** @type {Buffer[]} */
    this._chunks = []
    this._size = 0
    this._skipping = false
    this._skippedHead = ''
    this._started = false
    /** @type {string | undefined} the stand-in for a RawJson while the message around it is serialised */
    this._mark = undefined
    this._ondata = (/** @type {Buffer | string} */ chunk) => this._take(chunk)
    this._onerror = (/** @type {Error} */ error) => this.onerror?.(error)
    this._onend = () => this.close()
    /** @type {((message: JSONRPCMessage) => void) | undefined} */
    this.onmessage = undefined
    /** @type {((error: Error) => void) | undefined} */
    this.onerror = undefined
    /** @type {(() => void) | undefined} */
    this.onclose = undefined
  }

  async start() {
    if (this._started) throw new Error('transport already started')
    this._started = true
    this._stdin.on('data', this._ondata)
    this._stdin.on('error', this._onerror)
    this._stdin.on('end', this._onend)
  }

  /** @param {Buffer | string} chunk */
  _take(chunk) {
    let buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
    for (;;) {
      const nl = buf.indexOf(0x0a)
      const part = nl === -1 ? buf : buf.subarray(0, nl)
      if (this._skipping) {
        if (this._skippedHead.length < 256) this._skippedHead += part.subarray(0, 256).toString('utf8')
      } else if (this._size + part.length > this._max) {
        // Keep the start, to find the request's id; drop the rest up to the newline.
        this._skippedHead = Buffer.concat([...this._chunks, part]).subarray(0, 256).toString('utf8')
        this._chunks = []
        this._size = 0
        this._skipping = true
      } else {
        this._chunks.push(part)
        this._size += part.length
      }
      if (nl === -1) return
      if (this._skipping) {
        this._tooLarge(this._skippedHead)
        this._skipping = false
        this._skippedHead = ''
      } else {
        const line = Buffer.concat(this._chunks).toString('utf8').replace(/\r$/, '')
        this._chunks = []
        this._size = 0
        if (line.trim()) this._line(line)
      }
      buf = buf.subarray(nl + 1)
    }
  }

  /** @param {string} head */
  _tooLarge(head) {
    const m = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(head)
    let id = null
    try {
      id = m ? JSON.parse(m[1]) : null
    } catch {
      id = null
    }
    this._reply(id, -32600, `message too large: the limit is ${this._max} bytes (${Math.round(this._max / 1048576)} MiB); nothing was done`)
  }

  /** @param {string} line */
  _line(line) {
    let value
    try {
      value = JSON.parse(line)
    } catch (e) {
      this._reply(null, -32700, `parse error: ${/** @type {Error} */ (e).message}`)
      return
    }
    if (this._schema.safeParse(value).success) {
      this.onmessage?.(/** @type {JSONRPCMessage} */ (value))
      return
    }
    const isObject = value !== null && typeof value === 'object' && !Array.isArray(value)
    const id = isObject && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null
    // A notification or a response that does not validate gets no answer (none is allowed).
    if ((id === null && isObject && 'method' in value) || (isObject && !('method' in value) && ('result' in value || 'error' in value))) {
      this.onerror?.(new Error('dropped an invalid JSON-RPC notification or response'))
      return
    }
    if (isObject && typeof value.method === 'string' && 'params' in value && (value.params === null || typeof value.params !== 'object')) {
      this._reply(id, -32602, `invalid params: \`params\` of ${value.method} must be an object`)
      return
    }
    this._reply(id, -32600, 'invalid request: not a JSON-RPC 2.0 message ({jsonrpc: "2.0", id, method, params?})')
  }

  /**
   * @param {string | number | null} id
   * @param {number} code
   * @param {string} message
   */
  _reply(id, code, message) {
    // JSON-RPC answers an unreadable request with `id: null`, which the SDK's type leaves out.
    this.send(/** @type {JSONRPCMessage} */ (/** @type {unknown} */ ({ jsonrpc: '2.0', id, error: { code, message } }))).catch(() => {})
  }

  /**
   * @param {JSONRPCMessage} message
   * @returns {Promise<void>}
   */
  send(message) {
    return new Promise((/** @type {(value?: void) => void} */ resolve) => {
      if (this._write(message)) resolve()
      else this._stdout.once('drain', resolve)
    })
  }

  /**
   * Write one message and its newline; a `RawJson` as `result.structuredContent` is written as
   * it is, between the serialised parts around it. Whether the stream wants more now.
   * @param {JSONRPCMessage} message
   */
  _write(message) {
    const raw = message.result?.structuredContent
    if (!(raw instanceof RawJson)) return this._stdout.write(`${JSON.stringify(message)}\n`)
    // A mark no text can hold (a NUL and a fresh UUID) stands where the raw text goes.
    this._mark ??= `\u0000${randomUUID()}`
    const mark = JSON.stringify(this._mark)
    const text = JSON.stringify({ ...message, result: { ...message.result, structuredContent: this._mark } })
    const at = text.lastIndexOf(mark)
    const out = /** @type {NodeJS.WritableStream & {cork?: () => void, uncork?: () => void}} */ (this._stdout)
    out.cork?.()
    out.write(text.slice(0, at))
    out.write(raw.json)
    const more = out.write(`${text.slice(at + mark.length)}\n`)
    out.uncork?.()
    return more
  }

  async close() {
    this._stdin.off('data', this._ondata)
    this._stdin.off('error', this._onerror)
    this._stdin.off('end', this._onend)
    if (this._stdin.listenerCount('data') === 0 && typeof this._stdin.pause === 'function') this._stdin.pause()
    this._chunks = []
    const onclose = this.onclose
    this.onclose = undefined
    onclose?.()
  }
}

module.exports = { EddieStdioTransport, RawJson, MAX_MESSAGE_BYTES }
