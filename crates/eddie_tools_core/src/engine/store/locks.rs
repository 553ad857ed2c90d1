//! Per-file async locks: read-modify-write cycles on one plan or task-list file in this
//! process run one at a time, so concurrent updates are never lost.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::OwnedMutexGuard;

use super::safe_dir::{Kind, SafeDir};
use crate::error::{ErrorCode, Result, ToolError};

fn table() -> &'static Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    LOCKS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Hold the lock for `path` until the guard is dropped.
pub async fn lock(path: &Path) -> OwnedMutexGuard<()> {
    let m = {
        let mut t = table().lock().unwrap_or_else(|p| p.into_inner());
        // Drop entries nobody holds, so the table does not grow without bound.
        t.retain(|_, m| Arc::strong_count(m) > 1);
        Arc::clone(t.entry(path.to_path_buf()).or_default())
    };
    m.lock_owned().await
}

/// A lock on a file shared with other processes (`flock(2)` on a lock file of its own), held
/// until dropped. Read-modify-write cycles of a file that several processes write (a VS Code
/// extension and a CLI agent on one `MEMORY.md`) take it around the read and the atomic write,
/// so that neither loses the other's change. The lock files live in a per-user directory under
/// the system temp dir, named by a hash of the real path, so the workspace gets no litter; they
/// are never removed (removing one would race with a process about to lock it).
///
/// The temp dir is shared with every user, so nothing there is trusted: the folder is made
/// 0700 and used only when it is a real directory (not a symlink) owned by this user and not
/// writable by group or others; a lock file is opened with `O_NOFOLLOW | O_CLOEXEC` in the
/// folder held open, and must be a regular file of this user (anything else in its place is
/// removed first: no process of ours can be using it). When the temp dir's folder is not safe
/// (another user planted it), `$XDG_RUNTIME_DIR/eddie-locks`, then `$HOME/.cache/eddie-locks`
/// is used (every process of this user comes to the same choice); when none is, the call
/// fails with `PERMISSION_DENIED` naming them.
#[derive(Debug)]
pub struct ProcessLock {
    _file: std::fs::File,
}

/// The folders tried for lock files, in order.
fn lock_dirs(uid: u32) -> Vec<PathBuf> {
    let mut out = vec![std::env::temp_dir().join(format!("eddie-locks-{uid}"))];
    let abs = |k: &str| std::env::var_os(k).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(run) = abs("XDG_RUNTIME_DIR") {
        out.push(run.join("eddie-locks"));
    }
    if let Some(home) = abs("HOME") {
        out.push(home.join(".cache").join("eddie-locks"));
    }
    out
}

#[cfg(unix)]
fn current_uid() -> u32 {
    // SAFETY: getuid(2) takes nothing, always succeeds and touches no memory of ours.
    unsafe { libc::getuid() }
}

/// Windows has no numeric user id: the lock folders are per user (`%TEMP%`), and `SafeDir`
/// reports 0 as every entry's owner.
#[cfg(windows)]
fn current_uid() -> u32 {
    0
}

/// Block until `file` is locked exclusively.
#[cfg(unix)]
fn lock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock(2) on a descriptor we own and keep open for the call; no memory is
    // shared with the kernel.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
        return Ok(());
    }
    Err(std::io::Error::last_os_error())
}

/// Block until `file` is locked exclusively (`LockFileEx` on its whole range).
#[cfg(windows)]
fn lock_exclusive(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{LOCKFILE_EXCLUSIVE_LOCK, LockFileEx};
    let mut overlapped = windows_sys::Win32::System::IO::OVERLAPPED::default();
    // SAFETY: the handle is `file`'s, open for the call (synchronous: not opened for
    // overlapped I/O, so the call returns once the lock is held); `overlapped` is a local
    // (offset 0) that outlives the call.
    let ok = unsafe {
        LockFileEx(file.as_raw_handle(), LOCKFILE_EXCLUSIVE_LOCK, 0, u32::MAX, u32::MAX, &raw mut overlapped)
    };
    if ok != 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// `path` as a private folder of user `uid` (made 0700 when missing), held open; why not.
fn private_dir(path: &Path, uid: u32) -> std::result::Result<SafeDir, String> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err("not a folder path".into());
    };
    let _ = std::fs::create_dir_all(parent);
    let top = SafeDir::open_root(parent).map_err(|e| e.to_string())?;
    let (dir, _) = top.child_or_create_mode(name, 0o700).map_err(|e| match e.raw_os_error() {
        Some(super::safe_dir::E_LOOP | super::safe_dir::E_NOTDIR) => {
            "it is a symbolic link or not a folder".to_owned()
        }
        _ => e.to_string(),
    })?;
    let own = dir.own().map_err(|e| e.to_string())?;
    if own.kind != Kind::Dir {
        return Err("it is not a folder".into());
    }
    if own.uid != uid {
        return Err(format!("it belongs to user {}, not {uid}", own.uid));
    }
    if own.mode & 0o022 != 0 {
        return Err(format!("group or others may write in it (mode {:o})", own.mode));
    }
    Ok(dir)
}

/// Open (creating) the lock file `name` in `dir`: a regular file of user `uid`, never through
/// a symlink. Something else in its place is removed and the file made anew, once.
fn lock_file(dir: &SafeDir, name: &OsStr, uid: u32) -> Result<std::fs::File> {
    let shown = dir.path().join(name);
    for attempt in 0..2 {
        let opened = dir.open_or_create(name);
        let usable = match &opened {
            Ok(f) => SafeDir::entry_of_file(f).is_ok_and(|e| e.kind == Kind::File && e.uid == uid),
            Err(e) if e.raw_os_error() == Some(super::safe_dir::E_LOOP) => false,
            Err(e) => return Err(ToolError::fs(e, "open", Some(&shown))),
        };
        if usable && let Ok(f) = opened {
            return Ok(f);
        }
        if attempt == 0 {
            // Not ours to use (a symlink, a fifo, another user's file): in our private folder
            // no process of ours can be holding it, so it goes.
            let _ = dir.unlink(name);
        }
    }
    Err(ToolError::new(
        ErrorCode::PermissionDenied,
        format!("{} is not a regular file of this user, and could not be replaced", shown.display()),
    ))
}

impl ProcessLock {
    /// Block until the lock for `real` (a real path) is held (call it on a blocking thread).
    pub fn acquire(real: &Path) -> Result<Self> {
        let uid = current_uid();
        Self::acquire_in(&lock_dirs(uid), real, uid)
    }

    /// [`ProcessLock::acquire`] with the first safe folder of `dirs`, for user `uid`.
    pub fn acquire_in(dirs: &[PathBuf], real: &Path, uid: u32) -> Result<Self> {
        let name = blake3::hash(real.as_os_str().as_encoded_bytes()).to_hex();
        let name = OsString::from(format!("{}.lock", &name[..32]));
        let mut refused = Vec::new();
        let dir = dirs.iter().find_map(|d| match private_dir(d, uid) {
            Ok(dir) => Some(dir),
            Err(why) => {
                refused.push(format!("{} ({why})", d.display()));
                None
            }
        });
        let Some(dir) = dir else {
            return Err(ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "no private folder for lock files: {}; remove the one in the temp dir or set XDG_RUNTIME_DIR",
                    refused.join("; ")
                ),
            ));
        };
        let file = lock_file(&dir, &name, uid)?;
        loop {
            let Err(e) = lock_exclusive(&file) else {
                return Ok(Self { _file: file });
            };
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(ToolError::fs(&e, "flock", Some(&dir.path().join(&name))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

    use super::*;

    fn uid() -> u32 {
        current_uid()
    }

    /// A folder `name` in `tmp` with `mode`.
    fn folder(tmp: &Path, name: &str, mode: u32) -> PathBuf {
        let p = tmp.join(name);
        std::fs::create_dir(&p).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn the_folder_is_made_private_and_a_planted_symlink_folder_is_passed_over() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tempfile::tempdir().unwrap();
        let planted = tmp.path().join("eddie-locks-x");
        symlink(victim.path(), &planted).unwrap();
        let fallback = tmp.path().join("fallback/eddie-locks");
        let lock =
            ProcessLock::acquire_in(&[planted.clone(), fallback.clone()], Path::new("/w/MEMORY.md"), uid());
        assert!(lock.is_ok(), "{lock:?}");
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0, "nothing made through the symlink");
        let m = std::fs::symlink_metadata(&fallback).unwrap();
        assert!(m.is_dir());
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_dir(&fallback).unwrap().count(), 1);
        // With no safe folder at all: refused, naming why.
        let e = ProcessLock::acquire_in(&[planted], Path::new("/w/MEMORY.md"), uid()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::PermissionDenied);
        assert!(e.message().contains("symbolic link"), "{}", e.message());
    }

    #[test]
    fn a_folder_owned_by_another_user_or_open_to_others_is_passed_over() {
        let tmp = tempfile::tempdir().unwrap();
        let other = folder(tmp.path(), "eddie-locks-other", 0o700);
        // Another owner: as root, chown it; otherwise ask for a uid that is not ours.
        let foreign_uid = if uid() == 0 {
            std::os::unix::fs::chown(&other, Some(4242), Some(4242)).unwrap();
            0
        } else {
            uid() + 1
        };
        let e = ProcessLock::acquire_in(std::slice::from_ref(&other), Path::new("/w/a"), foreign_uid)
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::PermissionDenied);
        assert!(e.message().contains("belongs to user"), "{}", e.message());
        assert_eq!(std::fs::read_dir(&other).unwrap().count(), 0, "no lock file made in it");
        let open = folder(tmp.path(), "eddie-locks-open", 0o777);
        let e = ProcessLock::acquire_in(&[open], Path::new("/w/a"), uid()).unwrap_err();
        assert!(e.message().contains("may write"), "{}", e.message());
        assert_eq!(std::fs::metadata(&other).unwrap().uid(), if uid() == 0 { 4242 } else { uid() });
    }

    #[test]
    fn a_planted_symlink_as_the_lock_file_is_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = folder(tmp.path(), "eddie-locks", 0o700);
        let real = Path::new("/w/MEMORY.md");
        let name = blake3::hash(real.as_os_str().as_encoded_bytes()).to_hex();
        let lock_path = dir.join(format!("{}.lock", &name[..32]));
        let target = tmp.path().join("victim.txt");
        std::fs::write(&target, "keep").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        symlink(&target, &lock_path).unwrap();
        let lock = ProcessLock::acquire_in(std::slice::from_ref(&dir), real, uid()).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o644);
        let m = std::fs::symlink_metadata(&lock_path).unwrap();
        assert!(m.is_file(), "the symlink was replaced by a lock file of ours");
        drop(lock);
        // The lock file is held with O_CLOEXEC: a child process does not inherit it.
        let lock = ProcessLock::acquire_in(std::slice::from_ref(&dir), real, uid()).unwrap();
        let fds = std::process::Command::new("sh").arg("-c").arg("ls -l /proc/self/fd").output().unwrap();
        assert!(
            !String::from_utf8_lossy(&fds.stdout).contains(&name[..32]),
            "the lock fd leaked into a child"
        );
        drop(lock);
    }
}
