// The platform smoke suite: what must hold on every platform the package ships to, written
// without a Unix tool (the programs it starts are this Node), so it runs unchanged on Linux,
// on Windows (under Wine here: scripts/cross/test-windows.sh) and on Linux arm64 under qemu
// (scripts/cross/test-cross.sh): files, edits with their line endings, search, a run's time
// limit and the supervisor's no-survivor guarantee (timeout, normal end, a killed Node), and
// git_status through libgit2.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { workspace, context, rejectsWith } from './helpers.mjs'

const require = createRequire(import.meta.url)
const tools = require('../index.js')
// How to start another Node: this one, or under an emulator (`EDDIE_TEST_EMULATOR`, e.g.
// `qemu-aarch64 -L /usr/aarch64-linux-gnu`, where binfmt_misc does not start arm64 programs).
const emulator = (process.env.EDDIE_TEST_EMULATOR || '').split(' ').filter(Boolean)
const [node, ...nodeArgs] = [...emulator, process.execPath]

/** Whether process `pid` is alive (signal 0: ESRCH once it is gone, on Windows too). */
function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === 'EPERM'
  }
}

async function gone(pid, ms = 5000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (!alive(pid)) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return !alive(pid)
}

async function pidFrom(file, ms = 10000) {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (existsSync(file)) {
      const t = readFileSync(file, 'utf8').trim()
      if (t) return Number(t)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`no pid in ${file}`)
}

/** A script that starts a detached grandchild (its own process group / console), which writes
 * its pid to `pidFile` and lives 60 s; the script itself then lives `ownMs` (0: exits). */
function daemonScript(pidFile, ownMs) {
  const grandchild = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => {}, 60000)`
  const argv = JSON.stringify([...nodeArgs, '-e', grandchild])
  return `const c = require('child_process').spawn(${JSON.stringify(node)}, ${argv}, { detached: true, stdio: 'ignore' }); c.unref(); setTimeout(() => {}, ${ownMs})`
}

test('files: write, read and edit keep CRLF line endings and a UTF-8 BOM', async () => {
  const ws = workspace({ 'crlf.txt': '\ufeffone\r\ntwo\r\nthree\r\n' })
  const { ctx } = context(ws)
  const r = await tools.readFile({ path: 'crlf.txt' }, ctx)
  assert.equal(r.data.eol, 'crlf')
  assert.equal(r.data.bom, true)
  assert.match(JSON.stringify(r.content), /two/)
  await tools.editFile({ path: 'crlf.txt', oldString: 'two', newString: 'zwei' }, ctx)
  assert.equal(readFileSync(join(ws, 'crlf.txt'), 'utf8'), '\ufeffone\r\nzwei\r\nthree\r\n')
  await tools.writeFile({ path: 'sub/dir/new.txt', content: 'fresh\n' }, ctx)
  assert.equal(readFileSync(join(ws, 'sub', 'dir', 'new.txt'), 'utf8'), 'fresh\n')
})

test('files: a path outside the workspace is refused; on Windows letter case does not matter', async () => {
  const ws = workspace({ 'a.txt': 'x\n' })
  const { ctx } = context(ws)
  await rejectsWith(assert, tools.readFile({ path: join(ws, '..', 'elsewhere.txt') }, ctx), 'OUTSIDE_WORKSPACE')
  const upper = join(ws.toUpperCase(), 'a.txt')
  if (process.platform === 'win32') {
    const r = await tools.readFile({ path: upper }, ctx)
    assert.equal(r.data.totalLines, 1)
  } else {
    // Case-sensitive names: the upper-case spelling is another (missing) path, not ours.
    await assert.rejects(tools.readFile({ path: upper }, ctx))
  }
})

test('search: grep and glob find what is there', async () => {
  const ws = workspace({ 'src/a.ts': 'export const needle = 1\n', 'src/b.ts': 'nothing\n', 'docs/c.md': 'needle\n' })
  const { ctx } = context(ws)
  const g = await tools.grep({ pattern: 'needle', path: '.' }, ctx)
  const text = JSON.stringify(g.data)
  assert.match(text, /a\.ts/)
  assert.match(text, /c\.md/)
  assert.doesNotMatch(text, /b\.ts/)
  const f = await tools.glob({ pattern: '**/*.ts' }, ctx)
  assert.match(JSON.stringify(f.data), /a\.ts/)
})

test('run: a time limit ends the command and its detached grandchild', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const pidFile = join(ws, 'grandchild.pid')
  // Long enough for the grandchild to be up: a Node takes a second or more to start under Wine
  // on a loaded machine, and seconds under an emulator.
  const limit = emulator.length ? 30 : 6
  const started = Date.now()
  const r = await tools.runCommand({ command: node, args: [...nodeArgs, '-e', daemonScript(pidFile, 60000)], timeout: limit }, ctx)
  assert.equal(r.data.status, 'timeout')
  assert.equal(r.data.timedOut, true)
  assert.ok(Date.now() - started < (limit + 28) * 1000, 'returned long after the limit')
  assert.ok(await gone(await pidFrom(pidFile)), 'the grandchild survived the timeout')
})

test('run: the normal end of a command ends what it left running', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const pidFile = join(ws, 'grandchild.pid')
  // The command waits until its grandchild is up, then exits.
  const script = `${daemonScript(pidFile, 0)}; const t = setInterval(() => { if (require('fs').existsSync(${JSON.stringify(pidFile)})) { clearInterval(t); process.exit(3) } }, 20)`
  const r = await tools.runCommand({ command: node, args: [...nodeArgs, '-e', script], timeout: 60 }, ctx)
  assert.equal(r.data.exitCode, 3)
  assert.ok(await gone(await pidFrom(pidFile)), 'the grandchild survived its command')
})

test('run: a killed Node takes its commands and their grandchildren with it', async () => {
  const ws = workspace()
  const pidFile = join(ws, 'grandchild.pid')
  const run = JSON.stringify({ command: node, args: [...nodeArgs, '-e', daemonScript(pidFile, 60000)], timeout: 0 })
  const host = `require(${JSON.stringify(require.resolve('../index.js'))}).runCommand(${run}, { cwd: ${JSON.stringify(ws)}, confirm: async () => true }); setInterval(() => {}, 1000)`
  const child = spawn(node, [...nodeArgs, '-e', host], { stdio: 'ignore' })
  const pid = await pidFrom(pidFile, 20000)
  assert.ok(alive(pid))
  child.kill('SIGKILL')
  assert.ok(await gone(pid, 10000), 'the grandchild outlived the Node that started it')
})

test('git: git_status reads a repository through libgit2', async () => {
  const ws = workspace({ 'a.txt': 'hello\n' })
  // A new, empty repository made by hand (no git program is needed).
  for (const d of ['.git/objects', '.git/refs/heads', '.git/refs/tags']) mkdirSync(join(ws, d), { recursive: true })
  writeFileSync(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  writeFileSync(join(ws, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n')
  const { ctx } = context(ws)
  const r = await tools.gitStatus({}, ctx)
  assert.equal(r.data.branch, 'main')
  assert.equal(r.data.clean, false)
  assert.ok(r.data.entries.some((e) => e.path === 'a.txt' && e.untracked), JSON.stringify(r.data.entries))
})
