// Descriptions for the properties whose schema has none (eddie's verbatim schemas, and a few of the
// files family's). The adapters add them when they build what a model sees; the registry and
// `toolSpecs()` stay as they are. Keys: tool name → property path (`a.b`, `a[]` for items).
// @ts-check
'use strict'

const TASK = {
  title: 'Task title (non-empty).',
  status: 'pending, in_progress or complete.',
  completed: 'Whether the task is done (true when status is complete).',
  details: 'Optional notes for the task.',
}
const planTasks = (/** @type {string} */ prefix) => Object.fromEntries(Object.entries(TASK).map(([k, v]) => [`${prefix}[].${k}`, v]))
const PLAN_FILE = 'Plan file name inside the plan directory (default plan.json; no path separators).'
const ABRIDGED = 'Show only pending and in-progress tasks.'
const LIST = 'Task list name (stored as .tasks/<name>.json; no path separators).'

const PROPERTY_DESCRIPTIONS = {
  bash: {
    command: 'Shell command line to run.',
    timeoutMs: 'Time limit in milliseconds (default 15000); the whole process tree is killed at the limit.',
    cwd: 'Working directory, relative to the workspace (default: the workspace root).',
    maxBytes: 'Cap on captured output in bytes (1-512000, default 512000).',
  },
  file_read: {
    path: 'File path, relative to the workspace.',
    maxBytes: 'Page size in bytes, as pageSize (pageSize wins when both are given).',
    page: '1-based page number (default 1).',
    pageSize: 'Bytes per page (default 20480).',
  },
  file_write: {
    path: 'File path, relative to the workspace (parent folders are created).',
    content: 'The whole new content of the file.',
  },
  file_search: {
    root: 'Folder to search, relative to the workspace (default ".").',
    content: 'Regular expression (JavaScript syntax) matched against each line.',
    name: 'Regular expression matched against file names.',
    include: 'Only paths matching one of these regular expressions.',
    exclude: 'Skip paths matching any of these regular expressions.',
    includeDependencies: 'Also search dependency folders such as node_modules (default false).',
    page: '1-based page of results (default 1).',
    pageSize: 'Files per page (1-1000, default 20).',
  },
  get_folder_tree_structure: {
    path: 'Folder to list, relative to the workspace (default ".").',
    maxDepth: 'Deepest level to list.',
    includeHidden: 'Include dot files and folders.',
    includeDependencies: 'Include dependency folders such as node_modules (default false).',
    maxEntries: 'Most entries to return (default 200).',
    offset: 'Entries to skip, for the next page (nextOffset of the previous call).',
  },
  get_plan: { abridged: ABRIDGED, filename: PLAN_FILE },
  complete_task: { taskNumber: '1-based number of the task in the plan.', abridged: ABRIDGED, filename: PLAN_FILE },
  update_plan: {
    tasks: 'The whole plan: every task, in order (replaces the stored list).',
    ...planTasks('tasks'),
    abridged: ABRIDGED,
    filename: PLAN_FILE,
    plan: 'Optional plan document: extra keys are stored; its tasks, when given, replace `tasks`.',
    'plan.tasks': 'The whole plan, as in `tasks`.',
    ...planTasks('plan.tasks'),
  },
  agent__new_task_list: { taskListName: LIST, metadata: 'Optional metadata stored with the list.' },
  agent__new_task: {
    taskListName: LIST,
    title: 'Task title (non-empty).',
    summary: 'Optional one-line summary.',
    details: 'Optional details.',
    metadata: 'Optional metadata stored with the task.',
    status: 'pending (default), in_progress or complete.',
    position: '0-based index to insert at (default: the end).',
    beforeTaskId: 'Insert before the task with this id.',
  },
  agent__get_task_list: { taskListName: LIST, abridged: ABRIDGED },
  agent__set_task_status: { taskListName: LIST, taskId: 'Id of the task.', status: 'pending, in_progress or complete.', abridged: ABRIDGED },
  agent__delete_task: { taskListName: LIST, taskId: 'Id of the task to delete.', abridged: ABRIDGED },
  multi_edit: {
    edits: 'The replacements, each located in the current file; they must not overlap.',
    'edits[].oldString': 'Exact text to replace.',
    'edits[].newString': 'Replacement text.',
    'edits[].all': 'Replace every occurrence (default: exactly one must match).',
  },
  edit_range: { startLine: 'First line to replace (1-based).', endLine: 'Last line to replace (1-based, inclusive).', content: 'New text for those lines (empty deletes them).' },
  insert_at: { lineNumber: 'Insert before this line (1-based; last line + 1 appends).', content: 'Text to insert as new lines.' },
  delete_range: { startLine: 'First line to delete (1-based).', endLine: 'Last line to delete (1-based, inclusive).' },
  copy_file: { source: 'File or folder to copy, relative to the workspace.', destination: 'Where to copy it, relative to the workspace.' },
  move_file: { source: 'File or folder to move, relative to the workspace.', destination: 'New path, relative to the workspace.' },
  list_directory: { recursive: 'Walk subdirectories too.' },
  process_start: { args: 'Arguments, passed as they are (no shell).' },
}

/**
 * A copy of `schema` (tool `name`'s input schema) with the missing property descriptions added.
 * @param {string} name
 * @param {Record<string, any>} schema
 * @returns {any}
 */
function withDescriptions(name, schema) {
  const table = /** @type {Record<string, Record<string, string>>} */ (PROPERTY_DESCRIPTIONS)[name]
  if (!table) return schema
  /** @type {(s: any, path: string) => any} */
  const walk = (s, path) => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return s
    const out = { ...s }
    if (path && !out.description && table[path]) out.description = table[path]
    if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, walk(v, path ? `${path}.${k}` : k)]))
    if (s.items) out.items = walk(s.items, `${path}[]`)
    return out
  }
  return walk(schema, '')
}

module.exports = { PROPERTY_DESCRIPTIONS, withDescriptions }
