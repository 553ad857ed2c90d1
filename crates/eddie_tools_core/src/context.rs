//! [`Ctx`]: what every tool call gets besides its arguments — the workspace, the caller's
//! `confirm` callback, the child environment and a cancellation flag.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

use crate::error::{Result, ToolError};
use crate::workspace::Workspace;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The caller's confirm callback: resolves `true` to go ahead. An `Err` means the callback
/// itself failed (threw or rejected), and the tool call fails with it.
pub type ConfirmFn = Arc<dyn Fn(String) -> BoxFuture<Result<bool>> + Send + Sync>;

/// One piece of a running command's output, for `ctx.onOutput`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// Decoded text; a multi-byte character is never split across chunks.
    pub text: String,
}

/// `ctx.onOutput(chunk)`: streaming output of a running command. The call is made at once;
/// the returned future resolves when the callback has run (callers await the last one so
/// that every chunk is delivered before the tool's result).
pub type OutputFn = Arc<dyn Fn(OutputChunk) -> BoxFuture<()> + Send + Sync>;

/// `ctx.ask(question)`: asks the user and resolves to the answer. An `Err` means the callback
/// itself failed.
pub type AskFn = Arc<dyn Fn(String) -> BoxFuture<Result<String>> + Send + Sync>;

/// What `ctx.gitCredentials` is asked for: a git remote that wants a login (never with a user
/// or password in `url`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitCredentialRequest {
    /// `http` or `https`.
    pub protocol: String,
    /// `host` or `host:port`.
    pub host: String,
    /// The remote's URL, without user and password.
    pub url: String,
    /// The user named in the remote URL, if any.
    pub username: Option<String>,
}

/// `ctx.gitCredentials(request)`: the host's login for a git remote as (username, password),
/// `None` when it has none (the credential helpers are asked next). An `Err` means the callback
/// itself failed.
pub type GitCredentialsFn =
    Arc<dyn Fn(GitCredentialRequest) -> BoxFuture<Result<Option<(String, String)>>> + Send + Sync>;

/// Cancellation shared between the caller and a running tool.
#[derive(Clone)]
pub struct Cancel {
    flag: Arc<AtomicBool>,
    tx: Arc<watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Self { flag: Arc::new(AtomicBool::new(false)), tx: Arc::new(watch::channel(false).0) }
    }
}

impl Cancel {
    /// Ask the running tool to stop.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.tx.send_replace(true);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// `Err(CANCELLED)` once cancelled; for checks inside loops.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() { Err(ToolError::cancelled()) } else { Ok(()) }
    }

    /// Resolves when cancelled (never, if it never is).
    pub async fn cancelled(&self) {
        let mut rx = self.tx.subscribe();
        // The sender lives as long as `self`, so `wait_for` only ends by cancellation.
        let _ = rx.wait_for(|v| *v).await;
    }

    /// The shared flag, for blocking code.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }
}

/// Who the network tools may reach (`ctx.network`): by default nothing private (loopback,
/// RFC 1918, link-local, CGNAT, unique-local, ...) is reachable. Hosts and addresses named in
/// `allow_hosts` are (a host name, `*.suffix`, an IP or a CIDR range); `deny_hosts` refuses
/// names, addresses or ranges even when they are public.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct NetworkPolicy {
    /// Every private address is reachable (`allowPrivate`).
    pub allow_private: bool,
    /// Hosts, addresses or CIDR ranges reachable even when private (`allowHosts`).
    pub allow_hosts: Vec<String>,
    /// Hosts, addresses or CIDR ranges never reachable (`denyHosts`).
    pub deny_hosts: Vec<String>,
}

/// What a prompt asks about. An approval given before the call covers exactly the prompts
/// that were shown; the kinds let a host tell the tool's own question from the extra ones
/// (a destructive command, hooks that will run, a protected branch) that must never be
/// approved by a blanket "yes".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptKind {
    /// The tool's own question ("Run command: …", "Write file: …").
    Action,
    /// A destructive-command finding (rule and offending part).
    Destructive,
    /// Repository hooks will run (and where they live).
    Hooks,
    /// The call acts on a protected branch.
    Protected,
}

impl PromptKind {
    /// The stable string (`action`, `destructive`, `hooks`, `protected`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Action => "action",
            Self::Destructive => "destructive",
            Self::Hooks => "hooks",
            Self::Protected => "protected",
        }
    }
}

/// One question a call asks before it acts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Prompt {
    /// What it is about.
    pub kind: PromptKind,
    /// The text shown to the person approving.
    pub text: String,
}

impl Prompt {
    /// The tool's own question.
    pub fn action(text: impl Into<String>) -> Self {
        Self { kind: PromptKind::Action, text: text.into() }
    }
    /// A destructive-command finding.
    pub fn destructive(text: impl Into<String>) -> Self {
        Self { kind: PromptKind::Destructive, text: text.into() }
    }
    /// Hooks that will run.
    pub fn hooks(text: impl Into<String>) -> Self {
        Self { kind: PromptKind::Hooks, text: text.into() }
    }
    /// A protected branch.
    pub fn protected(text: impl Into<String>) -> Self {
        Self { kind: PromptKind::Protected, text: text.into() }
    }
}

/// The execution context of one call (`ctx` in `@eddie/tools`).
#[derive(Clone)]
pub struct Ctx {
    /// The workspace every path is confined to (`ctx.cwd`).
    pub workspace: Workspace,
    /// `ctx.confirm`; `None` when the caller gave none (a tool that needs it declines).
    pub confirm: Option<ConfirmFn>,
    /// `ctx.env`: the whole environment of the call (see [`Ctx::env_var`]): what its child
    /// processes get and what every tool reads. `None` means "this process's environment".
    pub env: Option<HashMap<String, String>>,
    /// Cancellation (`ctx.signal`).
    pub cancel: Cancel,
    /// `ctx.onOutput`: where commands stream their output while they run, if anywhere.
    pub on_output: Option<OutputFn>,
    /// `ctx.ask`: how tools ask the user a question (`ask_user`), if they can.
    pub ask: Option<AskFn>,
    /// The permission session (`ctx.sessionId`, else the identity of the ctx object): a
    /// `moderate` tool asks once per session. `None`: every call is its own session.
    pub session: Option<String>,
    /// `ctx.network`: the network policy; `None` = from the environment (`EDDIE_NET_*`), else
    /// nothing private reachable.
    pub network: Option<NetworkPolicy>,
    /// `ctx.browser.endpoint`: a running browser's DevTools websocket for the browser tools to
    /// attach to; `None` = `EDDIE_BROWSER_WS`, else launch one.
    pub browser_endpoint: Option<String>,
    /// The tool this call is for and its level; the pipeline sets it (see [`crate::call::gate`]).
    pub gate: Option<crate::call::gate::Gate>,
    /// `ctx.approved`: what the host approved before the call.
    pub approved: crate::call::gate::Approved,
    /// `ctx.maxPermission`: the host's ceiling; a tool above it is `POLICY_DENIED`.
    pub max_permission: Option<crate::spec::Permission>,
    /// Set while planning: prompts are recorded and answered no ([`crate::call::plan`]).
    pub plan: Option<crate::call::gate::PlanRecorder>,
    /// `ctx.sandbox`: the sandbox every command of the call must run in (required: where it
    /// cannot be enforced the call fails with `SANDBOX_UNAVAILABLE`); `None` = the default
    /// (`workspace-write`, network on), applied as far as the system allows.
    pub sandbox: Option<crate::engine::process::sandbox::Policy>,
    /// `ctx.gitCredentials`: the host's logins for git remotes over http(s), asked before the
    /// credential helpers (a VS Code-style host's own credential store).
    pub git_credentials: Option<GitCredentialsFn>,
}

impl Ctx {
    /// A context for `cwd` with no confirm callback and the inherited environment.
    pub fn new(cwd: &str) -> Result<Self> {
        Ok(Self {
            workspace: Workspace::new(cwd)?,
            confirm: None,
            env: None,
            cancel: Cancel::default(),
            on_output: None,
            ask: None,
            session: None,
            network: None,
            browser_endpoint: None,
            gate: None,
            approved: crate::call::gate::Approved::Nothing,
            max_permission: None,
            plan: None,
            sandbox: None,
            git_credentials: None,
        })
    }

    /// Builder: set the confirm callback.
    pub fn with_confirm(mut self, confirm: ConfirmFn) -> Self {
        self.confirm = Some(confirm);
        self
    }

    /// Builder: set the environment.
    pub fn with_env(mut self, env: HashMap<String, String>) -> Self {
        self.env = Some(env);
        self
    }

    /// Builder: set the output callback.
    pub fn with_on_output(mut self, on_output: OutputFn) -> Self {
        self.on_output = Some(on_output);
        self
    }

    /// Builder: set the ask callback.
    pub fn with_ask(mut self, ask: AskFn) -> Self {
        self.ask = Some(ask);
        self
    }

    /// Builder: set the permission session.
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }

    /// Builder: set the browser endpoint to attach to.
    pub fn with_browser_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.browser_endpoint = Some(endpoint.into());
        self
    }

    /// Builder: set the network policy.
    pub fn with_network(mut self, network: NetworkPolicy) -> Self {
        self.network = Some(network);
        self
    }

    /// Builder: set the host's git credentials callback.
    pub fn with_git_credentials(mut self, f: GitCredentialsFn) -> Self {
        self.git_credentials = Some(f);
        self
    }

    /// Builder: require a sandbox for the call's commands.
    pub fn with_sandbox(mut self, sandbox: crate::engine::process::sandbox::Policy) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// Ask the tool's own question through the permission gate ([`crate::call::gate`]): a
    /// `moderate` tool asks once per session, a `dangerous` one every time; an approval given
    /// before the call may cover it; with no one to ask, the call fails with
    /// `APPROVAL_REQUIRED`. The wait races the abort signal: a confirm left pending (a dialog
    /// nobody answers) does not hold a cancelled call, which rejects with `CANCELLED`.
    pub async fn confirm(&self, message: String) -> Result<bool> {
        crate::call::gate::approve(self, vec![Prompt::action(message)]).await
    }

    /// Ask every prompt of this call, in order, before it acts: `true` when all are approved,
    /// `false` at the first one declined (nothing may change then). A tool computes every prompt
    /// it could ask first and asks them here in one place, so that a host approving before the
    /// call can be shown all of them.
    pub async fn confirm_all(&self, prompts: Vec<Prompt>) -> Result<bool> {
        crate::call::gate::approve(self, prompts).await
    }

    /// `work`'s output, or `Err(CANCELLED)` as soon as the call is cancelled (dropping `work`).
    /// For every wait on the caller (confirm, ask), so that no family can forget the race.
    pub async fn unless_cancelled<T>(&self, work: impl Future<Output = T>) -> Result<T> {
        tokio::select! {
            out = work => Ok(out),
            () = self.cancel.cancelled() => Err(ToolError::cancelled()),
        }
    }

    /// An environment variable as the call sees it. The one rule: `ctx.env`, when the host
    /// gave one, is the whole environment of the call (its child processes get exactly it, and
    /// nothing falls back to this process's variables, so a host can withhold one); without it,
    /// this process's environment ([`process_env`]). Engines that serve no single call (the
    /// index's limits) read [`process_env`] directly.
    pub fn env_var(&self, key: &str) -> Option<String> {
        match &self.env {
            Some(env) => env.get(key).cloned(),
            None => process_env(key),
        }
    }

    /// [`Ctx::env_var`], with a blank value read as unset (settings, keys and proxies, where
    /// `FOO=` means "not set").
    pub fn env_set(&self, key: &str) -> Option<String> {
        self.env_var(key).filter(|v| !v.trim().is_empty())
    }
}

/// A variable of this process's environment (not valid Unicode reads as unset): what a call
/// without `ctx.env` sees, and what the engines that serve no single call read.
pub fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

/// Run blocking work (file system, walks, git) on tokio's blocking pool. A panic or an
/// abandoned worker becomes an `INTERNAL` error naming `what`.
pub async fn blocking<T: Send + 'static>(
    what: &'static str,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::internal(format!("{what} worker failed: {e}")))?
}

/// A confirm callback that always answers `answer` (for tests and `--yes`).
pub fn constant_confirm(answer: bool) -> ConfirmFn {
    Arc::new(move |_| Box::pin(async move { Ok(answer) }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn ctx_env_when_given_is_the_whole_environment_else_the_process() {
        // PATH is set in every test process.
        let path = process_env("PATH");
        assert!(path.is_some());
        let inherited = Ctx::new(".").unwrap();
        assert_eq!(inherited.env_var("PATH"), path);
        assert_eq!(inherited.env_set("PATH"), path);
        let given = Ctx::new(".").unwrap().with_env(
            [("X", "1"), ("BLANK", " ")].into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
        );
        assert_eq!(given.env_var("PATH"), None, "a host that gives ctx.env withholds the rest");
        assert_eq!(given.env_set("PATH"), None);
        assert_eq!(given.env_var("X").as_deref(), Some("1"));
        assert_eq!(given.env_var("BLANK").as_deref(), Some(" "));
        assert_eq!(given.env_set("BLANK"), None, "blank reads as unset for settings");
    }

    #[tokio::test]
    async fn a_pending_confirm_or_ask_gives_way_to_an_abort() {
        let never: ConfirmFn = Arc::new(|_| Box::pin(std::future::pending()));
        let never_ask: AskFn = Arc::new(|_| Box::pin(std::future::pending()));
        let ctx = Ctx::new(".").unwrap().with_confirm(never).with_ask(never_ask);
        let cancel = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            cancel.cancel();
        });
        let started = std::time::Instant::now();
        let err = ctx.confirm("go?".into()).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Cancelled);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let ask = ctx.ask.clone().unwrap();
        let err = ctx.unless_cancelled(ask("q".into())).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::Cancelled);
    }
}
