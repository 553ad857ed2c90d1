//! `edit_range`: replace lines `startLine..=endLine` (1-based, inclusive) with `content`
//! (Floyd `edit_range`, with `dryRun`). The new lines take the replaced lines' line ending;
//! the file's trailing-newline state is kept. Empty `content` deletes the lines.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{edit_result, load_checked, non_empty};
use crate::call::args::lenient::{Flag, Int};
use crate::context::Ctx;
use crate::engine::patch::matcher::{Line, lines};
use crate::engine::text::doc::eol_style;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "edit_range";

/// The arguments of `edit_range`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// First line to replace (1-based).
    start_line: Int,
    /// Last line to replace (1-based, inclusive).
    end_line: Int,
    /// New text for those lines (empty deletes them).
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

/// `content` as lines ending in `eol`; the last one only when `final_eol`.
pub fn block(content: &str, eol: &str, final_eol: bool) -> String {
    let c = content.replace("\r\n", "\n");
    let c = c.strip_suffix('\n').unwrap_or(&c);
    let mut s = c.replace('\n', eol);
    if final_eol {
        s.push_str(eol);
    }
    s
}

/// Check a 1-based inclusive range against `table`; returns 0-based indexes.
pub fn check_range(table: &[Line], start: i64, end: i64, path: &str) -> Result<(usize, usize)> {
    let total = table.len() as i64;
    if start < 1 || end < start || end > total {
        return Err(ToolError::invalid(format!(
            "line range {start}-{end} is not within {path} (lines 1-{total}); startLine must be >= 1 and <= endLine <= {total}"
        ))
        .with_prop("totalLines", total));
    }
    Ok(((start - 1) as usize, (end - 1) as usize))
}

/// The text with lines `i0..=i1` replaced by `content` (deleted when `None`).
pub fn replace_lines(text: &str, table: &[Line], i0: usize, i1: usize, content: Option<&str>) -> String {
    let (dominant, _) = eol_style(text);
    let first = table[i0];
    let last = table[i1];
    let had_final = last.next > last.end;
    let eol = if first.next > first.end { &text[first.end..first.next] } else { dominant };
    let mut out = String::with_capacity(text.len() + content.map_or(0, str::len));
    out.push_str(&text[..first.start]);
    match content {
        Some(c) => out.push_str(&block(c, eol, had_final)),
        None if !had_final && i0 > 0 => {
            // Deleting the unterminated last line: the new last line loses its ending too.
            let prev = table[i0 - 1];
            out.truncate(prev.end);
        }
        None => {}
    }
    out.push_str(&text[last.next..]);
    out
}

/// Run `edit_range`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let (start, end) = (a.start_line.0, a.end_line.0);
    let content = a.content;
    let dry_run = Flag::on(a.dry_run);
    let (expected, encoding) = (a.expected_hash.as_deref(), a.encoding.as_deref());
    let loaded =
        load_checked(ctx, &path, expected, encoding, &content, Flag::on(a.allow_placeholders)).await?;
    let text = &loaded.doc.text;
    let table = lines(text);
    let (i0, i1) = check_range(&table, start, end, &path)?;
    let new_text = replace_lines(text, &table, i0, i1, (!content.is_empty()).then_some(content.as_str()));
    let what = format!("lines {start}-{end} replaced");
    let prompt = format!("Edit file: {path} (lines {start}-{end})");
    edit_result(ctx, &loaded, &new_text, dry_run, prompt, &what, json!({"startLine": start, "endLine": end}))
        .await
}

/// The `edit_range` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "editRange",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[("start_line", "startLine"), ("end_line", "endLine")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("edit_range.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_deletes_keeping_eols() {
        let t = "a\r\nb\r\nc";
        let tb = lines(t);
        assert_eq!(replace_lines(t, &tb, 1, 1, Some("x\ny\n")), "a\r\nx\r\ny\r\nc");
        assert_eq!(replace_lines(t, &tb, 2, 2, Some("z")), "a\r\nb\r\nz");
        assert_eq!(replace_lines(t, &tb, 2, 2, None), "a\r\nb");
        assert_eq!(replace_lines(t, &tb, 0, 1, None), "c");
        assert!(check_range(&tb, 0, 1, "f").is_err());
        assert!(check_range(&tb, 2, 4, "f").is_err());
        assert_eq!(check_range(&tb, 1, 3, "f").unwrap(), (0, 2));
    }
}
