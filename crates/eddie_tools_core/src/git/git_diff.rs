//! `git_diff`: changes as per-file numbers (like `git diff --numstat`) and patch text under a
//! byte budget, read with libgit2. Scopes: working tree vs index (default), index vs HEAD
//! (`staged`/`cached`), ref vs ref (`from` + `to`, or `a..b` / `a...b`), ref vs working tree
//! (`from` alone). Renames are detected as git does by default; binary files are reported,
//! never dumped.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::common;
use crate::call::args::lenient::{Flag, Offset, StringOrList};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "git_diff";

/// The arguments of `git_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// Only these files or pathspecs, relative to path (also: file).
    pub files: Option<StringOrList>,
    /// Staged changes: the index against HEAD (also: cached).
    pub staged: Option<Flag>,
    /// A revision to compare from: alone, against the working tree; with `to`, against `to`.
    /// `a..b` and `a...b` (from the merge base) are accepted too.
    pub from: Option<String>,
    /// A revision to compare to (needs `from`).
    pub to: Option<String>,
    /// Detect renames (default true, as git does).
    pub renames: Option<Flag>,
    /// Lines of context around each change (default 3).
    pub context: Option<Offset<10_000>>,
    /// Byte budget of patch text (default 50000); files whose patch does not fit are listed
    /// with their numbers and counted in omittedBytes.
    pub max_bytes: Option<Offset<{ common::MAX_BUDGET as u64 }>>,
    /// Numbers only, no patch text (like --numstat).
    pub stat: Option<Flag>,
}

struct Plan {
    files: Vec<String>,
    staged: bool,
    from: Option<String>,
    to: Option<String>,
    renames: bool,
    context: u32,
    budget: usize,
    patch: bool,
}

fn diff(dir: &std::path::Path, ctx: &Ctx, p: Plan) -> Result<serde_json::Value> {
    let (repo, bounds) = common::checkout_read(&ctx.workspace, dir)?;
    let root = common::workdir(&repo)?;
    let specs = bounds.limit(common::pathspecs(ctx, dir, &root, &p.files)?);
    let mut opts = common::diff_options(p.context, &specs);
    let (mut from, mut to, mut merge_base) = (p.from.clone(), p.to.clone(), false);
    if to.is_none()
        && let Some(f) = from.clone()
    {
        if let Some((a, b)) = f.split_once("...") {
            (from, to, merge_base) = (Some(a.to_owned()), Some(b.to_owned()), true);
        } else if let Some((a, b)) = f.split_once("..") {
            (from, to) = (Some(a.to_owned()), Some(b.to_owned()));
        }
    }
    let or_head = |s: Option<String>| s.filter(|s| !s.is_empty()).unwrap_or_else(|| "HEAD".to_owned());
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "diff");
    let (scope, mut d) = if p.staged && from.is_none() {
        let head = common::head_commit(&repo)?;
        let tree = match &head {
            Some(c) => Some(c.tree().map_err(fail)?),
            None => None,
        };
        ("staged", repo.diff_tree_to_index(tree.as_ref(), None, Some(&mut opts)).map_err(fail)?)
    } else if let (Some(_), Some(_)) = (&from, &to) {
        let (a, b) = (or_head(from.clone()), or_head(to.clone()));
        let ta = if merge_base {
            let ca = common::commit_at(&repo, &a)?;
            let cb = common::commit_at(&repo, &b)?;
            let base = repo.merge_base(ca.id(), cb.id()).map_err(|e| {
                ToolError::new(
                    ErrorCode::RefNotFound,
                    format!("{a} and {b} have no merge base ({})", e.message()),
                )
            })?;
            repo.find_commit(base).and_then(|c| c.tree()).map_err(fail)?
        } else {
            common::tree_at(&repo, &a)?
        };
        let tb = common::tree_at(&repo, &b)?;
        ("refs", repo.diff_tree_to_tree(Some(&ta), Some(&tb), Some(&mut opts)).map_err(fail)?)
    } else if let Some(f) = &from {
        let t = common::tree_at(&repo, f)?;
        if p.staged {
            ("ref-index", repo.diff_tree_to_index(Some(&t), None, Some(&mut opts)).map_err(fail)?)
        } else {
            ("ref-worktree", repo.diff_tree_to_workdir_with_index(Some(&t), Some(&mut opts)).map_err(fail)?)
        }
    } else if to.is_some() {
        return Err(ToolError::invalid("to needs from (the revision to compare from)"));
    } else {
        (
            "worktree",
            repo.diff_index_to_workdir(None, Some(&mut opts))
                .map_err(|e| super::err(&e, ErrorCode::Internal, "diff"))?,
        )
    };
    if p.renames {
        common::find_renames(&mut d)?;
    }
    let r = common::render(&d, p.patch, p.budget, &bounds)?;
    let text = common::render_text(&r, p.patch);
    Ok(json!({
        "scope": scope,
        "from": from,
        "to": to,
        "files": r.files,
        "totals": {"files": r.files.len(), "additions": r.additions, "deletions": r.deletions},
        "hasChanges": !r.files.is_empty(),
        "patch": if p.patch { Some(r.patch) } else { None },
        "truncated": !r.omitted.is_empty(),
        "omittedBytes": r.omitted_bytes,
        "omittedFiles": r.omitted,
        "text": text,
    }))
}

/// Run `git_diff`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let context = u32::try_from(Offset::or(a.context, 3)).unwrap_or(3);
    let plan = Plan {
        files: common::list(a.files),
        staged: Flag::on(a.staged),
        from: a.from.filter(|s| !s.is_empty()),
        to: a.to.filter(|s| !s.is_empty()),
        renames: Flag::or(a.renames, true),
        context,
        budget: Offset::or(a.max_bytes, common::DEFAULT_BUDGET),
        patch: !Flag::on(a.stat),
    };
    let c = ctx.clone();
    let mut data = crate::blocking(NAME, move || diff(&dir, &c, plan)).await?;
    let text = match data.as_object_mut().and_then(|o| o.remove("text")) {
        Some(serde_json::Value::String(s)) => s,
        _ => String::new(),
    };
    let content = if data["hasChanges"] == true { text } else { "No changes.\n".to_owned() };
    Ok(ToolOutput::new(content, data))
}

/// The `git_diff` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitDiff",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[
        ("repo_path", "path"),
        ("file", "files"),
        ("paths", "files"),
        ("cached", "staged"),
        ("base", "from"),
        ("ref", "from"),
        ("commit", "from"),
        ("target", "to"),
        ("find_renames", "renames"),
        ("context_lines", "context"),
        ("contextLines", "context"),
        ("unified", "context"),
        ("max_bytes", "maxBytes"),
        ("budget", "maxBytes"),
        ("numstat", "stat"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_diff.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
