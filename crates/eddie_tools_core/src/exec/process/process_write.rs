//! `process_write`: write to a background process's stdin (and optionally close it).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::super::run::merge;
use super::ProcId;
use crate::call::args::lenient::{Flag, Seconds};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// How long a write may wait, by default, for a process that does not read.
const WRITE_LIMIT_S: f64 = 10.0;

const NAME: &str = "process_write";

/// The arguments of `process_write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Process id from process_start (e.g. "p1").
    #[schemars(length(min = 1))]
    pub id: ProcId,
    /// Text to write (add \n to end a line).
    pub stdin: Option<String>,
    /// Close stdin after writing (sends EOF).
    pub close_stdin: Option<Flag>,
    /// Seconds to wait for the process to take the text (default 10); then TIMEOUT.
    pub timeout: Option<Seconds<{ (WRITE_LIMIT_S * 1000.0) as u64 }, 3600>>,
}

/// Run `process_write`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let input = a.stdin.unwrap_or_default();
    let close = Flag::on(a.close_stdin);
    let limit = a.timeout.map_or(WRITE_LIMIT_S, |s| s.0);
    if input.is_empty() && !close {
        return Err(ToolError::invalid("give stdin text to write, or closeStdin: true"));
    }
    let proc = super::find(ctx, &a.id)?;
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
    if !ctx.confirm(message).await? {
        let mut data = proc.describe();
        merge(&mut data, json!({"bytesWritten": 0, "stdinClosed": false, "declined": true}));
        return Ok(ToolOutput::new(
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
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "process_write",
    js_name: "processWrite",
    family: "exec",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("process_write.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
