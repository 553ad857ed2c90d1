//! The `browser` family: Chrome or Chromium driven over the DevTools Protocol ([`cdp`]), launched
//! headless under the process supervisor ([`launch`]) or attached to, one per process
//! ([`session`]). Tools act on a tab (`tabId`, else the current one). Every connection a
//! launched browser makes goes through its proxy (`engine::net::proxy`), vetted by the network
//! guard; popups become tabs; downloads are off. See the README.

pub mod browser_click;
pub mod browser_close_tab;
pub mod browser_console;
pub mod browser_find;
pub mod browser_get_tabs;
pub mod browser_navigate;
pub mod browser_network;
pub mod browser_new_tab;
pub mod browser_read_page;
pub mod browser_screenshot;
pub mod browser_status;
pub mod browser_type;
pub mod cdp;
pub mod element;
pub mod launch;
pub mod session;
pub mod stack_screenshot;
pub mod tree;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::call::args::lenient::Int;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::spec::Family;
use session::{Browser, Signals, Tab};

/// The family.
pub const FAMILY: Family = Family {
    name: "browser",
    tools: &[
        browser_status::TOOL,
        browser_navigate::TOOL,
        browser_read_page::TOOL,
        browser_screenshot::TOOL,
        browser_click::TOOL,
        browser_type::TOOL,
        browser_find::TOOL,
        browser_get_tabs::TOOL,
        browser_new_tab::TOOL,
        browser_close_tab::TOOL,
        browser_console::TOOL,
        browser_network::TOOL,
        stack_screenshot::TOOL,
    ],
    contract: None,
    contract_docs: &[],
    aliases: &[
        ("tab_id", "tabId"),
        ("tab", "tabId"),
        ("full_page", "fullPage"),
        ("wait_until", "waitUntil"),
        ("max_chars", "maxChars"),
        ("max_pixels", "maxPixels"),
        ("destination", "path"),
        ("element", "ref"),
    ],
    partial_on_cancel: false,
};

/// `tabId` as a tab number.
pub fn tab_id(t: Option<Int>) -> Result<Option<u32>> {
    match t.map(|t| t.0) {
        None => Ok(None),
        Some(n) if !(1..=i64::from(u32::MAX)).contains(&n) => Err(ToolError::new(
            ErrorCode::TabNotFound,
            format!("no tab {n}; tab ids start at 1 (browser_get_tabs lists them)"),
        )),
        Some(n) => Ok(Some(n as u32)),
    }
}

/// The browser and the tab a call acts on, with the call's guard armed on the tab.
pub async fn open(ctx: &Ctx, tab: Option<u32>) -> Result<(Arc<Browser>, Arc<Tab>)> {
    let b = session::get(ctx).await?;
    let t = b.tab(tab).await?;
    session::arm(&b, &t, ctx)?;
    b.front(&t).await?;
    Ok((b, t))
}

/// Wait until `done` holds for the tab's signals, at most until `deadline`; whether it did.
pub async fn wait_signals(tab: &Tab, deadline: Instant, done: impl Fn(&Signals) -> bool) -> bool {
    let mut rx = tab.signals.subscribe();
    let left = deadline.saturating_duration_since(Instant::now());
    matches!(tokio::time::timeout(left, rx.wait_for(|s| done(s))).await, Ok(Ok(_)))
}

/// How long one input event may take (a renderer that does not answer: `TIMEOUT`).
pub const INPUT_TIMEOUT: Duration = Duration::from_secs(10);

/// `Runtime.evaluate` by value; a thrown exception is `INVALID_ARGUMENT` with its text.
pub async fn eval(b: &Browser, tab: &Tab, expr: &str) -> Result<Value> {
    let r = b
        .conn
        .call(
            Some(&tab.session),
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        )
        .await?;
    if let Some(d) = r.get("exceptionDetails") {
        let text =
            d["exception"]["description"].as_str().or_else(|| d["text"].as_str()).unwrap_or("exception");
        return Err(ToolError::invalid(format!("the page threw: {text}")));
    }
    Ok(r["result"]["value"].clone())
}

/// The page's URL and title.
pub async fn page_info(b: &Browser, tab: &Tab) -> (String, String) {
    match eval(b, tab, "[location.href, document.title]").await {
        Ok(Value::Array(a)) => (
            a.first().and_then(Value::as_str).unwrap_or("").to_owned(),
            a.get(1).and_then(Value::as_str).unwrap_or("").to_owned(),
        ),
        _ => (tab.with(|s| s.url.clone()).unwrap_or_default(), String::new()),
    }
}

/// What the tab looked like before an action: its signals and the loaders it has seen.
pub struct Before {
    signals: Signals,
    loaders: std::collections::HashSet<String>,
}

/// Note the tab's state before an action that may navigate.
pub fn before(tab: &Tab) -> Before {
    let loaders = tab.with(|s| s.lifecycle.iter().map(|(l, _)| l.clone()).collect()).unwrap_or_default();
    Before { signals: *tab.signals.borrow(), loaders }
}

/// How long after an action a navigation may start and still count as the action's.
const NAVIGATION_START: Duration = Duration::from_millis(150);
/// How long requests the action started (a form sent by `fetch`, then a redirect in script)
/// are waited for before looking again for a navigation.
const ACTION_REQUESTS: Duration = Duration::from_secs(3);

/// After an action (click, Enter): if it started a navigation of the main frame within a
/// moment, or once the requests it started have finished, wait until the new document has
/// loaded (at most until `deadline`). Whether one happened. Loaded means the `load` of the
/// document the navigation committed, so the page read afterwards is the new one (never the
/// old page, whose title a slow submit used to report).
pub async fn settle_navigation(tab: &Tab, before: Before, deadline: Instant) -> bool {
    let b = before.signals;
    let within = |d: Duration| Instant::now() + d.min(deadline.saturating_duration_since(Instant::now()));
    let start = |s: &Signals| s.started > b.started || s.navs > b.navs;
    let mut started = wait_signals(tab, within(NAVIGATION_START), start).await;
    if !started && tab.signals.borrow().net_events > b.net_events {
        // The action sent requests: a script may navigate when they answer.
        let answered = |s: &Signals| start(s) || s.inflight <= b.inflight;
        wait_signals(tab, within(ACTION_REQUESTS), answered).await;
        started = wait_signals(tab, within(NAVIGATION_START), start).await;
    }
    if !started {
        return false;
    }
    let loaded = |s: &Signals| {
        s.navs > b.navs
            && tab
                .with(|t| {
                    !before.loaders.contains(&t.loader)
                        && t.lifecycle.iter().any(|(l, n)| n == "load" && *l == t.loader)
                })
                .unwrap_or(false)
    };
    wait_signals(tab, deadline, loaded).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_ids_match_and_levels_follow_floyd() {
        for t in FAMILY.tools {
            let def = crate::registry::definition(t.name).cloned().unwrap_or_default();
            assert!(def["outputSchema"]["$id"].as_str().is_some_and(|id| id.contains(t.name)), "{}", t.name);
            // Screenshots write a PNG into the workspace without asking; click and type confirm.
            assert_eq!(t.mutating(), t.confirms() || t.name.contains("screenshot"), "{}", t.name);
        }
        let level = |n: &str| crate::registry::find(n).map(|s| s.permission);
        use crate::spec::Permission;
        assert_eq!(level("browser_click"), Some(Permission::Dangerous));
        assert_eq!(level("browser_type"), Some(Permission::Dangerous));
        assert_eq!(level("browser_navigate"), Some(Permission::Moderate));
        assert_eq!(level("browser_read_page"), Some(Permission::Moderate));
        assert_eq!(level("browser_screenshot"), Some(Permission::Moderate));
        assert_eq!(level("browser_find"), Some(Permission::Moderate));
        assert_eq!(level("browser_status"), Some(Permission::None));
    }

    #[test]
    fn tab_ids_and_seconds_are_checked() {
        assert_eq!(tab_id(Some(Int(2))).ok(), Some(Some(2)));
        assert!(tab_id(Some(Int(0))).is_err());
    }
}
