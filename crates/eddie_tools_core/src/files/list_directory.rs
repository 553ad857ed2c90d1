//! `list_directory`: the entries of a directory, optionally recursive (Floyd
//! `list_directory` with `recursive`/`includeHidden`, TunaCode `list_dir` with type markers
//! and `max_entries`, Alfredo `list_files` with sizes).
//!
//! Markers: `/` directory, `*` executable file, `@` symlink, `?` other. Directories come
//! first, then files, each sorted by name (per directory when recursive). Hidden entries are
//! left out unless `includeHidden`; `.gitignore`d ones are left out when `respectGitignore`
//! (default: on when recursive, off otherwise). Symlinks are listed, never followed.

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{arg, flag, opt_int, opt_str};
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Rows kept for sorting before `maxEntries` cuts them (counting goes on past it).
const MAX_ROWS: usize = 100_000;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.list_directory.result.v1";

fn marker(ft: &std::fs::FileType, meta: Option<&std::fs::Metadata>) -> (&'static str, &'static str) {
    if ft.is_symlink() {
        ("symlink", "@")
    } else if ft.is_dir() {
        ("directory", "/")
    } else if ft.is_file() {
        if meta.is_some_and(|m| m.permissions().mode() & 0o111 != 0) { ("file", "*") } else { ("file", "") }
    } else {
        ("other", "?")
    }
}

/// Run `list_directory`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path =
        opt_str(args, &["path", "directory", "dir"])?.filter(|p| !p.is_empty()).unwrap_or_else(|| ".".into());
    let recursive = flag(args, &["recursive"]);
    let hidden = flag(args, &["includeHidden", "include_hidden", "showHidden", "show_hidden"]);
    let gitignore = match arg(args, &["respectGitignore", "respect_gitignore"]) {
        None => recursive,
        Some(_) => flag(args, &["respectGitignore", "respect_gitignore"]),
    };
    let default_max = if recursive { 1000 } else { 200 };
    let max =
        opt_int(args, &["maxEntries", "max_entries", "limit"])?.map_or(default_max, |n| n.max(1) as usize);
    let depth = opt_int(args, &["maxDepth", "max_depth"])?.map(|d| d.max(1) as usize);
    let r = ctx.workspace.resolve(&path)?;
    let shown = path.clone();
    let (entries, total, dirs, files, left_out) = crate::blocking("list_directory", move || {
        let meta = std::fs::metadata(&r.real).map_err(|e| ToolError::fs(&e, "scandir", Some(&r.lexical)))?;
        if !meta.is_dir() {
            return Err(ToolError::fs(&std::io::Error::from_raw_os_error(libc::ENOTDIR), "scandir", Some(&r.lexical)));
        }
        let walker = ignore::WalkBuilder::new(&r.real)
            .hidden(!hidden)
            .git_ignore(gitignore)
            .git_exclude(gitignore)
            .git_global(false)
            .ignore(gitignore)
            .parents(gitignore)
            .require_git(false)
            .follow_links(false)
            .max_depth(if recursive { depth } else { Some(1) })
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(|e| e.file_name() != ".git" || e.depth() == 0 || !e.file_type().is_some_and(|t| t.is_dir()))
            .build();
        let mut rows: Vec<(String, Value)> = Vec::new();
        let (mut total, mut dirs, mut files) = (0usize, 0usize, 0usize);
        let mut included: HashSet<PathBuf> = HashSet::new();
        let mut listed_dirs: Vec<(PathBuf, usize)> = vec![(r.real.clone(), 0)];
        for e in walker.flatten() {
            if e.depth() == 0 {
                continue;
            }
            let Some(ft) = e.file_type() else { continue };
            let meta = std::fs::symlink_metadata(e.path()).ok();
            let (kind, mark) = marker(&ft, meta.as_ref());
            total += 1;
            included.insert(e.path().to_path_buf());
            if kind == "directory" {
                dirs += 1;
                listed_dirs.push((e.path().to_path_buf(), e.depth()));
            } else {
                files += 1;
            }
            if rows.len() >= MAX_ROWS {
                continue;
            }
            let rel = e.path().strip_prefix(&r.real).unwrap_or(e.path()).to_string_lossy().into_owned();
            let size = if kind == "file" { meta.as_ref().map(std::fs::Metadata::len) } else { None };
            let key = sort_key(&rel, kind == "directory", recursive);
            rows.push((key, json!({"path": rel, "name": e.file_name().to_string_lossy(), "type": kind, "marker": mark, "size": size})));
        }
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.truncate(max);
        // Entries left out as hidden or ignored, in the directories that were listed (their
        // contents are not walked: one `read_dir` per listed directory).
        let limit = if recursive { depth.unwrap_or(usize::MAX) } else { 1 };
        let mut left_out = 0usize;
        if !hidden || gitignore {
            for (dir, d) in &listed_dirs {
                if *d >= limit {
                    continue;
                }
                if let Ok(rd) = std::fs::read_dir(dir) {
                    left_out += rd.flatten().filter(|e| !included.contains(&e.path())).count();
                }
            }
        }
        Ok((rows.into_iter().map(|r| r.1).collect::<Vec<_>>(), total, dirs, files, left_out))
    })
    .await?;
    let truncated = total > entries.len();
    let mut content = format!("Contents of {shown}{}:\n", if recursive { " (recursive)" } else { "" });
    for e in &entries {
        let size = e["size"].as_u64().map(|s| format!("  ({s} bytes)")).unwrap_or_default();
        content.push_str(&format!(
            "  {}{}{size}\n",
            e["path"].as_str().unwrap_or_default(),
            e["marker"].as_str().unwrap_or_default()
        ));
    }
    content.push_str(&format!("Total: {total} entries ({dirs} directories, {files} files)"));
    if truncated {
        content.push_str(&format!("; showing the first {} (raise maxEntries for more)", entries.len()));
    }
    if left_out > 0 {
        content.push_str(&format!(
            "\n{left_out} hidden or .gitignored entries not listed (includeHidden: true, respectGitignore: false to see them)"
        ));
    }
    Ok(ToolOutput::new(
        SCHEMA,
        content,
        json!({"path": shown, "entries": entries, "total": total, "directories": dirs, "files": files, "truncated": truncated, "hiddenByIgnore": left_out}),
    ))
}

/// Directories before files at each level, then by name.
fn sort_key(rel: &str, is_dir: bool, recursive: bool) -> String {
    if !recursive {
        return format!("{}{rel}", if is_dir { '0' } else { '1' });
    }
    let parts: Vec<&str> = rel.split('/').collect();
    let n = parts.len();
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{}{p}", if i + 1 < n || is_dir { '0' } else { '1' }))
        .collect::<Vec<_>>()
        .join("\u{0}")
}

/// The `list_directory` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "list_directory",
    js_name: "listDirectory",
    family: "files",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[
        ("directory", "path"),
        ("dir", "path"),
        ("include_hidden", "includeHidden"),
        ("showHidden", "includeHidden"),
        ("show_hidden", "includeHidden"),
        ("respect_gitignore", "respectGitignore"),
        ("max_entries", "maxEntries"),
        ("limit", "maxEntries"),
        ("max_depth", "maxDepth"),
    ],
    definition: include_str!("list_directory.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
