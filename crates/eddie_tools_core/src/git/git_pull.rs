//! `git_pull` with libgit2, from remotes that are repositories on this machine (a path or a
//! `file://` URL) and from `http://`/`https://` remotes (smart HTTP, through our own transport,
//! [`super::transport`]: the one network guard, credentials as git finds them),
//! and from ssh remotes ([`super::ssh`], on the same guard). Other schemes are refused with
//! `UNSUPPORTED_SCHEME`.
//!
//! Everything is decided before asking. A local remote is opened read-only and its objects
//! are made visible to an in-memory view of the local object database; an http(s) remote's
//! refs are listed, and the branch's objects are downloaded into the object database (no ref
//! moves). So the fast-forward check, the merge (in memory) and the files it would touch are
//! known first. A pull fast-forwards, or merges only when the merge is clean (otherwise
//! `MERGE_CONFLICT` naming the paths, with the repository unchanged).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::transport::{REMOTE_ALIASES, Target, local_branch, open_remote, remote_target, upstream};
use super::{boundary, common, lock, refname};
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The arguments of `git_pull`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The remote (default: the current branch's upstream remote, else origin).
    pub remote: Option<String>,
    /// The remote branch to pull (default: the upstream branch, else the current branch's name).
    pub branch: Option<String>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

enum PullKind {
    FastForward,
    Merge,
}

struct PullPlan {
    dir: PathBuf,
    remote: String,
    url: Target,
    branch: String,
    remote_branch: String,
    theirs: git2::Oid,
    kind: PullKind,
    commits: usize,
    files: Vec<String>,
}

/// Paths that differ between `from` and `to` and have local changes. Every path that differs
/// (what the pull writes) must be inside the workspace first (`OUTSIDE_WORKSPACE`).
fn dirty_overlap(
    ctx: &Ctx,
    repo: &git2::Repository,
    scope: &boundary::Scope,
    from: Option<&git2::Tree<'_>>,
    to: &git2::Tree<'_>,
) -> Result<Vec<String>> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "pull");
    let changing = common::changed_paths(repo, from, to)?;
    boundary::check_checkout(&ctx.workspace, scope, &common::workdir(repo)?, "the pull", &changing)?;
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let st = repo.statuses(Some(&mut opts)).map_err(fail)?;
    let mut v: Vec<String> =
        st.iter().map(|e| lossy(e.path_bytes())).filter(|p| changing.contains(p)).collect();
    v.sort();
    Ok(v)
}

fn pull_plan(ctx: &Ctx, dir: &Path, a: &Args) -> Result<Option<PullPlan>> {
    let (repo, scope) = common::checkout(&ctx.workspace, dir)?;
    let root = common::workdir(&repo)?;
    let cfg = common::config(&repo, ctx)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "pull");
    common::check_index_lock(&repo)?;
    if repo.state() != git2::RepositoryState::Clean {
        return Err(ToolError::new(
            ErrorCode::DirtyWorktree,
            format!("a {} is in progress; finish it first", super::state_name(repo.state())),
        ));
    }
    let branch = local_branch(&repo, None)?;
    let (up_remote, up_branch) = upstream(&cfg, &branch);
    let remote = a
        .remote
        .clone()
        .filter(|r| !r.is_empty())
        .or_else(|| up_remote.clone())
        .unwrap_or_else(|| "origin".into());
    let remote_branch = a
        .branch
        .clone()
        .filter(|b| !b.is_empty())
        .or_else(|| if up_remote.as_deref() == Some(remote.as_str()) { up_branch.clone() } else { None })
        .unwrap_or_else(|| branch.clone());
    refname::check_branch(&remote_branch, None)?;
    let url = remote_target(&repo, &root, &remote)?;
    let no_branch = || {
        ToolError::new(ErrorCode::RefNotFound, format!("{remote} has no branch {remote_branch:?}"))
            .with_prop("ref", remote_branch.as_str())
    };
    let theirs = match &url {
        Target::Local(path) => {
            let there = open_remote(path, &remote)?;
            let theirs = there
                .find_reference(&format!("refs/heads/{remote_branch}"))
                .ok()
                .and_then(|r| r.target())
                .ok_or_else(no_branch)?;
            // The remote's objects, visible to this in-memory view only (nothing is written).
            let odb = repo.odb().map_err(fail)?;
            let objects = there.path().join("objects");
            odb.add_disk_alternate(&objects.to_string_lossy()).map_err(fail)?;
            theirs
        }
        Target::Http(u) => {
            // The branch's objects into the object database (no ref moves), so that the
            // plan below sees them.
            let mut r =
                repo.remote_anonymous(u).map_err(|e| super::err(&e, ErrorCode::InvalidUrl, &remote))?;
            let want = format!("refs/heads/{remote_branch}");
            let found = super::transport::with_op(ctx, &repo, &cfg, "fetch", || {
                let refs = super::transport::list(&mut r, git2::Direction::Fetch)?;
                let Some(id) = refs.into_iter().find(|(n, _)| *n == want).map(|(_, id)| id) else {
                    return Ok(None);
                };
                r.download(&[want.as_str()], None)?;
                r.disconnect()?;
                Ok(Some(id))
            })?;
            found.ok_or_else(no_branch)?
        }
    };
    let head = common::head_commit(&repo)?;
    let theirs_c = repo.find_commit(theirs).map_err(fail)?;
    let their_tree = theirs_c.tree().map_err(fail)?;
    let Some(head) = head else {
        let files = dirty_overlap(ctx, &repo, &scope, None, &their_tree)?;
        if !files.is_empty() {
            return Err(dirty(&files));
        }
        return Ok(Some(PullPlan {
            dir: dir.to_path_buf(),
            remote,
            url,
            branch,
            remote_branch,
            theirs,
            kind: PullKind::FastForward,
            commits: 0,
            files: Vec::new(),
        }));
    };
    if head.id() == theirs || repo.graph_descendant_of(head.id(), theirs).unwrap_or(false) {
        return Ok(None);
    }
    let head_tree = head.tree().map_err(fail)?;
    let (behind_ahead, _) = repo.graph_ahead_behind(theirs, head.id()).map_err(fail)?;
    if repo.graph_descendant_of(theirs, head.id()).unwrap_or(false) {
        let files = dirty_overlap(ctx, &repo, &scope, Some(&head_tree), &their_tree)?;
        if !files.is_empty() {
            return Err(dirty(&files));
        }
        return Ok(Some(PullPlan {
            dir: dir.to_path_buf(),
            remote,
            url,
            branch,
            remote_branch,
            theirs,
            kind: PullKind::FastForward,
            commits: behind_ahead,
            files: Vec::new(),
        }));
    }
    let index = repo.merge_commits(&head, &theirs_c, None).map_err(fail)?;
    if index.has_conflicts() {
        let mut paths: Vec<String> = index
            .conflicts()
            .map_err(fail)?
            .filter_map(|c| c.ok())
            .filter_map(|c| c.our.or(c.their).or(c.ancestor).map(|e| lossy(&e.path)))
            .collect();
        paths.sort();
        paths.dedup();
        return Err(ToolError::new(
            ErrorCode::MergeConflict,
            format!(
                "pulling {remote}/{remote_branch} into {branch} needs a merge that conflicts in: {}; nothing was changed (merge by hand, or rebase your commits)",
                paths.join(", ")
            ),
        )
        .with_prop("files", paths));
    }
    // A merge commit needs an identity: fail now rather than after fetching.
    common::signature(&cfg, ctx, "AUTHOR")?;
    drop(index);
    // The merge brings what changed on their side since the merge base.
    let base = repo.merge_base(head.id(), theirs).map_err(fail)?;
    let base_tree = repo.find_commit(base).and_then(|c| c.tree()).map_err(fail)?;
    let files = dirty_overlap(ctx, &repo, &scope, Some(&base_tree), &their_tree)?;
    if !files.is_empty() {
        return Err(dirty(&files));
    }
    Ok(Some(PullPlan {
        dir: dir.to_path_buf(),
        remote,
        url,
        branch,
        remote_branch,
        theirs,
        kind: PullKind::Merge,
        commits: behind_ahead,
        files: Vec::new(),
    }))
}

fn dirty(files: &[String]) -> ToolError {
    ToolError::new(
        ErrorCode::DirtyWorktree,
        format!(
            "the pull would overwrite local changes to: {}; commit, stash or checkpoint them first",
            files.join(", ")
        ),
    )
    .with_prop("files", files.to_vec())
}

fn pull_apply(ctx: &Ctx, p: &PullPlan) -> Result<Value> {
    let (repo, scope) = common::checkout(&ctx.workspace, &p.dir)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "pull");
    let tracking = format!("refs/remotes/{}/{}", p.remote, p.remote_branch);
    if let Target::Local(path) = &p.url {
        let mut remote = repo.remote_anonymous(&path.to_string_lossy()).map_err(fail)?;
        let spec = format!("+refs/heads/{}:{tracking}", p.remote_branch);
        remote.fetch(&[spec.as_str()], None, None).map_err(fail)?;
    }
    // An http(s) remote's objects were downloaded by the plan.
    // The fetched objects; the tracking ref may not be written by an anonymous remote.
    repo.reference(&tracking, p.theirs, true, "pull: fetch").map_err(fail)?;
    let theirs = repo.find_commit(p.theirs).map_err(fail)?;
    let branch_ref = format!("refs/heads/{}", p.branch);
    let mut cb = git2::build::CheckoutBuilder::new();
    cb.safe();
    if let Some(prefix) = scope.prefix() {
        cb.path(prefix).disable_pathspec_match(true);
    }
    match p.kind {
        PullKind::FastForward => {
            repo.checkout_tree(theirs.as_object(), Some(&mut cb)).map_err(fail)?;
            repo.reference(
                &branch_ref,
                p.theirs,
                true,
                &format!("pull: fast-forward to {}", &p.theirs.to_string()[..7]),
            )
            .map_err(fail)?;
            Ok(json!({"kind": "fast-forward", "head": p.theirs.to_string()}))
        }
        PullKind::Merge => {
            let head =
                common::head_commit(&repo)?.ok_or_else(|| ToolError::internal("no HEAD to merge into"))?;
            let mut index = repo.merge_commits(&head, &theirs, None).map_err(fail)?;
            if index.has_conflicts() {
                return Err(ToolError::new(
                    ErrorCode::MergeConflict,
                    "the merge conflicts; nothing was changed",
                ));
            }
            let tree_id = index.write_tree_to(&repo).map_err(fail)?;
            let tree = repo.find_tree(tree_id).map_err(fail)?;
            let cfg = common::config(&repo, ctx)?;
            let author = common::signature(&cfg, ctx, "AUTHOR")?;
            let committer = common::signature(&cfg, ctx, "COMMITTER").unwrap_or_else(|_| author.clone());
            let msg = format!("Merge branch '{}' of {} into {}\n", p.remote_branch, p.remote, p.branch);
            let id = repo.commit(None, &author, &committer, &msg, &tree, &[&head, &theirs]).map_err(fail)?;
            repo.checkout_tree(tree.as_object(), Some(&mut cb)).map_err(fail)?;
            repo.reference(&branch_ref, id, true, "pull: merge").map_err(fail)?;
            Ok(json!({"kind": "merge", "head": id.to_string()}))
        }
    }
}

/// Run `git_pull`.
pub async fn run_pull(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let guard = lock::repo_lock(ctx, &dir).await?;
    let (c, d) = (ctx.clone(), dir.clone());
    let p = crate::blocking("git_pull", move || pull_plan(&c, &d, &a)).await?;
    drop(guard);
    let Some(p) = p else {
        return Ok(ToolOutput::new(
            "Already up to date.\n",
            json!({"pulled": false, "status": "up-to-date", "commits": 0}),
        ));
    };
    let how = match p.kind {
        PullKind::FastForward => "fast-forward",
        PullKind::Merge => "a clean merge commit",
    };
    let what = format!(
        "Pull {}/{} into {}: {how} ({} new commit{})",
        p.remote,
        p.remote_branch,
        p.branch,
        p.commits,
        if p.commits == 1 { "" } else { "s" }
    );
    let base = json!({"remote": p.remote, "branch": p.branch, "remoteBranch": p.remote_branch, "commits": p.commits, "files": p.files});
    if !ctx.confirm_all(vec![Prompt::action(what.clone())]).await? {
        let mut d = base;
        d["pulled"] = json!(false);
        d["status"] = json!("declined");
        return Ok(ToolOutput::new("Pull declined; nothing changed.\n", d));
    }
    let _guard = lock::repo_lock(ctx, &dir).await?;
    let c = ctx.clone();
    let r = crate::blocking("git_pull", move || pull_apply(&c, &p)).await?;
    let mut d = base;
    d["pulled"] = json!(true);
    d["status"] = json!("pulled");
    d["kind"] = r["kind"].clone();
    d["head"] = r["head"].clone();
    Ok(ToolOutput::new(format!("Done: {what}.\n"), d))
}

/// The `git_pull` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_pull",
    js_name: "gitPull",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: REMOTE_ALIASES,
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_pull.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move { run_pull(crate::call::args::parse("git_pull", args)?, ctx).await })
    },
};
