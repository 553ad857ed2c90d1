//! `move_file`: move or rename a file or directory with one `rename` (Stack `move`). The
//! destination must not exist unless `overwrite` (files only); an existing directory as
//! destination receives the source by name. A symlink is moved as the link itself.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{inside, not_root, own_path};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::error::{Result, ToolError, exists_error};
use crate::files::copy_file::{endpoints, landing};
use crate::output::ToolOutput;

const NAME: &str = "move_file";

/// The arguments of `move_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File or folder to move, relative to the workspace.
    #[schemars(length(min = 1))]
    source: String,
    /// New path, relative to the workspace.
    #[schemars(length(min = 1))]
    destination: String,
    /// Replace an existing file.
    pub overwrite: Option<Flag>,
}

/// Run `move_file`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let (source, dest) = endpoints(a.source, a.destination)?;
    let overwrite = Flag::on(a.overwrite);
    let (src, src_own) = own_path(ctx, &source)?;
    not_root(ctx, &src, &source, "moved")?;
    ctx.workspace.resolve(&dest)?;
    let dest = landing(ctx, &source, &dest)?;
    let (_, dst_own) = own_path(ctx, &dest)?;
    let (s, d) = (src_own.clone(), dst_own.clone());
    let (ss, ds) = (source.clone(), dest.clone());
    let overwritten = crate::blocking("move_file", move || check(&s, &d, &ss, &ds, overwrite)).await?;
    if !ctx.confirm(format!("Move {source} to {dest}")).await? {
        return Ok(ToolOutput::new(
            format!("Move of {source} cancelled by user; nothing changed."),
            json!({"source": source, "destination": dest, "moved": false, "cancelled": true, "overwritten": false}),
        ));
    }
    let (_, src_again) = own_path(ctx, &source)?;
    let (_, dst_again) = own_path(ctx, &dest)?;
    let (ss, ds) = (source.clone(), dest.clone());
    crate::blocking("move_file", move || {
        check(&src_again, &dst_again, &ss, &ds, overwrite)?;
        if let Some(parent) = dst_again.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ToolError::fs(&e, "mkdir", Some(parent)))?;
        }
        std::fs::rename(&src_again, &dst_again)
            .map_err(|e| ToolError::fs(&e, "rename", Some(std::path::Path::new(&ss))))
    })
    .await?;
    Ok(ToolOutput::new(
        format!("Moved {source} to {dest}."),
        json!({"source": source, "destination": dest, "moved": true, "cancelled": false, "overwritten": overwritten}),
    ))
}

/// Checks before the rename; returns whether a file is replaced.
fn check(src: &std::path::Path, dst: &std::path::Path, ss: &str, ds: &str, overwrite: bool) -> Result<bool> {
    let m = std::fs::symlink_metadata(src)
        .map_err(|e| ToolError::fs(&e, "lstat", Some(std::path::Path::new(ss))))?;
    if src == dst {
        return Err(ToolError::invalid(format!("{ss} and {ds} are the same path")));
    }
    if m.is_dir() && inside(dst, src) {
        return Err(ToolError::invalid(format!("cannot move {ss} into itself ({ds})")));
    }
    match std::fs::symlink_metadata(dst) {
        Ok(dm) if dm.is_dir() => Err(exists_error(ds, "it is a directory")),
        Ok(_) if !overwrite => Err(exists_error(ds, "pass overwrite: true to replace it")),
        Ok(_) if m.is_dir() => Err(exists_error(ds, "a directory cannot replace a file")),
        Ok(_) => Ok(true),
        Err(_) => Ok(false),
    }
}

/// The `move_file` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "moveFile",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: crate::files::copy_file::ENDPOINT_ALIASES,
    // Stack `move`
    tool_aliases: &["move"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("move_file.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
