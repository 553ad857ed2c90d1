// One host path: the core names the closest tools for an unknown one, and every host (runTool,
// the adapters, the CLI, the MCP server) shows the core's message; index.js refuses to load when
// its exports no longer match the binary's tools.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import * as tools from '../index.js'
import adapters from '../adapters/index.js'
import { workspace } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'bin/eddie-tools.js')
const require = createRequire(import.meta.url)

/**
 * Evaluate index.js as it is, with the real binding except that toolSpecs() returns `specs`
 * (a binary built from another registry than the one index.js was generated from).
 */
function loadIndexWith(specs) {
  const binding = require('../binding.js')
  const drifted = new Proxy(binding, { get: (b, k) => (k === 'toolSpecs' ? () => specs : b[k]) })
  const source = readFileSync(join(root, 'index.js'), 'utf8')
  const module = { exports: {} }
  const req = (id) => (id === './binding.js' ? drifted : require(id.startsWith('.') ? join(root, id) : id))
  new Function('require', 'module', 'exports', source)(req, module, module.exports)
  return module.exports
}

test('index.js loads when each export still calls its own tool', () => {
  const loaded = loadIndexWith(tools.toolSpecs())
  assert.equal(typeof loaded.grep, 'function')
  assert.equal(loaded.allTools.length, tools.toolSpecs().length)
})

test('index.js refuses to load when the binary holds its tools in another order', () => {
  const specs = tools.toolSpecs()
  // Two neighbours swapped: every name still exists, but two exports would call the other tool.
  const i = specs.findIndex((s) => s.name === 'grep')
  const swapped = [...specs]
  ;[swapped[i], swapped[i + 1]] = [swapped[i + 1], swapped[i]]
  assert.throws(
    () => loadIndexWith(swapped),
    (e) => e.code === 'NATIVE_BINDING_MISMATCH' && /grep calls tool #\d+, which is glob/.test(e.message) && /npm run build/.test(e.message),
  )
  // A shuffled list, a missing tool and an extra one fail the same way.
  const shuffled = [...specs].reverse()
  assert.throws(() => loadIndexWith(shuffled), { code: 'NATIVE_BINDING_MISMATCH' })
  assert.throws(() => loadIndexWith(specs.slice(0, -1)), (e) => e.code === 'NATIVE_BINDING_MISMATCH' && /missing/.test(e.message))
  assert.throws(
    () => loadIndexWith([...specs, { ...specs[0], name: 'extra_tool', jsName: 'extraTool' }]),
    (e) => e.code === 'NATIVE_BINDING_MISMATCH' && /extra_tool \(extraTool\) has no export/.test(e.message),
  )
  // A renamed JS export is drift too, even at the same place.
  const renamed = specs.map((s) => (s.name === 'grep' ? { ...s, jsName: 'grepFiles' } : s))
  assert.throws(() => loadIndexWith(renamed), { code: 'NATIVE_BINDING_MISMATCH' })
})

test('UNKNOWN_TOOL from the core names the closest tools, with them as `suggestions`', async () => {
  const ctx = { cwd: workspace({}) }
  await assert.rejects(tools.runTool('grepp', {}, ctx), (e) => {
    assert.equal(e.code, 'UNKNOWN_TOOL')
    assert.equal(e.message, 'Unknown tool: grepp. Did you mean `grep`?')
    assert.deepEqual(e.suggestions, ['grep'])
    return true
  })
  // Nothing near: no guess, and an empty list.
  await assert.rejects(tools.runTool('zzzzzzzzzzzzzz', {}, ctx), (e) => e.message === 'Unknown tool: zzzzzzzzzzzzzz' && e.suggestions.length === 0)
  // check_permission asks the same lookup.
  await assert.rejects(tools.checkPermission({ toolName: 'git_stauts' }, ctx), (e) => e.code === 'UNKNOWN_TOOL' && e.suggestions[0] === 'git_status')
  // toolSpec: the same lookup, synchronously; model, JS and other agents' names resolve.
  assert.equal(tools.toolSpec('fileRead').name, 'file_read')
  assert.equal(tools.toolSpec('execute_command').name, 'run')
  assert.throws(() => tools.toolSpec('readFiel'), (e) => e.code === 'UNKNOWN_TOOL' && e.suggestions[0] === 'read_file')
})

test('the adapters throw the core error, and a model reads its message', async () => {
  assert.throws(() => adapters.specByName('gerp'), (e) => e.code === 'UNKNOWN_TOOL' && /Did you mean `grep`/.test(e.message))
  assert.throws(() => adapters.selectTools({ names: ['file_raed'] }), (e) => e.suggestions?.[0] === 'file_read')
  const session = adapters.createSession({ cwd: workspace({}) })
  const settled = await adapters.settle(session, 'list_directry', {})
  assert.equal(settled.ok, false)
  assert.equal(settled.text, 'UNKNOWN_TOOL: Unknown tool: list_directry. Did you mean `list_directory`?')
})

test('the CLI prints the core message and its suggestions, and exits 2', () => {
  const r = spawnSync(process.execPath, [cli, 'gti_status', '{}'], { encoding: 'utf8' })
  assert.equal(r.status, 2)
  const { error } = JSON.parse(r.stderr)
  assert.equal(error.code, 'UNKNOWN_TOOL')
  assert.match(error.message, /^Unknown tool: gti_status\. Did you mean `git_status`/)
  assert.equal(error.suggestions[0], 'git_status')
})

test('the MCP server shows the core message for an unknown tool, its own for a tool it does not serve', async () => {
  const client = new Client({ name: 'eddie-test', version: '1.0.0' }, { capabilities: {} })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--root', workspace({}), '--families', 'code'], stderr: 'pipe' }))
  try {
    const unknown = await client.callTool({ name: 'grepp', arguments: {} })
    assert.equal(unknown.isError, true)
    assert.equal(unknown.content[0].text, 'UNKNOWN_TOOL: Unknown tool: grepp. Did you mean `grep`?')
    const notServed = await client.callTool({ name: 'read_file', arguments: { path: 'x' } })
    assert.equal(notServed.isError, true)
    assert.match(notServed.content[0].text, /^UNKNOWN_TOOL: no tool named `read_file` on this server/)
    // Another agent's name of a served tool runs it (Floyd's grep_search is grep).
    const alias = await client.callTool({ name: 'grep_search', arguments: { pattern: 'nothing-here' } })
    assert.equal(alias.isError, undefined, alias.content[0].text)
  } finally {
    await client.close()
  }
})
