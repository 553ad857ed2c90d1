//! The HTTP client behind the guard: each hop goes to the addresses the guard checked and to
//! nothing else (so the connection goes where the check said): straight to the server on
//! hyper's own HTTP/1 connection (`direct`), or through a proxy (or with a user and password in
//! the URL) on one `reqwest` client per hop whose only name resolution is those addresses; redirects
//! followed by hand (each hop vetted again), bodies read with a streaming byte cap, connect
//! and total timeouts, and the call's abort. TLS is rustls on the `ring` provider with the
//! platform's roots. Proxies (`HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`, `NO_PROXY`, from
//! the call's environment, `Ctx::env_set`) are honoured; the target is vetted before the request either way.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use super::decode::{self, DecodeError, Decoder, Plan};
use super::direct;
use super::guard::Guard;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};

/// Most redirects followed.
pub const MAX_REDIRECTS: usize = 10;
/// The user agent.
pub const USER_AGENT: &str =
    concat!("eddie-tools/", env!("CARGO_PKG_VERSION"), " (+https://github.com/eddie)");

/// One request.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `HEAD`, `POST`.
    pub method: reqwest::Method,
    /// Where.
    pub url: Url,
    /// Extra headers (API keys among them): sent only to the origin (scheme, host and port)
    /// of the first URL, dropped when a redirect leaves it.
    pub headers: Vec<(String, String)>,
    /// A body (for `POST`).
    pub body: Option<Vec<u8>>,
    /// Follow redirects (up to [`MAX_REDIRECTS`]).
    pub follow: bool,
    /// Follow a redirect to another host (else it is returned as the response).
    pub follow_cross_host: bool,
    /// Ask for gzip/brotli/deflate and decode every layer the response lists, up to
    /// [`decode::MAX_LAYERS`] (off for downloads: the bytes as served).
    pub decompress: bool,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// A `GET` or `HEAD` with no proxy reads through a fixed 8 KiB buffer
    /// (`direct::READ_BUF`): the least memory beside a body kept whole (the default). Off for
    /// bodies streamed elsewhere (downloads, git's packs), which then read through hyper's
    /// growing buffer, in fewer and larger reads.
    pub small_reads: bool,
}

impl Request {
    /// A `GET` of `url` with the defaults.
    pub fn get(url: Url) -> Self {
        Self {
            method: reqwest::Method::GET,
            url,
            headers: Vec::new(),
            body: None,
            follow: true,
            follow_cross_host: true,
            decompress: true,
            connect_timeout: Duration::from_secs(10),
            small_reads: true,
        }
    }
}

/// One hop of a redirect chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// The URL requested.
    pub url: String,
    /// Its status.
    pub status: u16,
}

/// A response's body, still to be read.
#[derive(Debug)]
enum Inner {
    /// Through a proxy, or with a user and password in the URL.
    Reqwest(reqwest::Response),
    /// Straight to the server, on our own connection (driven as the body is read, dropped with
    /// the response).
    Direct { body: hyper::body::Incoming, conn: direct::Conn },
}

impl Inner {
    /// The next piece of the body as served.
    async fn chunk(&mut self, url: &Url) -> Result<Option<bytes::Bytes>> {
        match self {
            Self::Reqwest(r) => r.chunk().await.map_err(|e| map_error(&e, url)),
            Self::Direct { body, conn } => loop {
                let frame = std::future::poll_fn(|cx| {
                    conn.drive(cx);
                    hyper::body::Body::poll_frame(std::pin::Pin::new(&mut *body), cx)
                })
                .await;
                match frame {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(direct::map_error(&e, url)),
                    // Trailers are not part of the body.
                    Some(Ok(frame)) => match frame.into_data() {
                        Ok(data) if !data.is_empty() => return Ok(Some(data)),
                        _ => {}
                    },
                }
            },
        }
    }

    /// The body's length, when the response gives it.
    fn content_length(&self) -> Option<u64> {
        match self {
            Self::Reqwest(r) => r.content_length(),
            Self::Direct { body, .. } => hyper::body::Body::size_hint(body).exact(),
        }
    }
}

/// A response whose headers have arrived.
#[derive(Debug)]
pub struct Response {
    /// The final URL.
    pub url: Url,
    /// Its status.
    pub status: u16,
    /// Its headers.
    pub headers: HeaderMap,
    /// Every redirect before it (the final response is not in it).
    pub chain: Vec<Hop>,
    /// A redirect to another host that was not followed (`follow_cross_host: false`).
    pub unfollowed: Option<String>,
    /// The address connected to.
    pub remote: Option<SocketAddr>,
    /// When the request started.
    pub started: Instant,
    inner: Inner,
    /// The decoded-size limit set by [`Response::body_capped`].
    limit: Option<usize>,
    /// The decoder of the body's codings (`decompress`), `None` for the body as served.
    decoder: Option<Decoder>,
    /// The codings were more than [`decode::MAX_LAYERS`].
    too_deep: Option<usize>,
    /// The body has ended.
    ended: bool,
}

impl Response {
    /// A header as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    /// The next piece of the body (decoded when `decompress`, every layer; past the decoded
    /// limit, [`decode::DEFAULT_LIMIT`] unless [`Response::body_capped`] set another, it is
    /// `TOO_LARGE`).
    pub async fn chunk(&mut self) -> Result<Option<bytes::Bytes>> {
        if let Some(n) = self.too_deep {
            return Err(ToolError::new(
                ErrorCode::TooLarge,
                format!(
                    "{} is encoded {n} times over (Content-Encoding); at most {} layers are decoded",
                    self.url,
                    decode::MAX_LAYERS
                ),
            ));
        }
        loop {
            if self.ended {
                return Ok(None);
            }
            let raw = self.inner.chunk(&self.url).await?;
            let Some(decoder) = self.decoder.as_mut() else { return Ok(raw) };
            let out = match raw {
                Some(piece) => decoder.push(&piece),
                None => {
                    self.ended = true;
                    decoder.finish()
                }
            };
            match out {
                Ok(out) if out.is_empty() => {}
                Ok(out) => return Ok(Some(bytes::Bytes::from(out))),
                Err(DecodeError::TooLarge) => {
                    return Err(ToolError::new(
                        ErrorCode::TooLarge,
                        format!(
                            "{} decodes to more than the {}-byte cap (Content-Encoding); raise maxBytes if the whole body is needed",
                            self.url,
                            self.decoded_limit()
                        ),
                    ));
                }
                Err(DecodeError::Invalid(why)) => {
                    return Err(ToolError::new(
                        ErrorCode::Network,
                        format!("{}: the body does not match its Content-Encoding ({why})", self.url),
                    ));
                }
            }
        }
    }

    fn decoded_limit(&self) -> usize {
        self.limit.unwrap_or(decode::DEFAULT_LIMIT)
    }

    /// The whole body, at most `cap` bytes (`TOO_LARGE` past it, checked while reading, after
    /// decoding: the decoders stop at the cap too).
    pub async fn body_capped(&mut self, cap: usize) -> Result<Vec<u8>> {
        if let Some(len) = self.inner.content_length()
            && !self.headers.contains_key(reqwest::header::CONTENT_ENCODING)
            && len > cap as u64
        {
            return Err(too_large(&self.url, cap, Some(len)));
        }
        self.limit = Some(cap);
        if let Some(d) = self.decoder.as_mut() {
            d.set_limit(cap);
            // Decoded straight into one buffer, within the cap.
            d.keep_all();
        }
        // An announced length (of the body as served, when it is not encoded) sizes the buffer
        // once, up to the cap: no doubling, no spare capacity kept.
        let mut out = Vec::new();
        if let Some(len) = self.inner.content_length()
            && self.decoder.is_none()
        {
            out.reserve_exact(usize::try_from(len).unwrap_or(cap).min(cap));
        }
        while let Some(chunk) = self.chunk().await? {
            if out.len() + chunk.len() > cap {
                return Err(too_large(&self.url, cap, None));
            }
            // Without that length (none announced, or the body is encoded), the buffer grows
            // by a quarter rather than doubling: a doubled one is up to half empty when the
            // body ends.
            if out.len() + chunk.len() > out.capacity() {
                out.reserve_exact(chunk.len().max(out.capacity() / 4).min(cap - out.len()));
            }
            out.extend_from_slice(&chunk);
        }
        if let Some(d) = self.decoder.as_mut() {
            out = d.take_all();
        }
        out.shrink_to_fit();
        Ok(out)
    }
}

/// `TOO_LARGE` for `url` past `cap`.
pub fn too_large(url: &Url, cap: usize, announced: Option<u64>) -> ToolError {
    let what = announced.map_or_else(|| "more than".to_owned(), |n| format!("{n} bytes, more than"));
    ToolError::new(
        ErrorCode::TooLarge,
        format!("{url} is {what} the {cap}-byte cap; raise maxBytes if the whole body is needed"),
    )
}

/// The TLS configuration of every hop (ALPN: HTTP/2, then HTTP/1.1; the direct hops offer
/// HTTP/1.1 only).
pub(super) fn tls_config() -> Result<rustls::ClientConfig> {
    static CONFIG: OnceLock<std::result::Result<rustls::ClientConfig, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            // reqwest (and anything else on rustls) finds ring too; a provider already
            // installed by someone else stays.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let verifier =
                rustls_platform_verifier::Verifier::new(Arc::clone(&provider)).map_err(|e| e.to_string())?;
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth();
            config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
            Ok(config)
        })
        .clone()
        .map_err(|e| ToolError::new(ErrorCode::Tls, format!("TLS setup failed: {e}")))
}

/// A resolver that resolves nothing: every name a client may reach is pinned beforehand.
struct NoResolve;

impl reqwest::dns::Resolve for NoResolve {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let name = name.as_str().to_owned();
        Box::pin(async move {
            Err(Box::new(std::io::Error::other(format!("{name} was not vetted by the network guard")))
                as Box<dyn std::error::Error + Send + Sync>)
        })
    }
}

/// The proxy from the call's environment ([`Ctx::env_set`]), if any.
fn proxy_for(ctx: &Ctx, url: &Url) -> Option<reqwest::Proxy> {
    let https = url.scheme() == "https";
    let keys: &[&str] = if https {
        &["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    } else {
        &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
    };
    let proxy = keys.iter().find_map(|k| ctx.env_set(k))?;
    let no_proxy = ctx.env_set("NO_PROXY").or_else(|| ctx.env_set("no_proxy"));
    let p = reqwest::Proxy::all(proxy.as_str()).ok()?;
    Some(p.no_proxy(no_proxy.and_then(|n| reqwest::NoProxy::from_string(&n))))
}

fn client_for(
    req: &Request,
    url: &Url,
    addrs: &[SocketAddr],
    proxy: Option<reqwest::Proxy>,
) -> Result<reqwest::Client> {
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(req.connect_timeout)
        .tls_backend_preconfigured(tls_config()?)
        .user_agent(USER_AGENT)
        // Codings are undone here, every layer and within the cap (`decode`), not by reqwest,
        // which undoes one layer only: reqwest is built without its decompression features.
        .pool_max_idle_per_host(0);
    match proxy {
        // The proxy's own name is the host's configuration, resolved normally.
        Some(p) => b = b.proxy(p),
        None => b = b.no_proxy().dns_resolver(Arc::new(NoResolve)),
    }
    if let Some(url::Host::Domain(d)) = url.host() {
        b = b.resolve_to_addrs(d, addrs);
    }
    b.build().map_err(|e| ToolError::new(ErrorCode::Network, format!("HTTP client setup failed: {e}")))
}

/// The innermost cause's text.
pub(super) fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur: &(dyn std::error::Error + 'static) = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// `TLS` when TLS failed somewhere in `e`'s chain: a rustls error, found also inside the
/// `io::Error`s that carry one (tokio-rustls wraps it so, and `io::Error::source` skips the
/// wrapped error itself), or a cause that says so (a certificate, a handshake, a missing
/// `close_notify`).
pub(super) fn tls_error(e: &(dyn std::error::Error + 'static), url: &Url) -> Option<ToolError> {
    fn rustls_in(e: &(dyn std::error::Error + 'static)) -> bool {
        let mut src = Some(e);
        while let Some(s) = src {
            if s.downcast_ref::<rustls::Error>().is_some() {
                return true;
            }
            if let Some(inner) = s.downcast_ref::<std::io::Error>().and_then(std::io::Error::get_ref)
                && rustls_in(inner)
            {
                return true;
            }
            src = s.source();
        }
        false
    }
    let cause = root_cause(e);
    let lower = cause.to_ascii_lowercase();
    (rustls_in(e) || lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake"))
        .then(|| tls_failed(url.host_str().unwrap_or("the host"), &cause))
}

/// `TLS` with `host`, and why.
pub(super) fn tls_failed(host: &str, cause: &dyn std::fmt::Display) -> ToolError {
    ToolError::new(ErrorCode::Tls, format!("TLS with {host} failed: {cause}"))
}

/// A reqwest error as a coded error a model can act on.
pub fn map_error(e: &reqwest::Error, url: &Url) -> ToolError {
    let host = url.host_str().unwrap_or("the host");
    let cause = root_cause(e);
    if let Some(tls) = tls_error(e, url) {
        return tls;
    }
    if e.is_timeout() {
        return ToolError::new(ErrorCode::Timeout, format!("{url} timed out: {cause}"));
    }
    if e.is_connect() {
        return ToolError::new(ErrorCode::Network, format!("cannot connect to {host}: {cause}"));
    }
    ToolError::new(ErrorCode::Network, format!("{url}: {cause}"))
}

/// Same host, for `follow_cross_host` (a page moving from http to https, or to another port
/// of its host, is not a move to another site).
fn same_host(a: &Url, b: &Url) -> bool {
    a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
}

/// Same origin: scheme, host and port (the default port of the scheme when none is given).
/// A request's own headers (API keys) go only to the origin they were given for.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme() && same_host(a, b) && a.port_or_known_default() == b.port_or_known_default()
}

/// Send `req`, vetting and pinning every hop. Cancellation and the total timeout are the
/// caller's (wrap the whole read in [`bounded`]).
pub async fn send(ctx: &Ctx, guard: &Guard, mut req: Request) -> Result<Response> {
    let started = Instant::now();
    let first = req.url.clone();
    let mut chain = Vec::new();
    loop {
        let vetted = guard.vet(&req.url).await?;
        let mut headers = HeaderMap::new();
        if same_origin(&first, &req.url) {
            for (k, v) in &req.headers {
                let (Ok(k), Ok(v)) = (HeaderName::try_from(k.as_str()), HeaderValue::try_from(v.as_str()))
                else {
                    return Err(ToolError::invalid(format!("header {k} is not a valid HTTP header")));
                };
                headers.append(k, v);
            }
        }
        // The connection is never used again (no client keeps a pool): asking the server to
        // close it lets hyper free its buffers once the body ends, instead of reading ahead for
        // a next response into a buffer of its own while the body's last piece is still held
        // (HTTP/1.1; hyper leaves the header out of HTTP/2 requests, which need no such hint).
        // The request's own headers win.
        headers.entry(reqwest::header::CONNECTION).or_insert(HeaderValue::from_static("close"));
        if req.decompress {
            headers
                .entry(reqwest::header::ACCEPT_ENCODING)
                .or_insert(HeaderValue::from_static(decode::ACCEPT));
        }
        let proxy = proxy_for(ctx, &vetted.url);
        // Straight to the server on our own connection, unless a proxy carries the hop or the
        // URL holds a user and password (which reqwest sends as basic authentication).
        let direct = proxy.is_none() && vetted.url.username().is_empty() && vetted.url.password().is_none();
        let (status, resp_headers, remote, inner) = if direct {
            // Boxed: the connection's futures (TLS among them) take room only while the head
            // is awaited, not in the caller's future for the whole call.
            let sent = Box::pin(direct::send(
                &vetted.url,
                &vetted.addrs,
                &req.method,
                &headers,
                req.body.as_deref(),
                req.connect_timeout,
                req.small_reads,
            ))
            .await?;
            (sent.status, sent.headers, Some(sent.remote), Inner::Direct { body: sent.body, conn: sent.conn })
        } else {
            let client = client_for(&req, &vetted.url, &vetted.addrs, proxy)?;
            let mut rb = client.request(req.method.clone(), vetted.url.clone()).headers(headers);
            if let Some(body) = &req.body {
                rb = rb.body(body.clone());
            }
            let resp = rb.send().await.map_err(|e| map_error(&e, &req.url))?;
            (resp.status().as_u16(), resp.headers().clone(), resp.remote_addr(), Inner::Reqwest(resp))
        };
        let location =
            resp_headers.get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let redirect = matches!(status, 301 | 302 | 303 | 307 | 308) && req.follow;
        if let (true, Some(loc)) = (redirect, location) {
            let next = req.url.join(&loc).map_err(|e| {
                ToolError::new(
                    ErrorCode::InvalidUrl,
                    format!("{} redirected to an invalid URL {loc:?}: {e}", req.url),
                )
            })?;
            if !req.follow_cross_host && !same_host(&req.url, &next) {
                return Ok(Response {
                    url: req.url.clone(),
                    status,
                    headers: resp_headers,
                    chain,
                    unfollowed: Some(next.to_string()),
                    remote,
                    started,
                    inner,
                    limit: None,
                    decoder: None,
                    too_deep: None,
                    ended: false,
                });
            }
            chain.push(Hop { url: req.url.to_string(), status });
            if chain.len() > MAX_REDIRECTS {
                return Err(ToolError::new(
                    ErrorCode::Network,
                    format!("{first} redirected more than {MAX_REDIRECTS} times (last to {next})"),
                ));
            }
            if status == 303 || (matches!(status, 301 | 302) && req.method == reqwest::Method::POST) {
                req.method = reqwest::Method::GET;
                req.body = None;
            }
            req.url = next;
            continue;
        }
        let (decoder, too_deep) = match (req.decompress, decode::plan(&resp_headers)) {
            (true, Plan::Decode(codings)) => (Some(Decoder::new(&codings, decode::DEFAULT_LIMIT)), None),
            (true, Plan::TooDeep(n)) => (None, Some(n)),
            _ => (None, None),
        };
        return Ok(Response {
            url: req.url.clone(),
            status,
            headers: resp_headers,
            chain,
            unfollowed: None,
            remote,
            started,
            inner,
            limit: None,
            decoder,
            too_deep,
            ended: false,
        });
    }
}

/// `work` under the call's abort (`CANCELLED`) and a total `timeout` (`TIMEOUT`).
pub async fn bounded<T>(
    ctx: &Ctx,
    timeout: Duration,
    what: &str,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    ctx.cancel.check()?;
    match ctx.unless_cancelled(tokio::time::timeout(timeout, work)).await? {
        Ok(r) => r,
        Err(_) => Err(ToolError::new(
            ErrorCode::Timeout,
            format!(
                "{what} took more than {} s (raise timeout if the server is slow)",
                timeout.as_secs_f64()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tls_error_carried_in_an_io_error_reads_as_tls() {
        let url = Url::parse("https://example.test/").unwrap();
        // As tokio-rustls carries one: `io::Error::source` gives the rustls error's own source
        // (none), so only `get_ref` finds it.
        let alert = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::AlertReceived(rustls::AlertDescription::DecryptError),
        );
        let err = tls_error(&alert, &url).expect("a TLS error");
        assert_eq!(err.code(), ErrorCode::Tls);
        assert!(err.message().starts_with("TLS with example.test failed: "), "{err:?}");
        let outer = std::io::Error::other(alert);
        assert_eq!(tls_error(&outer, &url).map(|e| e.code()), Some(ErrorCode::Tls));
        let plain = std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "end of file before message length reached",
        );
        assert!(tls_error(&plain, &url).is_none());
    }
}
