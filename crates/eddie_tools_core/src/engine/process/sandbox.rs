//! The sandbox around every command the tools start: what the host asks for (`ctx.sandbox`,
//! a [`Policy`]), what one call will apply ([`plan`] → [`Plan`]), and the parent's half of
//! applying it ([`Plan::prepare`]); the child's half is `sandbox_child.rs`, run by the
//! supervisor between fork and exec, so every process of the tree inherits it (a daemon that
//! double-forks and outlives the call included).
//!
//! **Modes** (the file system): `workspace-write` (read anywhere, write only in the workspace,
//! the temp directory, `/dev/shm`, the package managers' caches and the host's
//! `writableRoots`), `read-only` (no write anywhere but to devices such as `/dev/null`), `off`.
//! **Network:** `on`, `off` (a new network namespace with no interface up: no TCP, UDP or
//! abstract Unix socket reaches anything, the host's loopback included), `loopback` (the same
//! namespace with its own `lo` up: the command reaches servers it starts itself, and nothing
//! else).
//!
//! On Linux the file-system modes are enforced twice: by **Landlock** (every write right —
//! write, truncate, create, remove, rename, link, symlink, mknod — allowed only beneath the
//! writable roots; and a Landlock domain cannot mount, unmount or ptrace out of itself) and by a
//! **mount namespace** in a new user namespace where every mount is read-only but the writable
//! roots (which also stops `chmod`, `chown`, `utime` and xattr changes outside, which Landlock
//! does not cover). Elsewhere, or when the kernel refuses, nothing is enforced and the result
//! says so (`enforced: false` and why); a host that named a sandbox gets `SANDBOX_UNAVAILABLE`
//! instead, before anything runs.
//!
//! **The default** (no `ctx.sandbox`): `workspace-write` with the network `on`, applied as far
//! as the system allows (best effort).

use std::ffi::CString;
#[cfg(unix)]
use std::os::fd::OwnedFd;
/// Windows has no Landlock ruleset to hold (nothing is sandboxed there).
#[cfg(windows)]
type OwnedFd = std::os::windows::io::OwnedHandle;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::process::sandbox_child as child;
use crate::error::{ErrorCode, Result, ToolError};

/// What commands may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Write only in the workspace, the temp directory, the caches and the declared roots.
    WorkspaceWrite,
    /// Write nowhere.
    ReadOnly,
    /// No file-system restriction.
    Off,
}

impl Mode {
    /// `workspace-write`, `read-only` or `off`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }

    /// The mode named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::WorkspaceWrite, Self::ReadOnly, Self::Off].into_iter().find(|m| m.as_str() == s)
    }
}

/// What commands may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Network {
    /// Nothing.
    Off,
    /// Only servers the command itself starts (its own loopback).
    Loopback,
    /// Everything this process can reach.
    On,
}

impl Network {
    /// `off`, `loopback` or `on`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Loopback => "loopback",
            Self::On => "on",
        }
    }

    /// The option named `s`.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Off, Self::Loopback, Self::On].into_iter().find(|n| n.as_str() == s)
    }
}

/// `ctx.sandbox`: the sandbox a host requires for every command of the call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Policy {
    /// The file-system mode.
    pub mode: Mode,
    /// More writable directories (absolute, or relative to the workspace), `workspace-write` only.
    pub writable_roots: Vec<String>,
    /// The network.
    pub network: Network,
}

/// Most `writableRoots` a host may declare.
pub const MAX_HOST_ROOTS: usize = 32;

impl Policy {
    /// The default: `workspace-write`, the network on.
    pub fn default_policy() -> Self {
        Self { mode: Mode::WorkspaceWrite, writable_roots: Vec::new(), network: Network::On }
    }

    /// A mode alone, the network on.
    pub fn mode(mode: Mode) -> Self {
        Self { mode, ..Self::default_policy() }
    }

    /// Parse `ctx.sandbox`: a mode string or `{mode, writableRoots?, network?}`; `null` is
    /// `None` (the default applies). Anything else is `INVALID_ARGUMENT`, saying what is wrong.
    pub fn from_json(v: &Value) -> Result<Option<Self>> {
        const MODES: &str = "'workspace-write', 'read-only' or 'off'";
        let bad = |msg: String| ToolError::invalid(format!("ctx.sandbox{msg}"));
        let mode = |v: &Value, at: &str| match v.as_str().and_then(Mode::parse) {
            Some(m) => Ok(m),
            None => Err(bad(format!("{at} must be {MODES}; got {v}"))),
        };
        match v {
            Value::Null => Ok(None),
            Value::String(_) => Ok(Some(Self::mode(mode(v, "")?))),
            Value::Object(o) => {
                if let Some(k) =
                    o.keys().find(|k| !matches!(k.as_str(), "mode" | "writableRoots" | "network"))
                {
                    return Err(bad(format!(
                        " has an unknown key {k:?}; it is a mode string or {{mode, writableRoots?, network?}}"
                    )));
                }
                let mut p = match o.get("mode") {
                    None | Some(Value::Null) => return Err(bad(format!(".mode is required: {MODES}"))),
                    Some(m) => Self::mode(mode(m, ".mode")?),
                };
                match o.get("network") {
                    None | Some(Value::Null) => {}
                    Some(n) => {
                        p.network = n.as_str().and_then(Network::parse).ok_or_else(|| {
                            bad(format!(".network must be 'off', 'loopback' or 'on'; got {n}"))
                        })?;
                    }
                }
                match o.get("writableRoots") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(a)) => {
                        for r in a {
                            match r.as_str() {
                                Some(s) if !s.is_empty() && !s.contains('\0') => {
                                    p.writable_roots.push(s.to_owned())
                                }
                                _ => {
                                    return Err(bad(format!(
                                        ".writableRoots must be an array of paths; got {r}"
                                    )));
                                }
                            }
                        }
                    }
                    Some(r) => return Err(bad(format!(".writableRoots must be an array of paths; got {r}"))),
                }
                if !p.writable_roots.is_empty() && p.mode != Mode::WorkspaceWrite {
                    return Err(bad(format!(
                        ".writableRoots needs mode 'workspace-write' (the mode is '{}')",
                        p.mode.as_str()
                    )));
                }
                if p.writable_roots.len() > MAX_HOST_ROOTS {
                    return Err(bad(format!(".writableRoots has more than {MAX_HOST_ROOTS} paths")));
                }
                Ok(Some(p))
            }
            _ => Err(bad(format!(" must be {MODES}, or {{mode, writableRoots?, network?}}; got {v}"))),
        }
    }
}

/// What one call's commands run in: the policy resolved against the workspace, the
/// environment and what this system can enforce.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The file-system mode.
    pub mode: Mode,
    /// The network.
    pub network: Network,
    /// Named by the host: a failure to enforce it refuses the call.
    required: bool,
    /// The writable roots (absolute, symlink-free), `workspace-write` only.
    roots: Vec<PathBuf>,
    /// Roots (caches) to create just before the command starts: they do not exist yet, but
    /// their parent does.
    create: Vec<PathBuf>,
    /// The layers to apply (`sandbox_child` flags).
    layers: u32,
    /// Whether what `mode` and `network` say is enforced.
    enforced: bool,
    /// Why not, when it is not.
    reason: Option<String>,
}

/// `SANDBOX_UNAVAILABLE` travelling inside an `io::Error` from the supervisor (see
/// [`unavailable_error`]).
#[derive(Debug)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

/// The `SANDBOX_UNAVAILABLE` error a spawn failed with, if that is why it failed.
pub fn unavailable_error(e: &std::io::Error) -> Option<ToolError> {
    let u = e.get_ref()?.downcast_ref::<Unavailable>()?;
    Some(ToolError::new(ErrorCode::SandboxUnavailable, u.0.clone()))
}

/// A failed sandbox step, in the parent or in the child: `(step, what happened)`.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The `sandbox_child::STEP_*` that failed.
    pub step: i32,
    /// What happened.
    pub detail: String,
}

impl Failure {
    /// Remember that this layer does not work here: later plans leave it out (or refuse).
    pub fn note(&self) {
        let broken = if child::is_namespace_step(self.step) { &NAMESPACES_BROKEN } else { &LANDLOCK_BROKEN };
        let _ = broken.set(self.detail.clone());
    }

    /// The failure a child reported: `step` and `errno`.
    pub fn from_child(step: i32, errno: i32) -> Self {
        Self {
            step,
            detail: format!(
                "{} failed: {}",
                child::step_name(step),
                std::io::Error::from_raw_os_error(errno)
            ),
        }
    }
}

/// Why namespaces (or Landlock) cannot be used here, once found out.
static NAMESPACES_BROKEN: OnceLock<String> = OnceLock::new();
static LANDLOCK_BROKEN: OnceLock<String> = OnceLock::new();

impl Plan {
    /// Whether what `mode` and `network` say is enforced.
    pub fn enforced(&self) -> bool {
        self.enforced
    }

    /// The writable roots.
    pub fn writable_roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// `data.sandbox`: `{mode, network, enforced, reason?, writableRoots}`.
    pub fn report(&self) -> Value {
        let mut v = json!({
            "mode": self.mode.as_str(),
            "network": self.network.as_str(),
            "enforced": self.enforced,
            "writableRoots": self.roots.iter().map(|r| r.to_string_lossy()).collect::<Vec<_>>(),
        });
        if let (Some(r), Some(o)) = (&self.reason, v.as_object_mut()) {
            o.insert("reason".into(), Value::String(r.clone()));
        }
        v
    }

    /// One line for a tool's text (`sandbox: workspace-write, network on`).
    pub fn summary(&self) -> String {
        let mut s = format!("sandbox: {}, network {}", self.mode.as_str(), self.network.as_str());
        if !self.enforced {
            s.push_str(" (not enforced");
            if let Some(r) = &self.reason {
                s.push_str(": ");
                s.push_str(r);
            }
            s.push(')');
        }
        s
    }

    /// The plan after `failure`: the failed layer dropped (best effort), or
    /// `Err(SANDBOX_UNAVAILABLE)` when the host required the sandbox.
    pub fn degrade(&self, failure: &Failure) -> std::result::Result<Self, Unavailable> {
        let namespaces = child::is_namespace_step(failure.step);
        if self.required {
            return Err(Unavailable(format!(
                "the sandbox the host requires ({}, network {}) cannot be set up here: {}; nothing ran",
                self.mode.as_str(),
                self.network.as_str(),
                failure.detail
            )));
        }
        let drop = if namespaces { NAMESPACE_LAYERS } else { child::LANDLOCK };
        Ok(Self {
            layers: self.layers & !drop,
            enforced: false,
            reason: Some(failure.detail.clone()),
            ..self.clone()
        })
    }

    /// The parent's half: create the missing caches, build the Landlock ruleset and turn the
    /// roots and `cwd` into C strings for the child.
    pub fn prepare(&self, cwd: &Path) -> std::result::Result<Arc<Prepared>, Failure> {
        let failed = |step: i32, detail: String| Failure { step, detail };
        for dir in &self.create {
            // Another call may have made it meanwhile; a failure leaves the cache read-only.
            let _ = std::fs::create_dir(dir);
        }
        let roots: Vec<&PathBuf> = self.roots.iter().filter(|r| r.exists()).collect();
        let cstr = |p: &Path| CString::new(p.as_os_str().as_encoded_bytes());
        let croots = roots
            .iter()
            .map(|r| cstr(r))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| failed(child::STEP_CLONE_ROOT, "a writable root contains a NUL byte".into()))?;
        let ccwd = cstr(cwd)
            .map_err(|_| failed(child::STEP_CHDIR, "the working directory contains a NUL byte".into()))?;
        let ruleset = if self.layers & child::LANDLOCK != 0 {
            Some(landlock::ruleset(&roots).map_err(|e| failed(child::STEP_LANDLOCK, e))?)
        } else {
            None
        };
        Ok(Arc::new(Prepared { flags: self.layers, roots: croots, cwd: ccwd, ruleset }))
    }
}

/// What the child needs, made by [`Plan::prepare`] in the parent.
#[derive(Debug)]
pub struct Prepared {
    flags: u32,
    roots: Vec<CString>,
    cwd: CString,
    ruleset: Option<OwnedFd>,
}

impl Prepared {
    /// The layers.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// The writable roots.
    pub fn roots(&self) -> &[CString] {
        &self.roots
    }

    /// The Landlock ruleset, when the plan has that layer.
    pub fn ruleset(&self) -> Option<&OwnedFd> {
        self.ruleset.as_ref()
    }

    /// The child's view (borrowing only: usable after a fork).
    pub fn child(&self, ruleset_fd: i32) -> child::Child<'_> {
        child::Child { flags: self.flags, roots: &self.roots, cwd: &self.cwd, ruleset: ruleset_fd }
    }
}

#[cfg(all(test, eddie_shim))]
impl Prepared {
    /// `flags` with nothing prepared for them (no ruleset, no roots): a child that must fail.
    pub(crate) fn unprepared(flags: u32) -> Arc<Self> {
        Arc::new(Self { flags, roots: Vec::new(), cwd: c"/".to_owned(), ruleset: None })
    }
}

/// The namespace layers.
const NAMESPACE_LAYERS: u32 = child::USERNS | child::MOUNT_RO | child::NETNS | child::LOOPBACK;

/// The plan for commands of a call with `ctx`: `ctx.sandbox` (required), else the default
/// (best effort). `INVALID_ARGUMENT` for a host root that does not exist;
/// `SANDBOX_UNAVAILABLE` when a required sandbox cannot be enforced here.
pub fn plan(ctx: &Ctx) -> Result<Plan> {
    plan_with_roots(ctx, &[])
}

/// [`plan`], with `extra` writable too under `workspace-write` (for git hooks: the
/// repository's git directories, which a linked worktree keeps outside the workspace).
pub fn plan_with_roots(ctx: &Ctx, extra: &[PathBuf]) -> Result<Plan> {
    let (policy, required) = match &ctx.sandbox {
        Some(p) => (p.clone(), true),
        None => (Policy::default_policy(), false),
    };
    let mut want = 0;
    if policy.mode != Mode::Off {
        want |= child::LANDLOCK | child::USERNS | child::MOUNT_RO;
    }
    match policy.network {
        Network::On => {}
        Network::Off => want |= child::USERNS | child::NETNS,
        Network::Loopback => want |= child::USERNS | child::NETNS | child::LOOPBACK,
    }
    let (roots, create) = match policy.mode {
        Mode::WorkspaceWrite => {
            let mut declared = policy.writable_roots.clone();
            declared.extend(extra.iter().filter(|p| p.exists()).map(|p| p.to_string_lossy().into_owned()));
            writable_roots(ctx, &declared)?
        }
        _ => (Vec::new(), Vec::new()),
    };
    if roots.iter().any(|r| r == Path::new("/")) {
        // Everything is writable: no mount to make read-only.
        want &= !child::MOUNT_RO;
    }
    let mut plan = Plan {
        mode: policy.mode,
        network: policy.network,
        required,
        roots,
        create,
        layers: want,
        enforced: want != 0,
        reason: (want == 0).then(|| "the host turned the sandbox off".to_owned()),
    };
    if want == 0 {
        return Ok(plan);
    }
    let mut missing = Vec::new();
    if let Err(why) = supported() {
        missing.push(why);
        plan.layers = 0;
    }
    if plan.layers & child::LANDLOCK != 0
        && let Err(why) = landlock::available()
    {
        missing.push(why);
        plan.layers &= !child::LANDLOCK;
    }
    if plan.layers & child::USERNS != 0
        && let Err(why) = namespaces_available()
    {
        missing.push(why);
        plan.layers &= !NAMESPACE_LAYERS;
    }
    if !missing.is_empty() {
        let why = missing.join("; ");
        if required {
            return Err(ToolError::new(
                ErrorCode::SandboxUnavailable,
                format!(
                    "the sandbox the host requires ({}, network {}) cannot be enforced here: {why}; nothing ran",
                    policy.mode.as_str(),
                    policy.network.as_str()
                ),
            ));
        }
        plan.enforced = false;
        plan.reason = Some(why);
    }
    Ok(plan)
}

/// Whether this system and build can sandbox at all: Linux, with the process shim (the sandbox
/// is applied by the shim's child, or the fork shim's).
fn supported() -> std::result::Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err(format!(
            "sandboxing needs Linux (Landlock and namespaces); this is {}",
            std::env::consts::OS
        ));
    }
    if crate::engine::process::supervisor::backend() == "group" {
        return Err(
            "this build starts commands without the process shim, so it cannot sandbox them".to_owned()
        );
    }
    Ok(())
}

/// Whether new user, mount and network namespaces work here: probed once, by starting a
/// command that cannot exist in a full sandbox (an exec failure means the sandbox was set up).
fn namespaces_available() -> std::result::Result<(), String> {
    static PROBE: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    if let Some(why) = NAMESPACES_BROKEN.get() {
        return Err(why.clone());
    }
    PROBE
        .get_or_init(|| {
            let plan = Plan {
                mode: Mode::ReadOnly,
                network: Network::Loopback,
                required: true,
                roots: Vec::new(),
                create: Vec::new(),
                layers: NAMESPACE_LAYERS,
                enforced: true,
                reason: None,
            };
            crate::engine::process::supervisor::probe(&plan)
        })
        .clone()
}

/// The writable roots of a `workspace-write` plan, and those of them to create.
fn writable_roots(ctx: &Ctx, declared: &[String]) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let real = |p: &Path| crate::workspace::realpath(p);
    let workspace = real(ctx.workspace.root())?;
    let mut roots: Vec<PathBuf> = vec![workspace.clone()];
    let temp = ctx.env_var("TMPDIR").filter(|t| t.starts_with('/')).unwrap_or_else(|| "/tmp".to_owned());
    for t in [temp.as_str(), "/dev/shm"] {
        let t = real(Path::new(t))?;
        if t.is_dir() {
            roots.push(t);
        }
    }
    for d in declared {
        let p = crate::workspace::normalize(&workspace.join(d));
        let r = real(&p)?;
        if !r.exists() {
            return Err(ToolError::invalid(format!("ctx.sandbox.writableRoots: {d} does not exist")));
        }
        roots.push(r);
    }
    let home = ctx.env_var("HOME").filter(|h| h.starts_with('/')).map(|h| real(Path::new(&h))).transpose()?;
    let mut create = Vec::new();
    for cache in cache_roots(|k| ctx.env_var(k)) {
        if let Some((root, missing)) = trusted_cache(&cache, &roots, home.as_deref()) {
            if missing {
                create.push(root.clone());
            }
            roots.push(root);
        }
    }
    // Nested roots add nothing.
    let all = roots.clone();
    roots.retain(|r| !all.iter().any(|o| o != r && r.starts_with(o)));
    let mut seen = std::collections::HashSet::new();
    roots.retain(|r| seen.insert(r.clone()));
    roots.truncate(child::MAX_ROOTS);
    create.retain(|c| roots.contains(c));
    Ok((roots, create))
}

/// `cache` as a writable root: `(real path, missing)`, or `None` when it must not be one —
/// redundant (inside a root already), `/` or the home directory (or above it), reached through
/// a symbolic link that lies inside a writable root (a command could have planted it to widen
/// the next call's sandbox), or missing with no parent.
fn trusted_cache(cache: &Path, roots: &[PathBuf], home: Option<&Path>) -> Option<(PathBuf, bool)> {
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    let lexical = crate::workspace::normalize(cache);
    if inside(&lexical) {
        return None;
    }
    let (real, links) = crate::workspace::realpath_links(&lexical).ok()?;
    if links.iter().any(|dir| inside(dir)) || inside(&real) {
        return None;
    }
    if real == Path::new("/") || home.is_some_and(|h| h.starts_with(&real)) {
        return None;
    }
    match std::fs::symlink_metadata(&real) {
        Ok(m) if m.is_dir() => Some((real, false)),
        Ok(_) => None,
        Err(_) => real.parent().is_some_and(Path::is_dir).then_some((real, true)),
    }
}

/// The package managers' caches a `workspace-write` sandbox keeps writable, from the host's
/// environment (`env`: `ctx.env`, else this process's; never the call's own `env`, which the
/// model writes): the XDG cache (pip, uv, yarn 1, pnpm's metadata, Go's build cache, node-gyp,
/// corepack, deno, poetry, pre-commit...), npm's cache, pnpm's store, yarn's berry cache, bun's
/// cache, pip's and uv's when set elsewhere, cargo's registry and git checkouts, Go's module
/// cache, Maven's repository and Gradle's caches and wrapper distributions.
pub fn cache_roots(env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let abs = |k: &str| env(k).filter(|v| v.starts_with('/')).map(PathBuf::from);
    let home = abs("HOME");
    let under_home = |rel: &str| home.as_ref().map(|h| h.join(rel));
    let data = abs("XDG_DATA_HOME").or_else(|| under_home(".local/share"));
    let cargo = abs("CARGO_HOME").or_else(|| under_home(".cargo"));
    let gopath = env("GOPATH")
        .and_then(|g| g.split(':').next().map(str::to_owned))
        .filter(|g| g.starts_with('/'))
        .map(PathBuf::from)
        .or_else(|| under_home("go"));
    let gradle = abs("GRADLE_USER_HOME").or_else(|| under_home(".gradle"));
    let bun = abs("BUN_INSTALL").or_else(|| under_home(".bun"));
    let list = [
        abs("XDG_CACHE_HOME").or_else(|| under_home(".cache")),
        abs("npm_config_cache").or_else(|| abs("NPM_CONFIG_CACHE")).or_else(|| under_home(".npm")),
        abs("npm_config_store_dir").or_else(|| data.map(|d| d.join("pnpm/store"))),
        abs("YARN_CACHE_FOLDER").or_else(|| under_home(".yarn/berry/cache")),
        abs("BUN_INSTALL_CACHE_DIR").or_else(|| bun.map(|b| b.join("install/cache"))),
        abs("PIP_CACHE_DIR"),
        abs("UV_CACHE_DIR"),
        cargo.as_ref().map(|c| c.join("registry")),
        cargo.as_ref().map(|c| c.join("git")),
        abs("GOMODCACHE").or_else(|| gopath.map(|g| g.join("pkg/mod"))),
        abs("GOCACHE"),
        under_home(".m2/repository"),
        gradle.as_ref().map(|g| g.join("caches")),
        gradle.as_ref().map(|g| g.join("wrapper/dists")),
        abs("DENO_DIR"),
    ];
    list.into_iter().flatten().collect()
}

/// The Landlock layer (Linux).
#[cfg(target_os = "linux")]
mod landlock {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::path::PathBuf;
    use std::sync::OnceLock;

    use landlock::{
        ABI, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
        RulesetCreatedAttr,
    };

    /// The rights handled: every write right of ABI 3 (write, truncate, create, remove,
    /// rename and link across directories, symlink, mknod).
    fn handled() -> BitFlags<AccessFs> {
        AccessFs::from_write(ABI::V3)
    }

    /// Devices every sandbox may write (output to `/dev/null`, terminals).
    const DEVICES: &[&str] = &[
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
        "/dev/random",
        "/dev/urandom",
    ];

    fn create() -> Result<landlock::RulesetCreated, String> {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(handled())
            .and_then(|r| r.create())
            .map_err(|e| format!("Landlock (ABI 3, Linux 6.2) is not available: {e}"))
    }

    /// Whether this kernel has Landlock ABI 3 (probed once).
    pub fn available() -> Result<(), String> {
        static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
        if let Some(why) = super::LANDLOCK_BROKEN.get() {
            return Err(why.clone());
        }
        PROBE.get_or_init(|| create().map(drop)).clone()
    }

    /// A ruleset allowing writes beneath `roots` and to the devices; its descriptor, numbered
    /// 10 or above (so that the shim's `dup2` to fd 4 cannot clobber it).
    pub fn ruleset(roots: &[&PathBuf]) -> Result<OwnedFd, String> {
        let mut r = create()?;
        let file_rights = handled() & (AccessFs::WriteFile | AccessFs::Truncate);
        let rule = |path: &std::path::Path, dir_rights: BitFlags<AccessFs>| -> Option<PathBeneath<PathFd>> {
            let meta = std::fs::metadata(path).ok()?;
            let fd = PathFd::new(path).ok()?;
            Some(PathBeneath::new(
                fd,
                if meta.is_dir() { dir_rights } else { dir_rights & AccessFs::from_file(ABI::V3) },
            ))
        };
        for root in roots {
            if let Some(rule) = rule(root, handled()) {
                r = r.add_rule(rule).map_err(|e| format!("Landlock rule for {}: {e}", root.display()))?;
            }
        }
        for dev in DEVICES {
            if let Some(rule) = rule(std::path::Path::new(dev), file_rights) {
                r = r.add_rule(rule).map_err(|e| format!("Landlock rule for {dev}: {e}"))?;
            }
        }
        let fd: Option<OwnedFd> = r.into();
        let fd = fd.ok_or("Landlock created no ruleset")?;
        // SAFETY: fcntl(F_DUPFD_CLOEXEC) takes integers; `fd` is an open descriptor we own.
        let high = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&fd), libc::F_DUPFD_CLOEXEC, 10) };
        if high < 0 {
            return Err(format!("duplicating the Landlock ruleset: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: fcntl just returned this new descriptor; nothing else owns it.
        Ok(unsafe { OwnedFd::from_raw_fd(high) })
    }
}

/// The Landlock layer: not on this system.
#[cfg(not(target_os = "linux"))]
mod landlock {
    use super::OwnedFd;
    use std::path::PathBuf;

    /// Never available.
    pub fn available() -> Result<(), String> {
        Err(format!("Landlock needs Linux; this is {}", std::env::consts::OS))
    }

    /// Never made.
    pub fn ruleset(_roots: &[&PathBuf]) -> Result<OwnedFd, String> {
        Err(format!("Landlock needs Linux; this is {}", std::env::consts::OS))
    }
}

#[cfg(test)]
#[cfg(eddie_shim)]
mod tests {
    use super::*;
    use crate::engine::process::command::{self, Invocation, Outcome};
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    /// A workspace, a temp directory (`TMPDIR`), a home and a directory outside all of them.
    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        tmp: PathBuf,
        home: PathBuf,
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::workspace::realpath(dir.path()).unwrap();
        let [ws, tmp, home, outside] = ["ws", "tmp", "home", "outside"].map(|d| root.join(d));
        for d in [&ws, &tmp, &home, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(outside.join("existing"), "original").unwrap();
        Fixture { _dir: dir, ws, tmp, home, outside }
    }

    fn ctx(f: &Fixture, policy: Option<Policy>) -> Ctx {
        let env: HashMap<String, String> = [
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", f.home.to_string_lossy().into_owned()),
            ("TMPDIR", f.tmp.to_string_lossy().into_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let ctx = Ctx::new(f.ws.to_str().unwrap()).unwrap().with_env(env);
        match policy {
            Some(p) => ctx.with_sandbox(p),
            None => ctx,
        }
    }

    use std::collections::HashMap;

    /// `sh -c script` in the workspace, sandboxed by `ctx`.
    async fn sh(ctx: &Ctx, script: &str) -> Outcome {
        let inv = Invocation {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: crate::workspace::realpath(ctx.workspace.root()).unwrap(),
            cwd_shown: ".".into(),
            env: ctx.env.clone().unwrap_or_default(),
            dropped_env: Vec::new(),
            timeout: Some(Duration::from_secs(20)),
            max_bytes: 64 * 1024,
            stdin: None,
            sandbox: plan(ctx).unwrap(),
        };
        command::execute(&inv, ctx, None).await.unwrap()
    }

    fn text(o: &Outcome) -> String {
        format!("{}{}", o.stdout.clone().into_text(), o.stderr.clone().into_text())
    }

    #[tokio::test]
    async fn workspace_write_blocks_every_kind_of_write_outside() {
        let f = fixture();
        let ctx = ctx(&f, None);
        let p = plan(&ctx).unwrap();
        assert!(p.enforced(), "{:?}", p.report());
        let o = f.outside.display();
        // Each attempt prints its name when it succeeds.
        let attacks = [
            ("create", format!("echo x > {o}/new")),
            ("append", format!("echo x >> {o}/existing")),
            ("truncate", format!("truncate -s 0 {o}/existing")),
            ("delete", format!("rm {o}/existing")),
            ("rename-out", format!("mv {o}/existing ./stolen")),
            ("chmod", format!("chmod 600 {o}/existing")),
            ("utime", format!("touch -d 2001-01-01 {o}/existing")),
            ("mkdir", format!("mkdir {o}/d")),
            ("symlink", format!("ln -s /etc/passwd {o}/sym")),
            ("hardlink-out", format!("ln {o}/existing {o}/hard")),
            ("hardlink-in", format!("ln {o}/existing ./hard && echo pwned >> ./hard")),
            ("mkfifo", format!("mkfifo {o}/fifo")),
            ("remount", "mount -o remount,rw / 2>/dev/null || mount -o remount,rw,bind / ".to_owned()),
        ];
        let script: String =
            attacks.iter().map(|(name, cmd)| format!("({cmd}) 2>/dev/null && echo {name}; ")).collect();
        let out = sh(&ctx, &script).await;
        assert_eq!(text(&out).trim(), "", "these writes got through");
        assert_eq!(std::fs::read_to_string(f.outside.join("existing")).unwrap(), "original");
        let mode = std::fs::metadata(f.outside.join("existing")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        let names: Vec<_> = std::fs::read_dir(&f.outside).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("existing")]);
        // Inside the workspace and the temp directory, everything works.
        let t = f.tmp.display();
        let ok = sh(
            &ctx,
            &format!(
                "set -e; echo a > in; mkdir d; ln -s in d/l; ln in hard; chmod 600 in; mv hard d/; rm d/l; \
                 echo b > {t}/t; mv {t}/t {t}/u; echo out > /dev/null; echo done"
            ),
        )
        .await;
        assert_eq!(text(&ok), "done\n");
        assert_eq!(std::fs::read_to_string(f.tmp.join("u")).unwrap(), "b\n");
    }

    #[tokio::test]
    async fn read_only_writes_nowhere_not_even_in_the_workspace() {
        let f = fixture();
        let ctx = ctx(&f, Some(Policy::mode(Mode::ReadOnly)));
        let t = f.tmp.display();
        let out =
            sh(&ctx, &format!("(echo x > in) 2>/dev/null && echo ws; (echo x > {t}/t) 2>/dev/null && echo tmp; cat /etc/hostname > /dev/null && echo read")).await;
        assert_eq!(text(&out), "read\n");
        assert!(!f.ws.join("in").exists() && !f.tmp.join("t").exists());
        assert_eq!(out.sandbox.unwrap().report()["writableRoots"], json!([]));
    }

    #[tokio::test]
    async fn a_daemon_that_leaves_the_session_is_confined_too() {
        let f = fixture();
        let ctx = ctx(&f, None);
        let (o, w) = (f.outside.display(), f.ws.display());
        // A double-forked daemon in a new session writes after its command has moved on.
        let script =
            format!("(setsid sh -c 'sleep 0.3; echo x > {o}/late 2>/dev/null; echo $? > {w}/rc' &); sleep 1");
        let out = sh(&ctx, &script).await;
        assert_eq!(out.exit_code, Some(0));
        let rc = std::fs::read_to_string(f.ws.join("rc")).unwrap();
        assert_ne!(rc.trim(), "0", "the daemon's write went through");
        assert!(!f.outside.join("late").exists());
    }

    /// Whether `sh` connects to `port` on 127.0.0.1, and whether a test server there saw it.
    async fn connects(ctx: &Ctx, port: u16, listener: &std::net::TcpListener) -> (bool, bool) {
        let out =
            sh(ctx, &format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected"))
                .await;
        let seen = listener.accept().is_ok();
        (text(&out).contains("connected"), seen)
    }

    #[tokio::test]
    async fn network_off_reaches_no_loopback_server_and_on_does() {
        let f = fixture();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let off = Policy { network: Network::Off, ..Policy::default_policy() };
        assert_eq!(connects(&ctx(&f, Some(off)), port, &listener).await, (false, false));
        let off_only = Policy { mode: Mode::Off, writable_roots: Vec::new(), network: Network::Off };
        assert_eq!(connects(&ctx(&f, Some(off_only)), port, &listener).await, (false, false));
        assert_eq!(connects(&ctx(&f, None), port, &listener).await, (true, true));
    }

    #[tokio::test]
    async fn loopback_reaches_its_own_servers_only() {
        let f = fixture();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let lo = ctx(&f, Some(Policy { network: Network::Loopback, ..Policy::default_policy() }));
        assert_eq!(connects(&lo, port, &listener).await, (false, false));
        // Its own server, on the same port number even, is reachable.
        let script = format!(
            "python3 -c 'import socket\ns=socket.socket(); s.bind((\"127.0.0.1\", {port})); s.listen()\n\
             c=socket.create_connection((\"127.0.0.1\", {port})); print(\"own\", s.accept()[1][0])'"
        );
        let out = sh(&lo, &script).await;
        assert_eq!(text(&out), "own 127.0.0.1\n");
    }

    #[tokio::test]
    async fn the_caches_are_writable_and_a_calls_own_env_adds_no_root() {
        let f = fixture();
        for d in [".npm", ".cache", ".cargo", "go/pkg", ".m2", ".ssh"] {
            std::fs::create_dir_all(f.home.join(d)).unwrap();
        }
        let ctx = ctx(&f, None);
        let p = plan(&ctx).unwrap();
        let h = f.home.display();
        for want in [".npm", ".cache", ".cargo/registry", ".cargo/git", "go/pkg/mod", ".m2/repository"] {
            assert!(p.writable_roots().contains(&f.home.join(want)), "{want} not in {:?}", p.report());
        }
        // Missing caches whose parent exists are created just before the command.
        let out = sh(
            &ctx,
            &format!(
                "set -e; for d in .npm .cache/pip .cache/uv .cargo/registry .cargo/git go/pkg/mod .m2/repository; do \
                 mkdir -p {h}/$d/x && echo ok > {h}/$d/x/f; done; echo cached"
            ),
        )
        .await;
        assert_eq!(text(&out), "cached\n");
        // The home directory itself, and anything the caches do not cover, stay read-only, even
        // when the command's own environment points a cache there.
        let mut inv_env = ctx.env.clone().unwrap_or_default();
        inv_env.insert("XDG_CACHE_HOME".into(), f.home.join(".ssh").to_string_lossy().into_owned());
        let inv = Invocation {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                format!(
                    "(echo k > {h}/.ssh/authorized_keys) 2>/dev/null && echo ssh; (echo x > {h}/.bashrc) 2>/dev/null && echo rc; true"
                ),
            ],
            cwd: f.ws.clone(),
            cwd_shown: ".".into(),
            env: inv_env,
            dropped_env: Vec::new(),
            timeout: Some(Duration::from_secs(20)),
            max_bytes: 4096,
            stdin: None,
            sandbox: plan(&ctx).unwrap(),
        };
        let out = command::execute(&inv, &ctx, None).await.unwrap();
        assert_eq!(text(&out), "");
        assert!(!f.home.join(".ssh/authorized_keys").exists() && !f.home.join(".bashrc").exists());
    }

    #[tokio::test]
    async fn a_planted_symlink_cannot_widen_the_next_calls_sandbox() {
        let f = fixture();
        // The user's cache is a link into the temp directory, which commands may write...
        let cache = f.tmp.join("cache");
        std::fs::create_dir(&cache).unwrap();
        std::os::unix::fs::symlink(&cache, f.home.join(".cache")).unwrap();
        let ctx = ctx(&f, None);
        // ...so a command swaps the target for a link to a directory it must not write.
        let (c, o) = (cache.display(), f.outside.display());
        sh(&ctx, &format!("rm -r {c} && ln -s {o} {c}")).await;
        assert!(std::fs::symlink_metadata(&cache).unwrap().file_type().is_symlink());
        let p = plan(&ctx).unwrap();
        assert!(!p.writable_roots().iter().any(|r| r.starts_with(&f.outside)), "{:?}", p.report());
        let h = f.home.display();
        let out = sh(&ctx, &format!("(echo x > {h}/.cache/pwned) 2>/dev/null && echo written; true")).await;
        assert_eq!(text(&out), "");
        assert!(!f.outside.join("pwned").exists());
    }

    #[test]
    fn bad_policies_are_invalid_arguments_with_a_reason() {
        for bad in [
            json!("bogus"),
            json!(42),
            json!(true),
            json!({}),
            json!({"mode": "nope"}),
            json!({"mode": "workspace-write", "network": "lan"}),
            json!({"mode": "workspace-write", "writableRoots": "/tmp"}),
            json!({"mode": "workspace-write", "writableRoots": [1]}),
            json!({"mode": "read-only", "writableRoots": ["/tmp"]}),
            json!({"mode": "workspace-write", "extra": 1}),
        ] {
            let e = Policy::from_json(&bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
            assert!(e.message().starts_with("ctx.sandbox"), "{}", e.message());
        }
        assert_eq!(Policy::from_json(&json!(null)).unwrap(), None);
        assert_eq!(Policy::from_json(&json!("read-only")).unwrap(), Some(Policy::mode(Mode::ReadOnly)));
        let p = Policy::from_json(
            &json!({"mode": "workspace-write", "writableRoots": ["a"], "network": "loopback"}),
        )
        .unwrap()
        .unwrap();
        assert_eq!((p.network, p.writable_roots), (Network::Loopback, vec!["a".to_owned()]));
        // A declared root that does not exist is the host's mistake: INVALID_ARGUMENT.
        let f = fixture();
        let policy = Policy { writable_roots: vec!["missing".into()], ..Policy::default_policy() };
        assert_eq!(plan(&ctx(&f, Some(policy))).unwrap_err().code(), ErrorCode::InvalidArgument);
    }

    #[tokio::test]
    async fn declared_roots_are_writable() {
        let f = fixture();
        let policy = Policy {
            writable_roots: vec![f.outside.to_string_lossy().into_owned()],
            ..Policy::default_policy()
        };
        let out =
            sh(&ctx(&f, Some(policy)), &format!("echo ok > {}/new && cat {0}/new", f.outside.display()))
                .await;
        assert_eq!(text(&out), "ok\n");
    }

    #[test]
    fn a_required_sandbox_that_fails_refuses_and_the_default_degrades() {
        let f = fixture();
        let failure = Failure::from_child(child::STEP_LANDLOCK, libc::EPERM);
        let required = plan(&ctx(&f, Some(Policy::default_policy()))).unwrap();
        let e = required.degrade(&failure).unwrap_err();
        assert!(e.0.contains("landlock_restrict_self"), "{e}");
        let io = std::io::Error::other(e);
        assert_eq!(unavailable_error(&io).unwrap().code(), ErrorCode::SandboxUnavailable);
        let best_effort = plan(&ctx(&f, None)).unwrap();
        let d = best_effort.degrade(&Failure::from_child(child::STEP_UNSHARE, libc::ENOSPC)).unwrap();
        assert_eq!((d.enforced(), d.layers & NAMESPACE_LAYERS), (false, 0));
        assert!(d.report()["reason"].as_str().unwrap().contains("unshare"));
    }
}

/// A build without the process shim (`EDDIE_TOOLS_GROUP_ONLY=1`, or not Linux) cannot sandbox.
#[cfg(test)]
#[cfg(not(eddie_shim))]
mod without_the_shim {
    use super::*;

    #[test]
    fn nothing_is_claimed_and_a_named_sandbox_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(dir.path().to_str().unwrap()).unwrap();
        let p = plan(&ctx).unwrap();
        assert!(!p.enforced());
        assert!(p.report()["reason"].as_str().unwrap().contains("shim") || !cfg!(target_os = "linux"));
        let e = plan(&ctx.with_sandbox(Policy::mode(Mode::ReadOnly))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::SandboxUnavailable);
    }
}
