// `eddie-tools mcp`, end to end: the official MCP SDK's client over stdio, against the CLI.
import test from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import * as tools from '../index.js'
import { workspace } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'bin/eddie-tools.js')

/** A connected client; `elicit` answers confirms when given, `roots` are the client's roots. */
async function connect(args = [], { elicit, roots } = {}) {
  const capabilities = {}
  if (elicit) capabilities.elicitation = {}
  if (roots) capabilities.roots = { listChanged: true }
  const client = new Client({ name: 'eddie-test', version: '1.0.0' }, { capabilities })
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params))
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.current.map((d) => ({ uri: pathToFileURL(d).href })) }))
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', ...args], stderr: 'pipe' })
  await client.connect(transport)
  return client
}

const text = (result) => result.content.map((c) => c.text).join('')

test('tools/list: every tool with its schemas and annotations; aliases pass the listed schema', async () => {
  const client = await connect(['--root', workspace()])
  try {
    const { tools: listed } = await client.listTools()
    const specs = tools.toolSpecs()
    assert.deepEqual(listed.map((t) => t.name), specs.map((s) => s.name))
    const read = listed.find((t) => t.name === 'read_file')
    assert.equal(read.inputSchema.type, 'object')
    assert.equal(read.inputSchema.additionalProperties, undefined, 'a client-side validator must let aliases through')
    // Every property says what it is (eddie's from its contract_docs: its jsonSchema stays verbatim).
    for (const t of listed) {
      for (const [key, prop] of Object.entries(t.inputSchema.properties ?? {})) assert.ok(prop.description, `${t.name}.${key} has a description`)
    }
    assert.equal(read.outputSchema.type, 'object')
    assert.deepEqual(read.annotations, { title: 'read_file', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
    const del = listed.find((t) => t.name === 'delete_file').annotations
    assert.equal(del.readOnlyHint, false)
    assert.equal(listed.find((t) => t.name === 'run').annotations.openWorldHint, true)
    assert.equal(del.destructiveHint, specs.find((s) => s.name === 'delete_file').permission === 'dangerous')
  } finally {
    await client.close()
  }
})

test('tools/call: content plus structuredContent; aliases; errors carry the code', async () => {
  const ws = workspace({ 'a.txt': 'alpha\nbeta\n' })
  const client = await connect(['--root', ws])
  try {
    const r = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })
    assert.equal(r.isError, undefined)
    assert.match(text(r), /alpha/)
    assert.equal(typeof r.structuredContent, 'object')
    const viaAlias = await client.callTool({ name: 'read_file', arguments: { file_path: 'a.txt' } })
    assert.match(text(viaAlias), /beta/)
    const escape = await client.callTool({ name: 'read_file', arguments: { path: '../outside.txt' } })
    assert.equal(escape.isError, true)
    assert.match(text(escape), /^OUTSIDE_WORKSPACE: /)
    const unknownKey = await client.callTool({ name: 'read_file', arguments: { path: 'a.txt', pth: 1 } })
    assert.equal(unknownKey.isError, true)
    assert.match(text(unknownKey), /^INVALID_ARGUMENT: .*`pth`/)
    const grep = await client.callTool({ name: 'grep', arguments: { pattern: 'bet' } })
    assert.equal(grep.structuredContent.matches[0].path, 'a.txt')
  } finally {
    await client.close()
  }
})

test('confirm: refused by default, --confirm allow, or an elicitation the client answers', async () => {
  const ws = workspace()
  let client = await connect(['--root', ws])
  try {
    await client.callTool({ name: 'write_file', arguments: { path: 'denied.txt', content: 'x' } })
    assert.ok(!existsSync(join(ws, 'denied.txt')), 'no elicitation and no --confirm allow: declined')
  } finally {
    await client.close()
  }
  client = await connect(['--root', ws, '--confirm', 'allow'])
  try {
    const r = await client.callTool({ name: 'write_file', arguments: { path: 'allowed.txt', content: 'x' } })
    assert.equal(r.isError, undefined, text(r))
    assert.equal(readFileSync(join(ws, 'allowed.txt'), 'utf8'), 'x')
  } finally {
    await client.close()
  }
  const asked = []
  let approve = false
  client = await connect(['--root', ws], {
    elicit: (params) => {
      asked.push(params.message)
      return approve ? { action: 'accept', content: { approve: true } } : { action: 'decline' }
    },
  })
  try {
    await client.callTool({ name: 'write_file', arguments: { path: 'e.txt', content: 'no' } })
    assert.ok(!existsSync(join(ws, 'e.txt')), 'a declined elicitation changes nothing')
    approve = true
    await client.callTool({ name: 'run', arguments: { command: 'touch', args: ['ran'] } })
    assert.ok(existsSync(join(ws, 'ran')), 'an accepted elicitation lets the call run')
    assert.equal(asked.length, 2)
    assert.match(asked[1], /touch/)
  } finally {
    await client.close()
  }
})

test('the workspace follows the client roots when no --root is given', async () => {
  const one = workspace({ 'which.txt': 'one\n' })
  const two = workspace({ 'which.txt': 'two\n' })
  const roots = { current: [one] }
  const client = await connect([], { roots })
  try {
    const read = async () => text(await client.callTool({ name: 'read_file', arguments: { path: 'which.txt' } }))
    assert.match(await read(), /one/)
    roots.current = [two]
    await client.sendRootsListChanged()
    let seen = ''
    for (let i = 0; i < 50 && !/two/.test(seen); i++) {
      seen = await read()
      if (!/two/.test(seen)) await new Promise((r) => setTimeout(r, 20))
    }
    assert.match(seen, /two/)
  } finally {
    await client.close()
  }
})

test('cancellation aborts a running command; progress comes with a progressToken', async () => {
  const ws = workspace()
  const client = await connect(['--root', ws, '--confirm', 'allow'])
  try {
    const progress = []
    const r = await client.callTool(
      { name: 'run', arguments: { command: 'sh', args: ['-c', 'echo one; sleep 0.3; echo two'] } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    )
    assert.equal(r.isError, undefined, text(r))
    assert.ok(progress.length >= 1, 'output became progress notifications')
    const controller = new AbortController()
    const started = Date.now()
    const pending = client.callTool(
      { name: 'run', arguments: { command: 'sh', args: ['-c', 'sleep 30; touch late'] } },
      undefined,
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort(), 300)
    await assert.rejects(pending)
    assert.ok(Date.now() - started < 10_000)
    // The server is still there, and the command did not finish.
    const after = await client.callTool({ name: 'glob', arguments: { pattern: '*' } })
    assert.equal(after.isError, undefined)
    assert.ok(!existsSync(join(ws, 'late')))
  } finally {
    await client.close()
  }
})

test('--families and --max-permission choose the listed tools; bad options exit 2', async () => {
  const client = await connect(['--root', workspace(), '--families', 'code,files', '--max-permission', 'none'])
  try {
    const { tools: listed } = await client.listTools()
    const expected = tools.toolSpecs().filter((s) => ['code', 'files'].includes(s.family) && s.permission === 'none')
    assert.deepEqual(listed.map((t) => t.name), expected.map((s) => s.name))
    const r = await client.callTool({ name: 'write_file', arguments: { path: 'x', content: 'y' } })
    assert.equal(r.isError, true)
    assert.match(text(r), /^UNKNOWN_TOOL/)
  } finally {
    await client.close()
  }
  const { spawnSync } = await import('node:child_process')
  const bad = spawnSync(process.execPath, [cli, 'mcp', '--families', 'nope'], { encoding: 'utf8' })
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /unknown family `nope`/)
  writeFileSync(join(workspace(), 'unused'), '')
})
