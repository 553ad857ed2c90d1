//! Task-list tools (`agent__*`): named lists stored as `.tasks/<name>.json` in the workspace.

pub mod store;

/// The outputSchema `$id` shared by the task-list tools.
pub const SCHEMA: &str = "eddie.tool.task_list.result.v1";
