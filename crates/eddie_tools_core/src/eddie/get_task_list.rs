//! `agent__get_task_list`: read a list, creating an empty one when missing.

use serde_json::Value;

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::plan::tasks::store;
use crate::error::Result;
use crate::output::ToolOutput;

/// Run `agent__get_task_list`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let name = store::sanitise_task_list_name(args.get("taskListName"))?;
    let abridged = js::truthy(args.get("abridged"));
    let path = store::locate(&ctx.workspace, &name)?;
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let doc = crate::blocking("task list", move || store::ensure(&path)).await?;
    Ok(store::format_result(&name, doc, None, abridged))
}

/// The `agent__get_task_list` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "agent__get_task_list",
    js_name: "agentGetTaskList",
    family: "eddie",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
