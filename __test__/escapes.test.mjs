// Escapes closed in the web and memory families (issue 23), each attacked through the binding
// as a host would see it: an API key chased to another port, allowHosts ports, denyHosts and
// the other spellings of this host, stacked Content-Encoding layers and a bomb, a download
// folder swapped for a symlink during the confirm, a Redis server that never answers (the
// abort must settle within a second), and a MEMORY.md left inside a code fence or with a BOM.
// Every server listens on 127.0.0.1 and is closed when the file ends.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttp } from 'node:http'
import { createServer as createTcp } from 'node:net'
import { lstatSync, readdirSync, readFileSync, renameSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import * as tools from '../index.js'
import { workspace, rejectsWith } from './helpers.mjs'

const servers = []
const sockets = []
after(() => {
  for (const s of sockets) s.destroy()
  for (const s of servers) { s.close(); s.closeAllConnections?.() }
})

/** An HTTP server on 127.0.0.1: `answer(req, res)`; every request's headers are kept. */
async function serve(answer) {
  const seen = []
  const server = createHttp((req, res) => { seen.push({ url: req.url, headers: req.headers }); answer(req, res) })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return { port: server.address().port, seen }
}

/** A host that approves whatever it is asked. */
const yes = async () => true
const text = (body, extra = {}) => (req, res) => { res.writeHead(200, { 'content-type': 'text/plain', ...extra }); res.end(body) }

test('web_search: the API key goes to its own origin only, never to another port of the host on a redirect', async () => {
  const answer = JSON.stringify({ web: { results: [{ title: 'T', url: 'https://example.com/', description: 'd' }] } })
  const other = await serve(text(answer, { 'content-type': 'application/json' }))
  const provider = await serve((req, res) => { res.writeHead(307, { location: `http://127.0.0.1:${other.port}/search` }); res.end() })
  const ws = workspace()
  const env = { BRAVE_API_KEY: 'sk-never-elsewhere', BRAVE_API_URL: `http://127.0.0.1:${provider.port}/search`, TAVILY_API_KEY: '', SEARXNG_URL: '' }
  await tools.webSearch({ query: 'q' }, { cwd: ws, env, network: { allowHosts: ['127.0.0.1'] }, confirm: yes }).catch(() => {})
  assert.equal(provider.seen[0].headers['x-subscription-token'], 'sk-never-elsewhere')
  assert.equal(other.seen.length, 1, 'the redirect was followed')
  assert.equal(other.seen[0].headers['x-subscription-token'], undefined, 'the key did not reach another origin')
})

test('allowHosts entries with a port open that port only; denyHosts refuses this host in every spelling', async () => {
  const a = await serve(text('A'))
  const b = await serve(text('B'))
  const ws = workspace()
  const only = (entry) => ({ cwd: ws, network: { allowHosts: [entry] }, confirm: yes })
  const r = await tools.webFetch({ url: `http://127.0.0.1:${a.port}/`, noCache: true, format: 'raw' }, only(`127.0.0.1:${a.port}`))
  assert.equal(r.content.trim(), 'A')
  await rejectsWith(assert, tools.webFetch({ url: `http://127.0.0.1:${b.port}/`, noCache: true }, only(`127.0.0.1:${a.port}`)), 'BLOCKED_ADDRESS')
  await rejectsWith(assert, tools.checkUrl({ url: `http://127.0.0.1:${b.port}/` }, only(`[::ffff:127.0.0.1]:${a.port}`)), 'BLOCKED_ADDRESS')
  assert.equal(b.seen.length, 0)
  const denied = { cwd: ws, network: { allowPrivate: true, denyHosts: ['127.0.0.1'] }, confirm: yes }
  for (const host of ['0.0.0.0', '0', '[::]', '127.1', '0x7f.1', '2130706433', '0177.0.0.1', '[::ffff:127.0.0.1]', 'localhost.', 'LOCALHOST', '[::1]']) {
    await rejectsWith(assert, tools.webFetch({ url: `http://${host}:${a.port}/`, noCache: true }, denied), 'BLOCKED_ADDRESS')
  }
  assert.equal(a.seen.length, 1, 'only the allowed fetch reached the server')
})

test('Content-Encoding: every layer is decoded (one header or two), a two-layer bomb is TOO_LARGE', async () => {
  const plain = 'twice encoded words\n'.repeat(50)
  const twice = gzipSync(gzipSync(plain))
  const bomb = gzipSync(gzipSync(Buffer.alloc(64 << 20)))
  const s = await serve((req, res) => {
    if (req.url === '/one') { res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip, gzip' }); res.end(twice) }
    else if (req.url === '/two') { res.setHeader('content-type', 'text/plain'); res.setHeader('content-encoding', ['gzip', 'gzip']); res.end(twice) }
    else { res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip, gzip' }); res.end(bomb) }
  })
  const ws = workspace()
  const ctx = { cwd: ws, network: { allowHosts: ['127.0.0.1'] }, confirm: yes }
  for (const path of ['/one', '/two']) {
    const r = await tools.webFetch({ url: `http://127.0.0.1:${s.port}${path}`, format: 'raw', noCache: true, maxChars: 100000 }, ctx)
    assert.equal(r.content.trimEnd(), plain.trimEnd(), path)
    assert.equal(r.data.bytes, plain.length, path)
  }
  await rejectsWith(assert, tools.webFetch({ url: `http://127.0.0.1:${s.port}/bomb`, noCache: true, maxBytes: 1 << 20 }, ctx), 'TOO_LARGE')
})

test('download: a folder swapped for a symlink to outside during the confirm gets nothing written through it', async () => {
  const s = await serve(text('PAYLOAD'))
  const ws = workspace({ 'dl/keep.txt': 'k' })
  const outside = workspace()
  const ctx = {
    cwd: ws,
    network: { allowHosts: ['127.0.0.1'] },
    // Only the download's own question swaps (a gate may ask other questions first), once.
    confirm: async (text) => {
      if (text.startsWith('Download ') && !lstatSync(join(ws, 'dl')).isSymbolicLink()) {
        renameSync(join(ws, 'dl'), join(ws, 'dl.old'))
        symlinkSync(outside, join(ws, 'dl'))
      }
      return true
    },
  }
  await rejectsWith(assert, tools.download({ url: `http://127.0.0.1:${s.port}/f`, path: 'dl/f.bin' }, ctx), 'OUTSIDE_WORKSPACE')
  assert.deepEqual(readdirSync(outside), [])
  assert.deepEqual(readdirSync(join(ws, 'dl.old')), ['keep.txt'])
})

test('cache on a Redis server that accepts and never answers: the abort settles within a second', async () => {
  const silent = createTcp((sock) => { sockets.push(sock) })
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
  servers.push(silent)
  const ws = workspace()
  const env = { EDDIE_CACHE_URL: `redis://127.0.0.1:${silent.address().port}/` }
  for (const [call, args] of [[tools.cacheStore, { key: 'k', value: 'v', tier: 'project' }], [tools.cacheRetrieve, { key: 'k', tier: 'project' }]]) {
    const c = new AbortController()
    setTimeout(() => c.abort(), 200)
    const started = Date.now()
    await rejectsWith(assert, call(args, { cwd: ws, env, signal: c.signal, confirm: yes }), 'CANCELLED')
    assert.ok(Date.now() - started < 1200, `settled after ${Date.now() - started} ms`)
  }
})

test('MEMORY.md left inside a code fence: two saves of one key make one entry, and memory_list shows it; a BOM hides nothing', async () => {
  const start = '# Memory\n\n```\nunclosed paste\n'
  const ws = workspace({ 'MEMORY.md': start })
  const ctx = { cwd: ws, confirm: yes }
  const first = await tools.memorySave({ key: 'deploy', value: 'make deploy' }, ctx)
  const second = await tools.memorySave({ key: 'deploy', value: 'make deploy-prod' }, ctx)
  assert.equal(first.data.existed, false)
  assert.equal(second.data.existed, true)
  assert.match(second.content, /^Replaced/)
  const list = await tools.memoryList({}, ctx)
  assert.deepEqual(list.data.entries.map((e) => e.key), ['deploy'])
  const after = readFileSync(join(ws, 'MEMORY.md'), 'utf8')
  assert.ok(after.startsWith(start))
  assert.equal(after.split('## deploy').length, 2)
  const bom = workspace({ 'MEMORY.md': '\uFEFF## first\n\none\n' })
  const l = await tools.memoryList({}, { cwd: bom, confirm: yes })
  assert.deepEqual(l.data.entries.map((e) => e.key), ['first'])
})
