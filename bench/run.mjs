// Spawn-and-collect overhead of the native `run` (runCommand) against Node's
// child_process.execFile, measured side by side (interleaved, same process, same commands).
//
//   node bench/run.mjs [--runs 300] [--concurrency 8] [--heap MB]
//
// --heap MB first fills a buffer of that size, like a large host (an editor's extension
// host): `fork`, which child_process uses, gets slower as the parent grows; posix_spawn,
// which `run` uses to start its shim, does not.
//
// Both sides spawn the same program with the same arguments, inherit the environment, wait
// for the exit and collect stdout/stderr as strings. `run` also puts each command under its
// supervisor (new session, subreaper, parent-death signal), scrubs secret-looking variables
// and keeps a bounded head/tail capture; execFile does none of that.
import { execFile } from 'node:child_process'
import { mkdtempSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { runCommand } from '../index.js'

const argv = process.argv.slice(2)
const opt = (name, def) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? Number(argv[i + 1]) : def }
const RUNS = opt('runs', 300)
const CONC = opt('concurrency', 8)
const HEAP = opt('heap', 0)
const ballast = HEAP > 0 ? Buffer.alloc(HEAP << 20, 1) : null

const execFileP = promisify(execFile)
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'eddie-bench-run-')))
const ctx = { cwd, confirm: () => true, sessionId: 'bench' }

const cases = [
  { name: 'true (no output)', file: '/bin/true', args: [] },
  { name: 'echo (one line)', file: '/bin/echo', args: ['hello'] },
  { name: 'seq 1 10000 (48 KiB)', file: '/usr/bin/seq', args: ['1', '10000'] },
  { name: 'seq 1 150000 (1 MiB)', file: '/usr/bin/seq', args: ['1', '150000'], maxBuffer: 2 << 20 },
  // What an agent gets by default: head and tail (32 KiB) and the counts; execFile still collects all.
  { name: 'seq 1 150000, run keeps its default 32 KiB', file: '/usr/bin/seq', args: ['1', '150000'], maxBuffer: 2 << 20, capped: true },
]

const native = (c) => runCommand({ command: c.file, args: c.args, maxOutputBytes: c.capped ? undefined : 1 << 20, timeout: 0 }, ctx)
const node = (c) => execFileP(c.file, c.args, { cwd, maxBuffer: c.maxBuffer ?? 1 << 20, encoding: 'utf8' })

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length

async function sequential(c) {
  const t = { native: [], node: [] }
  for (let i = 0; i < 20; i++) { await native(c); await node(c) } // warm-up
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always gets the warmer cache.
    const order = i % 2 ? ['native', 'node'] : ['node', 'native']
    for (const side of order) {
      const s = process.hrtime.bigint()
      const r = side === 'native' ? await native(c) : await node(c)
      t[side].push(Number(process.hrtime.bigint() - s) / 1e6)
      if (side === 'native' && r.data.exitCode !== 0) throw new Error(`native ${c.name}: ${r.content}`)
    }
  }
  return t
}

async function concurrent(c) {
  const batch = async (fn) => {
    const s = process.hrtime.bigint()
    let next = 0
    await Promise.all(Array.from({ length: CONC }, async () => { while (next++ < RUNS) await fn(c) }))
    return Number(process.hrtime.bigint() - s) / 1e6 / RUNS
  }
  const r = { native: [], node: [] }
  for (let round = 0; round < 3; round++) {
    r.node.push(await batch(node))
    r.native.push(await batch(native))
  }
  return { native: median(r.native), node: median(r.node) }
}

const rows = []
for (const c of cases) {
  const t = await sequential(c)
  rows.push({ case: `${c.name}, sequential`, native: median(t.native), node: median(t.node), nativeMean: mean(t.native), nodeMean: mean(t.node) })
}
for (const c of [cases[0], cases[2]]) {
  const t = await concurrent(c)
  rows.push({ case: `${c.name}, ${CONC} in flight (per call)`, native: t.native, node: t.node })
}
const rss = Math.round(process.memoryUsage().rss / 1e6)
console.log(`node ${process.version}, rss ${rss} MB${ballast ? ` (${HEAP} MB ballast)` : ''}, ${RUNS} runs per side, interleaved; times in ms (median; mean in brackets)`)
console.log('| case | native run | execFile | ratio |')
console.log('| --- | ---: | ---: | ---: |')
for (const r of rows) {
  const fmt = (m, avg) => (avg === undefined ? m.toFixed(3) : `${m.toFixed(3)} (${avg.toFixed(3)})`)
  console.log(`| ${r.case} | ${fmt(r.native, r.nativeMean)} | ${fmt(r.node, r.nodeMean)} | ${(r.native / r.node).toFixed(2)}x |`)
}
