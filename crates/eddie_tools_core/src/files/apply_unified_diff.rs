//! `apply_unified_diff`: apply a unified diff (one or many files, git or plain) atomically
//! (Floyd `apply_unified_diff` with `dryRun`, `rootPath` and `assessRisk`).
//!
//! `dryRun` returns the resulting diff without writing. `rootPath` (inside the workspace)
//! prefixes every path of the diff. If any hunk of any file fails, no file is changed.

use schemars::JsonSchema;
use serde::Deserialize;

use super::apply::run_ops;
use super::non_empty;
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::patch::parse_unified;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "apply_unified_diff";

/// The arguments of `apply_unified_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The unified diff.
    #[schemars(length(min = 1))]
    pub diff: String,
    /// Compute and return the diff without writing.
    pub dry_run: Option<Flag>,
    /// Directory (in the workspace) the diff's paths are relative to.
    pub root_path: Option<String>,
    /// Include a risk assessment.
    pub assess_risk: Option<Flag>,
    /// Accept lines such as '// ... rest of the code ...' literally (by default they are refused as omission placeholders).
    pub allow_placeholders: Option<Flag>,
}

/// Run `apply_unified_diff`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let diff = non_empty("diff", a.diff)?;
    let dry_run = Flag::on(a.dry_run);
    let root = a.root_path;
    let ops = parse_unified(&diff)?;
    let allow = Flag::on(a.allow_placeholders);
    let mut out = run_ops(ctx, ops, root.as_deref(), dry_run, allow).await?;
    if Flag::on(a.assess_risk) {
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
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "applyUnifiedDiff",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[("patch", "diff"), ("root_path", "rootPath"), ("assess_risk", "assessRisk")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("apply_unified_diff.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
