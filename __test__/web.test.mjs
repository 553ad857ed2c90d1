// The web family against real HTTP servers this file starts on 127.0.0.1 (and 127.0.0.2): the
// guard's allow-list opens them, and the same URLs are refused without it. Charsets, compressed
// bodies, a 50 MB body against the cap, a slow-drip server, redirects into private addresses,
// non-HTML and invalid UTF-8 bodies, paging, the cache, downloads (declined, aborted mid-way,
// too large, HTTP errors), check_url's HEAD fallback, and the three search providers' formats.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import * as native from '../index.js'
import { workspace, context, rejectsWith, assertMatchesSchema, approving } from './helpers.mjs'

// The web tools are `moderate`: they ask once per session. These tests are about the requests, so they approve.
const tools = approving(native)

const specs = new Map(tools.toolSpecs().map((s) => [s.name, s]))
const servers = []
after(() => { for (const s of servers) s.close(); for (const s of servers) s.closeAllConnections?.() })

/** A server on `host` whose `routes[path](req, res)` answer; `hits` counts requests per path. */
async function serve(routes, host = '127.0.0.1') {
  const hits = {}
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname
    hits[path] = (hits[path] ?? 0) + 1
    const route = routes[path]
    if (!route) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not here'); return }
    route(req, res)
  })
  await new Promise((resolve) => server.listen(0, host, resolve))
  servers.push(server)
  const base = `http://${host}:${server.address().port}`
  return { base, hits, server, total: () => Object.values(hits).reduce((a, b) => a + b, 0) }
}

const send = (type, body, extra = {}) => (req, res) => { res.writeHead(200, { 'content-type': type, ...extra }); res.end(body) }
const open = (cwd, extra = {}) => ({ cwd, network: { allowHosts: ['127.0.0.1'] }, ...extra })

const PAGE = `<!doctype html><html><head><title>The Widget Guide</title></head><body>
<nav class="site-nav"><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/blog">Blog</a></nav>
<header><div class="banner">Subscribe to our newsletter</div></header>
<main><article><h1>Configuring widgets</h1>
<p>Widgets are configured with a <code>widget.toml</code> file at the root of the project. Each widget has a name, a size and a colour, and the loader reads them in order.</p>
<p>To add a widget, append a <a href="/docs/tables">[[widget]] table</a> and restart the loader. The loader validates every field and reports the first error with its line number.</p>
<h2>Fields</h2><ul><li>name: a unique string</li><li>size: small, medium or large</li></ul>
<pre><code>[[widget]]\nname = "knob"\nsize = "small"</code></pre>
<table><thead><tr><th>Field</th><th>Type</th></tr></thead><tbody><tr><td>name</td><td>string</td></tr><tr><td>size</td><td>enum</td></tr></tbody></table>
<p>Widgets that fail validation are skipped, and the loader keeps going so that one bad widget never stops the others from loading.</p>
</article></main>
<aside class="sidebar">Related: gadgets, gizmos</aside>
<footer class="site-footer">© 2026 Widget Corp. All rights reserved. Privacy · Terms</footer>
<script>trackEverything()</script></body></html>`

test('web_fetch: an HTML page as Markdown: main content kept, navigation and boilerplate gone, data as the schema says', async () => {
  const s = await serve({ '/page': send('text/html; charset=utf-8', PAGE) })
  const ws = workspace()
  const r = await tools.webFetch({ url: `${s.base}/page`, noCache: true }, open(ws))
  assert.equal(r.schema, 'eddie.tool.web_fetch.result.v1')
  assertMatchesSchema(specs.get('web_fetch').outputSchema, r.data, 'web_fetch.data')
  assert.match(r.content, /# Configuring widgets/)
  assert.match(r.content, /## Fields/)
  assert.match(r.content, /\[\\\[\\\[widget\\\]\\\] table\]\(http:\/\/127\.0\.0\.1:\d+\/docs\/tables\)/)
  assert.match(r.content, /- name: a unique string/)
  assert.match(r.content, /```[\s\S]*name = "knob"[\s\S]*```/)
  assert.match(r.content, /\| Field +\| Type/)
  for (const gone of ['Pricing', 'newsletter', 'All rights reserved', 'trackEverything', 'gizmos']) assert.ok(!r.content.includes(gone), `${gone} in ${r.content}`)
  assert.equal(r.data.title, 'The Widget Guide')
  assert.equal(r.data.status, 200)
  assert.equal(r.data.kind, 'html')
  assert.equal(r.data.mainContent, true)
  assert.equal(r.data.truncated, false)
  assert.equal(r.data.nextStartIndex, null)
  assert.equal(r.data.totalChars, [...r.content].length)
  // text, html and raw
  const t = await tools.webFetch({ url: `${s.base}/page`, format: 'text' }, open(ws))
  assert.match(t.content, /Configuring widgets/)
  assert.ok(!t.content.includes('](') && !t.content.includes('# '), t.content)
  const h = await tools.webFetch({ url: `${s.base}/page`, format: 'html' }, open(ws))
  assert.match(h.content, /<h2>Fields<\/h2>/)
  assert.ok(!h.content.includes('trackEverything'))
  const raw = await tools.webFetch({ url: `${s.base}/page`, format: 'raw' }, open(ws))
  assert.equal(raw.content, PAGE)
  // `fetch` is the same tool under Stack's name (a tool alias), with Stack's max_chars spelling.
  const f = await tools.runTool('fetch', { url: `${s.base}/page`, max_chars: 20 }, open(ws))
  assert.equal(f.schema, r.schema)
  assert.equal(f.data.returnedChars, 20)
})

test('the guard: loopback URLs are refused without the allow-list (nothing is sent), opened by ctx.network or the environment', async () => {
  const s = await serve({ '/': send('text/plain', 'hello') })
  const ws = workspace()
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/`, noCache: true }, { cwd: ws, env: {} }), 'BLOCKED_ADDRESS', /loopback/)
  await rejectsWith(assert, tools.checkUrl({ url: `${s.base}/` }, { cwd: ws, env: {} }), 'BLOCKED_ADDRESS')
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/`, noCache: true }, { cwd: ws, network: { allowHosts: ['127.0.0.2'] } }), 'BLOCKED_ADDRESS')
  assert.equal(s.total(), 0, 'no request reached the server')
  for (const ctx of [open(ws), { cwd: ws, env: { EDDIE_NET_ALLOW_HOSTS: '127.0.0.1' } }, { cwd: ws, env: { EDDIE_NET_ALLOW_PRIVATE: '1' } }, { cwd: ws, network: { allowPrivate: true } }, { cwd: ws, network: { allowHosts: ['127.0.0.0/8'] } }]) {
    const r = await tools.webFetch({ url: `${s.base}/`, noCache: true }, ctx)
    assert.equal(r.content, 'hello')
  }
  // denyHosts wins over allowPrivate
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/`, noCache: true }, { cwd: ws, network: { allowPrivate: true, denyHosts: ['127.0.0.1'] } }), 'BLOCKED_ADDRESS', /denyHosts/)
  // ctx.network must be well formed
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/` }, { cwd: ws, network: { allowHosts: 'x' } }), 'INVALID_ARGUMENT')
  // literal private addresses, schemes, and bad URLs fail before any network
  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://0x7f.1/', 'http://[::1]/', 'http://2130706433/', 'http://[::ffff:169.254.169.254]/', 'http://10.0.0.1/']) {
    await rejectsWith(assert, tools.webFetch({ url }, { cwd: ws, env: {} }), 'BLOCKED_ADDRESS')
  }
  for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://example.com/', 'data:text/plain,hi']) {
    await rejectsWith(assert, tools.webFetch({ url }, { cwd: ws }), 'UNSUPPORTED_SCHEME')
  }
  await rejectsWith(assert, tools.webFetch({ url: 'http://' }, { cwd: ws }), 'INVALID_URL')
  await rejectsWith(assert, tools.webFetch({ url: 'http://exa mple.com/' }, { cwd: ws }), 'INVALID_URL')
})

test('redirect chains into 127.0.0.1, [::1], 169.254.169.254 and 0x7f.1 are refused at the hop; the allowed chain is reported', async () => {
  const target = await serve({ '/': send('text/plain', 'internal secret') })
  const port = target.server.address().port
  const hops = { '/a': `http://127.0.0.1:${port}/`, '/b': `http://[::1]:${port}/`, '/c': 'http://169.254.169.254/latest/meta-data/', '/d': `http://0x7f.1:${port}/`, '/e': `http://0177.0.0.1:${port}/` }
  const routes = {}
  for (const [p, to] of Object.entries(hops)) {
    routes[p] = (req, res) => { res.writeHead(302, { location: to }); res.end() }
    routes[`/via${p}`] = (req, res) => { res.writeHead(301, { location: p }); res.end() }
  }
  const entry = await serve(routes, '127.0.0.2')
  const ws = workspace()
  const ctx = { cwd: ws, network: { allowHosts: ['127.0.0.2'] } }
  for (const p of Object.keys(hops)) {
    await rejectsWith(assert, tools.webFetch({ url: `${entry.base}/via${p}`, noCache: true }, ctx), 'BLOCKED_ADDRESS')
    await rejectsWith(assert, tools.checkUrl({ url: `${entry.base}/via${p}` }, ctx), 'BLOCKED_ADDRESS')
    await rejectsWith(assert, tools.download({ url: `${entry.base}/via${p}`, path: 'x.bin' }, { ...ctx, confirm: () => true }), 'BLOCKED_ADDRESS')
  }
  assert.equal(target.total(), 0, 'the private target saw no request')
  assert.deepEqual(readdirSync(ws), [])
  // allowed, the chain is followed and reported
  const r = await tools.webFetch({ url: `${entry.base}/via/a`, noCache: true }, { cwd: ws, network: { allowHosts: ['127.0.0.2', '127.0.0.1'] } })
  assert.equal(r.content, 'internal secret')
  assert.deepEqual(r.data.redirects.map((h) => h.status), [301, 302])
  assert.equal(r.data.finalUrl, `http://127.0.0.1:${port}/`)
  // followCrossHost: false hands the redirect back
  const back = await tools.webFetch({ url: `${entry.base}/via/a`, followCrossHost: false, noCache: true }, { cwd: ws, network: { allowHosts: ['127.0.0.2', '127.0.0.1'] } })
  assert.equal(back.data.redirectedTo, `http://127.0.0.1:${port}/`)
  assert.match(back.content, /redirects to another host/)
  assert.equal(target.total(), 1)
})

test('charsets: Shift_JIS (meta), GB18030 (header), windows-1252, ISO-8859-2, a UTF-8 BOM; invalid UTF-8 is replaced, not fatal', async () => {
  const b = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))))
  const s = await serve({
    '/sjis': send('text/html', b('<html><head><meta charset="Shift_JIS"><title>t</title></head><body><p>', [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea], '</p></body></html>')),
    '/gb': send('text/plain; charset=GB18030', b([0xd6, 0xd0, 0xce, 0xc4])),
    '/cp1252': send('text/plain; charset=windows-1252', b('caf', [0xe9, 0x20, 0x80])),
    '/latin2': send('text/plain; charset=ISO-8859-2', b([0xa3, 0xf3, 0x64, 0xbc])),
    '/bom': send('text/plain', b([0xef, 0xbb, 0xbf], 'h', [0xc3, 0xa9], 'llo')),
    '/bad': send('text/plain; charset=utf-8', b('ok ', [0xff, 0xfe], ' end')),
    '/bomhtml': send('text/html', b([0xef, 0xbb, 0xbf], '<html><head><title>T</title></head><body><article><h1>Caf', [0xc3, 0xa9], '</h1><p>Une tasse.</p></article></body></html>')),
  })
  const ws = workspace()
  const get = (p, extra = {}) => tools.webFetch({ url: `${s.base}${p}`, noCache: true, ...extra }, open(ws))
  const sjis = await get('/sjis')
  assert.match(sjis.content, /日本語/)
  assert.equal(sjis.data.encoding, 'Shift_JIS')
  assert.equal((await get('/gb')).content, '中文')
  assert.equal((await get('/cp1252')).content, 'café €')
  assert.equal((await get('/latin2')).content, 'Łódź')
  assert.equal((await get('/bom')).content, 'héllo')
  const bad = await get('/bad')
  assert.equal(bad.content, 'ok \uFFFD\uFFFD end')
  assert.equal(bad.data.malformed, true)
  assert.match((await get('/bomhtml')).content, /^## Café\n\nUne tasse\.$/)
  // The same bodies through the cache: the render then decodes bytes the cache shares instead
  // of a body it owns (which valid UTF-8 becomes in place); the text must not differ.
  for (const p of ['/sjis', '/gb', '/cp1252', '/latin2', '/bom', '/bad', '/bomhtml']) {
    const own = await get(p)
    const shared = await tools.webFetch({ url: `${s.base}${p}` }, open(ws))
    const again = await tools.webFetch({ url: `${s.base}${p}` }, open(ws))
    assert.equal(again.data.cached, true, p)
    for (const r of [shared, again]) assert.deepEqual([r.content, r.data.encoding, r.data.malformed, r.data.title], [own.content, own.data.encoding, own.data.malformed, own.data.title], p)
  }
})

test('compressed bodies: gzip, brotli and deflate are decoded', async () => {
  const text = 'compressed content '.repeat(200)
  const s = await serve({
    '/gzip': send('text/plain', gzipSync(text), { 'content-encoding': 'gzip' }),
    '/br': send('text/plain', brotliCompressSync(text), { 'content-encoding': 'br' }),
    '/deflate': send('text/plain', deflateSync(text), { 'content-encoding': 'deflate' }),
  })
  const ws = workspace()
  for (const p of ['/gzip', '/br', '/deflate']) {
    const r = await tools.webFetch({ url: `${s.base}${p}`, maxChars: 100000, noCache: true }, open(ws))
    assert.equal(r.content, text, p)
    assert.equal(r.data.bytes, text.length, p)
  }
})

test('a 50 MB body against the 5 MB cap fails with TOO_LARGE while streaming (announced or not); the server stops being read', async () => {
  let written = 0
  const chunk = Buffer.alloc(1 << 20, 0x61)
  const stream = (announce) => (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain', ...(announce ? { 'content-length': String(50 << 20) } : {}) })
    let n = 0
    const pump = () => {
      while (n < 50) {
        n++
        written += chunk.length
        if (!res.write(chunk)) { res.once('drain', pump); return }
      }
      res.end()
    }
    res.on('close', () => { n = 50 })
    pump()
  }
  const s = await serve({ '/big': stream(false), '/announced': stream(true) })
  const ws = workspace()
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/big`, noCache: true }, open(ws)), 'TOO_LARGE', /5242880-byte cap/)
  await new Promise((r) => setTimeout(r, 100))
  assert.ok(written < 50 << 20, `the reader stopped at the cap, so the server could not send it all (${written} bytes written)`)
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/announced`, noCache: true }, open(ws)), 'TOO_LARGE', /52428800 bytes/)
  // a raised cap lets a bigger body through
  const r = await tools.webFetch({ url: `${s.base}/big`, maxBytes: 60 << 20, maxChars: 10, noCache: true }, open(ws))
  assert.equal(r.data.bytes, 50 << 20)
  assert.equal(r.data.truncated, true)
})

test('a slow-drip server cannot hold a call: TIMEOUT at the total limit, and the abort signal cancels', async () => {
  const timers = []
  const drip = (req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    let n = 0
    const t = setInterval(() => { if (n++ > 100 || res.destroyed) { clearInterval(t); res.end() } else res.write('x') }, 200)
    timers.push(t)
  }
  const s = await serve({ '/drip': drip })
  after(() => timers.forEach(clearInterval))
  const ws = workspace()
  const started = Date.now()
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/drip`, timeout: 1, noCache: true }, open(ws)), 'TIMEOUT')
  assert.ok(Date.now() - started < 10_000)
  const c = new AbortController()
  setTimeout(() => c.abort(), 300)
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/drip`, noCache: true }, open(ws, { signal: c.signal })), 'CANCELLED')
  await rejectsWith(assert, tools.checkUrl({ url: `${s.base}/drip` }, open(ws, { signal: AbortSignal.abort() })), 'CANCELLED')
})

test('non-HTML bodies: JSON and text pass through, a PDF and an image are reported by type and size', async () => {
  const s = await serve({
    '/data.json': send('application/json', '{"a": [1, 2, 3]}'),
    '/doc.pdf': send('application/pdf', Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(3000, 1)])),
    '/img.png': send('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0])),
    '/untyped': (req, res) => { res.removeHeader('content-type'); res.end(Buffer.from([0, 1, 2, 3, 0, 0, 7])) },
  })
  const ws = workspace()
  const j = await tools.webFetch({ url: `${s.base}/data.json` }, open(ws))
  assert.equal(j.content, '{"a": [1, 2, 3]}')
  assert.equal(j.data.kind, 'text')
  const pdf = await tools.webFetch({ url: `${s.base}/doc.pdf` }, open(ws))
  assert.equal(pdf.data.kind, 'binary')
  assert.match(pdf.content, /application\/pdf, 3009 bytes/)
  assert.ok(!pdf.content.includes('%PDF'))
  const img = await tools.webFetch({ url: `${s.base}/img.png` }, open(ws))
  assert.match(img.content, /image\/png, 8 bytes/)
  const u = await tools.webFetch({ url: `${s.base}/untyped` }, open(ws))
  assert.equal(u.data.kind, 'binary')
})

test('paging: maxChars with startIndex continuation and the total reported; HTTP errors come back as pages', async () => {
  const text = Array.from({ length: 500 }, (_, i) => `line ${i} é`).join('\n')
  const s = await serve({ '/long.txt': send('text/plain; charset=utf-8', text), '/gone': (req, res) => { res.writeHead(410, { 'content-type': 'text/plain' }); res.end('gone for good') } })
  const ws = workspace()
  let start = 0
  let whole = ''
  for (let i = 0; i < 100; i++) {
    const r = await tools.webFetch({ url: `${s.base}/long.txt`, maxChars: 1000, start_index: start }, open(ws))
    assert.equal(r.data.totalChars, [...text].length)
    whole += r.content.replace(/\n\n\[… \d+ more characters[^\]]*\]$/, '')
    if (!r.data.truncated) { assert.equal(r.data.nextStartIndex, null); break }
    assert.equal(r.data.nextStartIndex, start + 1000)
    start = r.data.nextStartIndex
  }
  assert.equal(whole, text)
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/long.txt`, startIndex: 10 ** 6 }, open(ws)), 'INVALID_ARGUMENT', /past the end/)
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/long.txt`, maxChars: 0 }, open(ws)), 'INVALID_ARGUMENT')
  const g = await tools.webFetch({ url: `${s.base}/gone` }, open(ws))
  assert.equal(g.data.status, 410)
  assert.match(g.content, /HTTP 410[\s\S]*gone for good/)
})

test('the cache: a second fetch within 15 minutes is served from memory; noCache asks again; ETag revalidation answers 304', async () => {
  let etagHits = 0
  const s = await serve({
    '/c': send('text/plain', 'cached body'),
    '/e': (req, res) => {
      etagHits++
      if (req.headers['if-none-match'] === '"v1"') { res.writeHead(304); res.end(); return }
      res.writeHead(200, { 'content-type': 'text/plain', etag: '"v1"' }); res.end('etag body')
    },
  })
  const ws = workspace()
  const a = await tools.webFetch({ url: `${s.base}/c` }, open(ws))
  const b = await tools.webFetch({ url: `${s.base}/c`, format: 'text' }, open(ws))
  assert.equal(a.data.cached, false)
  assert.equal(b.data.cached, true)
  assert.equal(b.content, 'cached body')
  assert.equal(s.hits['/c'], 1)
  await tools.webFetch({ url: `${s.base}/c`, noCache: true }, open(ws))
  assert.equal(s.hits['/c'], 2)
  // a different policy does not share the entry
  await rejectsWith(assert, tools.webFetch({ url: `${s.base}/c` }, { cwd: ws, env: {} }), 'BLOCKED_ADDRESS')
  const e1 = await tools.webFetch({ url: `${s.base}/e` }, open(ws))
  assert.equal(e1.content, 'etag body')
  assert.equal(etagHits, 1)
})

test('check_url: HEAD with status, type, length and latency; 405 falls back to a ranged GET; 404 is ok: false', async () => {
  const s = await serve({
    '/ok': (req, res) => { res.writeHead(200, { 'content-type': 'text/html', 'content-length': '1234' }); res.end(req.method === 'HEAD' ? undefined : 'x'.repeat(1234)) },
    '/nohead': (req, res) => {
      if (req.method === 'HEAD') { res.writeHead(405); res.end(); return }
      assert.equal(req.headers.range, 'bytes=0-0')
      res.writeHead(206, { 'content-type': 'application/zip', 'content-range': 'bytes 0-0/987654' }); res.end('P')
    },
    '/moved': (req, res) => { res.writeHead(308, { location: '/ok' }); res.end() },
  })
  const ws = workspace()
  const r = await tools.checkUrl({ url: `${s.base}/ok` }, open(ws))
  assertMatchesSchema(specs.get('check_url').outputSchema, r.data, 'check_url.data')
  assert.equal(r.data.status, 200)
  assert.equal(r.data.ok, true)
  assert.equal(r.data.method, 'HEAD')
  assert.equal(r.data.contentLength, 1234)
  assert.equal(r.data.contentType, 'text/html')
  assert.equal(typeof r.data.latencyMs, 'number')
  const n = await tools.checkUrl({ url: `${s.base}/nohead` }, open(ws))
  assert.equal(n.data.method, 'GET')
  assert.equal(n.data.status, 206)
  assert.equal(n.data.contentLength, 987654)
  const m = await tools.checkUrl({ url: `${s.base}/moved` }, open(ws))
  assert.deepEqual(m.data.redirects.map((h) => h.status), [308])
  assert.equal(m.data.finalUrl, `${s.base}/ok`)
  const missing = await tools.checkUrl({ url: `${s.base}/missing` }, open(ws))
  assert.equal(missing.data.status, 404)
  assert.equal(missing.data.ok, false)
})

test('download: confirms naming URL and path, streams, sha256 and size, progress to onOutput; overwrite rules; escapes refused', async () => {
  const payload = Buffer.alloc(3 << 20)
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) & 255
  const s = await serve({ '/file.bin': send('application/octet-stream', payload, { 'content-length': String(payload.length) }), '/missing.bin': (req, res) => { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('no such file') } })
  const ws = workspace({ 'existing.bin': 'old' })
  const chunks = []
  const { ctx, prompts } = context(ws, true, { network: { allowHosts: ['127.0.0.1'] }, onOutput: (c) => chunks.push(c) })
  const r = await tools.download({ url: `${s.base}/file.bin`, destination: 'sub/dir/file.bin' }, ctx)
  assertMatchesSchema(specs.get('download').outputSchema, r.data, 'download.data')
  assert.equal(prompts.length, 1)
  assert.match(prompts[0], new RegExp(`${s.base}/file.bin`.replace(/[.]/g, '\\.')))
  assert.match(prompts[0], /sub\/dir\/file\.bin/)
  assert.equal(r.data.size, payload.length)
  assert.equal(r.data.sha256, createHash('sha256').update(payload).digest('hex'))
  assert.deepEqual(readFileSync(join(ws, 'sub/dir/file.bin')), payload)
  assert.ok(chunks.some((c) => /downloaded \d+ of 3145728 bytes/.test(c.text)), JSON.stringify(chunks))
  assert.deepEqual(readdirSync(join(ws, 'sub/dir')), ['file.bin'], 'no temp file left')
  // overwrite: false refuses an existing file before asking; by default it is replaced, and the prompt says so
  const asked = prompts.length
  await rejectsWith(assert, tools.download({ url: `${s.base}/file.bin`, path: 'existing.bin', overwrite: false }, ctx), 'ALREADY_EXISTS')
  assert.equal(readFileSync(join(ws, 'existing.bin'), 'utf8'), 'old')
  assert.equal(prompts.length, asked)
  const o = await tools.download({ url: `${s.base}/file.bin`, path: 'existing.bin' }, ctx)
  assert.equal(o.data.size, payload.length)
  assert.match(prompts.at(-1), /replacing the existing file/)
  assert.deepEqual(readFileSync(join(ws, 'existing.bin')), payload)
  // HTTP errors carry the status and the body's head; nothing is written
  await assert.rejects(tools.download({ url: `${s.base}/missing.bin`, path: 'm.bin' }, ctx), (e) => e.code === 'HTTP_STATUS' && e.status === 404 && /no such file/.test(e.message))
  assert.equal(existsSync(join(ws, 'm.bin')), false)
  // too large: nothing left, not even the directories it would have made
  await rejectsWith(assert, tools.download({ url: `${s.base}/file.bin`, path: 'big/x.bin', maxBytes: 1000 }, ctx), 'TOO_LARGE')
  assert.equal(existsSync(join(ws, 'big')), false)
  // escapes
  await rejectsWith(assert, tools.download({ url: `${s.base}/file.bin`, path: '../outside.bin' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.download({ url: `${s.base}/file.bin`, path: '/etc/x.bin' }, ctx), 'OUTSIDE_WORKSPACE')
})

test('download: a declined confirm sends nothing and writes nothing; an abort mid-download leaves no file behind', async () => {
  let stalled
  const s = await serve({
    '/f': send('application/octet-stream', 'data'),
    '/stall': (req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(10 << 20) })
      res.write(Buffer.alloc(2 << 20, 1))
      stalled = res // the rest never comes
    },
  })
  after(() => stalled?.destroy())
  const ws = workspace()
  const declined = context(ws, false, { network: { allowHosts: ['127.0.0.1'] } })
  const r = await tools.download({ url: `${s.base}/f`, path: 'f.bin' }, declined.ctx)
  assert.equal(r.data.downloaded, false)
  assert.equal(r.data.cancelled, true)
  assert.equal(declined.prompts.length, 1)
  assert.equal(s.total(), 0, 'nothing was sent')
  assert.deepEqual(readdirSync(ws), [])
  // No confirm callback: no one could be asked, so APPROVAL_REQUIRED, and nothing is sent or written.
  await rejectsWith(assert, native.download({ url: `${s.base}/f`, path: 'f.bin' }, { cwd: ws, network: { allowHosts: ['127.0.0.1'] } }), 'APPROVAL_REQUIRED', /Download/)
  assert.equal(s.total(), 0, 'nothing was sent')
  assert.deepEqual(readdirSync(ws), [], 'no confirm callback = nothing written')
  // abort after the first progress report
  const c = new AbortController()
  const ctx = { cwd: ws, confirm: () => true, network: { allowHosts: ['127.0.0.1'] }, signal: c.signal, onOutput: () => c.abort() }
  await rejectsWith(assert, tools.download({ url: `${s.base}/stall`, path: 'dl/part.bin' }, ctx), 'CANCELLED')
  await new Promise((r) => setTimeout(r, 200))
  assert.deepEqual(readdirSync(ws).filter((n) => n !== 'dl'), [])
  if (existsSync(join(ws, 'dl'))) assert.deepEqual(readdirSync(join(ws, 'dl')), [], 'no partial file')
})

test('web_search: NO_PROVIDER names the variables; Brave, SearXNG and Tavily clients against servers speaking their formats', async () => {
  const ws = workspace()
  await rejectsWith(assert, tools.webSearch({ query: 'rust' }, { cwd: ws, env: { BRAVE_API_KEY: '', TAVILY_API_KEY: '', SEARXNG_URL: '' } }).catch((e) => { throw e }), 'NO_PROVIDER', /BRAVE_API_KEY[\s\S]*TAVILY_API_KEY[\s\S]*SEARXNG_URL/)
  const seen = {}
  const s = await serve({
    '/brave': (req, res) => {
      seen.brave = { url: new URL(req.url, 'http://x'), token: req.headers['x-subscription-token'] }
      if (req.headers['x-subscription-token'] !== 'bk') { res.writeHead(401, { 'content-type': 'application/json' }); res.end('{"error":"bad token"}'); return }
      send('application/json', JSON.stringify({ type: 'search', web: { type: 'search', results: [
        { title: 'The <strong>Rust</strong> Book', url: 'https://doc.rust-lang.org/book/', description: 'Learn <strong>Rust</strong> &amp; more', page_age: '2026-01-02T00:00:00', profile: { name: 'Rust' }, meta_url: { hostname: 'doc.rust-lang.org' } },
        { title: 'Rust by Example', url: 'https://doc.rust-lang.org/rust-by-example/', description: 'Examples', age: '3 days ago', meta_url: { hostname: 'doc.rust-lang.org' } },
      ] } }))(req, res)
    },
    '/searx/search': (req, res) => {
      seen.searx = new URL(req.url, 'http://x')
      send('application/json', JSON.stringify({ query: 'rust', number_of_results: 2, results: [
        { url: 'https://www.rust-lang.org/', title: 'Rust Programming Language', content: 'A language empowering everyone', engine: 'duckduckgo', publishedDate: null },
        { url: 'https://crates.io/', title: 'crates.io', content: 'The Rust community registry', engine: 'bing', publishedDate: '2026-02-03T00:00:00' },
      ] }))(req, res)
    },
    '/tavily/search': (req, res) => {
      let body = ''
      req.on('data', (d) => { body += d })
      req.on('end', () => {
        seen.tavily = { body: JSON.parse(body), auth: req.headers.authorization, method: req.method }
        send('application/json', JSON.stringify({ query: 'rust', results: [
          { title: 'Tokio', url: 'https://tokio.rs/tokio/tutorial', content: 'An asynchronous runtime', score: 0.9, published_date: '2026-03-04' },
        ], response_time: 0.5 }))(req, res)
      })
    },
  })
  const net = { allowHosts: ['127.0.0.1'] }
  const brave = await tools.webSearch({ query: 'rust', count: 2, freshness: 'week', language: 'en', site: 'doc.rust-lang.org' }, { cwd: ws, network: net, env: { BRAVE_API_KEY: 'bk', BRAVE_API_URL: `${s.base}/brave` } })
  assertMatchesSchema(specs.get('web_search').outputSchema, brave.data, 'web_search.data')
  assert.equal(brave.data.provider, 'brave')
  assert.deepEqual(brave.data.results[0], { title: 'The Rust Book', url: 'https://doc.rust-lang.org/book/', snippet: 'Learn Rust & more', date: '2026-01-02T00:00:00', source: 'Rust' })
  assert.equal(brave.data.results[1].source, 'doc.rust-lang.org')
  assert.equal(seen.brave.token, 'bk')
  assert.equal(seen.brave.url.searchParams.get('q'), 'rust site:doc.rust-lang.org')
  assert.equal(seen.brave.url.searchParams.get('count'), '2')
  assert.equal(seen.brave.url.searchParams.get('freshness'), 'pw')
  assert.equal(seen.brave.url.searchParams.get('search_lang'), 'en')
  await assert.rejects(tools.webSearch({ query: 'rust' }, { cwd: ws, network: net, env: { BRAVE_API_KEY: 'wrong', BRAVE_API_URL: `${s.base}/brave` } }), (e) => e.code === 'HTTP_STATUS' && e.status === 401 && /API key/.test(e.message))

  const searx = await tools.webSearch({ query: 'rust', freshness: 'month', language: 'fr', count: 1 }, { cwd: ws, network: net, env: { SEARXNG_URL: `${s.base}/searx` } })
  assert.equal(searx.data.provider, 'searxng')
  assert.equal(searx.data.count, 1)
  assert.deepEqual(searx.data.results[0], { title: 'Rust Programming Language', url: 'https://www.rust-lang.org/', snippet: 'A language empowering everyone', date: null, source: 'duckduckgo' })
  assert.equal(seen.searx.searchParams.get('format'), 'json')
  assert.equal(seen.searx.searchParams.get('time_range'), 'month')
  assert.equal(seen.searx.searchParams.get('language'), 'fr')

  const tav = await tools.webSearch({ query: 'tokio', freshness: 'day', site: 'tokio.rs' }, { cwd: ws, network: net, env: { TAVILY_API_KEY: 'tk', TAVILY_API_URL: `${s.base}/tavily/search` } })
  assert.equal(tav.data.provider, 'tavily')
  assert.deepEqual(tav.data.results, [{ title: 'Tokio', url: 'https://tokio.rs/tokio/tutorial', snippet: 'An asynchronous runtime', date: '2026-03-04', source: 'tokio.rs' }])
  assert.equal(seen.tavily.method, 'POST')
  assert.equal(seen.tavily.auth, 'Bearer tk')
  assert.deepEqual(seen.tavily.body, { query: 'tokio', max_results: 5, search_depth: 'basic', time_range: 'day', include_domains: ['tokio.rs'] })

  // the provider's endpoint is guarded like any URL
  await rejectsWith(assert, tools.webSearch({ query: 'x' }, { cwd: ws, env: { SEARXNG_URL: `${s.base}/searx` } }), 'BLOCKED_ADDRESS')
  await rejectsWith(assert, tools.webSearch({ query: 'x', count: 21 }, { cwd: ws, network: net, env: { SEARXNG_URL: `${s.base}/searx` } }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.webSearch({ query: 'x', provider: 'tavily' }, { cwd: ws, network: net, env: { SEARXNG_URL: `${s.base}/searx` } }), 'NO_PROVIDER')
})

// Extraction quality on real documentation pages that Debian packages ship as HTML (Node.js API docs,
// Sphinx and ReadTheDocs themes, texinfo, DocBook, hand-written pages): the main text is present and
// the navigation, sidebars, headers and footers are gone. [page, must be there, must be gone]
const QUALITY = [
  ["dns.html", ["The `node:dns` module enables name resolution", "dns.lookup()"], ["Assertion testing", "Table of contents", "Node.js v20.20.2 documentation", "Asynchronous context tracking"]],
  ["path.html", ["The `node:path` module provides utilities for working with file and directory paths", "path.basename"], ["Assertion testing", "Table of contents", "Node.js v20.20.2 documentation"]],
  ["querystring.html", ["provides utilities for parsing and formatting URL query strings", "querystring.unescape()"], ["Assertion testing", "Table of contents", "Node.js v20.20.2 documentation"]],
  ["string_decoder.html", ["preserves encoded multi-byte UTF-8 and UTF-16 characters", "stringDecoder.end"], ["Assertion testing", "Table of contents", "Node.js v20.20.2 documentation"]],
  ["fontconfig-user.html", ["Fontconfig is a library designed to provide system-wide font configuration", "## Functional Overview"], ["</div>", "</a>", "<script"]],
  ["libffi-the-basics.html", ["create an `ffi_cif` object", "ffi_prep_cif"], ["Next: Simple Example", "Up: Using libffi", "[Index]"]],
  ["libffi-simple-example.html", ["Here is a trivial example that calls `puts` a few times", "ffi_call(&cif, puts, &rc, values);"], ["Next: Types", "Previous: The Basics", "Up: Using libffi"]],
  ["libxslt_pipes.html", ["xsltCleanupGlobals", "## Introduction"], ["Table of Contents"]],
  ["python-policy.html", ["This document describes the packaging of Python within the Debian GNU/Linux distribution", "Build dependencies for Python-dependent packages"], ["Created using Sphinx", "Navigation", "Software in the Public Interest. Created"]],
  ["qemu-nbd.html", ["Export a QEMU disk image using the NBD protocol", "qemu-nbd"], ["View page source", "System Emulation", "User Mode Emulation", "© Copyright 2025"]],
  ["users-and-groups.html", ["The Debian base-passwd package contains the master versions", "fetchmail"], ["Table of Contents"]],
  ["valgrind-faq.html", ["How do you pronounce", "unpaid volunteers"], ["Valgrind Technical Documentation", "Home"]],
  ["valgrind-quick-start.html", ["The Valgrind tool suite provides a number of debugging and profiling tools", "Memcheck"], ["<< The Valgrind Quick Start Guide", "Up"]],
  ["zlib_how.html", ["We often get questions about how the deflate() and inflate() functions should be used", "Copyright (c) 2004, 2005 by Mark Adler"], ["<table", "<a href"]],
]

test('extraction quality: main text present, navigation and boilerplate gone, on 14 real documentation pages', async () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'web')
  const s = await serve(Object.fromEntries(QUALITY.map(([f]) => [`/${f}`, send('text/html', readFileSync(join(dir, f)))])))
  const ws = workspace()
  const failures = []
  for (const [f, keep, gone] of QUALITY) {
    // The page's visible text, roughly: the boilerplate must be there before extraction.
    const visible = readFileSync(join(dir, f), 'utf8').replace(/<(script|style)[\s\S]*?<\/\1>/gi, '').replace(/<[^>]+>/g, '')
      .replace(/&nbsp;|&#160;/g, ' ').replace(/&copy;|&#169;/g, '©').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ')
    for (const g of gone) if (!g.startsWith('<') && !visible.includes(g.replace(/`/g, ''))) failures.push(`${f}: the page never had ${JSON.stringify(g)} (a test that cannot fail)`)
    const r = await tools.webFetch({ url: `${s.base}/${f}`, maxChars: 10 ** 7, noCache: true }, open(ws))
    assert.equal(r.data.mainContent, true, f)
    assert.ok(r.data.title, f)
    for (const k of keep) if (!r.content.includes(k)) failures.push(`${f}: missing ${JSON.stringify(k)}`)
    for (const g of gone) if (r.content.includes(g)) failures.push(`${f}: still has ${JSON.stringify(g)}`)
    for (const tag of ['<script', '<style', '<nav']) if (r.content.includes(tag)) failures.push(`${f}: has ${tag}`)
  }
  assert.deepEqual(failures, [])
})

// The exact output on the same 14 pages, in every format: content and data hashed (the server's
// origin written as http://fixture) against __test__/fixtures/web-golden.json. A change to the
// extractor, the tree or the Markdown that alters any byte fails here; when it is meant,
// `EDDIE_UPDATE_GOLDEN=1 node --test __test__/web.test.mjs` writes the new hashes (say why in
// the commit).
test('extraction is byte-stable: 14 pages x 4 formats hash as recorded', async () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'web')
  const goldenPath = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'web-golden.json')
  const s = await serve(Object.fromEntries(QUALITY.map(([f]) => [`/${f}`, send('text/html', readFileSync(join(dir, f)))])))
  const ws = workspace()
  const got = {}
  for (const [f] of QUALITY) {
    for (const format of ['markdown', 'text', 'html', 'raw']) {
      const r = await tools.webFetch({ url: `${s.base}/${f}`, maxChars: 10 ** 7, noCache: true, format }, open(ws))
      const text = `${r.content}\0${JSON.stringify(r.data)}`.split(s.base).join('http://fixture')
      got[`${f} ${format}`] = `${createHash('sha256').update(text).digest('hex').slice(0, 24)} ${r.content.length}`
    }
  }
  if (process.env.EDDIE_UPDATE_GOLDEN === '1') writeFileSync(goldenPath, `${JSON.stringify(got, null, 1)}\n`)
  assert.equal(Object.keys(got).length, 56)
  assert.deepEqual(got, JSON.parse(readFileSync(goldenPath, 'utf8')))
})

test('proxies: HTTP_PROXY from ctx.env carries the request, the target is vetted first, NO_PROXY goes direct', async () => {
  const target = await serve({ '/p': send('text/plain', 'direct') }, '127.0.0.2')
  const seen = []
  const proxy = createServer((req, res) => { seen.push(req.url); res.writeHead(200, { 'content-type': 'text/plain' }); res.end('via proxy') })
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r))
  servers.push(proxy)
  const proxyUrl = `http://127.0.0.1:${proxy.address().port}`
  const ws = workspace()
  const ctx = (env) => ({ cwd: ws, network: { allowHosts: ['127.0.0.2'] }, env })
  const r = await tools.webFetch({ url: `${target.base}/p`, noCache: true }, ctx({ HTTP_PROXY: proxyUrl }))
  assert.equal(r.content, 'via proxy')
  assert.deepEqual(seen, [`${target.base}/p`])
  // the target is vetted before the proxy sees anything
  await rejectsWith(assert, tools.webFetch({ url: 'http://169.254.169.254/latest/meta-data/', noCache: true }, ctx({ HTTP_PROXY: proxyUrl })), 'BLOCKED_ADDRESS')
  await rejectsWith(assert, tools.webFetch({ url: 'http://127.0.0.1:9/', noCache: true }, ctx({ HTTP_PROXY: proxyUrl })), 'BLOCKED_ADDRESS')
  assert.equal(seen.length, 1)
  const d = await tools.webFetch({ url: `${target.base}/p`, noCache: true }, ctx({ HTTP_PROXY: proxyUrl, NO_PROXY: '127.0.0.2' }))
  assert.equal(d.content, 'direct')
  assert.equal(seen.length, 1)
})

test('one environment rule: ctx.env, when given, is the whole environment, and the process environment does not leak into it', async () => {
  const s = await serve({ '/': send('text/plain', 'hello') })
  const ws = workspace()
  process.env.EDDIE_NET_ALLOW_PRIVATE = '1'
  try {
    // Without ctx.env a call reads this process's environment: open.
    assert.equal((await tools.webFetch({ url: `${s.base}/`, noCache: true }, { cwd: ws })).content, 'hello')
    // With ctx.env, only it: the operator's variable does not reach a call whose host withheld it.
    await rejectsWith(assert, tools.webFetch({ url: `${s.base}/`, noCache: true }, { cwd: ws, env: { PATH: process.env.PATH ?? '' } }), 'BLOCKED_ADDRESS')
    assert.equal(s.total(), 1, 'the withheld call sent nothing')
  } finally {
    delete process.env.EDDIE_NET_ALLOW_PRIVATE
  }
})
