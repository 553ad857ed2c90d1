//! `check_url`: is a URL reachable, and what is behind it. A `HEAD` request (a ranged `GET`
//! of one byte when the server refuses `HEAD` with 405 or 501), redirects followed and
//! reported, through the network guard. An error status is a result (`ok: false`), not an
//! error; only what stops the check (blocked, DNS, TLS, timeout) fails.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::chain_json;
use crate::call::args::lenient::{Flag, Seconds};
use crate::context::Ctx;
use crate::engine::net::{self, Guard, Request};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "check_url";

/// The arguments of `check_url`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The http(s) URL to check.
    #[schemars(length(min = 1))]
    pub url: String,
    /// Time limit in seconds (default 15, at most 120).
    pub timeout: Option<Seconds<15_000, 120>>,
    /// Follow redirects (default true; also: follow_redirects).
    pub follow_redirects: Option<Flag>,
}

/// Run `check_url`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let url = net::parse_url(&a.url)?;
    let timeout = Seconds::duration(a.timeout);
    let follow = Flag::or(a.follow_redirects, true);
    let guard = Guard::for_ctx(ctx);
    guard.precheck(&url)?;
    let (resp, method, ms) = net::bounded(ctx, timeout, &format!("checking {url}"), async {
        let mut req = Request::get(url.clone());
        req.method = reqwest::Method::HEAD;
        req.follow = follow;
        req.decompress = false;
        let resp = net::send(ctx, &guard, req.clone()).await?;
        if matches!(resp.status, 405 | 501) {
            req.method = reqwest::Method::GET;
            req.url = resp.url.clone();
            req.headers.push(("range".into(), "bytes=0-0".into()));
            let started = resp.started;
            let mut again = net::send(ctx, &guard, req).await?;
            let mut chain = resp.chain.clone();
            chain.append(&mut again.chain);
            again.chain = chain;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            return Ok((again, "GET", ms));
        }
        let ms = resp.started.elapsed().as_secs_f64() * 1000.0;
        Ok((resp, "HEAD", ms))
    })
    .await?;
    let length = resp
        .header("content-range")
        .and_then(|r| r.rsplit('/').next().and_then(|n| n.trim().parse::<u64>().ok()))
        .or_else(|| {
            if method == "HEAD" {
                resp.header("content-length").and_then(|n| n.trim().parse::<u64>().ok())
            } else {
                None
            }
        });
    let ok = (200..400).contains(&resp.status);
    let ct = resp.header("content-type");
    let data = json!({
        "url": url.as_str(),
        "finalUrl": resp.url.as_str(),
        "status": resp.status,
        "ok": ok,
        "method": method,
        "redirects": chain_json(&resp.chain),
        "redirectedTo": resp.unfollowed,
        "contentType": ct,
        "contentLength": length,
        "latencyMs": (ms * 10.0).round() / 10.0,
    });
    let mut content = format!("{} → HTTP {} ({method}, {:.0} ms)", url, resp.status, ms);
    if resp.url != url {
        content.push_str(&format!("\nfinal URL: {}", resp.url));
    }
    if !resp.chain.is_empty() {
        content.push_str(&format!("\nredirects: {}", resp.chain.len()));
    }
    if let Some(next) = &resp.unfollowed {
        content.push_str(&format!("\nredirects to {next} (not followed)"));
    }
    if let Some(ct) = data["contentType"].as_str() {
        content.push_str(&format!("\ncontent-type: {ct}"));
    }
    if let Some(n) = length {
        content.push_str(&format!("\ncontent-length: {n}"));
    }
    Ok(ToolOutput::new(content, data))
}

/// The `check_url` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "check_url",
    js_name: "checkUrl",
    family: "web",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("check_url.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
