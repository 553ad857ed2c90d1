// The browser's ways around the network guard, each kept as an attack. Pages are served on
// 127.0.0.3 and 127.0.0.4 (allowed with ctx.network.allowHosts); "forbidden" servers listen on
// 127.0.0.2 and on 127.0.0.1 (the proxy's own address, which Chromium's resolver rules leave
// resolvable: only the proxy keeps pages from it), both refused by the guard as loopback. Each attack page tries to reach it one way
// (a cross-site iframe, every kind of worker, a service worker answering a later navigation,
// popups, a form POST into a new window, preconnect/prefetch, a WebSocket, WebRTC), then reports
// to an allowed server that it has tried (so the test knows the attack ran). The forbidden
// servers count accepted sockets (and UDP datagrams), not requests: zero means no connection.
// Real Chromium; without it these tests are skipped, saying how to install it (with CI=true they fail).
import { after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { createSocket } from 'node:dgram'
import * as tools from '../index.js'
import { workspace } from './helpers.mjs'
import { needs } from './components.mjs'

// Without Chromium every test here is skipped, saying how to install it; with CI=true that fails.
const test = await needs('chromium')

const servers = []
after(async () => {
  await tools.browserStatus({}, { cwd: ws }).catch(() => {})
  for (const s of servers) { s.close(); s.closeAllConnections?.() }
  udp.close()
})

/** Reports from attack pages: kind → values (any allowed server takes them at /report). */
const reports = new Map()
function report(req) {
  const q = new URL(req.url, 'http://x').searchParams
  const k = q.get('k'); if (!reports.has(k)) reports.set(k, [])
  reports.get(k).push(q.get('v') ?? '')
}
/** Wait (at most `ms`) until kind `k` has been reported; its values. */
async function reported(k, ms = 15000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (reports.has(k)) return reports.get(k)
    await new Promise((r) => setTimeout(r, 50))
  }
  assert.fail(`the attack page never reported "${k}" (it did not run)`)
}

/** A server on `host` answering `routes[path]`, counting accepted sockets. */
async function serve(routes, host) {
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname
    if (path === '/report') { report(req); res.writeHead(204, { 'access-control-allow-origin': '*' }); res.end(); return }
    const route = routes[path]
    if (!route) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not here'); return }
    route(req, res)
  })
  const s = { conns: 0, paths: [], base: '' }
  server.on('connection', () => { s.conns++ })
  server.on('request', (req) => s.paths.push(`${req.method} ${req.url}`))
  // WebSocket handshakes: accepted, then closed (the counted socket is what matters).
  server.on('upgrade', (req, socket) => { s.paths.push(`UPGRADE ${req.url}`); socket.destroy() })
  await new Promise((resolve) => server.listen(0, host, resolve))
  servers.push(server)
  s.base = `http://${host}:${server.address().port}`
  s.port = server.address().port
  return s
}
const page = (body, type = 'text/html; charset=utf-8') => (req, res) => {
  res.writeHead(200, { 'content-type': type, 'access-control-allow-origin': '*' }); res.end(body)
}
const js = (body) => page(body, 'text/javascript')

// The forbidden hosts: TCP (HTTP and WebSocket) and UDP (STUN), counting everything that arrives.
const forbidden = await serve({ '/': page('<title>forbidden</title>FORBIDDEN CONTENT') }, '127.0.0.2')
const forbidden1 = await serve({ '/': page('<title>forbidden</title>FORBIDDEN CONTENT') }, '127.0.0.1')
const udp = createSocket('udp4'); let datagrams = 0
udp.on('message', () => { datagrams++ })
await new Promise((resolve) => udp.bind(0, '127.0.0.2', resolve))
const F = forbidden.base
const F1 = forbidden1.base
const FP = forbidden.port
/** `code` (written against F) once for each forbidden base. */
const both = (code) => [F, F1].map((f) => code.replaceAll(F, f)).join('\n')
const UP = udp.address().port

// A second allowed site (127.0.0.4): its frames are cross-site to 127.0.0.3, so out of process.
const third = await serve({
  '/frame': page(`<!doctype html><title>frame</title><script>
    Promise.allSettled([${[F, F1].map((f) => `fetch('${f}/from-oopif'), fetch('${f}/from-oopif-nocors', { mode: 'no-cors' })`).join(', ')}])
      .then(() => fetch('/report?k=oopif&v=' + (window.top !== window)))</script>`),
}, '127.0.0.4')
const T = third.base

const REPORT = (k, v = '') => `fetch('/report?k=${k}&v=' + encodeURIComponent(${v || "''"}))`
const main = await serve({
  '/fetch': page(`<!doctype html><title>fetch</title><script>
    const tries = []
    for (const f of ['${F}', '${F1}']) {
      tries.push(new Promise((r) => { const i = new Image(); i.onload = i.onerror = r; i.src = f + '/img' }))
      tries.push(new Promise((r) => { const x = new XMLHttpRequest(); x.onloadend = r; x.open('GET', f + '/xhr'); x.send() }))
      tries.push(fetch(f + '/fetch'), fetch(f + '/nocors', { mode: 'no-cors' }))
    }
    Promise.allSettled(tries).then(() => ${REPORT('fetch')})</script>`),
  '/iframe': page(`<!doctype html><title>iframe</title><iframe src="${T}/frame"></iframe><iframe src="${F}/direct-frame"></iframe><iframe src="${F1}/direct-frame"></iframe>`),
  '/worker': page(`<!doctype html><title>worker</title><script>new Worker('/worker.js')</script>`),
  '/worker.js': js(`try { importScripts('${F}/import.js') } catch (e) {}
    try { importScripts('${F1}/import.js') } catch (e) {}
    const FS = ['${F}', '${F1}']
    Promise.allSettled(FS.flatMap((f) => [fetch(f + '/from-worker'), fetch(f + '/nocors', { mode: 'no-cors' })])).then(() => ${REPORT('worker', 'self.constructor.name')})`),
  '/shared': page(`<!doctype html><title>shared</title><script>new SharedWorker('/shared.js')</script>`),
  '/shared.js': js(`const FS = ['${F}', '${F1}']
    Promise.allSettled(FS.flatMap((f) => [fetch(f + '/from-shared'), fetch(f + '/nocors', { mode: 'no-cors' })])).then(() => ${REPORT('shared', 'self.constructor.name')})`),
  '/sw': page(`<!doctype html><title>sw</title><script>
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).then(() => navigator.serviceWorker.ready)
      .then(() => ${REPORT('sw-ready')}, (e) => ${REPORT('sw-ready', 'String(e)')})</script>`),
  '/sw.js': js(`
    self.addEventListener('install', (e) => { self.skipWaiting(); e.waitUntil(Promise.allSettled([fetch('${F}/sw-install'), fetch('${F1}/sw-install')])) })
    self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()))
    self.addEventListener('fetch', (e) => {
      const u = new URL(e.request.url)
      if (u.pathname === '/sw-answered') {
        e.respondWith(fetch('${F1}/sw-fetch').catch(() => fetch('${F}/sw-fetch')).then((r) => r.text(), (err) => 'refused: ' + err)
          .then((t) => { ${REPORT('sw-fetch', 't')}; return new Response('<title>answered by the service worker</title>' + t, { headers: { 'content-type': 'text/html' } }) }))
      }
    })`),
  '/popups': page(`<!doctype html><title>popups</title>
    <button id="open-forbidden" onclick="window.open('${F}/popup'); window.open('${F1}/popup')">open forbidden</button>
    <button id="open-allowed" onclick="window.open('/popup-allowed')">open allowed</button>
    <a id="blank" target="_blank" href="${F}/blank-link">forbidden link</a>
    <a id="blank1" target="_blank" rel="opener" href="${F1}/blank-link">forbidden link</a>
    <a id="blank-allowed" target="_blank" href="/popup-allowed?via=link">allowed link</a>
    <form method="post" target="_blank" action="${F}/post"><input name="secret" value="s3cret"><button id="post">post</button></form>
    <form method="post" target="_blank" action="${F1}/post"><input name="secret" value="s3cret"><button id="post1">post</button></form>`),
  '/popup-allowed': page(`<!doctype html><title>Popup page</title><h1>Opened in a popup</h1><script>
    Promise.allSettled(['${F}', '${F1}'].flatMap((f) => [fetch(f + '/from-popup'), fetch(f + '/nocors', { mode: 'no-cors' })])).then(() => ${REPORT('popup', 'location.search')})</script>`),
  '/hints': page(`<!doctype html><title>hints</title>
    ${both(`<link rel="preconnect" href="${F}"><link rel="preconnect" href="${F}" crossorigin>
    <link rel="prefetch" href="${F}/prefetch"><link rel="preload" as="image" href="${F}/preload.png">`)}
    <link rel="dns-prefetch" href="//forbidden.invalid">
    <script>setTimeout(() => ${REPORT('hints')}, 1500)</script>`),
  '/ws': page(`<!doctype html><title>ws</title><script>
    const ws = new WebSocket('ws://127.0.0.2:${FP}/socket')
    const ws1 = new WebSocket('ws://127.0.0.1:${forbidden1.port}/socket')
    let closed = 0
    ws.onclose = ws1.onclose = () => { if (++closed === 2) ${REPORT('ws', 'String(ws.readyState) + ws1.readyState')} }</script>`),
  '/webrtc': page(`<!doctype html><title>webrtc</title><script>
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.2:${UP}' }, { urls: 'turn:127.0.0.2:${UP}?transport=udp', username: 'u', credential: 'c' }] })
    pc.createDataChannel('x')
    const cands = []
    pc.onicecandidate = (e) => { if (e.candidate) cands.push(e.candidate.candidate) }
    pc.createOffer().then((o) => pc.setLocalDescription(o))
    setTimeout(() => ${REPORT('webrtc', 'cands.join("|")')}, 3000)</script>`),
  '/ok': page('<!doctype html><title>ok</title><p>allowed</p>'),
}, '127.0.0.3')
const M = main.base

// Each attack counts from zero.
beforeEach(() => { for (const f of [forbidden, forbidden1]) { f.conns = 0; f.paths.length = 0 } datagrams = 0 })

const ws = workspace({})
const ctx = { cwd: ws, network: { allowHosts: ['127.0.0.3', '127.0.0.4'] }, confirm: async () => true }

/** After the attack has reported, give late connections a moment, then none may have reached the forbidden host. */
async function noneReached(what) {
  await new Promise((r) => setTimeout(r, 400))
  for (const f of [forbidden, forbidden1]) {
    assert.equal(f.conns, 0, `${what}: the forbidden host ${f.base} accepted ${f.conns} connection(s): ${f.paths.join(', ')}`)
  }
  assert.equal(datagrams, 0, `${what}: the forbidden host received ${datagrams} UDP datagram(s)`)
}

test('the browser runs', async () => {
  const nav = await tools.browserNavigate({ url: `${M}/ok` }, ctx)
  assert.equal(nav.data.title, 'ok')
  await noneReached('a plain navigation')
})

test('fetch, no-cors fetch, XHR and an image to the forbidden host reach nothing', async () => {
  await tools.browserNavigate({ url: `${M}/fetch` }, ctx)
  await reported('fetch')
  await noneReached('fetch/XHR/img')
})

test('a cross-site (out-of-process) iframe, and a frame pointing at the forbidden host, reach nothing', async () => {
  await tools.browserNavigate({ url: `${M}/iframe` }, ctx)
  assert.deepEqual(await reported('oopif'), ['true'], 'the cross-site frame ran inside the page')
  await noneReached('cross-site iframe')
})

test('a dedicated worker (fetch and importScripts) reaches nothing', async () => {
  await tools.browserNavigate({ url: `${M}/worker` }, ctx)
  assert.deepEqual(await reported('worker'), ['DedicatedWorkerGlobalScope'])
  await noneReached('dedicated worker')
})

test('a SharedWorker reaches nothing', async () => {
  await tools.browserNavigate({ url: `${M}/shared` }, ctx)
  assert.deepEqual(await reported('shared'), ['SharedWorkerGlobalScope'])
  await noneReached('SharedWorker')
})

test('a service worker reaches nothing, neither when installed nor when it answers a later navigation', async () => {
  await tools.browserNavigate({ url: `${M}/sw` }, ctx)
  assert.deepEqual(await reported('sw-ready'), [''], 'the service worker was registered and is active')
  const nav = await tools.browserNavigate({ url: `${M}/sw-answered` }, ctx)
  assert.equal(nav.data.title, 'answered by the service worker', 'the service worker answered the navigation')
  const [text] = await reported('sw-fetch')
  assert.match(text, /^refused: /, 'its fetch to the forbidden host failed')
  const page = await tools.browserReadPage({}, ctx)
  assert.doesNotMatch(page.content, /FORBIDDEN CONTENT/)
  await noneReached('service worker')
})

test('window.open popups: to the forbidden host nothing; an allowed popup becomes a tab the tools can use, and its fetches reach nothing', async () => {
  const nav = await tools.browserNavigate({ url: `${M}/popups` }, ctx)
  const opener = nav.data.tabId
  await tools.browserClick({ selector: '#open-forbidden' }, ctx)
  await tools.browserClick({ selector: '#open-allowed', tabId: opener }, ctx)
  assert.deepEqual(await reported('popup'), [''])
  await noneReached('window.open')
  // The allowed popup is a tab: listed, readable, and usable by id.
  let popup
  for (let i = 0; i < 100 && !popup; i++) {
    const tabs = await tools.browserGetTabs({}, ctx)
    popup = tabs.data.tabs.find((t) => t.url === `${M}/popup-allowed`)
    if (!popup) await new Promise((r) => setTimeout(r, 50))
  }
  assert.ok(popup, 'the popup is listed by browser_get_tabs')
  assert.notEqual(popup.tabId, opener)
  const read = await tools.browserReadPage({ tabId: popup.tabId }, ctx)
  assert.match(read.content, /heading "Opened in a popup"/)
  const shot = await tools.browserScreenshot({ tabId: popup.tabId }, ctx)
  assert.ok(shot.data.width > 0)
  await tools.browserCloseTab({ tabId: popup.tabId }, ctx)
})

test('target=_blank links and a form POST into a new window reach nothing; an allowed _blank link is a tab', async () => {
  const nav = await tools.browserNavigate({ url: `${M}/popups` }, ctx)
  const opener = nav.data.tabId
  for (const selector of ['#blank', '#blank1', '#post', '#post1']) await tools.browserClick({ selector, tabId: opener }, ctx)
  await tools.browserClick({ selector: '#blank-allowed', tabId: opener }, ctx)
  assert.deepEqual(await reported('popup').then((v) => v.filter((x) => x === '?via=link')), ['?via=link'])
  await noneReached('target=_blank / form POST')
  const tabs = await tools.browserGetTabs({}, ctx)
  assert.ok(tabs.data.tabs.some((t) => t.url === `${M}/popup-allowed?via=link`), JSON.stringify(tabs.data.tabs))
})

test('preconnect, dns-prefetch, prefetch and preload reach nothing', async () => {
  await tools.browserNavigate({ url: `${M}/hints` }, ctx)
  await reported('hints')
  await noneReached('resource hints')
})

test('a page WebSocket to the forbidden host reaches nothing', async () => {
  await tools.browserNavigate({ url: `${M}/ws` }, ctx)
  assert.deepEqual(await reported('ws'), ['33'], 'both sockets failed and closed')
  await noneReached('WebSocket')
})

test('WebRTC (STUN/TURN over UDP) reaches nothing', async () => {
  await tools.browserNavigate({ url: `${M}/webrtc` }, ctx)
  const [cands] = await reported('webrtc')
  assert.doesNotMatch(cands, /srflx|relay/, 'no server-reflexive or relay candidate')
  await noneReached('WebRTC')
})

test('allowed traffic still flows through the proxy: pages, workers, a cross-site frame', async () => {
  // Every report above came back through the proxy from pages, frames, workers and popups.
  assert.ok(main.paths.some((p) => p.startsWith('GET /report?k=shared')))
  assert.ok(third.paths.some((p) => p.startsWith('GET /frame')))
  const nav = await tools.browserNavigate({ url: `${T}/frame` }, ctx)
  assert.equal(nav.data.status, 200)
})
