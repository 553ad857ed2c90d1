//! What the remote-transport tests (`git_http`, `git_ssh`) share: the git CLI as the oracle, a
//! tool call through the registry, and incompressible bytes; `git status`'s oracle (also used by
//! `git` and `git_status_scan`); the numstat and blame oracles' parsers (`git`, `git_memo`).
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::indexing_slicing, dead_code)]

use std::path::Path;
use std::process::Command;

use eddie_tools_core::{Ctx, registry};
use serde_json::Value;

/// Run the git CLI (the oracle) in `dir` with a fixed identity and no user config.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Run `tool` through the registry: its `data`, or its code and message.
pub async fn call(ctx: &Ctx, tool: &str, args: Value) -> Result<Value, (String, String)> {
    registry::run(tool, &args, ctx)
        .await
        .map(|o| o.data_value().expect("data"))
        .map_err(|e| (e.code().as_str().to_owned(), e.message().to_owned()))
}

/// Bytes that do not compress (so that the pack is as big as they are).
pub fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// `git status --porcelain=v2 -z --untracked-files=all` as sorted (path, XY, rename source).
pub fn porcelain_v2(d: &Path) -> Vec<(String, String, Option<String>)> {
    let oracle =
        git(d, &["-c", "core.quotepath=off", "status", "--porcelain=v2", "-z", "--untracked-files=all"]);
    let mut want = Vec::new();
    let mut fields = oracle.split('\0').filter(|s| !s.is_empty());
    while let Some(rec) = fields.next() {
        if let Some(p) = rec.strip_prefix("? ") {
            want.push((p.to_owned(), "??".into(), None));
        } else if rec.starts_with("1 ") {
            let parts: Vec<&str> = rec.splitn(9, ' ').collect();
            want.push((parts[8].to_owned(), parts[1].to_owned(), None));
        } else if rec.starts_with("2 ") {
            let parts: Vec<&str> = rec.splitn(10, ' ').collect();
            let orig = fields.next().expect("rename source").to_owned();
            want.push((parts[9].to_owned(), parts[1].to_owned(), Some(orig)));
        }
    }
    want.sort();
    want
}

/// `git_status`'s entries in the same shape as [`porcelain_v2`].
pub fn status_entries(data: &Value) -> Vec<(String, String, Option<String>)> {
    let mut got: Vec<(String, String, Option<String>)> = data["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e["path"].as_str().expect("path").to_owned(),
                format!("{}{}", e["index"].as_str().expect("x"), e["worktree"].as_str().expect("y")),
                e["origPath"].as_str().map(str::to_owned),
            )
        })
        .collect();
    got.sort();
    got
}

/// `git ... --numstat -z` as (path, oldPath, added, deleted).
pub fn numstat(out: &str) -> Vec<(String, Option<String>, String, String)> {
    let mut v = Vec::new();
    let mut it = out.split('\0');
    while let Some(rec) = it.next() {
        let rec = rec.trim_start_matches('\n');
        if rec.is_empty() {
            continue;
        }
        let parts: Vec<&str> = rec.splitn(3, '\t').collect();
        if parts.len() < 3 {
            continue;
        }
        if parts[2].is_empty() {
            let old = it.next().unwrap().to_owned();
            let new = it.next().unwrap().to_owned();
            v.push((new, Some(old), parts[0].to_owned(), parts[1].to_owned()));
        } else {
            v.push((parts[2].to_owned(), None, parts[0].to_owned(), parts[1].to_owned()));
        }
    }
    v.sort();
    v
}

pub fn ours(files: &Value) -> Vec<(String, Option<String>, String, String)> {
    let n = |v: &Value| v.as_u64().map_or("-".to_owned(), |n| n.to_string());
    let mut v: Vec<_> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["oldPath"].as_str().map(str::to_owned),
                n(&f["additions"]),
                n(&f["deletions"]),
            )
        })
        .collect();
    v.sort();
    v
}

/// Every line's (commit, original line, original path) from `git blame --line-porcelain`.
pub fn line_porcelain(out: &str) -> Vec<(String, u64, String)> {
    let mut v: Vec<(String, u64, String)> = Vec::new();
    for l in out.lines() {
        let parts: Vec<&str> = l.split(' ').collect();
        if parts.len() >= 3 && parts[0].len() == 40 && parts[0].chars().all(|c| c.is_ascii_hexdigit()) {
            v.push((parts[0].to_owned(), parts[1].parse().unwrap(), String::new()));
        } else if let (Some(f), Some(last)) = (l.strip_prefix("filename "), v.last_mut()) {
            f.clone_into(&mut last.2);
        }
    }
    v
}

/// The same triples from `git_blame`'s hunks.
pub fn blamed_lines(data: &Value) -> Vec<(String, u64, String)> {
    let mut v = Vec::new();
    for h in data["hunks"].as_array().unwrap() {
        for k in 0..h["lines"].as_u64().unwrap() {
            v.push((
                h["commit"].as_str().unwrap().to_owned(),
                h["origStartLine"].as_u64().unwrap() + k,
                h["origPath"].as_str().unwrap().to_owned(),
            ));
        }
    }
    v
}
