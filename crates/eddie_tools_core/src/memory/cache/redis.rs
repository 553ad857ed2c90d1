//! The persisted tiers on Redis, when `EDDIE_CACHE_URL=redis://…` is set: the same semantics
//! as [`super::sqlite`], so agents on several machines can share the `project` and `vault`
//! tiers.
//!
//! Layout under the prefix `eddie:cache:v1:<tier>:<scope>:` (scope: the project or user
//! name): `e:<key>` a hash `{v, c}` (value, created ms) whose TTL is the entry's (Redis expiry);
//! `sizes` a hash key → bytes; `lru` a sorted set key → last use (µs); `bytes` the total;
//! `stats` a hash of counters. Stores, hits and evictions run as Lua scripts, so they are
//! atomic with respect to other clients. An entry Redis expired is noticed (and counted as an
//! expiration) the next time its bookkeeping is touched. Keys are listed with `SCAN`.
//!
//! The client is the blocking one, and a blocking read cannot be interrupted: so each URL's
//! connection lives on a worker thread of its own, and a call hands its commands to it and
//! waits for the answer under its [`Limits`]. A server that accepts and never answers holds
//! the worker (until the socket's timeouts, 5 s to connect, 10 s per answer), never the call:
//! an abort settles at once, and the next call gets a new worker and a new connection.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::{Entry, Hit, KeyInfo, Limits, Put, TierStats};
use crate::error::{ErrorCode, Result, ToolError};

/// How long connecting (and the connection's setup) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one answer (or one write) may take.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a waiting call looks at its limits.
const POLL: Duration = Duration::from_millis(20);

const PUT: &str = r"
local p, key, val = ARGV[1], ARGV[2], ARGV[3]
local now, ttl, cap, us = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local size = #key + #val
local replaced = 0
local old = redis.call('HGET', p..'sizes', key)
if old then
  if redis.call('EXISTS', p..'e:'..key) == 1 then replaced = 1 else redis.call('HINCRBY', p..'stats', 'expirations', 1) end
  redis.call('INCRBY', p..'bytes', -tonumber(old))
end
redis.call('DEL', p..'e:'..key)
redis.call('HSET', p..'e:'..key, 'v', val, 'c', now)
if ttl > 0 then redis.call('PEXPIRE', p..'e:'..key, ttl) end
redis.call('HSET', p..'sizes', key, size)
redis.call('INCRBY', p..'bytes', size)
redis.call('ZADD', p..'lru', us, key)
local evicted = 0
while tonumber(redis.call('GET', p..'bytes') or '0') > cap do
  local first = redis.call('ZRANGE', p..'lru', 0, 0)[1]
  if (not first) or first == key then break end
  local s = redis.call('HGET', p..'sizes', first)
  redis.call('ZREM', p..'lru', first)
  redis.call('HDEL', p..'sizes', first)
  redis.call('INCRBY', p..'bytes', -tonumber(s or '0'))
  if redis.call('DEL', p..'e:'..first) == 1 then
    evicted = evicted + 1
    redis.call('HINCRBY', p..'stats', 'evictions', 1)
  else
    redis.call('HINCRBY', p..'stats', 'expirations', 1)
  end
end
return {replaced, evicted}
";

const GET: &str = r"
local p, key, us, count_miss = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local h = redis.call('HMGET', p..'e:'..key, 'v', 'c')
if h[1] then
  redis.call('ZADD', p..'lru', 'XX', us, key)
  redis.call('HINCRBY', p..'stats', 'hits', 1)
  return {h[1], h[2], redis.call('PTTL', p..'e:'..key)}
end
local s = redis.call('HGET', p..'sizes', key)
if s then
  redis.call('HDEL', p..'sizes', key)
  redis.call('ZREM', p..'lru', key)
  redis.call('INCRBY', p..'bytes', -tonumber(s))
  redis.call('HINCRBY', p..'stats', 'expirations', 1)
end
if count_miss == '1' then redis.call('HINCRBY', p..'stats', 'misses', 1) end
return false
";

const DELETE: &str = r"
local p, key = ARGV[1], ARGV[2]
local s = redis.call('HGET', p..'sizes', key)
local live = redis.call('DEL', p..'e:'..key)
if s then
  redis.call('HDEL', p..'sizes', key)
  redis.call('ZREM', p..'lru', key)
  redis.call('INCRBY', p..'bytes', -tonumber(s))
  if live == 0 then redis.call('HINCRBY', p..'stats', 'expirations', 1) end
end
return live
";

/// Drop the bookkeeping of entries Redis has expired; returns how many there were.
const SWEEP: &str = r"
local p = ARGV[1]
local n = 0
local all = redis.call('HGETALL', p..'sizes')
for i = 1, #all, 2 do
  local key, s = all[i], all[i + 1]
  if redis.call('EXISTS', p..'e:'..key) == 0 then
    redis.call('HDEL', p..'sizes', key)
    redis.call('ZREM', p..'lru', key)
    redis.call('INCRBY', p..'bytes', -tonumber(s))
    n = n + 1
  end
end
if n > 0 then redis.call('HINCRBY', p..'stats', 'expirations', n) end
return n
";

fn scripts() -> &'static [redis::Script; 4] {
    static S: OnceLock<[redis::Script; 4]> = OnceLock::new();
    S.get_or_init(|| {
        [
            redis::Script::new(PUT),
            redis::Script::new(GET),
            redis::Script::new(DELETE),
            redis::Script::new(SWEEP),
        ]
    })
}

/// A tier's store on a Redis server.
pub struct RedisTier {
    url: String,
    prefix: String,
    limits: Limits,
}

/// Work for a URL's worker: it gets the connection slot (empty when there is none yet).
type Job = Box<dyn FnOnce(&mut Option<redis::Connection>) + Send>;

/// A worker thread owning one URL's connection.
struct Worker {
    jobs: mpsc::Sender<Job>,
}

fn workers() -> &'static Mutex<HashMap<String, Arc<Worker>>> {
    static WORKERS: OnceLock<Mutex<HashMap<String, Arc<Worker>>>> = OnceLock::new();
    WORKERS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The worker of `url`, started when there is none.
fn worker(url: &str) -> Result<Arc<Worker>> {
    let mut w = workers().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = w.get(url) {
        return Ok(Arc::clone(found));
    }
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("eddie-redis".into())
        .spawn(move || {
            let mut conn: Option<redis::Connection> = None;
            // Ends when every sender is gone (the worker was retired and its last job done).
            while let Ok(job) = rx.recv() {
                job(&mut conn);
            }
        })
        .map_err(|e| {
            ToolError::new(ErrorCode::StoreUnavailable, format!("cannot start the cache client: {e}"))
        })?;
    let fresh = Arc::new(Worker { jobs: tx });
    w.insert(url.to_owned(), Arc::clone(&fresh));
    Ok(fresh)
}

/// Retire `stuck` (a call gave up waiting on it): later calls get a new worker and connection;
/// the old one ends when its job returns (by its socket timeouts at the latest).
fn retire(url: &str, stuck: &Arc<Worker>) {
    let mut w = workers().lock().unwrap_or_else(|e| e.into_inner());
    if w.get(url).is_some_and(|cur| Arc::ptr_eq(cur, stuck)) {
        w.remove(url);
    }
}

fn shown(url: &str) -> String {
    // Never show a password.
    match url.split_once('@') {
        Some((scheme_user, host)) => {
            let scheme = scheme_user.split_once("://").map_or("redis", |(s, _)| s);
            format!("{scheme}://…@{host}")
        }
        None => url.to_owned(),
    }
}

fn unavailable(url: &str, e: &redis::RedisError) -> ToolError {
    ToolError::new(ErrorCode::StoreUnavailable, format!("cache server {}: {e}", shown(url)))
        .with_prop("url", shown(url))
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Run `f` on the connection in `slot` (connecting first when there is none; a dropped
/// connection is opened again once).
fn on_connection<T>(
    url: &str,
    slot: &mut Option<redis::Connection>,
    f: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>,
) -> Result<T> {
    for attempt in 0..2 {
        if slot.is_none() {
            let client = redis::Client::open(url).map_err(|e| unavailable(url, &e))?;
            let c = client.get_connection_with_timeout(CONNECT_TIMEOUT).map_err(|e| unavailable(url, &e))?;
            c.set_read_timeout(Some(IO_TIMEOUT)).map_err(|e| unavailable(url, &e))?;
            c.set_write_timeout(Some(IO_TIMEOUT)).map_err(|e| unavailable(url, &e))?;
            *slot = Some(c);
        }
        let Some(c) = slot.as_mut() else { break };
        match f(c) {
            Ok(v) => return Ok(v),
            // A dropped connection is opened again once.
            Err(e) if attempt == 0 && (e.is_io_error() || e.is_connection_dropped()) => *slot = None,
            Err(e) => {
                if e.is_io_error() || e.is_timeout() {
                    // An answer may still come on this connection: never read it as another's.
                    *slot = None;
                }
                return Err(unavailable(url, &e));
            }
        }
    }
    *slot = None;
    Err(ToolError::new(ErrorCode::StoreUnavailable, format!("cache server {}: connection lost", shown(url))))
}

impl RedisTier {
    /// The tier `tier` of scope `scope` on the server at `url`, for a call bounded by `limits`.
    pub fn new(url: &str, tier: &str, scope: &str, limits: Limits) -> Self {
        let scope = blake3::hash(scope.as_bytes()).to_hex();
        Self { url: url.to_owned(), prefix: format!("eddie:cache:v1:{tier}:{}:", &scope[..16]), limits }
    }

    /// Where it lives, for results.
    pub fn location(&self) -> String {
        format!("{} {}", shown(&self.url), self.prefix)
    }

    /// Run `f` on this URL's connection, on its worker; the wait gives way to the call's abort
    /// and deadline.
    fn with<T: Send + 'static>(
        &self,
        f: impl Fn(&mut redis::Connection) -> redis::RedisResult<T> + Send + 'static,
    ) -> Result<T> {
        const WHAT: &str = "the cache server";
        self.limits.check(WHAT)?;
        let w = worker(&self.url)?;
        let (tx, rx) = mpsc::sync_channel::<Result<T>>(1);
        let url = self.url.clone();
        let job: Job = Box::new(move |slot| {
            let _ = tx.send(on_connection(&url, slot, f));
        });
        if w.jobs.send(job).is_err() {
            retire(&self.url, &w);
            return Err(ToolError::new(
                ErrorCode::StoreUnavailable,
                format!("cache server {}: the client stopped", shown(&self.url)),
            ));
        }
        loop {
            match rx.recv_timeout(POLL.min(self.limits.remaining()).max(Duration::from_millis(1))) {
                Ok(r) => return r,
                Err(mpsc::RecvTimeoutError::Timeout) if self.limits.stopped() => {
                    retire(&self.url, &w);
                    return Err(self.limits.error(WHAT));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    retire(&self.url, &w);
                    return Err(ToolError::new(
                        ErrorCode::StoreUnavailable,
                        format!("cache server {}: the client stopped", shown(&self.url)),
                    ));
                }
            }
        }
    }

    /// See [`super::mem::Table::put`].
    pub fn put(&self, e: Entry<'_>, cap: u64) -> Result<Put> {
        let ttl = e.expires_ms.map_or(0, |x| x.saturating_sub(e.now_ms).max(1));
        let (p, key, value, now) = (self.prefix.clone(), e.key.to_owned(), e.value.to_owned(), e.now_ms);
        let (replaced, evicted): (i64, i64) = self.with(move |c| {
            scripts()[0].arg(&p).arg(&key).arg(&value).arg(now).arg(ttl).arg(cap).arg(now_us()).invoke(c)
        })?;
        Ok(Put { replaced: replaced == 1, evicted: evicted.max(0) as u64 })
    }

    /// See [`super::mem::Table::get`].
    pub fn get(&self, key: &str, now: u64, count_miss: bool) -> Result<Option<Hit>> {
        let (p, key) = (self.prefix.clone(), key.to_owned());
        let r: Option<(String, u64, i64)> = self.with(move |c| {
            scripts()[1].arg(&p).arg(&key).arg(now_us()).arg(if count_miss { "1" } else { "0" }).invoke(c)
        })?;
        Ok(r.map(|(value, created, pttl)| Hit {
            value,
            created_ms: created,
            expires_ms: (pttl >= 0).then(|| now + pttl as u64),
        }))
    }

    /// Record a miss.
    pub fn miss(&self) -> Result<()> {
        let stats = format!("{}stats", self.prefix);
        self.with(move |c| redis::cmd("HINCRBY").arg(&stats).arg("misses").arg(1).query::<i64>(c)).map(|_| ())
    }

    /// Delete a key.
    pub fn delete(&self, key: &str) -> Result<bool> {
        let (p, key) = (self.prefix.clone(), key.to_owned());
        let n: i64 = self.with(move |c| scripts()[2].arg(&p).arg(&key).invoke(c))?;
        Ok(n > 0)
    }

    /// Delete every entry; how many there were.
    pub fn clear(&self) -> Result<u64> {
        let p = self.prefix.clone();
        self.with(move |c| {
            let _: i64 = scripts()[3].arg(&p).invoke(c)?;
            let keys = scan_keys(&p, c)?;
            let n = keys.len() as u64;
            for chunk in keys.chunks(500) {
                let _: i64 = redis::cmd("DEL").arg(chunk).query(c)?;
            }
            let _: i64 = redis::cmd("DEL")
                .arg(format!("{p}sizes"))
                .arg(format!("{p}lru"))
                .arg(format!("{p}bytes"))
                .query(c)?;
            Ok(n)
        })
    }

    /// The live keys matching `keep`.
    pub fn keys(&self, now: u64, keep: &dyn Fn(&str) -> bool) -> Result<Vec<KeyInfo>> {
        let p = self.prefix.clone();
        let strip = format!("{p}e:");
        let all = self.with(move |c| {
            let _: i64 = scripts()[3].arg(&p).invoke(c)?;
            scan_keys(&p, c)
        })?;
        let kept: Vec<String> =
            all.into_iter().filter(|full| full.strip_prefix(&strip).is_some_and(keep)).collect();
        let (p, strip2) = (self.prefix.clone(), strip.clone());
        self.with(move |c| {
            let mut out = Vec::new();
            for full in &kept {
                let Some(key) = full.strip_prefix(&strip2) else { continue };
                let (created, pttl): (Option<u64>, i64) =
                    redis::pipe().hget(full, "c").cmd("PTTL").arg(full).query(c)?;
                let Some(created) = created else { continue };
                let size: Option<u64> = redis::cmd("HGET").arg(format!("{p}sizes")).arg(key).query(c)?;
                out.push(KeyInfo {
                    key: key.to_owned(),
                    bytes: size.unwrap_or(0),
                    created_ms: created,
                    expires_ms: (pttl >= 0).then(|| now + pttl as u64),
                });
            }
            Ok(out)
        })
    }

    /// The counters.
    pub fn stats(&self, _now: u64) -> Result<TierStats> {
        let p = self.prefix.clone();
        self.with(move |c| {
            let _: i64 = scripts()[3].arg(&p).invoke(c)?;
            let m: HashMap<String, i64> = redis::cmd("HGETALL").arg(format!("{p}stats")).query(c)?;
            let entries: i64 = redis::cmd("HLEN").arg(format!("{p}sizes")).query(c)?;
            let bytes: Option<i64> = redis::cmd("GET").arg(format!("{p}bytes")).query(c)?;
            let g = |k: &str| m.get(k).copied().unwrap_or(0).max(0) as u64;
            Ok(TierStats {
                entries: entries.max(0) as u64,
                bytes: bytes.unwrap_or(0).max(0) as u64,
                hits: g("hits"),
                misses: g("misses"),
                expirations: g("expirations"),
                evictions: g("evictions"),
            })
        })
    }
}

fn scan_keys(prefix: &str, c: &mut redis::Connection) -> redis::RedisResult<Vec<String>> {
    let pattern = format!("{}e:*", glob_escape(prefix));
    let mut out = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<String>) =
            redis::cmd("SCAN").arg(cursor).arg("MATCH").arg(&pattern).arg("COUNT").arg(1000).query(c)?;
        out.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    Ok(out)
}

/// `s` with Redis glob characters escaped.
fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if matches!(ch, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}
