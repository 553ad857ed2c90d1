//! Output capture in bounded memory: a streaming UTF-8 decoder that never splits a
//! character, and [`Capture`], which keeps the head and the tail of a stream, counts what it
//! drops (bytes and lines), and keeps error-looking lines from the dropped middle.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Value, json};

use crate::engine::text::utf8::{ceil_boundary, floor_boundary};

/// Incremental UTF-8 decoding: an incomplete character at the end of a chunk waits for the
/// next chunk; invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// Decode `bytes` (after what was carried over); the incomplete tail is kept. Valid text
    /// with nothing carried over is borrowed, not copied.
    pub fn push<'a>(&mut self, bytes: &'a [u8]) -> Cow<'a, str> {
        if self.carry.is_empty() {
            let cut = crate::engine::text::utf8::complete_prefix(bytes);
            if let Ok(text) = std::str::from_utf8(&bytes[..cut]) {
                self.carry.extend_from_slice(&bytes[cut..]);
                return Cow::Borrowed(text);
            }
        }
        let mut all = std::mem::take(&mut self.carry);
        all.extend_from_slice(bytes);
        let cut = crate::engine::text::utf8::complete_prefix(&all);
        self.carry = all.split_off(cut);
        Cow::Owned(match String::from_utf8(all) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }

    /// Whatever is left (an incomplete character becomes U+FFFD).
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.carry);
        String::from_utf8_lossy(&rest).into_owned()
    }
}

fn error_regex() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?im-u)(\berror\b|\berror\[|\berr!|\bfail(ed|ure|ures|ing)?\b|\bfatal\b|\bpanic(ked)?\b|\bexception\b|traceback \(most recent|^\s*assert(ion)?(error)?\b|\bnot ok\b|segmentation fault|undefined reference|\bcannot find\b|(?u:✗|✕))",
        )
        .ok()
    })
    .as_ref()
}

/// Words one of which every error line contains: found fast (case-insensitively) over whole
/// chunks, so only their lines go through [`error_regex`].
fn keywords() -> Option<&'static aho_corasick::AhoCorasick> {
    static AC: OnceLock<Option<aho_corasick::AhoCorasick>> = OnceLock::new();
    AC.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            // A full DFA: a few KB here, and several times faster per byte than the NFA.
            .kind(Some(aho_corasick::AhoCorasickKind::DFA))
            .build([
                "err",
                "fail",
                "fatal",
                "panic",
                "exception",
                "traceback",
                "assert",
                "not ok",
                "segmentation",
                "undefined reference",
                "cannot find",
                "✗",
                "✕",
            ])
            .ok()
    })
    .as_ref()
}

/// Most error lines kept from the middle (half from its start, half from its end).
const KEPT_ERRORS: usize = 40;
/// Error-line candidates remembered (the tail may still cover the latest ones).
const CANDIDATES: usize = 400;
/// Longest kept line, in bytes (longer ones are cut on a character boundary).
const LINE_CAP: usize = 400;

/// Head and tail of one stream, in `head_cap + 2 * tail_cap` bytes at most.
#[derive(Debug)]
pub struct Capture {
    head_cap: usize,
    tail_cap: usize,
    /// The head, then the tail window (which may grow to twice `tail_cap` before it is
    /// compacted), in one buffer: output that fits is handed on without a copy.
    kept: String,
    /// Where the tail starts in `kept`.
    head_len: usize,
    total_bytes: u64,
    total_newlines: u64,
    omitted_bytes: u64,
    omitted_newlines: u64,
    head_newlines: u64,
    /// The line being assembled (for error detection), capped.
    line: String,
    first_errors: Vec<(u64, String)>,
    late_errors: VecDeque<(u64, String)>,
    ends_with_newline: bool,
}

impl Capture {
    /// Keep `head_cap` bytes from the start and `tail_cap` from the end.
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        Self {
            head_cap,
            tail_cap,
            kept: String::new(),
            head_len: 0,
            total_bytes: 0,
            total_newlines: 0,
            omitted_bytes: 0,
            omitted_newlines: 0,
            head_newlines: 0,
            line: String::new(),
            first_errors: Vec::new(),
            late_errors: VecDeque::new(),
            ends_with_newline: false,
        }
    }

    /// Add decoded text.
    pub fn push(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_bytes += text.len() as u64;
        self.total_newlines += memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
        self.ends_with_newline = text.ends_with('\n');
        let mut rest = text;
        if self.kept.len() == self.head_len && self.head_len < self.head_cap {
            let room = floor_boundary(rest, self.head_cap - self.head_len);
            let (into_head, after) = rest.split_at(room);
            // The head is always shown: its lines are counted, not searched for errors.
            self.head_newlines += self.track_lines(into_head, false);
            self.kept.push_str(into_head);
            self.head_len = self.kept.len();
            rest = after;
            if rest.is_empty() {
                return;
            }
        }
        // The tail is searched only for what it drops: what it keeps is shown anyway, so output
        // that fits is never scanned.
        self.kept.push_str(rest);
        if self.kept.len() - self.head_len > 2 * self.tail_cap.max(1) {
            self.compact();
        }
    }

    /// Drop the tail's front down to `tail_cap` bytes, counting and scanning what goes. The
    /// head followed by everything dropped so far is always a prefix of the stream, so line
    /// numbers and lines split between drops come out right.
    fn compact(&mut self) {
        if self.kept.len() - self.head_len <= self.tail_cap {
            return;
        }
        let cut = ceil_boundary(&self.kept, self.kept.len() - self.tail_cap);
        let kept = std::mem::take(&mut self.kept);
        let gone = &kept[self.head_len..cut];
        self.omitted_bytes += gone.len() as u64;
        self.omitted_newlines += self.track_lines(gone, true);
        self.kept = kept;
        self.kept.drain(self.head_len..cut);
    }

    /// Follow the lines through `text`, the next part of the head or of the dropped middle,
    /// and, with `scan`, find error lines among its complete lines (with the carried partial
    /// line) in one keyword pass. Returns how many line breaks `text` has.
    fn track_lines(&mut self, text: &str, scan: bool) -> u64 {
        let Some(last_nl) = text.rfind('\n') else {
            self.append_partial(text);
            return 0;
        };
        let (complete, rest) = text.split_at(last_nl + 1);
        let joined;
        let region: &str = if self.line.is_empty() {
            complete
        } else {
            joined = format!("{}{complete}", self.line);
            &joined
        };
        // The head and the middle dropped so far are the start of the stream.
        let mut line_no = self.head_newlines + self.omitted_newlines;
        let mut counted_to = 0usize;
        let mut last_line_end = 0usize;
        if let (true, Some(ac), Some(re)) = (scan, keywords(), error_regex()) {
            let bytes = region.as_bytes();
            for m in ac.find_iter(region) {
                if m.start() < last_line_end {
                    continue;
                }
                let start = memchr::memrchr(b'\n', &bytes[..m.start()]).map_or(0, |i| i + 1);
                let end = memchr::memchr(b'\n', &bytes[m.start()..]).map_or(region.len(), |i| m.start() + i);
                last_line_end = end + 1;
                let line = &region[start..end];
                if !re.is_match(line) {
                    continue;
                }
                line_no += memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count() as u64;
                counted_to = start;
                let cut = floor_boundary(line, LINE_CAP);
                self.record_error(line_no, line[..cut].trim_end_matches('\r').to_owned());
            }
        }
        self.line.clear();
        self.append_partial(rest);
        memchr::memchr_iter(b'\n', complete.as_bytes()).count() as u64
    }

    fn append_partial(&mut self, part: &str) {
        if self.line.len() < LINE_CAP {
            let room = floor_boundary(part, LINE_CAP - self.line.len());
            self.line.push_str(&part[..room]);
        }
    }

    fn record_error(&mut self, no: u64, line: String) {
        if self.first_errors.len() < KEPT_ERRORS / 2 {
            self.first_errors.push((no, line));
        } else {
            if self.late_errors.len() == CANDIDATES {
                self.late_errors.pop_front();
            }
            self.late_errors.push_back((no, line));
        }
    }

    /// The final view of the stream.
    pub fn finish(mut self) -> Captured {
        // The partial line left over is the one the tail starts in (or the head ends in): it is
        // shown, so it is not searched.
        self.compact();
        let total_lines = self.total_newlines + u64::from(!self.ends_with_newline && self.total_bytes > 0);
        // Line numbers (0-based) wholly inside the omitted middle: after the line the head
        // ends in, before the line the tail starts in.
        let first_middle = self.head_newlines + 1;
        let tail_first = self.head_newlines + self.omitted_newlines;
        let in_middle = |n: u64| self.omitted_bytes > 0 && n >= first_middle && n < tail_first;
        let mut middle: Vec<(u64, String)> = self
            .first_errors
            .iter()
            .chain(self.late_errors.iter())
            .filter(|(n, _)| in_middle(*n))
            .cloned()
            .collect();
        middle.dedup_by_key(|(n, _)| *n);
        let found = middle.len();
        if middle.len() > KEPT_ERRORS {
            let late = middle.split_off(middle.len() - KEPT_ERRORS / 2);
            middle.truncate(KEPT_ERRORS / 2);
            middle.extend(late);
        }
        Captured {
            text: self.kept,
            head_len: self.head_len,
            total_bytes: self.total_bytes,
            total_lines,
            omitted_bytes: self.omitted_bytes,
            omitted_lines: self.omitted_newlines,
            kept_lines: middle.into_iter().map(|(n, t)| (n + 1, t)).collect(),
            omitted_error_lines: found.saturating_sub(KEPT_ERRORS) as u64,
        }
    }
}

/// What a [`Capture`] kept.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The head, then the tail.
    text: String,
    /// Where the tail starts in `text`.
    head_len: usize,
    /// Bytes the stream had.
    pub total_bytes: u64,
    /// Lines the stream had.
    pub total_lines: u64,
    /// Bytes dropped between head and tail.
    pub omitted_bytes: u64,
    /// Line breaks dropped between head and tail.
    pub omitted_lines: u64,
    /// Error-looking lines from the dropped middle: (1-based line number, text).
    pub kept_lines: Vec<(u64, String)>,
    /// Error-looking lines from the middle that were not kept either.
    pub omitted_error_lines: u64,
}

impl Captured {
    /// The first bytes of a stream, kept whole: UTF-8 decoded, with an incomplete character at
    /// the very end (the stream cut at a limit) dropped rather than turned into U+FFFD.
    pub fn first(bytes: &[u8]) -> Self {
        let end = crate::engine::text::utf8::complete_prefix(bytes);
        let text = crate::engine::text::utf8::lossy(&bytes[..end]).into_owned();
        Self { head_len: text.len(), total_bytes: bytes.len() as u64, text, ..Self::default() }
    }

    /// The start of the stream.
    pub fn head(&self) -> &str {
        &self.text[..self.head_len]
    }

    /// The end of the stream (empty when everything fit in the head).
    pub fn tail(&self) -> &str {
        &self.text[self.head_len..]
    }

    /// The text for the model: head, a marker with the counts and the kept lines, tail.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.render_into(&mut s);
        s
    }

    /// [`Captured::render`], reusing the head's buffer.
    pub fn into_text(self) -> String {
        if self.omitted_bytes > 0 { self.render() } else { self.text }
    }

    /// [`Captured::render`], appended to `s`.
    pub fn render_into(&self, s: &mut String) {
        s.reserve(self.text.len());
        s.push_str(self.head());
        if self.omitted_bytes > 0 {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&format!(
                "[… {} bytes ({} lines) omitted …]\n",
                self.omitted_bytes, self.omitted_lines
            ));
            if !self.kept_lines.is_empty() {
                s.push_str("[error lines from the omitted part:]\n");
                for (n, t) in &self.kept_lines {
                    s.push_str(&format!("  {n}: {t}\n"));
                }
                if self.omitted_error_lines > 0 {
                    s.push_str(&format!("  [… {} more error lines]\n", self.omitted_error_lines));
                }
                s.push_str("[end of omitted part]\n");
            }
        }
        s.push_str(self.tail());
    }

    /// `{totalBytes, totalLines, truncated, omittedBytes, omittedLines, keptLines}`.
    pub fn stats(&self) -> Value {
        json!({
            "totalBytes": self.total_bytes,
            "totalLines": self.total_lines,
            "truncated": self.omitted_bytes > 0,
            "omittedBytes": self.omitted_bytes,
            "omittedLines": self.omitted_lines,
            "keptLines": self.kept_lines.iter().map(|(n, t)| json!({"line": n, "text": t})).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_error_line(line: &str) -> bool {
        error_regex().is_some_and(|re| re.is_match(line))
    }

    #[test]
    fn decoder_never_splits_a_character() {
        let text = "é😀€a".repeat(50);
        let bytes = text.as_bytes();
        for step in 1..7 {
            let mut d = Utf8Decoder::default();
            let mut out = String::new();
            for chunk in bytes.chunks(step) {
                out.push_str(&d.push(chunk));
            }
            out.push_str(&d.finish());
            assert_eq!(out, text, "step {step}");
        }
        let mut d = Utf8Decoder::default();
        assert_eq!(d.push(b"a\xffb\xe2\x82"), "a\u{FFFD}b");
        assert_eq!(d.finish(), "\u{FFFD}");
    }

    #[test]
    fn small_output_is_kept_whole() {
        let mut c = Capture::new(100, 100);
        c.push("one\ntwo\n");
        let r = c.finish();
        assert_eq!(r.render(), "one\ntwo\n");
        assert_eq!((r.total_bytes, r.total_lines, r.omitted_bytes), (8, 2, 0));
        let mut c = Capture::new(4, 100);
        c.push("one\ntwo");
        let r = c.finish();
        assert_eq!((r.head(), r.tail(), r.total_lines), ("one\n", "two", 2));
    }

    #[test]
    fn error_lines_in_the_head_leave_the_middles_slots_free() {
        // 60 error lines fit in the head; then the middle's first error, then 500 more. The
        // first one must be among the kept ones (the head's lines must not take its slot).
        let mut c = Capture::new(4096, 64);
        for i in 0..60 {
            c.push(&format!("error: early {i}\n"));
        }
        for i in 0..20_000 {
            let line = match i {
                5_000 => "FATAL: the first one\n".to_owned(),
                5_001..=5_500 => format!("error: later {i}\n"),
                _ => format!("ok {i}\n"),
            };
            c.push(&line);
        }
        let r = c.finish();
        assert!(r.omitted_bytes > 0);
        assert!(r.kept_lines.iter().any(|(_, t)| t == "FATAL: the first one"), "{:?}", r.kept_lines);
        assert!(r.kept_lines.iter().all(|(_, t)| !t.starts_with("error: early")));
    }

    #[test]
    fn head_and_tail_with_counts_and_middle_errors() {
        let mut c = Capture::new(20, 30);
        for i in 0..10_000 {
            let line = if i == 5_000 {
                "error[E0308]: mismatched types\n".to_owned()
            } else if i == 9_999 {
                "test result: FAILED\n".to_owned()
            } else {
                format!("line {i}\n")
            };
            c.push(&line);
        }
        let r = c.finish();
        assert!(r.head().starts_with("line 0\nline 1\n"));
        assert!(r.tail().ends_with("test result: FAILED\n"));
        assert_eq!(r.total_lines, 10_000);
        let kept = r.head().len() + r.tail().len();
        assert_eq!(r.omitted_bytes + kept as u64, r.total_bytes);
        let head_lines = r.head().matches('\n').count() as u64;
        let tail_lines = r.tail().matches('\n').count() as u64;
        assert_eq!(head_lines + r.omitted_lines + tail_lines, 10_000);
        assert_eq!(r.kept_lines, vec![(5001, "error[E0308]: mismatched types".to_owned())]);
        let text = r.render();
        assert!(text.contains("bytes ("), "{text}");
        assert!(text.contains("5001: error[E0308]"), "{text}");
        // The FAILED line is in the tail, so it is not repeated.
        assert_eq!(text.matches("test result: FAILED").count(), 1);
    }

    #[test]
    fn error_lines_are_found_across_chunk_boundaries() {
        let text: String = (0..3000)
            .map(|i| if i % 1000 == 500 { format!("x panicked at line {i}\n") } else { format!("ok {i}\n") })
            .collect();
        for step in [1, 7, 64, 4096] {
            let mut c = Capture::new(16, 16);
            let bytes = text.as_bytes();
            let mut d = Utf8Decoder::default();
            for chunk in bytes.chunks(step) {
                c.push(&d.push(chunk));
            }
            let r = c.finish();
            let kept: Vec<u64> = r.kept_lines.iter().map(|(n, _)| *n).collect();
            assert_eq!(kept, vec![501, 1501, 2501], "step {step}");
            assert_eq!(r.kept_lines[1].1, "x panicked at line 1500");
            assert_eq!(r.total_lines, 3000);
        }
    }

    #[test]
    fn memory_stays_bounded_and_characters_whole() {
        let mut c = Capture::new(7, 9);
        for _ in 0..100_000 {
            c.push("é😀x");
            assert!((c.kept.len() - c.head_len) <= 2 * 9 + 7);
        }
        let r = c.finish();
        assert!(r.head().len() <= 7 && r.tail().len() <= 9 + 3);
        assert!(r.render().is_char_boundary(0));
        assert_eq!(r.total_bytes, 700_000);
    }

    #[test]
    fn error_line_shapes() {
        for l in [
            "error: could not compile",
            "FAILED tests/a.py::t",
            "thread 'x' panicked at",
            "npm ERR! code 1",
            "not ok 3 - x",
            "Traceback (most recent call last):",
        ] {
            assert!(is_error_line(l), "{l}");
        }
        for l in ["compiling foo", "test result: ok. 3 passed; 0 failed", "errors.rs"] {
            // "0 failed" matches `failed`; that is fine for kept lines but check the others.
            if !l.contains("failed") {
                assert!(!is_error_line(l), "{l}");
            }
        }
    }
}
