//! `browser_find`: rank the page's nodes for a natural-language query without a model: each
//! query word is matched (exactly, as a prefix, inside, or by Jaro-Winkler similarity) against
//! the accessible name, labels, placeholder, title and alt text, ids and names, the value and
//! the role (with synonyms: "input" for a textbox). It returns the top matches with refs and
//! why each matched.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{open, page_info, tab_id, tree};
use crate::call::args::lenient::{Cap, Int};
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "browser_find";

/// The arguments of `browser_find`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// What to look for, in words ("submit button", "email field", "link to pricing").
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many matches (default 5, at most 50).
    pub limit: Option<Cap<50>>,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
}

/// Run `browser_find`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    if tree::words(&a.query).is_empty() {
        return Err(ToolError::invalid("query must contain at least one word"));
    }
    let limit = Cap::or(a.limit, 5);
    let (b, t) = open(ctx, tab).await?;
    let (nodes, attrs, (url, _)) =
        tokio::join!(tree::fetch(&b, &t), tree::attributes(&b, &t), page_info(&b, &t));
    let nodes = nodes?;
    let attrs = attrs.unwrap_or_default();
    let m = tree::rank(&nodes, &attrs, &a.query, limit);
    let matches = t.with(|s| tree::matches_json(&nodes, &m, s))?;
    let mut content = if matches.is_empty() {
        format!("Nothing in tab {} ({url}) matches {:?}; browser_read_page shows everything.", t.id, a.query)
    } else {
        format!("{} match(es) for {:?} in tab {} ({url}):\n", matches.len(), a.query, t.id)
    };
    for v in &matches {
        let why: Vec<&str> =
            v["why"].as_array().map(|w| w.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
        content.push_str(&format!(
            "- {} {} {:?} (score {:.2}: {})\n",
            v["ref"].as_str().unwrap_or("?"),
            v["role"].as_str().unwrap_or(""),
            v["name"].as_str().unwrap_or(""),
            v["score"].as_f64().unwrap_or(0.0),
            why.join("; ")
        ));
    }
    let data = json!({"tabId": t.id, "url": url, "query": a.query, "matches": matches});
    Ok(ToolOutput::new(content, data))
}

/// The `browser_find` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserFind",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_find.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
