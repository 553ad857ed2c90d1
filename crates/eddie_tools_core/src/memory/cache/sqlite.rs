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

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};

use super::{Entry, Gate, Hit, KeyInfo, Limits, Put, TierStats};
use crate::error::{ErrorCode, Result, ToolError};

/// Virtual machine steps between two looks at the call's limits.
const PROGRESS_STEPS: i32 = 1000;
/// Most busy-handler rounds (about ten seconds of waiting for another process's lock).
const BUSY_ROUNDS: i32 = 2010;

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

/// The database at `path` (one connection per file per process, opened on first use).
pub fn db(path: &Path) -> Arc<Gate<Db>> {
    let mut p = pool().lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(p.entry(path.to_path_buf()).or_insert_with(|| Arc::new(Gate::new(Db::new(path)))))
}

thread_local! {
    /// The limits of the call running on this thread (the busy handler is a plain `fn`).
    static CALL: RefCell<Option<Limits>> = const { RefCell::new(None) };
}

/// Clears [`CALL`] when the call is done.
struct CallScope;

impl CallScope {
    fn enter(l: &Limits) -> Self {
        CALL.with(|c| *c.borrow_mut() = Some(l.clone()));
        Self
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        CALL.with(|c| *c.borrow_mut() = None);
    }
}

/// Another connection holds the lock: wait a little and try again, unless the call is
/// aborted, past its deadline, or has waited about ten seconds.
fn busy(round: i32) -> bool {
    let stopped = CALL.with(|c| c.borrow().as_ref().is_some_and(Limits::stopped));
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
        Self { path: path.to_path_buf(), conn: None, pending: Pending::default() }
    }

    /// Write what lookups owe (`Pending`) in a transaction of its own.
    fn flush(&mut self, l: &Limits) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.pending);
        self.with(l, |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            pending.write(&tx)?;
            tx.commit()
        })
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
        let mut pending = std::mem::take(&mut self.pending);
        self.with(l, |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // The LRU order is up to date before anything is evicted.
            pending.write(&tx)?;
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
            tx.commit()?;
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
                self.with(l, |c| {
                    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    // Deleted only if it is still the expired entry that was read.
                    let n = tx
                        .prepare_cached("DELETE FROM entries WHERE key = ?1 AND expires_ms <= ?2")?
                        .execute(params![key, now as i64])?;
                    tx.prepare_cached("UPDATE counters SET n = n + ?1 WHERE name = 'expirations'")?
                        .execute([n as i64])?;
                    tx.commit()
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
        self.flush(l)?;
        self.with(l, |c| Ok(c.prepare_cached("DELETE FROM entries WHERE key = ?1")?.execute([key])? > 0))
    }

    /// Delete every entry; how many there were.
    pub fn clear(&mut self, l: &Limits) -> Result<u64> {
        self.flush(l)?;
        self.with(l, |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = tx.execute("DELETE FROM entries", [])?;
            tx.commit()?;
            Ok(n as u64)
        })
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
