//! `delete_range`: remove lines `startLine..=endLine` (1-based, inclusive), with `dryRun`
//! (Floyd `delete_range`). The file's trailing-newline state is kept.

use serde_json::{Value, json};

use super::{edit_result, flag, load_arg, path_arg, req_int};
use crate::context::Ctx;
use crate::engine::patch::matcher::lines;
use crate::error::Result;
use crate::files::edit_range::{check_range, replace_lines};
use crate::output::ToolOutput;

/// Run `delete_range`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path = path_arg(args)?;
    let start = req_int(args, &["startLine", "start_line"])?;
    let end = req_int(args, &["endLine", "end_line"])?;
    let dry_run = flag(args, &["dryRun", "dry_run"]);
    let loaded = load_arg(ctx, args, &path).await?;
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
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "delete_range",
    js_name: "deleteRange",
    family: "files",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Moderate,
    aliases: &[
        ("filePath", "path"),
        ("filepath", "path"),
        ("file_path", "path"),
        ("start_line", "startLine"),
        ("end_line", "endLine"),
        ("dry_run", "dryRun"),
        ("expected_hash", "expectedHash"),
    ],
    definition: include_str!("delete_range.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
