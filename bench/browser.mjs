#!/usr/bin/env node
// bench/browser.mjs [--runs N]
//
// The browser family side by side with puppeteer-core driving the same Chromium binary, in one
// run, against pages served by one local HTTP server:
//  1. cold: launch → navigate → first viewport screenshot, each run in a fresh Node child process
//     (nothing running before), for both drivers;
//  2. warm browser_read_page on a page of about 2,000 accessibility nodes vs puppeteer's
//     page.accessibility.snapshot() (both must name every one of the page's 400 buttons);
//  3. warm viewport screenshot to a PNG file (both must have the same dimensions);
//  4. warm navigate (load) of the screenshot page: the native browser's connections go through
//     its in-process proxy (engine/net/proxy.rs), puppeteer's straight to the server.
// Medians of --runs (default 7) after one warm-up. Targets (issue 14): cold ≤ 1.5 s and no slower
// than puppeteer-core; warm read_page ≤ 50 ms; warm screenshot ≤ 150 ms.
// Peer: npm install --prefix bench/browser   (never a root dependency). Run by hand; never in tests.
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'

/** A scratch folder, removed when the bench exits (the generated repositories are large). */
const scratchDirs = []
process.on('exit', () => { for (const d of scratchDirs) rmSync(d, { recursive: true, force: true }) })
function scratch(prefix) { const d = mkdtempSync(join(tmpdir(), prefix)); scratchDirs.push(d); return d }

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..')
const argv = process.argv.slice(2)
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt }
const runs = Number(opt('--runs', 7))
const peers = createRequire(join(here, 'browser', 'package.json'))
const tools = createRequire(import.meta.url)(join(root, 'index.js'))

const BUTTONS = 400
const BIG = `<!doctype html><html><head><title>Big</title></head><body><h1>Inventory</h1><ul>${
  Array.from({ length: BUTTONS }, (_, i) => `<li><a href="#i${i}">Item ${i}</a> <span>costs ${i} coins</span> <button>Button ${i}</button></li>`).join('')
}</ul></body></html>`
const SHOT = `<!doctype html><html><head><title>Shot</title><style>body{margin:0;font:16px sans-serif} header{height:120px;background:#234;color:#fff;padding:20px} main{padding:20px}</style></head>
<body><header><h1>Dashboard</h1></header><main>${'<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>'.repeat(20)}</main></body></html>`

const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
  res.end(req.url.startsWith('/big') ? BIG : SHOT)
})
await new Promise((r) => server.listen(0, '127.0.0.1', r))
const base = `http://127.0.0.1:${server.address().port}`
const net = { allowHosts: ['127.0.0.1'] }

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const ws = scratch('eddie-bench-browser-')
const ctx = { cwd: ws, network: net, confirm: () => true }
const binary = (await tools.browserStatus({}, ctx)).data.binary
if (!binary) throw new Error('no Chromium found')
const ARGS = ['--no-first-run', '--no-default-browser-check', '--disable-background-networking', '--disable-component-update',
  '--disable-extensions', '--disable-sync', '--disable-dev-shm-usage', '--hide-scrollbars', '--mute-audio', '--window-size=1280,800',
  ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])]

// --- 1. cold, each in a fresh child -------------------------------------------------------------
const NATIVE_COLD = `
  const t0 = performance.now()
  const t = require(${JSON.stringify(join(root, 'index.js'))})
  const ctx = { cwd: ${JSON.stringify(ws)}, network: ${JSON.stringify(net)}, confirm: () => true }
  ;(async () => {
    await t.browserNavigate({ url: ${JSON.stringify(`${base}/shot`)} }, ctx)
    const s = await t.browserScreenshot({ path: 'cold-native.png' }, ctx)
    console.log(JSON.stringify({ ms: performance.now() - t0, w: s.data.width, h: s.data.height }))
    process.exit(0)
  })()`
const PUPPETEER_COLD = `
  const t0 = performance.now()
  const puppeteer = require(${JSON.stringify(peers.resolve('puppeteer-core'))})
  ;(async () => {
    const browser = await puppeteer.launch({ executablePath: ${JSON.stringify(binary)}, headless: true, args: ${JSON.stringify(ARGS)}, defaultViewport: { width: 1280, height: 800 } })
    const [page] = await browser.pages()
    await page.goto(${JSON.stringify(`${base}/shot`)}, { waitUntil: 'load' })
    await page.screenshot({ path: ${JSON.stringify(join(ws, 'cold-puppeteer.png'))} })
    console.log(JSON.stringify({ ms: performance.now() - t0, w: 1280, h: 800 }))
    await browser.close()
    process.exit(0)
  })()`
const child = (script) => new Promise((resolve, reject) => {
  execFile(process.execPath, ['-e', script], { timeout: 60_000 }, (err, out) => (err ? reject(err) : resolve(JSON.parse(out.trim().split('\n').at(-1)))))
})
const cold = { native: [], puppeteer: [] }
for (let i = 0; i <= runs; i++) {
  // Alternate the order so neither side always runs on a warmer page cache.
  const order = i % 2 ? ['puppeteer', 'native'] : ['native', 'puppeteer']
  for (const who of order) {
    const r = await child(who === 'native' ? NATIVE_COLD : PUPPETEER_COLD)
    if (i > 0) cold[who].push(r.ms)
  }
}

// --- 2 and 3. warm, in this process -------------------------------------------------------------
const puppeteer = peers('puppeteer-core')
const browser = await puppeteer.launch({ executablePath: binary, headless: true, args: ARGS, defaultViewport: { width: 1280, height: 800 } })
const [page] = await browser.pages()

await tools.browserNavigate({ url: `${base}/big` }, ctx)
await page.goto(`${base}/big`, { waitUntil: 'load' })
const names = (text) => Array.from({ length: BUTTONS }, (_, i) => `Button ${i}`).every((n) => text.includes(`"${n}"`))
const readNative = []; const readPuppeteer = []
let nodesNative = 0; let nodesPuppeteer = 0
for (let i = 0; i <= runs; i++) {
  let t = performance.now()
  const r = await tools.browserReadPage({ maxChars: 500_000 }, ctx)
  if (i > 0) readNative.push(performance.now() - t)
  if (!names(r.content)) throw new Error('native read_page misses buttons')
  nodesNative = r.data.totalNodes
  t = performance.now()
  const snap = await page.accessibility.snapshot()
  if (i > 0) readPuppeteer.push(performance.now() - t)
  const count = (n) => 1 + (n.children ?? []).reduce((a, c) => a + count(c), 0)
  nodesPuppeteer = count(snap)
  if (!names(JSON.stringify(snap).replace(/"name":"/g, '"'))) throw new Error('puppeteer snapshot misses buttons')
}
const full = (await tools.browserNetwork({ all: true }, ctx)) && (await tools.browserReadPage({ maxChars: 500_000 }, ctx))

await tools.browserNavigate({ url: `${base}/shot` }, ctx)
await page.goto(`${base}/shot`, { waitUntil: 'load' })
const shotNative = []; const shotPuppeteer = []
for (let i = 0; i <= runs; i++) {
  let t = performance.now()
  const s = await tools.browserScreenshot({ path: 'warm-native.png' }, ctx)
  if (i > 0) shotNative.push(performance.now() - t)
  t = performance.now()
  await page.screenshot({ path: join(ws, 'warm-puppeteer.png') })
  if (i > 0) shotPuppeteer.push(performance.now() - t)
  const p = readFileSync(join(ws, 'warm-puppeteer.png'))
  if (p.readUInt32BE(16) !== s.data.width || p.readUInt32BE(20) !== s.data.height) throw new Error('screenshot sizes differ')
}
const navNative = []; const navPuppeteer = []
for (let i = 0; i <= runs; i++) {
  let t = performance.now()
  const n = await tools.browserNavigate({ url: `${base}/shot?n=${i}` }, ctx)
  if (i > 0) navNative.push(performance.now() - t)
  if (n.data.title !== 'Shot') throw new Error('native navigate went wrong')
  t = performance.now()
  await page.goto(`${base}/shot?n=${i}`, { waitUntil: 'load' })
  if (i > 0) navPuppeteer.push(performance.now() - t)
}
await browser.close()
server.close()

const row = (what, n, p, target) => ({ what, native: `${n.toFixed(1)} ms`, puppeteer: `${p.toFixed(1)} ms`, ratio: `${(n / p).toFixed(2)}×`, target })
console.table([
  row('cold launch → first screenshot', median(cold.native), median(cold.puppeteer), '≤ 1500 ms, ≤ puppeteer'),
  row(`warm read_page (${nodesNative} nodes shown; puppeteer ${nodesPuppeteer})`, median(readNative), median(readPuppeteer), '≤ 50 ms'),
  row('warm viewport screenshot', median(shotNative), median(shotPuppeteer), '≤ 150 ms'),
  row('warm navigate (load)', median(navNative), median(navPuppeteer), '–'),
])
console.log(`runs ${runs}; read_page text ${full.content.length} chars; Chromium ${binary}`)
process.exit(0)
