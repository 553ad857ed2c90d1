//! `install`: Install the project's dependencies, with the detected command or an explicit `command`.

use serde_json::Value;

use super::detect_project::Action;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.install.result.v1";

/// Run `install`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    super::runner::run(args, ctx, "install", SCHEMA, Action::Install).await
}
