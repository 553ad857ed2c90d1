//! The persisted tiers on SQLite (embedded, compiled in): one database file per tier
//! (`.eddie/cache.db` for `project`, `vault.db` in the per-user directory for `vault`), in WAL
//! mode so several processes share it. Byte and entry totals are kept by triggers; counters
//! (hits, misses, expirations, evictions) live in the database too, so every process sees
//! the same. A damaged file is moved aside (never deleted) and a new one started.
//!
//! A database file can come with the workspace (a cloned repository ships `.eddie/cache.db`),
//! so it is opened defensively: `SQLITE_DBCONFIG_DEFENSIVE`, `trusted_schema = OFF`, and its
//! schema is compared with the one this module creates before anything runs: a file holding
//! any other table, index, view or trigger (a trigger that loops forever on the first insert)
//! is moved aside like a damaged one (`STORE_CORRUPTED`), so no SQL we did not write ever
//! runs. Every call runs under its [`Limits`]: a progress handler stops a statement, and the
//! busy handler a wait for another process's lock, as soon as the call is aborted or past its
//! deadline.
//!
//! Writes go behind (the handles of [`db`]): a call's writes run in a savepoint of one write
//! transaction that stays open for up to [`BATCH_WINDOW`] or `BATCH_MAX` (1,000) calls, so a store is
//! a few statements and no commit. Every call of this process goes through the one connection,
//! so it sees every write at once; another process (or connection) sees them once the batch is
//! committed: by the next call past the window, by the flusher thread [`BATCH_WINDOW`] after the
//! batch opened, when the handle is dropped, and at process exit (`atexit`). A crash of the
//! process loses at most the open batch (its last [`BATCH_WINDOW`]); a commit that fails is
//! reported to the next call.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::{Entry, Gate, Hit, KeyInfo, Limits, Put, TierStats};
use crate::error::{ErrorCode, Result, ToolError};

/// Virtual machine steps between two looks at the call's limits.
const PROGRESS_STEPS: i32 = 1000;
/// Most busy-handler rounds (about ten seconds of waiting for another process's lock).
const BUSY_ROUNDS: i32 = 2010;
/// How long a write batch stays open at most before it is committed.
pub const BATCH_WINDOW: Duration = Duration::from_millis(50);
/// How many calls write in one batch at most.
const BATCH_MAX: usize = 1000;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS entries(
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  expires_ms INTEGER,
  accessed_us INTEGER NOT NULL,
  size INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entries_lru ON entries(accessed_us);
CREATE INDEX IF NOT EXISTS entries_expiry ON entries(expires_ms) WHERE expires_ms IS NOT NULL;
CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO counters(name, n) VALUES ('bytes', 0), ('entries', 0), ('hits', 0), ('misses', 0), ('expirations', 0), ('evictions', 0);
CREATE TRIGGER IF NOT EXISTS entries_ins AFTER INSERT ON entries BEGIN
  UPDATE counters SET n = n + NEW.size WHERE name = 'bytes';
  UPDATE counters SET n = n + 1 WHERE name = 'entries';
END;
CREATE TRIGGER IF NOT EXISTS entries_del AFTER DELETE ON entries BEGIN
  UPDATE counters SET n = n - OLD.size WHERE name = 'bytes';
  UPDATE counters SET n = n - 1 WHERE name = 'entries';
END;
CREATE TRIGGER IF NOT EXISTS entries_upd AFTER UPDATE OF size ON entries BEGIN
  UPDATE counters SET n = n - OLD.size + NEW.size WHERE name = 'bytes';
END;
";

/// A database file and its connection.
pub struct Db {
    path: PathBuf,
    conn: Option<Connection>,
    /// The bookkeeping of lookups not yet written (a hit is a read).
    pending: Pending,
    /// Writes go behind (batched, see the module doc); otherwise each call commits its own.
    behind: bool,
    /// The write batch open on the connection.
    batch: Option<Batch>,
    /// Why the last batch was not committed (the flusher's failure), told to the next call.
    lost: Option<String>,
}

/// An open write batch: when it was opened, and how many calls wrote in it.
#[derive(Debug, Clone, Copy)]
struct Batch {
    opened: Instant,
    writes: usize,
}

/// What lookups owe the database: when each key hit was last used (the LRU order), and the
/// hit and miss counters. Written in one transaction with the next write of this process
/// (store, delete, clear), before a listing or the counters are read, and at the latest on the
/// first lookup [`Pending::FLUSH_AFTER`] after the oldest (or after [`Pending::MAX_KEYS`]
/// keys). Another process sees them then; what a crash loses is LRU order and counts, never
/// an entry.
#[derive(Debug, Default)]
struct Pending {
    touched: HashMap<String, i64>,
    hits: i64,
    misses: i64,
    since: Option<std::time::Instant>,
}

impl Pending {
    const MAX_KEYS: usize = 256;
    const FLUSH_AFTER: Duration = Duration::from_secs(1);

    fn is_empty(&self) -> bool {
        self.hits == 0 && self.misses == 0 && self.touched.is_empty()
    }

    fn due(&self) -> bool {
        self.touched.len() >= Self::MAX_KEYS || self.since.is_some_and(|t| t.elapsed() >= Self::FLUSH_AFTER)
    }

    fn start(&mut self) {
        self.since.get_or_insert_with(std::time::Instant::now);
    }

    /// Write them in `c`'s transaction (if that fails they are dropped: only bookkeeping).
    fn write(&mut self, c: &Connection) -> std::result::Result<(), rusqlite::Error> {
        if self.is_empty() {
            return Ok(());
        }
        let mut touch =
            c.prepare_cached("UPDATE entries SET accessed_us = max(accessed_us, ?2) WHERE key = ?1")?;
        for (key, us) in &self.touched {
            touch.execute(params![key, us])?;
        }
        let mut count = c.prepare_cached("UPDATE counters SET n = n + ?2 WHERE name = ?1")?;
        if self.hits > 0 {
            count.execute(params!["hits", self.hits])?;
        }
        if self.misses > 0 {
            count.execute(params!["misses", self.misses])?;
        }
        *self = Self::default();
        Ok(())
    }
}

type Pool = HashMap<PathBuf, Arc<Gate<Db>>>;

fn pool() -> &'static Mutex<Pool> {
    static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The database at `path` (one connection per file per process, opened on first use), its
/// writes going behind when the flusher thread runs.
pub fn db(path: &Path) -> Arc<Gate<Db>> {
    let behind = flusher().is_some();
    let mut p = pool().lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(p.entry(path.to_path_buf()).or_insert_with(|| {
        let mut db = Db::new(path);
        db.behind = behind;
        Arc::new(Gate::new(db))
    }))
}

/// Wakes the flusher when a batch opens.
struct Flusher {
    opened: Mutex<bool>,
    wake: Condvar,
}

/// The flusher: a thread that commits every batch of the pool [`BATCH_WINDOW`] after it
/// opened, started with an `atexit` hook that commits them at exit. `None` when the thread
/// cannot be started (writes then commit call by call).
fn flusher() -> Option<&'static Flusher> {
    static FLUSHER: OnceLock<Option<Flusher>> = OnceLock::new();
    FLUSHER
        .get_or_init(|| {
            std::thread::Builder::new().name("eddie-cache-flush".into()).spawn(flush_loop).ok()?;
            // SAFETY: `flush_at_exit` is a plain `extern "C" fn()` that never unwinds (it catches
            // panics) and touches only this module's statics, which live as long as the process.
            unsafe { libc::atexit(flush_at_exit) };
            Some(Flusher { opened: Mutex::new(false), wake: Condvar::new() })
        })
        .as_ref()
}

/// Limits for the flusher's own work (no call to abort it).
fn own_limits() -> Limits {
    Limits::new(Arc::new(AtomicBool::new(false)), Duration::from_secs(10))
}

/// Commit the batches of the pool that are due (`all`: every open one); how long until the
/// next one still open is due.
fn commit_pool(all: bool) -> Option<Duration> {
    let dbs: Vec<Arc<Gate<Db>>> =
        pool().lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
    let mut next: Option<Duration> = None;
    for d in dbs {
        let l = own_limits();
        let Ok(mut db) = d.enter(&l, "committing the cache") else { continue };
        match db.batch {
            Some(b) if all || b.opened.elapsed() >= BATCH_WINDOW => {
                if let Err(e) = db.commit(&l) {
                    db.lost = Some(e.message().to_owned());
                }
            }
            Some(b) => {
                let due = BATCH_WINDOW.saturating_sub(b.opened.elapsed());
                next = Some(next.map_or(due, |n| n.min(due)));
            }
            None => {}
        }
    }
    next
}

fn flush_loop() {
    // Waits until `flusher` (which started this thread) has stored it.
    let Some(f) = flusher() else { return };
    loop {
        {
            let mut opened = f.opened.lock().unwrap_or_else(|e| e.into_inner());
            while !*opened {
                opened = f.wake.wait(opened).unwrap_or_else(|e| e.into_inner());
            }
            *opened = false;
        }
        // The batch that woke it opened just now.
        let mut wait = BATCH_WINDOW;
        loop {
            std::thread::sleep(wait);
            match commit_pool(false) {
                Some(next) => wait = next,
                None => break,
            }
        }
    }
}

extern "C" fn flush_at_exit() {
    // No panic may unwind out of an `extern "C"` function.
    let _ = std::panic::catch_unwind(|| commit_pool(true));
}

thread_local! {
    /// The limits of the call running on this thread (the busy handler is a plain `fn`).
    static CALL: RefCell<Option<Limits>> = const { RefCell::new(None) };
}

/// Clears [`CALL`] when the call is done. (`try_with`: at process exit the thread's locals are
/// gone before the `atexit` commit runs; the busy wait is then bounded by its rounds alone.)
struct CallScope;

impl CallScope {
    fn enter(l: &Limits) -> Self {
        let _ = CALL.try_with(|c| *c.borrow_mut() = Some(l.clone()));
        Self
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        let _ = CALL.try_with(|c| *c.borrow_mut() = None);
    }
}

/// Another connection holds the lock: wait a little and try again, unless the call is
/// aborted, past its deadline, or has waited about ten seconds.
fn busy(round: i32) -> bool {
    let stopped = CALL.try_with(|c| c.borrow().as_ref().is_some_and(Limits::stopped)).unwrap_or(false);
    if stopped || round >= BUSY_ROUNDS {
        return false;
    }
    std::thread::sleep(Duration::from_millis(if round < 10 { 1 } else { 5 }));
    true
}

/// The schema objects this module creates (type, name, table, SQL), as SQLite stores them.
fn own_schema() -> &'static std::result::Result<BTreeSet<SchemaRow>, String> {
    static OWN: OnceLock<std::result::Result<BTreeSet<SchemaRow>, String>> = OnceLock::new();
    OWN.get_or_init(|| {
        let c = Connection::open_in_memory().map_err(|e| e.to_string())?;
        c.execute_batch(SCHEMA).map_err(|e| e.to_string())?;
        schema_rows(&c).map_err(|e| e.to_string())
    })
}

type SchemaRow = (String, String, String, Option<String>);

fn schema_rows(c: &Connection) -> std::result::Result<BTreeSet<SchemaRow>, rusqlite::Error> {
    let mut st = c.prepare("SELECT type, name, tbl_name, sql FROM main.sqlite_schema")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
    rows.collect()
}

/// Why a database cannot be used.
enum OpenError {
    /// SQLite refused.
    Sql(rusqlite::Error),
    /// The file holds schema objects this module did not create (named).
    Foreign(Vec<String>),
    /// Something of ours failed.
    Setup(String),
}

impl From<rusqlite::Error> for OpenError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sql(e)
    }
}

fn interrupted(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::OperationInterrupted | rusqlite::ErrorCode::DatabaseBusy)
    )
}

/// Look at the call's limits every few thousand steps of every statement.
fn watch(c: &Connection, l: &Limits) {
    let l = l.clone();
    c.progress_handler(PROGRESS_STEPS, Some(move || l.stopped()));
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

fn damaged(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

fn unavailable(path: &Path, e: &rusqlite::Error) -> ToolError {
    ToolError::new(ErrorCode::StoreUnavailable, format!("cache database {}: {e}", path.display()))
        .with_prop("path", path.display().to_string())
}

fn open(path: &Path, l: &Limits) -> std::result::Result<Connection, OpenError> {
    let flags =
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    watch(&conn, l);
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    conn.busy_handler(Some(busy))?;
    // Nothing of the file's runs before its schema is known to be ours: reading the schema
    // table runs no trigger and no view.
    let own = own_schema()
        .as_ref()
        .map_err(|e| OpenError::Setup(format!("the cache schema cannot be built: {e}")))?;
    let foreign: Vec<String> = schema_rows(&conn)?
        .into_iter()
        .filter(|r| !own.contains(r))
        .map(|(t, n, _, _)| format!("{t} {n}"))
        .collect();
    if !foreign.is_empty() {
        return Err(OpenError::Foreign(foreign));
    }
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

impl Db {
    fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            conn: None,
            pending: Pending::default(),
            behind: false,
            batch: None,
            lost: None,
        }
    }

    /// Write what lookups owe (`Pending`).
    fn flush(&mut self, l: &Limits) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.write(l, |_| Ok(()))
    }

    /// Run the writes of one call: `f` (after what lookups owe) in a savepoint of the open
    /// batch (begun if none is open), so a failure undoes this call's writes only. The batch is
    /// committed here when it is full or older than [`BATCH_WINDOW`], or at once when writes do
    /// not go behind.
    fn write<T>(
        &mut self,
        l: &Limits,
        f: impl FnOnce(&Connection) -> std::result::Result<T, rusqlite::Error>,
    ) -> Result<T> {
        if let Some(why) = self.lost.take() {
            return Err(ToolError::new(
                ErrorCode::StoreUnavailable,
                format!(
                    "the last writes to cache database {} were not committed: {why}; this call did nothing",
                    self.path.display()
                ),
            )
            .with_prop("path", self.path.display().to_string()));
        }
        let mut pending = std::mem::take(&mut self.pending);
        let was_open = self.batch.is_some();
        let ran = self.with(l, |c| {
            let began = c.is_autocommit();
            if began {
                c.execute_batch("BEGIN IMMEDIATE")?;
            }
            let sp = c.savepoint()?;
            pending.write(&sp)?;
            let v = f(&sp)?;
            sp.commit()?;
            Ok((v, began))
        });
        let (v, began) = match ran {
            Ok(v) => v,
            Err(e) => {
                // SQLite rolls a whole transaction back after some failures (a full disk).
                if was_open && self.conn.as_ref().is_none_or(Connection::is_autocommit) {
                    let lost = self.batch.take().map_or(0, |b| b.writes);
                    return Err(e.with_prop("uncommittedWritesLost", lost));
                }
                return Err(e);
            }
        };
        let fresh = Batch { opened: Instant::now(), writes: 0 };
        let mut batch = if began { fresh } else { self.batch.unwrap_or(fresh) };
        batch.writes += 1;
        self.batch = Some(batch);
        let full = batch.writes >= BATCH_MAX || batch.opened.elapsed() >= BATCH_WINDOW;
        if !self.behind || full {
            self.commit(l)?;
        } else if began && let Some(f) = flusher() {
            *f.opened.lock().unwrap_or_else(|e| e.into_inner()) = true;
            f.wake.notify_one();
        }
        Ok(v)
    }

    /// Commit the open batch (if one is open).
    fn commit(&mut self, l: &Limits) -> Result<()> {
        let Some(batch) = self.batch.take() else { return Ok(()) };
        let done = self.with(l, |c| if c.is_autocommit() { Ok(()) } else { c.execute_batch("COMMIT") });
        if let Err(e) = done {
            // Nothing of the batch is kept: roll back, so the write lock is released.
            if let Some(c) = self.conn.as_ref()
                && !c.is_autocommit()
            {
                let _ = c.execute_batch("ROLLBACK");
            }
            return Err(e.with_prop("uncommittedWritesLost", batch.writes));
        }
        Ok(())
    }

    /// Whether the file exists (a tier whose file does not exist has no entries).
    pub fn exists(&self) -> bool {
        self.conn.is_some() || self.path.exists()
    }

    /// Move the damaged file (and its WAL and shared-memory files) aside, never deleting
    /// anything, and start a new one. The error says where it went.
    fn recover(&mut self, cause: &dyn std::fmt::Display, l: &Limits) -> ToolError {
        self.conn = None;
        self.pending = Pending::default();
        self.batch = None;
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        let aside = PathBuf::from(format!("{}.corrupt-{stamp}", self.path.display()));
        let mut moved = Ok(());
        for suffix in ["", "-wal", "-shm"] {
            let from = PathBuf::from(format!("{}{suffix}", self.path.display()));
            let to = PathBuf::from(format!("{}{suffix}", aside.display()));
            if from.exists()
                && let Err(e) = std::fs::rename(&from, &to)
            {
                moved = Err(e);
            }
        }
        if let Err(e) = moved {
            return ToolError::new(
                ErrorCode::StoreUnavailable,
                format!(
                    "cache database {} is damaged ({cause}) and could not be moved aside: {e}",
                    self.path.display()
                ),
            );
        }
        let started = open(&self.path, l).map(|c| self.conn = Some(c));
        let mut err = ToolError::new(
            ErrorCode::StoreCorrupted,
            format!(
                "cache database {} was damaged ({cause}); it was moved to {} and a new, empty one was started{}; the call did nothing, so repeat it",
                self.path.display(),
                aside.display(),
                if started.is_ok() { "" } else { " (on next use)" }
            ),
        )
        .with_prop("path", self.path.display().to_string())
        .with_prop("movedTo", aside.display().to_string());
        if let Err(e) = started {
            let why = match e {
                OpenError::Sql(e) => e.to_string(),
                OpenError::Foreign(_) => "it was replaced by another foreign file".to_owned(),
                OpenError::Setup(why) => why,
            };
            err = err.with_prop("reopenError", why);
        }
        err
    }

    /// Run `f` on the connection (opened, and its directory made, on first use). A damaged
    /// file is recovered and reported as `STORE_CORRUPTED`.
    fn with<T>(
        &mut self,
        l: &Limits,
        f: impl FnOnce(&mut Connection) -> std::result::Result<T, rusqlite::Error>,
    ) -> Result<T> {
        const WHAT: &str = "the cache database";
        l.check(WHAT)?;
        let _scope = CallScope::enter(l);
        if self.conn.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| ToolError::fs(&e, "mkdir", Some(dir)))?;
            }
            match open(&self.path, l) {
                Ok(c) => self.conn = Some(c),
                Err(OpenError::Sql(e)) if damaged(&e) => return Err(self.recover(&e, l)),
                Err(OpenError::Sql(e)) if interrupted(&e) && l.stopped() => return Err(l.error(WHAT)),
                Err(OpenError::Sql(e)) => return Err(unavailable(&self.path, &e)),
                Err(OpenError::Setup(why)) => {
                    return Err(ToolError::new(ErrorCode::StoreUnavailable, why)
                        .with_prop("path", self.path.display().to_string()));
                }
                Err(OpenError::Foreign(objects)) => {
                    let why = format!(
                        "it holds schema objects this cache does not create ({}), which could run code of their own",
                        objects.join(", ")
                    );
                    return Err(self.recover(&why, l));
                }
            }
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(ToolError::internal("cache connection missing after open"));
        };
        watch(conn, l);
        match f(conn) {
            Ok(v) => Ok(v),
            Err(e) if damaged(&e) => Err(self.recover(&e, l)),
            Err(e) if interrupted(&e) && l.stopped() => Err(l.error(WHAT)),
            Err(e) => Err(unavailable(&self.path, &e)),
        }
    }

    /// Store an entry; evict the least recently used others while over `cap`.
    pub fn put(&mut self, e: Entry<'_>, cap: u64, l: &Limits) -> Result<Put> {
        let size = (e.key.len() + e.value.len()) as i64;
        // The LRU order is up to date before anything is evicted (`write` writes `Pending` first).
        self.write(l, |tx| {
            let replaced = tx
                .prepare_cached("SELECT 1 FROM entries WHERE key = ?1")?
                .query_row([e.key], |_| Ok(()))
                .optional()?
                .is_some();
            tx.prepare_cached(
                "INSERT INTO entries(key, value, created_ms, expires_ms, accessed_us, size) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, created_ms = excluded.created_ms,
                 expires_ms = excluded.expires_ms, accessed_us = excluded.accessed_us, size = excluded.size",
            )?
            .execute(params![e.key, e.value, e.now_ms as i64, e.expires_ms.map(|x| x as i64), now_us(), size])?;
            let mut evicted = 0u64;
            let bytes: i64 = tx.prepare_cached("SELECT n FROM counters WHERE name = 'bytes'")?.query_row([], |r| r.get(0))?;
            if bytes as u64 > cap {
                let n = tx
                    .prepare_cached("DELETE FROM entries WHERE expires_ms IS NOT NULL AND expires_ms <= ?1")?
                    .execute([e.now_ms as i64])?;
                tx.prepare_cached("UPDATE counters SET n = n + ?1 WHERE name = 'expirations'")?.execute([n as i64])?;
                loop {
                    let bytes: i64 =
                        tx.prepare_cached("SELECT n FROM counters WHERE name = 'bytes'")?.query_row([], |r| r.get(0))?;
                    if bytes as u64 <= cap {
                        break;
                    }
                    let n = tx
                        .prepare_cached(
                            "DELETE FROM entries WHERE key = (SELECT key FROM entries WHERE key <> ?1 ORDER BY accessed_us LIMIT 1)",
                        )?
                        .execute([e.key])?;
                    if n == 0 {
                        break;
                    }
                    evicted += 1;
                }
                tx.prepare_cached("UPDATE counters SET n = n + ?1 WHERE name = 'evictions'")?.execute([evicted as i64])?;
            }
            Ok(Put { replaced, evicted })
        })
    }

    /// Look an entry up (a hit refreshes it); `count_miss`: record a miss when absent. A hit is
    /// a read: its bookkeeping waits in `Pending`. Only an expired entry is deleted here.
    pub fn get(&mut self, key: &str, now: u64, count_miss: bool, l: &Limits) -> Result<Option<Hit>> {
        if self.pending.due() {
            self.flush(l)?;
        }
        let row = self.with(l, |c| {
            c.prepare_cached("SELECT value, created_ms, expires_ms FROM entries WHERE key = ?1")?
                .query_row([key], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<i64>>(2)?))
                })
                .optional()
        })?;
        let out = match row {
            Some((_, _, Some(exp))) if exp as u64 <= now => {
                self.write(l, |tx| {
                    // Deleted only if it is still the expired entry that was read.
                    let n = tx
                        .prepare_cached("DELETE FROM entries WHERE key = ?1 AND expires_ms <= ?2")?
                        .execute(params![key, now as i64])?;
                    tx.prepare_cached("UPDATE counters SET n = n + ?1 WHERE name = 'expirations'")?
                        .execute([n as i64])?;
                    Ok(())
                })?;
                None
            }
            Some((value, created, exp)) => {
                self.pending.touched.insert(key.to_owned(), now_us());
                self.pending.hits += 1;
                self.pending.start();
                Some(Hit { value, created_ms: created as u64, expires_ms: exp.map(|x| x as u64) })
            }
            None => None,
        };
        if out.is_none() && count_miss {
            self.miss(l)?;
        }
        Ok(out)
    }

    /// Record a miss (written with the next flush, see `Pending`).
    pub fn miss(&mut self, l: &Limits) -> Result<()> {
        l.check("the cache database")?;
        self.pending.misses += 1;
        self.pending.start();
        Ok(())
    }

    /// Delete an entry.
    pub fn delete(&mut self, key: &str, l: &Limits) -> Result<bool> {
        self.write(l, |c| Ok(c.prepare_cached("DELETE FROM entries WHERE key = ?1")?.execute([key])? > 0))
    }

    /// Delete every entry; how many there were.
    pub fn clear(&mut self, l: &Limits) -> Result<u64> {
        self.write(l, |c| Ok(c.execute("DELETE FROM entries", [])? as u64))
    }

    fn purge(c: &Connection, now: u64) -> std::result::Result<(), rusqlite::Error> {
        let n = c
            .prepare_cached("DELETE FROM entries WHERE expires_ms IS NOT NULL AND expires_ms <= ?1")?
            .execute([now as i64])?;
        if n > 0 {
            c.prepare_cached("UPDATE counters SET n = n + ?1 WHERE name = 'expirations'")?
                .execute([n as i64])?;
        }
        Ok(())
    }

    /// The live keys matching `keep`.
    pub fn keys(&mut self, now: u64, keep: &dyn Fn(&str) -> bool, l: &Limits) -> Result<Vec<KeyInfo>> {
        self.flush(l)?;
        self.with(l, |c| {
            Self::purge(c, now)?;
            let mut st =
                c.prepare_cached("SELECT key, size, created_ms, expires_ms FROM entries ORDER BY key")?;
            let rows = st.query_map([], |r| {
                Ok(KeyInfo {
                    key: r.get(0)?,
                    bytes: r.get::<_, i64>(1)? as u64,
                    created_ms: r.get::<_, i64>(2)? as u64,
                    expires_ms: r.get::<_, Option<i64>>(3)?.map(|x| x as u64),
                })
            })?;
            let mut out = Vec::new();
            for row in rows {
                let k = row?;
                if keep(&k.key) {
                    out.push(k);
                }
            }
            Ok(out)
        })
    }

    /// The counters.
    pub fn stats(&mut self, now: u64, l: &Limits) -> Result<TierStats> {
        self.flush(l)?;
        self.with(l, |c| {
            Self::purge(c, now)?;
            let mut st = c.prepare_cached("SELECT name, n FROM counters")?;
            let mut m: HashMap<String, i64> = HashMap::new();
            for row in st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
                let (k, v) = row?;
                m.insert(k, v);
            }
            let g = |k: &str| m.get(k).copied().unwrap_or(0).max(0) as u64;
            Ok(TierStats {
                entries: g("entries"),
                bytes: g("bytes"),
                hits: g("hits"),
                misses: g("misses"),
                expirations: g("expirations"),
                evictions: g("evictions"),
            })
        })
    }
}

impl Drop for Db {
    /// What lookups owe and the open batch are written before the connection closes.
    fn drop(&mut self) {
        let l = own_limits();
        if self.flush(&l).is_ok() {
            let _ = self.commit(&l);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    use super::*;

    const FOREVER: &str =
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

    fn entry<'a>(key: &'a str, value: &'a str) -> Entry<'a> {
        Entry { key, value, now_ms: super::super::now_ms(), expires_ms: None }
    }

    #[test]
    fn hits_are_reads_whose_bookkeeping_is_written_before_it_matters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db");
        let mut db = Db::new(&path);
        let l = Limits::new(Arc::new(AtomicBool::new(false)), Duration::from_secs(60));
        let now = super::super::now_ms();
        db.put(entry("a", "1111"), 1 << 20, &l).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        db.put(entry("b", "2222"), 1 << 20, &l).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        // A hit on `a` (the older entry) writes nothing yet...
        assert_eq!(db.get("a", now, true, &l).unwrap().unwrap().value, "1111");
        assert!(db.get("zz", now, true, &l).unwrap().is_none());
        let other = Connection::open(&path).unwrap();
        let count = |name: &str| -> i64 {
            other.query_row("SELECT n FROM counters WHERE name = ?1", [name], |r| r.get(0)).unwrap()
        };
        assert_eq!((count("hits"), count("misses")), (0, 0));
        // ...but the next store evicts by the order it made: `b` is now the least recently used.
        let put = db.put(entry("c", "3333"), 10, &l).unwrap();
        assert_eq!(put.evicted, 1);
        assert!(db.get("a", now, true, &l).unwrap().is_some(), "the entry just used survived");
        assert!(db.get("b", now, true, &l).unwrap().is_none(), "the least recently used went");
        assert_eq!((count("hits"), count("misses")), (1, 1));
        // The counters read in this process include what is still pending.
        let s = db.stats(now, &l).unwrap();
        assert_eq!((s.hits, s.misses), (2, 2));
        assert_eq!((count("hits"), count("misses")), (2, 2));
    }

    fn limits() -> Limits {
        Limits::new(Arc::new(AtomicBool::new(false)), Duration::from_secs(60))
    }

    fn committed(path: &Path, key: &str) -> Option<String> {
        let c = Connection::open(path).unwrap();
        c.query_row("SELECT value FROM entries WHERE key = ?1", [key], |r| r.get(0)).optional().unwrap()
    }

    #[test]
    fn writes_go_behind_seen_at_once_here_and_within_the_window_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db");
        let d = db(&path);
        let l = limits();
        d.enter(&l, "test").unwrap().put(entry("a", "1"), 1 << 20, &l).unwrap();
        // Readers of this process see the write before it is committed, from any thread, and
        // their own writes at once, while others write beside them.
        let readers: Vec<_> = (0..4)
            .map(|i| {
                let d = Arc::clone(&d);
                std::thread::spawn(move || {
                    let l = limits();
                    for j in 0..50 {
                        let key = format!("t{i}-{j}");
                        assert_eq!(
                            d.enter(&l, "test").unwrap().get("a", 0, true, &l).unwrap().unwrap().value,
                            "1"
                        );
                        d.enter(&l, "test").unwrap().put(entry(&key, "v"), 1 << 20, &l).unwrap();
                        let hit = d.enter(&l, "test").unwrap().get(&key, 0, true, &l).unwrap();
                        assert_eq!(hit.unwrap().value, "v", "{key}");
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().unwrap();
        }
        // Another connection on the file (another process, say) sees them once committed.
        let started = Instant::now();
        while committed(&path, "t3-49").is_none() {
            assert!(started.elapsed() < Duration::from_secs(10), "the batch was never committed");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(committed(&path, "a").as_deref(), Some("1"));
        // A second handle on the same file writes while this one batches (it waits for the
        // batch's lock), and this one reads what it wrote.
        let mut other = Db::new(&path);
        d.enter(&l, "test").unwrap().put(entry("b", "first"), 1 << 20, &l).unwrap();
        other.put(entry("b", "second"), 1 << 20, &l).unwrap();
        assert_eq!(committed(&path, "b").as_deref(), Some("second"));
        assert_eq!(d.enter(&l, "test").unwrap().get("b", 0, true, &l).unwrap().unwrap().value, "second");
        assert_eq!(other.get("t0-0", 0, true, &l).unwrap().unwrap().value, "v");
        let s = other.stats(super::super::now_ms(), &l).unwrap();
        assert_eq!(s.entries, 202, "{s:?}");
    }

    /// A handle whose writes go behind, outside the pool (no flusher commits its batches).
    fn behind(dir: &tempfile::TempDir) -> (Db, PathBuf) {
        let path = dir.path().join("cache.db");
        let mut db = Db::new(&path);
        db.behind = true;
        (db, path)
    }

    #[test]
    fn a_handle_dropped_with_an_open_batch_commits_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut db, path) = behind(&dir);
        let l = limits();
        db.put(entry("k", "kept"), 1 << 20, &l).unwrap();
        db.put(entry("gone", "x"), 1 << 20, &l).unwrap();
        assert!(db.delete("gone", &l).unwrap());
        assert_eq!(db.get("k", 0, true, &l).unwrap().unwrap().value, "kept");
        // Not committed yet (no flusher looks at a handle outside the pool)...
        assert_eq!(committed(&path, "k"), None);
        drop(db);
        // ...and committed by the drop, the delete with it.
        assert_eq!(committed(&path, "k").as_deref(), Some("kept"));
        assert_eq!(committed(&path, "gone"), None);
    }

    #[test]
    fn a_failed_call_undoes_its_own_writes_only() {
        let dir = tempfile::tempdir().unwrap();
        let (mut db, path) = behind(&dir);
        let l = limits();
        db.put(entry("before", "1"), 1 << 20, &l).unwrap();
        let e = db
            .write(&l, |c| {
                c.execute("DELETE FROM entries", [])?;
                c.execute("SELECT no_such_function()", [])
            })
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{}", e.message());
        assert_eq!(db.get("before", 0, true, &l).unwrap().unwrap().value, "1");
        drop(db);
        assert_eq!(committed(&path, "before").as_deref(), Some("1"));
    }

    #[test]
    fn a_statement_that_never_ends_stops_at_the_abort_and_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::new(&dir.path().join("cache.db"));
        let flag = Arc::new(AtomicBool::new(false));
        let l = Limits::new(Arc::clone(&flag), Duration::from_secs(60));
        let f2 = Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            f2.store(true, Ordering::SeqCst);
        });
        let started = Instant::now();
        let e = db.with(&l, |c| c.query_row(FOREVER, [], |r| r.get::<_, i64>(0))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled, "{}", e.message());
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        // Past its deadline, a call is TIMEOUT; the connection stays usable.
        let l = Limits::new(Arc::new(AtomicBool::new(false)), Duration::from_millis(300));
        let started = Instant::now();
        let e = db.with(&l, |c| c.query_row(FOREVER, [], |r| r.get::<_, i64>(0))).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Timeout, "{}", e.message());
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        let l = Limits::new(Arc::new(AtomicBool::new(false)), Duration::from_secs(60));
        assert_eq!(db.with(&l, |c| c.query_row("SELECT 41 + 1", [], |r| r.get::<_, i64>(0))).unwrap(), 42);
    }
}
