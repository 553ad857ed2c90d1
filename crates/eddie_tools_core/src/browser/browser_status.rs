//! `browser_status`: whether a browser is running, launched here or attached to, with its
//! version and tabs; when none is, which binary the next call would launch (or that none is
//! found, and what was searched). It starts nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::session::{self, Mode};
use super::{launch, page_info};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "browser_status";

/// The arguments of `browser_status` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("properties" = {}))]
pub struct Args {}

/// Run `browser_status`.
pub async fn run(_a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    if let Some(b) = session::current().await {
        let mut tabs = Vec::new();
        for t in b.tabs() {
            let (url, title) = page_info(&b, &t).await;
            tabs.push(
                json!({"tabId": t.id, "url": url, "title": title, "current": b.current_id() == Some(t.id)}),
            );
        }
        let version = b.version.get().cloned().unwrap_or_default();
        let (mode, source) = match &b.mode {
            Mode::Launched(p) => ("launched", p.display().to_string()),
            Mode::Attached(ep) => ("attached", ep.clone()),
        };
        let content = format!(
            "Browser {mode} ({source}), {version}; {} tab(s), current tab {}{}",
            tabs.len(),
            b.current_id().map_or("none".to_owned(), |i| i.to_string()),
            if b.is_launched() {
                format!("; closes after {} s idle", b.idle().as_secs())
            } else {
                String::new()
            },
        );
        let data = json!({
            "running": true,
            "mode": mode,
            "binary": if b.is_launched() { Some(source.clone()) } else { None },
            "endpoint": if b.is_launched() { None } else { Some(source) },
            "version": version,
            "pid": b.pid,
            "tabCount": tabs.len(),
            "currentTab": b.current_id(),
            "tabs": tabs,
            "idleTimeoutMs": b.idle().as_millis() as u64,
        });
        return Ok(ToolOutput::new(content, data));
    }
    if let Some(ep) = session::endpoint_of(ctx) {
        return Ok(ToolOutput::new(
            format!("No browser connected; the next browser call attaches to {ep}."),
            json!({"running": false, "mode": "attach", "binary": null, "endpoint": ep, "version": null, "pid": null, "tabCount": 0, "currentTab": null, "tabs": [], "idleTimeoutMs": null}),
        ));
    }
    match launch::find(ctx) {
        Ok(p) => Ok(ToolOutput::new(
            format!("No browser running; the next browser call launches {} (headless).", p.display()),
            json!({"running": false, "mode": "launch", "binary": p.display().to_string(), "endpoint": null, "version": null, "pid": null, "tabCount": 0, "currentTab": null, "tabs": [], "idleTimeoutMs": null}),
        )),
        Err(e) => Ok(ToolOutput::new(
            format!("No browser running, and none can be launched: {}", e.message()),
            json!({"running": false, "mode": "none", "binary": null, "endpoint": null, "version": null, "pid": null, "tabCount": 0, "currentTab": null, "tabs": [], "idleTimeoutMs": null, "searched": e.props().get("searched").cloned()}),
        )),
    }
}

/// The `browser_status` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserStatus",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_status.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
