//! `git_checkpoint` / `git_restore_checkpoint` / `git_list_checkpoints`: snapshots of the
//! working tree (tracked and untracked files, not ignored ones; bytes as they are on disk, no
//! filters), written as commits under `refs/eddie/checkpoints/`. They never touch the index,
//! HEAD or any branch. A restore puts the files back as they were (writing changed files and
//! removing files the checkpoint did not have), and first takes a checkpoint of the current
//! state, so a restore can itself be undone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::boundary::Scope;
use super::{common, lock};
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The ref namespace of checkpoints.
pub const NAMESPACE: &str = "refs/eddie/checkpoints/";
/// The outputSchema `$id` of `git_checkpoint`.
pub const SCHEMA: &str = "eddie.tool.git_checkpoint.result.v1";
/// The outputSchema `$id` of `git_restore_checkpoint`.
pub const RESTORE_SCHEMA: &str = "eddie.tool.git_restore_checkpoint.result.v1";
/// The outputSchema `$id` of `git_list_checkpoints`.
pub const LIST_SCHEMA: &str = "eddie.tool.git_list_checkpoints.result.v1";

/// The arguments of `git_checkpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// A note kept with the checkpoint.
    pub message: Option<String>,
}

/// The arguments of `git_restore_checkpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RestoreArgs {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The checkpoint: its id (from git_list_checkpoints), its full ref, or `latest`.
    pub checkpoint: String,
}

/// The arguments of `git_list_checkpoints`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListArgs {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
}

/// One file of a snapshot: blob id and mode.
type Files = BTreeMap<String, (git2::Oid, i32)>;

/// The working tree's files inside the workspace (tracked and untracked, not ignored) with
/// their blob ids, hashed without writing anything; `write` stores the blobs too.
fn worktree_files(repo: &git2::Repository, scope: &Scope, write: bool) -> Result<Files> {
    let root = common::workdir(repo)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "checkpoint");
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_unmodified(true)
        .include_ignored(false)
        .exclude_submodules(true);
    for s in scope.limit(Vec::new()) {
        opts.pathspec(s);
    }
    let st = repo.statuses(Some(&mut opts)).map_err(fail)?;
    let odb = if write { Some(repo.odb().map_err(fail)?) } else { None };
    let mut out = Files::new();
    for e in st.iter().filter(|e| scope.contains(e.path_bytes())) {
        let rel = String::from_utf8_lossy(e.path_bytes()).into_owned();
        let full = root.join(&rel);
        let Ok(meta) = std::fs::symlink_metadata(&full) else { continue };
        let (bytes, mode) = if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&full).map_err(|e| ToolError::fs(&e, "readlink", Some(&full)))?;
            (target.as_os_str().as_encoded_bytes().to_vec(), 0o120_000)
        } else if meta.is_file() {
            let b = std::fs::read(&full).map_err(|e| ToolError::fs(&e, "open", Some(&full)))?;
            (b, if crate::engine::platform::mode(&meta) & 0o111 != 0 { 0o100_755 } else { 0o100_644 })
        } else {
            continue;
        };
        let id = match &odb {
            Some(o) => o.write(git2::ObjectType::Blob, &bytes).map_err(fail)?,
            None => git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).map_err(fail)?,
        };
        out.insert(rel, (id, mode));
    }
    Ok(out)
}

/// Every file of `tree` inside the workspace, recursively.
fn tree_files(scope: &Scope, tree: &git2::Tree<'_>) -> Result<Files> {
    let mut out = Files::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, e| {
        let path = format!("{dir}{}", e.name().unwrap_or_default());
        if matches!(e.kind(), Some(git2::ObjectType::Blob)) && scope.contains(path.as_bytes()) {
            out.insert(path, (e.id(), e.filemode()));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| super::err(&e, ErrorCode::Internal, "checkpoint"))?;
    Ok(out)
}

fn entry(path: &str, id: git2::Oid, mode: i32) -> git2::IndexEntry {
    git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: u32::try_from(mode).unwrap_or(0o100_644),
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: u16::try_from(path.len().min(0xfff)).unwrap_or(0xfff),
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// Take a checkpoint: a commit of the working tree under [`NAMESPACE`]. Returns (id, ref, commit, files).
fn take(
    repo: &git2::Repository,
    scope: &Scope,
    ctx: &Ctx,
    note: &str,
) -> Result<(String, String, git2::Oid, usize)> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "checkpoint");
    let files = worktree_files(repo, scope, true)?;
    let mut index = git2::Index::new().map_err(fail)?;
    for (p, (id, mode)) in &files {
        index.add(&entry(p, *id, *mode)).map_err(fail)?;
    }
    let tree_id = index.write_tree_to(repo).map_err(fail)?;
    let tree = repo.find_tree(tree_id).map_err(fail)?;
    let sig = common::config(repo, ctx)
        .ok()
        .and_then(|c| common::signature(&c, ctx, "COMMITTER").ok())
        .map_or_else(|| git2::Signature::now("eddie", "eddie@localhost"), Ok)
        .map_err(fail)?;
    let head = common::head_commit(repo)?;
    let parents: Vec<&git2::Commit<'_>> = head.iter().collect();
    let message = if note.trim().is_empty() {
        "eddie checkpoint".to_owned()
    } else {
        format!("eddie checkpoint: {}", note.trim())
    };
    let commit = repo.commit(None, &sig, &sig, &message, &tree, &parents).map_err(fail)?;
    let id = format!("{}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ"), &commit.to_string()[..8]);
    let name = format!("{NAMESPACE}{id}");
    repo.reference(&name, commit, false, "eddie checkpoint").map_err(fail)?;
    Ok((id, name, commit, files.len()))
}

fn checkpoint_ref<'r>(repo: &'r git2::Repository, spec: &str) -> Result<git2::Reference<'r>> {
    let not_found = || {
        ToolError::new(
            ErrorCode::RefNotFound,
            format!("no checkpoint {spec:?}; git_list_checkpoints lists them"),
        )
        .with_prop("checkpoint", spec)
    };
    if spec == "latest" {
        let all = list(repo)?;
        let first = all.first().and_then(|c| c["ref"].as_str()).ok_or_else(not_found)?.to_owned();
        return repo.find_reference(&first).map_err(|_| not_found());
    }
    let name = if spec.starts_with(NAMESPACE) { spec.to_owned() } else { format!("{NAMESPACE}{spec}") };
    if name.contains("..") || !git2::Reference::is_valid_name(&name) {
        return Err(not_found());
    }
    repo.find_reference(&name).map_err(|_| not_found())
}

fn list(repo: &git2::Repository) -> Result<Vec<Value>> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "checkpoints");
    let mut out = Vec::new();
    for r in repo.references_glob(&format!("{NAMESPACE}*")).map_err(fail)? {
        let r = r.map_err(fail)?;
        let Ok(name) = r.name().map(str::to_owned) else { continue };
        let Ok(c) = r.peel_to_commit() else { continue };
        out.push(json!({
            "id": name.trim_start_matches(NAMESPACE),
            "ref": name,
            "commit": c.id().to_string(),
            "message": String::from_utf8_lossy(c.message_bytes()).trim_end().to_owned(),
            "date": common::iso(c.committer().when()),
            "time": c.committer().when().seconds(),
            "head": c.parent_id(0).ok().map(|p| p.to_string()),
        }));
    }
    out.sort_by(|a, b| (b["time"].as_i64(), b["id"].as_str()).cmp(&(a["time"].as_i64(), a["id"].as_str())));
    Ok(out)
}

/// Run `git_checkpoint`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let note = a.message.unwrap_or_default();
    super::refname::check_message("message", &note)?;
    let dir = super::locate(ctx, a.path.as_deref())?;
    let c = ctx.clone();
    let data = crate::blocking("git_checkpoint", move || {
        let (repo, scope) = common::checkout(&c.workspace, &dir)?;
        let (id, name, commit, n) = take(&repo, &scope, &c, &note)?;
        Ok(json!({"id": id, "ref": name, "commit": commit.to_string(), "files": n}))
    })
    .await?;
    let content = format!(
        "Checkpoint {} ({} files). Restore it with git_restore_checkpoint {{checkpoint: {:?}}}.\n",
        data["id"].as_str().unwrap_or(""),
        data["files"],
        data["id"].as_str().unwrap_or("")
    );
    Ok(ToolOutput::new(SCHEMA, content, data))
}

/// Run `git_list_checkpoints`.
pub async fn run_list(a: ListArgs, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let ws = ctx.workspace.clone();
    let all = crate::blocking("git_list_checkpoints", move || list(&common::checkout(&ws, &dir)?.0)).await?;
    let mut content = String::new();
    for c in &all {
        content.push_str(&format!(
            "{} {} {}\n",
            c["id"].as_str().unwrap_or(""),
            c["date"].as_str().unwrap_or(""),
            c["message"].as_str().unwrap_or("")
        ));
    }
    if content.is_empty() {
        content.push_str("No checkpoints yet.\n");
    }
    Ok(ToolOutput::new(LIST_SCHEMA, content, json!({"checkpoints": all, "count": all.len()})))
}

struct RestorePlan {
    dir: PathBuf,
    name: String,
    target: git2::Oid,
    write: Vec<(String, PathBuf, git2::Oid, i32)>,
    delete: Vec<(String, PathBuf)>,
}

fn restore_plan(ctx: &Ctx, dir: &Path, spec: &str) -> Result<RestorePlan> {
    let (repo, scope) = common::checkout(&ctx.workspace, dir)?;
    let root = common::workdir(&repo)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "restore");
    let r = checkpoint_ref(&repo, spec)?;
    let name = r.name().unwrap_or(spec).to_owned();
    let commit = r.peel_to_commit().map_err(fail)?;
    let tree = commit.tree().map_err(fail)?;
    let want = tree_files(&scope, &tree)?;
    let have = worktree_files(&repo, &scope, false)?;
    let inside = |rel: &str| -> Result<PathBuf> {
        let abs = root.join(rel);
        Ok(ctx.workspace.resolve(&abs.to_string_lossy())?.lexical)
    };
    let mut write = Vec::new();
    for (p, (id, mode)) in &want {
        if have.get(p) != Some(&(*id, *mode)) {
            write.push((p.clone(), inside(p)?, *id, *mode));
        }
    }
    let mut delete = Vec::new();
    for p in have.keys() {
        if !want.contains_key(p) {
            delete.push((p.clone(), inside(p)?));
        }
    }
    Ok(RestorePlan { dir: dir.to_path_buf(), name, target: commit.id(), write, delete })
}

fn restore_apply(ctx: &Ctx, p: &RestorePlan) -> Result<Value> {
    let (repo, scope) = common::checkout(&ctx.workspace, &p.dir)?;
    let root = common::workdir(&repo)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "restore");
    let (before_id, _, _, _) =
        take(&repo, &scope, ctx, &format!("before restoring {}", p.name.trim_start_matches(NAMESPACE)))?;
    for (rel, path, id, mode) in &p.write {
        let blob = repo.find_blob(*id).map_err(fail)?;
        if let Ok(m) = std::fs::symlink_metadata(path)
            && (m.file_type().is_symlink() || m.is_dir() || *mode == 0o120_000)
        {
            if m.is_dir() {
                std::fs::remove_dir_all(path).map_err(|e| ToolError::fs(&e, "rmdir", Some(path)))?;
            } else {
                std::fs::remove_file(path).map_err(|e| ToolError::fs(&e, "unlink", Some(path)))?;
            }
        }
        if *mode == 0o120_000 {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| ToolError::fs(&e, "mkdir", Some(parent)))?;
            }
            let target = crate::engine::platform::os_str_from_bytes(blob.content());
            crate::engine::platform::symlink(Path::new(&target), path)
                .map_err(|e| ToolError::fs(&e, "symlink", Some(path)))?;
        } else {
            crate::engine::store::atomic::write_atomic(path, blob.content(), Path::new(rel))?;
            let m = std::fs::metadata(path).map_err(|e| ToolError::fs(&e, "stat", Some(path)))?;
            let bits = crate::engine::platform::mode(&m);
            let want = if *mode == 0o100_755 { bits | ((bits & 0o444) >> 2) } else { bits & !0o111 };
            if want != bits {
                crate::engine::platform::set_mode(path, want)
                    .map_err(|e| ToolError::fs(&e, "chmod", Some(path)))?;
            }
        }
    }
    for (_, path) in &p.delete {
        std::fs::remove_file(path).map_err(|e| ToolError::fs(&e, "unlink", Some(path)))?;
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == root || !d.starts_with(&root) || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
    Ok(json!({
        "checkpoint": p.name.trim_start_matches(NAMESPACE),
        "commit": p.target.to_string(),
        "written": p.write.iter().map(|w| w.0.clone()).collect::<Vec<_>>(),
        "deleted": p.delete.iter().map(|d| d.0.clone()).collect::<Vec<_>>(),
        "before": before_id,
        "status": "restored",
    }))
}

/// Run `git_restore_checkpoint`.
pub async fn run_restore(a: RestoreArgs, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    if a.checkpoint.is_empty() {
        return Err(ToolError::invalid(
            "checkpoint must be a checkpoint id (git_list_checkpoints), its ref, or latest",
        ));
    }
    let (c, d) = (ctx.clone(), dir.clone());
    let spec = a.checkpoint.clone();
    let guard = lock::repo_lock(ctx, &dir).await?;
    let p = crate::blocking("git_restore_checkpoint", move || restore_plan(&c, &d, &spec)).await?;
    drop(guard);
    let id = p.name.trim_start_matches(NAMESPACE).to_owned();
    if p.write.is_empty() && p.delete.is_empty() {
        return Ok(ToolOutput::new(
            RESTORE_SCHEMA,
            format!("The working tree already matches checkpoint {id}; nothing to do.\n"),
            json!({"checkpoint": id, "commit": p.target.to_string(), "written": [], "deleted": [], "before": null, "status": "unchanged"}),
        ));
    }
    let names = |v: Vec<&str>| {
        let more = if v.len() > 8 { format!(" and {} more", v.len() - 8) } else { String::new() };
        format!("{}{more}", v.into_iter().take(8).collect::<Vec<_>>().join(", "))
    };
    let mut msg = format!("Restore checkpoint {id}:");
    if !p.write.is_empty() {
        msg.push_str(&format!(
            " write {} file(s) ({})",
            p.write.len(),
            names(p.write.iter().map(|w| w.0.as_str()).collect())
        ));
    }
    if !p.delete.is_empty() {
        msg.push_str(&format!(
            " delete {} file(s) ({})",
            p.delete.len(),
            names(p.delete.iter().map(|d| d.0.as_str()).collect())
        ));
    }
    msg.push_str(
        ". A checkpoint of the current state is taken first; the index, HEAD and branches are not touched.",
    );
    if !ctx.confirm_all(vec![Prompt::action(msg)]).await? {
        return Ok(ToolOutput::new(
            RESTORE_SCHEMA,
            "Restore declined; nothing changed.\n",
            json!({"checkpoint": id, "commit": p.target.to_string(), "written": [], "deleted": [], "before": null, "status": "declined"}),
        ));
    }
    let _guard = lock::repo_lock(ctx, &dir).await?;
    let c = ctx.clone();
    let data = crate::blocking("git_restore_checkpoint", move || restore_apply(&c, &p)).await?;
    let content = format!(
        "Restored checkpoint {id}: {} file(s) written, {} deleted. The state before is checkpoint {}.\n",
        data["written"].as_array().map_or(0, Vec::len),
        data["deleted"].as_array().map_or(0, Vec::len),
        data["before"].as_str().unwrap_or("")
    );
    Ok(ToolOutput::new(RESTORE_SCHEMA, content, data))
}

/// The `git_checkpoint` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "git_checkpoint",
    js_name: "gitCheckpoint",
    family: "git",
    effects: crate::registry::Effects::Writes,
    permission: crate::registry::Permission::None,
    aliases: &[("repo_path", "path"), ("note", "message"), ("label", "message"), ("name", "message")],
    definition: include_str!("git_checkpoint.json"),
    input: Some(common::schema_no_required::<Args>),
    run: |args, ctx| {
        Box::pin(async move { run(crate::call::args::parse("git_checkpoint", args)?, ctx).await })
    },
};

/// The `git_restore_checkpoint` tool.
pub const RESTORE: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "git_restore_checkpoint",
    js_name: "gitRestoreCheckpoint",
    family: "git",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Moderate,
    aliases: &[("repo_path", "path"), ("id", "checkpoint"), ("name", "checkpoint"), ("ref", "checkpoint")],
    definition: include_str!("git_restore_checkpoint.json"),
    input: Some(crate::call::args::schema::<RestoreArgs>),
    run: |args, ctx| {
        Box::pin(
            async move { run_restore(crate::call::args::parse("git_restore_checkpoint", args)?, ctx).await },
        )
    },
};

/// The `git_list_checkpoints` tool.
pub const LIST: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "git_list_checkpoints",
    js_name: "gitListCheckpoints",
    family: "git",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[("repo_path", "path")],
    definition: include_str!("git_list_checkpoints.json"),
    input: Some(common::schema_no_required::<ListArgs>),
    run: |args, ctx| {
        Box::pin(async move { run_list(crate::call::args::parse("git_list_checkpoints", args)?, ctx).await })
    },
};
