//! `eddie-shim`: the supervisor of one command tree (see `src/engine/process/supervisor.rs`).
//!
//! Built by `build.rs` with plain `rustc` (std only, no crates) and embedded in the addon,
//! which writes it to a private cache directory and starts it with `posix_spawn` in a new
//! session, so starting a command never copies the (large) Node address space.
//!
//! Usage: `eddie-shim <parent pid> <grace ms> <sandbox> [roots...] <cwd> <program> [args...]`,
//! environment = the command's, fd 3 = the status pipe. `<sandbox>` is `-` (none) or
//! `<flags>:<n>` followed by the `n` writable roots (the layers of `sandbox_child.rs`; with
//! `LANDLOCK`, fd 4 is the ruleset). The shim becomes a child subreaper, asks for SIGTERM when
//! its parent dies, forks, puts the child in its sandbox and execs the command, then reaps.
//! Messages on fd 3 are 8 bytes each, `[kind: i32, value: i32]` in native byte order:
//! `1` started (pid), `2` could not start (errno), `3` the command's raw wait status (last),
//! `4` the sandbox could not be set up (`step << 16 | errno`; nothing ran).
//!
//! When the command exits, whatever it left behind is killed (SIGKILL); the shim exits when
//! its subtree is empty. SIGTERM from the parent (or its death) sends SIGTERM to the whole
//! subtree and SIGKILL after the grace; SIGUSR1 from the parent kills at once. Signals from
//! anyone else (the command signalling its own process group) are ignored.
#![allow(non_camel_case_types)]

use std::ffi::{CString, c_char, c_int, c_long, c_void};
use std::os::unix::ffi::OsStrExt;

#[path = "../src/engine/process/sandbox_child.rs"]
mod sandbox_child;

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

// SAFETY: these match glibc's prototypes on 64-bit Linux (x86_64, aarch64), where `SigSet`,
// `SigInfo` and `TimeSpec` have the size and layout of glibc's `sigset_t` (128 bytes),
// `siginfo_t` (128 bytes) and `struct timespec` (two 64-bit integers); `prctl` and `fcntl` are
// variadic in C and declared variadic here. (A 32-bit Linux target would need another
// `TimeSpec` and `si_pid` offset.)
unsafe extern "C" {
    fn prctl(option: c_int, ...) -> c_int;
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
    fn fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
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
const RULESET_FD: c_int = 4;

fn errno() -> c_int {
    // SAFETY: __errno_location returns a pointer to this thread's errno, valid and aligned for
    // reads for the thread's whole life.
    unsafe { *__errno_location() }
}

fn send(kind: i32, value: i32) {
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&kind.to_ne_bytes());
    msg[4..].copy_from_slice(&value.to_ne_bytes());
    // SAFETY: write(2) reads `msg.len()` (8) bytes from the local `msg`; if fd 3 were not open
    // it would fail with EBADF.
    unsafe { write(STATUS_FD, msg.as_ptr().cast(), msg.len()) };
}

fn fail(err: c_int) -> ! {
    send(2, err);
    exit_now(0)
}

/// `_exit(2)`: end the process at once.
fn exit_now(code: c_int) -> ! {
    // SAFETY: _exit takes an integer and never returns. Skipping Rust and C clean-up loses
    // nothing: the shim buffers no output (messages go out in single `write`s).
    unsafe { _exit(code) }
}

/// `getppid(2)`.
fn parent_pid() -> pid_t {
    // SAFETY: getppid takes no arguments and always succeeds.
    unsafe { getppid() }
}

fn now_ms() -> i64 {
    let mut ts = TimeSpec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime(2) writes one `struct timespec` (the layout of `TimeSpec`) into the
    // local `ts`; CLOCK_MONOTONIC always exists on Linux.
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
        // SAFETY: kill(2) takes no pointers. Every pid listed descends from us, the subreaper,
        // so it is our (possibly indirect) unreaped child and cannot be a reused pid.
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
    if args.len() < 6 {
        eprintln!(
            "usage: eddie-shim <parent pid> <grace ms> <sandbox> [roots...] <cwd> <program> [args...] (started by @eddie/tools-native)"
        );
        std::process::exit(2);
    }
    let num = |i: usize| args[i].to_str().and_then(|s| s.parse::<i64>().ok()).unwrap_or(-1);
    let parent = num(1) as pid_t;
    let grace = num(2).max(0);
    // SAFETY: fcntl(F_SETFD) and prctl (with these options) take integers only and change
    // flags of this process alone; if fd 3 were not open, fcntl would fail with EBADF.
    unsafe {
        fcntl(STATUS_FD, F_SETFD, FD_CLOEXEC);
        prctl(PR_SET_CHILD_SUBREAPER, c_long::from(1), 0 as c_long, 0 as c_long, 0 as c_long);
        prctl(PR_SET_PDEATHSIG, c_long::from(SIGTERM), 0 as c_long, 0 as c_long, 0 as c_long);
    }
    if parent_pid() != parent {
        exit_now(1);
    }
    // The sandbox: `-`, or `<flags>:<n>` and n roots.
    let (flags, nroots) = match args[3].to_str() {
        Some("-") => (0u32, 0usize),
        Some(s) => match s.split_once(':').and_then(|(f, n)| Some((f.parse().ok()?, n.parse().ok()?))) {
            Some(v) => v,
            None => fail(22),
        },
        None => fail(22),
    };
    if args.len() < 6 + nroots || nroots > sandbox_child::MAX_ROOTS {
        fail(22);
    }
    let Ok(roots) = args[4..4 + nroots].iter().map(|r| CString::new(r.as_bytes())).collect::<Result<Vec<_>, _>>()
    else {
        fail(22)
    };
    if flags & sandbox_child::LANDLOCK != 0 {
        // SAFETY: as above; the ruleset descriptor closes when the command execs.
        unsafe { fcntl(RULESET_FD, F_SETFD, FD_CLOEXEC) };
    }
    let Ok(cwd) = CString::new(args[4 + nroots].as_bytes()) else { fail(22) };
    // SAFETY: chdir(2) reads the NUL-terminated `cwd`, which outlives the call.
    if unsafe { chdir(cwd.as_ptr()) } != 0 {
        fail(errno());
    }
    let argv_c: Vec<CString> = match args[5 + nroots..].iter().map(|a| CString::new(a.as_bytes())).collect() {
        Ok(v) => v,
        Err(_) => fail(22),
    };
    let mut argv: Vec<*const c_char> = argv_c.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let sandbox = sandbox_child::Child { flags, roots: &roots, cwd: &cwd, ruleset: RULESET_FD };
    let mut errpipe = [0 as c_int; 2];
    // SAFETY: pipe2(2) writes two c_ints through its pointer, here `errpipe`, a local array of two.
    if unsafe { pipe2(errpipe.as_mut_ptr(), O_CLOEXEC) } != 0 {
        fail(errno());
    }
    let set = sigset(&[SIGCHLD, SIGTERM, SIGUSR1, SIGHUP, SIGINT, SIGQUIT]);
    let mut old = SigSet([0; 16]);
    // SAFETY: sigprocmask(2) reads `set` and writes the previous mask into `old`, both locals
    // the size of glibc's `sigset_t`; getpid takes no arguments and always succeeds.
    let me = unsafe {
        sigprocmask(SIG_BLOCK, &set, &mut old);
        getpid()
    };
    // SAFETY: fork(2) takes no arguments. The shim is single-threaded (std starts no thread
    // and neither do we), so the child is a complete copy in which any call is allowed.
    let main_pid = unsafe { fork() };
    if main_pid < 0 {
        fail(errno());
    }
    if main_pid == 0 {
        // SAFETY: sigprocmask reads the local `old` (filled above) and gets no out pointer;
        // prctl and signal take integers (handler 0 is SIG_DFL).
        unsafe {
            sigprocmask(SIG_SETMASK, &old, std::ptr::null_mut());
            prctl(PR_SET_PDEATHSIG, c_long::from(SIGKILL), 0 as c_long, 0 as c_long, 0 as c_long);
            // Rust's runtime ignores SIGPIPE in the shim; the command gets the default.
            signal(SIGPIPE, 0);
        }
        if parent_pid() != me {
            exit_now(127);
        }
        // Why the command could not start: `[step, errno]`, step 0 for the exec itself.
        let report = |step: i32, err: i32| {
            let mut msg = [0u8; 8];
            msg[..4].copy_from_slice(&step.to_ne_bytes());
            msg[4..].copy_from_slice(&err.to_ne_bytes());
            // SAFETY: write(2) reads 8 bytes from the local `msg`; `errpipe[1]` is the open
            // write end of the error pipe.
            unsafe { write(errpipe[1], msg.as_ptr().cast(), 8) };
            exit_now(127)
        };
        if flags != 0 {
            // SAFETY: this is the freshly forked child of a single-threaded process, about to
            // exec: what `apply` requires.
            if let Err((step, err)) = unsafe { sandbox_child::apply(&sandbox) } {
                report(step, err);
            }
            // SAFETY: prctl takes integers. (A new user namespace keeps the parent-death
            // signal, but set it again rather than rely on that.)
            unsafe { prctl(PR_SET_PDEATHSIG, c_long::from(SIGKILL), 0 as c_long, 0 as c_long, 0 as c_long) };
            if parent_pid() != me {
                exit_now(127);
            }
        }
        // SAFETY: `argv` is a null-terminated array of pointers into the NUL-terminated
        // `CString`s of `argv_c` (at least one: `args.len() >= 6 + nroots`), all alive across
        // the call; execvp only reads them and returns only on failure.
        unsafe { execvp(argv[0], argv.as_ptr()) };
        report(0, errno());
    }
    // SAFETY: close(2) takes an integer; this is our copy of the write end, closed once and
    // not used again (the command's copy closes on exec).
    unsafe { close(errpipe[1]) };
    let mut e = [0u8; 8];
    let mut got = 0usize;
    while got < 8 {
        // SAFETY: read(2) writes at most `8 - got` bytes, the rest of the local `e`.
        let n = unsafe { read(errpipe[0], e[got..].as_mut_ptr().cast(), 8 - got) };
        if n < 0 && errno() == EINTR {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    // SAFETY: close(2) takes an integer; the read end, closed once and not used again.
    unsafe { close(errpipe[0]) };
    if got == 8 {
        let mut st = 0;
        // SAFETY: waitpid(2) writes one c_int into the local `st`; `main_pid` is our child.
        unsafe { waitpid(main_pid, &mut st, 0) };
        let step = i32::from_ne_bytes([e[0], e[1], e[2], e[3]]);
        let err = i32::from_ne_bytes([e[4], e[5], e[6], e[7]]);
        if step == 0 {
            fail(err);
        }
        send(4, (step << 16) | (err & 0xffff));
        exit_now(0);
    }
    send(1, main_pid);
    // Only the command holds its stdio from now on.
    for fd in 0..3 {
        // SAFETY: close(2) takes an integer. Nothing in the shim reads or writes stdio after
        // this (later `/proc` reads may reuse the numbers for their own files, which they own).
        unsafe { close(fd) };
    }

    let mut main_status: Option<c_int> = None;
    let mut phase = Phase::Running;
    loop {
        let mut any_left = true;
        loop {
            let mut st: c_int = 0;
            // SAFETY: waitpid(2) writes one c_int into the local `st`.
            let r = unsafe { waitpid(-1, &mut st, WNOHANG) };
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
            exit_now(0);
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
        if phase == Phase::Running && parent_pid() != parent {
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
        // SAFETY: sigtimedwait(2) reads the locals `set` and `ts` and writes one `siginfo_t`
        // (128 bytes, the size of `SigInfo`) into the local `info`.
        let sig = unsafe { sigtimedwait(&set, &mut info, &ts) };
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
