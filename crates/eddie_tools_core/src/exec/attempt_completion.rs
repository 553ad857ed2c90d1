//! `attempt_completion` (Alfredo): the model's signal that the task is done, with its summary.
//! Nothing runs; a host ends its agent loop when it sees a result with this schema.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::args::{self, Text};
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "attempt_completion";

/// The arguments of `attempt_completion`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// What was done and how it was verified.
    #[schemars(length(min = 1))]
    pub result: String,
    /// A command that shows the result, if any.
    pub command: Option<Text>,
}

/// Run `attempt_completion`.
pub async fn run(a: Args, _ctx: &Ctx) -> Result<ToolOutput> {
    if a.result.trim().is_empty() {
        return Err(ToolError::invalid("result must be a non-empty summary of what was done"));
    }
    let result = a.result.trim_end().to_owned();
    let command = args::text(a.command).filter(|c| !c.trim().is_empty());
    let mut content = result.clone();
    if let Some(c) = &command {
        content.push_str(&format!("\n\nTo see the result: {c}"));
    }
    Ok(ToolOutput::new(content, json!({"completed": true, "result": result, "command": command})))
}

/// The `attempt_completion` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "attempt_completion",
    js_name: "attemptCompletion",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("attempt_completion.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
