// The JSON-RPC side of the MCP server, with no dependency: requests and notifications both
// ways over a transport (`mcp/transport.js`), answers matched to requests by id, and the
// `notifications/cancelled` of a request aborting its handler's signal.
// @ts-check
'use strict'

/**
 * @typedef {{jsonrpc: '2.0', id?: string | number | null, method?: string, params?: any, result?: any, error?: {code: number, message: string, data?: unknown}}} Message
 * @typedef {{signal: AbortSignal, requestId: string | number, sendNotification(n: {method: string, params?: unknown}): Promise<void>}} RequestExtra
 * @typedef {(params: any, extra: RequestExtra) => unknown} RequestHandler
 * @typedef {(params: any) => unknown} NotificationHandler
 */

/** JSON-RPC error codes. */
const ErrorCode = { ParseError: -32700, InvalidRequest: -32600, MethodNotFound: -32601, InvalidParams: -32602, InternalError: -32603 }

/**
 * Whether `v` is a JSON-RPC 2.0 request, notification or response (what the transport lets through).
 * @param {unknown} v
 */
function isMessage(v) {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false
  const m = /** @type {Record<string, unknown>} */ (v)
  if (m.jsonrpc !== '2.0') return false
  const id = m.id
  const validId = typeof id === 'string' || typeof id === 'number'
  if (typeof m.method === 'string') {
    if ('params' in m && (m.params === null || typeof m.params !== 'object')) return false
    return !('id' in m) || validId
  }
  if (!validId) return false
  if ('result' in m) return !!m.result && typeof m.result === 'object'
  const e = /** @type {{code?: unknown, message?: unknown} | undefined} */ (m.error)
  return !!e && typeof e === 'object' && typeof e.code === 'number' && typeof e.message === 'string'
}

/** An error answered as a JSON-RPC error. */
class RpcError extends Error {
  /**
   * @param {number} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message)
    this.code = code
  }
}

class Peer {
  constructor() {
    /** @type {Map<string, RequestHandler>} */
    this._requests = new Map()
    /** @type {Map<string, NotificationHandler>} */
    this._notifications = new Map()
    /** @type {Map<string | number, {resolve(v: any): void, reject(e: Error): void}>} */
    this._pending = new Map()
    /** @type {Map<string | number, AbortController>} */
    this._running = new Map()
    this._nextId = 0
    /** @type {any} */
    this._transport = null
    /** @type {(() => void) | undefined} */
    this.onclose = undefined
    this._notifications.set('notifications/cancelled', (params) => this._running.get(params?.requestId)?.abort(params?.reason ?? 'cancelled'))
  }

  /**
   * @param {string} method
   * @param {RequestHandler} handler
   */
  onRequest(method, handler) {
    this._requests.set(method, handler)
  }

  /**
   * @param {string} method
   * @param {NotificationHandler} handler
   */
  onNotification(method, handler) {
    this._notifications.set(method, handler)
  }

  /** @param {any} transport an EddieStdioTransport (or anything with start/send/close and the three callbacks) */
  async connect(transport) {
    this._transport = transport
    transport.onmessage = (/** @type {Message} */ m) => this._take(m)
    transport.onclose = () => {
      for (const p of this._pending.values()) p.reject(new Error('connection closed'))
      this._pending.clear()
      for (const c of this._running.values()) c.abort('connection closed')
      this.onclose?.()
    }
    transport.onerror = () => {}
    await transport.start()
  }

  async close() {
    await this._transport?.close()
  }

  /**
   * @param {Message} m
   * @returns {Promise<void>}
   */
  _send(m) {
    return this._transport ? this._transport.send(m) : Promise.resolve()
  }

  /**
   * @param {{method: string, params?: unknown}} n
   */
  notify(n) {
    return this._send({ jsonrpc: '2.0', ...n })
  }

  /**
   * Ask the client; rejects with its error, or when `signal` aborts, or when the connection closes.
   * @param {string} method
   * @param {unknown} params
   * @param {{signal?: AbortSignal, timeoutMs?: number}} [options]
   * @returns {Promise<any>}
   */
  request(method, params, options = {}) {
    const id = `s${this._nextId++}`
    return new Promise((resolve, reject) => {
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let timer
      const done = () => {
        this._pending.delete(id)
        if (timer) clearTimeout(timer)
        options.signal?.removeEventListener('abort', onAbort)
      }
      const onAbort = () => {
        done()
        this.notify({ method: 'notifications/cancelled', params: { requestId: id, reason: 'cancelled' } }).catch(() => {})
        reject(new Error(`${method} cancelled`))
      }
      if (options.signal?.aborted) return onAbort()
      options.signal?.addEventListener('abort', onAbort, { once: true })
      if (options.timeoutMs) timer = setTimeout(() => (done(), reject(new Error(`${method}: no answer in ${options.timeoutMs} ms`))), options.timeoutMs)
      this._pending.set(id, {
        resolve: (v) => (done(), resolve(v)),
        reject: (e) => (done(), reject(e)),
      })
      this._send({ jsonrpc: '2.0', id, method, params }).catch((e) => this._pending.get(id)?.reject(e))
    })
  }

  /** @param {Message} m */
  _take(m) {
    if (typeof m.method !== 'string') {
      const p = m.id === undefined || m.id === null ? undefined : this._pending.get(m.id)
      if (!p) return
      if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }))
      else p.resolve(m.result)
      return
    }
    if (m.id === undefined || m.id === null) {
      try {
        Promise.resolve(this._notifications.get(m.method)?.(m.params ?? {})).catch(() => {})
      } catch {
        // a notification gets no answer, not even an error
      }
      return
    }
    this._answer(/** @type {string | number} */ (m.id), m.method, m.params ?? {})
  }

  /**
   * @param {string | number} id
   * @param {string} method
   * @param {unknown} params
   */
  async _answer(id, method, params) {
    const handler = this._requests.get(method)
    if (!handler) {
      await this._send({ jsonrpc: '2.0', id, error: { code: ErrorCode.MethodNotFound, message: `method not found: ${method}` } }).catch(() => {})
      return
    }
    const controller = new AbortController()
    this._running.set(id, controller)
    /** @type {RequestExtra} */
    const extra = { signal: controller.signal, requestId: id, sendNotification: (n) => this.notify(n) }
    try {
      const result = await handler(params, extra)
      // A cancelled request gets no answer (the client has stopped waiting).
      if (!controller.signal.aborted) await this._send({ jsonrpc: '2.0', id, result: result ?? {} })
    } catch (e) {
      const error = /** @type {{code?: unknown, message?: unknown}} */ (e)
      const code = typeof error?.code === 'number' ? error.code : ErrorCode.InternalError
      const message = typeof error?.message === 'string' ? error.message : String(e)
      if (!controller.signal.aborted) await this._send({ jsonrpc: '2.0', id, error: { code, message } }).catch(() => {})
    } finally {
      this._running.delete(id)
    }
  }
}

module.exports = { Peer, RpcError, ErrorCode, isMessage }
