// The one value policy (call::args::lenient): a number as a string, a boolean as a string, a
// fraction, a negative and an over-max value get the same behaviour and the same message in
// every family; timeouts follow one rule (fractions allowed, over the max refused naming it, 0
// only where the tool means "none"); unknown keys are refused by the pipeline in every family.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createServer } from 'node:http'
import * as native from '../index.js'
import { workspace, rejectsWith, approving } from './helpers.mjs'

const tools = approving(native)
const call = (name, args, ctx) => tools.runTool(name, args, ctx)
const specs = new Map(tools.toolSpecs().map((s) => [s.name, s]))
/** A search result's data without the index's state, which a first search changes. */
const found = ({ index, ...rest }) => rest

const servers = []
after(() => { for (const s of servers) { s.close(); s.closeAllConnections?.() } })

test('a number given as a string is that number, in every family', async () => {
  const cwd = workspace({ 'a.txt': 'needle\n', 'b.txt': 'needle\n', 'c.txt': 'needle\n', 'long.txt': 'l1\nl2\nl3\nl4\n' })
  const ctx = { cwd }
  // code: grep.maxResults
  const asNumber = await call('grep', { pattern: 'needle', outputMode: 'files', maxResults: 1 }, ctx)
  const asString = await call('grep', { pattern: 'needle', outputMode: 'files', maxResults: '1' }, ctx)
  assert.equal(asNumber.data.files.length, 1)
  assert.deepEqual(found(asString.data), found(asNumber.data))
  // files: read_file.limit
  const lines = await call('read_file', { path: 'long.txt', limit: '2' }, ctx)
  assert.deepEqual(lines.data, (await call('read_file', { path: 'long.txt', limit: 2 }, ctx)).data)
  assert.match(lines.content, /l2/)
  assert.doesNotMatch(lines.content, /l3/)
  // memory: cache_keys.limit
  await call('cache_store', { key: 'k1', value: 'v', tier: 'reasoning' }, ctx)
  await call('cache_store', { key: 'k2', value: 'v', tier: 'reasoning' }, ctx)
  const keys = await call('cache_keys', { limit: '1', tier: 'reasoning' }, ctx)
  // ageMs moves between the two calls: compare the rest.
  const ageless = (d) => ({ ...d, keys: d.keys.map(({ ageMs, ...k }) => k) })
  assert.deepEqual(ageless(keys.data), ageless((await call('cache_keys', { limit: 1, tier: 'reasoning' }, ctx)).data))
  // git: git_log.maxCount
  const repo = workspace({ 'f.txt': 'x' })
  const git = (...a) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...a], { cwd: repo, stdio: 'pipe' })
  git('init', '-q'); git('add', '.'); git('commit', '-qm', 'one'); git('commit', '-q', '--allow-empty', '-m', 'two')
  const log = await call('git_log', { maxCount: '1' }, { cwd: repo })
  assert.equal(log.data.commits.length, 1)
  assert.deepEqual(log.data, (await call('git_log', { maxCount: 1 }, { cwd: repo })).data)
  // web: web_search.count is read before the provider is looked for.
  await rejectsWith(assert, call('web_search', { query: 'x', count: '3' }, { cwd, env: {} }), 'NO_PROVIDER')
  await rejectsWith(assert, call('web_search', { query: 'x', count: '50' }, { cwd, env: {} }), 'INVALID_ARGUMENT',
    'web_search: `count` must be an integer from 1 to 20 (got "50")')
  // A string that is not a whole number is refused the same way everywhere.
  for (const [tool, args, key] of [
    ['grep', { pattern: 'x' }, 'maxResults'], ['read_file', { path: 'a.txt' }, 'limit'], ['web_fetch', { url: 'http://127.0.0.1:1/' }, 'maxChars'],
    ['git_log', {}, 'maxCount'], ['cache_keys', {}, 'limit'], ['browser_find', { query: 'x' }, 'limit'],
  ]) {
    await rejectsWith(assert, call(tool, { ...args, [key]: 'fifty' }, { cwd: repo }), 'INVALID_ARGUMENT',
      new RegExp(`^${tool}: \`${key}\` must be an integer.* \\(got "fifty"\\)$`))
  }
})

test('a boolean given as a string is that boolean, and anything else is refused the same way', async () => {
  const cwd = workspace({ 'A.md': 'x', 'sub/b.md': 'Needle' })
  const ctx = { cwd }
  // code (plain bool before): glob.caseInsensitive, grep.caseInsensitive
  const off = await call('glob', { pattern: '*.md', caseInsensitive: 'false' }, ctx)
  assert.deepEqual(found(off.data), found((await call('glob', { pattern: '*.md', caseInsensitive: false }, ctx)).data))
  const on = await call('grep', { pattern: 'needle', caseInsensitive: 'true' }, ctx)
  assert.equal(on.data.totalMatches ?? on.data.matches?.length, 1)
  assert.deepEqual(found(on.data), found((await call('grep', { pattern: 'needle', caseInsensitive: true }, ctx)).data))
  const none = await call('grep', { pattern: 'needle', caseInsensitive: 'no' }, ctx)
  assert.deepEqual(found(none.data), found((await call('grep', { pattern: 'needle', caseInsensitive: false }, ctx)).data))
  // files: list_directory.recursive
  const flat = await call('list_directory', { recursive: '0' }, ctx)
  assert.deepEqual(flat.data, (await call('list_directory', { recursive: false }, ctx)).data)
  for (const [tool, args, key] of [
    ['grep', { pattern: 'x' }, 'literal'], ['list_directory', {}, 'recursive'], ['web_fetch', { url: 'http://127.0.0.1:1/' }, 'noCache'],
    ['run', { command: 'true' }, 'shell'], ['git_status', {}, 'includeIgnored'], ['browser_screenshot', {}, 'fullPage'],
    ['process_kill', { id: 'p1' }, 'force'],
  ]) {
    await rejectsWith(assert, call(tool, { ...args, [key]: 'maybe' }, ctx), 'INVALID_ARGUMENT', `${tool}: \`${key}\` must be a boolean (got "maybe")`)
  }
})

test('fractions, negatives and values over the max are refused with the range, in every family', async () => {
  const cwd = workspace({ 'a.txt': 'x\n' })
  const ctx = { cwd }
  const cases = [
    ['grep', { pattern: 'x', maxResults: 1.5 }, 'grep: `maxResults` must be an integer from 1 to 1000000 (got 1.5)'],
    ['grep', { pattern: 'x', maxResults: 0 }, 'grep: `maxResults` must be an integer from 1 to 1000000 (got 0)'],
    ['grep', { pattern: 'x', offset: -1 }, 'grep: `offset` must be a non-negative integer (got -1)'],
    ['web_search', { query: 'x', count: 2.5 }, 'web_search: `count` must be an integer from 1 to 20 (got 2.5)'],
    ['web_search', { query: 'x', count: 21 }, 'web_search: `count` must be an integer from 1 to 20 (got 21)'],
    ['web_fetch', { url: 'http://127.0.0.1:1/', startIndex: -1 }, 'web_fetch: `startIndex` must be a non-negative integer (got -1)'],
    ['read_file', { path: 'a.txt', limit: 1.5 }, 'read_file: `limit` must be an integer (got 1.5)'],
    ['git_log', { maxCount: 100001 }, 'git_log: `maxCount` must be an integer from 1 to 100000 (got 100001)'],
    ['memory_recall', { query: 'x', maxResults: 101 }, 'memory_recall: `maxResults` must be an integer from 1 to 100 (got 101)'],
    ['browser_read_page', { maxChars: -5 }, 'browser_read_page: `maxChars` must be an integer from 1 to 500000 (got -5)'],
    ['process_read', { id: 'p1', cursor: -1 }, 'process_read: `cursor` must be a non-negative integer (got -1)'],
    ['run', { command: 'true', maxOutputBytes: 5 }, 'run: `maxOutputBytes` must be an integer from 256 to 1048576 (got 5)'],
  ]
  for (const [tool, args, message] of cases) {
    await rejectsWith(assert, call(tool, args, ctx), 'INVALID_ARGUMENT', message)
  }
})

test('timeouts: fractions allowed, over the max and negatives refused naming the max, 0 only where it means none', async () => {
  const cwd = workspace({})
  const open = { cwd, network: { allowHosts: ['127.0.0.1'] } }
  const tools3 = [['run', { command: 'true' }, 86400, true], ['web_fetch', { url: 'http://127.0.0.1:1/' }, 300, false], ['browser_navigate', { url: 'http://127.0.0.1:1/' }, 300, false]]
  for (const [tool, args, max, zeroIsNone] of tools3) {
    const range = zeroIsNone ? `from 0 (none) to ${max}` : `above 0 and at most ${max}`
    for (const given of [-1, max + 1, '-0.5', 'soon']) {
      await rejectsWith(assert, call(tool, { ...args, timeout: given }, { cwd }), 'INVALID_ARGUMENT',
        `${tool}: \`timeout\` must be a number of seconds ${range} (got ${JSON.stringify(given)})`)
    }
    if (!zeroIsNone) {
      await rejectsWith(assert, call(tool, { ...args, timeout: 0 }, { cwd }), 'INVALID_ARGUMENT',
        `${tool}: \`timeout\` must be a number of seconds ${range} (got 0)`)
    }
  }
  // run: 0 is no limit; 0.5 (or "0.5") stops a long command after half a second.
  let r = await call('run', { command: 'sleep 0.2', timeout: 0 }, { cwd })
  assert.equal(r.data.status, 'ok')
  const t0 = Date.now()
  r = await call('run', { command: 'sleep 5', timeout: '0.5' }, { cwd })
  assert.deepEqual([r.data.status, r.data.timedOut], ['timeout', true])
  assert.ok(Date.now() - t0 < 4000, `took ${Date.now() - t0} ms`)
  // web_fetch: 0.5 s against a server that never answers.
  const silent = createServer(() => {})
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
  servers.push(silent)
  const t1 = Date.now()
  await rejectsWith(assert, call('web_fetch', { url: `http://127.0.0.1:${silent.address().port}/`, timeout: 0.5, noCache: true }, open), 'TIMEOUT')
  assert.ok(Date.now() - t1 < 4000, `took ${Date.now() - t1} ms`)
  // browser_navigate: 0.5 is accepted (the address is refused next, before any browser starts).
  await rejectsWith(assert, call('browser_navigate', { url: 'http://127.0.0.1:1/', timeout: '0.5' }, { cwd }), 'BLOCKED_ADDRESS')
})

test('unknown keys are refused by the pipeline in every family, with the valid ones', async () => {
  const cwd = workspace({ 'a.txt': 'x' })
  for (const [tool, args] of [
    ['run', { command: 'true' }], ['process_list', {}], ['grep', { pattern: 'x' }], ['glob', { pattern: '*' }],
    ['browser_get_tabs', {}], ['browser_status', {}], ['read_file', { path: 'a.txt' }], ['web_fetch', { url: 'http://127.0.0.1:1/' }],
    ['git_status', {}], ['memory_list', {}], ['detect_project', {}],
  ]) {
    await rejectsWith(assert, call(tool, { ...args, bogusKey: 1 }, { cwd }), 'INVALID_ARGUMENT', /unknown argument `bogusKey`.*valid arguments: /)
  }
  // A nested object refuses its own unknown keys.
  await rejectsWith(assert, call('process_start', { command: 'true', waitFor: { exit: true, bogus: 1 } }, { cwd }), 'INVALID_ARGUMENT',
    /unknown argument `waitFor.bogus`/)
})

test('the schemas say the honest type and bounds, and always list required', () => {
  const prop = (tool, key) => specs.get(tool).jsonSchema.properties[key]
  const strip = ({ description, ...rest }) => rest
  assert.deepEqual(strip(prop('grep', 'maxResults')), { type: 'integer', minimum: 1, maximum: 1000000 })
  assert.deepEqual(strip(prop('grep', 'offset')), { type: 'integer', minimum: 0 })
  assert.deepEqual(strip(prop('glob', 'caseInsensitive')), { type: 'boolean' })
  assert.deepEqual(strip(prop('web_search', 'count')), { type: 'integer', minimum: 1, maximum: 20 })
  assert.deepEqual(strip(prop('run', 'timeout')), { type: 'number', minimum: 0, maximum: 86400 })
  assert.deepEqual(strip(prop('web_fetch', 'timeout')), { type: 'number', exclusiveMinimum: 0, maximum: 300 })
  assert.deepEqual(strip(prop('browser_navigate', 'timeout')), { type: 'number', exclusiveMinimum: 0, maximum: 300 })
  for (const s of specs.values()) {
    if (s.family === 'eddie') continue
    assert.ok(Array.isArray(s.jsonSchema.required), `${s.name}: required is missing`)
  }
})
