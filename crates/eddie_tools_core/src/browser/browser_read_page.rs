//! `browser_read_page`: the page's accessibility tree as compact indented text. Every
//! interactive node carries a short ref (`e12`) that stays the same across reads for as long
//! as its DOM node lives; the refs are what `browser_click` and `browser_type` take. A
//! character budget applies, and the nodes left out are counted.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{open, page_info, tab_id, tree};
use crate::call::args::lenient::{Cap, Int};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "browser_read_page";
/// Default character budget.
pub const DEFAULT_MAX_CHARS: usize = 20_000;

/// The arguments of `browser_read_page`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
    /// Character budget of the text (default 20000, at most 500000); nodes past it are counted, not shown.
    pub max_chars: Option<Cap<500_000>>,
}

/// Run `browser_read_page`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let max = Cap::or(a.max_chars, DEFAULT_MAX_CHARS);
    let (b, t) = open(ctx, tab).await?;
    let (nodes, (url, title)) = tokio::join!(tree::fetch_fast(&b, &t), page_info(&b, &t));
    // The walker fails only when the page cannot run it (a frame being replaced): the
    // accessibility tree gives the same nodes, slower.
    let nodes = match nodes {
        Ok(n) => n,
        Err(e) if e.code() == crate::error::ErrorCode::Internal => tree::fetch(&b, &t).await?,
        Err(e) => return Err(e),
    };
    let r = t.with(|s| tree::render(&nodes, s, max))?;
    let mut content =
        format!("Tab {}: {} — {}\n", t.id, if title.is_empty() { "(no title)" } else { &title }, url);
    content.push_str(&r.text);
    if r.omitted > 0 {
        content.push_str(&format!(
            "… {} more node(s) omitted (maxChars {max}; raise it to see them)\n",
            r.omitted
        ));
    }
    if r.total == 0 {
        content.push_str("(the page has no accessible content)\n");
    }
    let data = json!({
        "tabId": t.id,
        "url": url,
        "title": title,
        "nodes": null,
        "shown": r.total - r.omitted,
        "omitted": r.omitted,
        "totalNodes": r.total,
        "truncated": r.omitted > 0,
    });
    // `nodes` comes as JSON text written node by node (tree::render), set in its place.
    let fields = data.as_object().cloned().unwrap_or_default();
    let data = crate::output::object_json_with_raw(&fields, "nodes", &r.nodes)?;
    Ok(ToolOutput::from_json_text(content, data))
}

/// The `browser_read_page` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserReadPage",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_read_page.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
