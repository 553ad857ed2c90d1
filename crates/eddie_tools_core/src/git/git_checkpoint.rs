//! `git_checkpoint`: snapshots of the working tree (tracked and untracked files, not ignored
//! ones; bytes as they are on disk, no filters), written as commits under
//! `refs/eddie/checkpoints/`. They never touch the index, HEAD or any branch. The store here is
//! shared with `git_restore_checkpoint` and `git_list_checkpoints`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::boundary::Scope;
use super::common;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The ref namespace of checkpoints.
pub const NAMESPACE: &str = "refs/eddie/checkpoints/";

/// The arguments of `git_checkpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// A note kept with the checkpoint.
    pub message: Option<String>,
}

/// One file of a snapshot: blob id and mode.
type Files = BTreeMap<String, (git2::Oid, i32)>;

/// The working tree's files inside the workspace (tracked and untracked, not ignored) with
/// their blob ids, hashed without writing anything; `write` stores the blobs too.
pub(super) fn worktree_files(repo: &git2::Repository, scope: &Scope, write: bool) -> Result<Files> {
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
pub(super) fn tree_files(scope: &Scope, tree: &git2::Tree<'_>) -> Result<Files> {
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
pub(super) fn take(
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

pub(super) fn checkpoint_ref<'r>(repo: &'r git2::Repository, spec: &str) -> Result<git2::Reference<'r>> {
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

pub(super) fn list(repo: &git2::Repository) -> Result<Vec<Value>> {
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
    Ok(ToolOutput::new(content, data))
}

/// The `git_checkpoint` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_checkpoint",
    js_name: "gitCheckpoint",
    family: "git",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[("repo_path", "path"), ("note", "message"), ("label", "message"), ("name", "message")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_checkpoint.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move { run(crate::call::args::parse("git_checkpoint", args)?, ctx).await })
    },
};
