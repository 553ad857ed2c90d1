//! `web_fetch` (also `fetch`, Stack's name): a URL as text for a model. HTML becomes the
//! page's main content in Markdown (or text, or the cleaned HTML, or the raw page); JSON and
//! plain text pass through; a PDF or an image is reported by type and size. `maxChars` pages
//! the text (`startIndex` continues), the body is capped while it streams (`maxBytes`), and
//! every hop goes through the network guard. Responses are cached in process for 15 minutes,
//! then revalidated with their `ETag`/`Last-Modified`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::chain_json;
use super::extract::{self, Kind};
use super::profile;
use crate::call::args::lenient::{Cap, Flag, Offset, Seconds};
use crate::context::{Ctx, NetworkPolicy};
use crate::engine::net::{self, Guard, Hop, Request};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;
use tendril::StrTendril;

const NAME: &str = "web_fetch";
/// Default characters per page.
pub const DEFAULT_MAX_CHARS: usize = 10_000;
/// Default body cap (bytes, after decompression).
pub const DEFAULT_MAX_BYTES: usize = 5 << 20;
/// Largest body cap.
pub const MAX_MAX_BYTES: usize = 100 << 20;
/// How long a cached response is used without asking the server.
pub const CACHE_FRESH: Duration = Duration::from_secs(15 * 60);

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, Default, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// The main content as Markdown (default).
    #[default]
    Markdown,
    /// The main content as plain text.
    Text,
    /// The main content as cleaned HTML.
    Html,
    /// The body as served (decoded).
    Raw,
}

impl Format {
    fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Html => "html",
            Self::Raw => "raw",
        }
    }
}

/// The arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The http(s) URL to fetch (a bare `host/path` gets https://).
    #[schemars(length(min = 1))]
    pub url: String,
    /// markdown (default: the main content), text, html (the main content's HTML) or raw (the body as served).
    pub format: Option<Format>,
    /// Most characters to return (default 10000; also: max_chars, max_length).
    pub max_chars: Option<Cap<10_000_000>>,
    /// Character offset to continue from (the previous call's nextStartIndex; also: start_index).
    pub start_index: Option<Offset>,
    /// Cap of the body in bytes, enforced while reading (default 5 MiB, at most 100 MiB).
    pub max_bytes: Option<Cap<{ MAX_MAX_BYTES as u64 }>>,
    /// Total time limit in seconds (default 30, at most 300).
    pub timeout: Option<Seconds<30_000, 300>>,
    /// Follow a redirect to another host (default true); either way the chain is reported.
    pub follow_cross_host: Option<Flag>,
    /// Skip the 15-minute in-process cache.
    pub no_cache: Option<Flag>,
}

/// A response kept for later calls.
#[derive(Debug, Clone)]
struct Cached {
    at: Instant,
    final_url: String,
    status: u16,
    content_type: Option<String>,
    etag: Option<String>,
    last_modified: Option<String>,
    chain: Vec<Hop>,
    body: Arc<Vec<u8>>,
}

type CacheKey = (String, NetworkPolicy, bool);

/// Most bytes the cache holds.
const CACHE_BYTES: usize = 64 << 20;

fn cache() -> &'static Mutex<HashMap<CacheKey, Cached>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Cached>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn cache_get(key: &CacheKey) -> Option<Cached> {
    cache().lock().ok()?.get(key).cloned()
}

fn cache_put(key: CacheKey, entry: Cached) {
    let Ok(mut c) = cache().lock() else { return };
    c.retain(|_, v| v.at.elapsed() < CACHE_FRESH * 4);
    let mut total: usize = c.values().map(|v| v.body.len()).sum::<usize>() + entry.body.len();
    while total > CACHE_BYTES {
        let Some(oldest) = c.iter().min_by_key(|(_, v)| v.at).map(|(k, _)| k.clone()) else { break };
        if let Some(v) = c.remove(&oldest) {
            total -= v.body.len();
        }
    }
    c.insert(key, entry);
}

/// What a page came to, before paging.
struct Rendered {
    text: String,
    title: Option<String>,
    kind: &'static str,
    encoding: Option<&'static str>,
    malformed: bool,
    readable: Option<bool>,
}

/// Turn a body into the text of `format`.
pub fn render_body(
    body: &[u8],
    content_type: Option<&str>,
    url: &str,
    format: Format,
) -> (String, Option<String>) {
    let r = render(Arc::new(body.to_vec()), content_type, url, format);
    (r.text, r.title)
}

/// The body's text: moved out of the body when this call holds it alone (decoded in place when
/// it is UTF-8), else decoded from the shared bytes (the cache's).
fn decode_body(body: Arc<Vec<u8>>, content_type: Option<&str>, html: bool) -> extract::Decoded {
    match Arc::try_unwrap(body) {
        Ok(bytes) => extract::decode_owned(bytes, content_type, html),
        Err(shared) => extract::decode(&shared, content_type, html),
    }
}

/// Render a body, dropping each form of the page as soon as the next one is made (the bytes
/// once decoded, the text once parsed, the tree once its article is serialised).
fn render(body: Arc<Vec<u8>>, content_type: Option<&str>, url: &str, format: Format) -> Rendered {
    let mime = extract::mime_of(content_type);
    match extract::kind_of(mime.as_deref(), &body) {
        Kind::Binary => Rendered {
            text: format!(
                "[binary content: {}, {} bytes; not shown (use download to save it)]",
                mime.as_deref().unwrap_or("unknown type"),
                body.len()
            ),
            title: None,
            kind: "binary",
            encoding: None,
            malformed: false,
            readable: None,
        },
        Kind::Text => {
            let d = decode_body(body, content_type, false);
            Rendered {
                text: d.text,
                title: None,
                kind: "text",
                encoding: Some(d.encoding),
                malformed: d.malformed,
                readable: None,
            }
        }
        Kind::Html => {
            let d = decode_body(body, content_type, true);
            profile::mark("decode");
            if format == Format::Raw {
                let title = extract::title_of(&d.text);
                return Rendered {
                    text: d.text,
                    title,
                    kind: "html",
                    encoding: Some(d.encoding),
                    malformed: d.malformed,
                    readable: None,
                };
            }
            let (encoding, malformed) = (d.encoding, d.malformed);
            let form = if format == Format::Html { extract::Form::Html } else { extract::Form::Markdown };
            let c = extract::convert(StrTendril::from(d.text), Some(url), form);
            let a = (c.title, c.readable);
            let text = if format == Format::Text { extract::text_of(&c.text) } else { c.text };
            profile::mark("markdown");
            Rendered {
                text,
                title: a.0,
                kind: "html",
                encoding: Some(encoding),
                malformed,
                readable: Some(a.1),
            }
        }
    }
}

/// The input schema: [`crate::call::args::schema`] drops every key named `format` (it is meant
/// for the generator's integer formats), which takes this tool's `format` property with it; it
/// is put back here.
fn input_schema() -> Value {
    let mut v = crate::call::args::schema::<Args>();
    if let Some(Value::Object(props)) = v.get_mut("properties")
        && !props.contains_key("format")
    {
        let mut ordered = serde_json::Map::new();
        for (k, x) in std::mem::take(props) {
            ordered.insert(k.clone(), x);
            if k == "url" {
                ordered.insert(
                    "format".into(),
                    json!({
                        "description": "markdown (default: the main content), text, html (the main content's HTML) or raw (the body as served).",
                        "type": "string",
                        "enum": ["markdown", "text", "html", "raw"],
                    }),
                );
            }
        }
        *props = ordered;
    }
    v
}

/// Run `web_fetch`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let url = net::parse_url(&a.url)?;
    let format = a.format.unwrap_or_default();
    let max_chars = Cap::or(a.max_chars, DEFAULT_MAX_CHARS);
    let start = Offset::or(a.start_index, 0);
    let cap = Cap::or(a.max_bytes, DEFAULT_MAX_BYTES);
    let timeout = Seconds::duration(a.timeout);
    let cross = Flag::or(a.follow_cross_host, true);
    let no_cache = Flag::on(a.no_cache);
    let policy = net::policy_of(ctx);
    let guard = Guard::new(&policy);
    guard.precheck(&url)?;
    let key: CacheKey = (url.to_string(), policy, cross);

    let cached = if no_cache { None } else { cache_get(&key) };
    let (mut entry, from_cache, unfollowed) = match cached {
        Some(c) if c.at.elapsed() < CACHE_FRESH => (c, true, None),
        stale => {
            let mut req = Request::get(url.clone());
            req.follow_cross_host = cross;
            req.headers.push((
                "accept".into(),
                "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.5".into(),
            ));
            if let Some(s) = &stale {
                if let Some(e) = &s.etag {
                    req.headers.push(("if-none-match".into(), e.clone()));
                }
                if let Some(m) = &s.last_modified {
                    req.headers.push(("if-modified-since".into(), m.clone()));
                }
            }
            let got = net::bounded(ctx, timeout, &format!("fetching {url}"), async {
                let mut resp = net::send(ctx, &guard, req).await?;
                if resp.status == 304
                    && let Some(s) = &stale
                {
                    return Ok((Cached { at: Instant::now(), ..s.clone() }, true, None));
                }
                let unfollowed = resp.unfollowed.clone();
                let body = if unfollowed.is_some() { Vec::new() } else { resp.body_capped(cap).await? };
                profile::mark("body");
                let entry = Cached {
                    at: Instant::now(),
                    final_url: resp.url.to_string(),
                    status: resp.status,
                    content_type: resp.header("content-type"),
                    etag: resp.header("etag"),
                    last_modified: resp.header("last-modified"),
                    chain: resp.chain.clone(),
                    body: Arc::new(body),
                };
                Ok((entry, false, unfollowed))
            })
            .await?;
            if got.2.is_none() && got.0.status == 200 && !no_cache {
                cache_put(key, got.0.clone());
            }
            got
        }
    };

    let data_base = json!({
        "url": url.as_str(),
        "finalUrl": entry.final_url,
        "status": entry.status,
        "redirects": chain_json(&entry.chain),
        "contentType": entry.content_type,
        "format": format.as_str(),
        "bytes": entry.body.len(),
        "cached": from_cache,
    });

    if let Some(next) = unfollowed {
        let mut data = data_base;
        data["redirectedTo"] = json!(next);
        data["totalChars"] = json!(0);
        data["truncated"] = json!(false);
        data["nextStartIndex"] = Value::Null;
        let content = format!(
            "{} redirects to another host: {next}\nFetch that URL to follow it (or pass followCrossHost: true).",
            entry.final_url
        );
        return Ok(ToolOutput::new(content, data));
    }

    // The body leaves the entry: unless the cache holds it too, the render owns the only copy.
    let body = std::mem::take(&mut entry.body);
    let ct = entry.content_type.clone();
    let final_url = entry.final_url.clone();
    let r = crate::blocking("web_fetch", move || Ok(render(body, ct.as_deref(), &final_url, format))).await?;

    let total = r.text.chars().count();
    if start > 0 && start >= total {
        return Err(ToolError::invalid(format!(
            "startIndex {start} is past the end: the page has {total} characters"
        )));
    }
    let returned = max_chars.min(total - start.min(total));
    let end = start + returned;
    let truncated = end < total;
    // The page is cut out of the text in place, not copied.
    let byte_at = |chars: usize| r.text.char_indices().nth(chars).map_or(r.text.len(), |(i, _)| i);
    let (from, to) = (byte_at(start), byte_at(end));
    let mut content = r.text;
    content.truncate(to);
    content.drain(..from);
    if entry.status >= 400 {
        content.insert_str(0, &format!("[HTTP {} from {}]\n\n", entry.status, entry.final_url));
    }
    if truncated {
        content.push_str(&format!(
            "\n\n[… {} more characters: showing {start}–{end} of {total}; call again with startIndex: {end}]",
            total - end
        ));
    }
    profile::mark("page");
    let mut data = data_base;
    data["title"] = json!(r.title);
    data["kind"] = json!(r.kind);
    data["encoding"] = json!(r.encoding);
    data["malformed"] = json!(r.malformed);
    data["mainContent"] = json!(r.readable);
    data["totalChars"] = json!(total);
    data["startIndex"] = json!(start);
    data["returnedChars"] = json!(returned);
    data["truncated"] = json!(truncated);
    data["nextStartIndex"] = if truncated { json!(end) } else { Value::Null };
    Ok(ToolOutput::new(content, data))
}

/// The `web_fetch` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "web_fetch",
    js_name: "webFetch",
    family: "web",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    // Stack `fetch`
    tool_aliases: &["fetch"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("web_fetch.json"),
    input: Some(input_schema),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    thread_local! {
        static SEEN: RefCell<Option<Vec<&'static str>>> = const { RefCell::new(None) };
    }

    /// Records the phases marked on this thread only (other tests run beside this one).
    fn record(phase: &'static str) {
        SEEN.with(|s| {
            if let Some(v) = s.borrow_mut().as_mut() {
                v.push(phase);
            }
        });
    }

    #[test]
    fn a_profiler_sees_every_phase_of_a_render_in_order_and_the_same_text_comes_out() {
        let html = format!(
            "<html><head><title>T</title></head><body><nav>menu</nav><article><h1>Title</h1>{}</article></body></html>",
            "<p>Enough words, with commas, to be the article of this page for the readability pass.</p>"
                .repeat(12)
        );
        let (before, _) = render_body(html.as_bytes(), Some("text/html"), "https://e.x/", Format::Markdown);
        assert!(profile::set_hook(record), "no other test sets the hook");
        SEEN.with(|s| *s.borrow_mut() = Some(Vec::new()));
        let (after, title) =
            render_body(html.as_bytes(), Some("text/html"), "https://e.x/", Format::Markdown);
        let seen = SEEN.with(|s| s.borrow_mut().take()).unwrap_or_default();
        assert_eq!(seen, ["decode", "parse", "readability", "markdown"]);
        assert_eq!((after.as_str(), title.as_deref()), (before.as_str(), Some("T")));
        assert!(after.contains("Enough words") && !after.contains("menu"), "{after}");
    }
}
