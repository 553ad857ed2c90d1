//! `apply_patch`: apply a codex-style patch (`*** Begin Patch` … `*** End Patch` with Add,
//! Delete, Update and Move operations, `@@` anchors and `*** End of File`) atomically. A
//! unified diff is accepted too. `dryRun` returns the resulting diff without writing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::apply::run_ops;
use super::non_empty;
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::patch::parse_any;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "apply_patch";

/// The arguments of `apply_patch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The patch text (also: input).
    #[schemars(length(min = 1))]
    pub patch: String,
    /// Compute and return the diff without writing.
    pub dry_run: Option<Flag>,
    /// Accept lines such as '// ... rest of the code ...' literally (by default they are refused as omission placeholders).
    pub allow_placeholders: Option<Flag>,
}

/// Run `apply_patch`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let patch = non_empty("patch", a.patch)?;
    let ops = parse_any(&patch)?;
    run_ops(ctx, ops, None, Flag::on(a.dry_run), Flag::on(a.allow_placeholders)).await
}

/// The `apply_patch` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "applyPatch",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[("input", "patch"), ("diff", "patch")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("apply_patch.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
