//! The `git` family: repository tools on libgit2 (the `git2` crate, vendored, no network
//! transports compiled in). No tool ever starts a `git` process; the git CLI is only the tests'
//! oracle. Every path goes through the workspace resolver, and the workspace bounds what a
//! repository's work tree may expose ([`boundary`]); repository work runs on the blocking pool.

pub mod blame;
pub mod boundary;
pub mod common;
pub mod git_blame;
pub mod git_branch;
pub mod git_checkpoint;
pub mod git_commit;
pub mod git_diff;
pub mod git_list_checkpoints;
pub mod git_log;
pub mod git_pull;
pub mod git_push;
pub mod git_restore_checkpoint;
pub mod git_show;
pub mod git_stage;
pub mod git_status;
pub mod git_unstage;
pub mod handles;
pub mod history;
pub mod is_protected_branch;
pub mod lock;
mod log_numstat;
pub mod memo;
pub mod refname;
pub mod ssh;
#[cfg(target_os = "linux")]
mod status_scan;
pub mod transport;
mod xdiff;

use std::path::Path;

use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::spec::Family;
use crate::workspace::Workspace;

/// The family.
pub const FAMILY: Family = Family {
    name: "git",
    tools: &[
        git_status::TOOL,
        git_diff::TOOL,
        git_log::TOOL,
        git_show::TOOL,
        git_blame::TOOL,
        git_stage::TOOL,
        git_unstage::TOOL,
        git_commit::TOOL,
        git_branch::TOOL,
        is_protected_branch::TOOL,
        git_checkpoint::TOOL,
        git_restore_checkpoint::TOOL,
        git_list_checkpoints::TOOL,
        git_push::TOOL,
        git_pull::TOOL,
    ],
    contract: None,
    contract_docs: &[],
    // Stack's `repo_path` is on each tool but git_commit, which tells Stack's calls by it.
    aliases: &[("repoPath", "path"), ("repo", "path"), ("cwd", "path")],
    partial_on_cancel: false,
};

/// The cores this process may use (at least 1), asked once: `available_parallelism` reads the
/// cgroup's quota files on every call, which cost a small `git_log` about 1% of its time.
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The repository containing workspace path `path` (default: the workspace root), resolved
/// through the workspace; `NOT_A_REPOSITORY` when there is none.
pub(crate) fn locate(ctx: &Ctx, path: Option<&str>) -> Result<std::path::PathBuf> {
    let p = path.filter(|p| !p.is_empty()).unwrap_or(".");
    let r = ctx.workspace.resolve(p)?;
    Ok(r.real)
}

/// Open the repository that contains `dir` (searching upwards, as git does), with the scope the
/// workspace `ws` leaves it (`OUTSIDE_WORKSPACE` for a work tree elsewhere).
pub(crate) fn open(ws: &Workspace, dir: &Path) -> Result<(git2::Repository, boundary::Scope)> {
    let repo = discover(dir)?;
    let scope = boundary::Scope::of(ws, &repo)?;
    Ok((repo, scope))
}

fn discover(dir: &Path) -> Result<git2::Repository> {
    // libgit2 re-hashes every object it reads by default (with the slower collision-detecting
    // SHA-1); git does not, and reads dominate log and blame. Objects written are still hashed.
    static SETUP: std::sync::Once = std::sync::Once::new();
    SETUP.call_once(|| {
        git2::opts::strict_hash_verification(false);
        // Trees of any size stay in a repository's object cache (libgit2 keeps only those
        // under 4 KiB by default): log and blame look the same trees up commit after commit.
        // SAFETY: a process-wide setting made once, before any repository of ours is opened.
        let _ = unsafe { git2::opts::set_cache_object_limit(git2::ObjectType::Tree, 1 << 20) };
    });
    git2::Repository::discover(dir).map_err(|e| {
        unsupported(&e).unwrap_or_else(|| {
            ToolError::new(
                ErrorCode::NotARepository,
                format!(
                    "{} is not inside a git repository ({}); pass path: a folder of a repository",
                    dir.display(),
                    e.message()
                ),
            )
        })
    })
}

/// A libgit2 error as a tool error (`LOCKED` for a held lock, else `code`).
pub(crate) fn err(e: &git2::Error, code: ErrorCode, what: &str) -> ToolError {
    if e.code() == git2::ErrorCode::Locked {
        return ToolError::new(
            ErrorCode::Locked,
            format!("{what}: the repository is locked ({})", e.message()),
        );
    }
    if let Some(u) = unsupported(e) {
        return u;
    }
    ToolError::new(code, format!("{what}: {}", e.message()))
}

/// `UNSUPPORTED_REPOSITORY` when libgit2 refused the repository's format rather than failed
/// on it: git itself reads these repositories, so the message says what the repository uses
/// and, where git offers one, the command that turns it into a form libgit2 reads.
fn unsupported(e: &git2::Error) -> Option<ToolError> {
    let m = e.message();
    let what = if let Some(ext) = m.strip_prefix("unsupported mandatory extension: ") {
        match ext.trim_matches('\'') {
            "link" => "its index is split (`core.splitIndex`), which libgit2 cannot read; \
                       `git update-index --no-split-index` and `git config core.splitIndex false` \
                       make it whole again"
                .to_owned(),
            "sdir" => "its index is a sparse index (`index.sparse`), which libgit2 cannot read; \
                       `git sparse-checkout init --no-sparse-index` makes it a full index \
                       (the sparse checkout stays)"
                .to_owned(),
            other => format!("its index has the required extension {other:?}, which libgit2 does not know"),
        }
    } else if let Some(ext) = m.strip_prefix("unsupported extension name ") {
        if ext.eq_ignore_ascii_case("extensions.refstorage") {
            "it keeps its refs in the reftable format (`extensions.refStorage`), which libgit2 \
             cannot read; `git refs migrate --ref-format=files` (git 2.48 or newer) converts it"
                .to_owned()
        } else {
            format!("it needs the repository extension {ext}, which libgit2 does not support")
        }
    } else if let Some(format) = m.strip_prefix("unknown object format ") {
        format!(
            "its objects are named with {format} (`extensions.objectFormat`), which this \
             build's libgit2 cannot read; git has no conversion"
        )
    } else {
        return None;
    };
    Some(ToolError::new(
        ErrorCode::UnsupportedRepository,
        format!("the git tools cannot work on this repository: {what}. Use the git CLI for it"),
    ))
}

/// The repository state as a stable string.
pub(crate) fn state_name(s: git2::RepositoryState) -> &'static str {
    use git2::RepositoryState as S;
    match s {
        S::Clean => "clean",
        S::Merge => "merge",
        S::Revert | S::RevertSequence => "revert",
        S::CherryPick | S::CherryPickSequence => "cherry-pick",
        S::Bisect => "bisect",
        S::Rebase | S::RebaseInteractive | S::RebaseMerge => "rebase",
        S::ApplyMailbox | S::ApplyMailboxOrRebase => "am",
    }
}
