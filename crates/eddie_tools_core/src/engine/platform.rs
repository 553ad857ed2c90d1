//! What file metadata means on each platform, in one place: permission bits, the executable
//! bit, a file's identity and change stamps, symlinks, and the bytes of an `OsStr`.
//!
//! Unix has `mode`, `dev`/`ino` and `ctime`; Windows has a read-only attribute, no inode in
//! stable std, and no change time. There a file's stamp is its size, write time and creation
//! time (a file replaced by a rename gets the new file's creation time), which is what every
//! cache here needs to see a change.

use std::ffi::OsStr;
use std::fs::Metadata;
use std::path::Path;

/// A file's version stamp: `(device, inode, size, mtime ns, ctime ns)`. Equal stamps mean
/// the same file, unchanged (for caches keyed by path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Stamp {
    /// The device (Unix) or 0 (Windows).
    pub dev: u64,
    /// The inode (Unix) or 0 (Windows).
    pub ino: u64,
    /// Its size in bytes.
    pub len: u64,
    /// Its last modification, in nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Its last status change (Unix) or its creation (Windows), in nanoseconds.
    pub ctime_ns: i128,
}

impl Stamp {
    /// The stamp of `m`.
    #[cfg(unix)]
    pub fn of(m: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        }
    }

    /// The stamp of `m`.
    #[cfg(windows)]
    pub fn of(m: &Metadata) -> Self {
        use std::os::windows::fs::MetadataExt;
        // FILETIME: 100 ns ticks since 1601.
        let ns = |t: u64| i128::from(t) * 100;
        Self {
            dev: 0,
            ino: 0,
            len: m.len(),
            mtime_ns: ns(m.last_write_time()),
            ctime_ns: ns(m.creation_time()),
        }
    }
}

/// The permission bits of `m` (`0o7777`). Windows: `0o755` for a folder, `0o444` for a
/// read-only file, `0o644` otherwise (plus `0o111` for `.exe`, `.cmd`, `.bat`, `.com`).
pub fn mode(m: &Metadata) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        m.permissions().mode() & 0o7777
    }
    #[cfg(windows)]
    {
        if m.is_dir() {
            0o755
        } else if m.permissions().readonly() {
            0o444
        } else {
            0o644
        }
    }
}

/// Whether the file `path` (with metadata `m`) is executable: any `x` bit on Unix; on
/// Windows, an extension `PATHEXT`'s defaults name (`.exe`, `.com`, `.bat`, `.cmd`).
pub fn is_executable(path: &Path, m: &Metadata) -> bool {
    #[cfg(unix)]
    {
        let _ = path;
        mode(m) & 0o111 != 0
    }
    #[cfg(windows)]
    {
        m.is_file()
            && path
                .extension()
                .and_then(OsStr::to_str)
                .is_some_and(|e| ["exe", "com", "bat", "cmd"].iter().any(|x| e.eq_ignore_ascii_case(x)))
    }
}

/// Set the permission bits of `path` (Unix); Windows keeps only "read-only" (no `w` bit).
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
    }
    #[cfg(windows)]
    {
        let mut p = std::fs::metadata(path)?.permissions();
        let readonly = mode & 0o222 == 0;
        if p.readonly() != readonly {
            p.set_readonly(readonly);
            std::fs::set_permissions(path, p)?;
        }
        Ok(())
    }
}

/// Make the symlink `link` pointing at `target` (Windows: a file or folder link, after what
/// `target` is; it needs Developer Mode or the privilege to create symlinks).
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, link);
    #[cfg(windows)]
    {
        let resolved = link.parent().map_or_else(|| target.to_path_buf(), |d| d.join(target));
        if resolved.is_dir() {
            std::os::windows::fs::symlink_dir(target, link)
        } else {
            std::os::windows::fs::symlink_file(target, link)
        }
    }
}

/// An `OsStr` made from bytes such as git stores (UTF-8 on Windows, where a path is UTF-16:
/// invalid sequences are replaced).
pub fn os_str_from_bytes(b: &[u8]) -> std::borrow::Cow<'_, OsStr> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(OsStr::from_bytes(b))
    }
    #[cfg(windows)]
    match String::from_utf8_lossy(b) {
        std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(OsStr::new(s)),
        std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_changes_the_stamp_and_a_read_does_not() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("a.txt");
        std::fs::write(&p, "one").unwrap_or_else(|e| panic!("{e}"));
        let m = || std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        let first = Stamp::of(&m());
        let _ = std::fs::read(&p);
        assert_eq!(Stamp::of(&m()), first);
        std::fs::write(&p, "two!").unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(Stamp::of(&m()), first);
    }

    #[test]
    fn modes_round_trip_and_executables_are_seen() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("run.cmd");
        std::fs::write(&p, "x").unwrap_or_else(|e| panic!("{e}"));
        set_mode(&p, 0o755).unwrap_or_else(|e| panic!("{e}"));
        let m = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(is_executable(&p, &m));
        set_mode(&p, 0o444).unwrap_or_else(|e| panic!("{e}"));
        let m = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&m) & 0o222, 0);
        set_mode(&p, 0o644).unwrap_or_else(|e| panic!("{e}"));
    }
}
