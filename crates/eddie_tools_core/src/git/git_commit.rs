//! `git_commit`: record a commit with libgit2. What is committed: `files` staged first
//! (Stack), or everything with `stageAll` (Floyd; untracked files too), else the index when
//! something is staged, else all tracked changes (`git commit -a`). The author comes from the
//! repository's config (or `GIT_AUTHOR_*` in `ctx.env`), with a clear error when there is
//! none. An empty commit is refused unless `allowEmpty`. The repository's `pre-commit` and
//! `commit-msg` hooks run through the supervisor (libgit2 runs none by itself): a failing hook
//! means no commit, the index put back as it was, and the hook's output in the error. A commit
//! to a protected branch asks a second time, naming the protection.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::common;
use super::git_stage;
use crate::call::args::lenient::{Flag, StringOrList};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.git_commit.result.v1";
const NAME: &str = "git_commit";
const HOOK_TIMEOUT_SECS: u64 = 600;

/// The arguments of `git_commit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The commit message (first line: the subject).
    pub message: String,
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// Stage these files first, relative to path (also: stageFiles, file).
    pub files: Option<StringOrList>,
    /// Stage every change first, untracked files included (like git add -A).
    pub stage_all: Option<Flag>,
    /// Allow a commit that changes nothing.
    pub allow_empty: Option<Flag>,
    /// Replace the last commit (keeping its author) instead of adding one.
    pub amend: Option<Flag>,
}

enum Staging {
    Specs(Vec<String>),
    Nothing,
}

struct Plan {
    dir: PathBuf,
    git_dir: PathBuf,
    workdir: PathBuf,
    staging: Staging,
    paths: Vec<String>,
    message: String,
    subject: String,
    branch: Option<String>,
    protection: Option<(String, &'static str)>,
    amend: Option<String>,
    allow_empty: bool,
    author: (String, String, Option<git2::Time>),
    committer: (String, String, Option<git2::Time>),
    hooks: Vec<(String, PathBuf)>,
}

fn hook(repo: &git2::Repository, cfg: &git2::Config, workdir: &Path, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let dir = match cfg.get_path("core.hooksPath") {
        Ok(p) if p.is_absolute() => p,
        Ok(p) => workdir.join(p),
        Err(_) => repo.path().join("hooks"),
    };
    let p = dir.join(name);
    let m = std::fs::metadata(&p).ok()?;
    (m.is_file() && m.permissions().mode() & 0o111 != 0).then_some(p)
}

fn sig_parts(s: &git2::Signature<'_>, explicit_time: bool) -> (String, String, Option<git2::Time>) {
    (
        String::from_utf8_lossy(s.name_bytes()).into_owned(),
        String::from_utf8_lossy(s.email_bytes()).into_owned(),
        explicit_time.then(|| s.when()),
    )
}

fn make_sig(p: &(String, String, Option<git2::Time>)) -> Result<git2::Signature<'static>> {
    let r = match p.2 {
        Some(t) => git2::Signature::new(&p.0, &p.1, &t),
        None => git2::Signature::now(&p.0, &p.1),
    };
    r.map_err(|e| ToolError::invalid(format!("invalid git identity: {}", e.message())))
}

fn plan(ctx: &Ctx, dir: &Path, a: &Args) -> Result<Plan> {
    let repo = common::checkout(dir)?;
    let workdir = common::workdir(&repo)?;
    let message = git2::message_prettify(&a.message, None).unwrap_or_else(|_| a.message.clone());
    if message.trim().is_empty() {
        return Err(ToolError::invalid("message must not be empty: give a commit message"));
    }
    let subject = super::git_log::split_message(&message).0;
    let cfg = common::config(&repo, ctx)?;
    let author = common::signature(&cfg, ctx, "AUTHOR")?;
    let committer = match common::signature(&cfg, ctx, "COMMITTER") {
        Ok(s) => s,
        Err(_) => author.clone(),
    };
    let has_date = |k: &str| ctx.env_var(&format!("GIT_{k}_DATE")).is_some();
    common::check_index_lock(&repo)?;
    let head = common::head_commit(&repo)?;
    let branch = common::current_branch(&repo);
    if let Some(b) = &branch {
        common::check_ref_lock(&repo, &format!("refs/heads/{b}"))?;
    }
    let amend = a.amend.is_some_and(|f| f.0);
    if amend && head.is_none() {
        return Err(ToolError::new(ErrorCode::NothingToCommit, "amend: there is no commit to amend yet"));
    }
    if repo.state() == git2::RepositoryState::Merge && !amend {
        // A merge commit would need MERGE_HEAD as a parent; libgit2 does not conclude merges.
        let st = repo.statuses(None).map_err(|e| super::err(&e, ErrorCode::Internal, "status"))?;
        if st.iter().any(|e| e.status().contains(git2::Status::CONFLICTED)) {
            return Err(ToolError::new(
                ErrorCode::MergeConflict,
                "a merge is in progress with unresolved conflicts; resolve and stage them first",
            ));
        }
    }
    let files = common::list(a.files.clone());
    let specs = common::pathspecs(ctx, dir, &workdir, &files)?;
    let staged_now = git_stage::staged_paths(&repo, &[])?;
    let (staging, to_stage) = if !specs.is_empty() {
        let p = git_stage::stage_plan(&repo, &specs)?;
        (Staging::Specs(specs), p)
    } else if a.stage_all.is_some_and(|f| f.0) {
        let p = git_stage::stage_plan(&repo, &[])?;
        (Staging::Specs(vec![".".into()]), p)
    } else if staged_now.is_empty() {
        // Nothing staged: all tracked changes (git commit -a).
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(false);
        let st = repo.statuses(Some(&mut opts)).map_err(|e| super::err(&e, ErrorCode::Internal, "status"))?;
        use git2::Status as S;
        let wt = S::WT_MODIFIED | S::WT_DELETED | S::WT_TYPECHANGE;
        let tracked: Vec<String> = st
            .iter()
            .filter(|e| e.status().intersects(wt))
            .map(|e| String::from_utf8_lossy(e.path_bytes()).into_owned())
            .collect();
        if tracked.is_empty() {
            (Staging::Nothing, Vec::new())
        } else {
            (Staging::Specs(tracked.clone()), tracked)
        }
    } else {
        (Staging::Nothing, Vec::new())
    };
    let mut paths: Vec<String> = staged_now.into_iter().chain(to_stage).collect();
    paths.sort();
    paths.dedup();
    let allow_empty = a.allow_empty.is_some_and(|f| f.0);
    if paths.is_empty() && !allow_empty && !amend {
        return Err(ToolError::new(
            ErrorCode::NothingToCommit,
            "nothing to commit: no staged or tracked changes (stage files, pass files or stageAll, or allowEmpty: true)",
        ));
    }
    let protection = match &branch {
        Some(b) => common::protection(&repo, ctx, b)?.map(|p| (p, common::protection_source(&repo, ctx))),
        None => None,
    };
    let hooks = ["pre-commit", "commit-msg"]
        .iter()
        .filter_map(|n| hook(&repo, &cfg, &workdir, n).map(|p| ((*n).to_owned(), p)))
        .collect();
    Ok(Plan {
        dir: dir.to_path_buf(),
        git_dir: repo.path().to_path_buf(),
        workdir,
        staging,
        paths,
        message,
        subject,
        branch,
        protection,
        amend: if amend { head.map(|h| h.id().to_string()) } else { None },
        allow_empty,
        author: sig_parts(&author, has_date("AUTHOR")),
        committer: sig_parts(&committer, has_date("COMMITTER")),
        hooks,
    })
}

/// Stage as planned and write the index; returns the index file's bytes from before.
fn stage(p: &Plan) -> Result<Option<Vec<u8>>> {
    let repo = common::checkout(&p.dir)?;
    common::check_index_lock(&repo)?;
    let before = std::fs::read(p.git_dir.join("index")).ok();
    if let Staging::Specs(specs) = &p.staging {
        let mut index = repo.index().map_err(|e| super::err(&e, ErrorCode::Internal, "index"))?;
        git_stage::stage_into(&mut index, specs)?;
        index.write().map_err(|e| super::err(&e, ErrorCode::Internal, "writing the index"))?;
    }
    Ok(before)
}

/// Put the index back as it was.
fn restore_index(p: &Plan, before: Option<&Vec<u8>>) {
    let path = p.git_dir.join("index");
    match before {
        Some(bytes) => {
            let _ = crate::engine::store::atomic::write_atomic(&path, bytes, &path);
        }
        None => {
            let _ = std::fs::remove_file(&path);
        }
    }
}

fn commit(p: &Plan, message: &str) -> Result<(String, String, usize)> {
    let repo = common::checkout(&p.dir)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "commit");
    let mut index = repo.index().map_err(fail)?;
    index.read(true).map_err(fail)?;
    let tree_id = index.write_tree().map_err(fail)?;
    let tree = repo.find_tree(tree_id).map_err(fail)?;
    let head = common::head_commit(&repo)?;
    let parent_tree = head.as_ref().and_then(|h| h.tree().ok()).map(|t| t.id());
    let empty_tree = head.is_none() && tree.is_empty();
    if !p.allow_empty && p.amend.is_none() && (parent_tree == Some(tree_id) || empty_tree) {
        return Err(ToolError::new(
            ErrorCode::NothingToCommit,
            "nothing to commit: the tree is the same as HEAD's",
        ));
    }
    let committer = make_sig(&p.committer)?;
    let id = match (&p.amend, &head) {
        (Some(_), Some(h)) => {
            h.amend(Some("HEAD"), None, Some(&committer), None, Some(message), Some(&tree)).map_err(fail)?
        }
        _ => {
            let author = make_sig(&p.author)?;
            let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
            repo.commit(Some("HEAD"), &author, &committer, message, &tree, &parents).map_err(fail)?
        }
    };
    let short = repo
        .find_object(id, None)
        .ok()
        .and_then(|o| o.short_id().ok())
        .and_then(|b| b.as_str().ok().map(str::to_owned))
        .unwrap_or_else(|| id.to_string());
    let changed = match &head {
        Some(h) if p.amend.is_none() => {
            let d = repo.diff_tree_to_tree(h.tree().ok().as_ref(), Some(&tree), None).map_err(fail)?;
            d.deltas().len()
        }
        None => tree.len(),
        Some(_) => p.paths.len(),
    };
    Ok((id.to_string(), short, changed))
}

/// A repository's git directory and, for a linked worktree, the common one it names.
fn git_dirs(git_dir: &Path) -> Vec<PathBuf> {
    let common = std::fs::read_to_string(git_dir.join("commondir")).ok().map(|c| git_dir.join(c.trim()));
    std::iter::once(git_dir.to_path_buf()).chain(common).collect()
}

async fn run_hook(ctx: &Ctx, p: &Plan, name: &str, path: &Path, args: Vec<String>) -> Result<()> {
    use crate::engine::process::{command, env};
    let (mut vars, dropped) = env::child_env(ctx, None, &[])?;
    vars.insert("GIT_INDEX_FILE".into(), p.git_dir.join("index").to_string_lossy().into_owned());
    vars.insert("GIT_EDITOR".into(), ":".into());
    let inv = command::Invocation {
        program: path.to_string_lossy().into_owned(),
        args,
        cwd: p.workdir.clone(),
        cwd_shown: ".".into(),
        env: vars,
        dropped_env: dropped,
        timeout: Some(std::time::Duration::from_secs(HOOK_TIMEOUT_SECS)),
        max_bytes: 64 * 1024,
        stdin: None,
        // A hook may stage files (`git add`): the git directories are writable to it, also when
        // a linked worktree keeps them outside the workspace.
        sandbox: crate::engine::process::sandbox::plan_with_roots(ctx, &git_dirs(&p.git_dir))?,
    };
    let out = command::execute(&inv, ctx, None).await?;
    if out.status() == "ok" {
        return Ok(());
    }
    if out.status() == "cancelled" {
        return Err(ToolError::cancelled());
    }
    let text = out.render(&inv);
    Err(ToolError::new(
        ErrorCode::HookFailed,
        format!("the {name} hook failed ({}); no commit was made:\n{text}", out.summary(&inv)),
    )
    .with_prop("hook", name))
}

/// Run `git_commit`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let c = ctx.clone();
    let p = crate::blocking(NAME, move || plan(&c, &dir, &a)).await?;
    let target = p.branch.clone().unwrap_or_else(|| "a detached HEAD".into());
    let n = p.paths.len();
    let what = match &p.amend {
        Some(id) => format!("Amend commit {} on {target}", id.get(..7).unwrap_or(id)),
        None => format!("Commit {n} file{} to {target}", if n == 1 { "" } else { "s" }),
    };
    let declined = |p: &Plan, why: &str| {
        ToolOutput::new(
            SCHEMA,
            format!("Commit declined{why}; nothing was committed.\n"),
            json!({"committed": false, "status": "declined", "branch": p.branch, "id": null, "files": p.paths}),
        )
    };
    if !ctx.confirm(format!("{what}: {}", p.subject)).await? {
        return Ok(declined(&p, ""));
    }
    if let (Some((pattern, source)), Some(b)) = (&p.protection, &p.branch)
        && !ctx
            .confirm(format!(
                "{b} is a protected branch (matches {pattern:?} from {source}). Commit to {b} anyway: {}?",
                p.subject
            ))
            .await?
    {
        return Ok(declined(&p, &format!(" ({b} is protected)")));
    }
    let p = std::sync::Arc::new(p);
    let pp = std::sync::Arc::clone(&p);
    let before = crate::blocking(NAME, move || stage(&pp)).await?;
    let mut message = p.message.clone();
    let hooked: Result<()> = async {
        for (name, path) in &p.hooks {
            if name == "pre-commit" {
                run_hook(ctx, &p, name, path, Vec::new()).await?;
            }
        }
        for (name, path) in &p.hooks {
            if name == "commit-msg" {
                let file = p.git_dir.join("COMMIT_EDITMSG");
                crate::engine::store::atomic::write_atomic(&file, message.as_bytes(), &file)?;
                run_hook(ctx, &p, name, path, vec![file.to_string_lossy().into_owned()]).await?;
                let edited = std::fs::read(&file).map_err(|e| ToolError::fs(&e, "open", Some(&file)))?;
                let edited = String::from_utf8_lossy(&edited).into_owned();
                message = git2::message_prettify(&edited, Some(b'#')).unwrap_or(edited);
                if message.trim().is_empty() {
                    return Err(ToolError::new(
                        ErrorCode::HookFailed,
                        "the commit-msg hook left an empty message; no commit was made",
                    ));
                }
            }
        }
        Ok(())
    }
    .await;
    let pp = std::sync::Arc::clone(&p);
    let result = match hooked {
        Ok(()) => {
            let msg = message.clone();
            crate::blocking(NAME, move || {
                let r = commit(&pp, &msg);
                if r.is_err() {
                    restore_index(&pp, before.as_ref());
                }
                r
            })
            .await
        }
        Err(e) => {
            crate::blocking(NAME, move || {
                restore_index(&pp, before.as_ref());
                Ok(())
            })
            .await?;
            Err(e)
        }
    };
    let (id, short, changed) = result?;
    let subject = super::git_log::split_message(&message).0;
    let branch = p.branch.clone();
    Ok(ToolOutput::new(
        SCHEMA,
        format!(
            "[{} {short}] {subject}\n {changed} file{} changed\n",
            branch.as_deref().unwrap_or("detached HEAD"),
            if changed == 1 { "" } else { "s" }
        ),
        json!({
            "committed": true,
            "status": "committed",
            "id": id,
            "shortId": short,
            "branch": branch,
            "subject": subject,
            "message": message,
            "amend": p.amend.is_some(),
            "files": p.paths,
            "filesChanged": changed,
        }),
    ))
}

/// The `git_commit` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: NAME,
    js_name: "gitCommit",
    family: "git",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: &[
        ("stageFiles", "files"),
        ("stage_files", "files"),
        ("file", "files"),
        ("stage_all", "stageAll"),
        ("all", "stageAll"),
        ("allow_empty", "allowEmpty"),
        ("msg", "message"),
    ],
    definition: include_str!("git_commit.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
