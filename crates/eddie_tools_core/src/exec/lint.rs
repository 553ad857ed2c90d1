//! `lint`: Run the project's linter, with the detected command or an explicit `command`.

use serde_json::Value;

use super::detect_project::Action;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.lint.result.v1";

/// Run `lint`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    super::runner::run(args, ctx, "lint", SCHEMA, Action::Lint).await
}
