//! One writer per repository at a time. In this process, every git tool that changes the index,
//! HEAD or the work tree holds [`repo_lock`] (keyed by the repository's canonical git dir)
//! while it plans and while it acts, so that ten concurrent commits run one after the other.
//! Against other processes, the index is changed as git changes it: `index.lock` is created
//! exclusively and held from the read of the index to the rename that replaces it
//! ([`IndexLock`]); a lock another process holds is waited for (a bounded time), never removed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};

/// How long an apply waits for another process's `index.lock` (or ref lock) to go away.
pub const LOCK_WAIT: Duration = Duration::from_secs(3);

type Locks = Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>;

fn locks() -> &'static Locks {
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    LOCKS.get_or_init(Locks::default)
}

/// The repository containing `dir`, as the key of its lock: its git dir, symlinks resolved.
fn key(ctx: &Ctx, dir: &Path) -> Result<PathBuf> {
    let (repo, _) = super::open(&ctx.workspace, dir)?;
    let git_dir = repo.path().to_path_buf();
    Ok(std::fs::canonicalize(&git_dir).unwrap_or(git_dir))
}

/// Wait (racing the abort) for this process's lock on the repository containing `dir`.
pub async fn repo_lock(ctx: &Ctx, dir: &Path) -> Result<tokio::sync::OwnedMutexGuard<()>> {
    let (c, d) = (ctx.clone(), dir.to_path_buf());
    let key = crate::blocking("git", move || key(&c, &d)).await?;
    let lock = {
        let mut map = locks().lock().unwrap_or_else(PoisonError::into_inner);
        map.retain(|_, m| Arc::strong_count(m) > 1);
        Arc::clone(map.entry(key).or_default())
    };
    ctx.unless_cancelled(lock.lock_owned()).await
}

/// `index.lock`, held as git holds it, and this call's private copy of the index (a scratch
/// file in the git dir) that staging writes; [`IndexLock::install`] makes the copy the index.
/// Dropped without installing, the lock and the copy are removed and the index is untouched.
pub struct IndexLock {
    lock: PathBuf,
    index: PathBuf,
    scratch: PathBuf,
    held: bool,
}

impl IndexLock {
    /// Create `<git dir>/index.lock` exclusively, waiting up to `wait` while another process
    /// holds it (then `LOCKED`; its file is never touched).
    pub fn acquire(git_dir: &Path, wait: Duration) -> Result<Self> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let lock = git_dir.join("index.lock");
        let deadline = Instant::now() + wait;
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(ToolError::new(
                        ErrorCode::Locked,
                        format!(
                            "{} is held by another git process (waited {} s); nothing was changed",
                            lock.display(),
                            wait.as_secs()
                        ),
                    ));
                }
                Err(e) => return Err(ToolError::fs(&e, "open", Some(&lock))),
            }
        }
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let scratch = git_dir.join(format!("eddie-index-{}-{n}", std::process::id()));
        Ok(Self { lock, index: git_dir.join("index"), scratch, held: true })
    }

    /// The private copy's path (`GIT_INDEX_FILE` for hooks).
    pub fn scratch_path(&self) -> &Path {
        &self.scratch
    }

    /// The index as it is now, copied to the private file and bound to `repo`, so that staging
    /// and `write` work on the copy.
    pub fn scratch(&self, repo: &git2::Repository) -> Result<git2::Index> {
        match std::fs::copy(&self.index, &self.scratch) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::remove_file(&self.scratch);
            }
            Err(e) => return Err(ToolError::fs(&e, "copyfile", Some(&self.index))),
        }
        self.reopen(repo)
    }

    /// The private copy as it is on disk now (after a hook changed it), bound to `repo`.
    pub fn reopen(&self, repo: &git2::Repository) -> Result<git2::Index> {
        let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "index");
        let mut index = git2::Index::open(&self.scratch).map_err(fail)?;
        repo.set_index(&mut index).map_err(fail)?;
        Ok(index)
    }

    /// Replace the index with the private copy: the copy is renamed onto `index.lock` and that
    /// onto `index`, so the lock is held until the new index is in place.
    pub fn install(mut self) -> Result<()> {
        std::fs::rename(&self.scratch, &self.lock)
            .map_err(|e| ToolError::fs(&e, "rename", Some(&self.lock)))?;
        std::fs::rename(&self.lock, &self.index)
            .map_err(|e| ToolError::fs(&e, "rename", Some(&self.index)))?;
        self.held = false;
        Ok(())
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.scratch);
        let mut filebuf = self.scratch.clone().into_os_string();
        filebuf.push(".lock");
        let _ = std::fs::remove_file(filebuf);
        if self.held {
            let _ = std::fs::remove_file(&self.lock);
        }
    }
}

/// Run `f` (a ref update) again while it fails because another process holds or moved the ref,
/// up to `attempts` times with a short pause; `f` re-reads what it needs on each attempt. An
/// outer `Err` of `f` ends the attempts at once.
pub fn retry_ref<T>(
    attempts: usize,
    mut f: impl FnMut() -> Result<std::result::Result<T, git2::Error>>,
) -> Result<T> {
    let mut last = None;
    for i in 0..attempts.max(1) {
        match f()? {
            Ok(v) => return Ok(v),
            Err(e)
                if matches!(
                    e.code(),
                    git2::ErrorCode::Modified | git2::ErrorCode::Locked | git2::ErrorCode::Exists
                ) =>
            {
                last = Some(e);
                std::thread::sleep(Duration::from_millis(5 << i.min(6)));
            }
            Err(e) => return Err(super::err(&e, ErrorCode::Internal, "updating the branch")),
        }
    }
    let why = last.map(|e| e.message().to_owned()).unwrap_or_default();
    Err(ToolError::new(
        ErrorCode::Locked,
        format!(
            "the branch kept changing under another git process ({why}); tried {attempts} times, \
             nothing was committed"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with_two_commits() -> (tempfile::TempDir, git2::Repository, git2::Oid, git2::Oid) {
        let t = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(t.path()).unwrap();
        let sig = git2::Signature::now("A", "a@example.com").unwrap();
        let (a, b) = {
            let tree = repo.find_tree(repo.treebuilder(None).unwrap().write().unwrap()).unwrap();
            let a = repo.commit(Some("refs/heads/main"), &sig, &sig, "a", &tree, &[]).unwrap();
            let ca = repo.find_commit(a).unwrap();
            (a, repo.commit(None, &sig, &sig, "b", &tree, &[&ca]).unwrap())
        };
        repo.set_head("refs/heads/main").unwrap();
        (t, repo, a, b)
    }

    #[test]
    fn a_ref_moved_between_the_read_and_the_swap_is_read_again() {
        let (t, repo, a, b) = repo_with_two_commits();
        // Another handle (another process's view) moves main just after each of the first two reads.
        let other = git2::Repository::open(t.path()).unwrap();
        let mut attempts = 0;
        let moved_to = retry_ref(5, || {
            attempts += 1;
            let read = repo.refname_to_id("refs/heads/main").unwrap();
            if attempts <= 2 {
                let to = if read == a { b } else { a };
                other.reference("refs/heads/main", to, true, "race").unwrap();
            }
            Ok(repo.reference_matching("refs/heads/main", b, true, read, "swap").map(|r| r.target()))
        })
        .unwrap();
        assert_eq!(attempts, 3, "two lost races, then the swap");
        assert_eq!(moved_to, Some(b));
        // A race lost every time ends as LOCKED, never INTERNAL.
        let e = retry_ref(3, || {
            Ok(repo.reference_matching("refs/heads/main", a, true, git2::Oid::ZERO_SHA1, "stale").map(|_| ()))
        })
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::Locked, "{}", e.message());
        // Any other failure ends at once, and an outer error stops the attempts.
        let mut n = 0;
        let e = retry_ref(5, || {
            n += 1;
            Err::<std::result::Result<(), git2::Error>, _>(ToolError::invalid("stop"))
        })
        .unwrap_err();
        assert_eq!((n, e.code()), (1, ErrorCode::InvalidArgument));
    }

    #[test]
    fn index_lock_waits_for_another_holder_and_never_removes_its_file() {
        let (t, repo, _, _) = repo_with_two_commits();
        let git_dir = repo.path().to_path_buf();
        let lock = git_dir.join("index.lock");
        std::fs::write(&lock, b"theirs").unwrap();
        let e = IndexLock::acquire(&git_dir, Duration::from_millis(100)).err().unwrap();
        assert_eq!(e.code(), ErrorCode::Locked);
        assert_eq!(std::fs::read(&lock).unwrap(), b"theirs", "their lock is untouched");
        // Released while we wait: we take it.
        let l2 = lock.clone();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::remove_file(l2).unwrap();
        });
        let held = IndexLock::acquire(&git_dir, Duration::from_secs(5)).unwrap();
        releaser.join().unwrap();
        assert!(lock.exists());
        // Staging on the copy leaves the index alone until install; dropped, nothing stays.
        std::fs::write(t.path().join("f.txt"), "f\n").unwrap();
        let before = std::fs::read(git_dir.join("index")).ok();
        let mut index = held.scratch(&repo).unwrap();
        index.add_path(Path::new("f.txt")).unwrap();
        index.write().unwrap();
        assert_eq!(std::fs::read(git_dir.join("index")).ok(), before);
        let scratch = held.scratch_path().to_path_buf();
        drop(held);
        assert!(!lock.exists() && !scratch.exists());
        assert_eq!(std::fs::read(git_dir.join("index")).ok(), before);
        // Installed, the copy is the index and the lock is gone.
        let held = IndexLock::acquire(&git_dir, Duration::from_secs(1)).unwrap();
        let mut index = held.scratch(&repo).unwrap();
        index.add_path(Path::new("f.txt")).unwrap();
        index.write().unwrap();
        held.install().unwrap();
        assert!(!lock.exists());
        let fresh = git2::Repository::open(t.path()).unwrap();
        assert!(fresh.index().unwrap().get_path(Path::new("f.txt"), 0).is_some());
    }
}
