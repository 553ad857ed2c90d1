//! One hop sent on hyper's own HTTP/1 connection, for the hops that go straight to the server
//! (no proxy): the connection is ours, made to the addresses the guard vetted and to nothing
//! else (no name is resolved here, there is no resolver to ask), TLS with the same rustls
//! configuration as the other hops (the URL's host as SNI and for verification) offering
//! HTTP/1.1 only, and hyper's read buffer of a fixed size ([`READ_BUF`]), where reqwest's
//! connection doubles it from 8 KiB as reads fill it (8 + 16 + 32 KiB beside a 30 KB body).
//! A response head larger than that buffer is asked for again with hyper's default, growing,
//! buffer (`GET` and `HEAD` only, which are safe to repeat; other requests get the default
//! from the start).

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Context;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio::net::TcpStream;
use url::Url;

use super::client::{USER_AGENT, root_cause, tls_config, tls_error, tls_failed};
use crate::error::{ErrorCode, Result, ToolError};

/// hyper's read buffer for a `GET` or `HEAD`: each read asks for this much, and a response
/// head must fit in it (else the request is made again with hyper's default buffer).
pub const READ_BUF: usize = 8 << 10;

/// The connection, driven by whoever awaits its response and body (no task of its own): it
/// and its buffers go the moment the response is dropped (an abandoned call, cancelled or
/// timed out, leaves nothing behind), never later on another thread.
pub struct Conn {
    io: Option<Pin<Box<dyn Future<Output = hyper::Result<()>> + Send>>>,
    /// Kept so the connection serves the request to its end.
    _sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.io.is_some() { "Conn(open)" } else { "Conn(done)" })
    }
}

impl Conn {
    /// Let the connection read and write what it can (its reads feed the body); its own end,
    /// or error, reaches the body through hyper.
    pub fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(io) = self.io.as_mut()
            && io.as_mut().poll(cx).is_ready()
        {
            self.io = None;
        }
    }
}

/// A response whose head has arrived.
#[derive(Debug)]
pub struct Sent {
    pub status: u16,
    pub headers: HeaderMap,
    pub remote: SocketAddr,
    pub body: Incoming,
    pub conn: Conn,
}

/// The TLS configuration of the direct hops: the shared one, offering HTTP/1.1 only.
fn tls_http1() -> Result<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    if let Some(c) = CONFIG.get() {
        return Ok(Arc::clone(c));
    }
    let mut config = tls_config()?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::clone(CONFIG.get_or_init(|| Arc::new(config))))
}

/// How long an attempt to connect has alone before the next address is tried beside it
/// (happy eyeballs, as hyper's connector does it: an address that drops packets, a broken IPv6
/// route say, does not hold the others up).
const NEXT_ADDRESS_AFTER: Duration = Duration::from_millis(250);

/// Connect to the first of `addrs` that answers within `timeout`: each address is tried in
/// turn, the next one as soon as the last attempt failed or has waited
/// [`NEXT_ADDRESS_AFTER`], the earlier attempts still running; the others are dropped when one
/// connects.
pub(super) async fn connect(
    url: &Url,
    addrs: &[SocketAddr],
    timeout: Duration,
) -> Result<(TcpStream, SocketAddr)> {
    let host = url.host_str().unwrap_or("the host");
    let deadline = tokio::time::Instant::now() + timeout;
    let mut rest = addrs.iter().copied();
    // Dropped (every attempt still running aborted) when this function returns.
    let mut attempts = tokio::task::JoinSet::new();
    let mut last = None;
    loop {
        if let Some(addr) = rest.next() {
            attempts.spawn(async move { (addr, TcpStream::connect(addr).await) });
        }
        if attempts.is_empty() {
            break;
        }
        let until = match rest.len() {
            0 => deadline,
            _ => deadline.min(tokio::time::Instant::now() + NEXT_ADDRESS_AFTER),
        };
        match tokio::time::timeout_at(until, attempts.join_next()).await {
            Ok(Some(Ok((addr, Ok(s))))) => {
                let _ = s.set_nodelay(true);
                return Ok((s, addr));
            }
            Ok(Some(Ok((_, Err(e))))) => last = Some(e.to_string()),
            Ok(Some(Err(e))) => last = Some(e.to_string()),
            Ok(None) => {}
            Err(_) if tokio::time::Instant::now() >= deadline => {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("{url} timed out: no connection within {} s", timeout.as_secs_f64()),
                ));
            }
            // This attempt had its time alone: the next address is tried beside it.
            Err(_) => {}
        }
    }
    Err(match last {
        Some(cause) => ToolError::new(ErrorCode::Network, format!("cannot connect to {host}: {cause}")),
        None => ToolError::new(ErrorCode::Network, format!("cannot connect to {host}: no address")),
    })
}

/// The name TLS verifies: the URL's host (an address is verified as one, and sent no SNI).
fn server_name(url: &Url) -> Result<rustls::pki_types::ServerName<'static>> {
    use rustls::pki_types::ServerName;
    match url.host() {
        Some(url::Host::Domain(d)) => ServerName::try_from(d.to_owned()).map_err(|e| tls_failed(d, &e)),
        Some(url::Host::Ipv4(ip)) => Ok(ServerName::IpAddress(IpAddr::V4(ip).into())),
        Some(url::Host::Ipv6(ip)) => Ok(ServerName::IpAddress(IpAddr::V6(ip).into())),
        None => Err(ToolError::new(ErrorCode::InvalidUrl, format!("{url} has no host"))),
    }
}

/// A hyper error (sending, or reading the body) as a coded error.
pub fn map_error(e: &hyper::Error, url: &Url) -> ToolError {
    if let Some(tls) = tls_error(e, url) {
        return tls;
    }
    let cause = root_cause(e);
    if e.is_timeout() {
        return ToolError::new(ErrorCode::Timeout, format!("{url} timed out: {cause}"));
    }
    if e.is_parse_too_large() {
        return ToolError::new(
            ErrorCode::Network,
            format!(
                "{url}: the response's header section is too large to read (more than 100 header fields, or larger than about 400 KiB); the server must send fewer or smaller headers"
            ),
        );
    }
    ToolError::new(ErrorCode::Network, format!("{url}: {cause}"))
}

/// `headers` with values of their own: hyper's values are slices of the read buffer the head
/// arrived in, which they would keep alive (with the body's first bytes) as long as the
/// response is held.
fn own(headers: HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len());
    let mut name = None;
    for (k, v) in headers {
        if let Some(k) = k {
            name = Some(k);
        }
        if let (Some(k), Ok(v)) = (&name, HeaderValue::from_bytes(v.as_bytes())) {
            out.append(k.clone(), v);
        }
    }
    out
}

/// Send one request on a new connection over `io`; `exact` sizes hyper's read buffer.
async fn exchange<T>(
    io: T,
    exact: bool,
    req: hyper::Request<Full<Bytes>>,
) -> hyper::Result<(hyper::Response<Incoming>, Conn)>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let mut b = hyper::client::conn::http1::Builder::new();
    if exact {
        b.read_buf_exact_size(Some(READ_BUF));
    }
    let (mut sender, io) = b.handshake::<_, Full<Bytes>>(io).await?;
    let sending = sender.send_request(req);
    let mut conn = Conn { io: Some(Box::pin(io)), _sender: sender };
    let mut sending = std::pin::pin!(sending);
    let resp = std::future::poll_fn(|cx| {
        conn.drive(cx);
        sending.as_mut().poll(cx)
    })
    .await?;
    Ok((resp, conn))
}

/// Send `method` `url` with `headers` (the request's own; `Host`, the user agent and `Accept:
/// */*` are added as reqwest adds them) and `body` to the first of the vetted `addrs` that
/// answers. `connect_timeout` bounds the connection and the TLS handshake.
pub async fn send(
    url: &Url,
    addrs: &[SocketAddr],
    method: &reqwest::Method,
    headers: &HeaderMap,
    body: Option<&[u8]>,
    connect_timeout: Duration,
    small_reads: bool,
) -> Result<Sent> {
    let mut head = HeaderMap::with_capacity(headers.len() + 3);
    // The host and, when it is not the scheme's default, the port (IPv6 in brackets).
    let host = url[url::Position::BeforeHost..url::Position::AfterPort].to_owned();
    head.insert(
        header::HOST,
        HeaderValue::try_from(host)
            .map_err(|e| ToolError::new(ErrorCode::InvalidUrl, format!("{url}: {e}")))?,
    );
    head.insert(header::USER_AGENT, HeaderValue::from_static(USER_AGENT));
    head.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
    // The request's own headers replace those defaults (as reqwest's do).
    let mut last = None;
    for (k, v) in headers {
        if last.as_ref() != Some(k) {
            head.remove(k);
            last = Some(k.clone());
        }
        head.append(k.clone(), v.clone());
    }
    let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
    let body = Bytes::copy_from_slice(body.unwrap_or_default());
    let request = |head: HeaderMap| {
        let mut r = hyper::Request::new(Full::new(body.clone()));
        *r.method_mut() = method.clone();
        *r.uri_mut() =
            target.parse().map_err(|e| ToolError::new(ErrorCode::InvalidUrl, format!("{url}: {e}")))?;
        *r.headers_mut() = head;
        Ok::<_, ToolError>(r)
    };
    // A GET or HEAD gets the fixed buffer first (unless its body is streamed elsewhere) and,
    // when the head is too large for it, is asked again with the default (both are safe to
    // repeat); other requests, the default.
    let mut exact = small_reads && matches!(*method, reqwest::Method::GET | reqwest::Method::HEAD);
    loop {
        let started = tokio::time::Instant::now();
        let (tcp, remote) = connect(url, addrs, connect_timeout).await?;
        let sent = if url.scheme() == "https" {
            let name = server_name(url)?;
            let left = connect_timeout.saturating_sub(started.elapsed());
            let tls = tokio_rustls::TlsConnector::from(tls_http1()?);
            let host = url.host_str().unwrap_or("the host");
            let stream = match tokio::time::timeout(left, tls.connect(name, tcp)).await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return Err(tls_failed(host, &root_cause(&e))),
                Err(_) => {
                    return Err(ToolError::new(
                        ErrorCode::Timeout,
                        format!(
                            "{url} timed out: no TLS handshake within {} s",
                            connect_timeout.as_secs_f64()
                        ),
                    ));
                }
            };
            exchange(TokioIo::new(stream), exact, request(head.clone())?).await
        } else {
            exchange(TokioIo::new(tcp), exact, request(head.clone())?).await
        };
        match sent {
            Ok((resp, conn)) => {
                let (parts, body) = resp.into_parts();
                let headers = own(parts.headers);
                return Ok(Sent { status: parts.status.as_u16(), headers, remote, body, conn });
            }
            Err(e) if exact && e.is_parse_too_large() => exact = false,
            Err(e) => return Err(map_error(&e, url)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener whose accept queue is full: the kernel drops further connection requests
    /// (SYNs), so a connect to it waits without an answer, as to an address that drops packets.
    async fn silent() -> (tokio::net::TcpListener, Vec<TcpStream>, SocketAddr) {
        let sock = tokio::net::TcpSocket::new_v4().unwrap();
        sock.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let listener = sock.listen(1).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut queued = Vec::new();
        for _ in 0..8 {
            if let Ok(Ok(s)) =
                tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr)).await
            {
                queued.push(s);
            }
        }
        (listener, queued, addr)
    }

    #[tokio::test]
    async fn an_address_that_never_answers_does_not_hold_up_the_next() {
        let (_silent, _queued, quiet) = silent().await;
        let good = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let good_addr = good.local_addr().unwrap();
        let url = Url::parse("http://example.test/").unwrap();
        let started = std::time::Instant::now();
        // Before, each address had its share of the connect timeout, one after the other: the
        // silent one held the good one up for 10 s.
        let (_, addr) = connect(&url, &[quiet, good_addr], Duration::from_secs(20)).await.unwrap();
        assert_eq!(addr, good_addr);
        assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
        // Only silent addresses: `TIMEOUT` at the connect timeout; refused ones: `NETWORK`.
        let err = connect(&url, &[quiet], Duration::from_millis(600)).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Timeout, "{err:?}");
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        let err = connect(&url, &[closed, closed], Duration::from_secs(5)).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Network, "{err:?}");
        assert!(err.message().contains("cannot connect to example.test"), "{err:?}");
    }
}
