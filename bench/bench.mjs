#!/usr/bin/env node
// bench/bench.mjs CORPUS [--runs N] [--only REGEX]
//
// Runs the native tools in-process on the corpus from ../shared/bench/make-corpus.sh, checks
// every result against ../shared/bench/expected-summaries.jsonl (the Node baseline's counts
// and digests), and times ripgrep, fd and the Node baseline on the same operations in the
// same run. Prints one JSON line per operation and a table. Run by hand; never in tests.
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import * as tools from '../index.js'

const here = dirname(fileURLToPath(import.meta.url))
const shared = join(here, '..', '..', 'shared', 'bench')
const argv = process.argv.slice(2)
const corpus = argv[0]
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt }
const runs = Number(opt('--runs', 5))
const only = new RegExp(opt('--only', '.'))
if (!corpus || !existsSync(join(corpus, '.corpus-complete'))) {
  console.error('usage: node bench/bench.mjs CORPUS [--runs N] [--only REGEX]  (CORPUS from make-corpus.sh)')
  process.exit(2)
}
const ctx = { cwd: corpus, confirm: () => true }
const sha = (v) => createHash('sha256').update(typeof v === 'string' ? v : JSON.stringify(v)).digest('hex').slice(0, 16)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
async function time(fn, n = runs) {
  await fn() // warm-up
  const ms = []
  for (let i = 0; i < n; i++) { const t = performance.now(); await fn(); ms.push(performance.now() - t) }
  return median(ms)
}
const which = (c) => spawnSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8' }).stdout.trim()
const RG = which('rg'), FD = which('fdfind') || which('fd')
const DEPS = '{node_modules,bower_components,vendor,.venv,venv,.tox,__pycache__,.mypy_cache,dist,build,target,.gradle,.idea,.yarn,.pnpm-store,Pods}'
const proc = (cmd, args) => time(async () => { spawnSync(cmd, args, { cwd: corpus, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 30 }) })

// Native search with the baseline's summary (all results fetched once for setDigest).
async function nativeSearch(args) {
  const pos = []
  const include = [], exclude = []
  for (let i = 1; i < args.length; i++) {
    if (args[i] === '--include') include.push(args[++i])
    else if (args[i] === '--exclude') exclude.push(args[++i])
    else if (args[i] === '--page' || args[i] === '--page-size') i++
    else if (!args[i].startsWith('--')) pos.push(args[i])
  }
  const [root, content, name] = pos
  const a = { root, content: content || undefined, name: name || undefined, include, exclude, includeDependencies: args.includes('--include-deps') }
  const pi = args.indexOf('--page'), si = args.indexOf('--page-size')
  const page = pi >= 0 ? Number(args[pi + 1]) : undefined
  const pageSize = si >= 0 ? Number(args[si + 1]) : undefined
  // The baseline's paths are relative to ROOT (its cwd); ours are relative to the workspace.
  const cwd = join(corpus, root)
  const all = await tools.fileSearch({ ...a, root: '.', pageSize: 1e9 }, { ...ctx, cwd })
  const paged = await tools.fileSearch({ ...a, root: '.', page, pageSize }, { ...ctx, cwd })
  let lines = 0, matches = 0
  for (const r of all.data.results) { lines += r.lineMatches.length; for (const l of r.lineMatches) matches += l.matches.length }
  const summary = {
    totalResults: all.data.totalResults, lineMatches: lines, matches, page: paged.data.page, pageSize: paged.data.pageSize,
    totalPages: paged.data.totalPages, pageDigest: sha(paged.data.results), setDigest: sha(all.data.results.map(sha).sort().join('\n')),
  }
  const ms = await time(() => tools.fileSearch({ ...a, root: '.', page, pageSize }, { ...ctx, cwd }))
  return { summary, ms }
}

async function nativeTree(args) {
  const [, root, depth] = args
  const a = { path: '.', maxDepth: depth === 'inf' ? undefined : Number(depth), includeDependencies: args.includes('--include-deps'), includeHidden: args.includes('--hidden') }
  const me = args.indexOf('--max-entries'), off = args.indexOf('--offset')
  if (me >= 0) a.maxEntries = Number(args[me + 1])
  if (off >= 0) a.offset = Number(args[off + 1])
  const c = { ...ctx, cwd: join(corpus, root) }
  const r = await tools.getFolderTreeStructure(a, c)
  const summary = { ...r.data.pagination, pageDigest: sha(r.data.pageEntries.join('\n')), treeDigest: sha(r.data.entries) }
  return { summary, ms: await time(() => tools.getFolderTreeStructure(a, c)) }
}

async function nativeRead(args) {
  const [, file, page, size] = args
  const a = { path: file, page: Number(page), pageSize: Number(size) }
  const r = await tools.fileRead(a, ctx)
  // Per-call latency: the median over many calls, one at a time.
  const n = 2000, t = performance.now()
  for (let i = 0; i < n; i++) await tools.fileRead(a, ctx)
  return { summary: { bytes: r.data.bytes, totalPages: r.data.totalPages, contentDigest: sha(r.content) }, ms: (performance.now() - t) / n }
}

const expected = readFileSync(join(shared, 'expected-summaries.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
// Ours, without a baseline summary (issue 2 asks for the tree of src/): checked against fd's count.
expected.push({ name: 'tree.src.inf', args: ['tree', 'src', 'inf'], summary: {} })
const rows = []
for (const e of expected) {
  if (!only.test(e.name)) continue
  const op = e.args[0]
  const run = { search: nativeSearch, tree: nativeTree, read: nativeRead }[op]
  if (!run) continue
  const { summary, ms } = await run(e.args)
  const mismatched = Object.entries(summary).filter(([k, v]) => k in e.summary && e.summary[k] !== v).map(([k, v]) => `${k}: ${v} != ${e.summary[k]}`)
  const row = { name: e.name, nativeMs: +ms.toFixed(3), equal: mismatched.length === 0, mismatched }
  if (op === 'search' && RG) {
    const pos = e.args.slice(1).filter((x, i, all) => !x.startsWith('--') && !['--include', '--exclude', '--page', '--page-size'].includes(all[i - 1]))
    const [root, content, name] = pos
    const rgArgs = ['-a', '--hidden', '--no-ignore', '-n', '-j2']
    if (!e.args.includes('--include-deps')) rgArgs.push('-g', `!${DEPS}/`)
    if (content) {
      if (name) rgArgs.push('-g', '*' + name.replace(/\\\./g, '.').replace(/\$$/, ''))
      row.rgMs = +(await proc(RG, [...rgArgs, content, root])).toFixed(1)
    } else if (FD && name) {
      const fdArgs = ['-H', '-I', '-t', 'f']
      if (!e.args.includes('--include-deps')) fdArgs.push('-E', `${DEPS}/`)
      row.fdMs = +(await proc(FD, [...fdArgs, name, root])).toFixed(1)
    }
  }
  if (op === 'tree' && FD) {
    const [, root, depth] = e.args
    const fdArgs = ['-I']
    if (!e.args.includes('--include-deps')) fdArgs.push('-E', `${DEPS}/`)
    if (e.args.includes('--hidden')) fdArgs.push('-H')
    if (depth !== 'inf') fdArgs.push('--max-depth', String(Number(depth) + 1))
    row.fdMs = +(await proc(FD, [...fdArgs, '.', root])).toFixed(1)
    {
      const listed = spawnSync(FD, [...fdArgs, '.', root], { cwd: corpus, encoding: 'utf8', maxBuffer: 1 << 30 }).stdout
      row.fdEntries = listed.split('\n').filter(Boolean).length
      row.equal &&= row.fdEntries === summary.totalEntries
    }
  }
  if (process.env.BENCH_NODE && op !== 'read') {
    const out = execFileSync(process.execPath, [join(shared, 'node-baseline.mjs'), ...e.args, '--repeat', '1'], { cwd: corpus, encoding: 'utf8', maxBuffer: 1 << 30 })
    row.nodeMs = JSON.parse(out).ms
  }
  for (const [k, base] of [['rgMs', 'vsRg'], ['fdMs', 'vsFd']]) if (row[k]) row[base] = +(row.nativeMs / row[k]).toFixed(2)
  if (row.nodeMs) row.nodeSpeedup = +(row.nodeMs / row.nativeMs).toFixed(1)
  console.log(JSON.stringify(row))
  rows.push(row)
}

// Small-call throughput: 20,000 fileRead calls of package.json, 64 in flight.
if (only.test('calls.b64')) {
  const a = { path: 'package.json' }
  const total = 20000, inflight = 64
  const once = async () => {
    let next = 0
    await Promise.all(Array.from({ length: inflight }, async () => { while (next++ < total) await tools.fileRead(a, ctx) }))
  }
  const ms = await time(once, 3)
  const row = { name: 'calls.b64', usPerCall: +((ms * 1000) / total).toFixed(1) }
  console.log(JSON.stringify(row))
  rows.push(row)
}
console.table(rows.map(({ mismatched, ...r }) => r))
if (rows.some((r) => r.equal === false)) process.exitCode = 1
