//! `git_commit`: record a commit with libgit2. What is committed: `files` staged first
//! (Stack), or everything with `stageAll` (Floyd; untracked files too), or everything when the
//! call is spelt as Stack's (its `repo_path` key, no `files`: Stack stages all), else the index
//! when something is staged, else all tracked changes (`git commit -a`). The author comes from
//! the repository's config (or `GIT_AUTHOR_*` in `ctx.env`), with a clear error when there is
//! none. An empty commit is refused unless `allowEmpty`. The repository's `pre-commit` and
//! `commit-msg` hooks run through the supervisor (libgit2 runs none by itself) when they lie
//! inside the workspace (one outside is never run, and the result says so): a failing hook
//! means no commit, the index as it was, and the hook's output in the error. The call asks
//! once, with a prompt for the action, one naming the hooks that will run, and one for a
//! protected branch.
//!
//! Commits to one repository are serialised in this process (`lock::repo_lock`) and made as
//! git makes them against other processes: `index.lock` is held from the read of the index to
//! its replacement, staging writes a private copy (the hooks' `GIT_INDEX_FILE`), and the branch
//! is moved with a compare-and-swap from the parent just read; a branch moved by another
//! process in between is re-read and the commit made again on top of it (a bounded number of
//! times, then `LOCKED`, never `INTERNAL`).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::boundary::{self, Scope};
use super::common;
use super::git_stage;
use super::lock::{self, IndexLock, LOCK_WAIT};
use crate::call::args::lenient::{Flag, StringOrList};
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "git_commit";
const HOOK_TIMEOUT_SECS: u64 = 600;
/// How many times a commit is made again on top of a branch another process moved.
const REF_ATTEMPTS: usize = 10;

/// The arguments of `git_commit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The commit message (first line: the subject).
    pub message: String,
    /// A folder inside the repository (default: the workspace root; also: repoPath).
    pub path: Option<String>,
    /// Stack's spelling of path. A call spelt as Stack's (with repo_path) and without files
    /// stages every change first, untracked files included (ignored ones not), as Stack does.
    #[serde(rename = "repo_path")]
    pub repo_path: Option<String>,
    /// Stage these files first, relative to path (also: stageFiles, file).
    pub files: Option<StringOrList>,
    /// Stage every change first, untracked files included (like git add -A).
    pub stage_all: Option<Flag>,
    /// Allow a commit that changes nothing.
    pub allow_empty: Option<Flag>,
    /// Replace the last commit (keeping its author) instead of adding one.
    pub amend: Option<Flag>,
}

/// What is staged before the commit (on the private copy of the index).
enum Staging {
    /// These pathspecs, like `git add -A <specs>`.
    Specs(Vec<String>),
    /// Every change of the workspace, untracked files included (`git add -A`).
    All,
    /// Every change to a tracked file (`git commit -a`).
    Tracked,
    /// Nothing: the index as it is.
    Index,
}

/// One hook the repository has.
struct Hook {
    name: &'static str,
    path: PathBuf,
    /// Why it will not run (it lies outside the workspace), if it will not.
    skip: Option<String>,
}

struct Plan {
    dir: PathBuf,
    git_dir: PathBuf,
    hook_cwd: PathBuf,
    staging: Staging,
    stack_all: bool,
    paths: Vec<String>,
    message: String,
    subject: String,
    branch: Option<String>,
    protection: Option<(String, &'static str)>,
    amend: Option<git2::Oid>,
    allow_empty: bool,
    author: (String, String, Option<git2::Time>),
    committer: (String, String, Option<git2::Time>),
    hooks: Vec<Hook>,
    hooks_from: String,
}

/// The `pre-commit` and `commit-msg` hooks (executable files; `core.hooksPath` honoured, a
/// relative one from the work tree as git reads it), and where they come from. A hook whose
/// real path is outside the workspace is marked to be skipped.
fn hooks(ctx: &Ctx, repo: &git2::Repository, cfg: &git2::Config, workdir: &Path) -> (Vec<Hook>, String) {
    let (dir, from) = match cfg.get_path("core.hooksPath") {
        Ok(p) => {
            let abs = if p.is_absolute() { p.clone() } else { workdir.join(&p) };
            (abs, format!("core.hooksPath = {}", p.display()))
        }
        Err(_) => {
            let d = repo.path().join("hooks");
            let shown = d.display().to_string();
            (d, shown)
        }
    };
    let mut out = Vec::new();
    for name in ["pre-commit", "commit-msg"] {
        let path = dir.join(name);
        let Ok(m) = std::fs::metadata(&path) else { continue };
        // Git for Windows runs a hook whatever its mode (there is no executable bit).
        if !m.is_file() || (cfg!(unix) && crate::engine::platform::mode(&m) & 0o111 == 0) {
            continue;
        }
        let skip = (!boundary::inside(&ctx.workspace, &path)).then(|| {
            let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            format!("{} is outside the workspace", real.display())
        });
        out.push(Hook { name, path, skip });
    }
    (out, from)
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

/// `OUTSIDE_WORKSPACE` when changes staged outside the workspace would be committed too.
fn refuse_staged_outside(scope: &Scope, staged: &[String]) -> Result<()> {
    let outside = scope.outside(staged.iter().map(String::as_bytes));
    boundary::refuse_outside("committing the index (changes staged outside the workspace)", &outside)
}

/// Tracked files with working tree changes inside the workspace (what `git commit -a` adds).
fn tracked_changes(repo: &git2::Repository, scope: &Scope) -> Result<Vec<String>> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(false);
    for s in scope.limit(Vec::new()) {
        opts.pathspec(s);
    }
    let st = repo.statuses(Some(&mut opts)).map_err(|e| super::err(&e, ErrorCode::Internal, "status"))?;
    use git2::Status as S;
    let wt = S::WT_MODIFIED | S::WT_DELETED | S::WT_TYPECHANGE;
    Ok(st
        .iter()
        .filter(|e| e.status().intersects(wt) && scope.contains(e.path_bytes()))
        .map(|e| String::from_utf8_lossy(e.path_bytes()).into_owned())
        .collect())
}

fn plan(ctx: &Ctx, dir: &Path, a: &Args) -> Result<Plan> {
    let (repo, scope) = common::checkout(&ctx.workspace, dir)?;
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
    let amend = Flag::on(a.amend);
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
    refuse_staged_outside(&scope, &staged_now)?;
    let stack_all = a.repo_path.is_some() && specs.is_empty() && a.stage_all.is_none();
    let (staging, to_stage) = if !specs.is_empty() {
        let p = git_stage::stage_plan(&repo, &scope, &specs)?;
        (Staging::Specs(specs), p)
    } else if stack_all || Flag::on(a.stage_all) {
        (Staging::All, git_stage::stage_plan(&repo, &scope, &[])?)
    } else if staged_now.is_empty() {
        let tracked = tracked_changes(&repo, &scope)?;
        if tracked.is_empty() { (Staging::Index, Vec::new()) } else { (Staging::Tracked, tracked) }
    } else {
        (Staging::Index, Vec::new())
    };
    let mut paths: Vec<String> = staged_now.into_iter().chain(to_stage).collect();
    paths.sort();
    paths.dedup();
    let allow_empty = Flag::on(a.allow_empty);
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
    let (hooks, hooks_from) = hooks(ctx, &repo, &cfg, &workdir);
    let hook_cwd = if scope.prefix().is_none() { workdir } else { ctx.workspace.root().to_path_buf() };
    Ok(Plan {
        dir: dir.to_path_buf(),
        git_dir: repo.path().to_path_buf(),
        hook_cwd,
        staging,
        stack_all,
        paths,
        message,
        subject,
        branch,
        protection,
        amend: if amend { head.map(|h| h.id()) } else { None },
        allow_empty,
        author: sig_parts(&author, has_date("AUTHOR")),
        committer: sig_parts(&committer, has_date("COMMITTER")),
        hooks,
        hooks_from,
    })
}

/// Take `index.lock` and stage as planned on a private copy of the index; refuse when the
/// copy would commit changes outside the workspace. The real index is untouched.
fn stage(ctx: &Ctx, p: &Plan) -> Result<IndexLock> {
    let (repo, scope) = common::checkout(&ctx.workspace, &p.dir)?;
    let lock = IndexLock::acquire(repo.path(), LOCK_WAIT)?;
    let mut index = lock.scratch(&repo)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "staging");
    match &p.staging {
        Staging::Specs(specs) => git_stage::stage_into(&mut index, &scope, specs)?,
        Staging::All => git_stage::stage_into(&mut index, &scope, &[])?,
        Staging::Tracked => {
            let specs = git_stage::lib_specs(&scope.limit(Vec::new()));
            let mut keep =
                |path: &Path, _: &[u8]| i32::from(!scope.contains(path.as_os_str().as_encoded_bytes()));
            index.update_all(specs.iter(), Some(&mut keep)).map_err(fail)?;
        }
        Staging::Index => {}
    }
    index.write().map_err(fail)?;
    refuse_staged_outside(&scope, &git_stage::staged_paths(&repo, &[])?)?;
    Ok(lock)
}

/// Where HEAD points: a branch (its full ref name) or nowhere (detached).
fn head_ref(repo: &git2::Repository) -> std::result::Result<Option<String>, git2::Error> {
    let head = repo.find_reference("HEAD")?;
    Ok(head.symbolic_target()?.map(str::to_owned))
}

/// The commit: the tree of the private index (as the hooks left it) on top of the HEAD read
/// now, the branch moved by compare-and-swap (again on top when another process moved it),
/// then the private index installed as the index.
fn commit(ctx: &Ctx, p: &Plan, lock: IndexLock, message: &str) -> Result<Done> {
    let (repo, scope) = common::checkout(&ctx.workspace, &p.dir)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "commit");
    let mut index = lock.reopen(&repo)?;
    let tree_id = index.write_tree_to(&repo).map_err(fail)?;
    let tree = repo.find_tree(tree_id).map_err(fail)?;
    let committer = make_sig(&p.committer)?;
    let author = make_sig(&p.author)?;
    let subject = super::git_log::split_message(message).0;
    let (id, parent_tree) = lock::retry_ref(REF_ATTEMPTS, || {
        let head = common::head_commit(&repo)?;
        let parent_tree = head.as_ref().map(|h| h.tree().map(|t| t.id())).transpose().map_err(fail)?;
        let changed = match &parent_tree {
            Some(t) => *t != tree_id,
            None => !tree.is_empty(),
        };
        if !p.allow_empty && p.amend.is_none() && !changed {
            return Err(ToolError::new(
                ErrorCode::NothingToCommit,
                "nothing to commit: the tree is the same as HEAD's",
            ));
        }
        let target = head_ref(&repo).map_err(fail)?;
        let step = || -> std::result::Result<(git2::Oid, Option<git2::Oid>), git2::Error> {
            let (id, base, log) = match (&p.amend, &head) {
                (Some(planned), Some(h)) => {
                    if h.id() != *planned {
                        return Err(git2::Error::new(
                            git2::ErrorCode::Modified,
                            git2::ErrorClass::Reference,
                            "the commit to amend is no longer HEAD",
                        ));
                    }
                    let id = h.amend(None, None, Some(&committer), None, Some(message), Some(&tree))?;
                    let base = h.parent(0).ok().map(|c| c.tree_id());
                    (id, base, format!("commit (amend): {subject}"))
                }
                _ => {
                    let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
                    let id = repo.commit(None, &author, &committer, message, &tree, &parents)?;
                    let log = if head.is_some() { "commit" } else { "commit (initial)" };
                    (id, parent_tree, format!("{log}: {subject}"))
                }
            };
            let name = target.as_deref().unwrap_or("HEAD");
            match &head {
                Some(h) => repo.reference_matching(name, id, true, h.id(), &log)?,
                None => repo.reference(name, id, false, &log)?,
            };
            Ok((id, base))
        };
        Ok(step())
    })?;
    lock.install()?;
    let base = parent_tree.and_then(|t| repo.find_tree(t).ok());
    let d = repo.diff_tree_to_tree(base.as_ref(), Some(&tree), None).map_err(fail)?;
    let mut files: Vec<String> = d
        .deltas()
        .filter_map(|d| d.new_file().path_bytes().or_else(|| d.old_file().path_bytes()))
        .filter(|p| scope.contains(p))
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    files.sort();
    let short = repo
        .find_object(id, None)
        .ok()
        .and_then(|o| o.short_id().ok()?.as_str().ok().map(str::to_owned))
        .unwrap_or_else(|| id.to_string().chars().take(7).collect());
    Ok(Done { id, short, files })
}

/// A repository's git directory and, for a linked worktree, the common one it names.
fn git_dirs(git_dir: &Path) -> Vec<PathBuf> {
    let common = std::fs::read_to_string(git_dir.join("commondir")).ok().map(|c| git_dir.join(c.trim()));
    std::iter::once(git_dir.to_path_buf()).chain(common).collect()
}

async fn run_hook(ctx: &Ctx, p: &Plan, index: &Path, hook: &Hook, args: Vec<String>) -> Result<()> {
    use crate::engine::process::{command, env};
    let (mut vars, dropped) = env::child_env(ctx, None, &[])?;
    vars.insert("GIT_INDEX_FILE".into(), index.to_string_lossy().into_owned());
    vars.insert("GIT_EDITOR".into(), ":".into());
    let inv = command::Invocation {
        program: hook.path.to_string_lossy().into_owned(),
        args,
        cwd: p.hook_cwd.clone(),
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
        format!("the {} hook failed ({}); no commit was made:\n{text}", hook.name, out.summary(&inv)),
    )
    .with_prop("hook", hook.name))
}

/// Run the hooks that will run (each checked again just before, so that one swapped for a
/// link to the outside after the confirm is skipped); the message as `commit-msg` left it.
async fn run_hooks(
    ctx: &Ctx,
    p: &Plan,
    git_dir: &Path,
    index: &Path,
    skipped: &mut Vec<Value>,
) -> Result<(String, Vec<&'static str>)> {
    let mut message = p.message.clone();
    let mut ran = Vec::new();
    for hook in p.hooks.iter().filter(|h| h.skip.is_none()) {
        if !boundary::inside(&ctx.workspace, &hook.path) {
            skipped.push(json!({"name": hook.name, "path": hook.path, "reason": "it led outside the workspace when it was time to run it"}));
            continue;
        }
        if hook.name == "pre-commit" {
            run_hook(ctx, p, index, hook, Vec::new()).await?;
        } else {
            let file = git_dir.join("COMMIT_EDITMSG");
            crate::engine::store::atomic::write_atomic(&file, message.as_bytes(), &file)?;
            run_hook(ctx, p, index, hook, vec![file.to_string_lossy().into_owned()]).await?;
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
        ran.push(hook.name);
    }
    Ok((message, ran))
}

/// Every question of the call, asked at once: the action (naming hooks that will not run),
/// the hooks that will run and from where, and a protected branch.
fn prompts(p: &Plan) -> Vec<Prompt> {
    let target = p.branch.clone().unwrap_or_else(|| "a detached HEAD".into());
    let n = p.paths.len();
    let mut what = match &p.amend {
        Some(id) => format!("Amend commit {} on {target}", id.to_string().get(..7).unwrap_or_default()),
        None => format!("Commit {n} file{} to {target}", if n == 1 { "" } else { "s" }),
    };
    if p.stack_all {
        what.push_str(" (every change staged first, untracked files included)");
    }
    let mut action = format!("{what}: {}", p.subject);
    for h in &p.hooks {
        if let Some(why) = &h.skip {
            action.push_str(&format!(" (the {} hook will not run: {why})", h.name));
        }
    }
    let mut out = vec![Prompt::action(action)];
    let running: Vec<String> = p
        .hooks
        .iter()
        .filter(|h| h.skip.is_none())
        .map(|h| format!("{} ({})", h.name, h.path.display()))
        .collect();
    if !running.is_empty() {
        out.push(Prompt::hooks(format!(
            "The commit runs the repository's hooks, from {}: {}. They run as programs in the workspace.",
            p.hooks_from,
            running.join(", ")
        )));
    }
    if let (Some((pattern, source)), Some(b)) = (&p.protection, &p.branch) {
        out.push(Prompt::protected(format!(
            "{b} is a protected branch (matches {pattern:?} from {source}). Commit to {b} anyway: {}?",
            p.subject
        )));
    }
    out
}

/// Run `git_commit`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    super::refname::check_message("message", &a.message)?;
    let path = a.path.clone().or_else(|| a.repo_path.clone());
    let dir = super::locate(ctx, path.as_deref())?;
    let guard = lock::repo_lock(ctx, &dir).await?;
    let (c, d) = (ctx.clone(), dir.clone());
    let p = crate::blocking(NAME, move || plan(&c, &d, &a)).await?;
    drop(guard);
    if !ctx.confirm_all(prompts(&p)).await? {
        return Ok(ToolOutput::new(
            "Commit declined; nothing was committed.\n",
            json!({"committed": false, "status": "declined", "branch": p.branch, "id": null, "files": p.paths}),
        ));
    }
    let _guard = lock::repo_lock(ctx, &dir).await?;
    let p = std::sync::Arc::new(p);
    let (c, pp) = (ctx.clone(), std::sync::Arc::clone(&p));
    let index_lock = crate::blocking(NAME, move || stage(&c, &pp)).await?;
    let mut skipped: Vec<Value> = p
        .hooks
        .iter()
        .filter_map(|h| h.skip.as_ref().map(|why| json!({"name": h.name, "path": h.path, "reason": why})))
        .collect();
    let scratch = index_lock.scratch_path().to_path_buf();
    let (message, ran) = run_hooks(ctx, &p, &p.git_dir, &scratch, &mut skipped).await?;
    let (c, pp, msg) = (ctx.clone(), std::sync::Arc::clone(&p), message.clone());
    let done = crate::blocking(NAME, move || commit(&c, &pp, index_lock, &msg)).await?;
    Ok(output(&p, done, &message, &ran, skipped))
}

/// A commit made: its id, short id and the files it changes.
struct Done {
    id: git2::Oid,
    short: String,
    files: Vec<String>,
}

fn output(p: &Plan, done: Done, message: &str, ran: &[&str], skipped: Vec<Value>) -> ToolOutput {
    let Done { id, short, files } = done;
    let subject = super::git_log::split_message(message).0;
    let n = files.len();
    let shown: Vec<&str> = files.iter().take(20).map(String::as_str).collect();
    let more = if n > 20 { format!(" and {} more", n - 20) } else { String::new() };
    let mut content = format!(
        "[{} {short}] {subject}\n {n} file{} changed{}{}{more}\n",
        p.branch.as_deref().unwrap_or("detached HEAD"),
        if n == 1 { "" } else { "s" },
        if n == 0 { "" } else { ": " },
        shown.join(", "),
    );
    if p.stack_all {
        content
            .push_str("Every change was staged first (untracked files included, ignored files left out).\n");
    }
    for s in &skipped {
        content.push_str(&format!(
            "The {} hook did not run: {}.\n",
            s["name"].as_str().unwrap_or_default(),
            s["reason"].as_str().unwrap_or_default()
        ));
    }
    ToolOutput::new(
        content,
        json!({
            "committed": true,
            "status": "committed",
            "id": id.to_string(),
            "shortId": short,
            "branch": p.branch,
            "subject": subject,
            "message": message,
            "amend": p.amend.is_some(),
            "files": files,
            "filesChanged": n,
            "stagedAll": p.stack_all || matches!(p.staging, Staging::All),
            "hooks": {"ran": ran, "skipped": skipped},
        }),
    )
}

/// The `git_commit` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitCommit",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[
        ("stageFiles", "files"),
        ("stage_files", "files"),
        ("file", "files"),
        ("stage_all", "stageAll"),
        ("all", "stageAll"),
        ("allow_empty", "allowEmpty"),
        ("msg", "message"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_commit.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
