//! `process_list`: the background processes of this workspace.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "process_list";

/// The arguments of `process_list` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("properties" = {}))]
pub struct Args {}

/// Run `process_list`.
pub async fn run(_a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let procs = super::in_workspace(ctx);
    let content = if procs.is_empty() {
        "No background processes.".to_owned()
    } else {
        procs
            .iter()
            .map(|p| format!("{} pid {} {}: {}", p.id, p.pid, p.state_text(), p.display))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let running = procs.iter().filter(|p| p.exit().is_none()).count();
    Ok(ToolOutput::new(
        content,
        json!({"processes": procs.iter().map(|p| p.describe()).collect::<Vec<_>>(), "running": running}),
    ))
}

/// The `process_list` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "process_list",
    js_name: "processList",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("process_list.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
