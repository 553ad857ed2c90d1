//! Plan tools (`get_plan`, `complete_task`, `update_plan`) over one JSON plan document,
//! located through the eddie config (`plan.directory`, `plan.filename`).

pub mod store;
pub mod tasks;
