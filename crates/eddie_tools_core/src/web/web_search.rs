//! `web_search`: a web search through a real provider, chosen from the call's environment
//! ([`Ctx::env_set`]: `ctx.env` when given, else the process's): Brave Search (`BRAVE_API_KEY`), Tavily (`TAVILY_API_KEY`) or a self-hosted
//! SearXNG (`SEARXNG_URL`, JSON output enabled). `BRAVE_API_URL` and `TAVILY_API_URL` override
//! those providers' endpoints (a gateway, or a local server in tests). Provider requests go
//! through the network guard like every other request.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::head;
use crate::call::args::lenient::{Cap, Seconds};
use crate::context::Ctx;
use crate::engine::net::{self, Guard, Request};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "web_search";
/// Brave's endpoint.
pub const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
/// Tavily's endpoint.
pub const TAVILY_URL: &str = "https://api.tavily.com/search";
/// The largest provider response read.
const MAX_RESPONSE: usize = 4 << 20;

/// How recent the results must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Freshness {
    /// The last day.
    Day,
    /// The last week.
    Week,
    /// The last month.
    Month,
    /// The last year.
    Year,
}

/// A provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// Brave Search API.
    Brave,
    /// SearXNG.
    Searxng,
    /// Tavily.
    Tavily,
}

impl Provider {
    fn as_str(self) -> &'static str {
        match self {
            Self::Brave => "brave",
            Self::Searxng => "searxng",
            Self::Tavily => "tavily",
        }
    }
}

/// The arguments of `web_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// What to search for.
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many results (1–20, default 5).
    #[schemars(range(min = 1, max = 20))]
    pub count: Option<Cap<20>>,
    /// Only results from the last day, week, month or year.
    pub freshness: Option<Freshness>,
    /// Language of the results, an ISO 639-1 code such as en or fr.
    pub language: Option<String>,
    /// Only results from this site (a domain such as docs.rs).
    pub site: Option<String>,
    /// The provider to use when several are configured (default: brave, then tavily, then searxng).
    pub provider: Option<Provider>,
    /// Time limit in seconds (default 20, at most 120).
    pub timeout: Option<Seconds<20_000, 120>>,
}

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Its title.
    pub title: String,
    /// Its URL.
    pub url: String,
    /// A snippet of its text.
    pub snippet: String,
    /// Its date as the provider gives it.
    pub date: Option<String>,
    /// Where it came from (site name, engine).
    pub source: Option<String>,
}

fn configured(ctx: &Ctx) -> Vec<(Provider, String)> {
    let mut out = Vec::new();
    if let Some(k) = ctx.env_set("BRAVE_API_KEY") {
        out.push((Provider::Brave, k));
    }
    if let Some(k) = ctx.env_set("TAVILY_API_KEY") {
        out.push((Provider::Tavily, k));
    }
    if let Some(u) = ctx.env_set("SEARXNG_URL") {
        out.push((Provider::Searxng, u));
    }
    out
}

fn no_provider() -> ToolError {
    ToolError::new(
        ErrorCode::NoProvider,
        "no web search provider is configured: set BRAVE_API_KEY (Brave Search API), TAVILY_API_KEY (Tavily) or SEARXNG_URL (a SearXNG instance with JSON output) in ctx.env or the environment",
    )
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().filter(|s| !s.is_empty())
}

/// Strip the `<strong>` Brave puts into snippets.
fn plain(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

/// Brave's `{web: {results: [{title, url, description, age, page_age, profile: {name}, meta_url: {hostname}}]}}`.
pub fn parse_brave(v: &Value) -> Vec<Hit> {
    let items = v.pointer("/web/results").and_then(Value::as_array).cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|r| {
            Some(Hit {
                title: plain(str_at(r, &["title"])?),
                url: str_at(r, &["url"])?.to_owned(),
                snippet: plain(str_at(r, &["description"]).unwrap_or_default()),
                date: str_at(r, &["page_age"]).or_else(|| str_at(r, &["age"])).map(str::to_owned),
                source: str_at(r, &["profile", "name"])
                    .or_else(|| str_at(r, &["meta_url", "hostname"]))
                    .map(str::to_owned),
            })
        })
        .collect()
}

/// SearXNG's `{results: [{title, url, content, publishedDate, engine}]}`.
pub fn parse_searxng(v: &Value) -> Vec<Hit> {
    let items = v.get("results").and_then(Value::as_array).cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|r| {
            Some(Hit {
                title: str_at(r, &["title"])?.to_owned(),
                url: str_at(r, &["url"])?.to_owned(),
                snippet: str_at(r, &["content"]).unwrap_or_default().to_owned(),
                date: str_at(r, &["publishedDate"]).map(str::to_owned),
                source: str_at(r, &["engine"]).map(str::to_owned),
            })
        })
        .collect()
}

/// Tavily's `{results: [{title, url, content, published_date}]}`.
pub fn parse_tavily(v: &Value) -> Vec<Hit> {
    let items = v.get("results").and_then(Value::as_array).cloned().unwrap_or_default();
    items
        .iter()
        .filter_map(|r| {
            let url = str_at(r, &["url"])?.to_owned();
            let source = url::Url::parse(&url).ok().and_then(|u| u.host_str().map(str::to_owned));
            Some(Hit {
                title: str_at(r, &["title"])?.to_owned(),
                snippet: str_at(r, &["content"]).unwrap_or_default().to_owned(),
                date: str_at(r, &["published_date"]).map(str::to_owned),
                source,
                url,
            })
        })
        .collect()
}

/// Build the provider's request.
fn request(
    ctx: &Ctx,
    provider: Provider,
    secret: &str,
    a: &Args,
    query: &str,
    count: usize,
) -> Result<Request> {
    let full = match &a.site {
        Some(s) if provider != Provider::Tavily && !s.trim().is_empty() => {
            format!("{query} site:{}", s.trim())
        }
        _ => query.to_owned(),
    };
    let fresh = a.freshness.map(|f| match f {
        Freshness::Day => ("pd", "day"),
        Freshness::Week => ("pw", "week"),
        Freshness::Month => ("pm", "month"),
        Freshness::Year => ("py", "year"),
    });
    let lang = a.language.as_deref().map(str::trim).filter(|l| !l.is_empty());
    match provider {
        Provider::Brave => {
            let base = ctx.env_set("BRAVE_API_URL").unwrap_or_else(|| BRAVE_URL.to_owned());
            let mut url = net::parse_url(&base)?;
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("q", &full).append_pair("count", &count.to_string());
                if let Some((b, _)) = fresh {
                    q.append_pair("freshness", b);
                }
                if let Some(l) = lang {
                    q.append_pair("search_lang", l);
                }
            }
            let mut r = Request::get(url);
            r.headers.push(("accept".into(), "application/json".into()));
            r.headers.push(("x-subscription-token".into(), secret.to_owned()));
            Ok(r)
        }
        Provider::Searxng => {
            let mut url = net::parse_url(secret)?;
            if !url.path().ends_with("/search") {
                let path = format!("{}/search", url.path().trim_end_matches('/'));
                url.set_path(&path);
            }
            {
                let mut q = url.query_pairs_mut();
                q.append_pair("q", &full).append_pair("format", "json");
                if let Some((_, s)) = fresh {
                    q.append_pair("time_range", s);
                }
                if let Some(l) = lang {
                    q.append_pair("language", l);
                }
            }
            let mut r = Request::get(url);
            r.headers.push(("accept".into(), "application/json".into()));
            Ok(r)
        }
        Provider::Tavily => {
            let base = ctx.env_set("TAVILY_API_URL").unwrap_or_else(|| TAVILY_URL.to_owned());
            let url = net::parse_url(&base)?;
            let mut body = json!({"query": full, "max_results": count, "search_depth": "basic"});
            if let Some((_, s)) = fresh {
                body["time_range"] = json!(s);
            }
            if let Some(s) = a.site.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                body["include_domains"] = json!([s]);
            }
            let mut r = Request::get(url);
            r.method = reqwest::Method::POST;
            r.body = Some(body.to_string().into_bytes());
            r.headers.push(("content-type".into(), "application/json".into()));
            r.headers.push(("accept".into(), "application/json".into()));
            r.headers.push(("authorization".into(), format!("Bearer {secret}")));
            Ok(r)
        }
    }
}

/// Run `web_search`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let query = a.query.trim().to_owned();
    if query.is_empty() {
        return Err(ToolError::invalid("query must be a non-empty string"));
    }
    let count = Cap::or(a.count, 5);
    let timeout = Seconds::duration(a.timeout);
    let available = configured(ctx);
    let (provider, secret) = match a.provider {
        Some(p) => available.into_iter().find(|(q, _)| *q == p).ok_or_else(|| {
            ToolError::new(
                ErrorCode::NoProvider,
                format!(
                    "provider {} is not configured (set {})",
                    p.as_str(),
                    match p {
                        Provider::Brave => "BRAVE_API_KEY",
                        Provider::Tavily => "TAVILY_API_KEY",
                        Provider::Searxng => "SEARXNG_URL",
                    }
                ),
            )
        })?,
        None => available.into_iter().next().ok_or_else(no_provider)?,
    };
    let req = request(ctx, provider, &secret, &a, &query, count)?;
    let guard = Guard::for_ctx(ctx);
    guard.precheck(&req.url)?;
    let endpoint = req.url.clone();
    let (status, body) =
        net::bounded(ctx, timeout, &format!("searching with {}", provider.as_str()), async {
            let mut resp = net::send(ctx, &guard, req).await?;
            let body = resp.body_capped(MAX_RESPONSE).await?;
            Ok((resp.status, body))
        })
        .await?;
    let text = String::from_utf8_lossy(&body);
    if !(200..300).contains(&status) {
        return Err(ToolError::new(
            ErrorCode::HttpStatus,
            format!(
                "{} answered HTTP {status} for the search{}: {}",
                provider.as_str(),
                if status == 401 || status == 403 { " (check the API key)" } else { "" },
                head(text.trim(), 300)
            ),
        )
        .with_prop("status", status));
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        ToolError::new(
            ErrorCode::Parse,
            format!(
                "{} at {} did not answer JSON ({e}): {}",
                provider.as_str(),
                endpoint.host_str().unwrap_or(""),
                head(text.trim(), 200)
            ),
        )
    })?;
    let mut hits = match provider {
        Provider::Brave => parse_brave(&v),
        Provider::Searxng => parse_searxng(&v),
        Provider::Tavily => parse_tavily(&v),
    };
    hits.truncate(count);
    let mut content = format!("{} results for {query:?} ({}):\n", hits.len(), provider.as_str());
    for (i, h) in hits.iter().enumerate() {
        content.push_str(&format!("\n{}. {}\n   {}\n", i + 1, h.title, h.url));
        if let Some(d) = &h.date {
            content.push_str(&format!("   {d}\n"));
        }
        if !h.snippet.is_empty() {
            content.push_str(&format!("   {}\n", h.snippet));
        }
    }
    let results: Vec<Value> = hits
        .iter()
        .map(|h| json!({"title": h.title, "url": h.url, "snippet": h.snippet, "date": h.date, "source": h.source}))
        .collect();
    Ok(ToolOutput::new(
        content.trim_end().to_owned(),
        json!({"query": query, "provider": provider.as_str(), "count": results.len(), "results": results}),
    ))
}

/// The `web_search` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "web_search",
    js_name: "webSearch",
    family: "web",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("web_search.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
