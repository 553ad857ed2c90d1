//! Trigram posting lists: for each trigram, the ids of the files that hold it, delta-encoded
//! as varints in one byte array.

use std::collections::HashMap;

use super::plan::Query;

/// A posting list being built: ids arrive in increasing order.
#[derive(Debug, Default)]
pub struct PostBuf {
    last: u32,
    bytes: Vec<u8>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize) -> u32 {
    let mut v = 0u32;
    let mut shift = 0;
    while let Some(&x) = b.get(*at) {
        *at += 1;
        v |= u32::from(x & 0x7f) << shift;
        if x < 0x80 {
            break;
        }
        shift += 7;
    }
    v
}

impl PostBuf {
    /// Add `id` (larger than every id added before).
    pub fn push(&mut self, id: u32) {
        let delta = if self.bytes.is_empty() { id } else { id - self.last };
        put_varint(&mut self.bytes, delta);
        self.last = id;
    }

    /// Append `other` (whose ids are all larger than this one's).
    fn append(&mut self, other: PostBuf) {
        if self.bytes.is_empty() {
            *self = other;
            return;
        }
        let mut at = 0;
        let first = get_varint(&other.bytes, &mut at);
        put_varint(&mut self.bytes, first - self.last);
        self.bytes.extend_from_slice(&other.bytes[at..]);
        self.last = other.last;
    }
}

/// A hasher for trigram keys: a multiply and a fold (SipHash costs more than the rest of a
/// build's inner loop).
#[derive(Debug, Default, Clone, Copy)]
pub struct TriHasher(u64);

impl std::hash::Hasher for TriHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, v: u32) {
        // The high half of the product depends on every bit of `v`; fold it into the low bits
        // (the table index) and keep it in the top ones (the control byte).
        let h = u64::from(v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
}

type TriMap<V> = HashMap<u32, V, std::hash::BuildHasherDefault<TriHasher>>;

/// One thread's postings over a contiguous range of file ids.
pub type Partial = TriMap<PostBuf>;

/// Every distinct trigram of `data`, sorted; `seen` is a 2^24-bit scratch set, left clear.
pub fn trigrams_of(data: &[u8], seen: &mut [u64], out: &mut Vec<u32>) {
    out.clear();
    if data.len() < 3 {
        return;
    }
    let mut t = (u32::from(data[0]) << 8) | u32::from(data[1]);
    for &b in &data[2..] {
        t = ((t << 8) | u32::from(b)) & 0x00ff_ffff;
        let (w, bit) = ((t >> 6) as usize, 1u64 << (t & 63));
        if seen[w] & bit == 0 {
            seen[w] |= bit;
            out.push(t);
        }
    }
    for &t in out.iter() {
        seen[(t >> 6) as usize] = 0;
    }
    out.sort_unstable();
}

/// The finished, immutable postings.
#[derive(Debug, Default)]
pub struct Postings {
    tris: Vec<u32>,
    offs: Vec<u32>,
    data: Vec<u8>,
}

impl Postings {
    /// Merge the partials (in id order) into one compact table.
    pub fn merge(parts: Vec<Partial>) -> Postings {
        let mut all: TriMap<PostBuf> = TriMap::default();
        for part in parts {
            for (t, p) in part {
                all.entry(t).or_default().append(p);
            }
        }
        let mut tris: Vec<u32> = all.keys().copied().collect();
        tris.sort_unstable();
        let total: usize = all.values().map(|p| p.bytes.len()).sum();
        let mut data = Vec::with_capacity(total);
        let mut offs = Vec::with_capacity(tris.len() + 1);
        for t in &tris {
            offs.push(data.len() as u32);
            if let Some(p) = all.remove(t) {
                data.extend_from_slice(&p.bytes);
            }
        }
        offs.push(data.len() as u32);
        Postings { tris, offs, data }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.data.len() + self.tris.len() * 4 + self.offs.len() * 4
    }

    fn list(&self, t: u32) -> Vec<u32> {
        let Ok(i) = self.tris.binary_search(&t) else { return Vec::new() };
        let (a, b) = (self.offs[i] as usize, self.offs[i + 1] as usize);
        let bytes = &self.data[a..b];
        let mut out = Vec::new();
        let (mut at, mut cur) = (0usize, 0u32);
        while at < bytes.len() {
            let d = get_varint(bytes, &mut at);
            cur = if out.is_empty() { d } else { cur + d };
            out.push(cur);
        }
        out
    }

    /// The sorted ids of the files that may satisfy `q`; `None` for every file.
    pub fn eval(&self, q: &Query) -> Option<Vec<u32>> {
        match q {
            Query::All => None,
            Query::Tri(t) => Some(self.list(*t)),
            Query::And(items) => {
                let mut acc: Option<Vec<u32>> = None;
                for i in items {
                    if let Some(v) = self.eval(i) {
                        acc = Some(match acc {
                            None => v,
                            Some(a) => intersect(&a, &v),
                        });
                        if acc.as_ref().is_some_and(Vec::is_empty) {
                            break;
                        }
                    }
                }
                acc
            }
            Query::Or(items) => {
                let mut acc: Vec<u32> = Vec::new();
                for i in items {
                    acc = union(&acc, &self.eval(i)?);
                }
                Some(acc)
            }
        }
    }
}

/// Whether a file whose distinct trigrams are `tris` (sorted) may satisfy `q`.
pub fn holds(q: &Query, tris: &[u32]) -> bool {
    match q {
        Query::All => true,
        Query::Tri(t) => tris.binary_search(t).is_ok(),
        Query::And(items) => items.iter().all(|i| holds(i, tris)),
        Query::Or(items) => items.iter().any(|i| holds(i, tris)),
    }
}

fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len() + b.len()));
    while i < a.len() || j < b.len() {
        if j >= b.len() || (i < a.len() && a[i] < b[j]) {
            out.push(a[i]);
            i += 1;
        } else if i >= a.len() || b[j] < a[i] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::plan::trigram;
    use super::*;

    #[test]
    fn build_merge_and_query() {
        let files: [&[u8]; 4] = [b"hello world", b"yellow", b"hell", b"xx"];
        let mut seen = vec![0u64; 1 << 18];
        let mut parts = vec![Partial::default(), Partial::default()];
        let mut tri = Vec::new();
        for (id, f) in files.iter().enumerate() {
            trigrams_of(f, &mut seen, &mut tri);
            for &t in &tri {
                parts[id / 2].entry(t).or_default().push(id as u32 + 300);
            }
        }
        assert!(seen.iter().all(|&w| w == 0));
        let p = Postings::merge(parts);
        let t = |s: &str| Query::Tri(trigram(s.as_bytes()));
        assert_eq!(p.eval(&t("ell")), Some(vec![300, 301, 302]));
        assert_eq!(p.eval(&Query::And(vec![t("ell"), t("low")])), Some(vec![301]));
        assert_eq!(p.eval(&Query::Or(vec![t("wor"), t("hel")])), Some(vec![300, 302]));
        assert_eq!(p.eval(&t("zzz")), Some(vec![]));
        assert_eq!(p.eval(&Query::All), None);
    }
}
