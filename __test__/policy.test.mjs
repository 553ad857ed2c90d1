// The one argument policy, shown for every tool in the registry: `null` counts as absent
// everywhere; outside the eddie family an unknown key is refused with INVALID_ARGUMENT naming
// the valid keys; the eddie family ignores unknown keys as @eddie/tools does.
import test from 'node:test'
import assert from 'node:assert/strict'
import * as tools from '../index.js'
import { workspace } from './helpers.mjs'

/** The smallest valid arguments of each tool (a test fails when a new tool is missing here). */
const MINIMAL = {
  bash: { command: 'true' },
  file_read: { path: 'a.txt' },
  file_write: { path: 'new.txt', content: 'x' },
  file_search: {},
  get_folder_tree_structure: {},
  get_plan: {},
  complete_task: { taskNumber: 1 },
  update_plan: { tasks: [{ title: 't', status: 'pending' }] },
  agent__new_task_list: { taskListName: 'l' },
  agent__new_task: { taskListName: 'l', title: 't' },
  agent__get_task_list: { taskListName: 'l' },
  agent__set_task_status: { taskListName: 'l', taskId: 'x', status: 'complete' },
  agent__delete_task: { taskListName: 'l', taskId: 'x' },
  read_file: { path: 'a.txt' },
  write_file: { path: 'new.txt', content: 'x' },
  edit_file: { path: 'a.txt', oldString: 'one', newString: 'ONE' },
  multi_edit: { path: 'a.txt', edits: [{ oldString: 'one', newString: 'ONE' }] },
  apply_unified_diff: { diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n' },
  apply_patch: { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n' },
  assess_patch_risk: { diff: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n' },
  edit_range: { path: 'a.txt', startLine: 1, endLine: 1, content: 'ONE' },
  insert_at: { path: 'a.txt', lineNumber: 1, content: 'zero' },
  delete_range: { path: 'a.txt', startLine: 1, endLine: 1 },
  copy_file: { source: 'a.txt', destination: 'b.txt' },
  move_file: { source: 'a.txt', destination: 'b.txt' },
  delete_file: { path: 'a.txt' },
  list_directory: {},
  get_file_info: { path: 'a.txt' },
  grep: { pattern: 'one' },
  glob: { pattern: '*.txt' },
  list_symbols: { path: 'm.py' },
  find_symbol: { symbol: 'f' },
  find_references: { symbol: 'f' },
  search_codebase: { query: 'f' },
  project_map: {},
  run: { command: 'true' },
  process_start: { command: 'true' },
  process_read: { id: 'p999999' },
  process_write: { id: 'p999999', stdin: 'x' },
  process_wait: { id: 'p999999' },
  process_kill: { id: 'p999999' },
  process_list: {},
  detect_project: {},
  run_tests: {},
  lint: {},
  format: {},
  typecheck: {},
  build: {},
  install: {},
  check_permission: { toolName: 'grep' },
  // The web family: loopback is blocked by the default network policy, so nothing is sent.
  web_fetch: { url: 'http://127.0.0.1:9/' },
  download: { url: 'http://127.0.0.1:9/x', path: 'x.bin' },
  check_url: { url: 'http://127.0.0.1:9/' },
  web_search: { query: 'x' },
  ask_user: { question: 'q?' },
  ask_followup_question: { question: 'q?' },
  attempt_completion: { result: 'done' },
  git_status: {},
  memory_save: { key: 'k', value: 'v' },
  memory_delete: { key: 'k' },
  memory_list: {},
  memory_recall: { query: 'k' },
  create_task: { title: 't' },
  list_tasks: {},
  update_task: { taskId: 't', status: 'done' },
  delete_task: { taskId: 't' },
  create_plan: { goal: 'g', steps: ['s'] },
  execute_plan: { planId: 'p' },
  cache_store: { key: 'k', value: 'v' },
  cache_retrieve: { key: 'k' },
  cache_delete: { key: 'k' },
  cache_clear: { tier: 'reasoning' },
  cache_keys: {},
  cache_stats: {},
  context_load: {},
  project_scan: {},
  // The browser family: what needs the network is refused by the default policy (nothing sent);
  // the rest acts on the launched browser's about:blank tab (a declined confirm clicks nothing).
  browser_status: {},
  browser_navigate: { url: 'http://127.0.0.1:9/' },
  browser_read_page: {},
  browser_screenshot: { path: 'shot.png' },
  browser_click: { selector: 'body' },
  browser_type: { text: 'x' },
  browser_find: { query: 'x' },
  browser_get_tabs: {},
  browser_new_tab: { url: 'http://127.0.0.1:9/' },
  browser_close_tab: { tabId: 999 },
  browser_console: {},
  browser_network: {},
  screenshot: { url: 'http://127.0.0.1:9/' },
  git_diff: {},
  git_log: {},
  git_show: {},
  git_blame: { file: 'a.txt' },
  git_stage: {},
  git_unstage: {},
  git_commit: { message: 'm' },
  git_branch: {},
  is_protected_branch: {},
  git_checkpoint: {},
  git_list_checkpoints: {},
  git_restore_checkpoint: { checkpoint: 'x' },
  git_push: {},
  git_pull: {},
}

const fresh = () => workspace({ 'a.txt': 'one\ntwo\n', 'm.py': 'def f():\n    return 1\n' })

/** How a call ended: the result's schema, or the error's code (confirm declines: no changes). */
async function outcome(spec, args, cwd = fresh()) {
  const ctx = { cwd, confirm: async () => false, ask: async () => 'yes' }
  try {
    const out = await tools.runTool(spec.name, args, ctx)
    return { ok: out.schema, content: out.content, data: out.data }
  } catch (err) {
    assert.equal(typeof err.code, 'string', `${spec.name}: ${err.message}`)
    return { code: err.code, message: err.message }
  }
}

/** A result without what differs between two identical calls (timings, process ids, clocks, a store's `replaced`). */
function comparable(o) {
  const iso = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g
  // The in-memory search index's state is a fact about this process (a root searched twice
  // starts building), not about the call.
  const text = (v) => JSON.stringify(v ?? null, (k, x) => (k === 'index' && x && typeof x === 'object' && 'state' in x ? null : x))
    .replace(iso, 'T').replace(/"(durationMs|elapsedMs|mtime|modified|ms)":[^,}]*/g, '"$1":0')
    .replace(/"(replaced|ageMs)":[^,}]*/g, '"$1":0')
  return o.code !== undefined
    ? { code: o.code, message: o.message }
    : { ok: o.ok, content: o.content.replace(iso, 'T').replace(/\d+(\.\d+)? ?ms\b/g, 'N ms'), data: text(o.data) }
}

test('every tool has minimal arguments here', () => {
  const missing = tools.toolSpecs().map((s) => s.name).filter((n) => !(n in MINIMAL))
  assert.deepEqual(missing, [])
})

test('an unknown key: refused outside eddie (naming the valid keys), ignored by eddie', async () => {
  for (const spec of tools.toolSpecs()) {
    const base = MINIMAL[spec.name]
    if (spec.family === 'eddie') {
      const cwd = fresh()
      assert.deepEqual(comparable(await outcome(spec, { ...base, notAnOption: 1 }, cwd)), comparable(await outcome(spec, base, cwd)), spec.name)
      continue
    }
    const got = await outcome(spec, { ...base, notAnOption: 1 })
    assert.equal(got.code, 'INVALID_ARGUMENT', `${spec.name}: ${JSON.stringify(got)}`)
    const valid = Object.keys(spec.jsonSchema.properties ?? {}).join(', ')
    assert.ok(got.message.includes(`unknown argument \`notAnOption\``), got.message)
    assert.ok(got.message.endsWith(`valid arguments: ${valid}`), got.message)
  }
})

test('a misspelt key is refused with the closest valid key', async () => {
  const got = await outcome({ name: 'grep' }, { pattern: 'x', maxResult: 3 })
  assert.match(got.message, /unknown argument `maxResult` \(use `maxResults`\)/)
  const typo = await outcome({ name: 'runCommand' }, { command: 'true', timout: 3 })
  assert.match(typo.message, /unknown argument `timout` \(use `timeout`\)/)
})

test('null for every optional field is the same call as leaving them out', async () => {
  for (const spec of tools.toolSpecs()) {
    const base = MINIMAL[spec.name]
    const required = new Set(spec.jsonSchema.required ?? [])
    const nulls = Object.fromEntries(
      Object.keys(spec.jsonSchema.properties ?? {}).filter((k) => !required.has(k) && !(k in base)).map((k) => [k, null]),
    )
    const cwd = fresh()
    const [withNulls, without] = [await outcome(spec, { ...base, ...nulls }, cwd), await outcome(spec, base, cwd)]
    assert.deepEqual(comparable(withNulls), comparable(without), `${spec.name} with ${JSON.stringify(nulls)}`)
  }
})

test('eddie: a null maxBytes is the default, not a 1-byte cap', async () => {
  const cwd = workspace({ 'a.txt': 'hello world\n' })
  const read = await tools.fileRead({ path: 'a.txt', maxBytes: null }, { cwd })
  assert.equal(read.data.content ?? read.content, read.content)
  assert.ok(read.content.includes('hello world'), read.content)
  const ran = await tools.bash({ command: 'echo hello world', maxBytes: null }, { cwd, confirm: async () => true })
  assert.equal(ran.data.stdout, 'hello world\n')
})
