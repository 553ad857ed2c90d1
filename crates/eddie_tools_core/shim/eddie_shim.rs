//! `eddie-shim`: the supervisor of one command tree (see `src/supervisor.rs`).
//!
//! Built by `build.rs` with plain `rustc` (std only, no crates) and embedded in the addon,
//! which writes it to a private cache directory and starts it with `posix_spawn` in a new
//! session, so starting a command never copies the (large) Node address space.
//!
//! Usage: `eddie-shim <parent pid> <grace ms> <cwd> <program> [args...]`, environment = the
//! command's, fd 3 = the status pipe. The shim becomes a child subreaper, asks for SIGTERM
//! when its parent dies, forks and execs the command, then reaps. Messages on fd 3 are
//! 8 bytes each, `[kind: i32, value: i32]` in native byte order:
//! `1` started (pid), `2` could not start (errno), `3` the command's raw wait status (last).
//!
//! When the command exits, whatever it left behind is killed (SIGKILL); the shim exits when
//! its subtree is empty. SIGTERM from the parent (or its death) sends SIGTERM to the whole
//! subtree and SIGKILL after the grace; SIGUSR1 from the parent kills at once. Signals from
//! anyone else (the command signalling its own process group) are ignored.
#![allow(non_camel_case_types)]

use std::ffi::{CString, c_char, c_int, c_long, c_void};
use std::os::unix::ffi::OsStrExt;

type pid_t = i32;

#[repr(C)]
struct SigSet([u64; 16]);

#[repr(C)]
struct SigInfo([i32; 32]);

#[repr(C)]
struct TimeSpec {
    sec: i64,
    nsec: i64,
}

unsafe extern "C" {
    fn prctl(option: c_int, arg2: c_long, arg3: c_long, arg4: c_long, arg5: c_long) -> c_int;
    fn getppid() -> pid_t;
    fn getpid() -> pid_t;
    fn fork() -> pid_t;
    fn execvp(file: *const c_char, argv: *const *const c_char) -> c_int;
    fn waitpid(pid: pid_t, status: *mut c_int, options: c_int) -> pid_t;
    fn kill(pid: pid_t, sig: c_int) -> c_int;
    fn sigprocmask(how: c_int, set: *const SigSet, old: *mut SigSet) -> c_int;
    fn sigtimedwait(set: *const SigSet, info: *mut SigInfo, timeout: *const TimeSpec) -> c_int;
    fn clock_gettime(clock: c_int, ts: *mut TimeSpec) -> c_int;
    fn chdir(path: *const c_char) -> c_int;
    fn pipe2(fds: *mut c_int, flags: c_int) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    fn close(fd: c_int) -> c_int;
    fn fcntl(fd: c_int, cmd: c_int, arg: c_int) -> c_int;
    fn signal(sig: c_int, handler: usize) -> usize;
    fn __errno_location() -> *mut c_int;
    fn _exit(code: c_int) -> !;
}

const PR_SET_PDEATHSIG: c_int = 1;
const PR_SET_CHILD_SUBREAPER: c_int = 36;
const SIG_BLOCK: c_int = 0;
const SIG_SETMASK: c_int = 2;
const SIGHUP: c_int = 1;
const SIGINT: c_int = 2;
const SIGQUIT: c_int = 3;
const SIGKILL: c_int = 9;
const SIGUSR1: c_int = 10;
const SIGPIPE: c_int = 13;
const SIGTERM: c_int = 15;
const SIGCHLD: c_int = 17;
const WNOHANG: c_int = 1;
const EINTR: c_int = 4;
const O_CLOEXEC: c_int = 0o2000000;
const F_SETFD: c_int = 2;
const FD_CLOEXEC: c_int = 1;
const CLOCK_MONOTONIC: c_int = 1;
const STATUS_FD: c_int = 3;

fn errno() -> c_int {
    // SAFETY: glibc's per-thread errno.
    unsafe { *__errno_location() }
}

fn send(kind: i32, value: i32) {
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&kind.to_ne_bytes());
    msg[4..].copy_from_slice(&value.to_ne_bytes());
    // SAFETY: writes 8 bytes from a local buffer.
    unsafe { write(STATUS_FD, msg.as_ptr().cast(), msg.len()) };
}

fn fail(err: c_int) -> ! {
    send(2, err);
    // SAFETY: ends the process.
    unsafe { _exit(0) }
}

fn now_ms() -> i64 {
    let mut ts = TimeSpec { sec: 0, nsec: 0 };
    // SAFETY: fills a local struct.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts.sec * 1000 + ts.nsec / 1_000_000
}

fn sigset(signals: &[c_int]) -> SigSet {
    let mut set = SigSet([0; 16]);
    for &s in signals {
        let bit = (s - 1) as usize;
        set.0[bit / 64] |= 1 << (bit % 64);
    }
    set
}

/// Every process whose parent chain leads to `me`, from `/proc/*/stat`.
fn descendants(me: pid_t) -> Vec<pid_t> {
    let mut rows: Vec<(pid_t, pid_t)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = std::str::from_utf8(name.as_bytes()).ok().and_then(|s| s.parse::<pid_t>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else { continue };
            // `pid (comm) S ppid ...`; comm may contain `)`.
            let Some(close) = stat.iter().rposition(|&b| b == b')') else { continue };
            let ppid = stat
                .get(close + 4..)
                .map(|r| r.iter().take_while(|b| b.is_ascii_digit()).fold(0i32, |v, b| v * 10 + i32::from(b - b'0')));
            if let Some(ppid) = ppid {
                rows.push((pid, ppid));
            }
        }
    }
    let mut found = vec![me];
    loop {
        let before = found.len();
        for &(pid, ppid) in &rows {
            if found.contains(&ppid) && !found.contains(&pid) {
                found.push(pid);
            }
        }
        if found.len() == before {
            break;
        }
    }
    found.retain(|&p| p != me);
    found
}

fn signal_tree(me: pid_t, sig: c_int) {
    for pid in descendants(me) {
        // SAFETY: plain system call.
        unsafe { kill(pid, sig) };
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    Terminating(i64),
    Killing,
}

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.len() < 5 {
        eprintln!("usage: eddie-shim <parent pid> <grace ms> <cwd> <program> [args...] (started by @eddie/tools-native)");
        std::process::exit(2);
    }
    let num = |i: usize| args[i].to_str().and_then(|s| s.parse::<i64>().ok()).unwrap_or(-1);
    let parent = num(1) as pid_t;
    let grace = num(2).max(0);
    // SAFETY (rest of main): plain system calls on valid local pointers.
    unsafe {
        fcntl(STATUS_FD, F_SETFD, FD_CLOEXEC);
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        prctl(PR_SET_PDEATHSIG, c_long::from(SIGTERM), 0, 0, 0);
        if getppid() != parent {
            _exit(1);
        }
        let Ok(cwd) = CString::new(args[3].as_bytes()) else { fail(22) };
        if chdir(cwd.as_ptr()) != 0 {
            fail(errno());
        }
        let argv_c: Vec<CString> = match args[4..].iter().map(|a| CString::new(a.as_bytes())).collect() {
            Ok(v) => v,
            Err(_) => fail(22),
        };
        let mut argv: Vec<*const c_char> = argv_c.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut errpipe = [0 as c_int; 2];
        if pipe2(errpipe.as_mut_ptr(), O_CLOEXEC) != 0 {
            fail(errno());
        }
        let set = sigset(&[SIGCHLD, SIGTERM, SIGUSR1, SIGHUP, SIGINT, SIGQUIT]);
        let mut old = SigSet([0; 16]);
        sigprocmask(SIG_BLOCK, &set, &mut old);
        let me = getpid();
        let main_pid = fork();
        if main_pid < 0 {
            fail(errno());
        }
        if main_pid == 0 {
            sigprocmask(SIG_SETMASK, &old, std::ptr::null_mut());
            prctl(PR_SET_PDEATHSIG, c_long::from(SIGKILL), 0, 0, 0);
            // Rust's runtime ignores SIGPIPE in the shim; the command gets the default.
            signal(SIGPIPE, 0);
            if getppid() != me {
                _exit(127);
            }
            execvp(argv[0], argv.as_ptr());
            let e = errno().to_ne_bytes();
            write(errpipe[1], e.as_ptr().cast(), 4);
            _exit(127);
        }
        close(errpipe[1]);
        let mut e = [0u8; 4];
        let got = loop {
            let n = read(errpipe[0], e.as_mut_ptr().cast(), 4);
            if n < 0 && errno() == EINTR {
                continue;
            }
            break n;
        };
        close(errpipe[0]);
        if got == 4 {
            let mut st = 0;
            waitpid(main_pid, &mut st, 0);
            fail(i32::from_ne_bytes(e));
        }
        send(1, main_pid);
        // Only the command holds its stdio from now on.
        for fd in 0..3 {
            close(fd);
        }

        let mut main_status: Option<c_int> = None;
        let mut phase = Phase::Running;
        loop {
            let mut any_left = true;
            loop {
                let mut st: c_int = 0;
                let r = waitpid(-1, &mut st, WNOHANG);
                if r > 0 {
                    if r == main_pid {
                        main_status = Some(st);
                    }
                    continue;
                }
                if r < 0 && errno() == EINTR {
                    continue;
                }
                if r < 0 {
                    any_left = false;
                }
                break;
            }
            if !any_left {
                if let Some(st) = main_status {
                    send(3, st);
                }
                _exit(0);
            }
            let now = now_ms();
            if main_status.is_some() && phase == Phase::Running {
                phase = Phase::Killing;
            }
            if let Phase::Terminating(deadline) = phase
                && now >= deadline
            {
                phase = Phase::Killing;
            }
            if phase == Phase::Running && getppid() != parent {
                signal_tree(me, SIGTERM);
                phase = Phase::Terminating(now + grace);
            }
            if phase == Phase::Killing {
                signal_tree(me, SIGKILL);
            }
            let wait_ms = match phase {
                Phase::Running => 1000,
                Phase::Terminating(deadline) => (deadline - now).clamp(1, 1000),
                Phase::Killing => 5,
            };
            let ts = TimeSpec { sec: wait_ms / 1000, nsec: (wait_ms % 1000) * 1_000_000 };
            let mut info = SigInfo([0; 32]);
            let sig = sigtimedwait(&set, &mut info, &ts);
            if sig == SIGTERM || sig == SIGUSR1 {
                // si_pid sits after si_signo, si_errno, si_code and padding on 64-bit Linux.
                let from = info.0[4];
                if from != parent && from != 0 {
                    continue;
                }
                if sig == SIGUSR1 {
                    phase = Phase::Killing;
                } else if phase == Phase::Running {
                    signal_tree(me, SIGTERM);
                    phase = Phase::Terminating(now_ms() + grace);
                }
            }
        }
    }
}
