//! Per-file async locks: read-modify-write cycles on one plan or task-list file in this
//! process run one at a time, so concurrent updates are never lost.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::OwnedMutexGuard;

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
#[derive(Debug)]
pub struct ProcessLock {
    _file: std::fs::File,
}

impl ProcessLock {
    /// Block until the lock for `real` (a real path) is held (call it on a blocking thread).
    pub fn acquire(real: &Path) -> crate::error::Result<Self> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        // SAFETY: getuid(2) takes nothing, always succeeds and touches no memory of ours.
        let uid = unsafe { libc::getuid() };
        let dir = std::env::temp_dir().join(format!("eddie-locks-{uid}"));
        std::fs::create_dir_all(&dir).map_err(|e| crate::error::ToolError::fs(&e, "mkdir", Some(&dir)))?;
        let name = blake3::hash(real.as_os_str().as_encoded_bytes()).to_hex();
        let path = dir.join(format!("{}.lock", &name[..32]));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| crate::error::ToolError::fs(&e, "open", Some(&path)))?;
        loop {
            // SAFETY: flock(2) on a descriptor we own and keep open for the call; no memory is
            // shared with the kernel.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                return Ok(Self { _file: file });
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(crate::error::ToolError::fs(&e, "flock", Some(&path)));
            }
        }
    }
}
