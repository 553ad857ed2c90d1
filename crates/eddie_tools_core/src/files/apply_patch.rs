//! `apply_patch`: apply a codex-style patch (`*** Begin Patch` … `*** End Patch` with Add,
//! Delete, Update and Move operations, `@@` anchors and `*** End of File`) atomically. A
//! unified diff is accepted too. `dryRun` returns the resulting diff without writing.

use serde_json::Value;

use super::apply::run_ops;
use super::{allow_placeholders, flag, req_str};
use crate::context::Ctx;
use crate::engine::patch::parse_any;
use crate::error::Result;
use crate::files::apply_unified_diff::SCHEMA;
use crate::output::ToolOutput;

/// Run `apply_patch`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let patch = req_str(args, &["patch", "input", "diff"])?;
    let dry_run = flag(args, &["dryRun", "dry_run"]);
    let ops = parse_any(&patch)?;
    run_ops(ctx, ops, None, dry_run, allow_placeholders(args), SCHEMA).await
}

/// The `apply_patch` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "apply_patch",
    js_name: "applyPatch",
    family: "files",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Moderate,
    aliases: &[
        ("input", "patch"),
        ("diff", "patch"),
        ("dry_run", "dryRun"),
        ("allow_placeholders", "allowPlaceholders"),
    ],
    definition: include_str!("apply_patch.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
