// The standing sweep, driven by the registry (toolSpecs()): every tool, and every family added later,
// is swept without anyone writing a case for it.
//  1. bad input: every property (and one level into object properties and array items) gets wrong
//     types, null, huge / empty / NUL / lone-surrogate strings and odd numbers; every call resolves
//     or rejects with an Error whose code is a known, non-INTERNAL code, within a bound;
//  2. escapes: every path-like argument, and the paths inside patches and diffs, get `..`, absolute
//     paths and symlinks leading out (as the path, as a component, as a pattern's prefix), and every
//     tool walks as wide as it can from the root; nothing outside is created, changed or read
//     (snapshots, and secret markers only the outside files hold: content, a file name, its hash);
//  3. confirms: declined, missing, throwing and pending-then-aborted confirms change nothing and run
//     nothing (a tool the registry says never confirms, eddie's complete_task, must never ask);
//  4. output caps: edits and writes whose text crosses every cap with a 2-, 3- or 4-byte character
//     at every offset of the cut;
//  5. 50-way concurrency on the plan and task-list stores;
//  6. reproductions of fixed defects;
//  7. outputs: every successful result of every call above has `schema` equal to its tool's
//     outputSchema `$id` and `data` valid against that outputSchema (ajv) with no key the schema
//     does not declare, and every tool produces at least one such result (a happy-path call per
//     tool, driven by a table, makes sure of it).
// A summary line gives the number of tool calls made.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import {
  existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createServer } from 'node:http'
import Ajv from 'ajv'
import * as tools from '../index.js'
import { inCI, skipReason } from './components.mjs'

// Without Chromium the browser tools leave the confirm and output sweeps, which say so; with
// CI=true they stay in (and fail).
const noBrowser = inCI ? null : await skipReason('chromium')
const swept = (spec) => !(noBrowser && spec.family === 'browser')

const SPECS = tools.toolSpecs()
const SPEC = Object.fromEntries(SPECS.map((s) => [s.name, s]))
const CODES = new Set(tools.errorCodes())
/** Every call must settle within this bound. */
const CALL_MS = 20_000
/** A browser call may include a cold Chromium launch and CDP commands bounded at 30 s each: on a
 * loaded 2-core machine one took over 20 s. Its bound is the command limit plus a margin. */
const boundFor = (spec) => (spec.family === 'browser' ? 45_000 : CALL_MS)
/** Only the files outside the workspace hold these (the second is a file name no argument spells). */
const SECRET = 'OUTSIDE-SECRET-7f3a'
const UNLISTED = 'unlisted-91c4'
const MARKER = 'ran-marker'
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
/** Arenas live on a tmpfs when there is one (thousands of resets and fsyncs on a disk are slow); removed at the end. */
const TMP = (() => {
  try { return realpathSync(mkdtempSync('/dev/shm/eddie-sweep-')) } catch { return realpathSync(mkdtempSync(join(tmpdir(), 'eddie-sweep-'))) }
})()

let calls = 0
const started = Date.now()

// ---------------------------------------------------------------------------------------------
// Output checks: every successful result the sweep sees is checked against its tool's declaration.

/** One compiled validator per outputSchema `$id` (tools sharing an `$id` must share the schema). */
const ajv = new Ajv({ allErrors: true, strict: true })
const VALIDATE = new Map()
/** Problems found by the output checks, one entry per (tool, schema path, keyword), with an example. */
const outputFailures = new Map()
/** Successful results checked, per tool. */
const validated = new Map(SPECS.map((s) => [s.name, 0]))
function outputFailure(key, text) {
  if (!outputFailures.has(key)) outputFailures.set(key, text)
}
for (const spec of SPECS) {
  const schema = spec.outputSchema
  if (typeof schema?.$id !== 'string') { outputFailure(`${spec.name} $id`, `${spec.name}: its outputSchema has no $id`); continue }
  const seen = VALIDATE.get(schema.$id)
  if (seen) {
    try { assert.deepEqual(schema, seen.schema) } catch { outputFailure(`${spec.name} $id`, `${spec.name}: its outputSchema ${schema.$id} differs from ${seen.tool}'s of the same $id`) }
    continue
  }
  try {
    VALIDATE.set(schema.$id, { tool: spec.name, schema, validate: ajv.compile(schema) })
  } catch (e) {
    outputFailure(`${spec.name} compile`, `${spec.name}: its outputSchema does not compile: ${e.message}`)
  }
}

/**
 * Keys a result carries that its schema does not declare (where the schema lists properties and
 * says nothing of others): the schema is incomplete. eddie's schemas are the contract's, verbatim,
 * and eddie's plan keeps the keys its caller sent: they are not held to this.
 */
function undeclared(tool, schema, value, at) {
  if (!schema || value === null || typeof value !== 'object') return
  for (const b of schema.anyOf ?? [schema]) {
    if (Array.isArray(value)) {
      if (b.items) for (const x of value.slice(0, 3)) undeclared(tool, b.items, x, `${at}/#`)
    } else if (b.properties) {
      for (const [k, x] of Object.entries(value)) {
        if (k in b.properties) undeclared(tool, b.properties[k], x, `${at}/${k}`)
        else if (b.additionalProperties === undefined) outputFailure(`${tool} undeclared ${at}/${k}`, `${tool}: data${at}/${k} is not declared by its outputSchema: ${json(x).slice(0, 100)}`)
      }
    } else if (typeof b.additionalProperties === 'object') {
      for (const x of Object.values(value).slice(0, 3)) undeclared(tool, b.additionalProperties, x, `${at}/*`)
    }
  }
}

/** Check a successful result against its tool's outputSchema (malformed results are problem()'s). */
function checkOutput(spec, args, r) {
  if (!r || typeof r.schema !== 'string' || !('data' in r)) return
  const id = spec.outputSchema?.$id
  const v = VALIDATE.get(id)
  if (!v) return
  validated.set(spec.name, validated.get(spec.name) + 1)
  if (r.schema !== id) outputFailure(`${spec.name} schema ${r.schema}`, `${spec.name} ${show(args)}: result.schema is ${show(r.schema)}, its outputSchema's $id is ${id}`)
  if (spec.family !== 'eddie') undeclared(spec.name, spec.outputSchema, r.data, '')
  if (v.validate(r.data)) return
  for (const e of v.validate.errors) {
    const key = `${spec.name} ${e.schemaPath} ${e.instancePath.replace(/\/\d+/g, '/#')}`
    outputFailure(key, `${spec.name} ${show(args)}: data${e.instancePath} ${e.message} (${e.schemaPath}${e.params ? ` ${show(e.params)}` : ''}); data: ${json(r.data).slice(0, 300)}`)
  }
}

/** Call a tool by its spec: the exported function (runTool when there is none); a result is checked against its outputSchema. */
function invoke(spec, args, ctx) {
  calls++
  const fn = tools[spec.jsName]
  const p = typeof fn === 'function' ? fn(args, ctx) : tools.runTool(spec.name, args, ctx)
  return p.then((r) => { checkOutput(spec, args, r); return r })
}

/** `{value}`, `{error}` or `{hung: true}` after at most `ms`; then `ms` is how long it took. */
async function settle(promise, ms = CALL_MS) {
  let timer
  const t0 = Date.now()
  const bound = new Promise((resolve) => { timer = setTimeout(resolve, ms, { hung: true }) })
  const outcome = await Promise.race([Promise.resolve(promise).then((value) => ({ value }), (error) => ({ error })), bound])
  clearTimeout(timer)
  return { ...outcome, ms: Date.now() - t0, bound: ms }
}

/** Arguments for a failure message: long strings abbreviated, NaN / ±Infinity / -0 spelled out. */
function show(v) {
  if (v === undefined) return 'undefined'
  return JSON.stringify(v, (_k, x) => {
    if (typeof x === 'number' && (!Number.isFinite(x) || Object.is(x, -0))) return Object.is(x, -0) ? '-0' : String(x)
    if (typeof x === 'string' && x.length > 60) return `<${x.length} chars ${JSON.stringify(x.slice(0, 12))}…>`
    return x
  })
}

const json = (v) => { try { return JSON.stringify(v) ?? '' } catch { return '' } }

/** Why an outcome breaks the rules (resolve, or reject with a known non-INTERNAL code), or null. */
function problem(o) {
  if (o.hung) return `did not settle within ${o.bound} ms`
  if ('error' in o) {
    const e = o.error
    if (!(e instanceof Error)) return `rejected with a non-Error: ${show(e)}`
    if (typeof e.code !== 'string' || !CODES.has(e.code)) return `rejected with an unknown code ${show(e.code)}: ${e.message}`
    if (e.code === 'INTERNAL') return `INTERNAL: ${e.message}`
    return null
  }
  const r = o.value
  if (!r || typeof r.schema !== 'string' || typeof r.content !== 'string' || !('data' in r)) return `resolved with a malformed result: ${show(r)}`
  return null
}

/** Everything a caller sees of an outcome, as text. */
function outcomeText(o) {
  if (o.hung) return ''
  if ('error' in o) return `${o.error?.message}\n${json({ ...o.error })}`
  return `${o.value?.content}\n${json(o.value?.data)}`
}

// ---------------------------------------------------------------------------------------------
// Arenas: <parent>/ws (the workspace, with symlinks link -> out, flink -> out/secret.txt) and
// <parent>/out (outside it). `..` from the workspace is <parent>, so anything created there shows.

const TS = '2026-01-01T00:00:00.000Z'
const task = (id, title, status = 'pending') => ({ id, title, status, summary: null, details: null, createdAt: TS, updatedAt: TS })
const TEMPLATE = {
  'a.txt': 'hello\nworld\n',
  'foo.txt': 'old\n',
  'src/main.ts': 'export function x(): number {\n  return 1\n}\nexport const y = x()\n',
  'd/c.txt': 'x\n',
  '.tasks/l.json': `${JSON.stringify({ metadata: {}, tasks: [task('t', 'T'), task('u', 'U')], createdAt: TS, updatedAt: TS }, null, 2)}\n`,
  '.eddie/plan.json': `${JSON.stringify({ tasks: [{ title: 'p1', status: 'pending', completed: false }, { title: 'p2', status: 'pending', completed: false }], updatedAt: TS }, null, 2)}\n`,
  'MEMORY.md': '# Memory\n\n## x\n\nx\n',
}
const OUTSIDE_TEXT = `${SECRET}\nhello\nworld\nold\nx\n`

function fillOutside(a) {
  rmSync(a.out, { recursive: true, force: true })
  mkdirSync(join(a.out, 'sub'), { recursive: true })
  for (const f of ['secret.txt', 'sub/deep.txt', `${UNLISTED}.txt`]) writeFileSync(join(a.out, f), OUTSIDE_TEXT)
  for (const n of readdirSync(a.parent)) if (n !== 'ws' && n !== 'out') rmSync(join(a.parent, n), { recursive: true, force: true })
}

/** Put the workspace back to TEMPLATE in place (the directory itself stays, so cwds stay valid). */
function reset(a) {
  for (const n of readdirSync(a.ws)) rmSync(join(a.ws, n), { recursive: true, force: true })
  for (const [rel, text] of Object.entries(TEMPLATE)) {
    mkdirSync(dirname(join(a.ws, rel)), { recursive: true })
    writeFileSync(join(a.ws, rel), text)
  }
  symlinkSync(a.out, join(a.ws, 'link'))
  symlinkSync(join(a.out, 'secret.txt'), join(a.ws, 'flink'))
}

/**
 * The git family acts on a repository: the arena becomes one. TEMPLATE is committed with a.txt and
 * d/c.txt different, then d/c.txt is staged (so there is something to stage, unstage and commit), a
 * checkpoint is taken, and two bare remotes live inside .git (in the snapshot, outside the working tree):
 * `behind` (the base commit: a push has something to send) and `ahead` (one more commit: a pull has
 * something to bring).
 */
async function gitArena(ws) {
  // Asynchronous: the confirm sweep runs lanes side by side, and a synchronous setup would stall
  // the other lanes' abort timers.
  const env = {
    ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'S', GIT_AUTHOR_EMAIL: 's@example.com', GIT_COMMITTER_NAME: 'S', GIT_COMMITTER_EMAIL: 's@example.com',
  }
  const run = promisify(execFile)
  const g = (...args) => run('git', args, { cwd: ws, env })
  const other = join(ws, '.git', 'other')
  const o = (...args) => run('git', args, { cwd: other, env })
  await g('init', '-q', '-b', 'work')
  await g('config', 'user.name', 'S')
  await g('config', 'user.email', 's@example.com')
  writeFileSync(join(ws, 'a.txt'), 'hello\n')
  writeFileSync(join(ws, 'd/c.txt'), 'y\n')
  await g('add', '-A')
  await g('commit', '-q', '-m', 'base')
  for (const name of ['behind', 'ahead']) {
    await g('init', '-q', '--bare', '-b', 'work', `.git/${name}.git`)
    await g('remote', 'add', name, `.git/${name}.git`)
    await g('push', '-q', name, 'work')
  }
  await g('clone', '-q', '-b', 'work', join(ws, '.git/ahead.git'), other)
  writeFileSync(join(other, 'x.txt'), 'x\n')
  await o('add', 'x.txt')
  await o('commit', '-q', '-m', 'ahead')
  await o('push', '-q', 'origin', 'work')
  rmSync(other, { recursive: true, force: true })
  writeFileSync(join(ws, 'a.txt'), TEMPLATE['a.txt'])
  await g('commit', '-q', '-am', 'local')
  writeFileSync(join(ws, 'a.txt'), 'changed\n')
  writeFileSync(join(ws, 'd/c.txt'), TEMPLATE['d/c.txt'])
  await g('add', 'd/c.txt')
  await g('update-ref', 'refs/eddie/checkpoints/x', 'HEAD')
}

function makeArena() {
  const parent = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-')))
  const a = { parent, ws: join(parent, 'ws'), out: join(parent, 'out'), ids: {} }
  mkdirSync(a.ws)
  fillOutside(a)
  reset(a)
  return a
}

/** Every entry under `root` (not following symlinks): mode, symlink target, size and content hash, and mtimes if asked. */
function snapshot(root, { skip = null, times = false } = {}) {
  const out = {}
  const entry = (p) => {
    const st = lstatSync(p)
    const e = { mode: st.mode }
    if (times) e.mtime = st.mtimeMs
    if (st.isSymbolicLink()) e.link = readlinkSync(p)
    else if (st.isFile()) { e.size = st.size; e.sha = createHash('sha256').update(readFileSync(p)).digest('hex') }
    return [e, st.isDirectory()]
  }
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      if (p === skip) continue
      const [e, isDir] = entry(p)
      out[p.slice(root.length + 1)] = e
      if (isDir) walk(p)
    }
  }
  out['.'] = entry(root)[0]
  walk(root)
  return out
}
const outsideSnapshot = (a) => snapshot(a.parent, { skip: a.ws, times: true })

/** Files in the workspace that hold an outside secret (or bear the outside file's unlisted name). */
function leaksIn(ws) {
  const found = []
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name)
      const st = lstatSync(p)
      if (name.includes(UNLISTED)) found.push(p)
      if (st.isDirectory()) walk(p)
      else if (st.isFile()) {
        const text = readFileSync(p, 'latin1')
        if (text.includes(SECRET) || text.includes(UNLISTED)) found.push(p)
      }
    }
  }
  walk(ws)
  return found
}

// ---------------------------------------------------------------------------------------------
// Plausible arguments, derived from a tool's schema (its `required` list, plus a few optionals that
// make a call do its job or keep it bounded). Names are matched as words, so new tools are covered.

const CPATCH = '*** Begin Patch\n*** Update File: a.txt\n@@\n-world\n+WORLD\n*** End Patch\n'
const UDIFF = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+WORLD\n'
const NAMED = {
  path: 'a.txt', filePath: 'a.txt', filepath: 'a.txt', source: 'a.txt', destination: 'copy.txt',
  content: 'x\n', oldString: 'hello', newString: 'bye', diff: UDIFF, patch: CPATCH, pattern: 'hello', symbol: 'x', query: 'x',
  question: 'Which?', result: 'done', toolName: 'run', taskListName: 'l', title: 'T', taskId: 't', status: 'complete', stdin: 'go\n',
  taskNumber: 1, startLine: 1, endLine: 1, lineNumber: 1, timeout: 10, timeoutMs: 10_000, force: true,
  tasks: [{ title: 'p', status: 'pending', completed: false }], edits: [{ oldString: 'hello', newString: 'bye' }],
}
/** Optional arguments a baseline includes when the schema has them. */
const OPTIONALS = new Set(['timeout', 'timeoutMs', 'oldString', 'newString', 'command', 'force', 'stdin'])
/** process_wait / process_kill use a process that has already exited (so a wait is never long). */
const TWEAKS = {
  // The git family: a branch to create (listing asks nothing); push to the remote that is behind, pull from the one ahead.
  git_branch: { action: 'create', name: 'sweep-branch' },
  git_push: { remote: 'behind' },
  git_pull: { remote: 'ahead' },
  process_wait: { id: 'done', timeout: 1 }, process_kill: { id: 'done' }, process_write: { timeout: 5 },
  // Return once the command has run, so that whatever it did is there to be checked.
  process_start: { waitFor: { exit: true, timeout: 10 } },
  // Stack's task tools act on the template's list `l` (its task `t`); a plan is a task list.
  update_task: { taskListName: 'l', status: 'complete' }, delete_task: { taskListName: 'l' }, execute_plan: { planId: 'l' },
  // The browser's blank tab has no element to wait for: a point (clicked at once) and the root
  // element (focusable through its body) reach the confirm without waiting.
  browser_click: { x: 1, y: 1 },
  browser_type: { selector: 'html' },
}

const PATH_WORD = /^(path|paths|file|filename|filepath|dir|directory|cwd|root|target|destination|dest|source|src|from|to|include|pattern|glob)$/
const words = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_-]+/)
const pathLike = (name) => words(name).some((w) => PATH_WORD.test(w))
const branches = (schema) => schema?.anyOf ?? [schema ?? {}]
const typeOf = (schema) => (Array.isArray(schema?.type) ? schema.type[0] : schema?.type)

function valueFor(name, schema, env) {
  if (name === 'id') return env.ids?.live ?? 'p1'
  if (name === 'command') return env.command
  if (name in NAMED) return NAMED[name]
  if (schema?.enum) return schema.enum[0]
  if (schema?.anyOf) return valueFor(name, schema.anyOf[0], env)
  switch (typeOf(schema)) {
    case 'string': return pathLike(name) ? 'a.txt' : 'x'
    case 'integer': case 'number': return Math.min(schema.maximum ?? Infinity, Math.max(1, schema.minimum ?? 1))
    case 'boolean': return false
    case 'array': return schema.minItems ? [valueFor('', schema.items, env)] : []
    case 'object': return requiredObject(schema, env)
    default: return 'x'
  }
}

function requiredObject(schema, env) {
  const obj = {}
  for (const name of schema?.required ?? []) obj[name] = valueFor(name, schema.properties?.[name], env)
  return obj
}

/** The baseline arguments of a tool. `env`: {ids: {live, done}, command}. */
function baseline(spec, env) {
  const props = spec.jsonSchema.properties ?? {}
  const required = new Set(spec.jsonSchema.required ?? [])
  const args = {}
  for (const [name, schema] of Object.entries(props)) {
    if (required.has(name) || OPTIONALS.has(name)) args[name] = valueFor(name, schema, env)
  }
  for (const [k, v] of Object.entries(TWEAKS[spec.name] ?? {})) args[k] = k === 'id' ? (env.ids?.[v] ?? 'p1') : v
  return args
}

// ---------------------------------------------------------------------------------------------
// 1. Bad input.

const HUGE = 'x'.repeat(1 << 20)
const BAD = [42, true, false, {}, [], null, HUGE, '', 'a\u0000b', '\uD800', 'x', -1, 0.5, 1e300, NaN, Infinity, -Infinity, -0]

/** Ways to put a value one level inside `schema` (object properties, extra keys, array items). */
function innerPlacements(schema, env) {
  const out = []
  for (const b of branches(schema)) {
    const t = typeOf(b)
    if (t === 'array' && b.items) {
      out.push((v) => [v])
      if (b.items.properties) {
        const item = requiredObject(b.items, env)
        for (const p of Object.keys(b.items.properties)) out.push((v) => [{ ...item, [p]: v }])
      }
    } else if (t === 'object') {
      const obj = requiredObject(b, env)
      for (const p of Object.keys(b.properties ?? {})) out.push((v) => ({ ...obj, [p]: v }))
      if (b.additionalProperties) out.push((v) => ({ ...obj, SWEEP_KEY: v }))
    }
  }
  return out
}

function* badArgs(spec, base, env) {
  for (const [name, schema] of Object.entries(spec.jsonSchema.properties ?? {})) {
    for (const v of BAD) yield { ...base, [name]: v }
    for (const place of innerPlacements(schema, env)) for (const v of BAD) yield { ...base, [name]: place(v) }
  }
  for (const name of spec.jsonSchema.required ?? []) {
    const a = { ...base }
    delete a[name]
    yield a
  }
  yield { ...base, notAnArgument: 1 }
  for (const whole of [undefined, null, 42, 'x', [], HUGE]) yield whole
}

async function startProcesses(a, ctx) {
  if (!SPEC.process_start) return
  const live = await invoke(SPEC.process_start, { command: 'cat' }, ctx)
  const done = await invoke(SPEC.process_start, { command: 'true', waitFor: { exit: true, timeout: 10 } }, ctx)
  a.ids = { live: live.data.id, done: done.data.id }
}

async function stopProcesses(a) {
  if (!SPEC.process_list || !SPEC.process_kill) return
  const ctx = { cwd: a.ws }
  const { data } = await invoke(SPEC.process_list, {}, ctx)
  for (const p of data.processes) if (p.status === 'running') await invoke(SPEC.process_kill, { id: p.id, force: true }, ctx)
}

/**
 * `fn(spec, arena, ctx)` for every tool, LANES tools at a time, each lane in its own arena with its
 * own background processes (the tools that spawn processes go first, so the lanes end together).
 * A lane ends by checking that the process still answers and that its outside is as it was.
 */
const LANES = 3
// The browser tools act on one Chromium's current tab: a lane's new tab sends another lane's
// tab to the background, where input waits for a frame until its 10 s limit (a known
// limitation, in the browser README). The lanes take turns with the browser.
let browserTurn = Promise.resolve()
async function browserExclusive(fn) {
  const prev = browserTurn
  let release
  browserTurn = new Promise((r) => { release = r })
  await prev
  try { return await fn() } finally { release() }
}

async function inLanes(failures, fn) {
  const queue = [...SPECS].sort((x, y) => (y.family === 'exec') - (x.family === 'exec'))
  await Promise.all(Array.from({ length: LANES }, async () => {
    const a = makeArena()
    const ctx = { cwd: a.ws, confirm: async () => true, ask: async () => 'an answer' }
    await startProcesses(a, ctx)
    const outside = outsideSnapshot(a)
    while (queue.length) {
      const spec = queue.shift()
      await (spec.family === 'browser' ? browserExclusive(() => fn(spec, a, ctx)) : fn(spec, a, ctx))
    }
    await stopProcesses(a)
    await sleep(100)
    try { assert.deepEqual(outsideSnapshot(a), outside) } catch (e) { failures.push(`the outside of ${a.parent} changed:\n${e.message}`) }
    reset(a)
    const alive = await settle(invoke(SPEC.read_file ?? SPEC.file_read, { path: 'a.txt' }, ctx))
    if (!alive.value?.content.includes('hello')) failures.push(`a read after the sweep failed: ${outcomeText(alive)}`)
  }))
}

test('bad input: every tool, every property, wrong types and odd values: a result or a known non-INTERNAL code, within a bound', async (t) => {
  const failures = []
  let swept = 0
  const seen = new Set()
  await inLanes(failures, async (spec, a, ctx) => {
    seen.add(spec.name)
    const outside = outsideSnapshot(a)
    const env = { ids: a.ids, command: 'true' }
    const base = baseline(spec, env)
    for (const args of badArgs(spec, base, env)) {
      const o = await settle(invoke(spec, args, ctx), boundFor(spec))
      swept++
      const why = problem(o)
      if (why) failures.push(`${spec.name} ${show(args)}: ${why}`)
      if (spec.mutating) reset(a)
    }
    try { assert.deepEqual(outsideSnapshot(a), outside) } catch (e) { failures.push(`${spec.name}: the outside changed during its bad-input sweep:\n${e.message}`) }
  })
  t.diagnostic(`bad input: ${swept} calls over ${seen.size} tools`)
  assert.equal(seen.size, SPECS.length)
  assert.ok(swept > SPECS.length * BAD.length, `only ${swept} calls`)
  assert.deepEqual(failures, [])
})

// ---------------------------------------------------------------------------------------------
// 2. Escapes.

function escapePaths(a) {
  return [
    '..', '../', '../outside.txt', '../out', '../out/secret.txt', '../out/new.txt', 'd/../../out/secret.txt', '../ws/../out/secret.txt',
    a.out, join(a.out, 'secret.txt'), join(a.out, 'new.txt'), join(a.parent, 'outside.txt'), a.parent,
    'link', 'flink', 'link/', 'link/secret.txt', 'link/x.txt', 'link/sub', 'link/sub/deep.txt', 'link/..', 'flink/x.txt',
    'link/*', 'link/**', 'link/**/*.txt', 'link/*.txt', 'link/sub/*', 'flink*', 'lin*/*', 'l?nk/**', '{link,d}/*', '[l]ink/**',
    '../out/*', '../**', 'link/../../out/*', `${a.out}/*`, `${a.parent}/**`,
  ]
}

/** Patches and diffs whose paths lead out. */
function escapePatches(a) {
  const out = []
  for (const p of escapePaths(a).filter((x) => !x.includes('*'))) {
    out.push(
      `*** Begin Patch\n*** Add File: ${p}\n+x\n*** End Patch\n`,
      `*** Begin Patch\n*** Update File: ${p}\n@@\n-old\n+new\n*** End Patch\n`,
      `*** Begin Patch\n*** Delete File: ${p}\n*** End Patch\n`,
      `*** Begin Patch\n*** Update File: a.txt\n*** Move to: ${p}\n@@\n-world\n+W\n*** End Patch\n`,
      `--- a/${p}\n+++ b/${p}\n@@ -4 +4 @@\n-old\n+new\n`,
      `--- ${p}\n+++ ${p}\n@@ -4 +4 @@\n-old\n+new\n`,
      `--- /dev/null\n+++ b/${p}\n@@ -0,0 +1 @@\n+x\n`,
      `--- a/a.txt\n+++ b/${p}\n@@ -1,2 +1,2 @@\n hello\n-world\n+W\n`,
    )
  }
  return out
}

/** The argument placements of a tool that take a path: [name, (value) => argument value]. */
function pathArguments(spec) {
  const out = []
  for (const [name, schema] of Object.entries(spec.jsonSchema.properties ?? {})) {
    if (name === 'diff' || name === 'patch') { out.push([name, 'patches']); continue }
    if (!pathLike(name)) continue
    const bs = branches(schema)
    if (bs.some((b) => typeOf(b) === 'string')) out.push([name, (v) => v])
    else if (bs.some((b) => typeOf(b) === 'array' && typeOf(b.items) === 'string')) out.push([name, (v) => [v]])
  }
  return out
}

/**
 * Arguments that make a tool walk as wide as it can from the workspace root (hidden entries,
 * dependencies, tests and docs included, ignore rules off, any depth, recursive), looking for
 * `term` wherever it takes a pattern, query or name: a walk must not follow `link` out.
 */
function wideArgs(spec, base, term, paths) {
  const args = { ...base }
  for (const [name, schema] of Object.entries(spec.jsonSchema.properties ?? {})) {
    const t = typeOf(schema)
    const takesString = branches(schema).some((b) => typeOf(b) === 'string')
    if (t === 'boolean' && /^(include|recursive|follow)/i.test(name)) args[name] = true
    if (t === 'boolean' && /^respect/i.test(name)) args[name] = false
    if ((t === 'integer' || t === 'number') && /depth/i.test(name)) args[name] = 50
    if (takesString && /^(pattern|content|query|symbol|name|regex)$/.test(name)) args[name] = term
    if (takesString && paths && pathLike(name) && !/^(pattern|include|glob)$/.test(name)) args[name] = '.'
  }
  return args
}
const WALK_TERMS = ['SECRET', '**/*', '*unlisted*', 'unlisted']

test('escapes: every path-like argument, every patched path and every wide walk: nothing outside is created, changed or read', async (t) => {
  // The hash the files tools would report for the outside files (they all hold OUTSIDE_TEXT),
  // computed on a copy in a separate workspace: it must not show up in any result either.
  let secretHash = null
  if (SPEC.get_file_info) {
    const twin = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-twin-')))
    writeFileSync(join(twin, 'twin.txt'), OUTSIDE_TEXT)
    secretHash = (await invoke(SPEC.get_file_info, { path: 'twin.txt' }, { cwd: twin })).data.hash
    rmSync(twin, { recursive: true, force: true })
  }
  const failures = []
  const swept = new Set()
  let n = 0
  let resolved = 0
  await inLanes(failures, async (spec, a, ctx) => {
    let before = outsideSnapshot(a)
    const base = baseline(spec, { ids: a.ids, command: `touch ${MARKER}` })
    const cases = []
    for (const [name, place] of pathArguments(spec)) {
      const values = place === 'patches' ? escapePatches(a) : escapePaths(a).map(place)
      swept.add(`${spec.name}.${name}`)
      for (const v of values) cases.push({ ...base, [name]: v })
    }
    for (const term of WALK_TERMS) for (const paths of [false, true]) cases.push(wideArgs(spec, base, term, paths))
    for (const args of cases) {
      const o = await settle(invoke(spec, args, ctx), boundFor(spec))
      n++
      const label = `${spec.name} ${show(args)}`
      const why = problem(o)
      if (why) failures.push(`${label}: ${why}`)
      if (o.value) resolved++
      const text = outcomeText(o)
      for (const s of [SECRET, UNLISTED, secretHash].filter(Boolean)) {
        if (text.includes(s)) failures.push(`${label}: the result shows ${s === secretHash ? 'the outside file\'s hash' : s}: ${text.slice(0, 300)}`)
      }
      const leaks = leaksIn(a.ws)
      if (leaks.length) failures.push(`${label}: outside content copied into the workspace: ${leaks.join(', ')}`)
      try {
        assert.deepEqual(outsideSnapshot(a), before)
      } catch (e) {
        failures.push(`${label}: the outside changed:\n${e.message}`)
        fillOutside(a)
        before = outsideSnapshot(a)
      }
      reset(a)
    }
  })
  t.diagnostic(`escapes: ${n} calls over ${swept.size} path arguments (${resolved} resolved, the rest refused)`)
  for (const must of ['read_file.path', 'write_file.path', 'glob.pattern', 'grep.path', 'run.cwd', 'bash.cwd', 'apply_patch.patch', 'copy_file.destination', 'get_plan.filename']) {
    assert.ok(swept.has(must), `${must} is swept as a path argument`)
  }
  assert.deepEqual(failures, [])
})

// ---------------------------------------------------------------------------------------------
// 3. Confirms.

async function pool(items, width, fn) {
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => { while (next < items.length) await fn(items[next++]) }))
}

const confirmCases = [
  { name: 'confirm returns false', ctx: () => ({ confirm: async () => false }) },
  { name: 'no confirm', ctx: () => ({}) },
  { name: 'confirm throws', ctx: () => ({ confirm: () => { throw new Error('confirm blew up') } }), code: 'CONFIRM_FAILED' },
  { name: 'confirm rejects', ctx: () => ({ confirm: async () => { throw new Error('confirm rejected') } }), code: 'CONFIRM_FAILED' },
  {
    name: 'confirm pending, aborted after 100 ms',
    ctx: () => { const c = new AbortController(); setTimeout(() => c.abort(), 100); return { confirm: () => new Promise(() => {}), signal: c.signal } },
    bound: 3000,
    abort: true,
  },
]

test('confirms: declined, missing, throwing or pending-then-aborted, for every tool that asks: nothing changes, nothing runs', async (t) => {
  const asking = SPECS.filter((s) => (s.confirms || s.permission !== 'none') && swept(s))
  if (noBrowser) t.diagnostic(`browser tools left out: ${noBrowser}`)
  const failures = []
  let n = 0
  await pool(asking, 6, async (spec) => {
    const a = makeArena()
    const yes = { cwd: a.ws, confirm: async () => true }
    // process_write's target reads a line, then leaves the marker: a write that got through shows.
    if (SPEC.process_start) {
      const r = await invoke(SPEC.process_start, { command: 'sh', args: ['-c', `read line && touch ${MARKER}`] }, yes)
      a.ids = { live: r.data.id, done: r.data.id }
    }
    const args = baseline(spec, { ids: a.ids, command: `touch ${MARKER}` })
    for (const c of confirmCases) {
      reset(a)
      if (spec.family === 'git') await gitArena(a.ws)
      const before = snapshot(a.ws)
      const prompts = []
      const extra = c.ctx()
      const ctx = { cwd: a.ws, ...extra }
      if (extra.confirm) { const inner = extra.confirm; ctx.confirm = (m) => { prompts.push(m); return inner(m) } }
      const o = await settle(invoke(spec, args, ctx), c.bound ?? CALL_MS)
      n++
      await sleep(100) // a process let through would have left its marker by now
      const label = `${spec.name} ${show(args)} (${c.name})`
      const why = problem(o)
      if (why) failures.push(`${label}: ${why}`)
      if (!spec.confirms) {
        // eddie's complete_task mutates without asking, by contract: it must not ask either.
        if (prompts.length) failures.push(`${label}: confirms is false but it asked ${show(prompts)}`)
        continue
      }
      if (c.name === 'confirm returns false' && prompts.length === 0) failures.push(`${label}: never asked (the sweep's arguments did not reach the prompt: ${outcomeText(o).slice(0, 200)})`)
      if (c.code && !(o.error?.code === c.code)) failures.push(`${label}: expected ${c.code}, got ${o.error ? o.error.code : 'a result'}: ${outcomeText(o).slice(0, 200)}`)
      if (c.abort && !o.hung) {
        const cancelled = o.error?.code === 'CANCELLED' || o.value?.data?.cancelled === true || o.value?.data?.status === 'cancelled'
        if (!cancelled) failures.push(`${label}: not cancelled: ${outcomeText(o).slice(0, 200)}`)
      }
      if (existsSync(join(a.ws, MARKER))) failures.push(`${label}: the command ran`)
      try { assert.deepEqual(snapshot(a.ws), before) } catch (e) { failures.push(`${label}: the workspace changed:\n${e.message}`) }
    }
    await stopProcesses(a)
  })
  t.diagnostic(`confirms: ${n} calls over ${asking.length} tools`)
  for (const must of ['bash', 'file_write', 'update_plan', 'agent__new_task', 'write_file', 'apply_patch', 'delete_file', 'run', 'process_write', 'lint']) {
    assert.ok(asking.some((s) => s.name === must), `${must} is swept`)
  }
  assert.deepEqual(failures, [])
})

// ---------------------------------------------------------------------------------------------
// 4. Output caps: edits and writes whose text crosses every cap (16 KiB shown diffs, 32 KiB patch
// diffs, 50 000-byte reads, the JS-crossing sizes) with a multi-byte character at every cut offset.

const capCases = (C) => [
  ['insert_at', 'hello\nworld\n', { path: 'a.txt', lineNumber: 1, content: C }, `${C}\nhello\nworld\n`],
  ['edit_file', 'hello\nworld\n', { path: 'a.txt', oldString: 'world', newString: C }, `hello\n${C}\n`],
  ['edit_file', 'hello\nworld\n', { path: 'a.txt', oldString: 'world', newString: C, dryRun: true }, null],
  ['edit_file', `hello\n${C}\n`, { path: 'a.txt', oldString: C, newString: 'short' }, 'hello\nshort\n'],
  ['multi_edit', 'hello\nworld\n', { path: 'a.txt', edits: [{ oldString: 'world', newString: C }, { oldString: 'hello', newString: C }] }, `${C}\n${C}\n`],
  ['edit_range', 'hello\nworld\n', { path: 'a.txt', startLine: 2, endLine: 2, content: C }, `hello\n${C}\n`],
  ['delete_range', `hello\n${C}\nworld\n`, { path: 'a.txt', startLine: 2, endLine: 2 }, 'hello\nworld\n'],
  ['delete_range', `hello\n${C}\nworld\n`, { path: 'a.txt', startLine: 2, endLine: 2, dryRun: true }, null],
  ['write_file', 'hello\nworld\n', { path: 'a.txt', content: C }, C],
  ['file_write', 'hello\nworld\n', { path: 'a.txt', content: C }, C],
  ['apply_patch', 'hello\nworld\n', { patch: `*** Begin Patch\n*** Update File: a.txt\n@@\n hello\n-world\n+${C}\n*** End Patch\n`, dryRun: true }, null],
  ['apply_patch', 'hello\nworld\n', { patch: `*** Begin Patch\n*** Update File: a.txt\n@@\n hello\n-world\n+${C}\n*** End Patch\n` }, `hello\n${C}\n`],
  ['apply_unified_diff', 'hello\nworld\n', { diff: `--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+${C}\n`, dryRun: true }, null],
  ['apply_unified_diff', 'hello\nworld\n', { diff: `--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+${C}\n` }, `hello\n${C}\n`],
]

const wellFormed = (s) => typeof s !== 'string' || (s.isWellFormed() && !s.includes('\uFFFD'))

test('output caps: edits and writes crossing every cap with 2-, 3- and 4-byte characters at every cut offset', async (t) => {
  const dir = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-caps-')))
  const ctx = { cwd: dir, confirm: async () => true }
  const file = join(dir, 'a.txt')
  const failures = []
  let n = 0
  for (const ch of ['é', '€', '😀']) {
    const width = Buffer.byteLength(ch)
    for (const lead of [0, 1, 2, 3]) {
      for (const bytes of [70_000, 1 << 20]) {
        const C = 'a'.repeat(lead) + ch.repeat(Math.ceil(bytes / width))
        for (const [name, text, args, expected] of capCases(C)) {
          if (!SPEC[name]) continue
          writeFileSync(file, text)
          const o = await settle(invoke(SPEC[name], args, ctx))
          n++
          const label = `${name} ${show(args)} (${ch}, ${lead} ASCII bytes before, ${bytes} bytes)`
          const why = problem(o)
          if (why) { failures.push(`${label}: ${why}`) } else if (o.error) {
            failures.push(`${label}: rejected ${o.error.code}: ${o.error.message.slice(0, 200)}`)
          }
          const now = readFileSync(file, 'utf8')
          if (o.value) {
            const d = o.value.data
            const applied = d.applied ?? (d.cancelled !== true && d.dryRun !== true && (d.bytesWritten ?? 0) > 0)
            if (applied !== (expected !== null)) failures.push(`${label}: applied is ${applied}`)
            if (applied && now !== expected) failures.push(`${label}: resolved as applied but the file is ${Buffer.byteLength(now)} bytes, not the expected ${Buffer.byteLength(expected)}`)
            if (!applied && now !== text) failures.push(`${label}: not applied, yet the file changed`)
            if (!wellFormed(o.value.content) || !wellFormed(d.diff)) failures.push(`${label}: a split character (U+FFFD or a lone surrogate) in the result`)
          } else if (now !== text) failures.push(`${label}: rejected, yet the file changed`)
        }
        // Reads and command output cut the same text at their caps.
        writeFileSync(file, `${C}\n${C}\n`)
        const reads = [
          ['read_file', { path: 'a.txt' }], ['read_file', { path: 'a.txt', maxBytes: 16_384 + lead }], ['read_file', { path: 'a.txt', maxLineLength: 5000 + lead }],
          ['read_file', { path: 'a.txt', limitBytes: 1000 + lead }], ['file_read', { path: 'a.txt' }], ['file_read', { path: 'a.txt', maxBytes: 997 + lead }],
          ['run', { command: 'cat', args: ['a.txt'], maxOutputBytes: 256 + lead }], ['run', { command: 'cat', args: ['a.txt'], maxOutputBytes: 40_000 + lead }],
          ['grep', { pattern: 'a', maxLineLength: 300 + lead }],
        ]
        for (const [name, args] of reads) {
          if (!SPEC[name]) continue
          const o = await settle(invoke(SPEC[name], args, ctx))
          n++
          const label = `${name} ${show(args)} (${ch}, ${lead} ASCII bytes before, ${bytes} bytes)`
          const why = problem(o) ?? (o.error ? `rejected ${o.error.code}: ${o.error.message}` : null)
          if (why) failures.push(`${label}: ${why}`)
          else if (!wellFormed(o.value.content) || !wellFormed(o.value.data?.stdout)) failures.push(`${label}: a split character in the result`)
        }
      }
    }
  }
  rmSync(dir, { recursive: true, force: true })
  t.diagnostic(`output caps: ${n} calls`)
  assert.deepEqual(failures, [])
})

test('output caps, the reproduction: insert_at of 262144 emoji into "hello\\nworld\\n" resolves and writes 1,048,589 bytes', async () => {
  const dir = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-caps-')))
  writeFileSync(join(dir, 'a.txt'), 'hello\nworld\n')
  calls++
  const r = await tools.insertAt({ path: 'a.txt', lineNumber: 1, content: '😀'.repeat(262144) }, { cwd: dir, confirm: async () => true })
  assert.equal(r.data.applied, true)
  assert.equal(readFileSync(join(dir, 'a.txt')).length, 1_048_589)
  assert.ok(r.content.isWellFormed() && r.content.includes('[diff truncated: '))
  rmSync(dir, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------
// 5. Concurrency on the plan and task-list stores.

test('concurrency: 50-way calls on the plan and task-list stores lose nothing', async () => {
  const ws = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-stores-')))
  const ctx = { cwd: ws, confirm: async () => true }
  const run = (name, args) => { calls++; return tools.runTool(name, args, ctx) }
  const N = 50
  const list = (name) => JSON.parse(readFileSync(join(ws, '.tasks', `${name}.json`), 'utf8'))
  const plan = () => JSON.parse(readFileSync(join(ws, '.eddie/plan.json'), 'utf8'))

  // 50 new tasks at once: all there, ids distinct.
  await run('agent__new_task_list', { taskListName: 'l' })
  await Promise.all(Array.from({ length: N }, (_, i) => run('agent__new_task', { taskListName: 'l', title: `t${i}` })))
  let doc = list('l')
  assert.deepEqual(doc.tasks.map((x) => x.title).sort(), Array.from({ length: N }, (_, i) => `t${i}`).sort())
  assert.equal(new Set(doc.tasks.map((x) => x.id)).size, N)
  // 50 status changes at once, each on its own task.
  await Promise.all(doc.tasks.map((x) => run('agent__set_task_status', { taskListName: 'l', taskId: x.id, status: 'complete' })))
  doc = list('l')
  assert.equal(doc.tasks.length, N)
  assert.ok(doc.tasks.every((x) => x.status === 'complete'), 'every status change kept')
  // Mixed: 25 additions, 25 status changes and deletions of the first 10, all at once.
  const ids = doc.tasks.map((x) => x.id)
  await Promise.all([
    ...Array.from({ length: 25 }, (_, i) => run('agent__new_task', { taskListName: 'l', title: `n${i}` })),
    ...ids.slice(10, 35).map((id) => run('agent__set_task_status', { taskListName: 'l', taskId: id, status: 'in_progress' })),
    ...ids.slice(0, 10).map((id) => run('agent__delete_task', { taskListName: 'l', taskId: id })),
  ])
  doc = list('l')
  assert.equal(doc.tasks.length, N - 10 + 25)
  assert.ok(ids.slice(0, 10).every((id) => !doc.tasks.some((x) => x.id === id)), 'every deletion kept')
  assert.ok(ids.slice(10, 35).every((id) => doc.tasks.find((x) => x.id === id).status === 'in_progress'))
  assert.ok(ids.slice(35).every((id) => doc.tasks.find((x) => x.id === id).status === 'complete'))
  assert.equal(doc.tasks.filter((x) => /^n\d+$/.test(x.title)).length, 25)
  // 50 lists created at once, each with a task.
  await Promise.all(Array.from({ length: N }, (_, i) => run('agent__new_task', { taskListName: `list${i}`, title: 'only' })))
  for (let i = 0; i < N; i++) assert.deepEqual(list(`list${i}`).tasks.map((x) => x.title), ['only'])

  // The plan: 50 tasks, then 50 complete_task calls at once.
  const tasks = Array.from({ length: N }, (_, i) => ({ title: `p${i}`, status: 'pending', completed: false }))
  await run('update_plan', { tasks })
  await Promise.all(tasks.map((_, i) => run('complete_task', { taskNumber: i + 1 })))
  assert.ok(plan().tasks.every((x) => x.completed === true && x.status === 'complete'), 'every completion kept')
  assert.deepEqual(plan().tasks.map((x) => x.title), tasks.map((x) => x.title))
  // 50 whole plans written at once: the file is exactly one of them, never a mix or a torn write.
  const plans = Array.from({ length: N }, (_, i) => Array.from({ length: 5 }, (_, j) => ({ title: `w${i}.${j}`, status: 'in_progress', completed: false })))
  const results = await Promise.all(plans.map((p) => run('update_plan', { tasks: p })))
  assert.ok(results.every((r) => r.data.plan.tasks.length === 5))
  const final = plan().tasks
  assert.ok(plans.some((p) => JSON.stringify(p) === JSON.stringify(final)), `the plan is one of the writes: ${JSON.stringify(final)}`)
  rmSync(ws, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------------------------
// 6. Reproductions of fixed defects.

test('fixed: glob with a symlink prefix leading outside (link/*, link/**) is refused and lists nothing outside', async () => {
  const a = makeArena()
  const ctx = { cwd: a.ws }
  const before = outsideSnapshot(a)
  for (const pattern of ['link/*', 'link/**', 'link/**/*.txt', 'link/sub/*']) {
    calls++
    await assert.rejects(tools.glob({ pattern }, ctx), (e) => {
      assert.equal(e.code, 'OUTSIDE_WORKSPACE', `${pattern}: ${e.message}`)
      assert.ok(!e.message.includes(UNLISTED) && !e.message.includes('deep.txt'), e.message)
      return true
    })
  }
  // The same names inside the workspace still work.
  calls++
  const r = await tools.glob({ pattern: 'd/*' }, ctx)
  assert.ok(JSON.stringify(r.data).includes('d/c.txt'))
  assert.deepEqual(outsideSnapshot(a), before)
})

test('fixed: an exec tool that asks, with a confirm left pending and an abort after 100 ms, rejects CANCELLED within 2 s and runs nothing', async (t) => {
  const asking = SPECS.filter((s) => s.family === 'exec' && (s.confirms || s.permission !== 'none'))
  assert.ok(['run', 'process_start', 'process_write', 'run_tests', 'lint', 'format', 'typecheck', 'build', 'install'].every((n) => asking.some((s) => s.name === n)))
  const a = makeArena()
  const r = await invoke(SPEC.process_start, { command: 'sh', args: ['-c', `read line && touch ${MARKER}`] }, { cwd: a.ws, confirm: () => true })
  a.ids = { live: r.data.id, done: r.data.id }
  const failures = []
  await Promise.all(asking.map(async (spec) => {
    const args = baseline(spec, { ids: a.ids, command: `touch ${MARKER}` })
    const c = new AbortController()
    setTimeout(() => c.abort(), 100)
    const o = await settle(invoke(spec, args, { cwd: a.ws, confirm: () => new Promise(() => {}), signal: c.signal }), 2000)
    if (o.hung || o.error?.code !== 'CANCELLED') failures.push(`${spec.name} ${show(args)}: ${o.hung ? 'still pending after 2 s' : outcomeText(o).slice(0, 200)}`)
  }))
  await sleep(200)
  assert.ok(!existsSync(join(a.ws, MARKER)), 'nothing ran')
  await stopProcesses(a)
  t.diagnostic(`${asking.map((s) => s.name).join(', ')}`)
  assert.deepEqual(failures, [])
})

test('fixed: codex patch scenario 017 (a padded section header) applies', async () => {
  const dir = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-')))
  writeFileSync(join(dir, 'foo.txt'), 'old\n')
  calls++
  const r = await tools.applyPatch({ patch: '*** Begin Patch\n  *** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\n' }, { cwd: dir, confirm: async () => true })
  assert.equal(r.data.applied, true)
  assert.equal(readFileSync(join(dir, 'foo.txt'), 'utf8'), 'new\n')
})

test('fixed: a lone CR ends a line for a codex patch, and every other line keeps its ending', async () => {
  assert.ok(SPEC.apply_patch.jsonSchema.properties.patch, 'apply_patch takes `patch`')
  const dir = realpathSync(mkdtempSync(join(TMP, 'eddie-sweep-')))
  writeFileSync(join(dir, 'cr.txt'), 'one\r\ntwo\rthree\nfour\r\n')
  calls++
  const r = await tools.applyPatch({ patch: '*** Begin Patch\n*** Update File: cr.txt\n@@\n-three\n+THREE\n*** End Patch\n' }, { cwd: dir, confirm: async () => true })
  assert.equal(r.data.applied, true)
  assert.equal(readFileSync(join(dir, 'cr.txt'), 'utf8'), 'one\r\ntwo\rTHREE\nfour\r\n')
})

// ---------------------------------------------------------------------------------------------
// 7. Outputs: every successful result above was checked by invoke(); here every tool gets a call
// that succeeds (the baseline arguments, plus the table's where they are not enough), and the
// checks' findings over the whole file are asserted.

/** A loopback server for the web and browser tools: a page, a file and a SearXNG endpoint. Bounded: it serves at most 1000 requests. */
async function serveLoopback() {
  let served = 0
  const server = createServer((req, res) => {
    if (++served > 1000) { res.writeHead(503); res.end(); return }
    const path = new URL(req.url, 'http://x').pathname
    if (path === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><html><head><title>Sweep page</title></head><body><h1>Hello</h1><p>A paragraph.</p><input id="q"><button id="go">Go</button></body></html>')
    } else if (path === '/file.bin') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' })
      res.end(Buffer.from('binary\0data'))
    } else if (path === '/searx/search') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ query: 'x', number_of_results: 1, results: [{ url: 'https://example.com/', title: 'Example', content: 'An example', engine: 'sweep', publishedDate: null }] }))
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' })
      res.end('not here')
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { base: `http://127.0.0.1:${server.address().port}`, close: () => { server.close(); server.closeAllConnections?.() } }
}

/**
 * What a tool needs beyond its baseline arguments to succeed: `args(base)` (base: the loopback
 * server's URL; an undefined value drops a baseline argument) and `ctx(base, arena)`; `more(base)`:
 * further arguments whose results take other shapes (each must succeed too). The git family runs
 * in a repository (gitArena).
 */
const HAPPY = {
  web_fetch: { args: (base) => ({ url: `${base}/page` }), more: (base) => [{ url: `${base}/page`, format: 'text' }, { url: `${base}/page`, format: 'html', maxChars: 20 }] },
  fetch: { args: (base) => ({ url: `${base}/page` }) },
  check_url: { args: (base) => ({ url: `${base}/page` }), more: (base) => [{ url: `${base}/missing` }] },
  run_tests: { more: () => [{ command: ['sh', '-c', 'printf "ok 1 - a\\nnot ok 2 - b\\n# pass 1\\n# fail 1\\n"; exit 1'] }] },
  git_diff: { more: () => [{ staged: true }, { stat: true }] },
  git_log: { more: () => [{ maxCount: 1, files: true }] },
  git_show: { more: () => [{ revision: 'HEAD~1' }] },
  git_branch: { more: () => [{ action: 'list' }] },
  download: { args: (base) => ({ url: `${base}/file.bin`, path: 'file.bin' }) },
  web_search: { ctx: (base) => ({ env: { SEARXNG_URL: `${base}/searx`, BRAVE_API_KEY: '', TAVILY_API_KEY: '' } }) },
  browser_navigate: { args: (base) => ({ url: `${base}/page` }) },
  browser_new_tab: { args: (base) => ({ url: `${base}/page` }) },
  browser_find: { args: () => ({ query: 'Go' }) },
  browser_type: { args: () => ({ selector: '#q', text: 'typed' }) },
  browser_click: { args: () => ({ selector: '#go', x: undefined, y: undefined }) },
  list_symbols: { args: () => ({ path: 'src/main.ts' }) },
  screenshot: { args: (base) => ({ url: `${base}/page`, destination: 'shot.png' }) },
}

test('outputs: every tool succeeds at least once, and every successful result of the sweep matches its outputSchema and $id', async (t) => {
  const server = await serveLoopback()
  const a = makeArena()
  const yes = { cwd: a.ws, confirm: async () => true, ask: async () => 'an answer' }
  await startProcesses(a, yes)
  const failures = []
  try {
    for (const spec of SPECS.filter(swept)) {
      reset(a)
      if (spec.family === 'git') await gitArena(a.ws)
      const happy = HAPPY[spec.name] ?? {}
      const base = baseline(spec, { ids: a.ids, command: 'true' })
      const ctx = { ...yes, network: { allowHosts: ['127.0.0.1'] }, ...happy.ctx?.(server.base, a) }
      for (const extra of [happy.args?.(server.base), ...(happy.more?.(server.base) ?? [])]) {
        const args = Object.fromEntries(Object.entries({ ...base, ...extra }).filter(([, v]) => v !== undefined))
        const run = () => settle(invoke(spec, args, ctx), boundFor(spec))
        const o = await (spec.family === 'browser' ? browserExclusive(run) : run())
        if (!o.value) failures.push(`${spec.name} ${show(args)}: no result: ${problem(o) ?? outcomeText(o).slice(0, 300)}`)
        if (spec.mutating) {
          reset(a)
          if (spec.family === 'git') await gitArena(a.ws)
        }
      }
    }
  } finally {
    await stopProcesses(a)
    server.close()
  }
  for (const spec of SPECS) t.diagnostic(`${spec.name}: ${validated.get(spec.name)} results validated`)
  const total = [...validated.values()].reduce((x, y) => x + y, 0)
  t.diagnostic(`outputs: ${total} results validated over ${SPECS.length} tools`)
  assert.deepEqual(failures, [])
  if (noBrowser) t.diagnostic(`browser tools left out: ${noBrowser}`)
  assert.deepEqual(SPECS.filter((s) => swept(s) && !validated.get(s.name)).map((s) => s.name), [], 'tools with no result validated')
  assert.deepEqual([...outputFailures.values()], [])
  // The checks can fail: every outputSchema refuses a value of the wrong type, and one with a required key refuses {}.
  for (const spec of SPECS) {
    const { validate } = VALIDATE.get(spec.outputSchema.$id)
    assert.equal(validate('not the data'), false, `${spec.name}'s outputSchema accepts a string`)
    if (spec.outputSchema.required?.length) assert.equal(validate({}), false, `${spec.name}'s outputSchema accepts {}`)
  }
})

after(() => {
  rmSync(TMP, { recursive: true, force: true })
  console.log(`sweep summary: ${calls} tool calls over ${SPECS.length} tools in ${((Date.now() - started) / 1000).toFixed(1)} s`)
})
