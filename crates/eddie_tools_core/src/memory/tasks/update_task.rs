//! `update_task` (Stack): change a task's status, title, description or priority, after
//! `ctx.confirm`. Stack's `done` is stored as eddie's `complete`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Priority, Status};
use crate::context::Ctx;
use crate::engine::plan::store::now_iso;
use crate::engine::plan::tasks::store;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "update_task";

/// The arguments of `update_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The task's id (also: task_id).
    pub task_id: String,
    /// New status: `pending`, `in_progress`, `complete` (or Stack's `done`).
    pub status: Option<Status>,
    /// New title.
    pub title: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New priority: `low`, `medium`, `high`.
    pub priority: Option<Priority>,
    /// The task list (default `tasks`).
    pub task_list_name: Option<String>,
}

/// Run `update_task`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let id = store::sanitise_task_id(Some(&Value::String(a.task_id.clone())))?;
    let name = super::list_name(a.task_list_name.as_deref(), super::DEFAULT_LIST)?;
    if a.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ToolError::invalid("title must not be empty"));
    }
    let mut updated: Vec<&str> = Vec::new();
    for (set, field) in [
        (a.status.is_some(), "status"),
        (a.title.is_some(), "title"),
        (a.description.is_some(), "description"),
        (a.priority.is_some(), "priority"),
    ] {
        if set {
            updated.push(field);
        }
    }
    if updated.is_empty() {
        return Err(ToolError::invalid("nothing to update: give status, title, description or priority"));
    }
    let path = super::locate(ctx, &name)?;
    let doc = super::read(&path).await?;
    if store::find(&doc, &id).is_none() {
        return Err(super::task_not_found(&id, &name));
    }
    let fields: Vec<String> = updated.iter().map(|s| (*s).to_owned()).collect();
    if !ctx.confirm(format!("Update task \"{id}\" in list \"{name}\" ({})?", fields.join(", "))).await? {
        return Ok(ToolOutput::new(
            format!("Updating task {id} was cancelled; nothing changed."),
            json!({"taskId": id, "taskListName": name, "updated": [], "cancelled": true, "task": null}),
        ));
    }
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let (task_id, list) = (id.clone(), name.clone());
    let doc = crate::blocking("task list", move || {
        let mut doc = store::read(&path)?;
        let i = store::find(&doc, &task_id).ok_or_else(|| super::task_not_found(&task_id, &list))?;
        let t = &mut doc["tasks"][i];
        if let Some(s) = a.status {
            t["status"] = json!(s.stored());
        }
        if let Some(title) = a.title {
            t["title"] = json!(title.trim());
        }
        if a.description.is_some() || a.priority.is_some() {
            let mut meta = t.get("metadata").and_then(Value::as_object).cloned().unwrap_or_else(Map::new);
            if let Some(d) = a.description {
                meta.insert("description".into(), json!(d));
            }
            if let Some(p) = a.priority {
                meta.insert("priority".into(), json!(p.as_str()));
            }
            t["metadata"] = Value::Object(meta);
        }
        t["updatedAt"] = json!(now_iso());
        store::write(&path, &doc, true)
    })
    .await?;
    let task = store::find(&doc, &id).map(|i| super::stack_task(&doc["tasks"][i])).unwrap_or(Value::Null);
    Ok(ToolOutput::new(
        format!("Updated task {id} in list \"{name}\": {}.", fields.join(", ")),
        json!({"taskId": id, "taskListName": name, "updated": fields, "cancelled": false, "task": task}),
    ))
}

/// The `update_task` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "updateTask",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("update_task.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
