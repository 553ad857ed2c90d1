//! Smart HTTP(S) for libgit2 without OpenSSL: a custom smart subtransport registered once for
//! `http` and `https`, whose requests go through the one HTTP client and the one network guard
//! ([`crate::engine::net`]: the call's `ctx.network`, the vetted address pinned, every redirect
//! vetted again). libgit2's registration is process-global, so the call's context reaches the
//! transport through a thread-local set for the duration of one operation ([`with_op`]):
//! libgit2 runs the transport on the thread that called it, and concurrent calls run on other
//! threads, so they never see each other's policy or credentials.
//!
//! Credentials are found the way git finds them: the user and password in the URL, then the
//! host's `ctx.gitCredentials`, then each `credential.helper` (repository, then user
//! configuration; run as git runs it, `sh -c '<helper> get'` with the key=value protocol on
//! stdin, through the process supervisor), then
//! `GIT_ASKPASS`. They are asked for only after a `401`, and a second `401` is `AUTH_FAILED`
//! naming the source tried (never the secret).
//!
//! It also says where a remote is (a path, `file://` or http(s); `remote_target`) and what
//! `git_push` and `git_pull` share.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine as _;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use url::Url;

use super::common;
use crate::context::{Ctx, OutputChunk};
use crate::engine::net::client::{self, Request, Response};
use crate::engine::net::guard::Guard;
use crate::error::{ErrorCode, Result, ToolError};

/// Longest wait for one request's answer, or for one piece of a body.
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest a credential helper or `GIT_ASKPASS` may take.
const HELPER_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes between two progress lines.
const PROGRESS_EVERY: u64 = 64 * 1024;

thread_local! {
    static CURRENT: RefCell<Option<Arc<Op>>> = const { RefCell::new(None) };
}

/// Whether `url` is one this transport serves.
pub fn is_http(url: &str) -> bool {
    let l = url.to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://")
}

/// The credentials in use and where they came from.
#[derive(Default)]
struct Auth {
    header: Option<String>,
    source: Option<String>,
    asked: bool,
}

/// One operation's context, seen by the transports (http(s) here, ssh in [`super::ssh`]).
pub(super) struct Op {
    pub(super) ctx: Ctx,
    rt: tokio::runtime::Handle,
    pub(super) guard: Guard,
    dir: PathBuf,
    helpers: Vec<String>,
    auth: Mutex<Auth>,
    error: Mutex<Option<ToolError>>,
    moved: Mutex<(u64, u64)>,
}

impl Op {
    /// Run `work` on the runtime under the call's abort and the idle timeout.
    pub(super) fn block<T>(
        &self,
        what: &str,
        work: impl std::future::Future<Output = Result<T>>,
    ) -> Result<T> {
        self.rt.block_on(client::bounded(&self.ctx, IDLE_TIMEOUT, what, work))
    }

    /// Keep `e` for [`with_op`] and hand libgit2 an I/O error.
    pub(super) fn fail(&self, e: ToolError) -> io::Error {
        let msg = e.message().to_owned();
        if let Ok(mut slot) = self.error.lock()
            && slot.is_none()
        {
            *slot = Some(e);
        }
        io::Error::other(msg)
    }

    /// Count `n` bytes moved (`sent`) and report progress to `ctx.onOutput` now and then.
    pub(super) fn progress(&self, n: usize, sent: bool) {
        let Some(out) = &self.ctx.on_output else { return };
        let line = {
            let Ok(mut m) = self.moved.lock() else { return };
            let slot = if sent { &mut m.0 } else { &mut m.1 };
            let before = *slot / PROGRESS_EVERY;
            *slot += n as u64;
            if *slot / PROGRESS_EVERY == before {
                return;
            }
            format!("{} {} KiB\n", if sent { "Sent" } else { "Received" }, *slot / 1024)
        };
        self.rt.block_on(out(OutputChunk { stream: "stderr", text: line }));
    }

    /// The credentials for `url`: in the URL, then each helper, then `GIT_ASKPASS`. `Err` is
    /// `AUTH_FAILED` naming what was tried.
    fn credentials(&self, url: &Url) -> Result<(String, String, String)> {
        let mut tried = Vec::new();
        if !url.username().is_empty()
            && let Some(p) = url.password()
        {
            return Ok((url.username().to_owned(), p.to_owned(), "the remote URL".into()));
        }
        // The host and, when it is not the scheme's default, the port (IPv6 in brackets).
        let host = url[url::Position::BeforeHost..url::Position::AfterPort].to_owned();
        if let Some(ask) = self.ctx.git_credentials.clone() {
            tried.push("ctx.gitCredentials".to_owned());
            let mut shown = url.clone();
            let _ = shown.set_username("");
            let _ = shown.set_password(None);
            shown.set_query(None);
            // The remote's URL, not the request's.
            let shown = shown.to_string();
            let remote = ["/info/refs", "/git-upload-pack", "/git-receive-pack"]
                .iter()
                .find_map(|s| shown.strip_suffix(s))
                .unwrap_or(&shown);
            let request = crate::context::GitCredentialRequest {
                protocol: url.scheme().to_owned(),
                host: host.clone(),
                url: remote.to_owned(),
                username: (!url.username().is_empty()).then(|| url.username().to_owned()),
            };
            let given = self.rt.block_on(client::bounded(
                &self.ctx,
                HELPER_TIMEOUT,
                "ctx.gitCredentials",
                ask(request),
            ))?;
            if let Some((user, pass)) = given.filter(|(u, p)| !u.is_empty() || !p.is_empty()) {
                return Ok((user, pass, "ctx.gitCredentials".into()));
            }
        }
        let mut query = format!("protocol={}\nhost={host}\n", url.scheme());
        if !url.username().is_empty() {
            query.push_str(&format!("username={}\n", url.username()));
        }
        query.push('\n');
        for h in &self.helpers {
            tried.push(helper_label(h));
            let cmd = if let Some(rest) = h.strip_prefix('!') {
                rest.to_owned()
            } else if Path::new(h).is_absolute() {
                h.clone()
            } else {
                format!("git credential-{h}")
            };
            let out = self.run("sh", vec!["-c".into(), format!("{cmd} get")], Some(query.clone()))?;
            let (mut user, mut pass, mut quit) = (None, None, false);
            for line in out.lines() {
                match line.split_once('=') {
                    Some(("username", v)) => user = Some(v.to_owned()),
                    Some(("password", v)) => pass = Some(v.to_owned()),
                    Some(("quit", v)) => quit = matches!(v, "1" | "true"),
                    _ => {}
                }
            }
            if let (Some(u), Some(p)) = (user, pass) {
                return Ok((u, p, helper_label(h)));
            }
            if quit {
                break;
            }
        }
        if let Some(askpass) = self.ctx.env_var("GIT_ASKPASS").filter(|v| !v.is_empty()) {
            tried.push(format!("GIT_ASKPASS {askpass:?}"));
            let origin = format!("{}://{host}", url.scheme());
            let user = if url.username().is_empty() {
                self.run(&askpass, vec![format!("Username for '{origin}': ")], None)?.trim_end().to_owned()
            } else {
                url.username().to_owned()
            };
            let at = format!("{}://{user}@{host}", url.scheme());
            let pass =
                self.run(&askpass, vec![format!("Password for '{at}': ")], None)?.trim_end().to_owned();
            if !user.is_empty() || !pass.is_empty() {
                return Ok((user, pass, format!("GIT_ASKPASS {askpass:?}")));
            }
        }
        let tried = if tried.is_empty() {
            "no ctx.gitCredentials, no credential.helper is configured and GIT_ASKPASS is not set".to_owned()
        } else {
            format!("tried {}, none gave a username and password", tried.join(", then "))
        };
        Err(ToolError::new(
            ErrorCode::AuthFailed,
            format!("{} asks for credentials: {tried}", origin_of(url)),
        ))
    }

    /// Run a credential program under the supervisor; its stdout.
    fn run(&self, program: &str, args: Vec<String>, stdin: Option<String>) -> Result<String> {
        use crate::engine::process::{command, env};
        let (mut vars, dropped) = env::child_env(&self.ctx, None, &[])?;
        vars.insert("GIT_TERMINAL_PROMPT".into(), "0".into());
        let inv = command::Invocation {
            program: program.to_owned(),
            args,
            cwd: self.dir.clone(),
            cwd_shown: ".".into(),
            env: vars,
            dropped_env: dropped,
            timeout: Some(HELPER_TIMEOUT),
            max_bytes: 64 * 1024,
            stdin,
            // A credential program runs in the call's sandbox, like every command.
            sandbox: crate::engine::process::sandbox::plan(&self.ctx)?,
        };
        let out = self.rt.block_on(command::execute(&inv, &self.ctx, None))?;
        match out.status() {
            "ok" => Ok(out.stdout.into_text()),
            "cancelled" => Err(ToolError::cancelled()),
            _ => Err(ToolError::new(
                ErrorCode::AuthFailed,
                format!("the credential program {program:?} failed ({})", out.summary(&inv)),
            )),
        }
    }
}

/// A helper as messages name it: its program, never its arguments or an inline shell command
/// (either may hold a secret).
fn helper_label(h: &str) -> String {
    if h.starts_with('!') {
        "credential.helper (a shell command)".to_owned()
    } else {
        format!("credential.helper {:?}", h.split_whitespace().next().unwrap_or_default())
    }
}

/// `scheme://host[:port]` of `url` (no user, no password, no path).
fn origin_of(url: &Url) -> String {
    match url.port() {
        Some(p) => format!("{}://{}:{p}", url.scheme(), url.host_str().unwrap_or_default()),
        None => format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default()),
    }
}

/// The operation running on this thread, if any.
pub(super) fn current() -> Option<Arc<Op>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Register the transports for `http` and `https`, and ssh's (once per process).
fn register() -> Result<()> {
    static DONE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        for scheme in ["http", "https"] {
            // SAFETY: `register` is unsafe because libgit2's transport registry is not
            // synchronised; the `OnceLock` makes this the only registration, done once.
            unsafe {
                git2::transport::register(scheme, |remote| Transport::smart(remote, true, Smart))
                    .map_err(|e| e.message().to_owned())?;
            }
        }
        for scheme in super::ssh::SCHEMES {
            // SAFETY: as above: the only registration of these schemes, done once.
            unsafe {
                git2::transport::register(scheme, |remote| Transport::smart(remote, false, super::ssh::Ssh))
                    .map_err(|e| e.message().to_owned())?;
            }
        }
        Ok(())
    })
    .clone()
    .map_err(|e| ToolError::internal(format!("registering the git http transport: {e}")))
}

/// Run `work` (libgit2 calls that may reach an http(s) remote) with `ctx` as the transport's
/// context. An error the transport kept wins over libgit2's message for it.
pub fn with_op<T>(
    ctx: &Ctx,
    repo: &git2::Repository,
    cfg: &git2::Config,
    what: &str,
    work: impl FnOnce() -> std::result::Result<T, git2::Error>,
) -> Result<T> {
    register()?;
    let rt = tokio::runtime::Handle::try_current()
        .map_err(|_| ToolError::internal("the git http transport needs the tokio runtime"))?;
    let mut helpers = Vec::new();
    if let Ok(entries) = cfg.multivar("credential.helper", None) {
        let _ = entries.for_each(|e| {
            match e.value() {
                // An empty value resets the list, as in git.
                Ok("") => helpers.clear(),
                Ok(v) => helpers.push(v.to_owned()),
                Err(_) => {}
            }
        });
    }
    let dir = repo.workdir().unwrap_or_else(|| repo.path()).to_path_buf();
    let op = Arc::new(Op {
        ctx: ctx.clone(),
        rt,
        guard: Guard::for_ctx(ctx),
        dir,
        helpers,
        auth: Mutex::new(Auth::default()),
        error: Mutex::new(None),
        moved: Mutex::new((0, 0)),
    });
    /// Clears the thread's operation when dropped (also on unwinding: the blocking pool
    /// reuses threads).
    struct Scope;
    impl Drop for Scope {
        fn drop(&mut self) {
            CURRENT.with(|c| *c.borrow_mut() = None);
        }
    }
    CURRENT.with(|c| *c.borrow_mut() = Some(Arc::clone(&op)));
    let scope = Scope;
    let r = work();
    drop(scope);
    let kept = op.error.lock().ok().and_then(|mut e| e.take());
    match (r, kept) {
        (Ok(v), _) => Ok(v),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(super::err(&e, ErrorCode::Network, what)),
    }
}

/// The subtransport: one [`Stream`] per request.
struct Smart;

impl SmartSubtransport for Smart {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> std::result::Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let op = CURRENT.with(|c| c.borrow().clone()).ok_or_else(|| {
            git2::Error::from_str("git over http(s) runs only inside an eddie git operation")
        })?;
        let base = url.trim_end_matches('/');
        let (target, post) = match action {
            Service::UploadPackLs => (format!("{base}/info/refs?service=git-upload-pack"), None),
            Service::ReceivePackLs => (format!("{base}/info/refs?service=git-receive-pack"), None),
            Service::UploadPack => (format!("{base}/git-upload-pack"), Some("git-upload-pack")),
            Service::ReceivePack => (format!("{base}/git-receive-pack"), Some("git-receive-pack")),
        };
        let given =
            Url::parse(&target).map_err(|_| git2::Error::from_str("the remote URL is not a valid URL"))?;
        // A user and password in the URL are credentials: never sent or shown as part of it.
        let mut url = given.clone();
        let _ = url.set_username("");
        let _ = url.set_password(None);
        Ok(Box::new(Stream {
            op,
            given,
            url,
            post,
            body: Vec::new(),
            resp: None,
            pending: Vec::new(),
            at: 0,
        }))
    }

    fn close(&self) -> std::result::Result<(), git2::Error> {
        Ok(())
    }
}

/// One request: what libgit2 writes is the body, sent on its first read.
struct Stream {
    op: Arc<Op>,
    /// The URL as configured (it may carry a user and password).
    given: Url,
    /// The URL requested: `given` without user and password.
    url: Url,
    /// The service of a `POST`; `None` for the `GET` of the advertisement.
    post: Option<&'static str>,
    body: Vec<u8>,
    resp: Option<Response>,
    pending: Vec<u8>,
    at: usize,
}

impl Stream {
    /// Send the request (asking for credentials after a 401, once).
    fn send(&mut self) -> Result<Response> {
        let op = Arc::clone(&self.op);
        loop {
            op.ctx.cancel.check()?;
            let mut req = Request::get(self.url.clone());
            req.decompress = false;
            req.follow_cross_host = false;
            // Packs are streamed to their parser: hyper's growing buffer, fewer reads.
            req.small_reads = false;
            req.headers.push(("User-Agent".into(), "git/2.0 (eddie-tools)".into()));
            if let Some(service) = self.post {
                req.method = reqwest::Method::POST;
                req.body = Some(self.body.clone());
                req.follow = false;
                req.headers.push(("Content-Type".into(), format!("application/x-{service}-request")));
                req.headers.push(("Accept".into(), format!("application/x-{service}-result")));
            }
            let (header, source) = {
                let a = op.auth.lock().map_err(|_| ToolError::internal("credentials lock"))?;
                (a.header.clone(), a.source.clone())
            };
            if let Some(h) = &header {
                req.headers.push(("Authorization".into(), h.clone()));
            }
            let resp = op.block("the git http request", client::send(&op.ctx, &op.guard, req))?;
            if resp.status == 401 {
                let asked = op.auth.lock().map(|a| a.asked).unwrap_or(true);
                if asked {
                    return Err(ToolError::new(
                        ErrorCode::AuthFailed,
                        format!(
                            "{} refused the credentials from {}",
                            origin_of(&self.url),
                            source.as_deref().unwrap_or("nowhere")
                        ),
                    ));
                }
                let (user, pass, source) = op.credentials(&self.given)?;
                let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
                let mut a = op.auth.lock().map_err(|_| ToolError::internal("credentials lock"))?;
                *a = Auth { header: Some(format!("Basic {token}")), source: Some(source), asked: true };
                continue;
            }
            if !(200..300).contains(&resp.status) {
                return Err(ToolError::new(
                    ErrorCode::Network,
                    format!("{} answered HTTP {}", origin_of(&resp.url), resp.status),
                ));
            }
            let want = match self.post {
                Some(s) => format!("application/x-{s}-result"),
                None => format!(
                    "application/x-{}-advertisement",
                    self.url.query().and_then(|q| q.strip_prefix("service=")).unwrap_or("git-upload-pack")
                ),
            };
            let ct = resp.header("content-type").unwrap_or_default();
            if !ct.starts_with(&want) {
                return Err(ToolError::new(
                    ErrorCode::Network,
                    format!(
                        "{} is not a smart HTTP git server (content type {ct:?}, expected {want})",
                        origin_of(&resp.url)
                    ),
                ));
            }
            return Ok(resp);
        }
    }

    fn read_inner(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.op.ctx.cancel.check()?;
        if self.resp.is_none() {
            if self.post.is_some() {
                self.op.progress(self.body.len(), true);
            }
            self.resp = Some(self.send()?);
        }
        while self.at >= self.pending.len() {
            let Some(resp) = self.resp.as_mut() else { return Ok(0) };
            let op = Arc::clone(&self.op);
            match op.block("reading from the git server", resp.chunk())? {
                Some(b) => {
                    op.progress(b.len(), false);
                    self.pending = b.to_vec();
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_inner(buf).map_err(|e| self.op.fail(e))
    }
}

impl Write for Stream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if let Err(e) = self.op.ctx.cancel.check() {
            return Err(self.op.fail(e));
        }
        self.body.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The remote's refs (`refs/heads/...` → id), connecting for `dir`.
pub fn list(
    remote: &mut git2::Remote<'_>,
    dir: git2::Direction,
) -> std::result::Result<Vec<(String, git2::Oid)>, git2::Error> {
    remote.connect(dir)?;
    let refs = remote.list()?.iter().map(|h| (h.name().to_owned(), h.oid())).collect();
    Ok(refs)
}

// Where a remote is, and what push and pull share.

/// Where a remote is.
#[derive(Debug, Clone)]
pub enum Target {
    /// A repository on this machine.
    Local(PathBuf),
    /// A network remote: an `http://` or `https://` URL, or an ssh one.
    Http(String),
}

impl Target {
    /// The URL or path, as libgit2 takes it.
    pub fn url(&self) -> String {
        match self {
            Target::Local(p) => p.to_string_lossy().into_owned(),
            Target::Http(u) => u.clone(),
        }
    }
}

/// Where a remote is (`UNSUPPORTED_SCHEME` for schemes other than http(s) and ssh).
pub(super) fn remote_target(repo: &git2::Repository, root: &Path, name: &str) -> Result<Target> {
    let r = repo.find_remote(name).map_err(|_| {
        ToolError::new(ErrorCode::RefNotFound, format!("no remote named {name:?}; git remote -v lists them"))
            .with_prop("remote", name)
    })?;
    let url = String::from_utf8_lossy(r.url_bytes()).into_owned();
    if is_http(&url) || super::ssh::is_ssh(&url) {
        return Ok(Target::Http(url));
    }
    let path = if let Some(p) = url.strip_prefix("file://") {
        PathBuf::from(p)
    } else if url.contains("://") || (url.contains(':') && !url.starts_with('/') && !url.starts_with('.')) {
        return Err(ToolError::new(
            ErrorCode::UnsupportedScheme,
            format!(
                "remote {name} is {url}: only http(s), ssh and remotes on this machine (a path or file://) are supported"
            ),
        ));
    } else if Path::new(&url).is_absolute() {
        PathBuf::from(&url)
    } else {
        root.join(&url)
    };
    Ok(Target::Local(path))
}

/// The id of `refs/heads/{branch}` on the remote (`None`: no such branch). An http(s) remote
/// is asked (its refs listed for `dir`); a local one is opened read-only.
pub(super) fn remote_head(
    ctx: &Ctx,
    repo: &git2::Repository,
    target: &Target,
    name: &str,
    branch: &str,
    dir: git2::Direction,
) -> Result<Option<git2::Oid>> {
    let want = format!("refs/heads/{branch}");
    match target {
        Target::Local(p) => {
            let there = open_remote(p, name)?;
            Ok(there.find_reference(&want).ok().and_then(|r| r.target()))
        }
        Target::Http(u) => {
            let cfg = common::config(repo, ctx)?;
            let mut remote =
                repo.remote_anonymous(u).map_err(|e| super::err(&e, ErrorCode::InvalidUrl, name))?;
            let refs = with_op(ctx, repo, &cfg, &format!("listing {name}"), || list(&mut remote, dir))?;
            Ok(refs.into_iter().find(|(r, _)| *r == want).map(|(_, id)| id))
        }
    }
}

pub(super) fn open_remote(path: &Path, name: &str) -> Result<git2::Repository> {
    git2::Repository::open(path).map_err(|e| {
        ToolError::new(
            ErrorCode::RefNotFound,
            format!("remote {name} ({}) is not a git repository: {}", path.display(), e.message()),
        )
    })
}

/// The local branch to act on: `branch`, else the current one.
pub(super) fn local_branch(repo: &git2::Repository, branch: Option<String>) -> Result<String> {
    match branch.filter(|b| !b.is_empty()) {
        Some(b) => Ok(b.strip_prefix("refs/heads/").unwrap_or(&b).to_owned()),
        None => common::current_branch(repo).ok_or_else(|| {
            ToolError::new(
                ErrorCode::RefNotFound,
                "HEAD is detached: pass branch: the branch to push or pull",
            )
        }),
    }
}

/// (remote name, remote branch) from the branch's upstream config, else (`origin`, same name).
pub(super) fn upstream(cfg: &git2::Config, branch: &str) -> (Option<String>, Option<String>) {
    let remote = cfg.get_string(&format!("branch.{branch}.remote")).ok();
    let merge = cfg
        .get_string(&format!("branch.{branch}.merge"))
        .ok()
        .map(|m| m.strip_prefix("refs/heads/").unwrap_or(&m).to_owned());
    (remote, merge)
}

/// The seeds' spellings that push and pull share.
pub(super) const REMOTE_ALIASES: &[(&str, &str)] = &[
    ("repo_path", "path"),
    ("remote_name", "remote"),
    ("remoteName", "remote"),
    ("ref", "branch"),
    ("branch_name", "branch"),
];
