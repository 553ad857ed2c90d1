//! The content search engine under `grep` and `search_codebase`: ripgrep's searcher
//! (`grep-searcher` + `grep-regex`) driven over the one walker, or over the files the in-memory
//! index selected. A sink collects matching lines (with context, capped per file and over the
//! whole search), workers search files on every core, `scan` walks the tree and `verify`
//! searches the index's candidates and accounts for the files it ruled out.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use crate::engine::index;
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{self, Entry, IgnoreCounts, Stop, Target, Visitor, WalkOptions, below_root};
use crate::error::{ErrorCode, Result, ToolError};

/// What a search keeps of each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collect {
    /// The matching lines and their context.
    Lines,
    /// Only that the file matches: each file stops at its first match.
    Files,
    /// The number of matching lines.
    Count,
}

/// How the pattern matches.
#[derive(Debug, Clone, Copy, Default)]
pub struct Matching {
    /// The pattern is a plain string.
    pub literal: bool,
    /// Ignore case.
    pub case_insensitive: bool,
    /// Only whole words.
    pub word: bool,
    /// Matches may span lines (as `rg -U`).
    pub multiline: bool,
}

/// What a search looks for and what it keeps: [`Query::new`] builds the matcher with the
/// defaults below, and a caller sets the fields it needs.
#[derive(Debug, Clone)]
pub struct Query {
    /// The pattern as given.
    pub pattern: String,
    /// The pattern is a plain string.
    pub literal: bool,
    /// Case-insensitive.
    pub case_insensitive: bool,
    /// Matches may span lines.
    pub multiline: bool,
    /// What is kept of each file (default: lines).
    pub collect: Collect,
    /// Lines kept before each match (default 0).
    pub before: usize,
    /// Lines kept after each match (default 0).
    pub after: usize,
    /// Only files matching these globs (default: every file).
    pub include: Vec<String>,
    /// Paths skipped (gitignore syntax, relative to the search root).
    pub exclude: Vec<String>,
    /// Matching lines kept per file (default: all); the count stays exact.
    pub max_per_file: usize,
    /// Characters kept per line (default 400).
    pub max_line_length: usize,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: bool,
    /// Include dot-files and dot-directories (default false).
    pub include_hidden: bool,
    /// Search dependency folders (node_modules, .venv, dist, build, target, ...) too; by
    /// default they are skipped unless the search path is inside one
    /// ([`walk::skips_dependencies`]).
    pub include_dependencies: Option<bool>,
    /// Stop when nothing matched by then (after the start).
    pub first_match: Option<Duration>,
    /// Look whether a matching line defines what matched ([`FileHits::definition`]).
    pub definitions: bool,
    matcher: RegexMatcher,
}

impl Query {
    /// Build the matcher of `pattern` (`INVALID_REGEX` when it does not compile).
    pub fn new(pattern: String, m: Matching) -> Result<Self> {
        let mut builder = RegexMatcherBuilder::new();
        builder.case_insensitive(m.case_insensitive).fixed_strings(m.literal).word(m.word);
        if m.multiline {
            // As `rg -U`: matches may span lines (through `\n`, `\s`, `[^x]`); `.` still stops
            // at a newline unless the pattern says `(?s)`.
            builder.multi_line(true);
        } else {
            builder.line_terminator(Some(b'\n'));
        }
        let matcher = builder.build(&pattern).map_err(|e| {
            ToolError::new(ErrorCode::InvalidRegex, format!("Invalid regex {pattern:?}: {e}"))
        })?;
        Ok(Self {
            pattern,
            literal: m.literal,
            case_insensitive: m.case_insensitive,
            multiline: m.multiline,
            collect: Collect::Lines,
            before: 0,
            after: 0,
            include: Vec::new(),
            exclude: Vec::new(),
            max_per_file: usize::MAX,
            max_line_length: 400,
            respect_gitignore: true,
            include_hidden: false,
            include_dependencies: None,
            first_match: None,
            definitions: false,
            matcher,
        })
    }

    /// The compiled pattern.
    pub fn matcher(&self) -> &RegexMatcher {
        &self.matcher
    }
}

/// At most this many lines (matches and context) are kept over the whole search.
const STORE_LIMIT: usize = 100_000;
/// Files from this size up are memory-mapped (smaller ones are read: cheaper per file).
const MMAP_MIN: u64 = 512 * 1024;
/// Most memory one streamed search may buffer (its longest line).
const HEAP_LIMIT: usize = 64 * 1024 * 1024;
/// Files above this size are streamed, so that a huge file never maps into the resident set.
const MMAP_MAX: u64 = 32 * 1024 * 1024;

/// One kept line.
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// The text (lossy UTF-8, no line terminator, cut at `maxLineLength` characters).
    pub text: String,
    /// A matching line (else context).
    pub is_match: bool,
    /// The line was cut.
    pub cut: bool,
    /// 1-based character column of the first match (matching lines only).
    pub column: Option<usize>,
}

/// The matches of one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    /// Workspace-relative path.
    pub path: String,
    /// Matching lines in the file (in `files` mode: 1).
    pub matches: usize,
    /// Kept lines (content mode), in order.
    pub lines: Vec<Line>,
    /// Lines were dropped by `maxPerFile` or the store limit.
    pub capped: bool,
    /// A matching line looks like the definition of what matched (`fn NAME`, `class NAME`, ...);
    /// looked for only when sorting by relevance.
    pub definition: bool,
}

/// What a search found.
#[derive(Debug)]
pub struct Found {
    /// Files with at least one match, sorted by path.
    pub files: Vec<FileHits>,
    /// Files opened and searched.
    pub searched: usize,
    /// Files skipped as binary (a NUL byte before any match).
    pub binary: usize,
    /// Files that could not be opened or read (permissions, a line over 64 MiB, ...).
    pub unreadable: usize,
    /// Entries hidden by the ignore rules.
    pub ignored: IgnoreCounts,
    /// The deadline passed.
    pub timed_out: bool,
    /// The caller aborted.
    pub cancelled: bool,
    /// The store limit was reached.
    pub store_full: bool,
    /// Nothing matched before the first-match deadline, so the search stopped there.
    pub first_match_expired: bool,
    /// How the in-memory index took part.
    pub index: index::Report,
}

/// The first-match deadline of one search, shared by its workers.
struct FirstMatch {
    deadline: Option<Instant>,
    found: std::sync::atomic::AtomicBool,
    expired: std::sync::atomic::AtomicBool,
}

impl FirstMatch {
    /// Whether the search must stop now: the deadline passed with nothing found.
    fn expired(&self, stop: &Stop) -> bool {
        let Some(deadline) = self.deadline else { return false };
        if self.found.load(Ordering::Relaxed) || Instant::now() < deadline {
            return false;
        }
        self.expired.store(true, Ordering::Relaxed);
        stop.quit();
        true
    }
}

/// Keywords that introduce a definition when the name follows them (`pub fn NAME`, `class NAME`,
/// `export function NAME`, `def NAME`, `type NAME`, ...).
const DEFINITION_KEYWORDS: &[&str] = &[
    "fn",
    "def",
    "class",
    "function",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "const",
    "let",
    "var",
    "func",
    "mod",
    "module",
    "macro_rules!",
    "val",
    "static",
    "union",
    "impl",
    "record",
];

/// `prefix` (the line before the match) ends with a definition keyword and whitespace.
fn defines(prefix: &[u8]) -> bool {
    let trimmed = prefix.trim_ascii_end();
    if trimmed.len() == prefix.len() {
        return false;
    }
    let start = trimmed
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'!'))
        .map_or(0, |i| i + 1);
    let word = &trimmed[start..];
    DEFINITION_KEYWORDS.iter().any(|k| k.as_bytes() == word)
}

struct Collector<'q> {
    q: &'q Query,
    stop: &'q Stop,
    stored: &'q AtomicUsize,
    file: FileHits,
    last_line: u64,
    binary: bool,
}

impl<'q> Collector<'q> {
    fn new(q: &'q Query, stop: &'q Stop, stored: &'q AtomicUsize, rel: &str) -> Self {
        let file = FileHits {
            path: rel.to_owned(),
            matches: 0,
            lines: Vec::new(),
            capped: false,
            definition: false,
        };
        Self { q, stop, stored, file, last_line: 0, binary: false }
    }

    fn keep(&mut self, number: u64, bytes: &[u8], is_match: bool) {
        if self.q.collect != Collect::Lines {
            return;
        }
        let column = if is_match {
            self.q.matcher.find(bytes).ok().flatten().map(|m| lossy_chars(&bytes[..m.start()]) + 1)
        } else {
            None
        };
        if self.stored.fetch_add(1, Ordering::Relaxed) >= STORE_LIMIT {
            self.file.capped = true;
            return;
        }
        let mut end = bytes.len();
        while end > 0 && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        // Only the head of a long line is decoded: each character of the lossy text stands for
        // 1 to 4 bytes, so the first `max + 1` characters lie within `4 * (max + 1)` bytes, and
        // the first `max` are decoded there exactly as in the whole line.
        let head = self.q.max_line_length.saturating_add(1).saturating_mul(4);
        let text = String::from_utf8_lossy(&bytes[..end.min(head)]);
        let (text, cut) = match crate::engine::text::utf8::head_chars(&text, self.q.max_line_length) {
            (head, true) => (head.to_owned(), true),
            (_, false) => (text.into_owned(), false),
        };
        self.file.lines.push(Line { number, text, is_match, cut, column });
    }
}

/// How many characters `String::from_utf8_lossy(bytes)` has (one per invalid sequence), without
/// building it.
fn lossy_chars(bytes: &[u8]) -> usize {
    if bytes.is_ascii() {
        return bytes.len();
    }
    bytes.utf8_chunks().map(|c| c.valid().chars().count() + usize::from(!c.invalid().is_empty())).sum()
}

impl Sink for Collector<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> std::result::Result<bool, Self::Error> {
        let first = mat.line_number().unwrap_or(0);
        for (i, line) in mat.lines().enumerate() {
            let number = first + i as u64;
            self.file.matches += 1;
            if self.q.definitions
                && !self.file.definition
                && let Ok(Some(m)) = self.q.matcher.find(line)
            {
                self.file.definition = defines(&line[..m.start()]);
            }
            if self.q.collect == Collect::Lines {
                if self.file.matches <= self.q.max_per_file {
                    self.keep(number, line, true);
                } else {
                    self.file.capped = true;
                }
            }
            self.last_line = number;
        }
        if self.q.collect == Collect::Files {
            return Ok(false);
        }
        Ok(!self.stop.should_stop())
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> std::result::Result<bool, Self::Error> {
        // After-context of a dropped match is dropped too.
        if self.file.matches <= self.q.max_per_file {
            self.keep(ctx.line_number().unwrap_or(0), ctx.bytes(), false);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> std::result::Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

struct Worker<'q> {
    q: &'q Query,
    first: &'q FirstMatch,
    includes: &'q Includes,
    root_rel: &'q str,
    stored: &'q AtomicUsize,
    read: Searcher,
    mmap: Searcher,
    /// A small file's bytes, read whole (reused from file to file).
    buf: Vec<u8>,
    hits: Vec<FileHits>,
    searched: usize,
    binary: usize,
    unreadable: usize,
}

fn searcher(q: &Query, mmap: bool) -> Searcher {
    let mut b = SearcherBuilder::new();
    b.line_number(true)
        .before_context(if q.collect == Collect::Lines { q.before } else { 0 })
        .after_context(if q.collect == Collect::Lines { q.after } else { 0 })
        .multi_line(q.multiline)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        // A line longer than this in a streamed file makes the file unreadable (skipped) instead
        // of growing the buffer without bound.
        .heap_limit(Some(HEAP_LIMIT));
    if mmap {
        // SAFETY: `MmapChoice::auto` is unsafe because a mapped file may be changed by another
        // process while it is searched: a concurrent truncation makes reads fault (SIGBUS) and a
        // concurrent write shows torn contents. We accept that, as ripgrep does: only files we
        // just opened whose length is within MMAP_MIN..=MMAP_MAX are mapped (see `search`), the
        // mapping lives only inside one `search_file` call, and the sink copies what it keeps
        // out of it, so no reference into the mapping outlives the search.
        b.memory_map(unsafe { MmapChoice::auto() });
    }
    b.build()
}

impl<'q> Worker<'q> {
    fn new(
        q: &'q Query,
        first: &'q FirstMatch,
        includes: &'q Includes,
        root_rel: &'q str,
        stored: &'q AtomicUsize,
    ) -> Self {
        Self {
            q,
            first,
            includes,
            root_rel,
            stored,
            read: searcher(q, false),
            mmap: searcher(q, true),
            buf: Vec::new(),
            hits: Vec::new(),
            searched: 0,
            binary: 0,
            unreadable: 0,
        }
    }

    fn search(&mut self, path: &Path, rel: &str, stop: &Stop) {
        self.search_opened(std::fs::File::open(path), false, rel, stop);
    }

    /// Search a file opened by the caller (`Err`: it could not be opened). `small`: the caller
    /// knows the file was at most [`WHOLE_MAX`] bytes (the index's size): it is read whole
    /// without asking its size first, which is asked only when it has grown past that.
    fn search_opened(&mut self, file: std::io::Result<std::fs::File>, small: bool, rel: &str, stop: &Stop) {
        let Ok(mut file) = file else {
            self.unreadable += 1;
            return;
        };
        self.searched += 1;
        let mut sink = Collector::new(self.q, stop, self.stored, rel);
        let whole = small && read_whole(&mut file, &mut self.buf);
        let len = if whole { 0 } else { file.metadata().map(|m| m.len()).unwrap_or(0) };
        let searched = if whole || (!small && len <= WHOLE_MAX && read_whole(&mut file, &mut self.buf)) {
            // The whole file in one buffer: no streaming. The searcher looks for a NUL in the
            // first 64 KiB of a buffer, which is the whole file here, as when it streams one.
            self.read.search_slice(&self.q.matcher, &self.buf, &mut sink)
        } else {
            let searcher = if (MMAP_MIN..=MMAP_MAX).contains(&len) { &mut self.mmap } else { &mut self.read };
            // A file read in part (it grew, or a read failed) is searched again from its start.
            let from_start =
                if small || len <= WHOLE_MAX { std::io::Seek::rewind(&mut file) } else { Ok(()) };
            from_start.and_then(|_| searcher.search_file(&self.q.matcher, &file, &mut sink))
        };
        // An unreadable file is skipped and counted (ripgrep warns on stderr).
        if searched.is_err() {
            self.unreadable += 1;
        }
        if sink.binary && sink.file.matches == 0 {
            self.binary += 1;
        }
        if sink.file.matches > 0 {
            self.first.found.store(true, Ordering::Relaxed);
            self.hits.push(sink.file);
        }
    }
}

impl Visitor for Worker<'_> {
    fn visit(&mut self, e: &Entry<'_>, stop: &Stop) -> bool {
        if !self.includes.matches(below_root(e.rel, self.root_rel)) {
            return true;
        }
        if self.first.expired(stop) {
            return false;
        }
        self.search(e.path, e.rel, stop);
        true
    }
}

/// Whether the scan flags a file of `size` with index `flags` as binary when nothing in it
/// matches: a searched memory map, or a multi-line search's whole-file buffer, is checked for
/// a NUL in its first 64 KiB; a streamed file, everywhere.
fn binary_without_match(q: &Query, size: u64, flags: u8) -> bool {
    let mmap = !cfg!(target_os = "macos") && (MMAP_MIN..=MMAP_MAX).contains(&size);
    if mmap || q.multiline { flags & index::NUL_64K != 0 } else { flags & index::NUL_ANY != 0 }
}

/// Files up to this size are read whole into one buffer and searched there (the first 64 KiB,
/// where the searcher looks for a NUL, is then the whole file, as when it is streamed).
const WHOLE_MAX: u64 = 64 * 1024;

/// Read `file` whole into `buf`; false when it is longer than [`WHOLE_MAX`] by now, or a
/// read fails (the caller then searches it as a stream, which reports the error).
fn read_whole(file: &mut std::fs::File, buf: &mut Vec<u8>) -> bool {
    use std::io::Read;
    let cap = WHOLE_MAX as usize + 1;
    buf.clear();
    buf.reserve(cap);
    match Read::take(&mut *file, cap as u64).read_to_end(buf) {
        Ok(n) => n < cap,
        Err(_) => false,
    }
}

/// Search (blocking): through the root's index when it can answer, else by scanning.
pub fn search(ctx_target: &Target, q: &Query, stop: &Stop) -> Result<Found> {
    let includes = Includes::new(&q.include, false)?;
    // The index covers the walk's own options; exclude patterns and a first-match deadline are
    // the scan's.
    if ctx_target.file.is_some() || !q.exclude.is_empty() || q.first_match.is_some() || stop.should_stop() {
        let mut found = scan(ctx_target, q, stop, &includes)?;
        found.index = index::Report::unsupported();
        return Ok(found);
    }
    let key = index::Key {
        skip_dependency_dirs: walk::skips_dependencies(q.include_dependencies, &ctx_target.root.rel),
        ..index::Key::new(
            ctx_target.workspace_real.clone(),
            ctx_target.root.real.clone(),
            ctx_target.root.rel.clone(),
            q.respect_gitignore,
            q.include_hidden,
        )
    };
    let root_rel = ctx_target.root.rel.as_str();
    let keep = |rel: &str| includes.matches(below_root(rel, root_rel));
    let keep: Option<&dyn Fn(&str) -> bool> = if includes.is_empty() { None } else { Some(&keep) };
    let flags = index::plan::Flags { literal: q.literal, case_insensitive: q.case_insensitive };
    let (selection, report) = index::select(&key, &q.pattern, flags, 0, keep);
    let mut found = match selection {
        Some(sel) => verify(&key, sel, q, stop, &includes),
        None => scan(ctx_target, q, stop, &includes)?,
    };
    found.index = report;
    Ok(found)
}

/// Files from this size up are searched one per turn, largest first.
const LARGE: u64 = 256 * 1024;
/// Most small files in one turn.
const RUN: usize = 32;

/// The order in which the index's candidates are searched, and the turns the workers take
/// (ranges of that order): the large files first, largest first, one per turn, so that no
/// core is left alone with a large file at the end; then the small ones in path order, in
/// turns of at most [`RUN`] files of one directory, which is opened once for them. The third
/// list is each file's size, in that order (0: unknown).
fn work_order<'a>(paths: &'a [String], sizes: &[u64]) -> (Vec<&'a String>, Vec<(usize, usize)>, Vec<u64>) {
    let size = |i: usize| sizes.get(i).copied().unwrap_or(0);
    let mut large: Vec<usize> = (0..paths.len()).filter(|&i| size(i) >= LARGE).collect();
    large.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    let mut files: Vec<&String> = large.iter().map(|&i| &paths[i]).collect();
    let mut order: Vec<u64> = large.iter().map(|&i| size(i)).collect();
    let mut runs: Vec<(usize, usize)> = (0..files.len()).map(|i| (i, i + 1)).collect();
    let parent = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
    let mut start = files.len();
    let mut run_dir = String::new();
    for (i, p) in paths.iter().enumerate().filter(|&(i, _)| size(i) < LARGE) {
        let at = files.len();
        let d = parent(p);
        if at > start && (at - start >= RUN || d != run_dir) {
            runs.push((start, at));
            start = at;
        }
        if at == start {
            run_dir = d;
        }
        files.push(p);
        order.push(size(i));
    }
    if files.len() > start {
        runs.push((start, files.len()));
    }
    (files, runs, order)
}

/// `dir` opened to open files in it (`None` when it cannot be: its files are then opened by
/// their whole path, which reports the error).
fn open_dir(dir: &Path) -> Option<rustix::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    rustix::fs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).ok()
}

/// The file `name` of the directory `dir`, opened for reading as `File::open` opens it.
fn open_in(dir: &rustix::fd::OwnedFd, name: &std::ffi::OsStr) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    Ok(std::fs::File::from(rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?))
}

/// Search the files the index selected, on every core, and account for the ones it ruled out
/// as the scan would have (searched; binary when they hold a NUL where the scan looks).
fn verify(key: &index::Key, sel: index::Selection, q: &Query, stop: &Stop, includes: &Includes) -> Found {
    let stored = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    let (files, runs, sizes) = work_order(&sel.search, &sel.sizes);
    let (files, runs, sizes) = (&files, &runs, &sizes);
    let first = FirstMatch { deadline: None, found: false.into(), expired: false.into() };
    let workers: Vec<Worker<'_>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..walk::threads().min(runs.len()).max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut w = Worker::new(q, &first, includes, &key.root_rel, &stored);
                    // The directory of the last file opened: its neighbours are opened from it.
                    let mut dir: Option<(PathBuf, Option<rustix::fd::OwnedFd>)> = None;
                    'runs: while let Some(&(a, b)) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                        for (rel, &size) in files[a..b].iter().zip(&sizes[a..b]) {
                            if stop.should_stop() {
                                break 'runs;
                            }
                            let path = key.path_of(rel);
                            let file = match (path.parent(), path.file_name()) {
                                (Some(parent), Some(name)) => {
                                    if dir.as_ref().is_none_or(|(d, _)| d != parent) {
                                        dir = Some((parent.to_path_buf(), open_dir(parent)));
                                    }
                                    match dir.as_ref().and_then(|(_, fd)| fd.as_ref()) {
                                        Some(fd) => open_in(fd, name),
                                        None => std::fs::File::open(&path),
                                    }
                                }
                                _ => std::fs::File::open(&path),
                            };
                            w.search_opened(file, (1..=WHOLE_MAX).contains(&size), rel, stop);
                        }
                    }
                    w
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let (mut files, mut searched, mut binary, mut unreadable) = (Vec::new(), 0, 0, 0);
    for w in workers {
        files.extend(w.hits);
        searched += w.searched;
        binary += w.binary;
        unreadable += w.unreadable;
    }
    if !stop.should_stop() {
        searched += sel.skipped.len();
        binary += sel.skipped.iter().filter(|(size, flags)| binary_without_match(q, *size, *flags)).count();
    }
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Found {
        files,
        searched,
        binary,
        unreadable,
        ignored: IgnoreCounts::from_parts(sel.ignored),
        timed_out: stop.timed_out() && !stop.cancelled(),
        cancelled: stop.cancelled(),
        store_full: stored.load(Ordering::Relaxed) > STORE_LIMIT,
        first_match_expired: false,
        index: index::Report::default(),
    }
}

/// Search by walking the tree.
fn scan(ctx_target: &Target, q: &Query, stop: &Stop, includes: &Includes) -> Result<Found> {
    let stored = AtomicUsize::new(0);
    let first = FirstMatch {
        deadline: q.first_match.map(|d| Instant::now() + d),
        found: false.into(),
        expired: false.into(),
    };
    let (mut files, searched, binary, unreadable, ignored) = if let Some((real, rel)) = &ctx_target.file {
        let mut w = Worker::new(q, &first, includes, "", &stored);
        w.search(real, rel, stop);
        (w.hits, w.searched, w.binary, w.unreadable, IgnoreCounts::default())
    } else {
        let opts = WalkOptions {
            respect_gitignore: q.respect_gitignore,
            include_hidden: q.include_hidden,
            exclude: walk::excludes(&ctx_target.root.real, &q.exclude)?,
            skip_dependency_dirs: walk::skips_dependencies(q.include_dependencies, &ctx_target.root.rel),
            ..Default::default()
        };
        let (workers, ignored) =
            walk::walk(&ctx_target.workspace_real, &ctx_target.root, &opts, stop, || {
                Worker::new(q, &first, includes, &ctx_target.root.rel, &stored)
            })?;
        let (mut files, mut searched, mut binary, mut unreadable) = (Vec::new(), 0, 0, 0);
        for w in workers {
            files.extend(w.hits);
            searched += w.searched;
            binary += w.binary;
            unreadable += w.unreadable;
        }
        (files, searched, binary, unreadable, ignored)
    };
    files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let first_match_expired = first.expired.load(Ordering::Relaxed) && !first.found.load(Ordering::Relaxed);
    Ok(Found {
        first_match_expired,
        files,
        searched,
        binary,
        unreadable,
        ignored,
        timed_out: stop.timed_out() && !stop.cancelled(),
        cancelled: stop.cancelled(),
        store_full: stored.load(Ordering::Relaxed) > STORE_LIMIT,
        index: index::Report::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn unreadable_files_are_counted() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("d")).unwrap();
        std::fs::write(t.path().join("d/x.txt"), "hit\n").unwrap();
        let q = Query::new("hit".to_owned(), Matching::default()).unwrap();
        let (inc, stored) = (Includes::new(&[], false).unwrap(), AtomicUsize::new(0));
        let first = FirstMatch { deadline: None, found: false.into(), expired: false.into() };
        let mut w = Worker::new(&q, &first, &inc, "", &stored);
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
        // Opening a directory works on Linux; reading it fails (EISDIR).
        w.search(&t.path().join("d"), "d", &stop);
        w.search(&t.path().join("missing"), "missing", &stop);
        assert_eq!(w.unreadable, 2);
        w.search(&t.path().join("d/x.txt"), "d/x.txt", &stop);
        assert_eq!((w.unreadable, w.hits.len()), (2, 1));
    }

    #[test]
    fn a_small_file_read_whole_is_searched_as_when_streamed() {
        let t = tempfile::tempdir().unwrap();
        let mut nul_at_end = b"hit first\n".to_vec();
        nul_at_end.resize(WHOLE_MAX as usize - 1, b'x');
        nul_at_end.push(0);
        let mut nul_late = b"hit first\n".to_vec();
        nul_late.resize(90_000, b'y');
        nul_late.extend_from_slice(b"\0\nzz\nzz\nhit after\n");
        let mut long_line = vec![b'z'; WHOLE_MAX as usize - 20];
        long_line.extend_from_slice(b" hit end\nhit");
        let mut utf16 = vec![0xff, 0xfe];
        for u in "x hit\né hit\n".encode_utf16() {
            utf16.extend_from_slice(&u.to_le_bytes());
        }
        let files: Vec<(&str, Vec<u8>)> = vec![
            ("plain", b"a hit\nno\nhit again".to_vec()),
            ("empty", Vec::new()),
            ("crlf", b"hit one\r\nnone\r\n  hit two\r\n".to_vec()),
            ("bom8", b"\xef\xbb\xbfhit at start\nhit\n".to_vec()),
            ("utf16", utf16),
            ("latin1", b"caf\xe9 hit \xff\nhit\n".to_vec()),
            ("nul_first", b"hit\0\nhit\n".to_vec()),
            ("nul_at_end", nul_at_end),
            ("nul_late", nul_late),
            ("long_line", long_line),
            // Mapped when searched (as a file that grew from small to this size).
            (
                "mapped",
                [
                    b"hit\n".to_vec(),
                    [b'y'; 600].repeat(1000).chunks(600).flat_map(|c| [c, b" hit\n"].concat()).collect(),
                ]
                .concat(),
            ),
        ];
        for multiline in [false, true] {
            let m = Matching { multiline, ..Default::default() };
            let mut q = Query::new("hit".to_owned(), m).unwrap();
            q.before = 1;
            let (inc, stored) = (Includes::new(&[], false).unwrap(), AtomicUsize::new(0));
            let first = FirstMatch { deadline: None, found: false.into(), expired: false.into() };
            let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
            for (name, bytes) in &files {
                let path = t.path().join(name);
                std::fs::write(&path, bytes).unwrap();
                // Searched as the scan opens it, and as the index's candidates are when the index
                // said the file was small (also when it has grown past `WHOLE_MAX` since).
                for small in [false, true] {
                    let mut w = Worker::new(&q, &first, &inc, "", &stored);
                    if small {
                        w.search_opened(std::fs::File::open(&path), true, name, &stop);
                    } else {
                        w.search(&path, name, &stop);
                    }
                    // The reference: the file streamed by the searcher.
                    let mut sink = Collector::new(&q, &stop, &stored, name);
                    let file = std::fs::File::open(&path).unwrap();
                    searcher(&q, false).search_file(&q.matcher, &file, &mut sink).unwrap();
                    let want: Vec<FileHits> =
                        if sink.file.matches > 0 { vec![sink.file] } else { Vec::new() };
                    assert_eq!(
                        format!("{:?}", w.hits),
                        format!("{want:?}"),
                        "{name} multiline={multiline} small={small}"
                    );
                    let binary = usize::from(sink.binary && want.is_empty());
                    assert_eq!((w.binary, w.unreadable, w.searched), (binary, 0, 1), "{name} small={small}");
                }
            }
        }
    }

    #[test]
    fn a_kept_line_is_cut_and_its_column_counted_as_on_the_whole_line() {
        // Pieces of 1 to 4 bytes, invalid sequences of 1 to 3 bytes, and line ends.
        let pieces: [&[u8]; 9] = [
            b"a",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\xff",
            b"\xe2\x82",
            b"\xf0\x9f\x98",
            b"\r",
            b"x",
        ];
        let mut lines: Vec<Vec<u8>> = Vec::new();
        let mut seed = 7u64;
        for n in 0..400 {
            let mut l = Vec::new();
            for _ in 0..(n % 40) {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                l.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            l.extend_from_slice(if n % 3 == 0 { b"x\r\n" } else { b"x\n" });
            lines.push(l);
        }
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
        for max in [0, 1, 2, 3, 5, 8, 13] {
            let mut q = Query::new("x".to_owned(), Matching::default()).unwrap();
            q.max_line_length = max;
            let stored = AtomicUsize::new(0);
            let mut c = Collector::new(&q, &stop, &stored, "");
            for (i, l) in lines.iter().enumerate() {
                c.keep(i as u64, l, true);
                let got = c.file.lines.last().unwrap();
                // The whole line decoded, then cut (as before).
                let mut end = l.len();
                while end > 0 && matches!(l[end - 1], b'\n' | b'\r') {
                    end -= 1;
                }
                let whole = String::from_utf8_lossy(&l[..end]);
                let (head, cut) = crate::engine::text::utf8::head_chars(&whole, max);
                let at = memchr::memchr(b'x', l).unwrap();
                let column = String::from_utf8_lossy(&l[..at]).chars().count() + 1;
                assert_eq!(
                    (got.text.as_str(), got.cut, got.column),
                    (head, cut, Some(column)),
                    "{l:?} max {max}"
                );
            }
        }
    }

    #[test]
    fn work_order_puts_large_files_first_and_runs_of_one_directory() {
        let paths: Vec<String> = ["a/1", "a/2", "a/big", "a/3", "b/1", "b/c/1", "b/c/2", "top", "z/huge"]
            .iter()
            .map(|p| (*p).to_owned())
            .chain((0..70).map(|i| format!("z/m{i:02}")))
            .collect();
        let mut sizes = vec![10u64; paths.len()];
        sizes[2] = LARGE;
        sizes[8] = 10 * LARGE;
        sizes.truncate(paths.len() - 1); // the last one's size is unknown
        let (files, runs, order) = work_order(&paths, &sizes);
        assert_eq!((files[0].as_str(), files[1].as_str()), ("z/huge", "a/big"));
        for (f, size) in files.iter().zip(&order) {
            let i = paths.iter().position(|p| p == *f).unwrap();
            assert_eq!(*size, sizes.get(i).copied().unwrap_or(0), "{f}");
        }
        assert_eq!(order.len(), files.len());
        let mut all: Vec<&str> = files.iter().map(|p| p.as_str()).collect();
        all.sort_unstable();
        let mut want: Vec<&str> = paths.iter().map(String::as_str).collect();
        want.sort_unstable();
        assert_eq!(all, want);
        let mut at = 0;
        let dir = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        for &(a, b) in &runs {
            assert_eq!(a, at);
            assert!(
                b > a
                    && (b - a == 1 || (b - a <= RUN && files[a..b].iter().all(|p| dir(p) == dir(files[a]))))
            );
            at = b;
        }
        assert_eq!(at, files.len());
        let shape: Vec<usize> = runs.iter().map(|(a, b)| b - a).collect();
        assert_eq!(shape, [1, 1, 3, 1, 2, 1, 32, 32, 6]);
    }

    #[test]
    fn a_definition_keyword_before_the_match() {
        assert!(defines(b"pub fn ") && defines(b"export function ") && defines(b"  def "));
        assert!(!defines(b"x = ") && !defines(b"fn") && !defines(b"undef "));
    }

    #[test]
    fn a_bad_pattern_is_invalid_regex() {
        let e = Query::new("(".to_owned(), Matching::default()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRegex);
        assert!(Query::new("(".to_owned(), Matching { literal: true, ..Default::default() }).is_ok());
    }
}
