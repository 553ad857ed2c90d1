//! `apply_unified_diff`: apply a unified diff (one or many files, git or plain) atomically
//! (Floyd `apply_unified_diff` with `dryRun`, `rootPath` and `assessRisk`).
//!
//! `dryRun` returns the resulting diff without writing. `rootPath` (inside the workspace)
//! prefixes every path of the diff. If any hunk of any file fails, no file is changed.

use serde_json::Value;

use super::apply::run_ops;
use super::{allow_placeholders, flag, opt_str, req_str};
use crate::context::Ctx;
use crate::engine::patch::parse_unified;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id` shared by the patch tools.
pub const SCHEMA: &str = "eddie.tool.patch.result.v1";

/// Run `apply_unified_diff`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let diff = req_str(args, &["diff", "patch"])?;
    let dry_run = flag(args, &["dryRun", "dry_run"]);
    let root = opt_str(args, &["rootPath", "root_path"])?;
    let ops = parse_unified(&diff)?;
    let allow = allow_placeholders(args);
    let mut out = run_ops(ctx, ops, root.as_deref(), dry_run, allow, SCHEMA).await?;
    if flag(args, &["assessRisk", "assess_risk"]) {
        let risk = crate::files::assess_patch_risk::assess(&diff, ctx)?;
        out.content = format!(
            "{}\nRisk: {} (score {}).",
            out.content,
            risk["risk"].as_str().unwrap_or_default(),
            risk["score"]
        );
        out.data["risk"] = risk;
    }
    Ok(out)
}

/// The `apply_unified_diff` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "apply_unified_diff",
    js_name: "applyUnifiedDiff",
    family: "files",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Moderate,
    aliases: &[
        ("patch", "diff"),
        ("dry_run", "dryRun"),
        ("root_path", "rootPath"),
        ("assess_risk", "assessRisk"),
        ("allow_placeholders", "allowPlaceholders"),
    ],
    definition: include_str!("apply_unified_diff.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
