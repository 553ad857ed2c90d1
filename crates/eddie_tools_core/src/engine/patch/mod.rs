//! Patches: parsing unified diffs (git or plain, several files, `/dev/null` creations and
//! deletions, renames) and the codex `*** Begin Patch` envelope into one list of file
//! operations, applying hunks line by line, and committing a multi-file patch atomically.
//!
//! A hunk is placed at its stated line when its context is there, else at the nearest exact
//! match after the previous hunk, else by the ladder `trim_end` → `trim` → `unicode` (which must
//! be unique). Context lines keep the file's bytes; added lines take the file's line ending;
//! the trailing-newline state follows the `\ No newline at end of file` markers, or stays as it
//! was. If any hunk of any file fails, nothing is written.

pub mod diff;
pub mod matcher;

use serde_json::json;

use crate::error::{ErrorCode, Result, ToolError, prefixed};
use matcher::{Request, fold, lines_any_eol};

/// A hunk line's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// Context (` `).
    Ctx,
    /// Removed (`-`).
    Del,
    /// Added (`+`).
    Add,
}

/// One hunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based old start line (unified diffs).
    pub old_start: Option<usize>,
    /// Codex `@@ anchor` lines to find first, in order.
    pub anchors: Vec<String>,
    /// The lines.
    pub lines: Vec<(Tag, String)>,
    /// The old side ends without a newline.
    pub old_no_eol: bool,
    /// The new side ends without a newline.
    pub new_no_eol: bool,
    /// Codex `*** End of File`: the hunk is at the end.
    pub eof: bool,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Create a file.
    Add {
        /// Path.
        path: String,
        /// Content.
        content: String,
    },
    /// Delete a file (hunks, when given, must remove all of it).
    Delete {
        /// Path.
        path: String,
        /// The removal hunks of a unified diff.
        hunks: Vec<Hunk>,
    },
    /// Change (and maybe rename) a file.
    Update {
        /// Path.
        path: String,
        /// New path.
        move_to: Option<String>,
        /// Hunks.
        hunks: Vec<Hunk>,
    },
}

impl Op {
    /// The path the operation reads.
    pub fn path(&self) -> &str {
        match self {
            Self::Add { path, .. } | Self::Delete { path, .. } | Self::Update { path, .. } => path,
        }
    }
}

/// `INVALID_PATCH` with `msg`.
pub fn bad(msg: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::InvalidPatch, msg)
}

/// Parse either format (codex when it contains `*** Begin Patch`).
pub fn parse_any(text: &str) -> Result<Vec<Op>> {
    if text.lines().any(|l| l.trim() == "*** Begin Patch") { parse_codex(text) } else { parse_unified(text) }
}

fn diff_path(raw: &str, prefix: &str) -> Option<String> {
    let s = raw.split('\t').next().unwrap_or(raw).trim_end();
    let s = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')).unwrap_or(s);
    if s == "/dev/null" {
        return None;
    }
    Some(s.strip_prefix(prefix).unwrap_or(s).to_owned())
}

/// Parse a unified diff (one or more files).
pub fn parse_unified(text: &str) -> Result<Vec<Op>> {
    let ls: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut ops = Vec::new();
    let mut i = 0;
    let is_file_header =
        |i: usize| ls[i].starts_with("--- ") && ls.get(i + 1).is_some_and(|n| n.starts_with("+++ "));
    let mut rename: Option<(String, String)> = None;
    while i < ls.len() {
        let l = ls[i];
        if l.starts_with("diff --git ") {
            if let Some((from, to)) = rename.take() {
                ops.push(Op::Update { path: from, move_to: Some(to), hunks: Vec::new() });
            }
            i += 1;
            continue;
        }
        if let Some(from) = l.strip_prefix("rename from ") {
            let to = ls.get(i + 1).and_then(|n| n.strip_prefix("rename to ")).unwrap_or_default();
            rename = Some((from.to_owned(), to.to_owned()));
            i += 2;
            continue;
        }
        if !is_file_header(i) {
            i += 1;
            continue;
        }
        let old = diff_path(&l[4..], "a/");
        let new = diff_path(&ls[i + 1][4..], "b/");
        rename = None;
        i += 2;
        let mut hunks = Vec::new();
        while i < ls.len() && ls[i].starts_with("@@") {
            let (h, next) = parse_unified_hunk(&ls, i, &is_file_header)?;
            hunks.push(h);
            i = next;
        }
        if hunks.is_empty() {
            return Err(bad(format!(
                "no @@ hunk after the file header for {}",
                new.as_deref().or(old.as_deref()).unwrap_or("?")
            )));
        }
        ops.push(match (old, new) {
            (None, Some(path)) => {
                let mut content = String::new();
                let mut no_eol = false;
                for h in &hunks {
                    for (t, s) in &h.lines {
                        if *t != Tag::Del {
                            content.push_str(s);
                            content.push('\n');
                        }
                    }
                    no_eol |= h.new_no_eol;
                }
                if no_eol {
                    content.pop();
                }
                Op::Add { path, content }
            }
            (Some(path), None) => Op::Delete { path, hunks },
            (Some(path), Some(to)) => {
                let move_to = (to != path).then_some(to);
                Op::Update { path, move_to, hunks }
            }
            (None, None) => return Err(bad("a file header has /dev/null on both sides")),
        });
    }
    if let Some((from, to)) = rename.take() {
        ops.push(Op::Update { path: from, move_to: Some(to), hunks: Vec::new() });
    }
    if ops.is_empty() {
        return Err(bad(
            "no file changes found: expected '--- a/path' and '+++ b/path' headers followed by @@ hunks",
        ));
    }
    Ok(ops)
}

fn parse_unified_hunk(
    ls: &[&str],
    at: usize,
    is_file_header: &dyn Fn(usize) -> bool,
) -> Result<(Hunk, usize)> {
    let head = ls[at];
    let old_start = head
        .strip_prefix("@@ -")
        .and_then(|r| r.split([',', ' ']).next())
        .and_then(|n| n.parse::<usize>().ok());
    let mut h = Hunk { old_start, ..Hunk::default() };
    // What the header says the hunk holds: while it still expects old and new lines, a
    // `--- x` / `+++ y` pair is a removed `-- x` and an added `++ y`, not the next file's header
    // (unless an `@@` follows it, as it follows every real header).
    let (mut old_left, mut new_left) = hunk_counts(head).unwrap_or((0, 0));
    let mut i = at + 1;
    let mut blanks = 0usize;
    while i < ls.len() {
        let l = ls[i];
        let content_pair =
            old_left > blanks && new_left > blanks && !ls.get(i + 2).is_some_and(|n| n.starts_with("@@"));
        if l.starts_with("@@") || l.starts_with("diff --git ") || (is_file_header(i) && !content_pair) {
            break;
        }
        if l.is_empty() {
            blanks += 1;
            i += 1;
            continue;
        }
        let (tag, rest) = match l.as_bytes()[0] {
            b' ' => (Tag::Ctx, &l[1..]),
            b'-' => (Tag::Del, &l[1..]),
            b'+' => (Tag::Add, &l[1..]),
            b'\\' => {
                match h.lines.last().map(|x| x.0) {
                    Some(Tag::Del) => h.old_no_eol = true,
                    Some(Tag::Add) => h.new_no_eol = true,
                    Some(Tag::Ctx) => {
                        h.old_no_eol = true;
                        h.new_no_eol = true;
                    }
                    None => {}
                }
                i += 1;
                continue;
            }
            _ => break,
        };
        // Blank lines inside a hunk are empty context lines (editors strip the space).
        h.lines.extend(std::iter::repeat_n((Tag::Ctx, String::new()), blanks));
        old_left = old_left.saturating_sub(blanks);
        new_left = new_left.saturating_sub(blanks);
        blanks = 0;
        match tag {
            Tag::Ctx => {
                old_left = old_left.saturating_sub(1);
                new_left = new_left.saturating_sub(1);
            }
            Tag::Del => old_left = old_left.saturating_sub(1),
            Tag::Add => new_left = new_left.saturating_sub(1),
        }
        h.lines.push((tag, rest.to_owned()));
        i += 1;
    }
    if h.lines.is_empty() {
        return Err(bad(format!("empty hunk: {head}")));
    }
    Ok((h, i))
}

/// The old and new line counts of a `@@ -a[,b] +c[,d] @@` header (a missing count is 1).
fn hunk_counts(head: &str) -> Option<(usize, usize)> {
    let mut parts = head.strip_prefix("@@ ")?.split(' ');
    let count = |p: Option<&str>, sign: char| -> Option<usize> {
        let range = p?.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((count(parts.next(), '-')?, count(parts.next(), '+')?))
}

/// A line that opens a file section or ends the patch, as written or padded with whitespace
/// (codex trims these lines; models indent them).
fn section_header(l: &str) -> Option<&str> {
    let t = l.trim_start();
    ["*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** End Patch"]
        .iter()
        .any(|h| t.starts_with(h) || (h.ends_with("Patch") && t.trim_end() == *h))
        .then_some(t)
}

/// Inside an update body, whether `l` ends the body: an unpadded `*** ` line, or a padded
/// section header. A line padded by exactly one space is a context line (its first byte is
/// the ' ' tag), whatever follows.
fn ends_update_body(l: &str) -> bool {
    l.starts_with("*** ") || (!l.starts_with(' ') || l.starts_with("  ")) && section_header(l).is_some()
}

/// Parse the codex `*** Begin Patch` envelope.
pub fn parse_codex(text: &str) -> Result<Vec<Op>> {
    let ls: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let Some(begin) = ls.iter().position(|l| l.trim() == "*** Begin Patch") else {
        return Err(bad("the patch must start with '*** Begin Patch'"));
    };
    let Some(end) = ls.iter().rposition(|l| l.trim() == "*** End Patch") else {
        return Err(bad("the patch must end with '*** End Patch'"));
    };
    let mut ops = Vec::new();
    let mut i = begin + 1;
    while i < end {
        let l = section_header(ls[i]).unwrap_or(ls[i]);
        let ends_add_body = |l: &str| l.starts_with("*** ") || section_header(l).is_some();
        if let Some(p) = l.strip_prefix("*** Add File: ") {
            let mut content = String::new();
            i += 1;
            while i < end && !ends_add_body(ls[i]) {
                let trailing_blank = ls[i].is_empty()
                    && ls[i..end].iter().take_while(|l| !ends_add_body(l)).all(|l| l.is_empty());
                match ls[i].strip_prefix('+') {
                    Some(s) => {
                        content.push_str(s);
                        content.push('\n');
                    }
                    None if trailing_blank => {}
                    // A bare empty line inside the file: an empty line whose '+' was dropped.
                    None if ls[i].is_empty() => content.push('\n'),
                    None => {
                        return Err(bad(format!(
                            "line {}: lines of an added file must start with '+'",
                            i + 1
                        )));
                    }
                }
                i += 1;
            }
            ops.push(Op::Add { path: p.trim().to_owned(), content });
        } else if let Some(p) = l.strip_prefix("*** Delete File: ") {
            ops.push(Op::Delete { path: p.trim().to_owned(), hunks: Vec::new() });
            i += 1;
        } else if let Some(p) = l.strip_prefix("*** Update File: ") {
            i += 1;
            let mut move_to = None;
            if let Some(t) = ls.get(i).and_then(|n| n.trim_start().strip_prefix("*** Move to: ")) {
                move_to = Some(t.trim().to_owned());
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            let mut cur: Option<Hunk> = None;
            while i < end {
                let l = ls[i];
                if l.trim() == "*** End of File" {
                    cur.get_or_insert_with(Hunk::default).eof = true;
                    i += 1;
                    continue;
                }
                if ends_update_body(l) {
                    break;
                }
                if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    match &mut cur {
                        Some(h) if h.lines.is_empty() => {
                            if !anchor.is_empty() {
                                h.anchors.push(anchor.to_owned());
                            }
                        }
                        _ => {
                            if let Some(h) = cur.take() {
                                hunks.push(h);
                            }
                            let mut h = Hunk::default();
                            if !anchor.is_empty() {
                                h.anchors.push(anchor.to_owned());
                            }
                            cur = Some(h);
                        }
                    }
                    i += 1;
                    continue;
                }
                let (tag, rest) = match l.as_bytes().first() {
                    None => (Tag::Ctx, ""),
                    Some(b' ') => (Tag::Ctx, &l[1..]),
                    Some(b'-') => (Tag::Del, &l[1..]),
                    Some(b'+') => (Tag::Add, &l[1..]),
                    _ => {
                        return Err(bad(format!(
                            "line {}: expected ' ', '-', '+' or '@@' in an update hunk: {l}",
                            i + 1
                        )));
                    }
                };
                cur.get_or_insert_with(Hunk::default).lines.push((tag, rest.to_owned()));
                i += 1;
            }
            if let Some(h) = cur.take() {
                hunks.push(h);
            }
            // A trailing blank line before the next header is not context.
            for h in &mut hunks {
                while h.lines.last().is_some_and(|(t, s)| *t == Tag::Ctx && s.is_empty()) && h.lines.len() > 1
                {
                    h.lines.pop();
                }
            }
            hunks.retain(|h| !h.lines.is_empty());
            if hunks.is_empty() && move_to.is_none() {
                return Err(bad(format!("*** Update File: {} has no hunks", p.trim())));
            }
            ops.push(Op::Update { path: p.trim().to_owned(), move_to, hunks });
        } else if l.trim().is_empty() {
            i += 1;
        } else {
            return Err(bad(format!(
                "line {}: expected '*** Add File:', '*** Delete File:' or '*** Update File:', found: {l}",
                i + 1
            )));
        }
    }
    if ops.is_empty() {
        return Err(bad("the patch has no file operations"));
    }
    Ok(ops)
}

/// Where and how each hunk applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// 1-based line in the old file.
    pub line: usize,
    /// `exact`, `trim_end`, `trim` or `unicode`.
    pub stage: &'static str,
}

fn same(stage: usize, a: &str, b: &str) -> bool {
    match stage {
        0 => a == b,
        1 => a.trim_end() == b.trim_end(),
        2 => a.trim() == b.trim(),
        _ => fold(a.trim()) == fold(b.trim()),
    }
}

const STAGES: [&str; 4] = ["exact", "trim_end", "trim", "unicode"];

/// Apply `hunks` to `text`; errors name the hunk.
pub fn apply_hunks(text: &str, hunks: &[Hunk], display: &str) -> Result<(String, Vec<Placed>)> {
    let table = lines_any_eol(text);
    let content: Vec<&str> = table.iter().map(|l| &text[l.start..l.end]).collect();
    let eols: Vec<&str> = table.iter().map(|l| &text[l.end..l.next]).collect();
    let dominant = dominant_eol(&eols);
    let ended_nl = text.is_empty() || text.ends_with(['\n', '\r']);
    let mut out: Vec<(String, String)> = Vec::with_capacity(table.len() + 16);
    let mut copied = 0usize; // old lines already copied to `out`
    let mut cursor = 0usize;
    let mut placed = Vec::new();
    let mut final_eol: Option<bool> = None;
    let n = content.len();
    for (k, h) in hunks.iter().enumerate() {
        let prefix = format!("hunk {} of {}: ", k + 1, hunks.len());
        for a in &h.anchors {
            let found = (0..4).find_map(|st| (cursor..n).find(|&i| same(st, content[i], a)));
            match found {
                Some(i) => cursor = i + 1,
                None => {
                    return Err(ToolError::new(
                        ErrorCode::NoMatch,
                        format!(
                            "{prefix}the anchor line '@@ {a}' was not found in {display} after line {cursor}"
                        ),
                    )
                    .with_prop("hunk", k + 1)
                    .with_prop("path", display));
                }
            }
        }
        let old: Vec<&str> =
            h.lines.iter().filter(|(t, _)| *t != Tag::Add).map(|(_, s)| s.as_str()).collect();
        let m = old.len();
        let hint = h.old_start.map(|s| s.saturating_sub(1));
        let (pos, stage) = if m == 0 {
            let at = if h.eof || h.old_start.is_none() { n } else { h.old_start.unwrap_or(n).min(n) };
            (at.max(cursor), "exact")
        } else {
            match seek(&content, &old, cursor, hint, h.eof) {
                Seek::Found(p, st) => (p, st),
                Seek::Ambiguous(at) => {
                    let shown = at.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                    return Err(ToolError::new(
                        ErrorCode::AmbiguousMatch,
                        format!("{prefix}the hunk's context is not exact in {display}, and it matches loosely at several places (lines {shown}); add context lines"),
                    )
                    .with_prop("lines", json!(at))
                    .with_prop("hunk", k + 1));
                }
                Seek::Missing => {
                    let e = miss(text, &old, display).unwrap_or_else(|| {
                        ToolError::new(
                            ErrorCode::NoMatch,
                            format!("No match for the hunk's context in {display} at or after line {} (hunks must be in file order).", cursor + 1),
                        )
                        .with_prop("reason", "out_of_order")
                    });
                    return Err(prefixed(e, &prefix).with_prop("hunk", k + 1));
                }
            }
        };
        // Copy the untouched lines before the hunk.
        for i in copied..pos {
            out.push((content[i].to_owned(), eols[i].to_owned()));
        }
        let new_eol = if pos < n && !eols[pos].is_empty() { eols[pos] } else { dominant };
        // Matched ignoring indentation: added lines take the file's indentation, mapped from
        // the indentation of the lines that matched (so spaces never land in a tab file).
        let indents = if stage == "trim" || stage == "unicode" {
            indent_map(h, &content[pos..pos + m])
        } else {
            Vec::new()
        };
        let mut at = pos;
        // An added line that replaces removed ones takes the line ending of the last removed
        // line (a file with mixed endings keeps them); otherwise the hunk's.
        let mut replaced_eol: Option<&str> = None;
        for (t, s) in &h.lines {
            match t {
                Tag::Ctx => {
                    out.push((content[at].to_owned(), eols[at].to_owned()));
                    replaced_eol = None;
                    at += 1;
                }
                Tag::Del => {
                    replaced_eol = Some(eols[at]).filter(|e| !e.is_empty());
                    at += 1;
                }
                Tag::Add => {
                    out.push((reindent_line(s, &indents), replaced_eol.unwrap_or(new_eol).to_owned()));
                }
            }
        }
        copied = pos + m;
        cursor = copied;
        placed.push(Placed { line: pos + 1, stage });
        if copied == n {
            if h.new_no_eol {
                final_eol = Some(false);
            } else if h.old_no_eol {
                final_eol = Some(true);
            }
        }
    }
    for i in copied..n {
        out.push((content[i].to_owned(), eols[i].to_owned()));
    }
    let last = out.len().saturating_sub(1);
    for (i, (_, e)) in out.iter_mut().enumerate() {
        if i < last && e.is_empty() {
            *e = dominant.to_owned();
        }
    }
    let want_final = final_eol.unwrap_or(ended_nl);
    if let Some((_, e)) = out.last_mut() {
        if want_final && e.is_empty() {
            *e = dominant.to_owned();
        } else if !want_final {
            e.clear();
        }
    }
    // A lone CR before an empty line that ends in LF would join them into one CRLF (a line
    // lost): that CR becomes a CRLF.
    for i in 1..out.len() {
        if out[i - 1].1 == "\r" && out[i].0.is_empty() && out[i].1.starts_with('\n') {
            out[i - 1].1 = "\r\n".to_owned();
        }
    }
    let mut s = String::with_capacity(text.len() + 64);
    for (c, e) in &out {
        s.push_str(c);
        s.push_str(e);
    }
    Ok((s, placed))
}

/// The line ending most lines end with: `\r\n` over `\n` as [`crate::engine::text::doc::eol_style`]
/// has it, and a lone `\r` when it outnumbers both (a classic Mac file gets no `\n`).
fn dominant_eol(eols: &[&str]) -> &'static str {
    let count = |e: &str| eols.iter().filter(|x| **x == e).count();
    let (lf, crlf, cr) = (count("\n"), count("\r\n"), count("\r"));
    if cr > lf && cr > crlf {
        "\r"
    } else if crlf > lf {
        "\r\n"
    } else {
        "\n"
    }
}

/// (patch indentation, file indentation) pairs from the hunk's old lines and the file lines
/// they matched, longest patch indentation first.
fn indent_map(h: &Hunk, matched: &[&str]) -> Vec<(String, String)> {
    let lead = |s: &str| s[..s.len() - s.trim_start_matches([' ', '\t']).len()].to_owned();
    let old = h.lines.iter().filter(|(t, _)| *t != Tag::Add).map(|(_, s)| s.as_str());
    let mut map: Vec<(String, String)> = Vec::new();
    for (p, f) in old.zip(matched) {
        if p.trim().is_empty() || f.trim().is_empty() {
            continue;
        }
        let (pi, fi) = (lead(p), lead(f));
        if !map.iter().any(|(k, _)| *k == pi) {
            map.push((pi, fi));
        }
    }
    map.sort_by_key(|e| std::cmp::Reverse(e.0.len()));
    map
}

/// `line` with its indentation translated by `map` (longest matching prefix).
fn reindent_line(line: &str, map: &[(String, String)]) -> String {
    if map.is_empty() || line.trim().is_empty() {
        return line.to_owned();
    }
    let ind = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
    match map.iter().find(|(k, _)| ind.starts_with(k.as_str())) {
        Some((k, v)) => format!("{v}{}", &line[k.len()..]),
        None => line.to_owned(),
    }
}

enum Seek {
    Found(usize, &'static str),
    Ambiguous(Vec<usize>),
    Missing,
}

/// Find `old` in `content` at or after `cursor`.
fn seek(content: &[&str], old: &[&str], cursor: usize, hint: Option<usize>, eof: bool) -> Seek {
    let m = old.len();
    let n = content.len();
    if m > n || cursor > n - m {
        return Seek::Missing;
    }
    let positions: Vec<usize> = if eof { vec![n - m] } else { (cursor..=n - m).collect() };
    for (st, name) in STAGES.iter().enumerate() {
        let hits: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&p| p >= cursor && (0..m).all(|k| same(st, content[p + k], old[k])))
            .collect();
        match hits.as_slice() {
            [] => continue,
            [one] => return Seek::Found(*one, name),
            many if st == 0 => {
                let best = match hint {
                    Some(h) => many.iter().copied().min_by_key(|&p| p.abs_diff(h)),
                    None => many.first().copied(),
                };
                return best.map_or(Seek::Missing, |b| Seek::Found(b, name));
            }
            many => return Seek::Ambiguous(many.iter().map(|p| p + 1).collect()),
        }
    }
    Seek::Missing
}

/// The NO_MATCH explanation of the matcher for the hunk's old text.
fn miss(text: &str, old: &[&str], display: &str) -> Option<ToolError> {
    let joined = old.join("\n");
    let req = Request { old: &joined, new: "", all: false, fuzzy: false };
    match matcher::locate(text, &req, display) {
        Err(e) if e.code() == ErrorCode::NoMatch => Some(e),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_unified_multi_file() {
        let d = "diff --git a/x.txt b/x.txt\nindex 1..2 100644\n--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+n1\n+n2\n\\ No newline at end of file\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n";
        let ops = parse_unified(d).unwrap();
        assert_eq!(ops.len(), 3);
        assert!(
            matches!(&ops[0], Op::Update { path, move_to: None, hunks } if path == "x.txt" && hunks[0].old_start == Some(1))
        );
        assert_eq!(ops[1], Op::Add { path: "new.txt".into(), content: "n1\nn2".into() });
        assert!(matches!(&ops[2], Op::Delete { path, .. } if path == "gone.txt"));
        assert_eq!(parse_unified("hello").unwrap_err().code(), ErrorCode::InvalidPatch);
    }

    #[test]
    fn removed_and_added_lines_that_look_like_headers_stay_in_their_hunk() {
        // `-- not a header` removed and `++ nor this` added render as `--- …` / `+++ …`.
        let d = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n--- not a header\n+++ nor this\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-1\n+2\n";
        let ops = parse_unified(d).unwrap();
        assert_eq!(ops.len(), 2, "{ops:?}");
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        assert_eq!(hunks[0].lines[1], (Tag::Del, "-- not a header".into()));
        assert_eq!(hunks[0].lines[2], (Tag::Add, "++ nor this".into()));
        let (out, _) = apply_hunks("x\n-- not a header\n", hunks, "f").unwrap();
        assert_eq!(out, "x\n++ nor this\n");
        assert_eq!(hunk_counts("@@ -3 +4,0 @@ fn"), Some((1, 0)));
        assert_eq!(hunk_counts("@@ nonsense"), None);
    }

    #[test]
    fn parses_codex() {
        let p = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** Update File: b.py\n*** Move to: c.py\n@@ def f():\n-    return 1\n+    return 2\n*** End of File\n*** Delete File: d.txt\n*** End Patch\n";
        let ops = parse_codex(p).unwrap();
        assert_eq!(ops[0], Op::Add { path: "a.txt".into(), content: "hello\n".into() });
        match &ops[1] {
            Op::Update { path, move_to, hunks } => {
                assert_eq!((path.as_str(), move_to.as_deref()), ("b.py", Some("c.py")));
                assert_eq!(hunks[0].anchors, vec!["def f():".to_owned()]);
                assert!(hunks[0].eof);
                assert_eq!(hunks[0].lines.len(), 2);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(ops[2], Op::Delete { path: "d.txt".into(), hunks: vec![] });
        assert_eq!(
            parse_codex("*** Begin Patch\nnope\n*** End Patch").unwrap_err().code(),
            ErrorCode::InvalidPatch
        );
        let lenient = parse_codex("*** Begin Patch\n*** Add File: a\n+x\n\n+y\n\n\n*** End Patch").unwrap();
        assert_eq!(lenient[0], Op::Add { path: "a".into(), content: "x\n\ny\n".into() });
    }

    #[test]
    fn padded_section_headers_are_trimmed() {
        // codex scenario 017: a file header indented by spaces or a tab.
        for pad in ["  ", "\t", " \t "] {
            let p =
                format!("*** Begin Patch\n{pad}*** Update File: foo.txt\n@@\n-old\n+new\n*** End Patch\n");
            let ops = parse_codex(&p).unwrap();
            let Op::Update { path, hunks, .. } = &ops[0] else { panic!("{ops:?}") };
            assert_eq!(path, "foo.txt");
            assert_eq!(hunks[0].lines, vec![(Tag::Del, "old".into()), (Tag::Add, "new".into())]);
        }
        // Padded Add and Delete headers, a padded header right after an Add body, a padded Move.
        let p = "*** Begin Patch\n  *** Add File: a.txt\n+x\n  *** Delete File: d.txt\n\t*** Update File: u.txt\n  *** Move to: v.txt\n@@\n-1\n+2\n*** End Patch";
        let ops = parse_codex(p).unwrap();
        assert_eq!(ops[0], Op::Add { path: "a.txt".into(), content: "x\n".into() });
        assert_eq!(ops[1], Op::Delete { path: "d.txt".into(), hunks: vec![] });
        assert!(
            matches!(&ops[2], Op::Update { path, move_to: Some(to), .. } if path == "u.txt" && to == "v.txt")
        );
        // Inside an update body, one leading space is a context line, whatever follows.
        let p = "*** Begin Patch\n*** Update File: f\n@@\n *** Update File: g\n-a\n+b\n*** End Patch";
        let ops = parse_codex(p).unwrap();
        assert_eq!(ops.len(), 1);
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        assert_eq!(hunks[0].lines[0], (Tag::Ctx, "*** Update File: g".into()));
    }

    #[test]
    fn a_lone_cr_ends_a_line_for_patches() {
        let text = "one\r\ntwo\rthree\nfour\r\n";
        let ops = parse_codex(
            "*** Begin Patch\n*** Update File: f\n@@\n two\n-three\n+THREE\n four\n*** End Patch",
        )
        .unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let (out, placed) = apply_hunks(text, hunks, "f").unwrap();
        assert_eq!(out, "one\r\ntwo\rTHREE\nfour\r\n");
        assert_eq!(placed[0], Placed { line: 2, stage: "exact" });
        // A file that ends in a lone CR keeps it.
        let ops = parse_codex("*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n*** End Patch").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        assert_eq!(apply_hunks("a\rb\r", hunks, "f").unwrap().0, "a\rB\r");
    }

    #[test]
    fn our_diff_of_a_lone_cr_file_applies_back() {
        // Found by tests/parsers.rs (unified_diffs_apply_back): the diff took "a\rb\r" for one
        // line, which the patch (splitting at the lone CR too) could not find.
        let (old, new) = ("fn main() {\rreturn x\r", "return x\r");
        let (d, _) = diff::unified(Some("f"), Some("f"), old, new);
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -1,2 +1 @@\n-fn main() {\n return x\n");
        let ops = parse_unified(&d).unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        assert_eq!(apply_hunks(old, hunks, "f").unwrap().0, new);
    }

    #[test]
    fn lines_added_to_a_lone_cr_file_end_with_cr() {
        // Found by tests/parsers.rs (codex_envelopes_apply): a line added after the last one,
        // which has no line ending, took `\n` in a file whose lines end with a lone CR.
        let ops = parse_codex("*** Begin Patch\n*** Update File: f\n@@\n b\n+c\n*** End Patch").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        assert_eq!(apply_hunks("a\rb", hunks, "f").unwrap().0, "a\rb\rc");
        assert_eq!(apply_hunks("a\r\nb", hunks, "f").unwrap().0, "a\r\nb\r\nc");
        assert_eq!(apply_hunks("a\nb", hunks, "f").unwrap().0, "a\nb\nc");
    }

    #[test]
    fn a_line_added_before_an_empty_line_stays_a_line() {
        // Found by tests/parsers.rs (unified_diffs_apply_back): the added line took the lone
        // CR of the line at the hunk, and with the empty line's LF after it made one CRLF, so
        // the empty line was gone.
        let ops = parse_unified("--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n a\n b\n+c\n \n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let (out, _) = apply_hunks("a\rb\n\n", hunks, "f").unwrap();
        assert_eq!(out, "a\rb\nc\r\n\n");
    }

    #[test]
    fn applies_hunks_keeping_eols_and_offsets() {
        let text = "a\r\nb\r\nc\r\nd\r\n";
        let ops = parse_unified("--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n b\n-c\n+C\n+C2\n d\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let (out, placed) = apply_hunks(text, hunks, "f").unwrap();
        assert_eq!(out, "a\r\nb\r\nC\r\nC2\r\nd\r\n");
        assert_eq!(placed, vec![Placed { line: 2, stage: "exact" }]);
        // Wrong line numbers: found elsewhere; trailing spaces: trim_end stage.
        let ops = parse_unified("--- a/f\n+++ b/f\n@@ -40,2 +40,2 @@\n a  \n-b\n+B\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let (out, placed) = apply_hunks(text, hunks, "f").unwrap();
        assert_eq!((out.as_str(), placed[0].stage), ("a\r\nB\r\nc\r\nd\r\n", "trim_end"));
        // No newline at end on the new side.
        let ops =
            parse_unified("--- a/f\n+++ b/f\n@@ -4 +4 @@\n-d\n+D\n\\ No newline at end of file\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        assert_eq!(apply_hunks(text, hunks, "f").unwrap().0, "a\r\nb\r\nc\r\nD");
        // Spaces in the patch, tabs in the file: added lines get tabs.
        let tabs = "fn main() {\n\tif x {\n\t\tgo();\n\t}\n}\n";
        let ops = parse_unified("--- a/f\n+++ b/f\n@@ -2,3 +2,4 @@\n     if x {\n-        go();\n+        stop();\n+        wait();\n     }\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let (out, placed) = apply_hunks(tabs, hunks, "f").unwrap();
        assert_eq!(
            (out.as_str(), placed[0].stage),
            ("fn main() {\n\tif x {\n\t\tstop();\n\t\twait();\n\t}\n}\n", "trim")
        );
        // A loose (trim_end) match in two places is refused, naming both.
        let twice = "x  \ny\nx \ny\n";
        let ops = parse_unified("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let e = apply_hunks(twice, hunks, "f").unwrap_err();
        assert_eq!((e.code(), &e.props()["lines"]), (ErrorCode::AmbiguousMatch, &json!([1, 3])));
        let ops = parse_unified("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-zzz\n+y\n").unwrap();
        let Op::Update { hunks, .. } = &ops[0] else { panic!() };
        let e = apply_hunks(text, hunks, "f").unwrap_err();
        assert_eq!(e.code(), ErrorCode::NoMatch);
        assert!(e.message().starts_with("hunk 1 of 1: "), "{}", e.message());
    }
}
