// Calls with a blocking form (the cache, check_permission, small reads, get_plan) settle on the JS
// thread: the promise they return is already settled, with the same semantics as any call
// (an abort that came first, errors with codes, the workspace's confinement). A call that would
// wait after all (a large file, a cache on a Redis server) goes the async way.
import test from 'node:test'
import assert from 'node:assert/strict'
import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as tools from '../index.js'
import { workspace, rejectsWith, tempDir } from './helpers.mjs'

const PENDING = Symbol('pending')
/** Whether `p` is already settled: a settled promise wins a race against one settled after it. */
async function settledNow(p) {
  const first = await Promise.race([p.then(() => 'settled', () => 'settled'), Promise.resolve().then(() => PENDING)])
  return first === 'settled'
}
const userDir = () => tempDir('eddie-user-')

test('small reads, cache calls, check_permission and get_plan return an already-settled promise', async () => {
  const cwd = workspace({ 'small.txt': 'x'.repeat(100) })
  const ctx = { cwd, env: { EDDIE_USER_DIR: userDir() } }
  const calls = [
    () => tools.readFile({ path: 'small.txt' }, ctx),
    () => tools.fileRead({ path: 'small.txt' }, ctx),
    () => tools.cacheStore({ key: 'k', value: 'v', tier: 'reasoning' }, ctx),
    () => tools.cacheRetrieve({ key: 'k' }, ctx),
    () => tools.cacheStore({ key: 'p', value: 'v', tier: 'project' }, ctx),
    () => tools.cacheRetrieve({ key: 'p', tier: 'project' }, ctx),
    () => tools.checkPermission({ toolName: 'bash' }, ctx),
    () => tools.getPlan({}, ctx),
  ]
  for (const call of calls) {
    const p = call()
    assert.ok(p instanceof Promise)
    assert.equal(await settledNow(p), true, `${call} settled on the JS thread`)
    await p
  }
  const read = await tools.readFile({ path: 'small.txt', lineNumbers: false }, ctx)
  assert.equal(read.content.includes('x'.repeat(100)), true, read.content)
  assert.equal(read.schema, 'eddie.tool.read_file.result.v1')
  const hit = await tools.cacheRetrieve({ key: 'p', tier: 'project' }, ctx)
  assert.equal(hit.data.value, 'v')
})

test('a large file and a cache on a Redis server go the async way, with the same results', async () => {
  const big = 'line of text\n'.repeat(30_000) // 390 KB, over the inline size
  const cwd = workspace({ 'big.txt': big })
  const p = tools.readFile({ path: 'big.txt', offset: 29_999, limit: 2, lineNumbers: false }, { cwd })
  assert.equal(await settledNow(p), false)
  const out = await p
  assert.equal(out.data.totalLines, 30_000)
  assert.equal(out.content.startsWith('line of text'), true, out.content)
  // A Redis URL (nothing listens on port 1): the cache call must not wait on the JS thread.
  const redis = { cwd, env: { EDDIE_USER_DIR: userDir(), EDDIE_CACHE_URL: 'redis://127.0.0.1:1' } }
  const r = tools.cacheRetrieve({ key: 'k', tier: 'project' }, redis)
  assert.equal(await settledNow(r), false)
  await rejectsWith(assert, r, 'STORE_UNAVAILABLE')
  // The reasoning tier is process memory even then; it still answers (async).
  await tools.cacheStore({ key: 'k', value: 'v', tier: 'reasoning' }, redis)
  assert.equal((await tools.cacheRetrieve({ key: 'k', tier: 'reasoning' }, redis)).data.value, 'v')
})

test('an already-aborted signal rejects CANCELLED and runs nothing, on the JS thread too', async () => {
  const cwd = workspace({ 'small.txt': 'hello' })
  const ctx = { cwd, env: { EDDIE_USER_DIR: userDir() }, signal: AbortSignal.abort() }
  for (const p of [
    tools.readFile({ path: 'small.txt' }, ctx),
    tools.fileRead({ path: 'small.txt' }, ctx),
    tools.checkPermission({ toolName: 'bash' }, ctx),
    tools.cacheStore({ key: 'never', value: 'v', tier: 'reasoning' }, ctx),
  ]) {
    assert.equal(await settledNow(p), true)
    await rejectsWith(assert, p, 'CANCELLED')
  }
  const live = { cwd, env: ctx.env }
  assert.equal((await tools.cacheRetrieve({ key: 'never', tier: 'reasoning' }, live)).data.found, false)
  // A live signal is not hooked for a call that settles at once: no listener stays behind.
  const controller = new AbortController()
  let added = 0
  const signal = controller.signal
  const add = signal.addEventListener.bind(signal)
  signal.addEventListener = (...a) => { added += 1; return add(...a) }
  await tools.readFile({ path: 'small.txt' }, { cwd, signal })
  assert.equal(added, 0)
  // A large read goes async and is hooked like any call.
  writeFileSync(join(cwd, 'big.txt'), 'y\n'.repeat(200_000))
  await tools.readFile({ path: 'big.txt', limit: 1 }, { cwd, signal })
  assert.equal(added, 1)
})

test('errors settle as rejections with codes, never as synchronous throws', async () => {
  const cwd = workspace({ 'small.txt': 'hello' })
  const outside = workspace({ 'secret.txt': 'secret' })
  symlinkSync(join(outside, 'secret.txt'), join(cwd, 'link.txt'))
  const ctx = { cwd }
  const cases = [
    [() => tools.readFile({ path: 'missing.txt' }, ctx), 'NOT_FOUND'],
    [() => tools.readFile({ path: 'link.txt' }, ctx), 'OUTSIDE_WORKSPACE'],
    [() => tools.readFile({ path: '../x' }, ctx), 'OUTSIDE_WORKSPACE'],
    [() => tools.readFile({ path: 'small.txt', bogus: 1 }, ctx), 'INVALID_ARGUMENT'],
    [() => tools.cacheRetrieve({ key: '' }, ctx), 'INVALID_ARGUMENT'],
    [() => tools.checkPermission({ toolName: 'no_such_tool' }, ctx), 'UNKNOWN_TOOL'],
    [() => tools.readFile({ path: 'small.txt' }, {}), 'INVALID_ARGUMENT'],
    [() => tools.readFile({ path: 'small.txt' }, { cwd, confirm: 42 }), 'INVALID_ARGUMENT'],
  ]
  for (const [call, code] of cases) {
    let p
    assert.doesNotThrow(() => { p = call() })
    assert.equal(await settledNow(p), true, `${call}`)
    await rejectsWith(assert, p, code)
  }
})

test('check_permission on the JS thread sees the session the gate keeps', async () => {
  const cwd = workspace({ 'a.txt': 'one\n' })
  const ctx = { cwd, sessionId: `fast-${process.pid}`, confirm: async () => true }
  const before = await tools.checkPermission({ toolName: 'create_task' }, ctx)
  assert.equal(before.data.level, 'moderate')
  assert.equal(before.data.willAsk, true)
  await tools.createTask({ title: 'one' }, ctx)
  const after = await tools.checkPermission({ toolName: 'create_task' }, ctx)
  assert.equal(after.data.granted, true)
  assert.equal(after.data.willAsk, false)
  tools.endSession(ctx.sessionId)
})
