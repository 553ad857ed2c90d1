//! Atomic writes: a temp file in the target's directory, fsync'd content, then `rename` over
//! the target, so a reader sees the old file or the new one, never a torn mix.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Result, ToolError};

/// Write `bytes` to `path` atomically, creating parent directories (`mkdir -p`). An existing
/// file keeps its permission bits. `display` is the path shown in errors.
pub fn write_atomic(path: &Path, bytes: &[u8], display: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("/"));
    std::fs::create_dir_all(dir).map_err(|e| ToolError::fs(&e, "mkdir", Some(dir)))?;
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            let e = std::io::Error::from_raw_os_error(libc::EISDIR);
            return Err(ToolError::fs(&e, "open", Some(display)));
        }
        _ => {}
    }
    let existing_mode = std::fs::metadata(path).ok().map(|m| m.permissions().mode());
    let mut tmp = tempfile::Builder::new()
        .prefix(".eddie-tmp-")
        .tempfile_in(dir)
        .map_err(|e| ToolError::fs(&e, "open", Some(display)))?;
    tmp.write_all(bytes).map_err(|e| ToolError::fs(&e, "write", Some(display)))?;
    tmp.as_file().sync_data().map_err(|e| ToolError::fs(&e, "fsync", Some(display)))?;
    let mode = existing_mode.unwrap_or_else(|| 0o666 & !current_umask());
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
        .map_err(|e| ToolError::fs(&e, "chmod", Some(display)))?;
    tmp.persist(path).map_err(|e| ToolError::fs(&e.error, "rename", Some(display)))?;
    Ok(())
}

/// [`write_atomic`] on the blocking pool: how async code writes a file.
pub async fn write_atomic_async(path: PathBuf, bytes: Vec<u8>, display: PathBuf) -> Result<()> {
    crate::blocking("write", move || write_atomic(&path, &bytes, &display)).await
}

pub(crate) fn current_umask() -> u32 {
    // Read the umask without changing it for long: set and restore (process-wide, but the
    // window is two syscalls). Cached after the first call.
    static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        // SAFETY: umask(2) takes an integer, always succeeds and touches no memory of ours.
        // (A file another thread creates in the next instant gets mode bits masked by 022:
        // a permissions race, not a memory-safety one.)
        let old = unsafe { libc::umask(0o022) };
        // SAFETY: as above; this puts the previous mask back.
        unsafe { libc::umask(old) };
        old
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_keeping_mode() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("a/b/c.txt");
        write_atomic(&p, b"one", &p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read(&p).unwrap_or_default(), b"one");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600))
            .unwrap_or_else(|e| panic!("{e}"));
        write_atomic(&p, b"two", &p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read(&p).unwrap_or_default(), b"two");
        let mode = std::fs::metadata(&p).map(|m| m.permissions().mode() & 0o777).unwrap_or(0);
        assert_eq!(mode, 0o600);
        let leftovers = std::fs::read_dir(p.parent().unwrap_or(d.path())).map(|r| r.count()).unwrap_or(0);
        assert_eq!(leftovers, 1, "no temp file left behind");
    }
}
