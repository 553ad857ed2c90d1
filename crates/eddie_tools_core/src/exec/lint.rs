//! `lint`: Run the project's linter, with the detected command or an explicit `command`.

use serde_json::Value;

use crate::context::Ctx;
use crate::error::Result;
use crate::exec::detect_project::Action;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.lint.result.v1";

/// Run `lint`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    crate::exec::runner::run(args, ctx, "lint", SCHEMA, Action::Lint).await
}

/// The `lint` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "lint",
    js_name: "lint",
    family: "exec",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Moderate,
    aliases: &[],
    definition: include_str!("lint.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
