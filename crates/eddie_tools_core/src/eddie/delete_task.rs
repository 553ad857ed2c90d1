//! `agent__delete_task`: remove one task, after `ctx.confirm`.

use serde_json::Value;

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::plan::tasks::store;
use crate::error::Result;
use crate::output::ToolOutput;

/// Run `agent__delete_task`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let name = store::sanitise_task_list_name(args.get("taskListName"))?;
    let id = store::sanitise_task_id(args.get("taskId"))?;
    let abridged = js::truthy(args.get("abridged"));
    let (path, current) = store::load_with_task(&ctx.workspace, &name, &id).await?;
    if !ctx.confirm(format!("Delete task \"{id}\" from list \"{name}\"?")).await? {
        let header = format!("Deletion cancelled for \"{name}\".");
        return Ok(store::format_result(&name, current, Some(&header), abridged));
    }
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let (task_id, list) = (id.clone(), name.clone());
    let doc = crate::blocking("task list", move || {
        let mut doc = store::read(&path)?;
        let index = store::find(&doc, &task_id).ok_or_else(|| store::not_found(&task_id, &list))?;
        if let Some(tasks) = doc["tasks"].as_array_mut() {
            tasks.remove(index);
        }
        store::write(&path, &doc, true)
    })
    .await?;
    let header = format!("Deleted task \"{id}\" from list \"{name}\".");
    Ok(store::format_result(&name, doc, Some(&header), abridged))
}

/// The `agent__delete_task` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "agent__delete_task",
    js_name: "agentDeleteTask",
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
