//! `git log --numstat` counts for `git_log {files: true}` without libgit2's diff machinery,
//! for the commits where that machinery adds nothing.
//!
//! libgit2's `diff_tree_to_tree` plus `Diff::foreach` spent most of a small commit's time on
//! fixed costs: a config snapshot per diff, its tree iterators, and two `diff` attribute
//! lookups per file (each resolving the file's folder with `realpath` and checking every
//! attributes file on the way). Here the two trees are compared entry by entry (a subtree
//! whose id did not change is not opened), each path's `diff` attribute is asked once per
//! call, blobs read for one commit are kept for the next (a file's new version in one commit
//! is its old version in the commit before it), and the two versions of a changed file go
//! straight to libgit2's own xdiff (the diff libgit2 runs, with its flags: no context, no
//! whitespace options, Myers), asking for hunk ranges only, so no line is ever emitted.
//!
//! The answer must be what the libgit2 path gives, so a commit goes back to it
//! ([`Counter::files`] returns `None`) whenever this path would have to decide something
//! libgit2 decides: a commit that adds and deletes files (rename detection), a gitlink, an
//! unusual mode, a path that is not UTF-8, or a path whose `diff` attribute names a driver
//! (`diff=name`). A path with `-diff` (or `binary`) is binary, one with `diff` text whatever
//! its bytes, as libgit2's drivers decide. One case is decided as git decides it, where libgit2 differs: a
//! file that became a symlink (or the other way round) is one change, `T`, counting the lines
//! of both contents (libgit2 listed a deletion and an addition); a mode change alone (`chmod`)
//! is `M` with 0 and 0 (`-` for a binary file, as git).
//! With no `diff` attribute, binary is decided as libgit2 decides it: a NUL in the first 8,000
//! bytes of either side, or a side over 512 MiB.
//!
//! What a blob pair's counts are (its deleted and added lines, whether either side is binary by
//! content) and what a blob's are (its lines, binary by content) are kept between calls
//! ([`MEMO`], keyed by the object database and the ids; see `memo.rs`): a repeated `git_log`
//! reads and diffs no blob it has counted before. The `diff` attribute is not part of it: it is
//! looked up on every call and applied to what the memo gives.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::boundary::Scope;
use super::memo::{Memo, Odb, Weigh};
use super::xdiff::{line_counts, lines, xdiff_layout_known};
use crate::error::{ErrorCode, Result, ToolError};

/// Counts kept between calls: (object database, old blob, new blob) → the pair's counts, and
/// (object database, blob, `None`) → the blob's own.
static MEMO: Memo<(Odb, git2::Oid, Option<git2::Oid>), Counted> = Memo::new(8 << 20);

/// Tree comparisons kept between calls: (object database, old tree (`None`: the empty tree),
/// new tree) → the changed files (`None`: the commit goes to libgit2's diff).
static TREES: Memo<(Odb, Option<git2::Oid>, git2::Oid), Compared> = Memo::new(8 << 20);

/// A commit's changed files (`None`: it goes to libgit2's diff).
type Compared = Arc<Option<Vec<Change>>>;

impl Weigh for Compared {
    fn heap_bytes(&self) -> usize {
        self.as_ref().as_ref().map_or(0, |v| {
            v.iter()
                .map(|c| {
                    let (Change::Added(p, _) | Change::Deleted(p, _) | Change::Modified(p, ..)) = c;
                    std::mem::size_of::<Change>() + p.capacity()
                })
                .sum()
        })
    }
}

/// What a blob pair (or a blob) counts, whatever the path's `diff` attribute.
#[derive(Clone, Copy)]
struct Counted {
    /// Either side is binary by content (libgit2's rule, [`is_binary`]).
    binary: bool,
    /// A pair's (deleted, added) lines; a blob's (lines, 0). `None`: not counted (a pair binary
    /// by content, counted only when a path's `diff` attribute says text).
    lines: Option<(usize, usize)>,
}

impl Weigh for Counted {
    fn heap_bytes(&self) -> usize {
        0
    }
}

pub(super) fn clear_memo() {
    MEMO.clear();
    TREES.clear();
}

pub(super) fn memo_usage() -> (usize, usize) {
    let ((a, b), (c, d)) = (MEMO.usage(), TREES.usage());
    (a + c, b + d)
}

/// libgit2's `GIT_FILTER_BYTES_TO_CHECK_NUL`: a NUL within this many bytes makes a blob binary.
const BINARY_PROBE: usize = 8000;
/// libgit2's `DIFF_MAX_FILESIZE`: a larger blob is binary without being read.
const MAX_DIFF_SIZE: usize = 0x2000_0000;
/// Blobs kept for the next commit, in bytes; the map is emptied when it grows past this.
const BLOB_BUDGET: usize = 32 << 20;

/// Folders nested deeper than this go to libgit2's diff (whose walk does not recurse on the
/// stack): a hostile repository cannot exhaust the thread's stack here.
const MAX_DEPTH: usize = 256;

const MODE_TREE: i32 = 0o040000;
const MODE_BLOB: i32 = 0o100644;
const MODE_EXEC: i32 = 0o100755;
const MODE_LINK: i32 = 0o120000;

/// Whether libgit2 would call a blob binary with no `diff` attribute set.
fn is_binary(content: &[u8]) -> bool {
    content.len() > MAX_DIFF_SIZE || content.iter().take(BINARY_PROBE).any(|&c| c == 0)
}

/// How a path's `diff` attribute says to diff it (libgit2's auto, binary and text drivers).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Driver {
    /// No attribute: binary by content.
    Auto,
    /// `-diff` (or `binary`).
    Binary,
    /// `diff`: text whatever the content.
    Text,
}

/// Whether an attributes file outside the tree may apply to every path: the system's, the
/// user's (`core.attributesFile`, set at all, or the XDG `attributes`), `info/attributes` (in
/// the common dir, where libgit2 reads it, and in the git dir). The system and XDG folders are
/// libgit2's own search paths. Also `status_scan`'s condition for reading the tree itself.
pub(super) fn attributes_outside_tree(repo: &git2::Repository) -> bool {
    match repo.config() {
        Ok(cfg) if cfg.get_entry("core.attributesFile").is_err() => {}
        _ => return true,
    }
    let exists = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok();
    let system = super::handles::search_path(git2::ConfigLevel::System);
    let xdg = super::handles::search_path(git2::ConfigLevel::XDG);
    exists(&repo.commondir().join("info").join("attributes"))
        || exists(&repo.path().join("info").join("attributes"))
        || system.iter().any(|d| exists(&d.join("gitattributes")))
        || xdg.iter().any(|d| exists(&d.join("attributes")))
}

/// Whether the tree's `folder` (`""`: the root) may hold attributes for the paths below it: a
/// `.gitattributes` there in the working tree (anything by that name) or in the index (any
/// stage), or a folder that is a symlink in the working tree.
fn folder_may_have_attributes(workdir: &std::path::Path, index: Option<&git2::Index>, folder: &[u8]) -> bool {
    let (Ok(folder), Some(index)) = (std::str::from_utf8(folder), index) else { return true };
    let dir = workdir.join(folder);
    if !folder.is_empty() && std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return true;
    }
    if std::fs::symlink_metadata(dir.join(".gitattributes")).is_ok() {
        return true;
    }
    let name =
        if folder.is_empty() { ".gitattributes".to_owned() } else { format!("{folder}/.gitattributes") };
    (0..=3).any(|stage| index.get_path(std::path::Path::new(&name), stage).is_some())
}

/// One changed file of a commit.
pub(super) enum Change {
    Added(Vec<u8>, git2::Oid),
    Deleted(Vec<u8>, git2::Oid),
    /// Old and new blob, and the status letter: `M`, or `T` when a file became a symlink or
    /// the other way round (git counts the lines of both contents, as for a modification).
    Modified(Vec<u8>, git2::Oid, git2::Oid, &'static str),
}

/// A tree entry as the comparison needs it.
struct Entry {
    name: Vec<u8>,
    mode: i32,
    id: git2::Oid,
}

fn entries(tree: Option<&git2::Tree<'_>>) -> Vec<Entry> {
    tree.map(|t| {
        t.iter().map(|e| Entry { name: e.name_bytes().to_vec(), mode: e.filemode(), id: e.id() }).collect()
    })
    .unwrap_or_default()
}

/// git's tree order (`base_name_compare`): a tree's name compares as if it ended in `/`.
fn tree_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    let end =
        |e: &Entry, i: usize| e.name.get(i).copied().unwrap_or(if e.mode == MODE_TREE { b'/' } else { 0 });
    let common = a.name.len().min(b.name.len());
    a.name[..common].cmp(&b.name[..common]).then_with(|| end(a, common).cmp(&end(b, common)))
}

/// Counts the files of commits for one call on one thread, keeping what the next commit of
/// the call can use again.
pub(super) struct Counter<'r> {
    repo: &'r git2::Repository,
    /// The object database, as [`MEMO`] keys it (`None`: nothing memoised).
    odb: Option<Odb>,
    blobs: HashMap<git2::Oid, git2::Blob<'r>>,
    blob_bytes: usize,
    /// Per path: its driver (`None`: one this module leaves to libgit2).
    drivers: HashMap<Vec<u8>, Option<Driver>>,
    /// Whether an attributes file outside the tree may apply (`None`: not looked at yet).
    outside: Option<bool>,
    /// The index, read once for [`Counter::may_have_attributes`].
    index: Option<git2::Index>,
    /// Per folder of the tree (`a/b`, `""` for the root): whether an attributes file there may
    /// apply to the paths below it.
    folders: HashMap<Vec<u8>, bool>,
}

impl<'r> Counter<'r> {
    pub(super) fn new(repo: &'r git2::Repository) -> Self {
        Self {
            repo,
            odb: super::memo::odb(repo),
            blobs: HashMap::new(),
            blob_bytes: 0,
            drivers: HashMap::new(),
            outside: None,
            index: None,
            folders: HashMap::new(),
        }
    }

    fn fail(e: &git2::Error) -> ToolError {
        super::err(e, ErrorCode::Internal, "log")
    }

    /// The files `new` changes against `old` (`None`: the empty tree), each
    /// `{path, oldPath: null, status, binary, additions, deletions}` in path order, as
    /// `common::numstat` gives them; `None` when the commit needs libgit2's diff (see the
    /// module doc).
    pub(super) fn files(
        &mut self,
        scope: &Scope,
        old: Option<&git2::Tree<'_>>,
        new: &git2::Tree<'_>,
    ) -> Result<Option<Vec<Value>>> {
        if !xdiff_layout_known() {
            return Ok(None);
        }
        let compared = self.compared(old, new)?;
        let Some(changes) = compared.as_ref() else { return Ok(None) };
        let added = changes.iter().any(|c| matches!(c, Change::Added(..)));
        let deleted = changes.iter().any(|c| matches!(c, Change::Deleted(..)));
        if added && deleted {
            return Ok(None);
        }
        let changes: Vec<&Change> = changes
            .iter()
            .filter(|c| match c {
                Change::Added(p, _) | Change::Deleted(p, _) | Change::Modified(p, ..) => scope.contains(p),
            })
            .collect();
        let mut drivers = Vec::with_capacity(changes.len());
        for c in &changes {
            let (Change::Added(p, _) | Change::Deleted(p, _) | Change::Modified(p, ..)) = c;
            match self.driver(p)? {
                Some(d) => drivers.push(d),
                None => return Ok(None),
            }
        }
        let mut out = Vec::with_capacity(changes.len());
        for (c, driver) in changes.into_iter().zip(drivers) {
            let (path, status, counts) = match *c {
                Change::Added(ref p, id) => (p, "A", self.counted(id, None, driver)?.map(|(n, _)| (0, n))),
                Change::Deleted(ref p, id) => (p, "D", self.counted(id, None, driver)?.map(|(n, _)| (n, 0))),
                Change::Modified(ref p, a, b, status) => (p, status, self.counted(a, Some(b), driver)?),
            };
            out.push(json!({
                "path": String::from_utf8_lossy(path),
                "oldPath": Value::Null,
                "status": status,
                "binary": counts.is_none(),
                "additions": counts.map(|c| c.1),
                "deletions": counts.map(|c| c.0),
            }));
        }
        Ok(Some(out))
    }

    /// The files `new` changes against `old` (`None`: the commit goes to libgit2's diff), from
    /// [`TREES`] when it has them, else compared (and memoised).
    fn compared(&self, old: Option<&git2::Tree<'_>>, new: &git2::Tree<'_>) -> Result<Compared> {
        let key = self.odb.map(|odb| (odb, old.map(git2::Tree::id), new.id()));
        if let Some(c) = key.and_then(|k| TREES.get(&k)) {
            return Ok(c);
        }
        let mut changes = Vec::new();
        let c = Arc::new(self.compare(&mut Vec::new(), 0, old, Some(new), &mut changes)?.then_some(changes));
        if let Some(k) = key {
            TREES.put(k, Arc::clone(&c));
        }
        Ok(c)
    }

    /// `path`'s driver by its `diff` attribute (asked once per path and call, as the libgit2
    /// diff asks it: working-tree files first, then the index); `None` for a named driver or a
    /// path that is not UTF-8.
    fn driver(&mut self, path: &[u8]) -> Result<Option<Driver>> {
        if let Some(&d) = self.drivers.get(path) {
            return Ok(d);
        }
        let driver = match std::str::from_utf8(path) {
            Ok(_) if !self.may_have_attributes(path) => Some(Driver::Auto),
            Ok(s) => {
                let flags = git2::AttrCheckFlags::FILE_THEN_INDEX;
                let value = self.repo.get_attr_bytes(std::path::Path::new(s), "diff", flags);
                match git2::AttrValue::from_bytes(value.map_err(|e| Self::fail(&e))?) {
                    git2::AttrValue::Unspecified => Some(Driver::Auto),
                    git2::AttrValue::False => Some(Driver::Binary),
                    git2::AttrValue::True => Some(Driver::Text),
                    git2::AttrValue::String(_) | git2::AttrValue::Bytes(_) => None,
                }
            }
            Err(_) => None,
        };
        self.drivers.insert(path.to_vec(), driver);
        Ok(driver)
    }

    /// Whether an attribute may be set on `path` (a path of the tree): `false` only when none of
    /// the files libgit2 reads them from (with `FILE_THEN_INDEX`, see `collect_attr_files` in its
    /// `attr.c`) exists: the system's `gitattributes`, `core.attributesFile` (or the XDG
    /// `attributes`), `info/attributes`, and a `.gitattributes` in the path's folders, in the
    /// working tree or in the index (any stage). A folder along the path that is a symlink
    /// (libgit2 resolves it), or a bare repository, counts as "may": the lookup is then
    /// libgit2's, as before. Each lookup cost libgit2 a `realpath` and a check of every
    /// attributes file; this is a few stat()s and index lookups per call and folder.
    fn may_have_attributes(&mut self, path: &[u8]) -> bool {
        let Some(workdir) = self.repo.workdir() else { return true };
        if *self.outside.get_or_insert_with(|| attributes_outside_tree(self.repo)) {
            return true;
        }
        if self.index.is_none() {
            match self.repo.index() {
                Ok(i) => self.index = Some(i),
                Err(_) => return true,
            }
        }
        for end in std::iter::once(0).chain(memchr::memchr_iter(b'/', path)) {
            let folder = path.get(..end).unwrap_or_default();
            let may = match self.folders.get(folder) {
                Some(&m) => m,
                None => {
                    let m = folder_may_have_attributes(workdir, self.index.as_ref(), folder);
                    self.folders.insert(folder.to_vec(), m);
                    m
                }
            };
            if may {
                return true;
            }
        }
        false
    }

    /// The counts of blob `a` against blob `b` ((deleted, added) lines), or of blob `a` alone
    /// (`b` is `None`: (lines, 0)), as the path's `driver` has them: `None` for binary. From
    /// [`MEMO`] when it has them, else counted (and memoised).
    fn counted(
        &mut self,
        a: git2::Oid,
        b: Option<git2::Oid>,
        driver: Driver,
    ) -> Result<Option<(usize, usize)>> {
        let key = self.odb.map(|odb| (odb, a, b));
        let memoised =
            key.and_then(|k| MEMO.get(&k)).filter(|_| super::memo::present(self.repo, &[a, b.unwrap_or(a)]));
        let enough = |c: &Counted| match driver {
            Driver::Auto => c.binary || c.lines.is_some(),
            Driver::Text => c.lines.is_some(),
            Driver::Binary => true,
        };
        let c = match memoised.filter(enough) {
            Some(c) => c,
            None => {
                let c = match b {
                    None => {
                        let blob = self.blob(a)?;
                        let text = blob.content();
                        Counted { binary: is_binary(text), lines: Some((lines(text), 0)) }
                    }
                    Some(b) => {
                        let (x, y) = (self.blob(a)?, self.blob(b)?);
                        let (x, y) = (x.content(), y.content());
                        let binary = is_binary(x) || is_binary(y);
                        let lines = match (driver, binary) {
                            (Driver::Binary, _) | (Driver::Auto, true) => memoised.and_then(|c| c.lines),
                            // A mode change only: git still calls a binary file binary.
                            _ if a == b => Some((0, 0)),
                            _ => Some(line_counts(x, y)?),
                        };
                        Counted { binary, lines }
                    }
                };
                if let Some(k) = key {
                    MEMO.put(k, c);
                }
                c
            }
        };
        let binary = match driver {
            Driver::Auto => c.binary,
            Driver::Binary => true,
            Driver::Text => false,
        };
        Ok(if binary { None } else { c.lines })
    }

    /// Blob `id` (a new handle on the same object when it is kept), kept for a later commit.
    fn blob(&mut self, id: git2::Oid) -> Result<git2::Blob<'r>> {
        if let Some(b) = self.blobs.get(&id) {
            return Ok(b.clone());
        }
        let b = self.repo.find_blob(id).map_err(|e| Self::fail(&e))?;
        self.blob_bytes += b.content().len();
        if self.blob_bytes > BLOB_BUDGET {
            self.blobs.clear();
            self.blob_bytes = b.content().len();
        }
        self.blobs.insert(id, b.clone());
        Ok(b)
    }

    fn subtree(&self, id: git2::Oid) -> Result<git2::Tree<'r>> {
        self.repo.find_tree(id).map_err(|e| Self::fail(&e))
    }

    /// Adds the changes from `old` to `new` under `prefix` (`depth` folders down) to `out`;
    /// `false` when one of them is left to libgit2 (a gitlink, an unusual mode, too deep).
    fn compare(
        &self,
        prefix: &mut Vec<u8>,
        depth: usize,
        old: Option<&git2::Tree<'_>>,
        new: Option<&git2::Tree<'_>>,
        out: &mut Vec<Change>,
    ) -> Result<bool> {
        if depth > MAX_DEPTH {
            return Ok(false);
        }
        let (a, b) = (entries(old), entries(new));
        let (mut i, mut j) = (0, 0);
        loop {
            let (x, y) = (a.get(i), b.get(j));
            let order = match (x, y) {
                (Some(x), Some(y)) => tree_order(x, y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => return Ok(true),
            };
            let ok = match (order, x, y) {
                (std::cmp::Ordering::Less, Some(x), _) => {
                    i += 1;
                    self.one_side(prefix, depth, x, false, out)?
                }
                (std::cmp::Ordering::Greater, _, Some(y)) => {
                    j += 1;
                    self.one_side(prefix, depth, y, true, out)?
                }
                (_, Some(x), Some(y)) => {
                    i += 1;
                    j += 1;
                    self.both_sides(prefix, depth, x, y, out)?
                }
                _ => return Ok(true),
            };
            if !ok {
                return Ok(false);
            }
        }
    }

    /// An entry only one side has: a file added or deleted, or every file of a folder.
    fn one_side(
        &self,
        prefix: &mut Vec<u8>,
        depth: usize,
        e: &Entry,
        added: bool,
        out: &mut Vec<Change>,
    ) -> Result<bool> {
        let len = prefix.len();
        prefix.extend_from_slice(&e.name);
        let ok = match e.mode {
            MODE_TREE => {
                prefix.push(b'/');
                let t = self.subtree(e.id)?;
                let (a, b) = if added { (None, Some(&t)) } else { (Some(&t), None) };
                self.compare(prefix, depth + 1, a, b, out)?
            }
            MODE_BLOB | MODE_EXEC | MODE_LINK => {
                out.push(if added {
                    Change::Added(prefix.clone(), e.id)
                } else {
                    Change::Deleted(prefix.clone(), e.id)
                });
                true
            }
            _ => false,
        };
        prefix.truncate(len);
        Ok(ok)
    }

    /// An entry both sides have under one name (both folders, or both not folders).
    fn both_sides(
        &self,
        prefix: &mut Vec<u8>,
        depth: usize,
        x: &Entry,
        y: &Entry,
        out: &mut Vec<Change>,
    ) -> Result<bool> {
        if x.id == y.id && x.mode == y.mode {
            return Ok(true);
        }
        let file = |m: i32| matches!(m, MODE_BLOB | MODE_EXEC | MODE_LINK);
        if !(x.mode == MODE_TREE && y.mode == MODE_TREE || file(x.mode) && file(y.mode)) {
            return Ok(false);
        }
        let len = prefix.len();
        prefix.extend_from_slice(&x.name);
        let ok = if x.mode == MODE_TREE {
            prefix.push(b'/');
            let (s, t) = (self.subtree(x.id)?, self.subtree(y.id)?);
            self.compare(prefix, depth + 1, Some(&s), Some(&t), out)?
        } else {
            let kind_changed = (x.mode == MODE_LINK) != (y.mode == MODE_LINK);
            out.push(Change::Modified(prefix.clone(), x.id, y.id, if kind_changed { "T" } else { "M" }));
            true
        };
        prefix.truncate(len);
        Ok(ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdiff_counts_changed_lines_without_context() {
        // xdiff allocates through libgit2's allocator, set up when libgit2 is first used (a
        // call has always opened its repository before counting).
        let t = tempfile::tempdir().unwrap();
        git2::Repository::init(t.path()).unwrap();
        assert!(
            xdiff_layout_known(),
            "libgit2 was bumped: check the structs against its deps/xdiff/xdiff.h, then XDIFF_FROM"
        );
        assert_eq!(line_counts(b"a\nb\nc\n", b"a\nB\nc\n").unwrap(), (1, 1));
        assert_eq!(line_counts(b"", b"x\ny").unwrap(), (0, 2));
        assert_eq!(line_counts(b"a\nb\n", b"").unwrap(), (2, 0));
        // Two changes with one common line between them, and a last line losing its newline.
        assert_eq!(line_counts(b"1\n2\n3\n4\n5", b"1\nx\n3\ny\n5\n").unwrap(), (3, 3));
        assert_eq!(line_counts(b"same\n", b"same\n").unwrap(), (0, 0));
        assert_eq!(lines(b""), 0);
        assert_eq!(lines(b"a\nb"), 2);
        assert_eq!(lines(b"a\r\nb\r\n"), 2);
        assert!(is_binary(b"a\0b"));
        assert!(!is_binary(&[b'a'; 9000]));
        let mut late = vec![b'a'; 9000];
        late[8500] = 0;
        assert!(!is_binary(&late), "a NUL after the first 8,000 bytes does not count");
    }
}
