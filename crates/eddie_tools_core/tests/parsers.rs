//! Property tests of the parsers: unified diffs and the codex `*** Begin Patch` envelope
//! (`files::patch`), `files::diff::{unified, capped}`, SEARCH/REPLACE blocks
//! (`files::edit_file::parse_blocks`), the ECMAScript → Rust regex prefilter
//! (`search::es_regex`), and globs (`code::globs::Includes`, `code::glob::literal_prefix`).
//!
//! Each property runs a fixed number of cases (see [`config`]) so CI time stays bounded;
//! `PROPTEST_CASES=n` overrides every count, `PROPTEST_RNG_SEED=n` fixes the seed. A failure
//! is shrunk, printed, and its seed saved to `tests/parsers.proptest-regressions`, which is
//! replayed first on the next run.

use std::sync::atomic::AtomicBool;

use eddie_tools_core::ErrorCode;
use eddie_tools_core::code::glob::literal_prefix;
use eddie_tools_core::eddie::file_search::search_file;
use eddie_tools_core::engine::es_regex::{EsRegex, translate};
use eddie_tools_core::engine::patch::diff;
use eddie_tools_core::engine::patch::{self, Op, Tag};
use eddie_tools_core::engine::walk::globs::Includes;
use eddie_tools_core::files::edit_file::{Block, parse_blocks};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::FileFailurePersistence;

/// `cases` cases from a fixed seed, so `cargo test` (and CI) runs the same cases every time;
/// explore further by hand with `PROPTEST_CASES=30000 PROPTEST_RNG_SEED=<n>` (the `proptest!`
/// macro applies the environment after this). Failures are persisted next to this file.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_ed01),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/parsers.proptest-regressions"
        )))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------------
// Shared generators
// ---------------------------------------------------------------------------------------------

const EOLS: [&str; 3] = ["\n", "\r\n", "\r"];

/// Line contents (no line breaks): code-like text, blanks, padding, tabs, multi-byte
/// characters, case-folding oddities, NUL.
const WORDS: &[&str] = &[
    "fn main() {",
    "let x = 1;",
    "}",
    "{",
    "",
    "",
    "return x",
    "  indented",
    "\tTab",
    "é",
    "😀 emoji",
    "日本語",
    "trailing  ",
    "a\0b",
    "ǅ K ﬃ",
    "x",
    "-- not a header",
    "++ nor this",
    " ",
];

/// Characters the parsers look at, plus multi-byte ones, for biased noise.
const NOISE: &[char] = &[
    '\n', '\n', '\n', '\r', '\0', '\t', ' ', ' ', '-', '+', '@', '*', '\\', '<', '>', '=', '/', ':', 'a',
    'b', 'é', '😀', '日', '\u{2028}', '\u{feff}',
];

/// Fragments of the formats, for noise that gets past the first checks.
const FRAGMENTS: &[&str] = &[
    "--- a/f",
    "+++ b/f",
    "--- /dev/null",
    "+++ /dev/null",
    "@@ -1,2 +1,2 @@",
    "@@ -0,0 +1 @@",
    "@@",
    "diff --git a/f b/f",
    "rename from ",
    "rename to ",
    "\\ No newline at end of file",
    "*** Begin Patch",
    "*** End Patch",
    "*** Update File: ",
    "*** Add File: ",
    "*** Delete File: ",
    "*** Move to: ",
    "*** End of File",
    "<<<<<<< SEARCH",
    "------- SEARCH",
    "=======",
    ">>>>>>> REPLACE",
    "+++++++ REPLACE",
    "\r\n",
];

/// Arbitrary text, biased towards what the parsers care about: any character, the
/// characters above, and fragments of the formats.
fn noise() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        2 => any::<char>().prop_map(String::from),
        4 => select(NOISE).prop_map(String::from),
        2 => select(FRAGMENTS).prop_map(str::to_owned),
        1 => select(WORDS).prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 0..120).prop_map(|v| v.concat())
}

/// `lines` joined with their line endings.
fn join(lines: &[(String, &str)]) -> String {
    lines.iter().map(|(c, e)| format!("{c}{e}")).collect()
}

/// `text` split as the patch code splits it: after `\n`, `\r\n`, or a lone `\r`; each line
/// as (content, ending).
fn split_any_eol(text: &str) -> Vec<(&str, &str)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        let eol = match b[i] {
            b'\r' if b.get(i + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => 0,
        };
        if eol > 0 {
            out.push((&text[start..i], &text[i..i + eol]));
            i += eol;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < b.len() {
        out.push((&text[start..], ""));
    }
    out
}

fn contents(text: &str) -> Vec<&str> {
    split_any_eol(text).into_iter().map(|(c, _)| c).collect()
}

/// Lines with their endings: `style` 0–2 uses that one of [`EOLS`] everywhere, 3 mixes them.
fn lines(max: usize) -> impl Strategy<Value = Vec<(String, &'static str)>> {
    (0..4usize, prop::collection::vec((select(WORDS), 0..3usize), 0..max)).prop_map(|(style, v)| {
        v.into_iter().map(|(w, e)| (w.to_owned(), EOLS[if style < 3 { style } else { e }])).collect()
    })
}

// ---------------------------------------------------------------------------------------------
// Unified diffs and codex patches: never panic
// ---------------------------------------------------------------------------------------------

/// One line of a near-valid unified diff.
fn unified_line() -> impl Strategy<Value = String> {
    let num = prop_oneof![
        4 => (0..6usize).prop_map(|n| n.to_string()),
        1 => Just("18446744073709551615".to_owned()),
        1 => Just("99999999999999999999999".to_owned()),
        1 => Just("-1".to_owned()),
        1 => Just(String::new()),
    ];
    prop_oneof![
        1 => Just("diff --git a/f b/f".to_owned()),
        1 => select(&["--- a/f", "--- /dev/null", "--- \"a/q f\"\t2024-01-01", "--- g"][..]).prop_map(str::to_owned),
        1 => select(&["+++ b/f", "+++ /dev/null", "+++ b/g", "+++ "][..]).prop_map(str::to_owned),
        1 => select(&["rename from f", "rename to g", "rename from "][..]).prop_map(str::to_owned),
        3 => (num.clone(), num.clone(), num.clone(), num, select(&["", " f()", "@@"][..]))
            .prop_map(|(a, b, c, d, t)| format!("@@ -{a},{b} +{c},{d} @@{t}")),
        1 => select(&["@@", "@@ -x @@", "@@@"][..]).prop_map(str::to_owned),
        8 => (select(&[" ", "-", "+", "", "\\", "x", "@"][..]), select(WORDS)).prop_map(|(t, w)| format!("{t}{w}")),
        1 => Just("\\ No newline at end of file".to_owned()),
        1 => noise(),
    ]
}

/// A near-valid section of a codex envelope: a header (padded at random) and its body, now
/// and then a stray line.
fn codex_section() -> impl Strategy<Value = String> {
    let pad = || select(&["", "", "", "", "", " ", "  ", "\t", " \t "][..]);
    let stray = || {
        prop_oneof![
            (select(&["x", "*", "**", "\\", "*** ", "***"][..]), select(WORDS))
                .prop_map(|(t, w)| format!("{t}{w}")),
            select(&["*** Begin Patch", "*** End Patch", "*** End of File", "*** Move to: m"][..])
                .prop_map(str::to_owned),
            noise(),
        ]
    };
    let add_line = prop_oneof![
        20 => (select(&["+", "+", "+", ""][..]), select(WORDS)).prop_map(|(t, w)| format!("{t}{w}")),
        1 => stray(),
    ];
    let update_line = prop_oneof![
        16 => (select(&[" ", "-", "+", "", " ", "-", "+"][..]), select(WORDS)).prop_map(|(t, w)| format!("{t}{w}")),
        4 => select(&["@@", "@@ ", "@@ fn main() {", "@@ x", "@@@@", "*** End of File", "  *** End of File"][..])
            .prop_map(str::to_owned),
        1 => stray(),
    ];
    let add = (select(&["*** Add File: a.txt", "*** Add File: "][..]), prop::collection::vec(add_line, 0..6));
    let delete = (
        Just("*** Delete File: d.txt"),
        prop::collection::vec(select(&["", " "][..]).prop_map(str::to_owned), 0..2),
    );
    let update = (
        select(
            &[
                "*** Update File: f",
                "*** Update File: f\n*** Move to: h",
                "*** Update File: g\n  *** Move to: ",
            ][..],
        ),
        prop::collection::vec(update_line, 0..10),
    );
    let section = prop_oneof![
        2 => add,
        1 => delete,
        5 => update,
        1 => (stray(), prop::collection::vec(stray(), 0..2)).prop_map(|(_, b)| ("***", b)),
    ];
    (pad(), section, pad()).prop_map(|(a, (h, body), b)| {
        let mut lines = vec![format!("{a}{h}{b}")];
        lines.extend(body);
        lines.join("\n")
    })
}

/// Lines joined with random line endings (mostly `\n`).
fn joined(line: impl Strategy<Value = String>, max: usize) -> impl Strategy<Value = String> {
    let eol = select(&["\n", "\n", "\n", "\n", "\r\n", "\r", ""][..]);
    prop::collection::vec((line, eol), 0..max).prop_map(|v| v.into_iter().map(|(l, e)| l + e).collect())
}

/// Parse `text` both ways and apply every update's hunks to `file`; only `Ok` or the
/// documented error codes may come back.
fn parse_and_apply(text: &str, file: &str) -> Result<(), TestCaseError> {
    let any = patch::parse_any(text);
    let codex = text.lines().any(|l| l.trim() == "*** Begin Patch");
    let direct = if codex { patch::parse_codex(text) } else { patch::parse_unified(text) };
    prop_assert_eq!(
        any.as_ref().map_err(|e| e.code()),
        direct.as_ref().map_err(|e| e.code()),
        "parse_any must dispatch on '*** Begin Patch'"
    );
    for r in [patch::parse_unified(text), patch::parse_codex(text), any] {
        let ops = match r {
            Ok(ops) => ops,
            Err(e) => {
                prop_assert_eq!(e.code(), ErrorCode::InvalidPatch, "{}", e.message());
                continue;
            }
        };
        prop_assert!(!ops.is_empty());
        for op in &ops {
            if let Op::Update { hunks, .. } | Op::Delete { hunks, .. } = op
                && let Err(e) = patch::apply_hunks(file, hunks, "f")
            {
                prop_assert!(
                    matches!(e.code(), ErrorCode::NoMatch | ErrorCode::AmbiguousMatch),
                    "{:?}: {}",
                    e.code(),
                    e.message()
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn patch_parsers_never_panic_on_noise(text in noise(), file in lines(12)) {
        parse_and_apply(&text, &join(&file))?;
    }

    #[test]
    fn patch_parsers_never_panic_on_near_valid_unified(
        text in joined(unified_line(), 24),
        file in lines(12),
    ) {
        parse_and_apply(&text, &join(&file))?;
    }

    #[test]
    fn patch_parsers_never_panic_on_near_valid_codex(
        body in joined(codex_section(), 5),
        wrap in any::<bool>(),
        file in lines(12),
    ) {
        let text = if wrap { format!("*** Begin Patch\n{body}\n*** End Patch\n") } else { body };
        parse_and_apply(&text, &join(&file))?;
    }
}

// ---------------------------------------------------------------------------------------------
// Unified diffs: what `diff::unified` writes, `parse_unified` + `apply_hunks` read back
// ---------------------------------------------------------------------------------------------

/// An edit of a line list: at `Index`, 0 = delete, 1 = insert, 2 = replace.
type LineEdit = (Index, u8, (&'static str, usize));

fn edit_lines(lines: &mut Vec<(String, &'static str)>, edits: &[LineEdit], style: Option<&'static str>) {
    for (at, kind, (word, e)) in edits {
        let at = at.index(lines.len() + 1);
        let line = (format!("new {word}"), style.unwrap_or(EOLS[*e]));
        match kind {
            0 if at < lines.len() => {
                lines.remove(at);
            }
            1 => lines.insert(at, line),
            _ if at < lines.len() => lines[at] = line,
            _ => {}
        }
    }
}

/// The one line ending `texts` use, if they use at most one (`\n` when they have none).
fn single_style<'a>(texts: &[&'a str]) -> Option<&'a str> {
    let mut seen: Option<&str> = None;
    for t in texts {
        for (_, e) in split_any_eol(t) {
            match seen {
                _ if e.is_empty() => {}
                None => seen = Some(e),
                Some(s) if s == e => {}
                Some(_) => return None,
            }
        }
    }
    Some(seen.unwrap_or("\n"))
}

proptest! {
    #![proptest_config(config(4000))]

    /// For any old/new texts (LF, CRLF, lone CR, mixed; multi-byte; with or without a final
    /// line ending), our diff parses back into one update whose hunks turn `old` into `new`:
    /// line for line always, byte for byte when both texts use one line ending that `old`
    /// shows (the diff itself does not carry CRs), every hunk placed exactly.
    #[test]
    fn unified_diffs_apply_back(
        old_lines in lines(30),
        edits in prop::collection::vec(
            (any::<Index>(), 0..3u8, (select(WORDS), 0..3usize)), 1..6),
        same_style in any::<bool>(),
        drop_old_eol in prop::bool::weighted(0.25),
        drop_new_eol in prop::bool::weighted(0.2),
    ) {
        let mut old_lines = old_lines;
        if drop_old_eol && let Some(l) = old_lines.last_mut() {
            l.1 = "";
        }
        let old = join(&old_lines);
        let style = old_lines.first().map(|l| l.1).filter(|e| same_style && !e.is_empty());
        let mut new_lines = old_lines.clone();
        edit_lines(&mut new_lines, &edits, style);
        if drop_new_eol && let Some(l) = new_lines.last_mut() {
            l.1 = "";
        }
        let new = join(&new_lines);
        let (d, stat) = diff::unified(Some("f"), Some("f"), &old, &new);
        if old == new {
            prop_assert_eq!(d, "");
            return Ok(());
        }
        let ops = patch::parse_unified(&d).map_err(|e| TestCaseError::fail(format!("{e}\n{d}")))?;
        prop_assert_eq!(ops.len(), 1, "{}", d);
        let Op::Update { path, move_to, hunks } = &ops[0] else {
            return Err(TestCaseError::fail(format!("{ops:?}")));
        };
        prop_assert_eq!((path.as_str(), move_to), ("f", &None));
        let count = |tag| hunks.iter().flat_map(|h| &h.lines).filter(|(t, _)| *t == tag).count();
        prop_assert_eq!((stat.added, stat.removed), (count(Tag::Add), count(Tag::Del)), "{}", d);
        let (back, placed) = patch::apply_hunks(&old, hunks, "f")
            .map_err(|e| TestCaseError::fail(format!("{e}\n{d}")))?;
        prop_assert_eq!(contents(&back), contents(&new), "{}", d);
        prop_assert_eq!(back.ends_with(['\n', '\r']), new.ends_with(['\n', '\r']), "{}", d);
        prop_assert!(placed.iter().all(|p| p.stage == "exact"), "{:?}\n{}", placed, d);
        if let Some(eol) = single_style(&[&old, &new])
            && (eol == "\n" || old.contains(eol))
        {
            prop_assert_eq!(back, new, "{}", d);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Codex envelopes built from random replacements apply
// ---------------------------------------------------------------------------------------------

/// One replacement: where (`Index` into the old lines), how many lines it removes, what it
/// adds, the context lines before and after, an `@@ anchor` line, `*** End of File`.
type Replacement = (Index, usize, Vec<&'static str>, usize, usize, bool, bool);

/// The envelope's update body for `edits` over `old` (unique lines), and the expected new
/// line list.
fn codex_hunks(old: &[String], edits: &[Replacement]) -> (Vec<String>, Vec<String>) {
    let n = old.len();
    let mut starts: Vec<(usize, &Replacement)> = edits.iter().map(|e| (e.0.index(n + 1), e)).collect();
    starts.sort_by_key(|s| s.0);
    let mut body = Vec::new();
    let mut new = Vec::new();
    let mut copied = 0; // old lines already in `new` (or removed)
    let mut floor = 0; // the end of the previous hunk's old lines
    for (start, e) in starts {
        let (_, del, add, before, after, anchor, eof) = e;
        if start < floor {
            continue;
        }
        let del = (*del).min(n - start);
        let mut before = (*before).min(start - floor);
        let mut after = (*after).min(n - start - del);
        if before + del + after == 0 {
            if start < n {
                after = 1;
            } else if start > floor {
                before = 1;
            } else {
                continue;
            }
        }
        let first = start - before;
        let end = start + del + after;
        body.push(if *anchor && first > floor {
            format!("@@ {}", old[first - 1].trim())
        } else {
            "@@".into()
        });
        body.extend(old[first..start].iter().map(|l| format!(" {l}")));
        body.extend(old[start..start + del].iter().map(|l| format!("-{l}")));
        body.extend(add.iter().map(|l| format!("+{l}")));
        body.extend(old[start + del..end].iter().map(|l| format!(" {l}")));
        if *eof && end == n {
            body.push("*** End of File".into());
        }
        new.extend(old[copied..start].iter().cloned());
        new.extend(add.iter().map(|l| (*l).to_owned()));
        copied = start + del;
        floor = end;
    }
    new.extend(old[copied..].iter().cloned());
    (body, new)
}

proptest! {
    #![proptest_config(config(4000))]

    /// An envelope of random replacements with unique context (an update, maybe moved, and
    /// an added file), written with LF or CRLF, parses to those operations and the update
    /// applies to exactly the expected text, keeping the file's line ending (LF, CRLF or
    /// lone CR) and its final-newline state.
    #[test]
    fn codex_envelopes_apply(
        words in prop::collection::vec(select(WORDS), 1..25),
        edits in prop::collection::vec(
            (any::<Index>(), 0..3usize, prop::collection::vec(select(WORDS), 0..3), 0..3usize,
             0..3usize, any::<bool>(), any::<bool>()),
            1..5),
        eol in select(&EOLS[..]),
        final_eol in prop::bool::weighted(0.75),
        envelope_eol in select(&["\n", "\r\n"][..]),
        move_to in any::<bool>(),
        added in prop::option::of(prop::collection::vec(select(WORDS), 0..4)),
    ) {
        let old: Vec<String> = words.iter().enumerate().map(|(i, w)| format!("{i}: {w}")).collect();
        let text = |ls: &[String]| {
            let mut s: String = ls.iter().map(|l| format!("{l}{eol}")).collect();
            if !final_eol && !ls.is_empty() {
                s.truncate(s.len() - eol.len());
            }
            s
        };
        let (body, new) = codex_hunks(&old, &edits);
        prop_assume!(!body.is_empty());
        let mut env = vec!["*** Begin Patch".to_owned(), "*** Update File: f".to_owned()];
        if move_to {
            env.push("*** Move to: g".into());
        }
        env.extend(body);
        if let Some(a) = &added {
            env.push("*** Add File: n.txt".into());
            env.extend(a.iter().map(|l| format!("+{l}")));
        }
        env.push("*** End Patch".into());
        let envelope = env.join(envelope_eol) + envelope_eol;
        let ops = patch::parse_any(&envelope).map_err(|e| TestCaseError::fail(format!("{e}\n{envelope}")))?;
        prop_assert_eq!(ops.len(), 1 + usize::from(added.is_some()), "{}", envelope);
        let Op::Update { path, move_to: to, hunks } = &ops[0] else {
            return Err(TestCaseError::fail(format!("{ops:?}")));
        };
        prop_assert_eq!(path, "f");
        prop_assert_eq!(to.as_deref(), move_to.then_some("g"));
        if let Some(a) = &added {
            let content: String = a.iter().map(|l| format!("{l}\n")).collect();
            prop_assert_eq!(&ops[1], &Op::Add { path: "n.txt".into(), content });
        }
        let old_text = text(&old);
        let (back, placed) = patch::apply_hunks(&old_text, hunks, "f")
            .map_err(|e| TestCaseError::fail(format!("{e}\n{envelope}")))?;
        prop_assert_eq!(placed.len(), hunks.len());
        if eol == "\n" || old_text.contains(eol) {
            prop_assert_eq!(back, text(&new), "{}", envelope);
        } else {
            // A one-line file without a line ending does not say which one it uses.
            let want = text(&new);
            prop_assert_eq!(contents(&back), contents(&want));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// diff::capped
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(1500))]

    /// `capped` keeps the whole diff when it fits; otherwise the longest prefix that ends
    /// with `\n` (or nothing) within `max` bytes, and a note with the exact number of bytes
    /// left out. Slicing never splits a character (the `&str` APIs would panic).
    #[test]
    fn capped_keeps_a_line_prefix_and_counts_the_rest(text in noise(), at in any::<Index>()) {
        let max = at.index(text.len() + 3);
        let out = diff::capped(&text, max);
        if text.len() <= max {
            prop_assert_eq!(out, text);
            return Ok(());
        }
        let cut = out.rfind("[diff truncated: ");
        prop_assert!(cut.is_some(), "{:?}", out);
        let (kept, note) = out.split_at(cut.unwrap_or_default());
        prop_assert!(text.starts_with(kept));
        prop_assert!(kept.len() <= max);
        prop_assert!(kept.is_empty() || kept.ends_with('\n'));
        prop_assert!(!text.as_bytes()[kept.len()..max].contains(&b'\n'), "not the longest prefix");
        prop_assert_eq!(note, format!("[diff truncated: {} more bytes]\n", text.len() - kept.len()));
    }
}

// ---------------------------------------------------------------------------------------------
// SEARCH/REPLACE blocks
// ---------------------------------------------------------------------------------------------

/// Content lines of a block (none is a marker line; some look close).
const BLOCK_WORDS: &[&str] = &[
    "a",
    "",
    "  indented",
    "é 😀 日本",
    "==",
    "=======x",
    "<<<<<<< HEAD",
    ">>>>>>> branch",
    "-------",
    "+++++++ REPLACED",
    "SEARCH",
    "REPLACE",
    "a\rb",
    "x\0y",
    "--- a/f",
];

/// Text outside blocks (none opens one).
const FILLER: &[&str] = &["Here is the edit:", "", "```", "```python", "====", "+++++++ REPLACE", "done."];

fn search_marker() -> impl Strategy<Value = String> {
    (select(&['-', '<'][..]), 3..9usize, select(&["", " ", "  ", "\t"][..]), select(&[" ", "  "][..]))
        .prop_map(|(c, n, pad, gap)| format!("{pad}{}{gap}SEARCH{pad}", c.to_string().repeat(n)))
}

fn divider() -> impl Strategy<Value = String> {
    (3..9usize, select(&["", " ", "\t"][..])).prop_map(|(n, pad)| format!("{pad}{}{pad}", "=".repeat(n)))
}

fn replace_marker() -> impl Strategy<Value = String> {
    (select(&['+', '>'][..]), 3..9usize, select(&["", " ", "\t"][..]))
        .prop_map(|(c, n, pad)| format!("{pad}{} REPLACE{pad}", c.to_string().repeat(n)))
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn blocks_never_panic_on_noise(text in noise()) {
        if let Err(e) = parse_blocks(&text) {
            prop_assert_eq!(e.code(), ErrorCode::InvalidPatch);
        }
    }

    #[test]
    fn blocks_never_panic_on_near_valid_input(
        text in joined(prop_oneof![
            search_marker(), divider(), replace_marker(), select(BLOCK_WORDS).prop_map(str::to_owned)
        ], 16),
    ) {
        if let Err(e) = parse_blocks(&text) {
            prop_assert_eq!(e.code(), ErrorCode::InvalidPatch);
        }
    }

}

proptest! {
    #![proptest_config(config(4000))]

    /// Blocks written with any marker style, padding, filler between them, LF or CRLF,
    /// parse back to the same SEARCH and REPLACE texts (lines joined by `\n`).
    #[test]
    fn blocks_round_trip(
        blocks in prop::collection::vec((
            select(FILLER),
            search_marker(),
            prop::collection::vec(select(BLOCK_WORDS), 0..4),
            divider(),
            prop::collection::vec(select(BLOCK_WORDS), 0..4),
            replace_marker(),
        ), 1..4),
        eol in select(&["\n", "\r\n"][..]),
        tail in select(FILLER),
        final_eol in any::<bool>(),
    ) {
        let mut out: Vec<String> = Vec::new();
        let mut want = Vec::new();
        for (filler, s, search, d, replace, r) in &blocks {
            out.push((*filler).to_owned());
            out.push(s.clone());
            out.extend(search.iter().map(|l| (*l).to_owned()));
            out.push(d.clone());
            out.extend(replace.iter().map(|l| (*l).to_owned()));
            out.push(r.clone());
            want.push(Block { search: search.join("\n"), replace: replace.join("\n") });
        }
        out.push(tail.to_owned());
        let mut text = out.join(eol);
        if final_eol {
            text.push_str(eol);
        }
        let got = parse_blocks(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text:?}")))?;
        prop_assert_eq!(got, want, "{:?}", text);
    }
}

// ---------------------------------------------------------------------------------------------
// ECMAScript regexes: the Rust prefilter finds every line the exact matcher matches
// ---------------------------------------------------------------------------------------------

/// Atoms of ECMAScript (`u` mode) patterns.
const RE_ATOMS: &[&str] = &[
    "a",
    "b",
    "x",
    "A",
    "é",
    "日",
    "😀",
    " ",
    "_",
    "1",
    "-",
    ".",
    "\\.",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "[abc]",
    "[^a]",
    "[a-z]",
    "[\\d\\s]",
    "[é-ü]",
    "[^\\w]",
    "[\\W]",
    "[]",
    "[^]",
    "[a-]",
    "[\\b]",
    "[\\-x]",
    "[😀-😃]",
    "\\u00e9",
    "\\u{1F600}",
    "\\uD83D\\uDE00",
    "\\x41",
    "\\t",
    "\\n",
    "\\r",
    "\\0",
    "\\cJ",
    "\\/",
    "\\p{L}",
    "\\P{L}",
    "\\p{Lu}",
    "\\p{Script=Han}",
    "[\\p{N}x]",
    "\\u2028",
    "\\uFEFF",
];

/// Assertions: no quantifier may follow them in `u` mode.
const RE_ASSERTIONS: &[&str] = &["^", "$", "\\b", "\\B"];

/// Valid, but without a translation (lookaround, backreferences), or invalid.
const RE_ODD: &[&str] = &["(?=a)", "(?!b)", "(?<=a)", "(?<!a)", "\\1", "\\k<n>", "*", "{", ")", "\\-", "\\q"];

const RE_QUANTS: &[&str] =
    &["", "", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "+?", "??", "{2,}?"];

fn es_pattern() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        12 => (select(RE_ATOMS), select(RE_QUANTS)).prop_map(|(a, q)| format!("{a}{q}")),
        3 => select(RE_ASSERTIONS).prop_map(str::to_owned),
        1 => select(RE_ODD).prop_map(str::to_owned),
    ];
    let seq = prop::collection::vec(atom, 0..4).prop_map(|v| v.concat());
    seq.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
            prop::collection::vec(inner.clone(), 2..4).prop_map(|v| v.join("|")),
            (select(&["(", "(?:", "(?<n>"][..]), inner, select(RE_QUANTS))
                .prop_map(|(open, body, q)| format!("{open}{body}){q}")),
        ]
    })
}

/// Haystack pieces: the characters the atoms talk about, their neighbours, and line breaks.
const HAY: &[&str] = &[
    "a", "b", "x", "A", "B", "é", "É", "ü", "日", "😀", "😁", " ", "\t", "\u{a0}", "\u{2028}", "\u{feff}",
    "1", "9", "_", "-", ".", "/", "\0", "\r", "\n", "\n", "\r\n", "\x08", "abc", "Z",
];

proptest! {
    #![proptest_config(config(1000))]

    /// Whenever a pattern compiles and has a prefilter, searching a file with the prefilter
    /// reports exactly the lines (and matches) that the exact matcher alone reports: every
    /// line the exact regex matches is a candidate of the prefilter.
    #[test]
    fn prefilter_misses_no_match(
        pattern in es_pattern(),
        flags in select(&["u", "gu", "u", "gu", "iu", "mu", "su", "", "i"][..]),
        hays in prop::collection::vec(prop::collection::vec(select(HAY), 0..12), 1..4),
    ) {
        let Ok(re) = EsRegex::new(&pattern, flags, "content") else { return Ok(()) };
        if re.prefilter.is_none() {
            return Ok(());
        }
        let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
        let file = dir.path().join("f");
        let plain = EsRegex { regex: re.regex.clone(), prefilter: None };
        for hay in hays {
            let hay = hay.concat();
            std::fs::write(&file, &hay).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let cancel = AtomicBool::new(false);
            let with = search_file(&file, &re, &cancel).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let without = search_file(&file, &plain, &cancel).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(with, without, "/{}/{} on {:?}", pattern, flags, hay);
        }
    }

    /// A translation, when there is one for a pattern the exact engine accepts, is a valid
    /// Rust regex.
    #[test]
    fn translations_compile(pattern in es_pattern()) {
        if regress::Regex::with_flags(&pattern, "u").is_err() {
            return Ok(());
        }
        if let Some(t) = translate(&pattern) {
            let built = regex::bytes::RegexBuilder::new(&t).size_limit(32 << 20).build();
            prop_assert!(built.is_ok(), "/{}/ -> {}: {:?}", pattern, t, built.err());
        }
    }

    #[test]
    fn regex_compile_never_panics(pattern in prop_oneof![noise(), es_pattern()]) {
        let _ = translate(&pattern);
        if let Err(e) = EsRegex::new(&pattern, "gu", "content") {
            prop_assert_eq!(e.code(), ErrorCode::InvalidRegex);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Globs
// ---------------------------------------------------------------------------------------------

/// Pieces of a glob pattern's component, each with strings it should match.
const GLOB_PIECES: &[(&str, &[&str])] = &[
    ("src", &["src", "SRC", "Src"]),
    ("lib", &["lib", "LIB"]),
    ("a.b", &["a.b", "A.B"]),
    ("é", &["é", "É"]),
    ("*", &["x", "y.rs", "", "X"]),
    ("**", &["", "p", "p/q"]),
    ("?", &["z", "é"]),
    ("[ab]", &["a", "b", "A"]),
    ("[!a]", &["b", "a"]),
    ("{x,y}", &["x", "y", "X"]),
    ("a*", &["a", "ab", "A"]),
    (".", &["."]),
    ("..", &[".."]),
    ("", &[""]),
    ("\\*", &["*"]),
    ("x\\y", &["xy"]),
    ("{a/b,c}", &["a/b", "c"]),
];

/// Characters of literal components (no glob metacharacter).
const LITERAL: &[char] =
    &['a', 'B', 'z', '0', '.', '_', '-', ' ', ',', '!', '^', '(', '+', '@', 'é', '😀', '日'];

fn literal_component() -> impl Strategy<Value = String> {
    prop::collection::vec(select(LITERAL), 1..6).prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(config(600))]

    #[test]
    fn globs_never_panic(pattern in noise(), path in noise(), ci in any::<bool>()) {
        match Includes::new(std::slice::from_ref(&pattern), ci) {
            Ok(inc) => {
                inc.matches(&path);
            }
            Err(e) => prop_assert_eq!(e.code(), ErrorCode::InvalidArgument),
        }
        let _ = literal_prefix(&pattern, ci);
    }

}

proptest! {
    #![proptest_config(config(2000))]

    /// A pattern without metacharacters matches itself (below the root when it has a `/`,
    /// a file name at any depth otherwise) and nothing else.
    #[test]
    fn literal_globs_match_exactly_themselves(
        comps in prop::collection::vec(literal_component(), 1..4),
        dot_slash in any::<bool>(),
        other in literal_component(),
    ) {
        let joined = comps.join("/");
        let pattern = if dot_slash { format!("./{joined}") } else { joined.clone() };
        // One leading `./` is dropped.
        let p = pattern.strip_prefix("./").unwrap_or(&pattern);
        let inc = Includes::new(std::slice::from_ref(&pattern), false).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(inc.matches(p));
        let name_only = !p.contains('/');
        prop_assert_eq!(inc.matches(&format!("{other}/{p}")), name_only);
        let (longer, prefixed) = (format!("{p}{other}"), format!("{other}{p}"));
        prop_assert!(!inc.matches(&longer));
        prop_assert!(!inc.matches(&prefixed));
        prop_assert_eq!(inc.matches(&format!("{p}/{other}")), name_only && other == p);
        let swapped: String = p.chars().map(|c| if c == 'a' { 'A' } else { c }).collect();
        prop_assert_eq!(inc.matches(&swapped), swapped == p);
    }

}

proptest! {
    #![proptest_config(config(1500))]

    /// `literal_prefix` is the longest run of whole leading directories of the pattern
    /// without metacharacters, `.`, `..` or empty names, and every path the pattern matches
    /// lies below it (so the walk may start there).
    #[test]
    fn literal_prefix_is_a_sound_start(
        pieces in prop::collection::vec(
            prop::collection::vec((0..GLOB_PIECES.len(), any::<Index>()), 0..3), 1..5),
        extra in prop::collection::vec(prop::collection::vec(select(&["src", "SRC", "a", "x", "..", ".", ""][..]), 1..4), 0..3),
        ci in any::<bool>(),
    ) {
        let pattern = pieces
            .iter()
            .map(|c| c.iter().map(|(k, _)| GLOB_PIECES[*k].0).collect::<String>())
            .collect::<Vec<_>>()
            .join("/");
        let prefix = literal_prefix(&pattern, ci);
        if !prefix.is_empty() {
            prop_assert!(pattern.starts_with(&format!("{prefix}/")), "{:?} -> {:?}", pattern, prefix);
            for c in prefix.split('/') {
                prop_assert!(!c.is_empty() && c != "." && c != "..", "{:?} -> {:?}", pattern, prefix);
                prop_assert!(!c.contains(['*', '?', '[', ']', '{', '}', '\\']), "{:?} -> {:?}", pattern, prefix);
            }
        }
        if !ci && pattern.contains('/') {
            // Longest: the next component is the file name, or not a plain directory.
            let rest = if prefix.is_empty() { pattern.as_str() } else { &pattern[prefix.len() + 1..] };
            if let Some((next, _)) = rest.split_once('/') {
                prop_assert!(
                    next.is_empty() || next == "." || next == ".." || next.contains(['*', '?', '[', '{', '\\']),
                    "{:?} -> {:?} stops before {:?}", pattern, prefix, next
                );
            }
        }
        let Ok(inc) = Includes::new(std::slice::from_ref(&pattern), ci) else { return Ok(()) };
        // Paths the pattern should match (each piece instantiated), and some others.
        let mut paths: Vec<String> = extra.iter().map(|p| p.join("/")).collect();
        paths.push(
            pieces
                .iter()
                .map(|c| c.iter().map(|(k, i)| *i.get(GLOB_PIECES[*k].1)).collect::<String>())
                .collect::<Vec<_>>()
                .join("/"),
        );
        for path in paths {
            if pattern.contains('/') && inc.matches(&path) && !prefix.is_empty() {
                prop_assert!(
                    path.starts_with(&format!("{prefix}/")),
                    "{:?} (ci {}) matches {:?} outside its prefix {:?}", pattern, ci, path, prefix
                );
            }
        }
    }
}
