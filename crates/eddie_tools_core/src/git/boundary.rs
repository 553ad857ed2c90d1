//! The workspace is the boundary of every git tool, whatever the repository says about its work
//! tree (`core.worktree`, a `.git` file, an enclosing repository).
//!
//! With W the workspace root and T the repository's work tree (both with symlinks resolved):
//! - T is W or inside it: every path of the work tree is inside the workspace.
//! - T encloses W (the workspace is a folder of a larger repository): the tools read and write
//!   only the paths under W's folder (the [`Scope`] prefix). Reads leave the other paths out;
//!   a write that would touch one is refused (`OUTSIDE_WORKSPACE`, naming the paths).
//! - Otherwise (`core.worktree` names a folder elsewhere): every tool refuses the repository
//!   with `OUTSIDE_WORKSPACE` before reading anything.
//!
//! The git directory itself (objects, refs, the index) belongs to the repository wherever it
//! lies: a commit in a workspace inside a larger repository writes that repository's `.git`.
//! Hooks are executables, not data: one whose real path is outside W never runs
//! (`git_commit` says so).

use std::path::Path;

use crate::error::{ErrorCode, Result, ToolError};
use crate::workspace::{Workspace, realpath};

/// Which repository-relative paths a call may read or write.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// The workspace's folder relative to the work tree (`sub/ws`, no trailing `/`) when the
    /// work tree encloses the workspace; `None` when the whole work tree is inside it.
    prefix: Option<Vec<u8>>,
}

impl Scope {
    /// The scope of `repo` (opened from a folder of `ws`); `OUTSIDE_WORKSPACE` when its work
    /// tree and the workspace are disjoint. A bare repository has no work tree: everything.
    pub fn of(ws: &Workspace, repo: &git2::Repository) -> Result<Self> {
        let Some(workdir) = repo.workdir() else { return Ok(Self::default()) };
        let root = realpath(ws.root())?;
        let tree = realpath(workdir)?;
        if tree.starts_with(&root) {
            return Ok(Self::default());
        }
        if let Ok(rel) = root.strip_prefix(&tree) {
            let prefix = rel.as_os_str().as_encoded_bytes().to_vec();
            return Ok(Self { prefix: (!prefix.is_empty()).then_some(prefix) });
        }
        Err(ToolError::new(
            ErrorCode::OutsideWorkspace,
            format!(
                "the repository's work tree is {} (set by core.worktree or its .git file), outside the \
                 workspace {}: the git tools read and write no file there",
                tree.display(),
                root.display()
            ),
        )
        .with_prop("workTree", tree.to_string_lossy().into_owned()))
    }

    /// The workspace's folder in the work tree, when the work tree is larger than the workspace.
    pub fn prefix(&self) -> Option<String> {
        self.prefix.as_ref().map(|p| String::from_utf8_lossy(p).into_owned())
    }

    /// Whether repository-relative `path` is inside the workspace.
    pub fn contains(&self, path: &[u8]) -> bool {
        match &self.prefix {
            None => true,
            Some(p) => path
                .strip_prefix(p.as_slice())
                .is_some_and(|rest| rest.is_empty() || rest.first() == Some(&b'/')),
        }
    }

    /// Pathspecs limited to the workspace: `specs` as given (each already resolved inside the
    /// workspace), or, for "everything", the workspace's folder when it is a plain name (one
    /// with glob characters is left to the filter of [`Scope::contains`]).
    pub fn limit(&self, specs: Vec<String>) -> Vec<String> {
        match (&self.prefix, specs.is_empty()) {
            (Some(p), true) => match std::str::from_utf8(p) {
                Ok(p) if !p.contains(['*', '?', '[', '\\']) => vec![p.to_owned()],
                _ => specs,
            },
            _ => specs,
        }
    }

    /// The paths of `paths` outside the workspace (sorted, without repeats).
    pub fn outside<'a>(&self, paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<String> {
        let mut out: Vec<String> = paths
            .into_iter()
            .filter(|p| !self.contains(p))
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// `OUTSIDE_WORKSPACE` for an operation (`what`: "switching to other") that would write or
/// read `paths`, which lie outside the workspace; `Ok` when there are none.
pub fn refuse_outside(what: &str, paths: &[String]) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = paths.iter().take(10).map(String::as_str).collect();
    let more = if paths.len() > 10 { format!(" and {} more", paths.len() - 10) } else { String::new() };
    Err(ToolError::new(
        ErrorCode::OutsideWorkspace,
        format!(
            "{what} would touch files outside the workspace: {}{more}; nothing was changed (the \
             repository's work tree is larger than the workspace, and the git tools act only inside it)",
            shown.join(", ")
        ),
    )
    .with_prop("files", paths.to_vec()))
}

/// Every path `work tree/rel` a checkout would write, checked through the workspace resolver:
/// its folder, symlinks followed (a symlinked folder on the way that leads outside is refused
/// like any escape). The file itself is replaced, not written through, so a tracked symlink
/// that points outside is not an escape.
fn check_writes<'a>(ws: &Workspace, workdir: &Path, rels: impl IntoIterator<Item = &'a str>) -> Result<()> {
    for rel in rels {
        let abs = workdir.join(rel);
        let folder = abs.parent().unwrap_or(workdir);
        ws.resolve_with(&folder.to_string_lossy(), || {
            ToolError::new(
                ErrorCode::OutsideWorkspace,
                format!(
                    "{rel} leads outside the workspace (through a symlinked folder); nothing was changed"
                ),
            )
            .with_prop("path", rel)
        })?;
    }
    Ok(())
}

/// Before a checkout (`what`: "switching to x", "the pull") writes `paths` of the work tree:
/// `OUTSIDE_WORKSPACE` for those outside the workspace's folder, or reached through a
/// symlinked folder that leads outside.
pub fn check_checkout(
    ws: &Workspace,
    scope: &Scope,
    workdir: &Path,
    what: &str,
    paths: &std::collections::HashSet<String>,
) -> Result<()> {
    refuse_outside(what, &scope.outside(paths.iter().map(String::as_bytes)))?;
    check_writes(ws, workdir, paths.iter().map(String::as_str))
}

/// Whether executable `path` is inside the workspace (symlinks resolved).
pub fn inside(ws: &Workspace, path: &Path) -> bool {
    match (realpath(ws.root()), realpath(path)) {
        (Ok(root), Ok(p)) => p.starts_with(root),
        _ => false,
    }
}
