//! `process_list`: the background processes of this workspace.

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.process_list.result.v1";

/// Run `process_list`.
pub async fn run(_args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
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
        SCHEMA,
        content,
        json!({"processes": procs.iter().map(|p| p.describe()).collect::<Vec<_>>(), "running": running}),
    ))
}

/// The `process_list` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "process_list",
    js_name: "processList",
    family: "exec",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("process_list.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
