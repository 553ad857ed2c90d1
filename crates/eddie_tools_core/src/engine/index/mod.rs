//! An always-fresh in-memory index of a searched root: its walk (files, directories, and
//! what the ignore rules hid, where) and the trigram postings of its files' bytes.
//!
//! - **When.** A root (a directory and the walk options of a search) gets an index once it has
//!   been searched twice; the index is built on a background thread, and searches that come
//!   before it is ready take the scan path. `EDDIE_INDEX=0` turns indexing off;
//!   `EDDIE_INDEX=1` builds on the first search, before answering it.
//! - **Using it.** A regex is planned into a trigram query ([`plan`]); the files that may hold
//!   a match, plus every file changed since the build, are handed back to the caller, which
//!   verifies them with the scan's own matcher. A pattern with no trigram scans.
//! - **Freshness.** An inotify watcher ([`watch`]) is drained at the start of each use:
//!   changed files are searched directly, and a created, removed or renamed entry (or a changed
//!   ignore file) makes the walk run again. When the tree cannot be watched, each use walks
//!   the tree and compares every file's (mtime, ctime, size, inode) with the index instead.
//!   Changed and new files are re-indexed one by one into an overlay (per-file updates); past
//!   the overlay's caps, a background rebuild re-indexes the rest.
//! - **Bounds.** An index larger than a quarter of its text keeps its walk but drops its
//!   postings; indexes are dropped least recently used first past a total cap, and after an
//!   idle time.

pub mod plan;
pub mod postings;
pub mod watch;

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::engine::walk::{self, Entry, Hidden, Root, Stop, Visitor, WalkOptions};
use postings::{Partial, Postings};
use watch::Watcher;

/// The file held a NUL byte.
pub const NUL_ANY: u8 = 1;
/// The file held a NUL byte in its first 64 KiB.
pub const NUL_64K: u8 = 2;
/// The file must always be verified: it could not be read when indexed, it is over
/// [`MAX_FILE`], or it starts with a UTF-16 byte-order mark (the scan transcodes it).
pub const ALWAYS: u8 = 4;
/// The file is not valid UTF-8.
pub const NOT_UTF8: u8 = 8;

/// Files larger than this are not indexed (always verified).
pub const MAX_FILE: u64 = 32 * 1024 * 1024;

/// When indexes are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Never.
    Off,
    /// After a root's second search, in the background.
    Auto,
    /// At a root's first search, before answering it.
    Force,
}

static MODE: AtomicU8 = AtomicU8::new(u8::MAX);
static REBUILD_DELAY_MS: AtomicU64 = AtomicU64::new(10_000);
static MAX_PERCENT: AtomicU64 = AtomicU64::new(u64::MAX);
static NO_WATCH: AtomicBool = AtomicBool::new(false);
static USES: AtomicU64 = AtomicU64::new(0);

/// How many searches the index has answered in this process.
pub fn uses() -> u64 {
    USES.load(Ordering::Relaxed)
}

/// Never watch: every use walks and stat-sweeps (as when the tree cannot be watched).
pub fn set_sweep_only(yes: bool) {
    NO_WATCH.store(yes, Ordering::Relaxed);
}

/// The mode in force: [`set_mode`]'s, else `EDDIE_INDEX` (`0`/`off`, `1`/`on`), else `Auto`.
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        0 => Mode::Off,
        1 => Mode::Auto,
        2 => Mode::Force,
        _ => {
            let m = match crate::context::process_env("EDDIE_INDEX").as_deref().map(str::trim) {
                Some("0" | "off" | "false" | "no") => Mode::Off,
                Some("1" | "on" | "true" | "yes" | "force") => Mode::Force,
                _ => Mode::Auto,
            };
            set_mode(m);
            m
        }
    }
}

/// Override the mode for this process (tests, hosts).
pub fn set_mode(m: Mode) {
    MODE.store(
        match m {
            Mode::Off => 0,
            Mode::Auto => 1,
            Mode::Force => 2,
        },
        Ordering::Relaxed,
    );
}

/// How long changed files wait before a background rebuild re-indexes them.
pub fn set_rebuild_delay(d: Duration) {
    REBUILD_DELAY_MS.store(d.as_millis() as u64, Ordering::Relaxed);
}

fn env_num(key: &str, default: u64) -> u64 {
    crate::context::process_env(key).and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// What an index serves: a directory and the walk options of the searches over it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The real workspace root (ignore files above `root` are read from here down).
    pub workspace: PathBuf,
    /// The real path of the searched directory.
    pub root: PathBuf,
    /// Its workspace-relative path.
    pub root_rel: String,
    /// Walk option.
    pub respect_gitignore: bool,
    /// Walk option.
    pub include_hidden: bool,
    /// `file_search`'s walk: `.git` entered, dependency directories skipped unless
    /// `Some(false)`, an unlistable directory fails the walk.
    pub file_search: Option<bool>,
    /// `grep`'s and `glob`'s walk: dependency directories skipped (their default).
    pub skip_dependency_dirs: bool,
}

impl Key {
    /// The key of a `grep`/`glob` walk of `root`.
    pub fn new(
        workspace: PathBuf,
        root: PathBuf,
        root_rel: String,
        respect_gitignore: bool,
        include_hidden: bool,
    ) -> Self {
        Self {
            workspace,
            root,
            root_rel,
            respect_gitignore,
            include_hidden,
            file_search: None,
            skip_dependency_dirs: false,
        }
    }

    fn walk_options(&self) -> WalkOptions {
        WalkOptions {
            respect_gitignore: self.respect_gitignore,
            include_hidden: self.include_hidden,
            visit_dirs: true,
            keep_git: self.file_search.is_some(),
            skip_dependency_dirs: self.file_search == Some(true) || self.skip_dependency_dirs,
            strict: self.file_search.is_some(),
            ..Default::default()
        }
    }

    /// The real path of the workspace-relative `rel` (below the root).
    pub fn path_of(&self, rel: &str) -> PathBuf {
        self.root.join(below(rel, &self.root_rel))
    }
}

fn below<'a>(rel: &'a str, root_rel: &str) -> &'a str {
    if root_rel.is_empty() {
        return rel;
    }
    rel.strip_prefix(root_rel).and_then(|r| r.strip_prefix('/')).unwrap_or(rel)
}

/// An entry the walk hid: where, and why.
#[derive(Debug, Clone)]
struct HiddenRec {
    parent: String,
    depth: u32,
    why: Hidden,
}

/// One walk of a root.
#[derive(Debug, Default)]
struct Walked {
    /// (workspace-relative path, depth below the root), sorted by path.
    files: Vec<(String, u32)>,
    /// Directories entered, sorted.
    dirs: Vec<String>,
    hidden: Vec<HiddenRec>,
    /// The name table, built at the first name query: file positions by the extension of
    /// their name (after its last `.`; names without one are not in it), each list sorted.
    by_ext: OnceLock<HashMap<Box<str>, Vec<u32>>>,
}

impl Walked {
    fn find(&self, rel: &str) -> Option<usize> {
        self.files.binary_search_by(|(r, _)| r.as_str().cmp(rel)).ok()
    }

    fn by_ext(&self) -> &HashMap<Box<str>, Vec<u32>> {
        self.by_ext.get_or_init(|| {
            let mut m: HashMap<Box<str>, Vec<u32>> = HashMap::new();
            for (i, (rel, _)) in self.files.iter().enumerate() {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                if let Some((_, ext)) = name.rsplit_once('.') {
                    m.entry(ext.into()).or_default().push(i as u32);
                }
            }
            m
        })
    }

    /// The sorted positions of the files whose name ends with one of `suffixes` (each
    /// starting with `.`).
    fn with_suffix(&self, suffixes: &[String]) -> Vec<u32> {
        let table = self.by_ext();
        let mut out: Vec<u32> = Vec::new();
        let mut exts: Vec<&str> =
            suffixes.iter().map(|s| s.rsplit_once('.').map_or("", |(_, e)| e)).collect();
        exts.sort_unstable();
        exts.dedup();
        for ext in exts {
            if let Some(ids) = table.get(ext) {
                out.extend(ids.iter().filter(|&&i| {
                    let rel = &self.files[i as usize].0;
                    suffixes.iter().any(|s| rel.ends_with(s.as_str()))
                }));
            }
        }
        out.sort_unstable();
        out
    }

    fn counts(&self) -> crate::engine::walk::Parts {
        let mut c = (0, 0, 0, 0);
        for h in &self.hidden {
            count(&mut c, h.why);
        }
        c
    }
}

/// Count one hidden entry in `c` ([`crate::engine::walk::Parts`]).
fn count(c: &mut crate::engine::walk::Parts, why: Hidden) {
    match why {
        Hidden::Gitignore => c.0 += 1,
        Hidden::Dot => c.1 += 1,
        Hidden::Excluded => c.2 += 1,
        Hidden::Dependency => c.3 += 1,
    }
}

struct WalkVisitor<'a> {
    watcher: Option<&'a Watcher>,
    files: Vec<(String, u32)>,
    dirs: Vec<String>,
    hidden: Vec<HiddenRec>,
}

impl Visitor for WalkVisitor<'_> {
    fn visit(&mut self, e: &Entry<'_>, _: &Stop) -> bool {
        if e.is_dir {
            if let Some(w) = self.watcher {
                watch_dir(w, e.path, e.rel);
            }
            self.dirs.push(e.rel.to_owned());
        } else {
            self.files.push((e.rel.to_owned(), e.depth as u32));
        }
        true
    }

    fn hidden(&mut self, parent_rel: &str, depth: usize, why: Hidden) {
        self.hidden.push(HiddenRec { parent: parent_rel.to_owned(), depth: depth as u32, why });
    }
}

fn watch_dir(w: &Watcher, path: &Path, rel: &str) {
    w.add(path, rel, false);
    let info = path.join(".git/info");
    if info.is_dir() {
        let r = if rel.is_empty() { ".git/info".to_owned() } else { format!("{rel}/.git/info") };
        w.add(&info, &r, false);
    }
}

/// Walk `key`'s root, adding every directory to `watcher` before it is listed.
fn walk_root(key: &Key, watcher: Option<&Watcher>) -> Option<Walked> {
    if let Some(w) = watcher {
        let mut dir = key.workspace.clone();
        if let Ok(below) = key.root.strip_prefix(&key.workspace) {
            w.add(&dir, "", !key.root_rel.is_empty());
            let comps: Vec<_> = below.components().collect();
            for c in comps.iter().take(comps.len().saturating_sub(1)) {
                dir.push(c);
                w.add(&dir, "", true);
            }
        }
        watch_dir(w, &key.root, &key.root_rel);
    }
    let stop = Stop::new(Arc::new(AtomicBool::new(false)), None);
    let root = Root { real: key.root.clone(), rel: key.root_rel.clone() };
    let (vs, _) = walk::walk(&key.workspace, &root, &key.walk_options(), &stop, || WalkVisitor {
        watcher,
        files: Vec::new(),
        dirs: Vec::new(),
        hidden: Vec::new(),
    })
    .ok()?;
    let mut out = Walked::default();
    for v in vs {
        out.files.extend(v.files);
        out.dirs.extend(v.dirs);
        out.hidden.extend(v.hidden);
    }
    out.files.sort_unstable();
    out.dirs.sort_unstable();
    Some(out)
}

/// (mtime, ctime, size, inode): what a stat sweep compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Stamp {
    mtime: i128,
    ctime: i128,
    size: u64,
    ino: u64,
}

fn stamp(m: &std::fs::Metadata) -> Stamp {
    let s = crate::engine::platform::Stamp::of(m);
    Stamp { mtime: s.mtime_ns, ctime: s.ctime_ns, size: s.len, ino: s.ino }
}

#[derive(Debug, Clone, Copy, Default)]
struct Meta {
    stamp: Stamp,
    flags: u8,
}

/// A file re-indexed on its own since the build (a per-file update): its stamp and flags
/// when read, and its distinct trigrams, sorted.
#[derive(Debug)]
struct Fresh {
    meta: Meta,
    tris: Box<[u32]>,
}

/// The files re-indexed since the build, by workspace-relative path.
type Overlay = HashMap<String, Arc<Fresh>>;

/// Most files one search re-indexes; the rest are searched directly until a later search or a
/// background rebuild indexes them.
const UPDATE_FILES: usize = 4096;

/// A built index.
#[derive(Debug)]
struct Index {
    walked: Arc<Walked>,
    meta: Vec<Meta>,
    /// `None` when the postings were over the memory cap.
    postings: Option<Postings>,
    bytes: usize,
    text: u64,
    build_ms: u64,
}

fn read_file(path: &Path, buf: &mut Vec<u8>) -> Meta {
    let Ok(mut f) = std::fs::File::open(path) else { return Meta { stamp: Stamp::default(), flags: ALWAYS } };
    let Ok(m) = f.metadata() else { return Meta { stamp: Stamp::default(), flags: ALWAYS } };
    let st = stamp(&m);
    buf.clear();
    if m.len() > MAX_FILE || f.read_to_end(buf).is_err() {
        return Meta { stamp: st, flags: ALWAYS };
    }
    let mut flags = 0;
    if memchr::memchr(0, buf).is_some() {
        flags |= NUL_ANY;
        if memchr::memchr(0, &buf[..buf.len().min(64 * 1024)]).is_some() {
            flags |= NUL_64K;
        }
    }
    if buf.starts_with(&[0xff, 0xfe]) || buf.starts_with(&[0xfe, 0xff]) {
        flags |= ALWAYS;
    }
    if std::str::from_utf8(buf).is_err() {
        flags |= NOT_UTF8;
    }
    Meta { stamp: st, flags }
}

fn build(key: &Key, watcher: Option<&Watcher>) -> Option<Index> {
    let t0 = Instant::now();
    let walked = walk_root(key, watcher)?;
    let n = walked.files.len();
    let threads = walk::threads().min(n.max(1));
    let chunk = n.div_ceil(threads).max(1);
    let results: Vec<(Vec<Meta>, Partial, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let walked = &walked;
                s.spawn(move || {
                    let (a, b) = ((t * chunk).min(n), ((t + 1) * chunk).min(n));
                    let mut seen = vec![0u64; 1 << 18];
                    let (mut buf, mut tri) = (Vec::new(), Vec::new());
                    let mut meta = Vec::with_capacity(b - a);
                    let mut part = Partial::default();
                    let mut text = 0u64;
                    for id in a..b {
                        let m = read_file(&key.path_of(&walked.files[id].0), &mut buf);
                        if m.flags & ALWAYS == 0 {
                            text += buf.len() as u64;
                            postings::trigrams_of(&buf, &mut seen, &mut tri);
                            for &x in &tri {
                                part.entry(x).or_default().push(id as u32);
                            }
                        }
                        meta.push(m);
                    }
                    (meta, part, text)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    if results.len() != threads {
        return None;
    }
    let mut meta = Vec::with_capacity(n);
    let mut parts = Vec::with_capacity(threads);
    let mut text = 0;
    for (m, p, t) in results {
        meta.extend(m);
        parts.push(p);
        text += t;
    }
    let postings = Postings::merge(parts);
    let names: usize = walked.files.iter().map(|(r, _)| r.len() + 40).sum::<usize>()
        + walked.dirs.iter().map(|d| d.len() + 24).sum::<usize>();
    let cap = (text as f64 * cap_ratio()) as usize;
    let (postings, bytes) = if postings.bytes() > cap {
        (None, names)
    } else {
        let b = postings.bytes() + names;
        (Some(postings), b)
    };
    Some(Index {
        walked: Arc::new(walked),
        meta,
        postings,
        bytes,
        text,
        build_ms: t0.elapsed().as_millis() as u64,
    })
}

/// The postings' memory cap, in percent of the indexed text (default 25, or
/// `EDDIE_INDEX_MAX_PERCENT`).
pub fn set_max_percent(p: u64) {
    MAX_PERCENT.store(p, Ordering::Relaxed);
}

fn cap_ratio() -> f64 {
    let p = match MAX_PERCENT.load(Ordering::Relaxed) {
        u64::MAX => env_num("EDDIE_INDEX_MAX_PERCENT", 25),
        p => p,
    };
    p as f64 / 100.0
}

/// The current view of a root: its last walk, and for each file the index id whose content
/// still holds (`None`: changed since the build, or new; search it directly).
#[derive(Debug)]
struct Live {
    walked: Arc<Walked>,
    ids: Vec<Option<u32>>,
}

#[derive(Debug, Default)]
struct Dirty {
    files: HashSet<String>,
    dirs: Vec<String>,
    since: Option<Instant>,
}

impl Dirty {
    fn has(&self, rel: &str) -> bool {
        self.files.contains(rel)
            || self
                .dirs
                .iter()
                .any(|d| d.is_empty() || rel.strip_prefix(d.as_str()).is_some_and(|r| r.starts_with('/')))
    }
}

#[derive(Debug, Default)]
struct State {
    index: Option<Arc<Index>>,
    live: Option<Arc<Live>>,
    watcher: Option<Arc<Watcher>>,
    dirty: Dirty,
    building: bool,
    failed: bool,
    searches: u32,
    last_used: Option<Instant>,
    /// `dirty` gained entries that `live` may not mark yet.
    live_behind: bool,
    /// Files re-indexed since the build (copy on write: a search in flight keeps its own).
    overlay: Arc<Overlay>,
    /// Bytes the overlay holds.
    overlay_bytes: usize,
    /// Files re-indexed one by one since the build.
    updated: u64,
    /// When the pending build was asked for (the search that triggered it).
    requested: Option<Instant>,
    /// From that request to the index being ready, for the last build.
    ready_ms: Option<u64>,
}

#[derive(Debug, Default)]
struct Slot {
    state: Mutex<State>,
}

#[derive(Default)]
struct Registry {
    slots: HashMap<Key, Arc<Slot>>,
}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Registry::default()))
}

/// Drop idle indexes, then the least recently used ones past the caps.
fn prune(reg: &mut Registry) {
    let idle = Duration::from_secs(env_num("EDDIE_INDEX_IDLE_SECS", 900));
    let max_bytes = env_num("EDDIE_INDEX_MAX_MB", 1024) as usize * 1024 * 1024;
    let max_roots = env_num("EDDIE_INDEX_MAX_ROOTS", 16) as usize;
    let now = Instant::now();
    let mut info: Vec<(Key, Instant, usize)> = Vec::new();
    reg.slots.retain(|k, slot| {
        let Ok(st) = slot.state.try_lock() else { return true };
        let last = st.last_used.unwrap_or(now);
        if now.duration_since(last) > idle {
            return false;
        }
        info.push((k.clone(), last, st.index.as_ref().map_or(0, |i| i.bytes)));
        true
    });
    info.sort_by_key(|x| x.1);
    let mut total: usize = info.iter().map(|x| x.2).sum();
    let mut roots = info.len();
    for (k, _, b) in info {
        if total <= max_bytes && roots <= max_roots {
            break;
        }
        reg.slots.remove(&k);
        total -= b;
        roots -= 1;
    }
}

/// A thread that drops idle indexes (and enforces the caps) while nothing is searched.
fn start_janitor() {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let every = Duration::from_secs((env_num("EDDIE_INDEX_IDLE_SECS", 900) / 4).clamp(1, 60));
    let spawned = std::thread::Builder::new().name("eddie-index-janitor".into()).spawn(move || {
        loop {
            std::thread::sleep(every);
            if let Ok(mut reg) = registry().lock() {
                prune(&mut reg);
            }
        }
    });
    if spawned.is_err() {
        STARTED.store(false, Ordering::Relaxed);
    }
}

fn slot(key: &Key) -> Option<Arc<Slot>> {
    start_janitor();
    let mut reg = registry().lock().ok()?;
    if !reg.slots.contains_key(key) {
        reg.slots.insert(key.clone(), Arc::new(Slot::default()));
        prune(&mut reg);
    }
    reg.slots.get(key).cloned()
}

/// What `data.index` reports.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The index answered (else the scan did).
    pub used: bool,
    /// `off`, `cold`, `building`, `watch`, `sweep`, `over-cap`, `failed` or `unsupported`.
    pub state: &'static str,
    /// Files in the index.
    pub files: usize,
    /// Bytes it holds.
    pub bytes: usize,
    /// Bytes of text it indexed.
    pub text: u64,
    /// How long its build took.
    pub build_ms: Option<u64>,
    /// From the search that asked for the build to the index being ready.
    pub ready_ms: Option<u64>,
    /// Files re-indexed one by one since the build (per-file updates after edits).
    pub updated: u64,
}

impl Report {
    /// A report for a search the index cannot serve.
    pub fn unsupported() -> Self {
        Self { state: if mode() == Mode::Off { "off" } else { "unsupported" }, ..Default::default() }
    }

    /// `{used, state, files, bytes, textBytes, buildMs, readyMs, updatedFiles}`.
    pub fn to_json(&self) -> Value {
        json!({
            "used": self.used,
            "state": self.state,
            "files": self.files,
            "bytes": self.bytes,
            "textBytes": self.text,
            "buildMs": self.build_ms,
            "readyMs": self.ready_ms,
            "updatedFiles": self.updated,
        })
    }
}

fn report(st: &State) -> Report {
    match &st.index {
        Some(ix) => Report {
            used: false,
            state: if ix.postings.is_none() {
                "over-cap"
            } else if st.watcher.as_ref().is_some_and(|w| !w.failed()) {
                "watch"
            } else {
                "sweep"
            },
            files: ix.meta.len(),
            bytes: ix.bytes,
            text: ix.text,
            build_ms: Some(ix.build_ms),
            ready_ms: st.ready_ms,
            updated: st.updated,
        },
        None if st.building => Report { state: "building", ..Default::default() },
        None if st.failed => Report { state: "failed", ..Default::default() },
        None => Report { state: "cold", ..Default::default() },
    }
}

/// Build `key`'s index and install it (on the calling thread).
fn build_into(key: &Key, slot: &Slot) {
    let watcher = if NO_WATCH.load(Ordering::Relaxed)
        || crate::context::process_env("EDDIE_INDEX_NO_WATCH").is_some()
    {
        None
    } else {
        Watcher::new().map(Arc::new)
    };
    let built = build(key, watcher.as_deref());
    let Ok(mut st) = slot.state.lock() else { return };
    st.building = false;
    match built {
        Some(ix) => {
            let ix = Arc::new(ix);
            st.watcher = watcher.filter(|w| !w.failed());
            st.live = Some(Arc::new(Live {
                walked: Arc::clone(&ix.walked),
                ids: (0..ix.meta.len() as u32).map(Some).collect(),
            }));
            st.index = Some(ix);
            st.dirty = Dirty::default();
            st.live_behind = false;
            st.failed = false;
            st.overlay = Arc::default();
            st.overlay_bytes = 0;
            st.updated = 0;
            st.ready_ms = st.requested.take().map(|t| t.elapsed().as_millis() as u64);
        }
        None => {
            st.failed = true;
            st.requested = None;
        }
    }
}

fn spawn_build(key: &Key, slot: &Arc<Slot>, st: &mut State) {
    if st.building {
        return;
    }
    st.building = true;
    st.requested.get_or_insert_with(Instant::now);
    let (key, slot) = (key.clone(), Arc::clone(slot));
    let spawned =
        std::thread::Builder::new().name("eddie-index".into()).spawn(move || build_into(&key, &slot));
    if spawned.is_err() {
        st.building = false;
    }
}

/// Bring the live view up to date; `None` when there is no usable index.
fn freshen(key: &Key, st: &mut State) -> Option<Arc<Live>> {
    let ix = Arc::clone(st.index.as_ref()?);
    let mut sweep = st.watcher.is_none();
    let mut rewalk = false;
    if let Some(w) = &st.watcher {
        let ch = w.drain();
        if ch.lost || w.failed() {
            sweep = true;
        }
        if ch.structure {
            rewalk = true;
        }
        if !ch.files.is_empty() || !ch.dirs.is_empty() {
            st.dirty.since.get_or_insert_with(Instant::now);
        }
        if !st.overlay.is_empty() && (!ch.files.is_empty() || !ch.dirs.is_empty()) {
            let ov = Arc::make_mut(&mut st.overlay);
            let mut dropped = 0;
            for f in &ch.files {
                if let Some(x) = ov.remove(f) {
                    dropped += fresh_bytes(f, &x);
                }
            }
            if !ch.dirs.is_empty() {
                ov.retain(|rel, x| {
                    let keep = !ch.dirs.iter().any(|d| d.is_empty() || under_dir(rel, d));
                    if !keep {
                        dropped += fresh_bytes(rel, x);
                    }
                    keep
                });
            }
            st.overlay_bytes -= dropped.min(st.overlay_bytes);
        }
        st.live_behind |= !ch.files.is_empty() || !ch.dirs.is_empty();
        st.dirty.files.extend(ch.files);
        st.dirty.dirs.extend(ch.dirs);
    }
    if sweep || rewalk {
        let walked = walk_root(key, if sweep { None } else { st.watcher.as_deref() })?;
        let mut ids = Vec::with_capacity(walked.files.len());
        for (rel, _) in &walked.files {
            let mut id = ix.walked.find(rel).filter(|_| !st.dirty.has(rel));
            if sweep && let Some(i) = id {
                let same =
                    std::fs::symlink_metadata(key.path_of(rel)).is_ok_and(|m| stamp(&m) == ix.meta[i].stamp);
                if !same {
                    st.dirty.files.insert(rel.clone());
                    st.dirty.since.get_or_insert_with(Instant::now);
                    id = None;
                }
            }
            if sweep
                && id.is_none()
                && let Some(f) = st.overlay.get(rel)
                && !std::fs::symlink_metadata(key.path_of(rel)).is_ok_and(|m| stamp(&m) == f.meta.stamp)
            {
                let b = fresh_bytes(rel, f);
                Arc::make_mut(&mut st.overlay).remove(rel);
                st.overlay_bytes -= b.min(st.overlay_bytes);
            }
            ids.push(id.map(|i| i as u32));
        }
        if st.overlay.keys().any(|rel| walked.find(rel).is_none()) {
            let ov = Arc::make_mut(&mut st.overlay);
            ov.retain(|rel, _| walked.find(rel).is_some());
            st.overlay_bytes = ov.iter().map(|(r, f)| fresh_bytes(r, f)).sum();
        }
        if walked.files.len() != ix.walked.files.len() || ids.iter().any(Option::is_none) {
            st.dirty.since.get_or_insert_with(Instant::now);
        }
        st.live = Some(Arc::new(Live { walked: Arc::new(walked), ids }));
    } else if st.live_behind
        && let Some(live) = &st.live
    {
        // Only the dirty files are looked up (by path in the sorted list), not every file.
        let at = dirty_positions(&live.walked, &st.dirty);
        if at.iter().any(|&i| live.ids[i].is_some()) {
            let mut ids = live.ids.clone();
            for i in at {
                ids[i] = None;
            }
            st.live = Some(Arc::new(Live { walked: Arc::clone(&live.walked), ids }));
        }
    }
    st.live_behind = false;
    st.live.clone()
}

/// The positions in `w.files` of the files `dirty` names, and of every file below its
/// directories (one contiguous run of the sorted list each).
fn dirty_positions(w: &Walked, dirty: &Dirty) -> Vec<usize> {
    let mut out: Vec<usize> = dirty.files.iter().filter_map(|f| w.find(f)).collect();
    for d in &dirty.dirs {
        if d.is_empty() {
            out.extend(0..w.files.len());
            continue;
        }
        let prefix = format!("{d}/");
        let from = w.files.partition_point(|(r, _)| r.as_str() < prefix.as_str());
        out.extend((from..w.files.len()).take_while(|&i| w.files[i].0.starts_with(&prefix)));
    }
    out
}

fn under_dir(rel: &str, dir: &str) -> bool {
    rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// What an overlay entry costs in memory (roughly).
fn fresh_bytes(rel: &str, f: &Fresh) -> usize {
    rel.len() + f.tris.len() * 4 + 64
}

/// The overlay's memory cap: a quarter of the postings' size, and at least 16 MiB.
fn overlay_cap(ix: &Index) -> usize {
    (ix.postings.as_ref().map_or(0, Postings::bytes) / 4).max(16 << 20)
}

/// Per-file updates: re-index the live files that changed since the build (or are new) and
/// are not in the overlay yet, within the overlay's caps. When every such file is covered,
/// no background rebuild is pending; else the remaining ones are searched directly and the
/// rebuild timer keeps running.
fn update(key: &Key, st: &mut State, live: &Live) {
    let Some(ix) = st.index.clone() else { return };
    if ix.postings.is_none() {
        return;
    }
    let cap = overlay_cap(&ix);
    let (mut seen, mut buf, mut tri) = (Vec::new(), Vec::new(), Vec::new());
    let (mut done, mut uncovered) = (0usize, false);
    for ((rel, _), id) in live.walked.files.iter().zip(&live.ids) {
        if id.is_some() || st.overlay.contains_key(rel) {
            continue;
        }
        if done >= UPDATE_FILES || st.overlay_bytes >= cap {
            uncovered = true;
            continue;
        }
        if seen.is_empty() {
            seen = vec![0u64; 1 << 18];
        }
        let meta = read_file(&key.path_of(rel), &mut buf);
        if meta.flags & ALWAYS == 0 {
            postings::trigrams_of(&buf, &mut seen, &mut tri);
        } else {
            tri.clear();
        }
        let f = Fresh { meta, tris: tri.as_slice().into() };
        st.overlay_bytes += fresh_bytes(rel, &f);
        Arc::make_mut(&mut st.overlay).insert(rel.clone(), Arc::new(f));
        st.updated += 1;
        done += 1;
    }
    if !uncovered {
        st.dirty.since = None;
    } else {
        st.dirty.since.get_or_insert_with(Instant::now);
    }
}

/// Count a search of `key`, build or freshen; the live view and index when usable.
/// A live view and the index it maps into.
type Usable = (Arc<Live>, Arc<Index>, Arc<Overlay>);

fn acquire(key: &Key) -> (Option<Usable>, Report) {
    let m = mode();
    if m == Mode::Off {
        return (None, Report { state: "off", ..Default::default() });
    }
    let Some(slot) = slot(key) else { return (None, Report::unsupported()) };
    let Ok(mut st) = slot.state.lock() else { return (None, Report::unsupported()) };
    st.last_used = Some(Instant::now());
    st.searches = st.searches.saturating_add(1);
    if st.index.is_none() && !st.building && !st.failed {
        if m == Mode::Force {
            st.building = true;
            st.requested.get_or_insert_with(Instant::now);
            drop(st);
            build_into(key, &slot);
            let Ok(s) = slot.state.lock() else { return (None, Report::unsupported()) };
            st = s;
        } else if st.searches >= 2 {
            spawn_build(key, &slot, &mut st);
        }
    }
    let live = freshen(key, &mut st);
    if let Some(l) = &live {
        update(key, &mut st, l);
    }
    let rep = report(&st);
    let delay = Duration::from_millis(REBUILD_DELAY_MS.load(Ordering::Relaxed));
    if st.dirty.since.is_some_and(|t| t.elapsed() >= delay) {
        spawn_build(key, &slot, &mut st);
    }
    match (live, st.index.clone()) {
        (Some(l), Some(ix)) => (Some((l, ix, Arc::clone(&st.overlay))), rep),
        _ => (None, rep),
    }
}

/// Build `key`'s index now, on this thread (a host's request).
pub fn request(key: &Key) {
    if let Some(slot) = slot(key) {
        if let Ok(mut st) = slot.state.lock() {
            if st.building {
                return;
            }
            st.building = true;
            st.requested.get_or_insert_with(Instant::now);
        }
        build_into(key, &slot);
    }
}

/// What a content search must verify.
#[derive(Debug, Default)]
pub struct Selection {
    /// Workspace-relative paths to search with the scan's matcher, sorted.
    pub search: Vec<String>,
    /// The size of each file of `search` when indexed (0 when unknown: new since the build).
    pub sizes: Vec<u64>,
    /// (size, flags) of each included file the index ruled out.
    pub skipped: Vec<(u64, u8)>,
    /// What the walk hid ([`crate::engine::walk::Parts`]).
    pub ignored: crate::engine::walk::Parts,
}

/// The files of `key`'s root that may match `pattern`, among those `keep` accepts (every
/// file when `keep` is `None`: no path of a file ruled out is then looked at); `None` (search
/// by scanning) when there is no index yet or the pattern has no trigram.
///
/// Files whose flags intersect `verify` are always selected.
pub fn select(
    key: &Key,
    pattern: &str,
    flags: plan::Flags,
    verify: u8,
    keep: Option<&dyn Fn(&str) -> bool>,
) -> (Option<Selection>, Report) {
    if mode() == Mode::Off {
        return (None, Report { state: "off", ..Default::default() });
    }
    let q = plan::plan(pattern, flags);
    let (got, mut rep) = acquire(key);
    let Some((live, ix, overlay)) = got else { return (None, rep) };
    let Some(post) = &ix.postings else { return (None, rep) };
    if q.is_all() {
        return (None, rep);
    }
    let Some(cands) = post.eval(&q) else { return (None, rep) };
    let mut sel = Selection { ignored: live.walked.counts(), ..Default::default() };
    for ((rel, _), id) in live.walked.files.iter().zip(&live.ids) {
        if keep.is_some_and(|keep| !keep(rel)) {
            continue;
        }
        match id {
            Some(i) => {
                let m = ix.meta[*i as usize];
                if m.flags & (ALWAYS | verify) != 0 || cands.binary_search(i).is_ok() {
                    sel.search.push(rel.clone());
                    sel.sizes.push(m.stamp.size);
                } else {
                    sel.skipped.push((m.stamp.size, m.flags));
                }
            }
            None => match overlay.get(rel) {
                Some(f) if f.meta.flags & (ALWAYS | verify) == 0 && !postings::holds(&q, &f.tris) => {
                    sel.skipped.push((f.meta.stamp.size, f.meta.flags));
                }
                f => {
                    sel.search.push(rel.clone());
                    sel.sizes.push(f.map_or(0, |f| f.meta.stamp.size));
                }
            },
        }
    }
    rep.used = true;
    USES.fetch_add(1, Ordering::Relaxed);
    (Some(sel), rep)
}

/// The files of a walk from `start_rel` (the root or a directory the index entered) down to
/// `max_depth`, and what that walk would have hidden.
#[derive(Debug, Default)]
pub struct Names {
    /// Workspace-relative paths, sorted.
    pub files: Vec<String>,
    /// What the walk hid ([`crate::engine::walk::Parts`]).
    pub ignored: crate::engine::walk::Parts,
}

/// The literal name endings every path a glob `pattern` matches must have: `*.js`,
/// `**/*.{js,mjs,cjs}` or `src/**/*.d.ts` → `[".js"]`, `[".js", ".mjs", ".cjs"]`,
/// `[".d.ts"]`. `None` when the last component is not `*` followed by a literal `.` suffix (or
/// a `{…}` of literal alternatives), or when matching ignores case. A necessary condition only:
/// the glob's own matcher still decides, except for a pattern without `/` (`*.js`), whose
/// matches are exactly the names with one of these endings.
pub fn name_suffixes(pattern: &str, case_insensitive: bool) -> Option<Vec<String>> {
    if case_insensitive {
        return None;
    }
    let last = pattern.rsplit('/').next().unwrap_or(pattern);
    let rest = last.strip_prefix("*.")?;
    let literal = |s: &str| !s.contains(['*', '?', '[', ']', '{', '}', '\\', ',', '/', '!']);
    let alts: Vec<&str> = match rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        Some(inner) => inner.split(',').collect(),
        None => vec![rest],
    };
    if !alts.iter().all(|a| literal(a)) {
        return None;
    }
    Some(alts.iter().map(|a| format!(".{a}")).collect())
}

/// The name index: what a walk of `key`'s root started at `start_rel` would visit. With
/// `suffixes` ([`name_suffixes`]), only the files whose names end so are looked at (from the
/// name table); `keep` still decides.
pub fn names(
    key: &Key,
    start_rel: &str,
    max_depth: Option<usize>,
    suffixes: Option<&[String]>,
    keep: &dyn Fn(&str) -> bool,
) -> (Option<Names>, Report) {
    let (got, mut rep) = acquire(key);
    let Some((live, _, _)) = got else { return (None, rep) };
    let w = &live.walked;
    let base = if start_rel == key.root_rel {
        0
    } else {
        if w.dirs.binary_search_by(|d| d.as_str().cmp(start_rel)).is_err() {
            return (None, rep);
        }
        below(start_rel, &key.root_rel).split('/').count() as u32
    };
    let under = |rel: &str| {
        start_rel == key.root_rel && key.root_rel.is_empty()
            || rel == start_rel
            || rel.strip_prefix(start_rel).is_some_and(|r| r.starts_with('/'))
    };
    let within = |depth: u32| max_depth.is_none_or(|m| (depth - base) as usize <= m);
    let mut out = Names::default();
    if let Some(sfx) = suffixes {
        for i in w.with_suffix(sfx) {
            let (rel, depth) = &w.files[i as usize];
            if under(rel) && within(*depth) && keep(rel) {
                out.files.push(rel.clone());
            }
        }
    } else {
        // Paths below `start_rel` are one contiguous run of the sorted list.
        let from =
            if start_rel.is_empty() { 0 } else { w.files.partition_point(|(r, _)| r.as_str() < start_rel) };
        for (rel, depth) in &w.files[from..] {
            if !under(rel) {
                if !start_rel.is_empty() && rel.as_str() > start_rel && !rel.starts_with(start_rel) {
                    break;
                }
                continue;
            }
            if within(*depth) && keep(rel) {
                out.files.push(rel.clone());
            }
        }
    }
    for h in &w.hidden {
        if (under(&h.parent) || h.parent == start_rel) && h.depth >= base && within(h.depth + 1) {
            count(&mut out.ignored, h.why);
        }
    }
    rep.used = true;
    USES.fetch_add(1, Ordering::Relaxed);
    (Some(out), rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_suffixes_of_globs() {
        let v = |p: &str| name_suffixes(p, false);
        assert_eq!(v("*.js"), Some(vec![".js".to_owned()]));
        assert_eq!(
            v("**/*.{js,mjs,cjs}"),
            Some(vec![".js".to_owned(), ".mjs".to_owned(), ".cjs".to_owned()])
        );
        assert_eq!(v("src/**/*.d.ts"), Some(vec![".d.ts".to_owned()]));
        assert_eq!(v("*.{js,}"), Some(vec![".js".to_owned(), ".".to_owned()]));
        for p in ["*", "*.*", "*.[jt]s", "*.{js,t?}", "a*.js", "x.js", "*.js/", "*.{a,{b,c}}", "*.\\*"] {
            assert_eq!(v(p), None, "{p}");
        }
        assert_eq!(name_suffixes("*.js", true), None);
    }

    #[test]
    fn dirty_positions_are_the_files_dirty_has() {
        let names = ["a", "b/x", "b/y/z", "b0/x", "b1", "b/", "c.d/e", "c/d", "cd/e", "é/f"];
        let mut files: Vec<(String, u32)> = names.iter().map(|p| ((*p).to_owned(), 0)).collect();
        files.sort_unstable();
        let w = Walked { files, ..Default::default() };
        let cases: [(&[&str], &[&str]); 7] = [
            (&["a", "b1", "missing"], &[]),
            (&[], &["b"]),
            (&[], &["c"]),
            (&["cd/e"], &["b/y", "é"]),
            (&[], &[""]),
            (&[], &["b/x"]),
            (&["b/x"], &["zz", "b0"]),
        ];
        for (fs, ds) in cases {
            let d = Dirty {
                files: fs.iter().map(|f| (*f).to_owned()).collect(),
                dirs: ds.iter().map(|f| (*f).to_owned()).collect(),
                since: None,
            };
            let mut got = dirty_positions(&w, &d);
            got.sort_unstable();
            got.dedup();
            let want: Vec<usize> = (0..w.files.len()).filter(|&i| d.has(&w.files[i].0)).collect();
            assert_eq!(got, want, "{fs:?} {ds:?}");
        }
    }

    #[test]
    fn name_table_finds_suffixes_in_path_order() {
        // Sorted, as a walk's list is.
        let names = [".js", "a.d.ts", "a.ts", "b/c.js", "b/d.mjs", "b/e", "b/f.ts.js", "g.JS"];
        let w = Walked { files: names.iter().map(|p| ((*p).to_owned(), 0)).collect(), ..Default::default() };
        let got = |s: &[&str]| {
            let s: Vec<String> = s.iter().map(|x| (*x).to_owned()).collect();
            w.with_suffix(&s).into_iter().map(|i| w.files[i as usize].0.as_str()).collect::<Vec<_>>()
        };
        assert_eq!(got(&[".js", ".mjs"]), [".js", "b/c.js", "b/d.mjs", "b/f.ts.js"]);
        assert_eq!(got(&[".d.ts"]), ["a.d.ts"]);
        assert_eq!(got(&[".ts"]), ["a.d.ts", "a.ts"]);
        assert_eq!(got(&[".xyz"]), Vec::<&str>::new());
    }
}
