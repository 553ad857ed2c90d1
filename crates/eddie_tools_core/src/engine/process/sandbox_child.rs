//! The child's half of the sandbox: what a command's process does to itself between fork and
//! exec (see `sandbox.rs` for the plan and what each layer enforces).
//!
//! Shared, as source, by the core (the in-process fork shim runs it in a `pre_exec`) and by
//! `eddie-shim` (`#[path]`-included, built with plain `rustc`): so it uses no crate, declares
//! the few C functions it calls itself, and neither allocates nor locks (the fork shim's child
//! may only make async-signal-safe calls). Linux only.
//!
//! The layers, in order:
//! 1. `USERNS`: a new user namespace (the uid and gid map to themselves), and with it the new
//!    mount and network namespaces the other layers ask for;
//! 2. `MOUNT_RO`: every mount read-only, except clones of the writable roots moved back over
//!    themselves, then `chdir` to the working directory again (it named the old mount);
//! 3. `LOOPBACK`: the new network namespace's `lo` up (`NETNS` alone leaves it down: no
//!    network at all);
//! 4. `LANDLOCK`: `no_new_privs`, then `landlock_restrict_self` with the ruleset the parent
//!    built (its descriptor is `Child::ruleset`).
//!
//! A failure is `(step, errno)`; nothing of the command has run then.

#![allow(unsafe_code, dead_code)]

use std::ffi::{CStr, CString, c_int};

/// A new user namespace (needed by the other namespaces without privileges).
pub const USERNS: u32 = 1;
/// A new mount namespace where everything is read-only but the writable roots.
pub const MOUNT_RO: u32 = 2;
/// A new network namespace (its loopback down: no network at all).
pub const NETNS: u32 = 4;
/// Its loopback interface up (the child's own loopback only).
pub const LOOPBACK: u32 = 8;
/// Restrict with the Landlock ruleset `Child::ruleset`.
pub const LANDLOCK: u32 = 16;

/// Most writable roots a plan may have.
pub const MAX_ROOTS: usize = 64;

/// The steps, as reported with a failure.
pub const STEP_UNSHARE: i32 = 1;
/// Writing `/proc/self/{setgroups,uid_map,gid_map}`.
pub const STEP_ID_MAP: i32 = 2;
/// Making the mounts private.
pub const STEP_PRIVATE: i32 = 3;
/// Cloning a writable root (`open_tree`).
pub const STEP_CLONE_ROOT: i32 = 4;
/// Making every mount read-only (`mount_setattr`).
pub const STEP_READ_ONLY: i32 = 5;
/// Putting a writable root back (`move_mount`).
pub const STEP_MOVE_ROOT: i32 = 6;
/// `chdir` to the working directory again.
pub const STEP_CHDIR: i32 = 7;
/// Bringing the loopback interface up.
pub const STEP_LOOPBACK: i32 = 8;
/// `PR_SET_NO_NEW_PRIVS`.
pub const STEP_NO_NEW_PRIVS: i32 = 9;
/// `landlock_restrict_self`.
pub const STEP_LANDLOCK: i32 = 10;

/// What a failed step was doing, for messages.
pub fn step_name(step: i32) -> &'static str {
    match step {
        STEP_UNSHARE => "creating the user, mount and network namespaces (unshare)",
        STEP_ID_MAP => "mapping the user and group ids into the new user namespace",
        STEP_PRIVATE => "making the mounts private",
        STEP_CLONE_ROOT => "cloning a writable root (open_tree)",
        STEP_READ_ONLY => "making the file system read-only (mount_setattr)",
        STEP_MOVE_ROOT => "mounting a writable root back (move_mount)",
        STEP_CHDIR => "entering the working directory again",
        STEP_LOOPBACK => "bringing the loopback interface up",
        STEP_NO_NEW_PRIVS => "setting no_new_privs",
        STEP_LANDLOCK => "restricting itself with Landlock (landlock_restrict_self)",
        _ => "setting up the sandbox",
    }
}

/// Whether a failed step belongs to the namespace layers (else to Landlock).
pub fn is_namespace_step(step: i32) -> bool {
    (STEP_UNSHARE..=STEP_LOOPBACK).contains(&step)
}

/// The sandbox of one child, as the parent prepared it.
pub struct Child<'a> {
    /// The layers ([`USERNS`], [`MOUNT_RO`], [`NETNS`], [`LOOPBACK`], [`LANDLOCK`]).
    pub flags: u32,
    /// The writable roots (absolute, symlink-free, at most [`MAX_ROOTS`]), for `MOUNT_RO`.
    pub roots: &'a [CString],
    /// The working directory, entered again after the mounts change.
    pub cwd: &'a CStr,
    /// The Landlock ruleset's descriptor, for `LANDLOCK`.
    pub ruleset: c_int,
}

#[cfg(target_os = "linux")]
pub use linux::apply;

/// The system calls (Linux).
#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use std::ffi::{c_char, c_long, c_uint, c_ulong, c_void};

    // SAFETY: these match the C library's prototypes on Linux (glibc and musl): `syscall`,
    // `prctl` and `ioctl` are variadic in C and declared variadic here; the others take and
    // return the C types named.
    unsafe extern "C" {
        fn syscall(n: c_long, ...) -> c_long;
        fn unshare(flags: c_int) -> c_int;
        fn mount(
            source: *const c_char,
            target: *const c_char,
            fstype: *const c_char,
            flags: c_ulong,
            data: *const c_void,
        ) -> c_int;
        fn open(path: *const c_char, flags: c_int, ...) -> c_int;
        fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
        fn close(fd: c_int) -> c_int;
        fn chdir(path: *const c_char) -> c_int;
        fn socket(domain: c_int, kind: c_int, protocol: c_int) -> c_int;
        fn ioctl(fd: c_int, request: c_ulong, ...) -> c_int;
        fn prctl(option: c_int, ...) -> c_int;
        fn geteuid() -> c_uint;
        fn getegid() -> c_uint;
        fn __errno_location() -> *mut c_int;
    }

    const CLONE_NEWNS: c_int = 0x0002_0000;
    const CLONE_NEWUSER: c_int = 0x1000_0000;
    const CLONE_NEWNET: c_int = 0x4000_0000;
    const MS_REC: c_ulong = 0x4000;
    const MS_PRIVATE: c_ulong = 1 << 18;
    const O_WRONLY: c_int = 1;
    const O_CLOEXEC: c_int = 0o2_000_000;
    const AT_FDCWD: c_int = -100;
    const AT_EMPTY_PATH: c_uint = 0x1000;
    const AT_RECURSIVE: c_uint = 0x8000;
    const OPEN_TREE_CLONE: c_uint = 1;
    const MOVE_MOUNT_F_EMPTY_PATH: c_uint = 4;
    const MOUNT_ATTR_RDONLY: u64 = 1;
    const AF_INET: c_int = 2;
    const SOCK_DGRAM: c_int = 2;
    const SIOCGIFFLAGS: c_ulong = 0x8913;
    const SIOCSIFFLAGS: c_ulong = 0x8914;
    const IFF_UP: u16 = 1;
    const PR_SET_NO_NEW_PRIVS: c_int = 38;
    // The generic system call numbers (x86_64, aarch64, riscv64 and loongarch64 share them).
    const SYS_OPEN_TREE: c_long = 428;
    const SYS_MOVE_MOUNT: c_long = 429;
    const SYS_MOUNT_SETATTR: c_long = 442;
    const SYS_LANDLOCK_RESTRICT_SELF: c_long = 446;

    /// `struct mount_attr` (`mount_setattr(2)`).
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }

    fn errno() -> c_int {
        // SAFETY: __errno_location returns this thread's errno slot, valid and aligned for reads
        // for the thread's whole life.
        unsafe { *__errno_location() }
    }

    /// `Err((step, errno))` when `failed`.
    fn check(failed: bool, step: i32) -> Result<(), (i32, i32)> {
        if failed { Err((step, errno())) } else { Ok(()) }
    }

    /// Write `bytes` to the file at `path` (one `write`, as `/proc/self/*_map` want).
    fn write_file(path: &CStr, bytes: &[u8]) -> Result<(), c_int> {
        // SAFETY: open(2) reads the NUL-terminated `path`; write(2) reads `bytes.len()` bytes from
        // `bytes`; `fd` is the descriptor just opened, closed once.
        unsafe {
            let fd = open(path.as_ptr(), O_WRONLY | O_CLOEXEC);
            if fd < 0 {
                return Err(errno());
            }
            let n = write(fd, bytes.as_ptr().cast(), bytes.len());
            let e = errno();
            close(fd);
            if n != bytes.len() as isize {
                return Err(if n < 0 { e } else { 5 });
            }
        }
        Ok(())
    }

    /// `"<id> <id> 1"` into `buf`; its length.
    fn id_map_line(id: c_uint, buf: &mut [u8; 32]) -> usize {
        let mut len = 0;
        for _ in 0..2 {
            len += write_decimal(id, &mut buf[len..]);
            buf[len] = b' ';
            len += 1;
        }
        buf[len] = b'1';
        len + 1
    }

    /// Map `uid` and `gid` to themselves in the new user namespace.
    fn map_ids(uid: c_uint, gid: c_uint) -> Result<(), (i32, i32)> {
        let mut buf = [0u8; 32];
        // Without privileges, gid_map needs setgroups denied first (ENOENT: a kernel before 3.19).
        match write_file(c"/proc/self/setgroups", b"deny") {
            Ok(()) | Err(2) => {}
            Err(e) => return Err((STEP_ID_MAP, e)),
        }
        let n = id_map_line(uid, &mut buf);
        write_file(c"/proc/self/uid_map", &buf[..n]).map_err(|e| (STEP_ID_MAP, e))?;
        let n = id_map_line(gid, &mut buf);
        write_file(c"/proc/self/gid_map", &buf[..n]).map_err(|e| (STEP_ID_MAP, e))
    }

    /// Every mount read-only but the writable roots; then `chdir(cwd)`.
    fn read_only_but(roots: &[CString], cwd: &CStr) -> Result<(), (i32, i32)> {
        if roots.len() > MAX_ROOTS {
            return Err((STEP_CLONE_ROOT, 7));
        }
        // SAFETY: mount(2) reads the NUL-terminated literal; null source, type and data are allowed
        // for a propagation change.
        let r = unsafe {
            mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), MS_REC | MS_PRIVATE, std::ptr::null())
        };
        check(r != 0, STEP_PRIVATE)?;
        // Detached clones of the writable roots, taken before everything turns read-only.
        let mut clones = [-1 as c_int; MAX_ROOTS];
        for (i, root) in roots.iter().enumerate() {
            // SAFETY: open_tree(2) reads the NUL-terminated `root` (a `CString` the caller keeps
            // alive) and returns a new descriptor or -1.
            let fd = unsafe {
                syscall(
                    SYS_OPEN_TREE,
                    AT_FDCWD,
                    root.as_ptr(),
                    OPEN_TREE_CLONE | O_CLOEXEC as c_uint | AT_RECURSIVE,
                )
            };
            if fd < 0 {
                let e = errno();
                close_all(&clones[..i]);
                return Err((STEP_CLONE_ROOT, e));
            }
            clones[i] = fd as c_int;
        }
        let attr = MountAttr { attr_set: MOUNT_ATTR_RDONLY, attr_clr: 0, propagation: 0, userns_fd: 0 };
        // SAFETY: mount_setattr(2) reads the NUL-terminated literal and `size_of::<MountAttr>()`
        // bytes of the local `attr` (the kernel's `struct mount_attr`, version 0: 32 bytes).
        let r = unsafe {
            syscall(
                SYS_MOUNT_SETATTR,
                AT_FDCWD,
                c"/".as_ptr(),
                AT_RECURSIVE,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            )
        };
        if r != 0 {
            let e = errno();
            close_all(&clones[..roots.len()]);
            return Err((STEP_READ_ONLY, e));
        }
        for (i, root) in roots.iter().enumerate() {
            // SAFETY: move_mount(2) reads the empty literal and the NUL-terminated `root`; the
            // descriptor is the clone taken above.
            let r = unsafe {
                syscall(
                    SYS_MOVE_MOUNT,
                    clones[i],
                    c"".as_ptr(),
                    AT_FDCWD,
                    root.as_ptr(),
                    MOVE_MOUNT_F_EMPTY_PATH,
                )
            };
            if r != 0 {
                let e = errno();
                close_all(&clones[i..roots.len()]);
                return Err((STEP_MOVE_ROOT, e));
            }
            close_all(&clones[i..=i]);
        }
        // SAFETY: chdir(2) reads the NUL-terminated `cwd`.
        check(unsafe { chdir(cwd.as_ptr()) } != 0, STEP_CHDIR)
    }

    fn close_all(fds: &[c_int]) {
        for &fd in fds {
            if fd >= 0 {
                // SAFETY: close(2) takes an integer; each is a clone descriptor opened above, closed
                // once.
                unsafe { close(fd) };
            }
        }
    }

    /// `ip link set lo up`, with the `SIOCSIFFLAGS` ioctl.
    fn loopback_up() -> Result<(), (i32, i32)> {
        // SAFETY: socket(2) takes integers.
        let s = unsafe { socket(AF_INET, SOCK_DGRAM | O_CLOEXEC, 0) };
        check(s < 0, STEP_LOOPBACK)?;
        // struct ifreq: the name (16 bytes), then a union whose `ifr_flags` is a short at offset 16.
        let mut ifr = [0u8; 40];
        ifr[..2].copy_from_slice(b"lo");
        // SAFETY: both ioctls read and write one `struct ifreq` (40 bytes on 64-bit Linux), here
        // the local `ifr`; `s` is the socket opened above, closed once.
        unsafe {
            let mut r = ioctl(s, SIOCGIFFLAGS, ifr.as_mut_ptr());
            if r == 0 {
                let flags = u16::from_ne_bytes([ifr[16], ifr[17]]) | IFF_UP;
                ifr[16..18].copy_from_slice(&flags.to_ne_bytes());
                r = ioctl(s, SIOCSIFFLAGS, ifr.as_mut_ptr());
            }
            let e = errno();
            close(s);
            if r != 0 { Err((STEP_LOOPBACK, e)) } else { Ok(()) }
        }
    }

    /// Apply `c` to the calling process.
    ///
    /// # Safety
    ///
    /// Only in a freshly forked, single-threaded child that goes on to exec (or exit): it changes
    /// the process's namespaces, mounts, working directory and Landlock domain for good. Every
    /// call it makes is async-signal-safe and it allocates nothing.
    pub unsafe fn apply(c: &Child<'_>) -> Result<(), (i32, i32)> {
        if c.flags & USERNS != 0 {
            // SAFETY: geteuid/getegid take no arguments and always succeed.
            let (uid, gid) = unsafe { (geteuid(), getegid()) };
            let mut clone = CLONE_NEWUSER;
            if c.flags & MOUNT_RO != 0 {
                clone |= CLONE_NEWNS;
            }
            if c.flags & NETNS != 0 {
                clone |= CLONE_NEWNET;
            }
            // SAFETY: unshare(2) takes an integer; our caller guarantees a single-threaded process
            // (a user namespace needs one).
            check(unsafe { unshare(clone) } != 0, STEP_UNSHARE)?;
            map_ids(uid, gid)?;
            if c.flags & MOUNT_RO != 0 {
                read_only_but(c.roots, c.cwd)?;
            }
            if c.flags & (NETNS | LOOPBACK) == NETNS | LOOPBACK {
                loopback_up()?;
            }
        }
        if c.flags & LANDLOCK != 0 {
            // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) takes integers only.
            let nnp =
                unsafe { prctl(PR_SET_NO_NEW_PRIVS, 1 as c_long, 0 as c_long, 0 as c_long, 0 as c_long) };
            check(nnp != 0, STEP_NO_NEW_PRIVS)?;
            // SAFETY: landlock_restrict_self(2) takes a descriptor (the ruleset the parent built
            // and passed down open) and flags.
            let restricted = unsafe { syscall(SYS_LANDLOCK_RESTRICT_SELF, c.ruleset, 0 as c_uint) };
            check(restricted != 0, STEP_LANDLOCK)?;
        }
        Ok(())
    }
}

/// Write `v` in decimal at the start of `out` (at least 10 bytes long), without allocating;
/// the number of bytes written.
pub fn write_decimal(v: u32, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 10];
    let (mut n, mut v) = (0, v);
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for (i, d) in digits[..n].iter().rev().enumerate() {
        out[i] = *d;
    }
    n
}

/// The errno a `pre_exec` hook reports for a failed step (std passes it through as the spawn
/// error): `0x5a00_0000 | step << 16 | errno`.
pub fn encode(step: i32, errno: i32) -> i32 {
    0x5a00_0000 | ((step & 0xff) << 16) | (errno & 0xffff)
}

/// The `(step, errno)` of an [`encode`]d error, if it is one.
pub fn decode(raw: i32) -> Option<(i32, i32)> {
    (raw & 0x7f00_0000 == 0x5a00_0000).then_some(((raw >> 16) & 0xff, raw & 0xffff))
}
