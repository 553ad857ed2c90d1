//! `git_stage`: add paths to the index (new, modified and deleted files, like `git add -A
//! <paths>`); with `git_unstage` (which shares this code), put their index entries back to HEAD
//! (`git restore --staged`; in an unborn repository, removing them from the index). What will change is computed
//! first, then `ctx.confirm` is asked, then the index is written once (`LOCKED` when another
//! process holds `index.lock`, which is never removed).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::boundary::Scope;
use super::common;
use super::lock::{self, IndexLock, LOCK_WAIT};
use crate::call::args::lenient::StringOrList;
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The arguments of `git_stage` and `git_unstage`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// Files, folders or pathspecs relative to path (default: everything; also: file, paths).
    pub files: Option<StringOrList>,
}

/// What a call will do: the repository-relative paths it changes.
pub(crate) struct Plan {
    pub dir: std::path::PathBuf,
    pub specs: Vec<String>,
    pub paths: Vec<String>,
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// libgit2 pathspecs for `specs` (`.` is everything).
pub(crate) fn lib_specs(specs: &[String]) -> Vec<String> {
    if specs.is_empty() || specs.iter().any(|s| s == ".") { vec!["*".to_owned()] } else { specs.to_vec() }
}

/// Paths with working tree changes under `specs` (what `git add -A` would stage), inside the
/// workspace; `NOT_FOUND` for a given path that matches nothing in the working tree or the index.
pub(crate) fn stage_plan(repo: &git2::Repository, scope: &Scope, specs: &[String]) -> Result<Vec<String>> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .renames_head_to_index(false);
    for s in lib_specs(&scope.limit(specs.to_vec())) {
        opts.pathspec(s);
    }
    let st = repo.statuses(Some(&mut opts)).map_err(|e| super::err(&e, ErrorCode::Internal, "status"))?;
    use git2::Status as S;
    let wt = S::WT_NEW | S::WT_MODIFIED | S::WT_DELETED | S::WT_TYPECHANGE | S::WT_RENAMED | S::CONFLICTED;
    let paths: Vec<String> = st
        .iter()
        .filter(|e| e.status().intersects(wt) && scope.contains(e.path_bytes()))
        .map(|e| lossy(e.path_bytes()))
        .collect();
    check_specs_exist(repo, specs)?;
    Ok(paths)
}

fn check_specs_exist(repo: &git2::Repository, specs: &[String]) -> Result<()> {
    let root = common::workdir(repo)?;
    let index = repo.index().map_err(|e| super::err(&e, ErrorCode::Internal, "index"))?;
    for s in specs.iter().filter(|s| *s != ".") {
        if s.contains(['*', '?', '[']) || std::fs::symlink_metadata(root.join(s)).is_ok() {
            continue;
        }
        let prefix = format!("{s}/");
        let known = index.iter().any(|e| {
            let p = String::from_utf8_lossy(&e.path);
            p == s.as_str() || p.starts_with(&prefix)
        });
        let in_head = || {
            common::head_commit(repo)
                .ok()
                .flatten()
                .and_then(|c| c.tree().ok())
                .is_some_and(|t| t.get_path(std::path::Path::new(s)).is_ok())
        };
        if !known && !in_head() {
            return Err(ToolError::new(
                ErrorCode::NotFound,
                format!("pathspec {s:?} did not match any file (not in the working tree, the index or HEAD)"),
            )
            .with_prop("path", s.as_str()));
        }
    }
    Ok(())
}

/// Stage `specs` in `index` (in memory): additions and modifications, then deletions; never a
/// path outside the workspace.
pub(crate) fn stage_into(index: &mut git2::Index, scope: &Scope, specs: &[String]) -> Result<()> {
    let specs = lib_specs(&scope.limit(specs.to_vec()));
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "staging");
    let mut keep =
        |p: &std::path::Path, _: &[u8]| i32::from(!scope.contains(p.as_os_str().as_encoded_bytes()));
    index.add_all(specs.iter(), git2::IndexAddOption::DEFAULT, Some(&mut keep)).map_err(fail)?;
    index.update_all(specs.iter(), Some(&mut keep)).map_err(fail)?;
    Ok(())
}

/// Paths staged (index differs from HEAD) under `specs`, rename sources included.
pub(crate) fn staged_paths(repo: &git2::Repository, specs: &[String]) -> Result<Vec<String>> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(false).renames_head_to_index(false);
    for s in lib_specs(specs) {
        opts.pathspec(s);
    }
    let st = repo.statuses(Some(&mut opts)).map_err(|e| super::err(&e, ErrorCode::Internal, "status"))?;
    use git2::Status as S;
    let idx = S::INDEX_NEW | S::INDEX_MODIFIED | S::INDEX_DELETED | S::INDEX_RENAMED | S::INDEX_TYPECHANGE;
    let mut out: Vec<String> =
        st.iter().filter(|e| e.status().intersects(idx)).map(|e| lossy(e.path_bytes())).collect();
    out.sort();
    out.dedup();
    Ok(out)
}

fn plan(ctx: &Ctx, dir: &std::path::Path, files: &[String], unstage: bool) -> Result<Plan> {
    let (repo, scope) = common::checkout(&ctx.workspace, dir)?;
    common::check_index_lock(&repo)?;
    let root = common::workdir(&repo)?;
    let specs = common::pathspecs(ctx, dir, &root, files)?;
    let paths = if unstage {
        check_specs_exist(&repo, &specs)?;
        let mut v = staged_paths(&repo, &scope.limit(specs.clone()))?;
        v.retain(|p| scope.contains(p.as_bytes()));
        v
    } else {
        stage_plan(&repo, &scope, &specs)?
    };
    Ok(Plan { dir: dir.to_path_buf(), specs, paths })
}

/// Stage or unstage as planned: under `index.lock`, on a copy of the index that then replaces it.
fn apply(ctx: &Ctx, p: &Plan, unstage: bool) -> Result<()> {
    let (repo, scope) = common::checkout(&ctx.workspace, &p.dir)?;
    let lock = IndexLock::acquire(repo.path(), LOCK_WAIT)?;
    let mut index = lock.scratch(&repo)?;
    if unstage {
        let head = common::head_commit(&repo)?;
        let target = head.as_ref().map(git2::Commit::as_object);
        repo.reset_default(target, p.paths.iter())
            .map_err(|e| super::err(&e, ErrorCode::Internal, "unstaging"))?;
    } else {
        stage_into(&mut index, &scope, &p.specs)?;
        index.write().map_err(|e| super::err(&e, ErrorCode::Internal, "writing the index"))?;
    }
    lock.install()
}

fn summary(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(10).map(String::as_str).collect();
    let more = if paths.len() > 10 { format!(" and {} more", paths.len() - 10) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

pub(super) async fn go(a: Args, ctx: &Ctx, unstage: bool) -> Result<ToolOutput> {
    let (name, verb) = if unstage { ("git_unstage", "Unstage") } else { ("git_stage", "Stage") };
    let dir = super::locate(ctx, a.path.as_deref())?;
    let files = common::list(a.files);
    let c = ctx.clone();
    let d = dir.clone();
    let guard = lock::repo_lock(ctx, &dir).await?;
    let p = crate::blocking(name, move || plan(&c, &d, &files, unstage)).await?;
    drop(guard);
    let key = if unstage { "unstaged" } else { "staged" };
    if p.paths.is_empty() {
        let what = if unstage { "Nothing staged to unstage." } else { "Nothing to stage: no changes." };
        return Ok(ToolOutput::new(format!("{what}\n"), json!({key: [], "count": 0, "status": "nothing"})));
    }
    let n = p.paths.len();
    let message = format!("{verb} {n} path{}: {}", if n == 1 { "" } else { "s" }, summary(&p.paths));
    if !ctx.confirm_all(vec![Prompt::action(message.clone())]).await? {
        return Ok(ToolOutput::new(
            format!("{verb} declined by the user; the index is unchanged.\n"),
            json!({key: [], "count": 0, "status": "declined"}),
        ));
    }
    let paths = p.paths.clone();
    let _guard = lock::repo_lock(ctx, &dir).await?;
    let c = ctx.clone();
    crate::blocking(name, move || apply(&c, &p, unstage)).await?;
    let past = if unstage { "Unstaged" } else { "Staged" };
    Ok(ToolOutput::new(
        format!("{past} {n} path{}: {}\n", if n == 1 { "" } else { "s" }, summary(&paths)),
        json!({key: paths, "count": n, "status": "done"}),
    ))
}

/// Run `git_stage`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    go(a, ctx, false).await
}

pub(super) const ALIASES: &[(&str, &str)] =
    &[("repo_path", "path"), ("file", "files"), ("paths", "files"), ("pathspec", "files")];

/// The `git_stage` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_stage",
    js_name: "gitStage",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: ALIASES,
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_stage.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse("git_stage", args)?, ctx).await }),
};
