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
import adapters from '../adapters/index.js'
import { toMcpTool } from '../mcp/server.js'
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

test('tools/list: the core profile by default, --profile all, input schemas loose; output schemas only when asked', async () => {
  let client = await connect(['--root', workspace()])
  try {
    const { tools: listed } = await client.listTools()
    assert.deepEqual(listed.map((t) => t.name), adapters.resolveTools('core').map((s) => s.name))
    assert.ok(listed.every((t) => t.outputSchema === undefined), 'no output schemas unless --output-schemas')
  } finally {
    await client.close()
  }
  client = await connect(['--root', workspace(), '--profile', 'all', '--output-schemas'])
  try {
    const { tools: listed } = await client.listTools()
    const specs = adapters.selectTools({ dedupe: true })
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
  } finally {
    await client.close()
  }
})

test('annotations: every one of the tools gets the hints its effects, permission and family imply', () => {
  const all = tools.toolSpecs()
  assert.ok(all.length >= 100)
  for (const spec of all) {
    const props = Object.keys(spec.jsonSchema.properties ?? {})
    // Derived on their own here: a tool reaches beyond the workspace when its family runs
    // processes, fetches or drives a browser, when it takes a shell `command`, or when it is a
    // dangerous tool with a `remote` (push, pull).
    const openWorld = ['exec', 'web', 'browser'].includes(spec.family) || props.includes('command') || (props.includes('remote') && spec.permission === 'dangerous')
    const expected = { title: spec.name, readOnlyHint: !spec.mutating, destructiveHint: spec.mutating, idempotentHint: !spec.mutating, openWorldHint: openWorld }
    assert.deepEqual(toMcpTool(spec).annotations, expected, spec.name)
  }
  // The ones the issue named.
  const hint = (name) => toMcpTool(tools.toolSpec(name)).annotations
  for (const name of ['write_file', 'edit_file', 'move_file', 'apply_patch', 'delete_file']) assert.equal(hint(name).destructiveHint, true, name)
  for (const name of ['bash', 'git_push', 'git_pull', 'run', 'web_fetch']) assert.equal(hint(name).openWorldHint, true, name)
  for (const name of ['read_file', 'grep', 'git_status', 'git_branch']) assert.equal(hint(name).openWorldHint, false, name)
})

test('--tools lists exactly those tools; a bad option prints its error on stderr and exits non-zero', async () => {
  const client = await connect(['--root', workspace(), '--tools', 'grep,bash,run'])
  try {
    const { tools: listed } = await client.listTools()
    assert.deepEqual(listed.map((t) => t.name).sort(), ['bash', 'grep', 'run'])
  } finally {
    await client.close()
  }
  const { spawnSync } = await import('node:child_process')
  for (const [args, message] of [
    [['--profile', 'everything'], /--profile must be one of core, coding, review, research, browsing, all/],
    [['--tools', 'grepp'], /Unknown tool: grepp.*grep/],
    [['--nope'], /unknown option --nope/],
    [['--tools', 'grep', '--profile', 'core'], /not both/],
  ]) {
    const bad = spawnSync(process.execPath, [cli, 'mcp', ...args], { encoding: 'utf8', input: '' })
    assert.notEqual(bad.status, 0, args.join(' '))
    assert.match(bad.stderr, message)
    assert.equal(bad.stdout, '', 'nothing on the protocol stream')
  }
})

test('messages name paths relative to the workspace, never its absolute path', async () => {
  const ws = workspace({ 'a.txt': 'x' })
  const client = await connect(['--root', ws])
  try {
    const r = await client.callTool({ name: 'read_file', arguments: { path: 'missing/b.txt' } })
    assert.equal(r.isError, true)
    assert.match(text(r), /^NOT_FOUND: /)
    assert.match(text(r), /missing\/b\.txt/)
    assert.ok(!text(r).includes(ws), text(r))
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

test('a big structuredContent goes out as the core serialised it, and reads back equal to the tool’s own data', async () => {
  // Names a serialiser must escape: quotes, backslashes, control characters, non-ASCII, and a NUL
  // (the transport's stand-in starts with one); 2,000 files make a result of some size.
  const files = { 'q"uote\\back.txt': 'a', 'tab\there.txt': 'b', 'ünï ✓ 日本.txt': 'c', 'nul\u0001ctl.txt': 'd' }
  for (let i = 0; i < 2000; i++) files[`d${i % 40}/f${i}.js`] = 'x'
  const cwd = workspace(files)
  const args = { path: '.', includeHidden: true, maxEntries: 100_000 }
  const direct = await tools.getFolderTreeStructure(args, { cwd })
  const client = await connect(['--root', cwd, '--tools', 'get_folder_tree_structure,read_file'])
  try {
    const r = await client.callTool({ name: 'get_folder_tree_structure', arguments: args })
    assert.ok(!r.isError, text(r))
    assert.deepEqual(r.structuredContent, direct.data)
    assert.equal(text(r), direct.content)
    // A small result after it on the same stream is still a message of its own.
    const read = await client.callTool({ name: 'read_file', arguments: { path: 'ünï ✓ 日本.txt', lineNumbers: false } })
    assert.equal(text(read), 'c')
    assert.equal(read.structuredContent.path, 'ünï ✓ 日本.txt')
  } finally {
    await client.close()
  }
  // dataAsJson from JS: the same data, as its JSON text.
  const asJson = await tools.getFolderTreeStructure(args, { cwd, dataAsJson: true })
  assert.equal(asJson.data, undefined)
  assert.deepEqual(JSON.parse(asJson.dataJson), direct.data)
  assert.equal(asJson.content, direct.content)
})
