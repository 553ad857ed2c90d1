// Every documented example call of the five seeds (../shared/seeds/) whose tool exists here,
// under its own name or as one of toolAliases(), run as written: Stack's and Floyd's JSON
// examples, and Alfredo's and TunaCode's one-line Python calls. Absolute paths in the examples
// are taken inside the workspace (a model gives its project's absolute paths). A call that does
// not succeed must be in DIFFERENCES, with the reason; tools that do not exist yet are counted.
import test from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const seeds = join(root, '..', 'shared', 'seeds')
const read = (f) => readFileSync(join(seeds, f), 'utf8')

/** A Python call's arguments (`"str"`, numbers, True/False/None, `{...}` dicts as JSON). */
function pyArgs(text) {
  const out = { positional: [], named: {} }
  let i = 0
  const value = () => {
    const rest = text.slice(i)
    let m
    if ((m = rest.match(/^"((?:[^"\\]|\\.)*)"/))) {
      i += m[0].length
      return m[1].replace(/\\(.)/g, '$1')
    }
    if ((m = rest.match(/^(-?\d+(?:\.\d+)?)/))) {
      i += m[0].length
      return Number(m[1])
    }
    if ((m = rest.match(/^(True|False|None)/))) {
      i += m[0].length
      return { True: true, False: false, None: null }[m[1]]
    }
    if (rest.startsWith('{')) {
      const end = rest.indexOf('}') + 1
      i += end
      return JSON.parse(rest.slice(0, end))
    }
    throw new Error(`cannot parse ${rest}`)
  }
  while (i < text.length) {
    const rest = text.slice(i)
    const named = rest.match(/^([a-z_]+)=/)
    if (named) {
      i += named[0].length
      out.named[named[1]] = value()
    } else out.positional.push(value())
    const sep = text.slice(i).match(/^\s*,\s*/)
    if (sep) i += sep[0].length
    else break
  }
  return out
}

/** TunaCode's positional parameters. */
const TUNA_POSITIONAL = {
  bash: ['command'],
  read_file: ['filepath'],
  write_file: ['filepath', 'content'],
  run_command: ['command'],
  grep: ['pattern', 'directory'],
  glob: ['pattern', 'directory'],
  list_dir: ['directory'],
}

function calls() {
  const out = []
  for (const m of read('000_9681461cd2574a26.txt').matchAll(/```json\n(\{[\s\S]*?\})\n```/g)) {
    let j
    try {
      j = JSON.parse(m[1])
    } catch {
      continue // a result or schema block, not a call
    }
    if (j.tool) out.push({ seed: 'stack', tool: j.tool, args: j.params ?? {} })
  }
  for (const m of read('001_846cbcbea9c6f985.txt').matchAll(/### `([a-z_]+)`[\s\S]*?\*\*Example:\*\*\s*```json\n([\s\S]*?)\n```/g)) {
    out.push({ seed: 'floyd', tool: m[1], args: JSON.parse(m[2]) })
  }
  for (const m of read('003_4470f7eb8e36a5bb.txt').matchAll(/# Agent will use: ([a-z_]+)\((.*)\)\s*$/gm)) {
    out.push({ seed: 'alfredo', tool: m[1], args: pyArgs(m[2]).named })
  }
  for (const m of read('004_68eb102a642ec6ba.txt').matchAll(/^(?:\w+ = )?await ([a-z_]+)\((.*)\)\s*$/gm)) {
    const { positional, named } = pyArgs(m[2])
    const args = { ...named }
    positional.forEach((v, k) => { args[TUNA_POSITIONAL[m[1]][k]] = v })
    out.push({ seed: 'tunacode', tool: m[1], args })
  }
  return out
}

/** Calls that do not succeed here, and why (`codes`: the accepted error codes or result statuses). */
const DIFFERENCES = {
  'stack:web_search': { codes: ['NO_PROVIDER'], why: 'needs a search provider key (BRAVE_API_KEY, TAVILY_API_KEY or SEARXNG_URL); the clients are tested against local servers' },
  'stack:fetch': { codes: ['DNS', 'NETWORK', 'TIMEOUT', 'TLS', 'HTTP_STATUS'], why: 'needs the internet; web.test.mjs runs the same calls against loopback servers' },
  'stack:download': { codes: ['DNS', 'NETWORK', 'TIMEOUT', 'TLS', 'HTTP_STATUS'], why: 'needs the internet' },
  'stack:check_url': { codes: ['DNS', 'NETWORK', 'TIMEOUT', 'TLS', 'HTTP_STATUS'], why: 'needs the internet' },
  'stack:lint': { codes: ['NO_RUNNER'], why: 'where ruff is not installed, the refusal names it (.ci/run installs it, and the call runs)' },
  'stack:format': { codes: ['NO_RUNNER'], why: 'black is not installed here: the refusal names it' },
  'floyd:run_tests': { codes: ['INVALID_ARGUMENT'], why: 'grantPermission is refused on purpose: a model cannot grant itself permission (README, differences)' },
  'floyd:apply_unified_diff': { codes: ['INVALID_PATCH'], why: 'the example diff is a truncated placeholder (a hunk header with no lines)' },
  'floyd:assess_patch_risk': { codes: ['INVALID_PATCH'], why: 'the example diff is a placeholder ("...")' },
  'stack:update_task': { codes: ['TASK_NOT_FOUND'], why: 'the example names a task id (a1b2c3d4) that the fresh workspace does not have; memory.test.mjs runs it on a created task' },
  'stack:delete_task': { codes: ['TASK_NOT_FOUND'], why: 'the example names a task id (a1b2c3d4) that the fresh workspace does not have; memory.test.mjs runs it on a created task' },
  'stack:execute_plan': { codes: ['NOT_FOUND'], why: 'the example names a plan id (p123abc) that the fresh workspace does not have; memory.test.mjs runs it on a created plan' },
  'floyd:browser_navigate': { codes: ['DNS', 'NETWORK', 'TIMEOUT'], why: 'needs the internet; browser.test.mjs navigates local pages' },
  'floyd:browser_click': { codes: ['ELEMENT_NOT_FOUND'], why: 'the example clicks #submit-button, which the blank tab does not have; browser.test.mjs clicks one on a served form' },
  'floyd:browser_type': { codes: ['ELEMENT_NOT_FOUND'], why: 'nothing has focus in the blank tab (the refusal says to give ref or selector); browser.test.mjs types into focused fields' },
  'stack:screenshot': { codes: ['DNS', 'NETWORK', 'TIMEOUT'], why: 'needs the internet; browser.test.mjs screenshots local pages' },
  'stack:git_commit': { codes: ['NOT_FOUND'], why: 'the example stages TOOLS.md and docs/tools.md, which the workspace does not have (git add refuses them too)' },
  'stack:git_push': { codes: ['REF_NOT_FOUND'], why: 'the example repository has no commits and no origin remote; push and pull are tested against local bare remotes in crates/eddie_tools_core/tests/git.rs' },
  'stack:git_pull': { codes: ['REF_NOT_FOUND'], why: 'the example repository has no origin remote' },
  'stack:git_branch': { codes: ['ok', 'REF_NOT_FOUND'], why: 'creating feature/new-docs needs a commit to start from and old-branch does not exist in the freshly initialised example repository; listing works' },
  'floyd:git_commit': { codes: ['NOTHING_TO_COMMIT'], why: 'the example repository /path/to/repo is empty: stageAll finds nothing to commit' },
  'floyd:git_stage': { codes: ['NOT_FOUND'], why: 'src/file.ts does not exist in the example repository /path/to/repo (git add refuses it too)' },
  'floyd:git_unstage': { codes: ['NOT_FOUND'], why: 'src/file.ts is in neither the index nor HEAD of the empty example repository (git restore --staged refuses it too)' },
  'alfredo:execute_command': { codes: ['NOT_FOUND', 'ok', 'declined'], why: 'pytest is not installed here; pip install is declined by the test (it would reach PyPI)' },
}

const FILES = {
  'path/to/file.ts': 'export const a = 1 // TODO\n'.repeat(30),
  'path/to/file.py': 'x = 1\n',
  'path/to/file.txt': 'text\n',
  'path/to/dir/a.txt': 'a\n',
  'path/to/project/package.json': JSON.stringify({ name: 'p', scripts: { test: 'true', lint: 'true', format: 'true', build: 'true' } }),
  'pyproject.toml': '[project]\nname = "p"\n',
  'stack_cli/cli.py': 'def tool_a():\n    pass\n',
  'src/file.ts': 'function executeAll() {}\nexport class FloydAgentEngine {}\nconst toolRegistry = 1\n// TODO\n',
  'src/agent/execution-engine.ts': 'export class E {}\n',
  'tests/test_a.py': 'def test_a():\n    pass\n',
  'config.yaml': 'debug: false\n',
  'config.example.yaml': 'a: 1\n',
  'old_name.py': 'x\n',
  'obsolete_file.txt': 'x\n',
  'large_file.txt': 'line\n'.repeat(300),
  'large_data.json': '[]\n',
  'app.config': '',
}

const inside = (ws, v) => (typeof v === 'string' && v.startsWith('/') ? ws + v : Array.isArray(v) ? v.map((x) => inside(ws, x)) : v)

test('every seed example call of an existing tool runs as written, or differs for a listed reason', async (t) => {
  const names = new Set(tools.toolSpecs().map((s) => s.name))
  const aliases = tools.toolAliases()
  const all = calls()
  assert.ok(all.length >= 100, `found ${all.length} example calls`)
  const missing = new Map()
  let ran = 0
  const failures = []
  for (const c of all) {
    if (!names.has(c.tool) && !(c.tool in aliases)) {
      missing.set(c.tool, c.seed)
      continue
    }
    ran += 1
    const key = `${c.seed}:${c.tool}`
    // Stack's copy example creates config.yaml, which its edit example needs to exist.
    const ws = workspace(key === 'stack:copy' ? Object.fromEntries(Object.entries(FILES).filter(([p]) => p !== 'config.yaml')) : FILES)
    if (c.tool.startsWith('git_') || c.tool === 'is_protected_branch') {
      // The git examples act on a repository: the workspace, and Floyd's /path/to/repo.
      mkdirSync(join(ws, 'path/to/repo'), { recursive: true })
      for (const dir of [ws, join(ws, 'path/to/repo')]) execFileSync('git', ['init', '-q', dir], { env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } })
    }
    const args = Object.fromEntries(Object.entries(c.args).map(([k, v]) => [k, inside(ws, v)]))
    const ctx = {
      cwd: ws,
      confirm: async (m) => !/install requests/.test(m),
      ask: async () => 'yes',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    }
    let outcome
    try {
      const r = await tools.runTool(c.tool, args, ctx)
      outcome = r.data?.status === 'declined' ? 'declined' : 'ok'
    } catch (e) {
      assert.equal(typeof e.code, 'string', `${key}: ${e.message}`)
      assert.notEqual(e.code, 'INTERNAL', `${key}: ${e.message}`)
      outcome = e.code
      if (!DIFFERENCES[key]?.codes.includes(outcome)) failures.push(`${key} ${JSON.stringify(c.args)} → ${e.code}: ${e.message}`)
      continue
    }
    if (outcome !== 'ok' && !DIFFERENCES[key]?.codes.includes(outcome)) failures.push(`${key} → ${outcome}`)
  }
  t.diagnostic(`${ran} example calls ran; ${all.length - ran} call tools that do not exist yet: ${[...missing.keys()].join(', ')}`)
  assert.deepEqual(failures, [])
  assert.ok(ran >= 70, `${ran} calls ran`)
})

test('toolAliases: the other agents’ names run the canonical tool', async () => {
  const ws = workspace({ 'a.txt': 'hello\n' })
  const aliases = tools.toolAliases()
  assert.equal(aliases.read, 'read_file')
  assert.equal(aliases.execute_command, 'run')
  const r = await tools.runTool('read', { path: 'a.txt' }, { cwd: ws })
  assert.equal(r.schema, tools.toolSpecs().find((s) => s.name === 'read_file').outputSchema.$id)
  const names = new Set(tools.toolSpecs().map((s) => s.name))
  for (const [alias, canonical] of Object.entries(aliases)) {
    assert.ok(names.has(canonical), `${alias} → ${canonical}`)
    assert.ok(!names.has(alias), `${alias} shadows a tool`)
  }
})
