//! `lint`: Run the project's linter, with the detected command or an explicit `command`.

use crate::context::Ctx;
use crate::error::Result;
use crate::exec::detect_project::Action;
use crate::output::ToolOutput;

const NAME: &str = "lint";

crate::exec::runner::runner_args!("lint");

/// Run `lint`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    crate::exec::runner::run(a.into(), ctx, "lint", Action::Lint).await
}

/// The `lint` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "lint",
    js_name: "lint",
    family: "exec",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("lint.json"),
    input: Some(crate::exec::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
