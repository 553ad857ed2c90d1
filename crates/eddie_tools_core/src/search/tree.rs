//! `get_folder_tree_structure`: the directory tree under a path, with a paged flat view.
//!
//! Each directory is listed in `localeCompare(name, "en", {sensitivity: "base"})` order;
//! ties keep byte order (Node's `readdir` order). Symlinks are listed as files and never
//! followed. The nested `entries` tree is always complete; `maxEntries`/`offset` page the
//! flat `pageEntries` list.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::collate::{Sensitivity, sort_by_collation};
use super::is_dependency_dir;
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::js;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.get_folder_tree_structure.result.v1";
/// Default page of flat entries.
pub const DEFAULT_MAX_ENTRIES: f64 = 200.0;

#[derive(Debug, Clone, Copy)]
struct Options {
    max_depth: Option<f64>,
    include_hidden: bool,
    include_dependencies: bool,
}

/// Run the tool.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let requested = match args.get("path") {
        None | Some(Value::Null) => ".".to_owned(),
        Some(v) => js::string(v),
    };
    let root_label = if requested.is_empty() { ".".to_owned() } else { requested.clone() };
    let resolved = ctx.workspace.resolve(&requested)?;
    let opts = Options {
        max_depth: js::real_number(args.get("maxDepth")).map(|d| d.floor().max(0.0)),
        include_hidden: js::truthy(args.get("includeHidden")),
        include_dependencies: js::truthy(args.get("includeDependencies")),
    };
    let max_entries =
        js::real_number(args.get("maxEntries")).map_or(DEFAULT_MAX_ENTRIES, |m| m.floor().max(1.0));
    let offset = js::real_number(args.get("offset")).map_or(0.0, |o| o.floor().max(0.0));
    let prefix = ctx.workspace.relative(&resolved.lexical);
    let cancel = ctx.cancel.clone();
    let (entries, flat) = crate::blocking("get_folder_tree_structure", move || {
        let mut flat = Vec::new();
        let entries = walk(&resolved.real, &resolved.lexical, &prefix, 0.0, opts, &mut flat, &cancel)?;
        Ok((entries, flat))
    })
    .await?;

    let total = flat.len();
    let offset = offset.min(total as f64) as usize;
    let limit =
        if max_entries >= total as f64 { total - offset } else { (max_entries as usize).min(total - offset) };
    let page: Vec<String> = flat.into_iter().skip(offset).take(limit).collect();
    let returned = page.len();
    let has_more = offset + returned < total;
    let header = if offset > 0 {
        format!("Tree for {root_label} (showing {returned} of {total} entries starting at offset {offset})")
    } else {
        format!("Tree for {root_label} (showing {returned} of {total} entries)")
    };
    let content = if page.is_empty() { header } else { format!("{header}\n{}", page.join("\n")) };
    let data = json!({
        "root": root_label,
        "entries": entries,
        "pageEntries": page,
        "pagination": {
            "limit": max_entries as i64,
            "offset": offset,
            "returnedEntries": returned,
            "totalEntries": total,
            "hasMore": has_more,
            "nextOffset": if has_more { json!(offset + returned) } else { Value::Null },
        },
    });
    Ok(ToolOutput::new(SCHEMA, content, data))
}

fn walk(
    real: &Path,
    lexical: &Path,
    prefix: &str,
    depth: f64,
    opts: Options,
    flat: &mut Vec<String>,
    cancel: &crate::context::Cancel,
) -> Result<Vec<Value>> {
    cancel.check()?;
    let read = std::fs::read_dir(real).map_err(|e| ToolError::fs(&e, "scandir", Some(lexical)))?;
    let mut children: Vec<(String, bool, PathBuf)> = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| ToolError::fs(&e, "scandir", Some(lexical)))?;
        let name = entry.file_name();
        let bytes = name.as_bytes();
        if !opts.include_hidden && bytes.first() == Some(&b'.') {
            continue;
        }
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir && !opts.include_dependencies && is_dependency_dir(bytes) {
            continue;
        }
        children.push((name.to_string_lossy().into_owned(), is_dir, entry.path()));
    }
    children.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    sort_by_collation(&mut children, Sensitivity::Base, |c| &c.0);
    let mut out = Vec::with_capacity(children.len());
    for (name, is_dir, path) in children {
        let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        if is_dir {
            flat.push(format!("{rel}/"));
            let nested = if opts.max_depth.is_none_or(|m| depth < m) {
                walk(&path, &lexical.join(&name), &rel, depth + 1.0, opts, flat, cancel)?
            } else {
                Vec::new()
            };
            out.push(json!({"name": name, "path": rel, "type": "directory", "entries": nested}));
        } else {
            flat.push(rel.clone());
            out.push(json!({"name": name, "path": rel, "type": "file"}));
        }
    }
    Ok(out)
}
