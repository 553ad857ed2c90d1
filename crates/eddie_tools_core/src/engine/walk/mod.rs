//! The one ignore engine (used by the code, eddie and files tools, the search engine and the
//! index): a parallel directory walker that honours
//! `.gitignore` / `.ignore` files (and `.git/info/exclude`), hides dot-files unless asked, applies
//! the caller's exclude patterns, and **counts** every entry it hides, per reason.
//!
//! The `ignore` crate's walker applies the same rules but cannot report what it skipped, so the
//! walk loop lives here; the gitignore pattern semantics are the crate's own
//! ([`ignore::gitignore`]). Counts are of entries seen in a listed directory: an ignored
//! directory counts once, whatever it holds.
//!
//! Symlinks are never followed and never visited (a link could lead out of the workspace).
//! `.git` directories are never entered (counted as hidden).

pub mod globs;
pub mod tree;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde_json::{Value, json};

use crate::error::{Result, ToolError};

/// What to hide.
#[derive(Debug, Clone, Default)]
pub struct WalkOptions {
    /// Honour `.gitignore`, `.ignore` and `.git/info/exclude` (from the workspace root down).
    pub respect_gitignore: bool,
    /// Visit names starting with `.` (except `.git`).
    pub include_hidden: bool,
    /// Deepest level visited: 1 = the root's children only. `None` = unlimited.
    pub max_depth: Option<usize>,
    /// The caller's exclude patterns (gitignore syntax, rooted at the search root).
    pub exclude: Option<Arc<Gitignore>>,
    /// Skip the dependency directories of `@eddie/tools` (`node_modules`, `dist`, ...), counted
    /// as excluded.
    pub skip_dependency_dirs: bool,
    /// Also call the visitor for directories (files only otherwise).
    pub visit_dirs: bool,
    /// Enter `.git` directories when hidden entries are included (listings only).
    pub keep_git: bool,
    /// Also visit symlinks (never followed) and special files, as non-directories (listings).
    pub list_all: bool,
    /// A directory below the root that cannot be listed fails the walk (with its `scandir`
    /// error) instead of being skipped.
    pub strict: bool,
    /// Walk on the calling thread, depth first, each directory's entries in byte order of
    /// their names (a directory's contents right after it): a deterministic visiting order.
    pub sorted: bool,
}

/// Why entries were hidden, counted during one walk.
#[derive(Debug, Default)]
pub struct IgnoreCounts {
    gitignore: AtomicUsize,
    hidden: AtomicUsize,
    excluded: AtomicUsize,
    dependencies: AtomicUsize,
}

/// What a walk hid, per reason: (gitignore, hidden, excluded by patterns, dependency folders).
pub type Parts = (usize, usize, usize, usize);

impl IgnoreCounts {
    /// Counts found another way (the index, `project_map`'s tree walk).
    pub fn from_parts((gitignore, hidden, excluded, dependencies): Parts) -> Self {
        Self {
            gitignore: AtomicUsize::new(gitignore),
            hidden: AtomicUsize::new(hidden),
            excluded: AtomicUsize::new(excluded),
            dependencies: AtomicUsize::new(dependencies),
        }
    }

    /// `{total, gitignore, hidden, excluded}` (`excluded`: by the exclude patterns and as
    /// dependency folders).
    pub fn to_json(&self) -> Value {
        let (g, h, e) = self.parts();
        json!({ "total": g + h + e, "gitignore": g, "hidden": h, "excluded": e })
    }

    /// (gitignore, hidden, excluded by patterns or as dependency folders).
    pub fn parts(&self) -> (usize, usize, usize) {
        let (g, h, e, d) = self.all_parts();
        (g, h, e + d)
    }

    fn all_parts(&self) -> Parts {
        (
            self.gitignore.load(Ordering::Relaxed),
            self.hidden.load(Ordering::Relaxed),
            self.excluded.load(Ordering::Relaxed),
            self.dependencies.load(Ordering::Relaxed),
        )
    }

    /// One line for the model, empty when nothing was hidden.
    pub fn note(&self) -> String {
        let (g, h, e, d) = self.all_parts();
        if g + h + e + d == 0 {
            return String::new();
        }
        let mut parts = Vec::new();
        if g > 0 {
            parts.push(format!("{g} by .gitignore/.ignore (respectGitignore: false to include)"));
        }
        if h > 0 {
            parts.push(format!("{h} hidden (includeHidden: true to include)"));
        }
        if e > 0 {
            parts.push(format!("{e} by exclude patterns"));
        }
        if d > 0 {
            parts.push(format!(
                "{d} dependency {} such as node_modules (includeDependencies: true to include)",
                if d == 1 { "folder" } else { "folders" }
            ));
        }
        let n = g + h + e + d;
        format!(
            "Not searched: {n} {} hidden — {}.",
            if n == 1 { "entry" } else { "entries" },
            parts.join(", ")
        )
    }

    /// Add the [`note`](Self::note) to `content` on a line of its own, when there is one.
    pub fn push_note(&self, content: &mut String) {
        let note = self.note();
        if !note.is_empty() {
            content.push('\n');
            content.push_str(&note);
        }
    }
}

/// When a walk must stop: the caller's cancel flag, a deadline, or a visitor's `Quit`.
#[derive(Debug)]
pub struct Stop {
    cancel: Arc<AtomicBool>,
    deadline: Option<Instant>,
    quit: AtomicBool,
    timed_out: AtomicBool,
}

impl Stop {
    /// A stop watching `cancel` and an optional deadline.
    pub fn new(cancel: Arc<AtomicBool>, deadline: Option<Instant>) -> Self {
        Self { cancel, deadline, quit: AtomicBool::new(false), timed_out: AtomicBool::new(false) }
    }

    /// Whether work should stop now.
    pub fn should_stop(&self) -> bool {
        if self.quit.load(Ordering::Relaxed) || self.cancel.load(Ordering::Relaxed) {
            return true;
        }
        if let Some(d) = self.deadline
            && Instant::now() >= d
        {
            self.timed_out.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Ask every worker to stop (a cap was reached).
    pub fn quit(&self) {
        self.quit.store(true, Ordering::Relaxed);
    }

    /// Whether the caller cancelled.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Whether the deadline passed.
    pub fn timed_out(&self) -> bool {
        self.timed_out.load(Ordering::Relaxed)
    }

    /// Whether a visitor asked to stop.
    pub fn quitted(&self) -> bool {
        self.quit.load(Ordering::Relaxed)
    }
}

/// One visited entry.
#[derive(Debug)]
pub struct Entry<'a> {
    /// The real path (for opening).
    pub path: &'a Path,
    /// Workspace-relative POSIX path (for output).
    pub rel: &'a str,
    /// 1 for the root's children.
    pub depth: usize,
    /// A directory (only when `visit_dirs`).
    pub is_dir: bool,
    /// Its type, as listed (a symlink is not followed).
    pub file_type: std::fs::FileType,
}

/// Called for every visited entry, on the worker threads; one visitor per thread.
pub trait Visitor: Send {
    /// Visit; return `false` to stop the whole walk.
    fn visit(&mut self, entry: &Entry<'_>, stop: &Stop) -> bool;

    /// An entry of the directory `parent_rel` (at `depth`, 0 for the root) was hidden, for
    /// `why`. Called where the walk counts it (the index records these to count a sub-walk).
    fn hidden(&mut self, _parent_rel: &str, _depth: usize, _why: Hidden) {}
}

/// Why an entry was hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// `.gitignore`, `.ignore` or `.git/info/exclude`.
    Gitignore,
    /// A dot-file (or `.git`).
    Dot,
    /// The caller's exclude patterns.
    Excluded,
    /// A dependency directory ([`DEPENDENCY_DIRS`]).
    Dependency,
}

/// Ignore files along the path from the workspace root: each level holds the matchers of
/// one directory (`.ignore` before `.gitignore`: it wins, as in ripgrep).
#[derive(Debug, Default)]
struct Chain {
    here: Vec<Gitignore>,
    parent: Option<Arc<Chain>>,
}

impl Chain {
    fn ignored(self: &Arc<Self>, path: &Path, is_dir: bool) -> bool {
        let mut node = Some(self);
        while let Some(n) = node {
            for gi in &n.here {
                let m = gi.matched(path, is_dir);
                if m.is_ignore() {
                    return true;
                }
                if m.is_whitelist() {
                    return false;
                }
            }
            node = n.parent.as_ref();
        }
        false
    }
}

/// The ignore files of directory `dir` (real path), given which of them exist.
fn load_ignores(dir: &Path, has_ignore: bool, has_gitignore: bool, has_git: bool) -> Vec<Gitignore> {
    let mut out = Vec::new();
    let mut add = |files: &[PathBuf]| {
        let mut b = GitignoreBuilder::new(dir);
        for f in files {
            // A malformed line is skipped (as git does); the rest of the file still applies.
            let _ = b.add(f);
        }
        if let Ok(gi) = b.build()
            && !gi.is_empty()
        {
            out.push(gi);
        }
    };
    if has_ignore {
        add(&[dir.join(".ignore")]);
    }
    let mut git_files = Vec::new();
    if has_gitignore {
        git_files.push(dir.join(".gitignore"));
    }
    if has_git {
        let exclude = dir.join(".git/info/exclude");
        if exclude.is_file() {
            git_files.push(exclude);
        }
    }
    if !git_files.is_empty() {
        add(&git_files);
    }
    out
}

struct Job {
    path: PathBuf,
    rel: String,
    depth: usize,
    chain: Arc<Chain>,
}

struct Queue {
    state: Mutex<(Vec<Job>, usize)>,
    cv: Condvar,
}

impl Queue {
    fn pop(&self, stop: &Stop) -> Option<Job> {
        let mut g = self.state.lock().ok()?;
        loop {
            if stop.should_stop() {
                g.0.clear();
            }
            if let Some(job) = g.0.pop() {
                g.1 += 1;
                return Some(job);
            }
            if g.1 == 0 {
                self.cv.notify_all();
                return None;
            }
            g = self.cv.wait(g).ok()?;
        }
    }

    fn push_and_finish(&self, jobs: Vec<Job>) {
        if let Ok(mut g) = self.state.lock() {
            let n = jobs.len();
            g.0.extend(jobs);
            g.1 -= 1;
            if n > 1 || (g.1 == 0 && g.0.is_empty()) {
                self.cv.notify_all();
            } else if n == 1 {
                self.cv.notify_one();
            }
        }
    }
}

/// Where a walk starts.
pub struct Root {
    /// The real path of the directory.
    pub real: PathBuf,
    /// Its workspace-relative POSIX path (`""` for the workspace root).
    pub rel: String,
}

/// A resolved search path: the walk root, or a single file.
pub struct Target {
    /// Where to walk (for a file: its parent; unused).
    pub root: Root,
    /// `Some((real path, workspace-relative path))` when the path is a regular file.
    pub file: Option<(PathBuf, String)>,
    /// The real workspace root.
    pub workspace_real: PathBuf,
}

/// Path of `rel` (workspace-relative) relative to the search root `root_rel`.
pub fn below_root<'a>(rel: &'a str, root_rel: &str) -> &'a str {
    if root_rel.is_empty() {
        return rel;
    }
    rel.strip_prefix(root_rel).and_then(|r| r.strip_prefix('/')).unwrap_or(rel)
}

/// The chain of ignore files above `root` (from the workspace root down to its parent).
fn ancestor_chain(workspace_real: &Path, root: &Path, opts: &WalkOptions) -> Arc<Chain> {
    let mut chain = Arc::new(Chain::default());
    if !opts.respect_gitignore {
        return chain;
    }
    let Ok(below) = root.strip_prefix(workspace_real) else { return chain };
    let mut dir = workspace_real.to_path_buf();
    let mut levels = vec![dir.clone()];
    let comps: Vec<_> = below.components().collect();
    for c in comps.iter().take(comps.len().saturating_sub(1)) {
        dir.push(c);
        levels.push(dir.clone());
    }
    if below.as_os_str().is_empty() {
        return chain;
    }
    for d in levels {
        let here = load_ignores(
            &d,
            d.join(".ignore").is_file(),
            d.join(".gitignore").is_file(),
            d.join(".git").is_dir(),
        );
        if !here.is_empty() {
            chain = Arc::new(Chain { here, parent: Some(chain) });
        }
    }
    chain
}

/// The ignore rules as a filter for the tree engine ([`crate::engine::walk::tree`], used by
/// `project_map`): entries matched by `.gitignore`/`.ignore`/`.git/info/exclude` are left out
/// and counted, and `.git` directories are never listed.
#[derive(Debug)]
pub struct GitignoreFilter {
    workspace_real: PathBuf,
    respect_gitignore: bool,
    gitignored: AtomicUsize,
    git_dirs: AtomicUsize,
}

/// The ignore files that apply inside one directory.
pub struct IgnoreScope(Arc<Chain>);

impl GitignoreFilter {
    /// Rules from `workspace_real` down; with `respect_gitignore` false only `.git` is left out.
    pub fn new(workspace_real: &Path, respect_gitignore: bool) -> Self {
        Self {
            workspace_real: workspace_real.to_path_buf(),
            respect_gitignore,
            gitignored: AtomicUsize::new(0),
            git_dirs: AtomicUsize::new(0),
        }
    }

    /// (entries hidden by ignore files, `.git` directories left out).
    pub fn counts(&self) -> (usize, usize) {
        (self.gitignored.load(Ordering::Relaxed), self.git_dirs.load(Ordering::Relaxed))
    }
}

impl crate::engine::walk::tree::TreeFilter for GitignoreFilter {
    type Scope = IgnoreScope;

    fn scope(&self, dir: &Path, parent: Option<&IgnoreScope>) -> IgnoreScope {
        if !self.respect_gitignore {
            return IgnoreScope(Arc::new(Chain::default()));
        }
        let base = match parent {
            Some(p) => Arc::clone(&p.0),
            None => {
                let opts = WalkOptions { respect_gitignore: true, ..Default::default() };
                ancestor_chain(&self.workspace_real, dir, &opts)
            }
        };
        let here = load_ignores(
            dir,
            dir.join(".ignore").is_file(),
            dir.join(".gitignore").is_file(),
            dir.join(".git").is_dir(),
        );
        IgnoreScope(if here.is_empty() { base } else { Arc::new(Chain { here, parent: Some(base) }) })
    }

    fn keep(&self, scope: &IgnoreScope, dir: &Path, name: &std::ffi::OsStr, is_dir: bool) -> bool {
        if is_dir && name == ".git" {
            self.git_dirs.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        if self.respect_gitignore && scope.0.ignored(&dir.join(name), is_dir) {
            self.gitignored.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// Number of walker threads.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 12)
}

/// Walk `root` in parallel. Returns the visitors (one per thread) and the ignore counts.
/// A directory that cannot be listed is skipped (counted nowhere) unless it is the root.
pub fn walk<V: Visitor, F: Fn() -> V + Sync>(
    workspace_real: &Path,
    root: &Root,
    opts: &WalkOptions,
    stop: &Stop,
    make: F,
) -> Result<(Vec<V>, IgnoreCounts)> {
    std::fs::read_dir(&root.real).map_err(|e| ToolError::fs(&e, "scandir", Some(&root.real)))?;
    let counts = IgnoreCounts::default();
    let queue = Queue {
        state: Mutex::new((
            vec![Job {
                path: root.real.clone(),
                rel: root.rel.clone(),
                depth: 0,
                chain: ancestor_chain(workspace_real, &root.real, opts),
            }],
            0,
        )),
        cv: Condvar::new(),
    };
    let failure: Mutex<Option<ToolError>> = Mutex::new(None);
    let walker = Walker { opts, stop, counts: &counts, failure: &failure };
    if opts.sorted {
        let mut v = make();
        let root_job = queue.state.into_inner().ok().and_then(|mut q| q.0.pop());
        let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(job) = root_job {
                walker.walk_sorted(job, &mut v);
            }
        }));
        if walked.is_err() {
            return Err(ToolError::internal("the walker panicked"));
        }
        return match failure.into_inner().ok().flatten() {
            Some(e) => Err(e),
            None => Ok((vec![v], counts)),
        };
    }
    let n = threads();
    let panicked = AtomicBool::new(false);
    let visitors = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    let mut v = make();
                    while let Some(job) = queue.pop(stop) {
                        // A panicking visitor must not leave the other workers waiting for a
                        // directory that will never be finished.
                        let listed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            walker.list_dir(job, &mut v)
                        }));
                        let next = listed.unwrap_or_else(|_| {
                            panicked.store(true, Ordering::Relaxed);
                            stop.quit();
                            Vec::new()
                        });
                        queue.push_and_finish(next);
                    }
                    v
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect::<Vec<V>>()
    });
    if visitors.len() != n || panicked.load(Ordering::Relaxed) {
        return Err(ToolError::internal("a walker thread panicked"));
    }
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    Ok((visitors, counts))
}

/// One walk's shared state.
struct Walker<'a> {
    opts: &'a WalkOptions,
    stop: &'a Stop,
    counts: &'a IgnoreCounts,
    /// The first error of a [`WalkOptions::strict`] walk.
    failure: &'a Mutex<Option<ToolError>>,
}

impl Walker<'_> {
    /// List one directory (in parallel walks): visit its entries; the directories to enter.
    fn list_dir<V: Visitor>(&self, job: Job, v: &mut V) -> Vec<Job> {
        let mut jobs = Vec::new();
        let Some((chain, entries)) = self.read_entries(&job) else { return jobs };
        let mut path = job.path.clone();
        for (name, ft) in entries {
            path.push(&name);
            if let Some(next) = self.admit(&job, &chain, &name, ft, &path, v) {
                jobs.push(next);
            }
            path.pop();
        }
        jobs
    }

    /// [`WalkOptions::sorted`]: list one directory and, depth first, what it holds.
    fn walk_sorted<V: Visitor>(&self, job: Job, v: &mut V) {
        if self.stop.should_stop() {
            return;
        }
        let Some((chain, entries)) = self.read_entries(&job) else { return };
        let mut path = job.path.clone();
        for (name, ft) in entries {
            path.push(&name);
            let next = self.admit(&job, &chain, &name, ft, &path, v);
            path.pop();
            if let Some(next) = next {
                self.walk_sorted(next, v);
            }
        }
    }

    /// The entries of `job`'s directory (by name in sorted walks) and the ignore chain that
    /// applies inside it; `None` when it cannot be listed.
    #[allow(clippy::type_complexity)]
    fn read_entries(&self, job: &Job) -> Option<(Arc<Chain>, Vec<(std::ffi::OsString, std::fs::FileType)>)> {
        let opts = self.opts;
        let read = match std::fs::read_dir(&job.path) {
            Ok(read) => read,
            Err(e) => {
                if opts.strict {
                    if let Ok(mut slot) = self.failure.lock() {
                        slot.get_or_insert_with(|| ToolError::fs(&e, "scandir", Some(&job.path)));
                    }
                    self.stop.quit();
                }
                return None;
            }
        };
        let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> = Vec::new();
        let (mut has_ignore, mut has_gitignore, mut has_git) = (false, false, false);
        for e in read.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let name = e.file_name();
            match name.as_encoded_bytes() {
                b".ignore" => has_ignore = true,
                b".gitignore" => has_gitignore = true,
                b".git" => has_git = true,
                _ => {}
            }
            entries.push((name, ft));
        }
        if opts.sorted {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        let chain = if opts.respect_gitignore && (has_ignore || has_gitignore || has_git) {
            let here = load_ignores(&job.path, has_ignore, has_gitignore, has_git);
            if here.is_empty() {
                Arc::clone(&job.chain)
            } else {
                Arc::new(Chain { here, parent: Some(Arc::clone(&job.chain)) })
            }
        } else {
            Arc::clone(&job.chain)
        };
        Some((chain, entries))
    }

    /// Filter, count and visit the entry `name` of `job`'s directory (at `path`); the job for
    /// it when it is a directory to enter.
    fn admit<V: Visitor>(
        &self,
        job: &Job,
        chain: &Arc<Chain>,
        name: &std::ffi::OsStr,
        ft: std::fs::FileType,
        path: &Path,
        v: &mut V,
    ) -> Option<Job> {
        let (opts, stop, counts) = (self.opts, self.stop, self.counts);
        if ft.is_symlink() && !opts.list_all {
            return None;
        }
        let is_dir = ft.is_dir();
        let bytes = name.as_encoded_bytes();
        if bytes.first() == Some(&b'.')
            && (!opts.include_hidden || (is_dir && bytes == b".git" && !opts.keep_git))
        {
            counts.hidden.fetch_add(1, Ordering::Relaxed);
            v.hidden(&job.rel, job.depth, Hidden::Dot);
            return None;
        }
        if opts.respect_gitignore && chain.ignored(path, is_dir) {
            counts.gitignore.fetch_add(1, Ordering::Relaxed);
            v.hidden(&job.rel, job.depth, Hidden::Gitignore);
            return None;
        }
        // Absolute: the patterns are rooted where they were built, which may be above `root`.
        if opts.exclude.as_ref().is_some_and(|ex| ex.matched(path, is_dir).is_ignore()) {
            counts.excluded.fetch_add(1, Ordering::Relaxed);
            v.hidden(&job.rel, job.depth, Hidden::Excluded);
            return None;
        }
        if is_dir && opts.skip_dependency_dirs && is_dependency_dir(bytes) {
            counts.dependencies.fetch_add(1, Ordering::Relaxed);
            v.hidden(&job.rel, job.depth, Hidden::Dependency);
            return None;
        }
        let name_str = name.to_string_lossy();
        let rel =
            if job.rel.is_empty() { name_str.into_owned() } else { format!("{}/{}", job.rel, name_str) };
        let depth = job.depth + 1;
        if is_dir {
            let entry = Entry { path, rel: &rel, depth, is_dir: true, file_type: ft };
            if opts.visit_dirs && !v.visit(&entry, stop) {
                stop.quit();
            }
            if opts.max_depth.is_none_or(|m| depth < m) {
                return Some(Job { path: path.to_path_buf(), rel, depth, chain: Arc::clone(chain) });
            }
        } else if (ft.is_file() || opts.list_all)
            && !stop.should_stop()
            && !v.visit(&Entry { path, rel: &rel, depth, is_dir: false, file_type: ft }, stop)
        {
            stop.quit();
        }
        None
    }
}

/// Build the caller's exclude patterns (gitignore syntax) rooted at `root`.
pub fn excludes(root: &Path, patterns: &[String]) -> Result<Option<Arc<Gitignore>>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GitignoreBuilder::new(root);
    for p in patterns {
        b.add_line(None, p).map_err(|e| ToolError::invalid(format!("invalid exclude pattern {p:?}: {e}")))?;
    }
    let gi = b.build().map_err(|e| ToolError::invalid(format!("invalid exclude patterns: {e}")))?;
    Ok(Some(Arc::new(gi)))
}

/// Directory names skipped at any depth unless `includeDependencies` is true (matched
/// exactly against a directory's basename; files with these names are kept).
pub const DEPENDENCY_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "vendor",
    ".venv",
    "venv",
    ".tox",
    "__pycache__",
    ".mypy_cache",
    "dist",
    "build",
    "target",
    ".gradle",
    ".idea",
    ".yarn",
    ".pnpm-store",
    "Pods",
];

/// Whether a directory named `name` is a dependency directory.
pub fn is_dependency_dir(name: &[u8]) -> bool {
    DEPENDENCY_DIRS.iter().any(|d| d.as_bytes() == name)
}

/// Whether a search of the workspace-relative `root_rel` skips dependency directories: unless
/// asked (`includeDependencies: true`) or the caller named a folder inside one
/// (`node_modules/react`), where everything below is what was asked for.
pub fn skips_dependencies(include_dependencies: Option<bool>, root_rel: &str) -> bool {
    !include_dependencies.unwrap_or(false) && !root_rel.split('/').any(|c| is_dependency_dir(c.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_folders_are_skipped_unless_asked_or_named() {
        assert!(skips_dependencies(None, ""));
        assert!(skips_dependencies(Some(false), "src/app"));
        assert!(!skips_dependencies(Some(true), ""));
        assert!(!skips_dependencies(None, "node_modules/react"));
        assert!(!skips_dependencies(None, "packages/web/node_modules"));
        // A name that only contains one is not one.
        assert!(skips_dependencies(None, "my_node_modules_notes"));
    }

    #[test]
    fn the_note_goes_on_its_own_line_only_when_something_was_hidden() {
        let counts = IgnoreCounts::default();
        let mut content = String::from("head.");
        counts.push_note(&mut content);
        assert_eq!(content, "head.");
        counts.hidden.store(2, Ordering::Relaxed);
        counts.push_note(&mut content);
        assert_eq!(
            content,
            "head.\nNot searched: 2 entries hidden — 2 hidden (includeHidden: true to include)."
        );
    }

    struct Collect(Vec<String>);
    impl Visitor for Collect {
        fn visit(&mut self, e: &Entry<'_>, _: &Stop) -> bool {
            self.0.push(e.rel.to_owned());
            true
        }
    }

    fn run(dir: &Path, opts: &WalkOptions) -> (Vec<String>, (usize, usize, usize)) {
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
        let root = Root { real: dir.to_path_buf(), rel: String::new() };
        let (vs, counts) = walk(dir, &root, opts, &stop, || Collect(Vec::new())).unwrap();
        let mut all: Vec<String> = vs.into_iter().flat_map(|c| c.0).collect();
        all.sort();
        (all, counts.parts())
    }

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let p = t.path();
        for f in ["a.rs", "b.log", "sub/c.rs", "sub/d.log", "sub/keep.log", ".hid/e.rs", ".f", "nm/x.js"] {
            std::fs::create_dir_all(p.join(f).parent().unwrap()).unwrap();
            std::fs::write(p.join(f), "x").unwrap();
        }
        std::fs::write(p.join(".gitignore"), "*.log\nnm/\n").unwrap();
        std::fs::write(p.join("sub/.gitignore"), "!keep.log\n").unwrap();
        t
    }

    #[test]
    fn honours_gitignore_hidden_and_counts_them() {
        let t = tree();
        let opts = WalkOptions { respect_gitignore: true, ..Default::default() };
        let (files, (g, h, e)) = run(t.path(), &opts);
        assert_eq!(files, ["a.rs", "sub/c.rs", "sub/keep.log"]);
        // b.log, nm/, sub/d.log; .gitignore, .hid, .f, sub/.gitignore
        assert_eq!((g, h, e), (3, 4, 0));
    }

    #[test]
    fn flags_turn_rules_off() {
        let t = tree();
        let opts = WalkOptions { respect_gitignore: false, include_hidden: true, ..Default::default() };
        let (files, counts) = run(t.path(), &opts);
        assert_eq!(files.len(), 10, "{files:?}");
        assert_eq!(counts, (0, 0, 0));
    }

    #[test]
    fn excludes_and_depth() {
        let t = tree();
        let ex = excludes(t.path(), &["sub".to_owned()]).unwrap();
        let opts = WalkOptions { respect_gitignore: true, exclude: ex, ..Default::default() };
        let (files, (_, _, e)) = run(t.path(), &opts);
        assert_eq!(files, ["a.rs"]);
        assert_eq!(e, 1);
        let opts = WalkOptions { max_depth: Some(1), ..Default::default() };
        let (files, _) = run(t.path(), &opts);
        assert_eq!(files, ["a.rs", "b.log"]);
    }

    #[test]
    fn a_sorted_walk_is_depth_first_by_name_and_lists_links() {
        let t = tree();
        std::os::unix::fs::symlink("a.rs", t.path().join("link")).unwrap();
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
        let root = Root { real: t.path().to_path_buf(), rel: String::new() };
        let opts = WalkOptions {
            include_hidden: true,
            visit_dirs: true,
            list_all: true,
            sorted: true,
            ..Default::default()
        };
        let (vs, _) = walk(t.path(), &root, &opts, &stop, || Collect(Vec::new())).unwrap();
        assert_eq!(vs.len(), 1);
        let want = [".f", ".gitignore", ".hid", ".hid/e.rs", "a.rs", "b.log", "link", "nm", "nm/x.js"];
        assert_eq!(vs[0].0[..want.len()], want);
        assert_eq!(vs[0].0[want.len()..], ["sub", "sub/.gitignore", "sub/c.rs", "sub/d.log", "sub/keep.log"]);
        // Without `list_all` the link is neither visited nor counted.
        let (files, counts) = run(t.path(), &WalkOptions { include_hidden: true, ..Default::default() });
        assert!(!files.contains(&"link".to_owned()));
        assert_eq!(counts, (0, 0, 0));
    }

    struct Boom;
    impl Visitor for Boom {
        fn visit(&mut self, _: &Entry<'_>, _: &Stop) -> bool {
            panic!("visitor bug")
        }
    }

    #[test]
    fn a_panicking_visitor_is_an_error_not_a_hang() {
        let t = tree();
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
        let root = Root { real: t.path().to_path_buf(), rel: String::new() };
        let r = walk(t.path(), &root, &WalkOptions::default(), &stop, || Boom);
        assert_eq!(r.err().map(|e| e.code()), Some(crate::ErrorCode::Internal));
    }

    #[test]
    fn parent_ignore_files_apply_below() {
        let t = tree();
        std::fs::write(t.path().join("sub/z.log"), "x").unwrap();
        let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
        let root = Root { real: t.path().join("sub"), rel: "sub".into() };
        let opts = WalkOptions { respect_gitignore: true, ..Default::default() };
        let (vs, _) = walk(t.path(), &root, &opts, &stop, || Collect(Vec::new())).unwrap();
        let mut all: Vec<String> = vs.into_iter().flat_map(|c| c.0).collect();
        all.sort();
        assert_eq!(all, ["sub/c.rs", "sub/keep.log"]);
    }
}
