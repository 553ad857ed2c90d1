//! `browser_get_tabs`: the open tabs with their ids, URLs and titles, and which is current.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{page_info, session};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "browser_get_tabs";

/// The arguments of `browser_get_tabs` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("properties" = {}))]
pub struct Args {}

/// The tabs as JSON, and as lines.
pub async fn list(b: &session::Browser) -> (Vec<serde_json::Value>, String) {
    let mut tabs = Vec::new();
    let mut text = String::new();
    for t in b.tabs() {
        let (url, title) = page_info(b, &t).await;
        let current = b.current_id() == Some(t.id);
        text.push_str(&format!(
            "{} tab {}: {} — {}\n",
            if current { "*" } else { "-" },
            t.id,
            if title.is_empty() { "(no title)" } else { &title },
            url
        ));
        tabs.push(json!({"tabId": t.id, "url": url, "title": title, "current": current}));
    }
    (tabs, text)
}

/// Run `browser_get_tabs`.
pub async fn run(_a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let b = session::get(ctx).await?;
    let (tabs, text) = list(&b).await;
    let content = if tabs.is_empty() {
        "No open tabs (browser_new_tab opens one).".to_owned()
    } else {
        format!("{} tab(s); * is current:\n{text}", tabs.len())
    };
    Ok(ToolOutput::new(content, json!({"tabs": tabs, "currentTab": b.current_id()})))
}

/// The `browser_get_tabs` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserGetTabs",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_get_tabs.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
