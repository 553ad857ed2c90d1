//! BM25 over memory entries, with the key (heading) weighted above the body (BM25F with one
//! length per entry: a term's frequency is `KEY_WEIGHT × in the key + in the body`).
//!
//! The index of a file is kept per process and rebuilt only when the file's fingerprint
//! (device, inode, size, modification time) changes, so a recall costs a `stat` and the
//! scoring of the query's postings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::md;

/// How much a word in the key counts against one in the body.
pub const KEY_WEIGHT: f32 = 3.0;
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// An index of one file's entries.
#[derive(Debug, Default)]
pub struct Index {
    /// The file's text.
    pub text: String,
    /// Its entries.
    pub entries: Vec<md::Entry>,
    postings: HashMap<String, Vec<(u32, f32)>>,
    lengths: Vec<f32>,
    average: f32,
}

/// The words of `s`: runs of letters and digits, lower-cased.
pub fn words(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase)
}

impl Index {
    /// Index `text`.
    pub fn build(text: String) -> Self {
        let entries = md::parse(&text);
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(entries.len());
        let mut tf: HashMap<String, f32> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            tf.clear();
            let mut len = 0.0;
            for w in words(&e.key) {
                *tf.entry(w).or_default() += KEY_WEIGHT;
                len += KEY_WEIGHT;
            }
            for w in words(&text[e.body.clone()]) {
                *tf.entry(w).or_default() += 1.0;
                len += 1.0;
            }
            for (w, f) in tf.drain() {
                postings.entry(w).or_default().push((i as u32, f));
            }
            lengths.push(len);
        }
        let average =
            if lengths.is_empty() { 1.0 } else { lengths.iter().sum::<f32>() / lengths.len() as f32 };
        Self { text, entries, postings, lengths, average: average.max(1.0) }
    }

    /// The best `max` entries for `query`: `(entry index, score)`, best first (ties in file
    /// order). Entries that share no word with the query are left out.
    pub fn search(&self, query: &str, max: usize) -> Vec<(usize, f32)> {
        let n = self.entries.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        let mut terms: Vec<String> = words(query).collect();
        terms.sort();
        terms.dedup();
        for t in &terms {
            let Some(list) = self.postings.get(t) else { continue };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, f) in list {
                let len = self.lengths[doc as usize];
                let s = idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / self.average));
                *scores.entry(doc).or_default() += s;
            }
        }
        let mut ranked: Vec<(usize, f32)> = scores.into_iter().map(|(d, s)| (d as usize, s)).collect();
        let cmp = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if ranked.len() > max {
            ranked.select_nth_unstable_by(max, cmp);
            ranked.truncate(max);
        }
        ranked.sort_by(cmp);
        ranked
    }
}

/// What identifies a version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl Stamp {
    /// The stamp of `m`.
    pub fn of(m: &std::fs::Metadata) -> Self {
        let s = crate::engine::platform::Stamp::of(m);
        Self { dev: s.dev, ino: s.ino, len: s.len, mtime_ns: s.mtime_ns }
    }
}

type Cached = HashMap<PathBuf, (Stamp, Arc<Index>)>;

fn cache() -> &'static Mutex<Cached> {
    static CACHE: OnceLock<Mutex<Cached>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The cached index of `path` when it still has stamp `stamp`.
pub fn cached(path: &Path, stamp: Stamp) -> Option<Arc<Index>> {
    let c = cache().lock().unwrap_or_else(|p| p.into_inner());
    c.get(path).filter(|(s, _)| *s == stamp).map(|(_, i)| Arc::clone(i))
}

/// Remember `index` for `path` at `stamp` (a few files at most are kept).
pub fn remember(path: &Path, stamp: Stamp, index: Arc<Index>) {
    let mut c = cache().lock().unwrap_or_else(|p| p.into_inner());
    if c.len() >= 16 && !c.contains_key(path) {
        c.clear();
    }
    c.insert(path.to_path_buf(), (stamp, index));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_words_count_more_than_body_words() {
        let text = "## deploy notes\n\nsomething else\n\n## misc\n\nwe deploy with make\n\n## unrelated\n\nnothing\n";
        let ix = Index::build(text.to_owned());
        let r = ix.search("deploy", 10);
        assert_eq!(r.len(), 2);
        assert_eq!(ix.entries[r[0].0].key, "deploy notes");
        assert!(r[0].1 > r[1].1);
        assert!(ix.search("absent", 10).is_empty());
        assert_eq!(ix.search("deploy", 1).len(), 1);
    }
}
