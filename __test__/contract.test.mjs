// The §3 test cases of the @eddie/tools contract, run against the native package.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import * as tools from '../index.js'
import { workspace, context, rejectsWith } from './helpers.mjs'

const { builtinTools } = tools
const byName = (n) => builtinTools.find((t) => t.name === n)

test('bash: cwd, limits and output', async () => {
  const ws = workspace({ 'custom/.keep': '' })
  const { ctx, prompts } = context(ws)
  const r = await tools.bash({ command: 'pwd; echo oops >&2', cwd: 'custom', timeoutMs: 5000, maxBytes: 1024 }, ctx)
  assert.equal(r.schema, 'eddie.tool.bash.result.v1')
  assert.deepEqual(r.data, { stdout: `${join(ws, 'custom')}\n`, stderr: 'oops\n' })
  assert.equal(r.content, `${join(ws, 'custom')}\n`)
  assert.deepEqual(prompts, ['Run command: pwd; echo oops >&2'])
  const quiet = await tools.bash({ command: 'true' }, ctx)
  assert.equal(quiet.content, '(no output)')
  await rejectsWith(assert, tools.bash({ command: 'pwd', cwd: '../../etc' }, ctx), 'OUTSIDE_WORKSPACE', /outside the workspace/i)
  assert.equal(prompts.length, 2, 'no confirm for an escape')
})

test('file_read: pagination and partial reads', async () => {
  const ws = workspace({ 'a.txt': 'a'.repeat(51200), 'emoji.txt': '😀'.repeat(4096), 'small.txt': '😀text', 'two.txt': '😀😀', 'ctx.txt': 'hello from ctx', 'abc.txt': 'abcdef', 'foo.txt': 'foo😊' })
  const { ctx } = context(ws)
  let r = await tools.fileRead({ path: 'a.txt', page: 2 }, ctx)
  assert.equal(r.content.length, 20480)
  assert.deepEqual(r.data, { path: 'a.txt', bytes: 20480, truncated: true, page: 2, pageSize: 20480, totalBytes: 51200, totalPages: 3 })
  r = await tools.fileRead({ path: 'emoji.txt', maxBytes: 1024 }, ctx)
  assert.deepEqual(r.data, { path: 'emoji.txt', bytes: 1024, truncated: true, page: 1, pageSize: 1024, totalBytes: 16384, totalPages: 16 })
  assert.equal(Buffer.byteLength(r.content), r.data.bytes)
  r = await tools.fileRead({ path: 'small.txt', maxBytes: 1 }, ctx)
  assert.equal(r.content, '')
  assert.deepEqual(r.data, { path: 'small.txt', bytes: 0, truncated: true, page: 1, pageSize: 1, totalBytes: 8, totalPages: 8 })
  r = await byName('file_read').handler({ path: 'two.txt', maxBytes: 4 }, ctx)
  assert.equal(r.content, '😀')
  assert.deepEqual(r.data, { path: 'two.txt', bytes: 4, truncated: true, page: 1, pageSize: 4, totalBytes: 8, totalPages: 2 })
  r = await byName('file_read').handler({ path: 'two.txt', maxBytes: 5 }, ctx)
  assert.deepEqual([r.content, r.data.bytes, r.data.pageSize, r.data.totalPages], ['😀', 4, 5, 2])
  r = await tools.fileReadTool.handler({ path: 'ctx.txt' }, ctx)
  assert.deepEqual([r.content, r.data.bytes, r.data.pageSize, r.data.truncated], ['hello from ctx', 14, 20480, false])
  r = await tools.fileRead({ path: 'abc.txt', maxBytes: 3 }, ctx)
  assert.deepEqual([r.content, r.data.totalPages, r.data.truncated], ['abc', 2, true])
  r = await tools.fileRead({ path: 'foo.txt', pageSize: 5 }, ctx)
  assert.deepEqual([r.content, r.data.bytes, r.data.truncated, r.data.totalPages], ['foo', 3, true, 2])
  r = await tools.fileRead({ path: 'foo.txt', pageSize: 5, page: 2 }, ctx)
  assert.deepEqual([r.content, r.data.bytes, r.data.truncated], ['😊', 4, false])
})

test('file_read: pages tile the file byte for byte (§5.1)', async () => {
  const text = 'a😀bcdefgh aé€😀z ✓ 日本語 🚀 café 𝄞'
  const ws = workspace({ 't.txt': text })
  const { ctx } = context(ws)
  for (let size = 1; size <= 9; size++) {
    const first = await tools.fileRead({ path: 't.txt', pageSize: size }, ctx)
    let joined = first.content
    for (let p = 2; p <= first.data.totalPages; p++) joined += (await tools.fileRead({ path: 't.txt', pageSize: size, page: p }, ctx)).content
    assert.equal(joined, text, `pageSize ${size}`)
  }
})

test('file_read: errors', async () => {
  const ws = workspace({ 'd/x.txt': 'x' })
  const { ctx } = context(ws)
  await rejectsWith(assert, tools.fileRead({ path: 'missing.txt' }, ctx), 'NOT_FOUND', `ENOENT: no such file or directory, open '${join(ws, 'missing.txt')}'`)
  await rejectsWith(assert, tools.fileRead({ path: 'd' }, ctx), 'IS_A_DIRECTORY', 'EISDIR: illegal operation on a directory, read')
})

test('file_search: the contract cases', async () => {
  let ws = workspace({ 'match.txt': 'hello world', 'skip.txt': 'unrelated', 'report.md': 'r', 'notes.txt': 'n' })
  let { ctx } = context(ws)
  let r = await byName('file_search').handler({ content: 'hello\\s+world' }, ctx)
  assert.equal(r.data.totalResults, 1)
  assert.deepEqual(r.data.results, [{ path: 'match.txt', lineMatches: [{ lineNumber: 1, line: 'hello world', matches: [{ match: 'hello world', start: 0, end: 11, groups: [] }] }] }])
  assert.equal(r.content, 'Found 1 matching file.')
  r = await tools.fileSearch({ name: 'report\\.md$' }, ctx)
  assert.deepEqual(r.data.results, [{ path: 'report.md', lineMatches: [] }])
  r = await tools.fileSearch({}, ctx)
  assert.deepEqual([r.data.totalResults, r.data.totalPages, r.content], [0, 0, 'No matches found.'])

  ws = workspace({ 'src/match.ts': "const value = 'needle';\n", 'docs/ignore.md': 'needle' })
  ;({ ctx } = context(ws))
  r = await tools.fileSearch({ content: 'needle', include: ['src/.*', 'docs/.*'], exclude: ['docs/.*'] }, ctx)
  assert.deepEqual(r.data.results, [{ path: 'src/match.ts', lineMatches: [{ lineNumber: 1, line: "const value = 'needle';", matches: [{ match: 'needle', start: 15, end: 21, groups: [] }] }] }])

  ws = workspace({ 'a.txt': 'match', 'b.txt': 'match', 'c.txt': 'match' })
  ;({ ctx } = context(ws))
  r = await tools.fileSearch({ content: 'match', page: 2, pageSize: 1 }, ctx)
  assert.deepEqual([r.data.totalResults, r.data.page, r.data.pageSize, r.data.totalPages], [3, 2, 1, 3])
  assert.deepEqual(r.data.results, [{ path: 'b.txt', lineMatches: [{ lineNumber: 1, line: 'match', matches: [{ match: 'match', start: 0, end: 5, groups: [] }] }] }])
  r = await tools.fileSearch({ content: 'match', page: 99, pageSize: 2 }, ctx)
  assert.equal(r.data.page, 2, 'page is clamped to the last page')

  const many = {}
  for (let i = 0; i < 25; i++) many[`file-${i}.txt`] = 'match'
  ws = workspace(many)
  ;({ ctx } = context(ws))
  r = await tools.fileSearch({ content: 'match' }, ctx)
  assert.deepEqual([r.data.page, r.data.pageSize, r.data.totalPages, r.data.totalResults, r.data.results.length], [1, 20, 2, 25, 20])

  ws = workspace({ 'src/keep.ts': "export const value = 'needle';", 'node_modules/left-pad/index.js': 'needle' })
  ;({ ctx } = context(ws))
  r = await tools.fileSearch({ content: 'needle' }, ctx)
  assert.deepEqual(r.data.results.map((x) => x.path), ['src/keep.ts'])
  assert.equal(r.data.results[0].lineMatches[0].line, "export const value = 'needle';")
  r = await tools.fileSearch({ content: 'needle', includeDependencies: true }, ctx)
  assert.equal(r.data.totalResults, 2)

  await rejectsWith(assert, tools.fileSearch({ content: { pattern: 'match' } }, ctx), 'INVALID_ARGUMENT', 'content pattern must be a string')
  await rejectsWith(assert, tools.fileSearch({ content: '(' }, ctx), 'INVALID_REGEX', /^Invalid content regex: SyntaxError: Invalid regular expression: \/\(\/gu: /)
  await rejectsWith(assert, tools.fileSearch({ include: [3] }, ctx), 'INVALID_ARGUMENT', 'include pattern must be a string')
  await rejectsWith(assert, tools.fileSearch({ content: 'x', root: 'nope' }, ctx), 'NOT_FOUND', `ENOENT: no such file or directory, scandir '${join(ws, 'nope')}'`)
})

test('file_search: ECMAScript syntax, UTF-16 offsets and localeCompare order', async () => {
  const names = ['_x', '.hidden', 'a', 'b.txt', 'B.txt', 'file-10', 'file-2', 'readme.md', 'README.md', 'src_c', 'src-b', 'src.d', 'src/a', 'Z']
  const files = Object.fromEntries(names.map((n) => [n, 'needle']))
  const ws = workspace({ ...files, 'u.txt': '😀 日本語 x=1 y=2\nab' })
  const { ctx } = context(ws)
  let r = await tools.fileSearch({ content: 'needle', pageSize: 100 }, ctx)
  assert.deepEqual(r.data.results.map((x) => x.path), [...names].sort((a, b) => a.localeCompare(b, 'en')))
  r = await tools.fileSearch({ content: '(?<=x=)(?<v>\\d)|\\p{Script=Han}+' }, ctx)
  const ms = r.data.results[0].lineMatches[0].matches
  assert.deepEqual(ms.map((m) => [m.match, m.start, m.end, m.groups]), [['日本語', 3, 6, ['']], ['1', 9, 10, ['1']]])
  const line = '😀 日本語 x=1 y=2'
  const js = [...line.matchAll(/(?<=x=)(?<v>\d)|\p{Script=Han}+/gu)].map((m) => m.index)
  assert.deepEqual(ms.map((m) => m.start), js)
})

test('get_folder_tree_structure: the contract cases', async () => {
  let ws = workspace({ 'README.md': '#', 'src/index.ts': '', 'src/utils/helper.ts': '' })
  let { ctx } = context(ws)
  let r = await tools.getFolderTreeStructure({ path: '.' }, ctx)
  assert.deepEqual(r.data, {
    root: '.',
    entries: [
      { name: 'README.md', path: 'README.md', type: 'file' },
      { name: 'src', path: 'src', type: 'directory', entries: [
        { name: 'index.ts', path: 'src/index.ts', type: 'file' },
        { name: 'utils', path: 'src/utils', type: 'directory', entries: [{ name: 'helper.ts', path: 'src/utils/helper.ts', type: 'file' }] },
      ] },
    ],
    pageEntries: ['README.md', 'src/', 'src/index.ts', 'src/utils/', 'src/utils/helper.ts'],
    pagination: { limit: 200, offset: 0, returnedEntries: 5, totalEntries: 5, hasMore: false, nextOffset: null },
  })
  r = await tools.getFolderTreeStructure({ path: 'src' }, ctx)
  assert.equal(r.data.root, 'src')
  assert.deepEqual(r.data.pageEntries, ['src/index.ts', 'src/utils/', 'src/utils/helper.ts'])
  r = await tools.getFolderTreeStructure({ path: '.', maxEntries: 2 }, ctx)
  assert.equal(r.content, 'Tree for . (showing 2 of 5 entries)\nREADME.md\nsrc/')
  assert.deepEqual(r.data.pagination, { limit: 2, offset: 0, returnedEntries: 2, totalEntries: 5, hasMore: true, nextOffset: 2 })
  r = await tools.getFolderTreeStructure({ offset: 4 }, ctx)
  assert.equal(r.content, 'Tree for . (showing 1 of 5 entries starting at offset 4)\nsrc/utils/helper.ts')
  r = await tools.getFolderTreeStructure({ maxDepth: 0 }, ctx)
  assert.deepEqual(r.data.pageEntries, ['README.md', 'src/'])

  ws = workspace({ 'src/a.ts': '', 'node_modules/left-pad/i.js': '', 'vendor/symfony/x.php': '', 'B.txt': '', 'b.txt': '', '.hid': '' })
  ;({ ctx } = context(ws))
  r = await tools.getFolderTreeStructure({}, ctx)
  assert.ok(r.data.pageEntries.includes('src/'))
  assert.ok(!r.data.pageEntries.includes('node_modules/') && !r.data.pageEntries.includes('vendor/') && !r.data.pageEntries.includes('.hid'))
  assert.deepEqual(r.data.pageEntries.slice(0, 2), ['B.txt', 'b.txt'], 'base sensitivity keeps byte order for ties')
  r = await tools.getFolderTreeStructure({ includeHidden: true, includeDependencies: true }, ctx)
  assert.ok(r.data.pageEntries.includes('.hid') && r.data.pageEntries.includes('node_modules/'))
  await rejectsWith(assert, tools.getFolderTreeStructure({ path: 'missing' }, ctx), 'NOT_FOUND', /^ENOENT: no such file or directory, scandir /)
})

test('plan tools: the contract cases', async () => {
  const ws = workspace()
  const { ctx, prompts } = context(ws)
  const tasks = [
    { title: 'Set up workspace', status: 'complete', completed: true, details: 'Install deps' },
    { title: 'Implement planner tools', status: 'in_progress', completed: false, details: 'Write handlers' },
    { title: 'Document usage', status: 'pending', completed: false, details: 'Update README' },
  ]
  let r = await tools.updatePlan({ tasks, abridged: true }, ctx)
  assert.deepEqual(prompts, ['Update plan with 3 tasks?'])
  assert.equal(r.schema, 'eddie.tool.plan.result.v1')
  assert.equal(r.data.abridged, true)
  assert.deepEqual(r.data.plan.tasks, tasks)
  assert.equal(typeof r.data.plan.updatedAt, 'string')
  assert.match(r.content, /1\. ✅ Set up workspace/)
  assert.match(r.content, /2\. 🔄 Implement planner tools\n   - Write handlers/)
  assert.ok(!r.content.includes('Install deps'))
  const stored = JSON.parse(readFileSync(join(ws, '.eddie/plan.json'), 'utf8'))
  assert.deepEqual(stored.tasks, tasks)
  r = await tools.getPlan({ abridged: false }, ctx)
  for (const t of tasks) assert.ok(r.content.includes(t.details))

  const empty = workspace()
  r = await tools.getPlan({ abridged: true }, context(empty).ctx)
  assert.deepEqual(r.data.plan.tasks, [])
  assert.match(r.content, /No plan available/)

  const cfg = workspace({ 'eddie.config.json': JSON.stringify({ plan: { directory: 'custom-plan', filename: 'config-plan.json' } }) })
  const c2 = context(cfg)
  await tools.updatePlan({ tasks: [tasks[0]], filename: 'run-specific-plan.json' }, c2.ctx)
  assert.deepEqual(c2.prompts, ['Update plan with 1 tasks?'])
  assert.deepEqual(JSON.parse(readFileSync(join(cfg, 'custom-plan/run-specific-plan.json'), 'utf8')).tasks, [tasks[0]])
  r = await tools.getPlan({ filename: 'run-specific-plan.json' }, c2.ctx)
  assert.deepEqual(r.data.plan.tasks, [tasks[0]])

  r = await tools.updatePlan({ tasks, plan: { summary: 'Implementation roadmap', owner: 'planner', tasks } }, ctx)
  assert.deepEqual([r.data.plan.summary, r.data.plan.owner], ['Implementation roadmap', 'planner'])
  r = await tools.getPlan({}, ctx)
  assert.deepEqual([r.data.plan.summary, r.data.plan.owner], ['Implementation roadmap', 'planner'])

  await tools.updatePlan({ tasks: [
    { title: 'Draft feature overview', status: 'pending', completed: false, details: 'Outline' },
    { title: 'Implement planner integration', status: 'in_progress', completed: false, details: 'Wire it' },
  ] }, ctx)
  r = await tools.completeTask({ taskNumber: 2, abridged: true }, ctx)
  assert.deepEqual(r.data.plan.tasks[1], { title: 'Implement planner integration', status: 'complete', completed: true, details: 'Wire it' })
  assert.match(r.content, /1\. ⏳ Draft feature overview/)
  assert.match(r.content, /2\. ✅ Implement planner integration/)
  assert.ok(!r.content.includes('Wire it'))
  await rejectsWith(assert, tools.completeTask({ taskNumber: 3 }, ctx), 'TASK_NOT_FOUND', 'taskNumber must reference an existing task')
  await rejectsWith(assert, tools.completeTask({ taskNumber: 1.5 }, ctx), 'INVALID_ARGUMENT', 'taskNumber must be an integer')
  await rejectsWith(assert, tools.completeTask({ taskNumber: 0 }, ctx), 'INVALID_ARGUMENT', 'taskNumber must be at least 1')
  await rejectsWith(assert, tools.getPlan({ filename: 'a/b.json' }, ctx), 'INVALID_ARGUMENT', 'filename must not include directory separators')
  await rejectsWith(assert, tools.updatePlan({ tasks: [{ title: ' ', status: 'pending', completed: false }] }, ctx), 'INVALID_ARGUMENT', 'task title must be provided')
  await rejectsWith(assert, tools.updatePlan({ tasks: 'x' }, ctx), 'INVALID_ARGUMENT', 'tasks must be an array of plan entries')
})

test('task list tools: the contract cases', async () => {
  const doc = {
    metadata: { owner: 'agent' },
    tasks: [
      { id: 'alpha', title: 'Draft project outline', status: 'complete', summary: 'Outline project scope', details: null, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' },
      { id: 'beta', title: 'Review pull request', status: 'in_progress', summary: 'Collaborate with author', details: 'Ensure coverage improvements are sufficient', createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' },
      { id: 'gamma', title: 'Publish release notes', status: 'pending', summary: 'Write announcement', details: null, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' },
    ],
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
  }
  const ws = workspace({ '.tasks/daily.json': JSON.stringify(doc) })
  let r = await tools.agentGetTaskList({ taskListName: 'daily' }, { cwd: ws })
  assert.deepEqual(r.data.tasks, doc.tasks)
  assert.deepEqual(r.data.metadata, doc.metadata)
  for (const s of ['Task list "daily"', 'Tasks: 3 total', '1. ✓ [complete] Draft project outline — Outline project scope', '2. … [in_progress] Review pull request — Collaborate with author', '3. • [pending] Publish release notes — Write announcement']) assert.ok(r.content.includes(s), s)
  r = await tools.agentGetTaskList({ taskListName: 'daily', abridged: true }, { cwd: ws })
  for (const s of ['Task list "daily" — Next task: Review pull request (in_progress).', 'Summary: Collaborate with author', 'Details: Ensure coverage improvements are sufficient']) assert.ok(r.content.includes(s), s)
  assert.ok(!r.content.includes('Outline project scope'))

  r = await tools.agentGetTaskList({ taskListName: 'weekly' }, { cwd: ws })
  assert.deepEqual([r.data.tasks, r.data.metadata], [[], {}])
  assert.ok(r.content.includes('Tasks: 0 total'))
  const weekly = JSON.parse(readFileSync(join(ws, '.tasks/weekly.json'), 'utf8'))
  assert.deepEqual([weekly.tasks, weekly.metadata, typeof weekly.createdAt], [[], {}, 'string'])

  const fresh = workspace()
  let c = context(fresh)
  r = await tools.agentNewTaskList({ taskListName: 'daily', metadata: { owner: 'agent' } }, c.ctx)
  assert.deepEqual(c.prompts, ['Create new task list "daily"?'])
  assert.deepEqual([r.data.tasks, r.data.metadata], [[], { owner: 'agent' }])
  assert.deepEqual(JSON.parse(readFileSync(join(fresh, '.tasks/daily.json'), 'utf8')), r.data)
  c = context(fresh, false)
  r = await tools.agentNewTaskList({ taskListName: 'weekly' }, c.ctx)
  assert.deepEqual(c.prompts, ['Create new task list "weekly"?'])
  assert.ok(!existsSync(join(fresh, '.tasks/weekly.json')))
  assert.match(r.content, /cancelled/i)
  c = context(fresh)
  await rejectsWith(assert, tools.agentNewTaskList({ taskListName: 'invalid/name' }, c.ctx), 'INVALID_ARGUMENT', /task list name/i)
  assert.equal(c.prompts.length, 0)

  // new_task ordering, position and beforeTaskId
  const list = { metadata: { owner: 'agent' }, tasks: [{ id: 'alpha', title: 'A', status: 'pending', summary: null, details: null, createdAt: 'c', updatedAt: 'u' }, { id: 'omega', title: 'O', status: 'pending', summary: null, details: null, createdAt: 'c', updatedAt: 'u' }], createdAt: '2024-01-01T00:00:00.000Z', updatedAt: 'u' }
  const w2 = workspace({ '.tasks/daily.json': JSON.stringify(list) })
  c = context(w2)
  r = await tools.agentNewTask({ taskListName: 'daily', title: 'Write tests', summary: 's', details: 'd', metadata: { priority: 'high' }, beforeTaskId: 'omega' }, c.ctx)
  assert.deepEqual(c.prompts, ['Add task "Write tests" to list "daily"?'])
  const new1 = r.data.tasks[1]
  assert.deepEqual([r.data.tasks.map((t) => t.id)[0], new1.title, new1.status, new1.metadata], ['alpha', 'Write tests', 'pending', { priority: 'high' }])
  assert.ok(r.content.includes('Write tests') && r.content.includes('daily'))
  assert.equal(r.data.createdAt, '2024-01-01T00:00:00.000Z', 'createdAt is kept (§5.4)')
  r = await tools.agentNewTask({ taskListName: 'daily', title: 'Draft documentation', position: 1 }, c.ctx)
  assert.deepEqual(r.data.tasks.map((t) => t.title), ['A', 'Draft documentation', 'Write tests', 'O'])
  r = await tools.agentNewTask({ taskListName: 'daily', title: 'Wrap up tasks', beforeTaskId: 'missing' }, c.ctx)
  assert.equal(r.data.tasks.at(-1).title, 'Wrap up tasks')
  assert.equal(c.prompts.length, 3)
  assert.deepEqual(r.data.metadata, { owner: 'agent' })
  assert.deepEqual(JSON.parse(readFileSync(join(w2, '.tasks/daily.json'), 'utf8')).tasks.map((t) => t.title), r.data.tasks.map((t) => t.title))
})

test('task list tools: status and delete', async () => {
  const doc = {
    metadata: { owner: 'agent' },
    tasks: [
      { id: 'alpha', title: 'Draft spec', status: 'pending', summary: null, details: null, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' },
      { id: 'beta', title: 'Review pull request', status: 'in_progress', summary: null, details: null, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' },
      { id: 'gamma', title: 'Ship', status: 'pending', summary: null, details: null, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z' },
    ],
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
  }
  const ws = workspace({ '.tasks/daily.json': JSON.stringify(doc) })
  let c = context(ws)
  let r = await tools.agentSetTaskStatus({ taskListName: 'daily', taskId: 'alpha', status: 'complete' }, c.ctx)
  assert.deepEqual(c.prompts, ['Update task "alpha" in list "daily" to status "complete"?'])
  assert.equal(r.data.tasks[0].createdAt, doc.tasks[0].createdAt)
  assert.equal(r.data.tasks[0].updatedAt, r.data.updatedAt)
  assert.deepEqual(r.data.tasks.slice(1).map((t) => t.updatedAt), [doc.tasks[1].updatedAt, doc.tasks[2].updatedAt])
  assert.ok(r.content.includes('Next task: Review pull request') && r.content.includes('in_progress'))
  const before = readFileSync(join(ws, '.tasks/daily.json'), 'utf8')
  c = context(ws, false)
  r = await tools.agentSetTaskStatus({ taskListName: 'daily', taskId: 'beta', status: 'in_progress' }, c.ctx)
  assert.match(c.prompts[0], /in_progress/)
  assert.match(r.content, /cancelled/i)
  assert.equal(readFileSync(join(ws, '.tasks/daily.json'), 'utf8'), before)

  c = context(ws)
  r = await tools.agentDeleteTask({ taskListName: 'daily', taskId: 'beta' }, c.ctx)
  assert.deepEqual(c.prompts, ['Delete task "beta" from list "daily"?'])
  assert.deepEqual(r.data.tasks.map((t) => t.id), ['alpha', 'gamma'])
  assert.ok(r.content.includes('Deleted task "beta"') && r.content.includes('Next task: Ship (pending).'))
  const after = readFileSync(join(ws, '.tasks/daily.json'), 'utf8')
  c = context(ws, false)
  r = await tools.agentDeleteTask({ taskListName: 'daily', taskId: 'alpha' }, c.ctx)
  assert.match(r.content, /cancelled/i)
  assert.equal(readFileSync(join(ws, '.tasks/daily.json'), 'utf8'), after)

  c = context(ws)
  await rejectsWith(assert, tools.agentDeleteTask({ taskListName: 'daily', taskId: 'missing' }, c.ctx), 'TASK_NOT_FOUND', /could not find task with id "missing"/i)
  await rejectsWith(assert, tools.agentSetTaskStatus({ taskListName: 'daily', taskId: 'alpha', status: 'invalid' }, c.ctx), 'INVALID_ARGUMENT', /status must be one of/i)
  await rejectsWith(assert, tools.agentSetTaskStatus({ taskListName: 'daily', status: 'complete' }, c.ctx), 'INVALID_ARGUMENT', /taskId must be provided/i)
  await rejectsWith(assert, tools.agentSetTaskStatus({ taskListName: 'daily', taskId: 'missing', status: 'complete' }, c.ctx), 'TASK_NOT_FOUND', /could not find task with id "missing"/i)
  assert.equal(c.prompts.length, 0, 'errors come before confirm')
})

test('task list storage helpers', async () => {
  const ws = workspace()
  await assert.rejects(tools.writeTaskListDocument({ rootDir: ws, listName: 'foo/bar', document: { tasks: [] } }), /path separators/i)
  const written = await tools.writeTaskListDocument({ rootDir: ws, listName: 'daily', document: { metadata: { owner: 'agent' }, tasks: [
    { title: 'T', summary: 'S', details: 'D', status: 'in_progress', metadata: { estimate: 3 } },
    { id: 'provided-id', title: 'U', status: 'complete', metadata: { approvals: 2 } },
  ] } })
  assert.match(written.tasks[0].id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.deepEqual([written.tasks[1].summary, written.tasks[1].details], [null, null])
  assert.deepEqual(await tools.readTaskListDocument({ rootDir: ws, listName: 'daily' }), written)
  assert.ok(readFileSync(join(ws, '.tasks/daily.json'), 'utf8').endsWith('}\n'))
  assert.equal(tools.sanitiseTaskListName(' x '), 'x')
  assert.throws(() => tools.sanitiseTaskId('  '), (e) => e.code === 'INVALID_ARGUMENT' && e.message === 'taskId must be provided')
  assert.equal(tools.isTaskListTaskStatus('complete'), true)
  assert.deepEqual(tools.insertTaskPayload({ tasks: [{ id: 'a' }, { id: 'b' }], task: { id: 'n' }, position: 1 }), { tasks: [{ id: 'a' }, { id: 'n' }, { id: 'b' }], index: 1 })
  const content = tools.renderTaskListContent({ listName: 'daily', document: written, abridged: true })
  assert.equal(content, 'Task list "daily" — Next task: T (in_progress).\nSummary: S\nDetails: D')
  assert.deepEqual(tools.formatTaskListResult({ document: written, listName: 'daily', header: ' Hi ' }).content.split('\n')[0], 'Hi')
})
