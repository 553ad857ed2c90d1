//! `grep`: content search at ripgrep speed, on `grep-searcher` + `grep-regex` (ripgrep's own
//! engine: Rust regex syntax, line-oriented, binary files skipped at the first NUL byte,
//! memory-mapped reads for mid-sized files).
//!
//! Output modes: `content` (matching lines with merged before/after context, grouped per
//! file), `files` (paths only; each file stops at its first match) and `count` (matching lines
//! per file). Files are sorted by path; pages are by file (`offset`, `maxResults` matching
//! lines or entries per page). Caps: `maxPerFile` lines kept per file, a deadline
//! (`timeoutMs`) and the caller's AbortSignal both return what was found so far, flagged
//! `timedOut` / `cancelled`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use grep_matcher::Matcher;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::args::lenient::{Cap, Flag, Offset, StringOrList};
use crate::code::args;
use crate::code::paging::Page;
use crate::context::Ctx;
use crate::engine::search::{self, Collect, Found, Line, Matching};
use crate::engine::walk::Stop;
use crate::error::{Result, ToolError};
use crate::output::{ToolOutput, object_json_with_raw};

const NAME: &str = "grep";
/// Default matching lines (content) or entries (files, count) per page.
pub const DEFAULT_MAX_RESULTS: usize = 100;
/// Default matching lines kept per file.
pub const DEFAULT_MAX_PER_FILE: usize = 50;
/// Default deadline.
pub const DEFAULT_TIMEOUT_MS: usize = 30_000;
/// Default line length kept (in characters).
pub const DEFAULT_MAX_LINE_LENGTH: usize = 400;

/// Output mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Lines with context.
    Content,
    /// Paths only.
    Files,
    /// Counts per file.
    Count,
}

/// The arguments of `grep`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Regular expression (Rust regex syntax, like ripgrep) or, with literal: true, a plain string.
    pub pattern: String,
    /// File or directory to search, relative to the workspace (default ".").
    pub path: Option<String>,
    /// Treat pattern as a plain string (default false).
    pub literal: Option<Flag>,
    /// Ignore case (default false).
    pub case_insensitive: Option<Flag>,
    /// Only match whole words (default false).
    pub word_match: Option<Flag>,
    /// Let matches span lines, through \n, \s or [^x] (default false; as rg -U). . matches a newline only after (?s).
    pub multiline: Option<Flag>,
    /// Lines of context before and after each match (default 0).
    pub context: Option<Offset<1000>>,
    /// Lines before each match (overrides context).
    pub before: Option<Offset<1000>>,
    /// Lines after each match (overrides context).
    pub after: Option<Offset<1000>>,
    /// Only search files matching these globs: "*.ts", "*.{js,ts}", "src/**/*.py"; a string may list several separated by commas. A glob without / matches file names at any depth.
    pub include: Option<StringOrList>,
    /// Skip paths matching these patterns (gitignore syntax, relative to path): "*.min.js", "node_modules/", "test/**".
    pub exclude: Option<StringOrList>,
    /// content (default), files or count.
    pub output_mode: Option<Mode>,
    /// Page size: matching lines (content) or entries (files, count). Default 100.
    pub max_results: Option<Cap<1_000_000>>,
    /// Matching lines shown per file (default 50); the count stays exact.
    pub max_per_file: Option<Cap<1_000_000>>,
    /// Number of files to skip (from pagination.nextOffset).
    pub offset: Option<Offset>,
    /// Characters kept per line (default 400).
    pub max_line_length: Option<Cap<1_000_000>>,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: Option<Flag>,
    /// Include dot-files and dot-directories (default false; .git is never searched).
    pub include_hidden: Option<Flag>,
    /// Search dependency folders too: node_modules, .venv, venv, __pycache__, dist, build, target, vendor, ... (default false, unless path is inside one).
    pub include_dependencies: Option<Flag>,
    /// Deadline in milliseconds (default 30000); partial results are returned flagged timedOut.
    pub timeout_ms: Option<Offset<3_600_000>>,
    /// Stop early when nothing has matched after this many milliseconds (default: no such limit; 3000 in TunaCode style). Distinct from timeoutMs, which bounds the whole search.
    pub first_match_timeout_ms: Option<Offset<3_600_000>>,
    /// Order of the files: path (default) or relevance (files with a definition of the match first, then source before tests before vendored code, then the most recently modified; ties by path).
    pub sort_by: Option<SortBy>,
    /// default, or tunacode: TunaCode's grep (case-insensitive literal search unless case_sensitive / use_regex, 2 context lines, 50 results, a 3 s first-match deadline, TunaCode's output). Any of directory, use_regex, case_sensitive, include_files, exclude_files or search_type also selects it.
    pub style: Option<Style>,
    /// TunaCode: the folder to search (as path).
    #[serde(rename = "directory")]
    pub directory: Option<String>,
    /// TunaCode: the pattern is a regular expression (default false: literal text).
    #[serde(rename = "use_regex")]
    pub use_regex: Option<Flag>,
    /// TunaCode: match case (default false).
    #[serde(rename = "case_sensitive")]
    pub case_sensitive: Option<Flag>,
    /// TunaCode: comma-separated globs of files to search, with braces: "*.py", "*.js,*.ts", "*.{py,js,ts}".
    #[serde(rename = "include_files")]
    pub include_files: Option<String>,
    /// TunaCode: comma-separated patterns of files to skip: "*.pyc", "node_modules/*".
    #[serde(rename = "exclude_files")]
    pub exclude_files: Option<String>,
    /// TunaCode: smart, ripgrep, python or hybrid. Accepted; the search always runs on ripgrep's engine, and the result says so.
    #[serde(rename = "search_type")]
    pub search_type: Option<SearchType>,
}

/// The order of the files in a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortBy {
    /// By path (byte order).
    Path,
    /// Definitions, then source before tests before vendored code, then recently modified.
    Relevance,
}

/// Whose defaults and output format a call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// This package's grep.
    Default,
    /// TunaCode's grep.
    Tunacode,
}

/// TunaCode's `search_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchType {
    /// Chosen by file count.
    Smart,
    /// ripgrep.
    Ripgrep,
    /// Python's re.
    Python,
    /// Both.
    Hybrid,
}

impl SearchType {
    fn name(self) -> &'static str {
        match self {
            Self::Smart => "smart",
            Self::Ripgrep => "ripgrep",
            Self::Python => "python",
            Self::Hybrid => "hybrid",
        }
    }
}

/// TunaCode's defaults.
const TUNACODE_CONTEXT: usize = 2;
const TUNACODE_MAX_RESULTS: usize = 50;
const TUNACODE_FIRST_MATCH_MS: usize = 3_000;

/// Everything a grep needs, parsed from the arguments: the search (the engine's query) and
/// how its result is paged and shown.
#[derive(Debug, Clone)]
pub struct Query {
    /// What is searched and kept.
    pub search: search::Query,
    /// The search path as given.
    pub path: String,
    /// Output mode.
    pub mode: Mode,
    /// Page size.
    pub max_results: usize,
    /// Files skipped (page start).
    pub offset: usize,
    /// Deadline.
    pub timeout: Duration,
    /// Order of the files.
    pub sort_by: SortBy,
    /// TunaCode's defaults and output.
    pub tunacode: bool,
    /// TunaCode's `search_type`, as asked.
    pub search_type: Option<SearchType>,
}

/// Whether the call gets TunaCode's style: asked for, or implied by one of TunaCode's keys.
fn tunacode_style(a: &Args) -> bool {
    match a.style {
        Some(style) => style == Style::Tunacode,
        None => {
            a.directory.is_some()
                || a.use_regex.is_some()
                || a.case_sensitive.is_some()
                || a.include_files.is_some()
                || a.exclude_files.is_some()
                || a.search_type.is_some()
        }
    }
}

/// How the pattern matches, with both spellings of one thing refused.
fn matching(a: &Args, tunacode: bool) -> Result<Matching> {
    if a.path.is_some() && a.directory.is_some() {
        return Err(ToolError::invalid("grep: give `path` or `directory`, not both"));
    }
    if a.literal.is_some() && a.use_regex.is_some() {
        return Err(ToolError::invalid("grep: give `literal` or `use_regex`, not both"));
    }
    if a.case_insensitive.is_some() && a.case_sensitive.is_some() {
        return Err(ToolError::invalid("grep: give `caseInsensitive` or `case_sensitive`, not both"));
    }
    Ok(Matching {
        literal: match (Flag::get(a.literal), Flag::get(a.use_regex)) {
            (Some(l), _) => l,
            (None, Some(r)) => !r,
            (None, None) => tunacode,
        },
        case_insensitive: match (Flag::get(a.case_insensitive), Flag::get(a.case_sensitive)) {
            (Some(i), _) => i,
            (None, Some(c)) => !c,
            (None, None) => tunacode,
        },
        word: Flag::or(a.word_match, false),
        multiline: Flag::or(a.multiline, false),
    })
}

impl Query {
    /// Validate the arguments and build the matcher.
    pub fn new(mut a: Args) -> Result<Self> {
        let pattern = args::non_empty(NAME, "pattern", std::mem::take(&mut a.pattern))?;
        let tunacode = tunacode_style(&a);
        let mode = a.output_mode.unwrap_or(Mode::Content);
        let sort_by = a.sort_by.unwrap_or(SortBy::Path);
        let mut q = search::Query::new(pattern, matching(&a, tunacode)?)?;
        let context = Offset::or(a.context, if tunacode { TUNACODE_CONTEXT } else { 0 });
        q.before = Offset::or(a.before, context);
        q.after = Offset::or(a.after, context);
        q.collect = match mode {
            Mode::Content => Collect::Lines,
            Mode::Files => Collect::Files,
            Mode::Count => Collect::Count,
        };
        q.include = args::globs(a.include);
        q.include.extend(a.include_files.as_deref().map(args::split_top_level_commas).unwrap_or_default());
        q.exclude = args::globs(a.exclude);
        q.exclude.extend(a.exclude_files.as_deref().map(args::split_top_level_commas).unwrap_or_default());
        q.first_match = a
            .first_match_timeout_ms
            .map(|ms| ms.0)
            .or(tunacode.then_some(TUNACODE_FIRST_MATCH_MS))
            .map(|ms| Duration::from_millis(ms as u64));
        q.max_per_file = Cap::or(a.max_per_file, DEFAULT_MAX_PER_FILE);
        q.max_line_length = Cap::or(a.max_line_length, DEFAULT_MAX_LINE_LENGTH);
        q.respect_gitignore = Flag::or(a.respect_gitignore, true);
        q.include_hidden = Flag::or(a.include_hidden, false);
        q.include_dependencies = Flag::get(a.include_dependencies);
        q.definitions = sort_by == SortBy::Relevance;
        let default_max = if tunacode { TUNACODE_MAX_RESULTS } else { DEFAULT_MAX_RESULTS };
        Ok(Self {
            search: q,
            path: a.path.or(a.directory).unwrap_or_else(|| ".".to_owned()),
            mode,
            max_results: Cap::or(a.max_results, default_max),
            offset: Offset::or(a.offset, 0),
            timeout: Duration::from_millis(Offset::or(a.timeout_ms, DEFAULT_TIMEOUT_MS) as u64),
            sort_by,
            tunacode,
            search_type: a.search_type,
        })
    }
}

/// Where a path belongs for relevance: 0 source, 1 tests, 2 vendored or generated.
pub fn path_class(rel: &str) -> u8 {
    const VENDORED: &[&str] = &[
        "vendor",
        "node_modules",
        "third_party",
        "third-party",
        "external",
        "site-packages",
        ".venv",
        "venv",
    ];
    const TESTS: &[&str] = &["test", "tests", "__tests__", "spec", "specs", "testing", "__test__"];
    let mut parts = rel.split('/');
    let name = parts.next_back().unwrap_or("");
    let dirs: Vec<&str> = parts.collect();
    if dirs.iter().any(|d| VENDORED.contains(d)) || name.ends_with(".min.js") {
        return 2;
    }
    let stem = name.split('.').next().unwrap_or(name);
    if dirs.iter().any(|d| TESTS.contains(d))
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || name.contains(".test.")
        || name.contains(".spec.")
    {
        return 1;
    }
    0
}

/// Search (blocking, through the engine: the index when it can answer, else a scan) and order
/// the files as asked.
pub fn find(target: &args::Target, q: &Query, stop: &Stop) -> Result<Found> {
    let mut found = search::search(target, &q.search, stop)?;
    rank(&mut found, q, target);
    Ok(found)
}

/// Order the files by relevance when asked (they come sorted by path): definitions first, then
/// source before tests before vendored code, then the most recently modified; ties keep the
/// path order.
fn rank(found: &mut Found, q: &Query, ctx_target: &args::Target) {
    if q.sort_by != SortBy::Relevance {
        return;
    }
    // A file whose time cannot be read sorts as the oldest.
    let modified = |rel: &str| {
        std::fs::metadata(ctx_target.workspace_real.join(rel))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::SystemTime::UNIX_EPOCH)
    };
    let files = std::mem::take(&mut found.files);
    let mut keyed: Vec<_> = files
        .into_iter()
        .map(|f| ((!f.definition, path_class(&f.path), std::cmp::Reverse(modified(&f.path))), f))
        .collect();
    keyed.sort_by_key(|k| k.0);
    found.files = keyed.into_iter().map(|(_, f)| f).collect();
}

/// Run the tool.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let q = Query::new(a)?;
    let target = args::target(ctx, Some(&q.path))?;
    let stop = Stop::new(ctx.cancel.flag(), Some(Instant::now() + q.timeout));
    let (found, q) = crate::blocking("grep", move || {
        let found = find(&target, &q, &stop)?;
        Ok((found, q))
    })
    .await?;
    render(&q, found)
}

/// One file of the content page as its JSON entry is written: the keys and their order of
/// `{path, matchCount, truncated, blocks: [{startLine, lines: [{line, text, match, column?, cut?}]}]}`,
/// serialised straight from the found lines (no [`Value`] tree: that cost more than the search
/// on large results).
#[derive(Serialize)]
struct FileJson<'a> {
    path: &'a str,
    #[serde(rename = "matchCount")]
    match_count: usize,
    truncated: bool,
    blocks: Vec<BlockJson<'a>>,
}

#[derive(Serialize)]
struct BlockJson<'a> {
    #[serde(rename = "startLine")]
    start_line: u64,
    lines: Vec<LineJson<'a>>,
}

#[derive(Serialize)]
struct LineJson<'a> {
    line: u64,
    text: &'a str,
    #[serde(rename = "match")]
    is_match: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<usize>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cut: bool,
}

impl<'a> LineJson<'a> {
    fn new(l: &'a Line) -> Self {
        Self { line: l.number, text: &l.text, is_match: l.is_match, column: l.column, cut: l.cut }
    }
}

/// Lines of one file up to the `budget`-th match (and that match's after-context), split into
/// blocks of consecutive lines.
fn blocks(lines: &[Line], budget: usize) -> (Vec<Vec<&Line>>, usize, bool) {
    let mut out: Vec<Vec<&Line>> = Vec::new();
    let mut matches = 0;
    let mut cut = false;
    let mut prev: Option<u64> = None;
    for l in lines {
        if l.is_match {
            if matches == budget {
                cut = true;
                break;
            }
            matches += 1;
        } else if matches == budget && matches > 0 {
            // Context after the last kept match only while it is contiguous.
            if prev.is_none_or(|p| l.number != p + 1) {
                break;
            }
        }
        if prev.is_none_or(|p| l.number != p + 1) {
            out.push(Vec::new());
        }
        if let Some(b) = out.last_mut() {
            b.push(l);
        }
        prev = Some(l.number);
    }
    // Trailing context of a budget-cut file past the next match is dropped above; a block
    // that holds only context (never happens from the searcher) is removed.
    out.retain(|b| b.iter().any(|l| l.is_match));
    (out, matches, cut)
}

/// One page of a result: its text, its JSON entries, and where it ends.
struct Shown {
    /// This package's text of the page.
    text: String,
    /// TunaCode's text of the page (content mode in TunaCode's style).
    tuna: String,
    /// The page's entries (paths or counts).
    entries: Vec<Value>,
    /// The page's entries as JSON text, the list of files with their lines (content mode).
    entries_json: Option<String>,
    /// The file after the page's last.
    end: usize,
    /// Some file or line was left out.
    truncated: bool,
}

/// The page of paths or counts from `offset`.
fn page_of_entries(q: &Query, found: &Found, offset: usize) -> Shown {
    let end = (offset + q.max_results).min(found.files.len());
    let (mut text, mut entries) = (String::new(), Vec::new());
    for f in &found.files[offset..end] {
        if q.mode == Mode::Files {
            text.push_str(&f.path);
            entries.push(json!(f.path));
        } else {
            text.push_str(&format!("{}:{}", f.path, f.matches));
            entries.push(json!({ "path": f.path, "count": f.matches }));
        }
        text.push('\n');
    }
    Shown { text, tuna: String::new(), entries, entries_json: None, end, truncated: found.store_full }
}

/// The page of matching lines from `offset`: whole files until `maxResults` lines are shown.
fn page_of_lines(q: &Query, found: &mut Found, offset: usize) -> Result<Shown> {
    let mut shown = Shown {
        text: String::new(),
        tuna: String::new(),
        entries: Vec::new(),
        entries_json: None,
        end: offset,
        truncated: found.store_full,
    };
    let mut json = vec![b'['];
    let mut page_lines = 0usize;
    for f in found.files[offset..].iter_mut() {
        if page_lines >= q.max_results {
            break;
        }
        let budget = q.max_results - page_lines;
        let (bl, kept, cut) = blocks(&f.lines, budget);
        let file_truncated = cut || f.capped || kept < f.matches;
        shown.truncated |= file_truncated;
        page_lines += kept.max(1);
        shown.end += 1;
        if q.tunacode {
            tunacode_blocks(q, &f.path, &bl, &mut shown.tuna);
        }
        let text = &mut shown.text;
        text.push_str(&f.path);
        text.push('\n');
        for (i, b) in bl.iter().enumerate() {
            if i > 0 {
                text.push_str("  --\n");
            }
            for l in b {
                // Written in place: no string per line.
                let sep = if l.is_match { ':' } else { '-' };
                let more = if l.cut { " […]" } else { "" };
                let _ = writeln!(text, "  {}{sep} {}{more}", l.number, l.text);
            }
        }
        if file_truncated {
            text.push_str(&format!(
                "  … {} of {} matching lines shown; search this file alone for the rest\n",
                kept, f.matches
            ));
        }
        let entry = FileJson {
            path: &f.path,
            match_count: f.matches,
            truncated: file_truncated,
            blocks: bl
                .iter()
                .map(|b| BlockJson {
                    start_line: b.first().map_or(0, |l| l.number),
                    lines: b.iter().map(|l| LineJson::new(l)).collect(),
                })
                .collect(),
        };
        if json.len() > 1 {
            json.push(b',');
        }
        serde_json::to_writer(&mut json, &entry)
            .map_err(|e| ToolError::internal(format!("serialise result: {e}")))?;
        // Shown: free its lines now, so the text and the JSON do not add up to a third copy.
        f.lines = Vec::new();
    }
    json.push(b']');
    shown.entries_json =
        Some(String::from_utf8(json).map_err(|e| ToolError::internal(format!("serialise result: {e}")))?);
    Ok(shown)
}

/// The first line: what matched, what is shown, and the notes after `notes_at` (paging,
/// deadlines, the abort, unreadable files, the store limit).
fn header(q: &Query, found: &Found, offset: usize, end: usize, has_more: bool) -> (String, usize) {
    let total_files = found.files.len();
    let total_matches: usize = found.files.iter().map(|f| f.matches).sum();
    let what = match q.mode {
        Mode::Files => format!("{total_files} files match"),
        _ => format!("{total_matches} matching lines in {total_files} files"),
    };
    let mut header =
        format!("grep {:?} in {}: {what} ({} files searched)", q.search.pattern, q.path, found.searched);
    if total_files > 0 {
        header.push_str(&format!("; showing files {}-{} of {total_files}", offset + 1, end));
    }
    header.push('.');
    let notes_at = header.len();
    if has_more {
        header.push_str(&format!(" More: offset {end}."));
    }
    if found.timed_out {
        header.push_str(&format!(
            " Timed out after {} ms: results are partial; narrow `path` or `include`, or raise `timeoutMs`.",
            q.timeout.as_millis()
        ));
    }
    if found.cancelled {
        header.push_str(" Cancelled: results are partial.");
    }
    if found.unreadable > 0 {
        header.push_str(&format!(" {} files could not be read.", found.unreadable));
    }
    if found.store_full {
        header.push_str(" Too many matches to keep: narrow the pattern or the path.");
    }
    if found.first_match_expired {
        header.push_str(&format!(
            " Stopped: nothing matched within the first-match deadline ({} ms); narrow the folder or the file globs, or raise firstMatchTimeoutMs.",
            q.search.first_match.map_or(0, |d| d.as_millis())
        ));
    }
    (header, notes_at)
}

/// The result: `content` with its `data` (content-mode entries as JSON text written directly).
fn output_of(q: &Query, found: &Found, shown: Shown, page: &Page, content: String) -> Result<ToolOutput> {
    let total_matches: usize = found.files.iter().map(|f| f.matches).sum();
    let key = match q.mode {
        Mode::Content => "matches",
        Mode::Files => "files",
        Mode::Count => "counts",
    };
    let mut data = json!({
        "pattern": q.search.pattern,
        "path": q.path,
        "outputMode": match q.mode { Mode::Content => "content", Mode::Files => "files", Mode::Count => "count" },
        "totalMatches": if q.mode == Mode::Files { Value::Null } else { json!(total_matches) },
        "totalFiles": found.files.len(),
        "filesSearched": found.searched,
        "binarySkipped": found.binary,
        "unreadable": found.unreadable,
        "ignored": found.ignored.to_json(),
        "truncated": shown.truncated,
        "timedOut": found.timed_out,
        "cancelled": found.cancelled,
        "pagination": page.to_json(),
        "index": found.index.to_json(),
    });
    data[key] = Value::Array(shown.entries);
    let entries_json = shown.entries_json;
    if q.sort_by == SortBy::Relevance {
        data["sortBy"] = json!("relevance");
    }
    if q.search.first_match.is_some() {
        data["firstMatchTimedOut"] = json!(found.first_match_expired);
    }
    if q.tunacode {
        data["style"] = json!("tunacode");
        data["strategy"] = json!({
            "requested": q.search_type.map(SearchType::name),
            "used": "ripgrep",
        });
    }
    Ok(match entries_json {
        // The entries' place (and so the key order) is already taken, by an empty list.
        Some(raw) => match data.as_object() {
            Some(fields) => ToolOutput::from_json_text(content, object_json_with_raw(fields, key, &raw)?),
            None => ToolOutput::new(content, data),
        },
        None => ToolOutput::new(content, data),
    })
}

/// Build the result: one page, its header, its text (this package's or TunaCode's) and data.
pub fn render(q: &Query, mut found: Found) -> Result<ToolOutput> {
    let total_files = found.files.len();
    let offset = q.offset.min(total_files);
    let mut shown = match q.mode {
        Mode::Files | Mode::Count => page_of_entries(q, &found, offset),
        Mode::Content => page_of_lines(q, &mut found, offset)?,
    };
    let page = Page::new(offset, q.max_results, shown.end - offset, total_files);
    let (header, notes_at) = header(q, &found, offset, shown.end, page.has_more());
    let tunacode = q.tunacode && q.mode == Mode::Content;
    let mut content = if tunacode {
        let total_matches: usize = found.files.iter().map(|f| f.matches).sum();
        tunacode_header(q, total_matches, total_files, &found, &header[notes_at..])
    } else {
        header
    };
    found.ignored.push_note(&mut content);
    let (text, tuna) = (std::mem::take(&mut shown.text), std::mem::take(&mut shown.tuna));
    if tunacode {
        if !tuna.is_empty() {
            content.push_str("\n============================================================\n");
            content.push_str(tuna.trim_end());
        }
    } else if !text.is_empty() {
        content.push('\n');
        content.push_str(text.trim_end());
    }
    output_of(q, &found, shown, &page, content)
}

/// TunaCode's first lines: the count, the strategy, and the notes of this package's header
/// (paging, deadlines) after them.
fn tunacode_header(q: &Query, matches: usize, files: usize, found: &Found, notes: &str) -> String {
    let mut out = if matches == 0 {
        format!("No matches found for pattern: {}", q.search.pattern)
    } else {
        format!("Found {matches} matches for pattern: {} (in {files} files)", q.search.pattern)
    };
    let requested = match q.search_type {
        Some(t) if t != SearchType::Ripgrep => format!(" (requested: {})", t.name()),
        _ => String::new(),
    };
    out.push_str(&format!("\nStrategy: ripgrep{requested} | Candidates: {} files |", found.searched));
    // This package's notes: More: offset, Timed out, Stopped, ...
    let notes = notes.trim();
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(notes);
    }
    out
}

/// One file's blocks in TunaCode's format: a `📁 path:line` heading per block, numbered lines,
/// `▶` before a matching line and each match between `⟨` and `⟩`.
fn tunacode_blocks(q: &Query, path: &str, blocks: &[Vec<&Line>], out: &mut String) {
    for b in blocks {
        let first_match = b.iter().find(|l| l.is_match).map_or(0, |l| l.number);
        let width = b.last().map_or(1, |l| l.number.to_string().len());
        out.push_str(&format!("\n📁 {path}:{first_match}\n"));
        for l in b {
            let marker = if l.is_match { "▶   " } else { "    " };
            let text = if l.is_match { mark(q, &l.text) } else { l.text.clone() };
            let more = if l.cut { " […]" } else { "" };
            out.push_str(&format!("{marker}{:>width$}│ {text}{more}\n", l.number));
        }
    }
}

/// `text` with each match of the query between `⟨` and `⟩`.
fn mark(q: &Query, text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 8);
    let mut at = 0;
    let _ = q.search.matcher().find_iter(bytes, |m| {
        if m.start() < at || m.is_empty() {
            return true;
        }
        // The matcher works on bytes of valid UTF-8 here, at character boundaries.
        if let (Some(before), Some(hit)) = (text.get(at..m.start()), text.get(m.start()..m.end())) {
            out.push_str(before);
            out.push('⟨');
            out.push_str(hit);
            out.push('⟩');
            at = m.end();
        }
        true
    });
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// The `grep` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "grep",
    js_name: "grep",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    // Alfredo's search_files(path, regex, file_pattern).
    aliases: &[("regex", "pattern")],
    // Floyd `grep_search`
    tool_aliases: &["grep_search"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("grep.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::testing::{ctx, ws};
    use crate::engine::walk::Stop;
    use crate::error::ErrorCode;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    /// The result with `data` as a tree also when it was written as JSON text.
    fn with_data(mut out: ToolOutput) -> ToolOutput {
        out.data = out.data_value().unwrap();
        out
    }

    async fn grep(dir: &std::path::Path, args: Value) -> Result<ToolOutput> {
        (TOOL.run)(&args, &ctx(dir)).await.map(with_data)
    }

    fn query(args: Value) -> Result<Query> {
        Query::new(crate::call::args::parse(NAME, &args)?)
    }

    /// The content entries as they were built before the JSON was written directly: a
    /// `Value` tree per file (kept here as the oracle of the direct form).
    fn entries_as_tree(q: &Query, found: &Found) -> Value {
        let mut entries = Vec::new();
        let mut page_lines = 0usize;
        for f in &found.files[q.offset.min(found.files.len())..] {
            if page_lines >= q.max_results {
                break;
            }
            let (bl, kept, cut) = blocks(&f.lines, q.max_results - page_lines);
            page_lines += kept.max(1);
            let line_json = |l: &Line| {
                let mut v = json!({ "line": l.number, "text": l.text, "match": l.is_match });
                if let Some(c) = l.column {
                    v["column"] = json!(c);
                }
                if l.cut {
                    v["cut"] = json!(true);
                }
                v
            };
            entries.push(json!({
                "path": f.path,
                "matchCount": f.matches,
                "truncated": cut || f.capped || kept < f.matches,
                "blocks": bl.iter().map(|b| json!({
                    "startLine": b.first().map_or(0, |l| l.number),
                    "lines": b.iter().map(|l| line_json(l)).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            }));
        }
        Value::Array(entries)
    }

    #[test]
    fn content_json_written_directly_equals_the_tree_form_for_odd_inputs() {
        let t = ws(&[]);
        let long = format!("hit {}\n", "é\u{1F600}\"\\x".repeat(40_000));
        std::fs::write(t.path().join("long.txt"), &long).unwrap();
        // Control characters, DEL, a NUL-free escape zoo, U+2028/2029, quotes and backslashes.
        let odd = "ctx \u{1}\u{1f}\u{7f}\thit \"q\" \\ \u{2028}\u{2029} </script>\r\nafter hit\nctx\n";
        std::fs::write(t.path().join("odd \"name\"\t\u{2028}.txt"), odd).unwrap();
        // A file whose name and lines are not UTF-8 (lossy in the result).
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let name = std::ffi::OsStr::from_bytes(b"bad\xff\xfe name.txt");
            std::fs::write(t.path().join(name), b"x\nhit \xc3\x28 \xed\xa0\x80 lone\n\xffhit\n").unwrap();
        }
        let ctx = Ctx::new(t.path().to_str().unwrap()).unwrap();
        let target = args::target(&ctx, None).unwrap();
        let stop = || Stop::new(Arc::new(AtomicBool::new(false)), None);
        for args in [
            json!({"pattern": "hit", "context": 1}),
            json!({"pattern": "hit", "maxLineLength": 7, "maxResults": 3}),
            json!({"pattern": "hit", "offset": 1, "sortBy": "relevance"}),
            json!({"pattern": "hit", "directory": "."}),
        ] {
            let q = query(args.clone()).unwrap();
            let found = find(&target, &q, &stop()).unwrap();
            let oracle = entries_as_tree(&q, &found);
            let out = render(&q, found).unwrap();
            assert_eq!(out.data, Value::Null, "written as text: {args}");
            let text = out.data_json().unwrap().into_owned();
            let mut tree = out.data_value().unwrap();
            assert!(!oracle.as_array().unwrap().is_empty(), "{args}");
            tree["matches"] = oracle;
            assert_eq!(text, serde_json::to_string(&tree).unwrap(), "{args}");
        }
    }

    #[tokio::test]
    async fn content_with_merged_context() {
        let t = ws(&[("a.txt", "1\nfoo\n3\n4\nfoo\n6\n7\n8\n9\nfoo\n"), ("b/c.txt", "nothing\n")]);
        let out = grep(t.path(), json!({"pattern": "foo", "context": 1})).await.unwrap();
        let m = &out.data["matches"];
        assert_eq!(m.as_array().unwrap().len(), 1);
        let blocks = m[0]["blocks"].as_array().unwrap();
        // Lines 1-6 merge (2±1 and 5±1 touch), then 9-10.
        assert_eq!(blocks.len(), 2, "{}", out.content);
        assert_eq!(blocks[0]["startLine"], 1);
        assert_eq!(blocks[0]["lines"].as_array().unwrap().len(), 6);
        assert_eq!(blocks[1]["startLine"], 9);
        assert_eq!(out.data["totalMatches"], 3);
        assert_eq!(out.data["filesSearched"], 2);
    }

    #[tokio::test]
    async fn modes_literal_case_and_globs() {
        let t = ws(&[("a.ts", "A.b\nx\na.b\n"), ("b.js", "aXb\n"), ("c.py", "a.b\n")]);
        let out = grep(
            t.path(),
            json!({"pattern": "a.b", "literal": true, "caseInsensitive": true, "outputMode": "count"}),
        )
        .await
        .unwrap();
        assert_eq!(out.data["counts"], json!([{"path": "a.ts", "count": 2}, {"path": "c.py", "count": 1}]));
        let out = grep(t.path(), json!({"pattern": "a.b", "outputMode": "files", "include": "*.{ts,js}"}))
            .await
            .unwrap();
        assert_eq!(out.data["files"], json!(["a.ts", "b.js"]));
        let out = grep(t.path(), json!({"pattern": "a.b", "outputMode": "files", "exclude": ["*.ts"]}))
            .await
            .unwrap();
        assert_eq!(out.data["files"], json!(["b.js", "c.py"]));
        assert_eq!(out.data["ignored"]["excluded"], 1);
    }

    #[tokio::test]
    async fn gitignore_hidden_and_counts() {
        let t = ws(&[
            (".gitignore", "gen/\n"),
            ("gen/x.txt", "hit\n"),
            (".h/y.txt", "hit\n"),
            ("z.txt", "hit\n"),
        ]);
        let out = grep(t.path(), json!({"pattern": "hit", "outputMode": "files"})).await.unwrap();
        assert_eq!(out.data["files"], json!(["z.txt"]));
        assert_eq!(out.data["ignored"]["gitignore"], 1);
        assert_eq!(out.data["ignored"]["hidden"], 2);
        assert!(out.content.contains("respectGitignore"), "{}", out.content);
        let out = grep(t.path(), json!({"pattern": "hit", "outputMode": "files", "respectGitignore": false, "includeHidden": true}))
            .await
            .unwrap();
        assert_eq!(out.data["files"], json!([".h/y.txt", "gen/x.txt", "z.txt"]));
    }

    #[tokio::test]
    async fn caps_and_paging() {
        let many = "hit\n".repeat(10);
        let t = ws(&[("a.txt", &many), ("b.txt", &many), ("c.txt", "hit\n")]);
        let out = grep(t.path(), json!({"pattern": "hit", "maxPerFile": 3, "maxResults": 5})).await.unwrap();
        let m = out.data["matches"].as_array().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0]["matchCount"], 10);
        assert_eq!(m[0]["truncated"], true);
        assert_eq!(out.data["pagination"]["nextOffset"], 2);
        assert_eq!(out.data["truncated"], true);
        let out = grep(t.path(), json!({"pattern": "hit", "offset": 2})).await.unwrap();
        assert_eq!(out.data["matches"][0]["path"], "c.txt");
        assert_eq!(out.data["pagination"]["hasMore"], false);
    }

    #[tokio::test]
    async fn binary_skipped_and_long_lines_cut() {
        let long = format!("{}hit{}\n", "é".repeat(500), "x".repeat(10));
        let t = ws(&[("bin.dat", "\0\0hit\n"), ("long.txt", &long)]);
        let out = grep(t.path(), json!({"pattern": "hit", "maxLineLength": 10})).await.unwrap();
        assert_eq!(out.data["binarySkipped"], 1);
        let line = &out.data["matches"][0]["blocks"][0]["lines"][0];
        assert_eq!(line["text"], "é".repeat(10));
        assert_eq!(line["cut"], true);
        assert_eq!(line["column"], 501, "columns count characters");
    }

    #[tokio::test]
    async fn multiline_matches_span_lines() {
        let t = ws(&[("a.rs", "fn a(\n    x: u8,\n) {}\nfn b() {}\n")]);
        let out = grep(t.path(), json!({"pattern": "fn a\\([^)]*\\)", "multiline": true})).await.unwrap();
        let lines = &out.data["matches"][0]["blocks"][0]["lines"];
        assert_eq!(lines.as_array().unwrap().len(), 3, "{}", out.content);
        let out = grep(t.path(), json!({"pattern": "fn a\\(.*?\\)"})).await.unwrap();
        assert_eq!(out.data["totalFiles"], 0);
    }

    #[tokio::test]
    async fn errors() {
        let t = ws(&[("a.txt", "x\n")]);
        let e = grep(t.path(), json!({"pattern": "("})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRegex);
        let e = grep(t.path(), json!({"pattern": "x", "path": "../"})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutsideWorkspace);
        let e = grep(t.path(), json!({"pattern": "x", "path": "nope"})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        let e = grep(t.path(), json!({"pattern": 3})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = grep(t.path(), json!({"pattern": "x", "context": -1})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = grep(t.path(), json!({"pattern": "x", "include": "a["})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn cancelled_walk_returns_partial_flagged() {
        let t = ws(&[("a.txt", "hit\n"), ("b.txt", "hit\n")]);
        let ctx = Ctx::new(t.path().to_str().unwrap()).unwrap();
        let target = args::target(&ctx, None).unwrap();
        let q = query(json!({"pattern": "hit"})).unwrap();
        let stop = Stop::new(Arc::new(AtomicBool::new(true)), None);
        let found = find(&target, &q, &stop).unwrap();
        assert!(found.cancelled);
        assert!(found.files.is_empty());
        let out = with_data(render(&q, found).unwrap());
        assert_eq!(out.data["cancelled"], true);
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), Some(Instant::now()));
        let found = find(&target, &q, &stop).unwrap();
        assert!(found.timed_out);
    }

    #[tokio::test]
    async fn tunacode_style_defaults_globs_skips_and_format() {
        let t = ws(&[
            ("src/a.py", "x = 1\n# todo: one\ny = 2\nz = 3\n"),
            ("src/b.js", "// TODO two\n"),
            ("src/c.ts", "const TODO = 3\n"),
            ("src/d.txt", "TODO four\n"),
            ("src/node_modules/m.js", "// TODO dep\n"),
            ("build/gen.py", "# TODO built\n"),
            ("re.py", "a.b\naxb\n"),
        ]);
        // directory selects TunaCode's style: case-insensitive literal, 2 context lines, the
        // comma-separated globs with braces, dependency folders skipped and counted.
        let out =
            grep(t.path(), json!({"pattern": "TODO", "directory": "src", "include_files": "*.py,*.{js,ts}"}))
                .await
                .unwrap();
        let files: Vec<_> =
            out.data["matches"].as_array().unwrap().iter().map(|f| f["path"].clone()).collect();
        assert_eq!(files, [json!("src/a.py"), json!("src/b.js"), json!("src/c.ts")]);
        assert_eq!(out.data["style"], "tunacode");
        assert_eq!(out.data["strategy"], json!({"requested": null, "used": "ripgrep"}));
        assert_eq!(out.data["ignored"]["excluded"], 1, "{}", out.data["ignored"]);
        let block = &out.data["matches"][0]["blocks"][0]["lines"];
        assert_eq!(block.as_array().unwrap().len(), 4, "2 lines of context: {block}");
        assert!(
            out.content.starts_with(
                "Found 3 matches for pattern: TODO (in 3 files)\nStrategy: ripgrep | Candidates: 3 files |"
            ),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("\n📁 src/a.py:2\n    1│ x = 1\n▶   2│ # ⟨todo⟩: one\n"),
            "{}",
            out.content
        );
        // exclude_files, case_sensitive, max_results, search_type.
        let out = grep(
            t.path(),
            json!({"pattern": "TODO", "case_sensitive": true, "exclude_files": "*.ts", "maxResults": 1, "search_type": "python"}),
        )
        .await
        .unwrap();
        assert_eq!(out.data["totalMatches"], 2, "{}", out.content);
        assert_eq!(out.data["strategy"]["requested"], "python");
        assert!(out.content.contains("Strategy: ripgrep (requested: python)"), "{}", out.content);
        assert!(out.content.contains("More: offset 1."), "{}", out.content);
        // Literal unless use_regex.
        let lit = grep(t.path(), json!({"pattern": "a.b", "directory": "."})).await.unwrap();
        assert_eq!(lit.data["totalMatches"], 1);
        let re =
            grep(t.path(), json!({"pattern": "a.b", "directory": ".", "use_regex": true})).await.unwrap();
        assert_eq!(re.data["totalMatches"], 2);
        // Canonical grep keeps its defaults: case-sensitive regex, no context; dependency
        // folders are left out of every search unless asked.
        let out = grep(t.path(), json!({"pattern": "TODO"})).await.unwrap();
        assert_eq!(out.data["totalMatches"], 3);
        let all = grep(t.path(), json!({"pattern": "TODO", "includeDependencies": true})).await.unwrap();
        assert_eq!(all.data["totalMatches"], 5);
        assert!(out.data.get("style").is_none());
        assert!(out.content.starts_with("grep \"TODO\""));
        // Both spellings of one thing are refused.
        let e = grep(t.path(), json!({"pattern": "x", "path": "src", "directory": "src"})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e =
            grep(t.path(), json!({"pattern": "x", "literal": true, "use_regex": true})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = grep(t.path(), json!({"pattern": "x", "search_type": "fast"})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn the_first_match_deadline_stops_a_search_that_finds_nothing() {
        let t = ws(&[("a.txt", "no\n"), ("b.txt", "hit\n")]);
        let ctx = Ctx::new(t.path().to_str().unwrap()).unwrap();
        let target = args::target(&ctx, None).unwrap();
        let stop = || Stop::new(Arc::new(AtomicBool::new(false)), None);
        // An expired deadline with nothing found: stopped, flagged, and said.
        let q = query(json!({"pattern": "nothing", "firstMatchTimeoutMs": 0})).unwrap();
        let found = find(&target, &q, &stop()).unwrap();
        assert!(found.first_match_expired);
        assert_eq!(found.searched, 0);
        let out = with_data(render(&q, found).unwrap());
        assert_eq!(out.data["firstMatchTimedOut"], true);
        assert!(out.content.contains("first-match deadline (0 ms)"), "{}", out.content);
        // A generous one changes nothing.
        let q = query(json!({"pattern": "hit", "firstMatchTimeoutMs": 60000})).unwrap();
        let found = find(&target, &q, &stop()).unwrap();
        assert!(!found.first_match_expired);
        assert_eq!(found.files.len(), 1);
        assert_eq!(with_data(render(&q, found).unwrap()).data["firstMatchTimedOut"], false);
    }

    #[tokio::test]
    async fn relevance_puts_definitions_then_source_then_tests_then_vendored() {
        let t = ws(&[
            ("a_uses.py", "parse_config()\n"),
            ("src/b_defines.py", "def parse_config():\n    pass\n"),
            ("tests/test_c.py", "def parse_config():\n    pass\n"),
            ("vendor/d.py", "def parse_config(): pass\n"),
            ("src/e_uses.py", "x = parse_config()\n"),
            ("src/f.test.ts", "parse_config()\n"),
        ]);
        // e_uses is the most recently modified of the plain uses.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for f in ["a_uses.py", "src/f.test.ts"] {
            std::fs::File::options().write(true).open(t.path().join(f)).unwrap().set_modified(old).unwrap();
        }
        let order = |out: &ToolOutput| -> Vec<String> {
            out.data["files"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
        };
        let out = grep(
            t.path(),
            json!({"pattern": "parse_config", "sortBy": "relevance", "outputMode": "files", "includeDependencies": true}),
        )
        .await
        .unwrap();
        assert_eq!(
            order(&out),
            [
                "src/b_defines.py",
                "tests/test_c.py",
                "vendor/d.py",
                "src/e_uses.py",
                "a_uses.py",
                "src/f.test.ts"
            ]
        );
        assert_eq!(out.data["sortBy"], "relevance");
        let by_path =
            grep(t.path(), json!({"pattern": "parse_config", "outputMode": "files"})).await.unwrap();
        assert_eq!(order(&by_path)[0], "a_uses.py");
        assert!(by_path.data.get("sortBy").is_none());
        assert_eq!(path_class("src/x.py"), 0);
        assert_eq!(path_class("pkg/__tests__/x.js"), 1);
        assert_eq!(path_class("x_test.go"), 1);
        assert_eq!(path_class("node_modules/a/x.js"), 2);
        assert_eq!(path_class("static/app.min.js"), 2);
    }
}
