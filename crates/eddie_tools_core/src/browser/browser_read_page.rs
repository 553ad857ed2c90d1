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
    let (walk, (url, title)) = tokio::join!(tree::walk(&b, &t), page_info(&b, &t));
    // The text and the data are written once each, in place: the header and the data's first
    // fields first, then the rendering after them (no copy of either).
    let header =
        format!("Tab {}: {} — {}\n", t.id, if title.is_empty() { "(no title)" } else { &title }, url);
    let mut json = serde_json::to_string(&json!({"tabId": t.id, "url": url, "title": title}))
        .map_err(|e| crate::error::ToolError::internal(format!("serialise result: {e}")))?;
    json.pop();
    json.push_str(",\"nodes\":");
    // The rows are rendered as they are read (no nodes held), and freed before the result is
    // finished. The walker fails only when the page cannot run it (a frame being replaced) or
    // its answer cannot be read: the accessibility tree gives the same nodes, slower.
    let walked = match walk {
        Ok(w) => t.with(|s| tree::render_walk(&w, s, max, header.clone(), json.clone()))?,
        Err(e) => Err(e),
    };
    let mut r = match walked {
        Ok(r) => r,
        Err(e) if matches!(e.code(), crate::error::ErrorCode::Internal | crate::error::ErrorCode::Parse) => {
            let nodes = tree::fetch(&b, &t).await?;
            t.with(|s| tree::render_into(&nodes, s, max, header, json))?
        }
        Err(e) => return Err(e),
    };
    if r.omitted > 0 {
        r.text.push_str(&format!(
            "… {} more node(s) omitted (maxChars {max}; raise it to see them)\n",
            r.omitted
        ));
    }
    if r.total == 0 {
        r.text.push_str("(the page has no accessible content)\n");
    }
    // The data's last fields, after `nodes` (the order of the object before: tabId, url,
    // title, nodes, shown, omitted, totalNodes, truncated).
    let mut data = r.nodes;
    data.push_str(&format!(
        ",\"shown\":{},\"omitted\":{},\"totalNodes\":{},\"truncated\":{}}}",
        r.total - r.omitted,
        r.omitted,
        r.total,
        r.omitted > 0
    ));
    Ok(ToolOutput::from_json_text(r.text, data))
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
