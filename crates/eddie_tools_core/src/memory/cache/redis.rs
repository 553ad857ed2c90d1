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

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::{Entry, Hit, KeyInfo, Put, TierStats};
use crate::error::{ErrorCode, Result, ToolError};

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
}

type Conns = HashMap<String, Arc<Mutex<Option<redis::Connection>>>>;

fn conn_slot(url: &str) -> Arc<Mutex<Option<redis::Connection>>> {
    static CONNS: OnceLock<Mutex<Conns>> = OnceLock::new();
    let mut c = CONNS.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(c.entry(url.to_owned()).or_default())
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

impl RedisTier {
    /// The tier `tier` of scope `scope` on the server at `url`.
    pub fn new(url: &str, tier: &str, scope: &str) -> Self {
        let scope = blake3::hash(scope.as_bytes()).to_hex();
        Self { url: url.to_owned(), prefix: format!("eddie:cache:v1:{tier}:{}:", &scope[..16]) }
    }

    /// Where it lives, for results.
    pub fn location(&self) -> String {
        format!("{} {}", shown(&self.url), self.prefix)
    }

    fn with<T>(&self, f: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>) -> Result<T> {
        let slot = conn_slot(&self.url);
        let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
        for attempt in 0..2 {
            if guard.is_none() {
                let client =
                    redis::Client::open(self.url.as_str()).map_err(|e| unavailable(&self.url, &e))?;
                let c = client
                    .get_connection_with_timeout(Duration::from_secs(5))
                    .map_err(|e| unavailable(&self.url, &e))?;
                let _ = c.set_read_timeout(Some(Duration::from_secs(10)));
                let _ = c.set_write_timeout(Some(Duration::from_secs(10)));
                *guard = Some(c);
            }
            let Some(c) = guard.as_mut() else { break };
            match f(c) {
                Ok(v) => return Ok(v),
                // A dropped connection is opened again once.
                Err(e) if attempt == 0 && (e.is_io_error() || e.is_connection_dropped()) => *guard = None,
                Err(e) => return Err(unavailable(&self.url, &e)),
            }
        }
        Err(ToolError::new(
            ErrorCode::StoreUnavailable,
            format!("cache server {}: connection lost", shown(&self.url)),
        ))
    }

    /// See [`super::mem::Table::put`].
    pub fn put(&self, e: Entry<'_>, cap: u64) -> Result<Put> {
        let ttl = e.expires_ms.map_or(0, |x| x.saturating_sub(e.now_ms).max(1));
        let (replaced, evicted): (i64, i64) = self.with(|c| {
            scripts()[0]
                .arg(&self.prefix)
                .arg(e.key)
                .arg(e.value)
                .arg(e.now_ms)
                .arg(ttl)
                .arg(cap)
                .arg(now_us())
                .invoke(c)
        })?;
        Ok(Put { replaced: replaced == 1, evicted: evicted.max(0) as u64 })
    }

    /// See [`super::mem::Table::get`].
    pub fn get(&self, key: &str, now: u64, count_miss: bool) -> Result<Option<Hit>> {
        let r: Option<(String, u64, i64)> = self.with(|c| {
            scripts()[1]
                .arg(&self.prefix)
                .arg(key)
                .arg(now_us())
                .arg(if count_miss { "1" } else { "0" })
                .invoke(c)
        })?;
        Ok(r.map(|(value, created, pttl)| Hit {
            value,
            created_ms: created,
            expires_ms: (pttl >= 0).then(|| now + pttl as u64),
        }))
    }

    /// Record a miss.
    pub fn miss(&self) -> Result<()> {
        self.with(|c| {
            redis::cmd("HINCRBY").arg(format!("{}stats", self.prefix)).arg("misses").arg(1).query::<i64>(c)
        })
        .map(|_| ())
    }

    /// Delete a key.
    pub fn delete(&self, key: &str) -> Result<bool> {
        let n: i64 = self.with(|c| scripts()[2].arg(&self.prefix).arg(key).invoke(c))?;
        Ok(n > 0)
    }

    fn scan_keys(&self, c: &mut redis::Connection) -> redis::RedisResult<Vec<String>> {
        let pattern = format!("{}e:*", glob_escape(&self.prefix));
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

    /// Delete every entry; how many there were.
    pub fn clear(&self) -> Result<u64> {
        self.with(|c| {
            let _: i64 = scripts()[3].arg(&self.prefix).invoke(c)?;
            let keys = self.scan_keys(c)?;
            let n = keys.len() as u64;
            for chunk in keys.chunks(500) {
                let _: i64 = redis::cmd("DEL").arg(chunk).query(c)?;
            }
            let _: i64 = redis::cmd("DEL")
                .arg(format!("{}sizes", self.prefix))
                .arg(format!("{}lru", self.prefix))
                .arg(format!("{}bytes", self.prefix))
                .query(c)?;
            Ok(n)
        })
    }

    /// The live keys matching `keep`.
    pub fn keys(&self, now: u64, keep: &dyn Fn(&str) -> bool) -> Result<Vec<KeyInfo>> {
        let strip = format!("{}e:", self.prefix);
        self.with(|c| {
            let _: i64 = scripts()[3].arg(&self.prefix).invoke(c)?;
            let mut out = Vec::new();
            for full in self.scan_keys(c)? {
                let Some(key) = full.strip_prefix(&strip) else { continue };
                if !keep(key) {
                    continue;
                }
                let (created, pttl): (Option<u64>, i64) =
                    redis::pipe().hget(&full, "c").cmd("PTTL").arg(&full).query(c)?;
                let Some(created) = created else { continue };
                let size: Option<u64> =
                    redis::cmd("HGET").arg(format!("{}sizes", self.prefix)).arg(key).query(c)?;
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
        self.with(|c| {
            let _: i64 = scripts()[3].arg(&self.prefix).invoke(c)?;
            let m: HashMap<String, i64> =
                redis::cmd("HGETALL").arg(format!("{}stats", self.prefix)).query(c)?;
            let entries: i64 = redis::cmd("HLEN").arg(format!("{}sizes", self.prefix)).query(c)?;
            let bytes: Option<i64> = redis::cmd("GET").arg(format!("{}bytes", self.prefix)).query(c)?;
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
