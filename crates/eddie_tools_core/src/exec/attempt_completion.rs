//! `attempt_completion` (Alfredo): the model's signal that the task is done, with its summary.
//! Nothing runs; a host ends its agent loop when it sees a result with this schema.

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::process::command::opt_string;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id` (hosts match on it to stop their loop).
pub const SCHEMA: &str = "eddie.tool.attempt_completion.result.v1";

/// Run `attempt_completion`.
pub async fn run(args: &Value, _ctx: &Ctx) -> Result<ToolOutput> {
    let result = match args.get("result") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim_end().to_owned(),
        _ => return Err(ToolError::invalid("result must be a non-empty summary of what was done")),
    };
    let command = opt_string(args, "command")?.filter(|c| !c.trim().is_empty());
    let mut content = result.clone();
    if let Some(c) = &command {
        content.push_str(&format!("\n\nTo see the result: {c}"));
    }
    Ok(ToolOutput::new(SCHEMA, content, json!({"completed": true, "result": result, "command": command})))
}

/// The `attempt_completion` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "attempt_completion",
    js_name: "attemptCompletion",
    family: "exec",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("attempt_completion.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
