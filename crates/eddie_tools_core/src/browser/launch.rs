//! Finding and starting Chromium: `CHROME_PATH`, else `chromium`, `chromium-browser`,
//! `google-chrome`, `google-chrome-stable` on `PATH`, else the usual install locations. The
//! browser is started headless under the process supervisor (so it cannot outlive this
//! process, even when Node is killed), with a private temporary profile, and its DevTools
//! websocket address is read from its stderr.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::context::Ctx;
use crate::engine::process::supervisor::{Spec, Tree};
use crate::error::{ErrorCode, Result, ToolError};

/// Names looked up on `PATH`, in order.
pub const PATH_NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

/// Install locations tried after `PATH`.
pub const LOCATIONS: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/opt/google/chrome/chrome",
    "/opt/google/chrome/google-chrome",
];

/// How long Chromium may take to open its DevTools port.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

fn executable(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && crate::engine::platform::is_executable(p, &m))
}

/// The browser binary for `ctx`, or `BROWSER_NOT_FOUND` naming what was searched.
pub fn find(ctx: &Ctx) -> Result<PathBuf> {
    if let Some(p) = ctx.env_set("CHROME_PATH") {
        let path = PathBuf::from(&p);
        if executable(&path) {
            return Ok(path);
        }
        return Err(ToolError::new(
            ErrorCode::BrowserNotFound,
            format!(
                "CHROME_PATH is {p}, which is not an executable file; point it at a Chrome or Chromium binary"
            ),
        )
        .with_prop("searched", serde_json::json!([p])));
    }
    let path_var = ctx.env_set("PATH").unwrap_or_default();
    let mut searched = Vec::new();
    for name in PATH_NAMES {
        for dir in path_var.split(':').filter(|d| !d.is_empty()) {
            let cand = Path::new(dir).join(name);
            if executable(&cand) {
                return Ok(cand);
            }
        }
        searched.push(format!("{name} on PATH"));
    }
    for loc in LOCATIONS {
        if executable(Path::new(loc)) {
            return Ok(PathBuf::from(loc));
        }
        searched.push((*loc).to_owned());
    }
    Err(ToolError::new(
        ErrorCode::BrowserNotFound,
        format!(
            "no Chrome or Chromium found (searched: {}); install one (Debian: apt-get install chromium) or set CHROME_PATH to its binary, or give ctx.browser.endpoint / EDDIE_BROWSER_WS to attach to a running browser",
            searched.join(", ")
        ),
    )
    .with_prop("searched", serde_json::json!(searched)))
}

/// A started browser: its process tree, its profile, its DevTools address.
#[derive(Debug)]
pub struct Launched {
    /// The supervised process tree.
    pub tree: Tree,
    /// The private profile directory (removed when the browser is closed).
    pub profile: PathBuf,
    /// `ws://127.0.0.1:<port>/devtools/browser/<id>`.
    pub ws_url: String,
}

/// Profile directories of browsers whose owner process is gone (a killed Node cannot remove
/// its own): removed before a new one is made.
fn sweep_stale_profiles(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("eddie-browser-") else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        // SAFETY: kill(2) with signal 0 sends nothing and takes no pointers; it only asks
        // whether `pid` exists.
        #[cfg(unix)]
        let alive = unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        // Windows: a profile of a live browser is locked; removing it fails and it stays.
        #[cfg(windows)]
        let alive = pid == std::process::id() as i32;
        if !alive {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The flags that leave Chromium no way to the network but `proxy` (the README says why each
/// is there; `__test__/browser-escapes.test.mjs` attacks each way around them).
pub fn network_flags(proxy: std::net::SocketAddr) -> Vec<String> {
    vec![
        // Every connection, of every frame, worker and popup, through the proxy...
        format!("--proxy-server=http://{proxy}"),
        // ...even to loopback, which Chromium otherwise connects to directly.
        "--proxy-bypass-list=<-loopback>".to_owned(),
        // Its own resolver answers nothing, except the proxy's address: DNS prefetch and
        // anything that would connect without the proxy finds no address.
        format!("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE {}", proxy.ip()),
        // WebRTC only over the proxy (no UDP: STUN/TURN would go straight to the network);
        // the profile's preferences say the same (PREFERENCES), which is what Chromium reads.
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".to_owned(),
        // QUIC (HTTP/3) is UDP, which an HTTP proxy does not carry.
        "--disable-quic".to_owned(),
        "--dns-prefetch-disable".to_owned(),
    ]
}

/// The new profile's preferences: WebRTC may not send UDP that does not go through a proxy
/// (an HTTP proxy carries none, so it falls back to TCP through the proxy), and no network
/// prediction (preconnects and DNS prefetches Chromium makes on its own).
pub const PREFERENCES: &str = r#"{"webrtc":{"ip_handling_policy":"disable_non_proxied_udp","multiple_routes_enabled":false,"nonproxied_udp_enabled":false},"net":{"network_prediction_options":2}}"#;

/// The browser's environment: this process's, with its temporary folder inside the profile.
/// Chromium makes its singleton folder (`org.chromium.Chromium.*`, a socket and a cookie) in the
/// temporary folder and leaves it behind when it is stopped; inside the profile it goes when the
/// profile does. `None` (inherit everything) where there is no such folder (Windows) or it
/// cannot be made.
fn private_temp(profile: &Path) -> Option<std::collections::HashMap<String, String>> {
    if cfg!(windows) {
        return None;
    }
    let tmp = profile.join("tmp");
    std::fs::create_dir(&tmp).ok()?;
    let tmp = tmp.to_str()?.to_owned();
    // Variables whose name or value is not UTF-8 are not passed on (Chromium reads none).
    let mut env: std::collections::HashMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    env.insert("TMPDIR".into(), tmp);
    Some(env)
}

/// Start `binary` headless with a new private profile, every connection through `proxy`;
/// wait for its DevTools address.
pub async fn start(binary: &Path, window: (u32, u32), proxy: std::net::SocketAddr) -> Result<Launched> {
    let base = std::env::temp_dir();
    sweep_stale_profiles(&base);
    let pid = std::process::id();
    let profile = tempfile::Builder::new()
        .prefix(&format!("eddie-browser-{pid}-"))
        .tempdir_in(&base)
        .map_err(|e| ToolError::fs(&e, "mkdtemp", Some(&base)))?
        .keep();
    let default = profile.join("Default");
    let prefs = std::fs::create_dir_all(&default)
        .map_err(|e| ToolError::fs(&e, "mkdir", Some(&default)))
        .and_then(|()| {
            let file = default.join("Preferences");
            crate::engine::store::atomic::write_atomic(&file, PREFERENCES.as_bytes(), &file)
        });
    if let Err(e) = prefs {
        let _ = std::fs::remove_dir_all(&profile);
        return Err(e);
    }
    let mut args: Vec<OsString> = [
        "--headless",
        "--remote-debugging-port=0",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-sync",
        "--disable-breakpad",
        "--disable-crash-reporter",
        "--disable-dev-shm-usage",
        // Tabs in the background keep rendering and answering input (as puppeteer's defaults).
        "--disable-renderer-backgrounding",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
        "--disable-client-side-phishing-detection",
        "--disable-domain-reliability",
        "--disable-field-trial-config",
        "--disable-hang-monitor",
        "--disable-search-engine-choice-screen",
        "--no-service-autorun",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--hide-scrollbars",
        "--mute-audio",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    args.push(format!("--window-size={},{}", window.0, window.1).into());
    args.extend(network_flags(proxy).into_iter().map(OsString::from));
    let mut dir_arg = OsString::from("--user-data-dir=");
    dir_arg.push(&profile);
    args.push(dir_arg);
    // SAFETY: geteuid(2) takes no arguments and always succeeds.
    #[cfg(unix)]
    if unsafe { libc::geteuid() } == 0 {
        // Chromium refuses to run as root with its sandbox.
        args.push("--no-sandbox".into());
    }
    args.push("about:blank".into());
    let env = private_temp(&profile);
    let spec = Spec {
        program: binary.as_os_str(),
        args: &args,
        cwd: &profile,
        env: env.as_ref(),
        stdin: false,
        grace: Duration::from_millis(1500),
        // Chromium, started by the tools with fixed arguments (not a command a caller names),
        // has its own sandbox; it needs to write its profile and reach the network.
        sandbox: None,
    };
    let mut tree = Tree::spawn(&spec).map_err(|e| {
        let _ = std::fs::remove_dir_all(&profile);
        ToolError::new(ErrorCode::BrowserNotFound, format!("cannot start {}: {e}", binary.display()))
    })?;
    let stderr = tree.take_stderr();
    let stdout = tree.take_stdout();
    if let Some(mut out) = stdout {
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            while matches!(out.read(&mut buf).await, Ok(n) if n > 0) {}
        });
    }
    let Some(stderr) = stderr else {
        return Err(ToolError::internal("the browser has no stderr pipe"));
    };
    let mut lines = BufReader::new(stderr);
    let mut seen: Vec<String> = Vec::new();
    let found = tokio::time::timeout(START_TIMEOUT, async {
        let mut line = String::new();
        loop {
            line.clear();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            if let Some(at) = line.find("ws://") {
                return Some(line[at..].trim().to_owned());
            }
            if seen.len() >= 20 {
                seen.remove(0);
            }
            seen.push(line.trim_end().to_owned());
        }
    })
    .await;
    match found {
        Ok(Some(ws_url)) => {
            // Keep draining stderr, or a chatty browser blocks on a full pipe.
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut r = lines.into_inner();
                while matches!(r.read(&mut buf).await, Ok(n) if n > 0) {}
            });
            Ok(Launched { tree, profile, ws_url })
        }
        other => {
            let _ = tree.shutdown(Duration::from_millis(500)).await;
            let _ = std::fs::remove_dir_all(&profile);
            let why = if other.is_err() { "did not open its DevTools port in time" } else { "exited" };
            let tail: Vec<&String> =
                seen.iter().filter(|l| !l.contains("dbus") && !l.trim().is_empty()).rev().take(5).collect();
            Err(ToolError::new(
                ErrorCode::BrowserNotFound,
                format!(
                    "{} {why}; its last messages: {}",
                    binary.display(),
                    tail.into_iter().rev().cloned().collect::<Vec<_>>().join(" | ")
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each network flag checked on the installed Chromium rather than trusted: a headless
    //! `--dump-dom` of a page on 127.0.0.2 with and without the flag, the target counting the
    //! sockets it accepts. (`__test__/browser-escapes.test.mjs` attacks the whole set.)

    use std::net::SocketAddr;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A listener on `ip` counting accepted sockets; it answers `answer` and closes (bounded:
    /// 20 connections).
    async fn counting(ip: &str, answer: &'static str) -> (SocketAddr, Arc<AtomicUsize>) {
        let l = TcpListener::bind((ip, 0)).await.unwrap();
        let addr = l.local_addr().unwrap();
        let n = Arc::new(AtomicUsize::new(0));
        let c = Arc::clone(&n);
        tokio::spawn(async move {
            for _ in 0..20 {
                let Ok((mut s, _)) = l.accept().await else { return };
                c.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 2048];
                    let _ = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
                    let _ = s.write_all(answer.as_bytes()).await;
                });
            }
        });
        (addr, n)
    }

    /// Chromium's stderr after `--dump-dom url` with `flags` (and a fresh profile).
    async fn dump(flags: &[String], url: &str) -> String {
        let binary = find(&Ctx::new(".").unwrap()).expect("Chromium is installed (CI installs it)");
        let profile = tempfile::tempdir().unwrap();
        let mut args: Vec<OsString> =
            ["--headless", "--disable-background-networking", "--disable-component-update"]
                .iter()
                .map(OsString::from)
                .collect();
        // SAFETY: geteuid(2) takes no arguments and always succeeds.
        if unsafe { libc::geteuid() } == 0 {
            args.push("--no-sandbox".into());
        }
        args.push(format!("--user-data-dir={}", profile.path().display()).into());
        args.extend(flags.iter().map(OsString::from));
        args.extend(["--dump-dom".into(), url.into()]);
        let spec = Spec {
            program: binary.as_os_str(),
            args: &args,
            cwd: profile.path(),
            env: None,
            stdin: false,
            grace: Duration::from_millis(500),
            // Chromium has its own sandbox (as in the launch itself).
            sandbox: None,
        };
        let mut tree = Tree::spawn(&spec).unwrap();
        let mut err = tree.take_stderr().unwrap();
        let mut out = tree.take_stdout().unwrap();
        let mut text = String::new();
        let read = async {
            let mut sink = Vec::new();
            let _ = tokio::join!(err.read_to_string(&mut text), out.read_to_end(&mut sink));
        };
        let _ = tokio::time::timeout(Duration::from_secs(30), read).await;
        let _ = tree.shutdown(Duration::from_millis(500)).await;
        text
    }

    /// Whether Chromium is here. Without it the test is skipped and says so on stderr (written
    /// past libtest's capture, which holds `print!`/`eprint!` output only); with CI=true, as
    /// .ci/run sets it, a missing Chromium fails the test.
    fn chromium_here(test: &str) -> bool {
        let Err(e) = find(&Ctx::new(".").unwrap()) else { return true };
        let ci = std::env::var("CI")
            .is_ok_and(|v| !v.is_empty() && !matches!(v.to_ascii_lowercase().as_str(), "false" | "0"));
        assert!(!ci, "Chromium is required with CI=true: {e}");
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "{test}: skipped: Chromium is not installed; install it (Debian/Ubuntu: apt-get install chromium) or set CHROME_PATH to run it (with CI=true a missing Chromium fails)"
        );
        false
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_browser_keeps_its_temporary_files_inside_its_profile() {
        if !chromium_here("the_browser_keeps_its_temporary_files_inside_its_profile") {
            return;
        }
        let binary = find(&Ctx::new(".").unwrap()).unwrap();
        let (proxy, _) = counting("127.0.0.1", "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n").await;
        let mut launched = start(&binary, (800, 600), proxy).await.unwrap();
        let profile = launched.profile.clone();
        // Chromium links its singleton socket from the profile to the folder it made for it.
        let link = std::fs::read_link(profile.join("SingletonSocket"));
        let _ = launched.tree.shutdown(Duration::from_millis(500)).await;
        let _ = std::fs::remove_dir_all(&profile);
        let link = link.expect("Chromium made its singleton socket");
        assert!(link.starts_with(profile.join("tmp")), "{} is outside {}", link.display(), profile.display());
        assert!(!profile.exists());
    }

    #[tokio::test]
    async fn the_proxy_flags_hold_on_the_installed_chromium() {
        if !chromium_here("the_proxy_flags_hold_on_the_installed_chromium") {
            return;
        }
        let (target, hits) = counting("127.0.0.2", "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi").await;
        // A stand-in proxy that refuses everything (the real one is tested in engine/net/proxy).
        let (proxy, proxied) =
            counting("127.0.0.1", "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        let url = format!("http://{target}/");
        let flags = network_flags(proxy);
        let without =
            |prefix: &str| flags.iter().filter(|f| !f.starts_with(prefix)).cloned().collect::<Vec<_>>();

        // Control: with only --proxy-server, Chromium goes to loopback directly.
        let only_proxy: Vec<String> =
            flags.iter().filter(|f| f.starts_with("--proxy-server")).cloned().collect();
        dump(&only_proxy, &url).await;
        assert!(hits.load(Ordering::SeqCst) > 0, "without the bypass list, loopback is reached directly");

        // --proxy-bypass-list=<-loopback>: loopback goes to the proxy too.
        hits.store(0, Ordering::SeqCst);
        proxied.store(0, Ordering::SeqCst);
        dump(&without("--host-resolver-rules"), &url).await;
        assert_eq!(hits.load(Ordering::SeqCst), 0, "<-loopback> sends loopback through the proxy");
        assert!(proxied.load(Ordering::SeqCst) > 0, "the proxy got it");

        // --host-resolver-rules: with no proxy at all, Chromium itself resolves nothing, not even
        // an address literal (but the proxy's own address).
        let rules: Vec<String> =
            flags.iter().filter(|f| f.starts_with("--host-resolver-rules")).cloned().collect();
        let err = dump(&rules, &url).await;
        assert_eq!(hits.load(Ordering::SeqCst), 0, "the rules leave no address to connect to");
        assert!(err.contains("ERR_NAME_NOT_RESOLVED"), "{err}");
        proxied.store(0, Ordering::SeqCst);
        dump(&rules, &format!("http://{proxy}/")).await;
        assert!(proxied.load(Ordering::SeqCst) > 0, "the proxy's address stays reachable");

        // All of them: only the proxy is reached.
        proxied.store(0, Ordering::SeqCst);
        dump(&flags, &url).await;
        assert_eq!(hits.load(Ordering::SeqCst), 0);
        assert!(proxied.load(Ordering::SeqCst) > 0);
    }
}
