// The `code` family: grep, glob, symbols, project_map — through the JS surface.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace, rejectsWith, assertMatchesSchema, tempDir } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

test('code family: registered, read-only, permission none, schemas with $id', () => {
  const specs = tools.toolSpecs().filter((s) => s.family === 'code')
  assert.ok(specs.length >= 2)
  for (const s of specs) {
    assert.equal(s.mutating, false, s.name)
    assert.equal(s.permission, 'none', s.name)
    assert.equal(s.outputSchema.$id, `eddie.tool.${s.name}.result.v1`)
    assert.equal(typeof tools[s.jsName], 'function', s.jsName)
    assert.ok(tools.allTools.includes(tools[`${s.jsName}Tool`]), s.name)
  }
  assert.ok(!tools.builtinTools.some((t) => t.name === 'grep'))
})

test('grep: content with merged context, files and count modes, globs', async () => {
  const cwd = workspace({
    'src/a.ts': 'one\nTODO first\nthree\nTODO second\nfive\n',
    'src/b.js': 'todo lower\n',
    'docs/c.md': 'TODO doc\n',
  })
  const r = await tools.grep({ pattern: 'TODO', context: 1 }, { cwd })
  assert.deepEqual(Object.keys(r), ['schema', 'content', 'data'])
  assert.equal(r.schema, 'eddie.tool.grep.result.v1')
  assert.deepEqual(r.data.matches.map((m) => m.path), ['docs/c.md', 'src/a.ts'])
  const a = r.data.matches[1]
  assert.equal(a.blocks.length, 1, 'overlapping context merged into one block')
  assert.deepEqual(a.blocks[0].lines.map((l) => [l.line, l.match]), [[1, false], [2, true], [3, false], [4, true], [5, false]])
  assert.match(r.content, /src\/a\.ts\n {2}1- one\n {2}2: TODO first/)
  const files = await tools.grep({ pattern: 'todo', caseInsensitive: true, outputMode: 'files', include: '*.{ts,js}' }, { cwd })
  assert.deepEqual(files.data.files, ['src/a.ts', 'src/b.js'])
  const counts = await tools.grep({ pattern: 'TODO', literal: true, outputMode: 'count', exclude: 'docs/' }, { cwd })
  assert.deepEqual(counts.data.counts, [{ path: 'src/a.ts', count: 2 }])
  assert.equal(counts.data.ignored.excluded, 1)
})

test('grep and glob report what .gitignore and hidden rules hid', async () => {
  const cwd = workspace({ '.gitignore': 'gen/\n', 'gen/out.js': 'needle', '.cache/x.js': 'needle', 'main.js': 'needle' })
  const g = await tools.grep({ pattern: 'needle', outputMode: 'files' }, { cwd })
  assert.deepEqual(g.data.files, ['main.js'])
  assert.deepEqual(g.data.ignored, { total: 3, gitignore: 1, hidden: 2, excluded: 0 })
  assert.match(g.content, /Not searched: 3 entries hidden/)
  const all = await tools.grep({ pattern: 'needle', outputMode: 'files', respectGitignore: false, includeHidden: true }, { cwd })
  assert.deepEqual(all.data.files, ['.cache/x.js', 'gen/out.js', 'main.js'])
  const gl = await tools.glob({ pattern: '**/*.js' }, { cwd })
  assert.deepEqual(gl.data.files, ['main.js'])
  assert.equal(gl.data.ignored.total, 3)
})

test('grep: deadline returns a partial result flagged timedOut', async () => {
  const cwd = workspace({ 'a.txt': 'x\n' })
  const r = await tools.grep({ pattern: 'x', timeoutMs: 0 }, { cwd })
  assert.equal(r.data.timedOut, true)
  assert.equal(r.data.cancelled, false)
  assert.match(r.content, /Timed out/)
})

test('grep: an AbortSignal mid-search returns what was found, flagged cancelled', async () => {
  const cwd = workspace({})
  writeFileSync(join(cwd, 'big.txt'), 'hit\n'.repeat(8_000_000))
  const ac = new AbortController()
  const p = tools.grep({ pattern: 'hit', outputMode: 'count' }, { cwd, signal: ac.signal })
  setTimeout(() => ac.abort(), 20)
  const r = await p
  assert.equal(r.data.cancelled, true)
  assert.ok((r.data.totalMatches ?? 0) < 8_000_000, 'stopped early')
  assert.match(r.content, /Cancelled/)
})

test('glob: braces, **, path patterns, mtime order, cap', async () => {
  const cwd = workspace({ 'a.ts': '', 'b.tsx': '', 'src/c.ts': '', 'src/d/test_e.py': '', 'lib/test_f.py': '' })
  assert.deepEqual((await tools.glob({ pattern: '**/*.{ts,tsx}' }, { cwd })).data.files, ['a.ts', 'b.tsx', 'src/c.ts'])
  assert.deepEqual((await tools.glob({ pattern: 'src/**/test_*.py' }, { cwd })).data.files, ['src/d/test_e.py'])
  const capped = await tools.glob({ pattern: '*', maxResults: 2 }, { cwd })
  assert.deepEqual([capped.data.files.length, capped.data.totalFiles, capped.data.truncated, capped.data.pagination.nextOffset], [2, 5, true, 2])
  const later = Date.now() / 1000 + 100
  utimesSync(join(cwd, 'src/c.ts'), later, later)
  const newest = await tools.glob({ pattern: '*.ts', sortBy: 'mtime', maxResults: 1 }, { cwd })
  assert.deepEqual(newest.data.files, ['src/c.ts'])
})

test('glob: a long path list crosses to JS whole and in order (as in the JSON form), also with odd names', async () => {
  const files = {}
  for (let i = 0; i < 300; i++) files[`d${i % 7}/f${String(i).padStart(3, '0')}${i % 3 ? '' : 'é'}.js`] = ''
  files['d0/-.js'] = ''
  files['d1/a b,"q".js'] = ''
  const expected = Object.keys(files).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
  // An ignored file: the content's note about it holds a non-ASCII dash.
  const cwd = workspace({ ...files, '.gitignore': 'ign/\n', 'ign/x.js': '' })
  // The index's report may change from call to call (it is built behind the first ones).
  const glob = async (ctx) => {
    const r = await tools.glob({ pattern: '*.js', maxResults: 10_000 }, { cwd, ...ctx })
    const data = ctx.dataAsJson ? JSON.parse(r.dataJson) : r.data
    return { ...data, index: null, content: r.content }
  }
  const viaJson = () => glob({ dataAsJson: true })
  const direct = await glob({})
  assert.deepEqual(direct.files, expected)
  // The content (its list of paths crosses once, shared with data.files) is the JSON form's.
  assert.ok(direct.content.endsWith(`\n${expected.join('\n')}`) && /hidden —/.test(direct.content), direct.content.slice(0, 200))
  assert.deepEqual(Object.keys(direct), Object.keys(await viaJson()))
  assert.deepEqual(direct, await viaJson())
  // A name holding a newline: the list cannot cross joined by newlines; it still arrives whole.
  writeFileSync(join(cwd, 'd2/new\nline.js'), '')
  const withNewline = await glob({})
  assert.equal(withNewline.files.length, expected.length + 1)
  assert.ok(withNewline.files.includes('d2/new\nline.js'))
  assert.deepEqual(withNewline, await viaJson())
})

test('grep: non-ASCII text crosses to JS as written (few such characters, and many), equal to the JSON form', async () => {
  const lines = ['hit café', 'hit € 5 😀 𝄞', 'hit \u2028 and \u2029', 'hit \u0080\u00ff\u0100\uffff', 'hit "q" \\ </script>']
  const few = Array.from({ length: 60 }, (_, i) => `hit plain ascii line ${i} ${'x'.repeat(40)}`).concat(lines)
  const many = Array.from({ length: 60 }, (_, i) => `hit ${'日本語のテキスト'.repeat(8)} ${i}`).concat(lines)
  for (const text of [few, many]) {
    const cwd = workspace({ 'a.txt': text.join('\n') + '\n', 'b.bin.txt': Buffer.from([0x68, 0x69, 0x74, 0x20, 0xff, 0xfe, 0x0a]) })
    const grep = async (ctx) => {
      const r = await tools.grep({ pattern: 'hit', maxResults: 1000, maxPerFile: 1000 }, { cwd, ...ctx })
      return { ...(ctx.dataAsJson ? JSON.parse(r.dataJson) : r.data), index: null }
    }
    const direct = await grep({})
    assert.deepEqual(direct, await grep({ dataAsJson: true }))
    const got = direct.matches.find((f) => f.path === 'a.txt').blocks.flatMap((b) => b.lines.map((l) => l.text))
    assert.deepEqual(got, text)
    assert.equal(direct.matches.find((f) => f.path === 'b.bin.txt').blocks[0].lines[0].text, 'hit \ufffd\ufffd')
  }
})

test('code tools: escapes refused, bad input throws coded Errors, process alive', async () => {
  const cwd = workspace({ 'a.txt': 'x' })
  await rejectsWith(assert, tools.grep({ pattern: 'x', path: '../' }, { cwd }), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.glob({ pattern: '*', path: '/etc' }, { cwd }), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.grep({ pattern: '(' }, { cwd }), 'INVALID_REGEX')
  await rejectsWith(assert, tools.grep({}, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.grep({ pattern: 'x', context: 'two' }, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.grep({ pattern: 'x', outputMode: 'lines' }, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.glob({ pattern: '[' }, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.glob({ pattern: '*', path: 'missing' }, { cwd }), 'NOT_FOUND')
  await rejectsWith(assert, tools.grep(null, { cwd }), 'INVALID_ARGUMENT')
  // A foreign or misspelt option is refused with the right name, never silently ignored.
  await rejectsWith(assert, tools.grep({ pattern: 'x', contxt: 2 }, { cwd }), 'INVALID_ARGUMENT', /unknown argument `contxt` \(use `context`\)/)
  await rejectsWith(assert, tools.glob({ pattern: '*', exclud: ['x'] }, { cwd }), 'INVALID_ARGUMENT', /use `exclude`/)
  assert.equal((await tools.grep({ pattern: 'x', outputMode: 'files' }, { cwd })).data.files[0], 'a.txt')
})

test('code tools never read through a symlink that leaves the workspace', async () => {
  const outside = tempDir('eddie-outside-')
  writeFileSync(join(outside, 'secret.ts'), 'export const needle = 1\n')
  const cwd = workspace({ 'in.ts': 'export const needle = 2\n' })
  symlinkSync(outside, join(cwd, 'out'))
  symlinkSync(join(outside, 'secret.ts'), join(cwd, 'link.ts'))
  const g = await tools.grep({ pattern: 'needle', outputMode: 'files' }, { cwd })
  assert.deepEqual(g.data.files, ['in.ts'])
  assert.deepEqual((await tools.glob({ pattern: '**/*.ts' }, { cwd })).data.files, ['in.ts'])
  assert.deepEqual((await tools.findReferences({ symbol: 'needle' }, { cwd })).data.references.map((r) => r.path), ['in.ts'])
  await rejectsWith(assert, tools.grep({ pattern: 'needle', path: 'out' }, { cwd }), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.listSymbols({ path: 'link.ts' }, { cwd }), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.findSymbol({ symbol: 'needle', path: 'out' }, { cwd }), 'OUTSIDE_WORKSPACE')
})

test('the CLI runs grep and glob', () => {
  const cwd = workspace({ 'notes.txt': 'a TODO here' })
  const cli = join(root, 'bin/eddie-tools.js')
  const g = JSON.parse(execFileSync(process.execPath, [cli, 'grep', '{"pattern":"TODO"}'], { cwd, encoding: 'utf8' }))
  assert.equal(g.data.matches[0].path, 'notes.txt')
  const f = JSON.parse(execFileSync(process.execPath, [cli, 'glob', '{"pattern":"*.txt"}'], { cwd, encoding: 'utf8' }))
  assert.deepEqual(f.data.files, ['notes.txt'])
})

const SOURCES = {
  'src/engine.ts': 'export class Engine {\n  start(): void {}\n}\nexport const makeEngine = () => new Engine()\n// Engine in a comment\n',
  'src/use.js': "import { Engine } from './engine'\nconst e = new Engine()\nconst label = 'Engine'\n",
  'py/agent.py': 'class Agent:\n    def run(self):\n        return Engine()\n',
  'rs/lib.rs': 'pub struct Engine;\nimpl Engine { pub fn new() -> Self { Engine } }\n',
  'src/engine.test.ts': 'new Engine()\n',
  'README.md': 'Engine docs\n',
}

test('list_symbols: a file, a directory, recursive with a kind filter', async () => {
  const cwd = workspace(SOURCES)
  const one = await tools.listSymbols({ path: 'src/engine.ts' }, { cwd })
  assert.deepEqual(one.data.files[0].symbols.map((s) => [s.name, s.kind, s.line, s.container]),
    [['Engine', 'class', 1, null], ['start', 'method', 2, 'Engine'], ['makeEngine', 'function', 4, null]])
  assert.match(one.content, /class Engine \(line 1\)/)
  const top = await tools.listSymbols({ path: '.' }, { cwd })
  assert.equal(top.data.totalFiles, 0, 'top level holds no source file')
  const all = await tools.listSymbols({ path: '.', recursive: true, kind: 'class' }, { cwd })
  assert.deepEqual(all.data.files.flatMap((f) => f.symbols.map((s) => `${f.path}:${s.name}`)),
    ['py/agent.py:Agent', 'rs/lib.rs:Engine', 'src/engine.ts:Engine'])
  await rejectsWith(assert, tools.listSymbols({ path: 'README.md' }, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.listSymbols({}, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.listSymbols({ path: '../x.ts' }, { cwd }), 'OUTSIDE_WORKSPACE')
})

test('find_symbol and find_references use parse trees, not text', async () => {
  const cwd = workspace(SOURCES)
  const defs = await tools.findSymbol({ symbol: 'Engine' }, { cwd })
  assert.deepEqual(defs.data.definitions.map((d) => [d.path, d.kind]), [['rs/lib.rs', 'struct'], ['rs/lib.rs', 'impl'], ['src/engine.ts', 'class']])
  const cls = await tools.findSymbol({ symbol: 'engine', exact: false, kind: 'function' }, { cwd })
  assert.deepEqual(cls.data.definitions.map((d) => d.name), ['makeEngine'])
  const refs = await tools.findReferences({ symbol: 'Engine', path: 'src' }, { cwd })
  assert.deepEqual(refs.data.references.map((r) => `${r.path}:${r.line}:${r.column}${r.isDefinition ? '*' : ''}`),
    ['src/engine.test.ts:1:5', 'src/engine.ts:1:14*', 'src/engine.ts:4:37', 'src/use.js:1:10', 'src/use.js:2:15'])
  await rejectsWith(assert, tools.findSymbol({ symbol: 3 }, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.findReferences({ symbol: 'x', path: '/etc' }, { cwd }), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.findSymbol({ symbol: 'x', kind: 'widget' }, { cwd }), 'INVALID_ARGUMENT')
})

test('search_codebase: definitions first, tests and docs on request', async () => {
  const cwd = workspace(SOURCES)
  const r = await tools.searchCodebase({ query: 'engine' }, { cwd })
  assert.equal(r.data.definitions[0].name, 'Engine')
  assert.ok(!r.data.files.some((f) => f.path.endsWith('.test.ts') || f.path.endsWith('.md')))
  const all = await tools.searchCodebase({ query: 'Engine', includeTests: true, includeDocs: true }, { cwd })
  assert.ok(all.data.files.some((f) => f.path === 'src/engine.test.ts'))
  assert.ok(all.data.files.some((f) => f.path === 'README.md'))
  await rejectsWith(assert, tools.searchCodebase({}, { cwd }), 'INVALID_ARGUMENT')
  await rejectsWith(assert, tools.searchCodebase({ query: 'x', path: '..' }, { cwd }), 'OUTSIDE_WORKSPACE')
})

test('project_map: the folder tree to a depth, with what it left out', async () => {
  const cwd = workspace({ ...SOURCES, '.env': 'X=1', 'node_modules/p/index.js': '' })
  const r = await tools.projectMap({ maxDepth: 0 }, { cwd })
  assert.deepEqual(r.data.pageEntries, ['py/', 'README.md', 'rs/', 'src/'])
  assert.deepEqual(r.data.ignored, { total: 2, gitignore: 0, hidden: 1, excluded: 1 })
  const tree = await tools.getFolderTreeStructure({ maxDepth: 0 }, { cwd })
  assert.deepEqual(r.data.entries, tree.data.entries, 'same engine as get_folder_tree_structure')
  await rejectsWith(assert, tools.projectMap({ path: '../' }, { cwd }), 'OUTSIDE_WORKSPACE')
  await rejectsWith(assert, tools.projectMap({ maxDepth: -1 }, { cwd }), 'INVALID_ARGUMENT')
})

test('every code tool result matches its outputSchema', async () => {
  const cwd = workspace({ ...SOURCES, '.gitignore': 'gen/\n', 'gen/x.ts': 'export const Engine = 1\n' })
  const calls = [
    ['grep', { pattern: 'Engine', context: 1 }], ['grep', { pattern: 'Engine', outputMode: 'files' }],
    ['grep', { pattern: 'Engine', outputMode: 'count', maxResults: 1 }], ['grep', { pattern: 'Engine', timeoutMs: 0 }],
    ['glob', { pattern: '**/*.ts' }], ['glob', { pattern: '*', sortBy: 'mtime', maxResults: 2 }],
    ['list_symbols', { path: '.', recursive: true }], ['find_symbol', { symbol: 'Engine', maxResults: 1 }],
    ['find_references', { symbol: 'Engine', maxResults: 2 }], ['search_codebase', { query: 'engine agent', includeDocs: true }],
    ['project_map', {}],
  ]
  for (const [name, args] of calls) {
    const tool = tools.allTools.find((t) => t.name === name)
    const r = await tool.handler(args, { cwd })
    assertMatchesSchema(tool.outputSchema, r.data, `${name} ${JSON.stringify(args)} data`)
    assertMatchesSchema(tool.jsonSchema, args, `${name} args`)
  }
})

test("Floyd's spellings on the code tools are aliases, not refusals", async () => {
  const cwd = workspace({
    'src/engine.ts': 'export class FloydAgentEngine {\n  execute() {}\n}\nfunction executeAll() {}\n',
    'src/engine.test.ts': 'new FloydAgentEngine()\n',
    'node_modules/x/index.ts': 'function executeAll() {}\n',
  })
  const grep = await tools.grep({ pattern: 'function.*execute', path: 'src', filePattern: '*.ts', contextLines: 2, caseInsensitive: true }, { cwd })
  assert.deepEqual(grep.data.matches.map((m) => m.path), ['src/engine.ts'])
  assert.ok(grep.data.matches[0].blocks[0].lines.length > 1, 'contextLines became context')
  const glob = await tools.glob({ pattern: '**/*.ts', excludePatterns: ['**/*.test.ts', '**/node_modules/**'] }, { cwd })
  assert.deepEqual(glob.data.files, ['src/engine.ts'])
  const sym = await tools.findSymbol({ symbol: 'FloydAgentEngine', path: 'src', symbolType: 'class' }, { cwd })
  assert.equal(sym.data.definitions?.[0]?.kind ?? sym.data.results?.[0]?.kind, 'class')
  const listed = await tools.listSymbols({ filePath: 'src/engine.ts' }, { cwd })
  assert.ok(listed.content.includes('FloydAgentEngine'))
  const code = await tools.searchCodebase({ query: 'FloydAgentEngine', include_tests: true, include_docs: true }, { cwd })
  assert.ok(code.content.includes('FloydAgentEngine'))
})

test('search_files: a glob as Floyd calls it, a content search as Alfredo calls it (regex, file_pattern)', async () => {
  const ws = workspace({ 'src/a.py': 'def run(x):\n    pass\n', 'src/b.ts': 'x\n' })
  const floyd = await tools.runTool('search_files', { pattern: '**/*.ts', path: 'src' }, { cwd: ws })
  assert.equal(floyd.schema, 'eddie.tool.glob.result.v1')
  assert.deepEqual(floyd.data.files.map((f) => f.path ?? f), ['src/b.ts'])
  const alfredo = await tools.runTool('search_files', { path: 'src', regex: 'def \\w+\\(', file_pattern: '*.py' }, { cwd: ws })
  assert.equal(alfredo.schema, 'eddie.tool.grep.result.v1')
  assert.equal(alfredo.data.totalMatches, 1)
  assert.equal(tools.toolAliases().search_files, 'glob')
})
