//! `memory_recall` (Stack): the entries of `MEMORY.md` that best match a query, ranked with
//! BM25 over keys and bodies (a word in the key counts three times one in the body).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Scope, md};
use crate::call::args::lenient::Cap;
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "memory_recall";
const MAX_RESULTS: u64 = 100;

/// The arguments of `memory_recall`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// What to look for (words; case and punctuation are ignored).
    pub query: String,
    /// How many entries at most (default 5, at most 100; also: max_results).
    pub max_results: Option<Cap<MAX_RESULTS>>,
    /// `project` (the workspace's MEMORY.md, default) or `user`.
    pub scope: Option<Scope>,
}

/// Run `memory_recall`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    if a.query.trim().is_empty() {
        return Err(ToolError::invalid("query must not be empty"));
    }
    let max = Cap::or(a.max_results, 5);
    let file = super::memory_file(ctx, a.scope.unwrap_or_default())?;
    let f = file.clone();
    let query = a.query;
    let q = query.clone();
    let matches = crate::blocking(NAME, move || {
        let ix = super::index(&f)?;
        Ok(ix
            .search(&q, max)
            .into_iter()
            .map(|(i, score)| {
                let e = &ix.entries[i];
                json!({"key": e.key, "title": e.key, "content": md::value(&ix.text, e), "score": (f64::from(score) * 1e4).round() / 1e4})
            })
            .collect::<Vec<Value>>())
    })
    .await?;
    let mut content = if matches.is_empty() {
        format!("No memory entries match \"{query}\" in {}.", file.shown)
    } else {
        format!("{} memory entries match \"{query}\" in {}:", matches.len(), file.shown)
    };
    for m in &matches {
        content.push_str(&format!(
            "\n\n## {} (score {})\n{}",
            m["key"].as_str().unwrap_or(""),
            m["score"],
            m["content"].as_str().unwrap_or("")
        ));
    }
    let count = matches.len();
    Ok(ToolOutput::new(
        content,
        json!({"query": query, "path": file.shown, "matches": matches, "count": count}),
    ))
}

/// The `memory_recall` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "memoryRecall",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("memory_recall.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
