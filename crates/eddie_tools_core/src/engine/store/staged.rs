//! A file written while it streams (a download): a temp file in the target's directory, held
//! open ([`safe_dir`]), then committed: synced, the path walked again, the mode of the file it
//! replaces kept, renamed within the directory, the directory synced. Dropped uncommitted, it
//! leaves nothing behind. Every step runs on the blocking pool: [`Staging::begin`],
//! [`Staging::write`], [`Staging::commit`], [`Staging::discard`].

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::store::safe_dir::{self, Created, Kind, SafeDir};
use crate::error::{ErrorCode, Result, ToolError, exists_error};
use crate::workspace::Workspace;

/// Where a file goes while it streams: the temp file in the directory held open. Dropped
/// before it is committed (a failure, an abort that drops the call), it removes the temp file
/// and the folders this call made (only those, only while empty).
pub struct Staging {
    dir: SafeDir,
    made: Vec<Created>,
    file: Arc<std::fs::File>,
    tmp: OsString,
    committed: bool,
    workspace: Workspace,
    real_dir: PathBuf,
    shown: PathBuf,
}

impl Staging {
    /// Open `real_dir` (inside `workspace`) walking down from the workspace root with no
    /// symlink followed, making what is missing, and a temp file `<prefix>…<suffix>` in it.
    /// `shown` is the target's path as the caller gave it.
    pub async fn begin(
        workspace: &Workspace,
        real_dir: &Path,
        (prefix, suffix): (&'static str, &'static str),
        shown: &str,
    ) -> Result<Self> {
        let (ws, dir, shown) = (workspace.clone(), real_dir.to_path_buf(), PathBuf::from(shown));
        crate::blocking("write", move || stage(ws, dir, (prefix, suffix), shown)).await
    }

    /// Append `buf` to the temp file.
    pub async fn write(&self, buf: Vec<u8>) -> Result<()> {
        let (file, shown) = (Arc::clone(&self.file), self.shown.clone());
        crate::blocking("write", move || {
            (&*file).write_all(&buf).map_err(|e| ToolError::fs(&e, "write", Some(&shown)))
        })
        .await
    }

    /// Put the file in place as `name` in its directory (refused when it exists, unless
    /// `overwrite`). On any failure the temp file is removed.
    pub async fn commit(self, name: OsString, overwrite: bool) -> Result<()> {
        crate::blocking("write", move || commit(self, &name, overwrite)).await
    }

    /// Remove the temp file and the folders made for it.
    pub async fn discard(self) -> Result<()> {
        crate::blocking("write", move || {
            drop(self);
            Ok(())
        })
        .await
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.dir.unlink(&self.tmp);
            SafeDir::remove_created(std::mem::take(&mut self.made));
        }
    }
}

/// Open the target's directory safely (making what is missing) and a temp file in it.
fn stage(
    workspace: Workspace,
    real_dir: PathBuf,
    (prefix, suffix): (&str, &str),
    shown: PathBuf,
) -> Result<Staging> {
    let (dir, made) = safe_dir::open_in(&workspace, &real_dir, true, &shown)?;
    match dir.create_temp(prefix, suffix) {
        Ok((file, tmp)) => {
            Ok(Staging { dir, made, file: Arc::new(file), tmp, committed: false, workspace, real_dir, shown })
        }
        Err(e) => {
            let err = ToolError::fs(&e, "open", Some(dir.path()));
            SafeDir::remove_created(made);
            Err(err)
        }
    }
}

/// Sync the temp file, check the path still leads to the directory it is in, and rename it
/// into place (then sync the directory). On any failure the temp file is removed (by the drop).
fn commit(mut st: Staging, name: &OsStr, overwrite: bool) -> Result<()> {
    let shown_path = st.shown.clone();
    let shown_path = shown_path.as_path();
    let shown = shown_path.display().to_string();
    st.file.sync_all().map_err(|e| ToolError::fs(&e, "fsync", Some(shown_path)))?;
    // Walk the path again: a folder on it swapped (for a symlink, or moved away) since the
    // directory was opened means the file would not land where the path says.
    let (again, _) = safe_dir::open_in(&st.workspace, &st.real_dir, false, shown_path)?;
    let (held, now) = (
        st.dir.own().map_err(|e| ToolError::fs(&e, "fstat", Some(shown_path)))?,
        again.own().map_err(|e| ToolError::fs(&e, "fstat", Some(shown_path)))?,
    );
    if held.id != now.id {
        return Err(ToolError::new(
            ErrorCode::OutsideWorkspace,
            format!("the folder of {shown} was replaced while it was written; nothing was written"),
        )
        .with_prop("path", shown));
    }
    // The file keeps the mode of the one it replaces, as every write does.
    if let Ok(Some(old)) = st.dir.stat(name) {
        match old.kind {
            Kind::Dir => {
                return Err(ToolError::new(
                    ErrorCode::IsADirectory,
                    format!("{shown} is a directory; give a file path"),
                ));
            }
            Kind::File => {
                #[cfg(unix)]
                let perm = {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::Permissions::from_mode(old.mode)
                };
                #[cfg(windows)]
                let perm = {
                    let mut p = st
                        .file
                        .metadata()
                        .map_err(|e| ToolError::fs(&e, "stat", Some(shown_path)))?
                        .permissions();
                    p.set_readonly(old.mode & 0o222 == 0);
                    p
                };
                st.file.set_permissions(perm).map_err(|e| ToolError::fs(&e, "chmod", Some(shown_path)))?;
            }
            _ => {}
        }
    }
    st.dir.rename(&st.tmp, name, overwrite).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            exists_error(&shown, "pass overwrite: true to replace it")
        } else {
            ToolError::fs(&e, "rename", Some(shown_path))
        }
    })?;
    st.committed = true;
    let _ = st.dir.sync();
    Ok(())
}
