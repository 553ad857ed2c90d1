// `@eddie/tools-native/anthropic`: tool definitions for the Anthropic Messages API, a runner for the
// `tool_use` blocks of a reply, and runnable tools for the SDK's own tool runner
// (`client.beta.messages.toolRunner`).
// @ts-check
'use strict'
const { resolveTools, createSession, settle, toModelText, modelSchema } = require('./index.js')

/**
 * @typedef {import('./index.js').Session} Session
 * @typedef {import('./index.js').SessionOptions} SessionOptions
 * @typedef {import('./index.js').ToolRef} ToolRef
 * @typedef {import('./anthropic.js').AnthropicToolResultBlock} AnthropicToolResultBlock
 */

/**
 * `{name, description, input_schema}` for each tool (the tool's own JSON Schema).
 * @param {readonly ToolRef[] | null} [tools]
 */
function toAnthropicTools(tools) {
  return resolveTools(tools).map((spec) => ({
    name: spec.name,
    description: spec.description,
    input_schema: modelSchema(spec),
  }))
}

/**
 * Run the `tool_use` blocks of a reply (a message's `content`, or the message itself) in order and
 * return the `tool_result` blocks for the next user message: `content` is the text a model reads,
 * `is_error` is set for errors (`CODE: message`). Other blocks are skipped; nothing throws.
 * @param {any} blocks
 * @param {Session | SessionOptions} [session]
 * @param {{signal?: AbortSignal}} [options]
 */
async function runAnthropicToolUses(blocks, session, options = {}) {
  const s = createSession(session)
  const list = Array.isArray(blocks) ? blocks : blocks?.content ?? []
  /** @type {AnthropicToolResultBlock[]} */
  const out = []
  for (const block of list) {
    if (block?.type !== 'tool_use') continue
    const settled = await settle(s, block.name, block.input ?? {}, { signal: options.signal }).catch((e) => ({ ok: false, text: toModelText(e) }))
    /** @type {AnthropicToolResultBlock} */
    const result = { type: 'tool_result', tool_use_id: block.id, content: settled.text }
    if (!settled.ok) result.is_error = true
    out.push(result)
  }
  return out
}

/**
 * The SDK's ToolError class, whose `content` the tool runner sends as an is_error tool_result as
 * it is (anything else becomes `Error: <message>`). The SDK ships a CommonJS and an ES-module
 * copy, and the runner checks `instanceof`: the CommonJS copy when it is already loaded (the
 * caller required the SDK), else the ES-module one. `options.ToolError` overrides the choice.
 */
async function sdkToolErrorClass() {
  const id = '@anthropic-ai/sdk/lib/tools/ToolError'
  try {
    const cjs = require.resolve(id)
    if (require.cache[cjs]) return require(id).ToolError
  } catch {
    return null
  }
  try {
    return (await import(id)).ToolError
  } catch {
    return require(id).ToolError
  }
}

/**
 * Tools for the SDK's tool runner (`client.beta.messages.toolRunner({tools, ...})`): each has
 * `run(input, {signal})` (the text a model reads; an error is thrown as the SDK's ToolError with
 * `CODE: message`, see sdkToolErrorClass) and `parse` (the input as sent; the core validates it).
 * @param {readonly ToolRef[] | null | undefined} tools
 * @param {Session | SessionOptions} [session]
 * @param {{ToolError?: new (content: string) => Error}} [options]
 */
function toAnthropicRunnableTools(tools, session, options = {}) {
  const s = createSession(session)
  return toAnthropicTools(tools).map((def) => ({
    type: 'custom',
    ...def,
    parse: (/** @type {any} */ input) => input ?? {},
    run: async (/** @type {any} */ input, /** @type {{signal?: AbortSignal | null} | undefined} */ context) => {
      const settled = await settle(s, def.name, input, { signal: context?.signal ?? undefined })
      if (!settled.ok) {
        const ToolError = options.ToolError ?? (await sdkToolErrorClass())
        throw ToolError ? new ToolError(settled.text) : new Error(settled.text)
      }
      return settled.text
    },
  }))
}

module.exports = { toAnthropicTools, runAnthropicToolUses, toAnthropicRunnableTools }
