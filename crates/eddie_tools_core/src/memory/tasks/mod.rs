//! Stack's task and plan tools on eddie's task-list store (`.tasks/<list>.json`, the files of
//! the `agent__*` tools): eddie's tools read what these write and the reverse.
//!
//! - A task is a store task; Stack's `description` and `priority` live in its `metadata`
//!   (a task eddie created shows its `details` as the description, priority `medium`).
//! - Stack's tasks go to the list `tasks` unless `taskListName` names another.
//! - A plan is a list of its own, named by the plan id (`plan-1a2b3c4d`): its steps are the
//!   list's tasks, and `metadata` holds `kind: "plan"`, the `goal` and the plan's `status`.
//! - Stack's status `done` is eddie's `complete`.

pub mod create_plan;
pub mod create_task;
pub mod delete_task;
pub mod execute_plan;
pub mod list_tasks;
pub mod update_task;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::plan::tasks::store;
use crate::error::{ErrorCode, Result, ToolError};
use crate::workspace::Resolved;

/// The list Stack's tasks go to by default.
pub const DEFAULT_LIST: &str = "tasks";

/// A task's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Low.
    Low,
    /// Medium (default).
    #[default]
    Medium,
    /// High.
    High,
}

impl Priority {
    /// The stored string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// A task status as Stack and eddie spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished (eddie's word).
    Complete,
    /// Finished (Stack's word; stored as `complete`).
    Done,
}

impl Status {
    /// The stored string (`done` is stored as `complete`).
    pub fn stored(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Complete | Self::Done => "complete",
        }
    }
}

/// The list name: the argument (checked as eddie checks it) or `default`.
pub fn list_name(arg: Option<&str>, default: &str) -> Result<String> {
    match arg {
        None => Ok(default.to_owned()),
        Some(s) => store::sanitise_task_list_name(Some(&Value::String(s.to_owned()))),
    }
}

/// Where list `name` lives.
pub fn locate(ctx: &Ctx, name: &str) -> Result<Resolved> {
    store::locate(&ctx.workspace, name)
}

/// Read list `path` on the blocking pool (an empty document when it does not exist).
pub async fn read(path: &Resolved) -> Result<Value> {
    let p = path.clone();
    crate::blocking("task list", move || store::read(&p)).await
}

/// Stack's view of a stored task.
pub fn stack_task(t: &Value) -> Value {
    let meta = t.get("metadata");
    let description = meta
        .and_then(|m| m.get("description"))
        .and_then(Value::as_str)
        .or_else(|| t.get("details").and_then(Value::as_str))
        .unwrap_or("");
    let priority = meta.and_then(|m| m.get("priority")).and_then(Value::as_str).unwrap_or("medium");
    json!({
        "id": t.get("id").cloned().unwrap_or(Value::Null),
        "title": t.get("title").cloned().unwrap_or_else(|| json!("")),
        "description": description,
        "priority": priority,
        "status": t.get("status").cloned().unwrap_or_else(|| json!("pending")),
        "created": t.get("createdAt").cloned().unwrap_or(Value::Null),
        "updated": t.get("updatedAt").cloned().unwrap_or(Value::Null),
    })
}

/// `TASK_NOT_FOUND` for task `id` of list `name`.
pub fn task_not_found(id: &str, name: &str) -> ToolError {
    store::not_found(id, name).with_prop("taskId", id)
}

/// `NOT_FOUND` for plan `id`.
pub fn plan_not_found(id: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!("no plan \"{id}\" (.tasks/{id}.json does not exist); create_plan makes one"),
    )
    .with_prop("planId", id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_view_reads_eddie_tasks() {
        let t = json!({"id": "a", "title": "T", "status": "complete", "details": "d", "createdAt": "x", "updatedAt": "y"});
        let s = stack_task(&t);
        assert_eq!(s["description"], "d");
        assert_eq!(s["priority"], "medium");
        assert_eq!(Status::Done.stored(), "complete");
    }
}
