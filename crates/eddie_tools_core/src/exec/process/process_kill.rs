//! `process_kill`: end a background process and its whole tree.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::super::run::merge;
use super::ProcId;
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::process::supervisor::DEFAULT_GRACE;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "process_kill";

/// The arguments of `process_kill`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Process id from process_start (e.g. "p1").
    #[schemars(length(min = 1))]
    pub id: ProcId,
    /// Kill at once with SIGKILL.
    pub force: Option<Flag>,
}

/// Run `process_kill`: `SIGTERM` to every process of the tree, `SIGKILL` after a second
/// (`force`: at once). Resolves when the whole tree is gone.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let proc = super::find(ctx, &a.id)?;
    let force = Flag::on(a.force);
    let was_running = proc.exit().is_none();
    if was_running {
        proc.kill(force);
        if !proc.wait_exit(DEFAULT_GRACE + Duration::from_secs(2)).await {
            proc.kill(true);
            proc.wait_exit(Duration::from_secs(3)).await;
        }
    }
    let (output, next) = super::tail(&proc, 2048);
    let content = if was_running {
        format!("Stopped {} ({}): {}.", proc.id, proc.display, proc.state_text())
    } else {
        format!("{} ({}) had already {}.", proc.id, proc.display, proc.state_text())
    };
    let mut data = proc.describe();
    merge(&mut data, json!({"wasRunning": was_running, "output": output, "nextCursor": next}));
    Ok(ToolOutput::new(content, data))
}

/// The `process_kill` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "process_kill",
    js_name: "processKill",
    family: "exec",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("process_kill.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
