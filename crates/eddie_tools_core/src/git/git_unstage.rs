//! `git_unstage`: put paths' index entries back to HEAD (`git restore --staged`; in an unborn
//! repository, removing them from the index). The planning, the question and the index write
//! are `git_stage`'s ([`super::git_stage`]).

use super::git_stage::{ALIASES, Args, go};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// Run `git_unstage`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    go(a, ctx, true).await
}

/// The `git_unstage` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_unstage",
    js_name: "gitUnstage",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: ALIASES,
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_unstage.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse("git_unstage", args)?, ctx).await }),
};
