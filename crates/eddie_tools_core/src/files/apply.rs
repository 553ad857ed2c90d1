//! The shared pipeline of `apply_patch` and `apply_unified_diff`: stage every file
//! operation of a parsed patch in memory ([`crate::engine::patch`]), confirm once, then commit
//! all files or none ([`crate::engine::store::commit`]).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::patch::{Op, Placed, Tag, apply_hunks, bad, diff};
use crate::engine::store::commit::{Change, commit};
use crate::engine::text::doc::TextDoc;
use crate::engine::text::line_index::Fingerprint;
use crate::error::{ErrorCode, Result, ToolError, exists_error, prefixed};
use crate::output::ToolOutput;

/// One file's staged result.
#[derive(Debug)]
struct Staged {
    op: &'static str,
    path: String,
    moved_to: Option<String>,
    diff: String,
    stat: diff::Stat,
    placed: Vec<Placed>,
}

/// Stage, confirm and commit `ops` (all files or none). `root` prefixes every path; added
/// lines that are omission placeholders are refused unless `allow_placeholders`.
pub async fn run_ops(
    ctx: &Ctx,
    ops: Vec<Op>,
    root: Option<&str>,
    dry_run: bool,
    allow_placeholders: bool,
) -> Result<ToolOutput> {
    let join = |p: &str| match root {
        Some(r) if !r.is_empty() && r != "." => format!("{}/{}", r.trim_end_matches('/'), p),
        _ => p.to_owned(),
    };
    // Resolve every path first: an escape refuses the whole patch before anything happens.
    let mut targets = Vec::new();
    for op in &ops {
        let p = join(op.path());
        let r = ctx.workspace.resolve(&p)?;
        let to = match op {
            Op::Update { move_to: Some(t), .. } => {
                let t = join(t);
                let rt = ctx.workspace.resolve(&t)?;
                Some((t, rt))
            }
            _ => None,
        };
        targets.push((p, r, to));
    }
    let mut seen = BTreeSet::new();
    for (p, r, to) in &targets {
        for (shown, real) in std::iter::once((p, &r.real)).chain(to.iter().map(|(t, rt)| (t, &rt.real))) {
            if !seen.insert(real.clone()) {
                return Err(bad(format!("{shown} appears more than once in the patch; merge its changes")));
            }
        }
    }
    let mut guards = Vec::new();
    for real in &seen {
        guards.push(crate::engine::store::locks::lock(real).await);
    }
    let work = targets.clone();
    let (changes, staged) =
        crate::blocking("patch", move || stage_all(&ops, &work, allow_placeholders)).await?;
    let total_diff: String = staged.iter().map(|s| s.diff.as_str()).collect();
    let files: Vec<Value> = staged
        .iter()
        .map(|s| {
            json!({
                "path": s.path, "action": s.op, "movedTo": s.moved_to, "linesAdded": s.stat.added,
                "linesRemoved": s.stat.removed,
                "hunks": s.placed.iter().map(|p| json!({"line": p.line, "stage": p.stage})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let names: Vec<String> = staged
        .iter()
        .map(|s| s.moved_to.as_ref().map_or_else(|| s.path.clone(), |t| format!("{} -> {t}", s.path)))
        .collect();
    let (added, removed) = staged.iter().fold((0, 0), |(a, r), s| (a + s.stat.added, r + s.stat.removed));
    let fuzzy: Vec<String> = staged
        .iter()
        .flat_map(|s| {
            s.placed
                .iter()
                .filter(|p| p.stage != "exact")
                .map(move |p| format!("{} line {} ({})", s.path, p.line, p.stage))
        })
        .collect();
    let mut data = json!({
        "applied": false, "dryRun": dry_run, "cancelled": false, "files": files, "diff": total_diff,
        "linesAdded": added, "linesRemoved": removed,
    });
    let summary = format!("{} file(s): {} (+{added} -{removed})", names.len(), names.join(", "));
    let fuzzy_note = if fuzzy.is_empty() {
        String::new()
    } else {
        format!("\nLoosely matched hunks: {}", fuzzy.join("; "))
    };
    if dry_run {
        let content = format!(
            "Dry run: the patch applies to {summary}; nothing written.{fuzzy_note}\n{}",
            diff::capped(&total_diff, 32 * 1024)
        );
        return Ok(ToolOutput::new(content, data));
    }
    if !ctx.confirm(format!("Apply patch to {} [+{added} -{removed} lines]", names.join(", "))).await? {
        data["cancelled"] = json!(true);
        return Ok(ToolOutput::new("Patch cancelled by user; nothing changed.", data));
    }
    // Re-resolve after the prompt: a symlink swapped in meanwhile must not redirect a write.
    for c in &changes {
        ctx.workspace.resolve(&c.display)?;
    }
    ctx.cancel.check()?;
    crate::blocking("patch", move || commit(&changes)).await?;
    drop(guards);
    data["applied"] = json!(true);
    Ok(ToolOutput::new(format!("Applied the patch to {summary}.{fuzzy_note}"), data))
}

type Target = (String, crate::workspace::Resolved, Option<(String, crate::workspace::Resolved)>);

/// The file's bytes and the fingerprint taken before reading them; `None` when missing.
fn read_opt(real: &std::path::Path, shown: &str) -> Result<Option<(Vec<u8>, Fingerprint)>> {
    match std::fs::metadata(real) {
        Ok(m) if m.is_dir() => Err(ToolError::fs(
            &std::io::Error::from_raw_os_error(libc::EISDIR),
            "open",
            Some(std::path::Path::new(shown)),
        )),
        Ok(m) => std::fs::read(real)
            .map(|b| Some((b, Fingerprint::of(&m))))
            .map_err(|e| ToolError::fs(&e, "open", Some(std::path::Path::new(shown)))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::fs(&e, "stat", Some(std::path::Path::new(shown)))),
    }
}

fn missing(shown: &str) -> ToolError {
    let e = std::io::Error::from_raw_os_error(libc::ENOENT);
    ToolError::fs(&e, "open", Some(std::path::Path::new(shown)))
}

/// The change of `shown` (at `real`) from `old`, its bytes and the fingerprint taken before
/// reading them (`None`: it must not exist), to `new` (`None`: delete it).
fn change(
    shown: &str,
    real: &std::path::Path,
    old: Option<(Vec<u8>, Fingerprint)>,
    new: Option<Vec<u8>>,
) -> Change {
    let (old, seen) = old.map_or((None, None), |(bytes, fp)| (Some(bytes), Some(fp)));
    Change { display: shown.to_owned(), real: real.to_path_buf(), old, new, seen }
}

impl Staged {
    fn new(
        op: &'static str,
        path: &str,
        moved_to: Option<&str>,
        (diff, stat): (String, diff::Stat),
        placed: Vec<Placed>,
    ) -> Self {
        Self { op, path: path.to_owned(), moved_to: moved_to.map(str::to_owned), diff, stat, placed }
    }
}

fn stage_all(ops: &[Op], targets: &[Target], allow: bool) -> Result<(Vec<Change>, Vec<Staged>)> {
    let mut changes = Vec::new();
    let mut staged = Vec::new();
    for (op, (shown, r, to)) in ops.iter().zip(targets) {
        let current = read_opt(&r.real, shown)?;
        match op {
            Op::Add { content, .. } => {
                crate::files::placeholder::check(content, "", allow, shown)?;
                if current.is_some() {
                    return Err(exists_error(
                        shown,
                        "the patch adds it as a new file; use an update instead",
                    ));
                }
                let d = diff::unified(None, Some(shown), "", content);
                changes.push(change(shown, &r.real, None, Some(content.clone().into_bytes())));
                staged.push(Staged::new("add", shown, None, d, Vec::new()));
            }
            Op::Delete { hunks, .. } => {
                let (bytes, fp) = current.ok_or_else(|| missing(shown))?;
                let doc = TextDoc::decode(&bytes, None, shown).ok();
                let old_text = doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
                if !hunks.is_empty() {
                    let (rest, _) = apply_hunks(&old_text, hunks, shown)
                        .map_err(|e| prefixed(e, &format!("{shown}: ")))?;
                    if !rest.trim().is_empty() {
                        return Err(ToolError::new(
                            ErrorCode::NoMatch,
                            format!(
                                "{shown}: the patch deletes the file but its removed lines do not cover the whole file"
                            ),
                        ));
                    }
                }
                let d = diff::unified(Some(shown), None, &old_text, "");
                changes.push(change(shown, &r.real, Some((bytes, fp)), None));
                staged.push(Staged::new("delete", shown, None, d, Vec::new()));
            }
            Op::Update { hunks, .. } => {
                let (bytes, fp) = current.ok_or_else(|| missing(shown))?;
                let doc = TextDoc::decode(&bytes, None, shown)?;
                let added: String = hunks
                    .iter()
                    .flat_map(|h| &h.lines)
                    .filter(|(t, _)| *t == Tag::Add)
                    .map(|(_, l)| format!("{l}\n"))
                    .collect();
                crate::files::placeholder::check(&added, &doc.text, allow, shown)?;
                let (new_text, placed) =
                    apply_hunks(&doc.text, hunks, shown).map_err(|e| prefixed(e, &format!("{shown}: ")))?;
                let new_bytes = doc.encode(&new_text, shown)?;
                let dest = to.as_ref().map(|(t, _)| t.as_str());
                let d = diff::unified(Some(shown), Some(dest.unwrap_or(shown)), &doc.text, &new_text);
                match to {
                    Some((t, rt)) => {
                        if read_opt(&rt.real, t)?.is_some() {
                            return Err(exists_error(t, "the patch moves a file onto it"));
                        }
                        changes.push(change(shown, &r.real, Some((bytes, fp)), None));
                        changes.push(change(t, &rt.real, None, Some(new_bytes)));
                        staged.push(Staged::new("move", shown, Some(t), d, placed));
                    }
                    None => {
                        changes.push(change(shown, &r.real, Some((bytes, fp)), Some(new_bytes)));
                        staged.push(Staged::new("update", shown, None, d, placed));
                    }
                }
            }
        }
    }
    Ok((changes, staged))
}
