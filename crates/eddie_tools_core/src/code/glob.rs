//! `glob`: find files by glob pattern (`**`, `{a,b}`, `[ab]`), with excludes, the shared ignore
//! engine, and a cap. Sorted by path, or by modification time (newest first) as a true top-k
//! over every match.
//!
//! A pattern without `/` matches a file name at any depth (`*.py`); a pattern with `/` matches
//! the path below `path` (`src/**/test_*.py`, `*/index.ts`). `recursive: false` looks at the
//! top level only.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::args::lenient::{Cap, Flag, Offset, StringOrList};

use crate::code::args::{self, below_root};
use crate::code::paging::Page;
use crate::context::Ctx;
use crate::engine::index;
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{self, Entry, IgnoreCounts, Root, Stop, Visitor, WalkOptions};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "glob";
/// Default cap on returned paths.
pub const DEFAULT_MAX_RESULTS: usize = 1000;

/// The order of the paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    /// By path.
    Path,
    /// Newest first.
    Mtime,
}

struct Worker<'a> {
    includes: &'a Includes,
    root_rel: &'a str,
    sort: Sort,
    k: usize,
    paths: Vec<String>,
    /// Newest `k` (min-heap on time; ties: the larger path goes first).
    heap: BinaryHeap<Reverse<(SystemTime, Reverse<String>)>>,
    total: usize,
}

impl Visitor for Worker<'_> {
    fn visit(&mut self, e: &Entry<'_>, _: &Stop) -> bool {
        if self.includes.matches(below_root(e.rel, self.root_rel)) {
            self.take(e.path, e.rel);
        }
        true
    }
}

impl Worker<'_> {
    fn take(&mut self, path: &std::path::Path, rel: &str) {
        self.total += 1;
        match self.sort {
            Sort::Path => self.paths.push(rel.to_owned()),
            Sort::Mtime => {
                let t = std::fs::symlink_metadata(path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                let item = Reverse((t, Reverse(rel.to_owned())));
                if self.heap.len() < self.k {
                    self.heap.push(item);
                } else if self.heap.peek().is_some_and(|min| item < *min) {
                    self.heap.pop();
                    self.heap.push(item);
                }
            }
        }
    }
}

/// Literal leading directories of a path pattern (`src/lib/**/*.rs` → `src/lib`): whole
/// components without glob metacharacters, `.` or `..`, before the last one. Every path the
/// pattern matches lies below them, so the walk starts there. None when matching ignores case
/// (`SRC/*` matches `src/a`, which is not below `SRC` on a case-sensitive file system).
pub fn literal_prefix(pattern: &str, case_insensitive: bool) -> String {
    if case_insensitive || !pattern.contains('/') {
        return String::new();
    }
    let comps: Vec<&str> = pattern.split('/').collect();
    let mut out = Vec::new();
    for c in &comps[..comps.len() - 1] {
        if c.is_empty() || c.contains(['*', '?', '[', '{', '\\']) || *c == "." || *c == ".." {
            break;
        }
        out.push(*c);
    }
    out.join("/")
}

/// The arguments of `glob`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Glob pattern, e.g. "**/*.ts", "*.{js,ts,jsx,tsx}", "src/**/test_*.py".
    pub pattern: String,
    /// Directory to search, relative to the workspace (default ".").
    pub path: Option<String>,
    /// Skip paths matching these patterns (gitignore syntax): "__pycache__", "**/node_modules/**", "*.min.js".
    pub exclude: Option<StringOrList>,
    /// Include dot-files and dot-directories (default false; .git is never searched).
    pub include_hidden: Option<Flag>,
    /// Search dependency folders too: node_modules, .venv, venv, __pycache__, dist, build, target, vendor, ... (default false, unless path or the pattern's leading folders are inside one).
    pub include_dependencies: Option<Flag>,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: Option<Flag>,
    /// Descend into subdirectories (default true).
    pub recursive: Option<Flag>,
    /// Match names ignoring case (default false).
    pub case_insensitive: Option<Flag>,
    /// path (default) or mtime (newest first).
    pub sort_by: Option<Sort>,
    /// Most paths returned (default 1000).
    pub max_results: Option<Cap<1_000_000>>,
    /// Paths to skip (from pagination.nextOffset).
    pub offset: Option<Offset>,
}

/// A glob, parsed from the arguments.
struct Query {
    pattern: String,
    path: String,
    exclude: Vec<String>,
    include_hidden: bool,
    include_dependencies: Option<bool>,
    respect_gitignore: bool,
    recursive: bool,
    case_insensitive: bool,
    max_results: usize,
    offset: usize,
    sort: Sort,
}

impl Query {
    fn new(a: Args) -> Result<Self> {
        let pattern = args::non_empty(NAME, "pattern", a.pattern)?;
        Ok(Self {
            pattern: pattern.strip_prefix("./").unwrap_or(&pattern).to_owned(),
            path: a.path.unwrap_or_else(|| ".".to_owned()),
            exclude: args::globs(a.exclude),
            include_hidden: Flag::or(a.include_hidden, false),
            include_dependencies: Flag::get(a.include_dependencies),
            respect_gitignore: Flag::or(a.respect_gitignore, true),
            recursive: Flag::or(a.recursive, true),
            case_insensitive: Flag::or(a.case_insensitive, false),
            max_results: Cap::or(a.max_results, DEFAULT_MAX_RESULTS),
            offset: Offset::or(a.offset, 0),
            sort: a.sort_by.unwrap_or(Sort::Path),
        })
    }
}

/// The directory the walk starts in: below the pattern's literal leading directories
/// (`prefix`), which are a path like any other: they go through the workspace resolver, so a
/// symlink among them that points outside is refused, not walked.
fn start_of(ctx: &Ctx, q: &Query, target: &args::Target) -> Result<(String, std::path::PathBuf)> {
    let prefix = literal_prefix(&q.pattern, q.case_insensitive);
    if prefix.is_empty() {
        return Ok((prefix, target.root.real.clone()));
    }
    let rel =
        if target.root.rel.is_empty() { prefix.clone() } else { format!("{}/{prefix}", target.root.rel) };
    let outside = || {
        crate::ToolError::new(
            crate::ErrorCode::OutsideWorkspace,
            format!(
                "Path is outside the workspace: {rel} (the directory pattern {} starts in; a symlink there leads out of the workspace)",
                q.pattern
            ),
        )
    };
    Ok((prefix, ctx.workspace.resolve_with(&rel, outside)?.real))
}

/// What a glob found: the paths (sorted, top `k` when by time), the total, what was ignored,
/// and how the index took part.
type Found = (Vec<String>, usize, IgnoreCounts, index::Report);

/// Find the matching files (blocking): through the name index of `path` when it holds the
/// directory the walk starts in, else by walking.
fn find(
    q: &Query,
    target: &args::Target,
    includes: &Includes,
    (prefix, prefix_real): (String, std::path::PathBuf),
    stop: &Stop,
) -> Result<Found> {
    if target.file.is_some() {
        return Err(crate::ToolError::new(
            crate::ErrorCode::NotADirectory,
            format!("ENOTDIR: not a directory, scandir '{}'", target.root.real.display()),
        ));
    }
    let k = q.offset.saturating_add(q.max_results);
    let root_rel = target.root.rel.clone();
    // Start below the literal directories of the pattern; a missing one matches nothing.
    let mut root = Root { real: prefix_real, rel: root_rel.clone() };
    if !prefix.is_empty() {
        root.rel = if root_rel.is_empty() { prefix.clone() } else { format!("{root_rel}/{prefix}") };
        if !root.real.is_dir() {
            return Ok((Vec::new(), 0, IgnoreCounts::default(), index::Report::unsupported()));
        }
    }
    let mut max_depth = if q.recursive { None } else { Some(1) };
    if q.pattern.contains('/') && !q.pattern.contains("**") {
        let depth = q.pattern.split('/').count() - prefix.split('/').filter(|s| !s.is_empty()).count();
        max_depth = Some(max_depth.map_or(depth, |d: usize| d.min(depth)));
    }
    let skip_dependency_dirs = walk::skips_dependencies(q.include_dependencies, &root.rel);
    let make = || Worker {
        includes,
        root_rel: &root_rel,
        sort: q.sort,
        k,
        paths: Vec::new(),
        heap: BinaryHeap::new(),
        total: 0,
    };
    let mut report = index::Report::unsupported();
    let mut indexed = None;
    if q.exclude.is_empty() && !stop.should_stop() {
        let key = index::Key {
            skip_dependency_dirs,
            ..index::Key::new(
                target.workspace_real.clone(),
                target.root.real.clone(),
                root_rel.clone(),
                q.respect_gitignore,
                q.include_hidden,
            )
        };
        let suffixes = index::name_suffixes(&q.pattern, q.case_insensitive);
        // A name pattern that is only `*` and its suffixes (`*.js`, `*.{js,mjs,cjs}`) matches
        // exactly the names the name table finds for them: no glob to run per path.
        let decided = suffixes.is_some() && !q.pattern.contains('/');
        let keep = |rel: &str| decided || includes.matches(below_root(rel, &root_rel));
        let (names, rep) = index::names(&key, &root.rel, max_depth, suffixes.as_deref(), &keep);
        report = rep;
        indexed = names.map(|n| {
            let mut w = make();
            if q.sort == Sort::Path {
                w.total = n.files.len();
                w.paths = n.files;
            } else {
                for rel in &n.files {
                    w.take(&key.path_of(rel), rel);
                }
            }
            (vec![w], IgnoreCounts::from_parts(n.ignored))
        });
    }
    // The name index's files come sorted by path already.
    let sorted = indexed.is_some();
    let (workers, ignored) = match indexed {
        Some(x) => x,
        None => {
            let opts = WalkOptions {
                respect_gitignore: q.respect_gitignore,
                include_hidden: q.include_hidden,
                max_depth,
                exclude: walk::excludes(&target.root.real, &q.exclude)?,
                skip_dependency_dirs,
                ..Default::default()
            };
            walk::walk(&target.workspace_real, &root, &opts, stop, make)?
        }
    };
    let total = workers.iter().map(|w| w.total).sum::<usize>();
    Ok((ordered(workers, q.sort, k, sorted), total, ignored, report))
}

/// The workers' paths in order: by path (`sorted`: they are already), or the newest `k`.
fn ordered(workers: Vec<Worker<'_>>, sort: Sort, k: usize, sorted: bool) -> Vec<String> {
    match sort {
        Sort::Path => {
            let mut all: Vec<String> = workers.into_iter().flat_map(|w| w.paths).collect();
            if !sorted {
                all.sort_unstable();
            }
            all
        }
        Sort::Mtime => {
            let mut all: Vec<(SystemTime, Reverse<String>)> =
                workers.into_iter().flat_map(|w| w.heap.into_iter().map(|Reverse(x)| x)).collect();
            all.sort_unstable_by(|a, b| b.cmp(a));
            all.truncate(k);
            all.into_iter().map(|(_, Reverse(p))| p).collect()
        }
    }
}

/// Build the result: the page from `offset`.
fn render(q: &Query, found: Found, cancelled: bool) -> ToolOutput {
    let (mut files, total, ignored, report) = found;
    let start = q.offset.min(files.len());
    let end = (start + q.max_results).min(files.len());
    let page: Vec<String> = files.drain(start..end).collect();
    let paging = Page { offset: start, limit: q.max_results, returned: end - start, total };
    let has_more = paging.has_more();
    let mut content = format!(
        "glob {:?} in {}: {total} files{}",
        q.pattern,
        q.path,
        if page.len() < total {
            format!(
                "; showing {}-{} by {}",
                start + 1,
                end,
                if q.sort == Sort::Mtime { "newest first" } else { "path" }
            )
        } else {
            String::new()
        }
    );
    content.push('.');
    if has_more {
        content.push_str(&format!(" More: offset {end}."));
    }
    if cancelled {
        content.push_str(" Cancelled: results are partial.");
    }
    ignored.push_note(&mut content);
    for p in &page {
        content.push('\n');
        content.push_str(p);
    }
    let mut data = json!({
        "pattern": q.pattern,
        "path": q.path,
        "sortBy": if q.sort == Sort::Mtime { "mtime" } else { "path" },
        "files": null,
        "totalFiles": total,
        "truncated": has_more,
        "cancelled": cancelled,
        "ignored": ignored.to_json(),
        "pagination": paging.to_json(),
        "index": report.to_json(),
    });
    // Moved in, not copied as `json!` would copy each path (the key keeps its place).
    data["files"] = serde_json::Value::Array(page.into_iter().map(serde_json::Value::String).collect());
    ToolOutput::new(content, data)
}

/// Run the tool.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let q = Query::new(a)?;
    let includes = Includes::new(std::slice::from_ref(&q.pattern), q.case_insensitive)?;
    let target = args::target(ctx, Some(&q.path))?;
    let start = start_of(ctx, &q, &target)?;
    let stop = Stop::new(ctx.cancel.flag(), None);
    let (found, q) = crate::blocking("glob", move || {
        let found = find(&q, &target, &includes, start, &stop)?;
        Ok((found, q))
    })
    .await?;
    Ok(render(&q, found, ctx.cancel.is_cancelled()))
}

/// The `glob` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "glob",
    js_name: "glob",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    // TunaCode's `glob(pattern, directory, exclude_dirs=[...])`.
    aliases: &[("directory", "path"), ("exclude_dirs", "exclude")],
    // Stack `search`, Floyd `search_files`
    tool_aliases: &["search", "search_files"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("glob.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::testing::{self, ctx};
    use crate::error::ErrorCode;

    fn ws(files: &[&str]) -> tempfile::TempDir {
        testing::ws(&files.iter().map(|p| (*p, "x")).collect::<Vec<_>>())
    }

    async fn glob(dir: &std::path::Path, args: serde_json::Value) -> Result<ToolOutput> {
        (TOOL.run)(&args, &ctx(dir)).await
    }

    #[tokio::test]
    async fn patterns() {
        let t = ws(&["a.ts", "b.js", "src/c.ts", "src/d/e.tsx", "src/test_x.py", "lib/test_y.py", ".h/f.ts"]);
        let files = |o: &ToolOutput| o.data["files"].clone();
        let o = glob(t.path(), json!({"pattern": "*.ts"})).await.unwrap();
        assert_eq!(files(&o), json!(["a.ts", "src/c.ts"]));
        let o = glob(t.path(), json!({"pattern": "**/*.{ts,tsx}"})).await.unwrap();
        assert_eq!(files(&o), json!(["a.ts", "src/c.ts", "src/d/e.tsx"]));
        assert_eq!(o.data["ignored"]["hidden"], 1);
        let o = glob(t.path(), json!({"pattern": "src/**/test_*.py"})).await.unwrap();
        assert_eq!(files(&o), json!(["src/test_x.py"]));
        let o = glob(t.path(), json!({"pattern": "*/*.ts", "includeHidden": true})).await.unwrap();
        assert_eq!(files(&o), json!([".h/f.ts", "src/c.ts"]));
        let o = glob(t.path(), json!({"pattern": "*.ts", "recursive": false})).await.unwrap();
        assert_eq!(files(&o), json!(["a.ts"]));
        let o = glob(t.path(), json!({"pattern": "**/*.ts", "exclude": ["src"]})).await.unwrap();
        assert_eq!(files(&o), json!(["a.ts"]));
        // Anchored excludes stay anchored at `path` when the walk starts below it.
        let o = glob(t.path(), json!({"pattern": "src/**/*.tsx", "exclude": ["src/d/"]})).await.unwrap();
        assert_eq!(files(&o), json!([]));
        assert_eq!(o.data["ignored"]["excluded"], 1);
        let o = glob(t.path(), json!({"pattern": "*.ts", "path": "src"})).await.unwrap();
        assert_eq!(files(&o), json!(["src/c.ts"]));
    }

    #[tokio::test]
    async fn a_case_insensitive_pattern_finds_differently_cased_directories() {
        // Found by tests/parsers.rs (literal_prefix_is_a_sound_start): the walk started in the
        // pattern's literal `SRC`, which does not exist, so `src/c.ts` was never seen.
        let t = ws(&["src/c.ts", "src/d/e.ts", "lib/f.ts"]);
        let o = glob(t.path(), json!({"pattern": "SRC/*.ts", "caseInsensitive": true})).await.unwrap();
        assert_eq!(o.data["files"], json!(["src/c.ts"]));
        let o = glob(t.path(), json!({"pattern": "SRC/*.ts"})).await.unwrap();
        assert_eq!(o.data["files"], json!([]));
    }

    #[tokio::test]
    async fn a_symlinked_literal_prefix_outside_is_refused() {
        let outside = ws(&["secret.txt", "deep/inner.txt"]);
        let t = ws(&["in/ok.txt"]);
        std::os::unix::fs::symlink(outside.path(), t.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("in/link")).unwrap();
        for (pattern, path) in [
            ("link/*", "."),
            ("link/**", "."),
            ("link/deep/*.txt", "."),
            ("./link/**/*.txt", "."),
            ("link/*", "in"),
        ] {
            let err = glob(t.path(), json!({"pattern": pattern, "path": path})).await.unwrap_err();
            assert_eq!(err.code(), ErrorCode::OutsideWorkspace, "{pattern} in {path}");
        }
        // A symlink inside the workspace that stays inside is walked as before.
        std::os::unix::fs::symlink(t.path().join("in"), t.path().join("alias")).unwrap();
        let o = glob(t.path(), json!({"pattern": "alias/*.txt"})).await.unwrap();
        assert_eq!(o.data["files"], json!(["alias/ok.txt"]));
    }

    #[tokio::test]
    async fn cap_and_mtime_top_k() {
        let t = ws(&["a.txt", "b.txt", "c.txt"]);
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for (i, n) in ["c.txt", "a.txt"].iter().enumerate() {
            let f = std::fs::File::options().write(true).open(t.path().join(n)).unwrap();
            f.set_modified(old - std::time::Duration::from_secs(i as u64 * 60)).unwrap();
        }
        let o =
            glob(t.path(), json!({"pattern": "*.txt", "sortBy": "mtime", "maxResults": 2})).await.unwrap();
        assert_eq!(o.data["files"], json!(["b.txt", "c.txt"]));
        assert_eq!(o.data["totalFiles"], 3);
        assert_eq!(o.data["pagination"]["nextOffset"], 2);
        let o = glob(t.path(), json!({"pattern": "*.txt", "maxResults": 2, "offset": 2})).await.unwrap();
        assert_eq!(o.data["files"], json!(["c.txt"]));
    }

    #[tokio::test]
    async fn errors() {
        let t = ws(&["a.txt"]);
        assert_eq!(glob(t.path(), json!({})).await.unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(
            glob(t.path(), json!({"pattern": "a["})).await.unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            glob(t.path(), json!({"pattern": "*", "path": "/etc"})).await.unwrap_err().code(),
            ErrorCode::OutsideWorkspace
        );
        assert_eq!(
            glob(t.path(), json!({"pattern": "*", "path": "a.txt"})).await.unwrap_err().code(),
            ErrorCode::NotADirectory
        );
        assert_eq!(
            glob(t.path(), json!({"pattern": "*", "sortBy": "size"})).await.unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}
