//! Blame computed the way `git blame` computes it, over libgit2's object access (libgit2's own
//! blame diffs whole trees, with rename detection, at every commit that changed the file, which
//! made it slower than the git CLI on long histories).
//!
//! Each line of the final file is followed back through the history of its path: a commit
//! whose parent holds the same blob passes all its lines to that parent (the first such parent
//! of a merge); otherwise each parent in order takes the lines that the diff of its blob
//! against the commit's leaves unchanged, and the lines no parent takes are the commit's. The
//! diff is git blame's own: libgit2's copy of git's xdiff (Myers, the indent heuristic). A path missing from a
//! parent is looked for among that parent's renames (whole-file renames, as `git blame` follows
//! them by default; libgit2's similarity score decides a rename that is not exact). Parents'
//! tree entries are compared by id along the path, so a commit that did not touch the path costs
//! one tree read (none when the root trees are equal); only changed blobs are read and diffed.
//!
//! Neither the diff of a commit's blob against its parent's nor where the parents keep the
//! file depends on which lines are still being followed, so on a long history (from the 8th
//! diff and 2 ms on) worker threads, each with its own `Repository` (one kept from an earlier
//! call when there is one, see `handles.rs`), work ahead of the main thread: one of them (the
//! scout) walks the history once, as if every parent took lines, and hands over how each commit's
//! parents hold the file (`Resolved`) and the blob pairs to diff, in its order; the others (and
//! the scout, once it is far enough ahead) diff those pairs. The main thread takes a commit's
//! parents from the scout when it has them (else finds them itself) and a diff when a worker has
//! it (waits when one is computing it, computes it itself otherwise), so the answer is the same
//! with or without them. The history is walked once, not once per thread. The workers stop and
//! are joined as soon as the blame ends, however it ends.
//!
//! The hunks of a diff of two stored blobs are kept between calls (`MEMO`, keyed by the
//! object database and the two ids; see `memo.rs`), and so are the renames between two trees
//! (`RENAMES`): a later blame of the same file, or of
//! another file with the same history, diffs only what it has not diffed before, and its
//! workers start only when it has diffs of its own to compute.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use git2::{ObjectType, Oid, Repository};

use super::memo::{Memo, Odb, Weigh};

/// Blob diffs kept between calls: (object database, old blob, new blob) → hunks. The diff
/// options are [`diff_options`], the same for every blame, so they are not part of the key.
pub(super) static MEMO: Memo<(Odb, Oid, Oid), Arc<BlobDiff>> = Memo::new(14 << 20);

/// Renames kept between calls: (object database, parent's tree, commit's tree, the config's
/// `diff.renameLimit`) → the whole-file renames libgit2 finds between them (new path, old path).
/// libgit2's rename detection reads the blobs' bytes only (no attributes), with fixed options.
pub(super) static RENAMES: Memo<(Odb, Oid, Oid, Option<i32>), Renames> = Memo::new(2 << 20);

/// Whole-file renames (new path, old path), in libgit2's order.
type Renames = Arc<Vec<(Vec<u8>, String)>>;

impl Weigh for Renames {
    fn heap_bytes(&self) -> usize {
        self.iter().map(|(a, b)| std::mem::size_of::<(Vec<u8>, String)>() + a.capacity() + b.capacity()).sum()
    }
}

impl Weigh for Arc<BlobDiff> {
    fn heap_bytes(&self) -> usize {
        std::mem::size_of::<BlobDiff>() + self.hunks.capacity() * std::mem::size_of::<Hunk>()
    }
}

/// A run of lines of the final file blamed on one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// First line in the final file (0-based).
    pub start: usize,
    /// How many lines.
    pub lines: usize,
    /// The commit (`None`: not committed yet, the working tree's own lines).
    pub commit: Option<Oid>,
    /// The file's path in that commit.
    pub path: String,
    /// First line in that commit's version of the file (0-based).
    pub orig_start: usize,
}

/// Lines `lno..lno + n` of the final file, which are lines `s_lno..` of the suspect's blob.
#[derive(Debug, Clone, Copy)]
struct Entry {
    lno: usize,
    n: usize,
    s_lno: usize,
}

/// A (commit, path) the blame is passed to, with the lines it is suspected of.
struct Origin {
    commit: Option<Oid>,
    path: String,
    /// Ids of the trees along the path from the root tree (empty for the working tree).
    chain: Vec<Oid>,
    blob: Oid,
    entries: Vec<Entry>,
    queued: bool,
}

/// Where a parent keeps the file: its path, the trees along it, its blob.
#[derive(Clone)]
struct Found {
    path: String,
    chain: Vec<Oid>,
    blob: Oid,
}

struct Blame<'r> {
    repo: &'r Repository,
    /// The object database, as [`MEMO`] keys it (`None`: nothing memoised).
    odb: Option<Odb>,
    /// The working tree's content of the file, when it is blamed (the origin without a commit).
    worktree: Option<&'r [u8]>,
    /// The working tree's parents after `HEAD`: the commits of `MERGE_HEAD` while a merge is
    /// unfinished (as `git blame` counts them).
    merging: Vec<git2::Commit<'r>>,
    origins: Vec<Origin>,
    index: HashMap<(Option<Oid>, String), usize>,
    /// Newest commit first, as git's queue (by committer date, then first queued).
    queue: BinaryHeap<(i64, Reverse<u64>, usize)>,
    seq: u64,
    done: Vec<Span>,
    /// Blob diffs computed so far by this thread (the workers start after [`PREFETCH_AFTER`] and
    /// [`PREFETCH_AFTER_TIME`]).
    diffs: usize,
    /// How many worker threads to start.
    workers: usize,
    /// How many commits' parents came from the scout.
    from_scout: usize,
    prefetch: Option<Prefetch>,
    /// When the blame began (the workers start only on a blame that has run a while).
    began: std::time::Instant,
    blobs: Blobs<'r>,
}

/// Blame lines `range` (0-based, end exclusive) of `path` as of `head`, or of `worktree` (the
/// file's current content) on top of `head` when given. `Ok(None)` when `head` has no such file.
/// `cancelled` is asked before each commit: once it says yes, the blame stops (its workers
/// joined) with an error that [`is_cancelled`] recognises.
pub fn blame(
    repo: &Repository,
    head: &git2::Commit<'_>,
    path: &str,
    worktree: Option<&[u8]>,
    range: std::ops::Range<usize>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Option<Vec<Span>>, git2::Error> {
    let workers = super::cores().saturating_sub(1).min(3);
    blame_with(repo, head, path, worktree, range, cancelled, workers).map(|(spans, _)| spans)
}

/// [`blame`] with at most `workers` worker threads, and how many commits' parents the main
/// thread took from the scout.
fn blame_with(
    repo: &Repository,
    head: &git2::Commit<'_>,
    path: &str,
    worktree: Option<&[u8]>,
    range: std::ops::Range<usize>,
    cancelled: &dyn Fn() -> bool,
    workers: usize,
) -> Result<(Option<Vec<Span>>, usize), git2::Error> {
    let Some(found) = lookup(repo, head.tree_id(), path, &[])? else {
        return Ok((None, 0));
    };
    let mut merging = Vec::new();
    if worktree.is_some() {
        // One commit id a line; no file: no merge under way.
        let text = std::fs::read_to_string(repo.path().join("MERGE_HEAD")).unwrap_or_default();
        let ids = text.lines().filter_map(|l| Oid::from_str(l.trim()).ok());
        for id in ids {
            merging.push(repo.find_commit(id)?);
        }
    }
    let mut b = Blame {
        repo,
        odb: super::memo::odb(repo),
        worktree,
        merging,
        origins: Vec::new(),
        index: HashMap::new(),
        queue: BinaryHeap::new(),
        seq: 0,
        done: Vec::new(),
        diffs: 0,
        workers,
        from_scout: 0,
        prefetch: None,
        began: std::time::Instant::now(),
        blobs: Blobs::default(),
    };
    let first = Entry { lno: range.start, n: range.len(), s_lno: range.start };
    if range.is_empty() {
        return Ok((Some(Vec::new()), 0));
    }
    match worktree {
        Some(text) => {
            let blob = Oid::hash_object(ObjectType::Blob, text)?;
            let o = b.origin(None, path.to_owned(), Vec::new(), blob);
            b.give(o, vec![first], i64::MAX);
        }
        None => {
            let o = b.origin(Some(head.id()), found.path, found.chain, found.blob);
            b.give(o, vec![first], head.time().seconds());
        }
    }
    while let Some((time, _, at)) = b.queue.pop() {
        if cancelled() {
            return Err(git2::Error::new(git2::ErrorCode::User, git2::ErrorClass::None, CANCELLED));
        }
        b.step(at, time, head)?;
    }
    // Every line is assigned: stop the workers now (on an error, dropping `b` stops them).
    drop(b.prefetch.take());
    let mut spans = b.done;
    spans.sort_by_key(|s| s.start);
    Ok((Some(coalesce(spans)), b.from_scout))
}

/// The message of the error a cancelled blame ends with.
const CANCELLED: &str = "blame: cancelled";

/// Whether `e` is the error of a blame that stopped because it was cancelled.
pub fn is_cancelled(e: &git2::Error) -> bool {
    e.code() == git2::ErrorCode::User && e.message() == CANCELLED
}

impl<'r> Blame<'r> {
    fn origin(&mut self, commit: Option<Oid>, path: String, chain: Vec<Oid>, blob: Oid) -> usize {
        let key = (commit, path);
        if let Some(&at) = self.index.get(&key) {
            return at;
        }
        let at = self.origins.len();
        self.origins.push(Origin {
            commit,
            path: key.1.clone(),
            chain,
            blob,
            entries: Vec::new(),
            queued: false,
        });
        self.index.insert(key, at);
        at
    }

    /// Hand `entries` to origin `at` and queue it (once) at `time`.
    fn give(&mut self, at: usize, entries: Vec<Entry>, time: i64) {
        let Some(o) = self.origins.get_mut(at) else { return };
        o.entries.extend(entries);
        if !o.queued {
            o.queued = true;
            self.seq += 1;
            self.queue.push((time, Reverse(self.seq), at));
        }
    }

    /// Pass the lines of origin `at` (queued at commit date `time`) to its parents; keep the
    /// rest as its own.
    fn step(&mut self, at: usize, time: i64, head: &git2::Commit<'_>) -> Result<(), git2::Error> {
        let Some(o) = self.origins.get_mut(at) else { return Ok(()) };
        o.queued = false;
        let mut entries = std::mem::take(&mut o.entries);
        if entries.is_empty() {
            return Ok(());
        }
        let (commit, path, chain, blob) = (o.commit, o.path.clone(), o.chain.clone(), o.blob);
        if let Some(id) = commit
            && self.prefetch.is_none()
            && self.diffs >= PREFETCH_AFTER
            && self.began.elapsed() >= PREFETCH_AFTER_TIME
        {
            self.prefetch = Prefetch::start(
                self.repo,
                self.odb,
                self.workers,
                Start { commit: id, path: path.clone(), chain: chain.clone(), blob, time },
            );
        }
        let resolved = match commit {
            None => {
                let parents: Vec<git2::Commit<'_>> =
                    std::iter::once(head.clone()).chain(self.merging.iter().cloned()).collect();
                resolve(self.repo, self.odb, &parents, None, &path, &chain, blob)?
            }
            Some(id) => match self.prefetch.as_ref().and_then(|p| p.shared.resolved(id, &path, time)) {
                Some(r) => {
                    self.from_scout += 1;
                    r
                }
                None => {
                    let parents: Vec<git2::Commit<'_>> = self.repo.find_commit(id)?.parents().collect();
                    resolve(self.repo, self.odb, &parents, Some(id), &path, &chain, blob)?
                }
            },
        };
        if resolved.same {
            if let Some((p, ptime, Some(f))) = resolved.parents.into_iter().last() {
                let to = self.origin(Some(p), f.path, f.chain, f.blob);
                self.give(to, entries, ptime);
            }
            return Ok(());
        }
        let mut seen = Vec::with_capacity(resolved.parents.len());
        for (p, ptime, f) in resolved.parents {
            // A parent with the same blob as an earlier one has nothing more to take.
            let Some(f) = f.filter(|f| !seen.contains(&f.blob)) else { continue };
            seen.push(f.blob);
            if entries.is_empty() {
                break;
            }
            let to = self.origin(Some(p), f.path, f.chain, f.blob);
            let (passed, kept) = if commit.is_some() {
                let d = self.blob_diff(f.blob, blob)?;
                split(&d.hunks, d.after_len, entries)
            } else {
                // The working tree's text against its parent's blob (the only origin without a
                // commit).
                let after =
                    self.worktree.ok_or_else(|| git2::Error::from_str("blame: no working tree text"))?;
                let before = self.repo.find_blob(f.blob)?;
                split(&text_hunks(before.content(), after)?, line_count(after), entries)
            };
            entries = kept;
            if !passed.is_empty() {
                self.give(to, passed, ptime);
            }
        }
        for e in entries {
            self.done.push(Span {
                start: e.lno,
                lines: e.n,
                commit,
                path: path.clone(),
                orig_start: e.s_lno,
            });
        }
        Ok(())
    }

    /// The diff of stored blob `new` against stored blob `old`: a memoised one, a worker's
    /// when one has it or is computing it, else computed here (only these count towards
    /// starting the workers).
    fn blob_diff(&mut self, old: Oid, new: Oid) -> Result<Arc<BlobDiff>, git2::Error> {
        // The workers' diff first: taking it frees their room ahead (they stop computing while
        // `PREFETCH_AHEAD` diffs wait to be taken). They memoise what they compute, so asking
        // the memo first would find their diffs there, never take them, and stall the workers
        // after their first `PREFETCH_AHEAD` diffs; the main thread then computed the rest.
        if let Some(p) = &self.prefetch
            && let Some(d) = p.shared.take(old, new)
        {
            return Ok(d);
        }
        if let Some(d) = memoised(self.repo, self.odb, old, new) {
            return Ok(d);
        }
        self.diffs += 1;
        computed(self.repo, self.odb, old, new, &mut self.blobs)
    }
}

/// How a commit's parents hold its file: each parent in order (its id, its commit date, where
/// it keeps the file, when it does), up to the first that has the same blob (then `same`).
/// A function of the commit, the path and the blob only, so the scout's serves the main thread.
#[derive(Clone)]
struct Resolved {
    parents: Vec<(Oid, i64, Option<Found>)>,
    same: bool,
}

/// Where `parents` (of `commit`; `None`: the working tree) keep `path`, which the commit has as
/// `blob` under the trees `chain`: by the path, else (for a commit) among the parent's renames.
fn resolve(
    repo: &Repository,
    odb: Option<Odb>,
    parents: &[git2::Commit<'_>],
    commit: Option<Oid>,
    path: &str,
    chain: &[Oid],
    blob: Oid,
) -> Result<Resolved, git2::Error> {
    let mut out = Vec::with_capacity(parents.len());
    for p in parents {
        let mut f = lookup(repo, p.tree_id(), path, chain)?;
        if f.is_none()
            && let Some(id) = commit
        {
            f = renamed_from(repo, odb, p, id, path)?;
        }
        let same = f.as_ref().is_some_and(|f| f.blob == blob);
        out.push((p.id(), p.time().seconds(), f));
        if same {
            return Ok(Resolved { parents: out, same: true });
        }
    }
    Ok(Resolved { parents: out, same: false })
}

/// The file `path` of commit `id` as a rename of a file of `parent` (a whole-file rename, as
/// git blame follows them).
fn renamed_from(
    repo: &Repository,
    odb: Option<Odb>,
    parent: &git2::Commit<'_>,
    id: Oid,
    path: &str,
) -> Result<Option<Found>, git2::Error> {
    let tree_id = repo.find_commit(id)?.tree_id();
    let key = odb.zip(rename_limit(repo)).map(|(odb, limit)| (odb, parent.tree_id(), tree_id, limit));
    let renames = match key.and_then(|k| RENAMES.get(&k)) {
        Some(r) => r,
        None => {
            let r = Arc::new(renames(repo, parent, tree_id)?);
            if let Some(k) = key {
                RENAMES.put(k, Arc::clone(&r));
            }
            r
        }
    };
    match renames.iter().find(|(new, _)| new.as_slice() == path.as_bytes()) {
        Some((_, old)) => lookup(repo, parent.tree_id(), old, &[]),
        None => Ok(None),
    }
}

/// The whole-file renames libgit2 finds from `parent`'s tree to tree `tree` (new path, old
/// path), in its order; those from a path that is not UTF-8 left out.
fn renames(
    repo: &Repository,
    parent: &git2::Commit<'_>,
    tree: Oid,
) -> Result<Vec<(Vec<u8>, String)>, git2::Error> {
    let tree = repo.find_tree(tree)?;
    let ptree = parent.tree()?;
    let mut diff = repo.diff_tree_to_tree(Some(&ptree), Some(&tree), None)?;
    let mut find = git2::DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))?;
    let mut out = Vec::new();
    for d in diff.deltas() {
        if d.status() != git2::Delta::Renamed {
            continue;
        }
        let new = d.new_file().path_bytes().unwrap_or_default();
        let Some(old) = d.old_file().path_bytes().and_then(|p| std::str::from_utf8(p).ok()) else {
            continue;
        };
        out.push((new.to_vec(), old.to_owned()));
    }
    Ok(out)
}

/// What the repository's config sets `diff.renameLimit` to (the one setting libgit2's rename
/// detection reads here: the options name renames, so `diff.renames` is not read): `Some(None)`
/// when unset, `None` when it cannot be told (then renames are not memoised).
fn rename_limit(repo: &Repository) -> Option<Option<i32>> {
    let cfg = repo.config().ok()?;
    match cfg.get_entry("diff.renameLimit") {
        Err(e) if e.code() == git2::ErrorCode::NotFound => Some(None),
        Err(_) => None,
        Ok(_) => cfg.get_i32("diff.renameLimit").ok().map(Some),
    }
}

/// The diffs this thread computes before worker threads start computing them ahead (a short
/// history is done before a thread would have started).
const PREFETCH_AFTER: usize = 8;
/// How long the blame runs before worker threads start. A worker costs a thread, a repository
/// handle and a walk to its first diff, and the main thread may wait for a diff it claimed:
/// on the bench's 120-commit repository (9 diffs for its file, ~0.5 ms in all with a kept
/// handle) starting one after 8 diffs made the call 0.6–1.5 ms slower, while on ripgrep's
/// `defs.rs` (~30 ms) starting them after 32 diffs instead of 8 cost ~8 ms.
const PREFETCH_AFTER_TIME: std::time::Duration = std::time::Duration::from_millis(2);
/// Diffs the workers may compute or hold that the main thread has not taken yet (those for
/// commits it has passed are let go when room is needed).
const PREFETCH_AHEAD: usize = 64;
/// The scout's commits that may wait for the main thread (each holds its parents' paths and
/// tree ids: about 250 bytes, so at most about 1 MiB): further ahead, the scout diffs or
/// waits.
const SCOUT_LEAD: usize = 4096;
/// A blob larger than this is not kept for the thread's next diff.
const KEEP_BLOB: usize = 8 << 20;

/// One diff's hunks and the length of its new side, in lines.
pub(super) struct BlobDiff {
    hunks: Vec<Hunk>,
    after_len: usize,
}

/// A hunk header: where the old side's lines and the new side's lines differ (1-based starts,
/// as in a patch; an empty range names the line before it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Hunk {
    old_start: u32,
    old_lines: u32,
    new_start: u32,
    new_lines: u32,
}

/// The last two blobs a thread read for its diffs: a version of the file is the new side of
/// one diff and the old side of the next (libgit2 keeps no blob in its object cache).
#[derive(Default)]
struct Blobs<'r> {
    kept: VecDeque<git2::Blob<'r>>,
}

impl<'r> Blobs<'r> {
    fn get(&mut self, repo: &'r Repository, id: Oid) -> Result<git2::Blob<'r>, git2::Error> {
        if let Some(b) = self.kept.iter().find(|b| b.id() == id) {
            return Ok(b.clone());
        }
        let b = repo.find_blob(id)?;
        if b.size() <= KEEP_BLOB {
            if self.kept.len() >= 2 {
                self.kept.pop_front();
            }
            self.kept.push_back(b.clone());
        }
        Ok(b)
    }
}

/// Diff stored blob `new` against stored blob `old` (the memoised diff when there is one; a
/// diff computed here is memoised).
fn blob_diff<'r>(
    repo: &'r Repository,
    odb: Option<Odb>,
    old: Oid,
    new: Oid,
    blobs: &mut Blobs<'r>,
) -> Result<Arc<BlobDiff>, git2::Error> {
    match memoised(repo, odb, old, new) {
        Some(d) => Ok(d),
        None => computed(repo, odb, old, new, blobs),
    }
}

/// The memoised diff of `old` against `new`, while the object database still has both blobs.
fn memoised(repo: &Repository, odb: Option<Odb>, old: Oid, new: Oid) -> Option<Arc<BlobDiff>> {
    MEMO.get(&(odb?, old, new)).filter(|_| super::memo::present(repo, &[old, new]))
}

/// The diff of `old` against `new` computed, and memoised.
fn computed<'r>(
    repo: &'r Repository,
    odb: Option<Odb>,
    old: Oid,
    new: Oid,
    blobs: &mut Blobs<'r>,
) -> Result<Arc<BlobDiff>, git2::Error> {
    let (a, b) = (blobs.get(repo, old)?, blobs.get(repo, new)?);
    let hunks = match xdiff_hunks(a.content(), b.content()) {
        Some(h) => h?,
        None => {
            let patch = git2::Patch::from_blobs(&a, no_path(), &b, no_path(), Some(&mut diff_options()))?;
            hunks(&patch)?
        }
    };
    let d = Arc::new(BlobDiff { hunks, after_len: line_count(b.content()) });
    if let Some(odb) = odb {
        MEMO.put((odb, old, new), Arc::clone(&d));
    }
    Ok(d)
}

/// libgit2's diff of two texts with [`diff_options`], as hunks.
fn text_hunks(old: &[u8], new: &[u8]) -> Result<Vec<Hunk>, git2::Error> {
    if let Some(h) = xdiff_hunks(old, new) {
        return h;
    }
    let patch = git2::Patch::from_buffers(old, no_path(), new, no_path(), Some(&mut diff_options()))?;
    hunks(&patch)
}

/// The hunks libgit2's patch of `old` and `new` with [`diff_options`] has, straight from its
/// xdiff (the hunk ranges git blame asks xdiff for, with no patch lines built); `None` when
/// libgit2's own patch must make them: an empty side, a side libgit2 would not diff as text
/// whole (over `MAX_XDIFF`), or a libgit2 whose xdiff this build does not know.
fn xdiff_hunks(old: &[u8], new: &[u8]) -> Option<Result<Vec<Hunk>, git2::Error>> {
    /// libgit2's `DIFF_MAX_FILESIZE`: above it, its patch does not diff the sides.
    const MAX_XDIFF: usize = 0x2000_0000;
    if old.is_empty() || new.is_empty() || old.len() > MAX_XDIFF || new.len() > MAX_XDIFF {
        return None;
    }
    if !super::xdiff::xdiff_layout_known() {
        return None;
    }
    let Some(raw) = super::xdiff::hunks(old, new, super::xdiff::INDENT_HEURISTIC) else {
        return Some(Err(git2::Error::from_str("blame: xdiff failed (out of memory?)")));
    };
    // A patch's header: a 1-based start, or for an empty range the line before it.
    let header = |start: usize, n: usize| u32::try_from(if n == 0 { start } else { start + 1 }).ok();
    let count = |n: usize| u32::try_from(n).ok();
    let out: Option<Vec<Hunk>> = raw
        .into_iter()
        .map(|[s1, n1, s2, n2]| {
            Some(Hunk {
                old_start: header(s1, n1)?,
                old_lines: count(n1)?,
                new_start: header(s2, n2)?,
                new_lines: count(n2)?,
            })
        })
        .collect();
    Some(out.ok_or_else(|| git2::Error::from_str("blame: a file has too many lines")))
}

fn hunks(patch: &git2::Patch<'_>) -> Result<Vec<Hunk>, git2::Error> {
    let mut out = Vec::with_capacity(patch.num_hunks());
    for h in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(h)?;
        out.push(Hunk {
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
        });
    }
    Ok(out)
}

/// Where the workers start: the origin the main thread is at (queued at commit date `time`).
#[derive(Clone)]
struct Start {
    commit: Oid,
    path: String,
    chain: Vec<Oid>,
    blob: Oid,
    time: i64,
}

/// The worker threads; dropping it stops and joins them.
struct Prefetch {
    shared: Arc<Shared>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Prefetch {
    /// Start `workers` threads (the caller gives one per spare core, at most 3): the first is
    /// the scout.
    fn start(repo: &Repository, odb: Option<Odb>, workers: usize, start: Start) -> Option<Prefetch> {
        if workers == 0 {
            return None;
        }
        let shared = Arc::new(Shared { state: Mutex::new(State::new()), cond: Condvar::new() });
        let dir = repo.path().to_path_buf();
        let workdir = repo.workdir().map(std::path::Path::to_path_buf);
        let mut threads = Vec::with_capacity(workers);
        let mut start = Some(start);
        for _ in 0..workers {
            let (mine, dir, workdir) = (Arc::clone(&shared), dir.clone(), workdir.clone());
            // The first thread walks: `start` is taken once.
            let scout = start.take();
            let spawned = std::thread::Builder::new().name("eddie-blame".into()).spawn(move || {
                // Whatever happens (no repository, an error, a panic), the walk is over when
                // the scout ends, so that no thread waits for its pairs.
                let _walked = scout.is_some().then(|| Walked(&mine));
                // A worker that fails only stops helping: the main thread does the rest.
                // A handle kept from an earlier call has the history's objects parsed already.
                let work = |repo: &Repository| {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match scout {
                        Some(start) => walk(repo, odb, start, &mine),
                        None => {
                            diff_pairs(repo, odb, &mine);
                            Ok(())
                        }
                    }));
                };
                match workdir.map(|w| super::handles::lend(&w)) {
                    Some(Ok(repo)) => work(&repo),
                    _ => {
                        if let Ok(repo) = Repository::open(&dir) {
                            work(&repo);
                        }
                    }
                }
            });
            match spawned {
                Ok(t) => threads.push(t),
                // No scout: the walk is over before it began.
                Err(_) if start.is_none() && threads.is_empty() => shared.lock().walked = true,
                Err(_) => {}
            }
        }
        Some(Prefetch { shared, threads })
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.cond.notify_all();
        for t in self.threads.drain(..) {
            // A worker publishes every diff it claims, even one that panicked (see
            // `Shared::finish`): the main thread never waits for one that is gone.
            let _ = t.join();
        }
    }
}

/// Marks the scout's walk over when dropped.
struct Walked<'a>(&'a Shared);

impl Drop for Walked<'_> {
    fn drop(&mut self) {
        self.0.lock().walked = true;
        self.0.cond.notify_all();
    }
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
}

struct State {
    stop: bool,
    /// The commit date of the origin the main thread is at: the scout's commits of later dates
    /// have been passed (the main thread walks by date) and are dropped when room is needed.
    now: i64,
    /// The scout's commits, until the main thread takes them: (commit, path) → (commit date, how
    /// its parents hold the file).
    resolved: HashMap<(Oid, String), (i64, Resolved)>,
    /// Blob pairs the scout found, in its order, to be diffed, with the commit date of the
    /// commit that needs each.
    pending: VecDeque<((Oid, Oid), i64)>,
    /// The scout's walk is over (done, failed or never started): no more pairs come.
    walked: bool,
    /// Diffs a thread computes or has computed (by old blob, new blob).
    claimed: HashSet<(Oid, Oid)>,
    /// Diffs a worker is computing now (with the date of the commit that needs each): the only
    /// ones the main thread waits for.
    in_flight: HashMap<(Oid, Oid), i64>,
    /// Diffs the workers computed, until the main thread takes them (`None`: it failed), with
    /// the date of the commit that needs each.
    done: HashMap<(Oid, Oid), (i64, Diffed)>,
}

/// A worker's diff of a pair (`None`: it failed or panicked).
type Diffed = Option<Arc<BlobDiff>>;

impl State {
    fn new() -> Self {
        Self {
            stop: false,
            now: i64::MAX,
            resolved: HashMap::new(),
            pending: VecDeque::new(),
            walked: false,
            claimed: HashSet::new(),
            in_flight: HashMap::new(),
            done: HashMap::new(),
        }
    }

    /// The first pending pair no thread has claimed (the last, `last`), claimed, while there is
    /// room for its diff. Diffs for commits the main thread has passed (it walks by date) are
    /// let go when room is needed: it skipped them (no lines left for that parent, or a side
    /// branch that got none), and should it want one after all, the memo has it.
    fn claim_pending(&mut self, last: bool) -> Option<(Oid, Oid)> {
        if self.done.len() + self.in_flight.len() >= PREFETCH_AHEAD {
            let now = self.now;
            self.done.retain(|_, (time, _)| *time <= now);
            if self.done.len() + self.in_flight.len() >= PREFETCH_AHEAD {
                return None;
            }
        }
        while let Some((key, time)) = if last { self.pending.pop_back() } else { self.pending.pop_front() } {
            if self.claimed.insert(key) {
                self.in_flight.insert(key, time);
                return Some(key);
            }
        }
        None
    }

    /// How many of the scout's commits wait for the main thread (those it has passed dropped
    /// when they are many).
    fn lead(&mut self) -> usize {
        if self.resolved.len() >= SCOUT_LEAD {
            let now = self.now;
            self.resolved.retain(|_, (time, _)| *time <= now);
        }
        self.resolved.len()
    }
}

/// What the scout does next.
enum Job {
    Walk,
    Diff((Oid, Oid)),
    Stop,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wait<'a>(&self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cond.wait(st).unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The main thread's side: a worker's diff (waiting while one computes it), or `None` when
    /// no worker has it (then it is claimed, so that no worker starts it, and the main thread
    /// finds it in the memo or computes it). A pair asked for again (a revert reverted, a
    /// commit reached twice) after its diff was taken, or computed here, is not waited for.
    fn take(&self, old: Oid, new: Oid) -> Option<Arc<BlobDiff>> {
        let key = (old, new);
        let mut st = self.lock();
        loop {
            if let Some((_, d)) = st.done.remove(&key) {
                self.cond.notify_all();
                return d;
            }
            if !st.in_flight.contains_key(&key) {
                st.claimed.insert(key);
                return None;
            }
            st = self.wait(st);
        }
    }

    /// The main thread's side: how the parents of `commit` hold `path`, when the scout has it.
    /// The main thread is now at commit date `time`.
    fn resolved(&self, commit: Oid, path: &str, time: i64) -> Option<Resolved> {
        let mut st = self.lock();
        let moved = st.now != time;
        st.now = time;
        let r = st.resolved.remove(&(commit, path.to_owned())).map(|(_, r)| r);
        // Threads waiting for room (the scout far ahead, the diffs waiting to be taken at
        // their bound) may have some now that passed commits can be let go.
        let full = st.resolved.len() >= SCOUT_LEAD || st.done.len() + st.in_flight.len() >= PREFETCH_AHEAD;
        if r.is_some() || (moved && full) {
            self.cond.notify_all();
        }
        r
    }

    /// A worker's side: publish the diff of a claimed pair (`None`: it failed or panicked).
    fn finish(&self, key: (Oid, Oid), d: Option<Arc<BlobDiff>>) -> bool {
        let mut st = self.lock();
        let time = st.in_flight.remove(&key).unwrap_or(i64::MAX);
        st.done.insert(key, (time, d));
        self.cond.notify_all();
        !st.stop
    }

    /// The scout's side: publish how the parents of a commit hold the file, and the pairs to
    /// diff that it brings.
    fn publish(&self, key: (Oid, String), time: i64, r: &Resolved, pairs: Vec<(Oid, Oid)>) {
        let mut st = self.lock();
        st.resolved.insert(key, (time, r.clone()));
        st.pending.extend(pairs.into_iter().map(|pair| (pair, time)));
        self.cond.notify_all();
    }

    /// The scout's side: walk on (the walk costs little beside the diffs, and the main thread
    /// then finds every commit's parents ready); once the walk is over (or [`SCOUT_LEAD`] ahead),
    /// diff pending pairs from the last one, which the main thread (taking them from the first
    /// one) will need last; wait when there is nothing to do.
    fn next_job(&self, walk_left: bool) -> Job {
        let mut st = self.lock();
        loop {
            if st.stop {
                return Job::Stop;
            }
            if walk_left && st.lead() < SCOUT_LEAD {
                return Job::Walk;
            }
            if let Some(key) = st.claim_pending(true) {
                return Job::Diff(key);
            }
            if !walk_left && st.pending.is_empty() {
                return Job::Stop;
            }
            st = self.wait(st);
        }
    }

    /// A diffing worker's side: the next pending pair, claimed; `None`: stop.
    fn next_pair(&self) -> Option<(Oid, Oid)> {
        let mut st = self.lock();
        loop {
            if st.stop {
                return None;
            }
            if let Some(key) = st.claim_pending(false) {
                return Some(key);
            }
            if st.walked && st.pending.is_empty() {
                return None;
            }
            st = self.wait(st);
        }
    }
}

/// Diff a claimed pair and publish it, whatever happens (so that the main thread never waits
/// for it in vain). `false`: stop.
fn diff_claimed<'r>(
    repo: &'r Repository,
    odb: Option<Odb>,
    (old, new): (Oid, Oid),
    shared: &Shared,
    blobs: &mut Blobs<'r>,
) -> bool {
    let d = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| blob_diff(repo, odb, old, new, blobs)));
    shared.finish((old, new), d.ok().and_then(Result::ok))
}

/// A diffing worker: diff the scout's pairs, in its order, until there are none.
fn diff_pairs(repo: &Repository, odb: Option<Odb>, shared: &Shared) {
    let mut blobs = Blobs::default();
    while let Some(key) = shared.next_pair() {
        if !diff_claimed(repo, odb, key, shared, &mut blobs) {
            return;
        }
    }
}

/// The scout: walk the history of the file from `start` as the main thread does, as if every
/// parent took lines, publishing how each commit's parents hold the file and the blob pairs to
/// diff; diff pairs itself once far enough ahead.
fn walk(repo: &Repository, odb: Option<Odb>, start: Start, shared: &Shared) -> Result<(), git2::Error> {
    let mut blobs = Blobs::default();
    let mut origins = vec![start];
    let mut seen: HashSet<(Oid, String)> = HashSet::new();
    let mut queue: BinaryHeap<(i64, Reverse<usize>)> = BinaryHeap::new();
    queue.push((i64::MAX, Reverse(0)));
    loop {
        match shared.next_job(!queue.is_empty()) {
            Job::Stop => return Ok(()),
            Job::Diff(key) => {
                if !diff_claimed(repo, odb, key, shared, &mut blobs) {
                    return Ok(());
                }
                continue;
            }
            Job::Walk => {}
        }
        let Some((_, Reverse(at))) = queue.pop() else { continue };
        let Some(o) = origins.get(at).cloned() else { continue };
        let parents: Vec<git2::Commit<'_>> = repo.find_commit(o.commit)?.parents().collect();
        let r = resolve(repo, odb, &parents, Some(o.commit), &o.path, &o.chain, o.blob)?;
        let mut next = Vec::with_capacity(r.parents.len());
        let mut pairs = Vec::with_capacity(r.parents.len());
        if r.same {
            next.extend(r.parents.last().cloned());
        } else {
            let mut blobs_seen = Vec::with_capacity(r.parents.len());
            for p in &r.parents {
                let Some(f) = p.2.as_ref().filter(|f| !blobs_seen.contains(&f.blob)) else { continue };
                blobs_seen.push(f.blob);
                pairs.push((f.blob, o.blob));
                next.push(p.clone());
            }
        }
        shared.publish((o.commit, o.path), o.time, &r, pairs);
        for (p, time, f) in next {
            let Some(f) = f else { continue };
            if seen.insert((p, f.path.clone())) {
                queue.push((time, Reverse(origins.len())));
                origins.push(Start { commit: p, path: f.path, chain: f.chain, blob: f.blob, time });
            }
        }
    }
}

/// The blob at `path` under the root tree `root`, with the ids of the trees along the path.
/// `known` is the same path's chain in a child commit: once an id along the way equals it,
/// the rest is the same and is not read.
fn lookup(repo: &Repository, root: Oid, path: &str, known: &[Oid]) -> Result<Option<Found>, git2::Error> {
    let parts: Vec<&str> = path.split('/').collect();
    let same = |depth: usize, id: Oid| known.len() == parts.len() + 1 && known.get(depth) == Some(&id);
    let found = |chain: Vec<Oid>| {
        let blob = chain.last().copied().unwrap_or(Oid::ZERO_SHA1);
        Some(Found { path: path.to_owned(), chain, blob })
    };
    if same(0, root) {
        return Ok(found(known.to_vec()));
    }
    let mut chain = Vec::with_capacity(parts.len() + 1);
    chain.push(root);
    let mut cur = root;
    for (i, name) in parts.iter().enumerate() {
        let tree = repo.find_tree(cur)?;
        let Some(entry) = tree.get_name(name) else { return Ok(None) };
        let last = i + 1 == parts.len();
        let want = if last { ObjectType::Blob } else { ObjectType::Tree };
        if entry.kind() != Some(want) {
            return Ok(None);
        }
        cur = entry.id();
        if same(i + 1, cur) {
            return Ok(found(known.to_vec()));
        }
        chain.push(cur);
    }
    Ok(found(chain))
}

/// The path given to libgit2 for both sides of a blob diff: an empty one. Without a path
/// libgit2 names the sides `file` and looks up the `diff` attribute of that name (every
/// attributes file of the repository stat()ed, folders resolved) on every diff; with an empty
/// path it uses its default driver, which is what `git blame` does (it runs xdiff on the two
/// texts, attributes unread; the text diff is forced here anyway).
fn no_path() -> Option<&'static std::path::Path> {
    Some(std::path::Path::new(""))
}

/// libgit2's diff is git's own xdiff: the same Myers, the same record cleanup, the same indent
/// heuristic, so a change that could line up in more than one place lines up where git puts it.
fn diff_options() -> git2::DiffOptions {
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(0).interhunk_lines(0).indent_heuristic(true).force_text(true);
    opts
}

/// Split `entries` (lines of the patch's new side, `after_len` of them) into those its old side
/// has unchanged (renumbered to the old side's lines) and those it does not.
fn split(hunks: &[Hunk], after_len: usize, entries: Vec<Entry>) -> (Vec<Entry>, Vec<Entry>) {
    let mut map = vec![usize::MAX; after_len];
    let (mut a, mut b) = (0usize, 0usize);
    let mut keep = |upto: usize, a: &mut usize, b: &mut usize| {
        while *a < upto {
            if let Some(m) = map.get_mut(*a) {
                *m = *b;
            }
            *a += 1;
            *b += 1;
        }
    };
    // Hunk ranges are 1-based; an empty range names the line before it.
    let start = |first: u32, n: u32| if n == 0 { first as usize } else { first as usize - 1 };
    for hunk in hunks {
        let a_start = start(hunk.new_start, hunk.new_lines);
        let b_start = start(hunk.old_start, hunk.old_lines);
        keep(a_start, &mut a, &mut b);
        (a, b) = (a_start + hunk.new_lines as usize, b_start + hunk.old_lines as usize);
    }
    keep(after_len, &mut a, &mut b);
    let (mut passed, mut kept) = (Vec::new(), Vec::new());
    for e in entries {
        let mut k = 0;
        while k < e.n {
            let to = map.get(e.s_lno + k).copied().unwrap_or(usize::MAX);
            let mut n = 1;
            while k + n < e.n {
                let next = map.get(e.s_lno + k + n).copied().unwrap_or(usize::MAX);
                let run = if to == usize::MAX { next == usize::MAX } else { next == to + n };
                if !run {
                    break;
                }
                n += 1;
            }
            let piece = Entry { lno: e.lno + k, n, s_lno: if to == usize::MAX { e.s_lno + k } else { to } };
            if to == usize::MAX {
                kept.push(piece)
            } else {
                passed.push(piece)
            }
            k += n;
        }
    }
    (passed, kept)
}

/// The number of lines in `text` (a last line without a newline counts).
fn line_count(text: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text).count();
    newlines + usize::from(text.last().is_some_and(|&c| c != b'\n'))
}

/// Merge adjacent spans of one commit and path whose original lines follow each other.
fn coalesce(spans: Vec<Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        if let Some(last) = out.last_mut()
            && last.commit == s.commit
            && last.path == s.path
            && last.start + last.lines == s.start
            && last.orig_start + last.lines == s.orig_start
        {
            last.lines += s.lines;
            continue;
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The tests that start worker threads run one at a time (they count this process's
    /// `eddie-blame` threads; no other test of this binary starts one).
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// This process's threads named `eddie-blame`.
    fn workers_running() -> usize {
        let tasks = std::fs::read_dir("/proc/self/task").unwrap();
        tasks
            .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
            .filter(|name| name.trim() == "eddie-blame")
            .count()
    }

    /// A tree holding `text` at `path` (nested folders made) and a `README` beside it.
    fn tree(repo: &Repository, path: &str, text: &str) -> Oid {
        let mut id = repo.blob(text.as_bytes()).unwrap();
        let mut mode = 0o100_644;
        let parts: Vec<&str> = path.split('/').collect();
        for (i, name) in parts.iter().enumerate().rev() {
            let mut tb = repo.treebuilder(None).unwrap();
            tb.insert(name, id, mode).unwrap();
            if i == 0 {
                tb.insert("README", repo.blob(b"read me\n").unwrap(), 0o100_644).unwrap();
            }
            id = tb.write().unwrap();
            mode = 0o040_000;
        }
        id
    }

    fn commit(repo: &Repository, parents: &[Oid], path: &str, lines: &[String], time: i64) -> Oid {
        let sig = git2::Signature::new("Ada", "ada@example.com", &git2::Time::new(time, 0)).unwrap();
        let tree = repo.find_tree(tree(repo, path, &(lines.join("\n") + "\n"))).unwrap();
        let parents: Vec<git2::Commit<'_>> = parents.iter().map(|p| repo.find_commit(*p).unwrap()).collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(None, &sig, &sig, &format!("at {time}"), &tree, &parents).unwrap()
    }

    /// A history of about 260 commits of one 300-line file: pseudo-random edits, a side line
    /// merged back every 20 commits (both lines adding one same line; the merge edits too), an
    /// exact rename and a rename with an edit,
    /// and runs of commits in the same second. The same ids in every repository it is built in.
    /// The head and the file's last path.
    fn history(dir: &Path) -> (Repository, Oid, &'static str) {
        let repo = Repository::init(dir).unwrap();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut lines: Vec<String> = (0..300).map(|i| format!("fn f{i}() {{ {i} }}")).collect();
        let mut path = "src/old/lib.rs";
        let mut head = commit(&repo, &[], path, &lines, 1_700_000_000);
        for i in 1..240 {
            // Same-second runs: commits 40..=80 share one date.
            let time = if (40..=80).contains(&i) { 1_700_000_040 } else { 1_700_000_000 + i as i64 };
            if i == 100 || i == 170 {
                path = if i == 100 { "src/new/lib2.rs" } else { "top.rs" };
                if i == 170 {
                    lines.insert(0, "// moved".to_owned());
                }
                head = commit(&repo, &[head], path, &lines, time);
                continue;
            }
            let before = lines.clone();
            for _ in 0..1 + rnd(3) {
                let at = rnd(lines.len());
                match rnd(3) {
                    0 => lines[at] = format!("fn changed{i}_{at}() {{}}"),
                    1 => lines.insert(at, format!("// added {i}")),
                    _ if lines.len() > 50 => drop(lines.remove(at)),
                    _ => lines.push(format!("// end {i}")),
                }
            }
            if i % 20 == 0 {
                // Both lines of history add the same line: the merge's first parent takes it.
                let twin = format!("// twin {i}");
                let mut side = before;
                side.insert(10, twin.clone());
                side[0] = format!("// side {i}");
                let s = commit(&repo, &[head], path, &side, time);
                lines.insert(10, twin);
                let m = commit(&repo, &[head], path, &lines, time);
                lines[0] = format!("// side {i}");
                lines[5] = format!("// merged {i}");
                head = commit(&repo, &[m, s], path, &lines, time);
            } else {
                head = commit(&repo, &[head], path, &lines, time);
            }
        }
        (repo, head, path)
    }

    /// The lines of `path` at `head`.
    fn lines_at(repo: &Repository, head: &git2::Commit<'_>, path: &str) -> usize {
        let found = lookup(repo, head.tree_id(), path, &[]).unwrap().unwrap();
        line_count(repo.find_blob(found.blob).unwrap().content())
    }

    /// Blame of the whole file at `head` in a fresh copy of the history (nothing memoised for
    /// it), with `workers` threads: the spans and how many commits came from the scout.
    fn blame_in_fresh(workers: usize, worktree: Option<&[u8]>) -> (Vec<Span>, usize) {
        let t = tempfile::tempdir().unwrap();
        let (repo, head, path) = history(t.path());
        let head = repo.find_commit(head).unwrap();
        let n = worktree.map_or_else(|| lines_at(&repo, &head, path), line_count);
        let (spans, from_scout) = blame_with(&repo, &head, path, worktree, 0..n, &|| false, workers).unwrap();
        (spans.unwrap(), from_scout)
    }

    /// The scout walks the history once and the main thread takes each commit's parents from
    /// it (renames, merges and same-second commits included, where its order and the main
    /// thread's differ): the answer is the one the main thread finds alone, for every number
    /// of workers, and no worker is left running.
    #[test]
    fn the_scout_hands_its_walk_over_and_the_answer_does_not_change() {
        let _serial = serial();
        let (alone, none) = blame_in_fresh(0, None);
        assert_eq!(none, 0);
        assert!(alone.iter().any(|s| s.path == "src/old/lib.rs"), "the blame crosses both renames");
        for workers in 1..=3 {
            // About 220 of the 260 commits here; a scout starved of the cores by a loaded
            // machine hands over fewer (up to three tries for one that hands any over).
            let mut from_scout = 0;
            for _ in 0..3 {
                let (spans, n) = blame_in_fresh(workers, None);
                assert_eq!(spans, alone, "{workers} workers");
                from_scout = n;
                if n > 0 {
                    break;
                }
            }
            assert!(from_scout > 0, "{workers} workers: no commit from the scout");
            assert_eq!(workers_running(), 0);
        }
        // The working tree's text on top (the origin without a commit).
        let text = (0..310).map(|i| format!("fn f{i}() {{ {i} }}\n")).collect::<String>();
        let (alone, _) = blame_in_fresh(0, Some(text.as_bytes()));
        assert!(alone.iter().any(|s| s.commit.is_none()));
        assert_eq!(blame_in_fresh(2, Some(text.as_bytes())).0, alone);
    }

    /// A file toggled between two versions at the bottom of a long history (X, Y, X, Y: a revert
    /// reverted), so the main thread asks for the diff of one blob pair twice, after it was
    /// taken or computed once: answered every time (one worker set waited for ever for a pair
    /// that was no longer being computed), as the main thread finds it alone.
    #[test]
    fn a_pair_asked_for_twice_is_never_waited_for() {
        let _serial = serial();
        let build = |dir: &Path| {
            let repo = Repository::init(dir).unwrap();
            let x: Vec<String> = (0..300).map(|i| format!("fn f{i}() {{ {i} }}")).collect();
            let mut y = x.clone();
            for i in (0..300).step_by(7) {
                y[i] = format!("fn g{i}() {{}}");
            }
            let mut head = commit(&repo, &[], "lib.rs", &x, 1_700_000_000);
            for (i, v) in [&y, &x, &y].into_iter().enumerate() {
                head = commit(&repo, &[head], "lib.rs", v, 1_700_000_001 + i as i64);
            }
            let mut lines = y;
            for i in 0..200 {
                let at = (i * 37) % lines.len();
                lines[at] = format!("fn h{i}() {{}}");
                head = commit(&repo, &[head], "lib.rs", &lines, 1_700_000_010 + i as i64);
            }
            (repo, head)
        };
        let blame_in = |workers: usize| {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let t = tempfile::tempdir().unwrap();
                let (repo, head) = build(t.path());
                let head = repo.find_commit(head).unwrap();
                let n = lines_at(&repo, &head, "lib.rs");
                let r = blame_with(&repo, &head, "lib.rs", None, 0..n, &|| false, workers).unwrap();
                let _ = tx.send(r.0.unwrap());
            });
            rx.recv_timeout(std::time::Duration::from_secs(120)).expect("the blame answers")
        };
        let alone = blame_in(0);
        assert!(alone.iter().any(|s| s.orig_start > 0));
        for workers in 1..=3 {
            assert_eq!(blame_in(workers), alone, "{workers} workers");
        }
        assert_eq!(workers_running(), 0);
    }

    /// An abort while the workers run: the blame stops with the cancelled error, and by the time
    /// it returns every worker has been joined.
    #[test]
    fn an_abort_with_workers_running_stops_the_blame_and_joins_them() {
        let _serial = serial();
        let t = tempfile::tempdir().unwrap();
        let (repo, head, path) = history(t.path());
        let head = repo.find_commit(head).unwrap();
        let seen = std::cell::Cell::new(false);
        let cancelled = || {
            seen.set(seen.get() || workers_running() > 0);
            seen.get()
        };
        let n = lines_at(&repo, &head, path);
        let e = blame_with(&repo, &head, path, None, 0..n, &cancelled, 2).map(|_| ()).unwrap_err();
        assert!(seen.get(), "the workers were running");
        assert!(is_cancelled(&e), "{e}");
        assert_eq!(workers_running(), 0);
    }

    /// Four blames of one repository at once, each with its workers (one memo, one object
    /// database): each answers as the main thread alone does.
    #[test]
    fn concurrent_blames_of_one_repository_answer_alike() {
        let _serial = serial();
        let (alone, _) = blame_in_fresh(0, None);
        let t = tempfile::tempdir().unwrap();
        let (_, head, path) = history(t.path());
        let answers: Vec<(Vec<Span>, usize)> = std::thread::scope(|s| {
            let calls: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let repo = Repository::open(t.path()).unwrap();
                        let head = repo.find_commit(head).unwrap();
                        let n = lines_at(&repo, &head, path);
                        let (spans, from_scout) =
                            blame_with(&repo, &head, path, None, 0..n, &|| false, 2).unwrap();
                        (spans.unwrap(), from_scout)
                    })
                })
                .collect();
            calls.into_iter().map(|c| c.join().unwrap()).collect()
        });
        for (spans, _) in &answers {
            assert_eq!(spans, &alone);
        }
        assert_eq!(workers_running(), 0);
    }
}
