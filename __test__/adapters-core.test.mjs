// The shared helpers of the adapters (@eddie/tools-native/adapters): selection, one permission
// session, model text, and describeConfirmation, which must never change anything.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { workspace } from './helpers.mjs'

const require = createRequire(import.meta.url)
const native = require('../index.js')
const adapters = require('../adapters/index.js')
const { createSession, selectTools, toModelText, describeConfirmation, OVERLAPS } = adapters

/** Every file under dir with its bytes and mode, so a test sees any change. */
function snapshot(dir) {
  const out = {}
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const st = statSync(p)
      if (st.isDirectory()) {
        out[`${p}/`] = st.mode
        walk(p)
      } else out[p] = `${st.mode}:${readFileSync(p, 'base64')}`
    }
  }
  walk(dir)
  return out
}

test('tools.d.ts is up to date with the registry (node adapters/gen-types.mjs)', async () => {
  const { render } = await import('../adapters/gen-types.mjs')
  assert.equal(readFileSync(new URL('../adapters/tools.d.ts', import.meta.url), 'utf8'), render())
})

test('the package exports the adapter subpaths', () => {
  const pkg = require('../package.json')
  for (const sub of ['.', './ai-sdk', './openai', './anthropic', './langchain', './vscode', './package.json']) assert.ok(pkg.exports[sub], sub)
  assert.ok(pkg.files.includes('adapters'))
  for (const peer of ['ai', 'openai', '@anthropic-ai/sdk', '@langchain/core']) {
    assert.ok(pkg.peerDependencies[peer], peer)
    assert.equal(pkg.peerDependenciesMeta[peer].optional, true)
  }
  // the subpaths resolve through the package's own name
  assert.equal(typeof require('@eddie/tools-native/openai').toOpenAITools, 'function')
  assert.equal(typeof require('@eddie/tools-native/anthropic').toAnthropicTools, 'function')
  assert.equal(typeof require('@eddie/tools-native').runTool, 'function')
})

test('selectTools: families, maxPermission, dedupe', () => {
  const all = native.toolSpecs()
  assert.equal(selectTools({ dedupe: false }).length, all.length)
  assert.equal(selectTools().length, all.length - OVERLAPS.length, 'dedupe is on by default')
  assert.deepEqual(new Set(selectTools({ families: ['code'] }).map((s) => s.family)), new Set(['code']))
  assert.ok(selectTools({ maxPermission: 'none' }).every((s) => s.permission === 'none'))
  assert.ok(selectTools({ maxPermission: 'moderate' }).some((s) => s.permission === 'moderate'))
  assert.throws(() => selectTools({ families: ['nope'] }), /unknown family/)
  assert.throws(() => selectTools({ maxPermission: 'root' }), /maxPermission/)
  // every pair names two real tools, and dedupe keeps exactly one of each
  const names = new Set(all.map((s) => s.name))
  for (const [kept, dropped] of OVERLAPS) assert.ok(names.has(kept) && names.has(dropped), `${kept}/${dropped}`)
  const deduped = new Set(selectTools({ dedupe: true }).map((s) => s.name))
  const eddie = new Set(selectTools({ dedupe: 'eddie' }).map((s) => s.name))
  for (const [kept, dropped] of OVERLAPS) {
    assert.ok(deduped.has(kept) && !deduped.has(dropped), `dedupe keeps ${kept}`)
    assert.ok(eddie.has(dropped) && !eddie.has(kept), `dedupe 'eddie' keeps ${dropped}`)
  }
  assert.equal(deduped.size, all.length - OVERLAPS.length)
  // a pair is only thinned when both halves were selected
  assert.ok(selectTools({ families: ['eddie'], dedupe: true }).some((s) => s.name === 'file_read'))
  assert.deepEqual(selectTools({ names: ['grep', 'fileRead'] }).map((s) => s.name), ['file_read', 'grep'])
})

test('profiles: core is the default, each names real tools, all is every tool deduplicated', () => {
  const { PROFILES, PROFILE_NAMES, profileTools, resolveTools } = adapters
  const names = new Set(native.toolSpecs().map((s) => s.name))
  assert.deepEqual(PROFILE_NAMES, ['core', 'coding', 'review', 'research', 'browsing', 'all'])
  for (const [profile, list] of Object.entries(PROFILES)) {
    for (const n of list) assert.ok(names.has(n), `${profile}: ${n}`)
    assert.equal(new Set(list).size, list.length, `${profile} has no repeats`)
    assert.deepEqual(resolveTools(profile).map((s) => s.name), list)
  }
  assert.deepEqual(resolveTools().map((s) => s.name), PROFILES.core)
  assert.deepEqual(resolveTools(null).map((s) => s.name), PROFILES.core)
  assert.deepEqual(profileTools('all'), selectTools({ dedupe: true }).map((s) => s.name))
  // review is read-only; core has the git basics
  assert.ok(resolveTools('review').every((s) => !s.mutating))
  assert.ok(PROFILES.core.includes('git_status') && PROFILES.core.includes('git_diff'))
  assert.throws(() => resolveTools('everything'), (e) => e instanceof RangeError && /unknown profile `everything`.*core, coding/.test(e.message))
  assert.deepEqual(selectTools({ profile: 'research', maxPermission: 'none' }).map((s) => s.permission), resolveTools('research').filter((s) => s.permission === 'none').map((s) => s.permission))
  assert.throws(() => selectTools({ profile: 'core', names: ['grep'] }), /not both/)
})

test('createSession: one permission session across calls, each with its own signal', async () => {
  const dir = workspace({ 'a.txt': 'a\n' })
  const asked = []
  const session = createSession({ cwd: dir, confirm: (m) => { asked.push(m); return true } })
  for (const i of [1, 2, 3]) {
    const ac = new AbortController()
    const r = await session.run('lint', { command: 'true' }, { signal: ac.signal })
    assert.equal(r.data.status, 'ok', `call ${i}`)
  }
  assert.equal(asked.length, 1, 'a moderate tool asks once per session')
  // what the session prevents: a fresh ctx per call (no sessionId) asks every time
  const fresh = []
  for (const i of [4, 5]) await native.runTool('lint', { command: 'true' }, { cwd: dir, confirm: (m) => { fresh.push(`${i}${m}`); return true } })
  assert.equal(fresh.length, 2)
  // a dangerous tool still asks on every call
  const before = asked.length
  await session.run('run', { command: 'true' })
  await session.run('run', { command: 'true' })
  assert.equal(asked.length, before + 2)
  // the per-call signal reaches the tool
  const ac = new AbortController()
  ac.abort()
  await assert.rejects(session.run('run', { command: 'sleep', args: ['5'] }, { signal: ac.signal }).then((r) => {
    if (r.data.status === 'cancelled') throw Object.assign(new Error('cancelled'), { code: 'CANCELLED' })
    return r
  }), (e) => e.code === 'CANCELLED')
  // approved: the host asked already
  const quiet = createSession({ cwd: dir })
  await assert.rejects(quiet.run('write_file', { path: 'g.txt', content: 'x' }), (e) => e.code === 'APPROVAL_REQUIRED' && /Create file: g\.txt/.test(e.message))
  assert.ok(!existsSync(join(dir, 'g.txt')), 'no confirm and no approval: nothing written')
  await quiet.run('write_file', { path: 'g.txt', content: 'x' }, { approved: true })
  assert.equal(readFileSync(join(dir, 'g.txt'), 'utf8'), 'x')
})

test('toModelText: content, or CODE: message', async () => {
  const dir = workspace({ 'a.txt': 'hello\n' })
  const s = createSession({ cwd: dir })
  const r = await s.run('read_file', { path: 'a.txt' })
  assert.equal(toModelText(r), r.content)
  const e = await s.run('read_file', { path: 'missing.txt' }).catch((x) => x)
  assert.equal(toModelText(e), `NOT_FOUND: ${e.message}`)
  assert.equal(toModelText(new Error('boom')), 'INTERNAL: boom')
  const settled = await adapters.settle(s, 'read_file', { path: '../x' })
  assert.equal(settled.ok, false)
  assert.match(settled.text, /^OUTSIDE_WORKSPACE: /)
})

/** Arguments that reach the confirm of each tool that confirms (the rest get `{}`). */
function confirmArgs() {
  return {
    bash: { command: 'touch made-by-bash' },
    file_write: { path: 'new.txt', content: 'x' },
    update_plan: { tasks: [{ id: 't1', title: 'one', status: 'pending' }] },
    agent__new_task_list: { taskListName: 'l' },
    agent__new_task: { taskListName: 'l', title: 't' },
    agent__set_task_status: { taskListName: 'l', taskId: 'x', status: 'complete' },
    agent__delete_task: { taskListName: 'l', taskId: 'x' },
    write_file: { path: 'a.txt', content: 'changed' },
    edit_file: { path: 'a.txt', oldString: 'hello', newString: 'bye' },
    multi_edit: { path: 'a.txt', edits: [{ oldString: 'hello', newString: 'bye' }] },
    apply_unified_diff: { diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+bye\n' },
    apply_patch: { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+bye\n*** End Patch\n' },
    edit_range: { path: 'a.txt', startLine: 1, endLine: 1, content: 'bye' },
    insert_at: { path: 'a.txt', lineNumber: 1, content: 'new' },
    delete_range: { path: 'a.txt', startLine: 1, endLine: 1 },
    copy_file: { source: 'a.txt', destination: 'b.txt' },
    move_file: { source: 'a.txt', destination: 'c.txt' },
    delete_file: { path: 'a.txt', force: true },
    run: { command: 'touch', args: ['made-by-run'] },
    process_start: { command: 'touch', args: ['made-by-process'] },
    process_write: { id: 'p1', input: 'x' },
    run_tests: { command: 'touch made-by-tests' },
    lint: { command: 'touch made-by-lint' },
    format: { command: 'touch made-by-format' },
    typecheck: { command: 'touch made-by-typecheck' },
    build: { command: 'touch made-by-build' },
    install: { command: 'touch made-by-install' },
  }
}

test('describeConfirmation: the exact confirm text, and nothing changes (every tool that confirms)', async () => {
  const specs = native.toolSpecs()
  const table = confirmArgs()
  const messages = {}
  for (const spec of specs.filter((s) => s.confirms)) {
    const dir = workspace({ 'a.txt': 'hello\n', 'package.json': '{"scripts":{"test":"touch made-by-npm"}}' })
    const env = { ...process.env, CONFIG_ROOT: join(dir, '.config') }
    const session = createSession({ cwd: dir, env, confirm: () => { throw new Error('the session confirm must not be asked') } })
    const before = snapshot(dir)
    messages[spec.name] = await describeConfirmation(spec.name, table[spec.name] ?? {}, session)
    // give anything that was (wrongly) started a moment to act, then compare
    await new Promise((r) => setTimeout(r, 50))
    assert.deepEqual(snapshot(dir), before, `${spec.name} changed the workspace`)
    const listed = await native.runTool('process_list', {}, { cwd: dir })
    assert.equal(listed.data.processes?.length ?? 0, 0, `${spec.name} left a process`)
  }
  // the real call shows the same text
  for (const name of ['bash', 'file_write', 'write_file', 'edit_file', 'delete_file', 'run', 'copy_file', 'apply_patch']) {
    assert.equal(typeof messages[name], 'string', `${name} has a confirm text`)
    const dir = workspace({ 'a.txt': 'hello\n' })
    const seen = []
    await native.runTool(name, table[name], { cwd: dir, confirm: (m) => { seen.push(m); return false } }).catch(() => {})
    assert.equal(seen[0], messages[name], `${name}: the call asks what describeConfirmation said`)
  }
  assert.match(messages.write_file, /a\.txt/)
  assert.match(messages.bash, /touch made-by-bash/)
})

test('describeConfirmation / wouldAsk: null once the session has granted a moderate tool', async () => {
  const dir = workspace({})
  const session = createSession({ cwd: dir, confirm: () => true })
  assert.equal(await adapters.wouldAsk('lint', session), true)
  assert.match(await describeConfirmation('lint', { command: 'true' }, session), /^Lint: true/)
  await session.run('lint', { command: 'true' })
  assert.equal(await adapters.wouldAsk('lint', session), false)
  assert.equal(await describeConfirmation('lint', { command: 'true' }, session), null)
  // a fresh session (or none) still shows the text; dangerous tools always ask
  assert.match(await describeConfirmation('lint', { command: 'true' }, { cwd: dir }), /^Lint: true/)
  assert.equal(await adapters.wouldAsk('run', session), true)
  assert.equal(await adapters.wouldAsk('read_file', session), false)
})

test('describeConfirmation: null for tools that do not confirm, which are never run', async () => {
  const dir = workspace({ 'a.txt': 'hello\n' })
  const env = { ...process.env, CONFIG_ROOT: join(dir, '.config') }
  const before = snapshot(dir)
  // agent__get_task_list mutates (creates a missing list) without confirming: it must not run
  assert.equal(await describeConfirmation('agent__get_task_list', { taskListName: 'new' }, { cwd: dir, env }), null)
  assert.equal(await describeConfirmation('read_file', { path: 'a.txt' }, { cwd: dir }), null)
  assert.equal(await describeConfirmation('process_kill', { id: 'p1' }, { cwd: dir }), null)
  assert.deepEqual(snapshot(dir), before)
  await assert.rejects(describeConfirmation('nope', {}, { cwd: dir }), (e) => e.code === 'UNKNOWN_TOOL')
})

test('every property of every tool has a description in what the adapters send', () => {
  const missing = []
  const walk = (s, path) => {
    if (!s || typeof s !== 'object') return
    for (const [k, v] of Object.entries(s.properties ?? {})) {
      if (!v.description) missing.push(`${path}.${k}`)
      walk(v, `${path}.${k}`)
    }
    if (s.items) walk(s.items, `${path}[]`)
  }
  for (const spec of native.toolSpecs()) walk(adapters.modelSchema(spec), spec.name)
  assert.deepEqual(missing, [])
  // eddie's schemas stay @eddie/tools' verbatim ones; the model sees its contract_docs
  assert.equal(native.toolSpecs().find((s) => s.name === 'bash').jsonSchema.properties.command.description, undefined)
  assert.equal(native.toolSpecs().find((s) => s.name === 'bash').modelSchema.properties.command.description, 'Shell command line to run.')
})

test('the tarball carries the adapters (and not their dev scripts)', async () => {
  const { execFileSync } = await import('node:child_process')
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }))
  const files = new Set(pack.files.map((f) => f.path))
  for (const f of ['adapters/index.js', 'adapters/index.d.ts', 'adapters/tools.d.ts', 'adapters/ai-sdk.js', 'adapters/ai-sdk.mjs', 'adapters/ai-sdk.d.mts', 'adapters/ai-sdk-core.js', 'adapters/openai.js', 'adapters/anthropic.js', 'adapters/langchain.js', 'adapters/vscode.js', 'adapters/README.md']) {
    assert.ok(files.has(f), `packed: ${f}`)
  }
  assert.ok(!files.has('adapters/gen-types.mjs') && !files.has('adapters/schema-bytes.mjs'))
  // every file the exports map names is packed
  const pkg = require('../package.json')
  const targets = JSON.stringify(pkg.exports).match(/"\.\/[^"]+"/g).map((s) => s.slice(3, -1)).filter((p) => p.includes('/'))
  for (const t of targets) assert.ok(files.has(t), `exported and packed: ${t}`)
})

test('seed envelopes (resultShape), Stack’s get_tool_schemas/get_tool, and the seeds’ names through a session', async () => {
  const ws = workspace({ 'a.txt': 'one\ntwo\n' })
  const { settle, toResultShape, getToolSchemas, getTool } = adapters
  // Stack 2.9: {success, result | error}.
  const stack = createSession({ cwd: ws, confirm: async () => true, resultShape: 'stack' })
  let s = await settle(stack, 'read_file', { path: 'a.txt' })
  let body = JSON.parse(s.text)
  assert.equal(body.success, true)
  assert.match(body.result.content, /one\n.*two/)
  assert.equal(body.result.totalLines, 2)
  s = await settle(stack, 'read_file', { path: '../outside' })
  assert.deepEqual(JSON.parse(s.text), { success: false, error: `OUTSIDE_WORKSPACE: ${s.error.message}` })
  // Floyd: {success, data | error: {code, message, details}}.
  const floyd = createSession({ cwd: ws, resultShape: 'floyd' })
  s = await settle(floyd, 'edit_file', { filePath: 'a.txt', oldStr: 'nope', newStr: 'x' })
  body = JSON.parse(s.text)
  assert.equal(body.success, false)
  assert.equal(body.error.code, 'NO_MATCH')
  assert.equal(typeof body.error.message, 'string')
  assert.ok(body.error.details && typeof body.error.details === 'object', JSON.stringify(body))
  s = await settle(floyd, 'get_file_info', { filePath: 'a.txt' })
  assert.deepEqual([JSON.parse(s.text).success, JSON.parse(s.text).data.size], [true, 8])
  // The default stays the text; an unknown shape is refused.
  assert.equal((await settle(createSession({ cwd: ws }), 'read_file', { path: 'a.txt', lineNumbers: false })).text, 'one\ntwo')
  assert.throws(() => createSession({ cwd: ws, resultShape: 'xml' }), RangeError)
  assert.deepEqual(toResultShape('floyd', { content: 'hi', data: null }), { success: true, data: { content: 'hi', value: null } })
  // get_tool_schemas / get_tool, by Stack's own names; get_tool never rejects.
  const schemas = getToolSchemas(['read_file', 'grep'])
  assert.deepEqual(schemas.map((x) => x.name), ['read_file', 'grep'])
  assert.equal(schemas[0].parameters.type, 'object')
  assert.ok(schemas[0].parameters.properties.path)
  const read = getTool('read', { cwd: ws })
  body = await read({ path: 'a.txt' })
  assert.deepEqual([body.success, body.result.totalLines], [true, 2])
  const missing = await read({ path: 'missing.txt' })
  assert.equal(missing.success, false)
  assert.match(missing.error, /^NOT_FOUND: /)
  // A seed's name through a session keeps that seed's behaviour (Alfredo's sections, bash).
  const run = await createSession({ cwd: ws, confirm: async () => true }).run('execute_command', { command: 'cat a.txt | wc -l' })
  assert.equal(run.content, 'STDOUT:\n2\n\nSTDERR:\n(no errors)\n\nCommand exited with code 0')
})
