//! A sparse line index per file, kept while the file's fingerprint (device, inode, size,
//! mtime, ctime) is unchanged. Building it is one sequential pass (content hash, encoding,
//! line count, the byte offset of every 1024th line); afterwards reading lines `a..b` costs
//! a seek to the nearest checkpoint plus at most 1023 skipped lines, i.e. O(range).

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::engine::text::doc::{Detected, Enc, SAMPLE, detect};
use crate::engine::text::pread::read_at_most;
use crate::error::{Result, ToolError};

/// Lines between two checkpoints.
pub const STEP: u64 = 1024;
/// How many files' indexes are kept.
const CAPACITY: usize = 256;
const CHUNK: usize = 1 << 20;

/// What identifies one version of a file without reading it (device, inode, size, mtime,
/// ctime: [`crate::engine::platform::Stamp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(crate::engine::platform::Stamp);

impl Fingerprint {
    /// The fingerprint of `meta`.
    pub fn of(meta: &std::fs::Metadata) -> Self {
        Self(crate::engine::platform::Stamp::of(meta))
    }
}

/// The index of one file version.
#[derive(Debug)]
pub struct LineIndex {
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// Size in bytes.
    pub size: u64,
    /// Content hash ([`crate::engine::text::doc::hash`]).
    pub hash: String,
    /// Encoding, BOM, binary.
    pub det: Detected,
    /// Number of lines (a last line without a line feed counts).
    pub lines: u64,
    /// Line feeds preceded by a carriage return.
    pub crlf: u64,
    /// All line feeds.
    pub lf: u64,
    /// `checkpoints[k]`: byte offset where line `k * STEP` starts.
    checkpoints: Vec<u64>,
}

/// (use counter, path → (last use, index)).
type Cache = Mutex<(u64, HashMap<PathBuf, (u64, Arc<LineIndex>)>)>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new((0, HashMap::new())))
}

/// The index of the open `file` at `path`, from the cache when the fingerprint matches.
pub fn get(
    path: &Path,
    file: &std::fs::File,
    meta: &std::fs::Metadata,
    display: &Path,
) -> Result<Arc<LineIndex>> {
    let fp = Fingerprint::of(meta);
    {
        let mut guard = cache().lock().unwrap_or_else(|p| p.into_inner());
        let (tick, map) = &mut *guard;
        *tick += 1;
        let now = *tick;
        if let Some((used, idx)) = map.get_mut(path)
            && idx.fingerprint == fp
        {
            *used = now;
            return Ok(Arc::clone(idx));
        }
    }
    let idx = Arc::new(build(file, fp, display)?);
    let mut guard = cache().lock().unwrap_or_else(|p| p.into_inner());
    let (tick, map) = &mut *guard;
    if map.len() >= CAPACITY
        && !map.contains_key(path)
        && let Some(oldest) = map.iter().min_by_key(|(_, (used, _))| *used).map(|(k, _)| k.clone())
    {
        map.remove(&oldest);
    }
    map.insert(path.to_path_buf(), (*tick, Arc::clone(&idx)));
    Ok(idx)
}

/// One pass over the file.
fn build(file: &std::fs::File, fingerprint: Fingerprint, display: &Path) -> Result<LineIndex> {
    let io = |e: std::io::Error| ToolError::fs(&e, "read", Some(display));
    let mut reader = std::io::BufReader::with_capacity(CHUNK, file);
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; CHUNK];
    let mut pos = 0u64;
    let mut det: Option<Detected> = None;
    let (mut lf, mut crlf, mut lines_done) = (0u64, 0u64, 0u64);
    let mut checkpoints = vec![0u64];
    let mut prev_cr = false;
    let mut utf8_carry: Vec<u8> = Vec::new();
    let mut utf8_ok = true;
    let mut first_bad: Option<u64> = None;
    let mut nul_seen = false;
    let mut last_byte_is_lf = false;
    let mut pending_odd: Option<u8> = None;
    loop {
        let n = read_full(&mut reader, &mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        hasher.update(chunk);
        let d = *det.get_or_insert_with(|| {
            let sample = &chunk[..n.min(SAMPLE)];
            let complete = fingerprint.0.len <= sample.len() as u64;
            detect(sample, complete)
        });
        if pos == 0 {
            checkpoints[0] = d.bom_len() as u64;
        }
        if !d.binary {
            if d.enc.unit() == 1 {
                nul_seen |= memchr::memchr(0, chunk).is_some();
                if d.enc == Enc::Utf8 && utf8_ok {
                    utf8_carry.extend_from_slice(chunk);
                    match std::str::from_utf8(&utf8_carry) {
                        Ok(_) => utf8_carry.clear(),
                        Err(e) if e.error_len().is_none() => {
                            let keep = utf8_carry.split_off(e.valid_up_to());
                            utf8_carry = keep;
                        }
                        Err(e) => {
                            utf8_ok = false;
                            let carried = utf8_carry.len() - chunk.len();
                            first_bad = Some((pos + e.valid_up_to() as u64).saturating_sub(carried as u64));
                        }
                    }
                }
                for i in memchr::memchr_iter(b'\n', chunk) {
                    lf += 1;
                    let cr = if i == 0 { prev_cr } else { chunk[i - 1] == b'\r' };
                    crlf += u64::from(cr);
                    lines_done += 1;
                    if lines_done % STEP == 0 {
                        checkpoints.push(pos + i as u64 + 1);
                    }
                }
                prev_cr = chunk[n - 1] == b'\r';
                last_byte_is_lf = chunk[n - 1] == b'\n';
            } else {
                // Code units are 2 bytes from the BOM on; a chunk may end between the two.
                let mut units: Vec<(u64, u16)> = Vec::new();
                let mut i = 0usize;
                if let Some(first) = pending_odd.take() {
                    units.push((pos - 1, pair(d.enc, first, chunk[0])));
                    i = 1;
                }
                while i + 1 < n {
                    units.push((pos + i as u64, pair(d.enc, chunk[i], chunk[i + 1])));
                    i += 2;
                }
                if i < n {
                    pending_odd = Some(chunk[i]);
                }
                for (at, u) in units {
                    if u == 0x0A {
                        lf += 1;
                        crlf += u64::from(prev_cr);
                        lines_done += 1;
                        if lines_done % STEP == 0 {
                            checkpoints.push(at + 2);
                        }
                    }
                    prev_cr = u == 0x0D;
                    last_byte_is_lf = u == 0x0A;
                }
            }
        }
        pos += n as u64;
    }
    let mut det = det.unwrap_or(Detected { enc: Enc::Utf8, bom: false, binary: false });
    if !det.binary && det.enc.unit() == 1 && nul_seen {
        det.binary = true;
    }
    if !det.binary && det.enc == Enc::Utf8 && (!utf8_ok || !utf8_carry.is_empty()) {
        // Valid UTF-8 at the start only: guess a code page from the text around the first
        // invalid byte.
        let at = first_bad.unwrap_or(pos.saturating_sub(utf8_carry.len() as u64));
        let from = at.saturating_sub(1024);
        let mut window = vec![0u8; usize::try_from((pos - from).min(SAMPLE as u64 + 1024)).unwrap_or(SAMPLE)];
        let got = read_at_most(file, &mut window, from).map_err(io)?;
        window.truncate(got);
        let mut det2 = detect(&window, from + got as u64 == pos);
        if det2.enc == Enc::Utf8 {
            det2.enc = Enc::Legacy(encoding_rs::WINDOWS_1252);
        }
        det2.bom = false;
        det = det2;
    }
    let content_len = pos.saturating_sub(det.bom_len() as u64);
    let lines = if det.binary || content_len == 0 { 0 } else { lf + u64::from(!last_byte_is_lf) };
    Ok(LineIndex {
        fingerprint,
        size: pos,
        hash: hasher.finalize().to_hex()[..32].to_owned(),
        det,
        lines,
        crlf,
        lf,
        checkpoints,
    })
}

fn pair(enc: Enc, a: u8, b: u8) -> u16 {
    if enc == Enc::Utf16Be { u16::from_be_bytes([a, b]) } else { u16::from_le_bytes([a, b]) }
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

impl LineIndex {
    /// The byte offset where line `line` (0-based) starts; `None` past the last line.
    pub fn line_start(&self, file: &std::fs::File, line: u64) -> std::io::Result<Option<u64>> {
        if line >= self.lines {
            return Ok(None);
        }
        let k = usize::try_from(line / STEP).unwrap_or(usize::MAX);
        let Some(&start) = self.checkpoints.get(k) else { return Ok(None) };
        let mut skip = line % STEP;
        let mut pos = start;
        let unit = self.det.enc.unit() as u64;
        let mut buf = vec![0u8; 64 * 1024];
        while skip > 0 {
            let n = read_at_most(file, &mut buf, pos)?;
            if n == 0 {
                return Ok(None);
            }
            let usable = if unit == 2 { n & !1 } else { n };
            let chunk = &buf[..usable];
            let mut advanced = usable as u64;
            if unit == 1 {
                for i in memchr::memchr_iter(b'\n', chunk) {
                    skip -= 1;
                    if skip == 0 {
                        advanced = i as u64 + 1;
                        break;
                    }
                }
            } else {
                for (j, p) in chunk.chunks_exact(2).enumerate() {
                    if pair(self.det.enc, p[0], p[1]) == 0x0A {
                        skip -= 1;
                        if skip == 0 {
                            advanced = (j as u64 + 1) * 2;
                            break;
                        }
                    }
                }
            }
            if usable == 0 {
                return Ok(None);
            }
            pos += advanced;
        }
        Ok(Some(pos))
    }

    /// The 0-based line that byte `pos` lies in (counting the line feeds before it).
    pub fn line_of(&self, file: &std::fs::File, pos: u64) -> std::io::Result<u64> {
        let k = self.checkpoints.partition_point(|&c| c <= pos).saturating_sub(1);
        let (mut line, mut at) = match self.checkpoints.get(k) {
            Some(&c) if c <= pos => (k as u64 * STEP, c),
            _ => (0, 0),
        };
        let unit = self.det.enc.unit() as u64;
        let mut buf = vec![0u8; 64 * 1024];
        while at < pos {
            let want = usize::try_from(pos - at).unwrap_or(usize::MAX).min(buf.len());
            let n = read_at_most(file, &mut buf[..want], at)?;
            let usable = if unit == 2 { n & !1 } else { n };
            if usable == 0 {
                break;
            }
            let chunk = &buf[..usable];
            line += if unit == 1 {
                memchr::memchr_iter(b'\n', chunk).count() as u64
            } else {
                chunk.chunks_exact(2).filter(|p| pair(self.det.enc, p[0], p[1]) == 0x0A).count() as u64
            };
            at += usable as u64;
        }
        Ok(line.min(self.lines.saturating_sub(1)))
    }

    /// `pos` moved back to the start of the character it falls in (UTF-8: off continuation
    /// bytes; UTF-16: to a whole unit, and off the low half of a surrogate pair). The size
    /// itself is a boundary.
    pub fn char_start(&self, file: &std::fs::File, pos: u64) -> std::io::Result<u64> {
        if pos >= self.size {
            return Ok(self.size);
        }
        let mut buf = [0u8; 2];
        match self.det.enc {
            Enc::Utf8 => {
                let mut at = pos;
                for _ in 0..3 {
                    if at == 0 || read_at_most(file, &mut buf[..1], at)? == 0 || buf[0] & 0xC0 != 0x80 {
                        break;
                    }
                    at -= 1;
                }
                Ok(at)
            }
            Enc::Utf16Le | Enc::Utf16Be => {
                let at = pos - pos % 2;
                if at >= 2 && read_at_most(file, &mut buf, at)? == 2 {
                    let unit = pair(self.det.enc, buf[0], buf[1]);
                    if (0xDC00..0xE000).contains(&unit) {
                        return Ok(at - 2);
                    }
                }
                Ok(at)
            }
            Enc::Legacy(_) => Ok(pos),
        }
    }

    /// The end of the character that starts at `pos` (a boundary from [`Self::char_start`]).
    pub fn char_end(&self, file: &std::fs::File, pos: u64) -> std::io::Result<u64> {
        let mut buf = [0u8; 2];
        let len = match self.det.enc {
            Enc::Utf8 => match read_at_most(file, &mut buf[..1], pos)? {
                0 => 0,
                _ => match buf[0] {
                    0xF0..=0xFF => 4,
                    0xE0..=0xEF => 3,
                    0xC0..=0xDF => 2,
                    _ => 1,
                },
            },
            Enc::Utf16Le | Enc::Utf16Be => match read_at_most(file, &mut buf, pos)? {
                2 if (0xD800..0xDC00).contains(&pair(self.det.enc, buf[0], buf[1])) => 4,
                _ => 2,
            },
            Enc::Legacy(_) => 1,
        };
        Ok((pos + len).min(self.size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(bytes: &[u8]) -> (tempfile::TempDir, PathBuf, Arc<LineIndex>) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, bytes).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let m = f.metadata().unwrap();
        let idx = get(&p, &f, &m, &p).unwrap();
        (d, p, idx)
    }

    #[test]
    fn counts_lines_and_finds_starts() {
        let mut text = String::new();
        for i in 0..5000 {
            text.push_str(&format!("line {i}\r\n"));
        }
        text.push_str("last");
        let (_d, p, idx) = index_of(text.as_bytes());
        assert_eq!((idx.lines, idx.lf, idx.crlf), (5001, 5000, 5000));
        assert_eq!(idx.hash, super::super::doc::hash(text.as_bytes()));
        let f = std::fs::File::open(&p).unwrap();
        for line in [0u64, 1, 1023, 1024, 1025, 4999, 5000] {
            let at = idx.line_start(&f, line).unwrap().unwrap();
            let want = text.split_inclusive('\n').take(line as usize).map(str::len).sum::<usize>();
            assert_eq!(at, want as u64, "line {line}");
        }
        assert_eq!(idx.line_start(&f, 5001).unwrap(), None);
    }

    #[test]
    fn utf16_and_empty() {
        let mut b = vec![0xFF, 0xFE];
        "a\nb\nc".encode_utf16().for_each(|u| b.extend_from_slice(&u.to_le_bytes()));
        let (_d, p, idx) = index_of(&b);
        assert_eq!((idx.lines, idx.det.enc), (3, Enc::Utf16Le));
        let f = std::fs::File::open(&p).unwrap();
        assert_eq!(idx.line_start(&f, 2).unwrap(), Some(2 + 8));
        let (_d, _p, idx) = index_of(b"");
        assert_eq!(idx.lines, 0);
        let (_d, _p, idx) = index_of(b"x\n");
        assert_eq!(idx.lines, 1);
    }
}
