#!/usr/bin/env node
// bench/edit.mjs [--runs N]
//
// The files family against a plain Node read-modify-write, side by side in one run (median of
// --runs after one warm-up): one edit in a 10 MB file (UTF-8 and Latin-1), a 100-line page from
// the middle of it, and one 50-file unified diff. "node" = readFileSync + indexOf/replace +
// writeFileSync (not atomic, not durable); "node atomic" adds what the native tools do: a temp
// file, fsync and rename per file. Run by hand; never in tests.
import { closeSync, fsyncSync, utimesSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import * as tools from '../index.js'

const argv = process.argv.slice(2)
const runs = Number(argv[argv.indexOf('--runs') + 1] || 7)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
async function time(fn) {
  await fn(0)
  const ms = []
  for (let i = 1; i <= runs; i++) { const t = performance.now(); await fn(i); ms.push(performance.now() - t) }
  return median(ms)
}
const ws = mkdtempSync(join(tmpdir(), 'eddie-bench-edit-'))
const ctx = { cwd: ws, confirm: () => true }

function atomicWrite(path, data) {
  const tmp = `${path}.tmp-${process.pid}`
  const fd = openSync(tmp, 'w')
  writeSync(fd, data)
  fsyncSync(fd)
  closeSync(fd)
  renameSync(tmp, path)
}
function nodeEdit(path, oldS, newS, enc, atomic) {
  const text = readFileSync(path, enc)
  const at = text.indexOf(oldS)
  if (at < 0 || text.indexOf(oldS, at + 1) >= 0) throw new Error('not unique')
  const out = text.slice(0, at) + newS + text.slice(at + oldS.length)
  if (atomic) atomicWrite(path, Buffer.from(out, enc))
  else writeFileSync(path, out, enc)
}

// A 10 MB file: 200,000 lines of ~52 bytes, one unique marker in the middle.
const lines = []
for (let i = 0; i < 200_000; i++) lines.push(i === 100_000 ? 'const MARKER = 0; // the line we edit.................' : `line ${String(i).padStart(6, '0')}: lorem ipsum dolor sit amet, consectetur`)
const big = lines.join('\n') + '\n'
writeFileSync(join(ws, 'big.txt'), big)
writeFileSync(join(ws, 'big-node.txt'), big)
writeFileSync(join(ws, 'big-latin1.txt'), Buffer.from(big.replace('the line', 'la ligne éditée'), 'latin1'))
writeFileSync(join(ws, 'big-latin1-node.txt'), Buffer.from(big.replace('the line', 'la ligne éditée'), 'latin1'))
const mb = (Buffer.byteLength(big) / 1e6).toFixed(1)
const flip = (i) => (i % 2 ? ['MARKER = 1;', 'MARKER = 0;'] : ['MARKER = 0;', 'MARKER = 1;'])

const rows = []
const row = (name, native, refs) => {
  rows.push({ name, native, refs })
  console.log(JSON.stringify({ name, nativeMs: +native.toFixed(2), ...Object.fromEntries(Object.entries(refs).map(([k, v]) => [`${k}Ms`, +v.toFixed(2)])) }))
}

{
  const native = await time(async (i) => { const [o, n] = flip(i); await tools.editFile({ path: 'big.txt', oldString: o, newString: n }, ctx) })
  const node = await time(async (i) => { const [o, n] = flip(i); nodeEdit(join(ws, 'big-node.txt'), o, n, 'utf8', false) })
  const nodeAtomic = await time(async (i) => { const [o, n] = flip(i); nodeEdit(join(ws, 'big-node.txt'), o, n, 'utf8', true) })
  if (readFileSync(join(ws, 'big.txt'), 'utf8') !== readFileSync(join(ws, 'big-node.txt'), 'utf8')) throw new Error('results differ')
  row(`edit_file, one edit in a ${mb} MB UTF-8 file`, native, { node, 'node atomic': nodeAtomic })
}
{
  const native = await time(async (i) => { const [o, n] = flip(i); await tools.editFile({ path: 'big-latin1.txt', oldString: o, newString: n }, ctx) })
  const node = await time(async (i) => { const [o, n] = flip(i); nodeEdit(join(ws, 'big-latin1-node.txt'), o, n, 'latin1', false) })
  if (Buffer.compare(readFileSync(join(ws, 'big-latin1.txt')), readFileSync(join(ws, 'big-latin1-node.txt'))) !== 0) throw new Error('results differ')
  row(`edit_file, one edit in a ${mb} MB Latin-1 file`, native, { node })
}
{
  await tools.readFile({ path: 'big.txt' }, ctx) // builds the line index once
  const native = await time(async () => { await tools.readFile({ path: 'big.txt', offset: 150_000, limit: 100 }, ctx) })
  const node = await time(async () => { readFileSync(join(ws, 'big.txt'), 'utf8').split('\n').slice(150_000, 150_100).map((l, k) => `${150_001 + k}\t${l}`).join('\n') })
  row('read_file, 100 lines at line 150,000 of the 10 MB file (indexed)', native, { node })
  // A new mtime is a new file version: the first read rebuilds the index (one pass).
  const first = await time(async (i) => {
    utimesSync(join(ws, 'big.txt'), new Date(), new Date(Date.now() + i * 1000))
    await tools.readFile({ path: 'big.txt', offset: 150_000, limit: 100 }, ctx)
  })
  row('read_file, same page, first read of a new file version (builds the index)', first, { node })
}
{
  // 50 files of 400 lines; one hunk per file, applied forward then backward.
  const body = (f) => Array.from({ length: 400 }, (_, i) => `file ${f} line ${i}: some code here();`).join('\n') + '\n'
  for (let f = 0; f < 50; f++) { writeFileSync(join(ws, `p${f}.txt`), body(f)); writeFileSync(join(ws, `n${f}.txt`), body(f)) }
  const hunk = (f, from, to) => `--- a/p${f}.txt\n+++ b/p${f}.txt\n@@ -199,3 +199,3 @@\n file ${f} line 198: some code here();\n-${from}\n+${to}\n file ${f} line 200: some code here();\n`
  const a = (f) => `file ${f} line 199: some code here();`
  const b = (f) => `file ${f} line 199: changed();`
  const fwd = Array.from({ length: 50 }, (_, f) => hunk(f, a(f), b(f))).join('')
  const back = Array.from({ length: 50 }, (_, f) => hunk(f, b(f), a(f))).join('')
  const native = await time(async (i) => { await tools.applyUnifiedDiff({ diff: i % 2 ? back : fwd }, ctx) })
  const nodePatch = (i, atomic) => {
    for (let f = 0; f < 50; f++) {
      const [o, n] = i % 2 ? [b(f), a(f)] : [a(f), b(f)]
      const ctxBefore = `file ${f} line 198: some code here();\n`, ctxAfter = `\nfile ${f} line 200: some code here();`
      nodeEdit(join(ws, `n${f}.txt`), ctxBefore + o + ctxAfter, ctxBefore + n + ctxAfter, 'utf8', atomic)
    }
  }
  const node = await time(async (i) => nodePatch(i, false))
  const nodeAtomic = await time(async (i) => nodePatch(i, true))
  for (let f = 0; f < 50; f++) if (readFileSync(join(ws, `p${f}.txt`), 'utf8') !== readFileSync(join(ws, `n${f}.txt`), 'utf8')) throw new Error(`p${f} differs`)
  row('apply_unified_diff, 50 files x 1 hunk (all-or-nothing)', native, { node, 'node atomic': nodeAtomic })
}

console.log(`\n| operation | native | node | node atomic |\n| --- | ---: | ---: | ---: |`)
for (const r of rows) {
  const f = (v) => (v === undefined ? '' : `${v.toFixed(2)} ms`)
  const ratio = (v) => (v === undefined ? '' : ` (${(r.native / v).toFixed(2)}×)`)
  console.log(`| ${r.name} | ${f(r.native)} | ${f(r.refs.node)}${ratio(r.refs.node)} | ${f(r.refs['node atomic'])}${ratio(r.refs['node atomic'])} |`)
}
console.log(`\nruns: ${runs} (median), ratio = native / reference`)
rmSync(ws, { recursive: true, force: true })
