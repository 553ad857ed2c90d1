//! `file_write`: confirmed, atomic write of UTF-8 text.

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::store::atomic::write_atomic;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Run `file_write`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path = match args.get("path") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(ToolError::invalid("path must be a non-empty string")),
    };
    let content = match args.get("content") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(ToolError::invalid("content must be a string")),
    };
    let resolved = ctx.workspace.resolve(&path)?;
    if !ctx.confirm(format!("Write file: {path}")).await? {
        return Ok(ToolOutput::new("Write cancelled by user.", json!({"path": path, "bytesWritten": 0})));
    }
    // Resolve again after the prompt: a symlink swapped in while the user was deciding must
    // not redirect the write outside the workspace.
    let resolved = ctx
        .workspace
        .resolve(&path)
        .map(|again| if again.real == resolved.real { resolved } else { again })?;
    let bytes = content.len();
    crate::blocking("file_write", move || {
        write_atomic(&resolved.real, content.as_bytes(), &resolved.lexical)
    })
    .await?;
    Ok(ToolOutput::new(format!("Wrote {path}"), json!({"path": path, "bytesWritten": bytes})))
}

/// The `file_write` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "file_write",
    js_name: "fileWrite",
    family: "eddie",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
