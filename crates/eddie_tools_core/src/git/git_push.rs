//! `git_push` with libgit2, for remotes that are repositories on this machine (a path or a
//! `file://` URL) and for `http://`/`https://` remotes (smart HTTP, through our own transport,
//! [`super::transport`]: the one network guard, credentials as git finds them),
//! and from ssh remotes ([`super::ssh`], on the same guard). Other schemes are refused with
//! `UNSUPPORTED_SCHEME`.
//!
//! Everything is decided before asking: a local remote is opened read-only, an http(s)
//! remote's refs are listed, so the fast-forward check is known first. A push that is not a
//! fast-forward is refused (`NON_FAST_FORWARD`) unless `force`, and a force push to a protected
//! branch is always refused.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::transport::{REMOTE_ALIASES, Target, local_branch, remote_head, remote_target, upstream};
use super::{common, refname};
use crate::call::args::lenient::Flag;
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The arguments of `git_push`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The remote (default: the branch's upstream remote, else origin).
    pub remote: Option<String>,
    /// The local branch to push (default: the current branch).
    pub branch: Option<String>,
    /// Replace the remote branch even when the push is not a fast-forward (never to a protected branch).
    pub force: Option<Flag>,
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

fn push_plan(ctx: &Ctx, dir: &Path, a: &Args) -> Result<Option<PushPlan>> {
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
    let force = Flag::on(a.force);
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
pub async fn run_push(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let c = ctx.clone();
    let p = crate::blocking("git_push", move || push_plan(&c, &dir, &a)).await?;
    let Some(p) = p else {
        return Ok(ToolOutput::new(
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
        ToolOutput::new("Push declined; nothing was sent.\n", d)
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
    Ok(ToolOutput::new(format!("Done: {what}.\n"), d))
}

/// The `git_push` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_push",
    js_name: "gitPush",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: REMOTE_ALIASES,
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_push.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move { run_push(crate::call::args::parse("git_push", args)?, ctx).await })
    },
};
