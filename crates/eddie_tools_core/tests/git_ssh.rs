//! `git_push` / `git_pull` over ssh against a real OpenSSH server (Debian's `openssh-server`)
//! that each test starts on a loopback port with its own host key, configuration and
//! `authorized_keys` in a temporary folder, and stops by pid. Logins with a key file and with
//! a key held by a real `ssh-agent` (started and stopped by the test); the git CLI is the
//! oracle.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod remote;
use remote::{call, git, noise};

use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eddie_tools_core::Ctx;
use eddie_tools_core::context::{NetworkPolicy, OutputChunk, constant_confirm};
use serde_json::json;

fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(program).args(args).envs(env.iter().copied()).output().expect("runs");
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A new ed25519 key pair at `path` (and `path.pub`), no passphrase.
fn keygen(path: &Path) -> String {
    run(
        "ssh-keygen",
        &["-q", "-t", "ed25519", "-N", "", "-C", "test key", "-f", path.to_str().unwrap()],
        &[],
    );
    std::fs::read_to_string(path.with_extension("pub")).unwrap().trim().to_owned()
}

/// `SHA256:…` of a public key file, as ssh-keygen shows it.
fn fingerprint(public: &Path) -> String {
    let out = run("ssh-keygen", &["-l", "-E", "sha256", "-f", public.to_str().unwrap()], &[]);
    out.split_whitespace().nth(1).unwrap().to_owned()
}

fn whoami() -> String {
    run("id", &["-un"], &[])
}

/// A free port on 127.0.0.1 (bound, then released for the server).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A child stopped by its pid when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// OpenSSH's server on 127.0.0.1, with its own host key and `authorized_keys`.
struct Sshd {
    addr: SocketAddr,
    host_pub: PathBuf,
    authorized: PathBuf,
    _proc: Proc,
}

fn sshd(dir: &Path) -> Sshd {
    std::fs::create_dir_all(dir).unwrap();
    // OpenSSH's privilege separation folder (Debian's package creates it only at boot).
    let _ = std::fs::create_dir_all("/run/sshd");
    let host_key = dir.join("host_key");
    keygen(&host_key);
    let authorized = dir.join("authorized_keys");
    std::fs::write(&authorized, "").unwrap();
    let port = free_port();
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\nPidFile none\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel ERROR\n",
            host_key.display(),
            authorized.display()
        ),
    )
    .unwrap();
    let child = Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f", config.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("sshd starts (apt-get install openssh-server)");
    let proc = Proc(child);
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "sshd did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Sshd { addr, host_pub: host_key.with_extension("pub"), authorized, _proc: proc }
}

struct Fixture {
    t: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    bare: PathBuf,
    server: Sshd,
    user: String,
}

impl Fixture {
    fn url(&self) -> String {
        format!("ssh://{}@{}{}", self.user, self.server.addr, self.bare.display())
    }

    /// Record the server's host key in `~/.ssh/known_hosts`.
    fn trust_host(&self) {
        let key = std::fs::read_to_string(&self.server.host_pub).unwrap();
        let key: Vec<&str> = key.split_whitespace().take(2).collect();
        std::fs::write(
            self.home.join(".ssh/known_hosts"),
            format!("[127.0.0.1]:{} {}\n", self.server.addr.port(), key.join(" ")),
        )
        .unwrap();
    }

    /// A key pair at `path`, allowed to log in.
    fn authorize(&self, path: &Path) {
        let public = keygen(path);
        let mut all = std::fs::read_to_string(&self.server.authorized).unwrap();
        all.push_str(&public);
        all.push('\n');
        std::fs::write(&self.server.authorized, all).unwrap();
    }
}

/// A bare repository with one commit, served over ssh, and `work` and `other`: clones whose
/// origin is its ssh URL (set with `set_url`).
fn fixture() -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let ws = t.path().join("ws");
    let home = t.path().join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let srv = t.path().join("srv");
    std::fs::create_dir_all(&srv).unwrap();
    git(&srv, &["init", "-q", "--bare", "-b", "main", "repo.git"]);
    let bare = srv.join("repo.git");
    let seed = t.path().join("seed");
    git(t.path(), &["init", "-q", "-b", "main", "seed"]);
    std::fs::write(seed.join("a.txt"), "one\n").unwrap();
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "first"]);
    git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    for name in ["work", "other"] {
        git(&ws, &["clone", "-q", bare.to_str().unwrap(), name]);
        let d = ws.join(name);
        git(&d, &["config", "user.name", "Ada"]);
        git(&d, &["config", "user.email", "ada@example.com"]);
    }
    let server = sshd(&t.path().join("sshd"));
    let f = Fixture { ws, home, bare, server, user: whoami(), t };
    for name in ["work", "other"] {
        git(&f.ws.join(name), &["remote", "set-url", "origin", &f.url()]);
    }
    f
}

fn ctx(f: &Fixture, allow: &str, agent: Option<&Path>) -> Ctx {
    let mut env = HashMap::new();
    env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    env.insert("HOME".into(), f.home.to_string_lossy().into_owned());
    env.insert("USER".into(), f.user.clone());
    env.insert("GIT_CONFIG_GLOBAL".into(), "/dev/null".into());
    env.insert("GIT_CONFIG_NOSYSTEM".into(), "1".into());
    env.insert("SSH_AUTH_SOCK".into(), agent.map(|p| p.to_string_lossy().into_owned()).unwrap_or_default());
    Ctx::new(f.ws.to_str().unwrap())
        .unwrap()
        .with_confirm(constant_confirm(true))
        .with_env(env)
        .with_network(NetworkPolicy { allow_hosts: vec![allow.to_owned()], ..Default::default() })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_then_pull_over_ssh_with_a_key_file() {
    let f = fixture();
    f.trust_host();
    f.authorize(&f.home.join(".ssh/id_ed25519"));
    let work = f.ws.join("work");
    std::fs::write(work.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(work.join("big.bin"), noise(300 * 1024)).unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "second"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let s = Arc::clone(&seen);
    let c = ctx(&f, &f.server.addr.to_string(), None).with_on_output(Arc::new(move |chunk: OutputChunk| {
        s.lock().unwrap().push(chunk.text);
        Box::pin(async {})
    }));
    let r = call(&c, "git_push", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "pushed", "{r}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);
    assert_eq!(git(&work, &["rev-parse", "refs/remotes/origin/main"]), head);
    assert!(
        seen.lock().unwrap().iter().any(|t| t.starts_with("Sent ")),
        "progress: {:?}",
        seen.lock().unwrap()
    );
    let r = call(&c, "git_push", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "up-to-date", "{r}");

    let other = f.ws.join("other");
    let r = call(&c, "git_pull", json!({"path": "other"})).await.unwrap();
    assert_eq!(r["status"], "pulled", "{r}");
    assert_eq!(r["kind"], "fast-forward");
    assert_eq!(git(&other, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&other, &["status", "--porcelain"]), "");
    assert_eq!(git(&other, &["fsck", "--no-progress"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_over_ssh_with_an_agent_key_and_an_scp_like_url_from_ssh_config() {
    let f = fixture();
    f.trust_host();
    // The key lives outside ~/.ssh: only the agent can offer it.
    let key = f.t.path().join("agent_key");
    f.authorize(&key);
    let sock = f.t.path().join("agent.sock");
    let agent = Proc(
        Command::new("ssh-agent")
            .args(["-D", "-a", sock.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !sock.exists() {
        assert!(Instant::now() < deadline, "ssh-agent did not create its socket");
        std::thread::sleep(Duration::from_millis(20));
    }
    run("ssh-add", &["-q", key.to_str().unwrap()], &[("SSH_AUTH_SOCK", sock.to_str().unwrap())]);
    // `gitsrv:<path>` (git's scp-like form), its host and port from ~/.ssh/config.
    std::fs::write(
        f.home.join(".ssh/config"),
        format!("Host gitsrv\n  HostName 127.0.0.1\n  Port {}\n", f.server.addr.port()),
    )
    .unwrap();
    let work = f.ws.join("work");
    git(&work, &["remote", "set-url", "origin", &format!("gitsrv:{}", f.bare.display())]);
    std::fs::write(work.join("b.txt"), "agent\n").unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "by agent"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let c = ctx(&f, &f.server.addr.to_string(), Some(&sock));
    let r = call(&c, "git_push", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "pushed", "{r}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);

    // Without the agent, the same call has no key to offer.
    let c = ctx(&f, &f.server.addr.to_string(), None);
    std::fs::write(work.join("b.txt"), "agent 2\n").unwrap();
    git(&work, &["commit", "-q", "-am", "no agent"]);
    let (code, msg) = call(&c, "git_push", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains("SSH_AUTH_SOCK is not set"), "{msg}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), head);
    drop(agent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssh_config_includes_are_followed_and_a_proxy_route_is_refused_without_connecting() {
    let f = fixture();
    f.trust_host();
    f.authorize(&f.home.join(".ssh/id_ed25519"));
    // The host's settings live in an included file (a relative pattern, read from ~/.ssh).
    std::fs::create_dir_all(f.home.join(".ssh/conf.d")).unwrap();
    std::fs::write(f.home.join(".ssh/config"), "Include conf.d/*.conf\nHost *\n  Port 1\n").unwrap();
    std::fs::write(
        f.home.join(".ssh/conf.d/10-gitsrv.conf"),
        format!("Host gitsrv\n  HostName 127.0.0.1\n  Port {}\n", f.server.addr.port()),
    )
    .unwrap();
    let other = f.ws.join("other");
    git(&other, &["remote", "set-url", "origin", &format!("gitsrv:{}", f.bare.display())]);
    let c = ctx(&f, &f.server.addr.to_string(), None);
    let r = call(&c, "git_pull", json!({"path": "other"})).await.unwrap();
    assert_eq!(r["status"], "up-to-date", "{r}");

    // A host routed through ProxyCommand (or ProxyJump) is refused: the program is not run and
    // no direct connection is made to the address the config names.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let marker = f.t.path().join("proxy-ran");
    for route in [format!("ProxyCommand touch {}", marker.display()), "ProxyJump gitsrv".to_owned()] {
        std::fs::write(
            f.home.join(".ssh/conf.d/05-hidden.conf"),
            format!("Host hidden\n  HostName 127.0.0.1\n  Port {port}\n  {route}\n"),
        )
        .unwrap();
        git(&other, &["remote", "set-url", "origin", "hidden:/srv/repo.git"]);
        let c = ctx(&f, &format!("127.0.0.1:{port}"), None);
        let (code, msg) = call(&c, "git_pull", json!({"path": "other"})).await.unwrap_err();
        assert_eq!(code, "NETWORK", "{msg}");
        assert!(msg.contains(&route), "{msg}");
        assert!(!marker.exists(), "the ProxyCommand ran");
        assert!(listener.accept().is_err(), "a direct connection was made");
    }
    // `ProxyCommand none` (the first value wins) switches the route off for that host.
    std::fs::write(
        f.home.join(".ssh/conf.d/05-hidden.conf"),
        format!(
            "Host hidden\n  HostName 127.0.0.1\n  Port {}\n  ProxyCommand none\nHost *\n  ProxyCommand touch {}\n",
            f.server.addr.port(),
            marker.display()
        ),
    )
    .unwrap();
    git(&other, &["remote", "set-url", "origin", &format!("hidden:{}", f.bare.display())]);
    let c = ctx(&f, &f.server.addr.to_string(), None);
    let r = call(&c, "git_pull", json!({"path": "other"})).await.unwrap();
    assert_eq!(r["status"], "up-to-date", "{r}");
    assert!(!marker.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_or_changed_host_key_is_refused_with_its_fingerprint() {
    let f = fixture();
    f.authorize(&f.home.join(".ssh/id_ed25519"));
    let c = ctx(&f, &f.server.addr.to_string(), None);
    let before = git(&f.bare, &["rev-parse", "main"]);
    let expected = fingerprint(&f.server.host_pub);
    // No known_hosts at all.
    let (code, msg) = call(&c, "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains("unknown host key") && msg.contains(&expected), "{msg}");
    // A known_hosts naming another key for this host: a changed key.
    let other = f.t.path().join("impostor");
    let impostor = keygen(&other);
    let impostor: Vec<&str> = impostor.split_whitespace().take(2).collect();
    std::fs::write(
        f.home.join(".ssh/known_hosts"),
        format!("[127.0.0.1]:{} {}\n", f.server.addr.port(), impostor.join(" ")),
    )
    .unwrap();
    let work = f.ws.join("work");
    std::fs::write(work.join("a.txt"), "changed\n").unwrap();
    git(&work, &["commit", "-q", "-am", "x"]);
    let (code, msg) = call(&c, "git_push", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains("has changed") && msg.contains("line 1") && msg.contains(&expected), "{msg}");
    assert_eq!(git(&f.bare, &["rev-parse", "main"]), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_the_server_refuses_is_auth_failed_naming_the_key_never_its_secret() {
    let f = fixture();
    f.trust_host();
    // A key in ~/.ssh that is not in authorized_keys.
    let key = f.home.join(".ssh/id_ed25519");
    keygen(&key);
    let c = ctx(&f, &f.server.addr.to_string(), None);
    let (code, msg) = call(&c, "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "AUTH_FAILED", "{msg}");
    assert!(msg.contains(key.to_str().unwrap()), "{msg}");
    assert!(msg.contains(&fingerprint(&key.with_extension("pub"))), "{msg}");
    assert!(msg.contains(&format!("as {}", f.user)), "{msg}");
    let secret = std::fs::read_to_string(&key).unwrap();
    let body: Vec<&str> = secret.lines().filter(|l| !l.starts_with("-----")).collect();
    for line in body {
        assert!(!msg.contains(line), "the message carries the private key: {msg}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_is_refused_without_allow_hosts_and_no_connection_is_made() {
    let f = fixture();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let other = f.ws.join("other");
    git(&other, &["remote", "set-url", "origin", &format!("ssh://git@{addr}/repo.git")]);
    // Allowed: another port only.
    let c = ctx(&f, &f.server.addr.to_string(), None);
    let (code, msg) = call(&c, "git_pull", json!({"path": "other"})).await.unwrap_err();
    assert_eq!(code, "BLOCKED_ADDRESS", "{msg}");
    assert!(listener.accept().is_err(), "a connection reached the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_cancels_a_stalled_ssh_connection() {
    let f = fixture();
    // A server that accepts and never speaks.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    let other = f.ws.join("other");
    git(&other, &["remote", "set-url", "origin", &format!("ssh://git@{addr}/repo.git")]);
    let before = git(&other, &["rev-parse", "HEAD"]);
    let c = ctx(&f, &addr.to_string(), None);
    let c2 = c.clone();
    let task = tokio::spawn(async move { call(&c2, "git_pull", json!({"path": "other"})).await });
    let conn = tokio::task::spawn_blocking(move || held.join().unwrap()).await.unwrap().expect("connected");
    let t0 = Instant::now();
    c.cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(10), task).await.expect("the pull ended").unwrap();
    let (code, msg) = r.unwrap_err();
    assert_eq!(code, "CANCELLED", "{msg}");
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(git(&other, &["rev-parse", "HEAD"]), before);
    drop(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_ssh_remote_urls_give_a_code_never_internal_and_start_nothing() {
    let f = fixture();
    // Trusted and logged in, so that a quoted path reaches the server's shell.
    f.trust_host();
    f.authorize(&f.home.join(".ssh/id_ed25519"));
    let work = f.ws.join("work");
    let marker = f.t.path().join("ran");
    let urls = [
        "ssh://".to_owned(),
        "ssh:///".to_owned(),
        "git@:repo.git".to_owned(),
        "host:".to_owned(),
        "ssh://[::1".to_owned(),
        format!("ssh://-oProxyCommand=touch {}/x", marker.display()),
        format!("-oProxyCommand=touch {}:x", marker.display()),
        "ssh://git@127.0.0.1:99999/x".to_owned(),
        "ssh://git@127.0.0.1:0/x".to_owned(),
        "ssh://a\u{1}b@127.0.0.1/x".to_owned(),
        "ssh://git@127.0.0.1/".to_owned(),
        format!("ssh://git@127.0.0.1/{}", "x".repeat(70_000)),
        "ssh://%00@127.0.0.1/x".to_owned(),
        format!("ssh://git@{}/x';touch {}'", f.server.addr, marker.display()),
    ];
    let c = ctx(&f, &f.server.addr.to_string(), None);
    for (i, url) in urls.iter().enumerate() {
        let name = format!("evil{i}");
        git(&work, &["config", &format!("remote.{name}.url"), url]);
        for tool in ["git_push", "git_pull"] {
            if let Err((code, msg)) = call(&c, tool, json!({"path": "work", "remote": name})).await {
                assert_ne!(code, "INTERNAL", "{tool} {url:.80}: {msg}");
            }
        }
    }
    assert!(!marker.exists(), "a hostile URL ran a command");
}
