//! Repository handles kept between the calls of the read-only tools (status, diff, blame).
//!
//! Opening a repository costs more than a whole small call: libgit2 searches upwards for it,
//! parses the system, user and repository config files, lists the pack folder and maps its
//! indexes. A call of a read-only tool borrows a handle opened earlier for the same folder and
//! gives it back when it ends; a handle is lent to one call at a time (taken out of the cache,
//! put back after), and at most [`KEEP`] are kept for the whole process.
//!
//! A kept handle must answer exactly as a fresh open would. What libgit2 reads again on every
//! use is left to it: HEAD and loose refs (read each time), loose objects (found by path each
//! time), new packs (an object not found makes libgit2 list the pack folder again). What it
//! holds is checked or dropped:
//! - Before a handle is lent again, a list of paths is stat()ed and compared with the list as it
//!   was when the handle was opened (device, inode, mode, owner; for files also size, mtime and
//!   ctime with nanoseconds): every folder from the call's folder up to the work tree (a `.git` or
//!   `HEAD` appearing there would make git find another repository), the `.git` entry (a
//!   repository deleted and created again at the same path), the git dir and the common dir, the
//!   config files libgit2 reads (the repository's, `config.worktree`, the user's, the XDG one, the
//!   system's: libgit2 keeps `core.*` values, the work tree and `core.excludesFile` from them),
//!   `packed-refs`, `shallow`, `info/grafts`, `commondir`, `gitdir`, the objects folder, the pack
//!   folder (a pack removed by `git gc`/`git repack -a -d`: the handle still has it mapped),
//!   `objects/info/alternates` and the commit-graph. Any difference: the handle is dropped and
//!   the repository opened again.
//! - A file changed twice within one timestamp tick keeps its mtime. So a handle is kept only
//!   when every file of its list is older than the moment the open began by more than a tick
//!   (50 ms; 2 s for a file system with whole-second times), as git treats its racy index
//!   entries: a later change then always shows in the mtime.
//! - When a handle comes back, its index and its attribute/ignore cache are dropped: the next
//!   call reads the index and the `.gitignore`/attributes files again, as a fresh open does.
//! - A config with `include.*`/`includeIf.*` is never kept (the included files are not checked).
//! - A handle is not kept while libgit2's object caches hold more than [`KEEP_CACHED_BYTES`]
//!   (64 MiB) in all: a kept handle keeps the commits and trees it parsed.
//! - A parsed object stays in a kept handle's object cache even after `git prune` removed it:
//!   reachable objects are never pruned, and a revision given by id is checked against the
//!   object database itself ([`super::common::revision`]).
//!
//! Only the read-only tools borrow handles; the tools that write open the repository afresh.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, SystemTime};

use crate::error::Result;

/// Handles kept at most, every repository together.
pub const KEEP: usize = 8;
/// A handle comes back to the cache only while libgit2's object caches (every repository's
/// together, in use or kept) hold less than this; a larger one is dropped with its objects.
pub const KEEP_CACHED_BYTES: isize = 64 << 20;

/// How a path of the list is compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// Only which file it is (device, inode, mode, owner): a folder whose mtime changes with
    /// every lock file git creates in it.
    Ident,
    /// Also size, mtime and ctime.
    Full,
    /// [`Kind::Ident`] for a folder, [`Kind::Full`] otherwise (`.git`: a folder or a file).
    FullUnlessDir,
}

/// What a stat() says about a path, as compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Meta {
    dev: u64,
    ino: u64,
    mode: u32,
    uid: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// The paths of a handle and what they were when it was opened (`None`: absent).
#[derive(Clone, Debug)]
struct Stamp {
    paths: Vec<(PathBuf, Kind)>,
    metas: Vec<Option<Meta>>,
}

#[cfg(unix)]
fn meta(path: &Path, kind: Kind) -> Option<Meta> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let full = match kind {
        Kind::Ident => false,
        Kind::Full => true,
        Kind::FullUnlessDir => !m.is_dir(),
    };
    let mut out = Meta {
        dev: m.dev(),
        ino: m.ino(),
        mode: m.mode(),
        uid: m.uid(),
        size: 0,
        mtime: (0, 0),
        ctime: (0, 0),
    };
    if full {
        out.size = m.size();
        out.mtime = (m.mtime(), m.mtime_nsec());
        out.ctime = (m.ctime(), m.ctime_nsec());
    }
    Some(out)
}

#[cfg(not(unix))]
fn meta(_: &Path, _: Kind) -> Option<Meta> {
    None
}

fn metas(paths: &[(PathBuf, Kind)]) -> Vec<Option<Meta>> {
    paths.iter().map(|(p, k)| meta(p, *k)).collect()
}

/// The config files libgit2 reads besides the repository's: in the user's, the XDG and the
/// system folders it searches (whether they exist or not).
fn config_files() -> &'static [PathBuf] {
    static FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FILES.get_or_init(|| {
        use git2::ConfigLevel as L;
        let mut out = Vec::new();
        for (level, name) in [
            (L::Global, ".gitconfig"),
            (L::XDG, "config"),
            (L::System, "gitconfig"),
            (L::ProgramData, "config"),
        ] {
            out.extend(search_path(level).into_iter().map(|d| d.join(name)));
        }
        out
    })
}

/// The folders libgit2 searches for the files of `level` (the user's, XDG, system ones).
pub(super) fn search_path(level: git2::ConfigLevel) -> Vec<PathBuf> {
    // SAFETY: this only reads libgit2's search path; nothing in this process sets one, so no
    // other thread changes it meanwhile.
    let Ok(list) = (unsafe { git2::opts::get_search_path(level) }) else { return Vec::new() };
    let list = list.to_string_lossy().into_owned();
    let sep = if cfg!(windows) { ';' } else { ':' };
    list.split(sep).filter(|d| !d.is_empty()).map(PathBuf::from).collect()
}

/// The paths whose state a kept handle depends on (see the module's doc), or `None` when a
/// handle of `repo` opened from `dir` is not kept (no work tree, `dir` outside it or in the git
/// dir; and on every system but Unix, where [`meta`] cannot tell a file's identity and times
/// apart, so a kept handle could not be checked).
fn paths(dir: &Path, repo: &git2::Repository) -> Option<Vec<(PathBuf, Kind)>> {
    if !cfg!(unix) {
        return None;
    }
    let workdir = repo.workdir()?;
    if !dir.starts_with(workdir) || dir.starts_with(repo.path()) {
        return None;
    }
    let mut out = Vec::new();
    let mut level = dir;
    loop {
        out.push((level.join(".git"), Kind::FullUnlessDir));
        out.push((level.join("HEAD"), Kind::Ident));
        if level == workdir {
            break;
        }
        level = level.parent()?;
    }
    let mut dirs = vec![repo.path().to_path_buf()];
    if repo.commondir() != repo.path() {
        dirs.push(repo.commondir().to_path_buf());
    }
    for d in dirs {
        out.push((d.clone(), Kind::Ident));
        for (name, kind) in [
            ("config", Kind::Full),
            ("config.worktree", Kind::Full),
            ("commondir", Kind::Full),
            ("gitdir", Kind::Full),
            ("packed-refs", Kind::Full),
            ("shallow", Kind::Full),
            ("info/grafts", Kind::Full),
            ("objects", Kind::Ident),
            ("objects/pack", Kind::Full),
            ("objects/info/alternates", Kind::Full),
            ("objects/info/commit-graph", Kind::Full),
            ("objects/info/commit-graphs", Kind::Full),
        ] {
            out.push((d.join(name), kind));
        }
    }
    out.extend(config_files().iter().map(|p| (p.clone(), Kind::Full)));
    Some(out)
}

/// Whether every file of `metas` is older than `since` by more than a timestamp tick (see the
/// module's doc): a later change to any of them then shows in its mtime or ctime.
fn settled(metas: &[Option<Meta>], since: SystemTime) -> bool {
    let Ok(since) = since.duration_since(SystemTime::UNIX_EPOCH) else { return false };
    metas.iter().flatten().all(|m| {
        let coarse = m.mtime.1 == 0 && m.ctime.1 == 0;
        let tick = if coarse { Duration::from_secs(2) } else { Duration::from_millis(50) };
        let before = |(s, ns): (i64, i64)| {
            let (Ok(s), Ok(ns)) = (u64::try_from(s), u32::try_from(ns)) else { return false };
            Duration::new(s, ns) + tick < since
        };
        (m.mtime == (0, 0) && m.ctime == (0, 0)) || (before(m.mtime) && before(m.ctime))
    })
}

/// Whether the config names other files (`include.path`, `includeIf.<cond>.path`).
fn has_includes(repo: &git2::Repository) -> bool {
    let Ok(cfg) = repo.config() else { return true };
    let Ok(mut entries) = cfg.entries(Some("^include")) else { return true };
    entries.next().is_some()
}

/// A kept handle.
struct Kept {
    dir: PathBuf,
    stamp: Stamp,
    repo: git2::Repository,
}

static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

fn kept() -> MutexGuard<'static, Vec<Kept>> {
    KEPT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A repository lent to one call; given back to the cache when dropped (when it may be kept).
pub struct Lent {
    repo: std::mem::ManuallyDrop<git2::Repository>,
    keep: Option<(PathBuf, Stamp)>,
    reused: bool,
}

impl Lent {
    /// Whether this handle was kept from an earlier call (for the tests).
    #[doc(hidden)]
    pub fn reused(&self) -> bool {
        self.reused
    }
}

impl Deref for Lent {
    type Target = git2::Repository;
    fn deref(&self) -> &git2::Repository {
        &self.repo
    }
}

unsafe extern "C" {
    // libgit2's own, public (`git2/attr.h`), not bound by libgit2-sys.
    fn git_attr_cache_flush(repo: *mut libgit2_sys::git_repository) -> std::os::raw::c_int;
}

/// Drop what a call left in `repo` that a fresh open would read again: the index and the
/// attribute/ignore files.
fn forget(repo: &git2::Repository) {
    use git2::Binding;
    // SAFETY: `repo.raw()` is a live repository that only this thread holds (its call ended).
    // libgit2 accepts a NULL index (it frees its own and loads the file again when next asked),
    // and the attribute cache is rebuilt on next use.
    unsafe {
        libgit2_sys::git_repository_set_index(repo.raw(), std::ptr::null_mut());
        git_attr_cache_flush(repo.raw());
    }
}

/// The bytes of parsed objects libgit2's caches hold now, every repository together.
fn cached_bytes() -> isize {
    let (mut current, mut allowed): (isize, isize) = (0, 0);
    // SAFETY: GIT_OPT_GET_CACHED_MEMORY writes two `ssize_t` (isize) through the two pointers
    // given, and reads nothing else; libgit2 is initialised (a repository is open).
    let rc = unsafe {
        libgit2_sys::git_libgit2_opts(
            libgit2_sys::GIT_OPT_GET_CACHED_MEMORY as std::os::raw::c_int,
            &raw mut current,
            &raw mut allowed,
        )
    };
    if rc < 0 { isize::MAX } else { current }
}

impl Drop for Lent {
    fn drop(&mut self) {
        // SAFETY: taken here only, once; `self.repo` is not used after.
        let repo = unsafe { std::mem::ManuallyDrop::take(&mut self.repo) };
        let Some((dir, stamp)) = self.keep.take() else { return };
        if std::thread::panicking() || cached_bytes() > KEEP_CACHED_BYTES {
            return;
        }
        forget(&repo);
        let extra = {
            let mut k = kept();
            k.insert(0, Kept { dir, stamp, repo });
            if k.len() > KEEP { k.pop() } else { None }
        };
        drop(extra);
    }
}

/// Take the newest kept handle of `dir` out of the cache.
fn take(dir: &Path) -> Option<Kept> {
    let mut k = kept();
    let at = k.iter().position(|e| e.dir == dir)?;
    Some(k.remove(at))
}

/// The repository containing `dir` (searching upwards, as git does): a kept handle when one is
/// still exact, else a fresh open (kept after the call when it may be).
pub fn lend(dir: &Path) -> Result<Lent> {
    if let Some(e) = take(dir) {
        if metas(&e.stamp.paths) == e.stamp.metas {
            let keep = Some((e.dir, e.stamp));
            return Ok(Lent { repo: std::mem::ManuallyDrop::new(e.repo), keep, reused: true });
        }
        drop(e);
    }
    let since = SystemTime::now();
    let repo = super::discover(dir)?;
    let keep = paths(dir, &repo).filter(|_| !has_includes(&repo)).and_then(|paths| {
        let metas = metas(&paths);
        settled(&metas, since).then(|| (dir.to_path_buf(), Stamp { paths, metas }))
    });
    Ok(Lent { repo: std::mem::ManuallyDrop::new(repo), keep, reused: false })
}

/// Drop every kept handle (for the tests).
#[doc(hidden)]
pub fn clear() {
    let all = std::mem::take(&mut *kept());
    drop(all);
}

/// How many handles are kept now (for the tests).
#[doc(hidden)]
pub fn kept_count() -> usize {
    kept().len()
}
