//! `git_restore_checkpoint`: puts the files of a checkpoint ([`super::git_checkpoint`]) back as
//! they were (writing changed files and removing files the checkpoint did not have), and first
//! takes a checkpoint of the current state, so a restore can itself be undone. It never touches
//! the index, HEAD or any branch.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::git_checkpoint::{NAMESPACE, checkpoint_ref, take, tree_files, worktree_files};
use super::{common, lock};
use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// The arguments of `git_restore_checkpoint`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The checkpoint: its id (from git_list_checkpoints), its full ref, or `latest`.
    pub checkpoint: String,
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
pub async fn run_restore(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
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
    Ok(ToolOutput::new(content, data))
}

/// The `git_restore_checkpoint` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_restore_checkpoint",
    js_name: "gitRestoreCheckpoint",
    family: "git",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[("repo_path", "path"), ("id", "checkpoint"), ("name", "checkpoint"), ("ref", "checkpoint")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_restore_checkpoint.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(
            async move { run_restore(crate::call::args::parse("git_restore_checkpoint", args)?, ctx).await },
        )
    },
};
