//! `agent__new_task`: add a task to a list (created if missing), after `ctx.confirm`.
//!
//! Unlike `@eddie/tools`, the list keeps its `createdAt` (contract §5.4).

use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::engine::plan::tasks::store;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Run `agent__new_task`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let name = store::sanitise_task_list_name(args.get("taskListName"))?;
    let title = match args.get("title") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => return Err(ToolError::invalid("title must be provided")),
    };
    let status = match args.get("status") {
        None | Some(Value::Null) => "pending".to_owned(),
        v if store::is_status(v) => v.and_then(Value::as_str).unwrap_or("pending").to_owned(),
        _ => return Err(ToolError::invalid("status must be one of pending, in_progress, or complete")),
    };
    let path = store::locate(&ctx.workspace, &name)?;
    let approved = ctx.confirm(format!("Add task \"{title}\" to list \"{name}\"?")).await?;
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    if !approved {
        let doc = crate::blocking("task list", move || store::read(&path)).await?;
        let header = format!("Task creation cancelled for \"{name}\".");
        return Ok(store::format_result(&name, doc, Some(&header), false));
    }
    let text = |k: &str| args.get(k).filter(|v| v.is_string()).cloned().unwrap_or(Value::Null);
    let mut task = Map::new();
    task.insert("id".into(), Value::String(uuid::Uuid::new_v4().to_string()));
    task.insert("title".into(), Value::String(title.clone()));
    task.insert("status".into(), Value::String(status.clone()));
    task.insert("summary".into(), text("summary"));
    task.insert("details".into(), text("details"));
    if let Some(Value::Object(m)) = args.get("metadata") {
        task.insert("metadata".into(), Value::Object(m.clone()));
    }
    let at = store::InsertAt {
        before_task_id: args.get("beforeTaskId").and_then(Value::as_str).map(str::to_owned),
        position: args.get("position").cloned(),
    };
    let doc = crate::blocking("task list", move || {
        let mut doc = store::read(&path)?;
        let mut tasks = doc.get("tasks").and_then(Value::as_array).cloned().unwrap_or_default();
        store::insert(&mut tasks, Value::Object(task), &at);
        doc["tasks"] = Value::Array(tasks);
        store::write(&path, &doc, true)
    })
    .await?;
    let header = format!("Added task \"{title}\" (status {status}) to \"{name}\".");
    Ok(store::format_result(&name, doc, Some(&header), false))
}

/// The `agent__new_task` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "agent__new_task",
    js_name: "agentNewTask",
    family: "eddie",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
