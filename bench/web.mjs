#!/usr/bin/env node
// bench/web.mjs [--runs N] [--only REGEX]
//
// HTML → Markdown, side by side in one run: the native web_fetch (our readability pass and
// Markdown writer on a compact html5ever tree, in Rust) against the pure-Node pipeline TypeScript agents use (fetch, then jsdom +
// @mozilla/readability, then turndown). The same pages (the 14 documentation pages of
// __test__/fixtures/web) are served by one local HTTP server; both sides fetch them over HTTP.
// Results are checked: both outputs must contain every "must be there" phrase of the quality
// test. Then the peak memory of one call, per page, each in a fresh child process, against the
// page's size (target ≤ 3×): after two warm-up calls on a tiny page and a full GC, the kernel's
// peak-RSS mark is reset (`/proc/self/clear_refs` = 5, Linux), the call runs, and its cost is the
// new peak (VmHWM) minus the RSS before it: native allocations and the JS heap alike, whatever
// was freed before the call ends. Elsewhere maxRSS is the fallback (0 when the call stays under
// the warm-up's peak). `heapX` is the JS heap's growth over the call (garbage not yet collected
// included). The same for browser_read_page (the page loaded first; Chromium's own processes are
// not counted, only what reaching and rendering the tree costs this process), beside puppeteer's
// accessibility snapshot when bench/browser's peers are installed.
// Beside the RSS figure, the heap profile of the same call (`heapPeakX`): the example
// crates/eddie_tools_core/examples/web_peak.rs (build it first: `cargo build --release --example
// web_peak -p eddie_tools_core`; the debug one is used when there is no release one) counts
// every allocation of a process running one web_fetch after two warm-ups, and reports the peak
// of live native bytes during the call as a multiple of the page, with the peak of each phase
// (body, decode, parse tree, readability, Markdown, paging, the result, the
// result's forms for JS). The JS string itself is V8's (nativeHeapX is the JS heap's growth).
// Peers: npm install --prefix bench/web   (never root dependencies). Run by hand; never in tests.
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
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
  const r = await tools.webFetch({ url, noCache: true, maxChars: 1e7 }, { cwd: here, network: { allowHosts: ['127.0.0.1'] }, confirm: () => true })
  return r.content
}

/** A reader of `which` (native, node, read_page, puppeteer): `{run(url), close()}`; read_page
 * and puppeteer load `url` first, so `run` measures the read only. */
async function reader(which) {
  if (which === 'native' || which === 'node') {
    const tools = which === 'native' ? await import('../index.js') : null
    return { run: (u) => (which === 'native' ? nativePipeline(u, tools) : nodePipeline(u)), load: async () => {}, close: async () => {} }
  }
  if (which === 'read_page') {
    const tools = await import('../index.js')
    const ctx = { cwd: mkdtempSync(join(tmpdir(), 'eddie-bench-web-')), network: { allowHosts: ['127.0.0.1'] }, confirm: () => true }
    return {
      load: (u) => tools.browserNavigate({ url: u }, ctx),
      run: async () => (await tools.browserReadPage({ maxChars: 500_000 }, ctx)).content,
      // The call's folder goes with it (each measurement is a fresh process).
      close: () => tools.browserCloseTab({}, ctx).catch(() => {}).finally(() => rmSync(ctx.cwd, { recursive: true, force: true })),
    }
  }
  const puppeteer = createRequire(join(here, 'browser', 'package.json'))('puppeteer-core')
  const browser = await puppeteer.launch({ executablePath: process.env.BENCH_CHROMIUM, headless: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] })
  const [page] = await browser.pages()
  return { load: (u) => page.goto(u, { waitUntil: 'load' }), run: async () => JSON.stringify(await page.accessibility.snapshot()), close: () => browser.close() }
}

if (CHILD) {
  const [, , , which, url, tiny] = process.argv
  const r = await reader(which)
  const status = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024
  for (let i = 0; i < 2; i++) { await r.load(tiny); await r.run(tiny) }
  await r.load(url)
  globalThis.gc?.()
  let method = 'VmHWM reset'
  try { writeFileSync('/proc/self/clear_refs', '5') } catch { method = 'maxRSS' }
  const before = method === 'maxRSS' ? process.resourceUsage().maxRSS * 1024 : status('VmRSS')
  const heapBefore = process.memoryUsage().heapUsed
  const t = performance.now()
  const out = await r.run(url)
  const ms = performance.now() - t
  const heapDelta = process.memoryUsage().heapUsed - heapBefore
  const after = method === 'maxRSS' ? process.resourceUsage().maxRSS * 1024 : status('VmHWM')
  await r.close()
  process.stdout.write(JSON.stringify({ ms, rssDelta: Math.max(0, after - before), heapDelta, method, chars: out.length }))
  process.exit(0)
}

// ---- the parent: server, throughput, checks, memory
const QUALITY_SRC = readFileSync(join(here, '..', '__test__', 'web.test.mjs'), 'utf8')
const quality = new Map()
for (const m of QUALITY_SRC.matchAll(/^ {2}\[("[^"]+"), (\[.*?\]), (\[.*?\])\],?$/gm)) quality.set(JSON.parse(m[1]), JSON.parse(m[2]))
const pages = readdirSync(fixtures).filter((f) => f.endsWith('.html') && only.test(f)).sort()
// A large page (Node's path.html, its body 24 times: about 1.4 MB), so the per-call multiple is
// seen where the page, not a call's fixed cost, dominates.
const BIG = 'big-path-x24.html'
const bigHtml = (() => {
  const src = readFileSync(join(fixtures, 'path.html'), 'utf8')
  const at = src.indexOf('<body')
  const body = src.slice(src.indexOf('>', at) + 1, src.lastIndexOf('</body>'))
  return `${src.slice(0, src.indexOf('>', at) + 1)}${body.repeat(24)}</body></html>`
})()
if (only.test(BIG)) pages.push(BIG)
const pageBody = (f) => (f === BIG ? Buffer.from(bigHtml) : readFileSync(join(fixtures, f)))
const tiny = '<html><head><title>t</title></head><body><article><p>tiny page for the warm-up</p></article></body></html>'
const server = createServer((req, res) => {
  const f = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1))
  // Anything else a browser asks for (its favicon) is not there.
  if (f !== 'tiny.html' && f !== BIG && !existsSync(join(fixtures, f))) { res.writeHead(404).end(); return }
  const body = f === 'tiny.html' ? tiny : pageBody(f)
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) })
  res.end(body)
})
// Clients close idle connections first (undici after 4 s): no reset of a socket being reused.
server.keepAliveTimeout = 30_000
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
// Markdown escapes differ between our writer and turndown; compare on the text.
const plain = (s) => s.replace(/\\([\\`*_{}[\]()#+\-.!<>|])/g, '$1').replace(/[`*]/g, '').replace(/\s+/g, ' ')

// One measurement in a fresh child process (asynchronous: the child fetches from this
// process's server, which a synchronous spawn would block: a deadlock).
const child = (which, url) => new Promise((resolve) => {
  execFile(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', which, url, `${base}/tiny.html`], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, BENCH_CHROMIUM: chromium ?? '' } }, (_err, stdout, stderr) => {
    try { resolve(JSON.parse(stdout)) } catch { resolve({ ms: NaN, rssDelta: NaN, heapDelta: NaN, err: String(stderr).slice(0, 300) }) }
  })
})
const chromium = (await tools.browserStatus({}, { cwd: here })).data.binary
// WEB_PEAK=<path> runs another build of the example (e.g. one built from an older commit).
const PROFILER = process.env.WEB_PEAK || ['release', 'debug'].map((p) => join(here, '..', 'target', p, 'examples', 'web_peak')).find((p) => existsSync(p))
/** The heap profile of one web_fetch of `url` (examples/web_peak.rs): `{bytes, peak, phases}`. */
const profile = (url) => new Promise((resolve) => {
  if (!PROFILER) { resolve(null); return }
  execFile(PROFILER, [url, `${base}/tiny.html`], { encoding: 'utf8', timeout: 120_000 }, (_err, stdout, stderr) => {
    try { resolve(JSON.parse(stdout)) } catch { resolve({ err: String(stderr).slice(0, 300) }) }
  })
})
const PUPPETEER = chromium && existsSync(join(here, 'browser', 'node_modules', 'puppeteer-core'))
let method = ''

const rows = []
let totalNative = 0, totalNode = 0, totalBytes = 0
for (const f of pages) {
  const url = `${base}/${encodeURIComponent(f)}`
  const bytes = pageBody(f).length
  const outNative = await nativePipeline(url, tools)
  const outNode = await nodePipeline(url)
  const keep = quality.get(f) ?? []
  const missNative = keep.filter((k) => !plain(outNative).includes(plain(k)))
  const missNode = keep.filter((k) => !plain(outNode).includes(plain(k)))
  const native = await time(() => nativePipeline(url, tools))
  const node = await time(() => nodePipeline(url))
  totalNative += native; totalNode += node; totalBytes += bytes
  const memNative = await child('native', url)
  const memNode = await child('node', url)
  const memRead = await child('read_page', url)
  const memPuppeteer = PUPPETEER ? await child('puppeteer', url) : null
  const heap = await profile(url)
  const x = (m) => (m ? +(m.rssDelta / bytes).toFixed(2) : null)
  if (memNative.method) method = memNative.method
  rows.push({
    page: f, bytes, nativeMs: +native.toFixed(2), nodeMs: +node.toFixed(2), speedup: +(node / native).toFixed(1),
    nativePeakX: x(memNative), heapPeakX: heap?.peak != null ? +(heap.peak / bytes).toFixed(2) : null,
    phasesX: heap?.phases ? Object.fromEntries(heap.phases.map((p) => [p.phase, [+(p.peak / bytes).toFixed(2), +(p.held / bytes).toFixed(2)]])) : null,
    nodePeakX: x(memNode), readPagePeakX: x(memRead), puppeteerSnapshotPeakX: x(memPuppeteer),
    nativeHeapX: +(memNative.heapDelta / bytes).toFixed(2), readPageHeapX: +(memRead.heapDelta / bytes).toFixed(2),
    errors: [memNative, memNode, memRead, memPuppeteer, heap].filter((m) => m?.err).map((m) => m.err),
    nativeChars: outNative.length, nodeChars: outNode.length,
    checked: missNative.length === 0 && missNode.length === 0 ? 'ok' : `native missing ${JSON.stringify(missNative)}, node missing ${JSON.stringify(missNode)}`,
  })
}
server.close()
for (const r of rows) console.log(JSON.stringify(r))
console.table(rows.map(({ page, bytes, nativeMs, nodeMs, speedup, nativePeakX, heapPeakX, nodePeakX, readPagePeakX, puppeteerSnapshotPeakX, checked }) => ({ page, KB: (bytes / 1024).toFixed(0), nativeMs, nodeMs, speedup, nativePeakX, heapPeakX, nodePeakX, readPagePeakX, puppeteerSnapshotPeakX, checked })))
if (PROFILER) {
  // Each phase's peak of live native bytes (above the call's start) as a multiple of the page,
  // and what it still held at its end: [peak, held].
  console.log(`heap profile by phase (${PROFILER.includes('release') ? 'release' : 'debug'} web_peak), [peak, held] × the page:`)
  console.table(Object.fromEntries(rows.filter((r) => r.phasesX).map((r) => [r.page, Object.fromEntries(Object.entries(r.phasesX).map(([k, v]) => [k, `${v[0]} / ${v[1]}`]))])))
}
console.log(`total: native ${totalNative.toFixed(1)} ms, node ${totalNode.toFixed(1)} ms for ${(totalBytes / 1024).toFixed(0)} KB: ${(totalNode / totalNative).toFixed(1)}x; median per-page speedup ${median(rows.map((r) => r.speedup))}x; native peak memory per call: median ${median(rows.map((r) => r.nativePeakX))}x the page, max ${Math.max(...rows.map((r) => r.nativePeakX))}x`)
const peak = (k) => `median ${median(rows.map((r) => r[k]))}x, max ${Math.max(...rows.map((r) => r[k]))}x`
console.log(`peak memory per call, ${method} (target ≤ 3x the page): web_fetch ${peak('nativePeakX')}${PROFILER ? `, live native heap ${peak('heapPeakX')}` : ''}; browser_read_page ${peak('readPagePeakX')}; jsdom pipeline ${peak('nodePeakX')}${PUPPETEER ? `; puppeteer snapshot ${peak('puppeteerSnapshotPeakX')}` : ''}`)
