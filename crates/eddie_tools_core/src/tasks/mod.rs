//! Task-list tools (`agent__*`): named lists stored as `.tasks/<name>.json` in the workspace.

pub mod delete_task;
pub mod get_task_list;
pub mod new_task;
pub mod new_task_list;
pub mod set_task_status;
pub mod store;

/// The outputSchema `$id` shared by the task-list tools.
pub const SCHEMA: &str = "eddie.tool.task_list.result.v1";
