//! `git_branch`: list (local, and remote on request, with upstream and ahead/behind), current,
//! create (from a start point; Stack's `create` also switches to it), switch, delete. A switch
//! that would overwrite local changes is refused as git refuses it (`DIRTY_WORKTREE`, naming
//! the files; checked with a dry run before asking). Deleting an unmerged branch needs
//! `force`; deleting a protected branch asks a second time.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::boundary::{self, Scope};
use super::{common, lock, refname};
use crate::call::args::lenient::Flag;
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "git_branch";

/// What `git_branch` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// List the branches.
    List,
    /// The current branch.
    Current,
    /// Create a branch.
    Create,
    /// Switch to a branch.
    Switch,
    /// Delete a branch.
    Delete,
}

/// The arguments of `git_branch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// list (default), current, create, switch or delete.
    pub action: Option<Action>,
    /// The branch to create, switch to or delete.
    pub name: Option<String>,
    /// Stack: create this branch and switch to it.
    pub create: Option<String>,
    /// Stack: delete this branch.
    pub delete: Option<String>,
    /// Where a new branch starts (default HEAD).
    pub start_point: Option<String>,
    /// After create, switch to the new branch (default: false for action create, true for Stack's create).
    pub checkout: Option<Flag>,
    /// List remote-tracking branches too.
    pub remote: Option<Flag>,
    /// Delete a branch that is not merged.
    pub force: Option<Flag>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn list(repo: &git2::Repository, remote: bool) -> Result<Value> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "branches");
    let current = common::current_branch(repo);
    let mut out = Vec::new();
    let filter = if remote { None } else { Some(git2::BranchType::Local) };
    for b in repo.branches(filter).map_err(fail)? {
        let (b, kind) = b.map_err(fail)?;
        let name = b.name_bytes().map(lossy).map_err(fail)?;
        let head = b.get().target();
        let (mut upstream, mut ahead, mut behind) = (None, None, None);
        if kind == git2::BranchType::Local
            && let Ok(up) = b.upstream()
        {
            upstream = up.name_bytes().ok().map(lossy);
            if let (Some(l), Some(r)) = (head, up.get().target())
                && let Ok((a, bh)) = repo.graph_ahead_behind(l, r)
            {
                ahead = Some(a);
                behind = Some(bh);
            }
        }
        if kind == git2::BranchType::Remote && name.ends_with("/HEAD") {
            continue;
        }
        out.push(json!({
            "name": name,
            "current": kind == git2::BranchType::Local && current.as_deref() == Some(name.as_str()),
            "remote": kind == git2::BranchType::Remote,
            "head": head.map(|o| o.to_string()),
            "upstream": upstream,
            "ahead": ahead,
            "behind": behind,
        }));
    }
    out.sort_by(|a, b| {
        (a["remote"].as_bool(), a["name"].as_str()).cmp(&(b["remote"].as_bool(), b["name"].as_str()))
    });
    Ok(json!({
        "action": "list",
        "current": current,
        "detached": repo.head_detached().unwrap_or(false),
        "branches": out,
        "count": out.len(),
    }))
}

/// Checks before a switch to `tree` (`name`, for messages) changes any file: every path it
/// would write must be inside the workspace (`OUTSIDE_WORKSPACE` naming those that are not, or
/// one that a symlinked folder leads outside), and none may have local changes
/// (`DIRTY_WORKTREE`, as git refuses it).
fn check_switch(
    ctx: &Ctx,
    repo: &git2::Repository,
    scope: &Scope,
    name: &str,
    tree: &git2::Object<'_>,
) -> Result<()> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "checkout");
    let target = tree.peel_to_tree().map_err(fail)?;
    let head = common::head_commit(repo)?.map(|c| c.tree()).transpose().map_err(fail)?;
    let changing = common::changed_paths(repo, head.as_ref(), &target)?;
    let workdir = common::workdir(repo)?;
    boundary::check_checkout(&ctx.workspace, scope, &workdir, &format!("switching to {name}"), &changing)?;
    let files = conflicts(repo, &changing)?;
    if !files.is_empty() {
        return Err(dirty_error(name, &files));
    }
    Ok(())
}

/// Files a switch would overwrite, as git decides it: paths of `changing` (they differ
/// between HEAD and the target) that have local changes (staged, unstaged, or untracked in
/// the way).
fn conflicts(repo: &git2::Repository, changing: &std::collections::HashSet<String>) -> Result<Vec<String>> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "checkout");
    if changing.is_empty() {
        return Ok(Vec::new());
    }
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let st = repo.statuses(Some(&mut opts)).map_err(fail)?;
    let mut v: Vec<String> = st
        .iter()
        .map(|e| lossy(e.path_bytes()))
        .filter(|p| {
            changing.contains(p)
                || changing.iter().any(|c| p.starts_with(&format!("{c}/")) || c.starts_with(&format!("{p}/")))
        })
        .collect();
    v.sort();
    v.dedup();
    Ok(v)
}

enum Op {
    Create { name: String, start: git2::Oid, checkout: bool },
    Switch { name: String },
    Delete { name: String, unmerged: bool },
}

struct Plan {
    dir: std::path::PathBuf,
    op: Op,
    message: String,
    protection: Option<String>,
}

fn dirty_error(name: &str, files: &[String]) -> ToolError {
    ToolError::new(
        ErrorCode::DirtyWorktree,
        format!(
            "switching to {name} would overwrite local changes to: {}; commit, stash or checkpoint them first",
            files.join(", ")
        ),
    )
    .with_prop("files", files.to_vec())
}

fn plan(ctx: &Ctx, dir: &std::path::Path, action: Action, a: &Args, name: Option<String>) -> Result<Plan> {
    let (repo, scope) = common::checkout(&ctx.workspace, dir)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "branch");
    let name = name.ok_or_else(|| ToolError::invalid("name is required for create, switch and delete"))?;
    refname::check_branch(&name, Some(repo.path()))?;
    let current = common::current_branch(&repo);
    let short = |o: git2::Oid| o.to_string()[..7].to_owned();
    match action {
        Action::Create => {
            if repo.find_branch(&name, git2::BranchType::Local).is_ok() {
                return Err(ToolError::new(
                    ErrorCode::AlreadyExists,
                    format!("branch {name} already exists"),
                ));
            }
            let start_spec = a.start_point.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| "HEAD".into());
            let start = common::commit_at(&repo, &start_spec)?;
            let checkout = a.checkout.map_or(a.create.is_some(), |f| f.0);
            if checkout {
                common::check_index_lock(&repo)?;
                check_switch(ctx, &repo, &scope, &name, start.as_object())?;
            }
            let message = format!(
                "Create branch {name} at {start_spec} ({}){}",
                short(start.id()),
                if checkout { " and switch to it" } else { "" }
            );
            Ok(Plan {
                dir: dir.to_path_buf(),
                op: Op::Create { name, start: start.id(), checkout },
                message,
                protection: None,
            })
        }
        Action::Switch => {
            let b = repo.find_branch(&name, git2::BranchType::Local).map_err(|_| {
                ToolError::new(
                    ErrorCode::RefNotFound,
                    format!("no local branch named {name}; create it first"),
                )
            })?;
            let target = b.get().peel(git2::ObjectType::Commit).map_err(fail)?;
            common::check_index_lock(&repo)?;
            check_switch(ctx, &repo, &scope, &name, &target)?;
            let from = current.unwrap_or_else(|| "a detached HEAD".into());
            Ok(Plan {
                dir: dir.to_path_buf(),
                message: format!("Switch from {from} to {name}"),
                op: Op::Switch { name },
                protection: None,
            })
        }
        Action::Delete => {
            let b = repo.find_branch(&name, git2::BranchType::Local).map_err(|_| {
                ToolError::new(ErrorCode::RefNotFound, format!("no local branch named {name}"))
            })?;
            if current.as_deref() == Some(name.as_str()) {
                return Err(ToolError::invalid(format!(
                    "cannot delete {name}: it is the current branch; switch away first"
                )));
            }
            let tip = b.get().target().ok_or_else(|| ToolError::internal("branch without a target"))?;
            let mut merged = false;
            let mut into = Vec::new();
            if let Ok(Some(h)) = common::head_commit(&repo).map(|h| h.map(|c| c.id())) {
                into.push(h);
            }
            if let Ok(up) = b.upstream()
                && let Some(u) = up.get().target()
            {
                into.push(u);
            }
            for t in into {
                if t == tip || repo.graph_descendant_of(t, tip).unwrap_or(false) {
                    merged = true;
                }
            }
            let force = Flag::on(a.force);
            if !merged && !force {
                return Err(ToolError::invalid(format!(
                    "branch {name} is not fully merged (its commit {} is not in HEAD or its upstream); pass force: true to delete it anyway",
                    short(tip)
                ))
                .with_prop("unmerged", true));
            }
            common::check_ref_lock(&repo, &format!("refs/heads/{name}"))?;
            let protection = common::protection(&repo, ctx, &name)?.map(|p| {
                format!(
                    "{name} is a protected branch (matches {p:?} from {})",
                    common::protection_source(&repo, ctx)
                )
            });
            let message = format!(
                "Delete branch {name} (was {}){}",
                short(tip),
                if merged { "" } else { ", not merged: its commits may be lost" }
            );
            Ok(Plan {
                dir: dir.to_path_buf(),
                op: Op::Delete { name, unmerged: !merged },
                message,
                protection,
            })
        }
        Action::List | Action::Current => Err(ToolError::internal("not a change")),
    }
}

/// Check out `target` (checked again now: the branch may have moved since the confirm) and
/// point HEAD at `name`. The checkout is limited to the workspace's folder besides.
fn switch(
    ctx: &Ctx,
    repo: &git2::Repository,
    scope: &Scope,
    name: &str,
    target: &git2::Object<'_>,
) -> Result<()> {
    check_switch(ctx, repo, scope, name, target)?;
    let mut cb = git2::build::CheckoutBuilder::new();
    cb.safe();
    if let Some(prefix) = scope.prefix() {
        cb.path(prefix).disable_pathspec_match(true);
    }
    repo.checkout_tree(target, Some(&mut cb)).map_err(|e| {
        if e.code() == git2::ErrorCode::Conflict {
            dirty_error(name, &[e.message().to_owned()])
        } else {
            super::err(&e, ErrorCode::Internal, "checkout")
        }
    })?;
    repo.set_head(&format!("refs/heads/{name}"))
        .map_err(|e| super::err(&e, ErrorCode::Internal, "switching HEAD"))
}

fn apply(ctx: &Ctx, p: &Plan) -> Result<Value> {
    let (repo, scope) = common::checkout(&ctx.workspace, &p.dir)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "branch");
    match &p.op {
        Op::Create { name, start, checkout } => {
            let c = repo.find_commit(*start).map_err(fail)?;
            repo.branch(name, &c, false).map_err(|e| {
                if e.code() == git2::ErrorCode::Exists {
                    ToolError::new(ErrorCode::AlreadyExists, format!("branch {name} already exists"))
                } else {
                    fail(e)
                }
            })?;
            if *checkout {
                switch(ctx, &repo, &scope, name, c.as_object())?;
            }
            Ok(
                json!({"action": "create", "name": name, "head": start.to_string(), "switched": checkout, "current": common::current_branch(&repo)}),
            )
        }
        Op::Switch { name } => {
            let b = repo.find_branch(name, git2::BranchType::Local).map_err(fail)?;
            let target = b.get().peel(git2::ObjectType::Commit).map_err(fail)?;
            switch(ctx, &repo, &scope, name, &target)?;
            Ok(
                json!({"action": "switch", "name": name, "head": target.id().to_string(), "switched": true, "current": name}),
            )
        }
        Op::Delete { name, unmerged } => {
            let mut b = repo.find_branch(name, git2::BranchType::Local).map_err(fail)?;
            let tip = b.get().target().map(|o| o.to_string());
            b.delete().map_err(fail)?;
            Ok(
                json!({"action": "delete", "name": name, "head": tip, "deleted": true, "unmerged": unmerged, "current": common::current_branch(&repo)}),
            )
        }
    }
}

fn render_list(d: &Value) -> String {
    let mut out = String::new();
    for b in d["branches"].as_array().into_iter().flatten() {
        let mark = if b["current"] == true { "*" } else { " " };
        let name = b["name"].as_str().unwrap_or("");
        let head = b["head"].as_str().map(|h| &h[..7.min(h.len())]).unwrap_or("");
        let mut line = format!("{mark} {name} {head}");
        if let Some(u) = b["upstream"].as_str() {
            line.push_str(&format!(
                " [{u}: ahead {}, behind {}]",
                b["ahead"].as_u64().unwrap_or(0),
                b["behind"].as_u64().unwrap_or(0)
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("No branches yet (no commits).\n");
    }
    out
}

/// Run `git_branch`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let (action, name) = match (&a.create, &a.delete, a.action) {
        (Some(c), None, None | Some(Action::Create)) => (Action::Create, Some(c.clone())),
        (None, Some(d), None | Some(Action::Delete)) => (Action::Delete, Some(d.clone())),
        (None, None, act) => (act.unwrap_or(Action::List), a.name.clone().filter(|n| !n.is_empty())),
        _ => return Err(ToolError::invalid("give one of action (+ name), create or delete")),
    };
    if matches!(action, Action::List | Action::Current) {
        let remote = Flag::on(a.remote);
        let ws = ctx.workspace.clone();
        let data = crate::blocking(NAME, move || {
            let (repo, _) = common::checkout(&ws, &dir)?;
            if action == Action::Current {
                let current = common::current_branch(&repo);
                let head = common::head_commit(&repo)?.map(|c| c.id().to_string());
                return Ok(json!({"action": "current", "current": current, "head": head, "detached": repo.head_detached().unwrap_or(false)}));
            }
            list(&repo, remote)
        })
        .await?;
        let content = if action == Action::Current {
            match data["current"].as_str() {
                Some(c) => format!("{c}\n"),
                None => format!("HEAD detached at {}\n", data["head"].as_str().unwrap_or("?")),
            }
        } else {
            render_list(&data)
        };
        return Ok(ToolOutput::new(content, data));
    }
    if let Some(n) = &name {
        refname::check_branch(n, None)?;
    }
    let guard = lock::repo_lock(ctx, &dir).await?;
    let (c, d) = (ctx.clone(), dir.clone());
    let p = crate::blocking(NAME, move || plan(&c, &d, action, &a, name)).await?;
    drop(guard);
    let declined = |what: &str| {
        ToolOutput::new(
            format!("{what} declined; nothing changed.\n"),
            json!({"action": format!("{action:?}").to_lowercase(), "status": "declined"}),
        )
    };
    let mut prompts = vec![Prompt::action(p.message.clone())];
    if let Some(prot) = &p.protection {
        prompts.push(Prompt::protected(format!("{prot}. {} anyway?", p.message)));
    }
    if !ctx.confirm_all(prompts).await? {
        return Ok(declined(&p.message));
    }
    let message = p.message.clone();
    let _guard = lock::repo_lock(ctx, &dir).await?;
    let c = ctx.clone();
    let mut data = crate::blocking(NAME, move || apply(&c, &p)).await?;
    data["status"] = json!("done");
    Ok(ToolOutput::new(format!("Done: {message}.\n"), data))
}

/// The `git_branch` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitBranch",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[
        ("repo_path", "path"),
        ("branch", "name"),
        ("branch_name", "name"),
        ("branchName", "name"),
        ("start_point", "startPoint"),
        ("from", "startPoint"),
        ("base", "startPoint"),
        ("all", "remote"),
        ("remotes", "remote"),
        ("include_remote", "remote"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_branch.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
