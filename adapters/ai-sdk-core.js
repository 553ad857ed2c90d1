// The AI SDK adapter, independent of how `ai` was loaded (ai 7 is ESM-only: `ai-sdk.mjs` imports
// it, `ai-sdk.js` requires it).
'use strict'
const { resolveTools, createSession, describeConfirmation, specByName, errorInfo, modelSchema, wouldAsk } = require('./index.js')

/**
 * A ToolSet: one `tool({description, inputSchema: jsonSchema(...), execute, toModelOutput})` per
 * tool. `execute` resolves to the whole result (`{schema, content, data}`: code keeps `data`),
 * `toModelOutput` gives the model only the text, the call's `abortSignal` becomes ctx.signal, and
 * an error is rethrown with its code as `name` and `code`, so the model reads `CODE: message`.
 *
 * `options.approval`: 'confirm' (default) asks `session.confirm` during the call; 'sdk' marks the
 * tools that confirm with `needsApproval` so the SDK asks before the call (pair it with
 * `aiSdkToolApproval(session)` to show our confirmation text) and runs them approved.
 */
function makeAiSdkTools(ai, tools, session, options = {}) {
  const { approval = 'confirm' } = options
  if (approval !== 'confirm' && approval !== 'sdk') throw new RangeError("approval must be 'confirm' or 'sdk'")
  const s = createSession(session)
  const set = {}
  for (const spec of resolveTools(tools)) {
    const hostApproves = approval === 'sdk' && spec.confirms
    const def = {
      description: spec.description,
      inputSchema: ai.jsonSchema(modelSchema(spec)),
      execute: async (input, opts) => {
        try {
          return await s.run(spec.name, input, { signal: opts?.abortSignal, approved: hostApproves })
        } catch (e) {
          // The SDK gives the model `String(error)` (`name: message`): the name is the code.
          const { code, message } = errorInfo(e)
          const error = new Error(message, { cause: e })
          error.name = code
          error.code = code
          throw error
        }
      },
      toModelOutput: ({ output }) => ({ type: 'text', value: typeof output?.content === 'string' ? output.content : JSON.stringify(output) }),
    }
    // Asked unless the session has already granted the tool (a moderate exec tool approved once).
    if (hostApproves) def.needsApproval = () => wouldAsk(spec.name, s)
    set[spec.name] = ai.tool(def)
  }
  return set
}

/**
 * A `toolApproval` for `generateText`/`streamText`: tools that confirm need the user's approval,
 * with our confirmation text (from `describeConfirmation`) as the reason shown to the approver.
 */
function aiSdkToolApproval(session) {
  const s = createSession(session)
  return async ({ toolCall }) => {
    let spec
    try {
      spec = specByName(toolCall.toolName)
    } catch {
      return undefined
    }
    if (!spec.confirms || !(await wouldAsk(spec.name, s))) return 'not-applicable'
    const reason = await describeConfirmation(spec.name, toolCall.input, s)
    return reason ? { type: 'user-approval', reason } : { type: 'user-approval' }
  }
}

module.exports = { makeAiSdkTools, aiSdkToolApproval }
