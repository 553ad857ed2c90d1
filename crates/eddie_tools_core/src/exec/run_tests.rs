//! `run_tests`: Run the project's tests, with the detected command or an explicit `command`.

use crate::context::Ctx;
use crate::error::Result;
use crate::exec::detect_project::Action;
use crate::output::ToolOutput;

const NAME: &str = "run_tests";

crate::exec::runner::runner_args!("test");

/// Run `run_tests`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    crate::exec::runner::run(a.into(), ctx, "run_tests", Action::Test).await
}

/// The `run_tests` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "run_tests",
    js_name: "runTests",
    family: "exec",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    // Stack `test`
    tool_aliases: &["test"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("run_tests.json"),
    input: Some(crate::exec::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
