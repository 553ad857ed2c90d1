//! `browser_console`: the tab's console messages and uncaught errors since a cursor (the
//! `nextCursor` of the previous call), optionally only errors and warnings.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{open, tab_id};
use crate::call::args::lenient::{Cap, Flag, Int, Offset};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "browser_console";

/// The arguments of `browser_console`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Only messages after this cursor (the nextCursor of a previous call; default 0: all kept).
    pub since: Option<Offset>,
    /// Only errors and warnings.
    pub errors_only: Option<Flag>,
    /// At most this many messages, the latest (default 100, at most 2000).
    pub limit: Option<Cap<2000>>,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
}

/// Run `browser_console`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let since = Offset::or(a.since, 0) as u64;
    let limit = Cap::or(a.limit, 100);
    let errors_only = Flag::on(a.errors_only);
    let (_b, t) = open(ctx, tab).await?;
    let (msgs, next) = t.with(|s| {
        let all: Vec<_> = s
            .console
            .iter()
            .filter(|m| m.seq > since && (!errors_only || matches!(m.level.as_str(), "error" | "warning")))
            .cloned()
            .collect();
        let skip = all.len().saturating_sub(limit);
        (all.into_iter().skip(skip).collect::<Vec<_>>(), s.console_seq)
    })?;
    let mut content = if msgs.is_empty() {
        format!("No console messages in tab {} since cursor {since}.", t.id)
    } else {
        format!("{} console message(s) in tab {} (nextCursor {next}):\n", msgs.len(), t.id)
    };
    let items: Vec<serde_json::Value> = msgs
        .iter()
        .map(|m| {
            let at = match (&m.url, m.line) {
                (Some(u), Some(l)) => format!(" ({u}:{l})"),
                (Some(u), None) => format!(" ({u})"),
                _ => String::new(),
            };
            content.push_str(&format!("[{}] {}{at}\n", m.level, m.text));
            json!({"seq": m.seq, "level": m.level, "source": m.source, "text": m.text, "url": m.url, "line": m.line})
        })
        .collect();
    Ok(ToolOutput::new(content, json!({"tabId": t.id, "messages": items, "nextCursor": next})))
}

/// The `browser_console` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserConsole",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_console.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
