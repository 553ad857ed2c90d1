//! The process supervisor: every command runs as an orphan-proof *tree*.
//!
//! A plain process group is not enough to own everything a command starts: a child can call
//! `setsid` (or double-fork, as daemons do) and leave the group, and its orphans are then
//! adopted by init. So every command is started under a small *shim* process that
//!
//! 1. runs in a new session (so `killpg` and terminals do not mix trees),
//! 2. is a child subreaper (`PR_SET_CHILD_SUBREAPER`): every orphan of the tree, double-
//!    forked daemons included, is re-parented to the shim instead of init,
//! 3. gets `SIGTERM` when its parent dies (`PR_SET_PDEATHSIG`), so a crashed or exiting Node
//!    process takes its trees with it,
//! 4. forks and execs the real command (which gets `PR_SET_PDEATHSIG(SIGKILL)`), and reaps.
//!
//! When the command exits, the shim kills whatever it left behind (`SIGKILL`), waits until its
//! subtree is empty, hands the command's exact wait status back through a pipe and exits. On
//! [`Tree::terminate`] it sends `SIGTERM` to every process of its subtree, gives them
//! [`Tree::grace`], then `SIGKILL`s the rest; on [`Tree::kill_now`] (also on drop) it kills at
//! once. Because the shim is the subreaper, "its subtree" is exact: found by walking
//! `/proc/*/stat` parent links down from the shim. Signals to the shim from anyone but us
//! (a command doing `kill 0`) are ignored.
//!
//! Two ways to get a shim:
//! - **`eddie-shim`** (default): a small program (`shim/eddie_shim.rs`, built by `build.rs`,
//!   embedded here) written once to a private cache directory and started with
//!   `posix_spawn` (vfork-style: the Node address space is never copied, so the cost does not
//!   grow with the host's memory, unlike `fork`, which `child_process` uses).
//! - **in-process fork** (fallback, or with `EDDIE_TOOLS_SHIM=fork`): the forked child does not
//!   exec but becomes the shim itself, using only async-signal-safe calls.

#![cfg_attr(not(eddie_shim), allow(unused_imports, dead_code))]

use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsStr, OsString};
use std::io;
#[cfg(unix)]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
#[cfg(unix)]
use std::os::unix::process::ExitStatusExt;
#[cfg(windows)]
use std::os::windows::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

#[cfg(unix)]
use tokio::net::unix::pipe;

#[cfg(windows)]
use crate::engine::process::job::{self, Job};

#[cfg(eddie_kq)]
use crate::engine::process::kqueue_shim;
use crate::engine::process::sandbox::{self, Failure, Plan, Prepared};
#[cfg(eddie_shim)]
use crate::engine::process::sandbox_child;
#[cfg(unix)]
use crate::engine::process::walk;

/// Default time between `SIGTERM` and `SIGKILL`.
pub const DEFAULT_GRACE: Duration = Duration::from_millis(1000);

#[cfg(eddie_shim)]
/// The shim program, built by `build.rs`, deflated (half the size in the binary).
static SHIM_DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/eddie-shim.deflate"));

#[cfg(eddie_shim)]
/// The shim program, inflated (once per process: only to install it).
fn shim_binary() -> io::Result<Vec<u8>> {
    let len = env!("EDDIE_SHIM_LEN").parse::<usize>().map_err(io::Error::other)?;
    let program = miniz_oxide::inflate::decompress_to_vec_with_limit(SHIM_DEFLATED, len)
        .map_err(|e| io::Error::other(format!("inflating the shim: {e}")))?;
    if program.len() != len {
        return Err(io::Error::other("the inflated shim has the wrong length"));
    }
    Ok(program)
}

/// The command's stdin pipe.
#[cfg(unix)]
pub type InPipe = pipe::Sender;
/// The command's stdout or stderr pipe.
#[cfg(unix)]
pub type OutPipe = pipe::Receiver;
/// The command's stdin pipe.
#[cfg(windows)]
pub type InPipe = tokio::process::ChildStdin;
/// The command's stdout or stderr pipe.
#[cfg(windows)]
pub struct OutPipe(std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send + Sync>>);

#[cfg(windows)]
impl std::fmt::Debug for OutPipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutPipe")
    }
}

#[cfg(windows)]
impl tokio::io::AsyncRead for OutPipe {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        self.0.as_mut().poll_read(cx, buf)
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Spec<'a> {
    /// The program (looked up in the child's `PATH` when it has no `/`).
    pub program: &'a OsStr,
    /// Its arguments (without `argv[0]`).
    pub args: &'a [OsString],
    /// Its working directory.
    pub cwd: &'a Path,
    /// Its whole environment; `None` inherits this process's.
    pub env: Option<&'a HashMap<String, String>>,
    /// Give it a stdin pipe (else `/dev/null`).
    pub stdin: bool,
    /// Time between `SIGTERM` and `SIGKILL` on [`Tree::terminate`].
    pub grace: Duration,
    /// The sandbox it runs in (`sandbox::plan`), or `None`: none at all (only for programs the
    /// tools start themselves, never for a command a caller names).
    pub sandbox: Option<&'a Plan>,
}

impl Spec<'_> {
    /// The std `Command` a fork shim starts (its `pre_exec` becomes the shim): the program, its
    /// arguments, working directory and environment, stdio piped (stdin only if asked).
    #[cfg(any(eddie_shim, eddie_kq))]
    pub(crate) fn std_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(self.program);
        cmd.args(self.args)
            .current_dir(self.cwd)
            .stdin(if self.stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(env) = self.env {
            cmd.env_clear().envs(env);
        }
        cmd
    }
}

#[derive(Debug)]
enum Backend {
    /// `eddie-shim`, our direct child; messages arrive on `status`.
    #[cfg(eddie_shim)]
    Shim { status: Option<pipe::Receiver>, buf: Vec<u8>, exit: Option<i32> },
    /// The in-process fork shim (on macOS the kqueue one), a tokio child; the status arrives
    /// on `status` at the end.
    #[cfg(any(eddie_shim, eddie_kq))]
    Fork { child: tokio::process::Child, status: Option<OwnedFd> },
    /// No shim: the command leads its own process group (daemons that leave it escape).
    #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
    Group { child: tokio::process::Child, done: std::sync::Arc<AtomicBool> },
    /// Windows: the command and everything it starts live in a Job Object.
    #[cfg(windows)]
    Job { child: tokio::process::Child, job: std::sync::Arc<Job> },
}

/// A running command tree (its shim is our child).
#[derive(Debug)]
pub struct Tree {
    pid: i32,
    grace: Duration,
    reaped: bool,
    stdin: Option<InPipe>,
    stdout: Option<OutPipe>,
    stderr: Option<OutPipe>,
    backend: Backend,
    /// The sandbox it runs in, as applied.
    sandbox: Option<Plan>,
}

fn live() -> &'static Mutex<HashSet<i32>> {
    static LIVE: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Count `pid`'s tree as live (until it is reaped).
fn add_live(pid: i32) {
    if let Ok(mut l) = live().lock() {
        l.insert(pid);
    }
}

/// Stop counting `pid`'s tree as live.
fn remove_live(pid: i32) {
    if let Ok(mut l) = live().lock() {
        l.remove(&pid);
    }
    #[cfg(windows)]
    if let Ok(mut j) = jobs().lock() {
        j.remove(&pid);
    }
}

/// Windows: the job of each live tree, for [`terminate_all`].
#[cfg(windows)]
fn jobs() -> &'static Mutex<HashMap<i32, std::sync::Arc<Job>>> {
    static JOBS: OnceLock<Mutex<HashMap<i32, std::sync::Arc<Job>>>> = OnceLock::new();
    JOBS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Ask every live tree of this process to terminate (`SIGTERM`, grace, `SIGKILL`). For exit
/// hooks: it only sends signals and returns at once; the shims finish the job.
pub fn terminate_all() -> usize {
    let pids: Vec<i32> = live().lock().map(|l| l.iter().copied().collect()).unwrap_or_default();
    #[cfg(windows)]
    if let Ok(j) = jobs().lock() {
        j.values().for_each(|job| job.terminate(job::TERM_CODE));
    }
    #[cfg(unix)]
    for &pid in &pids {
        // SAFETY: kill(2) takes no pointers, so no argument can break memory safety. `pid` is a
        // shim of ours listed in LIVE, i.e. not yet reaped (a `wait` reaping it at this moment
        // can at worst make the signal miss: a liveness question, not a soundness one).
        #[cfg(any(eddie_shim, eddie_kq))]
        unsafe {
            libc::kill(pid, libc::SIGTERM)
        };
        // SAFETY: killpg(2) takes no pointers; `pid` leads a process group we created
        // (`process_group(0)`) and is listed in LIVE, i.e. not yet reaped.
        #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
        unsafe {
            libc::killpg(pid, libc::SIGKILL)
        };
    }
    pids.len()
}

/// How many trees are alive.
pub fn live_count() -> usize {
    live().lock().map(|l| l.len()).unwrap_or(0)
}

/// Which shim new trees get: `"spawn"` (the `eddie-shim` program), `"fork"` (the in-process
/// shim), `"kqueue"` (macOS: the kqueue shim, `kqueue_shim.rs`), `"job"` (Windows: a Job
/// Object), or `"group"` (no shim: a process group only).
pub fn backend() -> &'static str {
    #[cfg(eddie_shim)]
    return if shim_path().is_some() { "spawn" } else { "fork" };
    #[cfg(eddie_kq)]
    return "kqueue";
    #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
    return "group";
    #[cfg(windows)]
    "job"
}

#[cfg(eddie_shim)]
static SHIM_BROKEN: AtomicBool = AtomicBool::new(false);
#[cfg(eddie_shim)]
static SHIM_FAILURE: OnceLock<String> = OnceLock::new();

/// Why `eddie-shim` could not be used, if it failed (the fork backend took over).
pub fn shim_failure() -> Option<&'static str> {
    #[cfg(eddie_shim)]
    return SHIM_FAILURE.get().map(String::as_str);
    #[cfg(not(eddie_shim))]
    None
}

#[cfg(eddie_shim)]
/// The installed `eddie-shim`, unless disabled (`EDDIE_TOOLS_SHIM=fork`) or impossible.
fn shim_path() -> Option<&'static CString> {
    static PATH: OnceLock<Option<CString>> = OnceLock::new();
    if SHIM_BROKEN.load(Ordering::Relaxed) {
        return None;
    }
    PATH.get_or_init(|| {
        if std::env::var_os("EDDIE_TOOLS_SHIM").is_some_and(|v| v == "fork") {
            return None;
        }
        let program = shim_binary().ok()?;
        if let Ok(p) = install_memfd(&program) {
            return CString::new(p.as_os_str().as_bytes()).ok();
        }
        shim_dirs()
            .into_iter()
            .find_map(|d| install_shim(&d, &program).ok())
            .and_then(|p| CString::new(p.as_os_str().as_bytes()).ok())
    })
    .as_ref()
}

#[cfg(eddie_shim)]
/// Put the shim in a sealed memory file (`/proc/self/fd/N`): no file that a command could
/// rewrite, so a sandboxed command cannot swap the unsandboxed shim that starts the next one
/// (a file in `~/.cache` or the temp directory is within its writable roots). Kept open for the
/// life of this process.
fn install_memfd(program: &[u8]) -> io::Result<PathBuf> {
    let create = |flags: libc::c_uint| {
        // SAFETY: memfd_create(2) reads the NUL-terminated literal and returns a new descriptor
        // or -1.
        unsafe { libc::memfd_create(c"eddie-shim".as_ptr(), flags) }
    };
    let base = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // MFD_EXEC (Linux 6.3) keeps it executable where memfds default to noexec; older kernels
    // refuse the flag (and never make memfds noexec).
    let mut fd = create(base | libc::MFD_EXEC);
    if fd < 0 {
        fd = create(base);
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: memfd_create just returned this descriptor; the `File` is its only owner.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    io::Write::write_all(&mut file, program)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl(F_ADD_SEALS) takes integers; `fd` is the open memfd.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let path = PathBuf::from(format!("/proc/self/fd/{fd}"));
    // It must be executable from there (a noexec /proc or memfd policy says no).
    let c =
        CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: access(2) reads the NUL-terminated `c`.
    if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    static KEEP: OnceLock<std::fs::File> = OnceLock::new();
    KEEP.set(file).map_err(|_| io::Error::other("the shim memfd was made twice"))?;
    Ok(path)
}

#[cfg(eddie_shim)]
/// Private directories the shim may live in, best first.
fn shim_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("EDDIE_TOOLS_SHIM_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR") {
        dirs.push(PathBuf::from(d).join("eddie-tools"));
    }
    if let Some(d) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(d).join(".cache").join("eddie-tools"));
    }
    // SAFETY: geteuid(2) takes no arguments, always succeeds and touches no memory of ours.
    let uid = unsafe { libc::geteuid() };
    dirs.push(std::env::temp_dir().join(format!("eddie-tools-{uid}")));
    dirs
}

#[cfg(eddie_shim)]
/// Write the shim into `dir` (ours, not writable by others) unless an identical copy is there.
fn install_shim(dir: &Path, program: &[u8]) -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid(2) takes no arguments, always succeeds and touches no memory of ours.
    let uid = unsafe { libc::geteuid() };
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o022 != 0 {
        return Err(io::Error::other("shim directory is not private"));
    }
    // FNV-1a of the program: a new build gets a new file.
    let hash = program
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
    let path = dir.join(format!("eddie-shim-{hash:016x}"));
    if let Ok(m) = std::fs::symlink_metadata(&path)
        && m.is_file()
        && m.uid() == uid
        && m.len() == program.len() as u64
        && std::fs::read(&path).is_ok_and(|b| b == program)
    {
        return Ok(path);
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    io::Write::write_all(&mut tmp, program)?;
    tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o700))?;
    tmp.persist(&path).map_err(|e| e.error)?;
    // Other builds' copies: remove those unused for a day (a running one keeps its inode).
    if let Ok(entries) = std::fs::read_dir(dir) {
        let day = std::time::SystemTime::now() - Duration::from_secs(86_400);
        for e in entries.flatten() {
            let stale = e.metadata().and_then(|m| m.accessed()).is_ok_and(|t| t < day);
            if stale && e.file_name().to_string_lossy().starts_with("eddie-shim-") && e.path() != path {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    Ok(path)
}

#[cfg(eddie_shim)]
/// Why a spawn through `eddie-shim` failed.
enum ShimError {
    /// The shim itself could not run: use the fork backend.
    Shim(io::Error),
    /// The command could not start (missing program or directory...).
    Command(io::Error),
    /// Its sandbox could not be set up (nothing ran).
    Sandbox(Failure),
}

impl Tree {
    /// Start `spec` under a shim, in its sandbox. `Err` is the spawn error of the command
    /// itself (`ENOENT` for a missing program or working directory), or
    /// [`sandbox::Unavailable`] when the sandbox the host requires cannot be set up. A sandbox
    /// applied best effort that fails is dropped layer by layer (the tree's
    /// [`Tree::sandbox`] says what was applied).
    pub fn spawn(spec: &Spec<'_>) -> io::Result<Self> {
        let Some(plan) = spec.sandbox else {
            return spawn_with(spec, None).map_err(SpawnError::into_io);
        };
        let mut plan = plan.clone();
        loop {
            let started = plan
                .prepare(spec.cwd)
                .map_err(SpawnError::Sandbox)
                .and_then(|prepared| spawn_with(spec, Some(prepared)));
            match started {
                Ok(mut tree) => {
                    tree.sandbox = Some(plan);
                    return Ok(tree);
                }
                Err(SpawnError::Io(e)) => return Err(e),
                Err(SpawnError::Sandbox(f)) => {
                    f.note();
                    plan = plan.degrade(&f).map_err(io::Error::other)?;
                }
            }
        }
    }

    /// The sandbox the tree runs in, as applied (`None`: started without one).
    pub fn sandbox(&self) -> Option<&Plan> {
        self.sandbox.as_ref()
    }

    /// The shim's pid (also the session and process-group id of the tree).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The grace period between `SIGTERM` and `SIGKILL`.
    pub fn grace(&self) -> Duration {
        self.grace
    }

    /// The command's stdin pipe, if [`Spec::stdin`] asked for one.
    pub fn take_stdin(&mut self) -> Option<InPipe> {
        self.stdin.take()
    }

    /// The command's stdout pipe.
    pub fn take_stdout(&mut self) -> Option<OutPipe> {
        self.stdout.take()
    }

    /// The command's stderr pipe.
    pub fn take_stderr(&mut self) -> Option<OutPipe> {
        self.stderr.take()
    }

    #[cfg(unix)]
    fn signal(&self, sig: i32) {
        if self.pid > 0 && !self.reaped {
            // SAFETY: kill(2) takes no pointers, so it cannot break memory safety; `self.pid`
            // is our child and not yet reaped (`!self.reaped`), so the pid cannot have been
            // reused by an unrelated process.
            #[cfg(any(eddie_shim, eddie_kq))]
            unsafe {
                libc::kill(self.pid, sig)
            };
            // SAFETY: killpg(2) takes no pointers; `self.pid` leads the process group we
            // created for the command and is not yet reaped, so the group id is still ours.
            #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
            unsafe {
                libc::killpg(self.pid, sig)
            };
        }
    }

    /// `SIGTERM` to every process of the tree, `SIGKILL` to what is left after the grace.
    pub fn terminate(&self) {
        #[cfg(windows)]
        if let Backend::Job { job, .. } = &self.backend
            && !self.reaped
        {
            // No signal a console-less process would take: the whole tree ends now.
            job.terminate(job::TERM_CODE);
        }
        #[cfg(unix)]
        self.signal(libc::SIGTERM);
        #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
        if let Backend::Group { done, .. } = &self.backend
            && !self.reaped
        {
            let (done, pid, grace) = (std::sync::Arc::clone(done), self.pid, self.grace);
            let _ = std::thread::Builder::new().name("eddie-kill".into()).spawn(move || {
                std::thread::sleep(grace);
                if !done.load(Ordering::SeqCst) {
                    // SAFETY: killpg(2) takes no pointers. `done` is still false, so `wait` has
                    // not reaped the group leader and the group id is still ours.
                    unsafe { libc::killpg(pid, libc::SIGKILL) };
                }
            });
        }
    }

    /// `SIGKILL` to every process of the tree, now.
    pub fn kill_now(&self) {
        #[cfg(windows)]
        if let Backend::Job { job, .. } = &self.backend
            && !self.reaped
        {
            job.terminate(job::KILL_CODE);
        }
        #[cfg(any(eddie_shim, eddie_kq))]
        self.signal(libc::SIGUSR1);
        #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
        self.signal(libc::SIGKILL);
    }

    /// Wait until the whole tree is gone; the command's own exit status. Cancel-safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = match &mut self.backend {
            #[cfg(windows)]
            Backend::Job { child, job } => {
                let status = child.wait().await?;
                // Whatever the command left in its job goes too, and is gone before we return.
                job.empty(Duration::from_secs(10)).await;
                status
            }
            #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
            Backend::Group { child, done } => {
                let status = child.wait().await?;
                done.store(true, Ordering::SeqCst);
                // Whatever the command left in its group goes too.
                // SAFETY: killpg(2) takes no pointers. The leader was just reaped, but its
                // group id is not reused while members of the group remain (and with none
                // left, the call fails with ESRCH).
                unsafe { libc::killpg(self.pid, libc::SIGKILL) };
                status
            }
            #[cfg(eddie_shim)]
            Backend::Shim { status, buf, exit } => {
                if let Some(rx) = status.as_ref() {
                    loop {
                        rx.readable().await?;
                        let mut chunk = [0u8; 64];
                        match rx.try_read(&mut chunk) {
                            Ok(0) => break,
                            Ok(n) => {
                                buf.extend_from_slice(&chunk[..n]);
                                while buf.len() >= 8 {
                                    let msg: Vec<u8> = buf.drain(..8).collect();
                                    let kind = i32::from_ne_bytes([msg[0], msg[1], msg[2], msg[3]]);
                                    if kind == 3 {
                                        *exit = Some(i32::from_ne_bytes([msg[4], msg[5], msg[6], msg[7]]));
                                    }
                                }
                            }
                            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(e) => return Err(e),
                        }
                    }
                }
                *status = None;
                // The status pipe closed: the shim is exiting; reap it.
                let shim = reap(self.pid);
                match exit {
                    Some(raw) => ExitStatus::from_raw(*raw),
                    None => ExitStatus::from_raw(shim),
                }
            }
            #[cfg(any(eddie_shim, eddie_kq))]
            Backend::Fork { child, status } => {
                let shim = child.wait().await?;
                let mut raw = [0u8; 4];
                let got = match status.take() {
                    Some(fd) => io::Read::read(&mut std::fs::File::from(fd), &mut raw).unwrap_or(0),
                    None => 0,
                };
                if got == 4 { ExitStatus::from_raw(i32::from_ne_bytes(raw)) } else { shim }
            }
        };
        self.reaped = true;
        remove_live(self.pid);
        Ok(status)
    }

    /// [`Tree::terminate`], then wait; if the shim itself does not finish within the grace
    /// plus `slack`, it is told to kill at once, and at last its process group is killed.
    pub async fn shutdown(&mut self, slack: Duration) -> io::Result<ExitStatus> {
        self.terminate();
        match tokio::time::timeout(self.grace + slack, self.wait()).await {
            Ok(r) => r,
            Err(_) => {
                self.kill_now();
                if let Ok(r) = tokio::time::timeout(slack, self.wait()).await {
                    return r;
                }
                // SAFETY: killpg(2) takes no pointers; `wait` has not finished, so the shim (the
                // leader of its own session and group) is not reaped and the group id is ours.
                #[cfg(unix)]
                unsafe {
                    libc::killpg(self.pid, libc::SIGKILL)
                };
                self.wait().await
            }
        }
    }
}

/// Why a start failed.
enum SpawnError {
    /// The command could not start (missing program or directory...).
    Io(io::Error),
    /// Its sandbox could not be set up (nothing ran).
    Sandbox(Failure),
}

impl SpawnError {
    fn into_io(self) -> io::Error {
        match self {
            Self::Io(e) => e,
            Self::Sandbox(f) => io::Error::other(sandbox::Unavailable(f.detail)),
        }
    }
}

/// Start `spec` with `prepared` (its sandbox, if any) on the best backend.
fn spawn_with(spec: &Spec<'_>, prepared: Option<std::sync::Arc<Prepared>>) -> Result<Tree, SpawnError> {
    #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
    {
        let _ = prepared;
        spawn_group(spec).map_err(SpawnError::Io)
    }
    #[cfg(windows)]
    {
        let _ = prepared;
        spawn_job(spec).map_err(SpawnError::Io)
    }
    #[cfg(eddie_kq)]
    {
        let _ = prepared;
        kqueue_shim::spawn(spec)
            .and_then(|(child, status)| {
                adopt(child, spec.grace, |child| Backend::Fork { child, status: Some(status) })
            })
            .map_err(SpawnError::Io)
    }
    #[cfg(eddie_shim)]
    {
        if let Some(shim) = shim_path() {
            match spawn_shim(shim, spec, prepared.as_deref()) {
                Ok(t) => return Ok(t),
                Err(ShimError::Command(e)) => return Err(SpawnError::Io(e)),
                Err(ShimError::Sandbox(f)) => return Err(SpawnError::Sandbox(f)),
                Err(ShimError::Shim(e)) => {
                    let _ = SHIM_FAILURE.set(e.to_string());
                    SHIM_BROKEN.store(true, Ordering::Relaxed);
                }
            }
        }
        spawn_fork(spec, prepared).map_err(|e| match e.raw_os_error().and_then(sandbox_child::decode) {
            Some((step, errno)) => SpawnError::Sandbox(Failure::from_child(step, errno)),
            None => SpawnError::Io(e),
        })
    }
}

/// Whether `plan`'s layers can be set up here: a program that cannot exist is started in
/// them, and an exec failure (not a sandbox one) means they could.
pub(crate) fn probe(plan: &Plan) -> Result<(), String> {
    #[cfg(not(eddie_shim))]
    {
        let _ = plan;
        Err("this build starts commands without the process shim, so it cannot sandbox them".to_owned())
    }
    #[cfg(eddie_shim)]
    {
        let cwd = Path::new("/");
        let prepared = plan.prepare(cwd).map_err(|f| f.detail)?;
        let spec = Spec {
            program: OsStr::new("/nonexistent/eddie-tools-sandbox-probe"),
            args: &[],
            cwd,
            env: Some(&HashMap::new()),
            stdin: false,
            grace: DEFAULT_GRACE,
            sandbox: None,
        };
        match spawn_with(&spec, Some(prepared)) {
            Err(SpawnError::Sandbox(f)) => Err(f.detail),
            // The exec failed: the sandbox was in place.
            Err(SpawnError::Io(_)) => Ok(()),
            Ok(t) => {
                t.kill_now();
                Ok(())
            }
        }
    }
}

#[cfg(eddie_shim)]
/// `waitpid(pid)` until it is reaped; the raw status (0 if it cannot be).
fn reap(pid: i32) -> i32 {
    let mut st = 0;
    loop {
        // SAFETY: waitpid(2) writes one c_int through its pointer, here to the local `st`;
        // `pid` is our child (a shim), reaped only here, so no other pid can be collected.
        let r = unsafe { libc::waitpid(pid, &mut st, 0) };
        if r == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        return if r == pid { st } else { 0 };
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        self.kill_now();
        remove_live(self.pid);
        match &self.backend {
            // Tokio reaps a dropped child in the background.
            #[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
            Backend::Group { .. } => {}
            #[cfg(windows)]
            Backend::Job { .. } => {}
            #[cfg(any(eddie_shim, eddie_kq))]
            Backend::Fork { .. } => {}
            #[cfg(eddie_shim)]
            Backend::Shim { .. } => {
                let pid = self.pid;
                let _ = std::thread::Builder::new().name("eddie-reap".into()).spawn(move || reap(pid));
            }
        }
    }
}

#[cfg(eddie_shim)]
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2(2) writes exactly two c_ints through its pointer, and `fds` is a local
    // array of two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are open descriptors it just created; nothing else
    // knows them, so each `OwnedFd` is their only owner and closes them once.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(eddie_shim)]
fn cstring(b: &[u8]) -> io::Result<CString> {
    CString::new(b).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

#[cfg(eddie_shim)]
/// Start `eddie-shim` with `posix_spawn` in a new session; read its first message.
fn spawn_shim(shim: &CString, spec: &Spec<'_>, sandbox: Option<&Prepared>) -> Result<Tree, ShimError> {
    let io_err = ShimError::Shim;
    let (status_r, status_w) = pipe_pair().map_err(io_err)?;
    let (out_r, out_w) = pipe_pair().map_err(io_err)?;
    let (err_r, err_w) = pipe_pair().map_err(io_err)?;
    let (in_r, in_w) = if spec.stdin {
        let (r, w) = pipe_pair().map_err(io_err)?;
        (r, Some(w))
    } else {
        let null = std::fs::File::open("/dev/null").map_err(io_err)?;
        (OwnedFd::from(null), None)
    };
    // SAFETY: getpid(2) takes no arguments, always succeeds and touches no memory of ours.
    let parent = unsafe { libc::getpid() };
    let mut argv: Vec<CString> = vec![
        shim.clone(),
        cstring(parent.to_string().as_bytes()).map_err(io_err)?,
        cstring(spec.grace.as_millis().to_string().as_bytes()).map_err(io_err)?,
    ];
    // The sandbox: `-`, or `<flags>:<n>` and the n writable roots (the ruleset goes to fd 4).
    match sandbox {
        Some(p) if p.flags() != 0 => {
            argv.push(cstring(format!("{}:{}", p.flags(), p.roots().len()).as_bytes()).map_err(io_err)?);
            argv.extend(p.roots().iter().cloned());
        }
        _ => argv.push(c"-".to_owned()),
    }
    argv.push(cstring(spec.cwd.as_os_str().as_bytes()).map_err(ShimError::Command)?);
    argv.push(cstring(spec.program.as_bytes()).map_err(ShimError::Command)?);
    for a in spec.args {
        argv.push(cstring(a.as_bytes()).map_err(ShimError::Command)?);
    }
    let envp: Vec<CString> = match spec.env {
        Some(env) => {
            env.iter().map(|(k, v)| cstring(format!("{k}={v}").as_bytes())).collect::<io::Result<Vec<_>>>()
        }
        None => std::env::vars_os()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                cstring(&kv)
            })
            .collect::<io::Result<Vec<_>>>(),
    }
    .map_err(ShimError::Command)?;
    let mut argv_p: Vec<*mut libc::c_char> = argv.iter().map(|a| a.as_ptr().cast_mut()).collect();
    argv_p.push(std::ptr::null_mut());
    let mut envp_p: Vec<*mut libc::c_char> = envp.iter().map(|a| a.as_ptr().cast_mut()).collect();
    envp_p.push(std::ptr::null_mut());
    let mut pid: libc::pid_t = 0;
    // SAFETY: `fa`, `attr`, `empty` and `all` are locals: zeroed (a valid bit pattern for these
    // C structs) and then set up by their init functions (`sigemptyset`/`sigfillset` for the
    // sets) before any other use; `fa` and `attr` are destroyed exactly once, after the spawn,
    // and not used again. The dup2 sources are descriptors of `OwnedFd`s that stay open until
    // the `drop` below. `shim` is a NUL-terminated `CString`; `argv_p`/`envp_p` are
    // null-terminated arrays of pointers into the `CString`s of `argv`/`envp`, all of which
    // outlive the call; `pid` is a local written by posix_spawn. The ruleset, if any, is an
    // `OwnedFd` of `sandbox` (alive across the call) numbered 10 or above, so the dup2s before
    // it cannot have clobbered it. (The init/adddup2/set* return
    // codes are not checked: on glibc only adddup2 can fail, with ENOMEM, which would leave a
    // descriptor unmapped in the shim, a correctness matter and not a memory-safety one.)
    let rc = unsafe {
        let mut fa: libc::posix_spawn_file_actions_t = std::mem::zeroed();
        let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
        libc::posix_spawn_file_actions_init(&mut fa);
        libc::posix_spawnattr_init(&mut attr);
        libc::posix_spawn_file_actions_adddup2(&mut fa, in_r.as_raw_fd(), 0);
        libc::posix_spawn_file_actions_adddup2(&mut fa, out_w.as_raw_fd(), 1);
        libc::posix_spawn_file_actions_adddup2(&mut fa, err_w.as_raw_fd(), 2);
        libc::posix_spawn_file_actions_adddup2(&mut fa, status_w.as_raw_fd(), 3);
        if let Some(ruleset) = sandbox.and_then(Prepared::ruleset) {
            libc::posix_spawn_file_actions_adddup2(&mut fa, ruleset.as_raw_fd(), 4);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::posix_spawnattr_setsigmask(&mut attr, &empty);
        libc::posix_spawnattr_setsigdefault(&mut attr, &all);
        let flags = libc::POSIX_SPAWN_SETSID
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
        libc::posix_spawnattr_setflags(&mut attr, flags);
        let rc = libc::posix_spawn(&mut pid, shim.as_ptr(), &fa, &attr, argv_p.as_ptr(), envp_p.as_ptr());
        libc::posix_spawn_file_actions_destroy(&mut fa);
        libc::posix_spawnattr_destroy(&mut attr);
        rc
    };
    drop((status_w, out_w, err_w, in_r));
    if rc != 0 {
        return Err(ShimError::Shim(io::Error::from_raw_os_error(rc)));
    }
    // The first message: started, or why the command could not start.
    let mut first = [0u8; 8];
    let mut got = 0;
    while got < 8 {
        // SAFETY: read(2) writes at most `8 - got` bytes, exactly the length of `first[got..]`
        // (a local array; `got < 8` here); `status_r` is an open descriptor we own.
        let n = unsafe { libc::read(status_r.as_raw_fd(), first[got..].as_mut_ptr().cast(), 8 - got) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    let kind = i32::from_ne_bytes([first[0], first[1], first[2], first[3]]);
    let value = i32::from_ne_bytes([first[4], first[5], first[6], first[7]]);
    match (got, kind) {
        (8, 1) => {}
        (8, 2) => {
            reap(pid);
            return Err(ShimError::Command(io::Error::from_raw_os_error(value)));
        }
        (8, 4) => {
            reap(pid);
            return Err(ShimError::Sandbox(Failure::from_child(value >> 16, value & 0xffff)));
        }
        _ => {
            reap(pid);
            return Err(ShimError::Shim(io::Error::other(
                "the process shim exited before starting the command",
            )));
        }
    }
    let rx = |fd: OwnedFd| pipe::Receiver::from_owned_fd(fd);
    let tree = (|| -> io::Result<Tree> {
        Ok(Tree {
            pid,
            grace: spec.grace,
            reaped: false,
            stdin: in_w.map(pipe::Sender::from_owned_fd).transpose()?,
            stdout: Some(rx(out_r)?),
            stderr: Some(rx(err_r)?),
            backend: Backend::Shim { status: Some(rx(status_r)?), buf: Vec::new(), exit: None },
            sandbox: None,
        })
    })();
    match tree {
        Ok(t) => {
            add_live(pid);
            Ok(t)
        }
        Err(e) => {
            // SAFETY: kill(2) takes no pointers; `pid` is the shim we just spawned and have not
            // reaped (the `reap` follows), so the pid is still ours.
            unsafe { libc::kill(pid, libc::SIGUSR1) };
            reap(pid);
            Err(ShimError::Command(e))
        }
    }
}

#[cfg(eddie_shim)]
/// Start `spec` under the in-process fork shim. A sandbox that cannot be set up fails the
/// spawn with an errno made by `sandbox_child::encode`.
fn spawn_fork(spec: &Spec<'_>, sandbox: Option<std::sync::Arc<Prepared>>) -> io::Result<Tree> {
    use std::os::unix::process::CommandExt;
    let (status_read, status_write) = pipe_pair()?;
    let cfg = ShimCfg {
        // SAFETY: getpid(2) takes no arguments, always succeeds and touches no memory of ours.
        parent: unsafe { libc::getpid() },
        status_fd: status_write.as_raw_fd(),
        grace_ms: i64::try_from(spec.grace.as_millis()).unwrap_or(i64::MAX),
    };
    let mut cmd = spec.std_command();
    // SAFETY: `pre_exec` requires the closure to be safe to run in a child forked from this
    // multi-threaded process: async-signal-safe calls only, no allocation, locks or panics, and
    // no misuse of the duplicated descriptors and mappings. `shim` (and `run_shim` after it)
    // only makes raw system calls and async-signal-safe libc calls on locals and on the
    // `Copy` `cfg` moved into the closure; its indexing is bounds-checked against the sizes
    // it fills (see each block). The sandbox (`sandbox_child::apply`, allocation-free) reads
    // the `Prepared` the closure owns, built before the fork. The shim child closes every
    // descriptor but the status pipe, never returns into Rust code that could use the closed
    // ones, and ends with `_exit`; the grandchild returns `Ok` and goes on to exec like any
    // `Command` child.
    unsafe {
        cmd.pre_exec(move || shim(&cfg, sandbox.as_deref()));
    }
    let child = tokio::process::Command::from(cmd).kill_on_drop(false).spawn()?;
    drop(status_write);
    adopt(child, spec.grace, |child| Backend::Fork { child, status: Some(status_read) })
}

/// Start `spec` as the leader of a new process group (where there is no subreaper).
#[cfg(all(unix, not(eddie_shim), not(eddie_kq)))]
fn spawn_group(spec: &Spec<'_>) -> io::Result<Tree> {
    let mut cmd = tokio::process::Command::new(spec.program);
    cmd.args(spec.args)
        .current_dir(spec.cwd)
        .stdin(if spec.stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    if let Some(env) = spec.env {
        cmd.env_clear().envs(env);
    }
    let child = cmd.spawn()?;
    adopt(child, spec.grace, |child| Backend::Group {
        child,
        done: std::sync::Arc::new(AtomicBool::new(false)),
    })
}

/// Windows: start `spec` suspended, put it in a new Job Object (kill-on-close), resume it.
#[cfg(windows)]
fn spawn_job(spec: &Spec<'_>) -> io::Result<Tree> {
    let job = std::sync::Arc::new(Job::new()?);
    let mut cmd = tokio::process::Command::new(spec.program);
    cmd.args(spec.args)
        .current_dir(spec.cwd)
        .stdin(if spec.stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .creation_flags(job::CREATE_SUSPENDED | job::CREATE_NO_WINDOW)
        .kill_on_drop(false);
    if let Some(env) = spec.env {
        cmd.env_clear().envs(env);
    }
    let mut child = cmd.spawn()?;
    let adopted = match (child.raw_handle(), child.id()) {
        (Some(handle), Some(pid)) => job.adopt(handle, pid),
        _ => Err(io::Error::other("the command exited before it started")),
    };
    if let Err(e) = adopted {
        // Never let it run outside the job.
        let _ = child.start_kill();
        return Err(e);
    }
    let tree = adopt(child, spec.grace, |child| Backend::Job { child, job: std::sync::Arc::clone(&job) })?;
    if let Ok(mut j) = jobs().lock() {
        j.insert(tree.pid, job);
    }
    Ok(tree)
}

/// The [`Tree`] of a started tokio `child` (its pid, its stdio pipes, `backend` made from it),
/// counted as live.
fn adopt(
    mut child: tokio::process::Child,
    grace: Duration,
    backend: impl FnOnce(tokio::process::Child) -> Backend,
) -> io::Result<Tree> {
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
    let (stdin, stdout, stderr) = pipes(&mut child)?;
    add_live(pid);
    Ok(Tree { pid, grace, reaped: false, stdin, stdout, stderr, backend: backend(child), sandbox: None })
}

/// The stdio pipes of a started tokio `child`, taken out of it.
#[cfg(unix)]
fn pipes(
    child: &mut tokio::process::Child,
) -> io::Result<(Option<InPipe>, Option<OutPipe>, Option<OutPipe>)> {
    let stdin =
        child.stdin.take().map(|s| s.into_owned_fd().and_then(pipe::Sender::from_owned_fd)).transpose()?;
    let stdout =
        child.stdout.take().map(|s| s.into_owned_fd().and_then(pipe::Receiver::from_owned_fd)).transpose()?;
    let stderr =
        child.stderr.take().map(|s| s.into_owned_fd().and_then(pipe::Receiver::from_owned_fd)).transpose()?;
    Ok((stdin, stdout, stderr))
}

/// The stdio pipes of a started tokio `child`, taken out of it.
#[cfg(windows)]
fn pipes(
    child: &mut tokio::process::Child,
) -> io::Result<(Option<InPipe>, Option<OutPipe>, Option<OutPipe>)> {
    let stdout = child.stdout.take().map(|s| OutPipe(Box::pin(s)));
    let stderr = child.stderr.take().map(|s| OutPipe(Box::pin(s)));
    Ok((child.stdin.take(), stdout, stderr))
}

/// The name of a signal number (`SIGTERM`).
#[cfg(unix)]
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return format!("SIG{sig}"),
    };
    name.to_owned()
}

/// The signal number of a name (`SIGTERM`, `TERM`), for signals a caller may send.
#[cfg(unix)]
pub fn signal_number(name: &str) -> Option<i32> {
    let n = name.trim().to_ascii_uppercase();
    let n = n.strip_prefix("SIG").unwrap_or(&n);
    Some(match n {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "TERM" => libc::SIGTERM,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        _ => return None,
    })
}

/// `(exit code, signal name)` of a wait status.
#[cfg(unix)]
pub fn describe(status: ExitStatus) -> (Option<i32>, Option<String>) {
    (status.code(), status.signal().map(signal_name))
}

/// `(exit code, signal name)` of an exit status. Windows has no signals: a tree the
/// supervisor ended reports the signal it stands for on Linux (`SIGTERM`: terminated, `SIGKILL`:
/// killed at once), so results read the same on every platform.
#[cfg(windows)]
pub fn describe(status: ExitStatus) -> (Option<i32>, Option<String>) {
    match status.code().map(|c| c as u32) {
        Some(job::TERM_CODE) => (None, Some("SIGTERM".to_owned())),
        Some(job::KILL_CODE) => (None, Some("SIGKILL".to_owned())),
        _ => (status.code(), None),
    }
}

// ---- the shim (runs in the forked child; async-signal-safe only) --------------------------

#[cfg(eddie_shim)]
#[derive(Clone, Copy)]
struct ShimCfg {
    parent: libc::pid_t,
    status_fd: libc::c_int,
    grace_ms: i64,
}

#[cfg(eddie_shim)]
/// Runs in the child between fork and exec. Returns `Ok` only in the grandchild, which `std`
/// then turns into the command; the shim itself never returns.
fn shim(cfg: &ShimCfg, sandbox: Option<&Prepared>) -> io::Result<()> {
    // SAFETY: setsid(2) takes no arguments; in this freshly forked child it only detaches us
    // into a new session (we are not a group leader, so it succeeds).
    if unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: prctl with these options takes integer arguments only (no pointers) and only
    // changes this process's own subreaper flag and parent-death signal.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
    }
    // SAFETY: getppid(2) takes no arguments and always succeeds.
    if unsafe { libc::getppid() } != cfg.parent {
        // SAFETY: _exit(2) ends this forked child at once, without atexit handlers or
        // flushing the stdio buffers it inherited from the parent.
        unsafe { libc::_exit(1) };
    }
    // SAFETY: getpid(2) takes no arguments and always succeeds.
    let me = unsafe { libc::getpid() };
    // SAFETY: all-zero is a valid `sigset_t` (an array of integers); sigemptyset/sigaddset
    // write only into `set`, a local, and the signal numbers are valid; sigprocmask reads `set`
    // and writes the previous mask into the local `old`.
    let (set, old) = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGCHLD, libc::SIGTERM, libc::SIGUSR1, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        (set, old)
    };
    // SAFETY: fork(2) takes no arguments and is async-signal-safe (POSIX.1-2017). This child
    // is single-threaded (only the forking thread survives a fork) and glibc re-initialised
    // its fork-time locks in it, so none can be held by a vanished thread. The parent branch
    // goes on in `run_shim`; the child branch makes only the calls below and returns to std's
    // pre-exec path, which execs the command.
    let main = unsafe { libc::fork() };
    if main < 0 {
        return Err(io::Error::last_os_error());
    }
    if main == 0 {
        // SAFETY: sigprocmask reads the local `old` (filled above) and is given no out
        // pointer; prctl takes integers only; getppid takes nothing.
        let orphaned = unsafe {
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::getppid() != me
        };
        if orphaned {
            // SAFETY: as above, _exit(2) ends this child without running any Rust or C
            // clean-up inherited from the parent.
            unsafe { libc::_exit(1) };
        }
        if let Some(p) = sandbox.filter(|p| p.flags() != 0) {
            let fd = p.ruleset().map_or(-1, |r| r.as_raw_fd());
            // SAFETY: this is the command's freshly forked, single-threaded child, about to
            // exec; `apply` allocates nothing and only makes async-signal-safe calls.
            if let Err((step, errno)) = unsafe { sandbox_child::apply(&p.child(fd)) } {
                return Err(io::Error::from_raw_os_error(sandbox_child::encode(step, errno)));
            }
            // SAFETY: prctl takes integers only.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        }
        return Ok(());
    }
    // SAFETY: we are the forked shim child (single-threaded, between fork and exec), which
    // is what `run_shim` requires: it closes the descriptors we inherited and never returns.
    unsafe { run_shim(me, main, cfg, &set) }
}

#[cfg(eddie_shim)]
/// One row of the process table (pid and parent pid only here: the shim is a subreaper, so
/// parent links reach every member).
type Row = walk::Proc;

#[cfg(eddie_shim)]
const TABLE_ROWS: usize = 65_536;

#[cfg(eddie_shim)]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Terminating(i64),
    Killing,
}

#[cfg(eddie_shim)]
/// `CLOCK_MONOTONIC` in milliseconds.
fn now_ms() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime(2) writes one `timespec` through its pointer, here the local
    // `ts`; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
}

#[cfg(eddie_shim)]
/// The shim's life after the fork: reap, signal the tree as told, report the command's
/// status on `cfg.status_fd`, exit.
///
/// # Safety
///
/// Only for the shim child forked by [`shim`]: a single-threaded process between fork and
/// exec, where only async-signal-safe calls may be made. It closes every descriptor but
/// `cfg.status_fd` (which any `OwnedFd` of the process may still name) and never returns,
/// ending with `_exit`.
unsafe fn run_shim(me: libc::pid_t, main: libc::pid_t, cfg: &ShimCfg, set: &libc::sigset_t) -> ! {
    // SAFETY: our caller guarantees we are the forked shim child that never returns into
    // code using the descriptors this closes.
    unsafe { close_all_but(cfg.status_fd) };
    let bytes = TABLE_ROWS * std::mem::size_of::<Row>();
    // SAFETY: a fresh private anonymous mapping (no address hint, no descriptor): it cannot
    // overlap memory we use. mmap is a plain system call (no allocator lock).
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    let mut fallback = [Row::default(); 512];
    let table: &mut [Row] = if map == libc::MAP_FAILED {
        &mut fallback
    } else {
        // SAFETY: the mapping succeeded: `bytes` = TABLE_ROWS rows, readable and writable,
        // page-aligned (more than `Row`'s 8-byte alignment), zero-filled (a valid `Row`: integers
        // and a `false`), and
        // referenced by nothing else; it is never unmapped, as the process ends with `_exit`.
        unsafe { std::slice::from_raw_parts_mut(map.cast::<Row>(), TABLE_ROWS) }
    };
    let mut main_status: Option<libc::c_int> = None;
    let mut phase = Phase::Running;
    loop {
        let mut any_left = true;
        loop {
            let mut st: libc::c_int = 0;
            // SAFETY: waitpid(2) writes one c_int through its pointer, the local `st`.
            let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if r > 0 {
                if r == main {
                    main_status = Some(st);
                }
                continue;
            }
            // SAFETY: __errno_location returns this thread's errno slot, valid for reads for
            // the thread's lifetime.
            if r < 0 && unsafe { *libc::__errno_location() } == libc::EINTR {
                continue;
            }
            if r < 0 {
                any_left = false;
            }
            break;
        }
        if !any_left {
            if let Some(st) = main_status {
                let raw = st.to_ne_bytes();
                // SAFETY: write(2) reads `raw.len()` bytes from the local `raw`; `status_fd`
                // is the status pipe, the one descriptor we kept open.
                unsafe { libc::write(cfg.status_fd, raw.as_ptr().cast(), raw.len()) };
                // SAFETY: _exit(2) ends the shim without any clean-up inherited from the parent.
                unsafe { libc::_exit(0) };
            }
            // SAFETY: as above.
            unsafe { libc::_exit(1) };
        }
        let now = now_ms();
        if main_status.is_some() && phase == Phase::Running {
            // The command is done: whatever it left behind goes now.
            phase = Phase::Killing;
        }
        if let Phase::Terminating(deadline) = phase
            && now >= deadline
        {
            phase = Phase::Killing;
        }
        // SAFETY: getppid(2) takes no arguments and always succeeds.
        if phase == Phase::Running && unsafe { libc::getppid() } != cfg.parent {
            // Our parent died and the death signal was missed: terminate.
            signal_tree(me, libc::SIGTERM, table);
            phase = Phase::Terminating(now + cfg.grace_ms);
        }
        if phase == Phase::Killing {
            signal_tree(me, libc::SIGKILL, table);
        }
        let wait_ms = match phase {
            Phase::Running => 1000,
            Phase::Terminating(deadline) => (deadline - now).clamp(1, 1000),
            Phase::Killing => 5,
        };
        let ts = libc::timespec { tv_sec: wait_ms / 1000, tv_nsec: (wait_ms % 1000) * 1_000_000 };
        // SAFETY: all-zero is a valid `siginfo_t` (integers and integer unions);
        // sigtimedwait(2) reads `set` (initialised by `shim`) and the local `ts`, and writes
        // one `siginfo_t` into the local `info`.
        let (sig, info) = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            (libc::sigtimedwait(set, &mut info, &ts), info)
        };
        if sig == libc::SIGTERM || sig == libc::SIGUSR1 {
            // Only our parent (or its death, sent on its behalf) may stop the tree; a
            // command signalling its own process group must not.
            // SAFETY: `si_pid` reads an i32 of the union; `info` was zero-initialised and
            // filled by the kernel, and for SIGTERM/SIGUSR1 (sent by kill or as the parent-
            // death signal) the sender-pid layout is the one the kernel wrote.
            let from = unsafe { info.si_pid() };
            if from != cfg.parent && from != 0 {
                continue;
            }
            if sig == libc::SIGUSR1 {
                phase = Phase::Killing;
            } else if phase == Phase::Running {
                signal_tree(me, libc::SIGTERM, table);
                phase = Phase::Terminating(now_ms() + cfg.grace_ms);
            }
        }
    }
}

#[cfg(eddie_shim)]
/// Close every descriptor except `keep` (the stdio pipes too: only the command holds them).
///
/// # Safety
///
/// Closes descriptors that `OwnedFd`s, `File`s or std itself may own: only for a process
/// that never again runs code using them (the forked shim, which ends with `_exit`).
unsafe fn close_all_but(keep: libc::c_int) {
    // SAFETY: close_range(2) takes integers only; closing descriptors others may own is what
    // our caller guarantees to be harmless.
    let (lo, hi) = unsafe {
        (
            libc::syscall(libc::SYS_close_range, 0u32, (keep - 1).max(0) as u32, 0u32),
            libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32),
        )
    };
    if lo != 0 || hi != 0 || keep == 0 {
        for fd in 0..4096 {
            if fd != keep {
                // SAFETY: close(2) takes an integer; see above for why closing is harmless.
                unsafe { libc::close(fd) };
            }
        }
    }
}

#[cfg(eddie_shim)]
/// Send `sig` to every descendant of `me`, found through `/proc/<pid>/stat` parent links.
fn signal_tree(me: libc::pid_t, sig: libc::c_int, table: &mut [Row]) {
    let n = scan_proc(table);
    let rows = &mut table[..n];
    walk::mark_tree(me, rows, &[]);
    for r in rows.iter() {
        if r.mark && r.pid != me {
            // SAFETY: kill(2) takes no pointers. Each marked pid descends from us, the
            // subreaper, so it is our (possibly indirect) child and not reused.
            unsafe { libc::kill(r.pid, sig) };
        }
    }
}

#[cfg(eddie_shim)]
/// Fill `table` with `(pid, ppid)` of every process; the number of rows.
fn scan_proc(table: &mut [Row]) -> usize {
    // SAFETY: the path is a NUL-terminated literal; open(2) only reads it.
    let dir = unsafe { libc::open(c"/proc".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if dir < 0 {
        return 0;
    }
    let mut n = 0usize;
    let mut buf = [0u8; 4096];
    'outer: loop {
        // SAFETY: getdents64(2) writes at most `buf.len()` bytes into the local `buf`; `dir`
        // is the directory descriptor opened above.
        let got = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        if got <= 0 {
            break;
        }
        let got = got as usize;
        let mut off = 0usize;
        // Each record: d_ino (8), d_off (8), d_reclen (2), d_type (1), NUL-terminated name.
        while off + 19 < got {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen < 20 {
                break;
            }
            let name = &buf[off + 19..(off + reclen).min(got)];
            off += reclen;
            let Some(pid) = parse_pid(name) else { continue };
            if n >= table.len() {
                break 'outer;
            }
            if let Some(ppid) = read_ppid(pid) {
                table[n] = Row { pid, ppid, ..Row::default() };
                n += 1;
            }
        }
    }
    // SAFETY: `dir` is the descriptor opened above, closed once.
    unsafe { libc::close(dir) };
    n
}

#[cfg(eddie_shim)]
/// A NUL-terminated all-digit directory name as a pid.
fn parse_pid(name: &[u8]) -> Option<i32> {
    let mut v: i32 = 0;
    let mut digits = 0;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(i32::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0).then_some(v)
}

#[cfg(eddie_shim)]
/// The parent pid from `/proc/<pid>/stat` (`pid (comm) S ppid ...`; comm may hold `)`).
fn read_ppid(pid: i32) -> Option<i32> {
    let mut path = [0u8; 32];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut i = prefix.len();
    i += sandbox_child::write_decimal(pid.unsigned_abs(), &mut path[i..]);
    for &b in b"/stat\0" {
        path[i] = b;
        i += 1;
    }
    let mut buf = [0u8; 512];
    // SAFETY: `path` is NUL-terminated (the loop above wrote "/stat\0" after at most 6 + 10
    // bytes, well inside its 32); read(2) writes at most `buf.len()` bytes into the local
    // `buf`; `fd` is the descriptor just opened, closed once.
    let got = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let got = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        got
    };
    if got <= 0 {
        return None;
    }
    let text = &buf[..got as usize];
    let close = text.iter().rposition(|&b| b == b')')?;
    // ") S ppid"
    let rest = text.get(close + 4..)?;
    let mut v: i32 = 0;
    let mut digits = 0;
    for &b in rest {
        if !b.is_ascii_digit() {
            break;
        }
        v = v.checked_mul(10)?.checked_add(i32::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(s) => !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
            Err(_) => false,
        }
    }

    async fn gone(pid: i32) -> bool {
        for _ in 0..100 {
            if !alive(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        !alive(pid)
    }

    fn sh(script: &str, cwd: &Path) -> Tree {
        let args = [OsString::from("-c"), OsString::from(script)];
        Tree::spawn(&Spec {
            program: OsStr::new("/bin/sh"),
            args: &args,
            cwd,
            env: None,
            stdin: false,
            grace: DEFAULT_GRACE,
            sandbox: None,
        })
        .unwrap()
    }

    async fn read_all(mut r: impl tokio::io::AsyncRead + Unpin) -> String {
        let mut s = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut r, &mut s).await.unwrap();
        s
    }

    #[tokio::test]
    async fn exit_status_is_the_commands_own() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = sh("echo hi; exit 7", dir.path());
        let out = read_all(t.take_stdout().unwrap()).await;
        let st = t.wait().await.unwrap();
        assert_eq!((out.as_str(), st.code()), ("hi\n", Some(7)));
        let mut t = sh("kill -SEGV $$", dir.path());
        assert_eq!(describe(t.wait().await.unwrap()), (None, Some("SIGSEGV".into())));
    }

    #[tokio::test]
    async fn missing_program_or_cwd_is_a_spawn_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = Tree::spawn(&Spec {
            program: OsStr::new("definitely-not-a-program-xyz"),
            args: &[],
            cwd: dir.path(),
            env: None,
            stdin: false,
            grace: DEFAULT_GRACE,
            sandbox: None,
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = Tree::spawn(&Spec {
            program: OsStr::new("/bin/true"),
            args: &[],
            cwd: &dir.path().join("missing"),
            env: None,
            stdin: false,
            grace: DEFAULT_GRACE,
            sandbox: None,
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[cfg(eddie_shim)]
    #[tokio::test]
    async fn leftovers_and_double_forked_daemons_die_with_the_command() {
        let dir = tempfile::tempdir().unwrap();
        // A background child, and a daemon that leaves the session and double-forks.
        let script = "sleep 100 & echo $! > bg; \
                      (setsid sh -c 'sleep 100 & echo $! > daemon' &) ; \
                      while [ ! -s daemon ]; do sleep 0.01; done";
        let mut t = sh(script, dir.path());
        let st = t.wait().await.unwrap();
        assert_eq!(st.code(), Some(0));
        for f in ["bg", "daemon"] {
            let pid: i32 = std::fs::read_to_string(dir.path().join(f)).unwrap().trim().parse().unwrap();
            assert!(gone(pid).await, "{f} {pid} survived");
        }
    }

    #[cfg(eddie_shim)]
    #[tokio::test]
    async fn terminate_kills_the_tree_within_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        let script = "trap '' TERM; (setsid sh -c 'trap \"\" TERM; sleep 100 & echo $! > daemon; wait' &); \
                      sleep 100 & echo $! > bg; wait";
        let mut t = sh(script, dir.path());
        while !dir.path().join("daemon").exists() || !dir.path().join("bg").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let start = Instant::now();
        let st = t.shutdown(Duration::from_secs(2)).await.unwrap();
        let took = start.elapsed();
        // The shell ignores SIGTERM, so it dies by SIGKILL after the grace.
        assert_eq!(describe(st).1.as_deref(), Some("SIGKILL"));
        assert!(took >= Duration::from_millis(900) && took < Duration::from_millis(2500), "{took:?}");
        for f in ["bg", "daemon"] {
            let pid: i32 = std::fs::read_to_string(dir.path().join(f)).unwrap().trim().parse().unwrap();
            assert!(gone(pid).await, "{f} {pid} survived");
        }
    }

    #[cfg(eddie_shim)]
    #[tokio::test]
    async fn the_tree_cannot_stop_its_own_shim() {
        let dir = tempfile::tempdir().unwrap();
        // `kill 0` signals the whole process group, the shim included; it must carry on.
        let mut t = sh("trap '' TERM USR1; kill -TERM 0; kill -USR1 0; sleep 0.2; echo done", dir.path());
        let out = read_all(t.take_stdout().unwrap()).await;
        assert_eq!(out, "done\n");
        assert_eq!(t.wait().await.unwrap().code(), Some(0));
    }

    #[tokio::test]
    async fn drop_kills_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let t = sh("sleep 100 & echo $! > bg; wait", dir.path());
        // The shell creates `bg` before it writes the pid into it: wait for the whole line.
        let pid: i32 = loop {
            let text = std::fs::read_to_string(dir.path().join("bg")).unwrap_or_default();
            if text.ends_with('\n') {
                break text.trim().parse().unwrap();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        drop(t);
        assert!(gone(pid).await);
    }

    #[cfg(eddie_shim)]
    #[tokio::test]
    async fn the_spawned_shim_is_used_and_the_fork_fallback_works_too() {
        if std::env::var_os("EDDIE_TOOLS_SHIM").is_none() {
            assert_eq!((backend(), shim_failure()), ("spawn", None));
        }
        let dir = tempfile::tempdir().unwrap();
        let args = [
            OsString::from("-c"),
            OsString::from(
                "(setsid sh -c 'sleep 100 & echo $! > daemon' &); while [ ! -s daemon ]; do sleep 0.01; done; exit 4",
            ),
        ];
        let mut t = spawn_fork(
            &Spec {
                program: OsStr::new("/bin/sh"),
                args: &args,
                cwd: dir.path(),
                env: None,
                stdin: false,
                grace: DEFAULT_GRACE,
                sandbox: None,
            },
            None,
        )
        .unwrap();
        assert_eq!(t.wait().await.unwrap().code(), Some(4));
        let pid: i32 = std::fs::read_to_string(dir.path().join("daemon")).unwrap().trim().parse().unwrap();
        assert!(gone(pid).await, "daemon {pid} survived the fork backend");
    }

    #[cfg(eddie_shim)]
    #[tokio::test]
    async fn the_fork_backend_puts_the_command_in_its_sandbox_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = crate::workspace::realpath(dir.path()).unwrap();
        let (ws, outside) = (root.join("ws"), root.join("outside"));
        for d in [&ws, &outside] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(outside.join("e"), "e").unwrap();
        let env: HashMap<String, String> = [
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
            ("TMPDIR".to_owned(), ws.to_string_lossy().into_owned()),
        ]
        .into_iter()
        .collect();
        let ctx = crate::Ctx::new(ws.to_str().unwrap()).unwrap().with_env(env.clone());
        let plan = sandbox::plan(&ctx).unwrap();
        assert!(plan.enforced());
        let script = format!(
            "(echo x > {o}/f) 2>/dev/null && echo wrote; (chmod 600 {o}/e) 2>/dev/null && echo chmod; echo in > in",
            o = outside.display()
        );
        let args = [OsString::from("-c"), OsString::from(script)];
        let spec = Spec {
            program: OsStr::new("/bin/sh"),
            args: &args,
            cwd: &ws,
            env: Some(&env),
            stdin: false,
            grace: DEFAULT_GRACE,
            sandbox: None,
        };
        let mut t = spawn_fork(&spec, Some(plan.prepare(&ws).unwrap())).unwrap();
        let out = read_all(t.take_stdout().unwrap()).await;
        assert_eq!((out.as_str(), t.wait().await.unwrap().code()), ("", Some(0)));
        assert!(!outside.join("f").exists() && ws.join("in").exists());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(outside.join("e")).unwrap().permissions().mode() & 0o777, 0o644);
        // A layer that cannot be set up fails the spawn, named as the sandbox step it was.
        let e = spawn_fork(&spec, Some(sandbox::Prepared::unprepared(sandbox_child::LANDLOCK))).unwrap_err();
        let (step, _) = sandbox_child::decode(e.raw_os_error().unwrap()).unwrap();
        assert_eq!(step, sandbox_child::STEP_LANDLOCK);
        // And through the shim, the same layer fails the same way.
        let shim = shim_path().unwrap();
        match spawn_shim(shim, &spec, Some(&sandbox::Prepared::unprepared(sandbox_child::LANDLOCK))) {
            Err(ShimError::Sandbox(f)) => assert_eq!(f.step, sandbox_child::STEP_LANDLOCK),
            Err(ShimError::Command(e) | ShimError::Shim(e)) => panic!("not a sandbox failure: {e}"),
            Ok(_) => panic!("started without its sandbox"),
        }
    }

    #[cfg(eddie_shim)]
    #[test]
    fn signal_names_round_trip() {
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_number("term"), Some(libc::SIGTERM));
        assert_eq!(signal_number("SIGKILL"), Some(libc::SIGKILL));
        assert_eq!(signal_number("SIGSEGV"), None);
        assert_eq!(parse_pid(b"123\0"), Some(123));
        assert_eq!(parse_pid(b"self\0"), None);
    }
}
