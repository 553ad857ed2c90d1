//! The file-system watcher that keeps an index fresh: Linux inotify, read without blocking at
//! query time.
//!
//! inotify queues an event inside the system call that changes a file, before that call
//! returns. Draining the queue at the start of a query is therefore a barrier: every change
//! finished before the query began is seen by it. (A watcher that delivers events on its own
//! thread, as the `notify` crate does, cannot promise that, so an edit made just before a
//! search could be missed.) When a watch cannot be added (the `max_user_watches` limit, a file
//! system without inotify) or the queue overflows, the caller falls back to a stat sweep.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

/// What the events drained since the last call say.
#[derive(Debug, Default)]
pub struct Changes {
    /// Paths (relative to the workspace) whose content or metadata changed.
    pub files: Vec<String>,
    /// Directories (relative) whose whole subtree must be treated as changed.
    pub dirs: Vec<String>,
    /// Entries were created, removed or renamed, or an ignore file changed: walk again.
    pub structure: bool,
    /// Events were lost (queue overflow, an unknown watch): nothing can be trusted.
    pub lost: bool,
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct Dir {
    rel: String,
    /// Above the indexed root: only its ignore files matter.
    ancestor: bool,
}

/// One inotify instance and the directories it watches.
pub struct Watcher {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    dirs: Mutex<HashMap<i32, Dir>>,
    failed: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

#[cfg(target_os = "linux")]
const MASK: u32 = libc::IN_MODIFY
    | libc::IN_ATTRIB
    | libc::IN_CLOSE_WRITE
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF
    | libc::IN_ONLYDIR
    | libc::IN_DONT_FOLLOW;

impl Watcher {
    /// A new watcher; `None` where inotify is unavailable.
    pub fn new() -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::FromRawFd;
            // SAFETY: inotify_init1 takes flags only and returns a new descriptor or -1.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            // SAFETY: `fd` was just returned by inotify_init1 and is owned by nobody else.
            let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
            Some(Self { fd, dirs: Mutex::new(HashMap::new()), failed: false.into() })
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// Watch directory `path` (workspace-relative `rel`). A failure (the watch limit) marks
    /// the whole watcher failed: the caller must sweep instead.
    pub fn add(&self, path: &Path, rel: &str, ancestor: bool) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            use std::os::unix::ffi::OsStrExt;
            let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
                self.failed.store(true, std::sync::atomic::Ordering::Relaxed);
                return;
            };
            // SAFETY: the descriptor is open for the life of `self`; `c` is a valid C string.
            let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), MASK) };
            if wd < 0 {
                self.failed.store(true, std::sync::atomic::Ordering::Relaxed);
                return;
            }
            if let Ok(mut d) = self.dirs.lock() {
                d.insert(wd, Dir { rel: rel.to_owned(), ancestor });
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (path, rel, ancestor);
            self.failed.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether some directory could not be watched.
    pub fn failed(&self) -> bool {
        self.failed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Read every queued event without blocking.
    pub fn drain(&self) -> Changes {
        #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
        let mut ch = Changes::default();
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let Ok(dirs) = self.dirs.lock() else {
                ch.lost = true;
                return ch;
            };
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                // SAFETY: `buf` is valid for writes of its length; the descriptor is open.
                let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    let e = std::io::Error::last_os_error();
                    if e.kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    if e.kind() != std::io::ErrorKind::WouldBlock {
                        ch.lost = true;
                    }
                    break;
                }
                if n == 0 {
                    break;
                }
                let mut at = 0usize;
                let n = n as usize;
                let head = std::mem::size_of::<libc::inotify_event>();
                while at + head <= n {
                    // SAFETY: the kernel wrote a whole `inotify_event` at `at` (events are never
                    // split across reads); `read_unaligned` copes with any alignment.
                    let ev: libc::inotify_event =
                        unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
                    let name_end = (at + head + ev.len as usize).min(n);
                    let raw = &buf[at + head..name_end];
                    let name = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
                    at = name_end;
                    self.event(&dirs, ev.wd, ev.mask, name, &mut ch);
                }
            }
        }
        ch
    }

    #[cfg(target_os = "linux")]
    fn event(&self, dirs: &HashMap<i32, Dir>, wd: i32, mask: u32, name: &[u8], ch: &mut Changes) {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            ch.lost = true;
            return;
        }
        let Some(dir) = dirs.get(&wd) else {
            // A watch we no longer know: its directory went away (IN_IGNORED) or an event
            // raced a rebuild. Walk again.
            ch.structure = true;
            return;
        };
        let ignore_file = matches!(name, b".gitignore" | b".ignore" | b".git");
        if dir.ancestor {
            if ignore_file || mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_IGNORED) != 0 {
                ch.structure = true;
            }
            return;
        }
        let name = String::from_utf8_lossy(name);
        let rel = match (dir.rel.is_empty(), name.is_empty()) {
            (_, true) => dir.rel.clone(),
            (true, false) => name.into_owned(),
            (false, false) => format!("{}/{name}", dir.rel),
        };
        if ignore_file || dir.rel.ends_with(".git/info") || dir.rel == ".git/info" {
            ch.structure = true;
        }
        let moved = libc::IN_CREATE
            | libc::IN_DELETE
            | libc::IN_MOVED_FROM
            | libc::IN_MOVED_TO
            | libc::IN_DELETE_SELF
            | libc::IN_MOVE_SELF
            | libc::IN_IGNORED;
        let is_dir = mask & libc::IN_ISDIR != 0 || name_is_self(mask);
        if mask & moved != 0 || (is_dir && mask & libc::IN_ATTRIB != 0) {
            ch.structure = true;
        }
        if is_dir {
            ch.dirs.push(rel);
        } else {
            ch.files.push(rel);
        }
    }
}

#[cfg(target_os = "linux")]
fn name_is_self(mask: u32) -> bool {
    mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_IGNORED) != 0
}
