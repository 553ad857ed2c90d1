// Approvals no host can bypass (issue 23): on every host path a destructive command either shows
// its finding to the person approving, or nothing runs; the three honest outcomes; the one
// permission gate per family; the MCP server's workspace and malformed messages.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { toAiSdkTools, aiSdkToolApproval } from '../adapters/ai-sdk.mjs'
import { workspace, rejectsWith } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const { createSession, describeConfirmation, planConfirmation } = require('../adapters/index.js')
const { runOpenAIToolCalls } = require('../adapters/openai.js')
const { runAnthropicToolUses } = require('../adapters/anthropic.js')
const { toLangChainTools } = require('../adapters/langchain.js')
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'bin/eddie-tools.js')

/** A workspace, and a folder outside it that a destructive command would delete. */
function arena() {
  const ws = workspace()
  const outside = workspace({ 'keep.txt': 'k' })
  return { ws, outside, args: { command: `rm -rf ${outside}`, shell: true } }
}
const survived = (a) => existsSync(join(a.outside, 'keep.txt'))
const FINDING = /Destructive command: \[rm-recursive\]/

/** A confirm that records what it was shown and answers `answer`. */
function recorder(answer) {
  const seen = []
  return { seen, confirm: (m) => { seen.push(m); return answer } }
}

test('the plan names every prompt: the action and the destructive finding, and planning runs nothing', async () => {
  const a = arena()
  const prompts = await native.planCall('run', a.args, { cwd: a.ws })
  assert.deepEqual(prompts.map((p) => p.kind), ['action', 'destructive'])
  assert.match(prompts[1].text, FINDING)
  assert.ok(prompts[1].text.includes(a.outside))
  assert.ok(survived(a))
  const text = await describeConfirmation('run', a.args, { cwd: a.ws })
  assert.match(text, /^Run command: .*\n\nDestructive command: /s)
  // eddie's own bash has the destructive check too
  const bash = await native.planCall('bash', { command: `rm -rf ${a.outside}` }, { cwd: a.ws })
  assert.deepEqual(bash.map((p) => p.kind), ['action', 'destructive'])
  assert.equal(bash[0].text, `Run command: rm -rf ${a.outside}`)
})

test('approved: true covers the tool\'s own question only; the finding still needs a yes', async () => {
  const a = arena()
  // describeConfirmation followed by {approved: true}, and no confirm: nothing runs
  const s = createSession({ cwd: a.ws })
  await rejectsWith(assert, s.run('run', a.args, { approved: true }), 'APPROVAL_REQUIRED', FINDING)
  assert.ok(survived(a))
  // with a confirm, the finding (and only it) reaches the person
  const r = recorder(false)
  const declined = await createSession({ cwd: a.ws, confirm: r.confirm }).run('run', a.args, { approved: true })
  assert.equal(declined.data.status, 'declined')
  assert.equal(r.seen.length, 1)
  assert.match(r.seen[0], FINDING)
  assert.ok(survived(a))
  // the whole plan, shown and approved: it runs, and no one else is asked
  const plan = await planConfirmation('run', a.args, s)
  const ran = await createSession({ cwd: a.ws, confirm: () => { throw new Error('not asked') } }).run('run', a.args, { approved: plan })
  assert.equal(ran.data.status, 'ok', ran.content)
  assert.ok(!survived(a))
})

test('an approval of other texts does not cover this call (a changed command is asked again)', async () => {
  const a = arena()
  const other = arena()
  const plan = await planConfirmation('run', other.args, { cwd: a.ws })
  await rejectsWith(assert, native.runTool('run', a.args, { cwd: a.ws, approved: plan.prompts }), 'APPROVAL_REQUIRED', /Run command/)
  assert.ok(survived(a) && survived(other))
  for (const bad of [1, 'yes', { kinds: ['everything'] }, { prompts: 'x' }, [1, 2]]) {
    await rejectsWith(assert, native.runTool('run', a.args, { cwd: a.ws, approved: bad }), 'INVALID_ARGUMENT', /ctx\.approved/)
  }
  assert.ok(survived(a))
})

test('three honest outcomes: declined by the user, no one could be asked, refused by policy', async () => {
  const ws = workspace({ 'a.txt': 'a' })
  const declined = await native.writeFile({ path: 'a.txt', content: 'b' }, { cwd: ws, confirm: () => false })
  assert.match(declined.content, /cancelled by user/)
  await rejectsWith(assert, native.writeFile({ path: 'a.txt', content: 'b' }, { cwd: ws }), 'APPROVAL_REQUIRED', /no one could be asked/)
  const asked = recorder(true)
  await rejectsWith(assert, native.writeFile({ path: 'a.txt', content: 'b' }, { cwd: ws, confirm: asked.confirm, maxPermission: 'moderate' }), 'POLICY_DENIED', /dangerous/)
  assert.equal(asked.seen.length, 0, 'policy asks no one')
  // a tool that does not ask by itself is asked about by the pipeline: DECLINED is its own code
  await rejectsWith(assert, native.webFetch({ url: 'http://127.0.0.1:9/' }, { cwd: ws, confirm: () => false }), 'DECLINED', /web_fetch was not run/)
  await rejectsWith(assert, native.runTool('read_file', { path: 'a.txt' }, { cwd: ws, maxPermission: 'bogus' }), 'INVALID_ARGUMENT', /maxPermission/)
  assert.equal((await native.readFile({ path: 'a.txt' }, { cwd: ws, maxPermission: 'none' })).content.includes('a'), true)
})

/** For each family: a moderate tool asks once per session, a dangerous one on every call. */
const PER_FAMILY = {
  eddie: { dangerous: ['file_write', (ws) => ({ path: `${ws.n++}.txt`, content: 'x' })] },
  files: { dangerous: ['write_file', (ws) => ({ path: `w${ws.n++}.txt`, content: 'x' })] },
  exec: { moderate: ['lint', () => ({ command: 'true' })], dangerous: ['run', () => ({ command: 'true' })] },
  web: { moderate: ['check_url', () => ({ url: 'http://127.0.0.1:9/' })], dangerous: ['download', (ws) => ({ url: 'http://127.0.0.1:9/x', path: `d${ws.n++}` })] },
  git: { moderate: ['git_stage', () => ({ files: ['a.txt'] })], dangerous: ['git_commit', (ws) => ({ message: `c${ws.n++}`, allowEmpty: true })] },
  memory: { moderate: ['memory_save', (ws) => ({ key: `k${ws.n++}`, value: 'v' })] },
  // browser_click/browser_type (dangerous) need a page: their every-call question is in browser.test.mjs.
  browser: { moderate: ['browser_get_tabs', () => ({})] },
}

test('per family: moderate asks once per session, dangerous on every call, as check_permission says', async () => {
  const specs = new Map(native.toolSpecs().map((s) => [s.name, s]))
  for (const [family, levels] of Object.entries(PER_FAMILY)) {
    for (const [level, [tool, makeArgs]] of Object.entries(levels)) {
      const spec = specs.get(tool)
      if (!spec) continue // a family built without its feature
      assert.equal(spec.family, family, tool)
      assert.equal(spec.permission, level, tool)
      const ws = workspace({ 'a.txt': 'a\n' })
      if (family === 'git') spawnSync('git', ['init', '-q', ws])
      const state = { n: 0 }
      const asked = recorder(false)
      const ctx = { cwd: ws, sessionId: `fam-${family}-${level}-${process.pid}`, confirm: asked.confirm, env: { ...process.env, EDDIE_USER_DIR: ws }, network: { allowHosts: ['127.0.0.1'] } }
      // declined: asked, and asked again (a no is not remembered)
      for (let i = 0; i < 2; i++) await native.runTool(tool, makeArgs(state), ctx).catch((e) => e)
      assert.equal(asked.seen.length, 2, `${tool}: a declined question is asked again`)
      ctx.confirm = (m) => { asked.seen.push(m); return true }
      // whether each of 3 approved calls asked anything (a call may ask more than one prompt)
      const askedPerCall = []
      for (let i = 0; i < 3; i++) {
        const before = asked.seen.length
        await native.runTool(tool, makeArgs(state), ctx).catch((e) => e)
        askedPerCall.push(asked.seen.length > before)
      }
      const expected = level === 'moderate' ? [true, false, false] : [true, true, true]
      assert.deepEqual(askedPerCall, expected, `${tool} (${level}): ${asked.seen.join(' | ')}`)
      const { data } = await native.checkPermission({ toolName: tool }, ctx)
      assert.deepEqual([data.level, data.willAsk], [level, level === 'dangerous'], tool)
      // ending the session forgets the grant
      if (level === 'moderate') {
        assert.equal(native.endSession(ctx.sessionId), true)
        assert.equal((await native.checkPermission({ toolName: tool }, ctx)).data.willAsk, true)
      }
    }
  }
})

test('Floyd\'s levels for Floyd\'s names, and file writes are dangerous', async () => {
  const ws = workspace()
  const level = async (toolName) => (await native.checkPermission({ toolName }, { cwd: ws })).data.level
  const floyd = {
    read_file: 'none', write_file: 'dangerous', edit_file: 'dangerous', search_files: 'none', list_directory: 'none', grep_search: 'none',
    run_tests: 'dangerous', format: 'dangerous', lint: 'moderate', build: 'dangerous', git_status: 'none', git_commit: 'dangerous',
    git_stage: 'moderate', git_unstage: 'moderate', git_branch: 'moderate', browser_navigate: 'moderate', browser_click: 'dangerous',
    browser_type: 'dangerous', cache_store: 'none', apply_unified_diff: 'dangerous', edit_range: 'dangerous', insert_at: 'dangerous',
    delete_range: 'dangerous', run: 'dangerous', ask_user: 'none',
  }
  for (const [name, want] of Object.entries(floyd)) {
    const spec = native.toolSpecs().find((s) => s.name === (native.toolAliases()[name] ?? name))
    if (!spec) continue
    assert.equal(await level(name), want, name)
  }
  for (const s of native.toolSpecs().filter((t) => t.family === 'files' && t.mutating)) assert.equal(s.permission, 'dangerous', s.name)
})

// ---- every host path: the destructive text reaches the person approving, or nothing runs

test('AI SDK mid-call: the session confirm sees the finding; declining runs nothing', async () => {
  const a = arena()
  const r = recorder(false)
  const session = createSession({ cwd: a.ws, confirm: r.confirm })
  const tools = toAiSdkTools(['run'], session)
  await tools.run.execute(a.args, { toolCallId: 'x', messages: [] })
  assert.ok(r.seen.some((m) => FINDING.test(m)) || r.seen.length === 1, r.seen.join('|'))
  assert.ok(survived(a))
})

test('AI SDK approve-first: the approver is shown the finding, and the approval covers it; without our reason nothing runs', async () => {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
  const call = (id, input) => ({ content: [{ type: 'tool-call', toolCallId: id, toolName: 'run', input: JSON.stringify(input) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] })
  const done = { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
  for (const withReason of [true, false]) {
    const a = arena()
    const session = createSession({ cwd: a.ws })
    const tools = toAiSdkTools(['run'], session, { approval: 'sdk' })
    const model = new MockLanguageModelV4({ doGenerate: [call('r1', a.args), done] })
    const toolApproval = withReason ? aiSdkToolApproval(session) : undefined
    const first = await generateText({ model, tools, prompt: 'clean', toolApproval, stopWhen: stepCountIs(2) })
    const request = first.content.find((p) => p.type === 'tool-approval-request')
    assert.ok(request, 'the SDK stops for approval')
    if (withReason) assert.match(request.reason, FINDING, 'the approver sees the destructive finding')
    assert.ok(survived(a), 'nothing ran before approval')
    const messages = [{ role: 'user', content: 'clean' }, ...first.response.messages, { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] }]
    await generateText({ model, tools, messages, toolApproval, stopWhen: stepCountIs(2) })
    // approved after seeing the finding: it ran; approved without seeing it: nothing ran
    assert.equal(survived(a), !withReason, withReason ? 'shown and approved: it ran' : 'not shown: APPROVAL_REQUIRED, nothing ran')
  }
})

test('OpenAI, Anthropic and LangChain: the session confirm sees the finding; declining runs nothing', async () => {
  const a = arena()
  const r = recorder(false)
  const session = createSession({ cwd: a.ws, confirm: r.confirm })
  const openai = await runOpenAIToolCalls([{ id: 'c1', type: 'function', function: { name: 'run', arguments: JSON.stringify(a.args) } }], session)
  assert.match(openai[0].content, /declined/i)
  const anthropic = await runAnthropicToolUses({ content: [{ type: 'tool_use', id: 't1', name: 'run', input: a.args }] }, session)
  assert.match(anthropic[0].content, /declined/i)
  const [lc] = toLangChainTools(['run'], session)
  await lc.invoke({ type: 'tool_call', id: 'l1', name: 'run', args: a.args })
  // each host asked the action, then (had it said yes) the finding: with no, the first question stops it
  assert.equal(r.seen.length, 3)
  assert.ok(survived(a))
  // saying yes to the action only: the finding is asked next, on every host
  const yesOnce = []
  const s2 = createSession({ cwd: a.ws, confirm: (m) => { yesOnce.push(m); return !FINDING.test(m) } })
  await runOpenAIToolCalls([{ id: 'c2', type: 'function', function: { name: 'run', arguments: JSON.stringify(a.args) } }], s2)
  await runAnthropicToolUses({ content: [{ type: 'tool_use', id: 't2', name: 'run', input: a.args }] }, s2)
  await toLangChainTools(['run'], s2)[0].invoke({ type: 'tool_call', id: 'l2', name: 'run', args: a.args })
  assert.equal(yesOnce.filter((m) => FINDING.test(m)).length, 3, 'the finding reached the person on each host')
  assert.ok(survived(a))
})

async function mcpClient(args, { elicit, roots } = {}) {
  const capabilities = {}
  if (elicit) capabilities.elicitation = {}
  if (roots) capabilities.roots = { listChanged: true }
  const client = new Client({ name: 'approvals-test', version: '1.0.0' }, { capabilities })
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params))
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', ...args], stderr: 'pipe' }))
  return client
}

test('MCP with elicitation: the finding is elicited; without elicitation nothing runs (APPROVAL_REQUIRED, not "declined")', async () => {
  const a = arena()
  const asked = []
  let client = await mcpClient(['--root', a.ws], { elicit: (p) => { asked.push(p.message); return FINDING.test(p.message) ? { action: 'decline' } : { action: 'accept', content: { approve: true } } } })
  try {
    await client.callTool({ name: 'run', arguments: a.args })
    assert.equal(asked.length, 2)
    assert.match(asked[1], FINDING)
    assert.ok(survived(a))
  } finally {
    await client.close()
  }
  client = await mcpClient(['--root', a.ws])
  try {
    const r = await client.callTool({ name: 'run', arguments: a.args })
    assert.equal(r.isError, true)
    assert.match(r.content[0].text, /^APPROVAL_REQUIRED: .*no one could be asked/s)
    assert.ok(survived(a))
  } finally {
    await client.close()
  }
  // --confirm allow approves the question, never the finding without --allow-destructive
  client = await mcpClient(['--root', a.ws, '--confirm', 'allow'])
  try {
    const r = await client.callTool({ name: 'run', arguments: a.args })
    assert.match(r.content[0].text, /^APPROVAL_REQUIRED: [\s\S]*\[destructive\]/)
    assert.ok(survived(a))
  } finally {
    await client.close()
  }
  client = await mcpClient(['--root', a.ws, '--confirm', 'allow', '--allow-destructive'])
  try {
    const r = await client.callTool({ name: 'run', arguments: a.args })
    assert.equal(r.isError, undefined, r.content[0].text)
    assert.ok(!survived(a))
  } finally {
    await client.close()
  }
})

test('MCP: no --root and no usable client root means no workspace and no tools', async () => {
  const cwdBefore = workspace({ 'secret.txt': 'the server\'s own directory' })
  const client = new Client({ name: 'no-roots', version: '1.0.0' }, { capabilities: {} })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp'], cwd: cwdBefore, stderr: 'pipe' }))
  try {
    assert.deepEqual((await client.listTools()).tools, [])
    const r = await client.callTool({ name: 'read_file', arguments: { path: 'secret.txt' } })
    assert.equal(r.isError, true)
    assert.doesNotMatch(r.content[0].text, /own directory/)
    assert.match(r.content[0].text, /no workspace.*--root/)
  } finally {
    await client.close()
  }
})

test('MCP: malformed messages get replies, an over-limit message an error, and the server lives on', async () => {
  const ws = workspace()
  const child = spawn(process.execPath, [cli, 'mcp', '--root', ws], { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines = []
  let buf = ''
  child.stdout.on('data', (d) => {
    buf += d
    let i
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)))
      buf = buf.slice(i + 1)
    }
  })
  const waitFor = async (pred) => {
    for (let i = 0; i < 400; i++) {
      const hit = lines.find(pred)
      if (hit) return hit
      await new Promise((r) => setTimeout(r, 25))
    }
    throw new Error(`no reply; got ${JSON.stringify(lines)}`)
  }
  try {
    const send = (m) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`)
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
    await waitFor((m) => m.id === 1)
    send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: 'x' })
    const bad = await waitFor((m) => m.id === 2)
    assert.equal(bad.error.code, -32602)
    send('{not json')
    const parse = await waitFor((m) => m.error?.code === -32700)
    assert.equal(parse.id, null)
    // 11 MiB in one line, then a normal request
    child.stdin.write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"${'a'.repeat(11 << 20)}"}}}\n`)
    const big = await waitFor((m) => m.id === 3)
    assert.equal(big.error.code, -32600)
    assert.match(big.error.message, /too large.*10 MiB/)
    send({ jsonrpc: '2.0', id: 4, method: 'tools/list' })
    const list = await waitFor((m) => m.id === 4)
    assert.ok(list.result.tools.length > 0, 'the server lives on')
    assert.equal(child.exitCode, null)
  } finally {
    child.kill()
  }
})

test('the gate holds for concurrent calls: each asks its own prompts, and a no stops only its call', async () => {
  const ws = workspace()
  let n = 0
  const ctx = { cwd: ws, sessionId: `conc-${process.pid}`, confirm: (m) => { n++; return /keep-\d*[02468]\b/.test(m) } }
  const calls = Array.from({ length: 10 }, (_, i) => native.writeFile({ path: `keep-${i}`, content: 'x' }, ctx))
  await Promise.all(calls)
  assert.equal(n, 10)
  for (let i = 0; i < 10; i++) assert.equal(existsSync(join(ws, `keep-${i}`)), i % 2 === 0, `keep-${i}`)
  writeFileSync(join(ws, 'done'), '')
})
