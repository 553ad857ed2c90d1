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
