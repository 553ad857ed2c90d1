// grep and glob of the `code` family side by side with ripgrep and fd, in one run.
//
//   node bench/grep.mjs /tmp/corpus [--runs 5] [--only REGEX]
//
// Native calls run in-process (await around the napi call); rg and fd run as processes with their
// defaults (they honour .gitignore/.ignore and skip hidden files, as our defaults do), on the same
// cwd. The two alternate run by run (1 warm-up each, then --runs each); medians and minima.
// Correctness: grep's matches (path:line of every matching line) must equal `rg -n`'s; glob's
// paths must equal `fd -t f -g`'s. Peak memory: each case runs once more in a fresh node process,
// which reports its peak RSS (VmHWM) minus its RSS when idle (before loading the addon), once
// with every result returned and once with the default caps (one page).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
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
const ALL = { maxResults: 1_000_000, maxPerFile: 1_000_000, timeoutMs: 3_600_000 }

// [id, native tool, args, reference argv, kind]
const CASES = [
  ['grep.lit.src', 'grep', { pattern: 'TODO', path: 'src' }, ['rg', '-n', 'TODO', 'src']],
  ['grep.re.src', 'grep', { pattern: '\\b[A-Z][a-zA-Z]+Error\\(', path: 'src' }, ['rg', '-n', '\\b[A-Z][a-zA-Z]+Error\\(', 'src']],
  ['grep.han.src', 'grep', { pattern: '\\p{Han}+', path: 'src' }, ['rg', '-n', '\\p{Han}+', 'src']],
  ['grep.none.src', 'grep', { pattern: 'zq9xj_never', path: 'src' }, ['rg', '-n', 'zq9xj_never', 'src']],
  ['grep.icase.src', 'grep', { pattern: 'todo', caseInsensitive: true, path: 'src' }, ['rg', '-n', '-i', 'todo', 'src']],
  ['grep.include.src', 'grep', { pattern: 'TODO', include: '*.{ts,tsx}', path: 'src' }, ['rg', '-n', '-g', '*.{ts,tsx}', 'TODO', 'src']],
  ['grep.context.src', 'grep', { pattern: 'TODO', context: 2, path: 'src' }, ['rg', '-n', '-C2', 'TODO', 'src']],
  ['grep.multiline.src', 'grep', { pattern: 'if \\(.*\\n\\s*return', multiline: true, path: 'src' }, ['rg', '-U', '-n', 'if \\(.*\\n\\s*return', 'src']],
  ['grep.lit.root', 'grep', { pattern: 'TODO' }, ['rg', '-n', 'TODO', '.']],
  ['grep.marker.big', 'grep', { pattern: 'UTF8-MARKER', path: 'data/big-utf8.txt' }, ['rg', '-n', 'UTF8-MARKER', 'data/big-utf8.txt']],
  ['glob.dts.src', 'glob', { pattern: '**/*.d.ts', path: 'src' }, [FD, '-t', 'f', '-g', '*.d.ts', 'src']],
  ['glob.dts.root', 'glob', { pattern: '*.d.ts' }, [FD, '-t', 'f', '-g', '*.d.ts']],
  ['glob.all.root', 'glob', { pattern: '**' }, [FD, '-t', 'f']],
  ['glob.braces.root', 'glob', { pattern: '*.{js,mjs,cjs}' }, [FD, '-t', 'f', '-g', '*.{js,mjs,cjs}']],
  // No reference tool: timings only.
  ['symbols.list.lodash', 'listSymbols', { path: 'src/lodash/lodash.js' }, null],
  ['symbols.find.src', 'findSymbol', { symbol: 'createElement', path: 'src' }, null],
  ['symbols.refs.lodash', 'findReferences', { symbol: 'debounce', path: 'src/lodash' }, null],
  ['codebase.src', 'searchCodebase', { query: 'debounce throttle', path: 'src' }, null],
  ['project_map.root', 'projectMap', {}, null],
]

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
const fullArgs = (tool, args) => (tool === 'grep' ? { ...args, ...ALL } : tool === 'glob' ? { ...args, maxResults: 1_000_000 } : args)

// What the native result says, as a sorted list of strings comparable with the reference's.
function nativeSet(tool, data) {
  if (tool === 'glob') return data.files
  const out = []
  for (const f of data.matches) for (const b of f.blocks) for (const l of b.lines) if (l.match) out.push(`${f.path}:${l.line}`)
  return out
}
function refSet(tool, stdout, single) {
  const lines = stdout.split('\n').filter(Boolean)
  if (tool === 'glob') return lines.map((l) => l.replace(/^\.\//, ''))
  return lines.flatMap((l) => {
    if (single) { const m = /^(\d+):/.exec(l); return m ? [`${single}:${m[1]}`] : [] }
    const m = /^(.*?):(\d+):/.exec(l)
    return m ? [`${m[1].replace(/^\.\//, '')}:${m[2]}`] : []
  })
}

if (argv.includes('--child-memory')) {
  // One case in a fresh process: its peak RSS (VmHWM) over the RSS of the idle process.
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))[1])
  const idle = kb('VmRSS')
  const native = require(join(here, '..', 'index.js'))
  const [, tool, args] = CASES.find(([id]) => id === flag('--case'))
  await native[tool](argv.includes('--paged') ? args : fullArgs(tool, args), { cwd: corpus })
  console.log(JSON.stringify({ idleMiB: idle / 1024, aboveIdleMiB: (kb('VmHWM') - idle) / 1024 }))
  process.exit(0)
}

const native = require(join(here, '..', 'index.js'))
spawnSync('sh', ['-c', `find ${JSON.stringify(corpus)} -type f -print0 | xargs -0 cat > /dev/null`])
const rows = []
for (const [id, tool, args, ref] of CASES) {
  if (!only.test(id)) continue
  const a = fullArgs(tool, args)
  const ctx = { cwd: corpus }
  let result
  let stdout = ''
  const nt = []
  const dt = []
  // Interleaved (native, reference, native, ...) so that load from other processes hits both alike.
  for (let i = 0; i <= runs; i++) {
    let t0 = performance.now()
    result = await native[tool](a, ctx)
    if (i > 0) nt.push(performance.now() - t0)
    if (!ref) continue
    t0 = performance.now()
    const r = spawnSync(ref[0], ref.slice(1), { cwd: corpus, maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] })
    if (i > 0) dt.push(performance.now() - t0)
    stdout = r.stdout.toString()
  }
  // Default-caps native call (what an agent gets: one page).
  const t0 = performance.now()
  await native[tool](args, ctx)
  const paged = performance.now() - t0
  const n = median(nt)
  if (!ref) {
    rows.push({ id, native_ms: +n.toFixed(1), ref: '—', ref_ms: '—', ratio: '—', minRatio: '—', page_ms: +paged.toFixed(1), hits: '', same: null })
    console.error(JSON.stringify(rows.at(-1)))
    continue
  }
  const single = id === 'grep.marker.big' ? args.path : null
  const mine = nativeSet(tool, result.data).sort()
  const theirs = refSet(tool, stdout, single).sort()
  const same = mine.length === theirs.length && mine.every((x, i) => x === theirs[i])
  const r = median(dt)
  rows.push({ id, native_ms: +n.toFixed(1), ref: ref[0].replace(/.*\//, ''), ref_ms: +r.toFixed(1), ratio: +(n / r).toFixed(2), minRatio: +(Math.min(...nt) / Math.min(...dt)).toFixed(2), page_ms: +paged.toFixed(1), hits: mine.length, refHits: theirs.length, same })
  console.error(JSON.stringify(rows.at(-1)))
}

const memory = {}
const pagedMemory = {}
for (const r of rows) {
  const run = (...extra) => spawnSync(process.execPath, [fileURLToPath(import.meta.url), corpus, '--child-memory', '--case', r.id, ...extra], { maxBuffer: 1 << 26 })
  memory[r.id] = JSON.parse(run().stdout.toString() || '{}')
  pagedMemory[r.id] = JSON.parse(run('--paged').stdout.toString() || '{}')
}
const [worst, worstMem] = Object.entries(memory).sort((a, b) => b[1].aboveIdleMiB - a[1].aboveIdleMiB)[0] ?? ['', {}]

console.log(`\n| case | native (ms) | reference | ref (ms) | ratio (medians) | ratio (minima) | one page (ms) | hits | same as ref | peak RSS above idle, all results / one page (MiB) |`)
console.log(`| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |`)
for (const r of rows) console.log(`| ${r.id} | ${r.native_ms} | ${r.ref} | ${r.ref_ms} | ${r.ratio}${r.ref === '—' ? '' : '×'} | ${r.minRatio}${r.ref === '—' ? '' : '×'} | ${r.page_ms} | ${r.hits} | ${r.same === null ? '—' : r.same ? 'yes' : `NO (ref ${r.refHits})`} | ${memory[r.id]?.aboveIdleMiB?.toFixed(1)} / ${pagedMemory[r.id]?.aboveIdleMiB?.toFixed(1)} |`)
const pagedWorst = Math.max(...Object.values(pagedMemory).map((m) => m.aboveIdleMiB ?? 0))
console.log(`\nWorst peak RSS above an idle node process (${worstMem.idleMiB?.toFixed(1)} MiB): ${worstMem.aboveIdleMiB?.toFixed(1)} MiB with every result returned (${worst}); ${pagedWorst.toFixed(1)} MiB with the default caps.`)
