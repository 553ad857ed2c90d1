//! Parallel scan of the source files under a path for the symbol tools: the shared walker
//! (ignore rules, counts, cancellation), a language by extension, an optional byte prefilter
//! (files that cannot contain the name are never parsed), and a size cap.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::code::args::{Target, below_root};
use crate::code::symbols::{Lang, MAX_EXPLICIT_PARSE_BYTES, MAX_PARSE_BYTES};
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{self, Entry, IgnoreCounts, Stop, Visitor, WalkOptions};
use crate::error::{Result, ToolError};

/// What to scan.
pub struct ScanOptions<'a> {
    /// Include globs (empty: every supported file).
    pub include: &'a Includes,
    /// Walk options (ignore rules, depth, excludes).
    pub walk: WalkOptions,
    /// Skip files that do not contain these bytes.
    pub needle: Option<&'a [u8]>,
    /// Compare the needle ignoring ASCII case.
    pub needle_ignore_case: bool,
}

/// Scan totals.
#[derive(Debug, Default)]
pub struct ScanStats {
    /// Source files of a supported language seen.
    pub files: usize,
    /// Files parsed (passed the prefilter).
    pub parsed: usize,
    /// Files not parsed: over the size cap, or minified.
    pub skipped: usize,
    /// Entries hidden by the ignore rules.
    pub ignored: IgnoreCounts,
}

impl ScanStats {
    /// Append what the scan saw to a result object, after the tool's own fields:
    /// `filesSearched`, `filesParsed`, `skipped`, `cancelled`, `ignored`.
    pub fn append_to(&self, data: &mut Value, cancelled: bool) {
        let Some(map) = data.as_object_mut() else { return };
        map.insert("filesSearched".into(), json!(self.files));
        map.insert("filesParsed".into(), json!(self.parsed));
        map.insert("skipped".into(), json!(self.skipped));
        map.insert("cancelled".into(), json!(cancelled));
        map.insert("ignored".into(), self.ignored.to_json());
    }
}

struct Worker<'a, T, F> {
    opts: &'a ScanOptions<'a>,
    root_rel: &'a str,
    f: &'a F,
    out: Vec<(String, T)>,
    files: &'a AtomicUsize,
    parsed: &'a AtomicUsize,
    skipped: &'a AtomicUsize,
    buf: Vec<u8>,
    lower: Vec<u8>,
}

impl<T: Send, F: Fn(&str, Lang, &[u8], &Stop) -> Option<T> + Sync> Worker<'_, T, F> {
    /// `explicit`: the caller named this file (a larger size cap, and minified code is parsed).
    fn file(&mut self, path: &std::path::Path, rel: &str, stop: &Stop, explicit: bool) {
        let Some(lang) = Lang::of(rel) else { return };
        self.files.fetch_add(1, Ordering::Relaxed);
        let Ok(mut file) = std::fs::File::open(path) else { return };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let cap = if explicit { MAX_EXPLICIT_PARSE_BYTES } else { MAX_PARSE_BYTES };
        // Without a needle a big file is skipped unread; with one, only if it holds the needle.
        if len > cap && self.opts.needle.is_none() {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.buf.clear();
        if file.read_to_end(&mut self.buf).is_err() {
            return;
        }
        if let Some(needle) = self.opts.needle {
            let hay: &[u8] = if self.opts.needle_ignore_case {
                self.lower.clear();
                self.lower.extend(self.buf.iter().map(u8::to_ascii_lowercase));
                &self.lower
            } else {
                &self.buf
            };
            if memchr::memmem::find(hay, needle).is_none() {
                return;
            }
        }
        if self.buf.len() as u64 > cap || (!explicit && minified(&self.buf)) {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.parsed.fetch_add(1, Ordering::Relaxed);
        if let Some(t) = (self.f)(rel, lang, &self.buf, stop) {
            self.out.push((rel.to_owned(), t));
        }
    }
}

impl<T: Send, F: Fn(&str, Lang, &[u8], &Stop) -> Option<T> + Sync> Visitor for Worker<'_, T, F> {
    fn visit(&mut self, e: &Entry<'_>, stop: &Stop) -> bool {
        if self.opts.include.matches(below_root(e.rel, self.root_rel)) {
            self.file(e.path, e.rel, stop, false);
        }
        true
    }
}

/// Run `f(rel, lang, source)` on every matching source file; results sorted by path.
pub fn scan<T: Send, F: Fn(&str, Lang, &[u8], &Stop) -> Option<T> + Sync>(
    target: &Target,
    opts: &ScanOptions<'_>,
    stop: &Stop,
    f: F,
) -> Result<(Vec<(String, T)>, ScanStats)> {
    let (files, parsed, skipped) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let make = || Worker {
        opts,
        root_rel: &target.root.rel,
        f: &f,
        out: Vec::new(),
        files: &files,
        parsed: &parsed,
        skipped: &skipped,
        buf: Vec::new(),
        lower: Vec::new(),
    };
    let (mut out, ignored) = if let Some((real, rel)) = &target.file {
        let mut w = make();
        w.file(real, rel, stop, true);
        (w.out, IgnoreCounts::default())
    } else {
        let (workers, ignored) = walk::walk(&target.workspace_real, &target.root, &opts.walk, stop, make)?;
        (workers.into_iter().flat_map(|w| w.out).collect::<Vec<_>>(), ignored)
    };
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let stats = ScanStats {
        files: files.load(Ordering::Relaxed),
        parsed: parsed.load(Ordering::Relaxed),
        skipped: skipped.load(Ordering::Relaxed),
        ignored,
    };
    Ok((out, stats))
}

/// Minified or generated code (lines average over 500 bytes, from 16 KiB up): names are mangled
/// and one parse costs as much as a hundred source files.
pub fn minified(src: &[u8]) -> bool {
    src.len() >= 16 * 1024 && src.len() / (memchr::memchr_iter(b'\n', src).count() + 1) > 500
}

/// `INVALID_ARGUMENT` for a single file whose language is not supported.
pub fn check_language(target: &Target) -> Result<()> {
    if let Some((_, rel)) = &target.file
        && Lang::of(rel).is_none()
    {
        return Err(ToolError::invalid(format!(
            "{rel}: no symbol support for this file type (supported extensions: {})",
            crate::code::symbols::EXTENSIONS
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_follow_the_tools_own_fields_in_a_fixed_order() {
        let stats = ScanStats { files: 3, parsed: 2, skipped: 1, ..Default::default() };
        let mut data = json!({"symbol": "x", "truncated": false});
        stats.append_to(&mut data, true);
        assert_eq!(
            data.to_string(),
            r#"{"symbol":"x","truncated":false,"filesSearched":3,"filesParsed":2,"skipped":1,"cancelled":true,"ignored":{"total":0,"gitignore":0,"hidden":0,"excluded":0}}"#
        );
    }
}
