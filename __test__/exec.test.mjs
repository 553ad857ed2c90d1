// The exec family: run, background processes, project runners, permissions, workflow tools,
// and the orphan-proof supervisor under all of them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace, context, rejectsWith, tempDir } from './helpers.mjs'
import { skipReason } from './components.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// A zombie (state Z) is dead, only not yet reaped.
const alive = (pid) => {
  try { return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8')) } catch { return false }
}
const waitGone = async (pid, ms = 3000) => {
  for (let i = 0; i < ms / 20 && alive(pid); i++) await sleep(20)
  return !alive(pid)
}
/** Pids of live processes whose working directory is inside `dir` (our workspaces are unique). */
const processesIn = (dir) => readdirSync('/proc').filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => {
  try { return alive(pid) && readlinkSync(`/proc/${pid}/cwd`).startsWith(dir) } catch { return false }
})
const readPid = (ws, f) => Number(readFileSync(join(ws, f), 'utf8').trim())
const waitFile = async (p) => { for (let i = 0; i < 250 && !existsSync(p); i++) await sleep(20); return existsSync(p) }

test('run: sh -c "sleep 100 & sleep 100" with a 1 s timeout returns within 1.5 s and leaves no survivor', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const started = Date.now()
  const call = tools.runCommand({ command: 'sh', args: ['-c', 'sleep 100 & sleep 100'], timeout: 1 }, ctx)
  let seen = []
  while (seen.length < 3 && Date.now() - started < 900) { await sleep(30); seen = processesIn(ws) }
  const r = await call
  const took = Date.now() - started
  assert.ok(took < 1500, `took ${took} ms`)
  assert.ok(seen.length >= 3, `shim, sh and two sleeps expected, saw ${seen}`)
  assert.deepEqual([r.data.status, r.data.timedOut, r.data.signal, r.data.success], ['timeout', true, 'SIGTERM', false])
  assert.match(r.content, /timed out after 1 s; the whole process tree was killed/)
  for (const pid of seen) assert.ok(await waitGone(pid, 200), `pid ${pid} survived`)
  assert.deepEqual(processesIn(ws), [])
})

test('run: a double-forked daemon does not survive a timeout, nor the normal end of the command', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const daemon = 'sh -c \'(setsid sh -c "sleep 100 & echo \\$! > daemon.pid; wait" > /dev/null 2>&1 &); while [ ! -s daemon.pid ]; do sleep 0.01; done; '
  let r = await tools.runCommand({ command: 'sh', args: ['-c', `${daemon}echo up; sleep 100'`], timeout: 1 }, ctx)
  assert.equal(r.data.status, 'timeout')
  assert.equal(r.data.stdout, 'up\n')
  assert.ok(await waitGone(readPid(ws, 'daemon.pid'), 500), 'daemon survived the timeout')
  // The command ends by itself; its daemon goes with it.
  r = await tools.runCommand({ command: 'sh', args: ['-c', `${daemon}echo done'`] }, ctx)
  assert.deepEqual([r.data.status, r.data.exitCode], ['ok', 0])
  assert.ok(await waitGone(readPid(ws, 'daemon.pid'), 500), 'daemon survived the end of the command')
  assert.deepEqual(processesIn(ws), [])
})

test('run: args without a shell, exit codes, stdin, cwd, and the result shape', async () => {
  const ws = workspace({ 'sub/x.txt': 'x' })
  const { ctx, prompts } = context(ws)
  let r = await tools.runCommand({ command: 'printf', args: ['%s|', 'a b', '$HOME', '*'] }, ctx)
  assert.deepEqual([r.schema, r.data.stdout, r.data.exitCode, r.data.success], ['eddie.tool.run.result.v1', 'a b|$HOME|*|', 0, true])
  assert.equal(r.data.shell, null, 'a program with args runs without a shell')
  assert.deepEqual(prompts, ["Run command: printf '%s|' 'a b' '$HOME' '*'"])
  assert.match(r.content, /^\$ printf .*\nexit 0 \(\d+\.\d\d s\)\n--- stdout ---\na b\|\$HOME\|\*\|\n$/)
  r = await tools.runCommand({ command: 'ls "sub"' }, ctx)
  assert.deepEqual([r.data.command, r.data.args, r.data.stdout], ['ls', ['sub'], 'x.txt\n'])
  r = await tools.runCommand({ command: 'pwd', cwd: 'sub' }, ctx)
  assert.deepEqual([r.data.stdout, r.data.cwd], [`${ws}/sub\n`, 'sub'])
  r = await tools.runCommand({ command: 'sh', args: ['-c', 'echo out; echo err >&2; exit 3'] }, ctx)
  assert.deepEqual([r.data.status, r.data.exitCode, r.data.stdout, r.data.stderr], ['failed', 3, 'out\n', 'err\n'])
  assert.match(r.content, /exit 3 .*\n--- stdout ---\nout\n--- stderr ---\nerr\n/)
  r = await tools.runCommand({ command: 'sh', args: ['-c', 'kill -KILL $$'] }, ctx)
  assert.deepEqual([r.data.status, r.data.exitCode, r.data.signal], ['failed', null, 'SIGKILL'])
  r = await tools.runCommand({ command: 'cat', stdin: 'fed é\n' }, ctx)
  assert.equal(r.data.stdout, 'fed é\n')
  r = await tools.runCommand({ command: 'cat' }, ctx)
  assert.equal(r.data.stdout, '', 'stdin is empty, so cat does not hang')
  assert.deepEqual(Object.keys(r.data).sort(), Object.keys(tools.runCommandTool.outputSchema.properties).sort())
  assert.ok(tools.allTools.includes(tools.runCommandTool) && !tools.builtinTools.includes(tools.runCommandTool))
})

test('run: output keeps head and tail, counts what was omitted and keeps error lines from the middle', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const script = 'for i in $(seq 1 20000); do if [ $i = 10000 ]; then echo "error: boom in the middle"; else echo "line $i"; fi; done'
  const r = await tools.runCommand({ command: 'sh', args: ['-c', script], maxOutputBytes: 1000 }, ctx)
  const s = r.data.stdoutStats
  assert.equal(s.totalLines, 20000)
  assert.ok(s.truncated && s.omittedBytes > 100000 && s.omittedLines > 19000)
  // Head + omitted + tail = everything (the head gets a line break before the marker when it ends mid-line).
  const kept = Buffer.byteLength(r.data.stdout.split('[… ')[0]) + Buffer.byteLength(r.data.stdout.split('[end of omitted part]\n')[1])
  assert.ok([0, 1].includes(s.omittedBytes + kept - s.totalBytes), `${s.omittedBytes} + ${kept} vs ${s.totalBytes}`)
  assert.deepEqual(s.keptLines, [{ line: 10000, text: 'error: boom in the middle' }])
  assert.ok(r.data.stdout.startsWith('line 1\nline 2\n'))
  assert.ok(r.data.stdout.endsWith('line 19999\nline 20000\n'))
  assert.match(r.content, /\[… \d+ bytes \(\d+ lines\) omitted …\]\n\[error lines from the omitted part:\]\n {2}10000: error: boom in the middle\n/)
})

test('run: large output kept whole is exact in data and content, ASCII or not (it crosses into JS once)', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  for (const [word, lines] of [['line', 30000], ['línea😀', 20000]]) {
    const script = `i=0; while [ $i -lt ${lines} ]; do echo "${word} $i"; i=$((i+1)); done; echo "error: on stderr" >&2`
    const r = await tools.runCommand({ command: 'sh', args: ['-c', script], maxOutputBytes: 1 << 20 }, ctx)
    const expected = Array.from({ length: lines }, (_, i) => `${word} ${i}\n`).join('')
    assert.ok(Buffer.byteLength(expected) > 256 * 1024)
    assert.equal(r.data.stdoutStats.truncated, false)
    assert.equal(r.data.stdout, expected)
    assert.equal(r.data.stderr, 'error: on stderr\n')
    const head = `$ sh -c ${r.content.split('\n')[0].slice('$ sh -c '.length)}\n`
    assert.ok(r.content.startsWith(head))
    assert.equal(r.content.slice(r.content.indexOf('--- stdout ---\n') + 15), `${expected}--- stderr ---\nerror: on stderr\n`)
    // Keys stay in the schema's order.
    assert.deepEqual(Object.keys(r.data).slice(8, 12), ['durationMs', 'stdout', 'stderr', 'stdoutStats'])
  }
})

test('run: ctx.onOutput streams every chunk in order without splitting characters', async () => {
  const ws = workspace()
  const chunks = []
  const { ctx } = context(ws, true, { onOutput: (c) => chunks.push(c) })
  const r = await tools.runCommand({ command: 'sh', args: ['-c', 'for i in $(seq 1 3000); do printf "é😀"; done; echo; echo warn >&2'] }, ctx)
  const out = chunks.filter((c) => c.stream === 'stdout').map((c) => c.text).join('')
  const expected = 'é😀'.repeat(3000) + '\n'
  assert.ok(out === expected, `streamed ${out.length} UTF-16 units, expected ${expected.length}`)
  assert.ok(chunks.every((c) => !c.text.includes('\uFFFD')))
  assert.deepEqual(chunks.filter((c) => c.stream === 'stderr').map((c) => c.text), ['warn\n'])
  assert.equal(r.data.status, 'ok')
  // A throwing onOutput does not break the call or the process.
  const bad = await tools.runCommand({ command: 'echo', args: ['x'] }, { ...ctx, onOutput: () => { throw new Error('ignored') } })
  assert.equal(bad.data.stdout, 'x\n')
  await rejectsWith(assert, tools.runCommand({ command: 'true' }, { ...ctx, onOutput: 5 }), 'INVALID_ARGUMENT', 'ctx.onOutput must be a function')
})

test('run: secret-looking variables are dropped unless passed explicitly', async () => {
  const ws = workspace()
  const base = { PATH: process.env.PATH, GITHUB_TOKEN: 'ghp_x', OPENAI_API_KEY: 'sk', DB_PASSWORD: 'pw', PLAIN: 'ok', NPM_TOKEN: 'n' }
  const { ctx } = context(ws, true, { env: base })
  const r = await tools.runCommand({ command: 'env', env: { OPENAI_API_KEY: 'given', EXTRA: '1' }, keepEnv: ['NPM_TOKEN'] }, ctx)
  const vars = Object.fromEntries(r.data.stdout.trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2)))
  assert.deepEqual([vars.PLAIN, vars.OPENAI_API_KEY, vars.EXTRA, vars.NPM_TOKEN], ['ok', 'given', '1', 'n'])
  assert.ok(!('GITHUB_TOKEN' in vars) && !('DB_PASSWORD' in vars))
  assert.deepEqual(r.data.droppedEnv, ['DB_PASSWORD', 'GITHUB_TOKEN'])
})

test('run: an abort stops the tree and returns what was printed', async () => {
  const ws = workspace()
  const { ctx } = context(ws, true, { signal: AbortSignal.timeout(400) })
  const started = Date.now()
  const r = await tools.runCommand({ command: 'sh', args: ['-c', 'echo begun; sleep 100 & echo $! > bg.pid; sleep 100'] }, ctx)
  assert.ok(Date.now() - started < 1500)
  assert.deepEqual([r.data.status, r.data.stdout], ['cancelled', 'begun\n'])
  assert.ok(await waitGone(readPid(ws, 'bg.pid'), 500))
  const aborted = new AbortController()
  aborted.abort()
  await rejectsWith(assert, tools.runCommand({ command: 'touch', args: ['ran'] }, { ...ctx, signal: aborted.signal }), 'CANCELLED')
  assert.ok(!existsSync(join(ws, 'ran')))
})

test('run: errors (bad input, missing program, escapes) and declined confirms', async () => {
  const ws = workspace({ 'f.txt': 'x' })
  const out = tempDir('eddie-outside-')
  symlinkSync(out, join(ws, 'link'))
  const { ctx, prompts } = context(ws)
  for (const args of [{}, { command: '' }, { command: 5 }, { command: 'ls', args: [{}] }, { command: 'ls', timeout: -1 },
    { command: 'ls', timeout: 'x' }, { command: 'ls', env: 'x' }, { command: 'ls', env: { A: [1] } }, { command: 'ls', maxOutputBytes: 5 },
    { command: 'ls', cwd: 3 }, { command: 'ls', keepEnv: 'X' }, { command: 'ls', stdin: 1 }]) {
    await rejectsWith(assert, tools.runCommand(args, ctx), 'INVALID_ARGUMENT')
  }
  await rejectsWith(assert, tools.runCommand({ command: 'ls | wc', shell: false }, ctx), 'INVALID_ARGUMENT', /with shell: false.*Drop shell: false/)
  await rejectsWith(assert, tools.runCommand({ command: 'no-such-program-xyz' }, ctx), 'NOT_FOUND', 'spawn no-such-program-xyz ENOENT')
  await rejectsWith(assert, tools.runCommand({ command: 'ls', cwd: 'missing' }, ctx), 'NOT_FOUND', 'cwd does not exist: missing')
  await rejectsWith(assert, tools.runCommand({ command: 'ls', cwd: 'f.txt' }, ctx), 'NOT_A_DIRECTORY')
  for (const cwd of ['..', '/etc', 'link']) {
    await rejectsWith(assert, tools.runCommand({ command: 'touch', args: ['pwned'], cwd }, ctx), 'OUTSIDE_WORKSPACE', `Path is outside the workspace: ${cwd}`)
  }
  assert.deepEqual(prompts, [], 'nothing was asked: every error came first')
  assert.ok(!existsSync(join(out, 'pwned')))
  const no = context(ws, false).ctx
  const r = await tools.runCommand({ command: 'touch', args: ['ran'] }, no)
  assert.deepEqual([r.data.status, r.content], ['declined', 'Declined by the user: `touch ran` was not run.'])
  assert.ok(!existsSync(join(ws, 'ran')))
  await rejectsWith(assert, tools.runCommand({ command: 'touch', args: ['ran'] }, { cwd: ws, confirm: () => { throw new Error('x') } }), 'CONFIRM_FAILED')
  assert.ok(!existsSync(join(ws, 'ran')))
  assert.equal((await tools.runCommand({ command: 'echo', args: ['alive'] }, ctx)).data.stdout, 'alive\n', 'still alive')
})

test('background processes: start, wait for output, write, read with cursors, list, kill', async () => {
  const ws = workspace()
  const { ctx, prompts } = context(ws)
  let r = await tools.processStart({ command: 'sh', args: ['-c', 'echo booting; sleep 0.2; echo ready; exec cat'], waitFor: { regex: '^ready$|ready', timeout: 5 } }, ctx)
  const id = r.data.id
  assert.match(id, /^p\d+$/)
  assert.deepEqual([r.data.status, r.data.wait.satisfied, r.data.wait.reason, r.data.wait.match], ['running', true, 'regex', 'ready'])
  assert.deepEqual(prompts, ["Start background process: sh -c 'echo booting; sleep 0.2; echo ready; exec cat'"])
  r = await tools.processWrite({ id, stdin: 'ping é\n' }, ctx)
  assert.equal(r.data.bytesWritten, 8)
  r = await tools.processWait({ id, regex: 'ping', timeout: 5 }, ctx)
  assert.ok(r.data.satisfied)
  r = await tools.processRead({ id }, ctx)
  assert.deepEqual([r.data.output, r.data.cursor, r.data.nextCursor, r.data.more], ['booting\nready\nping é\n', 0, 22, false])
  r = await tools.processRead({ id, cursor: 8, maxBytes: 6 }, ctx)
  assert.deepEqual([r.data.output, r.data.nextCursor, r.data.more], ['ready\n', 14, true])
  r = await tools.processRead({ id, cursor: 22 }, ctx)
  assert.match(r.content, /^\(no new output\)\n\[p\d+ running; nextCursor 22\]$/)
  r = await tools.processList({}, ctx)
  assert.ok(r.data.processes.some((p) => p.id === id && p.status === 'running'))
  r = await tools.processWait({ id, regex: 'never', timeout: 0.3 }, ctx)
  assert.deepEqual([r.data.satisfied, r.data.reason], [false, 'timeout'])
  r = await tools.processWrite({ id, closeStdin: true }, ctx)
  r = await tools.processWait({ id, exit: true, timeout: 5 }, ctx)
  assert.deepEqual([r.data.satisfied, r.data.reason, r.data.status, r.data.exitCode], [true, 'exit', 'exited', 0])
  await rejectsWith(assert, tools.processWrite({ id, stdin: 'late' }, ctx), 'PROCESS_NOT_RUNNING')
  r = await tools.processKill({ id }, ctx)
  assert.equal(r.data.wasRunning, false)
  // Another workspace does not see it.
  const other = context(workspace()).ctx
  await rejectsWith(assert, tools.processRead({ id }, other), 'PROCESS_NOT_FOUND', /No background process p\d+ \(no background process was started in this workspace\)/)
  assert.deepEqual((await tools.processList({}, other)).data.processes, [])
})

test('background processes: kill takes the whole tree, daemons included; waits for a port', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const port = await new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
  const server = `require('net').createServer().listen(${port}, '127.0.0.1', () => console.log('listening'))`
  let r = await tools.processStart({ command: process.execPath, args: ['-e', server], waitFor: { port, timeout: 10 } }, ctx)
  assert.deepEqual([r.data.wait.satisfied, r.data.wait.reason], [true, 'port'])
  const web = r.data.id
  const script = '(setsid sh -c "trap \'\' TERM; sleep 100 & echo \\$! > daemon.pid; wait" > /dev/null 2>&1 &); sleep 100 & echo $! > bg.pid; wait'
  r = await tools.processStart({ command: 'sh', args: ['-c', script] }, ctx)
  const id = r.data.id
  assert.ok(await waitFile(join(ws, 'daemon.pid')) && await waitFile(join(ws, 'bg.pid')))
  const pids = [readPid(ws, 'daemon.pid'), readPid(ws, 'bg.pid')]
  const started = Date.now()
  r = await tools.processKill({ id }, ctx)
  assert.ok(Date.now() - started < 2500)
  assert.deepEqual([r.data.wasRunning, r.data.status, r.data.killed, r.data.signal], [true, 'exited', true, 'SIGTERM'])
  for (const pid of pids) assert.ok(await waitGone(pid, 500), `pid ${pid} survived process_kill`)
  r = await tools.processKill({ id: web, force: true }, ctx)
  assert.equal(r.data.signal, 'SIGKILL')
  r = await tools.processWait({ id: web, port, timeout: 0.2 }, ctx)
  assert.deepEqual([r.data.satisfied, r.data.reason], [false, 'exited'])
  assert.deepEqual(processesIn(ws), [])
})

test('background processes are reaped when Node exits, and when it is killed', async () => {
  for (const how of ['exit', 'SIGKILL']) {
    const ws = workspace()
    const script = `
      const t = require(${JSON.stringify(join(root, 'index.js'))})
      const ctx = { cwd: ${JSON.stringify(ws)}, confirm: () => true }
      ;(async () => {
        await t.processStart({ command: 'sh', args: ['-c', 'sleep 100 & echo $! > bg.pid; (setsid sh -c "sleep 100 & echo \\\\$! > daemon.pid; wait" &); wait'] }, ctx)
        await t.processStart({ command: 'sleep', args: ['100'] }, ctx)
        while (!require('fs').existsSync(${JSON.stringify(join(ws, 'daemon.pid'))})) await new Promise((r) => setTimeout(r, 10))
        console.log('ready')
        // Exit (or wait to be killed) once the test has seen every process.
        process.stdin.once('data', () => { ${how === 'exit' ? 'process.exit(0)' : ''} })
      })()`
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
    await new Promise((resolve) => child.stdout.on('data', (d) => { if (String(d).includes('ready')) resolve() }))
    const pids = [...processesIn(ws), readPid(ws, 'bg.pid'), readPid(ws, 'daemon.pid')]
    assert.ok(pids.length >= 5, `${pids} ${JSON.stringify(pids.map((p) => { try { return readFileSync(`/proc/${p}/cmdline`, "utf8") } catch { return "gone" } }))}`)
    if (how === 'SIGKILL') child.kill('SIGKILL')
    else child.stdin.write('go\n')
    await new Promise((resolve) => child.on('exit', resolve))
    for (const pid of pids) assert.ok(await waitGone(pid, 4000), `${how}: pid ${pid} survived its Node process`)
  }
})

test('background processes: errors, escapes, declines and the process limit', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  for (const [fn, args] of [['processRead', {}], ['processRead', { id: 'p1', cursor: -1 }], ['processWrite', { id: 5.5 }],
    ['processWait', { id: [] }], ['processKill', {}], ['processStart', {}], ['processStart', { command: 'x', waitFor: 3 }]]) {
    await rejectsWith(assert, tools[fn](args, ctx), 'INVALID_ARGUMENT')
  }
  for (const fn of ['processRead', 'processWrite', 'processWait', 'processKill']) {
    const args = fn === 'processWrite' ? { id: 'p999999', stdin: 'x' } : { id: 'p999999' }
    await rejectsWith(assert, tools[fn](args, ctx), 'PROCESS_NOT_FOUND')
  }
  // An argument the tool does not take is refused (never silently ignored), naming the valid ones.
  await rejectsWith(assert, tools.processRead({ id: 'p999999', stdin: 'x' }, ctx), 'INVALID_ARGUMENT',
    /processRead|process_read: unknown argument `stdin`; valid arguments: id, cursor, maxBytes/)
  const { data: { id } } = await tools.processStart({ command: 'sleep', args: ['100'] }, ctx)
  await rejectsWith(assert, tools.processWait({ id, regex: '(' }, ctx), 'INVALID_REGEX')
  await rejectsWith(assert, tools.processWait({ id, port: 70000 }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.processWrite({ id }, ctx), 'INVALID_ARGUMENT', 'give stdin text to write, or closeStdin: true')
  await rejectsWith(assert, tools.processWrite({ id, stdin: 'x', timeout: -1 }, ctx), 'INVALID_ARGUMENT')
  // `sleep` never reads: a write bigger than the pipe buffer times out.
  await rejectsWith(assert, tools.processWrite({ id, stdin: 'x'.repeat(1 << 20), timeout: 0.3 }, ctx), 'TIMEOUT', /did not read its stdin within 0.3 s/)
  await rejectsWith(assert, tools.processStart({ command: 'ls', cwd: '..' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.processStart({ command: 'no-such-program-xyz' }, ctx), 'NOT_FOUND', 'spawn no-such-program-xyz ENOENT')
  const no = context(ws, false).ctx
  let r = await tools.processStart({ command: 'touch', args: ['ran'] }, no)
  assert.deepEqual([r.data.status, r.data.id], ['declined', null])
  r = await tools.processWrite({ id, stdin: 'x' }, no)
  assert.deepEqual([r.data.declined, r.data.bytesWritten], [true, 0])
  await sleep(100)
  assert.ok(!existsSync(join(ws, 'ran')))
  // The limit: 32 running at once.
  const started = [id]
  let err
  for (let i = 0; i < 40 && !err; i++) {
    try { started.push((await tools.processStart({ command: 'sleep', args: ['100'] }, ctx)).data.id) } catch (e) { err = e }
  }
  assert.equal(err?.code, 'TOO_MANY_PROCESSES')
  await Promise.all(started.map((p) => tools.processKill({ id: p, force: true }, ctx)))
  assert.equal((await tools.processList({}, ctx)).data.running, 0)
})

test('detect_project and the runners: detected and explicit commands, test counts, errors', async () => {
  const ws = workspace({
    'package.json': JSON.stringify({ name: 'demo', scripts: { test: 'node --test', lint: 'node -e "console.log(\'linted\')"', build: 'node -e "process.exit(2)"' } }),
    'pnpm-lock.yaml': '',
    'a.test.mjs': "import test from 'node:test'\ntest('adds', () => {})\ntest('subtracts', () => { throw new Error('nope') })\ntest.skip('later', () => {})\n",
    'Makefile': 'fmt:\n\t@echo formatted\n',
    'sub/.keep': '',
  })
  const { ctx, prompts } = context(ws)
  let r = await tools.detectProject({}, ctx)
  assert.deepEqual([r.data.types, r.data.packageManager, r.data.name, r.data.primary], [['node', 'make'], 'pnpm', 'demo', 'node'])
  assert.deepEqual(r.data.commands.test, { command: 'pnpm test', argv: ['pnpm', 'test'], source: 'package.json scripts.test' })
  assert.deepEqual(r.data.commands.format, { command: 'make fmt', argv: ['make', 'fmt'], source: 'Makefile target fmt' })
  assert.equal(r.data.commands.typecheck, null)
  // pnpm may not be installed: run the tests through npm explicitly, with extra args.
  // (NODE_TEST_CONTEXT, set by our own runner, would change the child's reporting: unset it.)
  r = await tools.runTests({ command: 'node --test', args: ['a.test.mjs'], env: { NODE_TEST_CONTEXT: null } }, ctx)
  assert.deepEqual([r.data.status, r.data.exitCode, r.data.commandSource, r.data.action, r.data.shell], ['failed', 1, 'explicit', 'test', null])
  assert.deepEqual(r.data.tests, { runner: 'node:test', passed: 1, failed: 1, skipped: 1, total: 3, failures: ['subtracts'] })
  assert.match(r.content, /\ntests \(node:test\): 1 passed, 1 failed, 1 skipped; failed: subtracts\n/)
  assert.ok(r.data.durationMs > 0)
  r = await tools.format({}, ctx)
  assert.deepEqual([r.data.status, r.data.stdout, r.data.commandSource, r.data.tests], ['ok', 'formatted\n', 'detected', null])
  r = await tools.build({ command: ['node', '-e', 'process.exit(2)'] }, ctx)
  assert.deepEqual([r.data.status, r.data.exitCode], ['failed', 2])
  r = await tools.lint({ command: 'echo linted && echo twice' }, ctx)
  assert.deepEqual([r.data.command, r.data.stdout, r.data.shell], ['/bin/sh', 'linted\ntwice\n', 'sh'])
  await rejectsWith(assert, tools.typecheck({}, ctx), 'NO_RUNNER', /No typecheck command found for \. \(project types: node, make\)\. Pass `command`/)
  await rejectsWith(assert, tools.install({ path: 'sub' }, ctx), 'NO_RUNNER', /project types: none/)
  await rejectsWith(assert, tools.runTests({ path: '..' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.detectProject({ projectPath: '/etc' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.build({ command: 7 }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.runTests({ args: 'x' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.detectProject({ path: 1 }, ctx), 'INVALID_ARGUMENT')
  const before = prompts.length
  const no = context(ws, false).ctx
  r = await tools.build({ command: 'touch built' }, no)
  assert.deepEqual([r.data.status, r.data.tool, r.data.tests], ['declined', 'build', null])
  assert.ok(!existsSync(join(ws, 'built')))
  assert.equal(prompts.length, before)
})

test('permission levels: moderate asks once per session, dangerous on every call; check_permission tells', async () => {
  const ws = workspace({ 'Makefile': 'lint:\n\t@echo ok\ntest:\n\t@echo ok\n' })
  const prompts = []
  let answer = false
  const ctx = { cwd: ws, confirm: (m) => { prompts.push(m); return answer } }
  let r = await tools.checkPermission({ toolName: 'lint' }, ctx)
  assert.deepEqual(r.data, { toolName: 'lint', level: 'moderate', granted: false, willAsk: true, session: true })
  // A declined moderate question is not remembered.
  assert.equal((await tools.lint({}, ctx)).data.status, 'declined')
  answer = true
  assert.equal((await tools.lint({}, ctx)).data.status, 'ok')
  assert.equal((await tools.lint({}, ctx)).data.status, 'ok')
  assert.equal(prompts.length, 2)
  assert.match(prompts[1], /^Lint: make lint\n\(Allow lint for the rest of this session\?\)$/)
  r = await tools.checkPermission({ toolName: 'lint' }, ctx)
  assert.deepEqual([r.data.granted, r.data.willAsk], [true, false])
  // Dangerous: every call.
  await tools.runTests({}, ctx)
  await tools.runTests({}, ctx)
  assert.equal(prompts.length, 4)
  assert.deepEqual((await tools.checkPermission({ toolName: 'run_tests' }, ctx)).data, { toolName: 'run_tests', level: 'dangerous', granted: false, willAsk: true, session: true })
  // A fresh ctx object is a fresh session; a sessionId spans objects.
  await tools.lint({}, { ...ctx })
  assert.equal(prompts.length, 5)
  await tools.lint({}, { ...ctx, sessionId: 's1' })
  await tools.lint({}, { ...ctx, sessionId: 's1' })
  assert.equal(prompts.length, 6)
  // Levels of the other tools; eddie's tools keep their own confirm behaviour.
  const level = async (toolName) => (await tools.checkPermission({ toolName }, ctx)).data
  assert.deepEqual([(await level('process_read')).level, (await level('process_read')).willAsk], ['none', false])
  assert.deepEqual([(await level('bash')).level, (await level('bash')).willAsk], ['dangerous', true])
  assert.deepEqual([(await level('fileRead')).level, (await level('fileRead')).willAsk], ['none', false])
  await rejectsWith(assert, tools.checkPermission({ toolName: 'nope' }, ctx), 'UNKNOWN_TOOL')
  await rejectsWith(assert, tools.checkPermission({}, ctx), 'INVALID_ARGUMENT')
  const specs = Object.fromEntries(tools.toolSpecs().filter((s) => s.family === 'exec').map((s) => [s.name, s.permission]))
  assert.deepEqual(specs, {
    run: 'dangerous', process_start: 'dangerous', process_read: 'none', process_write: 'dangerous', process_wait: 'none', process_kill: 'none',
    process_list: 'none', detect_project: 'none', run_tests: 'dangerous', lint: 'moderate', format: 'dangerous', typecheck: 'moderate',
    build: 'dangerous', install: 'dangerous', check_permission: 'none', ask_user: 'none', ask_followup_question: 'none', attempt_completion: 'none',
  })
})

test('ask_user, ask_followup_question and attempt_completion', async () => {
  const ws = workspace()
  const asked = []
  const ctx = { cwd: ws, ask: async (q) => { asked.push(q); return 'config/' } }
  let r = await tools.askUser({ question: 'Where?' }, ctx)
  assert.deepEqual([r.schema, r.content, r.data], ['eddie.tool.ask_user.result.v1', 'config/', { question: 'Where?', answer: 'config/' }])
  r = await tools.askFollowupQuestion({ question: 'Which dir?', options: ['config/', 'src/config/'] }, { cwd: ws, ask: (q) => { asked.push(q); return '' } })
  assert.deepEqual([r.content, r.data.options], ['(the user gave an empty answer)', ['config/', 'src/config/']])
  assert.deepEqual(asked, ['Where?', 'Which dir?\nOptions:\n1. config/\n2. src/config/'])
  await rejectsWith(assert, tools.askUser({ question: 'x' }, { cwd: ws }), 'ASK_UNAVAILABLE', /needs a way to reach the user \(ctx\.ask\)/)
  for (const ask of [() => { throw new Error('boom') }, async () => { throw new Error('no') }, () => 42]) {
    await rejectsWith(assert, tools.askFollowupQuestion({ question: 'x' }, { cwd: ws, ask }), 'ASK_FAILED')
  }
  await rejectsWith(assert, tools.askUser({ question: ' ' }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.askUser({ question: 'x' }, { cwd: ws, ask: 'yes' }), 'INVALID_ARGUMENT', 'ctx.ask must be a function')
  const slow = { cwd: ws, ask: () => new Promise(() => {}), signal: AbortSignal.timeout(100) }
  await rejectsWith(assert, tools.askUser({ question: 'x' }, slow), 'CANCELLED')
  r = await tools.attemptCompletion({ result: 'Created hello.py and ran it.', command: 'python hello.py' }, { cwd: ws })
  assert.deepEqual(r.data, { completed: true, result: 'Created hello.py and ran it.', command: 'python hello.py' })
  assert.equal(r.content, 'Created hello.py and ran it.\n\nTo see the result: python hello.py')
  await rejectsWith(assert, tools.attemptCompletion({ result: '' }, { cwd: ws }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.attemptCompletion({ result: 'x', command: 1 }, { cwd: ws }), 'INVALID_ARGUMENT')
})

test('the CLI runs exec tools: --yes to run, no TTY means APPROVAL_REQUIRED, ask without a TTY is unavailable', () => {
  const ws = workspace()
  mkdirSync(join(ws, 'd'))
  const cli = join(root, 'bin/eddie-tools.js')
  const run = (args) => spawnSync(process.execPath, [cli, ...args], { cwd: ws, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  let r = run(['run', '{"command":"echo","args":["hi"]}', '--yes'])
  assert.equal(JSON.parse(r.stdout).data.stdout, 'hi\n')
  r = run(['runCommand', '{"command":"touch ran"}'])
  assert.equal(r.status, 3)
  assert.equal(JSON.parse(r.stderr).error.code, 'APPROVAL_REQUIRED')
  assert.ok(!existsSync(join(ws, 'ran')))
  r = run(['ask_user', '{"question":"?"}'])
  assert.equal(r.status, 1)
  assert.equal(JSON.parse(r.stderr).error.code, 'ASK_UNAVAILABLE')
  r = run(['detect_project', '{}'])
  assert.deepEqual(JSON.parse(r.stdout).data.types, [])
})

// ---- shell: true, and the destructive-command gate (issue 16)

/** A ctx whose confirm gives `answers` in turn (then false) and records every prompt. */
function scripted(cwd, answers, extra = {}) {
  const prompts = []
  const queue = [...answers]
  return { prompts, ctx: { cwd, confirm: async (m) => { prompts.push(m); return queue.shift() ?? false }, ...extra } }
}

test('run with shell: true runs a command line with bash, env added to the environment', async () => {
  const ws = workspace()
  const { ctx } = context(ws)
  const r = await tools.runCommand({ command: 'echo "$GREETING" | tr a-z A-Z && pwd', shell: true, env: { GREETING: 'hi' } }, ctx)
  assert.equal(r.data.stdout, `HI\n${ws}\n`)
  assert.deepEqual([r.data.command, r.data.shell], ['bash', 'bash'], 'the result names the shell that ran the line')
  assert.deepEqual(r.data.risk, [])
  assert.ok(r.data.stdoutStats, 'the usual result shape')
  await rejectsWith(assert, tools.runCommand({ command: 'ls', args: ['-l'], shell: true }, ctx), 'INVALID_ARGUMENT', /drop `args`/)
  // A command line alone is run by bash too (as the seeds document it); a plain one runs the
  // same without it. shell: false refuses shell syntax, naming the way out.
  const line = await tools.runCommand({ command: 'echo a | tr a b' }, ctx)
  assert.deepEqual([line.data.command, line.data.args, line.data.stdout, line.data.shell], ['bash', ['-c', 'echo a | tr a b'], 'b\n', 'bash'])
  const plain = await tools.runCommand({ command: "echo 'a  b' c" }, ctx)
  assert.deepEqual([plain.data.command, plain.data.args, plain.data.stdout, plain.data.shell], ['echo', ['a  b', 'c'], 'a  b c\n', null])
  const builtin = await tools.runCommand({ command: 'cd / && pwd' }, ctx)
  assert.equal(builtin.data.stdout, '/\n')
  await rejectsWith(assert, tools.runCommand({ command: 'echo a | cat', shell: false }, ctx), 'INVALID_ARGUMENT', /shell: false/)
})

test('a destructive command needs a second, explicit confirm naming the rule; declining changes nothing', async () => {
  const ws = workspace({ 'build/x.o': 'x' })
  const victim = tempDir('eddie-victim-')
  writeFileSync(join(victim, 'keep.txt'), 'precious')
  // Approved as a command, declined as destructive: nothing runs.
  let s = scripted(ws, [true, false])
  let r = await tools.runCommand({ command: `rm -rf ${victim}`, shell: true }, s.ctx)
  assert.equal(r.data.status, 'declined')
  assert.equal(s.prompts.length, 2)
  assert.match(s.prompts[1], /^Destructive command: \[rm-recursive\] recursive delete of `.*eddie-victim-.*`: it is outside the workspace/)
  assert.deepEqual(r.data.risk.map((f) => f.rule), ['rm-recursive'])
  assert.ok(existsSync(join(victim, 'keep.txt')))
  // The same through args (no shell) and through bash -c: still found.
  s = scripted(ws, [true, false])
  r = await tools.runCommand({ command: 'bash', args: ['-c', `cd / && rm -r -f ${victim}`] }, s.ctx)
  assert.equal(r.data.status, 'declined')
  assert.ok(existsSync(join(victim, 'keep.txt')))
  // Both confirms given: it runs, and the result still lists what was found.
  s = scripted(ws, [true, true])
  r = await tools.runCommand({ command: 'rm', args: ['-rf', victim] }, s.ctx)
  assert.equal(r.data.status, 'ok')
  assert.equal(r.data.risk[0].rule, 'rm-recursive')
  assert.ok(!existsSync(victim))
  // Look-alikes ask once and report no risk.
  for (const command of ['rm -rf ./build', 'echo "rm -rf /"', 'git push --force-with-lease 2>/dev/null || true']) {
    s = scripted(ws, [true])
    r = await tools.runCommand({ command, shell: true }, s.ctx)
    assert.equal(s.prompts.length, 1, command)
    assert.deepEqual(r.data.risk, [], command)
  }
  assert.ok(!existsSync(join(ws, 'build')))
})

test('process_start has the same gate: a background destructive command is declined unless confirmed twice', async () => {
  const ws = workspace()
  const victim = tempDir('eddie-victim-')
  const s = scripted(ws, [true, false])
  const r = await tools.processStart({ command: `sleep 0.05; rm -rf ${victim}`, shell: true }, s.ctx)
  assert.equal(r.data.status, 'declined')
  assert.equal(s.prompts.length, 2)
  assert.match(s.prompts[0], /^Start background process: bash -c/)
  assert.match(s.prompts[1], /\[rm-recursive\]/)
  assert.deepEqual(r.data.risk.map((f) => f.rule), ['rm-recursive'])
  await sleep(200)
  assert.ok(existsSync(victim))
  const ok = scripted(ws, [true])
  const started = await tools.processStart({ command: 'echo started; sleep 0.05', shell: true, waitFor: { exit: true } }, ok.ctx)
  assert.deepEqual(started.data.risk, [])
  assert.equal(ok.prompts.length, 1)
})

// ---- runner targets, filters and tool choice (Stack's semantics, issue 16)

test('run_tests: path is the target, the project is found above it, pattern and verbose map to the runner', async () => {
  const ws = workspace({
    'web/package.json': JSON.stringify({ name: 'web', scripts: { test: 'node --test' } }),
    'web/test/math.test.mjs': "import test from 'node:test'\ntest('adds', () => {})\ntest('subtracts', () => {})\n",
    'web/test/other.test.mjs': "import test from 'node:test'\ntest('other', () => {})\n",
  })
  const { ctx } = context(ws, true, { env: { ...process.env, NODE_TEST_CONTEXT: undefined } })
  const r = await tools.runTests({ path: 'web/test/math.test.mjs', pattern: 'adds', verbose: true }, ctx)
  assert.equal(r.data.cwd, 'web', 'the project was found by walking up')
  assert.deepEqual(r.data.args, ['test', '--', '--test-name-pattern=adds', '--test-reporter=spec', 'test/math.test.mjs'])
  assert.equal(r.data.status, 'ok', r.data.stderr)
  assert.match(r.data.stdout, /adds/)
  assert.doesNotMatch(r.data.stdout, /other/)
  // Stack's own call: a directory target.
  const all = await tools.runTests({ path: 'web/test' }, ctx)
  assert.deepEqual(all.data.args, ['test', '--', 'test'])
  // An explicit project, and a path outside it.
  const explicit = await tools.runTests({ project: 'web', path: 'web/test/other.test.mjs' }, ctx)
  assert.deepEqual(explicit.data.args, ['test', '--', 'test/other.test.mjs'])
  await rejectsWith(assert, tools.runTests({ projectPath: 'web/test', path: 'web/package.json' }, ctx), 'INVALID_ARGUMENT', /not inside the project/)
  await rejectsWith(assert, tools.runTests({ path: 'web/missing.mjs' }, ctx), 'NOT_FOUND')
  await rejectsWith(assert, tools.runTests({ path: '../elsewhere' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.runTests({ command: 'npm test', pattern: 'adds' }, ctx), 'INVALID_ARGUMENT', /runs as given/)
})

test('a runner that cannot take a pattern or a target refuses it, naming the runner', async () => {
  const ws = workspace({ Makefile: 'test:\n\ttrue\nlint:\n\ttrue\n', 'src/a.c': '' })
  const { ctx, prompts } = context(ws)
  await rejectsWith(assert, tools.runTests({ pattern: 'adds' }, ctx), 'INVALID_ARGUMENT', /`make test` cannot take `pattern`/)
  await rejectsWith(assert, tools.lint({ path: 'src/a.c' }, ctx), 'INVALID_ARGUMENT', /`make lint` cannot take a target path/)
  await rejectsWith(assert, tools.lint({ pattern: 'x' }, ctx), 'INVALID_ARGUMENT', /cannot take `pattern`/)
  assert.equal(prompts.length, 0, 'refused before anyone is asked')
})

test("Stack's linter / formatter / package_manager choose the tool; a missing one is NO_RUNNER naming the executable", async () => {
  const ws = workspace({ 'pyproject.toml': '[project]\nname = "p"\n', 'stack_cli/a.py': 'x = 1\n' })
  const bin = join(ws, '.bin')
  mkdirSync(bin)
  for (const tool of ['ruff', 'black']) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho ${tool} "$@"\n`, { mode: 0o755 })
  }
  const env = { ...process.env, PATH: `${bin}:/usr/bin:/bin` }
  const { ctx } = context(ws, true, { env })
  const lint = await tools.lint({ path: 'stack_cli/', linter: 'ruff' }, ctx)
  // ruff is asked for its JSON report; this stand-in prints something else, so no findings.
  assert.equal(lint.data.stdout, 'ruff check --output-format=json stack_cli\n')
  assert.equal(lint.data.commandSource, 'chosen')
  assert.equal(lint.data.findings, null)
  const fmt = await tools.format({ path: '.', formatter: 'black' }, ctx)
  assert.equal(fmt.data.stdout, 'black .\n')
  await rejectsWith(assert, tools.lint({ linter: 'pylint' }, ctx), 'NO_RUNNER', /`pylint` executable was not found/)
  await rejectsWith(assert, tools.install({ package_manager: 'poetry' }, ctx), 'NO_RUNNER', /`poetry`/)
  await rejectsWith(assert, tools.lint({ linter: 'flake9' }, ctx), 'INVALID_ARGUMENT', /choose one of: ruff, pylint/)
})

test('lint: ruff findings as {path, line, column, rule, message, severity}, read from its JSON report', async (t) => {
  const why = await skipReason('ruff') // CI=true: a missing ruff fails
  if (why) return t.skip(why)
  const ws = workspace({ 'pyproject.toml': '[project]\nname = "p"\n', 'pkg/a.py': 'import os\n', 'pkg/clean.py': 'x = 1\n' })
  const { ctx } = context(ws, true, { env: process.env })
  const r = await tools.lint({ linter: 'ruff', path: 'pkg' }, ctx)
  assert.deepEqual(r.data.args, ['check', '--output-format=json', 'pkg'])
  assert.equal(r.data.findingsFrom, 'ruff')
  assert.deepEqual(r.data.findings, [{ path: 'pkg/a.py', line: 1, column: 8, rule: 'F401', message: '`os` imported but unused', severity: 'error' }])
  assert.match(r.content, /--- findings \(ruff: 1 errors, 0 warnings\) ---\npkg\/a\.py:1:8 error \[F401\] `os` imported but unused\n/)
  assert.doesNotMatch(r.content, /"filename"/, 'the JSON report stays out of the text')
  const clean = await tools.lint({ linter: 'ruff', path: 'pkg/clean.py' }, ctx)
  assert.deepEqual([clean.data.success, clean.data.findings], [true, []])
})

test('format: the files the formatter changed are named (ruff format; any command)', async (t) => {
  const ws = workspace({ 'pyproject.toml': '[project]\nname = "p"\n', 'src/a.py': 'x=1\n', 'src/b.py': 'y = 2\n', 'other.py': 'z=3\n' })
  const { ctx } = context(ws, true, { env: process.env })
  // Any command: what it changed or created below the project.
  let r = await tools.format({ command: 'echo y > src/new.txt' }, ctx)
  assert.deepEqual(r.data.changedFiles, ['src/new.txt'])
  assert.match(r.content, /files changed \(1\): src\/new\.txt\n/)
  r = await tools.format({ command: 'true' }, ctx)
  assert.deepEqual(r.data.changedFiles, [])
  assert.match(r.content, /files changed: none/)
  const why = await skipReason('ruff') // CI=true: a missing ruff fails
  if (why) return t.skip(why)
  r = await tools.format({ formatter: 'ruff', path: 'src' }, ctx)
  assert.deepEqual(r.data.changedFiles, ['src/a.py'])
  assert.equal(readFileSync(join(ws, 'src/a.py'), 'utf8'), 'x = 1\n')
  assert.equal(readFileSync(join(ws, 'other.py'), 'utf8'), 'z=3\n', 'outside the target: untouched')
})

test('typecheck: tsc findings, read from --pretty false', async () => {
  const ws = workspace({
    'package.json': JSON.stringify({ name: 'p', devDependencies: { typescript: '*' } }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, files: ['src/a.ts'] }),
    'src/a.ts': 'export const n: number = "one"\n',
  })
  symlinkSync(join(root, 'node_modules'), join(ws, 'node_modules'))
  const { ctx } = context(ws, true, { env: process.env })
  const r = await tools.typecheck({ runner: 'tsc' }, ctx)
  assert.equal(r.data.findingsFrom, 'tsc')
  assert.deepEqual(r.data.findings.map(({ path, line, column, rule, severity }) => ({ path, line, column, rule, severity })),
    [{ path: 'src/a.ts', line: 1, column: 14, rule: 'TS2322', severity: 'error' }])
  assert.match(r.data.findings[0].message, /Type 'string' is not assignable to type 'number'/)
})

test('lint: clippy findings from cargo --message-format=json, paths relative to the workspace', async () => {
  const ws = workspace({
    'crate/Cargo.toml': '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n[workspace]\n',
    'crate/src/lib.rs': 'pub fn f() -> u32 {\n    return 1;\n}\n',
  })
  const { ctx } = context(ws, true, { env: { ...process.env, CARGO_TARGET_DIR: join(ws, '.target') } })
  const r = await tools.lint({ linter: 'clippy', path: 'crate' }, ctx)
  assert.equal(r.data.findingsFrom, 'cargo')
  const f = r.data.findings.find((x) => x.rule === 'clippy::needless_return')
  assert.ok(f, JSON.stringify(r.data.findings))
  assert.deepEqual([f.path, f.line, f.column, f.severity], ['crate/src/lib.rs', 2, 5, 'warning'])
})

test("bash with TunaCode's keys (env, timeout, capture_output): env added, secrets dropped, TunaCode's sections, exit codes as results", async () => {
  const ws = workspace({ 'sub/f.txt': 'x\n' })
  const { ctx, prompts } = context(ws, true, { env: { PATH: process.env.PATH, API_TOKEN: 's3cret', HOME: ws } })
  let r = await tools.bash({ command: 'echo "$MY_VAR-$API_TOKEN"; ls', env: { MY_VAR: 'test' }, cwd: 'sub' }, ctx)
  assert.equal(r.content, 'Command: echo "$MY_VAR-$API_TOKEN"; ls\nExit Code: 0\nWorking Directory: sub\nSandbox: workspace-write, network on\n\nSTDOUT:\ntest-\nf.txt\n\nSTDERR:\n(no errors)')
  assert.deepEqual(r.data, { stdout: 'test-\nf.txt\n', stderr: '' })
  assert.equal(prompts.at(-1), 'Run command: echo "$MY_VAR-$API_TOKEN"; ls')
  // A secret passed explicitly is passed.
  r = await tools.bash({ command: 'echo "$API_TOKEN"', env: { API_TOKEN: 'given' } }, ctx)
  assert.equal(r.data.stdout, 'given\n')
  // A failing exit is a result, not an error.
  r = await tools.bash({ command: 'echo oops >&2; exit 3', timeout: 5 }, ctx)
  assert.match(r.content, /^Command: echo oops >&2; exit 3\nExit Code: 3\n[\s\S]*STDOUT:\n\(no output\)\n\nSTDERR:\noops$/)
  r = await tools.bash({ command: 'sleep 5', timeout: 0.3 }, ctx)
  assert.match(r.content, /Exit Code: timed out after 0.3 s/)
  r = await tools.bash({ command: 'echo hidden', capture_output: false }, ctx)
  assert.match(r.content, /STDOUT:\n\(not captured\)/)
  // eddie's bash without those keys keeps its contract: a failing exit throws.
  await rejectsWith(assert, tools.bash({ command: 'exit 3' }, ctx), 'COMMAND_FAILED')
  // Bad input and escapes.
  await rejectsWith(assert, tools.bash({ command: 'true', timeout: 301 }, ctx), 'INVALID_ARGUMENT', /at most 300/)
  await rejectsWith(assert, tools.bash({ command: 'true', env: { A: 1 } }, ctx), 'INVALID_ARGUMENT', /object of strings/)
  await rejectsWith(assert, tools.bash({ command: 'true', env: {}, maxBytes: 5 }, ctx), 'INVALID_ARGUMENT', /unknown argument `maxBytes`/)
  await rejectsWith(assert, tools.bash({ command: 'true', env: {}, cwd: '../..' }, ctx), 'OUTSIDE_WORKSPACE')
})

test("bash with TunaCode's keys: a declined confirm runs nothing; a destructive command needs a second confirm", async () => {
  const ws = workspace()
  const declined = context(ws, false, { env: { PATH: process.env.PATH } })
  const r = await tools.bash({ command: 'touch made', env: {} }, declined.ctx)
  assert.equal(r.content, 'Command rejected by user.')
  assert.equal(existsSync(join(ws, 'made')), false)
  const answers = [true, false]
  const prompts = []
  const ctx = { cwd: ws, env: { PATH: process.env.PATH }, confirm: async (m) => { prompts.push(m); return answers.shift() } }
  const r2 = await tools.bash({ command: 'touch made; rm -rf /', timeout: 5 }, ctx)
  assert.equal(r2.content, 'Command rejected by user.')
  assert.match(prompts[1], /^Destructive command: \[rm-recursive/)
  assert.equal(existsSync(join(ws, 'made')), false)
})

test('lint: eslint findings from --format=json, with its severities', async () => {
  const ws = workspace({
    'package.json': JSON.stringify({ name: 'p', devDependencies: { eslint: '*' } }),
    'eslint.config.mjs': "export default [{ rules: { 'no-unused-vars': 'error', 'no-var': 'warn' } }]\n",
    'src/a.js': 'var x = 1\n',
  })
  symlinkSync(join(root, 'node_modules'), join(ws, 'node_modules'))
  const { ctx } = context(ws, true, { env: process.env })
  const r = await tools.lint({ linter: 'eslint', path: 'src' }, ctx)
  assert.equal(r.data.findingsFrom, 'eslint')
  assert.deepEqual(r.data.findings.map(({ path, line, column, rule, severity }) => [path, line, column, rule, severity]),
    [['src/a.js', 1, 1, 'no-var', 'warning'], ['src/a.js', 1, 5, 'no-unused-vars', 'error']])
  assert.match(r.content, /--- findings \(eslint: 1 errors, 1 warnings\) ---/)
})

test("Stack's server is process_start; its port waits until the server listens", async () => {
  const ws = workspace()
  const { ctx, prompts } = context(ws)
  const port = await new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
  const server = `require('net').createServer().listen(${port}, '127.0.0.1')`
  const r = await tools.runTool('server', { command: process.execPath, args: ['-e', server], port, background: true }, ctx)
  assert.equal(r.schema, 'eddie.tool.process_start.result.v1')
  assert.deepEqual([r.data.wait.satisfied, r.data.wait.reason], [true, 'port'])
  assert.match(prompts[0], /^Start background process: /)
  await tools.processKill({ id: r.data.id }, ctx)
  await rejectsWith(assert, tools.runTool('server', { command: 'true', port, waitFor: { port } }, ctx), 'INVALID_ARGUMENT', /`port` or `waitFor`/)
})
