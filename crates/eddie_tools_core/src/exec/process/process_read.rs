//! `process_read`: a background process's output from a cursor.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::super::run::merge;
use super::ProcId;
use crate::call::args::lenient::{Cap, Offset};
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Default bytes returned per call.
const DEFAULT_MAX: usize = 32 * 1024;

const NAME: &str = "process_read";

/// The arguments of `process_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Process id from process_start (e.g. "p1").
    #[schemars(length(min = 1))]
    pub id: ProcId,
    /// Byte position to read from (a nextCursor from an earlier call).
    pub cursor: Option<Offset>,
    /// Most bytes to return (default 32768, at most 1 MiB).
    pub max_bytes: Option<Cap<{ super::LOG_CAP as u64 }>>,
}

/// Run `process_read`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let cursor = Offset::or(a.cursor, 0) as u64;
    let max = Cap::or(a.max_bytes, DEFAULT_MAX);
    let proc = super::find(ctx, &a.id)?;
    let (text, from, dropped, end) = {
        let log = proc.log.lock().map_err(|_| ToolError::internal("process log poisoned"))?;
        let (text, from, dropped) = log.slice(cursor, max);
        (text.to_owned(), from, dropped, log.end())
    };
    let next = from + text.len() as u64;
    let more = next < end;
    let mut content = String::new();
    if dropped > 0 {
        content.push_str(&format!("[{dropped} earlier bytes are no longer kept]\n"));
    }
    content.push_str(if text.is_empty() { "(no new output)" } else { &text });
    if !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str(&format!(
        "[{} {}; nextCursor {next}{}]",
        proc.id,
        proc.state_text(),
        if more { "; more output is available" } else { "" }
    ));
    let mut data = proc.describe();
    merge(
        &mut data,
        json!({"output": text, "cursor": from, "nextCursor": next, "droppedBytes": dropped, "more": more}),
    );
    Ok(ToolOutput::new(content, data))
}

/// The `process_read` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "process_read",
    js_name: "processRead",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("process_read.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
