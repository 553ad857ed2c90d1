// `@eddie/tools-native/langchain`: LangChain tools (`DynamicStructuredTool` with the tool's JSON
// Schema) for `@langchain/core` (an optional peer dependency).
// @ts-check
'use strict'
const { resolveTools, createSession, settle, errorInfo, modelSchema } = require('./index.js')

/** `@langchain/core/tools` (an optional peer dependency). */
function loadCore() {
  try {
    return require('@langchain/core/tools')
  } catch (cause) {
    const error = /** @type {Error & {code?: string}} */ (
      new Error('@eddie/tools-native/langchain needs `@langchain/core` (an optional peer dependency): `npm install @langchain/core`.', { cause })
    )
    error.code = 'LANGCHAIN_MISSING'
    throw error
  }
}

/**
 * One `DynamicStructuredTool` per tool, `responseFormat: 'content_and_artifact'`: the ToolMessage's
 * `content` is the text a model reads, its `artifact` the result's `data` (for code). An error does
 * not throw: the content is `CODE: message` and the artifact `{error: {code, message}}`, so an agent
 * loop hands it to the model to fix. The run's `signal` (RunnableConfig) becomes ctx.signal.
 * @param {readonly import('./index.js').ToolRef[] | null | undefined} tools
 * @param {import('./index.js').Session | import('./index.js').SessionOptions} session
 */
function toLangChainTools(tools, session) {
  const { DynamicStructuredTool } = loadCore()
  const s = createSession(session)
  return resolveTools(tools).map(
    (spec) =>
      new DynamicStructuredTool({
        name: spec.name,
        description: spec.description,
        // Without the root `additionalProperties: false` (as the MCP server lists them): LangChain
        // validates the input, and our documented aliases must reach the core, which still refuses
        // unknown keys, naming the closest one.
        schema: modelSchema(spec, { loose: true }),
        responseFormat: 'content_and_artifact',
        func: async (input, _runManager, config) => {
          const settled = await settle(s, spec.name, /** @type {Record<string, unknown>} */ (input ?? {}), { signal: config?.signal })
          return settled.ok ? [settled.text, settled.result.data] : [settled.text, { error: errorInfo(settled.error) }]
        },
      }),
  )
}

module.exports = { toLangChainTools }
