// The git family from JS: exports, codes, escapes, and data that validates against the
// outputSchema. The oracle comparisons with the git CLI live in crates/eddie_tools_core/tests/git.rs.
import test from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import * as tools from '../index.js'
import { workspace, context, rejectsWith, assertMatchesSchema } from './helpers.mjs'

const ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Ada',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
}
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' })

function repo() {
  const dir = workspace({ 'a.txt': 'one\n' })
  git(dir, 'init', '-q', '-b', 'main')
  git(dir, 'add', 'a.txt')
  git(dir, 'commit', '-q', '-m', 'first')
  return dir
}

const definition = (name) => tools.toolSpecs().find((d) => d.name === name)

test('gitStatus is exported, read-only, and its data matches its outputSchema', async () => {
  assert.equal(typeof tools.gitStatus, 'function')
  const spec = tools.toolSpecs().find((s) => s.name === 'git_status')
  assert.equal(spec.family, 'git')
  const dir = repo()
  const { writeFileSync } = await import('node:fs')
  writeFileSync(`${dir}/a.txt`, 'two\n')
  writeFileSync(`${dir}/b.txt`, 'new\n')
  const { ctx } = context(dir)
  const r = await tools.gitStatus({ repoPath: '.' }, ctx)
  assertMatchesSchema(definition('git_status').outputSchema, r.data)
  assert.equal(r.data.branch, 'main')
  assert.deepEqual(r.data.entries.map((e) => [e.path, e.index + e.worktree]), [['a.txt', '.M'], ['b.txt', '??']])
  assert.match(r.content, /^## main\n M a\.txt\n\?\? b\.txt\n$/)
})

test('gitStatus: codes for a workspace without a repository, an escape, bad input', async () => {
  const dir = workspace({})
  const { ctx } = context(dir)
  await rejectsWith(assert, tools.gitStatus({}, ctx), 'NOT_A_REPOSITORY')
  await rejectsWith(assert, tools.gitStatus({ path: '../..' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.gitStatus({ path: 42 }, ctx), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.gitStatus({ nope: 1 }, ctx), 'INVALID_ARGUMENT')
})

test('the git family: every tool exported, its data valid against its outputSchema, declines change nothing', async () => {
  const { writeFileSync, readFileSync } = await import('node:fs')
  const dir = repo()
  git(dir, 'config', 'user.name', 'Ada')
  git(dir, 'config', 'user.email', 'ada@example.com')
  writeFileSync(`${dir}/a.txt`, 'one\ntwo\n')
  writeFileSync(`${dir}/b.txt`, 'bee\n')
  const yes = { cwd: dir, confirm: async () => true }
  const no = { cwd: dir, confirm: async () => false }
  const check = (name, r) => assertMatchesSchema(definition(name).outputSchema, r.data)
  check('git_diff', await tools.gitDiff({ repoPath: '.' }, yes))
  check('git_log', await tools.gitLog({ limit: 5, files: true }, yes))
  check('git_show', await tools.gitShow({}, yes))
  check('git_show', await tools.gitShow({ file: 'a.txt' }, yes))
  check('git_blame', await tools.gitBlame({ file: 'a.txt' }, yes))
  check('is_protected_branch', await tools.isProtectedBranch({ branch: 'main' }, yes))
  check('git_branch', await tools.gitBranch({ action: 'list' }, yes))
  check('git_list_checkpoints', await tools.gitListCheckpoints({}, yes))
  const before = readFileSync(`${dir}/.git/index`)
  for (const [fn, args] of [['gitStage', {}], ['gitCommit', { message: 'm', stageAll: true }], ['gitBranch', { create: 'x' }]]) {
    const r = await tools[fn](args, no)
    assert.equal(r.data.status, 'declined', fn)
  }
  assert.deepEqual(readFileSync(`${dir}/.git/index`), before)
  check('git_stage', await tools.gitStage({ files: ['b.txt'] }, yes))
  check('git_unstage', await tools.gitUnstage({ files: 'b.txt' }, yes))
  const cp = await tools.gitCheckpoint({ message: 'safe' }, yes)
  check('git_checkpoint', cp)
  const c = await tools.gitCommit({ message: 'second', stageAll: true }, { ...yes, confirm: async () => true })
  check('git_commit', c)
  assert.equal(git(dir, 'log', '-1', '--format=%s').trim(), 'second')
  writeFileSync(`${dir}/a.txt`, 'ruined\n')
  const r = await tools.gitRestoreCheckpoint({ checkpoint: cp.data.id }, yes)
  check('git_restore_checkpoint', r)
  assert.equal(readFileSync(`${dir}/a.txt`, 'utf8'), 'one\ntwo\n')
  await rejectsWith(assert, tools.gitPush({}, yes), 'REF_NOT_FOUND')
  await rejectsWith(assert, tools.gitPull({}, yes), 'REF_NOT_FOUND')
  await rejectsWith(assert, tools.gitDiff({ from: '--upload-pack=x' }, yes), 'REF_NOT_FOUND')
  await rejectsWith(assert, tools.gitBlame({ file: '../../etc/passwd' }, yes), 'OUTSIDE_WORKSPACE')
  const spec = (n) => tools.toolSpecs().find((s) => s.name === n)
  assert.deepEqual(
    ['git_status', 'git_diff', 'git_log', 'git_show', 'git_blame', 'is_protected_branch', 'git_stage', 'git_unstage', 'git_branch', 'git_commit', 'git_push', 'git_pull'].map((n) => spec(n).permission),
    ['none', 'none', 'none', 'none', 'none', 'none', 'moderate', 'moderate', 'moderate', 'dangerous', 'dangerous', 'dangerous'],
  )
})

test("gitLog comes out in git log's orders; Stack's gitCommit {repo_path, message} stages every change but ignored files", async () => {
  const { writeFileSync } = await import('node:fs')
  const dir = repo()
  git(dir, 'config', 'user.name', 'Ada')
  git(dir, 'config', 'user.email', 'ada@example.com')
  const at = { ...ENV, GIT_AUTHOR_DATE: '2026-01-02T03:04:05Z', GIT_COMMITTER_DATE: '2026-01-02T03:04:05Z' }
  for (let i = 0; i < 5; i++) {
    writeFileSync(`${dir}/a.txt`, `${i}\n`)
    execFileSync('git', ['commit', '-q', '-am', `c${i}`], { cwd: dir, env: at })
  }
  const { ctx } = context(dir)
  for (const [order, ...flags] of [['default'], ['topo', '--topo-order'], ['date', '--date-order']]) {
    const r = await tools.gitLog({ order, limit: 50 }, ctx)
    assertMatchesSchema(definition('git_log').outputSchema, r.data)
    assert.deepEqual(r.data.commits.map((c) => c.id), git(dir, 'log', '--format=%H', ...flags).trim().split('\n'), order)
  }
  assert.deepEqual((await tools.gitLog({ limit: 5 }, ctx)).data.commits.map((c) => c.subject), ['c4', 'c3', 'c2', 'c1', 'c0'])
  writeFileSync(`${dir}/.gitignore`, '*.log\n')
  writeFileSync(`${dir}/new.txt`, 'new\n')
  writeFileSync(`${dir}/debug.log`, 'ignored\n')
  const yes = { cwd: dir, confirm: async () => true }
  await rejectsWith(assert, tools.gitCommit({ message: 'ours' }, yes), 'NOTHING_TO_COMMIT')
  const c = await tools.gitCommit({ repo_path: '.', message: 'stack' }, yes)
  assertMatchesSchema(definition('git_commit').outputSchema, c.data)
  assert.deepEqual(c.data.files, ['.gitignore', 'new.txt'])
  assert.match(c.content, /staged first/)
  assert.equal(git(dir, 'status', '--porcelain', '--ignored'), '!! debug.log\n')
  await rejectsWith(assert, tools.gitCommit({ message: 'a\0b', stageAll: true }, yes), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.gitBranch({ create: 'x'.repeat(256) }, yes), 'INVALID_ARGUMENT')
})

/** A smart HTTP git server on 127.0.0.1: `git http-backend` (CGI) behind node's http module,
 * basic auth (ada / s3cret) on every request. */
async function gitServer(root) {
  const { createServer } = await import('node:http')
  const { spawn } = await import('node:child_process')
  let hits = 0
  const server = createServer((req, res) => {
    hits++
    if (req.headers.authorization !== `Basic ${Buffer.from('ada:s3cret').toString('base64')}`) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' })
      res.end()
      return
    }
    const [path, query = ''] = req.url.split('?')
    const cgi = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1',
        GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', REMOTE_USER: 'ada', REMOTE_ADDR: '127.0.0.1',
        REQUEST_METHOD: req.method, PATH_INFO: path, QUERY_STRING: query,
        CONTENT_TYPE: req.headers['content-type'] ?? '', CONTENT_LENGTH: req.headers['content-length'] ?? '0',
      },
    })
    req.pipe(cgi.stdin)
    const chunks = []
    cgi.stdout.on('data', (c) => chunks.push(c))
    cgi.on('close', () => {
      const raw = Buffer.concat(chunks)
      let i = raw.indexOf('\r\n\r\n')
      let n = 4
      if (i < 0) { i = raw.indexOf('\n\n'); n = 2 }
      let status = 200
      const headers = {}
      for (const line of raw.subarray(0, i).toString().split(/\r?\n/)) {
        const at = line.indexOf(':')
        if (at < 0) continue
        const [k, v] = [line.slice(0, at).trim(), line.slice(at + 1).trim()]
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10)
        else headers[k] = v
      }
      res.writeHead(status, headers)
      res.end(raw.subarray(i + n))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: server.address().port, hits: () => hits }
}

/** A bare `repo.git` with one commit, served by {@link gitServer}; its http URL. */
async function servedRepo() {
  const root = workspace()
  git(root, 'init', '-q', '--bare', '-b', 'main', 'repo.git')
  git(repo(), 'push', '-q', `${root}/repo.git`, 'main')
  const s = await gitServer(root)
  return { root, s, url: `http://127.0.0.1:${s.port}/repo.git` }
}

test('gitPush and gitPull over smart HTTP on loopback: a credential helper, the network guard, AUTH_FAILED', async () => {
  const { writeFileSync } = await import('node:fs')
  const { root, s, url } = await servedRepo()
  try {
    const ws = workspace()
    for (const n of ['work', 'other']) {
      git(ws, 'clone', '-q', `${root}/repo.git`, n)
      git(`${ws}/${n}`, 'remote', 'set-url', 'origin', url)
      git(`${ws}/${n}`, 'config', 'credential.helper', '!f() { echo username=ada; echo password=s3cret; }; f')
    }
    writeFileSync(`${ws}/work/a.txt`, 'two\n')
    git(`${ws}/work`, 'commit', '-q', '-am', 'second')
    const env = { PATH: process.env.PATH, HOME: ws, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
    // Loopback is refused without the allow-list, and nothing reaches the server.
    await rejectsWith(assert, tools.gitPush({ path: 'work' }, { cwd: ws, confirm: async () => true, env }), 'BLOCKED_ADDRESS')
    assert.equal(s.hits(), 0)
    const ctx = { cwd: ws, confirm: async () => true, env, network: { allowHosts: [`127.0.0.1:${s.port}`] } }
    const r = await tools.gitPush({ path: 'work' }, ctx)
    assert.equal(r.data.status, 'pushed')
    assertMatchesSchema(definition('git_push').outputSchema, r.data)
    assert.equal(git(`${root}/repo.git`, 'rev-parse', 'main'), git(`${ws}/work`, 'rev-parse', 'HEAD'))
    const p = await tools.gitPull({ path: 'other' }, ctx)
    assert.equal(p.data.status, 'pulled')
    assertMatchesSchema(definition('git_pull').outputSchema, p.data)
    assert.equal(git(`${ws}/other`, 'rev-parse', 'HEAD'), git(`${ws}/work`, 'rev-parse', 'HEAD'))
    // A helper with a wrong password: AUTH_FAILED naming the helper, the server unchanged.
    git(`${ws}/other`, 'config', 'credential.helper', '!f() { echo username=ada; echo password=wrong; }; f')
    writeFileSync(`${ws}/other/a.txt`, 'three\n')
    git(`${ws}/other`, 'commit', '-q', '-am', 'third')
    await rejectsWith(assert, tools.gitPush({ path: 'other' }, ctx), 'AUTH_FAILED', /credential\.helper/)
    assert.equal(git(`${root}/repo.git`, 'rev-parse', 'main'), git(`${ws}/work`, 'rev-parse', 'HEAD'))
  } finally {
    s.server.closeAllConnections()
    s.server.close()
  }
})

test('ctx.gitCredentials: the host login is asked before the credential helpers (plain, promised, null, throwing)', async () => {
  const { writeFileSync } = await import('node:fs')
  const { root, s, url } = await servedRepo()
  try {
    const ws = workspace()
    git(ws, 'clone', '-q', `${root}/repo.git`, 'work')
    git(`${ws}/work`, 'remote', 'set-url', 'origin', url)
    // A helper that would give a wrong password: the host's answer must win over it.
    git(`${ws}/work`, 'config', 'credential.helper', '!f() { echo username=ada; echo password=wrong; }; f')
    const env = { PATH: process.env.PATH, HOME: ws, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
    const asked = []
    const base = { cwd: ws, confirm: async () => true, env, network: { allowHosts: [`127.0.0.1:${s.port}`] } }
    const commit = (text) => {
      writeFileSync(`${ws}/work/a.txt`, text)
      git(`${ws}/work`, 'commit', '-q', '-am', text)
    }
    commit('two\n')
    // A Promise of the login.
    const r = await tools.gitPush({ path: 'work' }, {
      ...base,
      gitCredentials: async (req) => { asked.push(req); return { username: 'ada', password: 's3cret' } },
    })
    assert.equal(r.data.status, 'pushed')
    assert.equal(git(`${root}/repo.git`, 'rev-parse', 'main'), git(`${ws}/work`, 'rev-parse', 'HEAD'))
    // Asked once per connection (listing the remote's refs before asking, then the push).
    assert.ok(asked.length >= 1)
    for (const { protocol, host, url: remote, username } of asked) {
      assert.deepEqual({ protocol, host, remote, username: username ?? null }, { protocol: 'http', host: `127.0.0.1:${s.port}`, remote: url, username: null })
    }
    // A plain value works too.
    commit('three\n')
    const r2 = await tools.gitPush({ path: 'work' }, { ...base, gitCredentials: () => ({ username: 'ada', password: 's3cret' }) })
    assert.equal(r2.data.status, 'pushed')
    // null: no login from the host, so the helper is asked next (and its password is wrong).
    commit('four\n')
    await rejectsWith(assert, tools.gitPush({ path: 'work' }, { ...base, gitCredentials: () => null }), 'AUTH_FAILED', /credential\.helper/)
    // A wrong host login: AUTH_FAILED naming ctx.gitCredentials, never the password.
    const e = await tools.gitPush({ path: 'work' }, { ...base, gitCredentials: async () => ({ username: 'ada', password: 'nope-secret' }) }).catch((x) => x)
    assert.equal(e.code, 'AUTH_FAILED')
    assert.match(e.message, /ctx\.gitCredentials/)
    assert.doesNotMatch(e.message, /nope-secret/)
    // A callback that throws: AUTH_FAILED with its reason, the server unchanged.
    const before = git(`${root}/repo.git`, 'rev-parse', 'main')
    await rejectsWith(assert, tools.gitPush({ path: 'work' }, { ...base, gitCredentials: () => { throw new Error('store locked') } }), 'AUTH_FAILED', /store locked/)
    assert.equal(git(`${root}/repo.git`, 'rev-parse', 'main'), before)
    // Not a function: INVALID_ARGUMENT before anything runs.
    await rejectsWith(assert, tools.gitPush({ path: 'work' }, { ...base, gitCredentials: 'ada:s3cret' }), 'INVALID_ARGUMENT')
  } finally {
    s.server.closeAllConnections()
    s.server.close()
  }
})
