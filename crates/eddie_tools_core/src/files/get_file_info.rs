//! `get_file_info`: metadata of a file or directory (Floyd `get_file_info`): type, size,
//! times, permissions, symlink target, and for regular files the text facts a reader needs
//! (binary, encoding, BOM, line endings, line count, content hash).

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{non_empty, own_path};
use crate::context::Ctx;
use crate::engine::text::line_index as index;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "get_file_info";

/// The arguments of `get_file_info`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
}

fn iso(t: std::io::Result<std::time::SystemTime>) -> Value {
    t.ok().map_or(Value::Null, |t| {
        json!(chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    })
}

fn rwx(mode: u32) -> String {
    let mut s = String::with_capacity(9);
    for shift in [6, 3, 0] {
        let b = (mode >> shift) & 7;
        s.push(if b & 4 != 0 { 'r' } else { '-' });
        s.push(if b & 2 != 0 { 'w' } else { '-' });
        s.push(if b & 1 != 0 { 'x' } else { '-' });
    }
    s
}

/// Run `get_file_info`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let (r, own) = own_path(ctx, &path)?;
    let shown = path.clone();
    let data = crate::blocking("get_file_info", move || {
        let lmeta = std::fs::symlink_metadata(&own).map_err(|e| ToolError::fs(&e, "lstat", Some(&r.lexical)))?;
        let link = lmeta.file_type().is_symlink();
        let target = if link { std::fs::read_link(&own).ok().map(|t| t.display().to_string()) } else { None };
        let meta = std::fs::metadata(&r.real).map_err(|e| ToolError::fs(&e, "stat", Some(&r.lexical)))?;
        let kind = if meta.is_dir() { "directory" } else if meta.is_file() { "file" } else { "other" };
        let mode = crate::engine::platform::mode(&meta);
        let mut d = json!({
            "path": shown, "type": kind, "size": meta.len(), "modified": iso(meta.modified()),
            "accessed": iso(meta.accessed()), "created": iso(meta.created()), "mode": format!("{mode:04o}"),
            "permissions": rwx(mode), "executable": meta.is_file() && crate::engine::platform::is_executable(&r.real, &meta),
            "readonly": mode & 0o222 == 0, "isSymlink": link, "symlinkTarget": target,
            "entries": null, "binary": null, "encoding": null, "bom": null, "eol": null, "lines": null, "hash": null,
        });
        if meta.is_dir() {
            d["entries"] = json!(std::fs::read_dir(&r.real).map(Iterator::count).unwrap_or(0));
        } else if meta.is_file() {
            let f = std::fs::File::open(&r.real).map_err(|e| ToolError::fs(&e, "open", Some(&r.lexical)))?;
            let idx = index::get(&r.real, &f, &meta, Path::new(&r.lexical))?;
            d["binary"] = json!(idx.det.binary);
            d["hash"] = json!(idx.hash);
            if !idx.det.binary {
                d["encoding"] = json!(idx.det.enc.name());
                d["bom"] = json!(idx.det.bom);
                d["lines"] = json!(idx.lines);
                d["eol"] = json!(match (idx.lf, idx.crlf) {
                    (0, _) => "none",
                    (lf, c) if c == lf => "crlf",
                    (_, 0) => "lf",
                    _ => "mixed",
                });
            }
        }
        Ok(d)
    })
    .await?;
    let mut content = format!(
        "{}: {}, {} bytes, {} ({}), modified {}",
        path,
        data["type"].as_str().unwrap_or_default(),
        data["size"],
        data["permissions"].as_str().unwrap_or_default(),
        data["mode"].as_str().unwrap_or_default(),
        data["modified"].as_str().unwrap_or("?")
    );
    if let Some(t) = data["symlinkTarget"].as_str() {
        content.push_str(&format!(", symlink to {t}"));
    }
    if data["binary"] == json!(true) {
        content.push_str(", binary");
    } else if let Some(enc) = data["encoding"].as_str() {
        content.push_str(&format!(
            ", {enc}{}, {} lines, {} line endings",
            if data["bom"] == json!(true) { " with BOM" } else { "" },
            data["lines"],
            data["eol"].as_str().unwrap_or_default()
        ));
    }
    if let Some(n) = data["entries"].as_u64() {
        content.push_str(&format!(", {n} entries"));
    }
    Ok(ToolOutput::new(content, data))
}

/// The `get_file_info` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "getFileInfo",
    family: "files",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("get_file_info.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
