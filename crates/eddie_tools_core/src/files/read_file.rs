//! `read_file`: a line range of a text file with line numbers (Stack `read`, Floyd
//! `read_file`, Alfredo `read_file` incl. `limit_bytes`, TunaCode `read_file`).
//!
//! `offset` lines are skipped (0-based; negative counts from the end), then up to `limit`
//! lines (default 2000) are returned, each cut at `maxLineLength` characters, the whole page
//! capped at `maxBytes` of output and `limitBytes` of file.
//!
//! A read by bytes (Alfredo's `limit_bytes`, or `byteOffset`) returns the file's text from
//! `byteOffset` (default 0) to at most `limitBytes` further, both moved back to a character
//! start: no line numbers, no line cut and no line limit unless asked, and `nextByteOffset`
//! where the next read continues, so every byte of a one-line file is reachable. The file is decoded in its own
//! encoding (UTF-8, UTF-16, legacy code pages); binary files are reported, never decoded. The
//! result carries the content `hash` that edits accept as `expectedHash`, and `nextOffset`
//! when more lines follow. Cost: one pass per file version to build the sparse line index,
//! then O(range) per call.

use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{encoding_of, non_empty};
use crate::call::args::lenient::{Cap, Flag, Int, Offset};
use crate::context::Ctx;
use crate::engine::text::doc::Enc;
use crate::engine::text::line_index::{self, LineIndex};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "read_file";
/// Default lines per call.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Default cap of one line, in characters.
pub const DEFAULT_LINE_CHARS: usize = 2000;
/// Default cap of the returned text, in bytes.
pub const DEFAULT_MAX_BYTES: usize = 50_000;

/// The arguments of `read_file`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// File path, relative to the workspace (also accepted: filePath, filepath).
    #[schemars(length(min = 1))]
    pub path: String,
    /// Lines to skip (0-based). Negative: start that many lines before the end.
    pub offset: Option<Int>,
    /// Most lines to return (default 2000; 0 or -1 = no line limit).
    pub limit: Option<Int>,
    /// Read at most this many bytes of the file from the start or byteOffset (also: limit_bytes): the text as it is, without line numbers or line cuts unless asked, ending at a character boundary; nextByteOffset says where to continue.
    pub limit_bytes: Option<Cap<MAX_LIMIT_BYTES>>,
    /// Start at this byte of the file (moved back to a character start), e.g. the nextByteOffset of a read cut by limitBytes. Not with offset.
    pub byte_offset: Option<Offset>,
    /// Cut lines longer than this many characters (default 2000).
    pub max_line_length: Option<Cap>,
    /// Cap of the returned text in bytes (default 50000).
    pub max_bytes: Option<Cap>,
    /// Prefix lines with their numbers (default true).
    pub line_numbers: Option<Flag>,
    /// Encoding label to use instead of detection (e.g. latin1, utf-16le, shift_jis).
    pub encoding: Option<String>,
}

/// What a read does, from its [`Args`].
#[derive(Debug, Clone)]
struct Opts {
    path: String,
    offset: i64,
    limit: u64,
    limit_bytes: Option<u64>,
    /// A read by bytes: from this byte.
    byte_offset: Option<u64>,
    max_line: usize,
    max_bytes: usize,
    numbers: bool,
    forced: Option<Enc>,
}

/// The most a read by bytes returns at once.
pub const MAX_LIMIT_BYTES: u64 = 16 << 20;

fn options(a: Args) -> Result<Opts> {
    let path = non_empty("path", a.path)?;
    if a.byte_offset.is_some() && a.offset.is_some() {
        return Err(ToolError::invalid("give offset (lines) or byteOffset (bytes), not both"));
    }
    let byte_offset = a.byte_offset.map(|n| n.0 as u64);
    let limit_bytes = a.limit_bytes.map(|n| n.0 as u64);
    // A read by bytes is the text of a byte range: no line limit, cut or numbers unless asked.
    let by_bytes = byte_offset.is_some() || limit_bytes.is_some();
    let offset = a.offset.map_or(0, |n| n.0);
    let limit = match a.limit.map(|n| n.0) {
        None if by_bytes => u64::MAX,
        None => DEFAULT_LIMIT,
        Some(n) if n <= 0 => u64::MAX,
        Some(n) => n as u64,
    };
    let limit_bytes = if by_bytes { Some(limit_bytes.unwrap_or(DEFAULT_MAX_BYTES as u64)) } else { None };
    let max_line = a.max_line_length.map_or(if by_bytes { usize::MAX } else { DEFAULT_LINE_CHARS }, |n| n.0);
    let max_bytes = a.max_bytes.map_or(if by_bytes { usize::MAX } else { DEFAULT_MAX_BYTES }, |n| n.0);
    let numbers = Flag::or(a.line_numbers, !by_bytes);
    let forced = encoding_of(a.encoding.as_deref())?;
    Ok(Opts { path, offset, limit, limit_bytes, byte_offset, max_line, max_bytes, numbers, forced })
}

/// Run `read_file`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let args = options(a)?;
    let resolved = ctx.workspace.resolve(&args.path)?;
    crate::blocking("read_file", move || {
        read(std::fs::metadata(&resolved.real), &resolved.real, &resolved.lexical, &args)
    })
    .await
}

/// Files up to this size are read on the host's thread (the blocking form); larger ones, whose
/// first read indexes the whole file, go through `run`.
pub const INLINE_BYTES: u64 = 256 * 1024;

/// The blocking form: decided from one stat, a small file is read on the calling thread.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    let args = options(crate::call::args::parse(NAME, args)?)?;
    let resolved = ctx.workspace.resolve(&args.path)?;
    let pre = std::fs::metadata(&resolved.real);
    if pre.as_ref().is_ok_and(|m| m.len() > INLINE_BYTES) {
        return Ok(None);
    }
    read(pre, &resolved.real, &resolved.lexical, &args).map(Some)
}

fn eol_name(idx: &LineIndex) -> &'static str {
    match (idx.lf, idx.crlf) {
        (0, _) => "none",
        (lf, crlf) if crlf == lf => "crlf",
        (_, 0) => "lf",
        _ => "mixed",
    }
}

/// Read `real` (whose `stat` is `pre`).
fn read(
    pre: std::io::Result<std::fs::Metadata>,
    real: &Path,
    lexical: &Path,
    args: &Opts,
) -> Result<ToolOutput> {
    let pre = pre.map_err(|e| ToolError::fs(&e, "open", Some(lexical)))?;
    super::regular(&pre, &args.path)?;
    let file = std::fs::File::open(real).map_err(|e| ToolError::fs(&e, "open", Some(lexical)))?;
    let meta = file.metadata().map_err(|e| ToolError::fs(&e, "fstat", Some(lexical)))?;
    if let Some(e) = super::not_a_file(&meta, lexical) {
        return Err(e);
    }
    let idx = line_index::get(real, &file, &meta, lexical)?;
    let mut base = json!({
        "path": args.path, "size": idx.size, "hash": idx.hash, "binary": idx.det.binary,
        "encoding": if idx.det.binary { Value::Null } else { json!(idx.det.enc.name()) },
        "bom": idx.det.bom, "eol": eol_name(&idx), "totalLines": idx.lines,
        "startLine": 0, "endLine": 0, "linesReturned": 0, "truncated": false, "nextOffset": null,
        "nextByteOffset": null, "longLinesCut": 0,
    });
    if idx.det.binary {
        let content = format!(
            "{} is a binary file ({} bytes); it is not shown as text. Use get_file_info for its metadata.",
            args.path, idx.size
        );
        return Ok(ToolOutput::new(content, base));
    }
    let enc = match args.forced {
        Some(f) if f.unit() != idx.det.enc.unit() => {
            return Err(ToolError::invalid(format!(
                "encoding {} does not fit this file (detected {})",
                f.name(),
                idx.det.enc.name()
            )));
        }
        Some(f) => f,
        None => idx.det.enc,
    };
    if args.forced.is_some() {
        base["encoding"] = json!(enc.name());
    }
    let io = |e: std::io::Error| ToolError::fs(&e, "read", Some(lexical));
    let start_of = |line: u64| idx.line_start(&file, line).map_err(io);
    let located = match args.byte_offset {
        // From a byte (moved back to a character start; never into the BOM).
        Some(at) => match start_of(0)? {
            Some(text_start) if at.max(text_start) < idx.size => {
                let pos = idx.char_start(&file, at.max(text_start)).map_err(io)?.max(text_start);
                Some((pos, idx.line_of(&file, pos).map_err(io)?))
            }
            _ => None,
        },
        None => {
            let start = if args.offset < 0 {
                idx.lines.saturating_sub(args.offset.unsigned_abs())
            } else {
                args.offset as u64
            };
            start_of(start)?.map(|pos| (pos, start))
        }
    };
    let Some((pos, start)) = located else {
        let content = match args.byte_offset {
            _ if idx.lines == 0 => format!("{} is empty.", args.path),
            Some(at) => format!("{} has {} bytes; byteOffset {at} is past the end.", args.path, idx.size),
            None => format!("{} has {} lines; offset {} is past the end.", args.path, idx.lines, args.offset),
        };
        return Ok(ToolOutput::new(content, base));
    };
    // A byte limit ends at a character start, so the next read begins with a whole character;
    // a limit below one character still reads that character.
    let raw_end = match args.limit_bytes {
        Some(n) => match idx.char_start(&file, idx.size.min(pos.saturating_add(n))).map_err(io)? {
            end if end <= pos => idx.char_end(&file, pos).map_err(io)?,
            end => end,
        },
        None => idx.size,
    };
    let page = collect(&file, &idx, enc, pos, start, raw_end, args).map_err(io)?;
    let returned = page.lines.len() as u64;
    let next = start + returned;
    let more = next < idx.lines && page.stopped_early;
    let mut content = String::with_capacity(page.text_len + 64);
    for (i, line) in page.lines.iter().enumerate() {
        if i > 0 {
            content.push('\n');
        }
        if args.numbers {
            content.push_str(&format!("{:>6}\t", start + 1 + i as u64));
        }
        content.push_str(line);
    }
    if more {
        content.push_str(&format!(
            "\n\n[Lines {}-{} of {}. Continue with offset={next}.]",
            start + 1,
            next,
            idx.lines
        ));
    } else if page.byte_cut {
        content.push_str(&format!(
            "\n\n[Stopped after {} bytes, at byte {raw_end} of {}. Continue with byteOffset={raw_end}.]",
            page.bytes_read, idx.size
        ));
    }
    base["startLine"] = json!(start + 1);
    base["endLine"] = json!(next);
    base["linesReturned"] = json!(returned);
    base["truncated"] = json!(more || page.byte_cut);
    base["nextOffset"] = if more { json!(next) } else { Value::Null };
    base["nextByteOffset"] = if page.byte_cut { json!(raw_end) } else { Value::Null };
    base["longLinesCut"] = json!(page.long_lines);
    Ok(ToolOutput::new(content, base))
}

struct Page {
    lines: Vec<String>,
    text_len: usize,
    long_lines: u64,
    /// Stopped by `limit` or `maxBytes` before the end of the file.
    stopped_early: bool,
    /// Stopped by `limitBytes` (the last line may be partial).
    byte_cut: bool,
    bytes_read: u64,
}

/// Read lines from byte `pos` (in line `first`) up to byte `raw_end`.
fn collect(
    file: &std::fs::File,
    idx: &LineIndex,
    enc: Enc,
    pos: u64,
    first: u64,
    raw_end: u64,
    args: &Opts,
) -> std::io::Result<Page> {
    let unit = enc.unit();
    let line_cap = args.max_line.saturating_mul(4).saturating_add(8);
    let mut page = Page {
        lines: Vec::new(),
        text_len: 0,
        long_lines: 0,
        stopped_early: false,
        byte_cut: false,
        bytes_read: 0,
    };
    let mut buf = vec![0u8; 256 * 1024];
    let mut cur: Vec<u8> = Vec::new();
    let mut cur_dropped = false;
    let mut at = pos;
    let mut line_no = first;
    let push = |cur: &mut Vec<u8>, dropped: bool, page: &mut Page| -> bool {
        let (text, cut) = decode_line(enc, cur, dropped, args.max_line);
        cur.clear();
        if cut {
            page.long_lines += 1;
        }
        let cost = text.len() + 8;
        if !page.lines.is_empty() && page.text_len + cost > args.max_bytes {
            page.stopped_early = true;
            return false;
        }
        page.text_len += cost;
        page.lines.push(text);
        true
    };
    'outer: while at < raw_end {
        let want = usize::try_from(raw_end - at).unwrap_or(usize::MAX).min(buf.len());
        let n = crate::engine::text::pread::read_at_most(file, &mut buf[..want], at)?;
        if n == 0 {
            break;
        }
        let usable = if unit == 2 && n > 1 { n & !1 } else { n };
        let chunk = &buf[..usable];
        let mut from = 0usize;
        loop {
            let nl = if unit == 1 {
                memchr::memchr(b'\n', &chunk[from..]).map(|i| from + i)
            } else {
                (from..usable.saturating_sub(1)).step_by(2).find(|&i| is_lf16(enc, chunk[i], chunk[i + 1]))
            };
            let end = nl.unwrap_or(usable);
            let room = line_cap.saturating_sub(cur.len());
            let piece = &chunk[from..end];
            if piece.len() > room {
                cur.extend_from_slice(&piece[..room]);
                cur_dropped = true;
            } else {
                cur.extend_from_slice(piece);
            }
            let Some(nl) = nl else { break };
            // The line ends here: drop the CR of a CRLF.
            strip_cr(enc, &mut cur, cur_dropped);
            let dropped = std::mem::take(&mut cur_dropped);
            if !push(&mut cur, dropped, &mut page) {
                break 'outer;
            }
            line_no += 1;
            from = nl + unit;
            if line_no - first >= args.limit {
                page.stopped_early = true;
                at += from as u64;
                break 'outer;
            }
        }
        at += usable as u64;
        if usable == 0 {
            break;
        }
    }
    page.bytes_read = at.min(raw_end) - pos;
    if !page.stopped_early && (!cur.is_empty() || cur_dropped) {
        let dropped = cur_dropped;
        if raw_end < idx.size {
            page.byte_cut = true;
        } else {
            strip_cr(enc, &mut cur, dropped);
        }
        push(&mut cur, dropped, &mut page);
    } else if !page.stopped_early && raw_end < idx.size {
        page.byte_cut = true;
    }
    Ok(page)
}

fn is_lf16(enc: Enc, a: u8, b: u8) -> bool {
    if enc == Enc::Utf16Be { a == 0 && b == 0x0A } else { a == 0x0A && b == 0 }
}

fn strip_cr(enc: Enc, cur: &mut Vec<u8>, dropped: bool) {
    if dropped {
        return;
    }
    match enc.unit() {
        2 if cur.len() >= 2 => {
            let n = cur.len();
            let cr = if enc == Enc::Utf16Be {
                cur[n - 2] == 0 && cur[n - 1] == 0x0D
            } else {
                cur[n - 2] == 0x0D && cur[n - 1] == 0
            };
            if cr {
                cur.truncate(n - 2);
            }
        }
        1 if cur.last() == Some(&b'\r') => {
            cur.pop();
        }
        _ => {}
    }
}

/// Decode one line (possibly cut at `bytes` end when `dropped`), capped at `max` characters.
/// Returns the text and whether it was cut.
fn decode_line(enc: Enc, bytes: &[u8], dropped: bool, max: usize) -> (String, bool) {
    let text = match enc {
        Enc::Utf8 => match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(e) => {
                // Only a cut line can end inside a character; anything else is shown escaped.
                let good = &bytes[..e.valid_up_to()];
                let mut s = String::from_utf8(good.to_vec()).unwrap_or_default();
                if e.error_len().is_some() {
                    for b in &bytes[e.valid_up_to()..] {
                        s.push_str(&format!("\\x{b:02X}"));
                    }
                }
                s
            }
        },
        Enc::Utf16Le | Enc::Utf16Be => {
            let units = bytes.chunks_exact(2).map(|p| {
                if enc == Enc::Utf16Le {
                    u16::from_le_bytes([p[0], p[1]])
                } else {
                    u16::from_be_bytes([p[0], p[1]])
                }
            });
            char::decode_utf16(units)
                .map(|r| r.map_or_else(|e| format!("\\u{{{:04X}}}", e.unpaired_surrogate()), String::from))
                .collect()
        }
        Enc::Legacy(e) => {
            let mut end = bytes.len();
            loop {
                if let Some(s) = e.decode_without_bom_handling_and_without_replacement(&bytes[..end]) {
                    break s.into_owned();
                }
                if end == 0 || bytes.len() - end >= 3 {
                    break e.decode_without_bom_handling(bytes).0.into_owned();
                }
                end -= 1;
            }
        }
    };
    match text.char_indices().nth(max) {
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            let more = if dropped { format!("{rest}+") } else { rest.to_string() };
            (format!("{}… [line cut: {more} more characters]", &text[..cut]), true)
        }
        None if dropped => (format!("{text}… [line cut]"), true),
        None => (text, false),
    }
}

/// The `read_file` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "readFile",
    family: "files",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[
        ("limit_bytes", "limitBytes"),
        ("byte_offset", "byteOffset"),
        ("max_line_length", "maxLineLength"),
        ("max_bytes", "maxBytes"),
        ("line_numbers", "lineNumbers"),
    ],
    // Stack `read`
    tool_aliases: &["read"],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("read_file.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(bytes: &[u8], args: Value) -> ToolOutput {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, bytes).unwrap();
        let mut a = json!({"path": "f"});
        for (k, v) in args.as_object().unwrap() {
            a[k] = v.clone();
        }
        // The call's path: the policy (aliases), then the typed arguments.
        let a = crate::call::normalise(&TOOL, a).unwrap();
        let opts = options(crate::call::args::parse(NAME, &a).unwrap()).unwrap();
        read(std::fs::metadata(&p), &p, &p, &opts).unwrap()
    }

    #[test]
    fn ranges_numbers_and_paging() {
        let text: String = (1..=10).map(|i| format!("line {i}\r\n")).collect();
        let out = read_text(text.as_bytes(), json!({"offset": 2, "limit": 3}));
        assert_eq!(
            out.content,
            "     3\tline 3\n     4\tline 4\n     5\tline 5\n\n[Lines 3-5 of 10. Continue with offset=5.]"
        );
        assert_eq!(out.data["nextOffset"], 5);
        assert_eq!(out.data["eol"], "crlf");
        let out = read_text(text.as_bytes(), json!({"offset": -2, "lineNumbers": false}));
        assert_eq!(out.content, "line 9\nline 10");
        assert_eq!((out.data["truncated"].as_bool(), &out.data["nextOffset"]), (Some(false), &Value::Null));
        let out = read_text(text.as_bytes(), json!({"offset": 50}));
        assert!(out.content.contains("past the end"), "{}", out.content);
        let out = read_text(b"abcdef\nghi\n", json!({"limit_bytes": 9, "lineNumbers": false}));
        assert_eq!(
            out.content,
            "abcdef\ngh\n\n[Stopped after 9 bytes, at byte 9 of 11. Continue with byteOffset=9.]"
        );
        assert_eq!(out.data["truncated"], true);
        assert_eq!(out.data["nextByteOffset"], 9);
    }

    #[test]
    fn byte_reads_end_on_characters_and_continue() {
        // UTF-8: "aé" is 3 bytes; a 2-byte limit stops before é, and the next read starts at it.
        let out = read_text("aébc\nline2\n".as_bytes(), json!({"limitBytes": 2}));
        assert_eq!(out.content, "a\n\n[Stopped after 1 bytes, at byte 1 of 12. Continue with byteOffset=1.]");
        let out = read_text("aébc\nline2\n".as_bytes(), json!({"byteOffset": 2, "limitBytes": 4}));
        assert_eq!(out.content.split("\n\n[").next(), Some("ébc"), "a byte inside é starts at é");
        // From the middle of the file: the line it falls in is known; no line numbers unless asked.
        let out = read_text(b"one\ntwo\nthree\n", json!({"byteOffset": 5, "limitBytes": 100}));
        assert_eq!(
            (out.content.as_str(), &out.data["startLine"], &out.data["nextByteOffset"]),
            ("wo\nthree", &json!(2), &Value::Null)
        );
        let out = read_text(b"one\ntwo\nthree\n", json!({"byteOffset": 4, "lineNumbers": true}));
        assert_eq!(out.content, "     2\ttwo\n     3\tthree");
        // UTF-16 with a BOM: never the BOM, never half a unit or half a surrogate pair.
        let mut u16 = vec![0xFF, 0xFE];
        "x😀y".encode_utf16().for_each(|u| u16.extend_from_slice(&u.to_le_bytes()));
        let out = read_text(&u16, json!({"limitBytes": 5}));
        assert_eq!(out.content.split("\n\n[").next(), Some("x"));
        assert_eq!(out.data["nextByteOffset"], 4);
        let out = read_text(&u16, json!({"byteOffset": 6, "limitBytes": 100}));
        assert_eq!(out.content, "😀y", "the low half moves back to the pair's start");
        let out = read_text(&u16, json!({"byteOffset": 0, "limitBytes": 100}));
        assert_eq!(out.content, "x😀y");
        // A limit below one character still reads it (a read always moves on).
        let out = read_text("€€".as_bytes(), json!({"limitBytes": 1}));
        assert_eq!((out.content.split("\n\n[").next(), &out.data["nextByteOffset"]), (Some("€"), &json!(3)));
        // Past the end, and the two offsets at once.
        assert!(read_text(b"ab", json!({"byteOffset": 9})).content.contains("past the end"));
        let a = crate::call::normalise(&TOOL, json!({"path": "f", "offset": 1, "byte_offset": 2})).unwrap();
        assert!(options(crate::call::args::parse(NAME, &a).unwrap()).is_err());
    }

    #[test]
    fn long_lines_budgets_encodings_binary() {
        let out = read_text(
            format!("{}\nb\n", "é".repeat(10)).as_bytes(),
            json!({"maxLineLength": 5, "lineNumbers": false}),
        );
        assert_eq!(out.content, "ééééé… [line cut: 5 more characters]\nb");
        assert_eq!(out.data["longLinesCut"], 1);
        // A line far over the cap is not even held in memory whole.
        let out = read_text(
            format!("{}\nb\n", "x".repeat(100_000)).as_bytes(),
            json!({"maxLineLength": 5, "lineNumbers": false}),
        );
        assert_eq!(out.content, "xxxxx… [line cut: 23+ more characters]\nb");
        let many: String = (0..100).map(|i| format!("{i:0>20}\n")).collect();
        let out = read_text(many.as_bytes(), json!({"maxBytes": 100}));
        assert_eq!(out.data["linesReturned"], 3);
        assert_eq!(out.data["nextOffset"], 3);
        let out = read_text(b"caf\xe9 cr\xe8me br\xfbl\xe9e\n", json!({"lineNumbers": false}));
        assert_eq!(out.content, "café crème brûlée");
        assert!(out.data["encoding"].as_str().unwrap().starts_with("windows-125"), "{}", out.data);
        let mut u16 = vec![0xFE, 0xFF];
        "a\r\nβ\r\n".encode_utf16().for_each(|u| u16.extend_from_slice(&u.to_be_bytes()));
        let out = read_text(&u16, json!({"lineNumbers": false}));
        assert_eq!(
            (out.content.as_str(), &out.data["encoding"], &out.data["bom"]),
            ("a\nβ", &json!("UTF-16BE"), &json!(true))
        );
        let out = read_text(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", json!({}));
        assert_eq!(out.data["binary"], true);
        assert!(!out.content.contains('\u{FFFD}'));
        assert_eq!(read_text(b"", json!({})).data["totalLines"], 0);
    }
}
