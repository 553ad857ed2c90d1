//! `multi_edit`: several replacements in one file, all or nothing (Claude Code / opencode
//! `MultiEdit`, the multi-block half of Alfredo's `replace_in_file`).
//!
//! Every edit is located in the file as it is now, with the same rules and fuzzy ladder as
//! `edit_file`; the edits may come in any order but must not overlap. When an edit is not in
//! the file but appears once the earlier edits are applied (Claude Code's `MultiEdit` order),
//! the edits are applied in order instead. If one fails, nothing is written and the error
//! names the edit.

use serde_json::{Value, json};

use super::{allow_placeholders, arg, edit_result, flag, flag_or_true, load_arg, path_arg, req_text};
use crate::context::Ctx;
use crate::engine::patch::matcher::{self, Found, Request};
use crate::error::{ErrorCode, Result, ToolError, prefixed};
use crate::files::edit_file::{describe, summary};
use crate::output::ToolOutput;

type Edit = (String, String, bool);

fn error_for(e: ToolError, i: usize, n: usize) -> ToolError {
    prefixed(e, &format!("Edit {} of {n}: ", i + 1)).with_prop("edit", i)
}

/// Every edit located in the original text.
fn simultaneous(text: &str, edits: &[Edit], fuzzy: bool, path: &str) -> Result<Vec<Found>> {
    let mut found = Vec::new();
    for (i, (old, new, all)) in edits.iter().enumerate() {
        let req = Request { old, new, all: *all, fuzzy };
        found.extend(matcher::locate(text, &req, path).map_err(|e| error_for(e, i, edits.len()))?);
    }
    Ok(found)
}

/// Each edit located in the result of the previous ones.
fn sequential(
    text: &str,
    edits: &[Edit],
    fuzzy: bool,
    path: &str,
) -> Result<(String, Vec<&'static str>, usize)> {
    let mut cur = text.to_owned();
    let mut stages = Vec::new();
    let mut count = 0;
    for (i, (old, new, all)) in edits.iter().enumerate() {
        let req = Request { old, new, all: *all, fuzzy };
        let f = matcher::locate(&cur, &req, path).map_err(|e| error_for(e, i, edits.len()))?;
        count += f.len();
        stages.extend(f.iter().map(|x| x.stage.as_str()));
        cur = matcher::apply(&cur, f)?;
    }
    stages.dedup();
    Ok((cur, stages, count))
}

/// Run `multi_edit`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path = path_arg(args)?;
    let fuzzy = flag_or_true(args, &["fuzzy"]);
    let dry_run = flag(args, &["dryRun", "dry_run"]);
    let Some(Value::Array(items)) = arg(args, &["edits"]) else {
        return Err(ToolError::invalid("edits must be an array of {oldString, newString, all?}"));
    };
    if items.is_empty() {
        return Err(ToolError::invalid("edits must not be empty"));
    }
    let mut edits = Vec::with_capacity(items.len());
    for (i, e) in items.iter().enumerate() {
        let prefix = format!("edits[{i}]: ");
        if !e.is_object() {
            return Err(ToolError::invalid(format!("{prefix}must be an object")));
        }
        let old = req_text(e, &["oldString", "old_string", "oldStr", "old_text", "target"])
            .map_err(|x| prefixed(x, &prefix))?;
        let new = req_text(e, &["newString", "new_string", "newStr", "new_text", "patch"])
            .map_err(|x| prefixed(x, &prefix))?;
        edits.push((old, new, flag(e, &["all", "replaceAll", "replace_all"])));
    }
    let loaded = load_arg(ctx, args, &path).await?;
    let text = &loaded.doc.text;
    let allow = allow_placeholders(args);
    for (i, (_, new, _)) in edits.iter().enumerate() {
        crate::files::placeholder::check(new, text, allow, &path)
            .map_err(|e| error_for(e, i, edits.len()))?;
    }
    let n = edits.len();
    let (new_text, matches, what, replacements) = match simultaneous(text, &edits, fuzzy, &path) {
        Ok(found) => {
            let matches = describe(text, &found);
            let what = summary(text, &found);
            let replacements = found.len();
            (matcher::apply(text, found)?, matches, what, replacements)
        }
        // An edit may target text an earlier edit wrote (Claude Code's MultiEdit order).
        Err(first) if first.code() == ErrorCode::NoMatch => match sequential(text, &edits, fuzzy, &path) {
            Ok((t, stages, count)) => {
                let what = format!("{count} replacement(s) applied in order ({})", stages.join("+"));
                (t, Value::Array(Vec::new()), what, count)
            }
            Err(_) => return Err(first),
        },
        Err(e) => return Err(e),
    };
    let extra = json!({"replacements": replacements, "matches": matches});
    edit_result(ctx, &loaded, &new_text, dry_run, format!("Edit file: {path} ({n} edits)"), &what, extra)
        .await
}

/// The `multi_edit` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "multi_edit",
    js_name: "multiEdit",
    family: "files",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Moderate,
    aliases: &[
        ("filePath", "path"),
        ("filepath", "path"),
        ("file_path", "path"),
        ("old_string", "oldString"),
        ("oldStr", "oldString"),
        ("old_text", "oldString"),
        ("target", "oldString"),
        ("new_string", "newString"),
        ("newStr", "newString"),
        ("new_text", "newString"),
        ("patch", "newString"),
        ("replaceAll", "all"),
        ("replace_all", "all"),
        ("dry_run", "dryRun"),
        ("expected_hash", "expectedHash"),
        ("allow_placeholders", "allowPlaceholders"),
    ],
    definition: include_str!("multi_edit.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
