//! `git_status`: the working tree status (Stack and Floyd `git_status`), read with libgit2.
//!
//! Each entry carries `index` and `worktree` letters as `git status --porcelain=v2` prints
//! them (`.` unchanged, `M`, `A`, `D`, `R`, `T`; `?` untracked, `U` conflicted), the rename
//! source as `origPath`, and `conflicted`. Untracked files are listed one by one (as with
//! `--untracked-files=all`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result};
use crate::output::ToolOutput;

const NAME: &str = "git_status";

/// The arguments of `git_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// Also count ignored files (default false).
    pub include_ignored: Option<Flag>,
}

fn letters(s: git2::Status) -> (char, char) {
    use git2::Status as S;
    if s.contains(S::CONFLICTED) {
        return ('U', 'U');
    }
    if s.contains(S::WT_NEW) {
        return ('?', '?');
    }
    let x = if s.contains(S::INDEX_NEW) {
        'A'
    } else if s.contains(S::INDEX_MODIFIED) {
        'M'
    } else if s.contains(S::INDEX_DELETED) {
        'D'
    } else if s.contains(S::INDEX_RENAMED) {
        'R'
    } else if s.contains(S::INDEX_TYPECHANGE) {
        'T'
    } else {
        '.'
    };
    let y = if s.contains(S::WT_MODIFIED) {
        'M'
    } else if s.contains(S::WT_DELETED) {
        'D'
    } else if s.contains(S::WT_RENAMED) {
        'R'
    } else if s.contains(S::WT_TYPECHANGE) {
        'T'
    } else {
        '.'
    };
    (x, y)
}

/// The index's extended flag for `git add -N` (git's index format).
const INTENT_TO_ADD: u16 = 0x2000;

/// Whether `path` is an intent-to-add entry of `index`.
fn intent_to_add(index: Option<&git2::Index>, path: &str) -> bool {
    index
        .and_then(|i| i.get_path(std::path::Path::new(path), 0))
        .is_some_and(|e| e.flags_extended & INTENT_TO_ADD != 0)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One entry of a status, as libgit2's `git_status_entry` gives it: the path (the index's, or
/// HEAD's for a HEAD-vs-index change), the head-to-index paths (old, new) when there is such a
/// change, and the flags.
pub(super) struct Item {
    pub(super) path: Vec<u8>,
    pub(super) head_to_index: Option<(Vec<u8>, Vec<u8>)>,
    pub(super) status: git2::Status,
}

/// The status options of every call: untracked files one by one, renames HEAD to index.
pub(super) fn status_options(ignored: bool) -> git2::StatusOptions {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(ignored)
        .recurse_ignored_dirs(false)
        .renames_head_to_index(true)
        .include_unmodified(false);
    opts
}

/// The status computed by our own scan when it applies (see `status_scan.rs`).
#[cfg(target_os = "linux")]
fn fast_items(repo: &git2::Repository, scope: &super::boundary::Scope, ignored: bool) -> Option<Vec<Item>> {
    if ignored || !scope.limit(Vec::new()).is_empty() {
        return None;
    }
    super::status_scan::items(repo)
}

#[cfg(not(target_os = "linux"))]
fn fast_items(_: &git2::Repository, _: &super::boundary::Scope, _: bool) -> Option<Vec<Item>> {
    None
}

/// The status as libgit2's `statuses()` gives it (the fallback of the scan).
pub(super) fn libgit2_items(
    repo: &git2::Repository,
    scope: &super::boundary::Scope,
    ignored: bool,
) -> Result<Vec<Item>> {
    let mut opts = status_options(ignored);
    for s in scope.limit(Vec::new()) {
        opts.pathspec(s);
    }
    let statuses =
        repo.statuses(Some(&mut opts)).map_err(|e| super::err(&e, ErrorCode::Internal, "status"))?;
    Ok(statuses
        .iter()
        .map(|e| Item {
            path: e.path_bytes().to_vec(),
            head_to_index: e.head_to_index().map(|d| {
                (
                    d.old_file().path_bytes().unwrap_or_default().to_vec(),
                    d.new_file().path_bytes().unwrap_or_default().to_vec(),
                )
            }),
            status: e.status(),
        })
        .collect())
}

/// The status of the repository at `dir`: the workspace's paths only.
pub(crate) fn status(
    ws: &crate::workspace::Workspace,
    dir: &std::path::Path,
    ignored: bool,
) -> Result<Value> {
    status_by(ws, dir, ignored, Scan::WhenLarge).map(|(v, _)| v)
}

/// When [`status_by`] tries the scan of our own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Scan {
    /// Never: libgit2's `statuses()`.
    Never,
    /// Whenever it applies (the tests that compare both ways).
    Always,
    /// When it applies and the index file is at least [`SCAN_FROM_INDEX_BYTES`] long: on a small
    /// repository libgit2 alone is quicker than starting the scan's threads (40 files: 0.62 ms
    /// against 1.06 ms), on a large one the scan is (50,000 files: 44 ms against 136 ms).
    WhenLarge,
}

/// The index size from which [`Scan::WhenLarge`] scans: about 1,300 entries (~100 bytes each).
const SCAN_FROM_INDEX_BYTES: u64 = 128 * 1024;

/// `git_status`'s data for the repository whose work tree is the workspace `cwd`, by the scan
/// of our own when `scan` and it applies, else by libgit2's `statuses()`; and whether the scan
/// gave it. For the tests that run both ways on the same repository.
#[doc(hidden)]
pub fn status_both_ways(cwd: &str, scan: bool) -> Result<(Value, bool)> {
    let ws = crate::workspace::Workspace::new(cwd)?;
    status_by(&ws, std::path::Path::new(cwd), false, if scan { Scan::Always } else { Scan::Never })
}

/// [`status`], by our own scan as `scan` says and when it applies, else by libgit2's `statuses()`; also
/// says whether the scan gave it.
pub(super) fn status_by(
    ws: &crate::workspace::Workspace,
    dir: &std::path::Path,
    ignored: bool,
    scan: Scan,
) -> Result<(Value, bool)> {
    let (repo, scope) = super::common::checkout_read(ws, dir)?;
    let large =
        || std::fs::metadata(repo.path().join("index")).is_ok_and(|m| m.len() >= SCAN_FROM_INDEX_BYTES);
    let fast = scan == Scan::Always || (scan == Scan::WhenLarge && large());
    let scanned = if fast { fast_items(&repo, &scope, ignored) } else { None };
    let by_scan = scanned.is_some();
    let items = match scanned {
        Some(items) => items,
        None => libgit2_items(&repo, &scope, ignored)?,
    };
    // Only read for paths added to the index (to tell intent-to-add entries).
    let index = if items.iter().any(|e| e.status.contains(git2::Status::INDEX_NEW)) {
        repo.index().ok()
    } else {
        None
    };
    let mut entries = Vec::new();
    let (mut untracked, mut ignored_n, mut conflicts, mut staged, mut unstaged) = (0, 0, 0, 0, 0);
    for e in &items {
        let renamed_from = e.head_to_index.as_ref().map(|(old, _)| old);
        if !scope.contains(&e.path) || renamed_from.is_some_and(|p| !scope.contains(p)) {
            continue;
        }
        let s = e.status;
        if s.contains(git2::Status::IGNORED) {
            ignored_n += 1;
            continue;
        }
        let conflicted = s.contains(git2::Status::CONFLICTED);
        let (path, orig) = match &e.head_to_index {
            Some((old, new)) if s.contains(git2::Status::INDEX_RENAMED) => {
                (Some(lossy(new)), Some(lossy(old)))
            }
            _ => (Some(lossy(&e.path)), None),
        };
        let shown = if s.contains(git2::Status::INDEX_DELETED) && s.contains(git2::Status::WT_NEW) {
            // Deleted in the index, still in the tree: git lists the path twice (`D.` and `??`);
            // libgit2 gives one entry.
            vec![('D', '.'), ('?', '?')]
        } else if !conflicted
            && s.contains(git2::Status::INDEX_NEW)
            && intent_to_add(index.as_ref(), path.as_deref().unwrap_or_default())
        {
            // An intent-to-add entry (`git add -N`) is not staged yet: git shows `.A` (`.D` once
            // the file is gone); libgit2 reports it as added to the index.
            let y = if s.contains(git2::Status::WT_DELETED) { 'D' } else { 'A' };
            vec![('.', y)]
        } else {
            vec![letters(s)]
        };
        for (x, y) in shown {
            if conflicted {
                conflicts += 1;
            } else if x == '?' {
                untracked += 1;
            } else {
                if x != '.' {
                    staged += 1;
                }
                if y != '.' {
                    unstaged += 1;
                }
            }
            entries.push(json!({
                "path": path,
                "origPath": orig,
                "index": x.to_string(),
                "worktree": y.to_string(),
                "staged": x != '.' && x != '?' && !conflicted,
                "unstaged": y != '.' && y != '?' && !conflicted,
                "untracked": x == '?',
                "conflicted": conflicted,
            }));
        }
    }
    let head = repo.head().ok();
    let unborn = head.is_none();
    let detached = repo.head_detached().unwrap_or(false);
    let branch = if detached {
        None
    } else if let Some(h) = &head {
        h.shorthand().ok().map(str::to_owned)
    } else {
        // Unborn: HEAD names the branch to be.
        repo.find_reference("HEAD").ok().and_then(|r| {
            r.symbolic_target_bytes().map(|t| lossy(t).trim_start_matches("refs/heads/").to_owned())
        })
    };
    let oid = head.as_ref().and_then(git2::Reference::target);
    let (mut upstream, mut ahead, mut behind) = (None, None, None);
    if let (Some(b), Some(local)) = (&branch, oid)
        && let Ok(br) = repo.find_branch(b, git2::BranchType::Local)
        && let Ok(up) = br.upstream()
    {
        upstream = up.name().ok().flatten().map(str::to_owned);
        if let Some(remote) = up.get().target()
            && let Ok((a, bh)) = repo.graph_ahead_behind(local, remote)
        {
            ahead = Some(a);
            behind = Some(bh);
        }
    }
    let workdir = repo.workdir().map(|w| w.display().to_string());
    let data = json!({
        "root": workdir,
        "branch": branch,
        "head": oid.map(|o| o.to_string()),
        "detached": detached,
        "unborn": unborn,
        "upstream": upstream,
        "ahead": ahead,
        "behind": behind,
        "state": super::state_name(repo.state()),
        "entries": entries,
        "clean": entries.is_empty(),
        "counts": {"staged": staged, "unstaged": unstaged, "untracked": untracked, "conflicted": conflicts, "ignored": if ignored { Some(ignored_n) } else { None }},
    });
    Ok((data, by_scan))
}

fn render(d: &Value) -> String {
    let mut out = String::from("## ");
    let branch = d["branch"].as_str();
    if d["unborn"].as_bool() == Some(true) {
        out.push_str(&format!("No commits yet on {}", branch.unwrap_or("HEAD")));
    } else if let Some(b) = branch {
        out.push_str(b);
    } else {
        out.push_str("HEAD (no branch)");
    }
    if let Some(u) = d["upstream"].as_str() {
        out.push_str(&format!("...{u}"));
        let (a, b) = (d["ahead"].as_u64().unwrap_or(0), d["behind"].as_u64().unwrap_or(0));
        match (a, b) {
            (0, 0) => {}
            (a, 0) => out.push_str(&format!(" [ahead {a}]")),
            (0, b) => out.push_str(&format!(" [behind {b}]")),
            (a, b) => out.push_str(&format!(" [ahead {a}, behind {b}]")),
        }
    }
    if let Some(s) = d["state"].as_str().filter(|s| *s != "clean") {
        out.push_str(&format!(" ({s} in progress)"));
    }
    out.push('\n');
    for e in d["entries"].as_array().into_iter().flatten() {
        let x = e["index"].as_str().unwrap_or(" ").replace('.', " ");
        let y = e["worktree"].as_str().unwrap_or(" ").replace('.', " ");
        let p = e["path"].as_str().unwrap_or_default();
        match e["origPath"].as_str() {
            Some(o) => out.push_str(&format!("{x}{y} {o} -> {p}\n")),
            None => out.push_str(&format!("{x}{y} {p}\n")),
        }
    }
    if d["clean"].as_bool() == Some(true) {
        out.push_str("nothing to commit, working tree clean\n");
    }
    out
}

/// Run `git_status`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let ignored = Flag::on(a.include_ignored);
    let ws = ctx.workspace.clone();
    let data = crate::blocking(NAME, move || status(&ws, &dir, ignored)).await?;
    Ok(ToolOutput::new(render(&data), data))
}

/// The `git_status` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitStatus",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[("repo_path", "path"), ("include_ignored", "includeIgnored"), ("ignored", "includeIgnored")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_status.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
