//! `typecheck`: Type-check the project, with the detected command or an explicit `command`.

use serde_json::Value;

use super::detect_project::Action;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.typecheck.result.v1";

/// Run `typecheck`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    super::runner::run(args, ctx, "typecheck", SCHEMA, Action::Typecheck).await
}
