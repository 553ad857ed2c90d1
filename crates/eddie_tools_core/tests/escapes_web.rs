//! Attacks on the web family, each as it would be made: an API key chased to another port by a
//! redirect, stacked `Content-Encoding` layers and a two-layer zip bomb, and a download whose
//! folder is swapped for a symlink to a folder outside the workspace during the confirm and
//! while the body streams. Every server listens on 127.0.0.1 and serves a bounded number of
//! connections.
#![cfg(feature = "web")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eddie_tools_core::context::{ConfirmFn, NetworkPolicy, constant_confirm};
use eddie_tools_core::{Ctx, ErrorCode, registry};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Read a request's head (and a body of `content-length` bytes); the head as text.
async fn read_request(sock: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = vec![0u8; 8192];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_string();
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                })
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            while got.len() < end + 4 + len {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            return head;
        }
        match sock.read(&mut buf).await {
            Ok(0) | Err(_) => return String::from_utf8_lossy(&got).to_string(),
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

type Heads = Arc<Mutex<Vec<String>>>;

/// A server on 127.0.0.1 answering each request with `respond(head)` (the full response as
/// bytes), keeping every request head; at most `limit` connections.
async fn serve(
    limit: usize,
    respond: impl Fn(&str) -> Vec<u8> + Send + Sync + 'static,
) -> (SocketAddr, Heads) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads: Heads = Arc::default();
    let kept = Arc::clone(&heads);
    tokio::spawn(async move {
        for _ in 0..limit {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let head = read_request(&mut sock).await;
            kept.lock().unwrap().push(head.clone());
            let _ = sock.write_all(&respond(&head)).await;
            let _ = sock.shutdown().await;
        }
    });
    (addr, heads)
}

fn response(status: &str, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

fn loopback() -> NetworkPolicy {
    NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() }
}

/// A ctx on loopback whose confirm says yes (a host's approval, whoever asks: the tool or the
/// permission gate in front of it).
fn ctx_in(dir: &Path, env: &[(&str, String)]) -> Ctx {
    let env: HashMap<String, String> = env.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    Ctx::new(&dir.display().to_string())
        .unwrap()
        .with_env(env)
        .with_network(loopback())
        .with_confirm(constant_confirm(true))
}

fn has_header(head: &str, name: &str) -> bool {
    head.lines().any(|l| l.to_ascii_lowercase().starts_with(&format!("{name}:")))
}

const BRAVE_ANSWER: &str =
    r#"{"web":{"results":[{"title":"T","url":"https://example.com/","description":"d"}]}}"#;

#[tokio::test]
async fn an_api_key_goes_to_its_own_origin_only_never_to_another_port_on_a_redirect() {
    let dir = tempfile::tempdir().unwrap();
    // The other origin: same host, another port; it would answer like the provider.
    let (other, other_heads) = serve(8, |_| {
        response("200 OK", &[("content-type", "application/json".into())], BRAVE_ANSWER.as_bytes())
    })
    .await;
    let to = format!("http://127.0.0.1:{}/res/v1/web/search", other.port());
    let (provider, provider_heads) =
        serve(8, move |_| response("307 Temporary Redirect", &[("location", to.clone())], b"")).await;
    let base = format!("http://127.0.0.1:{}/res/v1/web/search", provider.port());
    for (key_var, url_var, provider_name, header) in [
        ("BRAVE_API_KEY", "BRAVE_API_URL", "brave", "x-subscription-token"),
        ("TAVILY_API_KEY", "TAVILY_API_URL", "tavily", "authorization"),
    ] {
        let ctx = ctx_in(dir.path(), &[(key_var, "sk-secret-123".into()), (url_var, base.clone())]);
        let _ = registry::run("web_search", &json!({"query": "q", "provider": provider_name}), &ctx).await;
        let sent = provider_heads.lock().unwrap().pop().expect("the provider was asked");
        assert!(sent.contains("sk-secret-123") && has_header(&sent, header), "{provider_name}: {sent}");
        let heads = other_heads.lock().unwrap().clone();
        assert!(!heads.is_empty(), "{provider_name}: the redirect was followed");
        for h in heads {
            assert!(!h.contains("sk-secret-123"), "{provider_name}: the key reached another origin: {h}");
            assert!(!has_header(&h, header), "{provider_name}: {h}");
        }
        other_heads.lock().unwrap().clear();
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn stacked_content_encodings_are_decoded_to_the_end_and_a_bomb_is_too_large() {
    let dir = tempfile::tempdir().unwrap();
    let text = "plain words, encoded twice over\n".repeat(64);
    let twice = gzip(&gzip(text.as_bytes()));
    // 64 MiB of zeros in two gzip layers: a few KiB on the wire.
    let mut inner = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        inner.write_all(&zeros).unwrap();
    }
    let bomb = gzip(&inner.finish().unwrap());
    assert!(bomb.len() < 256 << 10);
    let five = gzip(&gzip(&gzip(&gzip(&gzip(b"deep")))));
    let (srv, heads) = serve(16, move |head| {
        let plain = [("content-type", "text/plain".to_owned())];
        if head.starts_with("GET /one-line") {
            response("200 OK", &[plain[0].clone(), ("content-encoding", "gzip, gzip".into())], &twice)
        } else if head.starts_with("GET /two-lines") {
            let h =
                [plain[0].clone(), ("content-encoding", "gzip".into()), ("content-encoding", "gzip".into())];
            response("200 OK", &h, &twice)
        } else if head.starts_with("GET /bomb") {
            response("200 OK", &[plain[0].clone(), ("content-encoding", "gzip, gzip".into())], &bomb)
        } else {
            response(
                "200 OK",
                &[plain[0].clone(), ("content-encoding", "gzip,gzip,gzip,gzip,gzip".into())],
                &five,
            )
        }
    })
    .await;
    let ctx = ctx_in(dir.path(), &[]);
    for path in ["one-line", "two-lines"] {
        let url = format!("http://127.0.0.1:{}/{path}", srv.port());
        let out = registry::run(
            "web_fetch",
            &json!({"url": url, "format": "raw", "noCache": true, "maxChars": 100000}),
            &ctx,
        )
        .await
        .unwrap_or_else(|e| panic!("{path}: {} {}", e.code().as_str(), e.message()));
        let data: Value = out.data_value().unwrap();
        assert_eq!(data["bytes"], json!(text.len()), "{path}: {data}");
        assert!(
            out.content.starts_with("plain words, encoded twice over"),
            "{path}: {}",
            &out.content[..80.min(out.content.len())]
        );
    }
    assert!(heads.lock().unwrap().iter().all(|h| h.to_ascii_lowercase().contains("accept-encoding: gzip")));
    let started = Instant::now();
    let url = format!("http://127.0.0.1:{}/bomb", srv.port());
    let e = registry::run("web_fetch", &json!({"url": url, "noCache": true, "maxBytes": 1 << 20}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::TooLarge, "{}", e.message());
    assert!(started.elapsed() < Duration::from_secs(60));
    let url = format!("http://127.0.0.1:{}/deep", srv.port());
    let e = registry::run("web_fetch", &json!({"url": url, "noCache": true}), &ctx).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::TooLarge, "{}", e.message());
    assert!(e.message().contains("5 times"), "{}", e.message());
}

/// A workspace with `dl/` inside, and a folder outside it.
struct Swap {
    ws: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Swap {
    fn new() -> Self {
        let s = Self { ws: tempfile::tempdir().unwrap(), outside: tempfile::tempdir().unwrap() };
        std::fs::create_dir(s.ws.path().join("dl")).unwrap();
        s
    }

    fn dl(&self) -> PathBuf {
        self.ws.path().join("dl")
    }

    /// Move `dl/` away (to `aside`) and put a symlink to the outside folder in its place.
    fn swap(dl: &Path, aside: &Path, outside: &Path) {
        std::fs::rename(dl, aside).unwrap();
        std::os::unix::fs::symlink(outside, dl).unwrap();
    }

    /// Every regular file under `dir`, recursively (symlinks not followed).
    fn files(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let (p, t) = (e.path(), e.file_type().unwrap());
            if t.is_dir() {
                out.extend(Self::files(&p));
            } else if t.is_file() {
                out.push(p);
            }
        }
        out
    }
}

#[tokio::test]
async fn a_folder_swapped_for_a_symlink_during_the_confirm_gets_nothing_written_through_it() {
    let (srv, _) =
        serve(8, |_| response("200 OK", &[("content-type", "application/octet-stream".into())], b"PAYLOAD"))
            .await;
    let url = format!("http://127.0.0.1:{}/f.bin", srv.port());
    for (path, aside_in_ws) in [("dl/f.bin", true), ("dl/deeper/f.bin", true), ("dl/f.bin", false)] {
        let s = Swap::new();
        let (dl, outside) = (s.dl(), s.outside.path().to_path_buf());
        // The attacker moves the folder away (inside the workspace, or out of it) and plants the
        // symlink while the person reads the question.
        let aside = if aside_in_ws { s.ws.path().join("dl.old") } else { outside.join("moved") };
        // Only the download's own question swaps (a gate may ask other questions first), once.
        let confirm: ConfirmFn = Arc::new(move |text: String| {
            let is_dir = std::fs::symlink_metadata(&dl).is_ok_and(|m| m.is_dir());
            if text.starts_with("Download ") && is_dir {
                Swap::swap(&dl, &aside, &outside);
            }
            Box::pin(async { Ok(true) })
        });
        let ctx = ctx_in(s.ws.path(), &[]).with_confirm(confirm);
        let e = registry::run("download", &json!({"url": url, "path": path}), &ctx).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutsideWorkspace, "{path}: {}", e.message());
        assert_eq!(Swap::files(s.outside.path()), Vec::<PathBuf>::new(), "{path}: nothing written outside");
        assert_eq!(Swap::files(s.ws.path()), Vec::<PathBuf>::new(), "{path}: no temp file left");
    }
}

#[tokio::test]
async fn a_folder_swapped_for_a_symlink_while_the_body_streams_gets_nothing_written_through_it() {
    for aside_in_ws in [true, false] {
        let s = Swap::new();
        // A slow server: the head and a first piece, then it waits to be told to go on.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let go = Arc::new(tokio::sync::Notify::new());
        let go2 = Arc::clone(&go);
        tokio::spawn(async move {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            read_request(&mut sock).await;
            let body = vec![b'x'; 64 << 10];
            let head =
                format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len() * 2);
            let _ = sock.write_all(head.as_bytes()).await;
            let _ = sock.write_all(&body).await;
            let _ = tokio::time::timeout(Duration::from_secs(20), go2.notified()).await;
            let _ = sock.write_all(&body).await;
            let _ = sock.shutdown().await;
        });
        let ctx = ctx_in(s.ws.path(), &[]).with_confirm(constant_confirm(true));
        let url = format!("http://127.0.0.1:{port}/big.bin");
        let call = tokio::spawn(async move {
            registry::run("download", &json!({"url": url, "path": "dl/big.bin"}), &ctx).await
        });
        // Wait for the temp file: the download is streaming into dl/.
        let deadline = Instant::now() + Duration::from_secs(20);
        while !std::fs::read_dir(s.dl())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".part"))
        {
            assert!(Instant::now() < deadline, "the download never started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let aside = if aside_in_ws { s.ws.path().join("dl.old") } else { s.outside.path().join("moved") };
        Swap::swap(&s.dl(), &aside, s.outside.path());
        go.notify_one();
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutsideWorkspace, "{}", e.message());
        assert_eq!(Swap::files(s.outside.path()), Vec::<PathBuf>::new(), "nothing written outside");
        assert_eq!(Swap::files(s.ws.path()), Vec::<PathBuf>::new(), "no temp file left");
    }
}

#[tokio::test]
async fn a_download_still_lands_where_the_path_says_through_links_inside_the_workspace() {
    let s = Swap::new();
    std::os::unix::fs::symlink(s.dl(), s.ws.path().join("link")).unwrap();
    let (srv, _) = serve(4, |_| response("200 OK", &[], b"PAYLOAD")).await;
    let url = format!("http://127.0.0.1:{}/f.bin", srv.port());
    let ctx = ctx_in(s.ws.path(), &[]).with_confirm(constant_confirm(true));
    let out = registry::run("download", &json!({"url": url, "path": "link/new/f.bin"}), &ctx).await.unwrap();
    assert_eq!(out.data_value().unwrap()["size"], 7);
    assert_eq!(std::fs::read(s.dl().join("new/f.bin")).unwrap(), b"PAYLOAD");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(s.dl().join("new/f.bin")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o644, 0o644, "a new file gets the usual mode, not a temp file's 0600: {mode:o}");
}
