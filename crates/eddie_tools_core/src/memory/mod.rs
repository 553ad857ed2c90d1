//! The `memory` family: Stack's memory tools on a human-readable `MEMORY.md` (`memory_save`,
//! `memory_delete`, `memory_list`, `memory_recall` with BM25), Stack's task and plan tools on
//! the task-list store eddie's `agent__*` tools use, Floyd's SUPERCACHE (`cache_*`: an
//! in-process tier, and SQLite-backed project and user tiers), and Stack's `context_load` and
//! `project_scan`. See the README.

pub mod bm25;
pub mod cache;
pub mod context_load;
pub mod md;
pub mod memory_delete;
pub mod memory_list;
pub mod memory_recall;
pub mod memory_save;
pub mod project_scan;
pub mod tasks;

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::context::Ctx;
use crate::engine::store::locks::ProcessLock;
use crate::error::{ErrorCode, Result, ToolError};
use crate::spec::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "memory",
    tools: &[
        memory_save::TOOL,
        memory_delete::TOOL,
        memory_list::TOOL,
        memory_recall::TOOL,
        tasks::create_task::TOOL,
        tasks::list_tasks::TOOL,
        tasks::update_task::TOOL,
        tasks::delete_task::TOOL,
        tasks::create_plan::TOOL,
        tasks::execute_plan::TOOL,
        cache::cache_store::TOOL,
        cache::cache_retrieve::TOOL,
        cache::cache_delete::TOOL,
        cache::cache_clear::TOOL,
        cache::cache_keys::TOOL,
        cache::cache_stats::TOOL,
        context_load::TOOL,
        project_scan::TOOL,
    ],
    contract: None,
    contract_docs: &[],
    aliases: &[
        ("max_results", "maxResults"),
        ("limit", "maxResults"),
        ("task_id", "taskId"),
        ("id", "taskId"),
        ("plan_id", "planId"),
        ("task_list_name", "taskListName"),
        ("list", "taskListName"),
        ("content", "value"),
        ("title", "key"),
        ("ttl_ms", "ttl"),
        ("ttlMs", "ttl"),
        ("glob", "pattern"),
    ],
    partial_on_cancel: false,
};

/// Which `MEMORY.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The workspace's `MEMORY.md` (default).
    #[default]
    Project,
    /// The user's, under the OS config directory (`EDDIE_USER_DIR` overrides it).
    User,
}

/// The per-user directory: `EDDIE_USER_DIR`, else the OS config directory's `eddie` folder
/// (`$XDG_CONFIG_HOME/eddie` or `~/.config/eddie`; `~/Library/Application Support/eddie` on
/// macOS).
pub fn user_dir(ctx: &Ctx) -> Result<PathBuf> {
    let abs =
        |v: Option<String>| v.filter(|s| !s.trim().is_empty()).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(d) = abs(ctx.env_var("EDDIE_USER_DIR")) {
        return Ok(d);
    }
    let home = abs(ctx.env_var("HOME"));
    if cfg!(target_os = "macos")
        && let Some(h) = &home
    {
        return Ok(h.join("Library/Application Support/eddie"));
    }
    if let Some(x) = abs(ctx.env_var("XDG_CONFIG_HOME")) {
        return Ok(x.join("eddie"));
    }
    home.map(|h| h.join(".config/eddie")).ok_or_else(|| {
        ToolError::new(
            ErrorCode::StoreUnavailable,
            "no per-user directory: set EDDIE_USER_DIR (or HOME / XDG_CONFIG_HOME)",
        )
    })
}

/// A `MEMORY.md` to read or edit.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    /// The real path.
    pub real: PathBuf,
    /// How results name it (`MEMORY.md`, or the user file's absolute path).
    pub shown: String,
    /// Its scope.
    pub scope: Scope,
}

/// The `MEMORY.md` of `scope` (a project one through the workspace resolver).
pub fn memory_file(ctx: &Ctx, scope: Scope) -> Result<MemoryFile> {
    match scope {
        Scope::Project => {
            let r = ctx.workspace.resolve("MEMORY.md")?;
            Ok(MemoryFile { real: r.real, shown: "MEMORY.md".into(), scope })
        }
        Scope::User => {
            let p = user_dir(ctx)?.join("MEMORY.md");
            Ok(MemoryFile { shown: p.display().to_string(), real: p, scope })
        }
    }
}

fn unreadable(f: &MemoryFile, why: String) -> ToolError {
    ToolError::new(
        ErrorCode::Parse,
        format!("{} cannot be read as memory: {why}; nothing was changed", f.shown),
    )
    .with_prop("path", f.shown.clone())
}

/// The text of `f` (`""` when it does not exist). Not UTF-8, too large, a directory or not
/// readable: an error, so that nothing is written over a file that could not be read.
pub fn read_text(f: &MemoryFile) -> Result<String> {
    match std::fs::read(&f.real) {
        Ok(bytes) => {
            if bytes.len() > md::MAX_FILE_BYTES {
                return Err(ToolError::new(
                    ErrorCode::TooLarge,
                    format!("{} is {} bytes; the cap is {} bytes", f.shown, bytes.len(), md::MAX_FILE_BYTES),
                ));
            }
            String::from_utf8(bytes).map_err(|e| {
                unreadable(
                    f,
                    format!("it is not UTF-8 (invalid byte at offset {})", e.utf8_error().valid_up_to()),
                )
            })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(ToolError::fs(&e, "open", Some(std::path::Path::new(&f.shown)))),
    }
}

/// The index of `f` (cached per process while the file is unchanged).
pub fn index(f: &MemoryFile) -> Result<Arc<bm25::Index>> {
    let meta = match std::fs::metadata(&f.real) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolError::fs(&e, "stat", Some(std::path::Path::new(&f.shown)))),
    };
    let Some(meta) = meta else { return Ok(Arc::new(bm25::Index::build(String::new()))) };
    let stamp = bm25::Stamp::of(&meta);
    if let Some(ix) = bm25::cached(&f.real, stamp) {
        return Ok(ix);
    }
    let ix = Arc::new(bm25::Index::build(read_text(f)?));
    bm25::remember(&f.real, stamp, Arc::clone(&ix));
    Ok(ix)
}

/// Read-modify-write `f` under the in-process lock and the cross-process lock: `edit` gets the
/// current text and returns the new one (`None`: leave the file as it is) and a value to hand
/// back. The write is atomic.
pub async fn edit<T: Send + 'static>(
    f: &MemoryFile,
    edit: impl FnOnce(&str) -> Result<(Option<String>, T)> + Send + 'static,
) -> Result<T> {
    let _guard = crate::engine::store::locks::lock(&f.real).await;
    let f = f.clone();
    crate::blocking("memory", move || {
        let _lock = ProcessLock::acquire(&f.real)?;
        let text = read_text(&f)?;
        let (new, out) = edit(&text)?;
        if let Some(new) = new
            && new != text
        {
            crate::engine::store::atomic::write_atomic(
                &f.real,
                new.as_bytes(),
                std::path::Path::new(&f.shown),
            )?;
        }
        Ok(out)
    })
    .await
}

/// A preview of a value: its first line, at most `max` bytes (cut on a character boundary).
pub fn preview(value: &str, max: usize) -> String {
    let first = value.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.len() <= max && value.trim().lines().count() <= 1 {
        return first.to_owned();
    }
    format!("{}…", crate::engine::text::utf8::head(first, max))
}
