#!/usr/bin/env node
// bench/web.mjs [--runs N] [--only REGEX]
//
// HTML → Markdown, side by side in one run: the native web_fetch (dom_smoothie readability +
// htmd, in Rust) against the pure-Node pipeline TypeScript agents use (fetch, then jsdom +
// @mozilla/readability, then turndown). The same pages (the 14 documentation pages of
// __test__/fixtures/web) are served by one local HTTP server; both sides fetch them over HTTP.
// Results are checked: both outputs must contain every "must be there" phrase of the quality
// test. Then the peak memory of one call, per page, each in a fresh child process (maxRSS after
// the call minus maxRSS after a warm-up call on a tiny page), against the page's size.
// Peers: npm install --prefix bench/web   (never root dependencies). Run by hand; never in tests.
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

const here = dirname(fileURLToPath(import.meta.url))
const fixtures = join(here, '..', '__test__', 'fixtures', 'web')
const argv = process.argv.slice(2)
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt }
const runs = Number(opt('--runs', 5))
const only = new RegExp(opt('--only', '.'))
const peers = createRequire(join(here, 'web', 'package.json'))

/** One page through one pipeline in a child process: `{ms, rssDelta}`. */
const CHILD = process.argv[2] === '--child'

async function nodePipeline(url) {
  const { JSDOM } = peers('jsdom')
  const { Readability } = peers('@mozilla/readability')
  const TurndownService = peers('turndown')
  const html = await (await fetch(url)).text()
  const dom = new JSDOM(html, { url })
  const article = new Readability(dom.window.document).parse()
  const md = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }).turndown(article?.content ?? '')
  dom.window.close()
  return md
}

async function nativePipeline(url, tools) {
  const r = await tools.webFetch({ url, noCache: true, maxChars: 1e9 }, { cwd: here, network: { allowHosts: ['127.0.0.1'] } })
  return r.content
}

if (CHILD) {
  const [, , , which, url, tiny] = process.argv
  const tools = which === 'native' ? await import('../index.js') : null
  const run = (u) => (which === 'native' ? nativePipeline(u, tools) : nodePipeline(u))
  await run(tiny)
  await run(tiny)
  globalThis.gc?.()
  const before = process.resourceUsage().maxRSS
  const t = performance.now()
  await run(url)
  const ms = performance.now() - t
  const after = process.resourceUsage().maxRSS
  process.stdout.write(JSON.stringify({ ms, rssDelta: (after - before) * 1024 }))
  process.exit(0)
}

// ---- the parent: server, throughput, checks, memory
const QUALITY_SRC = readFileSync(join(here, '..', '__test__', 'web.test.mjs'), 'utf8')
const quality = new Map()
for (const m of QUALITY_SRC.matchAll(/^ {2}\[("[^"]+"), (\[.*?\]), (\[.*?\])\],?$/gm)) quality.set(JSON.parse(m[1]), JSON.parse(m[2]))
const pages = readdirSync(fixtures).filter((f) => f.endsWith('.html') && only.test(f)).sort()
const tiny = '<html><head><title>t</title></head><body><article><p>tiny page for the warm-up</p></article></body></html>'
const server = createServer((req, res) => {
  const f = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1))
  const body = f === 'tiny.html' ? tiny : readFileSync(join(fixtures, f))
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) })
  res.end(body)
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const base = `http://127.0.0.1:${server.address().port}`
const tools = await import('../index.js')
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]
async function time(fn) {
  await fn()
  const ms = []
  for (let i = 0; i < runs; i++) { const t = performance.now(); await fn(); ms.push(performance.now() - t) }
  return median(ms)
}
// Markdown escapes differ between htmd and turndown; compare on the text.
const plain = (s) => s.replace(/\\([\\`*_{}[\]()#+\-.!<>|])/g, '$1').replace(/[`*]/g, '').replace(/\s+/g, ' ')

const rows = []
let totalNative = 0, totalNode = 0, totalBytes = 0
for (const f of pages) {
  const url = `${base}/${encodeURIComponent(f)}`
  const bytes = readFileSync(join(fixtures, f)).length
  const outNative = await nativePipeline(url, tools)
  const outNode = await nodePipeline(url)
  const keep = quality.get(f) ?? []
  const missNative = keep.filter((k) => !plain(outNative).includes(plain(k)))
  const missNode = keep.filter((k) => !plain(outNode).includes(plain(k)))
  const native = await time(() => nativePipeline(url, tools))
  const node = await time(() => nodePipeline(url))
  totalNative += native; totalNode += node; totalBytes += bytes
  // Asynchronous: the child fetches from this process's server, which a synchronous spawn
  // would block (a deadlock).
  const child = (which) => new Promise((resolve) => {
    execFile(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', which, url, `${base}/tiny.html`], { encoding: 'utf8', timeout: 120_000 }, (_err, stdout, stderr) => {
      try { resolve(JSON.parse(stdout)) } catch { resolve({ ms: NaN, rssDelta: NaN, err: String(stderr).slice(0, 300) }) }
    })
  })
  const memNative = await child('native')
  const memNode = await child('node')
  rows.push({
    page: f, bytes, nativeMs: +native.toFixed(2), nodeMs: +node.toFixed(2), speedup: +(node / native).toFixed(1),
    nativePeakX: +(memNative.rssDelta / bytes).toFixed(2), nodePeakX: +(memNode.rssDelta / bytes).toFixed(2),
    nativeChars: outNative.length, nodeChars: outNode.length,
    checked: missNative.length === 0 && missNode.length === 0 ? 'ok' : `native missing ${JSON.stringify(missNative)}, node missing ${JSON.stringify(missNode)}`,
  })
}
server.close()
for (const r of rows) console.log(JSON.stringify(r))
console.table(rows.map(({ page, bytes, nativeMs, nodeMs, speedup, nativePeakX, nodePeakX, checked }) => ({ page, KB: (bytes / 1024).toFixed(0), nativeMs, nodeMs, speedup, nativePeakX, nodePeakX, checked })))
console.log(`total: native ${totalNative.toFixed(1)} ms, node ${totalNode.toFixed(1)} ms for ${(totalBytes / 1024).toFixed(0)} KB: ${(totalNode / totalNative).toFixed(1)}x; median per-page speedup ${median(rows.map((r) => r.speedup))}x; native peak memory per call: median ${median(rows.map((r) => r.nativePeakX))}x the page, max ${Math.max(...rows.map((r) => r.nativePeakX))}x`)
