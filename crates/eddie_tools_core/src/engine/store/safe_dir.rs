//! Directories held open and walked without following a symlink (`openat` with `O_NOFOLLOW`
//! on every component, from a trusted root down). A path resolved once and written later can
//! have a folder swapped for a symlink in between (during a confirm, while a download
//! streams); a writer that holds the folder it checked, creates its temp file in it and renames
//! within it (`renameat`) cannot be sent elsewhere by such a swap, and [`SafeDir::walk`] again
//! before the rename tells whether the path still leads to the folder it holds.
//!
//! Every name given to a [`SafeDir`] method is one path component (no `/`, not `.`/`..`).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::fd::OwnedFd;
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

#[cfg(unix)]
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::error::{ErrorCode, Result, ToolError};
use crate::workspace::{Workspace, realpath};

/// Windows: the same API on directory handles held without `FILE_SHARE_DELETE`.
#[cfg(windows)]
#[path = "safe_dir_windows.rs"]
mod windows;
#[cfg(windows)]
pub(crate) use windows::{E_LOOP, E_NOTDIR};
/// `ELOOP`: opened through a symlink where none may be.
#[cfg(unix)]
pub(crate) const E_LOOP: i32 = libc::ELOOP;
/// `ENOTDIR`: not a folder.
#[cfg(unix)]
pub(crate) const E_NOTDIR: i32 = libc::ENOTDIR;

/// A directory held open.
#[derive(Debug)]
pub struct SafeDir {
    #[cfg(unix)]
    fd: OwnedFd,
    /// Windows: the folder's handle, which keeps it from being renamed or removed.
    #[cfg(windows)]
    handle: File,
    path: PathBuf,
}

/// A directory a walk created (removed again by [`SafeDir::remove_created`] if empty).
#[derive(Debug)]
pub struct Created {
    parent: SafeDir,
    name: OsString,
}

/// What a name in a directory is (`lstat`: a symlink is reported as one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its type.
    pub kind: Kind,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits.
    pub mode: u32,
    /// Its owner.
    pub uid: u32,
    /// Device and inode.
    pub id: (u64, u64),
}

/// The type of an [`Entry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else (fifo, socket, device).
    Other,
}

#[cfg(unix)]
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)] // the field types differ per platform
fn entry_of(st: &rustix::fs::Stat) -> Entry {
    let kind = match FileType::from_raw_mode(st.st_mode as _) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    };
    Entry {
        kind,
        size: st.st_size.max(0) as u64,
        mode: (st.st_mode as u32) & 0o7777,
        uid: st.st_uid as u32,
        id: (st.st_dev as u64, st.st_ino as u64),
    }
}

/// Whether `name` is one plain path component.
fn plain(name: &OsStr) -> bool {
    let b = name.as_encoded_bytes();
    // Windows also splits at `\` and reads `:` as a drive or a stream.
    let special = |c: &u8| *c == b'/' || *c == 0 || (cfg!(windows) && (*c == b'\\' || *c == b':'));
    !b.is_empty() && b != b"." && b != b".." && !b.iter().any(special)
}

fn not_plain(name: &OsStr) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a single path component", name.display()))
}

#[cfg(unix)]
const DIR_FLAGS: OFlags = OFlags::DIRECTORY.union(OFlags::RDONLY).union(OFlags::CLOEXEC);

#[cfg(unix)]
impl SafeDir {
    /// Open `path` as the trusted root of a walk (it may itself be reached through symlinks:
    /// the workspace root may be one).
    pub fn open_root(path: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(path, DIR_FLAGS, Mode::empty())?;
        Ok(Self { fd, path: path.to_path_buf() })
    }

    /// The subdirectory `name`, never through a symlink (`ELOOP` when `name` is one, `ENOTDIR`
    /// when it is something else).
    pub fn child(&self, name: &OsStr) -> io::Result<Self> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        let fd = rustix::fs::openat(&self.fd, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())?;
        Ok(Self { fd, path: self.path.join(name) })
    }

    /// [`SafeDir::child`], made first when missing (mode 0777 less the umask); whether it was.
    pub fn child_or_create(&self, name: &OsStr) -> io::Result<(Self, bool)> {
        self.child_or_create_mode(name, 0o777)
    }

    /// [`SafeDir::child_or_create`] with the mode a new folder gets (less the umask).
    pub fn child_or_create_mode(&self, name: &OsStr, mode: u32) -> io::Result<(Self, bool)> {
        match self.child(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let created = match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode as _)) {
                    Ok(()) => true,
                    Err(rustix::io::Errno::EXIST) => false,
                    Err(e) => return Err(e.into()),
                };
                Ok((self.child(name)?, created))
            }
            other => other.map(|d| (d, false)),
        }
    }

    /// What `name` is here, not following a symlink; `None` when there is nothing.
    pub fn stat(&self, name: &OsStr) -> io::Result<Option<Entry>> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(entry_of(&st))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// An open file's type, owner, mode and identity.
    pub fn entry_of_file(f: &File) -> io::Result<Entry> {
        Ok(entry_of(&rustix::fs::fstat(f)?))
    }

    /// This folder's own type, owner, mode and identity.
    pub fn own(&self) -> io::Result<Entry> {
        Ok(entry_of(&rustix::fs::fstat(&self.fd)?))
    }

    /// `openat` of the file `name` here with `flags` (never through a symlink, never a
    /// controlling terminal, close-on-exec).
    fn open_file(&self, name: &OsStr, flags: OFlags, mode: u32) -> io::Result<File> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        Ok(File::from(rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode as _))?))
    }

    /// Open the file `name` here for reading, never through a symlink.
    pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, OFlags::RDONLY, 0)
    }

    /// Open (or create, mode 0600) `name` here for reading and writing, never through a
    /// symlink, never truncating.
    pub fn open_or_create(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, OFlags::RDWR | OFlags::CREATE, 0o600)
    }

    /// A new file with a fresh name `<prefix><random><suffix>` here (`O_EXCL`, mode 0666 less
    /// the umask, as a new file gets), and that name.
    pub fn create_temp(&self, prefix: &str, suffix: &str) -> io::Result<(File, OsString)> {
        for _ in 0..16 {
            let name = OsString::from(format!("{prefix}{}{suffix}", uuid::Uuid::new_v4().simple()));
            match rustix::fs::openat(
                &self.fd,
                &name,
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => return Ok((File::from(fd), name)),
                Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name"))
    }

    /// Rename `from` to `to`, both here. Without `overwrite`, an existing `to` is
    /// `AlreadyExists` and stays as it is.
    pub fn rename(&self, from: &OsStr, to: &OsStr, overwrite: bool) -> io::Result<()> {
        if !plain(from) {
            return Err(not_plain(from));
        }
        if !plain(to) {
            return Err(not_plain(to));
        }
        if overwrite {
            return Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?);
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        match rustix::fs::renameat_with(&self.fd, from, &self.fd, to, rustix::fs::RenameFlags::NOREPLACE) {
            // A file system without RENAME_NOREPLACE: a hard link, which never replaces either.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            other => return Ok(other?),
        }
        rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty())?;
        Ok(rustix::fs::unlinkat(&self.fd, from, AtFlags::empty())?)
    }

    /// Remove the file `name` here.
    pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Flush the folder's entries (after a rename, so the rename survives a crash).
    pub fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }

    /// The names here (not `.` and `..`), unsorted.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut out = Vec::new();
        for e in rustix::fs::Dir::read_from(&self.fd)? {
            let e = e?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                out.push(OsStr::from_bytes(n).to_os_string());
            }
        }
        Ok(out)
    }

    /// Remove the folders `created` made, deepest first, each only while empty.
    pub fn remove_created(created: Vec<Created>) {
        for c in created.into_iter().rev() {
            let _ = rustix::fs::unlinkat(&c.parent.fd, &c.name, AtFlags::REMOVEDIR);
        }
    }
}

impl SafeDir {
    /// Where it was when it was opened (for messages; the folder may have moved since).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Walk the relative path `rel` down from here, one component at a time, no symlink
    /// followed; with `create`, missing folders are made (and listed, so a failed call can
    /// remove them). A component that is a symlink is `OUTSIDE_WORKSPACE`; `shown` is the
    /// path named in errors.
    pub fn walk(self, rel: &Path, create: bool, shown: &Path) -> Result<(Self, Vec<Created>)> {
        let mut cur = self;
        let mut made = Vec::new();
        for c in rel.components() {
            let name = match c {
                Component::Normal(n) => n,
                Component::CurDir => continue,
                _ => {
                    return Err(ToolError::new(
                        ErrorCode::OutsideWorkspace,
                        format!("{} is not a plain path below the workspace", shown.display()),
                    ));
                }
            };
            let step = if create { cur.child_or_create(name) } else { cur.child(name).map(|d| (d, false)) };
            let (next, created) = step.map_err(|e| {
                // Linux says ENOTDIR for a symlink opened with O_DIRECTORY | O_NOFOLLOW; others ELOOP.
                let link = matches!(cur.stat(name), Ok(Some(Entry { kind: Kind::Symlink, .. })));
                walk_error(&e, link, &cur.path.join(name), shown)
            })?;
            if created {
                made.push(Created { parent: cur, name: name.to_os_string() });
            }
            cur = next;
        }
        Ok((cur, made))
    }
}

fn walk_error(e: &io::Error, link: bool, at: &Path, shown: &Path) -> ToolError {
    match e.raw_os_error() {
        _ if link => ToolError::new(
            ErrorCode::OutsideWorkspace,
            format!(
                "{} is a symbolic link now (it was a folder when {} was checked); nothing was written there",
                at.display(),
                shown.display()
            ),
        )
        .with_prop("path", shown.display().to_string()),
        Some(E_NOTDIR | E_LOOP) => ToolError::new(
            ErrorCode::NotADirectory,
            format!("{} is not a folder, so {} cannot be written", at.display(), shown.display()),
        )
        .with_prop("path", shown.display().to_string()),
        _ => ToolError::fs(e, "open", Some(at)),
    }
}

/// Open the folder `real_dir` (a real path inside the workspace, as [`Workspace::resolve`]
/// gives) by walking down from the workspace's real root with no symlink followed; with
/// `create`, missing folders are made. `shown` is the path named in errors.
pub fn open_in(
    ws: &Workspace,
    real_dir: &Path,
    create: bool,
    shown: &Path,
) -> Result<(SafeDir, Vec<Created>)> {
    let root = realpath(ws.root())?;
    let rel = real_dir
        .strip_prefix(&root)
        .map_err(|_| ToolError::outside_workspace(&shown.display().to_string()))?;
    let top = SafeDir::open_root(&root).map_err(|e| ToolError::fs(&e, "open", Some(ws.root())))?;
    top.walk(rel, create, shown)
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_walk_refuses_a_symlinked_folder_and_creates_what_is_missing() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        symlink(outside.path(), d.path().join("a/link")).unwrap();
        let root = SafeDir::open_root(d.path()).unwrap();
        let e = root.walk(Path::new("a/link/x"), true, Path::new("a/link/x")).unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutsideWorkspace, "{}", e.message());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing made outside");
        let root = SafeDir::open_root(d.path()).unwrap();
        let (dir, made) = root.walk(Path::new("a/b/c"), true, Path::new("a/b/c")).unwrap();
        assert_eq!(made.len(), 2);
        let (mut f, tmp) = dir.create_temp(".t-", ".part").unwrap();
        f.write_all(b"hi").unwrap();
        dir.rename(&tmp, OsStr::new("f"), false).unwrap();
        assert_eq!(std::fs::read(d.path().join("a/b/c/f")).unwrap(), b"hi");
        let (_, tmp2) = dir.create_temp(".t-", "").unwrap();
        let e = dir.rename(&tmp2, OsStr::new("f"), false).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(d.path().join("a/b/c/f")).unwrap(), b"hi", "not replaced");
        dir.unlink(&tmp2).unwrap();
        dir.unlink(OsStr::new("f")).unwrap();
        SafeDir::remove_created(made);
        assert!(!d.path().join("a/b").exists(), "the folders it made are gone");
        assert!(d.path().join("a/link").exists());
    }

    #[test]
    fn names_are_single_components() {
        let d = tempfile::tempdir().unwrap();
        let root = SafeDir::open_root(d.path()).unwrap();
        for bad in ["", ".", "..", "a/b"] {
            assert!(root.stat(OsStr::new(bad)).is_err(), "{bad:?}");
            assert!(root.open_read(OsStr::new(bad)).is_err(), "{bad:?}");
        }
        std::fs::write(d.path().join("f"), "x").unwrap();
        symlink(d.path().join("f"), d.path().join("l")).unwrap();
        assert_eq!(root.stat(OsStr::new("f")).unwrap().map(|e| e.kind), Some(Kind::File));
        assert_eq!(root.stat(OsStr::new("l")).unwrap().map(|e| e.kind), Some(Kind::Symlink));
        assert_eq!(root.stat(OsStr::new("none")).unwrap(), None);
        assert!(root.open_read(OsStr::new("l")).is_err(), "a symlink is not opened");
        let mut names = root.names().unwrap();
        names.sort();
        assert_eq!(names, [OsString::from("f"), OsString::from("l")]);
    }
}
