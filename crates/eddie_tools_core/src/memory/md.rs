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

/// A code fence line (CommonMark): up to three spaces, then three or more backticks or
/// tildes; after backticks, no backtick in the info string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    ch: u8,
    len: usize,
}

impl Fence {
    fn of(line: &str) -> Option<(Fence, &str)> {
        let t = line.trim_start_matches(' ');
        if line.len() - t.len() > 3 {
            return None;
        }
        let ch = *t.as_bytes().first()?;
        if ch != b'`' && ch != b'~' {
            return None;
        }
        let len = t.bytes().take_while(|b| *b == ch).count();
        let info = &t[len..];
        if len < 3 || (ch == b'`' && info.contains('`')) {
            return None;
        }
        Some((Fence { ch, len }, info))
    }

    /// Whether `line` closes this fence: the same character, at least as many, nothing after
    /// but spaces or tabs.
    fn closed_by(self, line: &str) -> bool {
        Fence::of(line)
            .is_some_and(|(f, info)| f.ch == self.ch && f.len >= self.len && info.trim().is_empty())
    }

    /// The line that closes it.
    fn closing(self) -> String {
        String::from_utf8(vec![self.ch; self.len]).unwrap_or_default()
    }
}

/// Bytes of a UTF-8 byte order mark at the start of `text` (0 or 3). It belongs to the
/// file, not to its first line: a `## key` right after it is an entry, and edits keep it.
pub fn bom_len(text: &str) -> usize {
    if text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 }
}

/// The lines of `text` with their byte ranges (with the line end; a BOM is before the first
/// line), their kinds, and the fence still open at the end, if any.
fn lines(text: &str) -> (Vec<(Range<usize>, Line<'_>)>, Option<Fence>) {
    let mut out = Vec::new();
    let mut open: Option<Fence> = None;
    let mut at = bom_len(text);
    for raw in text[at..].split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let line = raw.trim_end_matches('\n').trim_end_matches('\r');
        let kind = if let Some(f) = open {
            if f.closed_by(line) {
                open = None;
            }
            Line::Text
        } else if let Some((f, _)) = Fence::of(line) {
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
    (out, open)
}

/// The fence `text` ends inside, if any.
fn open_fence(text: &str) -> Option<Fence> {
    lines(text).1
}

/// The entries of `text`, in file order.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut current: Option<Entry> = None;
    for (range, kind) in lines(text).0 {
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
    let (value_lines, open) = lines(value);
    if value_lines.iter().any(|(_, k)| !matches!(k, Line::Text)) {
        return Err(ToolError::invalid(
            "value must not contain a line starting with `# ` or `## ` (it would start another entry); use `### ` for headings inside a value",
        ));
    }
    if open.is_some() {
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
/// at the end). Returns the new text and whether the entry existed. Every byte outside the
/// entry is kept; a file that ends inside a code fence nobody closed gets the closing fence
/// line before the new entry (else the entry would be code, and invisible to the next read).
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
            let mut out = String::with_capacity(text.len() + value.len() + key.len() + 16);
            out.push_str(text);
            if text.len() == bom_len(text) {
                out.push_str("# Memory\n\n");
            } else {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                if let Some(f) = open_fence(text) {
                    out.push_str(&f.closing());
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

    #[test]
    fn a_file_left_inside_a_fence_gets_one_entry_per_key_and_lists_it() {
        for open in ["```", "~~~", "````rust", "  ~~~~ text"] {
            let text = format!("# Memory\n\nnotes\n{open}\nunclosed code\n");
            let (t1, existed) = set(&text, "k", "v1");
            assert!(!existed, "{open}");
            assert!(t1.starts_with(&text), "{open}: the person's bytes come first, unchanged");
            assert_eq!(
                parse(&t1).iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
                ["k"],
                "{open}: {t1:?}"
            );
            let (t2, existed) = set(&t1, "k", "v2");
            assert!(existed, "{open}: the second save finds the first: {t2:?}");
            assert_eq!(parse(&t2).len(), 1);
            assert_eq!(value(&t2, &parse(&t2)[0]), "v2");
        }
        // A fence closed by a shorter run, or by a run of the other character, is still open.
        for (open, not_close) in [("````", "```"), ("```", "~~~"), ("~~~", "```")] {
            let text = format!("{open}\n{not_close}\n## hidden\n");
            assert!(parse(&text).is_empty(), "{open} / {not_close}");
            let (t, _) = set(&text, "k", "v");
            assert_eq!(parse(&t).iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["k"]);
        }
        // A backtick fence's info string has no backtick: "```a`b" is not a fence.
        assert_eq!(parse("```a`b\n## k\n").len(), 1);
    }

    #[test]
    fn a_bom_is_kept_and_does_not_hide_the_first_entry() {
        let text = "\u{feff}## first\n\none\n\n## second\n\ntwo\n";
        let e = parse(text);
        assert_eq!(e.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["first", "second"]);
        assert_eq!(value(text, &e[0]), "one");
        let (t, existed) = set(text, "first", "uno");
        assert!(existed);
        assert_eq!(t, "\u{feff}## first\n\nuno\n\n## second\n\ntwo\n");
        let (t, _) = remove(&t, "first").unwrap_or_default();
        assert_eq!(t, "\u{feff}## second\n\ntwo\n");
        assert_eq!(set("\u{feff}", "k", "v").0, "\u{feff}# Memory\n\n## k\n\nv\n");
        assert_eq!(set("\u{feff}# Memory\r\n", "k", "v").0, "\u{feff}# Memory\r\n\n## k\n\nv\n");
    }

    mod props {
        use proptest::prelude::*;

        use super::super::*;

        const BOM: char = '\u{feff}';

        const LINES: &[&str] = &[
            "## a",
            "## b",
            "## c",
            "# Title",
            "```",
            "~~~",
            "````",
            "``` rust",
            "~~~~ x",
            "   ```",
            "    ```",
            "text",
            "",
            "### sub",
            "##",
            "## ",
            "``a`",
            "\u{feff}## a",
        ];
        const VALUES: &[&str] = &["v", "x\ny", "```\ncode\n## not a key\n```", "", "~~~~\n```\n~~~~"];

        fn doc() -> impl Strategy<Value = String> {
            (any::<bool>(), proptest::collection::vec(0..LINES.len(), 0..14), any::<bool>(), any::<bool>())
                .prop_map(|(bom, idx, crlf, trailing)| {
                    let sep = if crlf { "\r\n" } else { "\n" };
                    let mut t = if bom { "\u{feff}".to_owned() } else { String::new() };
                    t.push_str(&idx.iter().map(|i| LINES[*i]).collect::<Vec<_>>().join(sep));
                    if trailing && !idx.is_empty() {
                        t.push_str(sep);
                    }
                    t
                })
        }

        fn keys_but(text: &str, key: &str) -> Vec<String> {
            parse(text).into_iter().map(|e| e.key).filter(|k| k != key).collect()
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn a_save_is_found_again_and_keeps_every_other_byte(
                text in doc(), k in 0..3usize, v in 0..VALUES.len(), w in 0..VALUES.len(),
            ) {
                let key = ["a", "b", "c"][k];
                let value_in = check_value(VALUES[v]).unwrap_or_default();
                let before = parse(&text);
                let old = find(&before, key).cloned();
                let (t1, existed) = set(&text, key, &value_in);
                prop_assert_eq!(existed, old.is_some());
                // The entry is there, once more than never, with its value.
                let after = parse(&t1);
                let e = find(&after, key).cloned();
                prop_assert!(e.is_some(), "{:?} -> {:?}", text, t1);
                let e = e.unwrap_or_else(|| unreachable!());
                prop_assert_eq!(value(&t1, &e), value_in.as_str());
                let count = |es: &[Entry]| es.iter().filter(|e| e.key == key).count();
                prop_assert_eq!(count(&after), count(&before).max(1));
                // Bytes outside the entry are kept.
                match &old {
                    Some(o) => {
                        prop_assert_eq!(&t1[..o.span.start], &text[..o.span.start]);
                        prop_assert!(t1.ends_with(&text[o.span.end..]));
                    }
                    None => prop_assert!(t1.starts_with(&text)),
                }
                // The other entries keep their order.
                prop_assert_eq!(keys_but(&t1, key), keys_but(&text, key));
                // A second save of the key replaces the same entry; saving the same value again
                // changes nothing.
                let (t2, again) = set(&t1, key, &value_in);
                prop_assert!(again);
                prop_assert_eq!(&t2, &t1);
                let value_w = check_value(VALUES[w]).unwrap_or_default();
                let (t3, _) = set(&t1, key, &value_w);
                prop_assert_eq!(count(&parse(&t3)), count(&after));
                prop_assert_eq!(find(&parse(&t3), key).map(|e| value(&t3, e).to_owned()), Some(value_w));
                // And a delete removes every entry of the key.
                let (t4, n) = remove(&t1, key).unwrap_or_default();
                prop_assert_eq!(n, count(&after));
                prop_assert!(find(&parse(&t4), key).is_none());
                prop_assert_eq!(keys_but(&t4, key), keys_but(&text, key));
                if bom_len(&text) > 0 {
                    prop_assert!(t1.starts_with(BOM) && t4.starts_with(BOM), "the BOM is kept");
                }
            }
        }
    }
}
