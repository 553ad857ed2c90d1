// The CLI (bin/eddie-tools.js): version, help, stdin, did-you-mean, exit codes, --text.
import test from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { workspace } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

const cli = join(root, 'bin/eddie-tools.js')
const run = (args, opts = {}) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], ...opts })

test('--version prints the package version', () => {
  const r = run(['--version'])
  assert.equal(r.status, 0)
  assert.equal(r.stdout.trim(), JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version)
})

test('help lists the tools; help <tool> prints its schema and a runnable example', () => {
  const list = run(['help'])
  assert.equal(list.status, 0)
  assert.match(list.stdout, /^ {2}file_read +eddie/m)
  assert.match(list.stdout, /exit codes: 0 done, 1 the tool failed, 2 usage error, 3 declined, or an approval was needed and not given/)
  const h = run(['help', 'read_file'])
  assert.equal(h.status, 0)
  assert.match(h.stdout, /^read_file \(JS: readFile\) — family files, permission none/)
  const schema = h.stdout.slice(h.stdout.indexOf('{'), h.stdout.indexOf('\nexample:'))
  assert.ok(JSON.parse(schema).properties.path, 'the schema is printed as JSON')
  // The example runs as written (its path does not exist in this workspace: NOT_FOUND, not a usage error).
  const example = h.stdout.match(/eddie-tools read_file '(.*)'/)[1]
  assert.deepEqual(Object.keys(JSON.parse(example)), ['path'])
  const ws = workspace({ 'src/index.ts': 'export {}\n' })
  const r = run(['read_file', example, '--cwd', ws])
  assert.equal(r.status, 0, r.stderr)
  assert.match(JSON.parse(r.stdout).content, /export \{\}/)
})

test('unknown tools get a did-you-mean and exit 2', () => {
  const r = run(['file_raed', '{}'])
  assert.equal(r.status, 2)
  const { error } = JSON.parse(r.stderr)
  assert.equal(error.code, 'UNKNOWN_TOOL')
  assert.match(error.message, /Did you mean `file_read`/)
  const h = run(['help', 'gerp'])
  assert.equal(h.status, 2)
  assert.match(JSON.parse(h.stderr).error.message, /`grep`/)
  const none = run(['zzzzzzzzzzzzzz'])
  assert.equal(none.status, 2)
  assert.doesNotMatch(JSON.parse(none.stderr).error.message, /Did you mean/)
})

test('arguments come from stdin with -', () => {
  const ws = workspace({ 'a.txt': 'from stdin\n' })
  const r = run(['read_file', '-', '--cwd', ws], { input: '{"path":"a.txt"}' })
  assert.equal(r.status, 0, r.stderr)
  assert.match(JSON.parse(r.stdout).content, /from stdin/)
  const bad = run(['read_file', '-', '--cwd', ws], { input: '{"path":' })
  assert.equal(bad.status, 2)
  assert.equal(JSON.parse(bad.stderr).error.code, 'INVALID_ARGUMENT')
})

test('--text prints only the content; --json (the default) the whole result', () => {
  const ws = workspace({ 'a.txt': 'x\ny\n' })
  const t = run(['read_file', '{"path":"a.txt"}', '--text', '--cwd', ws])
  assert.equal(t.status, 0)
  assert.equal(t.stdout, '     1\tx\n     2\ty\n')
  const j = JSON.parse(run(['read_file', '{"path":"a.txt"}', '--json', '--cwd', ws]).stdout)
  assert.deepEqual(Object.keys(j), ['schema', 'content', 'data'])
})

test('a declined confirm exits 3 and changes nothing; --yes exits 0; a failing tool exits 1', () => {
  const ws = workspace({ 'a.txt': 'x\n' })
  const no = run(['write_file', '{"path":"b.txt","content":"y"}', '--cwd', ws])
  assert.equal(no.status, 3)
  // No TTY and no --yes: no one could be asked.
  assert.equal(JSON.parse(no.stderr).error.code, 'APPROVAL_REQUIRED')
  assert.match(JSON.parse(no.stderr).error.message, /Create file: b\.txt/)
  assert.ok(!existsSync(join(ws, 'b.txt')))
  const ran = run(['run', '{"command":"touch","args":["ran"]}', '--cwd', ws])
  assert.equal(ran.status, 3)
  assert.ok(!existsSync(join(ws, 'ran')))
  const yes = run(['write_file', '{"path":"b.txt","content":"y"}', '--yes', '--cwd', ws])
  assert.equal(yes.status, 0, yes.stderr)
  assert.equal(readFileSync(join(ws, 'b.txt'), 'utf8'), 'y')
  const failed = run(['read_file', '{"path":"missing.txt"}', '--cwd', ws])
  assert.equal(failed.status, 1)
  assert.equal(JSON.parse(failed.stderr).error.code, 'NOT_FOUND')
  const opt = run(['read_file', '{}', '--frobnicate'])
  assert.equal(opt.status, 2)
})

test('--yes never approves a destructive command: the finding is printed, nothing runs; --allow-destructive runs it', () => {
  const ws = workspace()
  const outside = workspace({ 'keep.txt': 'k' })
  const cmd = JSON.stringify({ command: `rm -rf ${outside}`, shell: true })
  const yes = run(['run', cmd, '--yes', '--cwd', ws])
  assert.equal(yes.status, 3, yes.stderr)
  assert.match(yes.stderr, /approved by --yes: \[action\] Run command/)
  assert.match(yes.stderr, /NOT approved by --yes \(needs --allow-destructive\): \[destructive\] Destructive command: \[rm-recursive\]/)
  assert.match(yes.stderr, /APPROVAL_REQUIRED/)
  assert.ok(existsSync(join(outside, 'keep.txt')), 'nothing ran')
  const alone = run(['run', cmd, '--allow-destructive', '--cwd', ws])
  assert.equal(alone.status, 2, '--allow-destructive goes with --yes')
  assert.ok(existsSync(join(outside, 'keep.txt')))
  const both = run(['run', cmd, '--yes', '--allow-destructive', '--cwd', ws])
  assert.equal(both.status, 0, both.stderr)
  assert.match(both.stderr, /approved by --yes: \[destructive\]/)
  assert.ok(!existsSync(outside), 'approved explicitly, it ran')
})

test('an alias that names a tool by its arguments goes through as given (search_files)', () => {
  const ws = workspace({ 'a.py': 'def f():\n    pass\n' })
  const r = run(['search_files', '{"regex":"def f","file_pattern":"*.py"}'], { cwd: ws })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(JSON.parse(r.stdout).schema, 'eddie.tool.grep.result.v1')
})
