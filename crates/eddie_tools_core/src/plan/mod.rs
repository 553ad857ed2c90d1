//! Plan tools (`get_plan`, `complete_task`, `update_plan`) over one JSON plan document,
//! located through the eddie config (`plan.directory`, `plan.filename`).

pub mod complete_task;
pub mod get_plan;
pub mod store;
pub mod update_plan;

/// The outputSchema `$id` shared by the plan tools.
pub const SCHEMA: &str = "eddie.tool.plan.result.v1";
