//! `file_read`: one page of a file as UTF-8 text.
//!
//! Pages tile the file (contract §5.1): page `k` is `[B(k-1), B(k))` where
//! `B(i) = min(i * pageSize, totalBytes)` moved back to the first byte of the UTF-8 character
//! containing it. Concatenating all pages gives the file back byte for byte. A page costs one
//! `pread` of about `pageSize` bytes, wherever it is in the file.

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::js;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Default and largest page, in bytes (eddie's `MAX_PAGE_BYTES`).
pub const MAX_PAGE_BYTES: f64 = 20480.0;

/// Parsed arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReadArgs {
    /// The path as given (echoed back).
    pub path: String,
    /// 1-based page.
    pub page: u64,
    /// Bytes per page, 1..=20480.
    pub page_size: u64,
}

impl FileReadArgs {
    /// Apply eddie's coercions and defaults.
    pub fn parse(args: &Value) -> Result<Self> {
        let path = match args.get("path") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(ToolError::invalid("path must be a non-empty string")),
        };
        let page = js::finite_floor(args.get("page")).map_or(1.0, |p| p.max(1.0));
        let size = js::finite_floor(args.get("pageSize"))
            .or_else(|| js::finite_floor(args.get("maxBytes")))
            .map_or(MAX_PAGE_BYTES, |s| s.clamp(1.0, MAX_PAGE_BYTES));
        // `page` can be huge (1e300): saturate; such a page is past the end anyway.
        Ok(Self {
            path,
            page: if page >= u64::MAX as f64 { u64::MAX } else { page as u64 },
            page_size: size as u64,
        })
    }
}

/// Run `file_read`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let args = FileReadArgs::parse(args)?;
    let resolved = ctx.workspace.resolve(&args.path)?;
    crate::blocking("file_read", move || read_page(&resolved.real, &resolved.lexical, &args)).await
}

/// Run `file_read` on the calling thread: a few syscalls and one `pread` of at most
/// [`MAX_PAGE_BYTES`], wherever the page is, so never too big for the host's thread.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    let args = FileReadArgs::parse(args)?;
    let resolved = ctx.workspace.resolve(&args.path)?;
    read_page(&resolved.real, &resolved.lexical, &args).map(Some)
}

/// Read one page (blocking).
pub fn read_page(
    real: &std::path::Path,
    lexical: &std::path::Path,
    args: &FileReadArgs,
) -> Result<ToolOutput> {
    let file = std::fs::File::open(real).map_err(|e| ToolError::fs(&e, "open", Some(lexical)))?;
    let meta = file.metadata().map_err(|e| ToolError::fs(&e, "fstat", Some(lexical)))?;
    if meta.is_dir() {
        return Err(ToolError::fs(&std::io::Error::from_raw_os_error(libc::EISDIR), "read", None));
    }
    let total = meta.len();
    let ps = args.page_size;
    let start_nominal = args.page.saturating_sub(1).saturating_mul(ps).min(total);
    let end_nominal = args.page.saturating_mul(ps).min(total);
    // One read covers both boundaries: up to 3 bytes before the start, and the byte at the end.
    let window_start = start_nominal.saturating_sub(3);
    let window_end = end_nominal.saturating_add(1).min(total);
    let mut buf = vec![0u8; usize::try_from(window_end - window_start).unwrap_or(0)];
    // A file that shrank underneath leaves the rest of `buf` zero rather than failing.
    crate::engine::text::pread::read_at_most(&file, &mut buf, window_start)
        .map_err(|e| ToolError::fs(&e, "read", None))?;
    let start = align(&buf, window_start, start_nominal, total);
    let end = align(&buf, window_start, end_nominal, total);
    let slice = &buf[idx(start - window_start)..idx(end - window_start)];
    let content = crate::engine::text::utf8::lossy(slice).into_owned();
    let total_pages = total.div_ceil(ps).max(1);
    let data = json!({
        "path": args.path,
        "bytes": end - start,
        "truncated": end < total,
        "page": args.page,
        "pageSize": ps,
        "totalBytes": total,
        "totalPages": total_pages,
    });
    Ok(ToolOutput::new(content, data))
}

fn idx(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Move `pos` back to the first byte of the UTF-8 character that contains it. `buf` holds the
/// file from `base`; `pos == 0` and `pos == total` are boundaries.
fn align(buf: &[u8], base: u64, pos: u64, total: u64) -> u64 {
    if pos == 0 || pos >= total {
        return pos;
    }
    let at = |p: u64| buf.get(idx(p - base)).copied();
    match at(pos) {
        Some(b) if crate::engine::text::utf8::is_continuation(b) => {}
        _ => return pos,
    }
    for back in 1..=3u64 {
        if pos < back || pos - back < base {
            break;
        }
        let Some(b) = at(pos - back) else { break };
        if crate::engine::text::utf8::is_continuation(b) {
            continue;
        }
        let len = crate::engine::text::utf8::sequence_len(b) as u64;
        return if len > back { pos - back } else { pos };
    }
    pos
}

/// The `file_read` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "file_read",
    js_name: "fileRead",
    family: "eddie",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: Some(run_blocking),
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn page(content: &[u8], page: u64, size: u64) -> (String, Value) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.txt");
        std::fs::write(&p, content).unwrap();
        let out = read_page(&p, &p, &FileReadArgs { path: "f.txt".into(), page, page_size: size }).unwrap();
        (out.content, out.data)
    }

    #[test]
    fn contract_cases() {
        let (c, d) = page("😀😀".as_bytes(), 1, 4);
        assert_eq!(c, "😀");
        assert_eq!(
            d,
            json!({"path":"f.txt","bytes":4,"truncated":true,"page":1,"pageSize":4,"totalBytes":8,"totalPages":2})
        );
        let (c, d) = page("😀😀".as_bytes(), 1, 5);
        assert_eq!((c.as_str(), &d["bytes"], &d["pageSize"]), ("😀", &json!(4), &json!(5)));
        let (c, d) = page("😀text".as_bytes(), 1, 1);
        assert_eq!(
            (c.as_str(), &d["bytes"], &d["truncated"], &d["totalPages"]),
            ("", &json!(0), &json!(true), &json!(8))
        );
        let (c, d) = page("foo😊".as_bytes(), 2, 5);
        assert_eq!((c.as_str(), &d["bytes"], &d["truncated"]), ("😊", &json!(4), &json!(false)));
        let (c, d) = page(b"", 1, 10);
        assert_eq!((c.as_str(), &d["totalPages"], &d["truncated"]), ("", &json!(1), &json!(false)));
        let (c, d) = page(b"abc", 9, 2);
        assert_eq!((c.as_str(), &d["page"], &d["truncated"]), ("", &json!(9), &json!(false)));
    }

    #[test]
    fn pages_tile_the_file() {
        let text = "a😀bcdefgh aé€😀z \u{10FFFF}x\u{7FF}yz".as_bytes().to_vec();
        let mut bad = text.clone();
        bad.extend_from_slice(&[0xF0, 0x9F, b'q', 0x80, 0x80, 0xE2]);
        for data in [text, bad] {
            for size in 1..=9u64 {
                let d = tempfile::tempdir().unwrap();
                let p = d.path().join("f");
                std::fs::write(&p, &data).unwrap();
                let pages = (data.len() as u64).div_ceil(size);
                let mut joined = Vec::new();
                for k in 1..=pages {
                    let args = FileReadArgs { path: "f".into(), page: k, page_size: size };
                    let out = read_page(&p, &p, &args).unwrap();
                    let n = out.data["bytes"].as_u64().unwrap();
                    assert!(n <= size + 3);
                    let start = joined.len();
                    joined.extend_from_slice(&data[start..start + n as usize]);
                }
                assert_eq!(joined, data, "size {size}");
            }
        }
    }

    #[test]
    fn parse_applies_eddie_defaults() {
        let a = FileReadArgs::parse(&json!({"path":"x","maxBytes":3,"pageSize":"7","page":"2.9"})).unwrap();
        assert_eq!((a.page, a.page_size), (2, 7));
        let a = FileReadArgs::parse(&json!({"path":"x","maxBytes":1e9,"page":-4})).unwrap();
        assert_eq!((a.page, a.page_size), (1, 20480));
        let a = FileReadArgs::parse(&json!({"path":"x","page":1e300})).unwrap();
        assert_eq!(a.page, u64::MAX);
        assert!(FileReadArgs::parse(&json!({"path": 3})).is_err());
        assert!(FileReadArgs::parse(&json!({})).is_err());
    }
}
