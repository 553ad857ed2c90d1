// Confinement, declined confirms, bad input and process-group kills, for every tool.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { getEventListeners } from 'node:events'
import { join } from 'node:path'
import * as tools from '../index.js'
import { workspace, context, rejectsWith, tempDir } from './helpers.mjs'

const outsideDir = () => tempDir('eddie-outside-')

test('every path argument is confined, symlinks included, before any confirm', async () => {
  const out = outsideDir()
  writeFileSync(join(out, 'secret.txt'), 'secret')
  const ws = workspace({ 'in.txt': 'in' })
  symlinkSync(out, join(ws, 'link'))
  symlinkSync(join(out, 'secret.txt'), join(ws, 'secret-link.txt'))
  const { ctx, prompts } = context(ws)
  const cases = [
    ['fileRead', { path: '../x' }], ['fileRead', { path: '/etc/passwd' }], ['fileRead', { path: 'secret-link.txt' }],
    ['fileRead', { path: 'link/secret.txt' }], ['fileWrite', { path: 'link/new.txt', content: 'x' }],
    ['fileWrite', { path: '../escape.txt', content: 'x' }], ['fileSearch', { root: '..', content: 'x' }],
    ['fileSearch', { root: 'link', content: 'secret' }], ['getFolderTreeStructure', { path: 'link' }],
    ['getFolderTreeStructure', { path: '..' }],
  ]
  for (const [fn, args] of cases) {
    const shown = args.path ?? args.root
    await rejectsWith(assert, tools[fn](args, ctx), 'OUTSIDE_WORKSPACE', `Path is outside the workspace: ${shown}`)
  }
  await rejectsWith(assert, tools.bash({ command: 'touch pwned', cwd: 'link' }, ctx), 'OUTSIDE_WORKSPACE', 'Requested cwd is outside the workspace: link')
  const cfg = workspace({ 'eddie.config.json': JSON.stringify({ plan: { directory: '../../elsewhere' } }) })
  await rejectsWith(assert, tools.updatePlan({ tasks: [] }, context(cfg).ctx), 'OUTSIDE_WORKSPACE', /outside the workspace/)
  assert.deepEqual(prompts, [], 'no confirm was asked')
  assert.ok(!existsSync(join(out, 'new.txt')) && !existsSync(join(out, 'pwned')))
  // A directory named `..foo` inside the workspace is fine.
  const dots = workspace({ '..foo/a.txt': 'ok' })
  assert.equal((await tools.fileRead({ path: '..foo/a.txt' }, context(dots).ctx)).content, 'ok')
})

test('a declined confirm changes nothing and runs nothing', async () => {
  const ws = workspace({ 'keep.txt': 'original', '.tasks/l.json': JSON.stringify({ metadata: {}, tasks: [{ id: 't', title: 'T', status: 'pending' }] }) })
  const { ctx } = context(ws, false)
  let r = await tools.fileWrite({ path: 'keep.txt', content: 'changed' }, ctx)
  assert.deepEqual([r.content, r.data], ['Write cancelled by user.', { path: 'keep.txt', bytesWritten: 0 }])
  assert.equal(readFileSync(join(ws, 'keep.txt'), 'utf8'), 'original')
  r = await tools.bash({ command: 'touch ran' }, ctx)
  assert.deepEqual([r.content, r.data], ['Command rejected by user.', { stdout: '', stderr: 'Command rejected by user.' }])
  assert.ok(!existsSync(join(ws, 'ran')))
  r = await tools.updatePlan({ tasks: [{ title: 'x', status: 'pending', completed: false }] }, ctx)
  assert.ok(!existsSync(join(ws, '.eddie/plan.json')))
  assert.match(r.content, /No plan available/)
  const list = readFileSync(join(ws, '.tasks/l.json'), 'utf8')
  r = await tools.agentNewTask({ taskListName: 'l', title: 'N' }, ctx)
  assert.match(r.content, /^Task creation cancelled for "l"\./)
  await tools.agentSetTaskStatus({ taskListName: 'l', taskId: 't', status: 'complete' }, ctx)
  await tools.agentDeleteTask({ taskListName: 'l', taskId: 't' }, ctx)
  await tools.agentNewTaskList({ taskListName: 'l' }, ctx)
  assert.equal(readFileSync(join(ws, '.tasks/l.json'), 'utf8'), list)
  // No confirm callback at all means "no one could be asked" (APPROVAL_REQUIRED), never "approved".
  await rejectsWith(assert, tools.fileWrite({ path: 'keep.txt', content: 'changed' }, { cwd: ws }), 'APPROVAL_REQUIRED', /Write file: keep\.txt/)
  await rejectsWith(assert, tools.bash({ command: 'touch ran' }, { cwd: ws }), 'APPROVAL_REQUIRED', /Run command: touch ran/)
  assert.equal(readFileSync(join(ws, 'keep.txt'), 'utf8'), 'original')
  assert.ok(!existsSync(join(ws, 'ran')))
})

test('a throwing or rejecting confirm rejects the call and does nothing', async () => {
  const ws = workspace()
  for (const confirm of [() => { throw new Error('boom') }, async () => { throw new Error('nope') }, () => 42]) {
    await rejectsWith(assert, tools.fileWrite({ path: 'x.txt', content: 'x' }, { cwd: ws, confirm }), 'CONFIRM_FAILED')
    await rejectsWith(assert, tools.bash({ command: 'touch ran' }, { cwd: ws, confirm }), 'CONFIRM_FAILED')
  }
  assert.ok(!existsSync(join(ws, 'x.txt')) && !existsSync(join(ws, 'ran')))
})

test('bad input throws an Error with a code and the process lives on', async () => {
  const ws = workspace({ 'a.txt': 'abc' })
  const { ctx } = context(ws)
  const cases = [
    ['fileRead', {}], ['fileRead', { path: 7 }], ['fileRead', { path: 'a\u0000b' }], ['fileWrite', { path: 'x' }],
    ['fileWrite', { path: 'x', content: 5 }], ['fileSearch', { name: 5 }], ['fileSearch', { exclude: [null] }],
    ['fileSearch', { root: 5, content: 'x' }], ['bash', {}], ['bash', { command: '' }], ['bash', { command: 'true', timeoutMs: -1 }],
    ['getPlan', { filename: 'a\\b' }], ['completeTask', {}], ['updatePlan', { tasks: [1] }], ['updatePlan', { tasks: [], plan: [] }],
    ['agentNewTaskList', { taskListName: 3 }], ['agentNewTask', { taskListName: 'l' }], ['agentGetTaskList', { taskListName: ' ' }],
    ['agentSetTaskStatus', { taskListName: 'l', taskId: 't', status: 'done' }], ['agentDeleteTask', { taskListName: 'l' }],
  ]
  for (const [fn, args] of cases) await rejectsWith(assert, tools[fn](args, ctx), 'INVALID_ARGUMENT')
  for (const fn of ['fileRead', 'bash', 'getPlan']) {
    await rejectsWith(assert, tools[fn]('not an object', ctx), 'INVALID_ARGUMENT')
    await rejectsWith(assert, tools[fn]({ path: 'a.txt' }, undefined), 'INVALID_ARGUMENT')
    await rejectsWith(assert, tools[fn]({ path: 'a.txt' }, { cwd: 42 }), 'INVALID_ARGUMENT')
  }
  // NaN, Infinity and huge numbers behave like eddie's Number() coercions.
  let r = await tools.fileRead({ path: 'a.txt', page: NaN, pageSize: Infinity }, ctx)
  assert.deepEqual([r.content, r.data.page, r.data.pageSize], ['abc', 1, 20480])
  r = await tools.fileRead({ path: 'a.txt', page: 1e300 }, ctx)
  assert.deepEqual([r.content, r.data.truncated], ['', false])
  r = await tools.fileSearch({ content: 'a', pageSize: 1e308, page: -5 }, ctx)
  assert.equal(r.data.totalResults, 1)
  await rejectsWith(assert, tools.bash({ command: 'true', timeoutMs: 150.5 }, ctx), 'INVALID_ARGUMENT', /The value of "timeout" is out of range/)
  await assert.rejects(tools.bash({ command: 'true', timeoutMs: 150.5 }, ctx), RangeError)
  await rejectsWith(assert, tools.runTool('nope', {}, ctx), 'UNKNOWN_TOOL', 'Unknown tool: nope')
  assert.equal((await tools.fileRead({ path: 'a.txt' }, ctx)).content, 'abc', 'still alive')
})

test('bash: failures carry exitCode, signal, timedOut, stdout and stderr', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  await assert.rejects(tools.bash({ command: 'echo out; echo err >&2; exit 3' }, ctx), (e) => {
    assert.equal(e.code, 'COMMAND_FAILED')
    assert.equal(e.message, 'Command failed: echo out; echo err >&2; exit 3\nerr\n')
    assert.deepEqual([e.exitCode, e.signal, e.timedOut, e.stdout, e.stderr], [3, null, false, 'out\n', 'err\n'])
    return true
  })
  await assert.rejects(tools.bash({ command: 'echo before; sleep 5', timeoutMs: 200 }, ctx), (e) => {
    assert.equal(e.code, 'TIMEOUT')
    assert.deepEqual([e.timedOut, e.signal, e.stdout], [true, 'SIGTERM', 'before\n'])
    return true
  })
  await assert.rejects(tools.bash({ command: 'head -c 5000 /dev/zero | tr "\\0" a; sleep 5', maxBytes: 100 }, ctx), (e) => {
    assert.ok(e instanceof RangeError)
    assert.equal(e.code, 'OUTPUT_LIMIT')
    assert.equal(e.message, 'stdout maxBuffer length exceeded')
    assert.equal(e.stdout, 'a'.repeat(100))
    return true
  })
  await rejectsWith(assert, tools.bash({ command: 'true', cwd: 'missing' }, ctx), 'NOT_FOUND', 'spawn /bin/sh ENOENT')
  const r = await tools.bash({ command: 'printf "%s" "$FOO"' }, { ...ctx, env: { FOO: 'bar', PATH: process.env.PATH } })
  assert.equal(r.data.stdout, 'bar')
  const big = await tools.bash({ command: 'for i in $(seq 1 3000); do printf "é😀"; done' }, ctx)
  assert.equal(big.data.stdout, 'é😀'.repeat(3000), 'no character is split across chunks')
})

// A zombie (state Z) is dead, only not yet reaped by init.
const alive = (pid) => {
  try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) } catch { return false }
}
const waitGone = async (pid) => { for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20)); return !alive(pid) }

test('bash: timeout, overflow, abort and exit leave no process behind', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const spawnGrandchild = (extra) => `sleep 30 & echo $! > pid.txt; ${extra}`
  for (const [args, code, extraCtx] of [
    [{ command: spawnGrandchild('sleep 30'), timeoutMs: 300 }, 'TIMEOUT', {}],
    [{ command: spawnGrandchild('yes'), maxBytes: 1000 }, 'OUTPUT_LIMIT', {}],
    [{ command: spawnGrandchild('sleep 30') }, 'CANCELLED', { signal: AbortSignal.timeout(300) }],
  ]) {
    await rejectsWith(assert, tools.bash(args, { ...ctx, ...extraCtx }), code)
    const pid = Number(readFileSync(join(ws, 'pid.txt'), 'utf8'))
    assert.ok(await waitGone(pid), `grandchild ${pid} survived ${code}`)
  }
  await tools.bash({ command: spawnGrandchild('true') + ' >/dev/null 2>&1' }, ctx)
  const pid = Number(readFileSync(join(ws, 'pid.txt'), 'utf8'))
  assert.ok(await waitGone(pid), 'a background child does not outlive the command')
  const aborted = new AbortController()
  aborted.abort()
  await rejectsWith(assert, tools.bash({ command: 'touch ran' }, { ...ctx, signal: aborted.signal }), 'CANCELLED')
  assert.ok(!existsSync(join(ws, 'ran')))
})

test('concurrent plan and task-list updates are never lost', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  await tools.agentNewTaskList({ taskListName: 'l' }, ctx)
  await Promise.all(Array.from({ length: 40 }, (_, i) => tools.agentNewTask({ taskListName: 'l', title: `t${i}` }, ctx)))
  const doc = JSON.parse(readFileSync(join(ws, '.tasks/l.json'), 'utf8'))
  assert.equal(doc.tasks.length, 40)
  await tools.updatePlan({ tasks: Array.from({ length: 30 }, (_, i) => ({ title: `p${i}`, status: 'pending', completed: false })) }, ctx)
  await Promise.all(Array.from({ length: 30 }, (_, i) => tools.completeTask({ taskNumber: i + 1 }, ctx)))
  const plan = JSON.parse(readFileSync(join(ws, '.eddie/plan.json'), 'utf8'))
  assert.ok(plan.tasks.every((t) => t.completed && t.status === 'complete'))
})

test('file_write is atomic and creates parents', async () => {
  const ws = workspace()
  const { ctx, prompts } = context(ws)
  const r = await tools.fileWrite({ path: 'deep/er/file.txt', content: 'héllo' }, ctx)
  assert.deepEqual([r.content, r.data], ['Wrote deep/er/file.txt', { path: 'deep/er/file.txt', bytesWritten: 6 }])
  assert.deepEqual(prompts, ['Write file: deep/er/file.txt'])
  await Promise.all(Array.from({ length: 20 }, (_, i) => tools.fileWrite({ path: 'race.txt', content: String(i).repeat(10000) }, ctx)))
  const text = readFileSync(join(ws, 'race.txt'), 'utf8')
  assert.ok(/^(\d+)\1*$/.test(text) && text.length >= 10000, 'one whole write won')
})

test('calls on the blocking pool (file_read) honour aborts, codes and concurrency', async () => {
  const ws = workspace({ 'a.txt': 'héllo' })
  const { ctx, prompts } = context(ws)
  const aborted = new AbortController()
  aborted.abort()
  await rejectsWith(assert, tools.fileRead({ path: 'a.txt' }, { ...ctx, signal: aborted.signal }), 'CANCELLED')
  await rejectsWith(assert, tools.fileRead({ path: 'missing.txt' }, ctx), 'NOT_FOUND')
  await rejectsWith(assert, tools.fileRead({ path: 'a.txt' }, { cwd: 42 }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.fileRead({ path: 'a.txt' }, { cwd: ws, confirm: 'yes' }), 'INVALID_ARGUMENT')
  const live = new AbortController()
  const pages = await Promise.all(Array.from({ length: 200 }, () => tools.fileRead({ path: 'a.txt' }, { ...ctx, signal: live.signal })))
  assert.ok(pages.every((p) => p.content === 'héllo' && p.schema === 'eddie.tool.file_read.result.v1'))
  assert.deepEqual(prompts, [], 'a reading tool never asks')
})

test('a long-lived AbortSignal collects no listeners, on either path', async () => {
  const ws = workspace({ 'a.txt': 'x' })
  const { ctx } = context(ws)
  const live = new AbortController()
  const c = { ...ctx, signal: live.signal }
  await Promise.all(Array.from({ length: 30 }, () => tools.fileRead({ path: 'a.txt' }, c)))
  await Promise.all(Array.from({ length: 30 }, () => tools.fileSearch({ content: 'x' }, c)))
  await tools.fileRead({ path: 'missing' }, c).catch(() => {})
  await tools.bash({ command: 'true' }, { ...c, confirm: () => true })
  assert.equal(getEventListeners(live.signal, 'abort').length, 0)
  // A signal that is not an EventTarget is ignored rather than failing the call.
  assert.equal((await tools.fileRead({ path: 'a.txt' }, { ...ctx, signal: { aborted: false } })).content, 'x')
})

test('large results cross intact whatever their text (ASCII, CJK, emoji, lone surrogates absent)', async () => {
  const mixed = Array.from({ length: 4000 }, (_, i) => `${i} ascii 漢字 😀 é\n`).join('')
  const ascii = 'x'.repeat(50_000)
  const ws = workspace({ 'mixed.txt': mixed, 'ascii.txt': ascii, 'small.txt': 'ñ' })
  const { ctx } = context(ws)
  let joined = ''
  for (let page = 1; ; page++) {
    const r = await tools.fileRead({ path: 'mixed.txt', page }, ctx)
    joined += r.content
    if (!r.data.truncated) break
  }
  assert.equal(joined, mixed)
  assert.equal((await tools.fileRead({ path: 'ascii.txt' }, ctx)).content, ascii.slice(0, 20480))
  assert.equal((await tools.fileRead({ path: 'small.txt' }, ctx)).content, 'ñ')
  const tree = await tools.getFolderTreeStructure({}, ctx)
  assert.deepEqual(tree.data.pageEntries, ['ascii.txt', 'mixed.txt', 'small.txt'])
  // A large top-level data string crosses beside the JSON, in its place in the key order.
  const big = await tools.runCommand({ command: 'cat', args: ['mixed.txt'], maxOutputBytes: 1 << 20 }, { ...ctx, confirm: () => true })
  assert.equal(big.data.stdout, mixed)
  const small = await tools.runCommand({ command: 'echo', args: ['hi'] }, { ...ctx, confirm: () => true })
  assert.deepEqual(Object.keys(big.data), Object.keys(small.data))
})
