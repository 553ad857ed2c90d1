//! `memory_list` (Stack): the entries of `MEMORY.md` with a preview of each.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Scope, md};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "memory_list";
const PREVIEW: usize = 120;

/// The arguments of `memory_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// `project` (the workspace's MEMORY.md, default) or `user`.
    pub scope: Option<Scope>,
}

/// Run `memory_list`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let file = super::memory_file(ctx, a.scope.unwrap_or_default())?;
    let f = file.clone();
    let ix = crate::blocking(NAME, move || super::index(&f)).await?;
    let entries: Vec<Value> = ix
        .entries
        .iter()
        .map(|e| {
            let v = md::value(&ix.text, e);
            json!({"key": e.key, "title": e.key, "preview": super::preview(v, PREVIEW), "bytes": v.len()})
        })
        .collect();
    let mut content = if entries.is_empty() {
        format!("No memory entries in {}.", file.shown)
    } else {
        format!("{} memory entries in {}:", entries.len(), file.shown)
    };
    for e in &entries {
        content.push_str(&format!(
            "\n- {}: {}",
            e["key"].as_str().unwrap_or(""),
            e["preview"].as_str().unwrap_or("")
        ));
    }
    let count = entries.len();
    Ok(ToolOutput::new(content, json!({"path": file.shown, "entries": entries, "count": count})))
}

/// The `memory_list` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "memoryList",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("memory_list.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
