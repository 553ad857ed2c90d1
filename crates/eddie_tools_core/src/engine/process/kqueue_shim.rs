//! macOS: the in-process shim, on kqueue and libproc (Linux's is in `supervisor.rs`).
//!
//! macOS has no subreaper and no parent-death signal, so the shim rebuilds what it can:
//!
//! 1. `fork` (in `pre_exec`, like Linux's fork shim): the child calls `setsid` and becomes
//!    the shim; its own child execs the command, in the shim's session and process group.
//! 2. The shim watches, on one kqueue: Node's exit (`EVFILT_PROC`/`NOTE_EXIT` on its parent,
//!    so a crashed or killed Node takes the tree with it), the command's exit (`NOTE_EXIT`),
//!    and `SIGTERM`/`SIGUSR1` from Node (`EVFILT_SIGNAL`; a handler drops those sent by
//!    anyone else, so the tree cannot stop its own shim).
//! 3. Every [`SCAN`] while the command runs, it takes a snapshot of the process table
//!    (`proc_listallpids`, `proc_pidinfo(PROC_PIDTBSDINFO)`: pid, parent, group, start time)
//!    and marks the tree ([`walk::mark_tree`]): its descendants by parent links, the members
//!    an earlier snapshot saw (by pid and start time, so an orphan re-parented to launchd
//!    stays a member and a reused pid does not), and the members of a group a member leads.
//! 4. On the command's end it `SIGKILL`s what the tree left; on `SIGTERM` (or Node's exit) it
//!    sends `SIGTERM`, waits the grace, then `SIGKILL`s; on `SIGUSR1` it kills at once. It
//!    exits when the command is reaped and no member is left, after writing the command's
//!    wait status on the status pipe (the protocol of Linux's fork shim).
//!
//! Weaker than Linux (the README's platform section says so too): a process that is born and
//! leaves the tree (double fork, `setsid`) within one [`SCAN`] is never seen, so it survives;
//! and if the shim itself is `SIGKILL`ed, nothing cleans up (Linux's command gets
//! `PR_SET_PDEATHSIG`).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::engine::process::supervisor::Spec;
use crate::engine::process::walk::{self, Proc};

/// How often the shim looks at the process table while the command runs (milliseconds).
pub const SCAN: i64 = 50;

/// Rows of a snapshot (processes on the machine) and of the remembered members.
const TABLE_ROWS: usize = 32_768;
const KNOWN_ROWS: usize = 4_096;

/// Node's pid, for the signal handler of the shim (set in the shim only).
static PARENT: AtomicI32 = AtomicI32::new(0);
/// Set by the handler: Node asked to terminate (`SIGTERM`) or to kill at once (`SIGUSR1`).
static TERM: AtomicBool = AtomicBool::new(false);
static KILL: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy)]
struct Cfg {
    parent: libc::pid_t,
    status_fd: libc::c_int,
    grace_ms: i64,
}

/// Start `spec` under the kqueue shim: the shim (a tokio child) and the read end of its status
/// pipe (the command's raw wait status, 4 bytes, at the end).
pub(crate) fn spawn(spec: &Spec<'_>) -> io::Result<(tokio::process::Child, OwnedFd)> {
    // Both ends close on exec (std::io::pipe), so only the shim, which never execs, keeps the
    // write end.
    let (status_read, status_write) = io::pipe()?;
    let cfg = Cfg {
        // SAFETY: getpid(2) takes no arguments, always succeeds and touches no memory of ours.
        parent: unsafe { libc::getpid() },
        status_fd: status_write.as_raw_fd(),
        grace_ms: i64::try_from(spec.grace.as_millis()).unwrap_or(i64::MAX),
    };
    let mut cmd = spec.std_command();
    // SAFETY: `pre_exec` requires the closure to be safe in a child forked from this
    // multi-threaded process: no allocation, locks or panics, and no misuse of the duplicated
    // descriptors. `shim` and `run` only make system calls (and libc's thin wrappers of them:
    // libproc's proc_* call the proc_info system call, clock_gettime reads the commpage) on
    // locals, the `Copy` `cfg` and memory they map themselves; the walk (`walk.rs`) allocates
    // nothing and its indexing is bounds-checked. The shim closes every descriptor but the
    // status pipe and its kqueue, never returns into Rust code that could use the closed ones,
    // and ends with `_exit`; the command's child returns `Ok` and std execs it.
    unsafe {
        cmd.pre_exec(move || shim(&cfg));
    }
    let child = tokio::process::Command::from(cmd).kill_on_drop(false).spawn()?;
    drop(status_write);
    Ok((child, OwnedFd::from(status_read)))
}

/// Runs in the child between fork and exec. Returns `Ok` only in the command's process; the
/// shim never returns.
fn shim(cfg: &Cfg) -> io::Result<()> {
    // SAFETY: setsid(2) takes no arguments; this freshly forked child is no group leader, so it
    // only moves us into a new session and group.
    if unsafe { libc::setsid() } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getppid(2) takes no arguments and always succeeds; _exit(2) ends this forked
    // child without running the clean-up it inherited.
    if unsafe { libc::getppid() } != cfg.parent {
        unsafe { libc::_exit(1) };
    }
    // SAFETY: getpid(2) takes no arguments and always succeeds.
    let me = unsafe { libc::getpid() };
    // Blocked until the shim's handlers are in place (the command's child restores the mask).
    // SAFETY: all-zero is a valid `sigset_t` (an integer); sigemptyset/sigaddset write only
    // into the local `set`; sigprocmask reads `set` and writes the old mask into `old`.
    let (set, old) = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGUSR1, libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
            libc::sigaddset(&mut set, sig);
        }
        libc::sigprocmask(libc::SIG_BLOCK, &set, &mut old);
        (set, old)
    };
    // SAFETY: fork(2) takes no arguments and is async-signal-safe; this child is single-
    // threaded, so the new one is too. The child branch restores its mask and returns to std,
    // which execs the command; the parent branch becomes the shim in `run`.
    let main = unsafe { libc::fork() };
    if main < 0 {
        return Err(io::Error::last_os_error());
    }
    if main == 0 {
        // SAFETY: sigprocmask reads the local `old`; getppid takes nothing; _exit as above.
        unsafe {
            libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            if libc::getppid() != me {
                libc::_exit(1);
            }
        }
        return Ok(());
    }
    // SAFETY: we are the forked shim (single-threaded, between fork and exec), which is what
    // `run` requires: it closes the descriptors we inherited and never returns.
    unsafe { run(me, main, cfg, &set) }
}

/// The shim's handler of `SIGTERM` and `SIGUSR1`: only Node's (or the kernel's) count.
extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to a SA_SIGINFO handler (checked for
    // null anyway); reading `si_pid` reads an integer of it.
    let from = if info.is_null() { 0 } else { unsafe { (*info).si_pid } };
    if from != 0 && from != PARENT.load(Ordering::Relaxed) {
        return;
    }
    let flag = if sig == libc::SIGUSR1 { &KILL } else { &TERM };
    flag.store(true, Ordering::Relaxed);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Terminating(i64),
    Killing,
}

/// `CLOCK_MONOTONIC` in milliseconds.
fn now_ms() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one `timespec` into the local `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec.wrapping_mul(1000).wrapping_add(ts.tv_nsec / 1_000_000)
}

/// A kqueue change: add `filter` on `ident` with `fflags`.
fn change(ident: libc::uintptr_t, filter: i16, fflags: u32) -> libc::kevent {
    libc::kevent {
        ident,
        filter,
        flags: libc::EV_ADD | libc::EV_ENABLE,
        fflags,
        data: 0,
        udata: std::ptr::null_mut(),
    }
}

/// Register `ev` on `kq`; false if the kernel refused (`ESRCH`: the process is gone).
fn register(kq: libc::c_int, ev: &libc::kevent) -> bool {
    // SAFETY: kevent(2) reads one change from `ev` and writes no event (zero-length list).
    unsafe { libc::kevent(kq, ev, 1, std::ptr::null_mut(), 0, std::ptr::null()) == 0 }
}

/// Maps `rows` zeroed rows (all-zero is a valid `T` for the `Proc`s and pids used here), or
/// `None`.
fn map<'a, T>(rows: usize) -> Option<&'a mut [T]> {
    let bytes = rows.checked_mul(std::mem::size_of::<T>())?;
    // SAFETY: a fresh private anonymous mapping (no hint, no descriptor) overlaps nothing.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANON,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the mapping holds `bytes` = `rows` values of `T`, page-aligned, zero-filled (a
    // valid `T` for the integer-and-bool types used here), referenced by nothing else, and
    // never unmapped (the shim ends with `_exit`).
    Some(unsafe { std::slice::from_raw_parts_mut(p.cast::<T>(), rows) })
}

/// The shim's life after the fork.
///
/// # Safety
///
/// Only for the shim forked by [`shim`]: single-threaded, between fork and exec, never
/// returning into code that could use the descriptors it closes.
unsafe fn run(me: libc::pid_t, main: libc::pid_t, cfg: &Cfg, set: &libc::sigset_t) -> ! {
    // SAFETY: our caller guarantees nothing uses the descriptors we close.
    unsafe { close_all_but(cfg.status_fd) };
    PARENT.store(cfg.parent, Ordering::Relaxed);
    // SAFETY: all-zero is a valid `sigaction`; sigaction(2) reads the local `act`. The handler
    // only reads its argument and stores to atomics (async-signal-safe). SIG_IGN for the
    // terminal's signals: a Ctrl-C meant for Node must not end the shim before its tree.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
        act.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(libc::SIGTERM, &act, std::ptr::null_mut());
        libc::sigaction(libc::SIGUSR1, &act, std::ptr::null_mut());
        for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
    // SAFETY: kqueue(2) takes no arguments.
    let kq = unsafe { libc::kqueue() };
    let parent = libc::uintptr_t::try_from(cfg.parent).unwrap_or(0);
    let command = libc::uintptr_t::try_from(main).unwrap_or(0);
    // Node gone before we watch it: kevent answers ESRCH.
    let mut orphaned = kq < 0 || !register(kq, &change(parent, libc::EVFILT_PROC, libc::NOTE_EXIT));
    if kq >= 0 {
        register(kq, &change(command, libc::EVFILT_PROC, libc::NOTE_EXIT));
        for sig in [libc::SIGTERM, libc::SIGUSR1] {
            register(kq, &change(libc::uintptr_t::try_from(sig).unwrap_or(0), libc::EVFILT_SIGNAL, 0));
        }
    }
    // SAFETY: sigprocmask reads `set` (initialised by `shim`); pending signals now reach the
    // handler installed above.
    unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, set, std::ptr::null_mut()) };
    let mut small_rows = [Proc::default(); 256];
    let mut small_known = [Proc::default(); 64];
    let mut small_pids = [0i32; 256];
    let rows: &mut [Proc] = map(TABLE_ROWS).unwrap_or(&mut small_rows[..]);
    let known: &mut [Proc] = map(KNOWN_ROWS).unwrap_or(&mut small_known[..]);
    let pids: &mut [i32] = map(TABLE_ROWS).unwrap_or(&mut small_pids[..]);
    let mut k = 0usize;
    let mut main_status: Option<libc::c_int> = None;
    let mut phase = Phase::Running;
    loop {
        loop {
            let mut st: libc::c_int = 0;
            // SAFETY: waitpid(2) writes one c_int into the local `st`. The command is our only
            // child (no subreaper here).
            let r = unsafe { libc::waitpid(main, &mut st, libc::WNOHANG) };
            if r == main {
                main_status = Some(st);
            }
            if r < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        let n = snapshot(pids, rows);
        let alive = walk::mark_tree(me, &mut rows[..n], &known[..k]);
        k = walk::remember(&rows[..n], known);
        if let Some(st) = main_status
            && alive == 0
        {
            let raw = st.to_ne_bytes();
            // SAFETY: write(2) reads `raw.len()` bytes of the local `raw`; `status_fd` is the
            // status pipe we kept; _exit(2) ends the shim without inherited clean-up.
            unsafe {
                libc::write(cfg.status_fd, raw.as_ptr().cast(), raw.len());
                libc::_exit(0);
            }
        }
        let now = now_ms();
        // SAFETY: getppid(2) takes no arguments (our parent is launchd once Node is gone).
        orphaned |= unsafe { libc::getppid() } != cfg.parent;
        if phase == Phase::Running && (main_status.is_some() || KILL.load(Ordering::Relaxed)) {
            // The command is done (whatever it left goes now), or Node said kill.
            phase = Phase::Killing;
        }
        if phase == Phase::Running && (orphaned || TERM.load(Ordering::Relaxed)) {
            signal_marked(&rows[..n], libc::SIGTERM);
            phase = Phase::Terminating(now.saturating_add(cfg.grace_ms));
        }
        if let Phase::Terminating(deadline) = phase
            && (now >= deadline || KILL.load(Ordering::Relaxed))
        {
            phase = Phase::Killing;
        }
        if phase == Phase::Killing {
            signal_marked(&rows[..n], libc::SIGKILL);
        }
        let wait_ms = match phase {
            Phase::Running => SCAN,
            Phase::Terminating(deadline) => (deadline - now).clamp(1, SCAN),
            Phase::Killing => 5,
        };
        let ts = libc::timespec { tv_sec: wait_ms / 1000, tv_nsec: (wait_ms % 1000) * 1_000_000 };
        let mut events = [change(0, 0, 0); 4];
        if kq >= 0 {
            // SAFETY: kevent(2) reads no change and writes at most 4 events into the local
            // `events`; it reads the local `ts`.
            let got = unsafe { libc::kevent(kq, std::ptr::null(), 0, events.as_mut_ptr(), 4, &ts) };
            for ev in events.iter().take(usize::try_from(got).unwrap_or(0)) {
                if ev.filter == libc::EVFILT_PROC && ev.ident == parent {
                    orphaned = true;
                }
            }
        } else {
            // SAFETY: nanosleep(2) reads the local `ts` and writes nothing (null remainder).
            unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
        }
    }
}

/// `sig` to every marked row.
fn signal_marked(rows: &[Proc], sig: libc::c_int) {
    for r in rows.iter().filter(|r| r.mark) {
        // SAFETY: kill(2) takes no pointers. Each marked pid is a member of the tree, matched
        // by pid and start time in the snapshot just taken (a pid reused since is not marked).
        unsafe { libc::kill(r.pid, sig) };
    }
}

/// Fill `rows` with the live (non-zombie) processes of the machine; how many. `pids` is
/// scratch space.
fn snapshot(pids: &mut [i32], rows: &mut [Proc]) -> usize {
    let bytes = libc::c_int::try_from(std::mem::size_of_val(pids)).unwrap_or(libc::c_int::MAX);
    // SAFETY: proc_listallpids writes at most `bytes` bytes of pids into `pids`.
    let got = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast(), bytes) };
    let got = usize::try_from(got).unwrap_or(0).min(pids.len());
    let size = libc::c_int::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).unwrap_or(0);
    let mut n = 0;
    for &pid in pids.iter().take(got) {
        if n == rows.len() {
            break;
        }
        if pid <= 0 {
            continue;
        }
        // SAFETY: all-zero is a valid `proc_bsdinfo` (integers and byte arrays);
        // proc_pidinfo writes at most `size` bytes, its size, into the local `info`.
        let (r, info) = unsafe {
            let mut info: libc::proc_bsdinfo = std::mem::zeroed();
            (libc::proc_pidinfo(pid, libc::PROC_PIDTBSDINFO, 0, (&raw mut info).cast(), size), info)
        };
        if r != size || info.pbi_status == libc::SZOMB {
            continue;
        }
        let start = i64::try_from(info.pbi_start_tvsec)
            .unwrap_or(0)
            .wrapping_mul(1_000_000)
            .wrapping_add(i64::try_from(info.pbi_start_tvusec).unwrap_or(0));
        rows[n] = Proc {
            pid,
            ppid: i32::try_from(info.pbi_ppid).unwrap_or(0),
            pgid: i32::try_from(info.pbi_pgid).unwrap_or(0),
            start,
            mark: false,
        };
        n += 1;
    }
    n
}

/// Close every descriptor except `keep` (the stdio pipes too: only the command holds them;
/// the other trees' pipes too, or their readers would wait for this shim).
///
/// # Safety
///
/// Only for a process that never again runs code using the descriptors (the forked shim).
unsafe fn close_all_but(keep: libc::c_int) {
    // The open descriptors, from the kernel (one call), else every number up to the limit.
    let mut fds = [libc::proc_fdinfo { proc_fd: 0, proc_fdtype: 0 }; 1024];
    let size = libc::c_int::try_from(std::mem::size_of_val(&fds)).unwrap_or(0);
    // SAFETY: getpid takes nothing; proc_pidinfo writes at most `size` bytes into `fds`.
    let got = unsafe {
        libc::proc_pidinfo(libc::getpid(), libc::PROC_PIDLISTFDS, 0, fds.as_mut_ptr().cast(), size)
    };
    let listed = usize::try_from(got).unwrap_or(0) / std::mem::size_of::<libc::proc_fdinfo>();
    if got > 0 && got < size {
        for f in fds.iter().take(listed) {
            if f.proc_fd != keep {
                // SAFETY: close(2) takes an integer; our caller guarantees closing is harmless.
                unsafe { libc::close(f.proc_fd) };
            }
        }
        return;
    }
    // SAFETY: getdtablesize takes nothing.
    let max = unsafe { libc::getdtablesize() }.clamp(256, 65_536);
    for fd in 0..max {
        if fd != keep {
            // SAFETY: as above.
            unsafe { libc::close(fd) };
        }
    }
}
