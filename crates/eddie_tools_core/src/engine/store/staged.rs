//! A file written while it streams (a download): a temp file in the target's directory, held
//! open ([`safe_dir`]), then committed: synced, the path walked again, the mode of the file it
//! replaces kept, renamed within the directory, the directory synced. Dropped uncommitted, it
//! leaves nothing behind.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::sync::Arc;

use crate::context::Ctx;
use crate::engine::store::safe_dir::{self, Created, Kind, SafeDir};
use crate::error::{ErrorCode, Result, ToolError, exists_error};

/// Where the body goes while it streams: the temp file in the directory held open. Dropped
/// before it is committed (a failure, an abort that drops the call), it removes the temp file
/// and the folders this call made (only those, only while empty).
pub struct Staging {
    pub(crate) dir: SafeDir,
    made: Vec<Created>,
    pub(crate) file: Arc<std::fs::File>,
    tmp: OsString,
    committed: bool,
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
pub fn stage(ctx: &Ctx, dir: &Path, shown: &Path) -> Result<Staging> {
    let (dir, made) = safe_dir::open_in(&ctx.workspace, dir, true, shown)?;
    match dir.create_temp(".eddie-download-", ".part") {
        Ok((file, tmp)) => Ok(Staging { dir, made, file: Arc::new(file), tmp, committed: false }),
        Err(e) => {
            let err = ToolError::fs(&e, "open", Some(dir.path()));
            SafeDir::remove_created(made);
            Err(err)
        }
    }
}

/// Sync the temp file, check the path still leads to the directory it is in, and rename it
/// into place (then sync the directory). On any failure the temp file is removed (by the drop).
pub fn commit(
    ctx: &Ctx,
    mut st: Staging,
    real_dir: &Path,
    name: &OsStr,
    overwrite: bool,
    shown: &str,
) -> Result<()> {
    let shown_path = Path::new(shown);
    st.file.sync_all().map_err(|e| ToolError::fs(&e, "fsync", Some(shown_path)))?;
    // Walk the path again: a folder on it swapped (for a symlink, or moved away) since the
    // directory was opened means the file would not land where the path says.
    let (again, _) = safe_dir::open_in(&ctx.workspace, real_dir, false, shown_path)?;
    let (held, now) = (
        st.dir.own().map_err(|e| ToolError::fs(&e, "fstat", Some(shown_path)))?,
        again.own().map_err(|e| ToolError::fs(&e, "fstat", Some(shown_path)))?,
    );
    if held.id != now.id {
        return Err(ToolError::new(
            ErrorCode::OutsideWorkspace,
            format!("the folder of {shown} was replaced while it downloaded; nothing was written"),
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
                use std::os::unix::fs::PermissionsExt;
                st.file
                    .set_permissions(std::fs::Permissions::from_mode(old.mode))
                    .map_err(|e| ToolError::fs(&e, "chmod", Some(shown_path)))?;
            }
            _ => {}
        }
    }
    st.dir.rename(&st.tmp, name, overwrite).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            exists_error(shown, "pass overwrite: true to replace it")
        } else {
            ToolError::fs(&e, "rename", Some(shown_path))
        }
    })?;
    st.committed = true;
    let _ = st.dir.sync();
    Ok(())
}
