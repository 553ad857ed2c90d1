//! libgit2's own xdiff, called directly: the diff libgit2 runs (and git blame runs), asked for
//! hunk ranges only, with no patch built. `log_numstat` counts lines with it, `blame` takes hunks.

use std::os::raw::{c_char, c_int, c_long, c_ulong, c_void};

use crate::error::{Result, ToolError};

// libgit2's xdiff (vendored by `libgit2-sys` with `git2`'s `vendored-libgit2`, the copy
// libgit2's diff calls): the types of `deps/xdiff/xdiff.h` that `xdl_diff` takes.

/// `mmfile_t`: one side's bytes.
#[repr(C)]
struct MmFile {
    ptr: *const c_char,
    size: c_long,
}

/// `xpparam_t`: the diff's flags (0: Myers, no whitespace options, as libgit2's default).
#[repr(C)]
struct XpParam {
    flags: c_ulong,
    ignore_regex: *mut c_void,
    ignore_regex_nr: usize,
    anchors: *mut *mut c_char,
    anchors_nr: usize,
}

/// `xdemitcb_t`: the emit callbacks (unused when `hunk_func` is set).
#[repr(C)]
struct XdEmitCb {
    priv_: *mut c_void,
    out_hunk: *mut c_void,
    out_line: *mut c_void,
}

type HunkFunc = unsafe extern "C" fn(c_long, c_long, c_long, c_long, *mut c_void) -> c_int;

/// `xdemitconf_t`: with `hunk_func` set, `xdl_diff` hands over each hunk's line ranges and
/// emits nothing.
#[repr(C)]
struct XdEmitConf {
    ctxlen: c_long,
    interhunkctxlen: c_long,
    flags: c_ulong,
    find_func: *mut c_void,
    find_func_priv: *mut c_void,
    hunk_func: Option<HunkFunc>,
}

unsafe extern "C" {
    fn xdl_diff(
        mf1: *mut MmFile,
        mf2: *mut MmFile,
        xpp: *const XpParam,
        xecfg: *const XdEmitConf,
        ecb: *mut XdEmitCb,
    ) -> c_int;
}

/// Adds a hunk's line counts (old, new) to the `(deleted, added)` pair behind `data`.
unsafe extern "C" fn add_hunk(_: c_long, old: c_long, _: c_long, new: c_long, data: *mut c_void) -> c_int {
    // SAFETY: `data` is the `&mut (usize, usize)` that `line_counts` passed to `run` and
    // keeps alive for the whole `xdl_diff` call; nothing else refers to it meanwhile.
    let counts = unsafe { &mut *data.cast::<(usize, usize)>() };
    counts.0 += usize::try_from(old).unwrap_or(0);
    counts.1 += usize::try_from(new).unwrap_or(0);
    0
}

/// Appends a hunk's ranges (old start, old lines, new start, new lines; starts 0-based) to the
/// `Vec<[usize; 4]>` behind `data`.
unsafe extern "C" fn push_hunk(s1: c_long, n1: c_long, s2: c_long, n2: c_long, data: *mut c_void) -> c_int {
    // SAFETY: `data` is the `&mut Vec<[usize; 4]>` that `hunks` passed to `run` and keeps
    // alive for the whole `xdl_diff` call; nothing else refers to it meanwhile.
    let out = unsafe { &mut *data.cast::<Vec<[usize; 4]>>() };
    let n = |v: c_long| usize::try_from(v).unwrap_or(0);
    out.push([n(s1), n(n1), n(s2), n(n2)]);
    0
}

/// `xdl_diff` of `old` and `new` (both not empty) with diff flags `flags` and no context,
/// handing each hunk's ranges to `func` with `data`. `None`: a side too large for xdiff, or
/// xdiff failed (out of memory).
///
/// # Safety
/// `data` must be what `func` expects, alive and used by nothing else during the call.
unsafe fn run(old: &[u8], new: &[u8], flags: c_ulong, func: HunkFunc, data: *mut c_void) -> Option<()> {
    // xdiff allocates with libgit2's allocator, set up by libgit2's init (once per process;
    // every caller has opened a repository already, which did it, but this does not rely on it).
    libgit2_sys::init();
    let mut a = MmFile { ptr: old.as_ptr().cast(), size: c_long::try_from(old.len()).ok()? };
    let mut b = MmFile { ptr: new.as_ptr().cast(), size: c_long::try_from(new.len()).ok()? };
    let xpp = XpParam {
        flags,
        ignore_regex: std::ptr::null_mut(),
        ignore_regex_nr: 0,
        anchors: std::ptr::null_mut(),
        anchors_nr: 0,
    };
    let conf = XdEmitConf {
        ctxlen: 0,
        interhunkctxlen: 0,
        flags: 0,
        find_func: std::ptr::null_mut(),
        find_func_priv: std::ptr::null_mut(),
        hunk_func: Some(func),
    };
    let mut cb = XdEmitCb { priv_: data, out_hunk: std::ptr::null_mut(), out_line: std::ptr::null_mut() };
    // SAFETY: the structs match `deps/xdiff/xdiff.h` of the vendored libgit2 field for field
    // (`#[repr(C)]`, C's `long`/`unsigned long`); both buffers are live slices of the given
    // length that xdiff only reads (it hashes and compares their lines); `priv_` is `data`,
    // which the caller keeps alive for `func` alone (this function's contract); with
    // `hunk_func` set xdiff calls neither `out_hunk` nor `out_line`, and with no
    // `XDL_EMIT_FUNCNAMES` flag it never calls `find_func`. The flags are xdiff's own bits.
    let rc = unsafe { xdl_diff(&mut a, &mut b, &xpp, &conf, &mut cb) };
    (rc >= 0).then_some(())
}

/// (deleted, added) lines between `old` and `new`, as libgit2's diff counts them with no
/// context lines: with no context a hunk holds only changed lines (two changes with a common
/// line between them are two hunks), so its ranges are the counts.
pub(super) fn line_counts(old: &[u8], new: &[u8]) -> Result<(usize, usize)> {
    if c_long::try_from(old.len().max(new.len())).is_err() {
        return Err(ToolError::internal("log: a file is too large to diff"));
    }
    if old.is_empty() || new.is_empty() {
        // Every line of the other side changed (and xdiff refuses an empty buffer).
        return Ok((lines(old), lines(new)));
    }
    let mut counts: (usize, usize) = (0, 0);
    // SAFETY: `add_hunk` takes a `(usize, usize)`, which `counts` is and which outlives the call.
    let done = unsafe { run(old, new, 0, add_hunk, std::ptr::from_mut(&mut counts).cast()) };
    done.ok_or_else(|| ToolError::internal("log: xdiff failed (out of memory?)"))?;
    Ok(counts)
}

/// xdiff's `XDF_INDENT_HEURISTIC` (`git diff --indent-heuristic`, git blame's default).
pub(super) const INDENT_HEURISTIC: c_ulong = 1 << 23;

/// The hunks of `new` against `old` as git blame asks xdiff for them: no context, flags
/// `flags`, and the common tail of the two texts left out first, as git's `xdi_diff` leaves it
/// out ([`trim_common_tail`]). Each hunk is (old start, old lines, new start, new lines); starts
/// are 0-based, and an empty range names the line it comes before. Both sides must not be
/// empty; `None` when xdiff failed.
pub(super) fn hunks(old: &[u8], new: &[u8], flags: c_ulong) -> Option<Vec<[usize; 4]>> {
    if old.is_empty() || new.is_empty() {
        return None;
    }
    let (old, new) = trim_common_tail(old, new);
    let mut out: Vec<[usize; 4]> = Vec::new();
    // SAFETY: `push_hunk` takes a `Vec<[usize; 4]>`, which `out` is and which outlives the call.
    unsafe { run(old, new, flags, push_hunk, std::ptr::from_mut(&mut out).cast()) }?;
    Some(out)
}

/// The libgit2 release whose `deps/xdiff/xdiff.h` the structs above copy (libgit2-sys
/// 0.18.8+1.9.7). xdiff is libgit2's internal, not its API: under any other release (a bumped
/// libgit2-sys) every commit goes to libgit2's own diff until the structs are checked again.
const XDIFF_FROM: (u32, u32) = (1, 9);

/// Whether the linked libgit2 is the release the xdiff structs were copied from.
pub(super) fn xdiff_layout_known() -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        let (major, minor, _) = git2::Version::get().libgit2_version();
        (major, minor) == XDIFF_FROM
    })
}

/// Lines in `text` as xdiff counts them (a last line without a newline is a line).
pub(super) fn lines(text: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', text).count() + usize::from(text.last().is_some_and(|&c| c != b'\n'))
}

/// `old` and `new` without the lines they end with in common, found as git's `xdi_diff` finds
/// them for a diff with no context (`trim_common_tail` in git's `xdiff-interface.c`): whole
/// blocks of 1,024 bytes equal at both ends are cut, then given back up to and including the
/// first newline in them, so that both texts still end where a line ends. xdiff then never
/// hashes those lines, and a change next to them cannot slide into them (git's blame slides
/// it as this does). Lines after the last hunk are unchanged on both sides either way.
fn trim_common_tail<'a>(old: &'a [u8], new: &'a [u8]) -> (&'a [u8], &'a [u8]) {
    const BLOCK: usize = 1024;
    let smaller = old.len().min(new.len());
    let mut trimmed = 0;
    while BLOCK + trimmed <= smaller
        && old[old.len() - trimmed - BLOCK..old.len() - trimmed]
            == new[new.len() - trimmed - BLOCK..new.len() - trimmed]
    {
        trimmed += BLOCK;
    }
    let cut = &old[old.len() - trimmed..];
    let recovered = memchr::memchr(b'\n', cut).map_or(trimmed, |at| at + 1);
    let drop = trimmed - recovered;
    (&old[..old.len() - drop], &new[..new.len() - drop])
}
