//! `agent__new_task_list`: create (or replace) a task list, after `ctx.confirm`.

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::plan::tasks::store;
use crate::error::Result;
use crate::output::ToolOutput;

/// Run `agent__new_task_list`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let name = store::sanitise_task_list_name(args.get("taskListName"))?;
    let path = store::locate(&ctx.workspace, &name)?;
    if !ctx.confirm(format!("Create new task list \"{name}\"?")).await? {
        let content = format!("Task list creation cancelled for \"{name}\".");
        return Ok(ToolOutput::new(content, store::empty_document()));
    }
    let metadata = match args.get("metadata") {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        _ => json!({}),
    };
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let doc = crate::blocking("task list", move || {
        store::write(&path, &json!({"metadata": metadata, "tasks": []}), false)
    })
    .await?;
    Ok(ToolOutput::new(format!("Created task list \"{name}\" with 0 tasks."), doc))
}

/// The `agent__new_task_list` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "agent__new_task_list",
    js_name: "agentNewTaskList",
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
