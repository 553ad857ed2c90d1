//! `browser_navigate`: open a URL in a tab and wait until it has loaded (`load`,
//! `domcontentloaded` or `networkidle`). The URL is checked by the network guard before the
//! browser is involved, and every request the page then makes (redirects, subresources) is
//! checked again; `file://` URLs open only inside the workspace.

use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::session::{Browser, Tab};
use super::{open, page_info, tab_id, wait_signals};
use crate::call::args::lenient::{Int, Seconds};
use crate::context::Ctx;
use crate::engine::net::{self, Guard};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "browser_navigate";

/// When a navigation counts as done.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    /// The `load` event (default).
    #[default]
    Load,
    /// `DOMContentLoaded`.
    Domcontentloaded,
    /// `load`, then no network connection for 500 ms (Chromium's `networkIdle`).
    Networkidle,
}

impl WaitUntil {
    fn as_str(self) -> &'static str {
        match self {
            Self::Load => "load",
            Self::Domcontentloaded => "domcontentloaded",
            Self::Networkidle => "networkidle",
        }
    }
}

/// The arguments of `browser_navigate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The URL to open (http, https, or a file:// URL inside the workspace).
    #[schemars(length(min = 1))]
    pub url: String,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
    /// When the navigation is done: load (default), domcontentloaded or networkidle.
    pub wait_until: Option<WaitUntil>,
    /// Time limit in seconds (default 30, at most 300); fractions allowed.
    pub timeout: Option<Seconds<30_000, 300>>,
}

/// A URL checked as far as can be without the browser: `INVALID_URL`, `UNSUPPORTED_SCHEME`,
/// `OUTSIDE_WORKSPACE`, `BLOCKED_ADDRESS`, `DNS`.
pub async fn check_url(ctx: &Ctx, raw: &str) -> Result<url::Url> {
    let trimmed = raw.trim();
    if trimmed.eq_ignore_ascii_case("about:blank") {
        return url::Url::parse("about:blank")
            .map_err(|e| ToolError::new(ErrorCode::InvalidUrl, e.to_string()));
    }
    if trimmed.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("file:")) {
        let u = url::Url::parse(trimmed).map_err(|e| {
            ToolError::new(ErrorCode::InvalidUrl, format!("{trimmed} is not a valid URL ({e})"))
        })?;
        let path = u.to_file_path().map_err(|_| {
            ToolError::new(ErrorCode::InvalidUrl, format!("{trimmed} is not a local file URL"))
        })?;
        let shown = path.display().to_string();
        let resolved = ctx.workspace.resolve(&shown)?;
        if !resolved.real.exists() {
            return Err(ToolError::new(ErrorCode::NotFound, format!("{shown} does not exist")));
        }
        return url::Url::from_file_path(&resolved.real).map_err(|_| {
            ToolError::new(ErrorCode::InvalidUrl, format!("{trimmed} is not a local file URL"))
        });
    }
    let u = net::parse_url(trimmed)?;
    Guard::for_ctx(ctx).vet(&u).await?;
    Ok(u)
}

/// What a finished navigation looked like.
pub struct Loaded {
    /// The final URL.
    pub url: String,
    /// The title.
    pub title: String,
    /// The main document's HTTP status, when there was one.
    pub status: Option<u64>,
    /// Milliseconds from the request to `wait_until`.
    pub ms: f64,
}

/// The guard's refusal recorded for this navigation (the document's first), if any.
fn refusal(tab: &Tab) -> Option<ToolError> {
    tab.with(|s| {
        let doc = s
            .net
            .iter()
            .rev()
            .find(|e| e.kind == "Document" && s.blocked.contains_key(&e.url))
            .map(|e| e.url.clone());
        doc.and_then(|u| s.blocked.get(&u).cloned()).or_else(|| s.blocked.values().next().cloned())
    })
    .ok()
    .flatten()
}

/// Navigate `tab` to `url` and wait.
pub async fn go(
    b: &Browser,
    tab: &Tab,
    url: &url::Url,
    until: WaitUntil,
    limit: std::time::Duration,
) -> Result<Loaded> {
    let _ = tab.with(|s| s.blocked.clear());
    let t0 = Instant::now();
    let deadline = t0 + limit;
    let timeout_err = |what: &str| {
        ToolError::new(
            ErrorCode::Timeout,
            format!("{url} did not reach {what} within {:.1} s", limit.as_secs_f64()),
        )
        .with_prop("url", url.as_str())
    };
    let r = match b
        .conn
        .call_within(Some(&tab.session), "Page.navigate", json!({"url": url.as_str()}), limit)
        .await
    {
        Ok(r) => r,
        Err(e) if e.code() == ErrorCode::Timeout => {
            let _ = b.conn.call(Some(&tab.session), "Page.stopLoading", json!({})).await;
            return Err(timeout_err("a response"));
        }
        Err(e) => return Err(e),
    };
    if let Some(err) = r["errorText"].as_str().filter(|e| !e.is_empty()) {
        if let Some(e) = refusal(tab).or_else(|| b.proxy_refusal(url.as_str())) {
            return Err(e);
        }
        let code = match err {
            "net::ERR_NAME_NOT_RESOLVED" => ErrorCode::Dns,
            "net::ERR_BLOCKED_BY_CLIENT" => ErrorCode::BlockedAddress,
            _ => ErrorCode::Network,
        };
        return Err(ToolError::new(code, format!("{url}: {err}")).with_prop("url", url.as_str()));
    }
    let loader = r["loaderId"].as_str().unwrap_or("").to_owned();
    if !loader.is_empty() {
        // The lifecycle event of this navigation's own document (an earlier page's late `load`
        // cannot count).
        let name = match until {
            WaitUntil::Load => "load",
            WaitUntil::Domcontentloaded => "DOMContentLoaded",
            WaitUntil::Networkidle => "networkIdle",
        };
        let seen = |_: &super::session::Signals| {
            tab.with(|s| s.lifecycle.iter().any(|(l, n)| *l == loader && n == name)).unwrap_or(false)
        };
        if !wait_signals(tab, deadline, seen).await {
            let _ = b.conn.call(Some(&tab.session), "Page.stopLoading", json!({})).await;
            return Err(timeout_err(&format!("'{}'", until.as_str())));
        }
    }
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    let (final_url, title) = page_info(b, tab).await;
    let status = tab
        .with(|s| {
            s.net.iter().rev().find(|e| e.kind == "Document" && e.url == final_url).and_then(|e| e.status)
        })
        .ok()
        .flatten();
    Ok(Loaded { url: final_url, title, status, ms: (ms * 10.0).round() / 10.0 })
}

/// Run `browser_navigate`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let limit = Seconds::duration(a.timeout);
    let until = a.wait_until.unwrap_or_default();
    let url = check_url(ctx, &a.url).await?;
    let (b, t) = open(ctx, tab).await?;
    let l = go(&b, &t, &url, until, limit).await?;
    let status = l.status.map_or(String::new(), |s| format!("HTTP {s}, "));
    let mut content = format!("Tab {}: {} ({status}{} in {:.0} ms)", t.id, l.url, until.as_str(), l.ms);
    if !l.title.is_empty() {
        content.push_str(&format!("\ntitle: {}", l.title));
    }
    let data = json!({
        "tabId": t.id,
        "url": url.as_str(),
        "finalUrl": l.url,
        "status": l.status.map_or(Value::Null, Value::from),
        "title": l.title,
        "waitUntil": until.as_str(),
        "loadMs": l.ms,
    });
    Ok(ToolOutput::new(content, data))
}

/// The `browser_navigate` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserNavigate",
    family: "browser",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_navigate.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
