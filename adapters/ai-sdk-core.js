// The AI SDK adapter, independent of how `ai` was loaded (ai 7 is ESM-only: `ai-sdk.mjs` imports
// it, `ai-sdk.js` requires it).
// @ts-check
'use strict'
const { resolveTools, createSession, planConfirmation, specByName, errorInfo, modelSchema, toResultShape } = require('./index.js')

/**
 * @typedef {import('./index.js').Session} Session
 * @typedef {import('./index.js').SessionOptions} SessionOptions
 * @typedef {import('./index.js').ToolRef} ToolRef
 * @typedef {import('./index.js').ConfirmationPlan} ConfirmationPlan
 * @typedef {import('./index.js').ConfirmationPrompt} ConfirmationPrompt
 * @typedef {import('./ai-sdk.js').AiSdkToolsOptions} AiSdkToolsOptions
 */

/**
 * What the approver was shown for a tool call (by `aiSdkToolApproval`), by session and call id:
 * the approval that follows covers exactly those prompts. Bounded: an entry is taken by the
 * call's execute, and the oldest go first past the cap.
 */
/** @type {Map<string, ConfirmationPrompt[]>} */
const shown = new Map()
const SHOWN_CAP = 1000
/**
 * @param {Session} session
 * @param {string | undefined} toolCallId
 * @param {ConfirmationPlan} plan
 */
function remember(session, toolCallId, plan) {
  if (!toolCallId) return
  shown.set(`${session.sessionId}\u0000${toolCallId}`, plan.prompts)
  while (shown.size > SHOWN_CAP) shown.delete(/** @type {string} */ (shown.keys().next().value))
}
/**
 * @param {Session} session
 * @param {string | undefined} toolCallId
 */
function recall(session, toolCallId) {
  const key = `${session.sessionId}\u0000${toolCallId}`
  const prompts = shown.get(key)
  shown.delete(key)
  return prompts
}

/**
 * A ToolSet: one `tool({description, inputSchema: jsonSchema(...), execute, toModelOutput})` per
 * tool. `execute` resolves to the whole result (`{schema, content, data}`: code keeps `data`),
 * `toModelOutput` gives the model only the text, the call's `abortSignal` becomes ctx.signal, and
 * an error is rethrown with its code as `name` and `code`, so the model reads `CODE: message`.
 *
 * `options.approval`: 'confirm' (default) asks `session.confirm` during the call; 'sdk' marks the
 * calls that would ask with `needsApproval`, so the SDK asks before the call. Pair it with
 * `aiSdkToolApproval(session)`, which shows every prompt the call would ask (a destructive
 * command's finding included): the approval then covers exactly what was shown. Without it, an
 * approval covers only the tool's own question, and anything else (a destructive command, hooks,
 * a protected branch) still goes to `session.confirm`, or the call fails with
 * `APPROVAL_REQUIRED` and nothing runs.
 * @param {any} ai the `ai` module (its `tool` and `jsonSchema`)
 * @param {readonly ToolRef[] | null | undefined} tools
 * @param {Session | SessionOptions} session
 * @param {AiSdkToolsOptions} [options]
 */
function makeAiSdkTools(ai, tools, session, options = {}) {
  const { approval = 'confirm' } = options
  if (approval !== 'confirm' && approval !== 'sdk') throw new RangeError("approval must be 'confirm' or 'sdk'")
  const s = createSession(session)
  const shape = s.resultShape ?? 'text'
  /** @type {Record<string, unknown>} */
  const set = {}
  for (const spec of resolveTools(tools)) {
    const hostApproves = approval === 'sdk' && spec.confirms
    /** @type {Record<string, any>} */
    const def = {
      description: spec.description,
      inputSchema: ai.jsonSchema(modelSchema(spec)),
      execute: async (/** @type {Record<string, unknown>} */ input, /** @type {{toolCallId?: string, abortSignal?: AbortSignal} | undefined} */ opts) => {
        try {
          const approved = hostApproves ? (recall(s, opts?.toolCallId) ?? true) : undefined
          return await s.runDynamic(spec.name, input, { signal: opts?.abortSignal, approved })
        } catch (e) {
          // A seed's envelope carries the failure to the model as `{success: false, error}`.
          if (shape !== 'text') return toResultShape(shape, e)
          // The SDK gives the model `String(error)` (`name: message`): the name is the code.
          const { code, message } = errorInfo(e)
          const error = /** @type {Error & {code?: string}} */ (new Error(message, { cause: e }))
          error.name = code
          error.code = code
          throw error
        }
      },
      toModelOutput: (/** @type {{output: any}} */ { output }) => {
        if (shape !== 'text' && typeof output?.success === 'boolean') return { type: 'text', value: JSON.stringify(output) }
        if (shape !== 'text') return { type: 'text', value: JSON.stringify(toResultShape(shape, output)) }
        return { type: 'text', value: typeof output?.content === 'string' ? output.content : JSON.stringify(output) }
      },
    }
    // Asked when this call would ask (a moderate tool the session granted does not; a
    // destructive command always does).
    if (hostApproves) def.needsApproval = async (/** @type {Record<string, unknown>} */ input) => (await planConfirmation(/** @type {any} */ (spec.name), input, s)) !== null
    set[spec.name] = ai.tool(def)
  }
  return set
}

/**
 * A `toolApproval` for `generateText`/`streamText`: calls that would ask need the user's
 * approval, with every prompt the call would ask (from `planConfirmation`) as the reason shown to
 * the approver; the approval then covers exactly those prompts.
 * @param {Session | SessionOptions} session
 */
function aiSdkToolApproval(session) {
  const s = createSession(session)
  return async (/** @type {{toolCall: {toolName: string, toolCallId: string, input: any}}} */ { toolCall }) => {
    let spec
    try {
      spec = specByName(toolCall.toolName)
    } catch {
      return undefined
    }
    if (!spec.confirms) return 'not-applicable'
    const plan = await planConfirmation(/** @type {any} */ (spec.name), toolCall.input, s)
    if (!plan) return 'not-applicable'
    remember(s, toolCall.toolCallId, plan)
    return { type: 'user-approval', reason: plan.message }
  }
}

module.exports = { makeAiSdkTools, aiSdkToolApproval }
