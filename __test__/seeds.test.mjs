// Every documented example call of the five seeds (../shared/seeds/), run as written against
// real fixtures, and judged by what the seed documents, not only by whether it runs: Stack's and
// Floyd's JSON examples, Alfredo's and TunaCode's one-line Python calls. Each row (seed:tool) has
// a check of what the call returned, what it changed or what it refused (CHECKS); a row that
// cannot succeed here says why (DIFFERENCES: the internet, a search key, an uninstalled tool, a
// placeholder in the example), and its check asserts that nothing changed. Absolute paths in the
// examples are taken inside the workspace (a model gives its project's absolute paths).
//
// Below the rows, the seeds' documented behaviours beyond their examples: TunaCode's
// no-overwrite write_file and glob, Alfredo's byte-limited reads, the seeds' shell command
// lines (with the destructive-command check), Floyd's permission levels, dependency folders
// left out of searches, and diffs of absolute paths.
import test from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace, rejectsWith, tempDir } from './helpers.mjs'
import { skipReason } from './components.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// The seeds live next to the clone (../shared/seeds), or next to the folder of worktrees.
const seeds = [join(root, '..', 'shared', 'seeds'), join(root, '..', '..', 'shared', 'seeds')].find((d) => existsSync(d)) ?? join(root, '..', 'shared', 'seeds')
const read = (f) => readFileSync(join(seeds, f), 'utf8')
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'Seed Test',
  GIT_AUTHOR_EMAIL: 'seed@example.com',
  GIT_COMMITTER_NAME: 'Seed Test',
  GIT_COMMITTER_EMAIL: 'seed@example.com',
}
/** The real git CLI, the oracle of the git rows (never used by the tools). */
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' })

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
  for (const m of read('000_9681461cd2574a26.txt').matchAll(/```json\n([\s\S]*?)\n```/g)) {
    // A block is one call, or (git_branch) one call per line under `// comment` lines.
    const blocks = m[1].startsWith('//') ? m[1].split('\n').filter((l) => l.startsWith('{')) : [m[1]]
    for (const block of blocks) {
      let j
      try {
        j = JSON.parse(block)
      } catch {
        continue // a result or schema block, not a call
      }
      if (j.tool) out.push({ seed: 'stack', tool: j.tool, args: j.params ?? {} })
    }
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

/** 300 numbered lines: Alfredo's line reads name the lines they get. */
const LARGE = Array.from({ length: 300 }, (_, i) => `row ${i + 1}`).join('\n') + '\n'
/** 80 KB of JSON on one line, with a two-byte character across byte 51200 (Alfredo's 50 KB peek). */
const LARGE_JSON = (() => {
  const head = '{"data": "'
  const before = 'a'.repeat(51199 - head.length)
  const s = `${head}${before}é${'b'.repeat(80 * 1024 - 51201 - 2)}"}`
  return s
})()
const TASKS = {
  metadata: {},
  tasks: [
    { id: 'a1b2c3d4', title: 'Ship the docs', status: 'pending', summary: null, details: null, metadata: { priority: 'high', description: 'all 38 tools' }, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
    { id: 'e5f6a7b8', title: 'Tidy up', status: 'pending', summary: null, details: null, metadata: { priority: 'low', description: '' }, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' },
  ],
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
}
const PLAN = {
  metadata: { kind: 'plan', goal: 'Deploy to RunPod', status: 'pending' },
  tasks: ['Prepare Docker image', 'Upload to registry'].map((title, i) => ({ id: `s${i}`, title, status: 'pending', summary: null, details: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' })),
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
}
const TS_TODO = Array.from({ length: 30 }, (_, i) => `export const v${i + 1} = ${i + 1} // TODO`).join('\n') + '\n'

const FILES = {
  // Absolute example paths, taken inside the workspace.
  'path/to/file.ts': TS_TODO,
  'path/to/file.py': 'x = 1\n',
  'path/to/file.txt': 'text from the seed\n',
  'path/to/dir/a.txt': 'a\n',
  'path/to/dir/.env.example': 'A=1\n',
  'path/to/project/package.json': JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'node -e "console.log(42)"', lint: 'echo linted', format: 'echo formatted', build: 'echo built' } }),
  'path/to/project/index.js': 'module.exports = 1\n',
  'path/to/repo/README.md': 'repo\n',
  'path/to/repo/src/file.ts': 'export const a = 1\n',
  // Stack's project.
  'pyproject.toml': '[project]\nname = "p"\nversion = "0.1.0"\n',
  'stack_cli/cli.py': 'def tool_a():\n    pass\n\n\ndef tool_b():\n    return 2\n',
  'tests/test_a.py': 'def test_a():\n    pass\n',
  'config.yaml': 'debug: false\nport: 80\n',
  'config.example.yaml': 'debug: false\nport: 8080\n',
  'old_name.py': 'OLD = 1\n',
  'obsolete_file.txt': 'x\n',
  'TOOLS.md': '# Tools\n',
  'docs/tools.md': '# 38 tools\n',
  'MEMORY.md': '# Memory\n\n## Deployment requirements\nThe pod needs 24GB of VRAM and CUDA 12.\n\n## Colours\nThe logo is blue.\n',
  'AGENTS.md': 'Use tabs for indentation.\n',
  '.tasks/tasks.json': JSON.stringify(TASKS, null, 2),
  '.tasks/p123abc.json': JSON.stringify(PLAN, null, 2),
  // Floyd's project.
  'src/file.ts': 'function executeAll() {}\nexport class FloydAgentEngine {}\nconst toolRegistry = 1\nconsole.log(toolRegistry) // TODO\n',
  'src/agent/execution-engine.ts': 'export class ExecutionEngine {\n  run(): void {}\n}\nexport interface Step { id: string }\n',
  'src/glm.ts': 'export class GLMClient {}\n',
  'src/node_modules/dep/index.ts': 'export const toolRegistry = 0\n',
  'tests/glm.test.ts': 'new GLMClient()\n',
  'docs/glm.md': 'GLMClient talks to GLM.\n',
  // Alfredo's and TunaCode's.
  'large_file.txt': LARGE,
  'large_data.json': LARGE_JSON,
  'src/main.py': 'import pandas as pd\n\n\ndef load(path):\n    return pd.read_csv(path)\n',
  'src/todo.py': '# TODO: remove the fallback\n',
  'src/exp.js': 'function helper() {} // not exported\nconst x = 1\n',
  'src/types.ts': 'import { a } from "./a"\n',
  'src/log.py': 'import logging\nERROR = "one"\nerror = "two"\nprint("ERROR three")\n',
  'src/app.jsx': 'export default 1\n',
  'src/tests/test_x.py': 'def test_x():\n    pass\n',
  'lib/test_y.py': 'def test_y():\n    pass\n',
  'notes.md': 'import this\n',
  'app.config': 'a=1\n',
  '.hidden/app.config': 'b=2\n',
  'run.sh': '#!/bin/sh\necho run\n',
  'data_analysis.py': 'print("rows: 3, mean: 2.0")\n',
  // Dependency folders, never asked for by the examples.
  'node_modules/pkg/index.js': 'function fromDep() {} // export TODO GLMClient\n',
  'node_modules/pkg/setup.py': 'import x\n',
  '__pycache__/cached.py': 'TODO = 1\n',
  'dist/out.js': 'function built() {} // export TODO\n',
}

/** Prepare the workspace of a row before its call (repositories, cache entries). */
async function setup(key, ws, ctx) {
  const tool = key.split(':')[1]
  // Stack's copy example creates config.yaml, which its edit example needs to exist.
  if (key === 'stack:copy') rmSync(join(ws, 'config.yaml'))
  if (tool === 'list_dir') chmodSync(join(ws, 'run.sh'), 0o755)
  if (tool.startsWith('git_') || tool === 'is_protected_branch') {
    // Floyd's /path/to/repo: two commits' worth of history and a changed file.
    const repo = join(ws, 'path/to/repo')
    git(repo, 'init', '-q', '-b', 'main')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-qm', 'init repo')
    writeFileSync(join(repo, 'src/file.ts'), 'export const a = 2\n')
    if (key === 'floyd:git_unstage') git(repo, 'add', 'src/file.ts')
    // Stack's repository is the workspace: everything committed but the files its commit
    // example names, a branch to delete, and an origin (a bare repository) to push to.
    git(ws, 'init', '-q', '-b', 'main')
    writeFileSync(join(ws, '.git/info/exclude'), 'path/to/repo/\n.origin.git/\n')
    git(ws, 'add', '-A', '--', '.', ':!TOOLS.md', ':!docs/tools.md')
    git(ws, 'commit', '-qm', 'init')
    git(ws, 'branch', 'old-branch')
    git(ws, 'init', '-q', '--bare', '-b', 'main', join(ws, '.origin.git'))
    git(ws, 'remote', 'add', 'origin', join(ws, '.origin.git'))
    if (key === 'stack:git_pull') {
      // Someone else pushed a commit: pull brings it.
      const other = tempDir('eddie-seed-clone-')
      git(ws, 'push', '-q', 'origin', 'main')
      git(other, 'clone', '-q', join(ws, '.origin.git'), 'c')
      writeFileSync(join(other, 'c', 'PULLED.md'), 'from origin\n')
      git(join(other, 'c'), 'add', 'PULLED.md')
      git(join(other, 'c'), 'commit', '-qm', 'from elsewhere')
      git(join(other, 'c'), 'push', '-q', 'origin', 'main')
      git(ws, 'branch', '-q', '--set-upstream-to=origin/main', 'main')
    }
    if (key === 'stack:git_diff') {
      writeFileSync(join(ws, 'config.yaml'), 'debug: true\nport: 80\n')
      git(ws, 'add', 'config.yaml')
    }
  }
  if (key === 'floyd:cache_retrieve') await tools.cacheStore({ key: 'computation-result', value: '{"result": 42}', tier: 'reasoning', ttl: 3600000 }, ctx)
  if (key === 'floyd:cache_delete') await tools.cacheStore({ key: 'old-result', value: 'stale', tier: 'reasoning' }, ctx)
  if (key === 'floyd:cache_clear') await tools.cacheStore({ key: 'to-clear', value: 'x', tier: 'reasoning' }, ctx)
  if (key === 'floyd:cache_keys') {
    await tools.cacheStore({ key: 'computation-1', value: 'one', tier: 'project' }, ctx)
    await tools.cacheStore({ key: 'other-key', value: 'two', tier: 'project' }, ctx)
  }
}

/** Calls that cannot succeed here, and why (`codes`: the accepted error codes or result statuses). */
const DIFFERENCES = {
  'stack:web_search': { codes: ['NO_PROVIDER'], why: 'needs a search provider key (BRAVE_API_KEY, TAVILY_API_KEY or SEARXNG_URL); the clients are tested against local servers' },
  'stack:fetch': { codes: ['DNS', 'NETWORK', 'TIMEOUT', 'TLS', 'HTTP_STATUS'], why: 'needs the internet; web.test.mjs runs the same calls against loopback servers' },
  'stack:download': { codes: ['DNS', 'NETWORK', 'TIMEOUT', 'TLS', 'HTTP_STATUS'], why: 'needs the internet' },
  'stack:check_url': { codes: ['DNS', 'NETWORK', 'TIMEOUT', 'TLS', 'HTTP_STATUS'], why: 'needs the internet' },
  'stack:screenshot': { codes: ['DNS', 'NETWORK', 'TIMEOUT'], why: 'needs the internet; browser.test.mjs screenshots local pages' },
  'floyd:browser_navigate': { codes: ['DNS', 'NETWORK', 'TIMEOUT'], why: 'needs the internet; browser.test.mjs navigates local pages' },
  'stack:lint': { codes: ['NO_RUNNER', 'ok', 'failed'], why: 'ruff is not installed here: the refusal names it (.ci/run installs it, and the call runs)' },
  'stack:format': { codes: ['NO_RUNNER', 'ok', 'failed'], why: 'black is not installed here: the refusal names it' },
  'floyd:run_tests': { codes: ['INVALID_ARGUMENT'], why: 'grantPermission is refused on purpose: a model cannot grant itself permission (README, differences)' },
  'floyd:apply_unified_diff': { codes: ['INVALID_PATCH'], why: 'the example diff is a truncated placeholder (a hunk header with no lines)' },
  'floyd:assess_patch_risk': { codes: ['INVALID_PATCH'], why: 'the example diff is a placeholder ("...")' },
  'floyd:browser_click': { codes: ['ELEMENT_NOT_FOUND'], why: 'the example clicks #submit-button, which the blank tab does not have; browser.test.mjs clicks one on a served form' },
  'floyd:browser_type': { codes: ['ELEMENT_NOT_FOUND'], why: 'nothing has focus in the blank tab (the refusal says to give ref or selector); browser.test.mjs types into focused fields' },
}

/** Floyd's documented level of each of its tools (`**Permission:** \`…\``). */
function floydLevels() {
  const out = {}
  for (const m of read('001_846cbcbea9c6f985.txt').matchAll(/### `([a-z_]+)`[\s\S]*?\*\*Permission:\*\* `([a-z]+)`/g)) out[m[1]] = m[2]
  return out
}

const paths = (r) => r.data.files ?? r.data.matches.map((m) => m.path)
const stdoutOf = (r) => r.data.stdout ?? ''

/**
 * What each row's seed documents, checked on the call's outcome. `t`: {ws, args, r (the result),
 * e (the error), prompts, file(rel) (its text or null), git(...args) in the workspace}.
 */
const CHECKS = {
  // ---- Stack 2.9
  'stack:read': (t) => {
    // `{content, total_lines}`, from `offset` (0-indexed), at most `limit` lines.
    if (t.args.path.endsWith('file.py')) assert.match(t.r.content, /x = 1/)
    else {
      assert.match(t.r.content, /def tool_a\(\):[\s\S]*def tool_b\(\):/)
      assert.deepEqual([t.r.data.totalLines, t.r.data.startLine, t.r.data.linesReturned], [6, 1, 6])
    }
  },
  'stack:write': (t) => assert.equal(t.file('output.txt'), 'Hello, World!'),
  'stack:edit': (t) => {
    assert.equal(t.file('config.yaml'), 'debug: true\nport: 80\n')
    assert.equal(t.r.data.replacements, 1)
  },
  'stack:search': (t) => {
    // Recursive, with the exclusions honoured.
    assert.deepEqual(paths(t.r).filter((p) => p.endsWith('.py')).sort(), ['data_analysis.py', 'lib/test_y.py', 'old_name.py', 'path/to/file.py', 'src/log.py', 'src/main.py', 'src/tests/test_x.py', 'src/todo.py', 'stack_cli/cli.py', 'tests/test_a.py'])
  },
  'stack:grep': (t) => {
    // Each match with its file, line and content, and `context` lines around it.
    const [f] = t.r.data.matches
    assert.equal(f.path, 'stack_cli/cli.py')
    const lines = f.blocks.flatMap((b) => b.lines)
    assert.deepEqual(lines.filter((l) => l.match).map((l) => [l.line, l.text]), [[1, 'def tool_a():'], [5, 'def tool_b():']])
    assert.ok(lines.some((l) => !l.match && l.line === 2), 'context lines are there')
  },
  'stack:copy': (t) => assert.equal(t.file('config.yaml'), 'debug: false\nport: 8080\n'),
  'stack:move': (t) => {
    assert.equal(t.file('new_name.py'), 'OLD = 1\n')
    assert.equal(t.file('old_name.py'), null)
  },
  'stack:delete': (t) => {
    // force: true actually deletes (without it, only what would be deleted is reported).
    assert.equal(t.file('obsolete_file.txt'), null)
    assert.equal(t.r.data.deleted, true)
  },
  'stack:git_status': (t) => {
    const untracked = t.r.data.entries.map((e) => e.path)
    assert.deepEqual(untracked.sort(), ['TOOLS.md', 'docs/tools.md'])
    assert.equal(t.r.data.branch, 'main')
  },
  'stack:git_commit': (t) => {
    // Stages the named files and commits them.
    assert.equal(t.git('log', '-1', '--format=%s').trim(), 'feat: add new tool documentation')
    assert.deepEqual(t.git('show', '--name-only', '--format=', 'HEAD').trim().split('\n').sort(), ['TOOLS.md', 'docs/tools.md'])
  },
  'stack:git_push': (t) => assert.equal(t.git('rev-parse', 'origin/main').trim(), t.git('rev-parse', 'HEAD').trim()),
  'stack:git_pull': (t) => assert.equal(t.file('PULLED.md'), 'from origin\n'),
  'stack:git_log': (t) => {
    assert.deepEqual(t.r.data.commits.map((c) => c.subject ?? c.message), ['init'])
  },
  'stack:git_diff': (t) => {
    // staged: true shows what is staged.
    assert.match(t.r.content, /-debug: false\n\+debug: true/)
  },
  'stack:git_branch': (t) => {
    const branches = t.git('branch', '--format=%(refname:short)').trim().split('\n').sort()
    if (t.args.create) {
      assert.ok(branches.includes('feature/new-docs'))
      assert.equal(t.git('rev-parse', '--abbrev-ref', 'HEAD').trim(), 'feature/new-docs', 'created and checked out')
    } else if (t.args.delete) assert.ok(!branches.includes('old-branch'))
    else assert.match(t.r.content, /main[\s\S]*old-branch/)
  },
  'stack:run': (t) => {
    // A shell command line; the result has the return code and both streams.
    assert.equal(typeof t.r.data.exitCode, 'number')
    assert.match(t.r.data.stdout + t.r.data.stderr, /pytest|test_a/)
  },
  'stack:test': (t) => {
    // pytest on the path, with the file pattern and -v.
    assert.match(t.r.data.args.join(' '), /pytest/)
    assert.ok(['ok', 'failed'].includes(t.r.data.status), t.r.data.status)
  },
  'stack:lint': (t) => (t.e ? assert.match(t.e.message, /ruff/) : assert.match(t.r.content, /ruff/)),
  'stack:format': (t) => (t.e ? assert.match(t.e.message, /black/) : assert.match(t.r.content, /black/)),
  'stack:typecheck': (t) => assert.match(t.r.data.args.join(' '), /mypy/),
  'stack:server': async (t) => {
    // Started in the background; `port` waited for.
    assert.match(t.r.data.id, /^p\d+$/)
    assert.equal(t.r.data.status, 'running')
    await tools.processKill({ id: t.r.data.id }, t.ctx)
  },
  'stack:install': (t) => {
    // pip install, asked first (declined here: it would reach PyPI).
    assert.equal(t.r.data.status, 'declined')
    assert.match(t.r.data.args.join(' '), /pip install/)
  },
  'stack:web_search': (t) => assert.match(t.e.message, /BRAVE_API_KEY|provider/),
  'stack:fetch': (t) => assert.ok(t.e),
  'stack:download': (t) => assert.equal(t.file('data/dataset.csv'), null),
  'stack:check_url': (t) => assert.ok(t.e),
  'stack:screenshot': (t) => assert.equal(t.file('website.png'), null),
  'stack:memory_recall': (t) => {
    assert.equal(t.r.data.matches[0].title, 'Deployment requirements')
    assert.match(t.r.data.matches[0].content, /24GB of VRAM/)
  },
  'stack:memory_save': (t) => assert.match(t.file('MEMORY.md'), /## Colours\nThe logo is blue\.\n\n## GPU Requirements\n+Minimum: 8GB VRAM, Recommended: 24GB VRAM\n$/),
  'stack:memory_list': (t) => assert.deepEqual(t.r.data.entries.map((e) => e.title), ['Deployment requirements', 'Colours']),
  'stack:context_load': (t) => {
    assert.ok(t.r.data.loaded.some((l) => (l.path ?? l) === 'AGENTS.md'), JSON.stringify(t.r.data.loaded))
    assert.match(t.r.data.context, /Use tabs for indentation/)
  },
  'stack:project_scan': (t) => {
    assert.equal(t.r.data.has_pyproject, true)
    assert.equal(t.r.data.has_package_json, false)
    assert.ok(t.r.data.files > 20)
  },
  'stack:create_task': async (t) => {
    assert.deepEqual([t.r.data.task.title, t.r.data.task.priority, t.r.data.task.status], ['Write comprehensive tool documentation', 'high', 'pending'])
    const listed = await tools.runTool('list_tasks', {}, t.ctx)
    assert.ok(listed.data.tasks.some((x) => x.id === t.r.data.task.id), 'it is stored')
  },
  'stack:list_tasks': (t) => assert.deepEqual(t.r.data.tasks.map((x) => x.id), ['a1b2c3d4']),
  'stack:update_task': async (t) => {
    const listed = await tools.runTool('list_tasks', { status: 'done' }, t.ctx)
    assert.deepEqual(listed.data.tasks.map((x) => x.id), ['a1b2c3d4'])
  },
  'stack:delete_task': async (t) => {
    const listed = await tools.runTool('list_tasks', { status: 'all' }, t.ctx)
    assert.deepEqual(listed.data.tasks.map((x) => x.id), ['e5f6a7b8'])
  },
  'stack:create_plan': (t) => {
    assert.equal(t.r.data.plan.goal, 'Deploy to RunPod')
    assert.deepEqual(t.r.data.plan.steps.map((s) => s.title), ['Prepare Docker image', 'Upload to registry', 'Launch pod with template', 'Verify deployment'])
    assert.equal(t.r.data.plan.status, 'pending')
  },
  'stack:execute_plan': (t) => assert.deepEqual([t.r.data.planId, t.r.data.status], ['p123abc', 'in_progress']),

  // ---- Floyd
  'floyd:read_file': (t) => {
    assert.deepEqual([t.r.data.startLine, t.r.data.linesReturned], [1, 30])
    assert.match(t.r.content, /export const v1 = 1 \/\/ TODO/)
  },
  'floyd:write_file': (t) => assert.equal(t.file('path/to/output.txt'), 'Hello, World!'),
  'floyd:edit_file': (t) => {
    // all: true replaces every occurrence; the diff names the file once (`a/path/to/file.ts`).
    assert.equal(t.file('path/to/file.ts'), TS_TODO.replaceAll('TODO', 'FIXME'))
    assert.equal(t.r.data.replacements, 30)
    assert.ok(t.r.data.diff.startsWith('--- a/path/to/file.ts\n+++ b/path/to/file.ts\n'), t.r.data.diff.slice(0, 80))
  },
  'floyd:search_files': (t) => {
    assert.deepEqual(paths(t.r), ['src/agent/execution-engine.ts', 'src/file.ts', 'src/glm.ts', 'src/types.ts'])
  },
  'floyd:list_directory': (t) => {
    const entries = t.r.data.entries.map((e) => e.path)
    assert.ok(entries.includes('agent/execution-engine.ts') && entries.includes('file.ts'), entries.join())
  },
  'floyd:get_file_info': (t) => assert.deepEqual([t.r.data.type, t.r.data.size, t.r.data.lines], ['file', Buffer.byteLength(TS_TODO), 30]),
  'floyd:grep_search': (t) => {
    const [f] = t.r.data.matches
    assert.equal(f.path, 'src/file.ts')
    assert.deepEqual(f.blocks[0].lines.map((l) => l.line), [1, 2, 3])
  },
  'floyd:find_symbol': (t) => assert.deepEqual(t.r.data.definitions.map((d) => [d.path, d.kind, d.line]), [['src/file.ts', 'class', 2]]),
  'floyd:search_codebase': (t) => {
    // Tests and docs included on request; dependencies never.
    assert.deepEqual(t.r.data.files.map((f) => f.path).sort(), ['docs/glm.md', 'src/glm.ts', 'tests/glm.test.ts'])
    assert.equal(t.r.data.definitions[0].name, 'GLMClient')
  },
  'floyd:find_references': (t) => {
    assert.deepEqual(t.r.data.references.map((r) => [r.path, r.line]), [['src/file.ts', 3], ['src/file.ts', 4]])
  },
  'floyd:detect_project': (t) => {
    assert.ok(t.r.data.types.includes('node'), JSON.stringify(t.r.data.types))
    assert.ok(t.r.data.commands.test, 'a test command')
  },
  'floyd:run_tests': (t) => assert.match(t.e.message, /grantPermission/),
  'floyd:format': (t) => assert.match(t.r.data.stdout, /formatted/),
  'floyd:lint': (t) => assert.match(t.r.data.stdout, /linted/),
  'floyd:build': (t) => assert.match(t.r.data.stdout, /built/),
  'floyd:check_permission': (t) => assert.equal(t.r.data.level, 'dangerous'),
  'floyd:project_map': (t) => {
    assert.ok(t.r.data.pageEntries.includes('src/agent/execution-engine.ts'), t.r.content)
    assert.ok(!t.r.data.pageEntries.some((p) => p.startsWith('node_modules')))
  },
  'floyd:list_symbols': (t) => {
    const symbols = t.r.data.files[0].symbols.map((s) => [s.name, s.kind, s.container])
    assert.deepEqual(symbols, [['ExecutionEngine', 'class', null], ['run', 'method', 'ExecutionEngine'], ['Step', 'interface', null], ['id', 'property', 'Step']])
  },
  'floyd:git_status': (t) => assert.deepEqual(t.r.data.entries.map((e) => e.path), ['src/file.ts']),
  'floyd:git_commit': (t) => {
    // stageAll: the change is committed.
    const repo = join(t.ws, 'path/to/repo')
    assert.equal(git(repo, 'log', '-1', '--format=%s').trim(), 'Add new feature')
    assert.equal(git(repo, 'status', '--porcelain').trim(), '')
  },
  'floyd:git_diff': (t) => assert.match(t.r.content, /-export const a = 1\n\+export const a = 2/),
  'floyd:git_log': (t) => assert.deepEqual(t.r.data.commits.map((c) => c.subject ?? c.message), ['init repo']),
  'floyd:git_stage': (t) => assert.equal(git(join(t.ws, 'path/to/repo'), 'diff', '--cached', '--name-only').trim(), 'src/file.ts'),
  'floyd:git_unstage': (t) => {
    const repo = join(t.ws, 'path/to/repo')
    assert.equal(git(repo, 'diff', '--cached', '--name-only').trim(), '')
    assert.equal(t.file('path/to/repo/src/file.ts'), 'export const a = 2\n', 'the change itself stays')
  },
  'floyd:git_branch': (t) => assert.match(t.r.content, /\* main/),
  'floyd:is_protected_branch': (t) => assert.equal(t.r.data.protected, true),
  'floyd:browser_status': (t) => assert.notEqual(t.r.data.mode, 'none'),
  'floyd:browser_navigate': (t) => assert.ok(t.e),
  'floyd:browser_read_page': (t) => assert.equal(typeof t.r.content, 'string'),
  'floyd:browser_screenshot': (t) => assert.ok(t.r.data.width > 0 && t.r.data.bytes > 0),
  'floyd:browser_click': (t) => assert.match(t.e.message, /#submit-button/),
  'floyd:browser_type': (t) => assert.ok(t.e),
  'floyd:browser_find': (t) => assert.ok(Array.isArray(t.r.data.matches)),
  'floyd:browser_get_tabs': (t) => assert.ok(t.r.data.tabs.length >= 1),
  'floyd:cache_store': async (t) => {
    assert.equal(t.r.data.ttl, 3600000)
    const back = await tools.cacheRetrieve({ key: 'computation-result' }, t.ctx)
    assert.equal(back.data.value, '{"result": 42}')
  },
  'floyd:cache_retrieve': (t) => assert.deepEqual([t.r.data.found, t.r.data.value], [true, '{"result": 42}']),
  'floyd:cache_delete': async (t) => {
    assert.equal(t.r.data.deleted, true)
    assert.equal((await tools.cacheRetrieve({ key: 'old-result' }, t.ctx)).data.found, false)
  },
  'floyd:cache_clear': async (t) => {
    assert.ok(t.r.data.cleared.reasoning >= 1)
    assert.equal((await tools.cacheRetrieve({ key: 'to-clear' }, t.ctx)).data.found, false)
  },
  'floyd:cache_stats': (t) => assert.deepEqual(Object.keys(t.r.data.tiers).sort(), ['project', 'reasoning', 'vault']),
  'floyd:cache_keys': (t) => assert.deepEqual(t.r.data.keys.map((k) => k.key), ['computation-1']),
  'floyd:apply_unified_diff': (t) => assert.equal(t.file('file.ts'), null),
  'floyd:edit_range': (t) => {
    const lines = TS_TODO.split('\n')
    assert.equal(t.file('path/to/file.ts'), [...lines.slice(0, 9), 'new content', ...lines.slice(20)].join('\n'))
  },
  'floyd:insert_at': (t) => assert.equal(t.file('path/to/file.ts').split('\n')[4], '// New comment'),
  'floyd:delete_range': (t) => {
    const lines = TS_TODO.split('\n')
    assert.equal(t.file('path/to/file.ts'), [...lines.slice(0, 9), ...lines.slice(15)].join('\n'))
  },
  'floyd:assess_patch_risk': (t) => assert.ok(t.e),
  'floyd:run': (t) => {
    // A program and its args, no shell.
    assert.deepEqual([t.r.data.command, t.r.data.exitCode], ['ls', 0])
    assert.match(t.r.data.stdout, /file\.ts/)
  },
  'floyd:ask_user': (t) => assert.equal(t.r.data.answer, 'yes'),

  // ---- Alfredo
  'alfredo:read_file': (t) => {
    if (t.args.limit_bytes) {
      // The first 50 KB, cut before a character that would not fit, and the way on.
      const text = t.r.content.split('\n\n[')[0]
      assert.equal(text, LARGE_JSON.slice(0, 51199))
      assert.equal(t.r.data.nextByteOffset, 51199)
    } else {
      // `offset` is 0-indexed: offset=100 starts at the 101st line.
      const first = (t.args.offset ?? 0) + 1
      assert.equal(t.r.data.startLine, first)
      assert.equal(t.r.data.linesReturned, 100)
      assert.match(t.r.content, new RegExp(`\\brow ${first}\\n[\\s\\S]*\\brow ${first + 99}\\n`))
    }
  },
  'alfredo:list_files': (t) => {
    const entries = t.r.data.entries.map((e) => e.path)
    assert.ok(entries.includes('agent/execution-engine.ts') && entries.includes('tests/test_x.py'), entries.join())
  },
  'alfredo:search_files': (t) => {
    const hits = t.r.data.matches.flatMap((f) => f.blocks.flatMap((b) => b.lines.filter((l) => l.match).map((l) => `${f.path}:${l.line}`)))
    if (t.args.regex.startsWith('def')) assert.deepEqual(hits, ['src/main.py:4', 'src/tests/test_x.py:1'])
    else if (t.args.regex === 'TODO:') assert.deepEqual(hits, ['src/todo.py:1'])
    else assert.deepEqual(hits, ['src/main.py:1'])
  },
  'alfredo:execute_command': (t) => {
    if (/pip install/.test(t.args.command)) return assert.equal(t.r.data.status, 'declined')
    // A command line run by the shell; Alfredo's sections and exit line.
    assert.match(t.r.content, /^STDOUT:\n[\s\S]*\n\nSTDERR:\n[\s\S]*\n\nCommand exited with code \d+$/)
    if (t.args.command === 'python --version') assert.match(t.r.data.stdout + t.r.data.stderr, /Python 3/)
    if (t.args.command === 'python data_analysis.py') assert.equal(t.r.data.stdout, 'rows: 3, mean: 2.0\n')
  },

  // ---- TunaCode
  'tunacode:bash': (t) => {
    if (t.args.env) assert.equal(stdoutOf(t.r), 'test\n')
    // With cwd alone it is eddie's bash (TunaCode's own keys are env, timeout, capture_output): run there.
    else if (t.args.cwd) assert.ok(t.file('path/to/project/package-lock.json'), 'npm install ran in path/to/project')
    else if (t.args.timeout) assert.match(t.r.content, /Exit Code: 127/)
    else assert.match(stdoutOf(t.r), /large_file\.txt/)
  },
  'tunacode:read_file': (t) => assert.match(t.r.content, /text from the seed/),
  'tunacode:write_file': async (t) => {
    assert.equal(t.file('path/to/new_file.txt'), 'Hello, world!')
    // A second write to it is refused: TunaCode's write_file creates files only.
    await rejectsWith(assert, tools.runTool('write_file', { ...t.args, content: 'again' }, t.ctx), 'ALREADY_EXISTS', /update_file/)
    assert.equal(t.file('path/to/new_file.txt'), 'Hello, world!')
  },
  'tunacode:run_command': (t) => assert.match(t.r.content, /^STDOUT:\n[\s\S]*large_file\.txt[\s\S]*\n\nSTDERR:\n/),
  'tunacode:grep': (t) => {
    const files = t.r.data.matches.map((m) => m.path)
    // Its own keys select TunaCode's style; `grep("TODO")` is the canonical call.
    if (Object.keys(t.args).length > 1) assert.equal(t.r.data.style, 'tunacode')
    assert.ok(!files.some((f) => /^(node_modules|__pycache__|dist)\//.test(f)), files.join())
    if (t.args.pattern === 'TODO') assert.deepEqual(files, ['path/to/file.ts', 'src/file.ts', 'src/todo.py'])
    if (t.args.pattern === 'function.*export') assert.deepEqual(files, ['src/exp.js'])
    if (t.args.pattern === 'ERROR') {
      // case_sensitive: the lower-case `error` line is not a match.
      const lines = t.r.data.matches.flatMap((m) => m.blocks.flatMap((b) => b.lines.filter((l) => l.match).map((l) => l.text)))
      assert.deepEqual(lines, ['ERROR = "one"', 'print("ERROR three")'])
    }
    if (t.args.pattern === 'import') assert.deepEqual(files, ['src/log.py', 'src/main.py', 'src/types.ts'])
  },
  'tunacode:glob': (t) => {
    const files = paths(t.r)
    assert.ok(!files.some((f) => /(^|\/)(node_modules|__pycache__|dist)\//.test(f)), files.join())
    if (t.args.pattern === '*.{js,ts,jsx,tsx}') assert.ok(files.includes('src/app.jsx') && files.includes('src/exp.js') && files.includes('src/glm.ts'))
    if (t.args.pattern === 'src/**/test_*.py') assert.deepEqual(files, ['src/tests/test_x.py'])
    if (t.args.pattern.endsWith('.config')) assert.deepEqual(files, ['.hidden/app.config', 'app.config'])
    if (t.args.pattern === '*.py' || t.args.pattern === '**/*.py') assert.ok(files.includes('data_analysis.py') && files.includes('src/main.py'))
  },
  'tunacode:list_dir': (t) => {
    const entries = t.r.data.entries
    const markers = Object.fromEntries(entries.map((e) => [e.name, e.marker]))
    if (t.args.show_hidden) {
      assert.deepEqual(entries.map((e) => e.name), ['.env.example', 'a.txt'])
      return
    }
    // Directories first, each kind sorted; type markers; hidden entries left out.
    const kinds = entries.map((e) => e.type)
    assert.deepEqual(kinds, [...kinds].sort((a, b) => (a === 'directory' ? 0 : 1) - (b === 'directory' ? 0 : 1)))
    assert.equal(markers.src, '/')
    assert.equal(markers['run.sh'], '*')
    assert.ok(!entries.some((e) => e.name.startsWith('.')))
    assert.ok(entries.length <= 50)
  },
}

/** The argument names that hold paths. */
const PATH_KEYS = /^(path|filePath|filepath|projectPath|repoPath|rootPath|cwd|directory|destination)$/
const inside = (ws, v) => (typeof v === 'string' && v.startsWith('/') ? ws + v : v)

/** A row's context: confirms recorded (pip installs declined: they would reach PyPI), asks answered. */
function rowCtx(ws) {
  const prompts = []
  const ctx = {
    cwd: ws,
    confirm: async (m) => { prompts.push(m); return !/pip install/.test(m) },
    ask: async () => 'yes',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, EDDIE_USER_DIR: tempDir('eddie-seed-user-') },
    sessionId: `seeds-${ws}`,
  }
  return { ctx, prompts }
}

test('every seed example call runs as written and does what its seed documents (or differs for a listed reason)', async (t) => {
  const names = new Set(tools.toolSpecs().map((s) => s.name))
  const aliases = tools.toolAliases()
  const all = calls()
  // 115 calls in JSON and Python blocks, and Stack's three git_branch calls in one commented block.
  assert.equal(all.length, 118, `found ${all.length} example calls`)
  const failures = []
  const checked = new Set()
  // Without Chromium the browser rows are skipped (saying so); with CI=true that throws: a failure.
  const family = new Map(tools.toolSpecs().map((s) => [s.name, s.family]))
  const noBrowser = await skipReason('chromium')
  const skipped = []
  for (const c of all) {
    const key = `${c.seed}:${c.tool}`
    assert.ok(names.has(c.tool) || c.tool in aliases, `${key}: no such tool`)
    assert.ok(CHECKS[key], `${key}: no check of what the seed documents`)
    if (noBrowser && family.get(aliases[c.tool] ?? c.tool) === 'browser') {
      skipped.push(key)
      checked.add(key)
      continue
    }
    const ws = workspace(FILES)
    const { ctx, prompts } = rowCtx(ws)
    await setup(key, ws, ctx)
    // Floyd's `run` example names an absolute path among its `args`.
    const args = Object.fromEntries(Object.entries(c.args).map(([k, v]) => [k, PATH_KEYS.test(k) ? inside(ws, v) : k === 'args' ? v.map((a) => inside(ws, a)) : v]))
    let r
    let e
    try {
      r = await tools.runTool(c.tool, args, ctx)
    } catch (err) {
      assert.equal(typeof err.code, 'string', `${key}: ${err.message}`)
      assert.notEqual(err.code, 'INTERNAL', `${key}: ${err.message}`)
      e = err
    }
    const outcome = e ? e.code : r.data?.status === 'declined' ? 'declined' : 'ok'
    const expected = DIFFERENCES[key]?.codes ?? (key === 'stack:install' || (key === 'alfredo:execute_command' && /pip install/.test(c.args.command)) ? ['declined'] : ['ok'])
    if (!expected.includes(outcome)) {
      failures.push(`${key} ${JSON.stringify(c.args)} → ${e ? `${e.code}: ${e.message}` : outcome}`)
      continue
    }
    const file = (rel) => (existsSync(join(ws, rel)) ? readFileSync(join(ws, rel), 'utf8') : null)
    try {
      await CHECKS[key]({ ws, args, r, e, ctx, prompts, file, git: (...a) => git(ws, ...a) })
      checked.add(key)
    } catch (err) {
      failures.push(`${key} ${JSON.stringify(c.args)}: ${err.message}\n${r ? r.content.slice(0, 600) : e.message}`)
    }
  }
  if (skipped.length) t.diagnostic(`${skipped.length} browser rows skipped: ${noBrowser}`)
  t.diagnostic(`${all.length} example calls, ${checked.size - skipped.length} rows checked`)
  assert.deepEqual(failures, [])
  // Every check is used: none is left over from a row that no longer exists.
  assert.deepEqual(Object.keys(CHECKS).filter((k) => !checked.has(k)), [])
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

// ---- What the seeds document beyond their examples

/** A ctx whose confirm records each prompt and answers `answer(prompt)`. */
function asking(cwd, answer = () => true) {
  const prompts = []
  return { prompts, ctx: { cwd, confirm: async (m) => { prompts.push(m); return answer(m) } } }
}

test('TunaCode write_file creates files and never overwrites one; the other seeds’ writes replace', async () => {
  const ws = workspace({ 'a.txt': 'mine\n' })
  const { prompts, ctx } = asking(ws)
  // TunaCode's call (its `filepath` key, absolute as its docs show): refused before anyone is asked.
  await rejectsWith(assert, tools.runTool('write_file', { filepath: join(ws, 'a.txt'), content: 'theirs' }, ctx), 'ALREADY_EXISTS', /already exists.*update_file/)
  await rejectsWith(assert, tools.writeFile({ path: 'a.txt', content: 'theirs', style: 'tunacode' }, ctx), 'ALREADY_EXISTS')
  await rejectsWith(assert, tools.planCall('write_file', { filepath: 'a.txt', content: 'theirs' }, ctx), 'ALREADY_EXISTS')
  assert.deepEqual(prompts, [])
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'mine\n')
  // It creates missing folders, as documented.
  const made = await tools.runTool('write_file', { filepath: 'new/deep/b.txt', content: 'Hello, world!' }, ctx)
  assert.equal(made.data.created, true)
  assert.equal(readFileSync(join(ws, 'new/deep/b.txt'), 'utf8'), 'Hello, world!')
  // Saying overwrite: true is an explicit choice.
  await tools.runTool('write_file', { filepath: 'a.txt', content: 'chosen', overwrite: true }, ctx)
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'chosen')
  // Stack's `write`, Floyd's `write_file {filePath}` and Alfredo's `write_to_file` overwrite.
  await tools.runTool('write', { path: 'a.txt', content: 'stack' }, ctx)
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'stack')
  await tools.runTool('write_file', { filePath: 'a.txt', content: 'floyd' }, ctx)
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'floyd')
  await tools.runTool('write_to_file', { path: 'a.txt', content: 'alfredo' }, ctx)
  assert.equal(readFileSync(join(ws, 'a.txt'), 'utf8'), 'alfredo')
})

test('TunaCode write_file: a file that appears while the user is asked is not overwritten', async () => {
  const ws = workspace({})
  const target = join(ws, 'race.txt')
  // The "attacker" creates the file between the check and the write (while the prompt is open).
  const ctx = { cwd: ws, confirm: async () => { writeFileSync(target, 'created meanwhile\n'); return true } }
  await assert.rejects(tools.runTool('write_file', { filepath: 'race.txt', content: 'tuna' }, ctx), (e) => ['STALE', 'ALREADY_EXISTS'].includes(e.code))
  assert.equal(readFileSync(target, 'utf8'), 'created meanwhile\n')
})

test('TunaCode glob: directory and exclude_dirs as documented; dependency folders left out unless asked', async () => {
  const ws = workspace({
    'src/a.py': '', 'src/gen/b.py': '', 'src/.hidden/c.py': '', 'top.py': '',
    'node_modules/pkg/d.py': '', 'src/__pycache__/e.py': '', 'dist/f.py': '', '.venv/lib/g.py': '', 'build/h.py': '',
  })
  const ctx = { cwd: ws }
  const files = async (args) => (await tools.runTool('glob', args, ctx)).data.files
  assert.deepEqual(await files({ pattern: '**/*.py' }), ['src/a.py', 'src/gen/b.py', 'top.py'])
  const r = await tools.runTool('glob', { pattern: '**/*.py' }, ctx)
  assert.equal(r.data.ignored.excluded, 4)
  assert.match(r.content, /4 dependency folders such as node_modules \(includeDependencies: true to include\)/)
  assert.deepEqual(await files({ pattern: '**/*.py', directory: 'src' }), ['src/a.py', 'src/gen/b.py'])
  assert.deepEqual(await files({ pattern: '*.py', directory: join(ws, 'src'), exclude_dirs: ['gen'] }), ['src/a.py'])
  assert.deepEqual(await files({ pattern: '*.py', directory: 'src', include_hidden: true }), ['src/.hidden/c.py', 'src/a.py', 'src/gen/b.py'])
  assert.deepEqual(await files({ pattern: '*.py', recursive: false }), ['top.py'])
  assert.deepEqual(await files({ pattern: '*.{py,js}', max_results: 2 }), ['src/a.py', 'src/gen/b.py'])
  // Asked for: everything, or the folder named.
  // (.venv is a dot-folder too: includeHidden as well.)
  assert.equal((await files({ pattern: '**/*.py', includeDependencies: true })).length, 7)
  assert.equal((await files({ pattern: '**/*.py', includeDependencies: true, include_hidden: true })).length, 9)
  assert.deepEqual(await files({ pattern: '*.py', directory: 'node_modules/pkg' }), ['node_modules/pkg/d.py'])
  assert.deepEqual(await files({ pattern: 'node_modules/**/*.py' }), ['node_modules/pkg/d.py'])
  // A directory that leads out of the workspace is refused, whatever it is called.
  const outside = workspace({ 'secret.py': '' })
  execFileSync('ln', ['-s', outside, join(ws, 'node_modules/out')])
  await rejectsWith(assert, tools.runTool('glob', { pattern: '*.py', directory: 'node_modules/out' }, ctx), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.runTool('glob', { pattern: '*.py', directory: outside }, ctx), 'OUTSIDE_WORKSPACE')
})

test('grep, search_codebase and glob leave dependency folders out unless asked; .gitignore rules still apply', async () => {
  const ws = workspace({
    'src/app.ts': 'export function GLMClient() {} // TODO\n',
    'node_modules/lib/index.ts': 'export function GLMClient() {} // TODO\n',
    'vendor/x.ts': 'GLMClient TODO\n',
    'target/debug/y.ts': 'GLMClient TODO\n',
    'ignored/z.ts': 'GLMClient TODO\n',
    '.gitignore': 'ignored/\n',
  })
  const ctx = { cwd: ws }
  const grepFiles = async (args) => (await tools.grep(args, ctx)).data.matches.map((m) => m.path)
  assert.deepEqual(await grepFiles({ pattern: 'TODO' }), ['src/app.ts'])
  // Twice: the second answer may come from the index, and must be the same.
  assert.deepEqual(await grepFiles({ pattern: 'TODO' }), ['src/app.ts'])
  assert.deepEqual(await grepFiles({ pattern: 'TODO', includeDependencies: true }), ['node_modules/lib/index.ts', 'src/app.ts', 'target/debug/y.ts', 'vendor/x.ts'])
  assert.deepEqual(await grepFiles({ pattern: 'TODO', path: 'node_modules/lib' }), ['node_modules/lib/index.ts'])
  assert.deepEqual(await grepFiles({ pattern: 'TODO', respectGitignore: false, includeDependencies: true }), ['ignored/z.ts', 'node_modules/lib/index.ts', 'src/app.ts', 'target/debug/y.ts', 'vendor/x.ts'])
  const g = await tools.grep({ pattern: 'TODO' }, ctx)
  assert.match(g.content, /3 dependency folders such as node_modules/)
  // Floyd's search_codebase documents skipping dependencies.
  const sc = await tools.searchCodebase({ query: 'GLMClient' }, ctx)
  assert.deepEqual(sc.data.files.map((f) => f.path), ['src/app.ts'])
  const all = await tools.searchCodebase({ query: 'GLMClient', includeDependencies: true }, ctx)
  assert.deepEqual(all.data.files.map((f) => f.path).sort(), ['node_modules/lib/index.ts', 'src/app.ts', 'target/debug/y.ts', 'vendor/x.ts'])
  assert.deepEqual((await tools.glob({ pattern: '**/*.ts' }, ctx)).data.files, ['src/app.ts'])
})

test('Alfredo read_file limit_bytes: the first N bytes as text, UTF-8 safe, and every byte reachable', async () => {
  // 80 KB on one line (the issue: 2,000 characters came back and the rest was unreachable).
  const line = 'x'.repeat(80 * 1024)
  const ws = workspace({ 'one.json': line, 'euro.txt': '€'.repeat(30000) + '\nend\n' })
  const ctx = { cwd: ws }
  const first = await tools.runTool('read_file', { path: 'one.json', limit_bytes: 51200 }, ctx)
  const text = first.content.split('\n\n[')[0]
  assert.equal(text, line.slice(0, 51200))
  assert.deepEqual([first.data.truncated, first.data.nextByteOffset, first.data.longLinesCut], [true, 51200, 0])
  assert.match(first.content, /Continue with byteOffset=51200/)
  const rest = await tools.runTool('read_file', { path: 'one.json', byteOffset: 51200, limit_bytes: 51200 }, ctx)
  assert.equal(rest.content, line.slice(51200))
  assert.deepEqual([rest.data.truncated, rest.data.nextByteOffset], [false, null])
  // Three-byte characters: each page ends on a character; the pages put together are the file.
  const file = readFileSync(join(ws, 'euro.txt'), 'utf8')
  let got = ''
  let at = 0
  for (let i = 0; i < 20 && at !== null; i++) {
    const page = await tools.runTool('read_file', { path: 'euro.txt', byteOffset: at, limit_bytes: 10000 }, ctx)
    got += (got && !got.endsWith('\n') && page.data.startLine > 1 && at !== null ? '' : '') + page.content.split('\n\n[')[0]
    assert.ok(!page.content.includes('\uFFFD'))
    at = page.data.nextByteOffset
  }
  assert.equal(at, null)
  assert.equal(got + '\n', file)
  // A byte offset inside a character starts at that character.
  const mid = await tools.runTool('read_file', { path: 'euro.txt', byteOffset: 4, limit_bytes: 6 }, ctx)
  assert.equal(mid.content.split('\n\n[')[0], '€€')
  await rejectsWith(assert, tools.runTool('read_file', { path: 'one.json', byteOffset: 5, offset: 2 }, ctx), 'INVALID_ARGUMENT', /offset.*byteOffset/)
})

test('the seeds’ shell commands: command lines run by bash, with the destructive check, in each seed’s sections', async () => {
  const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'sub/c.txt': 'c\n' })
  const { prompts, ctx } = asking(ws)
  // Stack's run: a shell command line, timeout, cwd, env merged.
  let r = await tools.runTool('run', { command: 'ls | wc -l', timeout: 60 }, ctx)
  assert.deepEqual([r.data.status, r.data.stdout.trim()], ['ok', '3'])
  r = await tools.runTool('run', { command: 'echo "$GREETING from $(basename "$PWD")" && ls *.txt', cwd: 'sub', env: { GREETING: 'hi' } }, ctx)
  assert.equal(r.data.stdout, 'hi from sub\nc.txt\n')
  // Alfredo's execute_command: a failing exit is a result, in Alfredo's sections.
  r = await tools.runTool('execute_command', { command: 'echo out && echo err >&2; exit 3' }, ctx)
  assert.equal(r.content, 'STDOUT:\nout\n\nSTDERR:\nerr\n\nCommand exited with code 3')
  assert.deepEqual([r.data.status, r.data.exitCode], ['failed', 3])
  // TunaCode's run_command.
  r = await tools.runTool('run_command', { command: 'cat a.txt b.txt | sort -r' }, ctx)
  assert.equal(r.content, 'STDOUT:\nb\na\n\nSTDERR:\n(no errors)')
  // Floyd's run: a program and args, no shell: `$HOME` and `|` are plain words.
  r = await tools.runTool('run', { command: 'echo', args: ['$HOME', '|', 'x'] }, ctx)
  assert.equal(r.data.stdout, '$HOME | x\n')
  // shell: false splits a command line without a shell, and refuses shell syntax naming the way out.
  r = await tools.runTool('run', { command: 'echo one two', shell: false }, ctx)
  assert.deepEqual([r.data.command, r.data.stdout], ['echo', 'one two\n'])
  await rejectsWith(assert, tools.runTool('run', { command: 'ls | wc -l', shell: false }, ctx), 'INVALID_ARGUMENT', /shell: false/)
  // The destructive check reads the shell line: a recursive delete outside the workspace asks
  // a second question, and declined, nothing is deleted.
  const victim = workspace({ 'keep.txt': 'precious\n' })
  for (const name of ['run', 'execute_command', 'run_command']) {
    prompts.length = 0
    const declineDestructive = asking(ws, (m) => !/Destructive command/.test(m))
    r = await tools.runTool(name, { command: `cd / && rm -rf ${victim}` }, declineDestructive.ctx)
    assert.equal(r.data.status, 'declined', name)
    assert.ok(declineDestructive.prompts.some((p) => /Destructive command: \[rm-recursive\]/.test(p)), `${name}: ${declineDestructive.prompts}`)
    assert.equal(readFileSync(join(victim, 'keep.txt'), 'utf8'), 'precious\n')
  }
  // No one to ask: nothing runs.
  await rejectsWith(assert, tools.runTool('execute_command', { command: `touch ${join(ws, 'x')}` }, { cwd: ws }), 'APPROVAL_REQUIRED')
  assert.ok(!existsSync(join(ws, 'x')))
})

test('check_permission reports Floyd’s documented level for each of Floyd’s tools', async () => {
  const levels = floydLevels()
  // The catalogue documents 47 tools (its total line says 48; its own list has 47).
  assert.equal(Object.keys(levels).length, 47)
  const ws = workspace({})
  const aliases = tools.toolAliases()
  const specs = new Map(tools.toolSpecs().map((s) => [s.name, s]))
  const wrong = []
  for (const [name, level] of Object.entries(levels)) {
    const r = await tools.checkPermission({ toolName: name }, { cwd: ws })
    const canonical = aliases[name] ?? name
    if (r.data.level !== level || specs.get(canonical).permission !== level) wrong.push(`${name}: ${r.data.level} (Floyd: ${level})`)
    assert.equal(r.data.willAsk, level !== 'none', name)
  }
  assert.deepEqual(wrong, [])
})

test('edit diffs name an absolute path once, relative to the workspace, and apply back', async () => {
  const ws = workspace({ 'src/x.py': 'def f():\n    pass\n' })
  const ctx = { cwd: ws, confirm: async () => true }
  const abs = join(ws, 'src/x.py')
  const cases = [
    ['update_file', { filepath: abs, target: '    pass', patch: '    return 1' }],
    ['edit_file', { filePath: abs, oldStr: 'pass', newStr: 'return 1', dryRun: true }],
    ['edit_range', { filePath: abs, startLine: 2, endLine: 2, content: '    return 1', dryRun: true }],
  ]
  for (const [name, args] of cases) {
    writeFileSync(abs, 'def f():\n    pass\n')
    const r = await tools.runTool(name, args, ctx)
    assert.ok(r.data.diff.startsWith('--- a/src/x.py\n+++ b/src/x.py\n'), `${name}: ${r.data.diff}`)
    assert.ok(r.content.includes('--- a/src/x.py'), name)
    assert.ok(!r.content.includes('a//'), name)
  }
  // The diff is a patch of the workspace: applied to the original, it makes the edit.
  writeFileSync(abs, 'def f():\n    pass\n')
  const { data } = await tools.runTool('edit_file', { filePath: abs, oldStr: 'pass', newStr: 'return 2', dryRun: true }, ctx)
  await tools.runTool('apply_unified_diff', { diff: data.diff }, ctx)
  assert.equal(readFileSync(abs, 'utf8'), 'def f():\n    return 2\n')
})
