//! The process supervisor: every command runs as an orphan-proof *tree*.
//!
//! A plain process group is not enough to own everything a command starts: a child can call
//! `setsid` (or double-fork, as daemons do) and leave the group, and its orphans are then
//! adopted by init. So every command is started under a small *shim*: the forked child does
//! not exec, but
//!
//! 1. starts a new session (so `killpg` and terminals do not mix trees),
//! 2. becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`): every orphan of the tree, double-
//!    forked daemons included, is re-parented to the shim instead of init,
//! 3. asks for `SIGTERM` when its parent dies (`PR_SET_PDEATHSIG`), so a crashed or exiting
//!    Node process takes its trees with it,
//! 4. forks the real command (which gets `PR_SET_PDEATHSIG(SIGKILL)` and is then exec'd by
//!    `std`), closes every descriptor it inherited, and reaps.
//!
//! When the command exits, the shim kills whatever it left behind (`SIGKILL`), waits until its
//! subtree is empty, hands the command's exact wait status back through a pipe and exits. On
//! [`Tree::terminate`] it sends `SIGTERM` to every process of its subtree, gives them
//! [`Tree::grace`], then `SIGKILL`s the rest; on [`Tree::kill_now`] (also on drop) it kills at
//! once. Because the shim is the subreaper, "its subtree" is exact: found by walking
//! `/proc/*/stat` parent links down from the shim.
//!
//! The shim runs between `fork` and `exec` of a multi-threaded process, so it only makes
//! async-signal-safe system calls, on stack or `mmap`ped buffers; it never allocates.

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

/// Default time between `SIGTERM` and `SIGKILL`.
pub const DEFAULT_GRACE: Duration = Duration::from_millis(1000);

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
}

/// A running command tree (its shim is our child).
#[derive(Debug)]
pub struct Tree {
    child: Child,
    pid: i32,
    status: Option<OwnedFd>,
    grace: Duration,
    reaped: bool,
}

fn live() -> &'static Mutex<HashSet<i32>> {
    static LIVE: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Ask every live tree of this process to terminate (`SIGTERM`, grace, `SIGKILL`). For exit
/// hooks: it only sends signals and returns at once; the shims finish the job.
pub fn terminate_all() -> usize {
    let pids: Vec<i32> = live().lock().map(|l| l.iter().copied().collect()).unwrap_or_default();
    for &pid in &pids {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    pids.len()
}

/// How many trees are alive.
pub fn live_count() -> usize {
    live().lock().map(|l| l.len()).unwrap_or(0)
}

impl Tree {
    /// Start `spec` under a shim. `Err` is the spawn error of the command itself (`ENOENT`
    /// for a missing program or working directory), as `std` reports it.
    pub fn spawn(spec: &Spec<'_>) -> io::Result<Self> {
        let (status_read, status_write) = pipe()?;
        let cfg = ShimCfg {
            // SAFETY: getpid has no preconditions.
            parent: unsafe { libc::getpid() },
            status_fd: status_write.as_raw_fd(),
            grace_ms: i64::try_from(spec.grace.as_millis()).unwrap_or(i64::MAX),
        };
        let mut cmd = tokio::process::Command::new(spec.program);
        cmd.args(spec.args)
            .current_dir(spec.cwd)
            .stdin(if spec.stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Killing the shim would orphan the tree: Drop asks it to kill instead.
            .kill_on_drop(false);
        if let Some(env) = spec.env {
            cmd.env_clear().envs(env);
        }
        // SAFETY: the closure only makes async-signal-safe system calls and never allocates
        // (see `shim`).
        unsafe {
            cmd.pre_exec(move || shim(&cfg));
        }
        let child = cmd.spawn()?;
        drop(status_write);
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        if let Ok(mut l) = live().lock() {
            l.insert(pid);
        }
        Ok(Self { child, pid, status: Some(status_read), grace: spec.grace, reaped: false })
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
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The command's stdout pipe.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The command's stderr pipe.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    fn signal(&self, sig: i32) {
        if self.pid > 0 && !self.reaped {
            // SAFETY: kill has no memory-safety preconditions; the shim is our unreaped
            // child, so its pid cannot have been reused.
            unsafe { libc::kill(self.pid, sig) };
        }
    }

    /// `SIGTERM` to every process of the tree, `SIGKILL` to what is left after the grace.
    pub fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// `SIGKILL` to every process of the tree, now.
    pub fn kill_now(&self) {
        self.signal(libc::SIGUSR1);
    }

    /// Wait until the whole tree is gone; the command's own exit status.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let shim = self.child.wait().await?;
        self.reaped = true;
        if let Ok(mut l) = live().lock() {
            l.remove(&self.pid);
        }
        let mut raw = [0u8; 4];
        let got = match self.status.take() {
            Some(fd) => {
                let mut file = std::fs::File::from(fd);
                io::Read::read(&mut file, &mut raw).unwrap_or(0)
            }
            None => 0,
        };
        Ok(if got == 4 { ExitStatus::from_raw(i32::from_ne_bytes(raw)) } else { shim })
    }

    /// [`Tree::terminate`], then wait; if the shim itself does not finish within the grace
    /// plus `slack`, the whole process group is killed as a last resort.
    pub async fn shutdown(&mut self, slack: Duration) -> io::Result<ExitStatus> {
        self.terminate();
        match tokio::time::timeout(self.grace + slack, self.wait()).await {
            Ok(r) => r,
            Err(_) => {
                self.kill_now();
                if let Ok(r) = tokio::time::timeout(slack, self.wait()).await {
                    return r;
                }
                // SAFETY: killpg has no memory-safety preconditions.
                unsafe { libc::killpg(self.pid, libc::SIGKILL) };
                self.wait().await
            }
        }
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if !self.reaped {
            // Tokio reaps the shim in the background once it exits.
            self.kill_now();
            if let Ok(mut l) = live().lock() {
                l.remove(&self.pid);
            }
        }
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The name of a signal number (`SIGTERM`).
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

/// The signal number of a name (`SIGTERM`, `TERM`, `15`), for signals a caller may send.
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
pub fn describe(status: ExitStatus) -> (Option<i32>, Option<String>) {
    (status.code(), status.signal().map(signal_name))
}

// ---- the shim (runs in the forked child; async-signal-safe only) --------------------------

#[derive(Clone, Copy)]
struct ShimCfg {
    parent: libc::pid_t,
    status_fd: libc::c_int,
    grace_ms: i64,
}

/// Runs in the child between fork and exec. Returns `Ok` only in the grandchild, which `std`
/// then turns into the command; the shim itself never returns.
fn shim(cfg: &ShimCfg) -> io::Result<()> {
    // SAFETY (whole function): plain system calls on valid pointers to locals.
    unsafe {
        if libc::setsid() < 0 {
            return Err(io::Error::last_os_error());
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
        if libc::getppid() != cfg.parent {
            libc::_exit(1);
        }
        let me = libc::getpid();
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGCHLD, libc::SIGTERM, libc::SIGUSR1, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        let main = libc::fork();
        if main < 0 {
            return Err(io::Error::last_os_error());
        }
        if main == 0 {
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != me {
                libc::_exit(1);
            }
            return Ok(());
        }
        run_shim(me, main, cfg, &set)
    }
}

/// One row of the process table: pid, parent pid, and whether it belongs to the tree.
#[derive(Clone, Copy)]
#[repr(C)]
struct Row {
    pid: i32,
    ppid: i32,
    mark: i32,
}

const TABLE_ROWS: usize = 65_536;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Terminating(i64),
    Killing,
}

unsafe fn now_ms() -> i64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
}

unsafe fn run_shim(me: libc::pid_t, main: libc::pid_t, cfg: &ShimCfg, set: &libc::sigset_t) -> ! {
    unsafe {
        close_all_but(cfg.status_fd);
        let bytes = TABLE_ROWS * std::mem::size_of::<Row>();
        let map = libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        let mut fallback = [Row { pid: 0, ppid: 0, mark: 0 }; 512];
        let table: &mut [Row] = if map == libc::MAP_FAILED {
            &mut fallback
        } else {
            std::slice::from_raw_parts_mut(map.cast::<Row>(), TABLE_ROWS)
        };
        let mut main_status: Option<libc::c_int> = None;
        let mut phase = Phase::Running;
        loop {
            let mut any_left = true;
            loop {
                let mut st: libc::c_int = 0;
                let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
                if r > 0 {
                    if r == main {
                        main_status = Some(st);
                    }
                    continue;
                }
                if r < 0 && *libc::__errno_location() == libc::EINTR {
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
                    libc::write(cfg.status_fd, raw.as_ptr().cast(), raw.len());
                    libc::_exit(0);
                }
                libc::_exit(1);
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
            if phase == Phase::Running && libc::getppid() != cfg.parent {
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
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let sig = libc::sigtimedwait(set, &mut info, &ts);
            if sig == libc::SIGTERM || sig == libc::SIGUSR1 {
                // Only our parent (or its death, sent on its behalf) may stop the tree; a
                // command signalling its own process group must not.
                let from = info.si_pid();
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
}

/// Close every descriptor except `keep` (the stdio pipes too: only the command holds them).
unsafe fn close_all_but(keep: libc::c_int) {
    unsafe {
        let lo = libc::syscall(libc::SYS_close_range, 0u32, (keep - 1).max(0) as u32, 0u32);
        let hi = libc::syscall(libc::SYS_close_range, (keep + 1) as u32, u32::MAX, 0u32);
        if lo != 0 || hi != 0 || keep == 0 {
            for fd in 0..4096 {
                if fd != keep {
                    libc::close(fd);
                }
            }
        }
    }
}

/// Send `sig` to every descendant of `me`, found through `/proc/<pid>/stat` parent links.
unsafe fn signal_tree(me: libc::pid_t, sig: libc::c_int, table: &mut [Row]) {
    unsafe {
        let n = scan_proc(table);
        let rows = &mut table[..n];
        // Mark descendants until nothing changes (one pass per generation at most).
        loop {
            let mut changed = false;
            for i in 0..rows.len() {
                if rows[i].mark != 0 {
                    continue;
                }
                let parent = rows[i].ppid;
                let hit = parent == me || rows.iter().any(|r| r.mark != 0 && r.pid == parent);
                if hit {
                    rows[i].mark = 1;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for r in rows.iter() {
            if r.mark != 0 && r.pid != me {
                libc::kill(r.pid, sig);
            }
        }
    }
}

/// Fill `table` with `(pid, ppid)` of every process; the number of rows.
unsafe fn scan_proc(table: &mut [Row]) -> usize {
    unsafe {
        let dir = libc::open(c"/proc".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if dir < 0 {
            return 0;
        }
        let mut n = 0usize;
        let mut buf = [0u8; 4096];
        'outer: loop {
            let got = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
            if got <= 0 {
                break;
            }
            let got = got as usize;
            let mut off = 0usize;
            while off + 19 < got {
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let name = &buf[off + 19..(off + reclen).min(got)];
                off += reclen;
                let Some(pid) = parse_pid(name) else { continue };
                if n >= table.len() {
                    break 'outer;
                }
                if let Some(ppid) = read_ppid(pid) {
                    table[n] = Row { pid, ppid, mark: 0 };
                    n += 1;
                }
            }
        }
        libc::close(dir);
        n
    }
}

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

/// The parent pid from `/proc/<pid>/stat` (`pid (comm) S ppid ...`; comm may hold `)`).
unsafe fn read_ppid(pid: i32) -> Option<i32> {
    let mut path = [0u8; 32];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut i = prefix.len();
    let mut digits = [0u8; 12];
    let mut d = 0;
    let mut v = pid;
    loop {
        digits[d] = b'0' + (v % 10) as u8;
        d += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    while d > 0 {
        d -= 1;
        path[i] = digits[d];
        i += 1;
    }
    for &b in b"/stat\0" {
        path[i] = b;
        i += 1;
    }
    let mut buf = [0u8; 512];
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
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

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
        while !dir.path().join("bg").exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let pid: i32 = std::fs::read_to_string(dir.path().join("bg")).unwrap().trim().parse().unwrap();
        drop(t);
        assert!(gone(pid).await);
    }

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
