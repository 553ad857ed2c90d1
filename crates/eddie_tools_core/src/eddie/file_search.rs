//! `file_search`: find files by name and/or content with ECMAScript regexes.
//!
//! The walk and the content scan run in parallel (the [`crate::engine::walk`] engine, with
//! every rule off but the dependency directories); each file is streamed
//! in 1 MiB blocks cut at line ends, so memory stays flat on huge files. A Rust-regex
//! prefilter (see [`crate::engine::es_regex`]) picks the candidate lines and `regress` produces the
//! exact ECMAScript matches, with offsets in UTF-16 code units. Only matching files are
//! sorted, in `localeCompare(…, "en")` order.

use std::cell::RefCell;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::es_regex::EsRegex;
use crate::engine::index;
use crate::engine::js;
use crate::engine::text::collate::{Sensitivity, sort_by_collation};
use crate::engine::walk::{Entry, Root, Stop, Visitor, WalkOptions, walk};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;
use crate::workspace::Workspace;

/// Default results per page.
pub const DEFAULT_PAGE_SIZE: f64 = 20.0;
/// Match texts are cut to this many UTF-16 code units.
pub const MAX_MATCH_UNITS: usize = 1000;
const BLOCK: usize = 1 << 20;

/// A compiled query.
#[derive(Debug)]
pub struct Query {
    /// `root` as given.
    pub root: String,
    /// Content regex (flags `gu`).
    pub content: Option<EsRegex>,
    /// Basename regex (flag `u`).
    pub name: Option<EsRegex>,
    /// Relative-path regexes; a file must match one when non-empty.
    pub include: Vec<EsRegex>,
    /// Relative-path regexes; a file matching any is skipped.
    pub exclude: Vec<EsRegex>,
    /// Search inside dependency directories too.
    pub include_dependencies: bool,
}

/// One match in a line.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchHit {
    /// The matched text, cut to 1000 UTF-16 units (never inside a character).
    pub text: String,
    /// Start, in UTF-16 code units from the start of the line.
    pub start: usize,
    /// End, in UTF-16 code units (`start` + length of `text`).
    pub end: usize,
    /// Capture groups in order; an unmatched group is `""`.
    pub groups: Vec<String>,
}

/// A line with at least one match.
#[derive(Debug, Clone, PartialEq)]
pub struct LineHit {
    /// 1-based line number.
    pub line_number: usize,
    /// The whole line, without its `\r?\n`.
    pub line: String,
    /// Every match, left to right.
    pub matches: Vec<MatchHit>,
}

/// A matching file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileHit {
    /// Workspace-relative POSIX path.
    pub path: String,
    /// Matching lines (empty for a name-only search).
    pub line_matches: Vec<LineHit>,
}

fn optional_pattern(args: &Value, key: &str) -> Result<Option<String>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ToolError::invalid(format!("{key} pattern must be a string"))),
    }
}

fn pattern_list(args: &Value, key: &str) -> Result<Vec<EsRegex>> {
    let Some(Value::Array(items)) = args.get(key) else { return Ok(Vec::new()) };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => EsRegex::new(s, "u", key),
            _ => Err(ToolError::invalid(format!("{key} pattern must be a string"))),
        })
        .collect()
}

impl Query {
    /// Validate and compile, in eddie's order (content, name, include, exclude).
    pub fn parse(args: &Value) -> Result<Self> {
        let content = optional_pattern(args, "content")?;
        let name = optional_pattern(args, "name")?;
        let content = content.map(|p| EsRegex::new(&p, "gu", "content")).transpose()?;
        let name = name.map(|p| EsRegex::new(&p, "u", "name")).transpose()?;
        let include = pattern_list(args, "include")?;
        let exclude = pattern_list(args, "exclude")?;
        let root = match args.get("root") {
            None | Some(Value::Null) => ".".to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(ToolError::invalid("root must be a string")),
        };
        Ok(Self {
            root,
            content,
            name,
            include,
            exclude,
            include_dependencies: js::truthy(args.get("includeDependencies")),
        })
    }

    fn keeps_path(&self, rel: &str, basename: &str) -> bool {
        if !self.include.is_empty() && !self.include.iter().any(|r| r.test(rel)) {
            return false;
        }
        if self.exclude.iter().any(|r| r.test(rel)) {
            return false;
        }
        if let Some(name) = &self.name
            && !name.test(basename)
        {
            return false;
        }
        self.content.is_some() || self.name.is_some()
    }
}

/// Run `file_search`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let query = Query::parse(args)?;
    let page = args.get("page").cloned();
    let page_size = args.get("pageSize").cloned();
    let ws = ctx.workspace.clone();
    let cancel = ctx.cancel.flag();
    let hits = crate::blocking("file_search", move || search(&ws, &query, &cancel)).await?;
    ctx.cancel.check()?;
    Ok(paginate(hits, page.as_ref(), page_size.as_ref()))
}

/// Walk and match; returns every matching file in `localeCompare` order.
pub fn search(ws: &Workspace, q: &Query, cancel: &AtomicBool) -> Result<Vec<FileHit>> {
    let resolved = ws.resolve(&q.root)?;
    let meta = std::fs::metadata(&resolved.real)
        .map_err(|e| ToolError::fs(&e, "scandir", Some(&resolved.lexical)))?;
    if !meta.is_dir() {
        let e = std::io::Error::from_raw_os_error(libc::ENOTDIR);
        return Err(ToolError::fs(&e, "scandir", Some(&resolved.lexical)));
    }
    let root = Root { real: resolved.real.clone(), rel: ws.relative(&resolved.lexical) };
    let key = index::Key {
        file_search: Some(!q.include_dependencies),
        ..index::Key::new(ws.root().to_path_buf(), root.real.clone(), root.rel.clone(), false, true)
    };
    if let Some(mut hits) = indexed(ws, &key, q, cancel)? {
        if cancel.load(Ordering::Relaxed) {
            return Err(ToolError::cancelled());
        }
        hits.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
        sort_by_collation(&mut hits, Sensitivity::Variant, |h| &h.path);
        return Ok(hits);
    }
    // Everything but the dependency directories: hidden entries, `.git` and ignored files too.
    let opts = WalkOptions {
        include_hidden: true,
        keep_git: true,
        skip_dependency_dirs: !q.include_dependencies,
        strict: true,
        ..Default::default()
    };
    let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
    let (visitors, _) =
        walk(ws.root(), &root, &opts, &stop, || Matcher { q, cancel, hits: Vec::new(), files: Vec::new() })?;
    if cancel.load(Ordering::Relaxed) {
        return Err(ToolError::cancelled());
    }
    let mut hits = Vec::new();
    let mut files = Vec::new();
    for v in visitors {
        hits.extend(v.hits);
        files.extend(v.files);
    }
    if let Some(re) = &q.content {
        hits.extend(search_files(ws, &files, re, cancel)?);
    }
    // Ties (strings equal under the collation) keep the order of a sorted depth-first walk.
    hits.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    sort_by_collation(&mut hits, Sensitivity::Variant, |h| &h.path);
    Ok(hits)
}

/// The hits through the root's index (`None`: scan): its file list for a name-only search; for
/// a content search, the files the prefilter's trigrams allow (and every file that is not
/// valid UTF-8: the scan decodes it lossily), searched as the scan searches.
fn indexed(ws: &Workspace, key: &index::Key, q: &Query, cancel: &AtomicBool) -> Result<Option<Vec<FileHit>>> {
    let keep = |rel: &str| q.keeps_path(rel, rel.rsplit('/').next().unwrap_or(rel));
    match &q.content {
        None => {
            let (names, _) = index::names(key, &key.root_rel, None, None, &keep);
            Ok(names.map(|n| {
                n.files.into_iter().map(|path| FileHit { path, line_matches: Vec::new() }).collect()
            }))
        }
        Some(re) => {
            let Some(pre) = &re.prefilter else { return Ok(None) };
            let flags = index::plan::Flags::default();
            let (sel, _) = index::select(key, pre.as_str(), flags, index::NOT_UTF8, Some(&keep));
            let Some(sel) = sel else { return Ok(None) };
            let files: Vec<(std::path::PathBuf, String)> =
                sel.search.into_iter().map(|rel| (key.path_of(&rel), rel)).collect();
            Ok(Some(search_files(ws, &files, re, cancel)?))
        }
    }
}

/// One walker thread's share: the files whose name matches (the hits themselves when there is
/// no content pattern, else the files to search).
struct Matcher<'a> {
    q: &'a Query,
    cancel: &'a AtomicBool,
    hits: Vec<FileHit>,
    files: Vec<(std::path::PathBuf, String)>,
}

impl Visitor for Matcher<'_> {
    fn visit(&mut self, entry: &Entry<'_>, _: &Stop) -> bool {
        if self.cancel.load(Ordering::Relaxed) {
            return false;
        }
        let basename = entry.rel.rsplit('/').next().unwrap_or(entry.rel);
        if !self.q.keeps_path(entry.rel, basename) {
            return true;
        }
        if self.q.content.is_some() {
            self.files.push((entry.path.to_path_buf(), entry.rel.to_owned()));
        } else {
            self.hits.push(FileHit { path: entry.rel.to_owned(), line_matches: Vec::new() });
        }
        true
    }
}

/// Search `files` for `re` on every core, one file at a time from a shared index (a walk hands
/// out whole directories, which leaves a core idle behind one large directory); the files
/// with a match, and the first error.
fn search_files(
    ws: &Workspace,
    files: &[(std::path::PathBuf, String)],
    re: &EsRegex,
    cancel: &AtomicBool,
) -> Result<Vec<FileHit>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let shares = std::thread::scope(|s| {
        let workers: Vec<_> = (0..crate::engine::walk::threads().min(files.len()).max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut hits = Vec::new();
                    while !failed.load(Ordering::Relaxed) {
                        let Some((path, rel)) = files.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            break;
                        };
                        match search_file(path, re, cancel) {
                            Ok(lines) if lines.is_empty() => {}
                            Ok(line_matches) => hits.push(FileHit { path: rel.clone(), line_matches }),
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                return Err(ToolError::fs(&e, "open", Some(&ws.root().join(rel))));
                            }
                        }
                    }
                    Ok(hits)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err(ToolError::internal("a search thread panicked"))))
            .collect::<Vec<_>>()
    });
    if cancel.load(Ordering::Relaxed) {
        return Err(ToolError::cancelled());
    }
    let mut hits = Vec::new();
    for share in shares {
        hits.extend(share?);
    }
    Ok(hits)
}

thread_local! {
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Every matching line of one file, streamed in blocks that end at a line end.
pub fn search_file(path: &Path, re: &EsRegex, cancel: &AtomicBool) -> std::io::Result<Vec<LineHit>> {
    let mut file = std::fs::File::open(path)?;
    BUFFER.with(|cell| {
        let mut buf = cell.borrow_mut();
        // `buf` keeps its length between files (only `filled` bytes are live), so no block
        // is zero-filled again.
        let mut out = Vec::new();
        let mut first_line = 1usize;
        let mut filled = 0usize;
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "cancelled"));
            }
            if buf.len() < filled + BLOCK {
                buf.resize(filled + BLOCK, 0);
            }
            let n = match file.read(&mut buf[filled..filled + BLOCK]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            filled += n;
            let last = n == 0;
            let end = if last {
                filled
            } else {
                match memchr::memrchr(b'\n', &buf[..filled]) {
                    Some(i) => i + 1,
                    None => continue, // a line longer than a block: read more
                }
            };
            first_line = scan_block(&buf[..end], first_line, last, re, &mut out);
            buf.copy_within(end..filled, 0);
            filled -= end;
            if last {
                break;
            }
        }
        if buf.len() > 4 * BLOCK {
            *buf = Vec::new(); // do not keep a huge line's buffer alive
        }
        Ok(out)
    })
}

/// Scan complete lines in `block` (which ends with `\n` unless it is the file's last).
/// Returns the line number that follows the block.
fn scan_block(block: &[u8], first_line: usize, last: bool, re: &EsRegex, out: &mut Vec<LineHit>) -> usize {
    let text = crate::engine::text::utf8::lossy(block);
    let hay = text.as_bytes();
    let mut line_no = first_line;
    let mut line_start = 0usize;
    let line_end_of = |start: usize| memchr::memchr(b'\n', &hay[start..]).map_or(hay.len(), |i| start + i);
    let emit = |no: usize, start: usize, end: usize, out: &mut Vec<LineHit>| {
        let line = &text[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(hit) = match_line(no, line, re) {
            out.push(hit);
        }
    };
    let is_line = |start: usize| start < hay.len() || last;
    // A non-final block ends with `\n`, so its lines are exactly its `\n`s.
    let newlines = |bytes: &[u8]| memchr::memchr_iter(b'\n', bytes).count();
    match &re.prefilter {
        Some(pre) => {
            // Invariant: `line_no` = `first_line` + the `\n`s in `hay[..line_start]`.
            let mut at = 0usize;
            while at <= hay.len() && is_line(at) {
                let Some(m) = pre.find_at(hay, at) else { break };
                // Move to the line holding the match start (counting, not walking, the gap).
                let gap = &hay[line_start..m.start()];
                if let Some(i) = memchr::memrchr(b'\n', gap) {
                    line_no += newlines(gap);
                    line_start += i + 1;
                }
                // Every line the match touches, through the line holding its end.
                loop {
                    let line_end = line_end_of(line_start);
                    if is_line(line_start) {
                        emit(line_no, line_start, line_end, out);
                    }
                    if line_end >= hay.len() {
                        at = hay.len() + 1;
                        break;
                    }
                    line_start = line_end + 1;
                    line_no += 1;
                    at = line_start;
                    if m.end() <= line_end {
                        break;
                    }
                }
            }
            line_no + newlines(hay.get(line_start..).unwrap_or_default())
        }
        None => {
            let next_block_line = first_line + newlines(hay);
            loop {
                if !is_line(line_start) {
                    break;
                }
                let line_end = line_end_of(line_start);
                emit(line_no, line_start, line_end, out);
                line_no += 1;
                if line_end >= hay.len() {
                    break;
                }
                line_start = line_end + 1;
            }
            next_block_line
        }
    }
}

/// All ECMAScript matches in one line, or `None` if there are none.
pub fn match_line(line_number: usize, line: &str, re: &EsRegex) -> Option<LineHit> {
    let mut matches = Vec::new();
    let mut units = 0usize;
    let mut seen = 0usize;
    for m in re.regex.find_iter(line) {
        units += utf16_len(&line[seen..m.start()]);
        seen = m.start();
        let (text, len) = cut_utf16(&line[m.range()], MAX_MATCH_UNITS);
        let groups =
            m.captures.iter().map(|g| g.clone().map(|r| line[r].to_owned()).unwrap_or_default()).collect();
        matches.push(MatchHit { text: text.to_owned(), start: units, end: units + len, groups });
    }
    if matches.is_empty() {
        return None;
    }
    Some(LineHit { line_number, line: line.to_owned(), matches })
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` with at most `max` UTF-16 units, and its length in units.
fn cut_utf16(s: &str, max: usize) -> (&str, usize) {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        if units + c.len_utf16() > max {
            return (&s[..i], units);
        }
        units += c.len_utf16();
    }
    (s, units)
}

/// Apply eddie's paging to the sorted hits and build the result.
pub fn paginate(hits: Vec<FileHit>, page: Option<&Value>, page_size: Option<&Value>) -> ToolOutput {
    let total = hits.len();
    let size = js::finite_floor(page_size).map_or(DEFAULT_PAGE_SIZE, |s| s.max(1.0));
    let total_pages = (total as f64 / size).ceil();
    let requested = js::finite_floor(page).map_or(1.0, |p| p.max(1.0));
    let page = requested.min(total_pages.max(1.0));
    let start = ((page - 1.0) * size).min(total as f64) as usize;
    let end = (start as f64 + size).min(total as f64) as usize;
    let results: Vec<Value> = hits.into_iter().skip(start).take(end - start).map(|h| file_json(&h)).collect();
    let content = match total {
        0 => "No matches found.".to_owned(),
        1 => "Found 1 matching file.".to_owned(),
        n => format!("Found {n} matching files."),
    };
    let data = json!({
        "results": results,
        "totalResults": total,
        "page": page,
        "pageSize": size,
        "totalPages": total_pages,
    });
    ToolOutput::new(content, js::integral_numbers(data))
}

fn file_json(h: &FileHit) -> Value {
    json!({
        "path": h.path,
        "lineMatches": h.line_matches.iter().map(|l| json!({
            "lineNumber": l.line_number,
            "line": l.line,
            "matches": l.matches.iter().map(|m| json!({
                "match": m.text, "start": m.start, "end": m.end, "groups": m.groups,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

/// The `file_search` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "file_search",
    js_name: "fileSearch",
    family: "eddie",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> EsRegex {
        EsRegex::new(p, "gu", "content").unwrap()
    }

    /// (line number, [(start, end, text)]) for each matching line.
    type Lines = Vec<(usize, Vec<(usize, usize, String)>)>;

    fn lines_of(text: &str, p: &str) -> Lines {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, text).unwrap();
        let r = re(p);
        let with = search_file(&f, &r, &AtomicBool::new(false)).unwrap();
        // The same file without a prefilter must give the same answer.
        let plain = EsRegex { regex: r.regex.clone(), prefilter: None };
        let without = search_file(&f, &plain, &AtomicBool::new(false)).unwrap();
        assert_eq!(with, without, "prefilter changed the result for {p:?} on {text:?}");
        with.into_iter()
            .map(|l| (l.line_number, l.matches.into_iter().map(|m| (m.start, m.end, m.text)).collect()))
            .collect()
    }

    #[test]
    fn offsets_are_utf16_units() {
        let got = lines_of("😀 needle\nx", "needle");
        assert_eq!(got, vec![(1, vec![(3, 9, "needle".to_owned())])]);
    }

    #[test]
    fn lines_split_on_crlf_and_lf_only() {
        // `.` does not match a lone `\r`, so line 2 ("b\rc") has no whole-line match.
        let got = lines_of("a\r\nb\rc\n\nend\n", "^.*$");
        let nums: Vec<usize> = got.iter().map(|l| l.0).collect();
        assert_eq!(nums, vec![1, 3, 4, 5]);
        let got = lines_of("a\r\nb\rc\n", "c$");
        assert_eq!(got, vec![(2, vec![(2, 3, "c".to_owned())])]);
    }

    #[test]
    fn prefilter_agrees_on_tricky_patterns() {
        let text = "foo bar\nébar\r\nfoo\n  x\u{feff}y\nErrorX TypeError(\n\n日本語 テスト\nlast";
        for p in [
            "bar",
            r"\bbar",
            r"\Bbar",
            "^foo$",
            "^$",
            r"\s",
            r"x\sy",
            r"\w+",
            r"[^\w\s]+",
            r"\p{Script=Han}+",
            r"\b[A-Z][a-zA-Z]+Error\(",
            "o*",
            "(?<n>o)(x)?",
            r"é|\u00e9",
            r"[\d\D]",
            "(?=foo)f",
            r"\S+$",
        ] {
            lines_of(text, p);
        }
    }

    #[test]
    fn long_lines_and_block_edges() {
        let long = "a".repeat(BLOCK + 10);
        let text = format!("{long}needle\nx\n");
        let got = lines_of(&text, "needle");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].1[0].0, BLOCK + 10);
        let many: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
        let got = lines_of(&many, "^line 199999$");
        assert_eq!(got, vec![(200_000, vec![(0, 11, "line 199999".to_owned())])]);
        let got = lines_of(&many, "^$");
        assert_eq!(got, vec![(200_001, vec![(0, 0, String::new())])]);
    }

    #[test]
    fn empty_matches_advance_by_code_point() {
        let got = lines_of("😀a", "x*");
        assert_eq!(got[0].1.iter().map(|m| m.0).collect::<Vec<_>>(), vec![0, 2, 3]);
    }

    #[test]
    fn match_text_is_cut_without_splitting_characters() {
        let line = format!("{}😀tail", "a".repeat(999));
        let hit = match_line(1, &line, &re(".+")).unwrap();
        assert_eq!(hit.matches[0].end, 999);
        let line = "b".repeat(1500);
        let hit = match_line(1, &line, &re("b+")).unwrap();
        assert_eq!((hit.matches[0].end, hit.matches[0].text.len()), (1000, 1000));
    }

    #[test]
    fn invalid_utf8_becomes_replacement_chars() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("bin");
        std::fs::write(&f, b"ab\xff\xfecd\n").unwrap();
        let hits = search_file(&f, &re("\u{FFFD}+"), &AtomicBool::new(false)).unwrap();
        assert_eq!(hits[0].matches[0].start, 2);
        assert_eq!(hits[0].matches[0].end, 4);
    }
}
