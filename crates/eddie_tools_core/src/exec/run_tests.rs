//! `run_tests`: Run the project's tests, with the detected command or an explicit `command`.

use serde_json::Value;

use super::detect_project::Action;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.run_tests.result.v1";

/// Run `run_tests`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    super::runner::run(args, ctx, "run_tests", SCHEMA, Action::Test).await
}
