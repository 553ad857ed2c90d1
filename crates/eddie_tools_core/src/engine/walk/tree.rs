//! The tree engine (of `get_folder_tree_structure` and `project_map`): the directory tree
//! under a path, with a paged flat view.
//!
//! Each directory is listed in `localeCompare(name, "en", {sensitivity: "base"})` order;
//! ties keep byte order (Node's `readdir` order). Symlinks are listed as files and never
//! followed. The nested `entries` tree is always complete; `maxEntries`/`offset` page the
//! flat `pageEntries` list.
//!
//! The engine ([`Tree::walk`]) lists directories on all cores and sorts each listing where it
//! was read; the result is then written as JSON text in one pass, without building a value
//! per entry, and only the requested page of flat entries is materialised.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use serde_json::{Value, json};

use super::is_dependency_dir;
use crate::engine::text::collate::{Sensitivity, sort_key};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// What [`Tree::walk`] lists.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeOptions {
    /// Directories deeper than this (the root's children are depth 0) are shown but not
    /// opened. `None` = unlimited.
    pub max_depth: Option<f64>,
    /// List names starting with `.`.
    pub include_hidden: bool,
    /// Open dependency directories (`node_modules`, `target`, ...; see
    /// [`super::DEPENDENCY_DIRS`]). When false they are left out entirely.
    pub include_dependencies: bool,
}

/// Decides, directory by directory, which entries a walk keeps beyond its own hidden and
/// dependency rules (`project_map` uses it for `.gitignore`).
pub trait TreeFilter: Sync {
    /// What the filter knows inside one directory (e.g. the ignore files that apply there).
    type Scope: Send + Sync;
    /// The scope of directory `dir` (real path), inside its parent's (`None` for the root).
    fn scope(&self, dir: &Path, parent: Option<&Self::Scope>) -> Self::Scope;
    /// Whether to keep entry `name` of directory `dir`, whose scope is `scope`.
    fn keep(&self, scope: &Self::Scope, dir: &Path, name: &std::ffi::OsStr, is_dir: bool) -> bool;
}

/// Keeps everything.
pub struct NoFilter;

impl TreeFilter for NoFilter {
    type Scope = ();
    fn scope(&self, _: &Path, _: Option<&()>) {}
    fn keep(&self, (): &(), _: &Path, _: &std::ffi::OsStr, _: bool) -> bool {
        true
    }
}

/// One entry of a listed directory.
#[derive(Debug, Clone)]
pub struct TreeEntry {
    /// The file name (lossy UTF-8).
    pub name: String,
    /// A directory (symlinks are not: they are listed as files and never followed).
    pub is_dir: bool,
    /// For an opened directory, the index of its own listing.
    listing: Option<usize>,
}

/// A walked directory tree: every opened directory's entries, each in collation order.
#[derive(Debug)]
pub struct Tree {
    listings: Vec<Vec<TreeEntry>>,
    total: usize,
    hidden: usize,
    dependencies: usize,
    cancelled: bool,
}

impl Tree {
    /// List the tree under `real` (errors name paths under `lexical`), in parallel.
    pub fn walk(real: &Path, lexical: &Path, opts: TreeOptions, cancel: &AtomicBool) -> Result<Self> {
        Self::walk_filtered(real, lexical, opts, cancel, &NoFilter)
    }

    /// [`Tree::walk`], keeping only what `filter` keeps.
    pub fn walk_filtered<F: TreeFilter>(
        real: &Path,
        lexical: &Path,
        opts: TreeOptions,
        cancel: &AtomicBool,
        filter: &F,
    ) -> Result<Self> {
        let root =
            Job { id: 0, real: real.to_path_buf(), lexical: lexical.to_path_buf(), depth: 0.0, parent: None };
        let shared = Shared {
            state: Mutex::new(State {
                jobs: vec![root],
                pending: 1,
                results: vec![None],
                hidden: 0,
                dependencies: 0,
            }),
            wake: Condvar::new(),
        };
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
        std::thread::scope(|scope| {
            for _ in 1..workers {
                scope.spawn(|| shared.work(opts, cancel, filter));
            }
            shared.work(opts, cancel, filter);
        });
        let cancelled = cancel.load(Ordering::Relaxed);
        let state = shared.state.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut listings = Vec::with_capacity(state.results.len());
        // Report the first failure in listing order, as a sequential walk would.
        for result in state.results {
            match result {
                Some(listing) => listings.push(listing?),
                // Cancelled before this directory was listed: it shows as empty.
                None if cancelled => listings.push(Vec::new()),
                None => return Err(ToolError::internal("a directory of the tree was never listed")),
            }
        }
        let total = listings.iter().map(Vec::len).sum();
        Ok(Self { listings, total, hidden: state.hidden, dependencies: state.dependencies, cancelled })
    }

    /// Whether the walk was cancelled: what was listed by then is here, and the directories
    /// not yet listed show as empty.
    pub fn cancelled(&self) -> bool {
        self.cancelled
    }

    /// How many entries the tree has (not counting the root).
    pub fn total(&self) -> usize {
        self.total
    }

    /// How many entries of the listed directories were left out as hidden (dot-names) and as
    /// dependency directories.
    pub fn left_out(&self) -> (usize, usize) {
        (self.hidden, self.dependencies)
    }

    /// The root's entries.
    pub fn root(&self) -> &[TreeEntry] {
        self.listings.first().map_or(&[], Vec::as_slice)
    }

    /// The entries of directory `entry`, if it was opened.
    pub fn children(&self, entry: &TreeEntry) -> Option<&[TreeEntry]> {
        entry.listing.and_then(|i| self.listings.get(i)).map(Vec::as_slice)
    }

    /// Visit every entry in pre-order with its depth (root's children = 0) and its path
    /// (`prefix/…/name`, `/`-separated; no prefix when `prefix` is empty).
    pub fn visit(&self, prefix: &str, mut f: impl FnMut(usize, &TreeEntry, &str)) {
        let mut path = prefix.to_owned();
        self.visit_in(self.root(), 0, &mut path, &mut f);
    }

    fn visit_in(
        &self,
        entries: &[TreeEntry],
        depth: usize,
        path: &mut String,
        f: &mut impl FnMut(usize, &TreeEntry, &str),
    ) {
        for entry in entries {
            let len = push_name(path, &entry.name);
            f(depth, entry, path);
            if let Some(children) = self.children(entry) {
                self.visit_in(children, depth + 1, path, f);
            }
            path.truncate(len);
        }
    }

    /// The nested `entries` array of the result, as JSON text, plus the flat pre-order list
    /// (directories end in `/`) cut to `[offset, offset + limit)`.
    fn render(&self, prefix: &str, offset: usize, limit: usize) -> Result<(Vec<u8>, Vec<String>)> {
        let mut out = Vec::with_capacity(self.total * 96);
        let mut page = Vec::with_capacity(limit.min(self.total));
        let mut index = 0;
        let mut path = prefix.to_owned();
        let mut w = Render { out: &mut out, page: &mut page, index: &mut index, offset, end: offset + limit };
        self.render_in(self.root(), &mut path, &mut w)?;
        Ok((out, page))
    }

    fn render_in(&self, entries: &[TreeEntry], path: &mut String, w: &mut Render<'_>) -> Result<()> {
        w.out.push(b'[');
        for (i, entry) in entries.iter().enumerate() {
            if i > 0 {
                w.out.push(b',');
            }
            let len = push_name(path, &entry.name);
            if (w.offset..w.end).contains(w.index) {
                w.page.push(if entry.is_dir { format!("{path}/") } else { path.clone() });
            }
            *w.index += 1;
            w.out.extend_from_slice(b"{\"name\":");
            json_str(w.out, &entry.name)?;
            w.out.extend_from_slice(b",\"path\":");
            json_str(w.out, path)?;
            if entry.is_dir {
                w.out.extend_from_slice(b",\"type\":\"directory\",\"entries\":");
                self.render_in(self.children(entry).unwrap_or(&[]), path, w)?;
                w.out.push(b'}');
            } else {
                w.out.extend_from_slice(b",\"type\":\"file\"}");
            }
            path.truncate(len);
        }
        w.out.push(b']');
        Ok(())
    }
}

struct Render<'a> {
    out: &'a mut Vec<u8>,
    page: &'a mut Vec<String>,
    index: &'a mut usize,
    offset: usize,
    end: usize,
}

/// Append `/name` (or `name` to an empty path); returns the length to truncate back to.
fn push_name(path: &mut String, name: &str) -> usize {
    let len = path.len();
    if !path.is_empty() {
        path.push('/');
    }
    path.push_str(name);
    len
}

fn json_str(out: &mut Vec<u8>, s: &str) -> Result<()> {
    serde_json::to_writer(out, s).map_err(|e| ToolError::internal(format!("serialise tree: {e}")))
}

struct Job<S> {
    id: usize,
    real: PathBuf,
    lexical: PathBuf,
    depth: f64,
    /// The filter scope of the directory holding this one.
    parent: Option<Arc<S>>,
}

struct State<S> {
    jobs: Vec<Job<S>>,
    /// Jobs queued or being listed.
    pending: usize,
    /// One slot per directory to list, by job id.
    results: Vec<Option<Result<Vec<TreeEntry>>>>,
    hidden: usize,
    dependencies: usize,
}

struct Shared<S> {
    state: Mutex<State<S>>,
    wake: Condvar,
}

impl<S: Send + Sync> Shared<S> {
    fn lock(&self) -> MutexGuard<'_, State<S>> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn work<F: TreeFilter<Scope = S>>(&self, opts: TreeOptions, cancel: &AtomicBool, filter: &F) {
        loop {
            let job = {
                let mut state = self.lock();
                loop {
                    if state.pending == 0 || cancel.load(Ordering::Relaxed) {
                        self.wake.notify_all();
                        return;
                    }
                    if let Some(job) = state.jobs.pop() {
                        break job;
                    }
                    state = self.wake.wait(state).unwrap_or_else(std::sync::PoisonError::into_inner);
                }
            };
            let listed = list_dir(&job, opts, filter);
            let mut state = self.lock();
            let result = listed.map(|listing| {
                let Listing { mut entries, dirs, scope, hidden, dependencies } = listing;
                state.hidden += hidden;
                state.dependencies += dependencies;
                for (index, real) in dirs {
                    let id = state.results.len();
                    state.results.push(None);
                    let lexical = job.lexical.join(&entries[index].name);
                    entries[index].listing = Some(id);
                    let parent = Some(Arc::clone(&scope));
                    state.jobs.push(Job { id, real, lexical, depth: job.depth + 1.0, parent });
                    state.pending += 1;
                }
                entries
            });
            if let Some(slot) = state.results.get_mut(job.id) {
                *slot = Some(result);
            }
            state.pending -= 1;
            self.wake.notify_all();
        }
    }
}

/// One directory's entries in collation order, the (index, real path) of those to open, its
/// filter scope, and how many entries its own rules left out.
struct Listing<S> {
    entries: Vec<TreeEntry>,
    dirs: Vec<(usize, PathBuf)>,
    scope: Arc<S>,
    hidden: usize,
    dependencies: usize,
}

fn list_dir<F: TreeFilter>(job: &Job<F::Scope>, opts: TreeOptions, filter: &F) -> Result<Listing<F::Scope>> {
    let read = std::fs::read_dir(&job.real).map_err(|e| ToolError::fs(&e, "scandir", Some(&job.lexical)))?;
    let scope = Arc::new(filter.scope(&job.real, job.parent.as_deref()));
    let open_children = opts.max_depth.is_none_or(|m| job.depth < m);
    let mut found: Vec<(Vec<u8>, OsString, bool)> = Vec::new();
    let (mut hidden, mut dependencies) = (0, 0);
    for entry in read {
        let entry = entry.map_err(|e| ToolError::fs(&e, "scandir", Some(&job.lexical)))?;
        let name = entry.file_name();
        let bytes = name.as_encoded_bytes();
        if !opts.include_hidden && bytes.first() == Some(&b'.') {
            hidden += 1;
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !opts.include_dependencies && is_dependency_dir(bytes) {
            dependencies += 1;
            continue;
        }
        if !filter.keep(&scope, &job.real, &name, is_dir) {
            continue;
        }
        let key = sort_key(&name.to_string_lossy(), Sensitivity::Base);
        found.push((key, name, is_dir));
    }
    // Collation order; equal keys keep byte order.
    found.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| a.1.as_encoded_bytes().cmp(b.1.as_encoded_bytes()))
    });
    let mut dirs = Vec::new();
    let entries = found
        .into_iter()
        .enumerate()
        .map(|(i, (_, name, is_dir))| {
            if is_dir && open_children {
                dirs.push((i, job.real.join(&name)));
            }
            TreeEntry { name: name.to_string_lossy().into_owned(), is_dir, listing: None }
        })
        .collect();
    Ok(Listing { entries, dirs, scope, hidden, dependencies })
}

/// Which page of a walked tree a result shows, and how its root is named.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// `data.root` and the header's name (the path as given).
    pub root_label: &'a str,
    /// The workspace-relative path of the root (prefix of every entry path).
    pub prefix: &'a str,
    /// Flat entries per page (>= 1).
    pub max_entries: f64,
    /// Flat entries to skip (>= 0).
    pub offset: f64,
}

impl Tree {
    /// The `get_folder_tree_structure` result for this tree: the header and page as `content`;
    /// `{root, entries, pageEntries, pagination}` (then `extra`'s keys) as `data`.
    pub fn result(&self, page: &Page<'_>, extra: &[(&str, Value)]) -> Result<ToolOutput> {
        let total = self.total();
        let offset = page.offset.min(total as f64) as usize;
        let limit = if page.max_entries >= total as f64 {
            total - offset
        } else {
            (page.max_entries as usize).min(total - offset)
        };
        let (entries, flat) = self.render(page.prefix, offset, limit)?;
        let returned = flat.len();
        let has_more = offset + returned < total;
        let root_label = page.root_label;
        let header = if offset > 0 {
            format!(
                "Tree for {root_label} (showing {returned} of {total} entries starting at offset {offset})"
            )
        } else {
            format!("Tree for {root_label} (showing {returned} of {total} entries)")
        };
        let content = if flat.is_empty() { header } else { format!("{header}\n{}", flat.join("\n")) };
        let pagination = json!({
            "limit": page.max_entries as i64,
            "offset": offset,
            "returnedEntries": returned,
            "totalEntries": total,
            "hasMore": has_more,
            "nextOffset": if has_more { json!(offset + returned) } else { Value::Null },
        });
        // {"root", "entries", "pageEntries", "pagination"}, in eddie's key order.
        let mut data = Vec::with_capacity(entries.len() + 64 * (returned + 4));
        data.extend_from_slice(b"{\"root\":");
        json_str(&mut data, root_label)?;
        data.extend_from_slice(b",\"entries\":");
        data.extend_from_slice(&entries);
        drop(entries);
        let ser = |e: serde_json::Error| ToolError::internal(format!("serialise tree: {e}"));
        data.extend_from_slice(b",\"pageEntries\":");
        serde_json::to_writer(&mut data, &flat).map_err(ser)?;
        data.extend_from_slice(b",\"pagination\":");
        serde_json::to_writer(&mut data, &pagination).map_err(ser)?;
        for (key, value) in extra {
            data.push(b',');
            json_str(&mut data, key)?;
            data.push(b':');
            serde_json::to_writer(&mut data, value).map_err(ser)?;
        }
        data.push(b'}');
        let text = String::from_utf8(data).map_err(|e| ToolError::internal(format!("tree JSON: {e}")))?;
        Ok(ToolOutput::from_json_text(content, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn sample() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for d in ["b", "B2", "a/c", "a/node_modules/x", ".hid", "deep/1/2/3"] {
            fs::create_dir_all(dir.path().join(d)).expect("mkdir");
        }
        for f in ["a/z.txt", "a/c/é.md", "a/c/e.md", "Readme.md", "readme.md", ".hid/f", "deep/1/2/3/f"] {
            fs::write(dir.path().join(f), "x").expect("write");
        }
        dir
    }

    fn flat(tree: &Tree) -> Vec<String> {
        let mut v = Vec::new();
        tree.visit("", |_, e, p| v.push(if e.is_dir { format!("{p}/") } else { p.to_owned() }));
        v
    }

    #[test]
    fn walk_orders_by_base_collation_and_prunes() {
        // Base-equal names (`e.md`/`é.md`, `Readme.md`/`readme.md`) keep byte order.
        let dir = sample();
        let no = AtomicBool::new(false);
        let tree = Tree::walk(dir.path(), Path::new("."), TreeOptions::default(), &no).expect("walk");
        assert_eq!(
            flat(&tree),
            [
                "a/",
                "a/c/",
                "a/c/e.md",
                "a/c/é.md",
                "a/z.txt",
                "b/",
                "B2/",
                "deep/",
                "deep/1/",
                "deep/1/2/",
                "deep/1/2/3/",
                "deep/1/2/3/f",
                "Readme.md",
                "readme.md",
            ]
        );
        assert_eq!(tree.total(), 14);
        let opts = TreeOptions { max_depth: Some(1.0), include_hidden: true, include_dependencies: true };
        let tree = Tree::walk(dir.path(), Path::new("."), opts, &no).expect("walk");
        let names = flat(&tree);
        assert!(names.contains(&".hid/f".to_owned()) && names.contains(&"a/node_modules/".to_owned()));
        assert!(names.contains(&"deep/1/".to_owned()) && !names.contains(&"deep/1/2/".to_owned()));
    }

    #[test]
    fn render_matches_a_value_tree_and_pages() {
        let dir = sample();
        let no = AtomicBool::new(false);
        let tree = Tree::walk(dir.path(), Path::new("."), TreeOptions::default(), &no).expect("walk");
        let (json_text, page) = tree.render("p", 2, 3).expect("render");
        let v: Value = serde_json::from_slice(&json_text).expect("valid JSON");
        assert_eq!(v[0]["name"], "a");
        assert_eq!(v[0]["path"], "p/a");
        assert_eq!(v[0]["type"], "directory");
        assert_eq!(
            v[0]["entries"][0]["entries"][1],
            json!({"name": "é.md", "path": "p/a/c/é.md", "type": "file"})
        );
        assert_eq!(page, ["p/a/c/e.md", "p/a/c/é.md", "p/a/z.txt"]);
    }

    #[test]
    fn unreadable_walks_fail_and_cancelled_ones_are_partial() {
        let dir = sample();
        let no = AtomicBool::new(false);
        let missing = Tree::walk(&dir.path().join("nope"), Path::new("nope"), TreeOptions::default(), &no);
        assert_eq!(missing.map(|_| ()).map_err(|e| e.code()), Err(crate::ErrorCode::NotFound));
        let yes = AtomicBool::new(true);
        let cancelled =
            Tree::walk(dir.path(), Path::new("."), TreeOptions::default(), &yes).expect("partial");
        assert!(cancelled.cancelled());
        assert_eq!(cancelled.total(), 0, "nothing was listed after the cancel");
    }
}
