//! Floyd's SUPERCACHE: `cache_store`, `cache_retrieve`, `cache_delete`, `cache_clear`,
//! `cache_keys`, `cache_stats`, over three tiers:
//!
//! - `reasoning`: process memory, per workspace and session ([`mem`]);
//! - `project`: `.eddie/cache.db` in the workspace (SQLite, WAL: [`sqlite`]);
//! - `vault`: `vault.db` in the per-user directory (SQLite).
//!
//! TTLs are in milliseconds; each tier has a byte cap (key + value bytes) with least recently
//! used eviction. Every tool also has a blocking form (a lookup is a few microseconds).

pub mod cache_clear;
pub mod cache_delete;
pub mod cache_keys;
pub mod cache_retrieve;
pub mod cache_stats;
pub mod cache_store;
pub mod mem;
pub mod redis;
pub mod sqlite;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};

/// The tiers, in lookup order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// In process memory, for the session.
    Reasoning,
    /// Persisted per workspace (`.eddie/cache.db`).
    Project,
    /// Persisted per user.
    Vault,
}

impl Tier {
    /// Every tier, in lookup order.
    pub const ALL: [Tier; 3] = [Tier::Reasoning, Tier::Project, Tier::Vault];

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reasoning => "reasoning",
            Self::Project => "project",
            Self::Vault => "vault",
        }
    }

    fn default_cap(self) -> u64 {
        match self {
            Self::Reasoning => 64 << 20,
            Self::Project | Self::Vault => 256 << 20,
        }
    }
}

/// Longest key, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;
/// Largest value by default, in bytes (`EDDIE_CACHE_MAX_VALUE_BYTES` changes it).
pub const MAX_VALUE_BYTES: u64 = 1 << 20;
/// Longest key pattern, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// Longest TTL: ten years, in ms.
pub const MAX_TTL_MS: f64 = 10.0 * 365.25 * 24.0 * 3600.0 * 1000.0;

/// An entry to store.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// The key.
    pub key: &'a str,
    /// The value.
    pub value: &'a str,
    /// Now, in ms since the epoch.
    pub now_ms: u64,
    /// When it expires, if it does.
    pub expires_ms: Option<u64>,
}

/// What a store did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Put {
    /// The key had a value before.
    pub replaced: bool,
    /// Entries evicted to stay within the cap.
    pub evicted: u64,
}

/// A hit.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The value.
    pub value: String,
    /// When it was stored (ms since the epoch).
    pub created_ms: u64,
    /// When it expires.
    pub expires_ms: Option<u64>,
}

/// A key in a listing.
#[derive(Debug, Clone)]
pub struct KeyInfo {
    /// The key.
    pub key: String,
    /// Key and value bytes.
    pub bytes: u64,
    /// When it was stored.
    pub created_ms: u64,
    /// When it expires.
    pub expires_ms: Option<u64>,
}

/// A tier's counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct TierStats {
    /// Live entries.
    pub entries: u64,
    /// Their key and value bytes.
    pub bytes: u64,
    /// Lookups that found a value.
    pub hits: u64,
    /// Lookups that found none.
    pub misses: u64,
    /// Entries removed because their TTL ran out.
    pub expirations: u64,
    /// Entries removed to stay within the cap.
    pub evictions: u64,
}

/// Now, in ms since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A TTL in ms: a finite, positive number (a numeric string counts; `"NaN"` does not).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ttl(pub f64);

impl<'de> Deserialize<'de> for Ttl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let n = match &v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        match n {
            Some(n) if n.is_finite() && n > 0.0 => Ok(Self(n.min(MAX_TTL_MS))),
            _ => Err(serde::de::Error::custom(
                "must be a positive, finite number of milliseconds (omit it for no expiry)",
            )),
        }
    }
}

crate::value_schema!(Ttl, {"type": "number", "exclusiveMinimum": 0});

/// A key, checked: non-empty, at most [`MAX_KEY_BYTES`], no NUL.
pub fn check_key(key: &str) -> Result<&str> {
    if key.is_empty() {
        return Err(ToolError::invalid("key must not be empty"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(ToolError::invalid(format!(
            "key is {} bytes; keys are at most {MAX_KEY_BYTES} bytes",
            key.len()
        )));
    }
    if key.contains('\0') {
        return Err(ToolError::invalid("key must not contain NUL characters"));
    }
    Ok(key)
}

fn env_bytes(ctx: &Ctx, name: &str, default: u64) -> u64 {
    ctx.env_var(name).and_then(|v| v.trim().parse::<u64>().ok()).filter(|n| *n > 0).unwrap_or(default)
}

/// The byte cap of `tier` (`EDDIE_CACHE_MAX_BYTES_<TIER>` changes it).
pub fn cap(ctx: &Ctx, tier: Tier) -> u64 {
    env_bytes(ctx, &format!("EDDIE_CACHE_MAX_BYTES_{}", tier.as_str().to_uppercase()), tier.default_cap())
}

/// The largest value (`EDDIE_CACHE_MAX_VALUE_BYTES` changes it).
pub fn max_value(ctx: &Ctx) -> u64 {
    env_bytes(ctx, "EDDIE_CACHE_MAX_VALUE_BYTES", MAX_VALUE_BYTES)
}

/// A compiled key pattern (a glob: `*`, `?`, `[...]`, `{a,b}`; `/` is an ordinary character).
pub fn pattern(p: Option<&str>) -> Result<Option<globset::GlobMatcher>> {
    let Some(p) = p else { return Ok(None) };
    let invalid = |why: String| {
        ToolError::invalid(format!("pattern is not a valid glob: {why}")).with_prop("argument", "pattern")
    };
    if p.len() > MAX_PATTERN_BYTES {
        return Err(invalid(format!(
            "it is {} bytes; patterns are at most {MAX_PATTERN_BYTES} bytes",
            p.len()
        )));
    }
    let glob = globset::GlobBuilder::new(p)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map_err(|e| invalid(e.kind().to_string()))?;
    // globset panics when the regex it builds is over the regex size limit (`{a,b}` nesting).
    std::panic::catch_unwind(|| glob.compile_matcher())
        .map(Some)
        .map_err(|_| invalid("it is too complex".into()))
}

/// How long one call may spend on a persisted tier (waiting for a lock, running statements,
/// waiting for a server) before it is `TIMEOUT`.
pub const CALL_DEADLINE: Duration = Duration::from_secs(30);

/// The bounds of one call on a persisted tier: the call's abort and a deadline. SQLite checks
/// them from its progress and busy handlers, Redis while it waits for its worker, and every
/// wait for a shared connection checks them too, so an abort settles within a few tens of
/// milliseconds whatever the store is doing.
#[derive(Debug, Clone)]
pub struct Limits {
    cancel: Arc<AtomicBool>,
    deadline: Instant,
}

impl Limits {
    /// The limits of a call: its abort, and [`CALL_DEADLINE`] from now.
    pub fn of(ctx: &Ctx) -> Self {
        Self::new(ctx.cancel.flag(), CALL_DEADLINE)
    }

    /// Limits from an abort flag and a time budget.
    pub fn new(cancel: Arc<AtomicBool>, budget: Duration) -> Self {
        Self { cancel, deadline: Instant::now() + budget }
    }

    /// Whether the call must stop (aborted, or past its deadline).
    pub fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || Instant::now() >= self.deadline
    }

    /// How long until the deadline.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Why the call stopped: `CANCELLED`, else `TIMEOUT`.
    pub fn error(&self, what: &str) -> ToolError {
        if self.cancel.load(Ordering::Relaxed) {
            ToolError::cancelled()
        } else {
            ToolError::new(
                ErrorCode::Timeout,
                format!("{what} took more than {} s; the call did nothing", CALL_DEADLINE.as_secs()),
            )
        }
    }

    /// `Err` once stopped.
    pub fn check(&self, what: &str) -> Result<()> {
        if self.stopped() { Err(self.error(what)) } else { Ok(()) }
    }
}

/// A value shared by the calls of this process, one call at a time, whose wait gives way to
/// the waiting call's abort and deadline (a `std::sync::Mutex` wait cannot).
#[derive(Debug, Default)]
pub struct Gate<T> {
    busy: Mutex<bool>,
    freed: Condvar,
    value: Mutex<T>,
}

/// The value of a [`Gate`], held until dropped.
#[derive(Debug)]
pub struct GateGuard<'a, T> {
    gate: &'a Gate<T>,
    value: Option<MutexGuard<'a, T>>,
}

impl<T> Gate<T> {
    /// A gate around `value`.
    pub fn new(value: T) -> Self {
        Self { busy: Mutex::new(false), freed: Condvar::new(), value: Mutex::new(value) }
    }

    /// Wait for the value, giving up when `limits` stop the call.
    pub fn enter(&self, limits: &Limits, what: &str) -> Result<GateGuard<'_, T>> {
        let mut busy = lock(&self.busy);
        while *busy {
            if limits.stopped() {
                return Err(limits.error(what));
            }
            let wait = limits.remaining().min(Duration::from_millis(20));
            busy = self.freed.wait_timeout(busy, wait).map(|(g, _)| g).unwrap_or_else(|p| p.into_inner().0);
        }
        *busy = true;
        drop(busy);
        Ok(GateGuard { gate: self, value: Some(lock(&self.value)) })
    }
}

impl<T> std::ops::Deref for GateGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.value {
            Some(v) => v,
            None => unreachable!("a gate guard holds its value until dropped"),
        }
    }
}

impl<T> std::ops::DerefMut for GateGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match &mut self.value {
            Some(v) => v,
            None => unreachable!("a gate guard holds its value until dropped"),
        }
    }
}

impl<T> Drop for GateGuard<'_, T> {
    fn drop(&mut self) {
        self.value.take();
        *lock(&self.gate.busy) = false;
        self.gate.freed.notify_one();
    }
}

/// A tier's store in this call.
pub enum Store {
    /// The reasoning tier's table.
    Mem(Arc<Mutex<mem::Table>>),
    /// A database, with the call's limits.
    Db(Arc<Gate<sqlite::Db>>, PathBuf, Limits),
    /// A Redis server (`EDDIE_CACHE_URL`).
    Redis(redis::RedisTier),
}

const DB_WAIT: &str = "waiting for the cache database";

/// Where the database of a persisted tier is.
pub fn db_path(ctx: &Ctx, tier: Tier) -> Result<PathBuf> {
    match tier {
        Tier::Reasoning => Err(ToolError::internal("the reasoning tier has no file")),
        Tier::Project => Ok(ctx.workspace.resolve(".eddie/cache.db")?.real),
        Tier::Vault => Ok(super::user_dir(ctx)?.join("vault.db")),
    }
}

/// The Redis URL for the persisted tiers, when `EDDIE_CACHE_URL` names one.
pub fn redis_url(ctx: &Ctx) -> Option<String> {
    ctx.env_var("EDDIE_CACHE_URL")
        .map(|u| u.trim().to_owned())
        .filter(|u| u.starts_with("redis://") || u.starts_with("rediss://") || u.starts_with("redis+unix://"))
}

/// The store of `tier`.
pub fn store(ctx: &Ctx, tier: Tier) -> Result<Store> {
    let nonblank = |k: &str| ctx.env_var(k).filter(|v| !v.trim().is_empty());
    match tier {
        Tier::Reasoning => Ok(Store::Mem(mem::table(&ctx.workspace.root().display().to_string()))),
        Tier::Project if let Some(url) = redis_url(ctx) => {
            // The project's name on the shared server: EDDIE_CACHE_PROJECT, else the workspace path.
            let scope =
                nonblank("EDDIE_CACHE_PROJECT").unwrap_or_else(|| ctx.workspace.root().display().to_string());
            Ok(Store::Redis(redis::RedisTier::new(&url, tier.as_str(), &scope, Limits::of(ctx))))
        }
        Tier::Vault if let Some(url) = redis_url(ctx) => {
            let scope =
                nonblank("EDDIE_CACHE_USER").or_else(|| nonblank("USER")).unwrap_or_else(|| "user".into());
            Ok(Store::Redis(redis::RedisTier::new(&url, tier.as_str(), &scope, Limits::of(ctx))))
        }
        _ => {
            let p = db_path(ctx, tier)?;
            Ok(Store::Db(sqlite::db(&p), p, Limits::of(ctx)))
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Store {
    /// Whether the tier holds anything at all (a database file that does not exist does not).
    pub fn exists(&self) -> bool {
        match self {
            Self::Mem(_) => true,
            Self::Db(d, _, l) => d.enter(l, "opening the cache").is_ok_and(|db| db.exists()),
            Self::Redis(_) => true,
        }
    }

    /// See [`mem::Table::put`].
    pub fn put(&self, e: Entry<'_>, cap: u64) -> Result<Put> {
        match self {
            Self::Mem(t) => Ok(lock(t).put(e, cap)),
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.put(e, cap, l),
            Self::Redis(r) => r.put(e, cap),
        }
    }

    /// See [`mem::Table::get`].
    pub fn get(&self, key: &str, now: u64, count_miss: bool) -> Result<Option<Hit>> {
        match self {
            Self::Mem(t) => Ok(lock(t).get(key, now, count_miss)),
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.get(key, now, count_miss, l),
            Self::Redis(r) => r.get(key, now, count_miss),
        }
    }

    /// Record a miss.
    pub fn miss(&self) -> Result<()> {
        match self {
            Self::Mem(t) => {
                lock(t).miss();
                Ok(())
            }
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.miss(l),
            Self::Redis(r) => r.miss(),
        }
    }

    /// Delete a key.
    pub fn delete(&self, key: &str) -> Result<bool> {
        match self {
            Self::Mem(t) => Ok(lock(t).delete(key)),
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.delete(key, l),
            Self::Redis(r) => r.delete(key),
        }
    }

    /// Delete every key.
    pub fn clear(&self) -> Result<u64> {
        match self {
            Self::Mem(t) => Ok(lock(t).clear()),
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.clear(l),
            Self::Redis(r) => r.clear(),
        }
    }

    /// The live keys matching `keep`.
    pub fn keys(&self, now: u64, keep: &dyn Fn(&str) -> bool) -> Result<Vec<KeyInfo>> {
        match self {
            Self::Mem(t) => Ok(lock(t).keys(now, keep)),
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.keys(now, keep, l),
            Self::Redis(r) => r.keys(now, keep),
        }
    }

    /// The counters.
    pub fn stats(&self, now: u64) -> Result<TierStats> {
        match self {
            Self::Mem(t) => Ok(lock(t).stats(now)),
            Self::Db(d, _, l) => d.enter(l, DB_WAIT)?.stats(now, l),
            Self::Redis(r) => r.stats(now),
        }
    }

    /// Its backend's name.
    pub fn backend(&self) -> &'static str {
        match self {
            Self::Mem(_) => "memory",
            Self::Db(..) => "sqlite",
            Self::Redis(_) => "redis",
        }
    }

    /// Where it lives, for results.
    pub fn location(&self) -> Value {
        match self {
            Self::Mem(_) => Value::Null,
            Self::Db(_, p, _) => json!(p.display().to_string()),
            Self::Redis(r) => json!(r.location()),
        }
    }
}

/// The tiers a call acts on: the one given, else all of them.
pub fn tiers(t: Option<Tier>) -> Vec<Tier> {
    t.map_or_else(|| Tier::ALL.to_vec(), |t| vec![t])
}

/// The stores of `tiers` that exist (persisted tiers whose file is missing are skipped, so a
/// read never creates a database), with their tier. A persisted tier whose location cannot be
/// worked out (no per-user directory) is skipped when `skip_unavailable`.
pub fn existing(ctx: &Ctx, tiers: &[Tier], skip_unavailable: bool) -> Result<Vec<(Tier, Store)>> {
    let mut out = Vec::new();
    for &t in tiers {
        match store(ctx, t) {
            Ok(s) if s.exists() => out.push((t, s)),
            Ok(_) => {}
            Err(e) if skip_unavailable && e.code() == ErrorCode::StoreUnavailable => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// A cache tool's work: parse, then `f` on the calling thread (its `run` does this on the
/// blocking pool).
pub fn parsed<A: serde::de::DeserializeOwned>(
    name: &str,
    args: &Value,
    ctx: &Ctx,
    f: fn(A, &Ctx) -> Result<crate::output::ToolOutput>,
) -> Result<crate::output::ToolOutput> {
    f(crate::call::args::parse(name, args)?, ctx)
}

/// The blocking form of a cache tool ([`crate::spec::BlockingFn`]): [`parsed`], on the host's
/// thread. Not with a Redis server configured (`EDDIE_CACHE_URL`): that waits on the network,
/// so the host runs the tool's `run` instead.
pub fn blocking<A: serde::de::DeserializeOwned>(
    name: &str,
    args: &Value,
    ctx: &Ctx,
    f: fn(A, &Ctx) -> Result<crate::output::ToolOutput>,
) -> Result<Option<crate::output::ToolOutput>> {
    if redis_url(ctx).is_some() {
        return Ok(None);
    }
    parsed(name, args, ctx, f).map(Some)
}
