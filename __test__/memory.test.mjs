// The memory family from JS: exports, outputSchemas, codes, two processes saving at once, and
// Stack's and Floyd's spellings. The Rust suite (crates/eddie_tools_core/tests/memory.rs) covers
// the file format, the task round trip and the cache tiers in depth.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace, rejectsWith, assertMatchesSchema, tempDir } from './helpers.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const definition = (name) => tools.toolSpecs().find((d) => d.name === name)
const userDir = () => tempDir('eddie-user-')
const ctxFor = (cwd, extra = {}) => ({ cwd, confirm: async () => true, env: { EDDIE_USER_DIR: userDir() }, ...extra })

function runChild(cwd, prefix, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'fixtures', 'memory-saver.mjs'), cwd, prefix, String(count)], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('exit', (code) => (code === 0 && out === 'done\n' ? resolve() : reject(new Error(`child ${prefix} exited ${code}: ${err}`))))
  })
}

test('two Node processes saving into one MEMORY.md at once lose nothing, and hand-written text survives', async () => {
  const hand = '# Team notes\n\nWritten by a person; keep it.\n'
  const cwd = workspace({ 'MEMORY.md': hand })
  const N = 40
  await Promise.all([runChild(cwd, 'a', N), runChild(cwd, 'b', N)])
  const text = readFileSync(join(cwd, 'MEMORY.md'), 'utf8')
  assert.ok(text.startsWith(hand))
  const list = await tools.memoryList({}, { cwd })
  assert.equal(list.data.count, 2 * N)
  const keys = new Set(list.data.entries.map((e) => e.key))
  for (const p of ['a', 'b']) for (let i = 0; i < N; i++) assert.ok(keys.has(`${p}${i}`), `${p}${i} is there`)
})

test('memory tools: Stack spellings, outputSchemas, codes', async () => {
  const cwd = workspace()
  const ctx = ctxFor(cwd)
  const s = await tools.runTool('memory_save', { key: 'GPU Requirements', value: 'Minimum: 8GB VRAM, Recommended: 24GB VRAM' }, ctx)
  assertMatchesSchema(definition('memory_save').outputSchema, s.data)
  assert.equal(readFileSync(join(cwd, 'MEMORY.md'), 'utf8'), '# Memory\n\n## GPU Requirements\n\nMinimum: 8GB VRAM, Recommended: 24GB VRAM\n')
  const r = await tools.memoryRecall({ query: 'deployment requirements', max_results: 10 }, ctx)
  assertMatchesSchema(definition('memory_recall').outputSchema, r.data)
  assert.equal(r.data.matches[0].key, 'GPU Requirements')
  const l = await tools.memoryList({}, ctx)
  assertMatchesSchema(definition('memory_list').outputSchema, l.data)
  const d = await tools.memoryDelete({ key: 'GPU Requirements' }, ctx)
  assertMatchesSchema(definition('memory_delete').outputSchema, d.data)
  await rejectsWith(assert, tools.memorySave({ key: '', value: 'v' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.memorySave({ key: 'k', value: 'x'.repeat(70_000) }, ctx), 'TOO_LARGE')
  writeFileSync(join(cwd, 'MEMORY.md'), Buffer.from([0x23, 0x23, 0x20, 0x6b, 0x0a, 0xff]))
  await rejectsWith(assert, tools.memorySave({ key: 'k', value: 'v' }, ctx), 'PARSE')
  assert.deepEqual([...readFileSync(join(cwd, 'MEMORY.md'))], [0x23, 0x23, 0x20, 0x6b, 0x0a, 0xff])
})

test('task tools: Stack examples run, done is complete, eddie reads them', async () => {
  const cwd = workspace()
  const ctx = ctxFor(cwd)
  const c = await tools.createTask({ title: 'Write comprehensive tool documentation', description: 'Create TOOLS.md with all 38 tools documented', priority: 'high' }, ctx)
  assertMatchesSchema(definition('create_task').outputSchema, c.data)
  const id = c.data.task.id
  const u = await tools.updateTask({ task_id: id, status: 'done' }, ctx)
  assertMatchesSchema(definition('update_task').outputSchema, u.data)
  const e = await tools.agentGetTaskList({ taskListName: 'tasks' }, ctx)
  assert.equal(e.data.tasks[0].status, 'complete')
  assert.equal(e.data.tasks[0].metadata.priority, 'high')
  const l = await tools.listTasks({ status: 'done', priority: 'high' }, ctx)
  assertMatchesSchema(definition('list_tasks').outputSchema, l.data)
  assert.equal(l.data.count, 1)
  const p = await tools.createPlan({ goal: 'Deploy to RunPod', steps: ['Prepare Docker image', 'Upload to registry'] }, ctx)
  assertMatchesSchema(definition('create_plan').outputSchema, p.data)
  const x = await tools.executePlan({ plan_id: p.data.plan.id }, ctx)
  assertMatchesSchema(definition('execute_plan').outputSchema, x.data)
  const del = await tools.deleteTask({ task_id: id }, ctx)
  assertMatchesSchema(definition('delete_task').outputSchema, del.data)
  await rejectsWith(assert, tools.deleteTask({ task_id: id }, ctx), 'TASK_NOT_FOUND')
})

test('cache tools: Floyd examples, tiers, outputSchemas, codes', async () => {
  const cwd = workspace()
  const ctx = ctxFor(cwd)
  const s = await tools.cacheStore({ key: 'computation-result', value: '{"result": 42}', tier: 'reasoning', ttl: 3600000 }, ctx)
  assertMatchesSchema(definition('cache_store').outputSchema, s.data)
  const r = await tools.cacheRetrieve({ key: 'computation-result' }, ctx)
  assertMatchesSchema(definition('cache_retrieve').outputSchema, r.data)
  assert.equal(r.data.value, '{"result": 42}')
  await tools.cacheStore({ key: 'computation-2', value: 'p', tier: 'project' }, ctx)
  const k = await tools.cacheKeys({ tier: 'project', pattern: 'computation-*' }, ctx)
  assertMatchesSchema(definition('cache_keys').outputSchema, k.data)
  assert.deepEqual(k.data.keys.map((x) => x.key), ['computation-2'])
  const st = await tools.cacheStats({}, ctx)
  assertMatchesSchema(definition('cache_stats').outputSchema, st.data)
  assert.equal(st.data.tiers.reasoning.hits, 1)
  const d = await tools.cacheDelete({ key: 'old-result' }, ctx)
  assertMatchesSchema(definition('cache_delete').outputSchema, d.data)
  const c = await tools.cacheClear({ tier: 'reasoning' }, ctx)
  assertMatchesSchema(definition('cache_clear').outputSchema, c.data)
  await rejectsWith(assert, tools.cacheStore({ key: '', value: 'v' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.cacheStore({ key: 'k', value: 'v', ttl: -5 }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.cacheStore({ key: 'k', value: 'v', ttl: 'NaN' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.cacheStore({ key: 'k', value: 'v', tier: 'cosmic' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.cacheKeys({ pattern: '[unclosed' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.cacheStore({ key: 'k', value: 'x'.repeat((1 << 20) + 1) }, ctx), 'TOO_LARGE')
  const after = await tools.cacheKeys({}, ctx)
  assert.deepEqual(after.data.keys.map((x) => x.key), ['computation-2'])
})

// The project tier's writes go behind (batched for up to 50 ms): another process must still find
// every store of a process that exits right after it, ends normally, or is killed after the window.
function storeInChild(cwd, prefix, ending) {
  const index = JSON.stringify(join(here, '..', 'index.js'))
  const code = `
    const tools = await import(${index})
    const ctx = { cwd: ${JSON.stringify(cwd)} }
    for (let i = 0; i < 300; i++) await tools.cacheStore({ key: '${prefix}' + i, value: 'v' + i, tier: 'project' }, ctx)
    ${ending}`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'ignore', 'pipe'] })
    let err = ''
    child.stderr.on('data', (d) => { err += d })
    child.on('exit', (code, signal) => resolve({ code, signal, err }))
    child.on('error', reject)
  })
}

test('cache_store (project tier): every store reaches another process, however the storing process ends', async () => {
  const cwd = workspace({})
  const ctx = ctxFor(cwd)
  const endings = {
    exit: { ending: 'process.exit(0)', code: 0, signal: null },
    end: { ending: '', code: 0, signal: null },
    killed: { ending: "await new Promise((r) => setTimeout(r, 400)); process.kill(process.pid, 'SIGKILL')", code: null, signal: 'SIGKILL' },
  }
  for (const [prefix, { ending, code, signal }] of Object.entries(endings)) {
    const ended = await storeInChild(cwd, prefix, ending)
    assert.deepEqual([ended.code, ended.signal], [code, signal], ended.err)
    for (const i of [0, 150, 299]) {
      const hit = await tools.cacheRetrieve({ key: `${prefix}${i}`, tier: 'project' }, ctx)
      assert.equal(hit.data.value, `v${i}`, `${prefix}${i} after the child's ${prefix}`)
    }
    const keys = await tools.cacheKeys({ tier: 'project', pattern: `${prefix}*`, limit: 1000 }, ctx)
    assert.equal(keys.data.count, 300, prefix)
  }
})
