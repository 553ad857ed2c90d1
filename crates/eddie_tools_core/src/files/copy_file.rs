//! `copy_file`: copy a file, or a directory recursively (Stack `copy`). The destination must
//! not exist unless `overwrite`; an existing directory as destination receives the source by
//! name (like `cp`). Every file of a copy lands in one all-or-nothing commit. Symlinks inside
//! a copied directory are skipped and listed, never followed.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{inside, non_empty};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::store::commit::{Change, commit};
use crate::error::{ErrorCode, Result, ToolError, exists_error};
use crate::output::ToolOutput;

/// Most bytes one directory copy may move (it is staged in memory).
const MAX_BYTES: u64 = 512 << 20;
/// Most files one directory copy may move.
const MAX_FILES: usize = 20_000;

const NAME: &str = "copy_file";

/// The arguments of `copy_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File or folder to copy, relative to the workspace.
    #[schemars(length(min = 1))]
    source: String,
    /// Where to copy it, relative to the workspace.
    #[schemars(length(min = 1))]
    destination: String,
    /// Replace existing files.
    pub overwrite: Option<Flag>,
}

/// The seeds' spellings of `source` and `destination` (`copy_file`, `move_file`).
pub const ENDPOINT_ALIASES: &[(&str, &str)] = &[
    ("src", "source"),
    ("from", "source"),
    ("sourcePath", "source"),
    ("dest", "destination"),
    ("to", "destination"),
    ("destinationPath", "destination"),
    ("target", "destination"),
    ("force", "overwrite"),
];

/// The source and destination of a copy or move, both non-empty.
pub fn endpoints(source: String, destination: String) -> Result<(String, String)> {
    Ok((non_empty("source", source)?, non_empty("destination", destination)?))
}

/// Where `source` lands when `dest` names an existing directory.
pub fn landing(ctx: &Ctx, source: &str, dest: &str) -> Result<String> {
    let d = ctx.workspace.resolve(dest)?;
    if std::fs::metadata(&d.real).is_ok_and(|m| m.is_dir()) {
        let name =
            Path::new(source).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !name.is_empty() {
            return Ok(format!("{}/{name}", dest.trim_end_matches('/')));
        }
    }
    Ok(dest.to_owned())
}

/// Run `copy_file`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let (source, dest) = endpoints(a.source, a.destination)?;
    let overwrite = Flag::on(a.overwrite);
    let src = ctx.workspace.resolve(&source)?;
    ctx.workspace.resolve(&dest)?;
    let dest = landing(ctx, &source, &dest)?;
    let dst = ctx.workspace.resolve(&dest)?;
    let (sreal, dreal, shown) = (src.real.clone(), dst.real.clone(), source.clone());
    let dshown = dest.clone();
    let plan = crate::blocking("copy_file", move || plan(&sreal, &dreal, &shown, &dshown, overwrite)).await?;
    let files = plan.changes.len();
    let bytes: u64 = plan.changes.iter().map(|c| c.new.as_ref().map_or(0, |b| b.len() as u64)).sum();
    if !ctx.confirm(format!("Copy {source} to {dest}")).await? {
        return Ok(ToolOutput::new(
            format!("Copy of {source} cancelled by user; nothing changed."),
            json!({"source": source, "destination": dest, "copied": false, "cancelled": true, "files": 0, "bytes": 0, "overwritten": false, "skipped": []}),
        ));
    }
    ctx.workspace.resolve(&dest)?;
    let overwritten = plan.changes.iter().any(|c| c.old.is_some());
    let modes = plan.modes.clone();
    let changes = plan.changes;
    crate::blocking("copy_file", move || {
        commit(&changes)?;
        for (p, mode) in modes {
            let _ = crate::engine::platform::set_mode(&p, mode);
        }
        Ok(())
    })
    .await?;
    let skipped = plan.skipped;
    let note = if skipped.is_empty() {
        String::new()
    } else {
        format!(" Skipped {} symlink(s): {}.", skipped.len(), skipped.join(", "))
    };
    Ok(ToolOutput::new(
        format!("Copied {source} to {dest} ({files} file(s), {bytes} bytes).{note}"),
        json!({"source": source, "destination": dest, "copied": true, "cancelled": false, "files": files, "bytes": bytes, "overwritten": overwritten, "skipped": skipped}),
    ))
}

struct Plan {
    changes: Vec<Change>,
    modes: Vec<(PathBuf, u32)>,
    skipped: Vec<String>,
}

fn plan(src: &Path, dst: &Path, shown: &str, dshown: &str, overwrite: bool) -> Result<Plan> {
    use crate::engine::platform::mode;
    let meta = std::fs::metadata(src).map_err(|e| ToolError::fs(&e, "stat", Some(Path::new(shown))))?;
    if meta.is_dir() && inside(dst, src) {
        return Err(ToolError::invalid(format!("cannot copy {shown} into itself ({dshown})")));
    }
    if dst == src {
        return Err(ToolError::invalid(format!("{shown} and {dshown} are the same file")));
    }
    let mut p = Plan { changes: Vec::new(), modes: Vec::new(), skipped: Vec::new() };
    let mut total = 0u64;
    let mut add = |from: &Path, to: &Path, rel: &str, mode: u32, p: &mut Plan| -> Result<()> {
        let show_to = if rel.is_empty() { dshown.to_owned() } else { format!("{dshown}/{rel}") };
        let old = match std::fs::symlink_metadata(to) {
            Ok(m) if m.is_dir() => return Err(exists_error(&show_to, "it is a directory")),
            Ok(_) if !overwrite => return Err(exists_error(&show_to, "pass overwrite: true to replace it")),
            Ok(_) => {
                Some(std::fs::read(to).map_err(|e| ToolError::fs(&e, "open", Some(Path::new(&show_to))))?)
            }
            Err(_) => None,
        };
        let bytes = std::fs::read(from).map_err(|e| ToolError::fs(&e, "open", Some(from)))?;
        total += bytes.len() as u64;
        if total > MAX_BYTES || p.changes.len() >= MAX_FILES {
            return Err(ToolError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "{shown} is too large to copy in one call (limit {MAX_FILES} files, {} MB)",
                    MAX_BYTES >> 20
                ),
            ));
        }
        p.changes.push(Change {
            display: show_to,
            real: to.to_path_buf(),
            old,
            new: Some(bytes),
            seen: None,
        });
        p.modes.push((to.to_path_buf(), mode));
        Ok(())
    };
    super::regular(&meta, shown)?;
    if !meta.is_dir() {
        add(src, dst, "", mode(&meta), &mut p)?;
        return Ok(p);
    }
    let mut stack = vec![(src.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .map_err(|e| ToolError::fs(&e, "scandir", Some(&dir)))?
            .filter_map(std::result::Result::ok)
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
            let m = std::fs::symlink_metadata(e.path())
                .map_err(|x| ToolError::fs(&x, "lstat", Some(&e.path())))?;
            if m.file_type().is_symlink() {
                p.skipped.push(format!("{shown}/{r}"));
            } else if m.is_dir() {
                stack.push((e.path(), r));
            } else if m.is_file() {
                add(&e.path(), &dst.join(&r), &r, mode(&m), &mut p)?;
            }
        }
    }
    Ok(p)
}

/// The `copy_file` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "copyFile",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: ENDPOINT_ALIASES,
    // Stack `copy`
    tool_aliases: &["copy"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("copy_file.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
