//! `browser_network`: the tab's failed requests (an error, a refusal by the network guard, or
//! an HTTP status of 400 or more) since a cursor; `all` lists every request.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{open, tab_id};
use crate::call::args::lenient::{Cap, Flag, Int, Offset};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "browser_network";

/// The arguments of `browser_network`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Only requests after this cursor (the nextCursor of a previous call; default 0).
    pub since: Option<Offset>,
    /// Every request, not only the failed ones.
    pub all: Option<Flag>,
    /// At most this many, the latest (default 100, at most 2000).
    pub limit: Option<Cap<2000>>,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
}

/// Run `browser_network`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let since = Offset::or(a.since, 0) as u64;
    let limit = Cap::or(a.limit, 100);
    let all = Flag::on(a.all);
    let (_b, t) = open(ctx, tab).await?;
    let (reqs, next) = t.with(|s| {
        let picked: Vec<_> = s
            .net
            .iter()
            .filter(|e| e.seq > since)
            .filter(|e| {
                all || e.error.is_some() || e.blocked.is_some() || e.status.is_some_and(|st| st >= 400)
            })
            .cloned()
            .collect();
        let skip = picked.len().saturating_sub(limit);
        (picked.into_iter().skip(skip).collect::<Vec<_>>(), s.net_seq)
    })?;
    let what = if all { "request(s)" } else { "failed request(s)" };
    let mut content = if reqs.is_empty() {
        format!("No {what} in tab {} since cursor {since}.", t.id)
    } else {
        format!("{} {what} in tab {} (nextCursor {next}):\n", reqs.len(), t.id)
    };
    let items: Vec<serde_json::Value> = reqs
        .iter()
        .map(|e| {
            let outcome = match (&e.blocked, &e.error, e.status) {
                (Some(b), _, _) => format!("blocked: {b}"),
                (None, Some(err), _) => err.clone(),
                (None, None, Some(s)) => format!("HTTP {s}"),
                _ => "pending".to_owned(),
            };
            content.push_str(&format!("{} {} [{}] → {outcome}\n", e.method, e.url, e.kind));
            json!({"seq": e.seq, "url": e.url, "method": e.method, "type": e.kind, "status": e.status, "error": e.error, "blocked": e.blocked, "done": e.done})
        })
        .collect();
    Ok(ToolOutput::new(content, json!({"tabId": t.id, "requests": items, "nextCursor": next})))
}

/// The `browser_network` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserNetwork",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_network.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
