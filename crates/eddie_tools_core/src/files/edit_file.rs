//! `edit_file`: replace text in one file (Stack `edit`, Floyd `edit_file` with `all`,
//! TunaCode `update_file`, and Alfredo `replace_in_file` SEARCH/REPLACE blocks).
//!
//! With `oldString`/`newString` the text must occur once (or pass `all`). With `diff`, every
//! `------- SEARCH` / `=======` / `+++++++ REPLACE` block (aider's `<<<<<<<`/`>>>>>>>` too) is
//! located in the original file first, in any order, and the set is applied only if every
//! block matches once and none overlap. Matching follows the fuzzy ladder of
//! [`crate::engine::patch::matcher`] unless `fuzzy: false`; the result names the stage that matched.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Loaded, edit_result, load_with, non_empty};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::patch::matcher::{self, Found, Request};
use crate::error::{ErrorCode, Result, ToolError, prefixed};
use crate::files::placeholder;
use crate::output::ToolOutput;

const NAME: &str = "edit_file";

/// The arguments of `edit_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// Exact text to replace (also: old_string, oldStr, old_text, target).
    pub old_string: Option<String>,
    /// Replacement text (also: new_string, newStr, new_text, patch).
    pub new_string: Option<String>,
    /// Replace every occurrence (also: replaceAll).
    pub all: Option<Flag>,
    /// SEARCH/REPLACE blocks instead of oldString/newString.
    pub diff: Option<String>,
    /// Allow the fuzzy ladder (eol, trim_end, indent, unicode) when the text is not found exactly. Default true.
    pub fuzzy: Option<Flag>,
    /// Compute and return the diff without writing.
    pub dry_run: Option<Flag>,
    /// The `hash` a read returned; the edit is refused with STALE if the file changed since.
    pub expected_hash: Option<String>,
    /// Encoding label to use instead of detection (e.g. latin1, utf-16le, shift_jis).
    pub encoding: Option<String>,
    /// Accept lines such as '// ... rest of the code ...' literally (by default they are refused as omission placeholders).
    pub allow_placeholders: Option<Flag>,
}

/// One SEARCH/REPLACE block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The SEARCH text.
    pub search: String,
    /// The REPLACE text.
    pub replace: String,
}

/// Parse SEARCH/REPLACE blocks.
pub fn parse_blocks(diff: &str) -> Result<Vec<Block>> {
    #[derive(PartialEq)]
    enum St {
        Out,
        Search,
        Replace,
    }
    let is = |l: &str, ch: char, word: &str| {
        let t = l.trim();
        let marks = t.chars().take_while(|c| *c == ch).count();
        marks >= 3 && t[marks..].trim() == word
    };
    let mut st = St::Out;
    let mut blocks = Vec::new();
    let (mut search, mut replace): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for (n, raw) in diff.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        match st {
            St::Out if is(line, '-', "SEARCH") || is(line, '<', "SEARCH") => st = St::Search,
            St::Out => {}
            St::Search if line.trim().len() >= 3 && line.trim().chars().all(|c| c == '=') => st = St::Replace,
            St::Search if is(line, '+', "REPLACE") || is(line, '>', "REPLACE") => {
                return Err(ToolError::new(
                    ErrorCode::InvalidPatch,
                    format!("line {}: REPLACE marker before the ======= divider", n + 1),
                ));
            }
            St::Search => search.push(line),
            St::Replace if is(line, '+', "REPLACE") || is(line, '>', "REPLACE") => {
                blocks.push(Block { search: search.join("\n"), replace: replace.join("\n") });
                search.clear();
                replace.clear();
                st = St::Out;
            }
            St::Replace => replace.push(line),
        }
    }
    if st != St::Out {
        return Err(ToolError::new(
            ErrorCode::InvalidPatch,
            "a SEARCH/REPLACE block is not closed (expected +++++++ REPLACE)",
        ));
    }
    if blocks.is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidPatch,
            "no SEARCH/REPLACE block found; expected:\n------- SEARCH\n<exact text>\n=======\n<new text>\n+++++++ REPLACE",
        ));
    }
    Ok(blocks)
}

/// Locate every block in `text` (all must match; spans may come in any order).
pub fn locate_blocks(text: &str, blocks: &[Block], fuzzy: bool, display: &str) -> Result<Vec<Found>> {
    let mut found = Vec::with_capacity(blocks.len());
    for (i, b) in blocks.iter().enumerate() {
        let prefix = format!("SEARCH/REPLACE block {} of {}: ", i + 1, blocks.len());
        if b.search.is_empty() {
            if text.is_empty() && blocks.len() == 1 {
                found.push(Found {
                    start: 0,
                    end: 0,
                    stage: matcher::Stage::Exact,
                    replacement: b.replace.clone(),
                });
                continue;
            }
            return Err(ToolError::invalid(format!("{prefix}the SEARCH section is empty")));
        }
        let req = Request { old: &b.search, new: &b.replace, all: false, fuzzy };
        let mut f = matcher::locate(text, &req, display)
            .map_err(|e| prefixed(e, &prefix).with_prop("block", i + 1))?;
        // Deleting whole lines removes their line ending too.
        if b.replace.is_empty() {
            for m in &mut f {
                let at_line_start = m.start == 0 || text.as_bytes()[m.start - 1] == b'\n';
                let rest = &text[m.end..];
                if at_line_start && !text[m.start..m.end].ends_with('\n') {
                    m.end += if rest.starts_with("\r\n") { 2 } else { usize::from(rest.starts_with('\n')) };
                }
            }
        }
        found.extend(f);
    }
    Ok(found)
}

/// Matches as `{stage, startLine, endLine}`.
pub fn describe(text: &str, found: &[Found]) -> Value {
    let mut sorted: Vec<&Found> = found.iter().collect();
    sorted.sort_by_key(|f| f.start);
    Value::Array(
        sorted
            .iter()
            .map(|f| {
                let s = matcher::line_at(text, f.start);
                let e = matcher::line_at(text, f.end.saturating_sub(1).max(f.start));
                json!({"stage": f.stage.as_str(), "startLine": s, "endLine": e})
            })
            .collect(),
    )
}

/// "1 replacement (exact, line 3)"
pub fn summary(text: &str, found: &[Found]) -> String {
    let n = found.len();
    let mut stages: Vec<&str> = found.iter().map(|f| f.stage.as_str()).collect();
    stages.dedup();
    let first = found.iter().map(|f| f.start).min().map_or(0, |s| matcher::line_at(text, s));
    format!("{n} replacement{} ({}, from line {first})", if n == 1 { "" } else { "s" }, stages.join("+"))
}

/// Run `edit_file`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let fuzzy = Flag::or(a.fuzzy, true);
    let all = Flag::on(a.all);
    let dry_run = Flag::on(a.dry_run);
    let (diff, old, new) = (a.diff, a.old_string, a.new_string);
    let blocks = match (&diff, &old, &new) {
        (Some(d), None, None) => Some(parse_blocks(d)?),
        (None, Some(_), Some(_)) => None,
        (Some(_), _, _) => {
            return Err(ToolError::invalid(
                "pass either diff (SEARCH/REPLACE blocks) or oldString/newString, not both",
            ));
        }
        (None, None, _) => {
            return Err(ToolError::invalid(
                "oldString must be a string (or pass diff with SEARCH/REPLACE blocks)",
            ));
        }
        (None, Some(_), None) => return Err(ToolError::invalid("newString must be a string")),
    };
    let loaded: Loaded = load_with(ctx, &path, a.expected_hash.as_deref(), a.encoding.as_deref()).await?;
    let text = &loaded.doc.text;
    let allow = Flag::on(a.allow_placeholders);
    match &blocks {
        Some(b) => b.iter().try_for_each(|b| placeholder::check(&b.replace, text, allow, &path))?,
        None => placeholder::check(new.as_deref().unwrap_or_default(), text, allow, &path)?,
    }
    let found = match &blocks {
        Some(b) => locate_blocks(text, b, fuzzy, &path)?,
        None => {
            let req = Request {
                old: old.as_deref().unwrap_or_default(),
                new: new.as_deref().unwrap_or_default(),
                all,
                fuzzy,
            };
            matcher::locate(text, &req, &path)?
        }
    };
    let matches = describe(text, &found);
    let what = summary(text, &found);
    let replacements = found.len();
    let new_text = matcher::apply(text, found)?;
    let extra = json!({"replacements": replacements, "matches": matches});
    edit_result(ctx, &loaded, &new_text, dry_run, format!("Edit file: {path}"), &what, extra).await
}

/// The `edit_file` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "editFile",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[
        ("old_string", "oldString"),
        ("oldStr", "oldString"),
        ("old_text", "oldString"),
        ("target", "oldString"),
        ("new_string", "newString"),
        ("newStr", "newString"),
        ("new_text", "newString"),
        ("patch", "newString"),
        ("replaceAll", "all"),
        ("replace_all", "all"),
    ],
    // Stack `edit`, Alfredo `replace_in_file`, TunaCode `update_file`
    tool_aliases: &["edit", "replace_in_file", "update_file"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("edit_file.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_parse_in_both_styles() {
        let d = "intro\n------- SEARCH\na\nb\n=======\nc\n+++++++ REPLACE\n\n<<<<<<< SEARCH\nx\n=======\n>>>>>>> REPLACE\n";
        let b = parse_blocks(d).unwrap();
        assert_eq!(
            b,
            vec![
                Block { search: "a\nb".into(), replace: "c".into() },
                Block { search: "x".into(), replace: "".into() }
            ]
        );
        assert_eq!(parse_blocks("------- SEARCH\na\n").unwrap_err().code(), ErrorCode::InvalidPatch);
        assert_eq!(parse_blocks("nothing").unwrap_err().code(), ErrorCode::InvalidPatch);
    }

    #[test]
    fn blocks_in_any_order_all_or_nothing() {
        let text = "one\ntwo\nthree\nfour\n";
        let blocks = parse_blocks("------- SEARCH\nfour\n=======\n4\n+++++++ REPLACE\n------- SEARCH\ntwo\n=======\n+++++++ REPLACE").unwrap();
        let f = locate_blocks(text, &blocks, true, "f").unwrap();
        assert_eq!(matcher::apply(text, f).unwrap(), "one\nthree\n4\n");
        let bad = parse_blocks("------- SEARCH\nfour\n=======\n4\n+++++++ REPLACE\n------- SEARCH\nfive\n=======\n5\n+++++++ REPLACE").unwrap();
        let e = locate_blocks(text, &bad, true, "f").unwrap_err();
        assert_eq!((e.code(), &e.props()["block"]), (ErrorCode::NoMatch, &json!(2)));
        assert!(e.message().starts_with("SEARCH/REPLACE block 2 of 2: "));
    }
}
