//! Text files as the edit tools see them: the encoding (UTF-8, UTF-16 by BOM or by its NUL
//! pattern, or a legacy code page guessed by `chardetng`), the BOM, binary detection, and a
//! lossless decode/encode pair.
//!
//! An edit decodes the file once, changes the decoded text, and encodes the result back into
//! the same encoding with the same BOM. Files that do not survive `encode(decode(bytes))`
//! unchanged are refused for edits, and so is new text the encoding cannot represent, so an
//! edit never writes U+FFFD, a numeric character reference or a mix of encodings. All
//! supported encodings are stateless per character, so bytes outside an edited span come back
//! identical.

use encoding_rs::Encoding;

use crate::error::{ErrorCode, Result, ToolError};

/// How many bytes detection looks at.
pub const SAMPLE: usize = 64 * 1024;

/// A file's text encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enc {
    /// UTF-8, with or without a BOM.
    Utf8,
    /// UTF-16 little endian.
    Utf16Le,
    /// UTF-16 big endian.
    Utf16Be,
    /// A legacy single- or multi-byte code page (windows-1252, Shift_JIS, ...).
    Legacy(&'static Encoding),
}

impl Enc {
    /// The WHATWG name (`UTF-8`, `UTF-16LE`, `windows-1252`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Utf8 => "UTF-8",
            Self::Utf16Le => "UTF-16LE",
            Self::Utf16Be => "UTF-16BE",
            Self::Legacy(e) => e.name(),
        }
    }

    /// Bytes per code unit: line feeds are found on this alignment.
    pub fn unit(self) -> usize {
        match self {
            Self::Utf16Le | Self::Utf16Be => 2,
            _ => 1,
        }
    }

    /// The BOM this encoding writes when the file has one.
    pub fn bom(self) -> &'static [u8] {
        match self {
            Self::Utf8 => b"\xEF\xBB\xBF",
            Self::Utf16Le => b"\xFF\xFE",
            Self::Utf16Be => b"\xFE\xFF",
            Self::Legacy(_) => b"",
        }
    }

    /// An encoding from a label (`latin1`, `utf-16le`, `shift_jis`, ...).
    pub fn from_label(label: &str) -> Result<Self> {
        let Some(e) = Encoding::for_label(label.trim().as_bytes()) else {
            return Err(ToolError::invalid(format!("unknown encoding: {label}")));
        };
        Ok(if e == encoding_rs::UTF_8 {
            Self::Utf8
        } else if e == encoding_rs::UTF_16LE {
            Self::Utf16Le
        } else if e == encoding_rs::UTF_16BE {
            Self::Utf16Be
        } else if e == encoding_rs::REPLACEMENT || e == encoding_rs::ISO_2022_JP {
            // `replacement` decodes everything to U+FFFD; ISO-2022-JP is stateful.
            return Err(ToolError::invalid(format!("encoding {} is not supported for files", e.name())));
        } else {
            Self::Legacy(e)
        })
    }
}

/// What detection found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    /// The encoding (meaningless when `binary`).
    pub enc: Enc,
    /// The file starts with the encoding's BOM.
    pub bom: bool,
    /// Not text: NUL bytes or mostly control bytes.
    pub binary: bool,
}

impl Detected {
    /// Length of the BOM in bytes.
    pub fn bom_len(&self) -> usize {
        if self.bom { self.enc.bom().len() } else { 0 }
    }
}

/// Detect the encoding of `sample` (the file's first bytes; `complete` when it is the whole
/// file, so that a character cut at the end of the sample is not held against UTF-8).
pub fn detect(sample: &[u8], complete: bool) -> Detected {
    let text = |enc, bom| Detected { enc, bom, binary: false };
    if sample.starts_with(b"\xEF\xBB\xBF") {
        return text(Enc::Utf8, true);
    }
    if sample.starts_with(b"\xFF\xFE") && !sample.starts_with(b"\xFF\xFE\0\0") {
        return text(Enc::Utf16Le, true);
    }
    if sample.starts_with(b"\xFE\xFF") {
        return text(Enc::Utf16Be, true);
    }
    let binary = Detected { enc: Enc::Utf8, bom: false, binary: true };
    if memchr::memchr(0, sample).is_some() {
        return match utf16_without_bom(sample) {
            Some(enc) => text(enc, false),
            None => binary,
        };
    }
    match std::str::from_utf8(sample) {
        Ok(_) => return text(Enc::Utf8, false),
        Err(e) if !complete && e.error_len().is_none() => return text(Enc::Utf8, false),
        Err(_) => {}
    }
    let control = sample
        .iter()
        .filter(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B)) || b == 0x7F)
        .count();
    if control * 10 > sample.len() {
        return binary;
    }
    // chardetng needs the non-ASCII text, and not much of it (it runs at tens of MB/s): feed
    // up to 16 KiB from just before the first non-ASCII byte.
    let first = sample.iter().position(|b| !b.is_ascii()).unwrap_or(0);
    let from = first.saturating_sub(1024);
    let to = sample.len().min(from + 16 * 1024);
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(&sample[from..to], complete && to == sample.len());
    let guess = det.guess(None, chardetng::Utf8Detection::Deny);
    match Enc::from_label(guess.name()) {
        Ok(enc @ Enc::Legacy(_)) => text(enc, false),
        _ => text(Enc::Legacy(encoding_rs::WINDOWS_1252), false),
    }
}

/// BOM-less UTF-16 of mostly ASCII text: nearly every high byte is zero, few low bytes are.
fn utf16_without_bom(sample: &[u8]) -> Option<Enc> {
    let n = sample.len().min(4096) / 2;
    if n < 2 {
        return None;
    }
    let (mut even, mut odd) = (0usize, 0usize);
    for pair in sample[..n * 2].chunks_exact(2) {
        even += usize::from(pair[0] == 0);
        odd += usize::from(pair[1] == 0);
    }
    if odd * 10 >= n * 7 && even * 20 <= n {
        Some(Enc::Utf16Le)
    } else if even * 10 >= n * 7 && odd * 20 <= n {
        Some(Enc::Utf16Be)
    } else {
        None
    }
}

/// Detection for a file whose first [`SAMPLE`] bytes are valid UTF-8 but byte `bad` is not:
/// a NUL anywhere means binary, else a code page is guessed from the bytes around `bad`.
pub fn redetect(bytes: &[u8], bad: usize) -> Detected {
    if memchr::memchr(0, bytes).is_some() {
        return Detected { enc: Enc::Utf8, bom: false, binary: true };
    }
    let from = bad.saturating_sub(1024);
    let to = bytes.len().min(bad.saturating_add(SAMPLE));
    let mut det = detect(&bytes[from..to], to == bytes.len());
    if det.enc == Enc::Utf8 {
        det.enc = Enc::Legacy(encoding_rs::WINDOWS_1252);
    }
    det.bom = false;
    det
}

/// Detection over a whole file's bytes: the sample first, then, for text that is UTF-8 at
/// the start only, the bytes around the first invalid one (NUL bytes anywhere: binary).
pub fn detect_full(bytes: &[u8]) -> Detected {
    let det = detect(&bytes[..bytes.len().min(SAMPLE)], bytes.len() <= SAMPLE);
    if det.binary || det.enc.unit() != 1 {
        return det;
    }
    if memchr::memchr(0, bytes).is_some() {
        return Detected { binary: true, ..det };
    }
    match (det.enc, std::str::from_utf8(&bytes[det.bom_len()..])) {
        (Enc::Utf8, Err(e)) => redetect(bytes, det.bom_len() + e.valid_up_to()),
        _ => det,
    }
}

/// A decoded text file.
#[derive(Debug, Clone)]
pub struct TextDoc {
    /// Encoding and BOM.
    pub det: Detected,
    /// The text without the BOM.
    pub text: String,
}

impl TextDoc {
    /// Decode `bytes`. Binary files and files that do not round-trip are refused (an edit of
    /// them could not keep the bytes outside the edit). `forced` overrides detection.
    pub fn decode(bytes: &[u8], forced: Option<Enc>, display: &str) -> Result<Self> {
        let det = match forced {
            Some(enc) => {
                Detected { enc, bom: bytes.starts_with(enc.bom()) && !enc.bom().is_empty(), binary: false }
            }
            None => detect(&bytes[..bytes.len().min(SAMPLE)], bytes.len() <= SAMPLE),
        };
        if det.binary {
            return Err(ToolError::new(
                ErrorCode::BinaryFile,
                format!("{display} is a binary file ({} bytes); it cannot be edited as text", bytes.len()),
            )
            .with_prop("path", display));
        }
        let body = &bytes[det.bom_len()..];
        if forced.is_none() && det.enc.unit() == 1 && memchr::memchr(0, body).is_some() {
            // NUL bytes past the detection sample: binary after all.
            return Err(ToolError::new(
                ErrorCode::BinaryFile,
                format!("{display} is a binary file ({} bytes); it cannot be edited as text", bytes.len()),
            )
            .with_prop("path", display));
        }
        let not_lossless = |why: &str| {
            ToolError::new(
                ErrorCode::Unencodable,
                format!(
                    "{display} is not valid {} ({why}); editing it would change bytes outside the edit",
                    det.enc.name()
                ),
            )
            .with_prop("encoding", det.enc.name())
        };
        let text = match det.enc {
            Enc::Utf8 => match std::str::from_utf8(body) {
                Ok(s) => s.to_owned(),
                Err(e) => {
                    if forced.is_none() && bytes.len() > SAMPLE {
                        // Valid UTF-8 in the sample, not later: decide on the text around
                        // the first invalid byte.
                        let det = redetect(bytes, det.bom_len() + e.valid_up_to());
                        if det.binary {
                            return Err(not_lossless("binary data"));
                        }
                        return Self::decode(bytes, Some(det.enc), display);
                    }
                    return Err(not_lossless(&format!(
                        "invalid byte at offset {}",
                        e.valid_up_to() + det.bom_len()
                    )));
                }
            },
            Enc::Utf16Le | Enc::Utf16Be => {
                if !body.len().is_multiple_of(2) {
                    return Err(not_lossless("odd length"));
                }
                let units = body.chunks_exact(2).map(|p| {
                    if det.enc == Enc::Utf16Le {
                        u16::from_le_bytes([p[0], p[1]])
                    } else {
                        u16::from_be_bytes([p[0], p[1]])
                    }
                });
                char::decode_utf16(units)
                    .collect::<std::result::Result<String, _>>()
                    .map_err(|_| not_lossless("unpaired surrogate"))?
            }
            Enc::Legacy(e) => {
                let (cow, had_errors) = e.decode_without_bom_handling(body);
                if had_errors {
                    return Err(not_lossless("undecodable bytes"));
                }
                let text = cow.into_owned();
                // A single-byte code page that decoded without errors maps bytes to distinct
                // characters, so it round-trips; multi-byte ones are checked.
                if !e.is_single_byte() {
                    let (back, _, unmappable) = e.encode(&text);
                    if unmappable || back.as_ref() != body {
                        return Err(not_lossless("it does not round-trip"));
                    }
                }
                text
            }
        };
        Ok(Self { det, text })
    }

    /// Encode `text` in this file's encoding, with its BOM. `UNENCODABLE` names the first
    /// character the encoding cannot hold.
    pub fn encode(&self, text: &str, display: &str) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.det.bom {
            out.extend_from_slice(self.det.enc.bom());
        }
        encode_into(self.det.enc, text, &mut out, display)?;
        Ok(out)
    }
}

/// Append `text` encoded as `enc` (no BOM) to `out`.
pub fn encode_into(enc: Enc, text: &str, out: &mut Vec<u8>, display: &str) -> Result<()> {
    match enc {
        Enc::Utf8 => out.extend_from_slice(text.as_bytes()),
        Enc::Utf16Le => text.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_le_bytes())),
        Enc::Utf16Be => text.encode_utf16().for_each(|u| out.extend_from_slice(&u.to_be_bytes())),
        Enc::Legacy(e) => {
            let (bytes, _, unmappable) = e.encode(text);
            if unmappable {
                let bad = text.chars().find(|c| {
                    let mut b = [0u8; 4];
                    e.encode(c.encode_utf8(&mut b)).2
                });
                let shown = bad.map(|c| format!("{c:?} (U+{:04X})", u32::from(c))).unwrap_or_default();
                return Err(ToolError::new(
                    ErrorCode::Unencodable,
                    format!("{display} is {}; the new text contains {shown}, which it cannot represent. Nothing was written.", e.name()),
                )
                .with_prop("encoding", e.name()));
            }
            out.extend_from_slice(&bytes);
        }
    }
    Ok(())
}

/// The line ending most lines of `text` use (`\r\n` or `\n`), and whether both occur.
pub fn eol_style(text: &str) -> (&'static str, bool) {
    let b = text.as_bytes();
    let (mut lf, mut crlf) = (0usize, 0usize);
    for i in memchr::memchr_iter(b'\n', b) {
        lf += 1;
        crlf += usize::from(i > 0 && b[i - 1] == b'\r');
    }
    let style = if crlf > lf - crlf { "\r\n" } else { "\n" };
    (style, crlf > 0 && crlf < lf)
}

/// `\n` in `new` → `eol`, when `new` uses bare line feeds only.
pub fn with_eol(new: &str, eol: &str) -> String {
    if eol == "\n" || new.contains('\r') { new.to_owned() } else { new.replace('\n', eol) }
}

/// The content hash returned by reads and checked against `expectedHash`.
pub fn hash(bytes: &[u8]) -> String {
    let h = blake3::hash(bytes);
    h.to_hex()[..32].to_owned()
}

/// Refuse with `STALE` unless `expected` (when given) is the hash of `bytes`.
pub fn check_hash(expected: Option<&str>, bytes: &[u8], display: &str) -> Result<()> {
    let Some(expected) = expected else { return Ok(()) };
    let actual = hash(bytes);
    if expected.trim().eq_ignore_ascii_case(&actual) {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::Stale,
        format!("{display} changed since it was read (expected hash {expected}, now {actual}); read it again before editing"),
    )
    .with_prop("path", display)
    .with_prop("expectedHash", expected)
    .with_prop("actualHash", actual))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_boms_utf16_legacy_and_binary() {
        assert_eq!(detect(b"\xEF\xBB\xBFhi", true), Detected { enc: Enc::Utf8, bom: true, binary: false });
        assert_eq!(detect(b"\xFF\xFEh\0i\0", true).enc, Enc::Utf16Le);
        assert_eq!(detect(b"\xFE\xFF\0h\0i", true).enc, Enc::Utf16Be);
        assert_eq!(
            detect(b"h\0e\0l\0l\0o\0", true),
            Detected { enc: Enc::Utf16Le, bom: false, binary: false }
        );
        assert!(detect(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0", true).binary);
        assert_eq!(detect("caf\u{e9}".as_bytes(), true).enc, Enc::Utf8);
        let d = detect(b"Le caf\xe9 est tr\xe8s bon, \xe0 bient\xf4t", true);
        assert!(!d.binary);
        assert!(matches!(d.enc, Enc::Legacy(_)), "{d:?}");
        let jp = "// コメント: これは日本語のテキストです。設定を読み込みます。\n".repeat(20);
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(&jp);
        let mut code = b"fn main() {}\n".repeat(200);
        code.extend_from_slice(&sjis);
        assert_eq!(detect(&code, true).enc.name(), "Shift_JIS");
        // A UTF-8 character cut by the sample end is still UTF-8.
        assert_eq!(detect(&"a😀".as_bytes()[..3], false).enc, Enc::Utf8);
    }

    #[test]
    fn round_trips_and_refuses_unencodable() {
        let bytes = b"caf\xe9\r\nna\xefve\r\n";
        let doc = TextDoc::decode(bytes, Some(Enc::from_label("latin1").unwrap()), "f").unwrap();
        assert_eq!(doc.text, "caf\u{e9}\r\nna\u{ef}ve\r\n");
        assert_eq!(doc.encode(&doc.text, "f").unwrap(), bytes);
        let e = doc.encode("snow \u{2603}", "f").unwrap_err();
        assert_eq!(e.code(), ErrorCode::Unencodable);
        let mut u16 = vec![0xFF, 0xFE];
        "h\u{e9}😀\n".encode_utf16().for_each(|u| u16.extend_from_slice(&u.to_le_bytes()));
        let doc = TextDoc::decode(&u16, None, "f").unwrap();
        assert_eq!(doc.text, "h\u{e9}😀\n");
        assert_eq!(doc.encode(&doc.text, "f").unwrap(), u16);
        let e = TextDoc::decode(b"a\0b\0\x00\xD8", Some(Enc::Utf16Le), "f").unwrap_err();
        assert_eq!(e.code(), ErrorCode::Unencodable);
        assert_eq!(
            TextDoc::decode(b"\0\x01\x02\x03bin", None, "f").unwrap_err().code(),
            ErrorCode::BinaryFile
        );
    }

    #[test]
    fn every_byte_of_single_byte_code_pages_round_trips() {
        let all: Vec<u8> = (0..=255).collect();
        for label in ["windows-1252", "iso-8859-2", "koi8-r", "windows-1251", "ibm866", "macintosh"] {
            let enc = Enc::from_label(label).unwrap();
            let Enc::Legacy(e) = enc else { panic!() };
            let (text, errors) = e.decode_without_bom_handling(&all);
            if errors {
                continue;
            }
            let (back, _, unmappable) = e.encode(&text);
            assert!(!unmappable && back.as_ref() == all.as_slice(), "{label}");
        }
        // A multi-byte code page is checked: Shift_JIS text round-trips.
        let sjis = b"\x82\xa0\x82\xa2 abc";
        let doc = TextDoc::decode(sjis, Some(Enc::from_label("shift_jis").unwrap()), "f").unwrap();
        assert_eq!(doc.encode(&doc.text, "f").unwrap(), sjis);
    }

    #[test]
    fn eol_and_hash() {
        assert_eq!(eol_style("a\r\nb\r\nc\n"), ("\r\n", true));
        assert_eq!(eol_style("a\nb"), ("\n", false));
        assert_eq!(with_eol("x\ny", "\r\n"), "x\r\ny");
        assert!(check_hash(Some(&hash(b"abc")), b"abc", "f").is_ok());
        assert_eq!(check_hash(Some("00"), b"abc", "f").unwrap_err().code(), ErrorCode::Stale);
    }
}
