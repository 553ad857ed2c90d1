// Schema bytes per request: JSON.stringify length of every tool's definition as each adapter
// sends it (name, description, input schema), for each profile (`core` is the default of every
// adapter and of the MCP server) and for every tool without dedupe.
// Run: node adapters/schema-bytes.mjs [--json]
// @ts-check
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { resolveTools, PROFILE_NAMES } = require('./index.js')
const { toOpenAITools } = require('./openai.js')
const { toAnthropicTools } = require('./anthropic.js')
const { vsCodeManifest } = require('./vscode.js')
const { toMcpTool } = require('../mcp/server.js')
const { toLangChainTools } = require('./langchain.js')
const { toAiSdkTools } = await import('./ai-sdk.mjs')

const bytes = (/** @type {unknown} */ v) => Buffer.byteLength(JSON.stringify(v))

/**
 * The bytes each framework sends for `specs`.
 * @param {import('../index.js').NativeToolSpec[]} specs
 */
function row(specs) {
  return {
    count: specs.length,
    'openai strict': bytes(toOpenAITools(specs, { strict: true })),
    'openai non-strict': bytes(toOpenAITools(specs, { strict: false })),
    anthropic: bytes(toAnthropicTools(specs)),
    'ai-sdk': bytes(
      Object.entries(toAiSdkTools(specs, {})).map(([name, t]) => ({
        type: 'function',
        name,
        description: t.description,
        inputSchema: /** @type {{jsonSchema: unknown}} */ (/** @type {unknown} */ (t.inputSchema)).jsonSchema,
      })),
    ),
    langchain: bytes(toLangChainTools(specs, {}).map((t) => ({ name: t.name, description: t.description, schema: t.schema }))),
    'mcp tools/list': bytes({ tools: specs.map((s) => toMcpTool(s)) }),
    'mcp tools/list (with output schemas)': bytes({ tools: specs.map((s) => toMcpTool(s, { outputSchema: true })) }),
    'vscode manifest': bytes(vsCodeManifest({ tools: specs, prefix: 'eddie_' })),
  }
}

/** `{profile: {framework: bytes}}` for every profile, plus `every tool` (no dedupe). */
export function measure() {
  /** @type {Record<string, ReturnType<typeof row>>} */
  const out = {}
  for (const profile of PROFILE_NAMES) out[profile] = row(resolveTools(profile))
  out['every tool (no dedupe)'] = row(native.toolSpecs())
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = measure()
  if (process.argv.includes('--json')) console.log(JSON.stringify(table, null, 1))
  else console.table(table)
}
