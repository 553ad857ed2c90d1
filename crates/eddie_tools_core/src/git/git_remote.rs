//! `git_push` / `git_pull` with libgit2, for remotes that are repositories on this machine
//! (a path or a `file://` URL) and for `http://`/`https://` remotes (smart HTTP, through our
//! own transport, [`super::transport`]: the one network guard, credentials as git finds them)
//! and ssh remotes (through [`super::ssh`], on the same guard). Other schemes are refused with
//! `UNSUPPORTED_SCHEME`.
//!
//! Everything is decided before asking. A local remote is opened read-only and its objects
//! are made visible to an in-memory view of the local object database; an http(s) remote's
//! refs are listed, and for a pull the branch's objects are downloaded into the object
//! database (no ref moves). So the fast-forward check, the merge (in memory) and the files it
//! would touch are known first.
//! A pull fast-forwards, or merges only when the merge is clean (otherwise `MERGE_CONFLICT`
//! naming the paths, with the repository unchanged). A push that is not a fast-forward is
//! refused (`NON_FAST_FORWARD`) unless `force`, and a force push to a protected branch is
//! always refused.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{boundary, common, lock, refname};
use crate::call::args::lenient::Flag;
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id` of `git_push`.
pub const PUSH_SCHEMA: &str = "eddie.tool.git_push.result.v1";
/// The outputSchema `$id` of `git_pull`.
pub const PULL_SCHEMA: &str = "eddie.tool.git_pull.result.v1";

/// The arguments of `git_push`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PushArgs {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The remote (default: the branch's upstream remote, else origin).
    pub remote: Option<String>,
    /// The local branch to push (default: the current branch).
    pub branch: Option<String>,
    /// Replace the remote branch even when the push is not a fast-forward (never to a protected branch).
    pub force: Option<Flag>,
}

/// The arguments of `git_pull`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullArgs {
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

/// Where a remote is.
#[derive(Debug, Clone)]
enum Target {
    /// A repository on this machine.
    Local(PathBuf),
    /// A network remote: an `http://` or `https://` URL, or an ssh one.
    Http(String),
}

impl Target {
    fn url(&self) -> String {
        match self {
            Target::Local(p) => p.to_string_lossy().into_owned(),
            Target::Http(u) => u.clone(),
        }
    }
}

/// Where a remote is (`UNSUPPORTED_SCHEME` for schemes other than http(s) and ssh).
fn remote_target(repo: &git2::Repository, root: &Path, name: &str) -> Result<Target> {
    let r = repo.find_remote(name).map_err(|_| {
        ToolError::new(ErrorCode::RefNotFound, format!("no remote named {name:?}; git remote -v lists them"))
            .with_prop("remote", name)
    })?;
    let url = r.url_bytes();
    let url = lossy(url);
    if super::transport::is_http(&url) || super::ssh::is_ssh(&url) {
        return Ok(Target::Http(url));
    }
    let path = if let Some(p) = url.strip_prefix("file://") {
        PathBuf::from(p)
    } else if url.contains("://") || (url.contains(':') && !url.starts_with('/') && !url.starts_with('.')) {
        return Err(ToolError::new(
            ErrorCode::UnsupportedScheme,
            format!(
                "remote {name} is {url}: only http(s), ssh and remotes on this machine (a path or file://) are supported"
            ),
        ));
    } else if Path::new(&url).is_absolute() {
        PathBuf::from(&url)
    } else {
        root.join(&url)
    };
    Ok(Target::Local(path))
}

/// The id of `refs/heads/{branch}` on the remote (`None`: no such branch). An http(s) remote
/// is asked (its refs listed for `dir`); a local one is opened read-only.
fn remote_head(
    ctx: &Ctx,
    repo: &git2::Repository,
    target: &Target,
    name: &str,
    branch: &str,
    dir: git2::Direction,
) -> Result<Option<git2::Oid>> {
    let want = format!("refs/heads/{branch}");
    match target {
        Target::Local(p) => {
            let there = open_remote(p, name)?;
            Ok(there.find_reference(&want).ok().and_then(|r| r.target()))
        }
        Target::Http(u) => {
            let cfg = common::config(repo, ctx)?;
            let mut remote =
                repo.remote_anonymous(u).map_err(|e| super::err(&e, ErrorCode::InvalidUrl, name))?;
            let refs = super::transport::with_op(ctx, repo, &cfg, &format!("listing {name}"), || {
                super::transport::list(&mut remote, dir)
            })?;
            Ok(refs.into_iter().find(|(r, _)| *r == want).map(|(_, id)| id))
        }
    }
}

fn open_remote(path: &Path, name: &str) -> Result<git2::Repository> {
    git2::Repository::open(path).map_err(|e| {
        ToolError::new(
            ErrorCode::RefNotFound,
            format!("remote {name} ({}) is not a git repository: {}", path.display(), e.message()),
        )
    })
}

/// The local branch to act on: `branch`, else the current one.
fn local_branch(repo: &git2::Repository, branch: Option<String>) -> Result<String> {
    match branch.filter(|b| !b.is_empty()) {
        Some(b) => Ok(b.strip_prefix("refs/heads/").unwrap_or(&b).to_owned()),
        None => common::current_branch(repo).ok_or_else(|| {
            ToolError::new(
                ErrorCode::RefNotFound,
                "HEAD is detached: pass branch: the branch to push or pull",
            )
        }),
    }
}

/// (remote name, remote branch) from the branch's upstream config, else (`origin`, same name).
fn upstream(cfg: &git2::Config, branch: &str) -> (Option<String>, Option<String>) {
    let remote = cfg.get_string(&format!("branch.{branch}.remote")).ok();
    let merge = cfg
        .get_string(&format!("branch.{branch}.merge"))
        .ok()
        .map(|m| m.strip_prefix("refs/heads/").unwrap_or(&m).to_owned());
    (remote, merge)
}

struct PushPlan {
    dir: PathBuf,
    remote: String,
    url: Target,
    branch: String,
    remote_branch: String,
    local: git2::Oid,
    force: bool,
    commits: usize,
    protection: Option<String>,
    new_branch: bool,
}

fn push_plan(ctx: &Ctx, dir: &Path, a: &PushArgs) -> Result<Option<PushPlan>> {
    let (repo, _) = common::checkout(&ctx.workspace, dir)?;
    let root = common::workdir(&repo)?;
    let cfg = common::config(&repo, ctx)?;
    let branch = local_branch(&repo, a.branch.clone())?;
    refname::check_branch(&branch, Some(repo.path()))?;
    let local =
        repo.find_reference(&format!("refs/heads/{branch}")).ok().and_then(|r| r.target()).ok_or_else(
            || {
                ToolError::new(
                    ErrorCode::RefNotFound,
                    format!("no local branch {branch:?} (or it has no commits)"),
                )
                .with_prop("ref", branch.as_str())
            },
        )?;
    let (up_remote, up_branch) = upstream(&cfg, &branch);
    let remote = a
        .remote
        .clone()
        .filter(|r| !r.is_empty())
        .or_else(|| up_remote.clone())
        .unwrap_or_else(|| "origin".into());
    let remote_branch = if up_remote.as_deref() == Some(remote.as_str()) {
        up_branch.unwrap_or_else(|| branch.clone())
    } else {
        branch.clone()
    };
    let url = remote_target(&repo, &root, &remote)?;
    let theirs = remote_head(ctx, &repo, &url, &remote, &remote_branch, git2::Direction::Push)?;
    let force = a.force.is_some_and(|f| f.0);
    let pattern = common::protection(&repo, ctx, &remote_branch)?;
    if theirs == Some(local) {
        return Ok(None);
    }
    let (ff, commits) = match theirs {
        None => {
            let mut walk = repo.revwalk().map_err(|e| super::err(&e, ErrorCode::Internal, "push"))?;
            walk.push(local).map_err(|e| super::err(&e, ErrorCode::Internal, "push"))?;
            (true, walk.take(100_000).count())
        }
        Some(t) => {
            let known = repo.find_commit(t).is_ok();
            if known && repo.graph_descendant_of(local, t).unwrap_or(false) {
                (true, repo.graph_ahead_behind(local, t).map(|x| x.0).unwrap_or(0))
            } else {
                (false, if known { repo.graph_ahead_behind(local, t).map(|x| x.0).unwrap_or(0) } else { 0 })
            }
        }
    };
    if !ff && !force {
        return Err(ToolError::new(
            ErrorCode::NonFastForward,
            format!(
                "{remote}/{remote_branch} has commits that {branch} does not have: the push is not a fast-forward and was refused; git_pull first (or force, never on a protected branch)"
            ),
        ));
    }
    if !ff
        && force
        && let Some(p) = &pattern
    {
        return Err(ToolError::new(
            ErrorCode::ProtectedBranch,
            format!(
                "{remote_branch} is a protected branch (matches {p:?} from {}): a force push to it is never allowed",
                common::protection_source(&repo, ctx)
            ),
        ));
    }
    let protection = pattern.map(|p| {
        format!(
            "{remote_branch} is a protected branch (matches {p:?} from {})",
            common::protection_source(&repo, ctx)
        )
    });
    Ok(Some(PushPlan {
        dir: dir.to_path_buf(),
        remote,
        url,
        branch,
        remote_branch,
        local,
        force: !ff && force,
        commits,
        protection,
        new_branch: theirs.is_none(),
    }))
}

fn push_apply(ctx: &Ctx, p: &PushPlan) -> Result<()> {
    let (repo, _) = common::checkout(&ctx.workspace, &p.dir)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "push");
    let mut remote = repo.remote_anonymous(&p.url.url()).map_err(fail)?;
    let spec =
        format!("{}refs/heads/{}:refs/heads/{}", if p.force { "+" } else { "" }, p.branch, p.remote_branch);
    let rejected = std::cell::RefCell::new(None);
    let mut cbs = git2::RemoteCallbacks::new();
    cbs.push_update_reference(|r, status| {
        if let Some(s) = status {
            *rejected.borrow_mut() = Some(format!("{r}: {s}"));
        }
        Ok(())
    });
    let mut opts = git2::PushOptions::new();
    opts.remote_callbacks(cbs);
    let pushed = match &p.url {
        Target::Local(_) => remote.push(&[spec.as_str()], Some(&mut opts)).map_err(fail),
        Target::Http(_) => {
            let cfg = common::config(&repo, ctx)?;
            super::transport::with_op(ctx, &repo, &cfg, "push", || {
                remote.push(&[spec.as_str()], Some(&mut opts))
            })
        }
    };
    pushed.map_err(|e| {
        if e.message().contains("cannot push non-fastforwardable reference")
            || e.message().contains("non-fast-forward")
        {
            ToolError::new(
                ErrorCode::NonFastForward,
                format!("the remote refused a non-fast-forward push: {}", e.message()),
            )
        } else {
            e
        }
    })?;
    drop(opts);
    if let Some(r) = rejected.into_inner() {
        return Err(ToolError::new(
            ErrorCode::NonFastForward,
            format!("the remote refused the update of {r}"),
        ));
    }
    repo.reference(&format!("refs/remotes/{}/{}", p.remote, p.remote_branch), p.local, true, "push")
        .map_err(fail)?;
    Ok(())
}

/// Run `git_push`.
pub async fn run_push(a: PushArgs, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let c = ctx.clone();
    let p = crate::blocking("git_push", move || push_plan(&c, &dir, &a)).await?;
    let Some(p) = p else {
        return Ok(ToolOutput::new(
            PUSH_SCHEMA,
            "Everything up-to-date.\n",
            json!({"pushed": false, "status": "up-to-date", "commits": 0}),
        ));
    };
    let what = format!(
        "{}Push {} → {}/{} ({} commit{}{})",
        if p.force { "Force-" } else { "" },
        p.branch,
        p.remote,
        p.remote_branch,
        p.commits,
        if p.commits == 1 { "" } else { "s" },
        if p.new_branch {
            ", a new remote branch"
        } else if p.force {
            ", replacing the remote branch's history"
        } else {
            ""
        }
    );
    let base = json!({"remote": p.remote, "branch": p.branch, "remoteBranch": p.remote_branch, "commits": p.commits, "force": p.force});
    let declined = |base: &Value| {
        let mut d = base.clone();
        d["pushed"] = json!(false);
        d["status"] = json!("declined");
        ToolOutput::new(PUSH_SCHEMA, "Push declined; nothing was sent.\n", d)
    };
    let mut prompts = vec![Prompt::action(what.clone())];
    if let Some(prot) = &p.protection {
        prompts.push(Prompt::protected(format!("{prot}. {what} anyway?")));
    }
    if !ctx.confirm_all(prompts).await? {
        return Ok(declined(&base));
    }
    let c = ctx.clone();
    crate::blocking("git_push", move || push_apply(&c, &p)).await?;
    let mut d = base;
    d["pushed"] = json!(true);
    d["status"] = json!("pushed");
    Ok(ToolOutput::new(PUSH_SCHEMA, format!("Done: {what}.\n"), d))
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

fn pull_plan(ctx: &Ctx, dir: &Path, a: &PullArgs) -> Result<Option<PullPlan>> {
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
pub async fn run_pull(a: PullArgs, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let guard = lock::repo_lock(ctx, &dir).await?;
    let (c, d) = (ctx.clone(), dir.clone());
    let p = crate::blocking("git_pull", move || pull_plan(&c, &d, &a)).await?;
    drop(guard);
    let Some(p) = p else {
        return Ok(ToolOutput::new(
            PULL_SCHEMA,
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
        return Ok(ToolOutput::new(PULL_SCHEMA, "Pull declined; nothing changed.\n", d));
    }
    let _guard = lock::repo_lock(ctx, &dir).await?;
    let c = ctx.clone();
    let r = crate::blocking("git_pull", move || pull_apply(&c, &p)).await?;
    let mut d = base;
    d["pulled"] = json!(true);
    d["status"] = json!("pulled");
    d["kind"] = r["kind"].clone();
    d["head"] = r["head"].clone();
    Ok(ToolOutput::new(PULL_SCHEMA, format!("Done: {what}.\n"), d))
}

/// The seeds' spellings that push and pull share.
const REMOTE_ALIASES: &[(&str, &str)] = &[
    ("repo_path", "path"),
    ("remote_name", "remote"),
    ("remoteName", "remote"),
    ("ref", "branch"),
    ("branch_name", "branch"),
];

/// The `git_push` tool.
pub const PUSH: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "git_push",
    js_name: "gitPush",
    family: "git",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: REMOTE_ALIASES,
    definition: include_str!("git_push.json"),
    input: Some(common::schema_no_required::<PushArgs>),
    run: |args, ctx| {
        Box::pin(async move { run_push(crate::call::args::parse("git_push", args)?, ctx).await })
    },
};

/// The `git_pull` tool.
pub const PULL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "git_pull",
    js_name: "gitPull",
    family: "git",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: REMOTE_ALIASES,
    definition: include_str!("git_pull.json"),
    input: Some(common::schema_no_required::<PullArgs>),
    run: |args, ctx| {
        Box::pin(async move { run_pull(crate::call::args::parse("git_pull", args)?, ctx).await })
    },
};
