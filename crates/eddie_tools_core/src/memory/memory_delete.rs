//! `memory_delete`: remove an entry (its `## <key>` heading and text) from `MEMORY.md`, after
//! `ctx.confirm`. Every other byte of the file is kept.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Scope, md};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "memory_delete";

/// The arguments of `memory_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The entry's title (its `## ` heading; also: title).
    pub key: String,
    /// `project` (the workspace's MEMORY.md, default) or `user`.
    pub scope: Option<Scope>,
}

fn missing(key: &str, shown: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFound,
        format!("no memory entry \"{key}\" in {shown}; memory_list shows the keys"),
    )
    .with_prop("key", key)
}

/// Run `memory_delete`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let key = md::check_key(&a.key)?;
    let file = super::memory_file(ctx, a.scope.unwrap_or_default())?;
    let (f, k) = (file.clone(), key.clone());
    let exists =
        crate::blocking(NAME, move || Ok(md::find(&md::parse(&super::read_text(&f)?), &k).is_some())).await?;
    if !exists {
        return Err(missing(&key, &file.shown));
    }
    let base = json!({"key": key, "path": file.shown});
    if !ctx.confirm(format!("Delete memory entry \"{key}\" from {}?", file.shown)).await? {
        let mut d = base;
        d["deleted"] = json!(false);
        d["cancelled"] = json!(true);
        return Ok(ToolOutput::new(format!("Deleting \"{key}\" was cancelled; nothing changed."), d));
    }
    let (k, shown) = (key.clone(), file.shown.clone());
    let removed = super::edit(&file, move |text| match md::remove(text, &k) {
        Some((new, n)) => Ok((Some(new), n)),
        None => Err(missing(&k, &shown)),
    })
    .await?;
    let mut d = base;
    d["deleted"] = json!(true);
    d["cancelled"] = json!(false);
    d["removed"] = json!(removed);
    Ok(ToolOutput::new(format!("Deleted memory entry \"{key}\" from {}.", file.shown), d))
}

/// The `memory_delete` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "memoryDelete",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("memory_delete.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
