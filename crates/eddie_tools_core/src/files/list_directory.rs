//! `list_directory`: the entries of a directory, optionally recursive (Floyd
//! `list_directory` with `recursive`/`includeHidden`, TunaCode `list_dir` with type markers
//! and `max_entries`, Alfredo `list_files` with sizes).
//!
//! Markers: `/` directory, `*` executable file, `@` symlink, `?` other. Directories come
//! first, then files, each sorted by name (per directory when recursive). Hidden entries are
//! left out unless `includeHidden`; `.gitignore`d ones are left out when `respectGitignore`
//! (default: on when recursive, off otherwise). Symlinks are listed, never followed.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::args::lenient::{Cap, Flag};
use crate::context::Ctx;
use crate::engine::walk::{self, Entry, Root, Stop, Visitor, WalkOptions};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Rows kept for sorting before `maxEntries` cuts them (counting goes on past it).
const MAX_ROWS: usize = 100_000;

const NAME: &str = "list_directory";

/// The arguments of `list_directory` (aliases are renamed by the spec's pairs).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Directory (default: the workspace root; also: directory).
    pub path: Option<String>,
    /// Walk subdirectories too.
    recursive: Option<Flag>,
    /// Include dot files (also: show_hidden).
    pub include_hidden: Option<Flag>,
    /// Leave out .gitignored entries (default: true when recursive).
    pub respect_gitignore: Option<Flag>,
    /// Most entries to return (also: max_entries).
    pub max_entries: Option<Cap>,
    /// Deepest level when recursive.
    pub max_depth: Option<Cap>,
}

fn marker(
    path: &std::path::Path,
    ft: &std::fs::FileType,
    meta: Option<&std::fs::Metadata>,
) -> (&'static str, &'static str) {
    if ft.is_symlink() {
        ("symlink", "@")
    } else if ft.is_dir() {
        ("directory", "/")
    } else if ft.is_file() {
        if meta.is_some_and(|m| crate::engine::platform::is_executable(path, m)) {
            ("file", "*")
        } else {
            ("file", "")
        }
    } else {
        ("other", "?")
    }
}

/// The listing, in walking order: rows (up to [`MAX_ROWS`]) with their sort keys, and counts.
struct Listing {
    recursive: bool,
    rows: Vec<(String, Value)>,
    total: usize,
    dirs: usize,
    files: usize,
}

impl Visitor for Listing {
    fn visit(&mut self, e: &Entry<'_>, _: &Stop) -> bool {
        let meta = std::fs::symlink_metadata(e.path).ok();
        let (kind, mark) = marker(e.path, &e.file_type, meta.as_ref());
        self.total += 1;
        if kind == "directory" {
            self.dirs += 1;
        } else {
            self.files += 1;
        }
        if self.rows.len() >= MAX_ROWS {
            return true;
        }
        let name = e.rel.rsplit('/').next().unwrap_or(e.rel);
        let size = if kind == "file" { meta.as_ref().map(std::fs::Metadata::len) } else { None };
        let key = sort_key(e.rel, kind == "directory", self.recursive);
        self.rows
            .push((key, json!({"path": e.rel, "name": name, "type": kind, "marker": mark, "size": size})));
        true
    }
}

/// Run `list_directory`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = a.path.filter(|p| !p.is_empty()).unwrap_or_else(|| ".".into());
    let recursive = Flag::on(a.recursive);
    let hidden = Flag::on(a.include_hidden);
    let gitignore = Flag::or(a.respect_gitignore, recursive);
    let default_max = if recursive { 1000 } else { 200 };
    let max = Cap::or(a.max_entries, default_max);
    let depth = a.max_depth.map(|d| d.0);
    let r = ctx.workspace.resolve(&path)?;
    let workspace_real = crate::workspace::realpath(ctx.workspace.root())?;
    let shown = path.clone();
    let (entries, total, dirs, files, left_out) = crate::blocking(NAME, move || {
        let meta = std::fs::metadata(&r.real).map_err(|e| ToolError::fs(&e, "scandir", Some(&r.lexical)))?;
        if !meta.is_dir() {
            return Err(ToolError::fs(
                &std::io::Error::from_raw_os_error(libc::ENOTDIR),
                "scandir",
                Some(&r.lexical),
            ));
        }
        let mut listing = Listing { recursive, rows: Vec::new(), total: 0, dirs: 0, files: 0 };
        let mut left_out = 0usize;
        // A directory that cannot be read lists as empty.
        if std::fs::read_dir(&r.real).is_ok() {
            let opts = WalkOptions {
                respect_gitignore: gitignore,
                include_hidden: hidden,
                max_depth: if recursive { depth } else { Some(1) },
                visit_dirs: true,
                list_all: true,
                sorted: true,
                ..Default::default()
            };
            let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
            let root = Root { real: r.real.clone(), rel: String::new() };
            let (mut walked, counts) = walk::walk(&workspace_real, &root, &opts, &stop, || Listing {
                recursive,
                rows: Vec::new(),
                total: 0,
                dirs: 0,
                files: 0,
            })?;
            listing = walked.pop().unwrap_or(listing);
            // Entries left out as hidden or ignored, in the directories that were listed.
            if !hidden || gitignore {
                let (g, h, e) = counts.parts();
                left_out = g + h + e;
            }
        }
        let Listing { mut rows, total, dirs, files, .. } = listing;
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.truncate(max);
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
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "list_directory",
    js_name: "listDirectory",
    family: "files",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
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
    // Alfredo `list_files`, TunaCode `list_dir`
    tool_aliases: &["list_files", "list_dir"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("list_directory.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
