//! `list_tasks` (Stack): the tasks of a task list, filtered by status and priority.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Priority, Status};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "list_tasks";

/// A status filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusFilter {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Complete,
    /// Finished (Stack's word).
    Done,
    /// Every task (default).
    All,
}

/// The arguments of `list_tasks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Only tasks with this status: `pending`, `in_progress`, `complete` (or `done`), `all` (default).
    pub status: Option<StatusFilter>,
    /// Only tasks with this priority: `low`, `medium`, `high`.
    pub priority: Option<Priority>,
    /// The task list (default `tasks`).
    pub task_list_name: Option<String>,
}

/// Run `list_tasks`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let name = super::list_name(a.task_list_name.as_deref(), super::DEFAULT_LIST)?;
    let path = super::locate(ctx, &name)?;
    let doc = super::read(&path).await?;
    let status = match a.status {
        None | Some(StatusFilter::All) => None,
        Some(StatusFilter::Pending) => Some(Status::Pending.stored()),
        Some(StatusFilter::InProgress) => Some(Status::InProgress.stored()),
        Some(StatusFilter::Complete | StatusFilter::Done) => Some(Status::Complete.stored()),
    };
    let tasks: Vec<Value> = doc
        .get("tasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(super::stack_task)
        .filter(|t| status.is_none_or(|s| t["status"] == s))
        .filter(|t| a.priority.is_none_or(|p| t["priority"] == p.as_str()))
        .collect();
    let mut content = if tasks.is_empty() {
        format!("No tasks in list \"{name}\" match.")
    } else {
        format!("{} tasks in list \"{name}\":", tasks.len())
    };
    for t in &tasks {
        content.push_str(&format!(
            "\n- [{}] {} ({}, {}): {}",
            t["status"].as_str().unwrap_or(""),
            t["id"].as_str().unwrap_or(""),
            t["priority"].as_str().unwrap_or(""),
            t["title"].as_str().unwrap_or(""),
            t["description"].as_str().unwrap_or("")
        ));
    }
    let count = tasks.len();
    Ok(ToolOutput::new(content, json!({"taskListName": name, "tasks": tasks, "count": count})))
}

/// The `list_tasks` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "listTasks",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("list_tasks.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
