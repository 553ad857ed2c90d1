//! Results memoised across calls, keyed by object ids.
//!
//! Agents call `git_blame` and `git_log {files: true}` again and again on the same repository,
//! and after a commit only the newest commit is new. A blob diff's hunks (blame), a blob pair's
//! line counts and a blob's line count (log's numstat) are functions of the objects' contents,
//! and so is what changed between two trees (the paths, their modes and blob ids; the renames
//! libgit2 finds between them), so they are kept here between calls, keyed by the ids and by
//! the object database.
//!
//! **What a key holds.** The object database ([`Odb`]: the device, inode and birth time of the
//! repository's objects folder, and what `objects/info/alternates` is: its inode, size and
//! times, or that it is absent), then the object ids. Everything else that changes a result is
//! either fixed (blame's diff options are constant; log's counts are libgit2's default xdiff
//! with no whitespace option) or applied outside the memo on every call: the `diff` attribute
//! of each path (a `-diff` file is binary whatever the memo holds, a `diff` file is counted as
//! text), the call's scope, mailmap (not used by these tools). Commit parents (grafts, shallow)
//! are read from the repository on every call; the memo holds nothing about commits.
//!
//! **Why per object database.** The tools switch libgit2's hash verification off for speed (as
//! git reads objects without re-hashing them), so an object database may hold content that
//! does not hash to its id: a hostile repository can make one id mean something else in it.
//! Keyed by its objects folder, what such a repository makes up stays in its own answers and
//! never reaches another repository's. A repository deleted and created again at the same path
//! has another objects folder (a new inode and birth time), and a change of its alternates (the
//! objects of another repository borrowed) is a new key too. libgit2 does not read
//! `refs/replace` (git's replace objects), so a replace ref changes no answer of these tools,
//! memoised or not. Within one object database an id is taken to name one content, as git
//! itself takes it (it does not re-hash objects it reads either).
//!
//! **Never for a missing object.** A memoised blob diff or count is used only when the object
//! database still has the blobs it was made from ([`present`]), so a repository with a blob
//! removed fails as it did before. What a memoised tree comparison holds (the subtrees it read)
//! is not checked again: the root trees are read on every call, and a repository missing a
//! subtree that its root tree names is corrupt.
//!
//! **Bounded.** Each memo has a byte budget (blame's hunks 14 MiB and renames 2 MiB, log's
//! counts 8 MiB and tree comparisons 8 MiB: at most 32 MiB for the process, every repository
//! together) and drops its least recently used
//! entries to stay under it. An entry larger than a quarter of the budget is not kept. Lookups
//! and inserts hold a mutex for a hash-map operation only.

use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};

use hashlink::LruCache;

/// An object database, as the memos key it: its objects folder (device, inode, birth time) and
/// its alternates file (inode, size, modification and change times; `None`: no such file).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Odb {
    dev: u64,
    ino: u64,
    born: Option<(u64, u32)>,
    alternates: Option<(u64, u64, i64, i64, i64, i64)>,
}

/// The object database of `repo`, or `None` when it cannot be told apart from another (the
/// objects folder cannot be stat()ed, or not on Unix): then nothing is memoised for the call.
#[cfg(unix)]
pub fn odb(repo: &git2::Repository) -> Option<Odb> {
    use std::os::unix::fs::MetadataExt;
    let objects = repo.commondir().join("objects");
    let m = std::fs::metadata(&objects).ok()?;
    let born = m.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    let alternates = match std::fs::metadata(objects.join("info").join("alternates")) {
        Ok(a) => Some((a.ino(), a.size(), a.mtime(), a.mtime_nsec(), a.ctime(), a.ctime_nsec())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // Neither there nor readable as absent: do not memoise.
        Err(_) => return None,
    };
    Some(Odb { dev: m.dev(), ino: m.ino(), born: born.map(|d| (d.as_secs(), d.subsec_nanos())), alternates })
}

#[cfg(not(unix))]
pub fn odb(_: &git2::Repository) -> Option<Odb> {
    None
}

/// Whether the object database of `repo` has every object of `ids` (a memoised answer is used
/// only then: a blob removed from a corrupt repository fails the call as it did before, rather
/// than being answered from the memo). One index lookup (packed) or stat() (loose) each.
pub fn present(repo: &git2::Repository, ids: &[git2::Oid]) -> bool {
    let Ok(odb) = repo.odb() else { return false };
    ids.iter().all(|id| odb.exists(*id))
}

/// A value's size in bytes, as the budget counts it (its heap part; the key and the entry's
/// own bookkeeping are added by [`Memo`]).
pub trait Weigh {
    /// The bytes the value holds on the heap.
    fn heap_bytes(&self) -> usize;
}

struct Inner<K: Hash + Eq, V> {
    map: LruCache<K, (V, usize)>,
    bytes: usize,
}

/// A thread-safe map from keys to values with a byte budget, dropping the least recently used
/// entries first.
pub struct Memo<K: Hash + Eq, V> {
    budget: usize,
    inner: Mutex<Option<Inner<K, V>>>,
}

/// What an entry costs besides its value's heap part: the key, the value, the size, the hash
/// map's slot and the LRU list's links.
const fn overhead<K, V>() -> usize {
    std::mem::size_of::<K>() + std::mem::size_of::<V>() + std::mem::size_of::<usize>() + 48
}

impl<K: Hash + Eq, V: Clone + Weigh> Memo<K, V> {
    /// An empty memo that keeps at most `budget` bytes.
    pub const fn new(budget: usize) -> Self {
        Self { budget, inner: Mutex::new(None) }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Inner<K, V>>> {
        // A panic while the lock was held cannot leave the map half-changed in a way that
        // matters: at worst `bytes` is off until `clear`.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value of `key` (now the most recently used), if kept.
    pub fn get(&self, key: &K) -> Option<V> {
        let mut g = self.lock();
        g.as_mut()?.map.get(key).map(|(v, _)| v.clone())
    }

    /// Keep `value` for `key`, dropping the least recently used entries to stay in the budget.
    pub fn put(&self, key: K, value: V) {
        let size = value.heap_bytes() + overhead::<K, V>();
        if size > self.budget / 4 {
            return;
        }
        let mut g = self.lock();
        let inner = g.get_or_insert_with(|| Inner { map: LruCache::new_unbounded(), bytes: 0 });
        if let Some((_, old)) = inner.map.insert(key, (value, size)) {
            inner.bytes = inner.bytes.saturating_sub(old);
        }
        inner.bytes += size;
        while inner.bytes > self.budget {
            match inner.map.remove_lru() {
                Some((_, (_, s))) => inner.bytes = inner.bytes.saturating_sub(s),
                None => {
                    inner.bytes = 0;
                    break;
                }
            }
        }
    }

    /// The bytes counted against the budget now, and the number of entries.
    pub fn usage(&self) -> (usize, usize) {
        self.lock().as_ref().map_or((0, 0), |i| (i.bytes, i.map.len()))
    }

    /// Drop every entry.
    pub fn clear(&self) {
        *self.lock() = None;
    }

    /// The budget in bytes.
    pub fn budget(&self) -> usize {
        self.budget
    }
}

/// Empty every memo of the family (tests; a host that wants the memory back).
pub fn clear() {
    super::blame::MEMO.clear();
    super::blame::RENAMES.clear();
    super::log_numstat::clear_memo();
}

/// Bytes and entries held by every memo of the family.
pub fn usage() -> (usize, usize) {
    let (a, b) = super::blame::MEMO.usage();
    let (c, d) = super::log_numstat::memo_usage();
    let (e, f) = super::blame::RENAMES.usage();
    (a + c + e, b + d + f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone)]
    struct Bytes(Vec<u8>);
    impl Weigh for Bytes {
        fn heap_bytes(&self) -> usize {
            self.0.len()
        }
    }

    #[test]
    fn a_memo_stays_under_its_budget_dropping_the_least_recently_used() {
        let m: Memo<u32, Bytes> = Memo::new(64 * 1024);
        for k in 0..1000u32 {
            m.put(k, Bytes(vec![0; 1000]));
            assert!(m.usage().0 <= m.budget(), "over budget after {k}");
        }
        let (_, n) = m.usage();
        assert!(n > 10 && n < 70, "{n} entries kept");
        assert!(m.get(&0).is_none(), "the oldest went first");
        assert!(m.get(&999).is_some());
        // A use makes an entry the most recent: it survives the next inserts.
        let keep = 1000 - n as u32 + 1;
        assert!(m.get(&keep).is_some());
        for k in 1000..1005u32 {
            m.put(k, Bytes(vec![0; 1000]));
        }
        assert!(m.get(&keep).is_some(), "a used entry was dropped before older ones");
        assert!(m.get(&(keep + 1)).is_none());
        // Too big for the budget: not kept, nothing else dropped.
        let before = m.usage();
        m.put(5000, Bytes(vec![0; 20 * 1024]));
        assert!(m.get(&5000).is_none());
        assert_eq!(m.usage(), before);
        m.clear();
        assert_eq!(m.usage(), (0, 0));
    }

    #[test]
    fn a_memo_is_shared_by_threads() {
        let m: Memo<u32, Bytes> = Memo::new(1 << 20);
        std::thread::scope(|s| {
            for t in 0..8u32 {
                let m = &m;
                s.spawn(move || {
                    for k in 0..500u32 {
                        m.put(t * 1000 + k, Bytes(vec![t as u8; 100]));
                        if let Some(v) = m.get(&(t * 1000 + k / 2)) {
                            assert!(v.0.iter().all(|&b| b == t as u8));
                        }
                    }
                });
            }
        });
        let (bytes, n) = m.usage();
        assert!(bytes <= m.budget());
        assert!(n > 0);
    }

    #[test]
    fn a_recreated_objects_folder_is_another_odb() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("r");
        let r = git2::Repository::init(&p).unwrap();
        let a = odb(&r).unwrap();
        assert_eq!(odb(&r), Some(a), "stable while nothing changes");
        std::fs::write(p.join(".git/objects/info/alternates"), "/nowhere\n").unwrap();
        let b = odb(&r).unwrap();
        assert_ne!(a, b, "alternates added");
        drop(r);
        std::fs::remove_dir_all(&p).unwrap();
        let r = git2::Repository::init(&p).unwrap();
        assert_ne!(odb(&r), Some(a), "created again at the same path");
    }
}
