// Schema bytes per request: JSON.stringify length of every tool's definition as each adapter
// sends it (name, description, input schema), for all tools and for `dedupe: true`.
// Run: node adapters/schema-bytes.mjs
// @ts-check
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { selectTools } = require('./index.js')
const { toOpenAITools } = require('./openai.js')
const { toAnthropicTools } = require('./anthropic.js')
const { vsCodeManifest } = require('./vscode.js')
const { toMcpTool } = require('../mcp/server.js')
const { toLangChainTools } = require('./langchain.js')
const { toAiSdkTools } = await import('./ai-sdk.mjs')

const bytes = (/** @type {unknown} */ v) => Buffer.byteLength(JSON.stringify(v))

export function measure() {
  const rows = []
  /** @type {[string, import('../index.js').NativeToolSpec[] | undefined][]} */
  const sets = [['all tools', undefined], ['dedupe: true', selectTools({ dedupe: true })]]
  for (const [label, names] of sets) {
    const specs = names ?? native.toolSpecs()
    const raw = specs.map((s) => ({ name: s.name, description: s.description, parameters: s.jsonSchema }))
    const mcp = specs.map((s) => {
      const { annotations, outputSchema, ...t } = toMcpTool(s)
      void annotations
      void outputSchema
      return t
    })
    rows.push({
      tools: label,
      count: specs.length,
      'toolSpecs (name, description, jsonSchema)': bytes(raw),
      'allTools as ToolDefinitions (+ outputSchema)': bytes(specs.map((s) => ({ name: s.name, description: s.description, jsonSchema: s.jsonSchema, outputSchema: s.outputSchema }))),
      'openai strict': bytes(toOpenAITools(specs, { strict: true })),
      'openai non-strict': bytes(toOpenAITools(specs, { strict: false })),
      anthropic: bytes(toAnthropicTools(specs)),
      'ai-sdk (as the provider receives it)': bytes(
        Object.entries(toAiSdkTools(specs, {})).map(([name, t]) => ({
          type: 'function',
          name,
          description: t.description,
          inputSchema: /** @type {{jsonSchema: unknown}} */ (/** @type {unknown} */ (t.inputSchema)).jsonSchema,
        })),
      ),
      langchain: bytes(toLangChainTools(specs, {}).map((t) => ({ name: t.name, description: t.description, schema: t.schema }))),
      'mcp tools/list (input only)': bytes(mcp),
      'vscode manifest': bytes(vsCodeManifest({ tools: specs, prefix: 'eddie_' })),
    })
  }
  return rows
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop() ?? '')) {
  for (const row of measure()) console.log(JSON.stringify(row, null, 1))
}
