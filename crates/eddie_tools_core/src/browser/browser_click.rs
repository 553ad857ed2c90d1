//! `browser_click`: click an element by `ref`, `selector` or `x`/`y`. The element is found
//! first, then `ctx.confirm` is asked naming it; then it is scrolled into view, waited for
//! until it is visible, enabled and not covered, and clicked in its centre. A navigation the
//! click starts is waited for and reported.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::element::{self, Which};
use super::{open, page_info, settle_navigation, tab_id};
use crate::call::args::lenient::{Int, Seconds};
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "browser_click";

/// The arguments of `browser_click`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The element's ref from browser_read_page or browser_find (e.g. e12).
    #[serde(rename = "ref")]
    pub r#ref: Option<String>,
    /// A CSS selector (the first match is clicked).
    pub selector: Option<String>,
    /// Viewport x coordinate in CSS pixels (with y).
    pub x: Option<f64>,
    /// Viewport y coordinate in CSS pixels (with x).
    pub y: Option<f64>,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
    /// Time limit in seconds for the element to become clickable and for a navigation it starts (default 10, at most 120).
    pub timeout: Option<Seconds<10_000, 120>>,
}

/// Run `browser_click`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let limit = Seconds::duration(a.timeout);
    let which = Which::of(a.r#ref.as_deref(), a.selector.as_deref(), a.x, a.y)?
        .ok_or_else(|| ToolError::invalid("give ref, selector, or x and y"))?;
    let (b, t) = open(ctx, tab).await?;
    let el = element::resolve(&b, &t, &which).await?;
    let (url, _) = page_info(&b, &t).await;
    let at = match which {
        Which::Point(x, y) => format!(" at ({x}, {y})"),
        _ => String::new(),
    };
    if !ctx.confirm(format!("Click {}{at} in browser tab {} ({url})", el.desc, t.id)).await? {
        return Ok(ToolOutput::new(
            format!("Click on {} cancelled by user; nothing clicked.", el.desc),
            json!({"tabId": t.id, "clicked": false, "cancelled": true, "element": el.desc, "target": el.info, "x": null, "y": null, "navigated": false, "url": url, "title": null}),
        ));
    }
    let deadline = Instant::now() + limit;
    let (x, y) = match which {
        Which::Point(x, y) => (x, y),
        _ => element::actionable(&b, &t, &el, deadline).await?,
    };
    let before = super::before(&t);
    element::click_at(&b, &t, x, y).await?;
    let navigated = settle_navigation(&t, before, deadline).await;
    let (now, title) = page_info(&b, &t).await;
    let mut content = format!("Clicked {} at ({x:.0}, {y:.0}) in tab {}", el.desc, t.id);
    if navigated {
        content.push_str(&format!("; it navigated to {now}"));
        if !title.is_empty() {
            content.push_str(&format!(" ({title})"));
        }
    }
    let data = json!({
        "tabId": t.id,
        "clicked": true,
        "cancelled": false,
        "element": el.desc,
        "target": el.info,
        "x": x,
        "y": y,
        "navigated": navigated,
        "url": now,
        "title": title,
    });
    Ok(ToolOutput::new(content, data))
}

/// The `browser_click` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserClick",
    family: "browser",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_click.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
