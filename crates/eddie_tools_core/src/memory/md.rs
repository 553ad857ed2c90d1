//! `MEMORY.md`: one `## <key>` heading per entry, read and edited in place.
//!
//! The file is a preamble, then entries. An entry is its heading line and every line after it
//! up to the next `## ` heading or `# ` heading outside a fenced code block (or the end). A
//! `# ` heading and what follows it up to the next entry is text of its own, outside every
//! entry. Edits replace, insert or remove only the bytes of one entry: every other byte of the
//! file (a person's notes, headings, spacing) is kept as it was.

use std::ops::Range;

use crate::error::{ErrorCode, Result, ToolError};

/// Longest key, in characters.
pub const MAX_KEY_CHARS: usize = 200;
/// Largest value, in bytes.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;
/// Largest `MEMORY.md` read, in bytes.
pub const MAX_FILE_BYTES: usize = 32 * 1024 * 1024;

/// One entry's place in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The heading text, trimmed.
    pub key: String,
    /// The heading line and body: `text[span]`.
    pub span: Range<usize>,
    /// The body (after the heading line): `text[body]`.
    pub body: Range<usize>,
}

/// What a line is.
enum Line<'a> {
    /// `## key` outside a fence.
    Entry(&'a str),
    /// `# title` outside a fence.
    Title,
    /// Anything else.
    Text,
}

fn fence(line: &str) -> Option<&str> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    if t.starts_with("```") {
        Some("```")
    } else if t.starts_with("~~~") {
        Some("~~~")
    } else {
        None
    }
}

/// The lines of `text` with their byte ranges (without the line end) and kinds.
fn lines(text: &str) -> Vec<(Range<usize>, Line<'_>)> {
    let mut out = Vec::new();
    let mut open: Option<&str> = None;
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let line = raw.trim_end_matches('\n').trim_end_matches('\r');
        let kind = if let Some(f) = open {
            if fence(line).is_some_and(|g| g == f) {
                open = None;
            }
            Line::Text
        } else if let Some(f) = fence(line) {
            open = Some(f);
            Line::Text
        } else if let Some(rest) = line.strip_prefix("## ") {
            let key = rest.trim();
            if key.is_empty() { Line::Text } else { Line::Entry(key) }
        } else if line.starts_with("# ") || line == "#" {
            Line::Title
        } else {
            Line::Text
        };
        out.push((start..at, kind));
    }
    out
}

/// Whether `text` ends inside a fenced block.
fn ends_in_fence(text: &str) -> bool {
    let mut open: Option<&str> = None;
    for raw in text.split('\n') {
        let line = raw.trim_end_matches('\r');
        match open {
            Some(f) if fence(line).is_some_and(|g| g == f) => open = None,
            Some(_) => {}
            None => open = fence(line),
        }
    }
    open.is_some()
}

/// The entries of `text`, in file order.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut current: Option<Entry> = None;
    for (range, kind) in lines(text) {
        match kind {
            Line::Entry(key) => {
                if let Some(mut e) = current.take() {
                    e.span.end = range.start;
                    e.body.end = range.start;
                    entries.push(e);
                }
                current = Some(Entry {
                    key: key.to_owned(),
                    span: range.start..text.len(),
                    body: range.end..text.len(),
                });
            }
            Line::Title => {
                if let Some(mut e) = current.take() {
                    e.span.end = range.start;
                    e.body.end = range.start;
                    entries.push(e);
                }
            }
            Line::Text => {}
        }
    }
    entries.extend(current);
    entries
}

/// An entry's value: its body without the blank lines around it.
pub fn value<'a>(text: &'a str, e: &Entry) -> &'a str {
    text[e.body.clone()].trim_matches(|c: char| c == '\n' || c == '\r').trim_end()
}

/// A key as given, checked: trimmed, non-empty, one line, at most [`MAX_KEY_CHARS`].
pub fn check_key(key: &str) -> Result<String> {
    let k = key.trim();
    if k.is_empty() {
        return Err(ToolError::invalid("key must not be empty"));
    }
    if k.contains(['\n', '\r']) {
        return Err(ToolError::invalid("key must be one line (it becomes a `## ` heading)"));
    }
    if k.chars().count() > MAX_KEY_CHARS {
        return Err(ToolError::invalid(format!("key must be at most {MAX_KEY_CHARS} characters")));
    }
    Ok(k.to_owned())
}

/// A value as given, checked: at most [`MAX_VALUE_BYTES`], and nothing that would end the
/// entry early (a `# `/`## ` heading line, an unclosed code fence).
pub fn check_value(value: &str) -> Result<String> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!("value is {} bytes; the cap is {MAX_VALUE_BYTES} bytes", value.len()),
        ));
    }
    if lines(value).iter().any(|(_, k)| !matches!(k, Line::Text)) {
        return Err(ToolError::invalid(
            "value must not contain a line starting with `# ` or `## ` (it would start another entry); use `### ` for headings inside a value",
        ));
    }
    if ends_in_fence(value) {
        return Err(ToolError::invalid("value has an unclosed ``` or ~~~ code fence"));
    }
    Ok(value.trim_matches(|c: char| c == '\n' || c == '\r').trim_end().to_owned())
}

fn entry_text(key: &str, value: &str) -> String {
    if value.is_empty() { format!("## {key}\n") } else { format!("## {key}\n\n{value}\n") }
}

/// The first entry with `key`.
pub fn find<'a>(entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
    entries.iter().find(|e| e.key == key)
}

/// `text` with entry `key` set to `value` (replacing the first entry with that key, or added
/// at the end). Returns the new text and whether the entry existed.
pub fn set(text: &str, key: &str, value: &str) -> (String, bool) {
    let entries = parse(text);
    match find(&entries, key) {
        Some(e) => {
            let mut out = String::with_capacity(text.len() + value.len());
            out.push_str(&text[..e.span.start]);
            out.push_str(&entry_text(key, value));
            if e.span.end < text.len() {
                out.push('\n');
            }
            out.push_str(&text[e.span.end..]);
            (out, true)
        }
        None => {
            let mut out = String::with_capacity(text.len() + value.len() + key.len() + 8);
            out.push_str(text);
            if text.is_empty() {
                out.push_str("# Memory\n\n");
            } else {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                if !out.ends_with("\n\n") {
                    out.push('\n');
                }
            }
            out.push_str(&entry_text(key, value));
            (out, false)
        }
    }
}

/// The value after appending `more` to entry `key`'s current value (a new line between).
pub fn appended(text: &str, key: &str, more: &str) -> String {
    let entries = parse(text);
    match find(&entries, key).map(|e| value(text, e)) {
        Some(old) if !old.is_empty() => format!("{old}\n{more}"),
        _ => more.to_owned(),
    }
}

/// `text` without the entries with `key`; `None` when there is none.
pub fn remove(text: &str, key: &str) -> Option<(String, usize)> {
    let entries = parse(text);
    let gone: Vec<&Entry> = entries.iter().filter(|e| e.key == key).collect();
    if gone.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in &gone {
        out.push_str(&text[at..e.span.start]);
        at = e.span.end;
    }
    out.push_str(&text[at..]);
    Some((out, gone.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Memory\n\nNotes a person wrote.\n\n## GPU\n\n8GB\n\n## Deploy\n\nuse make\n```\n## not a heading\n```\n\n# Other\n\nkept\n";

    #[test]
    fn parses_entries_and_outside_text() {
        let e = parse(DOC);
        assert_eq!(e.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["GPU", "Deploy"]);
        assert_eq!(value(DOC, &e[0]), "8GB");
        assert_eq!(value(DOC, &e[1]), "use make\n```\n## not a heading\n```");
        assert!(DOC[e[1].span.end..].starts_with("# Other"));
    }

    #[test]
    fn edits_keep_every_other_byte() {
        let (t, existed) = set(DOC, "GPU", "24GB");
        assert!(existed);
        assert_eq!(t, DOC.replace("## GPU\n\n8GB\n", "## GPU\n\n24GB\n"));
        let (t2, existed) = set(&t, "New", "v");
        assert!(!existed);
        assert_eq!(t2, format!("{t}\n## New\n\nv\n"));
        let (t3, n) = remove(&t2, "Deploy").unwrap_or_default();
        assert_eq!(n, 1);
        assert!(t3.contains("# Other\n\nkept\n") && !t3.contains("use make"));
        assert_eq!(set("", "k", "v").0, "# Memory\n\n## k\n\nv\n");
        assert_eq!(appended(DOC, "GPU", "more"), "8GB\nmore");
    }

    #[test]
    fn values_that_would_break_the_file_are_refused() {
        assert!(check_value("a\n## b").is_err());
        assert!(check_value("# t").is_err());
        assert!(check_value("```\nopen").is_err());
        assert!(check_value("```\n## fine\n```").is_ok());
        assert_eq!(check_key("  k ").unwrap_or_default(), "k");
        assert!(check_key(" ").is_err());
        assert!(check_key("a\nb").is_err());
    }
}
