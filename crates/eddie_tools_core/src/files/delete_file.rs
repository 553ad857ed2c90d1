//! `delete_file`: delete a file or a directory tree (Stack `delete`). Without `force: true`
//! nothing is deleted: the result says what would be (Stack's `would_delete`). With it, the
//! confirm names the path. A symlink is deleted as the link; a tree delete never follows
//! links; the workspace root cannot be deleted.

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{non_empty, not_root, own_path};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "delete_file";

/// The arguments of `delete_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// Actually delete (default false: report only).
    pub force: Option<Flag>,
}

/// Files and bytes under `p` (not following links); `(kind, files, bytes)`.
fn survey(p: &Path, shown: &str) -> Result<(&'static str, u64, u64)> {
    let m = std::fs::symlink_metadata(p).map_err(|e| ToolError::fs(&e, "lstat", Some(Path::new(shown))))?;
    if m.file_type().is_symlink() {
        return Ok(("symlink", 1, 0));
    }
    if !m.is_dir() {
        return Ok(("file", 1, m.len()));
    }
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| ToolError::fs(&e, "scandir", Some(&d)))?.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => {
                    files += 1;
                    bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
                }
                Err(_) => {}
            }
        }
    }
    Ok(("directory", files, bytes))
}

/// Run `delete_file`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let force = Flag::on(a.force);
    let (r, own) = own_path(ctx, &path)?;
    not_root(ctx, &r, &path, "deleted")?;
    let (o, s) = (own.clone(), path.clone());
    let (kind, files, bytes) = crate::blocking("delete_file", move || survey(&o, &s)).await?;
    let what = if kind == "directory" {
        format!("directory {path} ({files} files, {bytes} bytes)")
    } else {
        format!("{kind} {path} ({bytes} bytes)")
    };
    let base = json!({"path": path, "type": kind, "files": files, "bytes": bytes});
    let with = |deleted: bool, cancelled: bool, would: bool| {
        let mut d = base.clone();
        d["deleted"] = json!(deleted);
        d["cancelled"] = json!(cancelled);
        d["wouldDelete"] = json!(would);
        d
    };
    if !force {
        return Ok(ToolOutput::new(
            format!("Would delete {what}. Nothing was deleted: pass force: true to delete it."),
            with(false, false, true),
        ));
    }
    let prompt = if kind == "directory" {
        format!("Delete directory: {path} ({files} files)")
    } else {
        format!("Delete file: {path}")
    };
    if !ctx.confirm(prompt).await? {
        return Ok(ToolOutput::new(
            format!("Delete of {path} cancelled by user; nothing changed."),
            with(false, true, false),
        ));
    }
    let (r2, own2) = own_path(ctx, &path)?;
    not_root(ctx, &r2, &path, "deleted")?;
    let shown = path.clone();
    crate::blocking("delete_file", move || {
        let m = std::fs::symlink_metadata(&own2)
            .map_err(|e| ToolError::fs(&e, "lstat", Some(Path::new(&shown))))?;
        let res = if m.is_dir() { std::fs::remove_dir_all(&own2) } else { std::fs::remove_file(&own2) };
        res.map_err(|e| ToolError::fs(&e, "rm", Some(Path::new(&shown))))
    })
    .await?;
    Ok(ToolOutput::new(format!("Deleted {what}."), with(true, false, false)))
}

/// The `delete_file` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "deleteFile",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    // Stack `delete`
    tool_aliases: &["delete"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("delete_file.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
