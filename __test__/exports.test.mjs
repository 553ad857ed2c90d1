// The drop-in surface: builtinTools, *Tool constants, schemas, generated files, the CLI.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as tools from '../index.js'
import { workspace } from './helpers.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const eddie = JSON.parse(readFileSync(join(root, 'crates/eddie_tools_core/src/eddie/eddie.json'), 'utf8'))

test('builtinTools: eddie order, names, schemas byte-identical', () => {
  assert.deepEqual(tools.builtinTools.map((t) => t.name), [
    'bash', 'file_read', 'file_write', 'file_search', 'get_folder_tree_structure', 'get_plan', 'complete_task',
    'update_plan', 'agent__new_task_list', 'agent__new_task', 'agent__get_task_list', 'agent__set_task_status', 'agent__delete_task',
  ])
  for (const [i, t] of tools.builtinTools.entries()) {
    assert.deepEqual(Object.keys(t), ['name', 'description', 'jsonSchema', 'outputSchema', 'handler'])
    assert.equal(typeof t.handler, 'function')
    assert.equal(t.description, eddie[i].description)
    assert.equal(JSON.stringify(t.jsonSchema), JSON.stringify(eddie[i].jsonSchema))
    assert.equal(JSON.stringify(t.outputSchema), JSON.stringify(eddie[i].outputSchema))
  }
  for (const n of ['bashTool', 'completeTaskTool', 'fileReadTool', 'fileWriteTool', 'getFolderTreeStructureTool', 'getPlanTool',
    'updatePlanTool', 'agentNewTaskListTool', 'agentGetTaskListTool', 'agentSetTaskStatusTool', 'agentDeleteTaskTool']) {
    assert.ok(tools.builtinTools.includes(tools[n]), n)
  }
  assert.equal(tools.TASK_LIST_RESULT_SCHEMA.$id, 'eddie.tool.task_list.result.v1')
  assert.deepEqual(tools.errorCodes().slice(0, 3), ['INVALID_ARGUMENT', 'OUTSIDE_WORKSPACE', 'NOT_FOUND'])
  const mutating = tools.toolSpecs().filter((s) => s.family === 'eddie' && !s.mutating).map((s) => s.name)
  assert.deepEqual(mutating, ['file_read', 'file_search', 'get_folder_tree_structure', 'get_plan'])
})

test('results are exactly {schema, content, data} with the outputSchema $id', async () => {
  const ws = workspace({ 'a.txt': 'TODO' })
  const ctx = { cwd: ws, confirm: () => true }
  for (const t of tools.builtinTools.filter((x) => !x.name.startsWith('bash'))) {
    const table = { file_read: { path: 'a.txt' }, file_write: { path: 'b.txt', content: 'x' }, file_search: { content: 'TODO' },
      complete_task: null, update_plan: { tasks: [] }, agent__new_task: { taskListName: 'l', title: 'x' },
      agent__set_task_status: null, agent__delete_task: null }
    const args = t.name in table ? table[t.name] : { taskListName: 'l' }
    if (args === null) continue
    const r = await t.handler(args, ctx)
    assert.deepEqual(Object.keys(r), ['schema', 'content', 'data'], t.name)
    assert.equal(r.schema, t.outputSchema.$id, t.name)
  }
})

test('the generated index files are up to date', () => {
  const before = ['index.js', 'index.d.ts', 'binding.d.ts'].map((f) => readFileSync(join(root, f), 'utf8'))
  execFileSync(process.execPath, [join(root, 'scripts/gen-index.mjs')])
  const after = ['index.js', 'index.d.ts', 'binding.d.ts'].map((f) => readFileSync(join(root, f), 'utf8'))
  assert.deepEqual(after, before, 'run `node scripts/gen-index.mjs` and commit the result')
})

test('the CLI runs a tool and reports errors as JSON', () => {
  const ws = workspace({ 'notes.txt': 'a TODO here' })
  const cli = join(root, 'bin/eddie-tools.js')
  const ok = JSON.parse(execFileSync(process.execPath, [cli, 'file_search', '{"content":"TODO"}'], { cwd: ws, encoding: 'utf8' }))
  assert.equal(ok.data.results[0].path, 'notes.txt')
  const no = spawnSync(process.execPath, [cli, 'file_write', '{"path":"x","content":"y"}'], { cwd: ws, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  assert.equal(no.status, 3, 'an approval needed and not given exits 3')
  assert.equal(JSON.parse(no.stderr).error.code, 'APPROVAL_REQUIRED', 'no TTY and no --yes: no one could be asked')
  assert.ok(!existsSync(join(ws, 'x')))
  const yes = JSON.parse(execFileSync(process.execPath, [cli, 'fileWrite', '{"path":"x","content":"y"}', '--yes'], { cwd: ws, encoding: 'utf8' }))
  assert.equal(yes.content, 'Wrote x')
  const bad = spawnSync(process.execPath, [cli, 'file_read', '{"path":"../x"}'], { cwd: ws, encoding: 'utf8' })
  assert.equal(bad.status, 1)
  assert.equal(JSON.parse(bad.stderr).error.code, 'OUTSIDE_WORKSPACE')
})

test('every tool in toolSpecs() has its named export, and the export runs that tool', async () => {
  const cwd = workspace({ 'a.txt': 'x\n' })
  for (const s of tools.toolSpecs()) {
    assert.equal(typeof tools[s.jsName], 'function', s.jsName)
    assert.equal(tools[s.jsName].name, s.jsName)
    assert.equal(tools[`${s.jsName}Tool`].name, s.name)
    // An argument no tool has: outside eddie the refusal names the tool that ran.
    if (s.family === 'eddie') continue
    await assert.rejects(tools[s.jsName]({ notAnOption: 1 }, { cwd }), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT')
      assert.ok(e.message.startsWith(`${s.name}: unknown argument`), `${s.jsName}: ${e.message}`)
      return true
    })
  }
})
