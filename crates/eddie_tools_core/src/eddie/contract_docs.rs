//! Descriptions for the properties of eddie's verbatim contract schemas, which have none.
//! The contract's `jsonSchema` stays byte for byte; the schema a model sees
//! ([`crate::registry::model_schema`]) carries these (see [`crate::spec::Family::contract_docs`]).

const PLAN_FILE: &str = "Plan file name inside the plan directory (default plan.json; no path separators).";
const ABRIDGED: &str = "Show only pending and in-progress tasks.";
const LIST: &str = "Task list name (stored as .tasks/<name>.json; no path separators).";
const TITLE: &str = "Task title (non-empty).";
const STATUS: &str = "pending, in_progress or complete.";
const COMPLETED: &str = "Whether the task is done (true when status is complete).";
const DETAILS: &str = "Optional notes for the task.";

/// `(tool, property path, description)`.
pub const DOCS: &[(&str, &str, &str)] = &[
    ("bash", "command", "Shell command line to run."),
    (
        "bash",
        "timeoutMs",
        "Time limit in milliseconds (default 15000); the whole process tree is killed at the limit.",
    ),
    ("bash", "cwd", "Working directory, relative to the workspace (default: the workspace root)."),
    ("bash", "maxBytes", "Cap on captured output in bytes (1-512000, default 512000)."),
    ("file_read", "path", "File path, relative to the workspace."),
    ("file_read", "maxBytes", "Page size in bytes, as pageSize (pageSize wins when both are given)."),
    ("file_read", "page", "1-based page number (default 1)."),
    ("file_read", "pageSize", "Bytes per page (default 20480)."),
    ("file_write", "path", "File path, relative to the workspace (parent folders are created)."),
    ("file_write", "content", "The whole new content of the file."),
    ("file_search", "root", "Folder to search, relative to the workspace (default \".\")."),
    ("file_search", "content", "Regular expression (JavaScript syntax) matched against each line."),
    ("file_search", "name", "Regular expression matched against file names."),
    ("file_search", "include", "Only paths matching one of these regular expressions."),
    ("file_search", "exclude", "Skip paths matching any of these regular expressions."),
    (
        "file_search",
        "includeDependencies",
        "Also search dependency folders such as node_modules (default false).",
    ),
    ("file_search", "page", "1-based page of results (default 1)."),
    ("file_search", "pageSize", "Files per page (1-1000, default 20)."),
    ("get_folder_tree_structure", "path", "Folder to list, relative to the workspace (default \".\")."),
    ("get_folder_tree_structure", "maxDepth", "Deepest level to list."),
    ("get_folder_tree_structure", "includeHidden", "Include dot files and folders."),
    (
        "get_folder_tree_structure",
        "includeDependencies",
        "Include dependency folders such as node_modules (default false).",
    ),
    ("get_folder_tree_structure", "maxEntries", "Most entries to return (default 200)."),
    (
        "get_folder_tree_structure",
        "offset",
        "Entries to skip, for the next page (nextOffset of the previous call).",
    ),
    ("get_plan", "abridged", ABRIDGED),
    ("get_plan", "filename", PLAN_FILE),
    ("complete_task", "taskNumber", "1-based number of the task in the plan."),
    ("complete_task", "abridged", ABRIDGED),
    ("complete_task", "filename", PLAN_FILE),
    ("update_plan", "tasks", "The whole plan: every task, in order (replaces the stored list)."),
    ("update_plan", "tasks[].title", TITLE),
    ("update_plan", "tasks[].status", STATUS),
    ("update_plan", "tasks[].completed", COMPLETED),
    ("update_plan", "tasks[].details", DETAILS),
    ("update_plan", "abridged", ABRIDGED),
    ("update_plan", "filename", PLAN_FILE),
    (
        "update_plan",
        "plan",
        "Optional plan document: extra keys are stored; its tasks, when given, replace `tasks`.",
    ),
    ("update_plan", "plan.tasks", "The whole plan, as in `tasks`."),
    ("update_plan", "plan.tasks[].title", TITLE),
    ("update_plan", "plan.tasks[].status", STATUS),
    ("update_plan", "plan.tasks[].completed", COMPLETED),
    ("update_plan", "plan.tasks[].details", DETAILS),
    ("agent__new_task_list", "taskListName", LIST),
    ("agent__new_task_list", "metadata", "Optional metadata stored with the list."),
    ("agent__new_task", "taskListName", LIST),
    ("agent__new_task", "title", TITLE),
    ("agent__new_task", "summary", "Optional one-line summary."),
    ("agent__new_task", "details", "Optional details."),
    ("agent__new_task", "metadata", "Optional metadata stored with the task."),
    ("agent__new_task", "status", "pending (default), in_progress or complete."),
    ("agent__new_task", "position", "0-based index to insert at (default: the end)."),
    ("agent__new_task", "beforeTaskId", "Insert before the task with this id."),
    ("agent__get_task_list", "taskListName", LIST),
    ("agent__get_task_list", "abridged", ABRIDGED),
    ("agent__set_task_status", "taskListName", LIST),
    ("agent__set_task_status", "taskId", "Id of the task."),
    ("agent__set_task_status", "status", STATUS),
    ("agent__set_task_status", "abridged", ABRIDGED),
    ("agent__delete_task", "taskListName", LIST),
    ("agent__delete_task", "taskId", "Id of the task to delete."),
    ("agent__delete_task", "abridged", ABRIDGED),
];
