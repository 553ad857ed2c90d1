//! `delete_task` (Stack): remove a task from a task list, after `ctx.confirm`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::plan::tasks::store;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "delete_task";

/// The arguments of `delete_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The task's id (also: task_id).
    pub task_id: String,
    /// The task list (default `tasks`).
    pub task_list_name: Option<String>,
}

/// Run `delete_task`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let id = store::sanitise_task_id(Some(&Value::String(a.task_id.clone())))?;
    let name = super::list_name(a.task_list_name.as_deref(), super::DEFAULT_LIST)?;
    let path = super::locate(ctx, &name)?;
    let doc = super::read(&path).await?;
    if store::find(&doc, &id).is_none() {
        return Err(super::task_not_found(&id, &name));
    }
    if !ctx.confirm(format!("Delete task \"{id}\" from list \"{name}\"?")).await? {
        return Ok(ToolOutput::new(
            format!("Deleting task {id} was cancelled; nothing changed."),
            json!({"taskId": id, "taskListName": name, "deleted": false, "cancelled": true}),
        ));
    }
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let (task_id, list) = (id.clone(), name.clone());
    crate::blocking("task list", move || {
        let mut doc = store::read(&path)?;
        let i = store::find(&doc, &task_id).ok_or_else(|| super::task_not_found(&task_id, &list))?;
        if let Some(tasks) = doc["tasks"].as_array_mut() {
            tasks.remove(i);
        }
        store::write(&path, &doc, true)
    })
    .await?;
    Ok(ToolOutput::new(
        format!("Deleted task {id} from list \"{name}\"."),
        json!({"taskId": id, "taskListName": name, "deleted": true, "cancelled": false}),
    ))
}

/// The `delete_task` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "deleteTask",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("delete_task.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
