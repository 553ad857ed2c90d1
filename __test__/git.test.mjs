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
