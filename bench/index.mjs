// The in-memory index (engine/index) side by side with ripgrep and fd, in one run.
//
//   node bench/index.mjs /tmp/corpus [--runs 5] [--only REGEX]
//
// Native calls run in-process (await around the napi call); rg (`rg -n PATTERN src`) and fd
// (`fdfind -t f -g GLOB`) run as processes with their defaults (they honour .gitignore/.ignore
// and skip hidden files, as our defaults do), alternating run by run with the native calls.
// Every case checks that the native result equals the reference's (grep: every matching
// `path:line`; glob: every path), and says whether the index answered (`data.index.used`).
//
// Cases: the first search of a root (a fresh process: the scan answers; the index is built in
// the background from the second search on), the second search (the scan again, with the build
// starting behind it), repeat searches once the index is ready (a selective literal, a regex, a
// pattern with no trigram), repeats after 20 files changed (each run appends a line to 20
// files first; they are restored at the end; the watcher's per-file updates re-index them, and
// the row checks that no rebuild happened), repeat globs; then the index's build time, time
// to ready (from the second search, which asks for the build, to the first search the index
// answers; and `data.index.readyMs`), size and the process's resident memory growth per GB of
// indexed text. Beside the repeat rows whose matches are in many files, the floor: what reading
// those files and parsing the result's data costs at least (`floor` below).
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync, appendFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const require = createRequire(import.meta.url)
const argv = process.argv.slice(2)
const flag = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
const corpus = argv.find((a, i) => !a.startsWith('--') && !(i > 0 && argv[i - 1].startsWith('--'))) ?? '/tmp/corpus'
const runs = Number(flag('--runs', 5))
const only = new RegExp(flag('--only', '.'))
const FD = spawnSync('sh', ['-c', 'command -v fdfind || command -v fd']).stdout.toString().trim()
// rg and fd search dist/ and build/ folders: so do the native calls (includeDependencies).
const ALL = { maxResults: 1_000_000, maxPerFile: 1_000_000, timeoutMs: 3_600_000, includeDependencies: true }
const LIT = 'TODO'
const RE = '\\b[A-Z][a-zA-Z]+Error\\('
const NOTRI = '[0-9]{12}'
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))[1])

function grepSet(data) {
  const out = []
  for (const f of data.matches) for (const b of f.blocks) for (const l of b.lines) if (l.match) out.push(`${f.path}:${l.line}`)
  return out.sort()
}
function rgSet(stdout) {
  return stdout.split('\n').filter(Boolean).flatMap((l) => {
    const m = /^(.*?):(\d+):/.exec(l)
    return m ? [`${m[1].replace(/^\.\//, '')}:${m[2]}`] : []
  }).sort()
}
const fdSet = (stdout) => stdout.split('\n').filter(Boolean).map((l) => l.replace(/^\.\//, '')).sort()
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])
const ref = (cmd) => {
  const t0 = performance.now()
  const r = spawnSync(cmd[0], cmd.slice(1), { cwd: corpus, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] })
  return [performance.now() - t0, r.stdout.toString()]
}

if (argv.includes('--child-first')) {
  // One search in a fresh process: the first search of its root.
  const native = require(join(here, '..', 'index.js'))
  const t0 = performance.now()
  const r = await native.grep({ pattern: flag('--pattern'), path: 'src', ...ALL }, { cwd: corpus })
  const ms = performance.now() - t0
  // Exit once the pipe has taken it all (a large set is longer than the pipe's buffer).
  await new Promise((res) => process.stdout.write(JSON.stringify({ ms, set: grepSet(r.data), index: r.data.index }) + '\n', res))
  process.exit(0)
}

const native = require(join(here, '..', 'index.js'))
spawnSync('sh', ['-c', `find ${JSON.stringify(corpus)}/src -type f -print0 | xargs -0 cat > /dev/null`])
const rows = []
const row = (id, nt, dt, refName, mine, theirs, index, extra = {}) => {
  const n = median(nt)
  const r = median(dt)
  rows.push({ id, native_ms: +n.toFixed(1), ref: refName, ref_ms: +r.toFixed(1), ratio: +(n / r).toFixed(3), hits: mine.length, same: same(mine, theirs), used: index?.used, state: index?.state, ...extra })
  console.error(JSON.stringify(rows.at(-1)))
}
const grep = (pattern) => native.grep({ pattern, path: 'src', ...ALL }, { cwd: corpus })

// 1. First search (fresh process each run) and the second (the build starts behind it).
if (only.test('first')) {
  const nt = []
  const dt = []
  let mine = []
  let theirs = []
  let index
  for (let i = 0; i < runs; i++) {
    const c = spawnSync(process.execPath, [fileURLToPath(import.meta.url), corpus, '--child-first', '--pattern', LIT], { maxBuffer: 1 << 28 })
    const out = JSON.parse(c.stdout.toString())
    nt.push(out.ms)
    mine = out.set
    index = out.index
    const [ms, stdout] = ref(['rg', '-n', LIT, 'src'])
    dt.push(ms)
    theirs = rgSet(stdout)
  }
  row('first search (scan)', nt, dt, 'rg', mine, theirs, index)
}

// This process's first search of src/ (the scan), then its second: the scan again, and the
// build starts behind it.
await grep(LIT)
const t2 = performance.now()
let r2 = await grep(LIT)
const second = performance.now() - t2
const [rgSecond, rgOut] = ref(['rg', '-n', LIT, 'src'])
row('second search (scan; the build starts behind it)', [second], [rgSecond], 'rg', grepSet(r2.data), rgSet(rgOut), r2.data.index)
const rssBefore = kb('VmRSS')
const waitStart = performance.now()
while (!(r2 = await grep(LIT)).data.index.used) {
  if (performance.now() - waitStart > 1_800_000) throw new Error(`index not ready: ${JSON.stringify(r2.data.index)}`)
  await new Promise((res) => setTimeout(res, 200))
}
// From the second search (which asked for the build) to the first search the index answered.
const readyWallMs = performance.now() - t2
const built = r2.data.index
const rssAfter = kb('VmRSS')
console.error(JSON.stringify({ built, readyWallMs, rssGrowthMiB: (rssAfter - rssBefore) / 1024 }))

async function repeat(id, pattern, rgArgs, before) {
  if (!only.test(id)) return
  const nt = []
  const dt = []
  let result
  let stdout
  for (let i = 0; i <= runs; i++) {
    if (before) before(i)
    let t0 = performance.now()
    result = await grep(pattern)
    if (i > 0) nt.push(performance.now() - t0)
    const [ms, out] = ref(['rg', '-n', ...rgArgs])
    if (i > 0) dt.push(ms)
    stdout = out
  }
  const ix = result.data.index
  // Per-file updates, not a rebuild: the build's own numbers are still the first build's.
  const rebuilt = ix.buildMs !== built.buildMs || ix.readyMs !== built.readyMs
  row(id, nt, dt, 'rg', grepSet(result.data), rgSet(stdout), ix, before ? { updatedFiles: ix.updatedFiles, rebuilt } : {})
  if (!before) floor(id, result, median(dt))
}

// The least a search that reads the files holding a match can cost, beside the row: those
// files read on every core, each byte looked at once (examples/read_floor.rs, built with
// `cargo build --release --example read_floor -p eddie_tools_core`; READ_FLOOR=<path> runs
// another build), plus V8's JSON.parse of the result's data (what crossing into JS costs at
// least). Only the rows whose matches are in many files.
const READ_FLOOR = process.env.READ_FLOOR || ['release', 'debug'].map((p) => join(here, '..', 'target', p, 'examples', 'read_floor')).find((p) => existsSync(p))
const floors = []
function floor(id, result, rgMs) {
  const files = result.data.matches.map((f) => f.path)
  if (!READ_FLOOR || files.length < 100) return
  const r = spawnSync(READ_FLOOR, [corpus, String(runs * 3)], { input: files.join('\n') })
  if (r.status !== 0) return console.error(`read_floor failed: ${r.stderr}`)
  const read = JSON.parse(r.stdout.toString())
  const json = JSON.stringify(result.data)
  const ps = []
  for (let i = 0; i < runs * 3; i++) {
    const t0 = performance.now()
    JSON.parse(json)
    ps.push(performance.now() - t0)
  }
  const total = read.ms.median + median(ps)
  floors.push({ id, files: files.length, mb: read.bytes / 1e6, readMs: read.ms.median, parseMs: median(ps), total, ratio: total / rgMs })
  console.error(JSON.stringify(floors.at(-1)))
}

await repeat('repeat literal TODO', LIT, [LIT, 'src'])
await repeat('repeat regex', RE, [RE, 'src'])
await repeat('no-trigram pattern', NOTRI, [NOTRI, 'src'])

// 20 files changed before each run (a line appended: a new TODO), restored at the end.
{
  const all = (await native.glob({ pattern: '**/*.ts', path: 'src', maxResults: 1_000_000 }, { cwd: corpus })).data.files
  const picked = all.filter((_, i) => i % 97 === 0)
  const originals = new Map()
  let round = 0
  const change = () => {
    round++
    for (let k = 0; k < 20; k++) {
      const p = join(corpus, picked[(round * 20 + k) % picked.length])
      if (!originals.has(p)) originals.set(p, readFileSync(p))
      appendFileSync(p, `\n// TODO bench change ${round}\n`)
    }
  }
  try {
    await repeat('repeat after 20 files changed', LIT, [LIT, 'src'], change)
    await repeat('repeat regex after 20 files changed', RE, [RE, 'src'], change)
  } finally {
    for (const [p, b] of originals) writeFileSync(p, b)
  }
}

async function globCase(id, args, fdArgs) {
  if (!only.test(id)) return
  const nt = []
  const dt = []
  let result
  let stdout
  for (let i = 0; i <= runs + 1; i++) {
    let t0 = performance.now()
    result = await native.glob({ ...args, maxResults: 1_000_000, includeDependencies: true }, { cwd: corpus })
    if (i > 1) nt.push(performance.now() - t0)
    const [ms, out] = ref([FD, '-t', 'f', ...fdArgs])
    if (i > 1) dt.push(ms)
    stdout = out
  }
  row(id, nt, dt, 'fd', result.data.files, fdSet(stdout), result.data.index)
}
await globCase('repeat glob **/*.d.ts in src', { pattern: '**/*.d.ts', path: 'src' }, ['-g', '*.d.ts', 'src'])
await globCase('repeat glob *.{js,mjs,cjs} in src', { pattern: '*.{js,mjs,cjs}', path: 'src' }, ['-g', '*.{js,mjs,cjs}', 'src'])

console.log(`\n| case | native (ms) | reference | ref (ms) | ratio | hits | same as ref | index used (state) |`)
console.log(`| --- | ---: | --- | ---: | ---: | ---: | --- | --- |`)
for (const r of rows) {
  const upd = r.updatedFiles === undefined ? '' : `; ${r.updatedFiles} files updated one by one, ${r.rebuilt ? 'REBUILT' : 'no rebuild'}`
  console.log(`| ${r.id} | ${r.native_ms} | ${r.ref} | ${r.ref_ms} | ${r.ratio}× | ${r.hits} | ${r.same ? 'yes' : 'NO'} | ${r.used ? 'yes' : 'no'} (${r.state}${upd}) |`)
}
for (const f of floors) {
  console.log(`\nFloor of "${f.id}": reading the ${f.files} files that hold a match (${f.mb.toFixed(1)} MB, every core) ${f.readMs.toFixed(1)} ms + JSON.parse of the data ${f.parseMs.toFixed(1)} ms = ${f.total.toFixed(1)} ms, ${f.ratio.toFixed(3)}× rg: no search that reads these files can do better here.`)
}
const gb = built.textBytes / 1e9
console.log(`\nIndex of src/: ${built.files} files, ${(built.textBytes / 1e6).toFixed(1)} MB of text indexed, built in ${built.buildMs} ms (${(built.buildMs / 1000 / gb).toFixed(1)} s per GB); ` +
  `it holds ${(built.bytes / 1e6).toFixed(1)} MB (${((100 * built.bytes) / built.textBytes).toFixed(1)}% of the text, ${(built.bytes / 1e6 / gb).toFixed(0)} MB per GB); ` +
  `process RSS grew ${((rssAfter - rssBefore) / 1024).toFixed(1)} MiB while it was built (${((rssAfter - rssBefore) / 1024 / gb).toFixed(0)} MiB per GB). ` +
  `Ready ${(readyWallMs / 1000).toFixed(1)} s after the second search (data.index.readyMs: ${built.readyMs} ms).`)
