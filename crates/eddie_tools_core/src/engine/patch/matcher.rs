//! Finding the text an edit replaces: exact first, then a fixed fuzzy ladder.
//!
//! | stage | what may differ | replacement |
//! | --- | --- | --- |
//! | `exact` | nothing | as given (line feeds follow the matched span's EOL) |
//! | `eol` | CRLF vs LF | line feeds converted to the span's EOL |
//! | `trim_end` | trailing white space on each line | as given |
//! | `indent` | one common indentation offset (same kind: spaces or tabs) | re-indented by the same offset |
//! | `unicode` | typographic quotes, dashes, ellipsis, special spaces (folded to ASCII) | as given |
//!
//! A stage that finds more than one place is refused (`AMBIGUOUS_MATCH`), except that `all`
//! replaces every exact (or EOL-normalised) occurrence. When nothing matches, `NO_MATCH`
//! carries a `reason` (`not_found`, `tabs_vs_spaces`, `whitespace`, `eol_mismatch`,
//! `line_number_prefix`, ...) and the nearest `candidates` with line numbers and visible
//! white space.

use serde_json::{Value, json};

use crate::engine::text::doc::{eol_style, with_eol};
use crate::error::{ErrorCode, Result, ToolError};

/// The ladder stage that matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Byte-exact.
    Exact,
    /// After normalising CRLF/LF.
    Eol,
    /// Ignoring trailing white space per line.
    TrimEnd,
    /// Ignoring one common indentation offset.
    Indent,
    /// Folding typographic punctuation and spaces to ASCII.
    Unicode,
}

impl Stage {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Eol => "eol",
            Self::TrimEnd => "trim_end",
            Self::Indent => "indent",
            Self::Unicode => "unicode",
        }
    }
}

/// One replacement: bytes `start..end` of the text become `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Start byte in the decoded text.
    pub start: usize,
    /// End byte (exclusive).
    pub end: usize,
    /// Which stage matched.
    pub stage: Stage,
    /// The text to put there.
    pub replacement: String,
}

/// What to replace.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The text to find.
    pub old: &'a str,
    /// Its replacement.
    pub new: &'a str,
    /// Replace every exact occurrence instead of requiring one.
    pub all: bool,
    /// Allow the fuzzy stages.
    pub fuzzy: bool,
}

/// A line of the text: `start..end` is its content, `end..next` its line ending.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    /// First byte.
    pub start: usize,
    /// End of the content.
    pub end: usize,
    /// Start of the next line.
    pub next: usize,
}

/// Every line of `text`.
pub fn lines(text: &str) -> Vec<Line> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', b) {
        let end = if i > start && b[i - 1] == b'\r' { i - 1 } else { i };
        out.push(Line { start, end, next: i + 1 });
        start = i + 1;
    }
    if start < b.len() {
        out.push(Line { start, end: b.len(), next: b.len() });
    }
    out
}

/// Every line of `text`, where a lone CR (old Mac line end, or a stray `\r` in a CRLF file)
/// also ends a line: `one\r\ntwo\rthree\n` is three lines. Patches place hunks on these
/// lines, so a model's `-three` matches; each line keeps its own ending when rebuilt.
pub fn lines_any_eol(text: &str) -> Vec<Line> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr2_iter(b'\n', b'\r', b) {
        if i < start {
            continue; // the LF of a CRLF, taken with its CR
        }
        let next = if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') { i + 2 } else { i + 1 };
        out.push(Line { start, end: i, next });
        start = next;
    }
    if start < b.len() {
        out.push(Line { start, end: b.len(), next: b.len() });
    }
    out
}

/// 1-based line number of byte `at`.
pub fn line_at(text: &str, at: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at.min(text.len())]).count() + 1
}

/// Find where `req` applies in `text`. `display` names the file in errors.
pub fn locate(text: &str, req: &Request<'_>, display: &str) -> Result<Vec<Found>> {
    if req.old.is_empty() {
        return Err(ToolError::invalid(
            "the text to replace must not be empty (use write_file to create a file, insert_at to add lines)",
        ));
    }
    // The file's dominant EOL costs a pass over the text: only when a span has no line break.
    let dominant = std::cell::OnceCell::new();
    let dominant = || *dominant.get_or_init(|| eol_style(text).0);
    let span_eol = |s: usize, e: usize| -> &'static str {
        let span = &text[s..e];
        if span.contains("\r\n") {
            "\r\n"
        } else if span.contains('\n') {
            "\n"
        } else if req.new.contains('\n') {
            dominant()
        } else {
            "\n"
        }
    };
    // exact
    let hits: Vec<usize> = memchr::memmem::find_iter(text.as_bytes(), req.old.as_bytes()).collect();
    if hits.len() == 1 || (req.all && !hits.is_empty()) {
        return Ok(hits
            .iter()
            .map(|&s| {
                let e = s + req.old.len();
                Found {
                    start: s,
                    end: e,
                    stage: Stage::Exact,
                    replacement: with_eol(req.new, span_eol(s, e)),
                }
            })
            .collect());
    }
    if hits.len() > 1 {
        return Err(ambiguous(text, &hits, req.old.matches('\n').count() + 1, Stage::Exact, display));
    }
    let eol_hits = eol_variants(text, req.old);
    if req.fuzzy && !eol_hits.is_empty() {
        if eol_hits.len() == 1 || req.all {
            return Ok(eol_hits
                .iter()
                .map(|&(s, e)| Found {
                    start: s,
                    end: e,
                    stage: Stage::Eol,
                    replacement: with_eol(req.new, span_eol(s, e)),
                })
                .collect());
        }
        return Err(ambiguous(
            text,
            &eol_hits.iter().map(|h| h.0).collect::<Vec<_>>(),
            req.old.matches('\n').count() + 1,
            Stage::Eol,
            display,
        ));
    }
    let table = lines(text);
    let needle = Needle::new(req.old);
    if req.fuzzy && !needle.blank() {
        for stage in [Stage::TrimEnd, Stage::Indent, Stage::Unicode] {
            let wins = needle.windows(text, &table, stage);
            match wins.as_slice() {
                [] => continue,
                [(i, bases)] => {
                    let first = table[*i];
                    let last = table[*i + needle.lines.len() - 1];
                    let end = if needle.ends_nl { last.next } else { last.end };
                    let eol = match &text[first.end..first.next] {
                        "" => dominant(),
                        e => {
                            if e == "\r\n" {
                                "\r\n"
                            } else {
                                "\n"
                            }
                        }
                    };
                    let new = req.new.replace("\r\n", "\n");
                    let new = match bases {
                        Some((fb, nb)) => reindent(&new, nb, fb),
                        None => new,
                    };
                    return Ok(vec![Found {
                        start: first.start,
                        end,
                        stage,
                        replacement: with_eol(&new, eol),
                    }]);
                }
                many => {
                    let at: Vec<usize> = many.iter().map(|(i, _)| table[*i].start).collect();
                    return Err(ambiguous(text, &at, needle.lines.len(), stage, display));
                }
            }
        }
    }
    Err(no_match(text, &table, &needle, req, !eol_hits.is_empty(), display))
}

/// Replace the `found` spans (any order; refused when two overlap).
pub fn apply(text: &str, mut found: Vec<Found>) -> Result<String> {
    found.sort_by_key(|f| (f.start, f.end));
    for pair in found.windows(2) {
        if pair[1].start < pair[0].end {
            return Err(ToolError::invalid(format!(
                "two edits overlap (lines {} and {}); merge them into one",
                line_at(text, pair[0].start),
                line_at(text, pair[1].start)
            )));
        }
    }
    let added: usize = found.iter().map(|f| f.replacement.len()).sum();
    let mut out = String::with_capacity(text.len() + added);
    let mut at = 0;
    for f in &found {
        out.push_str(&text[at..f.start]);
        out.push_str(&f.replacement);
        at = f.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// Occurrences of `old` with its line endings swapped (CRLF ↔ LF).
fn eol_variants(text: &str, old: &str) -> Vec<(usize, usize)> {
    if !old.contains('\n') {
        return Vec::new();
    }
    let lf = old.replace("\r\n", "\n");
    let crlf = lf.replace('\n', "\r\n");
    let mut hits = Vec::new();
    for v in [lf, crlf] {
        if v != old {
            hits.extend(memchr::memmem::find_iter(text.as_bytes(), v.as_bytes()).map(|s| (s, s + v.len())));
        }
    }
    hits.sort_unstable();
    hits
}

/// The text to find, as lines.
struct Needle {
    lines: Vec<String>,
    ends_nl: bool,
}

type Bases = Option<(String, String)>;

impl Needle {
    fn new(old: &str) -> Self {
        let norm = old.replace("\r\n", "\n");
        let ends_nl = norm.ends_with('\n') && norm.len() > 1;
        let body = if ends_nl { &norm[..norm.len() - 1] } else { norm.as_str() };
        Self { lines: body.split('\n').map(str::to_owned).collect(), ends_nl }
    }

    fn blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }

    /// Windows of `table` matching at `stage` (index of the first line, and for `indent` the
    /// file's and the needle's base indentation).
    fn windows(&self, text: &str, table: &[Line], stage: Stage) -> Vec<(usize, Bases)> {
        let m = self.lines.len();
        if table.len() < m {
            return Vec::new();
        }
        let (k0, key) = self.key(stage);
        let mut out = Vec::new();
        for i in 0..=table.len() - m {
            let l = table[i + k0];
            if key_of(&text[l.start..l.end], stage) != key {
                continue;
            }
            let win: Vec<&str> = table[i..i + m].iter().map(|l| &text[l.start..l.end]).collect();
            if let Some(bases) = self.matches(&win, stage) {
                out.push((i, bases));
                if out.len() > 20 {
                    break;
                }
            }
        }
        out
    }

    /// The first non-blank line and its comparison key.
    fn key(&self, stage: Stage) -> (usize, String) {
        let k0 = self.lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(0);
        (k0, key_of(&self.lines[k0], stage))
    }

    fn matches(&self, win: &[&str], stage: Stage) -> Option<Bases> {
        match stage {
            Stage::TrimEnd => {
                self.lines.iter().zip(win).all(|(a, b)| a.trim_end() == b.trim_end()).then_some(None)
            }
            Stage::Unicode => self
                .lines
                .iter()
                .zip(win)
                .all(|(a, b)| fold(a.trim_end()) == fold(b.trim_end()))
                .then_some(None),
            Stage::Indent => {
                let nb = base_indent(self.lines.iter().map(String::as_str))?;
                let fb = base_indent(win.iter().copied())?;
                let kind = |s: &str| (s.contains(' '), s.contains('\t'));
                let (ns, nt) = kind(nb);
                let (fs, ft) = kind(fb);
                if (ns || fs) && (nt || ft) {
                    return None;
                }
                let ok = self.lines.iter().zip(win).all(|(a, b)| {
                    if a.trim().is_empty() {
                        return b.trim().is_empty();
                    }
                    match (a.strip_prefix(nb), b.strip_prefix(fb)) {
                        (Some(x), Some(y)) => x.trim_end() == y.trim_end(),
                        _ => false,
                    }
                });
                ok.then(|| Some((fb.to_owned(), nb.to_owned())))
            }
            Stage::Exact | Stage::Eol => None,
        }
    }
}

fn key_of(line: &str, stage: Stage) -> String {
    match stage {
        Stage::Indent => line.trim().to_owned(),
        Stage::Unicode => fold(line.trim_end()),
        _ => line.trim_end().to_owned(),
    }
}

fn indent_of(line: &str) -> &str {
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

/// The shortest indentation of the non-blank lines, when it prefixes all of them.
fn base_indent<'a>(lines: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    let base = lines.clone().filter(|l| !l.trim().is_empty()).map(indent_of).min_by_key(|s| s.len())?;
    lines.filter(|l| !l.trim().is_empty()).all(|l| l.starts_with(base)).then_some(base)
}

fn reindent(new: &str, from: &str, to: &str) -> String {
    new.split('\n')
        .map(|l| {
            if l.trim().is_empty() {
                l.to_owned()
            } else if let Some(rest) = l.strip_prefix(from) {
                format!("{to}{rest}")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Typographic punctuation and special spaces folded to ASCII.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => out.push('"'),
            '\u{2010}'..='\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{2026}' => out.push_str("..."),
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => out.push(' '),
            '\u{200B}' | '\u{FEFF}' => {}
            c => out.push(c),
        }
    }
    out
}

fn ambiguous(text: &str, starts: &[usize], span: usize, stage: Stage, display: &str) -> ToolError {
    let lines: Vec<usize> = starts.iter().map(|&s| line_at(text, s)).collect();
    let shown = lines.iter().take(20).map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let mut msg = if stage == Stage::Exact || stage == Stage::Eol {
        format!(
            "The text to replace occurs {} times in {display} (lines {shown}). Include more surrounding lines to make it unique, or pass all: true to replace every occurrence.",
            lines.len()
        )
    } else {
        format!(
            "The text to replace is not in {display} exactly, and its {} match is ambiguous ({} places: lines {shown}). Include more surrounding lines, copied exactly.",
            stage.as_str(),
            lines.len()
        )
    };
    // Each place with one line around it, so the model can pick distinguishing context.
    let candidates: Vec<Value> = starts
        .iter()
        .zip(&lines)
        .take(5)
        .map(|(&at, &line)| {
            let (first, body) = excerpt(text, at, span, 1);
            json!({"startLine": line, "endLine": line + span - 1, "text": body, "contextFrom": first})
        })
        .collect();
    msg.push_str("\nThe places (→ tab, · space, ␍ CR):");
    for c in &candidates {
        msg.push_str(&format!("\n  line {}:\n{}", c["startLine"], c["text"].as_str().unwrap_or_default()));
    }
    ToolError::new(ErrorCode::AmbiguousMatch, msg)
        .with_prop("lines", json!(lines))
        .with_prop("stage", stage.as_str())
        .with_prop("candidates", Value::Array(candidates))
}

/// Lines `span` long from the line holding byte `at`, with `around` lines before and after,
/// rendered numbered with visible white space; returns the first shown line number too.
fn excerpt(text: &str, at: usize, span: usize, around: usize) -> (usize, String) {
    let b = text.as_bytes();
    let mut start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |i| i + 1);
    let mut first = line_at(text, start);
    for _ in 0..around {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &b[..start - 1]).map_or(0, |i| i + 1);
        first -= 1;
    }
    let wanted = span + around + (line_at(text, at) - first);
    let mut out = Vec::new();
    for (k, l) in text[start..].split_inclusive('\n').take(wanted).enumerate() {
        let l = l.strip_suffix('\n').unwrap_or(l);
        let (body, cr) = match l.strip_suffix('\r') {
            Some(b) => (b, "␍"),
            None => (l, ""),
        };
        out.push(format!("    {:>5}│{}{cr}", first + k, visible(body)));
    }
    (first, out.join("\n"))
}

/// Tabs shown as `→`, leading spaces as `·`, a CR as `␍`.
fn visible(line: &str) -> String {
    let ind = indent_of(line);
    let mut out: String = ind.chars().map(|c| if c == '\t' { '→' } else { '·' }).collect();
    out.push_str(&line[ind.len()..]);
    out
}

fn dice(a: &str, b: &str) -> f64 {
    let grams = |s: &str| -> Vec<(char, char)> {
        let cs: Vec<char> = s.chars().collect();
        let mut g: Vec<(char, char)> = cs.windows(2).map(|w| (w[0], w[1])).collect();
        g.sort_unstable();
        g
    };
    let (x, y) = (grams(a), grams(b));
    if x.is_empty() && y.is_empty() {
        return if a == b { 1.0 } else { 0.0 };
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
        }
    }
    2.0 * common as f64 / (x.len() + y.len()) as f64
}

fn no_match(
    text: &str,
    table: &[Line],
    needle: &Needle,
    req: &Request<'_>,
    eol_hit: bool,
    display: &str,
) -> ToolError {
    let m = needle.lines.len();
    // Why: the first explanation that fits.
    let mut reason = "not_found";
    let mut why = "it does not occur in the file".to_owned();
    let mut at: Option<usize> = None;
    // Copied from read_file output with its line-number prefixes ("    12\t")?
    let numbered = |l: &String| {
        let t = l.trim_start_matches(' ');
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        digits > 0 && t[digits..].starts_with('\t')
    };
    if needle.lines.iter().filter(|l| !l.is_empty()).all(numbered) && !needle.blank() {
        reason = "line_number_prefix";
        why = "every line starts with a line number and a tab, as read_file shows them; leave those prefixes out"
            .to_owned();
    } else if !req.fuzzy {
        let ladder = [
            (Stage::TrimEnd, "trailing_whitespace"),
            (Stage::Indent, "indentation"),
            (Stage::Unicode, "unicode_punctuation"),
        ];
        if eol_hit {
            reason = "eol_mismatch";
            let file_eol = if eol_style(text).0 == "\r\n" { "CRLF" } else { "LF" };
            why = format!(
                "the file uses {file_eol} line endings and your text does not; pass fuzzy: true or match its line endings"
            );
        } else if let Some((stage, r)) =
            ladder.into_iter().find(|(s, _)| !needle.blank() && !needle.windows(text, table, *s).is_empty())
        {
            reason = r;
            at = needle.windows(text, table, stage).first().map(|w| w.0);
            why = format!(
                "it differs in {}; pass fuzzy: true (stage {}) or copy the text exactly",
                r.replace('_', " "),
                stage.as_str()
            );
        }
    }
    if reason == "not_found" && !needle.blank() && table.len() >= m {
        // Same text once all leading and trailing white space is ignored?
        let key = needle.key(Stage::Indent).1;
        let k0 = needle.key(Stage::Indent).0;
        for i in 0..=table.len() - m {
            let l = table[i + k0];
            if text[l.start..l.end].trim() != key {
                continue;
            }
            let win: Vec<&str> = table[i..i + m].iter().map(|l| &text[l.start..l.end]).collect();
            if needle.lines.iter().zip(&win).all(|(a, b)| a.trim() == b.trim()) {
                let has = |ls: &[&str], c: char| ls.iter().any(|l| indent_of(l).contains(c));
                let ours: Vec<&str> = needle.lines.iter().map(String::as_str).collect();
                let (file_tabs, file_spaces) = (has(&win, '\t'), has(&win, ' '));
                let (ours_tabs, ours_spaces) = (has(&ours, '\t'), has(&ours, ' '));
                at = Some(i);
                if file_tabs && !file_spaces && ours_spaces && !ours_tabs {
                    reason = "tabs_vs_spaces";
                    why =
                        "the file indents these lines with tabs (→) and your text uses spaces; copy the tabs"
                            .to_owned();
                } else if file_spaces && !file_tabs && ours_tabs && !ours_spaces {
                    reason = "tabs_vs_spaces";
                    why = "the file indents these lines with spaces (·) and your text uses tabs; copy the spaces".to_owned();
                } else {
                    reason = "whitespace";
                    why = "it differs only in indentation or white space; copy the lines exactly".to_owned();
                }
                break;
            }
        }
    }
    let candidates = candidates(text, table, needle, at);
    let mut msg = format!("No match for the text to replace in {display}: {why}.");
    if !candidates.is_empty() {
        msg.push_str("\nNearest text in the file (→ tab, · space, ␍ CR):");
        for c in &candidates {
            msg.push_str(&format!(
                "\n  lines {}-{} ({}% similar):\n{}",
                c["startLine"],
                c["endLine"],
                c["similarity"],
                c["text"].as_str().unwrap_or_default()
            ));
        }
    }
    ToolError::new(ErrorCode::NoMatch, msg)
        .with_prop("reason", reason)
        .with_prop("candidates", Value::Array(candidates))
        .with_prop("path", display)
}

/// Up to 3 windows most like the needle (`at` first when known).
fn candidates(text: &str, table: &[Line], needle: &Needle, at: Option<usize>) -> Vec<Value> {
    let m = needle.lines.len().max(1);
    if table.is_empty() {
        return Vec::new();
    }
    let (k0, _) = needle.key(Stage::Exact);
    let first = needle.lines.get(k0).map_or("", |s| s.trim());
    let limit = table.len().min(400_000);
    let mut scored: Vec<(f64, usize)> = (0..limit)
        .filter_map(|i| {
            let l = table[i];
            let s = dice(first, text[l.start..l.end].trim());
            (s > 0.3).then_some((s, i.saturating_sub(k0)))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.truncate(12);
    let mut windows: Vec<(f64, usize)> = scored
        .into_iter()
        .map(|(_, i)| {
            let i = i.min(table.len().saturating_sub(m));
            let n = m.min(table.len() - i);
            let s: f64 = (0..n)
                .map(|k| dice(needle.lines[k].trim(), text[table[i + k].start..table[i + k].end].trim()))
                .sum::<f64>()
                / m as f64;
            (s, i)
        })
        .collect();
    if let Some(i) = at {
        windows.push((2.0, i));
    }
    windows.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    windows.dedup_by_key(|w| w.1);
    windows
        .into_iter()
        .take(3)
        .map(|(s, i)| {
            let n = m.min(table.len() - i);
            let body: Vec<String> = (i..i + n)
                .map(|k| {
                    let l = table[k];
                    let cr = if text[l.end..l.next].starts_with('\r') { "␍" } else { "" };
                    format!("    {:>5}│{}{cr}", k + 1, visible(&text[l.start..l.end]))
                })
                .collect();
            let sim = if s > 1.0 { 100 } else { (s * 100.0).round() as i64 };
            json!({"startLine": i + 1, "endLine": i + n, "similarity": sim, "text": body.join("\n")})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req<'a>(old: &'a str, new: &'a str) -> Request<'a> {
        Request { old, new, all: false, fuzzy: true }
    }

    fn edit(text: &str, r: Request<'_>) -> Result<(String, Stage)> {
        let f = locate(text, &r, "f")?;
        let stage = f[0].stage;
        Ok((apply(text, f)?, stage))
    }

    #[test]
    fn exact_unique_all_and_ambiguous() {
        assert_eq!(edit("a b a", req("b", "c")).unwrap(), ("a c a".into(), Stage::Exact));
        let e = edit("x\nTODO\ny\nTODO\n", req("TODO", "done")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::AmbiguousMatch);
        assert_eq!(e.props()["lines"], json!([2, 4]));
        assert_eq!(e.props()["candidates"][1]["text"], "        3│y\n        4│TODO");
        assert!(e.message().contains("line 2:\n        1│x\n        2│TODO\n        3│y"), "{}", e.message());
        let all = Request { all: true, ..req("TODO", "done") };
        assert_eq!(edit("x\nTODO\ny\nTODO\n", all).unwrap().0, "x\ndone\ny\ndone\n");
    }

    #[test]
    fn ladder_stages() {
        let crlf = "one\r\ntwo\r\nthree\r\n";
        let (out, st) = edit(crlf, req("one\ntwo\n", "1\n2\n")).unwrap();
        assert_eq!((out.as_str(), st), ("1\r\n2\r\nthree\r\n", Stage::Eol));
        // Single-line edits in a CRLF file get CRLF line breaks.
        assert_eq!(edit(crlf, req("two", "2a\n2b")).unwrap().0, "one\r\n2a\r\n2b\r\nthree\r\n");
        let (out, st) =
            edit("fn a() {   \n  x();\n}\n", req("fn a() {\n  x();", "fn b() {\n  y();")).unwrap();
        assert_eq!((out.as_str(), st), ("fn b() {\n  y();\n}\n", Stage::TrimEnd));
        let py = "class A:\n    def f(self):\n        return 1\n";
        let (out, st) = edit(py, req("def f(self):\n    return 1", "def g(self):\n    return 2")).unwrap();
        assert_eq!((out.as_str(), st), ("class A:\n    def g(self):\n        return 2\n", Stage::Indent));
        let (out, st) = edit("say(\u{201C}hi\u{201D});\n", req("say(\"hi\");", "say(\"bye\");")).unwrap();
        assert_eq!((out.as_str(), st), ("say(\"bye\");\n", Stage::Unicode));
    }

    #[test]
    fn fuzzy_refuses_ambiguity_and_explains_misses() {
        let e = edit("a  \nb\na \nb\n", req("a\nb", "c")).unwrap_err();
        assert_eq!((e.code(), e.props()["stage"].as_str()), (ErrorCode::AmbiguousMatch, Some("trim_end")));
        let tabs = "fn main() {\n\tif x {\n\t\ty();\n\t}\n}\n";
        let e = edit(tabs, req("if x {\n    y();\n}", "z")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NoMatch);
        assert_eq!(e.props()["reason"], "tabs_vs_spaces");
        assert_eq!(e.props()["candidates"][0]["startLine"], 2);
        assert!(e.message().contains("→if x {"), "{}", e.message());
        let strict = Request { fuzzy: false, ..req("a\nb\n", "c") };
        let e = edit("a\r\nb\r\n", strict).unwrap_err();
        assert_eq!(e.props()["reason"], "eol_mismatch");
        let e = edit("alpha\nbeta\ngamma\n", req("betta", "x")).unwrap_err();
        assert_eq!(
            (e.props()["reason"].as_str(), &e.props()["candidates"][0]["startLine"]),
            (Some("not_found"), &json!(2))
        );
        assert_eq!(edit("x", req("", "y")).unwrap_err().code(), ErrorCode::InvalidArgument);
        let e = edit("alpha\nbeta\n", req("     1\talpha\n     2\tbeta", "x")).unwrap_err();
        assert_eq!(e.props()["reason"], "line_number_prefix");
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let a = Found { start: 0, end: 3, stage: Stage::Exact, replacement: "x".into() };
        let b = Found { start: 2, end: 4, stage: Stage::Exact, replacement: "y".into() };
        assert_eq!(
            apply("abcdef", vec![b.clone(), a.clone()]).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        let c = Found { start: 4, end: 6, stage: Stage::Exact, replacement: "z".into() };
        assert_eq!(apply("abcdef", vec![c, a]).unwrap(), "xdz");
    }
}

#[cfg(test)]
mod property {
    use super::*;

    #[test]
    fn unique_spans_edit_like_a_naive_replace_in_lf_and_crlf() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        let words = ["alpha", "beta", "gamma", "délta", "  pad", "\tx", "😀", "q"];
        for round in 0..1500 {
            let lines: Vec<String> =
                (0..1 + next(12)).map(|i| format!("{} {i}", words[next(words.len())])).collect();
            let lf = lines.join("\n") + "\n";
            let crlf = lines.join("\r\n") + "\r\n";
            let a = next(lines.len());
            let b = (a + next(3)).min(lines.len() - 1);
            let old = lines[a..=b].join("\n");
            let new = format!("new {round}\nmore");
            if lf.matches(&old).count() != 1 {
                continue; // "x 1" is inside "x 10": not a unique span
            }
            let want_lf = lf.replacen(&old, &new, 1);
            let got = apply(
                &lf,
                locate(&lf, &Request { old: &old, new: &new, all: false, fuzzy: true }, "f").unwrap(),
            )
            .unwrap();
            assert_eq!(got, want_lf, "round {round}");
            let f = locate(&crlf, &Request { old: &old, new: &new, all: false, fuzzy: true }, "f").unwrap();
            assert_eq!(f[0].stage, if a == b { Stage::Exact } else { Stage::Eol }, "round {round}");
            assert_eq!(apply(&crlf, f).unwrap(), want_lf.replace('\n', "\r\n"), "round {round}");
        }
    }
}
