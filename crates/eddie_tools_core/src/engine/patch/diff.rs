//! Unified diffs of an edit, for `dryRun` and for results. The unchanged head and tail are cut
//! off first (a memcmp), so diffing one edit in a 10 MB file costs about the edited region.
//!
//! Lines end as the patch code reads them (`files::patch`): at `\n`, `\r\n`, or a lone `\r`,
//! so a diff of ours applies back with `apply_patch` whatever the line endings.

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline, group_diff_ops};

/// Lines of context around a change.
const CONTEXT: usize = 3;

/// Counts of a diff.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stat {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

/// Split after each `\n`, `\r\n` or lone `\r` (the line keeps its line ending).
fn lines(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for i in memchr::memchr2_iter(b'\n', b'\r', b) {
        if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
            continue; // the LF ends this line
        }
        out.push(&s[start..=i]);
        start = i + 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// How many lines end in `s` (at `\n`, `\r\n` or a lone `\r`; `s` ends at a line start).
fn count_line_ends(s: &[u8]) -> usize {
    memchr::memchr2_iter(b'\n', b'\r', s).filter(|&i| s[i] == b'\n' || s.get(i + 1) != Some(&b'\n')).count()
}

/// A git-style unified diff from `old` to `new` of `path` (`None` on a side = the file does
/// not exist there). Empty when nothing changed.
pub fn unified(path_old: Option<&str>, path_new: Option<&str>, old: &str, new: &str) -> (String, Stat) {
    if old == new && path_old.is_some() == path_new.is_some() && path_old == path_new {
        return (String::new(), Stat::default());
    }
    // Cut the common head and tail at line boundaries.
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let mut head = common_prefix(ob, nb);
    head = memchr::memrchr(b'\n', &ob[..head]).map_or(0, |i| i + 1);
    let max_tail = (ob.len() - head).min(nb.len() - head);
    let mut tail = common_suffix(&ob[ob.len() - max_tail..], &nb[nb.len() - max_tail..]);
    // Move the tail start forward to a line start on both sides.
    let line_start = |s: &[u8], i: usize| i == 0 || s[i - 1] == b'\n';
    while tail > 0 && !(line_start(ob, ob.len() - tail) && line_start(nb, nb.len() - tail)) {
        tail -= 1;
    }
    let head_lines = count_line_ends(&ob[..head]);
    let old_mid = &old[head..old.len() - tail];
    let new_mid = &new[head..new.len() - tail];
    // Up to CONTEXT lines of the cut parts come back as context.
    let before: Vec<&str> = lines(last_lines(&old[..head], CONTEXT));
    let after: Vec<&str> = lines(&old[old.len() - tail..]).into_iter().take(CONTEXT).collect();
    let pre = before.as_slice();
    let post = after.as_slice();
    let mut ol: Vec<&str> = pre.to_vec();
    ol.extend(lines(old_mid));
    ol.extend_from_slice(post);
    let mut nl: Vec<&str> = pre.to_vec();
    nl.extend(lines(new_mid));
    nl.extend_from_slice(post);
    let first = head_lines - pre.len();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &ol, &nl, Some(deadline));
    let mut out = String::new();
    // An absolute path still makes one `a/` prefix, never `a//home/...`.
    let a = path_old.map_or_else(|| "/dev/null".to_owned(), |p| format!("a/{}", p.trim_start_matches('/')));
    let b = path_new.map_or_else(|| "/dev/null".to_owned(), |p| format!("b/{}", p.trim_start_matches('/')));
    out.push_str(&format!("--- {a}\n+++ {b}\n"));
    let mut stat = Stat::default();
    for group in group_diff_ops(ops, CONTEXT) {
        let (Some(f), Some(l)) = (group.first(), group.last()) else { continue };
        let (os, oe) = (f.old_range().start, l.old_range().end);
        let (ns, ne) = (f.new_range().start, l.new_range().end);
        let range = |s: usize, e: usize| {
            let len = e - s;
            let start = if len == 0 { first + s } else { first + s + 1 };
            if len == 1 { format!("{start}") } else { format!("{start},{len}") }
        };
        out.push_str(&format!("@@ -{} +{} @@\n", range(os, oe), range(ns, ne)));
        for op in &group {
            let (tag, o, n) = op.as_tag_tuple();
            let mut emit = |sign: char, line: &str| {
                out.push(sign);
                // CRs are left out of the rendering (line endings are kept on disk).
                let body = line.strip_suffix('\n').unwrap_or(line);
                let body = body.strip_suffix('\r').unwrap_or(body);
                out.push_str(body);
                out.push('\n');
                if !line.ends_with(['\n', '\r']) {
                    out.push_str("\\ No newline at end of file\n");
                }
            };
            match op {
                DiffOp::Equal { .. } => o.clone().for_each(|i| emit(' ', ol[i])),
                _ => {
                    let _ = tag;
                    for i in o.clone() {
                        emit('-', ol[i]);
                        stat.removed += 1;
                    }
                    for i in n.clone() {
                        emit('+', nl[i]);
                        stat.added += 1;
                    }
                }
            }
        }
    }
    (out, stat)
}

/// Length of the common prefix (compared in blocks, then bytes).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// Length of the common suffix.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 4096;
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut k = 0;
    while k + BLOCK <= n && a[n - k - BLOCK..n - k] == b[n - k - BLOCK..n - k] {
        k += BLOCK;
    }
    k + a[..n - k].iter().rev().zip(b[..n - k].iter().rev()).take_while(|(x, y)| x == y).count()
}

/// The last `n` lines of `s` (which ends at a line start).
fn last_lines(s: &str, n: usize) -> &str {
    let b = s.as_bytes();
    let mut end = b.len();
    for _ in 0..n {
        if end == 0 {
            return s;
        }
        // The line before `end` ends with `b[eol..end]`; the one before it, at the last
        // `\n` or `\r` before that.
        let eol = if end >= 2 && &b[end - 2..end] == b"\r\n" { end - 2 } else { end - 1 };
        match memchr::memrchr2(b'\n', b'\r', &b[..eol]) {
            Some(i) => end = i + 1,
            None => return s,
        }
    }
    &s[end..]
}

/// `diff` cut to at most `max` bytes at a line end, with a note of what was left out. Cuts
/// on bytes (a `\n` is never inside a multi-byte character), so it cannot split a character
/// or fail, whatever text is at the cut.
pub fn capped(diff: &str, max: usize) -> String {
    if diff.len() <= max {
        return diff.to_owned();
    }
    let cut = memchr::memrchr(b'\n', &diff.as_bytes()[..max]).map_or(0, |i| i + 1);
    let kept = diff.get(..cut).unwrap_or_default();
    format!("{kept}[diff truncated: {} more bytes]\n", diff.len() - kept.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_suffix_and_last_lines() {
        let a = "x".repeat(10_000) + "A" + &"y".repeat(9_000);
        let b = "x".repeat(10_000) + "BB" + &"y".repeat(9_000);
        assert_eq!(common_prefix(a.as_bytes(), b.as_bytes()), 10_000);
        assert_eq!(common_suffix(a.as_bytes(), b.as_bytes()), 9_000);
        assert_eq!(last_lines("a\nb\nc\nd\n", 2), "c\nd\n");
        assert_eq!(last_lines("a\n", 3), "a\n");
        assert_eq!(last_lines("", 3), "");
    }

    #[test]
    fn a_lone_cr_ends_a_line() {
        assert_eq!(lines("a\rb\r\nc\n\rd"), vec!["a\r", "b\r\n", "c\n", "\r", "d"]);
        assert_eq!(count_line_ends(b"a\rb\r\nc\n\r"), 4);
        assert_eq!(last_lines("a\rb\r\nc\r", 2), "b\r\nc\r");
        assert_eq!(last_lines("a\r\r", 1), "\r");
        // Line numbers count lone CRs; a last line ending in one has a line ending.
        let (d, s) = unified(Some("f"), Some("f"), "1\r2\r3\r4\r5\r6\n7\n", "1\r2\r3\r4\r5\r6\nseven\r");
        assert_eq!(s, Stat { added: 1, removed: 1 });
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -4,4 +4,4 @@\n 4\n 5\n 6\n-7\n+seven\n");
    }

    #[test]
    fn diff_with_line_numbers_and_context() {
        let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l10\n", "ten\n");
        let (d, s) = unified(Some("f"), Some("f"), &old, &new);
        assert_eq!(s, Stat { added: 1, removed: 1 });
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -7,7 +7,7 @@\n l7\n l8\n l9\n-l10\n+ten\n l11\n l12\n l13\n");
        let (d, _) = unified(Some("f"), Some("f"), "a\nb", "a\nc");
        assert!(d.ends_with("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"), "{d}");
        let (d, s) = unified(None, Some("n"), "", "x\n");
        assert_eq!((d.as_str(), s.added), ("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n", 1));
        assert_eq!(unified(Some("f"), Some("f"), "same", "same").0, "");
        // An absolute path makes one prefix (was `--- a//home/u/f`).
        let (d, _) = unified(Some("/home/u/f"), Some("/home/u/f"), "a\n", "b\n");
        assert!(d.starts_with("--- a/home/u/f\n+++ b/home/u/f\n"), "{d}");
    }

    #[test]
    fn capped_never_splits_a_character() {
        // 2-, 3- and 4-byte characters at every cut position around the cap, with and without
        // line ends before it.
        for ch in ["é", "€", "😀"] {
            for lead in 0..8 {
                for with_lines in [false, true] {
                    let mut d = "x".repeat(lead);
                    if with_lines {
                        d.push('\n');
                    }
                    d.push_str(&ch.repeat(40));
                    d.push('\n');
                    for max in 0..d.len() + 2 {
                        let out = capped(&d, max);
                        if d.len() <= max {
                            assert_eq!(out, d);
                            continue;
                        }
                        let (kept, note) = out.split_once("[diff truncated: ").unwrap();
                        assert!(kept.len() <= max && d.starts_with(kept), "{ch} {lead} {max}");
                        assert!(kept.is_empty() || kept.ends_with('\n'));
                        assert_eq!(note, format!("{} more bytes]\n", d.len() - kept.len()));
                    }
                }
            }
        }
    }
}
