//! `delete_range`: remove lines `startLine..=endLine` (1-based, inclusive), with `dryRun`
//! (Floyd `delete_range`). The file's trailing-newline state is kept.

use serde_json::{Value, json};

use super::edit_file::SCHEMA;
use super::edit_range::{check_range, replace_lines};
use super::matcher::lines;
use super::{edit_content, edit_data, encoding_arg, expected_hash, finish, flag, load, path_arg, req_int};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// Run `delete_range`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path = path_arg(args)?;
    let start = req_int(args, &["startLine", "start_line"])?;
    let end = req_int(args, &["endLine", "end_line"])?;
    let dry_run = flag(args, &["dryRun", "dry_run"]);
    let loaded = load(ctx, &path, expected_hash(args)?.as_deref(), encoding_arg(args)?).await?;
    let text = &loaded.doc.text;
    let table = lines(text);
    let (i0, i1) = check_range(&table, start, end, &path)?;
    let new_text = replace_lines(text, &table, i0, i1, None);
    let what = format!("lines {start}-{end} deleted");
    let done =
        finish(ctx, &loaded, &new_text, dry_run, format!("Edit file: {path} (delete lines {start}-{end})"))
            .await?;
    let data = edit_data(&loaded, &done, dry_run, json!({"startLine": start, "endLine": end}));
    Ok(ToolOutput::new(SCHEMA, edit_content(&loaded, &done, dry_run, &what), data))
}
