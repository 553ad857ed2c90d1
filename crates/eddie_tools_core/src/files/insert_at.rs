//! `insert_at`: insert `content` as new lines before line `lineNumber` (1-based;
//! `totalLines + 1` appends), with `dryRun` (Floyd `insert_at`). The new lines use the file's
//! line ending; the trailing-newline state is kept.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{edit_result, load_checked, non_empty};
use crate::call::args::lenient::{Flag, Int};
use crate::context::Ctx;
use crate::engine::patch::matcher::lines;
use crate::engine::text::doc::eol_style;
use crate::error::{Result, ToolError};
use crate::files::edit_range::block;
use crate::output::ToolOutput;

const NAME: &str = "insert_at";

/// The arguments of `insert_at`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// Insert before this line (1-based; last line + 1 appends).
    line_number: Int,
    /// Text to insert as new lines.
    content: String,
    /// Compute and return the diff without writing.
    pub dry_run: Option<Flag>,
    /// The `hash` a read returned; the edit is refused with STALE if the file changed since.
    pub expected_hash: Option<String>,
    /// Encoding label to use instead of detection (e.g. latin1, utf-16le, shift_jis).
    pub encoding: Option<String>,
    /// Accept lines such as '// ... rest of the code ...' literally (by default they are refused as omission placeholders).
    pub allow_placeholders: Option<Flag>,
}

/// `text` with `content` inserted before 0-based line `at` (`at == lines` appends).
pub fn insert(text: &str, at: usize, content: &str) -> String {
    let table = lines(text);
    let (eol, _) = eol_style(text);
    if at < table.len() {
        let pos = table[at].start;
        return format!("{}{}{}", &text[..pos], block(content, eol, true), &text[pos..]);
    }
    // Append: the file keeps ending with or without a line ending.
    let ends_open = !text.is_empty() && !text.ends_with('\n');
    if ends_open {
        format!("{text}{eol}{}", block(content, eol, false))
    } else {
        format!("{text}{}", block(content, eol, !text.is_empty() || content.ends_with('\n')))
    }
}

/// Run `insert_at`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let line = a.line_number.0;
    let content = a.content;
    let dry_run = Flag::on(a.dry_run);
    let (expected, encoding) = (a.expected_hash.as_deref(), a.encoding.as_deref());
    let loaded =
        load_checked(ctx, &path, expected, encoding, &content, Flag::on(a.allow_placeholders)).await?;
    let text = &loaded.doc.text;
    let total = lines(text).len() as i64;
    if line < 1 || line > total + 1 {
        return Err(ToolError::invalid(format!(
            "lineNumber {line} is not within {path}: use 1-{} ({} appends)",
            total + 1,
            total + 1
        ))
        .with_prop("totalLines", total));
    }
    let new_text = insert(text, (line - 1) as usize, &content);
    let what = format!("{} line(s) inserted at line {line}", content.lines().count().max(1));
    let prompt = format!("Edit file: {path} (insert at line {line})");
    edit_result(ctx, &loaded, &new_text, dry_run, prompt, &what, json!({"lineNumber": line})).await
}

/// The `insert_at` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "insertAt",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[("line_number", "lineNumber"), ("line", "lineNumber")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("insert_at.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserts_with_file_eol() {
        assert_eq!(insert("a\r\nb\r\n", 1, "x\ny"), "a\r\nx\r\ny\r\nb\r\n");
        assert_eq!(insert("a\r\nb\r\n", 2, "z"), "a\r\nb\r\nz\r\n");
        assert_eq!(insert("a\nb", 2, "z"), "a\nb\nz");
        assert_eq!(insert("", 0, "new\n"), "new\n");
        assert_eq!(insert("", 0, "new"), "new");
    }
}
