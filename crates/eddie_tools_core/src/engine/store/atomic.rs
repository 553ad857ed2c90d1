//! Atomic writes: a temp file in the target's directory, fsync'd content, then `rename` over
//! the target, so a reader sees the old file or the new one, never a torn mix.

use std::io::Write;
#[cfg(unix)]
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
            #[cfg(unix)]
            let e = std::io::Error::from_raw_os_error(libc::EISDIR);
            #[cfg(windows)]
            let e = std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory");
            return Err(ToolError::fs(&e, "open", Some(display)));
        }
        _ => {}
    }
    let mode = mode_for(path);
    let mut tmp = tempfile::Builder::new()
        .prefix(".eddie-tmp-")
        .tempfile_in(dir)
        .map_err(|e| ToolError::fs(&e, "open", Some(display)))?;
    tmp.write_all(bytes).map_err(|e| ToolError::fs(&e, "write", Some(display)))?;
    tmp.as_file().sync_data().map_err(|e| ToolError::fs(&e, "fsync", Some(display)))?;
    set_mode(tmp.path(), mode).map_err(|e| ToolError::fs(&e, "chmod", Some(display)))?;
    let mut tries = 0;
    loop {
        match tmp.persist(path) {
            Ok(_) => return Ok(()),
            Err(e) if windows_busy(&e.error, &mut tries) => tmp = e.file,
            Err(e) => return Err(ToolError::fs(&e.error, "rename", Some(display))),
        }
    }
}

/// Windows: a rename over a file that another process has open or is replacing itself fails
/// with "access denied" for a moment. Whether to try again (up to a second, as npm's
/// graceful-fs does); never on other systems, whose renames do not fail that way.
pub(crate) fn windows_busy(e: &std::io::Error, tries: &mut u32) -> bool {
    if !cfg!(windows) || e.kind() != std::io::ErrorKind::PermissionDenied || *tries >= 50 {
        return false;
    }
    *tries += 1;
    std::thread::sleep(std::time::Duration::from_millis(20));
    true
}

/// The permission bits a new version of `path` gets: its own, or a new file's (0666 less the
/// umask).
#[cfg(unix)]
pub(crate) fn mode_for(path: &Path) -> u32 {
    std::fs::metadata(path).map_or_else(|_| 0o666 & !current_umask(), |m| m.permissions().mode())
}

/// Give the file at `path` the permission bits `mode`.
#[cfg(unix)]
pub(crate) fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Windows has no permission bits (ACLs are inherited from the folder): 0666.
#[cfg(windows)]
pub(crate) fn mode_for(_path: &Path) -> u32 {
    0o666
}

/// Windows: nothing to set (a new file inherits its folder's ACL).
#[cfg(windows)]
pub(crate) fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// [`write_atomic`] on the blocking pool: how async code writes a file.
pub async fn write_atomic_async(path: PathBuf, bytes: Vec<u8>, display: PathBuf) -> Result<()> {
    crate::blocking("write", move || write_atomic(&path, &bytes, &display)).await
}

#[cfg(unix)]
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
        // `mode_t` is u32 on Linux and u16 on macOS.
        #[allow(clippy::useless_conversion)]
        u32::from(old)
    })
}

#[cfg(all(test, unix))]
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
