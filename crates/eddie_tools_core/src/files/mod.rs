//! The `files` family: line-range reads, encoding-aware lossless edits, SEARCH/REPLACE blocks,
//! multi-edits with a documented fuzzy ladder, unified diffs and codex patches applied
//! atomically across files, line-range edits, and file operations — the file tools of Stack,
//! Floyd, Alfredo and TunaCode under one canonical name each (see the README table).
//!
//! Every path goes through the workspace resolver; every mutating tool computes its result
//! first (errors before any prompt), then asks `ctx.confirm` naming the path(s), then writes
//! through [`commit::commit`] (all files or none). Edits keep the file's encoding, BOM, line
//! endings and trailing newline, and accept `expectedHash` (the `hash` a read returned).

pub mod placeholder;

pub mod apply;
pub mod apply_patch;
pub mod apply_unified_diff;
pub mod assess_patch_risk;
pub mod copy_file;
pub mod delete_file;
pub mod delete_range;
pub mod edit_file;
pub mod edit_range;
pub mod get_file_info;
pub mod insert_at;
pub mod list_directory;
pub mod move_file;
pub mod multi_edit;
pub mod read_file;
pub mod write_file;

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::engine::patch::diff;
use crate::engine::store::commit;
use crate::engine::text::doc::{self, Enc, TextDoc};
use crate::engine::text::line_index;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;
use crate::spec::Family;
use crate::workspace::Resolved;

/// The family.
pub const FAMILY: Family = Family {
    name: "files",
    tools: &[
        read_file::TOOL,
        write_file::TOOL,
        edit_file::TOOL,
        multi_edit::TOOL,
        apply_unified_diff::TOOL,
        apply_patch::TOOL,
        assess_patch_risk::TOOL,
        edit_range::TOOL,
        insert_at::TOOL,
        delete_range::TOOL,
        copy_file::TOOL,
        move_file::TOOL,
        delete_file::TOOL,
        list_directory::TOOL,
        get_file_info::TOOL,
    ],
    contract: None,
    contract_docs: &[],
    // Each applies to the tools that have the canonical argument.
    aliases: &[
        ("filePath", "path"),
        ("filepath", "path"),
        ("file_path", "path"),
        ("dry_run", "dryRun"),
        ("expected_hash", "expectedHash"),
        ("allow_placeholders", "allowPlaceholders"),
    ],
    partial_on_cancel: false,
};

// ---- typed arguments (each tool's `Args`; the seeds' spellings are renamed by the spec's
// aliases before parsing)

/// `s`, a required string that must not be empty (`what` names it in the error).
pub fn non_empty(what: &str, s: String) -> Result<String> {
    if s.is_empty() {
        return Err(ToolError::invalid(format!("{what} must be a non-empty string")));
    }
    Ok(s)
}

/// The `encoding` label as an [`Enc`].
pub fn encoding_of(label: Option<&str>) -> Result<Option<Enc>> {
    label.map(Enc::from_label).transpose()
}

/// [`load`] `path` with the call's `expectedHash` and `encoding` label.
pub async fn load_with(
    ctx: &Ctx,
    path: &str,
    expected: Option<&str>,
    encoding: Option<&str>,
) -> Result<Loaded> {
    load(ctx, path, expected, encoding_of(encoding)?).await
}

/// [`load_with`], then refuse omission placeholders in `content`, the text the edit writes,
/// unless `allow` (`allowPlaceholders`).
pub async fn load_checked(
    ctx: &Ctx,
    path: &str,
    expected: Option<&str>,
    encoding: Option<&str>,
    content: &str,
    allow: bool,
) -> Result<Loaded> {
    let loaded = load_with(ctx, path, expected, encoding).await?;
    placeholder::check(content, &loaded.doc.text, allow, path)?;
    Ok(loaded)
}

// ---- the edit pipeline shared by the single-file edit tools

/// The largest file an edit loads (it is decoded and rebuilt in memory).
pub const MAX_EDIT_BYTES: u64 = 1 << 30;

/// A text file loaded for an edit, with its per-path lock held.
pub struct Loaded {
    /// The path as given.
    pub path: String,
    /// Where it is.
    pub resolved: Resolved,
    /// Its bytes as read.
    pub bytes: Vec<u8>,
    /// Decoded.
    pub doc: TextDoc,
    /// The fingerprint taken before reading.
    pub seen: line_index::Fingerprint,
    _lock: tokio::sync::OwnedMutexGuard<()>,
}

/// Resolve, lock and decode `path` for an edit; check `expectedHash`.
pub async fn load(ctx: &Ctx, path: &str, expected: Option<&str>, forced: Option<Enc>) -> Result<Loaded> {
    let resolved = ctx.workspace.resolve(path)?;
    let lock = crate::engine::store::locks::lock(&resolved.real).await;
    let (real, lexical, shown) = (resolved.real.clone(), resolved.lexical.clone(), path.to_owned());
    let expected = expected.map(str::to_owned);
    let (bytes, doc, seen) = crate::blocking("edit", move || {
        let meta = std::fs::metadata(&real).map_err(|e| ToolError::fs(&e, "open", Some(&lexical)))?;
        if meta.is_dir() {
            return Err(ToolError::fs(
                &std::io::Error::from_raw_os_error(libc::EISDIR),
                "open",
                Some(&lexical),
            ));
        }
        regular(&meta, &shown)?;
        if meta.len() > MAX_EDIT_BYTES {
            return Err(ToolError::invalid(format!(
                "{shown} is {} bytes; edits hold the file in memory and stop at {} MiB (use read_file to page it)",
                meta.len(),
                MAX_EDIT_BYTES >> 20
            )));
        }
        let bytes = std::fs::read(&real).map_err(|e| ToolError::fs(&e, "open", Some(&lexical)))?;
        doc::check_hash(expected.as_deref(), &bytes, &shown)?;
        let doc = TextDoc::decode(&bytes, forced, &shown)?;
        Ok((bytes, doc, line_index::Fingerprint::of(&meta)))
    })
    .await?;
    Ok(Loaded { path: path.to_owned(), resolved, bytes, doc, seen, _lock: lock })
}

/// What [`finish`] did.
pub struct Finished {
    /// The unified diff of the change.
    pub diff: String,
    /// The diff as the result text shows it (capped), made before anything is written.
    pub shown: String,
    /// Lines added and removed.
    pub stat: diff::Stat,
    /// Written to disk.
    pub applied: bool,
    /// The confirm was declined.
    pub cancelled: bool,
    /// The file's hash now.
    pub hash: String,
}

/// Encode `new_text`, then (unless `dry_run`) confirm with `prompt` and write atomically.
/// Everything the result needs that can fail is made before the write: once the file has
/// changed, the call reports success.
pub async fn finish(
    ctx: &Ctx,
    loaded: &Loaded,
    new_text: &str,
    dry_run: bool,
    prompt: String,
) -> Result<Finished> {
    let new_bytes = loaded.doc.encode(new_text, &loaded.path)?;
    // The diff names the file as the workspace sees it (`a/src/x.ts`, also for an absolute path).
    let rel = ctx.workspace.relative(&loaded.resolved.lexical);
    let name = if rel.is_empty() { loaded.path.as_str() } else { rel.as_str() };
    let (diff, stat) = diff::unified(Some(name), Some(name), &loaded.doc.text, new_text);
    let shown = diff::capped(&diff, 16 * 1024);
    let unchanged = |cancelled: bool| Finished {
        diff: diff.clone(),
        shown: shown.clone(),
        stat,
        applied: false,
        cancelled,
        hash: doc::hash(&loaded.bytes),
    };
    if dry_run || new_bytes == loaded.bytes {
        return Ok(unchanged(false));
    }
    if !ctx.confirm(format!("{prompt} [+{} -{} lines]", stat.added, stat.removed)).await? {
        return Ok(unchanged(true));
    }
    let again = ctx.workspace.resolve(&loaded.path)?;
    ctx.cancel.check()?;
    let change = commit::Change {
        display: loaded.path.clone(),
        real: again.real,
        old: Some(loaded.bytes.clone()),
        new: Some(new_bytes),
        seen: Some(loaded.seen),
    };
    let hash = crate::blocking("edit", move || {
        // Hash the new content while it is being written.
        let changes = [change];
        std::thread::scope(|scope| {
            let new = changes[0].new.as_deref().unwrap_or_default();
            let hashing = scope.spawn(|| doc::hash(new));
            commit::commit(&changes)?;
            // Written: the result cannot fail from here on (a lost hasher is hashed again).
            Ok(hashing.join().unwrap_or_else(|_| doc::hash(new)))
        })
    })
    .await?;
    Ok(Finished { diff, shown, stat, applied: true, cancelled: false, hash })
}

/// The common `data` of an edit result.
pub fn edit_data(loaded: &Loaded, f: &Finished, dry_run: bool, extra: Value) -> Value {
    let (eol, mixed) = doc::eol_style(&loaded.doc.text);
    let mut m = Map::new();
    m.insert("path".into(), json!(loaded.path));
    m.insert("applied".into(), json!(f.applied));
    m.insert("dryRun".into(), json!(dry_run));
    m.insert("cancelled".into(), json!(f.cancelled));
    m.insert("diff".into(), json!(f.diff));
    m.insert("linesAdded".into(), json!(f.stat.added));
    m.insert("linesRemoved".into(), json!(f.stat.removed));
    m.insert("hash".into(), json!(f.hash));
    m.insert("encoding".into(), json!(loaded.doc.det.enc.name()));
    m.insert("bom".into(), json!(loaded.doc.det.bom));
    m.insert(
        "eol".into(),
        json!(if mixed {
            "mixed"
        } else if eol == "\r\n" {
            "crlf"
        } else {
            "lf"
        }),
    );
    if let Value::Object(extra) = extra {
        m.extend(extra);
    }
    Value::Object(m)
}

/// The model-facing text of an edit result.
pub fn edit_content(loaded: &Loaded, f: &Finished, dry_run: bool, what: &str) -> String {
    let head = if f.cancelled {
        format!("Edit of {} cancelled by user; nothing changed.", loaded.path)
    } else if dry_run {
        format!(
            "Dry run: {what} in {} (+{} -{}); nothing written.",
            loaded.path, f.stat.added, f.stat.removed
        )
    } else if !f.applied {
        format!("No change: {what} leaves {} as it is.", loaded.path)
    } else {
        format!("Edited {}: {what} (+{} -{}).", loaded.path, f.stat.added, f.stat.removed)
    };
    if f.diff.is_empty() || f.cancelled { head } else { format!("{head}\n{}", f.shown) }
}

/// [`finish`] an edit and make its result: `what` says what it did (in the text), `extra`
/// joins the common `data`.
pub async fn edit_result(
    ctx: &Ctx,
    loaded: &Loaded,
    new_text: &str,
    dry_run: bool,
    prompt: String,
    what: &str,
    extra: Value,
) -> Result<ToolOutput> {
    let done = finish(ctx, loaded, new_text, dry_run, prompt).await?;
    let data = edit_data(loaded, &done, dry_run, extra);
    Ok(ToolOutput::new(edit_content(loaded, &done, dry_run, what), data))
}

/// `IS_A_DIRECTORY`/`NOT_FOUND` style error for a path that must be a regular file.
pub fn not_a_file(meta: &std::fs::Metadata, shown: &Path) -> Option<ToolError> {
    meta.is_dir()
        .then(|| ToolError::fs(&std::io::Error::from_raw_os_error(libc::EISDIR), "open", Some(shown)))
}

/// Refuse FIFOs, sockets and devices (opening a FIFO would block).
pub fn regular(meta: &std::fs::Metadata, shown: &str) -> Result<()> {
    if meta.is_file() || meta.is_dir() {
        return Ok(());
    }
    Err(ToolError::invalid(format!("{shown} is not a regular file")))
}

/// The path itself, with symlinks resolved in its parent only (so a symlink is the link,
/// not its target), after the usual confinement check of the whole path.
pub fn own_path(ctx: &Ctx, path: &str) -> Result<(Resolved, std::path::PathBuf)> {
    let r = ctx.workspace.resolve(path)?;
    let own = match (r.lexical.parent(), r.lexical.file_name()) {
        (Some(parent), Some(name)) if r.lexical != ctx.workspace.root() => {
            let p = ctx.workspace.resolve(&parent.display().to_string())?;
            p.real.join(name)
        }
        _ => r.real.clone(),
    };
    Ok((r, own))
}

/// Refuse an operation on the workspace root itself.
pub fn not_root(ctx: &Ctx, r: &Resolved, path: &str, what: &str) -> Result<()> {
    let root = crate::workspace::realpath(ctx.workspace.root())?;
    if r.real == root {
        return Err(ToolError::invalid(format!("{path} is the workspace root; it cannot be {what}")));
    }
    Ok(())
}

/// `d` (a directory) contains `p` or is it.
pub fn inside(p: &Path, d: &Path) -> bool {
    p.starts_with(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_what_the_tools_do() {
        use crate::spec::Permission;
        let spec = |n: &str| FAMILY.tools.iter().find(|t| t.name == n).map(|t| t.permission);
        assert_eq!(spec("delete_file"), Some(Permission::Dangerous));
        for t in FAMILY.tools {
            assert_eq!(t.mutating(), t.confirms(), "{}: every mutating files tool confirms", t.name);
        }
    }

    #[test]
    fn typed_arguments_keep_the_lenient_readings() {
        use crate::call::args::parse;
        use crate::call::normalise;
        let typed = |tool: &str, args: Value| {
            let spec = crate::registry::find(tool).unwrap();
            normalise(spec, args).and_then(|a| match tool {
                "multi_edit" => parse::<multi_edit::Args>(tool, &a).map(|x| format!("{x:?}")),
                "write_file" => parse::<write_file::Args>(tool, &a).map(|x| format!("{x:?}")),
                _ => parse::<delete_range::Args>(tool, &a).map(|x| format!("{x:?}")),
            })
        };
        // "12" is 12 and 2.0 is 2 (the one value policy); "false" and "no" are false.
        let got = typed(
            "delete_range",
            json!({"file_path": "a", "startLine": "12", "end_line": 2.0, "dryRun": "no"}),
        )
        .unwrap();
        assert!(got.contains("start_line: Int(12), end_line: Int(2), dry_run: Some(Flag(false))"), "{got}");
        let got =
            typed("write_file", json!({"path": "a", "content": "", "no_overwrite": "false", "append": 1}))
                .unwrap();
        assert!(
            got.contains("append: Some(Flag(true))") && got.contains("no_overwrite: Some(Flag(false))"),
            "{got}"
        );
        // Items of `edits` keep every spelling edit_file accepts; other keys are ignored.
        let got = typed(
            "multi_edit",
            json!({"path": "a", "edits": [{"old_text": "x", "patch": "y", "replace_all": "0", "note": 1}], "oldString": 3}),
        )
        .unwrap();
        assert!(got.contains(r#"old_string: "x", new_string: "y", all: false"#), "{got}");
        let e = typed("multi_edit", json!({"path": "a", "edits": [{"oldString": "x"}]})).unwrap_err();
        assert_eq!(e.message(), "multi_edit: `edits[0]` newString must be a string");
        let e = typed("delete_range", json!({"path": "a", "startLine": "many", "endLine": 1})).unwrap_err();
        assert_eq!(e.message(), "delete_range: `startLine` must be an integer (got \"many\")");
        let e = typed("delete_range", json!({"path": "a", "startLine": 2.9, "endLine": 3})).unwrap_err();
        assert_eq!(e.message(), "delete_range: `startLine` must be an integer (got 2.9)");
    }
}
