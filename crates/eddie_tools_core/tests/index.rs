//! The in-memory index never answers differently from a scan: random edits (create, modify,
//! delete, rename files and directories, binary files, `.gitignore` changes) between
//! searches, and after each step every search run through the index (built at the first
//! search, watched, rebuilt in the background) must equal the same search with the index off,
//! byte for byte (content and data, but for `data.index`).
//!
//! One test in this binary: the index mode is process-wide and is switched between calls.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use eddie_tools_core::engine::index::{self, Mode};
use eddie_tools_core::{Ctx, registry};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, TestRunner};
use serde_json::{Value, json};

const DIRS: &[&str] = &["", "a", "a/b", "c", ".h", "gen", "a/gen"];
const NAMES: &[&str] = &["x.txt", "y.rs", "z.log", "keep.log", ".dot", "w.txt"];
const LINES: &[&str] = &[
    "foo bar",
    "TODO: fix this",
    "let e = ParseError(x);",
    "hello world",
    "fooo  bar baz",
    "todo later",
    "Kelvin \u{212a} sign",
    "naïve café",
    "",
];
const RULES: &[&str] = &["*.log", "gen/", "b/", "!keep.log", "x.txt", "/c", "*.rs", "a/gen/", ""];

#[derive(Debug, Clone)]
enum Op {
    Write { dir: usize, name: usize, lines: Vec<usize>, nul: bool },
    Append { pick: usize, line: usize },
    Delete { pick: usize },
    Rename { pick: usize, dir: usize, name: usize },
    RenameDir { from: usize, to: usize },
    DeleteDir { dir: usize },
    Ignore { at: usize, rules: Vec<usize> },
    Chmod { pick: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..DIRS.len(), 0..NAMES.len(), prop::collection::vec(0..LINES.len(), 0..6), prop::bool::weighted(0.1))
            .prop_map(|(dir, name, lines, nul)| Op::Write { dir, name, lines, nul }),
        3 => (any::<usize>(), 0..LINES.len()).prop_map(|(pick, line)| Op::Append { pick, line }),
        1 => any::<usize>().prop_map(|pick| Op::Delete { pick }),
        2 => (any::<usize>(), 0..DIRS.len(), 0..NAMES.len()).prop_map(|(pick, dir, name)| Op::Rename { pick, dir, name }),
        1 => (1..DIRS.len(), 1..DIRS.len()).prop_map(|(from, to)| Op::RenameDir { from, to }),
        1 => (1..DIRS.len()).prop_map(|dir| Op::DeleteDir { dir }),
        1 => (0..2usize, prop::collection::vec(0..RULES.len(), 0..4)).prop_map(|(at, rules)| Op::Ignore { at, rules }),
        1 => any::<usize>().prop_map(|pick| Op::Chmod { pick }),
    ]
}

fn files(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn apply(root: &Path, op: &Op) {
    let all = files(root);
    let pick = |i: usize| all.get(i % all.len().max(1)).cloned();
    let path = |dir: usize, name: usize| root.join(DIRS[dir]).join(NAMES[name]);
    match op {
        Op::Write { dir, name, lines, nul } => {
            let p = path(*dir, *name);
            let _ = std::fs::create_dir_all(p.parent().unwrap_or(root));
            let mut text: String = lines.iter().map(|&l| format!("{}\n", LINES[l])).collect();
            if *nul {
                text.insert(text.len() / 2, '\0');
            }
            let _ = std::fs::write(p, text);
        }
        Op::Append { pick: i, line } => {
            if let Some(p) = pick(*i) {
                use std::io::Write;
                if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(p) {
                    let _ = writeln!(f, "{}", LINES[*line]);
                }
            }
        }
        Op::Delete { pick: i } => {
            if let Some(p) = pick(*i) {
                let _ = std::fs::remove_file(p);
            }
        }
        Op::Rename { pick: i, dir, name } => {
            if let Some(p) = pick(*i) {
                let to = path(*dir, *name);
                let _ = std::fs::create_dir_all(to.parent().unwrap_or(root));
                let _ = std::fs::rename(p, to);
            }
        }
        Op::RenameDir { from, to } => {
            let (f, t) = (root.join(DIRS[*from]), root.join(DIRS[*to]));
            if !t.starts_with(&f) {
                let _ = std::fs::remove_dir_all(&t);
                let _ = std::fs::rename(f, t);
            }
        }
        Op::DeleteDir { dir } => {
            let _ = std::fs::remove_dir_all(root.join(DIRS[*dir]));
        }
        Op::Ignore { at, rules } => {
            let dir = root.join(if *at == 0 { "" } else { "a" });
            let _ = std::fs::create_dir_all(&dir);
            let text: String = rules.iter().map(|&r| format!("{}\n", RULES[r])).collect();
            let _ = std::fs::write(dir.join(".gitignore"), text);
        }
        Op::Chmod { pick: i } => {
            use std::os::unix::fs::PermissionsExt;
            if let Some(p) = pick(*i)
                && let Ok(m) = std::fs::metadata(&p)
            {
                let mode = if m.permissions().mode() & 0o400 != 0 { 0o000 } else { 0o644 };
                let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode));
            }
        }
    }
}

fn searches() -> Vec<(&'static str, Value)> {
    vec![
        ("grep", json!({"pattern": "TODO"})),
        ("grep", json!({"pattern": "foo+ ba", "outputMode": "count"})),
        ("grep", json!({"pattern": "\\b[A-Z][a-zA-Z]+Error\\(", "context": 1})),
        ("grep", json!({"pattern": "todo", "caseInsensitive": true, "includeHidden": true})),
        ("grep", json!({"pattern": "kelvin", "caseInsensitive": true, "respectGitignore": false})),
        ("grep", json!({"pattern": "hello", "outputMode": "files", "include": "*.txt"})),
        ("grep", json!({"pattern": "bar", "path": "a", "wordMatch": true})),
        ("grep", json!({"pattern": "café|world", "multiline": true})),
        ("grep", json!({"pattern": "o.b"})),
        ("glob", json!({"pattern": "**/*.txt"})),
        ("glob", json!({"pattern": "a/**/*.log", "includeHidden": true})),
        ("glob", json!({"pattern": "*", "recursive": false, "respectGitignore": false})),
        ("glob", json!({"pattern": "*/*.rs"})),
        ("file_search", json!({"content": "TODO|Error\\("})),
        ("file_search", json!({"content": "caf[eé]", "root": "a"})),
        ("file_search", json!({"name": "\\.txt$"})),
    ]
}

async fn call(ctx: &Ctx, tool: &str, args: &Value) -> (String, Value, bool) {
    let run = registry::find(tool).map(|s| s.run);
    let Some(run) = run else { return (format!("no tool {tool}"), Value::Null, false) };
    match run(args, ctx).await {
        Ok(out) => {
            let mut data = out.data_value().unwrap_or(Value::Null);
            let used = data["index"]["used"] == true;
            if let Some(m) = data.as_object_mut() {
                m.remove("index");
            }
            (out.content, data, used)
        }
        Err(e) => (format!("error {:?}: {}", e.code(), e.message()), Value::Null, false),
    }
}

#[test]
fn indexed_results_equal_a_fresh_scan_under_random_edits() {
    index::set_rebuild_delay(std::time::Duration::from_millis(0));
    // A few hundred bytes of text: postings are larger than the default quarter of it.
    index::set_max_percent(10_000);
    // Watched (inotify), then as on a tree that cannot be watched (stat sweep).
    run(10, 500);
    index::set_sweep_only(true);
    run(3, 150);
}

fn run(cases: u32, min_steps: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x1dec_0de5),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let used = std::sync::atomic::AtomicUsize::new(0);
    let steps = std::sync::atomic::AtomicUsize::new(0);
    let result = runner.run(&prop::collection::vec(op(), 50..=60), |ops| {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for (d, n, l) in [(0, 0, 1), (1, 1, 2), (2, 0, 0), (3, 3, 3), (4, 5, 4)] {
            apply(root, &Op::Write { dir: d, name: n, lines: vec![l, 0, 3], nul: false });
        }
        let ctx = Ctx::new(root.to_str().unwrap()).unwrap();
        for (i, op) in ops.iter().enumerate() {
            apply(root, op);
            steps.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for (tool, args) in searches() {
                index::set_mode(Mode::Force);
                let before = index::uses();
                let mut indexed = rt.block_on(call(&ctx, tool, &args));
                indexed.2 = index::uses() > before;
                index::set_mode(Mode::Off);
                let scanned = rt.block_on(call(&ctx, tool, &args));
                if indexed.2 {
                    used.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                prop_assert_eq!(
                    (&indexed.0, &indexed.1),
                    (&scanned.0, &scanned.1),
                    "step {} ({:?}), {} {}",
                    i,
                    op,
                    tool,
                    args
                );
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (used, steps) = (used.into_inner(), steps.into_inner());
    assert!(steps >= min_steps, "{steps} steps");
    // Not vacuous: most searches went through the index (all but the trigram-less `o.b`).
    assert!(used > steps * 12, "index used in {used} searches over {steps} steps");
}
