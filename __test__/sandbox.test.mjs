// The sandbox around every command the tools start (run, bash, TunaCode's bash, process_start,
// the runners, git hooks), tested as an attacker would: writes, deletes, chmods and links outside
// the workspace, a daemon that outlives the call, a hostile hook, a loopback server, a hostile
// ctx.sandbox, a system without user namespaces. Each test uses its own temp directory as TMPDIR
// (so /tmp itself, where the fixtures live, is outside every writable root).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createServer as createTcpServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { createSession } from '../adapters/index.js'
import { workspace, rejectsWith, assertMatchesSchema } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const cli = join(root, 'bin/eddie-tools.js')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const definition = (name) => tools.toolSpecs().find((s) => s.name === name)

/** A base directory with a workspace, a temp dir, a home and a directory outside all of them. */
function fixture() {
  const base = workspace()
  const dirs = Object.fromEntries(['ws', 'tmp', 'home', 'outside'].map((d) => [d, join(base, d)]))
  for (const d of Object.values(dirs)) mkdirSync(d)
  writeFileSync(join(dirs.outside, 'existing'), 'original')
  const env = { PATH: process.env.PATH, HOME: dirs.home, TMPDIR: dirs.tmp, LANG: 'C' }
  return { ...dirs, env, ctx: (extra = {}) => ({ cwd: dirs.ws, confirm: async () => true, env, ...extra }) }
}

const sh = (command, ctx, more = {}) => tools.runCommand({ command, shell: true, ...more }, ctx)

/** The outside directory is exactly as the fixture made it. */
function untouched(f) {
  assert.deepEqual(readdirSync(f.outside), ['existing'])
  assert.equal(readFileSync(join(f.outside, 'existing'), 'utf8'), 'original')
  assert.equal(statSync(join(f.outside, 'existing')).mode & 0o777, 0o644)
}

const attacks = (o) => [
  ['create', `echo x > ${o}/new`],
  ['append', `echo x >> ${o}/existing`],
  ['delete', `rm ${o}/existing`],
  ['rename', `mv ${o}/existing ./stolen`],
  ['chmod', `chmod 600 ${o}/existing`],
  ['symlink', `ln -s /etc/passwd ${o}/sym`],
  ['hardlink', `ln ${o}/existing ${o}/hard`],
  ['hardlink-into-ws', `ln ${o}/existing ./hard && echo pwned >> ./hard`],
]
/** A script that prints the name of every attack that got through. */
const attackScript = (o) => attacks(o).map(([name, cmd]) => `(${cmd}) 2>/dev/null && echo ${name}; `).join('') + 'true'

test('run: the default sandbox is enforced and reported; writes, deletes, chmods and links outside the workspace all fail', async () => {
  const f = fixture()
  const r = await sh(attackScript(f.outside), f.ctx())
  assertMatchesSchema(definition('run').outputSchema, r.data)
  assert.equal(r.data.stdout, '', 'these got through')
  untouched(f)
  const { sandbox } = r.data
  assert.deepEqual([sandbox.mode, sandbox.network, sandbox.enforced, sandbox.reason], ['workspace-write', 'on', true, undefined])
  assert.ok(sandbox.writableRoots.includes(f.ws) && sandbox.writableRoots.includes(f.tmp), sandbox.writableRoots.join())
  // Inside the workspace and the temp directory everything works, /dev/null included.
  const ok = await sh(`set -e; echo a > in; mkdir d; ln -s in d/l; ln in h; chmod 600 in; rm h; echo t > ${f.tmp}/t; echo x > /dev/null; echo done`, f.ctx())
  assert.equal(ok.data.stdout, 'done\n', ok.data.stderr)
  assert.equal(readFileSync(join(f.tmp, 't'), 'utf8'), 't\n')
})

test('run: under read-only nothing is written, not even in the workspace; under off everything is', async () => {
  const f = fixture()
  let r = await sh(`(echo x > in) 2>/dev/null && echo ws; (echo x > ${f.tmp}/t) 2>/dev/null && echo tmp; echo ok`, f.ctx({ sandbox: 'read-only' }))
  assert.equal(r.data.stdout, 'ok\n')
  assert.ok(!existsSync(join(f.ws, 'in')) && !existsSync(join(f.tmp, 't')))
  assert.deepEqual([r.data.sandbox.mode, r.data.sandbox.enforced, r.data.sandbox.writableRoots], ['read-only', true, []])
  r = await sh(`echo x > ${f.outside}/new && echo wrote`, f.ctx({ sandbox: 'off' }))
  assert.equal(r.data.stdout, 'wrote\n')
  assert.deepEqual([r.data.sandbox.mode, r.data.sandbox.enforced], ['off', false])
  assert.match(r.data.sandbox.reason, /turned the sandbox off/)
})

test('process_start: a daemon that leaves its session and writes after the call returned is still confined', async () => {
  const f = fixture()
  const { ctx } = { ctx: f.ctx() }
  const script = `(setsid sh -c 'sleep 0.3; echo x > ${f.outside}/late 2>/dev/null; echo $? > ${f.ws}/rc' &); sleep 2`
  const r = await tools.processStart({ command: 'sh', args: ['-c', script] }, ctx)
  assertMatchesSchema(definition('process_start').outputSchema, r.data)
  assert.deepEqual([r.data.status, r.data.sandbox.mode, r.data.sandbox.enforced], ['running', 'workspace-write', true])
  for (let i = 0; i < 150 && !existsSync(join(f.ws, 'rc')); i++) await sleep(20)
  assert.notEqual(readFileSync(join(f.ws, 'rc'), 'utf8').trim(), '0', 'the daemon wrote outside')
  untouched(f)
  await tools.processKill({ id: r.data.id }, ctx)
})

test('git_commit: a pre-commit hook that writes outside the workspace fails, and no commit is made; one that writes inside works', async () => {
  const f = fixture()
  const env = { ...f.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x' }
  const git = (...args) => execFileSync('git', args, { cwd: f.ws, env, encoding: 'utf8' })
  git('init', '-q', '-b', 'main')
  writeFileSync(join(f.ws, 'a.txt'), 'a\n')
  const hook = join(f.ws, '.git/hooks/pre-commit')
  writeFileSync(hook, `#!/bin/sh\necho pwned > ${f.outside}/hooked || exit 1\n`)
  chmodSync(hook, 0o755)
  const ctx = f.ctx({ env })
  await rejectsWith(assert, tools.gitCommit({ message: 'first', stageAll: true }, ctx), 'HOOK_FAILED')
  untouched(f)
  assert.throws(() => git('rev-parse', 'HEAD'), 'no commit was made')
  // The hook may write (and stage) in the workspace.
  writeFileSync(hook, '#!/bin/sh\necho generated > gen.txt && git add gen.txt\n')
  const r = await tools.gitCommit({ message: 'first', stageAll: true }, ctx)
  assert.equal(r.data.committed, true)
  assert.equal(git('show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort().join(), 'a.txt,gen.txt')
})

test("bash (eddie's contract result) and TunaCode's bash are sandboxed; TunaCode's says so in its text", async () => {
  const f = fixture()
  await assert.rejects(tools.bash({ command: `echo x > ${f.outside}/new` }, f.ctx()), (e) => {
    assert.equal(e.code, 'COMMAND_FAILED')
    assert.match(e.stderr, /Read-only file system|Permission denied/)
    return true
  })
  const ok = await tools.bash({ command: 'echo in > in && cat in' }, f.ctx())
  assert.deepEqual(ok.data, { stdout: 'in\n', stderr: '' })
  const t = await tools.bash({ command: attackScript(f.outside), env: {} }, f.ctx())
  assert.match(t.content, /^Sandbox: workspace-write, network on$/m)
  assert.match(t.content, /STDOUT:\n\(no output\)/)
  assertMatchesSchema(definition('bash').outputSchema, t.data)
  untouched(f)
})

test('run_tests: the runners run in the sandbox and report it', async () => {
  const f = fixture()
  const r = await tools.runTests({ command: `sh -c "echo x > ${f.outside}/new"` }, f.ctx())
  assertMatchesSchema(definition('run_tests').outputSchema, r.data)
  assert.deepEqual([r.data.status, r.data.sandbox.mode, r.data.sandbox.enforced], ['failed', 'workspace-write', true])
  untouched(f)
  const declined = await tools.runTests({ command: 'true' }, { ...f.ctx(), confirm: async () => false })
  assertMatchesSchema(definition('run_tests').outputSchema, declined.data)
  assert.equal(declined.data.sandbox.mode, 'workspace-write')
})

/** A TCP server on 127.0.0.1 that counts the connections it accepts. */
async function loopbackServer() {
  let seen = 0
  const server = createTcpServer((s) => { seen++; s.destroy() })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return { port: server.address().port, seen: () => seen, close: () => new Promise((r) => server.close(r)) }
}
const connect = (port) => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo connected; true`

test("network 'off' reaches no loopback server, 'on' does, 'loopback' reaches only the command's own servers", async () => {
  const f = fixture()
  const server = await loopbackServer()
  try {
    let r = await sh(connect(server.port), f.ctx({ sandbox: { mode: 'workspace-write', network: 'off' } }))
    assert.deepEqual([r.data.stdout, r.data.sandbox.network, server.seen()], ['', 'off', 0])
    r = await sh(connect(server.port), f.ctx({ sandbox: { mode: 'off', network: 'off' } }))
    assert.deepEqual([r.data.stdout, r.data.sandbox.enforced, server.seen()], ['', true, 0])
    r = await sh(connect(server.port), f.ctx({ sandbox: { mode: 'workspace-write', network: 'loopback' } }))
    assert.deepEqual([r.data.stdout, server.seen()], ['', 0])
    const own = `node -e "const n=require('net');const s=n.createServer(c=>c.end('own\\\\n')).listen(${server.port},'127.0.0.1',()=>n.connect(${server.port},'127.0.0.1').on('data',d=>{process.stdout.write(d);s.close()}))"`
    r = await sh(own, f.ctx({ sandbox: { mode: 'workspace-write', network: 'loopback' } }))
    assert.equal(r.data.stdout, 'own\n', r.data.stderr)
    r = await sh(connect(server.port), f.ctx())
    assert.equal(r.data.stdout, 'connected\n')
    for (let i = 0; i < 50 && server.seen() === 0; i++) await sleep(10)
    assert.equal(server.seen(), 1)
  } finally {
    await server.close()
  }
})

test('bad ctx.sandbox values reject with INVALID_ARGUMENT before anything runs', async () => {
  const f = fixture()
  for (const sandbox of ['bogus', 42, true, [], {}, { mode: 'nope' }, { mode: 'workspace-write', network: 'lan' },
    { mode: 'workspace-write', writableRoots: '/tmp' }, { mode: 'workspace-write', writableRoots: [7] },
    { mode: 'read-only', writableRoots: [f.tmp] }, { mode: 'workspace-write', net: 'off' },
    { mode: 'workspace-write', writableRoots: ['does-not-exist'] }]) {
    await rejectsWith(assert, sh('touch ran', f.ctx({ sandbox })), 'INVALID_ARGUMENT', /ctx\.sandbox/)
  }
  assert.ok(!existsSync(join(f.ws, 'ran')))
  // A declared root is writable.
  const r = await sh(`echo ok > ${f.outside}/declared && echo yes`, f.ctx({ sandbox: { mode: 'workspace-write', writableRoots: [f.outside] } }))
  assert.equal(r.data.stdout, 'yes\n')
})

test('where user namespaces cannot be made: a required sandbox is SANDBOX_UNAVAILABLE (nothing runs), the default runs with Landlock alone and says so', () => {
  const f = fixture()
  // A user namespace whose limit of nested user namespaces is 0: every unshare(CLONE_NEWUSER) fails.
  const child = `
    const tools = require(${JSON.stringify(join(root, 'index.js'))})
    const ctx = (sandbox) => ({ cwd: ${JSON.stringify(f.ws)}, confirm: async () => true, env: ${JSON.stringify(f.env)}, sandbox })
    ;(async () => {
      const out = {}
      try { await tools.runCommand({ command: 'touch ran', shell: true }, ctx('workspace-write')); out.required = 'ran' } catch (e) { out.required = e.code; out.message = e.message }
      try { await tools.bash({ command: 'touch ran2' }, ctx({ mode: 'read-only' })); out.bash = 'ran' } catch (e) { out.bash = e.code }
      const r = await tools.runCommand({ command: 'echo x > ${f.outside}/new; echo rc=$?', shell: true }, ctx(undefined))
      out.sandbox = r.data.sandbox; out.stdout = r.data.stdout; out.stderr = r.data.stderr
      console.log(JSON.stringify(out))
    })()`
  const p = spawnSync('unshare', ['--user', '--map-root-user', 'sh', '-c', 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -e "$1"', process.execPath, child], { encoding: 'utf8' })
  assert.equal(p.status, 0, p.stderr)
  const out = JSON.parse(p.stdout)
  assert.equal(out.required, 'SANDBOX_UNAVAILABLE', out.message)
  assert.match(out.message, /user|namespace|unshare/i)
  assert.equal(out.bash, 'SANDBOX_UNAVAILABLE')
  assert.ok(!existsSync(join(f.ws, 'ran')) && !existsSync(join(f.ws, 'ran2')), 'a refused call ran its command')
  assert.equal(out.sandbox.enforced, false)
  assert.match(out.sandbox.reason, /namespace|unshare/)
  // Landlock alone still refuses the write.
  assert.deepEqual([out.stdout, /Permission denied/.test(out.stderr)], ['rc=1\n', true], out.stderr)
  untouched(f)
})

test("the default keeps package managers working: their caches (from the host's environment) are writable, and a registry on loopback is reachable", async () => {
  const f = fixture()
  for (const d of ['.npm', '.cache', '.cargo', '.ssh']) mkdirSync(join(f.home, d))
  const served = []
  const registry = createServer((req, res) => { served.push(req.url); res.end('{"name":"tiny"}') })
  await new Promise((r) => registry.listen(0, '127.0.0.1', r))
  try {
    const h = f.home
    const caches = ['.npm/_cacache', '.cache/pip', '.cache/uv', '.cache/yarn', '.cargo/registry/index', '.cargo/git/db']
    const r = await sh(`set -e; for d in ${caches.join(' ')}; do mkdir -p ${h}/$d && echo ok > ${h}/$d/f; done; curl -sf http://127.0.0.1:${registry.address().port}/tiny`, f.ctx())
    assert.equal(r.data.stdout, '{"name":"tiny"}', r.data.stderr)
    assert.deepEqual(served, ['/tiny'])
    for (const d of caches) assert.equal(readFileSync(join(h, d, 'f'), 'utf8'), 'ok\n')
    for (const d of ['.npm', '.cache', '.cargo/registry', '.cargo/git']) assert.ok(r.data.sandbox.writableRoots.includes(join(h, d)), d)
    // The home directory itself is not writable, even when the call's own env points a cache at it.
    const bad = await sh(`(echo k > ${h}/.ssh/authorized_keys) 2>/dev/null && echo ssh; (echo x > ${h}/.profile) 2>/dev/null && echo profile; true`, f.ctx(), { env: { XDG_CACHE_HOME: join(h, '.ssh'), npm_config_cache: h } })
    assert.equal(bad.data.stdout, '')
    assert.ok(!existsSync(join(h, '.ssh/authorized_keys')) && !existsSync(join(h, '.profile')))
  } finally {
    await new Promise((r) => registry.close(r))
  }
})

test('npm install from a registry on loopback works under the default sandbox', async () => {
  const f = fixture()
  // A one-package registry: its packument and tarball (made by npm pack).
  const pkg = join(f.tmp, 'pkg')
  mkdirSync(pkg)
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'tiny-sandboxed', version: '1.0.0', main: 'index.js' }))
  writeFileSync(join(pkg, 'index.js'), 'module.exports = 42\n')
  const tgzName = execFileSync('npm', ['pack', '--silent', pkg], { cwd: f.tmp, env: { ...process.env, npm_config_cache: join(f.tmp, 'npm-cache') }, encoding: 'utf8' }).trim()
  const tgz = readFileSync(join(f.tmp, tgzName))
  const integrity = `sha512-${createHash('sha512').update(tgz).digest('base64')}`
  const registry = createServer((req, res) => {
    const base = `http://127.0.0.1:${registry.address().port}`
    if (req.url === '/tiny-sandboxed') {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ name: 'tiny-sandboxed', 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name: 'tiny-sandboxed', version: '1.0.0', dist: { tarball: `${base}/t.tgz`, integrity } } } }))
    } else if (req.url === '/t.tgz') res.end(tgz)
    else { res.statusCode = 404; res.end('{}') }
  })
  await new Promise((r) => registry.listen(0, '127.0.0.1', r))
  try {
    writeFileSync(join(f.ws, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0' }))
    mkdirSync(join(f.home, '.npm'))
    const r = await sh(`npm install tiny-sandboxed --registry http://127.0.0.1:${registry.address().port}/ --no-audit --no-fund --no-update-notifier && node -p "require('tiny-sandboxed')"`, f.ctx(), { timeout: 120 })
    assert.equal(r.data.status, 'ok', r.data.stderr)
    assert.match(r.data.stdout, /42\n$/)
    assert.ok(readdirSync(join(f.home, '.npm')).includes('_cacache'), 'the npm cache was written')
  } finally {
    await new Promise((r) => registry.close(r))
  }
})

test('cargo build and a Python test run work under the default sandbox', async () => {
  const f = fixture()
  writeFileSync(join(f.ws, 'Cargo.toml'), '[package]\nname = "sbx"\nversion = "0.1.0"\nedition = "2021"\n')
  mkdirSync(join(f.ws, 'src'))
  writeFileSync(join(f.ws, 'src/main.rs'), 'fn main() { println!("built"); }\n')
  writeFileSync(join(f.ws, 'test_x.py'), 'import tempfile, unittest\nclass T(unittest.TestCase):\n    def test_tmp(self):\n        with tempfile.NamedTemporaryFile() as t: t.write(b"x")\n')
  // cargo's own home stays the host's (its toolchain); its registry and git caches are the writable part.
  const env = { ...f.env, CARGO_HOME: process.env.CARGO_HOME ?? join(process.env.HOME, '.cargo'), RUSTUP_HOME: process.env.RUSTUP_HOME ?? join(process.env.HOME, '.rustup') }
  const r = await sh('cargo run --quiet --offline && python3 -m unittest -q test_x 2>&1 | tail -1', f.ctx({ env }), { timeout: 300 })
  assert.equal(r.data.status, 'ok', r.data.stderr)
  assert.match(r.data.stdout, /^built\nOK\n$/)
  assert.ok(existsSync(join(f.ws, 'target')))
})

test('createSession({sandbox}), the CLI and the MCP server pass --sandbox through', async () => {
  const f = fixture()
  const session = createSession({ cwd: f.ws, env: f.env, confirm: () => true, sandbox: 'read-only' })
  const r = await session.run('run', { command: 'touch ran', shell: true })
  assert.deepEqual([r.data.sandbox.mode, existsSync(join(f.ws, 'ran'))], ['read-only', false])
  const cliRun = (...extra) => spawnSync(process.execPath, [cli, 'run', JSON.stringify({ command: 'touch ran; echo done', shell: true }), '--yes', '--cwd', f.ws, ...extra], { encoding: 'utf8', env: { ...process.env, ...f.env } })
  let p = cliRun('--sandbox', 'read-only')
  assert.equal(p.status, 0, p.stderr)
  assert.equal(JSON.parse(p.stdout).data.sandbox.mode, 'read-only')
  assert.ok(!existsSync(join(f.ws, 'ran')))
  p = cliRun('--sandbox', 'nonsense')
  assert.equal(p.status, 1)
  assert.equal(JSON.parse(p.stderr).error.code, 'INVALID_ARGUMENT')
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js')
  const client = new Client({ name: 'sandbox-test', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', '--root', f.ws, '--confirm', 'allow', '--sandbox', 'read-only'], env: { ...process.env, ...f.env }, stderr: 'pipe' }))
  try {
    const m = await client.callTool({ name: 'run', arguments: { command: 'touch ran', shell: true } })
    assert.equal(m.structuredContent.sandbox.mode, 'read-only')
    assert.ok(!existsSync(join(f.ws, 'ran')))
  } finally {
    await client.close()
  }
})
