//! [`SafeDir`] on Windows. There is no `openat`: a folder is held as a handle opened without
//! `FILE_SHARE_DELETE`, so while it is held it cannot be renamed or removed, and neither can
//! the folders above it (Windows refuses to rename a folder with an open handle below it).
//! Names are then joined to the held folder's path; each is opened with
//! `FILE_FLAG_OPEN_REPARSE_POINT`, so a symlink or a junction (a reparse point) is seen as
//! itself and refused, never followed.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Foundation::{ERROR_DIRECTORY, ERROR_STOPPED_ON_SYMLINK, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE,
    FILE_SHARE_READ, FILE_SHARE_WRITE, GetFileInformationByHandle,
};

use super::{Created, Entry, Kind, SafeDir, not_plain, plain};

/// The error a symlink or junction met where none may be gives (as `ELOOP` on Linux).
pub(crate) const E_LOOP: i32 = ERROR_STOPPED_ON_SYMLINK as i32;
/// The error a name that is not a folder gives (as `ENOTDIR`).
pub(crate) const E_NOTDIR: i32 = ERROR_DIRECTORY as i32;

/// Open the folder `path` and hold it (no `FILE_SHARE_DELETE`); with `nofollow`, a reparse
/// point at `path` itself is refused with [`E_LOOP`].
fn open_dir(path: &Path, nofollow: bool) -> io::Result<File> {
    let flags = FILE_FLAG_BACKUP_SEMANTICS | if nofollow { FILE_FLAG_OPEN_REPARSE_POINT } else { 0 };
    let f = OpenOptions::new()
        .read(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
        .custom_flags(flags)
        .open(path)?;
    let t = f.metadata()?.file_type();
    if t.is_symlink() {
        return Err(io::Error::from_raw_os_error(E_LOOP));
    }
    if !t.is_dir() {
        return Err(io::Error::from_raw_os_error(E_NOTDIR));
    }
    Ok(f)
}

/// Open `path` itself (a reparse point is opened, not followed) with `opts` and `flags`.
fn open_nofollow(path: &Path, opts: &mut OpenOptions, flags: u32) -> io::Result<File> {
    opts.share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(flags | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

impl SafeDir {
    /// Open `path` as the trusted root of a walk (it may itself be reached through symlinks:
    /// the workspace root may be one).
    pub fn open_root(path: &Path) -> io::Result<Self> {
        Ok(Self { handle: open_dir(path, false)?, path: path.to_path_buf() })
    }

    /// The subdirectory `name`, never through a symlink or junction ([`E_LOOP`] when `name`
    /// is one, [`E_NOTDIR`] when it is something else).
    pub fn child(&self, name: &OsStr) -> io::Result<Self> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        let path = self.path.join(name);
        Ok(Self { handle: open_dir(&path, true)?, path })
    }

    /// [`SafeDir::child`], made first when missing; whether it was.
    pub fn child_or_create(&self, name: &OsStr) -> io::Result<(Self, bool)> {
        self.child_or_create_mode(name, 0o777)
    }

    /// [`SafeDir::child_or_create`]; the mode is not used (Windows folders inherit their ACL).
    pub fn child_or_create_mode(&self, name: &OsStr, _mode: u32) -> io::Result<(Self, bool)> {
        match self.child(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let created = match std::fs::create_dir(self.path.join(name)) {
                    Ok(()) => true,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
                    Err(e) => return Err(e),
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
        let opened = open_nofollow(
            &self.path.join(name),
            OpenOptions::new().access_mode(0),
            FILE_FLAG_BACKUP_SEMANTICS,
        );
        match opened {
            Ok(f) => Self::entry_of_file(&f).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// An open file's type, mode and identity (volume serial and file index). Windows has no
    /// numeric owner: `uid` is 0, as [`crate::engine::store::locks`] expects of this user.
    pub fn entry_of_file(f: &File) -> io::Result<Entry> {
        let meta = f.metadata()?;
        let t = meta.file_type();
        let kind = if t.is_symlink() {
            Kind::Symlink
        } else if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        let mut info = BY_HANDLE_FILE_INFORMATION::default();
        // SAFETY: `info` is a local the call fills; the handle is `f`'s, open for the call.
        if unsafe { GetFileInformationByHandle(f.as_raw_handle() as HANDLE, &raw mut info) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let index = (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow);
        let mode = match (kind, meta.permissions().readonly()) {
            (Kind::Dir, _) => 0o755,
            (_, true) => 0o444,
            (_, false) => 0o644,
        };
        Ok(Entry { kind, size: meta.len(), mode, uid: 0, id: (u64::from(info.dwVolumeSerialNumber), index) })
    }

    /// This folder's own type, owner, mode and identity.
    pub fn own(&self) -> io::Result<Entry> {
        Self::entry_of_file(&self.handle)
    }

    /// Open the file `name` here with `opts`, never through a symlink or junction.
    fn open_file(&self, name: &OsStr, opts: &mut OpenOptions) -> io::Result<File> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        let f = open_nofollow(&self.path.join(name), opts, 0)?;
        if f.metadata()?.file_type().is_symlink() {
            return Err(io::Error::from_raw_os_error(E_LOOP));
        }
        Ok(f)
    }

    /// Open the file `name` here for reading, never through a symlink.
    pub fn open_read(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, OpenOptions::new().read(true))
    }

    /// Open (or create) `name` here for reading and writing, never through a symlink, never
    /// truncating.
    pub fn open_or_create(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, OpenOptions::new().read(true).write(true).create(true))
    }

    /// A new file with a fresh name `<prefix><random><suffix>` here, and that name.
    pub fn create_temp(&self, prefix: &str, suffix: &str) -> io::Result<(File, OsString)> {
        for _ in 0..16 {
            let name = OsString::from(format!("{prefix}{}{suffix}", uuid::Uuid::new_v4().simple()));
            match open_nofollow(&self.path.join(&name), OpenOptions::new().write(true).create_new(true), 0) {
                Ok(f) => return Ok((f, name)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free temporary name"))
    }

    /// Rename `from` to `to`, both here. Without `overwrite`, an existing `to` is
    /// `AlreadyExists` and stays as it is.
    pub fn rename(&self, from: &OsStr, to: &OsStr, overwrite: bool) -> io::Result<()> {
        if let Some(bad) = [from, to].into_iter().find(|n| !plain(n)) {
            return Err(not_plain(bad));
        }
        let (from, to) = (self.path.join(from), self.path.join(to));
        if overwrite {
            return std::fs::rename(from, to);
        }
        // A hard link never replaces; then the old name goes.
        std::fs::hard_link(&from, &to)?;
        std::fs::remove_file(from)
    }

    /// Remove the file `name` here.
    pub fn unlink(&self, name: &OsStr) -> io::Result<()> {
        if !plain(name) {
            return Err(not_plain(name));
        }
        std::fs::remove_file(self.path.join(name))
    }

    /// Windows cannot flush a folder's entries (NTFS journals them); nothing to do.
    pub fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    /// The names here, unsorted.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        std::fs::read_dir(&self.path)?.map(|e| e.map(|e| e.file_name())).collect()
    }

    /// Remove the folders `created` made, deepest first, each only while empty.
    pub fn remove_created(created: Vec<Created>) {
        for c in created.into_iter().rev() {
            let _ = std::fs::remove_dir(c.parent.path.join(&c.name));
        }
    }
}
