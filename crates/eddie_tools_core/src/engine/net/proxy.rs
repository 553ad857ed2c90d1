//! The in-process HTTP proxy every connection of a launched browser goes through. Chromium is
//! started with `--proxy-server` pointing here (see the browser family's README for the flags
//! that leave it no other way out), so main frames, out-of-process iframes, every kind of
//! worker, popups, WebSockets, preconnects and prefetches all arrive here as
//!
//! - `CONNECT host:port` (https, wss, and ws: Chromium tunnels every WebSocket), or
//! - an absolute-form request (`GET http://host:port/path HTTP/1.1`: plain http).
//!
//! Each one (every request of a keep-alive connection on its own) is vetted by the one network
//! guard ([`super::guard`]) with the policy the browser's latest call set
//! ([`Proxy::set_guard`]; none yet: everything is refused), and the connection goes to the
//! exact addresses the guard approved, so a second DNS answer cannot move it (DNS
//! rebinding). A refused `CONNECT` is answered `403` with a `Proxy-Status` naming the rule
//! (Chromium: `ERR_TUNNEL_CONNECTION_FAILED`); a refused plain request gets its connection
//! closed without an answer (`ERR_EMPTY_RESPONSE`), so the page sees a network error and
//! never a page made up by the proxy. Refusals are kept ([`Proxy::refusal`]) for the tools to
//! explain.
//!
//! Bounds: connections at once ([`Limits::max_conns`]; more are closed at once), request heads
//! (size and count of headers, and the time to send one), connect time, and idle time of a
//! connection or tunnel. The proxy's tasks end when it is stopped or dropped.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use super::guard::Guard;
use crate::error::{ErrorCode, Result, ToolError};

/// The proxy's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Client connections at once; more are closed as soon as they are accepted.
    pub max_conns: usize,
    /// Most bytes of a request head (and of the read buffer; at least 8 KiB).
    pub max_head: usize,
    /// Most headers in a request.
    pub max_headers: usize,
    /// Time a client has to send a request head.
    pub head_timeout: Duration,
    /// Time to connect to the vetted address.
    pub connect_timeout: Duration,
    /// A connection or tunnel with no byte either way for this long is closed.
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_conns: 256,
            max_head: 64 * 1024,
            max_headers: 128,
            head_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            idle: Duration::from_secs(300),
        }
    }
}

/// Refusals kept.
const REFUSALS_KEPT: usize = 256;

/// One refused connection or request.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// `host:port` as the browser asked for it.
    pub authority: String,
    /// The URL vetted (`https://host:port/` for a tunnel).
    pub url: String,
    /// The guard's error.
    pub error: ToolError,
    /// When.
    pub at: Instant,
}

/// What the proxy's tasks share.
struct Shared {
    guard: RwLock<Option<Guard>>,
    /// Addresses never connected to (the proxy itself, the browser's DevTools port).
    never: RwLock<Vec<SocketAddr>>,
    refusals: Mutex<VecDeque<Refusal>>,
    limits: Limits,
    accepted: AtomicU64,
    stop: watch::Receiver<bool>,
}

/// A running proxy.
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("addr", &self.addr).finish_non_exhaustive()
    }
}

type Body = BoxBody<Bytes, hyper::Error>;

fn full(text: impl Into<Bytes>) -> Body {
    Full::new(text.into()).map_err(|never| match never {}).boxed()
}

fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed()
}

/// Run `fut` until it ends or the proxy stops.
fn spawn_bounded(stop: &watch::Receiver<bool>, fut: impl Future<Output = ()> + Send + 'static) {
    let mut stop = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = fut => {}
            _ = stop.wait_for(|s| *s) => {}
        }
    });
}

impl Proxy {
    /// Start a proxy on `127.0.0.1` (an ephemeral port) on the current runtime. It refuses
    /// everything until [`Proxy::set_guard`].
    pub async fn start(limits: Limits) -> Result<Proxy> {
        let listener =
            TcpListener::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)).await.map_err(|e| {
                ToolError::new(ErrorCode::Network, format!("cannot start the browser's proxy: {e}"))
            })?;
        let addr = listener.local_addr().map_err(|e| {
            ToolError::new(ErrorCode::Network, format!("cannot start the browser's proxy: {e}"))
        })?;
        let (stop, stop_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            guard: RwLock::new(None),
            never: RwLock::new(vec![addr]),
            refusals: Mutex::new(VecDeque::new()),
            limits,
            accepted: AtomicU64::new(0),
            stop: stop_rx,
        });
        let s = Arc::clone(&shared);
        spawn_bounded(&shared.stop, accept_loop(listener, s));
        Ok(Proxy { addr, shared, stop })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Vet with `guard` from now on (the latest call's policy).
    pub fn set_guard(&self, guard: Guard) {
        if let Ok(mut g) = self.shared.guard.write() {
            *g = Some(guard);
        }
    }

    /// Never connect to `addr`, whatever the policy (the browser's DevTools port).
    pub fn never(&self, addr: SocketAddr) {
        if let Ok(mut n) = self.shared.never.write() {
            n.push(addr);
        }
    }

    /// Client connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::Relaxed)
    }

    /// The latest refusal for `authority` (`host:port`, as in a URL) within `within`.
    pub fn refusal(&self, authority: &str, within: Duration) -> Option<Refusal> {
        let r = self.shared.refusals.lock().ok()?;
        r.iter()
            .rev()
            .find(|f| f.authority.eq_ignore_ascii_case(authority) && f.at.elapsed() <= within)
            .cloned()
    }

    /// Stop: no new connection is accepted, and every open one is closed.
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let slots = Arc::new(Semaphore::new(shared.limits.max_conns));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // EMFILE and the like: wait a little instead of spinning.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        shared.accepted.fetch_add(1, Ordering::Relaxed);
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let s = Arc::clone(&shared);
        spawn_bounded(&shared.stop, async move {
            serve(stream, s).await;
            drop(slot);
        });
    }
}

/// The time of the last byte either way, for the idle bound.
#[derive(Clone)]
struct Activity {
    start: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    fn new() -> Self {
        Self { start: Instant::now(), last_ms: Arc::new(AtomicU64::new(0)) }
    }
    fn touch(&self) {
        self.last_ms.store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
    /// Ends once nothing moved for `idle`.
    async fn idle_for(&self, idle: Duration) {
        loop {
            let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let quiet = self.start.elapsed().saturating_sub(last);
            if quiet >= idle {
                return;
            }
            tokio::time::sleep(idle - quiet).await;
        }
    }
}

/// A stream that notes its activity.
struct Watched<S> {
    inner: S,
    activity: Activity,
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        r
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A tunnel to open once the `200` has gone out: the client's upgrade and the upstream socket.
type Tunnel = (hyper::upgrade::OnUpgrade, Watched<TcpStream>);

/// One client connection: requests served one after another, and at most one tunnel at its end.
async fn serve(stream: TcpStream, shared: Arc<Shared>) {
    let activity = Activity::new();
    let io = TokioIo::new(Watched { inner: stream, activity: activity.clone() });
    let (tunnel_tx, mut tunnel_rx) = tokio::sync::mpsc::channel::<Tunnel>(1);
    let s = Arc::clone(&shared);
    let a = activity.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (s, a, tx) = (Arc::clone(&s), a.clone(), tunnel_tx.clone());
        async move { handle(req, &s, a, tx).await }
    });
    let limits = shared.limits;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_timeout)
        .max_buf_size(limits.max_head.max(8192))
        .max_headers(limits.max_headers)
        .keep_alive(true);
    let conn = builder.serve_connection(io, service).with_upgrades();
    tokio::select! {
        _ = conn => {}
        () = activity.idle_for(limits.idle) => return,
    }
    // A CONNECT answered 200: the connection is now the tunnel's.
    let Ok((on_upgrade, upstream)) = tunnel_rx.try_recv() else { return };
    let Ok(upgraded) = on_upgrade.await else { return };
    let mut client = TokioIo::new(upgraded);
    let mut upstream = upstream;
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
        () = activity.idle_for(limits.idle) => {}
    }
}

/// `Proxy-Status` (RFC 9209) for a refusal.
fn proxy_status(error: &str, details: &str) -> HeaderValue {
    let details: String = details
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control() && *c != '"' && *c != '\\')
        .collect();
    HeaderValue::from_str(&format!("eddie-tools; error={error}; details=\"{details}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("eddie-tools"))
}

fn answer(status: StatusCode, error: &str, details: &str) -> Response<Body> {
    let mut r = Response::new(full(format!("{details}\n")));
    *r.status_mut() = status;
    r.headers_mut().insert("proxy-status", proxy_status(error, details));
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// A refused plain request: the service fails, so hyper closes the connection without
/// writing anything (the page sees `ERR_EMPTY_RESPONSE`, a network error).
#[derive(Debug)]
struct HangUp(String);

impl std::fmt::Display for HangUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HangUp {}

type Answer = std::result::Result<Response<Body>, HangUp>;

impl Shared {
    fn guard(&self) -> Option<Guard> {
        self.guard.read().ok().and_then(|g| g.clone())
    }

    fn refuse(&self, authority: &str, url: &str, error: ToolError) -> ToolError {
        if let Ok(mut r) = self.refusals.lock() {
            if r.len() >= REFUSALS_KEPT {
                r.pop_front();
            }
            r.push_back(Refusal {
                authority: authority.to_owned(),
                url: url.to_owned(),
                error: error.clone(),
                at: Instant::now(),
            });
        }
        error
    }

    /// Vet `url` and connect to the address the guard approved (the first that answers).
    async fn vet_and_connect(
        &self,
        authority: &str,
        url: &url::Url,
    ) -> std::result::Result<TcpStream, Outcome> {
        let Some(guard) = self.guard() else {
            let e = ToolError::new(
                ErrorCode::BlockedAddress,
                format!("{url}: no browser call has set a network policy yet"),
            );
            return Err(Outcome::Refused(self.refuse(authority, url.as_str(), e)));
        };
        let vetted = match guard.vet(url).await {
            Ok(v) => v,
            Err(e) => return Err(Outcome::Refused(self.refuse(authority, url.as_str(), e))),
        };
        let never = self.never.read().map(|n| n.clone()).unwrap_or_default();
        if let Some(a) = vetted
            .addrs
            .iter()
            .find(|a| never.iter().any(|n| n.port() == a.port() && same_host(n.ip(), a.ip())))
        {
            let e = ToolError::new(
                ErrorCode::BlockedAddress,
                format!("{url}: {a} is the browser's own proxy or DevTools port, which pages never reach"),
            );
            return Err(Outcome::Refused(self.refuse(authority, url.as_str(), e)));
        }
        let mut last = None;
        for addr in &vetted.addrs {
            match tokio::time::timeout(self.limits.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(s)) => {
                    let _ = s.set_nodelay(true);
                    return Ok(s);
                }
                Ok(Err(e)) => last = Some(format!("{addr}: {e}")),
                Err(_) => {
                    last =
                        Some(format!("{addr}: no answer within {} s", self.limits.connect_timeout.as_secs()))
                }
            }
        }
        Err(Outcome::Unreachable(last.unwrap_or_else(|| format!("{url}: no address"))))
    }
}

/// Whether two addresses are the same host (`127.0.0.1` and `::ffff:127.0.0.1`, and any
/// unspecified address, which a listener on it answers).
fn same_host(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let (a, b) = (canon(a), canon(b));
    a == b || a.is_unspecified() || (b.is_loopback() && a.is_loopback() && a.is_ipv6() != b.is_ipv6())
}

enum Outcome {
    Refused(ToolError),
    Unreachable(String),
}

async fn handle(
    mut req: Request<Incoming>,
    shared: &Arc<Shared>,
    activity: Activity,
    tunnel: tokio::sync::mpsc::Sender<Tunnel>,
) -> Answer {
    if req.method() == Method::CONNECT {
        let Some(auth) = req.uri().authority().cloned() else {
            return Ok(answer(StatusCode::BAD_REQUEST, "http_request_error", "CONNECT needs host:port"));
        };
        let Some(port) = auth.port_u16() else {
            return Ok(answer(StatusCode::BAD_REQUEST, "http_request_error", "CONNECT needs host:port"));
        };
        // The tunnel may carry https, wss or ws; the guard only cares about the host and port.
        let Ok(url) = url::Url::parse(&format!("https://{}:{port}/", auth.host())) else {
            return Ok(answer(StatusCode::BAD_REQUEST, "http_request_error", "CONNECT to an invalid host"));
        };
        return Ok(match shared.vet_and_connect(auth.as_str(), &url).await {
            Ok(upstream) => {
                let on_upgrade = hyper::upgrade::on(&mut req);
                if tunnel.try_send((on_upgrade, Watched { inner: upstream, activity })).is_err() {
                    return Ok(answer(
                        StatusCode::BAD_REQUEST,
                        "http_request_error",
                        "one tunnel per connection",
                    ));
                }
                Response::new(empty())
            }
            Err(Outcome::Refused(e)) => {
                answer(StatusCode::FORBIDDEN, "destination_ip_prohibited", e.message())
            }
            Err(Outcome::Unreachable(why)) => answer(StatusCode::BAD_GATEWAY, "connection_refused", &why),
        });
    }
    forward(req, shared, activity).await
}

/// Hop-by-hop headers (RFC 9110 §7.6.1), never forwarded.
const HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn strip_hop(headers: &mut HeaderMap) {
    let listed: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|s| s.trim().to_ascii_lowercase()).collect::<Vec<_>>())
        .filter_map(|n| HeaderName::from_bytes(n.as_bytes()).ok())
        .collect();
    for n in listed {
        headers.remove(n);
    }
    for n in HOP {
        headers.remove(*n);
    }
}

/// A plain-http request in absolute form: vetted, then sent on a new connection to the
/// vetted address, in origin form, without hop-by-hop headers.
async fn forward(req: Request<Incoming>, shared: &Arc<Shared>, activity: Activity) -> Answer {
    let uri = req.uri().clone();
    let (Some(scheme), Some(auth)) = (uri.scheme_str(), uri.authority().cloned()) else {
        return Ok(answer(
            StatusCode::BAD_REQUEST,
            "http_request_error",
            "only CONNECT and absolute-form http requests are proxied",
        ));
    };
    if scheme != "http" {
        return Ok(answer(
            StatusCode::BAD_REQUEST,
            "http_request_error",
            "only http is proxied in absolute form; https goes through CONNECT",
        ));
    }
    let Ok(url) = url::Url::parse(&uri.to_string()) else {
        return Ok(answer(StatusCode::BAD_REQUEST, "http_request_error", "invalid URL"));
    };
    let port = auth.port_u16().unwrap_or(80);
    let authority = format!("{}:{port}", auth.host());
    let upstream = match shared.vet_and_connect(&authority, &url).await {
        Ok(s) => s,
        Err(Outcome::Refused(e)) => return Err(HangUp(e.message().to_owned())),
        Err(Outcome::Unreachable(why)) => {
            return Ok(answer(StatusCode::BAD_GATEWAY, "connection_refused", &why));
        }
    };
    let (mut parts, body) = req.into_parts();
    let origin_form = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    parts.uri = match Uri::try_from(origin_form) {
        Ok(u) => u,
        Err(_) => return Ok(answer(StatusCode::BAD_REQUEST, "http_request_error", "invalid path")),
    };
    strip_hop(&mut parts.headers);
    if !parts.headers.contains_key(header::HOST)
        && let Ok(h) = HeaderValue::from_str(auth.as_str())
    {
        parts.headers.insert(header::HOST, h);
    }
    let io = TokioIo::new(Watched { inner: upstream, activity });
    let mut client = hyper::client::conn::http1::Builder::new();
    client.max_buf_size(shared.limits.max_head.max(8192) * 4);
    let (mut sender, conn) = match client.handshake::<_, Incoming>(io).await {
        Ok(c) => c,
        Err(e) => return Ok(answer(StatusCode::BAD_GATEWAY, "http_protocol_error", &e.to_string())),
    };
    spawn_bounded(&shared.stop, async move {
        let _ = conn.await;
    });
    match sender.send_request(Request::from_parts(parts, body)).await {
        Ok(resp) => {
            let (mut parts, body) = resp.into_parts();
            strip_hop(&mut parts.headers);
            Ok(Response::from_parts(parts, body.boxed()))
        }
        Err(e) => Ok(answer(StatusCode::BAD_GATEWAY, "http_protocol_error", &e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::context::{BoxFuture, NetworkPolicy};
    use crate::engine::net::Resolver;

    /// A server on `ip` counting accepted sockets; it answers each with a fixed HTTP response
    /// naming itself, or echoes (after a `CONNECT`, the tunnel carries raw bytes).
    async fn server(ip: &str, echo: bool) -> (SocketAddr, Arc<AtomicUsize>) {
        let l = TcpListener::bind((ip, 0)).await.unwrap();
        let addr = l.local_addr().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&count);
        tokio::spawn(async move {
            // Bounded: at most 50 connections, then the server stops.
            for _ in 0..50 {
                let Ok((mut s, _)) = l.accept().await else { return };
                c.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    let Ok(Ok(n)) = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await
                    else {
                        return;
                    };
                    if echo {
                        let _ = s.write_all(&buf[..n]).await;
                    } else {
                        let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                        let body = format!("served by {addr}; {}", head.lines().next().unwrap_or(""));
                        let _ = s
                            .write_all(
                                format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                                    .as_bytes(),
                            )
                            .await;
                    }
                });
            }
        });
        (addr, count)
    }

    async fn proxy(allow: &[&str], resolver: Option<Arc<dyn Resolver>>) -> Proxy {
        let p = Proxy::start(Limits::default()).await.unwrap();
        let policy = NetworkPolicy {
            allow_hosts: allow.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        };
        p.set_guard(match resolver {
            Some(r) => Guard::with_resolver(&policy, r),
            None => Guard::new(&policy),
        });
        p
    }

    /// Send `request` to the proxy; everything it answers until it closes (or 5 s).
    async fn exchange(p: &Proxy, request: &str) -> String {
        let mut s = TcpStream::connect(p.addr()).await.unwrap();
        s.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn plain_http_is_vetted_and_forwarded_in_origin_form_and_a_refusal_is_a_hang_up() {
        let (ok, ok_count) = server("127.0.0.1", false).await;
        let (bad, bad_count) = server("127.0.0.2", false).await;
        let p = proxy(&["127.0.0.1"], None).await;
        let r = exchange(&p, &format!("GET http://{ok}/a?b=1 HTTP/1.1\r\nHost: {ok}\r\nProxy-Connection: keep-alive\r\nConnection: close\r\n\r\n")).await;
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(r.contains(&format!("served by {ok}; GET /a?b=1 HTTP/1.1")), "origin form: {r}");
        let r = exchange(&p, &format!("GET http://{bad}/ HTTP/1.1\r\nHost: {bad}\r\n\r\n")).await;
        assert_eq!(r, "", "a refused plain request gets no answer at all");
        assert_eq!((ok_count.load(Ordering::SeqCst), bad_count.load(Ordering::SeqCst)), (1, 0));
        let refusal = p.refusal(&bad.to_string(), Duration::from_secs(60)).unwrap();
        assert_eq!(refusal.error.code(), ErrorCode::BlockedAddress);
        assert!(refusal.error.message().contains("loopback"), "{}", refusal.error.message());
    }

    #[tokio::test]
    async fn connect_tunnels_to_the_vetted_address_and_refuses_with_403_and_proxy_status() {
        let (ok, ok_count) = server("127.0.0.1", true).await;
        let (bad, bad_count) = server("127.0.0.2", true).await;
        let p = proxy(&["127.0.0.1"], None).await;
        let mut s = TcpStream::connect(p.addr()).await.unwrap();
        s.write_all(format!("CONNECT {ok} HTTP/1.1\r\nHost: {ok}\r\n\r\n").as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 1024];
        let n = s.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        s.write_all(b"\x16\x03\x01 raw tunnel bytes").await.unwrap();
        let n = s.read(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"\x16\x03\x01 raw tunnel bytes");
        let r = exchange(&p, &format!("CONNECT {bad} HTTP/1.1\r\nHost: {bad}\r\n\r\n")).await;
        assert!(r.starts_with("HTTP/1.1 403"), "{r}");
        assert!(
            r.to_ascii_lowercase().contains("proxy-status: eddie-tools; error=destination_ip_prohibited"),
            "{r}"
        );
        assert_eq!((ok_count.load(Ordering::SeqCst), bad_count.load(Ordering::SeqCst)), (1, 0));
    }

    #[tokio::test]
    async fn every_request_of_a_keep_alive_connection_is_vetted_on_its_own() {
        let (ok, ok_count) = server("127.0.0.1", false).await;
        let (bad, bad_count) = server("127.0.0.2", false).await;
        let p = proxy(&["127.0.0.1"], None).await;
        let r = exchange(
            &p,
            &format!("GET http://{ok}/one HTTP/1.1\r\nHost: {ok}\r\n\r\nGET http://{bad}/two HTTP/1.1\r\nHost: {bad}\r\n\r\n"),
        )
        .await;
        assert!(r.contains("GET /one"), "{r}");
        assert!(!r.contains("/two"), "{r}");
        assert!(
            p.refusal(&bad.to_string(), Duration::from_secs(60)).is_some(),
            "the second request was vetted, and refused"
        );
        assert_eq!((ok_count.load(Ordering::SeqCst), bad_count.load(Ordering::SeqCst)), (1, 0));
    }

    /// Answers `first` for the first lookup and `then` for every later one (a rebinding name).
    struct Rebinding {
        first: IpAddr,
        then: IpAddr,
        calls: AtomicUsize,
    }

    impl Resolver for Rebinding {
        fn lookup(&self, _host: String, port: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>> {
            let ip = if self.calls.fetch_add(1, Ordering::SeqCst) == 0 { self.first } else { self.then };
            Box::pin(async move { Ok(vec![SocketAddr::new(ip, port)]) })
        }
    }

    #[tokio::test]
    async fn dns_rebinding_cannot_move_a_vetted_connection() {
        // The name is allowed by address only: its first answer (127.0.0.1) is allowed, every
        // later one (127.0.0.2) is not. The proxy resolves once per connection and connects to
        // exactly what it vetted, so the second answer never gets a connection.
        let (ok, ok_count) = server("127.0.0.1", false).await;
        let (_bad, bad_count) = server("127.0.0.2", false).await;
        let port = ok.port();
        let resolver = Arc::new(Rebinding {
            first: "127.0.0.1".parse().unwrap(),
            then: "127.0.0.2".parse().unwrap(),
            calls: AtomicUsize::new(0),
        });
        let p = proxy(&["127.0.0.1"], Some(resolver.clone())).await;
        let r = exchange(
            &p,
            &format!("GET http://rebind.test:{port}/ HTTP/1.1\r\nHost: rebind.test:{port}\r\n\r\n"),
        )
        .await;
        assert!(r.contains(&format!("served by {ok}")), "{r}");
        let r =
            exchange(&p, &format!("CONNECT rebind.test:{port} HTTP/1.1\r\nHost: rebind.test:{port}\r\n\r\n"))
                .await;
        assert!(r.starts_with("HTTP/1.1 403"), "the second answer is refused: {r}");
        assert!(r.contains("127.0.0.2"), "{r}");
        assert_eq!(
            resolver.calls.load(Ordering::SeqCst),
            2,
            "one lookup per connection, none by anyone else"
        );
        assert_eq!((ok_count.load(Ordering::SeqCst), bad_count.load(Ordering::SeqCst)), (1, 0));
    }

    #[tokio::test]
    async fn nothing_passes_before_a_policy_is_set_nor_to_the_proxy_itself_nor_to_a_never_address() {
        let (ok, ok_count) = server("127.0.0.1", false).await;
        let p = Proxy::start(Limits::default()).await.unwrap();
        let r = exchange(&p, &format!("CONNECT {ok} HTTP/1.1\r\n\r\n")).await;
        assert!(r.starts_with("HTTP/1.1 403") && r.contains("no browser call"), "{r}");
        p.set_guard(Guard::new(&NetworkPolicy { allow_private: true, ..Default::default() }));
        let me = p.addr();
        let r = exchange(&p, &format!("CONNECT {me} HTTP/1.1\r\n\r\n")).await;
        assert!(r.starts_with("HTTP/1.1 403") && r.contains("own proxy"), "{r}");
        let r = exchange(&p, &format!("CONNECT [::ffff:127.0.0.1]:{} HTTP/1.1\r\n\r\n", me.port())).await;
        assert!(r.starts_with("HTTP/1.1 403"), "the proxy in another spelling: {r}");
        p.never(ok);
        let r = exchange(&p, &format!("GET http://{ok}/ HTTP/1.1\r\n\r\n")).await;
        assert_eq!(r, "");
        assert_eq!(ok_count.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn heads_are_bounded_and_so_are_connections_and_stop_closes_everything() {
        let (ok, _) = server("127.0.0.1", true).await;
        let limits =
            Limits { max_conns: 2, max_head: 8192, idle: Duration::from_secs(2), ..Limits::default() };
        let p = Proxy::start(limits).await.unwrap();
        p.set_guard(Guard::new(&NetworkPolicy {
            allow_hosts: vec!["127.0.0.1".into()],
            ..Default::default()
        }));
        // A head larger than the bound: refused (431) or closed, never forwarded.
        let big = format!("GET http://{ok}/ HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(20_000));
        let r = exchange(&p, &big).await;
        assert!(r.is_empty() || r.starts_with("HTTP/1.1 431"), "{}", &r[..r.len().min(200)]);
        // Two open tunnels take both slots; a third connection is closed at once.
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut s = TcpStream::connect(p.addr()).await.unwrap();
            s.write_all(format!("CONNECT {ok} HTTP/1.1\r\n\r\n").as_bytes()).await.unwrap();
            let mut buf = [0u8; 256];
            let n = s.read(&mut buf).await.unwrap();
            assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
            held.push(s);
        }
        let r = exchange(&p, &format!("CONNECT {ok} HTTP/1.1\r\n\r\n")).await;
        assert_eq!(r, "", "over the connection bound");
        // An idle tunnel is closed after the idle bound.
        let mut buf = [0u8; 16];
        let t0 = Instant::now();
        let n =
            tokio::time::timeout(Duration::from_secs(10), held[0].read(&mut buf)).await.unwrap().unwrap_or(0);
        assert_eq!(n, 0, "closed");
        assert!(t0.elapsed() < Duration::from_secs(5));
        // Stop: open tunnels are closed, and nothing is accepted any more.
        let mut s = held.pop().unwrap();
        p.stop();
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await.unwrap().unwrap_or(0);
        assert_eq!(n, 0);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused = match TcpStream::connect(p.addr()).await {
            Err(_) => true,
            Ok(mut s) => matches!(
                tokio::time::timeout(Duration::from_secs(2), s.read(&mut buf)).await,
                Ok(Ok(0)) | Ok(Err(_))
            ),
        };
        assert!(refused, "a stopped proxy serves nothing");
    }
}
