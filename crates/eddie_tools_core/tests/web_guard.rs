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
    // Two servers on one port: 127.0.0.2 (allowed) says "pinned", 127.0.0.1 (not allowed) "rebound".
    let (a, pinned_hits) = serve("127.0.0.2", 0, 4, |_| ok("pinned")).await;
    let (_, rebound_hits) = serve("127.0.0.1", a.port(), 4, |_| ok("rebound")).await;
    let resolver = Arc::new(Rebinding {
        first: "127.0.0.2".parse().unwrap(),
        then: "127.0.0.1".parse().unwrap(),
        calls: AtomicUsize::new(0),
    });
    let policy = NetworkPolicy { allow_hosts: vec!["127.0.0.2".into()], ..Default::default() };
    let guard = Guard::with_resolver(&policy, resolver.clone());
    let url = net::parse_url(&format!("http://rebind.test:{}/x", a.port())).unwrap();
    let mut resp = net::send(&ctx(), &guard, Request::get(url.clone())).await.unwrap();
    assert_eq!(body(&mut resp).await, "pinned");
    assert_eq!(resp.remote.map(|r| r.ip()), Some("127.0.0.2".parse().unwrap()));
    assert_eq!(resolver.calls.load(Ordering::SeqCst), 1, "resolved once: the check and the connection");
    assert_eq!(rebound_hits.load(Ordering::SeqCst), 0);
    assert_eq!(pinned_hits.load(Ordering::SeqCst), 1);
    // The second request resolves again, gets 127.0.0.1, and the guard refuses it.
    let e = net::send(&ctx(), &guard, Request::get(url)).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::BlockedAddress, "{}", e.message());
    assert_eq!(rebound_hits.load(Ordering::SeqCst), 0);
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
