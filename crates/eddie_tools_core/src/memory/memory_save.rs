//! `memory_save` (Stack): write an entry of `MEMORY.md` (`## <key>` and its text). `mode:
//! "replace"` (default) replaces the entry, `"append"` adds a line to it; a new key is added at
//! the end. Only the entry's bytes change; the rest of the file is kept byte for byte.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Scope, md};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "memory_save";

/// How a save treats an existing entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Replace the entry's text (default).
    #[default]
    Replace,
    /// Add the text to the entry, on a new line.
    Append,
}

/// The arguments of `memory_save`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The entry's title: its `## ` heading (one line, at most 200 characters; also: title).
    pub key: String,
    /// The text to save (Markdown; at most 64 KiB; use `###` for headings inside it; also: content).
    pub value: String,
    /// `replace` (default) or `append`.
    pub mode: Option<Mode>,
    /// `project` (the workspace's MEMORY.md, default) or `user` (the per-user one).
    pub scope: Option<Scope>,
}

/// Run `memory_save`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let key = md::check_key(&a.key)?;
    let value = md::check_value(&a.value)?;
    let mode = a.mode.unwrap_or_default();
    let file = super::memory_file(ctx, a.scope.unwrap_or_default())?;
    let f = file.clone();
    let (k, v) = (key.clone(), value.clone());
    // Everything that can fail is checked before asking: the file must be readable, and an
    // append must stay within the cap.
    let existed = crate::blocking(NAME, move || {
        let text = super::read_text(&f)?;
        if mode == Mode::Append {
            md::check_value(&md::appended(&text, &k, &v))?;
        }
        Ok(md::find(&md::parse(&text), &k).is_some())
    })
    .await?;
    let verb = match (mode, existed) {
        (Mode::Append, true) => "Append to",
        (_, true) => "Replace",
        _ => "Add",
    };
    let base = json!({"key": key, "mode": if mode == Mode::Append { "append" } else { "replace" }, "path": file.shown, "scope": if file.scope == Scope::User { "user" } else { "project" }});
    if !ctx.confirm(format!("{verb} memory entry \"{key}\" in {}?", file.shown)).await? {
        let mut d = base;
        d["saved"] = json!(false);
        d["cancelled"] = json!(true);
        d["existed"] = json!(existed);
        return Ok(ToolOutput::new(format!("Saving \"{key}\" was cancelled; nothing changed."), d));
    }
    let (k, v) = (key.clone(), value.clone());
    let (existed, bytes) = super::edit(&file, move |text| {
        let v = if mode == Mode::Append { md::check_value(&md::appended(text, &k, &v))? } else { v };
        let (new, existed) = md::set(text, &k, &v);
        let bytes = v.len();
        Ok((Some(new), (existed, bytes)))
    })
    .await?;
    let mut d = base;
    d["saved"] = json!(true);
    d["cancelled"] = json!(false);
    d["existed"] = json!(existed);
    d["bytes"] = json!(bytes);
    let how = match (mode, existed) {
        (Mode::Append, true) => "Appended to",
        (_, true) => "Replaced",
        _ => "Added",
    };
    Ok(ToolOutput::new(format!("{how} memory entry \"{key}\" in {} ({bytes} bytes).", file.shown), d))
}

/// The `memory_save` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "memorySave",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("memory_save.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
