//! `multi_edit`: several replacements in one file, all or nothing (Claude Code / opencode
//! `MultiEdit`, the multi-block half of Alfredo's `replace_in_file`).
//!
//! Every edit is located in the file as it is now, with the same rules and fuzzy ladder as
//! `edit_file`; the edits may come in any order but must not overlap. When an edit is not in
//! the file but appears once the earlier edits are applied (Claude Code's `MultiEdit` order),
//! the edits are applied in order instead. If one fails, nothing is written and the error
//! names the edit.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::{edit_result, load_with, non_empty};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::patch::matcher::{self, Found, Request};
use crate::error::{ErrorCode, Result, ToolError, prefixed};
use crate::files::edit_file::{describe, summary};
use crate::output::ToolOutput;

type Edit = (String, String, bool);

const NAME: &str = "multi_edit";

/// One item of `edits`: `oldString` and `newString` (strings, also under `edit_file`'s other
/// spellings) and `all` (a flag, also `replaceAll`/`replace_all`); other keys are ignored, as
/// before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditItem {
    /// The text to replace.
    pub old_string: String,
    /// Its replacement.
    pub new_string: String,
    /// Replace every occurrence.
    pub all: bool,
}

impl<'de> Deserialize<'de> for EditItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let Value::Object(m) = Value::deserialize(d)? else {
            return Err(serde::de::Error::custom("must be an object"));
        };
        // The first spelling present (a `null` counts as absent).
        let pick = |names: &[&str]| names.iter().find_map(|n| m.get(*n).filter(|v| !v.is_null()));
        let text = |names: &[&str]| match pick(names) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(serde::de::Error::custom(format!("{} must be a string", names[0]))),
        };
        let old_string = text(&["oldString", "old_string", "oldStr", "old_text", "target"])?;
        let new_string = text(&["newString", "new_string", "newStr", "new_text", "patch"])?;
        let all = match pick(&["all", "replaceAll", "replace_all"]) {
            Some(v) => Flag::deserialize(v).map_err(serde::de::Error::custom)?.0,
            None => false,
        };
        Ok(Self { old_string, new_string, all })
    }
}

crate::value_schema!(EditItem, {
    "type": "object",
    "properties": {
        "oldString": {"type": "string", "description": "Exact text to replace."},
        "newString": {"type": "string", "description": "Replacement text."},
        "all": {"type": "boolean", "description": "Replace every occurrence (default: exactly one must match)."}
    },
    "required": ["oldString", "newString"]
});

/// The arguments of `multi_edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// The replacements, each located in the current file; they must not overlap.
    #[schemars(length(min = 1))]
    edits: Vec<EditItem>,
    /// Allow the fuzzy ladder (eol, trim_end, indent, unicode) when the text is not found exactly. Default true.
    pub fuzzy: Option<Flag>,
    /// Compute and return the diff without writing.
    pub dry_run: Option<Flag>,
    /// The `hash` a read returned; the edit is refused with STALE if the file changed since.
    pub expected_hash: Option<String>,
    /// Encoding label to use instead of detection (e.g. latin1, utf-16le, shift_jis).
    pub encoding: Option<String>,
    /// Accept lines such as '// ... rest of the code ...' literally (by default they are refused as omission placeholders).
    pub allow_placeholders: Option<Flag>,
    /// `oldString` at the top level (an alias's canonical key): accepted and ignored.
    #[schemars(skip)]
    pub old_string: Option<Value>,
    /// `newString` at the top level: accepted and ignored.
    #[schemars(skip)]
    pub new_string: Option<Value>,
    /// `all` at the top level: accepted and ignored.
    #[schemars(skip)]
    pub all: Option<Value>,
}

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
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = non_empty("path", a.path)?;
    let fuzzy = Flag::or(a.fuzzy, true);
    let dry_run = Flag::on(a.dry_run);
    if a.edits.is_empty() {
        return Err(ToolError::invalid("edits must not be empty"));
    }
    let edits: Vec<Edit> = a.edits.into_iter().map(|e| (e.old_string, e.new_string, e.all)).collect();
    let loaded = load_with(ctx, &path, a.expected_hash.as_deref(), a.encoding.as_deref()).await?;
    let text = &loaded.doc.text;
    let allow = Flag::on(a.allow_placeholders);
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
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "multiEdit",
    family: "files",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[
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
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("multi_edit.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
