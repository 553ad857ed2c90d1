//! `git_push` / `git_pull` over smart HTTP against a real server: `git http-backend` (CGI)
//! behind a small HTTP/1.1 server on 127.0.0.1 that this test starts (basic auth required on
//! every request), with the git CLI as the oracle.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod remote;
use remote::{call, git, noise};

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use base64::Engine as _;
use eddie_tools_core::Ctx;
use eddie_tools_core::context::{NetworkPolicy, OutputChunk, constant_confirm};
use serde_json::json;

const USER: &str = "ada";
const PASS: &str = "s3cret-pass";

/// The test's HTTP server: each request authenticated, then handed to `git http-backend`.
struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Start a server on 127.0.0.1 that hands each connection to `handler` (one at a time, at most
/// `limit` of them, for at most a minute, until dropped).
fn start(limit: usize, handler: impl Fn(TcpStream, &AtomicBool) + Send + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr");
    let stop = Arc::new(AtomicBool::new(false));
    let hits = Arc::new(AtomicUsize::new(0));
    let (s, h) = (Arc::clone(&stop), Arc::clone(&hits));
    let thread = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !s.load(Ordering::SeqCst) && Instant::now() < deadline && h.load(Ordering::SeqCst) < limit {
            match listener.accept() {
                Ok((conn, _)) => {
                    h.fetch_add(1, Ordering::SeqCst);
                    conn.set_nonblocking(false).unwrap();
                    conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    handler(conn, &s);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    Server { addr, stop, hits, thread: Some(thread) }
}

/// A request's line and headers (`None` if the peer closed first).
fn read_head(conn: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") && buf.len() < 64 * 1024 {
        if conn.read(&mut byte).unwrap_or(0) == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Serve the bare repositories under `root`. With `stall`, a `git-upload-pack` POST gets its
/// headers and a first packet, then nothing (until the server stops), and `stalled` is told.
fn serve(root: PathBuf, stall: Option<mpsc::Sender<()>>) -> Server {
    start(200, move |conn, stop| handle(conn, &root, stall.as_ref(), stop))
}

fn handle(mut conn: TcpStream, root: &Path, stall: Option<&mpsc::Sender<()>>, stop: &AtomicBool) {
    let Some(head) = read_head(&mut conn) else { return };
    let mut lines = head.split("\r\n");
    let first: Vec<&str> = lines.next().unwrap_or_default().split(' ').collect();
    let (method, target) = (first[0].to_owned(), first[1].to_owned());
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).unwrap();
    let want =
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASS}")));
    if headers.get("authorization") != Some(&want) {
        let _ = conn.write_all(
            b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"git\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        return;
    }
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if let Some(tx) = stall
        && method == "POST"
        && path.ends_with("/git-upload-pack")
    {
        let _ = conn.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-result\r\nConnection: close\r\n\r\n0008NAK\n",
        );
        let _ = conn.flush();
        let _ = tx.send(());
        let until = Instant::now() + Duration::from_secs(20);
        while !stop.load(Ordering::SeqCst) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        return;
    }
    let mut child = Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REMOTE_USER", USER)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", headers.get("content-type").cloned().unwrap_or_default())
        .env("CONTENT_LENGTH", len.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("git http-backend");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&body);
    });
    let out = child.wait_with_output().expect("http-backend output");
    let _ = writer.join();
    let raw = out.stdout;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, 4));
    let split = split.or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let (i, n) = split.expect("CGI headers");
    let cgi_head = String::from_utf8_lossy(&raw[..i]).into_owned();
    let mut status = "200 OK".to_owned();
    let mut resp = String::new();
    for l in cgi_head.lines() {
        match l.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
            Some((k, v)) => resp.push_str(&format!("{k}: {}\r\n", v.trim())),
            None => {}
        }
    }
    let payload = &raw[i + n..];
    let _ = conn.write_all(
        format!("HTTP/1.1 {status}\r\n{resp}Content-Length: {}\r\nConnection: close\r\n\r\n", payload.len())
            .as_bytes(),
    );
    let _ = conn.write_all(payload);
}

struct Fixture {
    _t: tempfile::TempDir,
    ws: PathBuf,
    bare: PathBuf,
    server: Server,
}

/// A bare `repo.git` served over http with one commit on main, and `work` and `other`: clones
/// whose origin is its http URL, with `helper` as their credential.helper (if any).
fn fixture(helper: Option<&str>, stall: Option<mpsc::Sender<()>>) -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("srv");
    let ws = t.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    let bare = root.join("repo.git");
    git(&root, &["init", "-q", "--bare", "-b", "main", "repo.git"]);
    let seed = t.path().join("seed");
    git(t.path(), &["init", "-q", "-b", "main", "seed"]);
    std::fs::write(seed.join("a.txt"), "one\n").unwrap();
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "first"]);
    git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    let server = serve(root, stall);
    let url = format!("http://{}/repo.git", server.addr);
    for name in ["work", "other"] {
        git(&ws, &["clone", "-q", bare.to_str().unwrap(), name]);
        let d = ws.join(name);
        git(&d, &["remote", "set-url", "origin", &url]);
        git(&d, &["config", "user.name", "Ada"]);
        git(&d, &["config", "user.email", "ada@example.com"]);
        if let Some(h) = helper {
            git(&d, &["config", "credential.helper", h]);
        }
    }
    Fixture { _t: t, ws, bare, server }
}

fn good_helper() -> String {
    format!("!f() {{ echo username={USER}; echo password={PASS}; }}; f")
}

fn ctx(f: &Fixture, allow: bool) -> Ctx {
    let mut env = HashMap::new();
    env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    env.insert("HOME".into(), f.ws.to_string_lossy().into_owned());
    env.insert("GIT_CONFIG_GLOBAL".into(), "/dev/null".into());
    env.insert("GIT_CONFIG_NOSYSTEM".into(), "1".into());
    let c = Ctx::new(f.ws.to_str().unwrap()).unwrap().with_confirm(constant_confirm(true)).with_env(env);
    if allow {
        c.with_network(NetworkPolicy { allow_hosts: vec![f.server.addr.to_string()], ..Default::default() })
    } else {
        c.with_network(NetworkPolicy::default())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_then_pull_over_http_with_a_credential_helper() {
    let f = fixture(Some(&good_helper()), None);
    let work = f.ws.join("work");
    std::fs::write(work.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(work.join("big.bin"), noise(300 * 1024)).unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "second"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let s = Arc::clone(&seen);
    let c = ctx(&f, true).with_on_output(Arc::new(move |chunk: OutputChunk| {
        s.lock().unwrap().push(chunk.text);
        Box::pin(async {})
    }));
    let r = call(&c, "git_push", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "pushed", "{r}");
    assert_eq!(r["commits"], 1);
    // The oracle: the server's repository has the commit.
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);
    assert_eq!(git(&work, &["rev-parse", "refs/remotes/origin/main"]), head);
    assert!(
        seen.lock().unwrap().iter().any(|t| t.starts_with("Sent ")),
        "progress: {:?}",
        seen.lock().unwrap()
    );
    // Nothing more to push.
    let r = call(&c, "git_push", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "up-to-date");

    let other = f.ws.join("other");
    let r = call(&c, "git_pull", json!({"path": "other"})).await.unwrap();
    assert_eq!(r["status"], "pulled", "{r}");
    assert_eq!(r["kind"], "fast-forward");
    assert_eq!(git(&other, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&other, &["status", "--porcelain"]), "");
    assert_eq!(std::fs::read_to_string(other.join("a.txt")).unwrap(), "one\ntwo\n");
    assert_eq!(git(&other, &["fsck", "--no-progress"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_is_auth_failed_naming_the_helper() {
    let f = fixture(Some("!f() { echo username=ada; echo password=wrong-one; }; f"), None);
    let work = f.ws.join("work");
    std::fs::write(work.join("a.txt"), "changed\n").unwrap();
    git(&work, &["commit", "-q", "-am", "second"]);
    let before = git(&f.bare, &["rev-parse", "main"]);
    let (code, msg) = call(&ctx(&f, true), "git_push", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains("credential.helper"), "{msg}");
    assert!(!msg.contains("wrong-one"), "the secret leaked: {msg}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), before);
    let (code, msg) = call(&ctx(&f, true), "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credentials_is_auth_failed_and_askpass_is_used() {
    let f = fixture(None, None);
    let (code, msg) = call(&ctx(&f, true), "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains("no credential.helper") && msg.contains("GIT_ASKPASS"), "{msg}");

    // GIT_ASKPASS answers the username and the password prompts.
    let askpass = f.ws.join("askpass.sh");
    std::fs::write(
        &askpass,
        format!("#!/bin/sh\ncase \"$1\" in Username*) echo {USER};; *) echo {PASS};; esac\n"),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&askpass).status().unwrap();
    let work = f.ws.join("work");
    std::fs::write(work.join("a.txt"), "by askpass\n").unwrap();
    git(&work, &["commit", "-q", "-am", "second"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let mut c = ctx(&f, true);
    if let Some(env) = c.env.as_mut() {
        env.insert("GIT_ASKPASS".into(), askpass.to_string_lossy().into_owned());
    }
    let r = call(&c, "git_push", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "pushed", "{r}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_is_refused_without_allow_hosts_and_nothing_is_sent() {
    let f = fixture(Some(&good_helper()), None);
    let work = f.ws.join("work");
    std::fs::write(work.join("a.txt"), "changed\n").unwrap();
    git(&work, &["commit", "-q", "-am", "second"]);
    let (code, msg) = call(&ctx(&f, false), "git_push", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(code, "BLOCKED_ADDRESS", "{msg}");
    let (code, msg) = call(&ctx(&f, false), "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "BLOCKED_ADDRESS", "{msg}");
    assert_eq!(f.server.hits.load(Ordering::SeqCst), 0, "a request reached the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_mid_transfer_cancels_the_pull() {
    let (tx, rx) = mpsc::channel();
    let f = fixture(Some(&good_helper()), Some(tx));
    // Something to pull: pushed to the server with the git CLI.
    let seed = f.ws.join("work");
    std::fs::write(seed.join("a.txt"), "new\n").unwrap();
    git(&seed, &["commit", "-q", "-am", "second"]);
    git(&seed, &["push", "-q", f.bare.to_str().unwrap(), "main"]);
    let other = f.ws.join("other");
    let before = git(&other, &["rev-parse", "HEAD"]);
    let c = ctx(&f, true);
    let c2 = c.clone();
    let task = tokio::spawn(async move { call(&c2, "git_pull", json!({"path": "other"})).await });
    tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(20)))
        .await
        .unwrap()
        .expect("the server saw the upload-pack request");
    let t0 = Instant::now();
    c.cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(10), task).await.expect("the pull ended").unwrap();
    let (code, msg) = r.unwrap_err();
    assert_eq!(code, "CANCELLED", "{msg}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(git(&other, &["rev-parse", "HEAD"]), before);
}

/// A server that answers every request with a `302` to `base` + the same path.
fn redirector(base: String) -> Server {
    start(50, move |mut conn, _| {
        let head = read_head(&mut conn).unwrap_or_default();
        let target = head.split(' ').nth(1).unwrap_or("/").to_owned();
        let _ = conn.write_all(
            format!("HTTP/1.1 302 Found\r\nLocation: {base}{target}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_a_port_not_allowed_is_refused_before_any_request() {
    // The real server is the target; the allowed host only redirects to it.
    let f = fixture(Some(&good_helper()), None);
    let hop = redirector(format!("http://{}", f.server.addr));
    let other = f.ws.join("other");
    git(&other, &["remote", "set-url", "origin", &format!("http://{}/repo.git", hop.addr)]);
    let c = ctx(&f, false)
        .with_network(NetworkPolicy { allow_hosts: vec![hop.addr.to_string()], ..Default::default() });
    let (code, msg) = call(&c, "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "BLOCKED_ADDRESS", "{msg}");
    assert!(hop.hits.load(Ordering::SeqCst) >= 1, "the allowed host was asked");
    assert_eq!(f.server.hits.load(Ordering::SeqCst), 0, "the redirect target was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_keep_their_own_policy_and_credentials() {
    let f = fixture(Some(&good_helper()), None);
    let work = f.ws.join("work");
    let other = f.ws.join("other");
    // `other` has a helper with a wrong password: its calls must never borrow work's.
    git(&other, &["config", "credential.helper", "!f() { echo username=ada; echo password=nope; }; f"]);
    let allowed = ctx(&f, true);
    let refused = ctx(&f, false);
    for i in 0..4 {
        std::fs::write(work.join("a.txt"), format!("round {i}\n")).unwrap();
        git(&work, &["commit", "-q", "-am", &format!("round {i}")]);
        let head = git(&work, &["rev-parse", "HEAD"]);
        let (push, blocked, denied) = tokio::join!(
            call(&allowed, "git_push", json!({"path": "work"})),
            call(&refused, "git_pull", json!({"path": "other"})),
            call(&allowed, "git_pull", json!({"path": "other"})),
        );
        assert_eq!(push.unwrap()["status"], "pushed");
        assert_eq!(blocked.unwrap_err().0, "BLOCKED_ADDRESS");
        assert_eq!(denied.unwrap_err().0, "AUTH_FAILED");
        assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diverged_push_is_refused_then_pull_merges_and_push_succeeds() {
    let f = fixture(Some(&good_helper()), None);
    let (work, other) = (f.ws.join("work"), f.ws.join("other"));
    let c = ctx(&f, true);
    std::fs::write(work.join("a.txt"), "one\nfrom work\n").unwrap();
    git(&work, &["commit", "-q", "-am", "work's"]);
    let theirs = git(&work, &["rev-parse", "HEAD"]);
    assert_eq!(call(&c, "git_push", json!({"path": "work"})).await.unwrap()["status"], "pushed");
    // `other` has not seen work's commit: its push is not a fast-forward.
    std::fs::write(other.join("b.txt"), "from other\n").unwrap();
    git(&other, &["add", "b.txt"]);
    git(&other, &["commit", "-q", "-m", "other's"]);
    let (code, msg) = call(&c, "git_push", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "NON_FAST_FORWARD", "{msg}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), theirs);
    let r = call(&c, "git_pull", json!({"path": "other"})).await.unwrap();
    assert_eq!(r["kind"], "merge", "{r}");
    assert_eq!(git(&other, &["rev-parse", "HEAD^2"]), theirs);
    assert_eq!(std::fs::read_to_string(other.join("a.txt")).unwrap(), "one\nfrom work\n");
    assert_eq!(call(&c, "git_push", json!({"path": "other"})).await.unwrap()["status"], "pushed");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), git(&other, &["rev-parse", "HEAD"]));
    git(&f.bare, &["merge-base", "--is-ancestor", &theirs, "main"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_the_url_are_used_and_never_shown() {
    let f = fixture(None, None);
    let work = f.ws.join("work");
    let c = ctx(&f, true);
    git(&work, &["remote", "set-url", "origin", &format!("http://{USER}:{PASS}@{}/repo.git", f.server.addr)]);
    std::fs::write(work.join("a.txt"), "via url\n").unwrap();
    git(&work, &["commit", "-q", "-am", "second"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    assert_eq!(call(&c, "git_push", json!({"path": "work"})).await.unwrap()["status"], "pushed");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);
    git(
        &work,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("http://{USER}:leaked-if-shown@{}/repo.git", f.server.addr),
        ],
    );
    std::fs::write(work.join("a.txt"), "again\n").unwrap();
    git(&work, &["commit", "-q", "-am", "third"]);
    let (code, msg) = call(&c, "git_push", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains("the remote URL") && !msg.contains("leaked-if-shown"), "{msg}");
}
