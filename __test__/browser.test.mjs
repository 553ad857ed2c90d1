// The browser family with the real Chromium (CI installs Debian's `chromium`; without one these
// tests are skipped, saying how to install it, and with CI=true they fail), against pages served on 127.0.0.1 (and 127.0.0.2 for redirects).
// The form flow (find, type, click, read; refs stable across reads), screenshots decoded and checked,
// console errors, failed requests, guard refusals (cloud metadata, a redirect into loopback, file://
// outside the workspace), ELEMENT_NOT_FOUND with candidates, TIMEOUT, TAB_NOT_FOUND, declined
// confirms, Stack's `screenshot`, the idle close, and the lifetime: no Chromium process outlives a
// SIGKILLed Node.
import { after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { inflateSync } from 'node:zlib'
import * as native from '../index.js'
import { workspace, rejectsWith, assertMatchesSchema, approving } from './helpers.mjs'
import { needs } from './components.mjs'

// Without Chromium every test here is skipped, saying how to install it; with CI=true that fails.
const test = await needs('chromium')

// The browser tools are `moderate` (reads) or `dangerous` (click, type): these tests approve, and
// the declined and unasked cases call the native functions.
const tools = approving(native)

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const specs = new Map(tools.toolSpecs().map((s) => [s.name, s]))
const servers = []
after(async () => {
  for (const s of servers) { s.close(); s.closeAllConnections?.() }
})

/** A server on `host`; `routes[path](req, res)`. */
async function serve(routes, host = '127.0.0.1') {
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname
    const route = routes[path]
    if (!route) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not here'); return }
    route(req, res)
  })
  await new Promise((resolve) => server.listen(0, host, resolve))
  servers.push(server)
  return { base: `http://${host}:${server.address().port}`, server }
}
const html = (body) => (req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(body) }

const FORM = `<!doctype html><html><head><title>Sign up</title></head><body>
<h1>Create your account</h1>
<form action="/done" method="get">
  <label for="email">Email address</label> <input id="email" name="email" type="email" placeholder="you@example.com">
  <label><input type="checkbox" name="news"> Send me news</label>
  <button id="submit-button" type="submit">Create account</button>
  <button type="button" disabled>Disabled thing</button>
</form>
<p>Already registered? <a href="/login">Log in</a></p>
</body></html>`

const COLORS = `<!doctype html><html><head><title>Colours</title><style>body{margin:0} .a{height:400px;background:#e00} .b{height:2600px;background:#00c} #box{position:absolute;left:100px;top:100px;width:200px;height:120px;background:#0a0}</style></head>
<body><div class="a"></div><div class="b"></div><div id="box">box</div></body></html>`

const ERRORS = `<!doctype html><html><head><title>Broken</title></head><body><p>broken page</p>
<img src="/missing.png"><script>console.error('boom', 42); console.log('hello log'); setTimeout(() => { throw new Error('kaput') }, 0)</script></body></html>`

const main = await serve({
  '/form': html(FORM),
  '/done': (req, res) => {
    const email = new URL(req.url, 'http://x').searchParams.get('email')
    html(`<!doctype html><title>Welcome</title><h1>Welcome, ${email}</h1>`)(req, res)
  },
  '/colors': html(COLORS),
  '/errors': html(ERRORS),
  '/slow': html('<!doctype html><title>slow</title><img src="/hang">'),
  // A form sent by script: fetch first (answered after 400 ms), then a navigation.
  '/form-async': html(`<!doctype html><title>Async sign up</title><form id="f"><input id="email" value="ada@example.com"><button id="go" type="submit">Send</button></form>
<script>document.getElementById('f').onsubmit = async (e) => { e.preventDefault(); await fetch('/api/slow'); location.href = '/done?email=' + encodeURIComponent(document.getElementById('email').value) }</script>`),
  '/api/slow': (req, res) => { const t = setTimeout(() => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}') }, 400); req.on('close', () => clearTimeout(t)) },
  // A plain form whose answer takes 600 ms.
  '/form-slow': html('<!doctype html><title>Slow sign up</title><form action="/done-slow" method="get"><button id="go" type="submit">Send</button></form>'),
  '/done-slow': (req, res) => { const t = setTimeout(() => html('<!doctype html><title>Slow welcome</title><h1>done</h1>')(req, res), 600); req.on('close', () => clearTimeout(t)) },
  // Holds the response open (bounded: 6 s), so the page never reaches `load` in a short timeout.
  '/hang': (req, res) => { const t = setTimeout(() => { res.writeHead(200); res.end() }, 6000); req.on('close', () => clearTimeout(t)) },
})
const other = await serve({
  '/redir': (req, res) => { res.writeHead(302, { location: `${main.base}/form` }); res.end() },
  '/nested': html(`<!doctype html><title>nested</title><img src="${main.base}/colors">`),
}, '127.0.0.2')

const ws = workspace({ 'local.html': '<!doctype html><title>Local file</title><p>from the workspace</p>' })
const prompts = []
const net = { allowHosts: ['127.0.0.1'] }
const ctx = { cwd: ws, network: net, confirm: async (m) => { prompts.push(m); return true } }
const declining = { cwd: ws, network: net, confirm: async (m) => { prompts.push(m); return false } }

/** Decode a PNG (8-bit RGB/RGBA, non-interlaced, as Chromium writes them): width, height, pixel rows. */
function decodePng(buf) {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature')
  let off = 8; let width = 0; let height = 0; let colorType = 0; const idat = []
  while (off < buf.length) {
    const len = buf.readUInt32BE(off); const type = buf.toString('latin1', off + 4, off + 8)
    const data = buf.subarray(off + 8, off + 8 + len)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4); colorType = data[9]
      assert.equal(data[8], 8, 'bit depth'); assert.equal(data[12], 0, 'not interlaced')
    } else if (type === 'IDAT') idat.push(data)
    off += 12 + len
  }
  const bpp = colorType === 6 ? 4 : colorType === 2 ? 3 : assert.fail(`colour type ${colorType}`)
  const raw = inflateSync(Buffer.concat(idat)); const stride = width * bpp
  const px = Buffer.alloc(height * stride)
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)]; const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? px[y * stride + x - bpp] : 0; const b = y > 0 ? px[(y - 1) * stride + x] : 0
      const c = x >= bpp && y > 0 ? px[(y - 1) * stride + x - bpp] : 0
      const p = a + b - c; const pa = Math.abs(p - a); const pb = Math.abs(p - b); const pc = Math.abs(p - c)
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f]
      px[y * stride + x] = (line[x] + pred) & 255
    }
  }
  const at = (x, y) => [...px.subarray(y * stride + x * bpp, y * stride + x * bpp + 3)]
  return { width, height, at }
}

test('the browser is there (without it: skipped, or a failure with CI=true)', async () => {
  const s = await tools.browserStatus({}, { cwd: ws })
  assertMatchesSchema(specs.get('browser_status').outputSchema, s.data, 'browser_status.data')
  assert.notEqual(s.data.mode, 'none', `no Chromium here: ${s.content}`)
  if (!s.data.running) assert.match(s.data.binary, /chrom/)
})

test('a form: find the field by words, type, find and click submit, read the result; refs are stable', async () => {
  const nav = await tools.browserNavigate({ url: `${main.base}/form` }, ctx)
  assertMatchesSchema(specs.get('browser_navigate').outputSchema, nav.data, 'browser_navigate.data')
  assert.deepEqual([nav.data.status, nav.data.title, nav.data.finalUrl], [200, 'Sign up', `${main.base}/form`])
  const first = await tools.browserReadPage({}, ctx)
  assertMatchesSchema(specs.get('browser_read_page').outputSchema, first.data, 'browser_read_page.data')
  assert.match(first.content, /heading "Create your account"/)
  assert.match(first.content, /textbox "Email address" \[e\d+\]/)
  assert.match(first.content, /button "Disabled thing" \[e\d+\] \(disabled\)/)
  const again = await tools.browserReadPage({}, ctx)
  assert.equal(again.content, first.content, 'the tree and its refs are the same on a second read')

  const found = await tools.browserFind({ query: 'email input' }, ctx)
  assertMatchesSchema(specs.get('browser_find').outputSchema, found.data, 'browser_find.data')
  const field = found.data.matches[0]
  assert.deepEqual([field.role, field.name], ['textbox', 'Email address'])
  assert.ok(field.why.length > 0 && first.content.includes(`[${field.ref}]`), JSON.stringify(field))

  const typed = await tools.browserType({ ref: field.ref, text: 'ada@example.com' }, ctx)
  assertMatchesSchema(specs.get('browser_type').outputSchema, typed.data, 'browser_type.data')
  assert.deepEqual([typed.data.typed, typed.data.value], [true, 'ada@example.com'])
  assert.match(prompts.at(-1), /type "ada@example\.com" into textbox "Email address" \(input#email\)/)
  assert.match((await tools.browserReadPage({}, ctx)).content, /textbox "Email address" \[e\d+\] value="ada@example.com"/)

  const submit = (await tools.browserFind({ query: 'create account button' }, ctx)).data.matches[0]
  assert.deepEqual([submit.role, submit.name], ['button', 'Create account'])
  const clicked = await tools.browserClick({ ref: submit.ref }, ctx)
  assertMatchesSchema(specs.get('browser_click').outputSchema, clicked.data, 'browser_click.data')
  assert.match(prompts.at(-1), /Click button "Create account" \(button#submit-button\)/)
  assert.equal(clicked.data.navigated, true)
  assert.equal(clicked.data.url, `${main.base}/done?email=ada%40example.com`)
  const done = await tools.browserReadPage({}, ctx)
  assert.match(done.content, /heading "Welcome, ada@example.com"/)
})

test('a click that submits reports the page it led to, never the old one: a slow answer, a form sent by fetch first', async () => {
  for (const [page, url, title] of [['/form-slow', '/done-slow?', 'Slow welcome'], ['/form-async', '/done?email=ada%40example.com', 'Welcome']]) {
    await tools.browserNavigate({ url: `${main.base}${page}` }, ctx)
    const r = await tools.browserClick({ selector: '#go' }, ctx)
    assert.equal(r.data.navigated, true, page)
    assert.equal(r.data.url, `${main.base}${url}`)
    assert.equal(r.data.title, title)
    assert.match(r.content, new RegExp(`navigated to .* \\(${title}\\)$`))
  }
})

test('typing with submit presses Enter; clear empties first; by selector; the focused element', async () => {
  await tools.browserNavigate({ url: `${main.base}/form` }, ctx)
  await tools.browserType({ selector: '#email', text: 'first' }, ctx)
  const again = await tools.browserType({ selector: '#email', text: 'second', clear: true }, ctx)
  assert.equal(again.data.value, 'second')
  const focused = await tools.browserType({ text: '@x.org' }, ctx)
  assert.equal(focused.data.value, 'second@x.org')
  const sub = await tools.browserType({ selector: '#email', text: 'b@c.de', clear: true, submit: true }, ctx)
  assert.equal(sub.data.navigated, true)
  assert.equal(sub.data.url, `${main.base}/done?email=b%40c.de`)
})

test('two tabs typing at the same time: each in its own window, neither waits for the front', async () => {
  const tabs = []
  for (let i = 0; i < 2; i++) tabs.push((await tools.browserNewTab({ url: `${main.base}/form` }, ctx)).data.tabId)
  // Rounds of concurrent typing into both tabs: each round used to send one tab to the
  // background while the other typed, and the background one waited out its 10 s input bound.
  for (let round = 0; round < 3; round++) {
    const typed = await Promise.all(tabs.map((tabId) =>
      tools.browserType({ tabId, selector: '#email', text: `tab${tabId}-round${round}`, clear: true }, ctx)))
    assert.deepEqual(typed.map((t) => t.data.value), tabs.map((id) => `tab${id}-round${round}`))
  }
  const read = await Promise.all(tabs.map((tabId) => tools.browserReadPage({ tabId }, ctx)))
  read.forEach((r, i) => assert.match(r.content, new RegExp(`value="tab${tabs[i]}-round2"`)))
  for (const tabId of tabs) await tools.browserCloseTab({ tabId }, ctx)
})

test('declined confirms: nothing is clicked or typed', async () => {
  await tools.browserNavigate({ url: `${main.base}/form` }, ctx)
  const n = prompts.length
  const c = await tools.browserClick({ selector: '#submit-button' }, declining)
  assert.deepEqual([c.data.clicked, c.data.cancelled], [false, true])
  const t = await tools.browserType({ selector: '#email', text: 'nope' }, declining)
  assert.deepEqual([t.data.typed, t.data.cancelled], [false, true])
  assert.equal(prompts.length, n + 2)
  const page = await tools.browserReadPage({}, ctx)
  assert.match(page.content, /heading "Create your account"/)
  assert.doesNotMatch(page.content, /value="nope"/)
  // No confirm callback at all: no one could be asked, nothing is clicked.
  await rejectsWith(assert, native.browserClick({ selector: '#submit-button' }, { cwd: ws, network: net }), 'APPROVAL_REQUIRED', /Click button "Create account"/)
  // dangerous: every approved click asks again, even in one session
  const before = prompts.length
  await tools.browserClick({ selector: '#email' }, ctx)
  await tools.browserClick({ selector: '#email' }, ctx)
  assert.equal(prompts.length, before + 2)
})

test('screenshots: viewport, full page (scaled to the pixel budget), element; decoded and checked', async () => {
  await tools.browserNavigate({ url: `${main.base}/colors` }, ctx)
  const v = await tools.browserScreenshot({}, ctx)
  assertMatchesSchema(specs.get('browser_screenshot').outputSchema, v.data, 'browser_screenshot.data')
  assert.match(v.data.path, /^\.eddie\/screenshots\/.*\.png$/)
  const file = readFileSync(join(ws, v.data.path))
  assert.equal(v.data.image.type, 'image')
  assert.equal(v.data.image.mimeType, 'image/png')
  assert.ok(Buffer.from(v.data.image.data, 'base64').equals(file), 'the image content is the file')
  const png = decodePng(file)
  assert.deepEqual([png.width, png.height], [1280, 800])
  assert.deepEqual([png.width, png.height], [v.data.width, v.data.height])
  assert.deepEqual(png.at(10, 10), [0xee, 0, 0], 'red band at the top')
  assert.deepEqual(png.at(10, 600), [0, 0, 0xcc], 'blue below')
  assert.deepEqual(png.at(150, 150), [0, 0xaa, 0], 'the green box')

  const full = await tools.browserScreenshot({ fullPage: true, maxPixels: 500_000, path: 'shots/full.png' }, ctx)
  const f = decodePng(readFileSync(join(ws, 'shots/full.png')))
  assert.ok(f.width * f.height <= 500_000 && f.width * f.height > 400_000, `${f.width}x${f.height}`)
  assert.ok(Math.abs(f.height / f.width - 3000 / 1280) < 0.02, `aspect ${f.width}x${f.height}`)
  assert.equal(full.data.mode, 'fullPage')
  assert.ok(full.data.scale < 1)
  assert.deepEqual(f.at(2, f.height - 3), [0, 0, 0xcc], 'the bottom of the page is in it')

  const el = await tools.browserScreenshot({ selector: '#box', path: 'shots/box.png' }, ctx)
  const b = decodePng(readFileSync(join(ws, 'shots/box.png')))
  assert.deepEqual([b.width, b.height, el.data.mode], [200, 120, 'element'])
  assert.deepEqual(b.at(5, 5), [0, 0xaa, 0])

  await rejectsWith(assert, tools.browserScreenshot({ path: '../out.png' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.browserScreenshot({ selector: '#nothing-here' }, ctx), 'ELEMENT_NOT_FOUND')
})

test('console: errors, logs and uncaught exceptions, with a cursor; network: the failed request', async () => {
  await tools.browserNavigate({ url: `${main.base}/errors` }, ctx)
  let msgs = []
  for (let i = 0; i < 40 && !msgs.some((m) => /kaput/.test(m.text)); i++) {
    msgs = (await tools.browserConsole({}, ctx)).data.messages
    await new Promise((r) => setTimeout(r, 50))
  }
  const c = await tools.browserConsole({}, ctx)
  assertMatchesSchema(specs.get('browser_console').outputSchema, c.data, 'browser_console.data')
  assert.match(c.content, /\[error\] boom 42/)
  assert.match(c.content, /\[log\] hello log/)
  assert.match(c.content, /\[error\] .*Error: kaput/)
  const errs = (await tools.browserConsole({ errorsOnly: true }, ctx)).data.messages
  assert.ok(errs.every((m) => m.level === 'error' || m.level === 'warning') && errs.length >= 2)
  const later = await tools.browserConsole({ since: c.data.nextCursor }, ctx)
  assert.deepEqual(later.data.messages, [])

  const n = await tools.browserNetwork({}, ctx)
  assertMatchesSchema(specs.get('browser_network').outputSchema, n.data, 'browser_network.data')
  const miss = n.data.requests.find((r) => r.url.endsWith('/missing.png'))
  assert.equal(miss?.status, 404, n.content)
  const all = await tools.browserNetwork({ all: true }, ctx)
  assert.ok(all.data.requests.some((r) => r.url === `${main.base}/errors` && r.status === 200))
})

test('the guard: cloud metadata, loopback without the allow-list, a redirect into loopback, file:// outside', async () => {
  await rejectsWith(assert, tools.browserNavigate({ url: 'http://169.254.169.254/latest/meta-data/' }, ctx), 'BLOCKED_ADDRESS', /cloud metadata/)
  await rejectsWith(assert, tools.browserNavigate({ url: `${main.base}/form` }, { cwd: ws, confirm: () => true }), 'BLOCKED_ADDRESS')
  // 127.0.0.2 is allowed, the hop it redirects to (127.0.0.1) is not.
  await rejectsWith(assert, tools.browserNavigate({ url: `${other.base}/redir` }, { cwd: ws, network: { allowHosts: ['127.0.0.2'] } }), 'BLOCKED_ADDRESS', /127\.0\.0\.1/)
  const followed = await tools.browserNavigate({ url: `${other.base}/redir` }, { cwd: ws, network: { allowHosts: ['127.0.0.2', '127.0.0.1'] } })
  assert.equal(followed.data.finalUrl, `${main.base}/form`)
  // A subresource into a blocked address is refused and reported.
  const only2 = { cwd: ws, network: { allowHosts: ['127.0.0.2'] } }
  await tools.browserNavigate({ url: `${other.base}/nested` }, only2)
  const n = await tools.browserNetwork({}, only2)
  assert.ok(n.data.requests.some((r) => r.url === `${main.base}/colors` && /loopback/.test(r.blocked ?? '')), n.content)
  await rejectsWith(assert, tools.browserNavigate({ url: 'file:///etc/passwd' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.browserNavigate({ url: 'chrome://settings' }, ctx), 'UNSUPPORTED_SCHEME')
  const local = await tools.browserNavigate({ url: `file://${join(ws, 'local.html')}` }, ctx)
  assert.equal(local.data.title, 'Local file')
})

test('errors: a missing selector or ref (with candidates), a timeout, a closed tab, bad input', async () => {
  await tools.browserNavigate({ url: `${main.base}/form` }, ctx)
  await rejectsWith(assert, tools.browserClick({ selector: '#submit-btn' }, ctx), 'ELEMENT_NOT_FOUND', /nearest: e\d+ button "Create account"/)
  await assert.rejects(tools.browserClick({ ref: 'e9999' }, ctx), (e) => e.code === 'ELEMENT_NOT_FOUND' && Array.isArray(e.candidates) && e.candidates.length > 0)
  await rejectsWith(assert, tools.browserClick({ selector: 'button[' }, ctx), 'INVALID_ARGUMENT', /not valid CSS/)
  await rejectsWith(assert, tools.browserClick({}, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.browserClick({ ref: 'e1', selector: 'a' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.browserClick({ selector: 'button[disabled]', timeout: 0.3 }, ctx), 'TIMEOUT', /disabled/)
  const t0 = Date.now()
  await rejectsWith(assert, tools.browserNavigate({ url: `${main.base}/slow`, timeout: 1 }, ctx), 'TIMEOUT', /did not reach 'load' within 1\.0 s/)
  assert.ok(Date.now() - t0 < 4000)

  const opened = await tools.browserNewTab({ url: `${main.base}/form` }, ctx)
  assertMatchesSchema(specs.get('browser_new_tab').outputSchema, opened.data, 'browser_new_tab.data')
  const id = opened.data.tabId
  const tabs = await tools.browserGetTabs({}, ctx)
  assertMatchesSchema(specs.get('browser_get_tabs').outputSchema, tabs.data, 'browser_get_tabs.data')
  assert.ok(tabs.data.tabs.some((t) => t.tabId === id && t.current && t.title === 'Sign up'))
  const closed = await tools.browserCloseTab({ tabId: id }, ctx)
  assertMatchesSchema(specs.get('browser_close_tab').outputSchema, closed.data, 'browser_close_tab.data')
  await rejectsWith(assert, tools.browserReadPage({ tabId: id }, ctx), 'TAB_NOT_FOUND', new RegExp(`no tab ${id}`))
  await rejectsWith(assert, tools.browserCloseTab({ tabId: id }, ctx), 'TAB_NOT_FOUND')
  await rejectsWith(assert, tools.browserReadPage({ tabId: 0 }, ctx), 'TAB_NOT_FOUND')
  await rejectsWith(assert, tools.browserNavigate({ url: 'http://[::1' }, ctx), 'INVALID_URL')
  await rejectsWith(assert, tools.browserFind({ query: '!!!' }, ctx), 'INVALID_ARGUMENT')
})

test("Stack's screenshot: a URL to a PNG file in one call; the destination stays in the workspace", async () => {
  const before = (await tools.browserGetTabs({}, ctx)).data
  const r = await tools.screenshot({ url: `${main.base}/colors`, destination: 'site.png' }, ctx)
  assertMatchesSchema(specs.get('screenshot').outputSchema, r.data, 'screenshot.data')
  assert.deepEqual([r.data.success, r.data.destination, r.data.width, r.data.height], [true, 'site.png', 1280, 800])
  assert.deepEqual(decodePng(readFileSync(join(ws, 'site.png'))).at(10, 10), [0xee, 0, 0])
  const after = (await tools.browserGetTabs({}, ctx)).data
  assert.deepEqual(after, before, 'its tab is closed again and the current tab kept')
  await rejectsWith(assert, tools.screenshot({ url: `${main.base}/colors`, destination: '../x.png' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.screenshot({ url: `${main.base}/colors` }, { cwd: ws }), 'BLOCKED_ADDRESS')
  assert.ok(!existsSync(join(ws, 'screenshot.png')))
})

/** Every descendant of `pid` (from /proc). */
function descendants(pid) {
  const parent = new Map()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {}
  }
  const out = []
  const walk = (p) => { for (const [c, pp] of parent) if (pp === p) { out.push(c); walk(c) } }
  walk(pid)
  return out
}
const alive = (pid) => { try { process.kill(pid, 0); return true } catch { return false } }
async function waitGone(pids, ms) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!pids.some(alive)) return []
    await new Promise((r) => setTimeout(r, 50))
  }
  return pids.filter(alive)
}

for (const how of ['SIGKILL', 'exit']) {
  test(`lifetime: every Chromium process goes when its Node process ${how === 'exit' ? 'exits' : 'is SIGKILLed'}`, async () => {
    const w = workspace()
    const script = `
      const t = require(${JSON.stringify(join(root, 'index.js'))})
      const ctx = { cwd: ${JSON.stringify(w)}, confirm: () => true, network: { allowHosts: ['127.0.0.1'] } }
      ;(async () => {
        await t.browserNavigate({ url: ${JSON.stringify(`${main.base}/form`)} }, ctx)
        const s = await t.browserStatus({}, ctx)
        console.log('pid ' + s.data.pid)
        process.stdin.once('data', () => { ${how === 'exit' ? 'process.exit(0)' : ''} })
      })()`
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
    const shim = await new Promise((resolve) => child.stdout.on('data', (d) => { const m = /pid (\d+)/.exec(String(d)); if (m) resolve(Number(m[1])) }))
    const pids = [shim, ...descendants(shim)]
    const names = pids.map((p) => { try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0')[0] } catch { return 'gone' } })
    assert.ok(names.filter((n) => /chrom/.test(n)).length >= 2, `the browser's processes: ${names}`)
    if (how === 'SIGKILL') child.kill('SIGKILL')
    else child.stdin.write('go\n')
    await new Promise((resolve) => child.on('exit', resolve))
    assert.deepEqual(await waitGone(pids, 5000), [], `${how}: Chromium processes outlived Node`)
  })
}

test('idle close: a launched browser goes after EDDIE_BROWSER_IDLE_MS without calls', async () => {
  const w = workspace()
  const script = `
    const t = require(${JSON.stringify(join(root, 'index.js'))})
    const ctx = { cwd: ${JSON.stringify(w)}, confirm: () => true, env: { ...process.env, EDDIE_BROWSER_IDLE_MS: '1500' } }
    ;(async () => {
      await t.browserGetTabs({}, ctx)
      const s = await t.browserStatus({}, ctx)
      console.log('pid ' + s.data.pid)
      await new Promise((r) => setTimeout(r, 4000))
      const after = await t.browserStatus({}, ctx)
      console.log('running ' + after.data.running)
    })()`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  await new Promise((resolve) => child.on('exit', resolve))
  const shim = Number(/pid (\d+)/.exec(out)?.[1])
  assert.ok(shim > 0, out)
  assert.match(out, /running false/)
  assert.equal(alive(shim), false)
})

test('attach: ctx.browser.endpoint drives a browser started elsewhere, and only disconnects from it', async () => {
  const w = workspace()
  const binary = (await tools.browserStatus({}, { cwd: w })).data.binary ?? assert.fail('no Chromium')
  const profile = workspace()
  const args = ['--headless', '--remote-debugging-port=0', `--user-data-dir=${profile}`, '--no-first-run', ...(process.getuid() === 0 ? ['--no-sandbox'] : []), 'about:blank']
  const chrome = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  try {
    const endpoint = await new Promise((resolve, reject) => {
      let err = ''
      chrome.stderr.on('data', (d) => { err += d; const m = /ws:\/\/\S+/.exec(err); if (m) resolve(m[0]) })
      chrome.on('exit', () => reject(new Error(`chromium exited: ${err}`)))
    })
    const script = `
      const t = require(${JSON.stringify(join(root, 'index.js'))})
      const ctx = { cwd: ${JSON.stringify(w)}, confirm: () => true, network: { allowHosts: ['127.0.0.1'] }, browser: { endpoint: ${JSON.stringify(endpoint)} } }
      ;(async () => {
        const nav = await t.browserNavigate({ url: ${JSON.stringify(`${main.base}/form`)} }, ctx)
        const s = await t.browserStatus({}, ctx)
        console.log(JSON.stringify({ title: nav.data.title, mode: s.data.mode, endpoint: s.data.endpoint, version: s.data.version, tabs: s.data.tabCount }))
        process.exit(0)
      })().catch((e) => { console.log(JSON.stringify({ error: e.code, message: e.message })); process.exit(1) })`
    const out = await new Promise((resolve) => {
      let text = ''
      const c = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
      c.stdout.on('data', (d) => { text += d })
      c.on('exit', () => resolve(JSON.parse(text.trim().split('\n').at(-1))))
    })
    assert.deepEqual([out.title, out.mode, out.endpoint, out.tabs], ['Sign up', 'attached', endpoint, 1], JSON.stringify(out))
    assert.match(out.version, /Chrome/)
    // Attached, not owned: the browser is still running after its user exited.
    assert.equal(chrome.exitCode, null)
    assert.ok(alive(chrome.pid))
  } finally {
    process.kill(-chrome.pid, 'SIGKILL')
  }
  await rejectsWith(assert, tools.browserStatus({}, { cwd: w, browser: { endpoint: 5 } }), 'INVALID_ARGUMENT')
})
