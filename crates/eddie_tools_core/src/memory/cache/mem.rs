//! The `reasoning` tier: entries in process memory, one table per workspace (for as long as the
//! process, the host's session, lives),
//! least recently used first out when the tier is over its cap.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use super::{Entry, Hit, KeyInfo, Put, TierStats};

#[derive(Debug)]
struct Slot {
    value: Arc<str>,
    created_ms: u64,
    expires_ms: Option<u64>,
    tick: u64,
    size: u64,
}

/// One table.
#[derive(Debug, Default)]
pub struct Table {
    slots: HashMap<String, Slot>,
    order: BTreeMap<u64, String>,
    clock: u64,
    bytes: u64,
    hits: u64,
    misses: u64,
    expirations: u64,
    evictions: u64,
}

type Tables = HashMap<String, Arc<Mutex<Table>>>;

/// The table of workspace `root`.
pub fn table(root: &str) -> Arc<Mutex<Table>> {
    static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();
    let mut t = TABLES.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|p| p.into_inner());
    Arc::clone(t.entry(root.to_owned()).or_default())
}

impl Table {
    fn touch(&mut self, key: &str) {
        self.clock += 1;
        let tick = self.clock;
        if let Some(s) = self.slots.get_mut(key) {
            self.order.remove(&s.tick);
            s.tick = tick;
            self.order.insert(tick, key.to_owned());
        }
    }

    fn remove(&mut self, key: &str) -> bool {
        match self.slots.remove(key) {
            Some(s) => {
                self.order.remove(&s.tick);
                self.bytes -= s.size;
                true
            }
            None => false,
        }
    }

    fn purge(&mut self, now: u64) {
        let dead: Vec<String> = self
            .slots
            .iter()
            .filter(|(_, s)| s.expires_ms.is_some_and(|e| e <= now))
            .map(|(k, _)| k.clone())
            .collect();
        for k in dead {
            self.remove(&k);
            self.expirations += 1;
        }
    }

    /// Store an entry; evict the least recently used others while over `cap`.
    pub fn put(&mut self, e: Entry<'_>, cap: u64) -> Put {
        let replaced = self.remove(e.key);
        let size = (e.key.len() + e.value.len()) as u64;
        self.clock += 1;
        let tick = self.clock;
        self.slots.insert(
            e.key.to_owned(),
            Slot { value: Arc::from(e.value), created_ms: e.now_ms, expires_ms: e.expires_ms, tick, size },
        );
        self.order.insert(tick, e.key.to_owned());
        self.bytes += size;
        let mut evicted = 0;
        if self.bytes > cap {
            self.purge(e.now_ms);
        }
        while self.bytes > cap {
            let Some((_, oldest)) = self.order.iter().next().map(|(t, k)| (*t, k.clone())) else { break };
            if oldest == e.key {
                break;
            }
            self.remove(&oldest);
            self.evictions += 1;
            evicted += 1;
        }
        Put { replaced, evicted }
    }

    /// Look an entry up (a hit refreshes it); `count_miss`: record a miss when absent.
    pub fn get(&mut self, key: &str, now: u64, count_miss: bool) -> Option<Hit> {
        let expired = self.slots.get(key).is_some_and(|s| s.expires_ms.is_some_and(|e| e <= now));
        if expired {
            self.remove(key);
            self.expirations += 1;
        }
        let Some(s) = self.slots.get(key) else {
            if count_miss {
                self.misses += 1;
            }
            return None;
        };
        let hit = Hit { value: s.value.to_string(), created_ms: s.created_ms, expires_ms: s.expires_ms };
        self.hits += 1;
        self.touch(key);
        Some(hit)
    }

    /// Record a miss.
    pub fn miss(&mut self) {
        self.misses += 1;
    }

    /// Delete an entry.
    pub fn delete(&mut self, key: &str) -> bool {
        self.remove(key)
    }

    /// Delete every entry; how many there were.
    pub fn clear(&mut self) -> u64 {
        let n = self.slots.len() as u64;
        self.slots.clear();
        self.order.clear();
        self.bytes = 0;
        n
    }

    /// The live keys matching `keep`.
    pub fn keys(&mut self, now: u64, keep: &dyn Fn(&str) -> bool) -> Vec<KeyInfo> {
        self.purge(now);
        self.slots
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(k, s)| KeyInfo {
                key: k.clone(),
                bytes: s.size,
                created_ms: s.created_ms,
                expires_ms: s.expires_ms,
            })
            .collect()
    }

    /// The counters.
    pub fn stats(&mut self, now: u64) -> TierStats {
        self.purge(now);
        TierStats {
            entries: self.slots.len() as u64,
            bytes: self.bytes,
            hits: self.hits,
            misses: self.misses,
            expirations: self.expirations,
            evictions: self.evictions,
        }
    }
}
