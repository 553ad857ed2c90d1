//! `format`: Format the project's code, with the detected command or an explicit `command`.

use crate::context::Ctx;
use crate::error::Result;
use crate::exec::detect_project::Action;
use crate::output::ToolOutput;

const NAME: &str = "format";

crate::exec::runner::runner_args!("format");

/// Run `format`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    crate::exec::runner::run(a.into(), ctx, "format", Action::Format).await
}

/// The `format` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "format",
    js_name: "format",
    family: "exec",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("format.json"),
    input: Some(crate::exec::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
