//! `browser_close_tab`: close a tab (the current one by default). Its id is not reused.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{session, tab_id};
use crate::call::args::lenient::Int;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "browser_close_tab";

/// The arguments of `browser_close_tab`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The tab to close (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
}

/// Run `browser_close_tab`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let Some(b) =
        session::current().await.filter(|b| session::endpoint_of(ctx).is_none() || !b.is_launched())
    else {
        return Err(ToolError::new(
            ErrorCode::TabNotFound,
            "no browser is running, so there is no tab to close",
        ));
    };
    let id = match tab.or_else(|| b.current_id()) {
        Some(i) => i,
        None => return Err(ToolError::new(ErrorCode::TabNotFound, "no tab is open")),
    };
    b.close_tab(id).await?;
    let left: Vec<u32> = b.tabs().iter().map(|t| t.id).collect();
    let content = format!(
        "Closed tab {id}; {} tab(s) left{}",
        left.len(),
        b.current_id().map_or(String::new(), |c| format!(", current tab {c}"))
    );
    Ok(ToolOutput::new(content, json!({"closed": id, "tabs": left, "currentTab": b.current_id()})))
}

/// The `browser_close_tab` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserCloseTab",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_close_tab.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
