//! `git_status`'s own scan of the working tree, for the common case (Linux).
//!
//! libgit2's `statuses()` lstat()s every path by its full name on one thread. This scan reads
//! each folder once (`openat` relative to its parent's descriptor, `getdents` with `d_type`,
//! `fstatat` relative to the folder), on a few threads, and compares each index entry's stat data
//! as git does: equal and not racy is unchanged without a read, a different size is modified
//! without a read, anything else is hashed (the blob id git would compute: no content filters
//! apply when the scan does). Paths not in the index are asked of libgit2's ignore rules
//! (`is_path_ignored`), once per folder for a folder. HEAD against the index is libgit2's own
//! `diff_tree_to_index` with the rename detection `statuses()` uses, computed while the scan
//! runs. The result is the same list of entries `statuses()` gives, in its order.
//!
//! [`items`] answers `None` (and the caller uses `statuses()`) whenever the case is not one the
//! scan handles exactly: conflicts, gitlinks, skip-worktree or assume-unchanged entries, entry
//! modes other than 100644/100755/120000, `core.ignorecase`, `core.filemode` or `core.symlinks`
//! off, `core.trustctime` off or `core.checkStat` set, `core.autocrlf`/`core.eol` set, any
//! attributes (a `.gitattributes` in the index or anywhere in the tree, `info/attributes`,
//! `core.attributesFile`, the user's or the system's attributes file), a nested repository,
//! a special file (FIFO, socket, device) where the index has a file, and any folder that cannot
//! be opened as one when the scan reaches it (for example swapped for a symlink meanwhile).
//! Nothing is ever followed: folders are opened with `O_NOFOLLOW | O_DIRECTORY` relative to
//! their parent, stats use `AT_SYMLINK_NOFOLLOW`, a file is opened for hashing with
//! `O_NOFOLLOW | O_NONBLOCK` and read only when `fstat` says it is a regular file.

use std::collections::HashMap;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Condvar, Mutex, PoisonError};

use git2::{Delta, ObjectType, Oid, Repository, Status};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, Stat};
use rustix::io::Errno;

use super::git_status::Item;

/// The index entry flags git's index format defines (`flags` and `flags_extended`).
const STAGE_MASK: u16 = 0x3000;
const ASSUME_VALID: u16 = 0x8000;
const SKIP_WORKTREE: u16 = 0x4000;
const EXTENDED: u16 = 0x4000;
const INTENT_TO_ADD: u16 = 0x2000;

const MODE_FILE: u32 = 0o100_644;
const MODE_EXEC: u32 = 0o100_755;
const MODE_LINK: u32 = 0o120_000;

/// The largest file the scan hashes itself (bytes).
const HASH_IN_MEMORY: i64 = 256 << 20;

/// A HEAD-vs-index change: old path, new path, flags.
type Staged = (Vec<u8>, Vec<u8>, Status);

/// What the scan needs of one index entry.
struct Entry {
    path: Vec<u8>,
    mode: u32,
    id: Oid,
    size: u32,
    mtime: (i32, u32),
    ctime: (i32, u32),
    ino: u32,
    uid: u32,
    gid: u32,
}

/// A folder to read: its descriptor, its path with a trailing `/` (empty for the root), and the
/// index entries under it (`lo..hi`, empty for an untracked folder).
struct Job {
    fd: OwnedFd,
    prefix: Vec<u8>,
    lo: usize,
    hi: usize,
}

/// What one thread found.
#[derive(Default)]
struct Found {
    /// Index paths with their working-tree flag (modified, deleted, type changed).
    changed: Vec<(Vec<u8>, Status)>,
    /// Paths not in the index (file or folder), to be asked of the ignore rules.
    candidates: Vec<(Vec<u8>, bool)>,
}

/// The scan cannot answer exactly: use `statuses()`.
struct Unsupported;

/// The status entries of `repo` (whole repository, no ignored entries), or `None` when the
/// case is not one the scan handles exactly.
pub(super) fn items(repo: &Repository) -> Option<Vec<Item>> {
    let workdir = repo.workdir()?.to_path_buf();
    // No attributes file outside the tree (the tree's own are checked by the scan and the index).
    if !config_allows(repo) || super::log_numstat::attributes_outside_tree(repo) {
        return None;
    }
    // The index as the scan reads it: parsed here, without the checksum pass libgit2 makes
    // (git does not verify it on reading either), so the scan starts at once. libgit2 reads the
    // same file for HEAD-vs-index meanwhile; the file must be the same one after both.
    let index_path = repo.path().join("index");
    let before = identity(&index_path)?;
    let ParsedIndex { entries, tree } = parse_index(&std::fs::read(&index_path).ok()?)?;
    // Entries as new as the index file are racy (git's rule).
    let racy_from = before.2;
    let root =
        rustix::fs::open(&workdir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .ok()?;
    let threads = std::thread::available_parallelism().map_or(2, usize::from).clamp(1, 8);
    let first = Job { fd: root, prefix: Vec::new(), lo: 0, hi: entries.len() };
    // HEAD against the index on this thread while the others scan.
    let (found, head_to_index) = std::thread::scope(|s| {
        let scan = std::thread::Builder::new()
            .spawn_scoped(s, || run_pool(&entries, vec![first], racy_from, threads))
            .ok();
        // The index's cache-tree, valid for all of it, names HEAD's tree: nothing is staged (as
        // git concludes from it), and libgit2 need not read the index at all.
        let head_tree = repo.head().ok().and_then(|h| h.peel_to_tree().ok()).map(|t| t.id());
        let h2i = if tree.is_some() && tree == head_tree {
            Some(Vec::new())
        } else {
            libgit2_side(repo, entries.len())
        };
        (scan.and_then(|h| h.join().ok()).and_then(Result::ok), h2i)
    });
    if identity(&index_path)? != before {
        return None;
    }
    let mut found = found?;
    let head_to_index = head_to_index?;
    // Paths not in the index: untracked unless ignored; untracked folders are read in turn.
    let mut untracked: Vec<Vec<u8>> = Vec::new();
    let mut dir_ignored: HashMap<Vec<u8>, bool> = HashMap::new();
    loop {
        let mut jobs = Vec::new();
        for (path, is_dir) in std::mem::take(&mut found.candidates) {
            if ignored(repo, &mut dir_ignored, &path, is_dir)? {
                continue;
            }
            if is_dir {
                match open_dir_path(&workdir, &path) {
                    Ok(fd) => {
                        let mut prefix = path;
                        prefix.push(b'/');
                        jobs.push(Job { fd, prefix, lo: 0, hi: 0 });
                    }
                    // Replaced by a symlink or a file since it was read: a file now.
                    Err(Errno::LOOP | Errno::NOTDIR) => found.candidates.push((path, false)),
                    Err(Errno::NOENT) => {}
                    Err(_) => return None,
                }
            } else {
                untracked.push(path);
            }
        }
        if jobs.is_empty() && found.candidates.is_empty() {
            break;
        }
        if !jobs.is_empty() {
            let more = run_pool(&entries, jobs, racy_from, threads).ok()?;
            found.changed.extend(more.changed);
            found.candidates.extend(more.candidates);
        }
    }
    Some(merge(head_to_index, found.changed, untracked))
}

/// The config values the scan depends on are git's defaults (or ones it handles).
fn config_allows(repo: &Repository) -> bool {
    let Ok(cfg) = repo.config() else { return false };
    let flag = |name: &str, default: bool| cfg.get_bool(name).unwrap_or(default);
    let set = |name: &str| cfg.get_entry(name).is_ok();
    !flag("core.ignorecase", false)
        && flag("core.filemode", true)
        && flag("core.symlinks", true)
        && flag("core.trustctime", true)
        && !set("core.checkStat")
        && !flag("core.autocrlf", false)
        && !set("core.eol")
        && !set("core.attributesFile")
        && (!set("core.autocrlf") || cfg.get_bool("core.autocrlf").is_ok())
        && cfg.get_string("extensions.objectformat").map_or(true, |f| f.eq_ignore_ascii_case("sha1"))
}

/// What identifies a version of the index file: device, inode, mtime (s, ns), size.
fn identity(path: &std::path::Path) -> Option<(u64, u64, i64, i64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.size()))
}

/// libgit2's side of the call: its index (which must hold `len` entries, as the scan's) and
/// HEAD against it.
fn libgit2_side(repo: &Repository, len: usize) -> Option<Vec<Staged>> {
    let mut index = repo.index().ok()?;
    index.read(false).ok()?;
    if index.len() != len {
        return None;
    }
    let head = match repo.head() {
        Ok(h) => Some(h.peel_to_tree().ok()?),
        Err(e) if matches!(e.code(), git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound) => None,
        Err(_) => return None,
    };
    head_to_index(repo, head.as_ref(), &index)
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// An index file as the scan reads it.
struct ParsedIndex {
    entries: Vec<Entry>,
    /// The tree the whole index would write, when its cache-tree extension (`TREE`) says so
    /// (valid for every entry) and there are no intent-to-add entries.
    tree: Option<Oid>,
}

/// The entries of an index file (git's format, versions 2 and 3, SHA-1 ids), or `None` for
/// anything else or an entry the scan leaves to libgit2 (see the module's comment).
fn parse_index(data: &[u8]) -> Option<ParsedIndex> {
    if data.get(..4)? != b"DIRC" || !matches!(be32(data, 4)?, 2 | 3) {
        return None;
    }
    let count = be32(data, 8)? as usize;
    let mut out = Vec::with_capacity(count);
    let mut pos = 12;
    let mut intent_to_add = false;
    for _ in 0..count {
        let e = data.get(pos..pos + 62)?;
        let flags = u16::from_be_bytes([e[60], e[61]]);
        let mut head = 62;
        if flags & EXTENDED != 0 {
            let ext = u16::from_be_bytes(data.get(pos + 62..pos + 64)?.try_into().ok()?);
            if ext & SKIP_WORKTREE != 0 {
                return None;
            }
            intent_to_add |= ext & INTENT_TO_ADD != 0;
            head = 64;
        }
        let rest = data.get(pos + head..)?;
        let len = memchr::memchr(0, rest)?;
        let path = &rest[..len];
        let mode = be32(e, 24)?;
        let unsupported = flags & (STAGE_MASK | ASSUME_VALID) != 0
            || !matches!(mode, MODE_FILE | MODE_EXEC | MODE_LINK)
            || path == b".gitattributes"
            || path.ends_with(b"/.gitattributes");
        if unsupported {
            return None;
        }
        out.push(Entry {
            path: path.to_vec(),
            mode,
            id: Oid::from_bytes(&e[40..60]).ok()?,
            size: be32(e, 36)?,
            mtime: (be32(e, 8)? as i32, be32(e, 12)?),
            ctime: (be32(e, 0)? as i32, be32(e, 4)?),
            ino: be32(e, 20)?,
            uid: be32(e, 28)?,
            gid: be32(e, 32)?,
        });
        // Entries are padded with NULs to a multiple of 8 bytes (at least one NUL).
        pos += (head + len + 8) & !7;
    }
    // Extensions (signature, size, data) up to the 20-byte checksum.
    let mut tree = None;
    while pos + 8 + 20 <= data.len() {
        let size = be32(data, pos + 4)? as usize;
        let body = data.get(pos + 8..pos + 8 + size)?;
        // git's rule: an extension whose name does not start with A–Z is required, and a reader
        // that does not know it must not use the index (`link`: a split index, whose entries
        // are only what differs from a shared index; `sdir`: a sparse index).
        if !data[pos].is_ascii_uppercase() {
            return None;
        }
        if &data[pos..pos + 4] == b"TREE" {
            tree = root_tree(body, out.len());
        }
        pos += 8 + size;
    }
    Some(ParsedIndex { entries: out, tree: tree.filter(|_| !intent_to_add) })
}

/// The root record of a cache-tree extension: `""\0<entries> <subtrees>\n<id>`, its id when
/// it covers all `count` entries (`-1` entries: invalid).
fn root_tree(body: &[u8], count: usize) -> Option<Oid> {
    let rest = body.strip_prefix(b"\0")?;
    let space = memchr::memchr(b' ', rest)?;
    let covered: i64 = std::str::from_utf8(&rest[..space]).ok()?.parse().ok()?;
    let newline = space + memchr::memchr(b'\n', &rest[space..])?;
    if usize::try_from(covered).ok()? != count {
        return None;
    }
    Oid::from_bytes(rest.get(newline + 1..newline + 21)?).ok()
}

/// HEAD against the index as `statuses()` computes it (same options, same rename detection):
/// (old path, new path, flags) per change, or `None` when libgit2 fails (the fallback reports it).
fn head_to_index(
    repo: &Repository,
    head: Option<&git2::Tree<'_>>,
    index: &git2::Index,
) -> Option<Vec<Staged>> {
    let mut opts = git2::DiffOptions::new();
    opts.include_typechange(true).include_untracked(true).recurse_untracked_dirs(true);
    let mut diff = repo.diff_tree_to_index(head, Some(index), Some(&mut opts)).ok()?;
    let mut find = git2::DiffFindOptions::new();
    find.for_untracked(true).renames(true);
    diff.find_similar(Some(&mut find)).ok()?;
    let mut out = Vec::with_capacity(diff.deltas().len());
    for d in diff.deltas() {
        let s = match d.status() {
            Delta::Added | Delta::Copied => Status::INDEX_NEW,
            Delta::Deleted => Status::INDEX_DELETED,
            Delta::Modified => Status::INDEX_MODIFIED,
            Delta::Renamed if d.old_file().id() != d.new_file().id() => {
                Status::INDEX_RENAMED | Status::INDEX_MODIFIED
            }
            Delta::Renamed => Status::INDEX_RENAMED,
            Delta::Typechange => Status::INDEX_TYPECHANGE,
            Delta::Conflicted => Status::CONFLICTED,
            _ => Status::CURRENT,
        };
        let old = d.old_file().path_bytes()?.to_vec();
        let new = d.new_file().path_bytes()?.to_vec();
        out.push((old, new, s));
    }
    Some(out)
}

/// The entries as `statuses()` pairs and orders them: a HEAD-vs-index change and a
/// working-tree change of the same index path are one entry; sorted by path (byte order).
fn merge(head_to_index: Vec<Staged>, changed: Vec<(Vec<u8>, Status)>, untracked: Vec<Vec<u8>>) -> Vec<Item> {
    let mut worktree: HashMap<Vec<u8>, Status> = changed.into_iter().collect();
    worktree.extend(untracked.into_iter().map(|p| (p, Status::WT_NEW)));
    let mut keyed: Vec<(Vec<u8>, Item)> = Vec::with_capacity(head_to_index.len() + worktree.len());
    for (old, new, s) in head_to_index {
        let wt = worktree.remove(&new).unwrap_or(Status::CURRENT);
        let status = s | wt;
        if status.is_empty() {
            continue;
        }
        keyed.push((new.clone(), Item { path: old.clone(), head_to_index: Some((old, new)), status }));
    }
    for (path, status) in worktree {
        keyed.push((path.clone(), Item { path, head_to_index: None, status }));
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    keyed.into_iter().map(|(_, item)| item).collect()
}

/// Whether `path` (not in the index) is ignored: a path inside a folder that is ignored is, as
/// in git; otherwise libgit2's rules (every `.gitignore` level, `info/exclude`,
/// `core.excludesFile`) decide. `None` when libgit2 fails.
fn ignored(repo: &Repository, cache: &mut HashMap<Vec<u8>, bool>, path: &[u8], is_dir: bool) -> Option<bool> {
    if let Some(slash) = memchr::memrchr(b'/', path) {
        let parent = &path[..slash];
        let known = cache.get(parent).copied();
        let parent_ignored = match known {
            Some(v) => v,
            None => {
                let v = ask_ignored(repo, parent, true)?;
                cache.insert(parent.to_vec(), v);
                v
            }
        };
        if parent_ignored {
            return Some(true);
        }
    }
    ask_ignored(repo, path, is_dir)
}

fn ask_ignored(repo: &Repository, path: &[u8], is_dir: bool) -> Option<bool> {
    let mut p = std::str::from_utf8(path).ok()?.to_owned();
    if is_dir {
        p.push('/');
    }
    repo.is_path_ignored(&p).ok()
}

/// Opens the folder `rel` of the work tree one name at a time, following no symlink.
fn open_dir_path(workdir: &std::path::Path, rel: &[u8]) -> rustix::io::Result<OwnedFd> {
    let mut fd =
        rustix::fs::open(workdir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    for name in rel.split(|b| *b == b'/') {
        fd = open_child_dir(&fd, name)?;
    }
    Ok(fd)
}

fn open_child_dir<P: rustix::path::Arg>(parent: &OwnedFd, name: P) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The shared queue of folders to read.
struct Queue {
    jobs: Vec<Job>,
    active: usize,
    failed: bool,
}

/// Reads `jobs` and every tracked folder under them on `threads` threads.
fn run_pool(entries: &[Entry], jobs: Vec<Job>, racy_from: i64, threads: usize) -> Result<Found, Unsupported> {
    let queue = Mutex::new(Queue { jobs, active: 0, failed: false });
    let wake = Condvar::new();
    let results: Vec<Option<Found>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .filter_map(|_| {
                std::thread::Builder::new().spawn_scoped(s, || worker(entries, &queue, &wake, racy_from)).ok()
            })
            .collect();
        if handles.is_empty() {
            return vec![None];
        }
        handles.into_iter().map(|h| h.join().ok().flatten()).collect()
    });
    let mut all = Found::default();
    for r in results {
        let f = r.ok_or(Unsupported)?;
        all.changed.extend(f.changed);
        all.candidates.extend(f.candidates);
    }
    Ok(all)
}

/// One thread: takes folders from the queue until none is left or one failed. `None` when the
/// scan failed (here or on another thread).
fn worker(entries: &[Entry], queue: &Mutex<Queue>, wake: &Condvar, racy_from: i64) -> Option<Found> {
    let mut found = Found::default();
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 32 * 1024];
    let mut more = Vec::new();
    loop {
        let job = {
            let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if q.failed {
                    return None;
                }
                if let Some(j) = q.jobs.pop() {
                    q.active += 1;
                    break j;
                }
                if q.active == 0 {
                    return Some(found);
                }
                q = wake.wait(q).unwrap_or_else(PoisonError::into_inner);
            }
        };
        let ok = read_dir(entries, &job, racy_from, &mut buf, &mut found, &mut more).is_ok();
        let mut q = queue.lock().unwrap_or_else(PoisonError::into_inner);
        q.jobs.append(&mut more);
        q.active -= 1;
        q.failed |= !ok;
        wake.notify_all();
    }
}

/// What the index holds directly in a folder under a name.
#[derive(Clone, Copy)]
enum Child {
    File(usize),
    Dir(usize, usize),
}

/// Reads one folder: compares its tracked files, queues its tracked folders, and notes the
/// names the index does not have.
fn read_dir(
    entries: &[Entry],
    job: &Job,
    racy_from: i64,
    buf: &mut [MaybeUninit<u8>],
    found: &mut Found,
    more: &mut Vec<Job>,
) -> Result<(), Unsupported> {
    let plen = job.prefix.len();
    let mut children: HashMap<&[u8], (Child, bool)> = HashMap::new();
    let mut i = job.lo;
    while i < job.hi {
        let rest = &entries[i].path[plen..];
        match memchr::memchr(b'/', rest) {
            Some(pos) => {
                let key = &entries[i].path[..plen + pos + 1];
                let end = i + entries[i..job.hi].partition_point(|e| e.path.starts_with(key));
                children.insert(&rest[..pos], (Child::Dir(i, end), false));
                i = end;
            }
            None => {
                children.insert(rest, (Child::File(i), false));
                i += 1;
            }
        }
    }
    let full = |name: &[u8]| {
        let mut p = Vec::with_capacity(plen + name.len());
        p.extend_from_slice(&job.prefix);
        p.extend_from_slice(name);
        p
    };
    let mut dir = RawDir::new(job.fd.as_fd(), buf);
    while let Some(ent) = dir.next() {
        let ent = ent.map_err(|_| Unsupported)?;
        let cname = ent.file_name();
        let name = cname.to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        if name == b".git" {
            if plen == 0 {
                continue;
            }
            // A nested repository or a submodule's checkout: libgit2's business.
            return Err(Unsupported);
        }
        if name == b".gitattributes" {
            return Err(Unsupported);
        }
        let mut ft = ent.file_type();
        if ft == FileType::Unknown {
            let st =
                rustix::fs::statat(&job.fd, cname, AtFlags::SYMLINK_NOFOLLOW).map_err(|_| Unsupported)?;
            ft = FileType::from_raw_mode(st.st_mode);
        }
        let Some((child, seen)) = children.get_mut(name) else {
            match ft {
                FileType::Directory => found.candidates.push((full(name), true)),
                FileType::RegularFile | FileType::Symlink => found.candidates.push((full(name), false)),
                // git and libgit2 list no FIFO, socket or device as untracked.
                _ => {}
            }
            continue;
        };
        *seen = true;
        match (*child, ft) {
            (Child::Dir(lo, hi), FileType::Directory) => match open_child_dir(&job.fd, cname) {
                Ok(fd) => {
                    let mut prefix = full(name);
                    prefix.push(b'/');
                    more.push(Job { fd, prefix, lo, hi });
                }
                // Replaced since the folder was read (by a symlink, a file, or nothing): what is
                // there now, read relative to this folder without following it, is the answer.
                Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => {
                    deleted(entries, lo, hi, found);
                    match rustix::fs::statat(&job.fd, cname, AtFlags::SYMLINK_NOFOLLOW) {
                        Err(Errno::NOENT) => {}
                        Ok(st)
                            if matches!(
                                FileType::from_raw_mode(st.st_mode),
                                FileType::RegularFile | FileType::Symlink
                            ) =>
                        {
                            found.candidates.push((full(name), false));
                        }
                        _ => return Err(Unsupported),
                    }
                }
                Err(_) => return Err(Unsupported),
            },
            (Child::Dir(lo, hi), _) => {
                // A folder of the index is no folder now: its files are deleted; the name itself
                // is a path the index does not have.
                deleted(entries, lo, hi, found);
                if matches!(ft, FileType::RegularFile | FileType::Symlink) {
                    found.candidates.push((full(name), false));
                }
            }
            (Child::File(i), FileType::Directory) => {
                found.changed.push((entries[i].path.clone(), Status::WT_DELETED));
                found.candidates.push((full(name), true));
            }
            (Child::File(i), FileType::RegularFile | FileType::Symlink) => {
                if let Some(s) = compare(&entries[i], &job.fd, cname, ft, racy_from)? {
                    found.changed.push((entries[i].path.clone(), s));
                }
            }
            (Child::File(_), _) => return Err(Unsupported),
        }
    }
    for (child, seen) in children.values() {
        if !seen {
            match *child {
                Child::File(i) => deleted(entries, i, i + 1, found),
                Child::Dir(lo, hi) => deleted(entries, lo, hi, found),
            }
        }
    }
    Ok(())
}

fn deleted(entries: &[Entry], lo: usize, hi: usize, found: &mut Found) {
    found.changed.extend(entries[lo..hi].iter().map(|e| (e.path.clone(), Status::WT_DELETED)));
}

/// The working-tree flag of a tracked file that is a regular file or a symlink on disk
/// (`None`: unchanged).
fn compare(
    e: &Entry,
    dir: &OwnedFd,
    name: &CStr,
    ft: FileType,
    racy_from: i64,
) -> Result<Option<Status>, Unsupported> {
    let link = e.mode == MODE_LINK;
    if link != (ft == FileType::Symlink) {
        return Ok(Some(Status::WT_TYPECHANGE));
    }
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(|_| Unsupported)?;
    if FileType::from_raw_mode(st.st_mode) != ft {
        // Swapped since the folder was read.
        return Err(Unsupported);
    }
    if !link && (e.mode == MODE_EXEC) != (st.st_mode & 0o100 != 0) {
        return Ok(Some(Status::WT_MODIFIED));
    }
    let size = st.st_size as u32;
    if e.size != 0 && size != e.size {
        return Ok(Some(Status::WT_MODIFIED));
    }
    if e.size == size && stat_equal(e, &st) && i64::from(e.mtime.0) < racy_from {
        return Ok(None);
    }
    let id = if link { hash_link(dir, name)? } else { hash_file(dir, name)? };
    Ok((id != e.id).then_some(Status::WT_MODIFIED))
}

/// The stat data git records, all compared (stricter than git's defaults: a difference only
/// costs a hash).
fn stat_equal(e: &Entry, st: &Stat) -> bool {
    e.mtime == (st.st_mtime as i32, st.st_mtime_nsec as u32)
        && e.ctime == (st.st_ctime as i32, st.st_ctime_nsec as u32)
        && e.ino == st.st_ino as u32
        && e.uid == st.st_uid
        && e.gid == st.st_gid
}

fn hash_link(dir: &OwnedFd, name: &CStr) -> Result<Oid, Unsupported> {
    let target = rustix::fs::readlinkat(dir, name, Vec::new()).map_err(|_| Unsupported)?;
    Oid::hash_object(ObjectType::Blob, target.as_bytes()).map_err(|_| Unsupported)
}

fn hash_file(dir: &OwnedFd, name: &CStr) -> Result<Oid, Unsupported> {
    use std::io::Read;
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|_| Unsupported)?;
    let st = rustix::fs::fstat(&fd).map_err(|_| Unsupported)?;
    // A file is hashed from memory: a very large one is left to libgit2, which streams it.
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile || st.st_size > HASH_IN_MEMORY {
        return Err(Unsupported);
    }
    let mut data = Vec::with_capacity(usize::try_from(st.st_size).unwrap_or(0));
    std::fs::File::from(fd).read_to_end(&mut data).map_err(|_| Unsupported)?;
    Oid::hash_object(ObjectType::Blob, &data).map_err(|_| Unsupported)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Runs the git CLI in `d` (no user config, a fixed identity).
    fn git(d: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=Ada", "-c", "user.email=ada@example.com"])
            .args(args)
            .current_dir(d)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn write(d: &Path, rel: &str, text: &str) {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    /// After a commit, the index's cache-tree names HEAD's tree (the case where libgit2 is not
    /// asked for HEAD-vs-index); after `git add`, it does not; with an intent-to-add entry, no
    /// tree is taken from it.
    #[test]
    fn the_cache_tree_is_read_as_git_writes_it() {
        let t = tempfile::tempdir().expect("tempdir");
        let d = t.path();
        git(d, &["init", "-q", "-b", "main"]);
        write(d, "a/b.txt", "b\n");
        write(d, "c.txt", "c\n");
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "base"]);
        let read =
            || super::parse_index(&std::fs::read(d.join(".git/index")).expect("index")).expect("parsed");
        let head = git(d, &["rev-parse", "HEAD^{tree}"]);
        let parsed = read();
        assert_eq!(parsed.entries.len(), 2);
        assert_eq!(parsed.tree.map(|t| t.to_string()), Some(head.trim().to_owned()));
        write(d, "c.txt", "changed\n");
        git(d, &["add", "c.txt"]);
        assert_eq!(read().tree, None);
        git(d, &["commit", "-q", "-m", "second"]);
        assert!(read().tree.is_some());
        write(d, "ita.txt", "i\n");
        git(d, &["add", "-N", "ita.txt"]);
        assert_eq!(read().tree, None);
    }

    #[test]
    fn a_symlinked_folder_is_refused_by_open_child_dir() {
        let t = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(t.path().join("real")).expect("mkdir");
        std::os::unix::fs::symlink(t.path().join("real"), t.path().join("link")).expect("symlink");
        let root = rustix::fs::open(
            t.path(),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY,
            rustix::fs::Mode::empty(),
        )
        .expect("open");
        assert!(super::open_child_dir(&root, "real").is_ok());
        assert!(super::open_child_dir(&root, "link").is_err());
    }
}
