//! The network guard and the pinned client against real HTTP servers on loopback: DNS
//! rebinding (a resolver that answers differently the second time), redirect chains into
//! 127.0.0.1, [::1], 169.254.169.254 and `0x7f.1`, and what the policy opens.
#![cfg(feature = "net")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use eddie_tools_core::context::{BoxFuture, NetworkPolicy};
use eddie_tools_core::engine::net::{self, Guard, Request, Resolver};
use eddie_tools_core::{Ctx, ErrorCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server on `ip` answering every request with `respond(path)` (a full HTTP response),
/// counting the requests; at most `limit` connections, then it stops.
async fn serve(
    ip: &str,
    port: u16,
    limit: usize,
    respond: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((ip, port)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    tokio::spawn(async move {
        for _ in 0..limit {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = vec![0u8; 8192];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&got).to_string();
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let _ = sock.write_all(respond(&path).as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (addr, hits)
}

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn redirect(to: &str) -> String {
    format!("HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
}

/// Answers `first` on the first lookup and `then` on every later one.
struct Rebinding {
    first: IpAddr,
    then: IpAddr,
    calls: AtomicUsize,
}

impl Resolver for Rebinding {
    fn lookup(&self, _host: String, port: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let ip = if n == 0 { self.first } else { self.then };
        Box::pin(async move { Ok(vec![SocketAddr::new(ip, port)]) })
    }
}

fn ctx() -> Ctx {
    Ctx::new(".").unwrap()
}

async fn body(resp: &mut net::Response) -> String {
    String::from_utf8(resp.body_capped(1 << 20).await.unwrap()).unwrap()
}

#[tokio::test]
async fn rebinding_cannot_switch_the_connection_from_the_checked_address() {
    // Straight to the server (our own connection), and with a user in the URL (reqwest's
    // client, which sends it as basic authentication): both connect where the check said.
    for userinfo in ["", "u:p@"] {
        // Two servers on one port: 127.0.0.2 (allowed) says "pinned", 127.0.0.1 (not allowed)
        // "rebound".
        let (a, pinned_hits) = serve("127.0.0.2", 0, 4, |_| ok("pinned")).await;
        let (_, rebound_hits) = serve("127.0.0.1", a.port(), 4, |_| ok("rebound")).await;
        let resolver = Arc::new(Rebinding {
            first: "127.0.0.2".parse().unwrap(),
            then: "127.0.0.1".parse().unwrap(),
            calls: AtomicUsize::new(0),
        });
        let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.2".into()], ..Default::default() };
        let guard = Guard::with_resolver(&policy, resolver.clone());
        let url = net::parse_url(&format!("http://{userinfo}rebind.test:{}/x", a.port())).unwrap();
        let mut resp = net::send(&ctx(), &guard, Request::get(url.clone())).await.unwrap();
        assert_eq!(body(&mut resp).await, "pinned", "{userinfo}");
        assert_eq!(resp.remote.map(|r| r.ip()), Some("127.0.0.2".parse().unwrap()), "{userinfo}");
        assert_eq!(resolver.calls.load(Ordering::SeqCst), 1, "resolved once: the check and the connection");
        assert_eq!(rebound_hits.load(Ordering::SeqCst), 0, "{userinfo}");
        assert_eq!(pinned_hits.load(Ordering::SeqCst), 1, "{userinfo}");
        // The second request resolves again, gets 127.0.0.1, and the guard refuses it.
        let e = net::send(&ctx(), &guard, Request::get(url)).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::BlockedAddress, "{}", e.message());
        assert_eq!(rebound_hits.load(Ordering::SeqCst), 0, "{userinfo}");
    }
}

#[tokio::test]
async fn a_public_answer_then_loopback_never_reaches_loopback() {
    let (a, loop_hits) = serve("127.0.0.1", 0, 4, |_| ok("rebound")).await;
    let resolver = Arc::new(Rebinding {
        first: "192.88.100.1".parse().unwrap(), // public, unroutable here
        then: "127.0.0.1".parse().unwrap(),
        calls: AtomicUsize::new(0),
    });
    let guard = Guard::with_resolver(&NetworkPolicy::default(), resolver.clone());
    let mut req = Request::get(net::parse_url(&format!("http://public.test:{}/", a.port())).unwrap());
    req.connect_timeout = Duration::from_millis(500);
    let e =
        net::bounded(&ctx(), Duration::from_secs(5), "t", net::send(&ctx(), &guard, req)).await.unwrap_err();
    assert!(matches!(e.code(), ErrorCode::Network | ErrorCode::Timeout), "{:?} {}", e.code(), e.message());
    assert_eq!(resolver.calls.load(Ordering::SeqCst), 1);
    assert_eq!(loop_hits.load(Ordering::SeqCst), 0, "the connection went to the checked address only");
}

#[tokio::test]
async fn redirect_chains_into_private_addresses_are_refused_at_the_hop() {
    let (target, target_hits) = serve("127.0.0.1", 0, 16, |_| ok("secret")).await;
    let port = target.port();
    let hops = [
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::1]:{port}/"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("http://0x7f.1:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://localhost:{port}/"),
    ];
    let hops2 = hops.clone();
    // /r/<i>/<n>: n more redirects on this server, then to hops[i].
    let (entry, _) = serve("127.0.0.2", 0, 64, move |path| {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (i, n): (usize, usize) = (parts[1].parse().unwrap(), parts[2].parse().unwrap());
        if n == 0 { redirect(&hops2[i]) } else { redirect(&format!("/r/{i}/{}", n - 1)) }
    })
    .await;
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.2".into()], ..Default::default() };
    let guard = Guard::new(&policy);
    for (i, hop) in hops.iter().enumerate() {
        let url = net::parse_url(&format!("http://127.0.0.2:{}/r/{i}/2", entry.port())).unwrap();
        let e = net::send(&ctx(), &guard, Request::get(url)).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::BlockedAddress, "{hop}: {}", e.message());
    }
    assert_eq!(target_hits.load(Ordering::SeqCst), 0, "no hop reached the private target");
    // The same chain with 127.0.0.1 allowed arrives, and the chain is reported.
    let open =
        NetworkPolicy { allow_hosts: vec!["127.0.0.2".into(), "127.0.0.1".into()], ..Default::default() };
    let url = net::parse_url(&format!("http://127.0.0.2:{}/r/0/2", entry.port())).unwrap();
    let mut resp = net::send(&ctx(), &Guard::new(&open), Request::get(url)).await.unwrap();
    assert_eq!(body(&mut resp).await, "secret");
    assert_eq!(resp.chain.len(), 3);
    assert!(resp.chain.iter().all(|h| h.status == 302));
    // Not following cross-host redirects: the redirect comes back instead.
    let url = net::parse_url(&format!("http://127.0.0.2:{}/r/0/0", entry.port())).unwrap();
    let mut req = Request::get(url);
    req.follow_cross_host = false;
    let resp = net::send(&ctx(), &Guard::new(&open), req).await.unwrap();
    assert_eq!(resp.status, 302);
    assert_eq!(resp.unfollowed.as_deref(), Some(format!("http://127.0.0.1:{port}/").as_str()));
}

#[tokio::test]
async fn a_redirect_loop_stops_after_ten_hops() {
    let (a, _) = serve("127.0.0.1", 0, 32, |_| redirect("/again")).await;
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
    let url = net::parse_url(&format!("http://127.0.0.1:{}/", a.port())).unwrap();
    let e = net::send(&ctx(), &Guard::new(&policy), Request::get(url)).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Network);
    assert!(e.message().contains("more than 10"), "{}", e.message());
}

#[tokio::test]
async fn a_refused_connection_is_network_and_a_dead_name_is_dns() {
    let free = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let policy = NetworkPolicy { allow_private: true, ..Default::default() };
    let url = net::parse_url(&format!("http://127.0.0.1:{}/", free.port())).unwrap();
    let e = net::send(&ctx(), &Guard::new(&policy), Request::get(url)).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Network, "{}", e.message());
    let url = net::parse_url("http://name-that-does-not-exist.invalid/").unwrap();
    let e = net::bounded(
        &ctx(),
        Duration::from_secs(20),
        "t",
        net::send(&ctx(), &Guard::new(&policy), Request::get(url)),
    )
    .await
    .unwrap_err();
    assert!(matches!(e.code(), ErrorCode::Dns | ErrorCode::Timeout), "{:?}", e.code());
}

/// Answers every lookup with `ip`, counting them.
struct Fixed {
    ip: IpAddr,
    calls: AtomicUsize,
}

impl Resolver for Fixed {
    fn lookup(&self, _host: String, port: u16) -> BoxFuture<std::io::Result<Vec<SocketAddr>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let ip = self.ip;
        Box::pin(async move { Ok(vec![SocketAddr::new(ip, port)]) })
    }
}

/// One connection accepted on `listener`: what the client sent before it stopped (or before
/// `within`), the server closing its side at once unless `keep` says how to answer.
async fn one_exchange(listener: TcpListener, answer: Option<Vec<u8>>, within: Duration) -> Vec<u8> {
    let Ok(Ok((mut sock, _))) = tokio::time::timeout(within, listener.accept()).await else {
        return Vec::new();
    };
    let mut got = Vec::new();
    let mut buf = vec![0u8; 4096];
    // A TLS ClientHello arrives in one flight; an HTTP request ends its head with a blank line
    // (and its body, when it has a length, is read too).
    loop {
        let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(300), sock.read(&mut buf)).await else {
            break;
        };
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + len {
                break;
            }
        }
    }
    if let Some(a) = answer {
        let _ = sock.write_all(&a).await;
    }
    got
}

#[tokio::test]
async fn https_goes_to_the_vetted_address_only_naming_the_url_host_and_offering_http1() {
    // A name resolved (once, by the guard) to 127.0.0.2; a listener on 127.0.0.1 at the same
    // port must get nothing. The server reads the ClientHello and hangs up: a TLS error.
    let tls = TcpListener::bind("127.0.0.2:0").await.unwrap();
    let port = tls.local_addr().unwrap().port();
    let other = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    let hello = tokio::spawn(one_exchange(tls, None, Duration::from_secs(10)));
    let stray = tokio::spawn(one_exchange(other, None, Duration::from_secs(2)));
    let resolver = Arc::new(Fixed { ip: "127.0.0.2".parse().unwrap(), calls: AtomicUsize::new(0) });
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.2".into()], ..Default::default() };
    let guard = Guard::with_resolver(&policy, resolver.clone());
    let url = net::parse_url(&format!("https://pinned-name.test:{port}/")).unwrap();
    let e = net::bounded(&ctx(), Duration::from_secs(10), "t", net::send(&ctx(), &guard, Request::get(url)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Tls, "{}", e.message());
    let hello = hello.await.unwrap();
    let has = |needle: &[u8]| hello.windows(needle.len()).any(|w| w == needle);
    assert_eq!(hello.first(), Some(&0x16), "a TLS handshake record");
    assert!(has(b"pinned-name.test"), "the URL's host is the SNI");
    assert!(has(b"\x08http/1.1") && !has(b"\x02h2"), "ALPN offers HTTP/1.1 only");
    assert!(stray.await.unwrap().is_empty(), "nothing reached the address the guard did not give");
    assert_eq!(resolver.calls.load(Ordering::SeqCst), 1, "the name was resolved by the guard only");
}

#[tokio::test]
async fn a_direct_request_says_its_host_and_one_user_agent_and_sends_its_body() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = tokio::spawn(one_exchange(listener, Some(ok("done").into_bytes()), Duration::from_secs(10)));
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
    let mut req = Request::get(net::parse_url(&format!("http://127.0.0.1:{port}/p?q=1#frag")).unwrap());
    req.method = reqwest::Method::POST;
    req.body = Some(b"abc=1".to_vec());
    req.headers.push(("User-Agent".into(), "git/2.0 (eddie-tools)".into()));
    let mut resp = net::send(&ctx(), &Guard::new(&policy), req).await.unwrap();
    assert_eq!(body(&mut resp).await, "done");
    let seen = String::from_utf8(seen.await.unwrap()).unwrap();
    let lower = seen.to_ascii_lowercase();
    assert!(seen.starts_with("POST /p?q=1 HTTP/1.1\r\n"), "{seen}");
    assert!(lower.contains(&format!("\r\nhost: 127.0.0.1:{port}\r\n")), "{seen}");
    assert_eq!(lower.matches("\r\nuser-agent:").count(), 1, "{seen}");
    assert!(seen.contains("git/2.0 (eddie-tools)"), "{seen}");
    assert!(lower.contains("\r\ncontent-length: 5\r\n") && seen.ends_with("\r\n\r\nabc=1"), "{seen}");
    assert!(lower.contains("\r\nconnection: close\r\n"), "{seen}");
}

#[tokio::test]
async fn a_head_larger_than_the_read_buffer_is_asked_for_again_and_read_whole() {
    let big = "v".repeat(20 << 10);
    let answer =
        format!("HTTP/1.1 200 OK\r\nx-big: {big}\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
    let (a, hits) = serve("127.0.0.1", 0, 4, move |_| answer.clone()).await;
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
    let url = net::parse_url(&format!("http://127.0.0.1:{}/", a.port())).unwrap();
    let mut resp = net::send(&ctx(), &Guard::new(&policy), Request::get(url)).await.unwrap();
    assert_eq!(body(&mut resp).await, "ok");
    assert_eq!(resp.header("x-big").map(|v| v.len()), Some(20 << 10));
    assert_eq!(hits.load(Ordering::SeqCst), 2, "asked again with hyper's growing buffer");
}

#[tokio::test]
async fn a_response_dropped_before_its_body_ends_closes_its_connection() {
    // The server announces a megabyte, sends ten bytes and waits: the client drops the
    // response, and its connection must close (no task left reading).
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut sock, _)) = listener.accept().await else { return };
        let mut buf = vec![0u8; 8192];
        let _ = sock.read(&mut buf).await;
        let _ = sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n0123456789").await;
        let closed = tokio::time::timeout(Duration::from_secs(10), sock.read(&mut buf)).await;
        let _ = tx.send(matches!(closed, Ok(Ok(0)) | Ok(Err(_))));
    });
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
    let url = net::parse_url(&format!("http://127.0.0.1:{port}/")).unwrap();
    let mut resp = net::send(&ctx(), &Guard::new(&policy), Request::get(url)).await.unwrap();
    assert_eq!(resp.chunk().await.unwrap().as_deref(), Some(&b"0123456789"[..]));
    drop(resp);
    assert!(rx.await.unwrap(), "the connection was closed once the response was dropped");
}

/// A server that answers one request with a head announcing a megabyte and ten bytes of it,
/// then waits: whether the client closed the connection within `within` of the answer.
async fn stalled_body(listener: TcpListener, within: Duration) -> bool {
    let Ok((mut sock, _)) = listener.accept().await else { return false };
    let mut buf = vec![0u8; 8192];
    let _ = sock.read(&mut buf).await;
    let _ = sock.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1000000\r\n\r\n0123456789").await;
    let closed = tokio::time::timeout(within, sock.read(&mut buf)).await;
    matches!(closed, Ok(Ok(0)) | Ok(Err(_)))
}

#[tokio::test]
async fn a_body_read_past_its_timeout_or_cancelled_closes_its_connection() {
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
    for cancel in [false, true] {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = tokio::spawn(stalled_body(listener, Duration::from_secs(10)));
        let ctx = ctx();
        if cancel {
            let c = ctx.cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                c.cancel();
            });
        }
        let url = net::parse_url(&format!("http://127.0.0.1:{port}/")).unwrap();
        let guard = Guard::new(&policy);
        let read = async {
            let mut resp = net::send(&ctx, &guard, Request::get(url)).await?;
            resp.body_capped(2 << 20).await
        };
        let timeout = if cancel { Duration::from_secs(30) } else { Duration::from_millis(500) };
        let e = net::bounded(&ctx, timeout, "t", read).await.unwrap_err();
        let want = if cancel { ErrorCode::Cancelled } else { ErrorCode::Timeout };
        assert_eq!(e.code(), want, "{}", e.message());
        assert!(server.await.unwrap(), "the connection was closed when the call ended (cancel: {cancel})");
    }
}

#[tokio::test]
async fn smuggled_lengths_and_a_second_response_are_never_read_as_the_body() {
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() };
    let fetch = |answer: &'static str| {
        let policy = policy.clone();
        async move {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            tokio::spawn(one_exchange(listener, Some(answer.as_bytes().to_vec()), Duration::from_secs(10)));
            let url = net::parse_url(&format!("http://127.0.0.1:{port}/")).unwrap();
            let read = async {
                let mut resp = net::send(&ctx(), &Guard::new(&policy), Request::get(url)).await?;
                resp.body_capped(1 << 20).await
            };
            net::bounded(&ctx(), Duration::from_secs(10), "t", read).await
        }
    };
    // Two lengths that disagree: refused, not guessed.
    let e = fetch("HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 40\r\n\r\nabc").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Network, "{}", e.message());
    // Chunked beside a length, and a second response after the first: the chunks are the body,
    // and nothing after them is read as part of it.
    let body = fetch(
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 200\r\n\r\n3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nevil",
    )
    .await
    .unwrap();
    assert_eq!(body, b"abc");
    // A body that ends before its length: an error, not a short body.
    let e = fetch("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort").await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Network, "{}", e.message());
}
