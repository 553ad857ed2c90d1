//! `browser_new_tab`: open a tab (it becomes the current one), optionally navigating it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::browser_navigate::{self as navigate, WaitUntil};
use super::session;
use crate::call::args::lenient::Seconds;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "browser_new_tab";

/// The arguments of `browser_new_tab`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A URL to open in it (default about:blank); checked like browser_navigate's.
    pub url: Option<String>,
    /// Time limit in seconds for loading the URL (default 30, at most 300).
    pub timeout: Option<Seconds<30_000, 300>>,
}

/// Run `browser_new_tab`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let limit = Seconds::duration(a.timeout);
    let url = match a.url.as_deref().filter(|u| !u.trim().is_empty()) {
        Some(u) => Some(navigate::check_url(ctx, u).await?),
        None => None,
    };
    let b = session::get(ctx).await?;
    let t = b.new_tab().await?;
    session::arm(&b, &t, ctx)?;
    let (final_url, title, status) = match &url {
        Some(u) => {
            let l = navigate::go(&b, &t, u, WaitUntil::Load, limit).await?;
            (l.url, l.title, l.status)
        }
        None => ("about:blank".to_owned(), String::new(), None),
    };
    let content = format!("Opened tab {} ({final_url}); it is now the current tab.", t.id);
    Ok(ToolOutput::new(
        content,
        json!({"tabId": t.id, "url": final_url, "title": title, "status": status.map_or(Value::Null, Value::from)}),
    ))
}

/// The `browser_new_tab` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserNewTab",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_new_tab.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
