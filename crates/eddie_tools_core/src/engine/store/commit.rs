//! All-or-nothing writes of several files (patches, moves, single edits alike).
//!
//! 1. Check that every file still has the bytes the change was computed from (`STALE` if not).
//! 2. Write every new content to a synced temp file beside its target.
//! 3. Rename the temp files over the targets (deletions rename the target aside first).
//! 4. If any step fails, undo the renames already done from the in-memory before-images and
//!    remove the temp files, so every file is byte-identical to before.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::engine::text::line_index::Fingerprint;
use crate::error::{ErrorCode, Result, ToolError};

/// Threads that write temp files at once.
const STAGE_THREADS: usize = 8;

/// One file's change.
#[derive(Debug, Clone)]
pub struct Change {
    /// The path as shown to the caller.
    pub display: String,
    /// The real path (symlinks resolved, inside the workspace).
    pub real: PathBuf,
    /// The bytes the change was computed from; `None` = the file must not exist.
    pub old: Option<Vec<u8>>,
    /// The new bytes; `None` = delete the file.
    pub new: Option<Vec<u8>>,
    /// The file's fingerprint taken before `old` was read: when it is unchanged, the file
    /// is not read again to check it.
    pub seen: Option<Fingerprint>,
}

/// Apply `changes` atomically as a set (blocking).
pub fn commit(changes: &[Change]) -> Result<()> {
    commit_inner(changes, None)
}

/// [`commit`], failing the rename step of change `fail_at` (tests of the rollback).
fn commit_inner(changes: &[Change], fail_at: Option<usize>) -> Result<()> {
    for c in changes {
        verify(c)?;
    }
    // Writing and fsyncing the temp files is I/O-bound: several threads overlap the syncs.
    // On any error the staged files are dropped, which removes them.
    let per = changes.len().div_ceil(STAGE_THREADS).max(1);
    let staged: Vec<Result<Vec<Option<tempfile::TempPath>>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = changes
            .chunks(per)
            .map(|part| {
                scope.spawn(move || {
                    part.iter().map(|c| c.new.as_ref().map(|b| stage(c, b)).transpose()).collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(ToolError::internal("a staging thread panicked"))))
            .collect()
    });
    let mut temps: Vec<Option<tempfile::TempPath>> = Vec::with_capacity(changes.len());
    for part in staged {
        temps.extend(part?);
    }
    let mut done: Vec<(usize, Option<PathBuf>)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        let step = match (temps[i].take(), &c.new) {
            _ if fail_at == Some(i) => Err(ToolError::internal("injected failure")),
            (Some(mut tmp), Some(_)) => {
                let mut tries = 0;
                loop {
                    match tmp.persist(&c.real) {
                        Ok(()) => break Ok(None),
                        Err(e) if crate::engine::store::atomic::windows_busy(&e.error, &mut tries) => {
                            tmp = e.path
                        }
                        Err(e) => break Err(ToolError::fs(&e.error, "rename", Some(Path::new(&c.display)))),
                    }
                }
            }
            _ => set_aside(c).map(Some),
        };
        match step {
            Ok(aside) => done.push((i, aside)),
            Err(e) => {
                rollback(changes, &done);
                return Err(e);
            }
        }
    }
    for (_, aside) in done {
        if let Some(p) = aside {
            let _ = std::fs::remove_file(p);
        }
    }
    Ok(())
}

fn verify(c: &Change) -> Result<()> {
    if let (Some(seen), Ok(meta)) = (c.seen, std::fs::metadata(&c.real))
        && c.old.is_some()
        && Fingerprint::of(&meta) == seen
    {
        return Ok(());
    }
    let current = match std::fs::read(&c.real) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolError::fs(&e, "open", Some(Path::new(&c.display)))),
    };
    if current == c.old {
        return Ok(());
    }
    let what = match (&c.old, &current) {
        (None, Some(_)) => "was created",
        (Some(_), None) => "was deleted",
        _ => "changed",
    };
    Err(ToolError::new(
        ErrorCode::Stale,
        format!(
            "{} {what} while the change was being prepared; nothing was written. Read it again.",
            c.display
        ),
    )
    .with_prop("path", c.display.clone()))
}

fn stage(c: &Change, bytes: &[u8]) -> Result<tempfile::TempPath> {
    let shown = Path::new(&c.display);
    let dir = c.real.parent().unwrap_or_else(|| Path::new("/"));
    std::fs::create_dir_all(dir).map_err(|e| ToolError::fs(&e, "mkdir", Some(dir)))?;
    let mode = crate::engine::store::atomic::mode_for(&c.real);
    let mut tmp = tempfile::Builder::new()
        .prefix(".eddie-tmp-")
        .tempfile_in(dir)
        .map_err(|e| ToolError::fs(&e, "open", Some(shown)))?;
    tmp.write_all(bytes).map_err(|e| ToolError::fs(&e, "write", Some(shown)))?;
    tmp.as_file().sync_data().map_err(|e| ToolError::fs(&e, "fsync", Some(shown)))?;
    crate::engine::store::atomic::set_mode(tmp.path(), mode)
        .map_err(|e| ToolError::fs(&e, "chmod", Some(shown)))?;
    Ok(tmp.into_temp_path())
}

/// Rename a file to be deleted to a hidden name beside it (undone by a rename back).
fn set_aside(c: &Change) -> Result<PathBuf> {
    let dir = c.real.parent().unwrap_or_else(|| Path::new("/"));
    let aside = dir.join(format!(".eddie-del-{}", uuid::Uuid::new_v4().simple()));
    std::fs::rename(&c.real, &aside).map_err(|e| ToolError::fs(&e, "rename", Some(Path::new(&c.display))))?;
    Ok(aside)
}

fn rollback(changes: &[Change], done: &[(usize, Option<PathBuf>)]) {
    for (i, aside) in done.iter().rev() {
        let c = &changes[*i];
        match (aside, &c.old) {
            (Some(p), _) => {
                let _ = std::fs::rename(p, &c.real);
            }
            (None, Some(old)) => {
                let _ = crate::engine::store::atomic::write_atomic(&c.real, old, Path::new(&c.display));
            }
            (None, None) => {
                let _ = std::fs::remove_file(&c.real);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_after_the_fingerprint_is_stale() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, "v1").unwrap();
        let seen = Fingerprint::of(&std::fs::metadata(&a).unwrap());
        let change = |old: &str| Change {
            display: "a".into(),
            real: a.clone(),
            old: Some(old.as_bytes().to_vec()),
            new: Some(b"mine".to_vec()),
            seen: Some(seen),
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        std::fs::write(&a, "v2").unwrap(); // same size, new mtime/ctime
        assert_eq!(commit(&[change("v1")]).unwrap_err().code(), ErrorCode::Stale);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2");
        // A different fingerprint alone is not stale when the bytes are still the same.
        commit(&[change("v2")]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "mine");
    }

    #[test]
    fn all_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::fs::write(&a, "A").unwrap();
        std::fs::write(&b, "B").unwrap();
        let ch = |p: &Path, old: Option<&str>, new: Option<&str>| Change {
            display: p.display().to_string(),
            real: p.to_path_buf(),
            old: old.map(|s| s.as_bytes().to_vec()),
            new: new.map(|s| s.as_bytes().to_vec()),
            seen: None,
        };
        // A stale second file stops everything before anything is written.
        let e = commit(&[ch(&a, Some("A"), Some("A2")), ch(&b, Some("not B"), Some("B2"))]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Stale);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "A");
        // A failing third step rolls back the first two (a write and a delete).
        let c = d.path().join("c");
        let set = [ch(&a, Some("A"), Some("A2")), ch(&b, Some("B"), None), ch(&c, None, Some("C"))];
        assert!(commit_inner(&set, Some(2)).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "A");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "B");
        assert!(!c.exists());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2, "no temp or set-aside file is left");
        commit(&[
            ch(&a, Some("A"), Some("A2")),
            ch(&b, Some("B"), None),
            ch(&d.path().join("n/c"), None, Some("C")),
        ])
        .unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "A2");
        assert!(!b.exists());
        assert_eq!(std::fs::read_to_string(d.path().join("n/c")).unwrap(), "C");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
