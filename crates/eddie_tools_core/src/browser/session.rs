//! The one browser of this process: launched on first use (or attached to), its tabs tracked by
//! small numeric ids, closed after an idle timeout. Its connection and event handling run on
//! a runtime of their own ([`rt`]), whose worker thread lives as long as the process: the
//! launched browser's supervisor shim is a child of that thread, so it is never torn down
//! with a short-lived thread of a caller's runtime.
//!
//! Every connection a launched browser makes goes through its in-process proxy
//! ([`crate::engine::net::proxy`]), which vets it with the guard of the latest call and connects
//! to the vetted address; on top of that every tab's requests are intercepted (`Fetch`) and
//! vetted by the guard of the latest call that acted on the tab, which names the refusals.
//! Popups (`window.open`, `target=_blank`) become tabs. Downloads are denied.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::cdp::{Conn, Event};
use super::launch;
use crate::context::Ctx;
use crate::engine::net::Guard;
use crate::engine::net::proxy::{Limits, Proxy};
use crate::engine::process::supervisor::Tree;
use crate::error::{ErrorCode, Result, ToolError};

/// Default idle time before a launched browser is closed.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(300);
/// The window (and so the viewport) of a launched browser.
pub const WINDOW: (u32, u32) = (1280, 800);
/// Console messages and requests kept per tab.
const LOG_CAP: usize = 2000;

/// The runtime the browser lives on.
pub fn rt() -> Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("eddie-browser")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| ToolError::internal(format!("cannot start the browser runtime: {e}")))
}

/// Run `fut` on the browser runtime and wait for it from any runtime.
pub async fn on_rt<T: Send + 'static>(fut: impl Future<Output = Result<T>> + Send + 'static) -> Result<T> {
    rt()?.spawn(fut).await.map_err(|e| ToolError::internal(format!("browser task failed: {e}")))?
}

/// What a call's guard is: the network policy and the workspace (for `file://`).
#[derive(Clone)]
pub struct Policy {
    /// The network guard of the call.
    pub guard: Guard,
    /// The workspace root (real path).
    pub root: PathBuf,
}

impl Policy {
    /// The policy of `ctx`.
    pub fn of(ctx: &Ctx) -> Self {
        let root = crate::workspace::realpath(ctx.workspace.root())
            .unwrap_or_else(|_| ctx.workspace.root().to_path_buf());
        Self { guard: Guard::for_ctx(ctx), root }
    }
}

/// One console message or uncaught error.
#[derive(Debug, Clone)]
pub struct ConsoleMsg {
    /// Its cursor position (1, 2, ...).
    pub seq: u64,
    /// `log`, `info`, `warning`, `error`, `debug`, ... (`error` for uncaught exceptions).
    pub level: String,
    /// `console`, `exception`, `log` (browser messages such as failed loads), `dialog`.
    pub source: String,
    /// The text.
    pub text: String,
    /// Where, when known.
    pub url: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u64>,
}

/// One request.
#[derive(Debug, Clone, Default)]
pub struct NetEntry {
    /// Its cursor position.
    pub seq: u64,
    /// CDP request id.
    pub id: String,
    /// The URL.
    pub url: String,
    /// `GET`, ...
    pub method: String,
    /// `Document`, `Script`, `Image`, ...
    pub kind: String,
    /// The HTTP status, when a response came.
    pub status: Option<u64>,
    /// The failure (`net::ERR_...`), when it failed.
    pub error: Option<String>,
    /// Why the guard refused it.
    pub blocked: Option<String>,
    /// Finished (loaded or failed).
    pub done: bool,
}

/// Load progress of a tab's main frame, for waits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Signals {
    /// `Page.frameStartedLoading` of the main frame.
    pub started: u64,
    /// `Page.frameStoppedLoading` of the main frame.
    pub stopped: u64,
    /// `Page.domContentEventFired`.
    pub dcl: u64,
    /// `Page.loadEventFired`.
    pub loads: u64,
    /// Committed main-frame navigations.
    pub navs: u64,
    /// Requests in flight.
    pub inflight: i64,
    /// Network events seen (any change).
    pub net_events: u64,
    /// Main-frame lifecycle events seen (`TabState::lifecycle` holds them).
    pub lifecycle: u64,
}

/// The mutable state of a tab.
#[derive(Default)]
pub struct TabState {
    /// The last committed URL.
    pub url: String,
    /// Console messages, oldest first.
    pub console: VecDeque<ConsoleMsg>,
    /// The last console cursor handed out.
    pub console_seq: u64,
    /// Requests, oldest first.
    pub net: VecDeque<NetEntry>,
    /// The last request cursor handed out.
    pub net_seq: u64,
    /// Refs: backend DOM node id → ref number.
    pub refs: HashMap<i64, u32>,
    /// Refs: ref number → backend DOM node id.
    pub ref_nodes: HashMap<u32, i64>,
    /// The next ref number.
    pub next_ref: u32,
    /// The guard of the latest call that acted on the tab.
    pub policy: Option<Policy>,
    /// The guard's refusals: URL → the error.
    pub blocked: HashMap<String, ToolError>,
    /// The main frame's recent lifecycle events: (loader id, name: `DOMContentLoaded`, `load`, `networkIdle`, ...).
    pub lifecycle: VecDeque<(String, String)>,
    /// The loader of the main frame's last committed document.
    pub loader: String,
}

impl TabState {
    /// The ref of a backend node id (assigned on first sight, stable afterwards).
    pub fn ref_of(&mut self, backend: i64) -> String {
        if let Some(r) = self.refs.get(&backend) {
            return format!("e{r}");
        }
        self.next_ref += 1;
        let r = self.next_ref;
        self.refs.insert(backend, r);
        self.ref_nodes.insert(r, backend);
        format!("e{r}")
    }

    fn push_console(&mut self, mut m: ConsoleMsg) {
        self.console_seq += 1;
        m.seq = self.console_seq;
        if self.console.len() >= LOG_CAP {
            self.console.pop_front();
        }
        self.console.push_back(m);
    }

    fn request(&mut self, id: &str) -> Option<&mut NetEntry> {
        self.net.iter_mut().rev().find(|e| e.id == id)
    }
}

/// One tab.
pub struct Tab {
    /// Our id (1, 2, ...).
    pub id: u32,
    /// The CDP target id (also its main frame id).
    pub target: String,
    /// The flattened session.
    pub session: String,
    /// Its state.
    pub state: Mutex<TabState>,
    /// Load progress.
    pub signals: watch::Sender<Signals>,
}

impl Tab {
    /// Run `f` on the state.
    pub fn with<T>(&self, f: impl FnOnce(&mut TabState) -> T) -> Result<T> {
        let mut g = self.state.lock().map_err(|_| ToolError::internal("tab state poisoned"))?;
        Ok(f(&mut g))
    }
}

/// How the browser came to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Launched here, from this binary.
    Launched(PathBuf),
    /// Attached to this DevTools endpoint.
    Attached(String),
}

/// The browser.
pub struct Browser {
    /// The connection.
    pub conn: Arc<Conn>,
    /// Launched or attached.
    pub mode: Mode,
    /// `Browser.getVersion`'s product (`Chrome/156.0...`).
    pub version: OnceLock<String>,
    /// The browser process (launched only).
    pub pid: Option<i32>,
    tree: tokio::sync::Mutex<Option<Tree>>,
    profile: Option<PathBuf>,
    tabs: Mutex<BTreeMap<u32, Arc<Tab>>>,
    current: Mutex<Option<u32>>,
    fronted: Mutex<Option<u32>>,
    /// Tabs opened in a window of their own (never in the background: no bringToFront).
    own_window: Mutex<std::collections::HashSet<u32>>,
    next_tab: AtomicU32,
    last_used: Mutex<Instant>,
    idle: Duration,
    /// The proxy every connection of a launched browser goes through.
    proxy: Option<Proxy>,
    /// Adoptions of targets as tabs, one at a time (a popup and `new_tab` can race for one).
    adopting: tokio::sync::Mutex<()>,
    /// The policy of the latest call (for popups whose opener is unknown).
    last_policy: Mutex<Option<Policy>>,
}

fn slot() -> &'static tokio::sync::Mutex<Option<Arc<Browser>>> {
    static SLOT: OnceLock<tokio::sync::Mutex<Option<Arc<Browser>>>> = OnceLock::new();
    SLOT.get_or_init(|| tokio::sync::Mutex::new(None))
}

/// The endpoint to attach to, if the caller gave one (`ctx.browser.endpoint`, else `EDDIE_BROWSER_WS`).
pub fn endpoint_of(ctx: &Ctx) -> Option<String> {
    ctx.browser_endpoint.clone().filter(|s| !s.trim().is_empty()).or_else(|| ctx.env_set("EDDIE_BROWSER_WS"))
}

/// The idle timeout (`EDDIE_BROWSER_IDLE_MS`).
fn idle_of(ctx: &Ctx) -> Duration {
    ctx.env_set("EDDIE_BROWSER_IDLE_MS")
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map_or(DEFAULT_IDLE, Duration::from_millis)
}

/// The running browser, if any (nothing is started).
pub async fn current() -> Option<Arc<Browser>> {
    let g = slot().lock().await;
    g.as_ref().filter(|b| !b.conn.is_closed()).cloned()
}

/// The browser for `ctx`: the running one, else a new one (launched, or attached to the
/// endpoint the ctx names).
pub async fn get(ctx: &Ctx) -> Result<Arc<Browser>> {
    let want = match endpoint_of(ctx) {
        Some(ep) => Mode::Attached(ep),
        None => Mode::Launched(PathBuf::new()),
    };
    let mut g = slot().lock().await;
    if let Some(b) = g.as_ref() {
        let same = match (&b.mode, &want) {
            (Mode::Attached(a), Mode::Attached(w)) => a == w,
            (Mode::Launched(_), Mode::Launched(_)) => true,
            _ => false,
        };
        if same && !b.conn.is_closed() {
            b.touch();
            return Ok(Arc::clone(b));
        }
        if let Some(old) = g.take() {
            let _ = on_rt(async move {
                old.close().await;
                Ok(())
            })
            .await;
        }
    }
    let idle = idle_of(ctx);
    let b = match want {
        Mode::Attached(ep) => on_rt(attach(ep, idle)).await?,
        Mode::Launched(_) => {
            let binary = launch::find(ctx)?;
            on_rt(start(binary, idle)).await?
        }
    };
    b.touch();
    *g = Some(Arc::clone(&b));
    Ok(b)
}

/// Close the running browser now (idle close, tests).
pub async fn close_current() -> bool {
    let old = slot().lock().await.take();
    match old {
        Some(b) => {
            let _ = on_rt(async move {
                b.close().await;
                Ok(())
            })
            .await;
            true
        }
        None => false,
    }
}

async fn start(binary: PathBuf, idle: Duration) -> Result<Arc<Browser>> {
    let proxy = Proxy::start(Limits::default()).await?;
    let l = launch::start(&binary, WINDOW, proxy.addr()).await?;
    // Pages never reach the DevTools port, whatever the policy.
    if let Some(devtools) = url::Url::parse(&l.ws_url).ok().and_then(|u| u.socket_addrs(|| None).ok()) {
        for a in devtools {
            proxy.never(a);
        }
    }
    let pid = l.tree.pid();
    let (conn, events) = match Conn::connect(&l.ws_url).await {
        Ok(c) => c,
        Err(e) => {
            let mut tree = l.tree;
            let _ = tree.shutdown(Duration::from_millis(500)).await;
            let _ = std::fs::remove_dir_all(&l.profile);
            return Err(e);
        }
    };
    let b = Arc::new(Browser {
        conn,
        mode: Mode::Launched(binary),
        version: OnceLock::new(),
        pid: Some(pid),
        tree: tokio::sync::Mutex::new(Some(l.tree)),
        profile: Some(l.profile),
        tabs: Mutex::new(BTreeMap::new()),
        current: Mutex::new(None),
        fronted: Mutex::new(None),
        own_window: Mutex::new(std::collections::HashSet::new()),
        next_tab: AtomicU32::new(1),
        last_used: Mutex::new(Instant::now()),
        idle,
        proxy: Some(proxy),
        adopting: tokio::sync::Mutex::new(()),
        last_policy: Mutex::new(None),
    });
    finish(b, events).await
}

async fn attach(endpoint: String, idle: Duration) -> Result<Arc<Browser>> {
    if !endpoint.starts_with("ws://") && !endpoint.starts_with("wss://") {
        return Err(ToolError::invalid(format!(
            "the browser endpoint must be a DevTools websocket URL (ws://host:port/devtools/browser/<id>), not {endpoint}"
        )));
    }
    let (conn, events) = Conn::connect(&endpoint).await?;
    let b = Arc::new(Browser {
        conn,
        mode: Mode::Attached(endpoint),
        version: OnceLock::new(),
        pid: None,
        tree: tokio::sync::Mutex::new(None),
        profile: None,
        tabs: Mutex::new(BTreeMap::new()),
        current: Mutex::new(None),
        fronted: Mutex::new(None),
        own_window: Mutex::new(std::collections::HashSet::new()),
        next_tab: AtomicU32::new(1),
        last_used: Mutex::new(Instant::now()),
        idle,
        proxy: None,
        adopting: tokio::sync::Mutex::new(()),
        last_policy: Mutex::new(None),
    });
    finish(b, events).await
}

/// Version, downloads off, the existing pages adopted as tabs, the event loop and the idle timer.
async fn finish(b: Arc<Browser>, events: mpsc::UnboundedReceiver<Event>) -> Result<Arc<Browser>> {
    let setup = async {
        let v = b.conn.call(None, "Browser.getVersion", json!({})).await?;
        let version = v["product"].as_str().unwrap_or("").to_owned();
        let _ = b.conn.call(None, "Browser.setDownloadBehavior", json!({"behavior": "deny"})).await;
        // Targets that go away on their own (window.close()) are forgotten.
        let _ = b.conn.call(None, "Target.setDiscoverTargets", json!({"discover": true})).await;
        Ok::<String, ToolError>(version)
    };
    let version = match setup.await {
        Ok(v) => v,
        Err(e) => {
            b.close().await;
            return Err(e);
        }
    };
    let _ = b.version.set(version);
    tokio::spawn(pump(Arc::downgrade(&b), events));
    tokio::spawn(idle_timer(Arc::downgrade(&b)));
    let targets = b.conn.call(None, "Target.getTargets", json!({})).await?;
    let pages: Vec<String> = targets["targetInfos"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|t| t["type"] == "page")
                .filter_map(|t| t["targetId"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for t in pages {
        if let Err(e) = b.adopt(t).await
            && b.is_launched()
        {
            return Err(e);
        }
    }
    Ok(b)
}

/// Route events to their tabs.
async fn pump(b: std::sync::Weak<Browser>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(ev) = events.recv().await {
        let Some(b) = b.upgrade() else { return };
        let Some(session) = ev.session.as_deref() else {
            if ev.method == "Target.targetDestroyed"
                && let Some(t) = ev.params["targetId"].as_str()
            {
                b.forget_target(t);
            }
            if ev.method == "Target.targetCreated" && ev.params["targetInfo"]["type"] == "page" {
                let b = Arc::clone(&b);
                tokio::spawn(async move { b.adopt_popup(&ev.params["targetInfo"]).await });
            }
            continue;
        };
        let Some(tab) = b.tab_by_session(session) else { continue };
        on_event(&b, &tab, ev);
    }
}

/// A tab's CDP event, to the handler of its domain (a paused request is vetted on its own task).
fn on_event(b: &Arc<Browser>, tab: &Arc<Tab>, ev: Event) {
    let method = ev.method.as_str();
    if method == "Fetch.requestPaused" {
        let (b, tab, p) = (Arc::clone(b), Arc::clone(tab), ev.params);
        tokio::spawn(async move { vet_request(&b, &tab, &p).await });
    } else if method.starts_with("Page.") {
        on_page_event(b, tab, method, &ev.params);
    } else if method.starts_with("Runtime.") || method.starts_with("Log.") {
        on_console_event(tab, method, &ev.params);
    } else if method.starts_with("Network.") {
        on_network_event(b, tab, method, &ev.params);
    }
}

/// Loads, navigations, lifecycle events and dialogs (dismissed, and logged to the console).
fn on_page_event(b: &Browser, tab: &Tab, method: &str, p: &Value) {
    let main = |f: &Value| f.as_str() == Some(tab.target.as_str());
    let bump = |f: fn(&mut Signals)| tab.signals.send_modify(f);
    match method {
        "Page.frameStartedLoading" | "Page.frameRequestedNavigation" | "Page.frameStartedNavigating"
            if main(&p["frameId"]) =>
        {
            bump(|s| s.started += 1)
        }
        "Page.frameStoppedLoading" if main(&p["frameId"]) => bump(|s| s.stopped += 1),
        "Page.domContentEventFired" => bump(|s| s.dcl += 1),
        "Page.lifecycleEvent" if main(&p["frameId"]) => {
            let entry = (
                p["loaderId"].as_str().unwrap_or("").to_owned(),
                p["name"].as_str().unwrap_or("").to_owned(),
            );
            let _ = tab.with(|s| {
                if s.lifecycle.len() >= 64 {
                    s.lifecycle.pop_front();
                }
                s.lifecycle.push_back(entry);
            });
            bump(|s| s.lifecycle += 1);
        }
        "Page.loadEventFired" => bump(|s| s.loads += 1),
        "Page.frameNavigated" if p["frame"]["parentId"].is_null() => {
            let url = p["frame"]["url"].as_str().unwrap_or("").to_owned();
            let loader = p["frame"]["loaderId"].as_str().unwrap_or("").to_owned();
            let _ = tab.with(|s| {
                s.url = url;
                s.loader = loader;
            });
            bump(|s| s.navs += 1);
        }
        "Page.navigatedWithinDocument" if main(&p["frameId"]) => {
            let url = p["url"].as_str().unwrap_or("").to_owned();
            let _ = tab.with(|s| s.url = url);
        }
        "Page.javascriptDialogOpening" => {
            let text = format!(
                "{} dialog dismissed: {}",
                p["type"].as_str().unwrap_or("a"),
                p["message"].as_str().unwrap_or("")
            );
            let _ = tab.with(|s| {
                s.push_console(ConsoleMsg {
                    seq: 0,
                    level: "warning".into(),
                    source: "dialog".into(),
                    text,
                    url: p["url"].as_str().map(str::to_owned),
                    line: None,
                })
            });
            let accept = p["type"] == "beforeunload";
            b.conn.send(Some(&tab.session), "Page.handleJavaScriptDialog", json!({"accept": accept}));
        }
        _ => {}
    }
}

/// Console messages, uncaught exceptions and log entries, into the tab's console log.
fn on_console_event(tab: &Tab, method: &str, p: &Value) {
    match method {
        "Runtime.consoleAPICalled" => {
            let text = p["args"]
                .as_array()
                .map(|a| a.iter().map(remote_text).collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            let level = match p["type"].as_str().unwrap_or("log") {
                "warning" => "warning",
                "error" | "assert" => "error",
                "debug" => "debug",
                "info" => "info",
                _ => "log",
            };
            let frame = &p["stackTrace"]["callFrames"][0];
            let _ = tab.with(|s| {
                s.push_console(ConsoleMsg {
                    seq: 0,
                    level: level.into(),
                    source: "console".into(),
                    text,
                    url: frame["url"].as_str().filter(|u| !u.is_empty()).map(str::to_owned),
                    line: frame["lineNumber"].as_u64().map(|l| l + 1),
                })
            });
        }
        "Runtime.exceptionThrown" => {
            let d = &p["exceptionDetails"];
            let text = d["exception"]["description"]
                .as_str()
                .or_else(|| d["text"].as_str())
                .unwrap_or("uncaught exception")
                .to_owned();
            let _ = tab.with(|s| {
                s.push_console(ConsoleMsg {
                    seq: 0,
                    level: "error".into(),
                    source: "exception".into(),
                    text,
                    url: d["url"].as_str().filter(|u| !u.is_empty()).map(str::to_owned),
                    line: d["lineNumber"].as_u64().map(|l| l + 1),
                })
            });
        }
        "Log.entryAdded" => {
            let e = &p["entry"];
            let _ = tab.with(|s| {
                s.push_console(ConsoleMsg {
                    seq: 0,
                    level: e["level"].as_str().unwrap_or("info").to_owned(),
                    source: "log".into(),
                    text: e["text"].as_str().unwrap_or("").to_owned(),
                    url: e["url"].as_str().filter(|u| !u.is_empty()).map(str::to_owned),
                    line: e["lineNumber"].as_u64().map(|l| l + 1),
                })
            });
        }
        _ => {}
    }
}

/// Requests and their outcomes, into the tab's network log and its in-flight count.
fn on_network_event(b: &Browser, tab: &Tab, method: &str, p: &Value) {
    match method {
        "Network.requestWillBeSent" => {
            let id = p["requestId"].as_str().unwrap_or("").to_owned();
            let url = p["request"]["url"].as_str().unwrap_or("").to_owned();
            if url.starts_with("data:") {
                return;
            }
            let redirect = !p["redirectResponse"].is_null();
            let _ = tab.with(|s| {
                if redirect && let Some(prev) = s.request(&id) {
                    // The hop before the redirect: finished with its status.
                    prev.status = p["redirectResponse"]["status"].as_u64();
                    prev.done = true;
                    prev.id = format!("{id}:redirected");
                }
                s.net_seq += 1;
                let entry = NetEntry {
                    seq: s.net_seq,
                    id,
                    url,
                    method: p["request"]["method"].as_str().unwrap_or("GET").to_owned(),
                    kind: p["type"].as_str().unwrap_or("Other").to_owned(),
                    ..NetEntry::default()
                };
                if s.net.len() >= LOG_CAP {
                    s.net.pop_front();
                }
                s.net.push_back(entry);
            });
            tab.signals.send_modify(|s| {
                if !redirect {
                    s.inflight += 1;
                }
                s.net_events += 1;
            });
        }
        "Network.responseReceived" => {
            let id = p["requestId"].as_str().unwrap_or("");
            let _ = tab.with(|s| {
                if let Some(e) = s.request(id) {
                    e.status = p["response"]["status"].as_u64();
                }
            });
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            let id = p["requestId"].as_str().unwrap_or("");
            let failed = method == "Network.loadingFailed";
            let counted = tab
                .with(|s| {
                    let blocked_map = s.blocked.clone();
                    match s.request(id) {
                        Some(e) if !e.done => {
                            e.done = true;
                            if failed {
                                e.error = p["errorText"].as_str().map(str::to_owned);
                                if let Some(why) = blocked_map.get(&e.url) {
                                    e.blocked = Some(why.message().to_owned());
                                } else if let Some(why) = b.proxy_refusal(&e.url) {
                                    e.blocked = Some(why.message().to_owned());
                                }
                            }
                            true
                        }
                        _ => false,
                    }
                })
                .unwrap_or(false);
            tab.signals.send_modify(|s| {
                if counted {
                    s.inflight = (s.inflight - 1).max(0);
                }
                s.net_events += 1;
            });
        }
        _ => {}
    }
}

/// A console argument as text.
fn remote_text(v: &Value) -> String {
    if let Some(s) = v["value"].as_str() {
        return s.to_owned();
    }
    if let Some(u) = v["unserializableValue"].as_str() {
        return u.to_owned();
    }
    if !v["value"].is_null() {
        return v["value"].to_string();
    }
    if let Some(d) = v["description"].as_str() {
        return d.to_owned();
    }
    v["type"].as_str().unwrap_or("undefined").to_owned()
}

/// Whether `url` (a `file:` URL) names a file inside `root`.
pub fn file_inside(url: &url::Url, root: &std::path::Path) -> bool {
    let Ok(path) = url.to_file_path() else { return false };
    let real = crate::workspace::realpath(&path).unwrap_or(path);
    real.starts_with(root)
}

/// Check a request with the tab's guard; continue it or fail it (`BlockedByClient`).
async fn vet_request(b: &Arc<Browser>, tab: &Arc<Tab>, p: &Value) {
    let id = p["requestId"].as_str().unwrap_or("").to_owned();
    let raw = p["request"]["url"].as_str().unwrap_or("").to_owned();
    let policy = tab.with(|s| s.policy.clone()).ok().flatten();
    let verdict: std::result::Result<(), ToolError> = match url::Url::parse(&raw) {
        Err(e) => Err(ToolError::new(ErrorCode::InvalidUrl, format!("{raw}: {e}"))),
        Ok(u) => match u.scheme() {
            "data" | "blob" | "about" => Ok(()),
            "file" => match &policy {
                Some(p) if file_inside(&u, &p.root) => Ok(()),
                _ => Err(ToolError::new(
                    ErrorCode::OutsideWorkspace,
                    format!("{raw}: file URLs are opened only inside the workspace"),
                )),
            },
            "http" | "https" => match &policy {
                Some(p) => p.guard.vet(&u).await.map(|_| ()),
                None => Err(ToolError::new(
                    ErrorCode::BlockedAddress,
                    format!("{raw}: no call has opened this tab"),
                )),
            },
            other => Err(ToolError::new(
                ErrorCode::UnsupportedScheme,
                format!("{other}: URLs are not opened by the browser tools"),
            )),
        },
    };
    match verdict {
        Ok(()) => b.conn.send(Some(&tab.session), "Fetch.continueRequest", json!({"requestId": id})),
        Err(e) => {
            let _ = tab.with(|s| {
                if s.blocked.len() > 500 {
                    s.blocked.clear();
                }
                s.blocked.insert(raw, e);
            });
            b.conn.send(
                Some(&tab.session),
                "Fetch.failRequest",
                json!({"requestId": id, "errorReason": "BlockedByClient"}),
            );
        }
    }
}

/// Close the browser when it has been idle long enough.
async fn idle_timer(b: std::sync::Weak<Browser>) {
    loop {
        let wait = match b.upgrade() {
            Some(b) => {
                if b.conn.is_closed() {
                    return;
                }
                let since = b.last_used.lock().map(|t| t.elapsed()).unwrap_or_default();
                if since >= b.idle {
                    let mut g = slot().lock().await;
                    if g.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, &b)) {
                        *g = None;
                    }
                    drop(g);
                    b.close().await;
                    return;
                }
                b.idle - since
            }
            None => return,
        };
        tokio::time::sleep(wait.max(Duration::from_millis(50))).await;
    }
}

impl Browser {
    /// Note a use (the idle timer starts again).
    pub fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    /// Whether it was launched here.
    pub fn is_launched(&self) -> bool {
        matches!(self.mode, Mode::Launched(_))
    }

    /// The idle timeout.
    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// Close it: a launched browser is shut down (its whole process tree) and its profile
    /// removed; an attached one is only disconnected.
    pub async fn close(&self) {
        let tree = self.tree.lock().await.take();
        if let Some(mut tree) = tree {
            let _ = self.conn.call_within(None, "Browser.close", json!({}), Duration::from_millis(500)).await;
            let _ = tree.shutdown(Duration::from_millis(500)).await;
        }
        if let Some(p) = &self.proxy {
            p.stop();
        }
        if let Some(p) = &self.profile {
            let _ = std::fs::remove_dir_all(p);
        }
    }

    /// The tabs, by id.
    pub fn tabs(&self) -> Vec<Arc<Tab>> {
        self.tabs.lock().map(|t| t.values().cloned().collect()).unwrap_or_default()
    }

    /// The current tab's id.
    pub fn current_id(&self) -> Option<u32> {
        self.current.lock().ok().and_then(|c| *c)
    }

    /// Make `id` current again if it is still open (after a temporary tab).
    pub fn restore_current(&self, id: Option<u32>) {
        if let Some(i) = id
            && self.tabs.lock().is_ok_and(|t| t.contains_key(&i))
        {
            self.set_current(Some(i));
        }
    }

    fn set_current(&self, id: Option<u32>) {
        if let Ok(mut c) = self.current.lock() {
            *c = id;
        }
    }

    /// Bring `tab` to the front unless it is there (input and screenshots of a background
    /// tab can wait for a frame that never comes).
    pub async fn front(&self, tab: &Tab) -> Result<()> {
        if self.fronted.lock().is_ok_and(|f| *f == Some(tab.id))
            || self.own_window.lock().is_ok_and(|w| w.contains(&tab.id))
        {
            return Ok(());
        }
        self.conn
            .call_within(Some(&tab.session), "Page.bringToFront", json!({}), Duration::from_secs(10))
            .await?;
        if let Ok(mut f) = self.fronted.lock() {
            *f = Some(tab.id);
        }
        Ok(())
    }

    fn tab_by_session(&self, session: &str) -> Option<Arc<Tab>> {
        self.tabs.lock().ok()?.values().find(|t| t.session == session).cloned()
    }

    fn forget_target(&self, target: &str) {
        let removed = self.tabs.lock().ok().and_then(|mut tabs| {
            let id = tabs.values().find(|t| t.target == target).map(|t| t.id)?;
            tabs.remove(&id);
            Some(id)
        });
        if removed.is_some()
            && let Ok(mut f) = self.fronted.lock()
            && *f == removed
        {
            *f = None;
        }
        if removed.is_some() && self.current_id() == removed {
            let last = self.tabs.lock().ok().and_then(|t| t.keys().next_back().copied());
            self.set_current(last);
        }
    }

    /// Attach to page target `target` and make it a tab (the current one).
    pub async fn adopt(&self, target: String) -> Result<Arc<Tab>> {
        let tab = self.adopt_as(target, None).await?;
        self.set_current(Some(tab.id));
        Ok(tab)
    }

    /// A page the browser opened by itself (`window.open`, `target=_blank`, a form into a new
    /// window) becomes a tab, under its opener's policy. It does not become the current tab.
    /// An attached browser's pages are only taken when one of our tabs opened them.
    async fn adopt_popup(&self, info: &Value) {
        let Some(target) = info["targetId"].as_str() else { return };
        let opener = info["openerId"]
            .as_str()
            .and_then(|o| self.tabs.lock().ok().and_then(|t| t.values().find(|t| t.target == o).cloned()));
        if opener.is_none() && !self.is_launched() {
            return;
        }
        let policy = opener
            .and_then(|o| o.with(|s| s.policy.clone()).ok().flatten())
            .or_else(|| self.last_policy.lock().ok().and_then(|p| p.clone()));
        let _ = self.adopt_as(target.to_owned(), policy).await;
    }

    /// Attach to `target` once (a second adoption finds the first tab), with `policy` armed.
    async fn adopt_as(&self, target: String, policy: Option<Policy>) -> Result<Arc<Tab>> {
        let _one = self.adopting.lock().await;
        let known = self.tabs.lock().ok().and_then(|t| t.values().find(|t| t.target == target).cloned());
        if let Some(t) = known {
            return Ok(t);
        }
        let att = self
            .conn
            .call(None, "Target.attachToTarget", json!({"targetId": target, "flatten": true}))
            .await?;
        let session = att["sessionId"].as_str().unwrap_or("").to_owned();
        let id = self.next_tab.fetch_add(1, Ordering::Relaxed);
        let (signals, _) = watch::channel(Signals::default());
        let tab = Arc::new(Tab {
            id,
            target,
            session: session.clone(),
            state: Mutex::new(TabState { policy, ..TabState::default() }),
            signals,
        });
        if let Ok(mut tabs) = self.tabs.lock() {
            tabs.insert(id, Arc::clone(&tab));
        }
        let s = Some(session.as_str());
        let c = &self.conn;
        let enabled = tokio::try_join!(
            c.call(s, "Page.enable", json!({})),
            c.call(s, "Runtime.enable", json!({})),
            c.call(s, "Network.enable", json!({"maxTotalBufferSize": 0, "maxResourceBufferSize": 0})),
            c.call(s, "Log.enable", json!({})),
            c.call(s, "Fetch.enable", json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})),
            c.call(s, "Page.setLifecycleEventsEnabled", json!({"enabled": true})),
            // Every tab behaves as focused (focus events, :focus, typing), in front or not.
            c.call(s, "Emulation.setFocusEmulationEnabled", json!({"enabled": true})),
            c.call(
                s,
                "Emulation.setDeviceMetricsOverride",
                json!({"width": WINDOW.0, "height": WINDOW.1, "deviceScaleFactor": 1, "mobile": false}),
            ),
        );
        if let Err(e) = enabled {
            if let Ok(mut tabs) = self.tabs.lock() {
                tabs.remove(&id);
            }
            return Err(e);
        }
        Ok(tab)
    }

    /// Why the proxy refused `url`'s host and port lately (within a minute), if it did.
    pub fn proxy_refusal(&self, url: &str) -> Option<ToolError> {
        let u = url::Url::parse(url).ok()?;
        let authority = format!("{}:{}", u.host_str()?, u.port_or_known_default()?);
        self.proxy.as_ref()?.refusal(&authority, Duration::from_secs(60)).map(|r| r.error)
    }

    /// A new tab on `about:blank`.
    pub async fn new_tab(&self) -> Result<Arc<Tab>> {
        // A launched browser opens each tab in a window of its own, so that calls on different
        // tabs never compete for the front (an attached browser is someone's: tabs as usual).
        let own = self.is_launched();
        let t = self
            .conn
            .call(None, "Target.createTarget", json!({"url": "about:blank", "newWindow": own}))
            .await?;
        let target = t["targetId"].as_str().unwrap_or("").to_owned();
        let tab = self.adopt(target).await?;
        if own && let Ok(mut w) = self.own_window.lock() {
            w.insert(tab.id);
        }
        // A new tab opens in the front.
        if let Ok(mut f) = self.fronted.lock() {
            *f = Some(tab.id);
        }
        Ok(tab)
    }

    /// Tab `id`, or the current tab (a new one when there is none). `TAB_NOT_FOUND` for an
    /// unknown id.
    pub async fn tab(&self, id: Option<u32>) -> Result<Arc<Tab>> {
        self.touch();
        let found = {
            let tabs = self.tabs.lock().map_err(|_| ToolError::internal("tabs poisoned"))?;
            match id.or_else(|| self.current_id()) {
                Some(i) => match tabs.get(&i) {
                    Some(t) => Some(Arc::clone(t)),
                    None if id.is_some() => {
                        let open: Vec<String> = tabs.keys().map(u32::to_string).collect();
                        return Err(ToolError::new(
                            ErrorCode::TabNotFound,
                            format!(
                                "no tab {i}; open tabs: {}",
                                if open.is_empty() { "none".to_owned() } else { open.join(", ") }
                            ),
                        )
                        .with_prop("tabs", json!(tabs.keys().collect::<Vec<_>>())));
                    }
                    None => None,
                },
                None => None,
            }
        };
        let tab = match found {
            Some(t) => t,
            None => self.new_tab().await?,
        };
        self.set_current(Some(tab.id));
        Ok(tab)
    }

    /// Close tab `id`.
    pub async fn close_tab(&self, id: u32) -> Result<()> {
        let tab = self.tab(Some(id)).await?;
        self.conn.call(None, "Target.closeTarget", json!({"targetId": tab.target})).await?;
        self.forget_target(&tab.target);
        Ok(())
    }
}

/// The call's policy, set before it acts on `tab`: on the tab (its `Fetch` vetting), and on the
/// browser's proxy (every connection, whichever tab, worker or popup makes it).
pub fn arm(b: &Browser, tab: &Tab, ctx: &Ctx) -> Result<()> {
    let p = Policy::of(ctx);
    if let Some(proxy) = &b.proxy {
        proxy.set_guard(p.guard.clone());
    }
    if let Ok(mut last) = b.last_policy.lock() {
        *last = Some(p.clone());
    }
    tab.with(|s| s.policy = Some(p))
}
