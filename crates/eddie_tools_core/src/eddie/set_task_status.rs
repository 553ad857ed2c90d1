//! `agent__set_task_status`: change one task's status, after `ctx.confirm`.

use serde_json::Value;

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::plan::store::now_iso;
use crate::engine::plan::tasks::store;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Run `agent__set_task_status`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let name = store::sanitise_task_list_name(args.get("taskListName"))?;
    let id = store::sanitise_task_id(args.get("taskId"))?;
    if !store::is_status(args.get("status")) {
        return Err(ToolError::invalid("status must be one of pending, in_progress, or complete"));
    }
    let status = args.get("status").and_then(Value::as_str).unwrap_or_default().to_owned();
    let abridged = js::truthy(args.get("abridged"));
    let (path, current) = store::load_with_task(&ctx.workspace, &name, &id).await?;
    if !ctx.confirm(format!("Update task \"{id}\" in list \"{name}\" to status \"{status}\"?")).await? {
        let header = format!("Status update cancelled for \"{name}\".");
        return Ok(store::format_result(&name, current, Some(&header), abridged));
    }
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let (task_id, list, new_status) = (id.clone(), name.clone(), status.clone());
    let doc = crate::blocking("task list", move || {
        // Re-read under the lock: another call may have changed the list while we asked.
        let mut doc = store::read(&path)?;
        let index = store::find(&doc, &task_id).ok_or_else(|| store::not_found(&task_id, &list))?;
        let task = &mut doc["tasks"][index];
        task["status"] = Value::String(new_status);
        task["updatedAt"] = Value::String(now_iso());
        store::write(&path, &doc, true)
    })
    .await?;
    let header = format!("Updated task \"{id}\" to status {status}.");
    Ok(store::format_result(&name, doc, Some(&header), abridged))
}

/// The `agent__set_task_status` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "agent__set_task_status",
    js_name: "agentSetTaskStatus",
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
