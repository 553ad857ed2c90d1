//! `delete_range`: remove lines `startLine..=endLine` (1-based, inclusive), with `dryRun`
//! (Floyd `delete_range`). The file's trailing-newline state is kept.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{edit_result, load_with, non_empty};
use crate::call::args::lenient::{Flag, Int};
use crate::context::Ctx;
use crate::engine::patch::matcher::lines;
use crate::error::Result;
use crate::files::edit_range::{check_range, replace_lines};
use crate::output::ToolOutput;

const NAME: &str = "delete_range";

/// The arguments of `delete_range`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// First line to delete (1-based).
    start_line: Int,
    /// Last line to delete (1-based, inclusive).
    end_line: Int,
    /// Compute and return the diff without writing.
    pub dry_run: Option<Flag>,
    /// The `hash` a read returned; the edit is refused with STALE if the file changed since.
    pub expected_hash: Option<String>,
    /// Encoding label to use instead of detection (e.g. latin1, utf-16le, shift_jis).
    pub encoding: Option<String>,
}

/// Run `delete_range`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let (start, end) = (a.start_line.0, a.end_line.0);
    let dry_run = Flag::on(a.dry_run);
    let loaded = load_with(ctx, &path, a.expected_hash.as_deref(), a.encoding.as_deref()).await?;
    let text = &loaded.doc.text;
    let table = lines(text);
    let (i0, i1) = check_range(&table, start, end, &path)?;
    let new_text = replace_lines(text, &table, i0, i1, None);
    let what = format!("lines {start}-{end} deleted");
    let prompt = format!("Edit file: {path} (delete lines {start}-{end})");
    edit_result(ctx, &loaded, &new_text, dry_run, prompt, &what, json!({"startLine": start, "endLine": end}))
        .await
}

/// The `delete_range` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "deleteRange",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[("start_line", "startLine"), ("end_line", "endLine")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("delete_range.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
