//! Per-file updates: after each kind of edit (a changed file, a new one, a deleted one, a
//! renamed file and directory, an ignore-file edit, a burst of edits, a binary file), the
//! index answers every search exactly as a fresh walk does, without a rebuild: the changed
//! files are re-indexed one by one (`data.index.updatedFiles` grows, `buildMs` and `readyMs`
//! stay those of the one build). Watched (inotify), then again as on a tree that cannot be
//! watched (stat sweep).
//!
//! One test in this binary: the index mode is process-wide and is switched between calls.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use eddie_tools_core::engine::index::{self, Mode};
use eddie_tools_core::{Ctx, registry};
use serde_json::{Value, json};

fn searches() -> Vec<(&'static str, Value)> {
    vec![
        ("grep", json!({"pattern": "TODO"})),
        ("grep", json!({"pattern": "\\b[A-Z][a-zA-Z]+Error\\(", "context": 1})),
        ("grep", json!({"pattern": "todo", "caseInsensitive": true, "outputMode": "count"})),
        ("grep", json!({"pattern": "hello", "outputMode": "files"})),
        ("grep", json!({"pattern": "zebra|quokka"})),
        ("glob", json!({"pattern": "**/*.txt"})),
        ("glob", json!({"pattern": "*.{log,bin,txt}", "respectGitignore": false})),
        ("glob", json!({"pattern": "d2/*.f.txt"})),
        ("file_search", json!({"content": "TODO|Error\\("})),
    ]
}

/// (content, data without `index`), and `data.index`.
async fn call(ctx: &Ctx, tool: &str, args: &Value) -> ((String, Value), Value) {
    let run = registry::find(tool).map(|s| s.run).unwrap();
    match run(args, ctx).await {
        Ok(out) => {
            let mut data = out.data_value().unwrap_or(Value::Null);
            let ix = data.as_object_mut().and_then(|m| m.remove("index")).unwrap_or(Value::Null);
            ((out.content, data), ix)
        }
        Err(e) => ((format!("error {:?}: {}", e.code(), e.message()), Value::Null), Value::Null),
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn seed(root: &Path) {
    for d in 0..6 {
        for f in 0..8 {
            let text = match (d + f) % 4 {
                0 => format!("line {d} {f}\nTODO: fix {d}{f}\n"),
                1 => format!("throw new ParseError({d});\nhello {f}\n"),
                2 => format!("nothing here {d}/{f}\n"),
                _ => format!("todo lower\nzebra {d}\n"),
            };
            write(root, &format!("d{d}/f{f}.txt"), &text);
        }
    }
    write(root, ".gitignore", "*.log\n");
    write(root, "top.txt", "TODO top\n");
}

type Edit = (&'static str, fn(&Path));

fn edits() -> Vec<Edit> {
    vec![
        ("modify: TODO removed", |r| write(r, "d0/f0.txt", "no more work\n")),
        ("modify: TODO added, same size", |r| write(r, "d0/f2.txt", "TODO here  5/0\n")),
        ("append", |r| {
            let p = r.join("d1/f1.txt");
            let mut t = fs::read_to_string(&p).unwrap();
            t.push_str("KeyError(1) TODO\n");
            fs::write(p, t).unwrap();
        }),
        ("create", |r| write(r, "d2/new.txt", "quokka TODO TypeError(2)\n")),
        ("create with a double extension", |r| write(r, "d2/a.f.txt", "TODO\n")),
        ("create with another extension", |r| write(r, "d3/b.bin", "hello\n")),
        ("create in a new directory", |r| write(r, "n/e/w.txt", "hello quokka\n")),
        ("delete", |r| fs::remove_file(r.join("d3/f1.txt")).unwrap()),
        ("rename a file", |r| fs::rename(r.join("d2/f2.txt"), r.join("d4/moved.txt")).unwrap()),
        ("rename over a file", |r| fs::rename(r.join("d4/moved.txt"), r.join("d4/f0.txt")).unwrap()),
        ("rename a directory", |r| fs::rename(r.join("d5"), r.join("d5b")).unwrap()),
        ("edit inside the renamed directory", |r| write(r, "d5b/f3.txt", "RangeError(9)\n")),
        (".gitignore hides a directory", |r| write(r, ".gitignore", "*.log\nd1/\n")),
        (".gitignore shows it again", |r| write(r, ".gitignore", "*.log\n")),
        ("nested .ignore", |r| write(r, "d0/.ignore", "f1.txt\n")),
        ("binary file", |r| fs::write(r.join("d0/bin.txt"), b"TODO\0binary").unwrap()),
        ("ignored file written", |r| write(r, "d0/x.log", "TODO ignored\n")),
        ("burst: 200 writes to 40 files", |r| {
            for i in 0..200 {
                let rel = format!("burst/b{}.txt", i % 40);
                let text = if i % 3 == 0 { format!("TODO {i}\n") } else { format!("calm {i}\n") };
                write(r, &rel, &text);
            }
        }),
        ("delete a directory", |r| fs::remove_dir_all(r.join("d4")).unwrap()),
        ("truncate", |r| write(r, "top.txt", "")),
    ]
}

fn run(rt: &tokio::runtime::Runtime, sweep: bool) {
    index::set_sweep_only(sweep);
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    seed(root);
    let ctx = Ctx::new(root.to_str().unwrap()).unwrap();
    // Build every root's index (the first search of each, mode Force).
    let mut builds = Vec::new();
    index::set_mode(Mode::Force);
    for (tool, args) in searches() {
        let (_, ix) = rt.block_on(call(&ctx, tool, &args));
        // file_search reports no `data.index`.
        assert!(tool == "file_search" || ix["used"] == true && ix["readyMs"].is_u64(), "{tool} {args}: {ix}");
        builds.push((ix["buildMs"].clone(), ix["readyMs"].clone()));
    }
    let want = if sweep { "sweep" } else { "watch" };
    let mut grew = false;
    let mut before = 0;
    for (name, edit) in edits() {
        edit(root);
        for (k, (tool, args)) in searches().into_iter().enumerate() {
            index::set_mode(Mode::Force);
            let uses = index::uses();
            let (indexed, ix) = rt.block_on(call(&ctx, tool, &args));
            assert!(index::uses() > uses, "after {name:?}: {tool} {args} scanned");
            index::set_mode(Mode::Off);
            let (scanned, _) = rt.block_on(call(&ctx, tool, &args));
            assert_eq!(indexed, scanned, "after {name:?} ({want}): {tool} {args}");
            if tool == "file_search" {
                continue;
            }
            assert_eq!(ix["used"], true, "after {name:?}: {tool} {args}: {ix}");
            assert_eq!(ix["state"], want, "after {name:?}: {ix}");
            // No rebuild: the build's own numbers are still those of the first build.
            assert_eq!(
                (ix["buildMs"].clone(), ix["readyMs"].clone()),
                builds[k],
                "after {name:?}: rebuilt? {ix}"
            );
            if k == 0 {
                let n = ix["updatedFiles"].as_u64().unwrap();
                grew |= n > before;
                before = n;
            }
        }
    }
    assert!(grew && before >= 40, "files were re-indexed one by one: {before}");
}

#[test]
fn per_file_updates_answer_as_a_fresh_walk_after_each_kind_of_edit() {
    // Never rebuild in the background: every answer after an edit comes from per-file updates.
    index::set_rebuild_delay(std::time::Duration::from_secs(3600));
    index::set_max_percent(100_000);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    run(&rt, false);
    run(&rt, true);
}
