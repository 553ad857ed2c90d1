//! `process_write`: write to a background process's stdin (and optionally close it).

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::super::permission;
use super::super::run::merge;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.process_write.result.v1";
/// How long a write may wait, by default, for a process that does not read.
const WRITE_LIMIT_S: f64 = 10.0;

/// Run `process_write`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let input = match args.get("stdin") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(ToolError::invalid("stdin must be a string")),
    };
    let close = crate::engine::js::truthy(args.get("closeStdin"));
    let limit = match args.get("timeout") {
        None | Some(Value::Null) => WRITE_LIMIT_S,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(v) if v.is_finite() && v > 0.0 && v <= 3600.0 => v,
            _ => return Err(ToolError::invalid("timeout must be a number of seconds in (0, 3600]")),
        },
        Some(_) => return Err(ToolError::invalid("timeout must be a number of seconds")),
    };
    if input.is_empty() && !close {
        return Err(ToolError::invalid("give stdin text to write, or closeStdin: true"));
    }
    let proc = super::find(ctx, args)?;
    if proc.exit().is_some() {
        return Err(not_running(&proc.id, &proc.state_text()));
    }
    let preview: String = input.chars().take(200).collect();
    let message = format!(
        "Write to {} ({}): {:?}{}{}",
        proc.id,
        proc.display,
        preview,
        if preview.len() < input.len() { "…" } else { "" },
        if close { " and close its stdin" } else { "" }
    );
    if !permission::allow(ctx, "process_write", message).await? {
        let mut data = proc.describe();
        merge(&mut data, json!({"bytesWritten": 0, "stdinClosed": false, "declined": true}));
        return Ok(ToolOutput::new(
            SCHEMA,
            format!("Declined by the user: nothing was written to {}.", proc.id),
            data,
        ));
    }
    let mut guard = proc.stdin.lock().await;
    let Some(pipe) = guard.as_mut() else {
        return Err(not_running(&proc.id, "its stdin is closed"));
    };
    let wrote = tokio::time::timeout(Duration::from_secs_f64(limit), async {
        pipe.write_all(input.as_bytes()).await?;
        pipe.flush().await
    })
    .await;
    match wrote {
        Err(_) => {
            return Err(ToolError::new(
                ErrorCode::Timeout,
                format!(
                    "{} did not read its stdin within {limit} s; part of the text may have been written.",
                    proc.id
                ),
            ));
        }
        Ok(Err(e)) => {
            guard.take();
            return Err(not_running(&proc.id, &format!("its stdin is closed ({e})")));
        }
        Ok(Ok(())) => {}
    }
    if close && let Some(mut p) = guard.take() {
        let _ = p.shutdown().await;
    }
    drop(guard);
    let mut data = proc.describe();
    merge(&mut data, json!({"bytesWritten": input.len(), "stdinClosed": close, "declined": false}));
    Ok(ToolOutput::new(
        SCHEMA,
        format!(
            "Wrote {} bytes to {}{}.",
            input.len(),
            proc.id,
            if close { " and closed its stdin" } else { "" }
        ),
        data,
    ))
}

fn not_running(id: &str, why: &str) -> ToolError {
    ToolError::new(ErrorCode::ProcessNotRunning, format!("Cannot write to {id}: {why}."))
}

/// The `process_write` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "process_write",
    js_name: "processWrite",
    family: "exec",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: &[],
    definition: include_str!("process_write.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
