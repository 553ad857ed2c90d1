//! The git family against the git CLI as oracle: fixture repositories are built with `git`
//! (no global or system config, fixed identities and dates) and each tool's data is compared
//! with what git itself reports.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;
use std::process::Command;

use eddie_tools_core::{Ctx, registry};
use serde_json::{Value, json};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_raw(dir, args);
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn git_raw(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .output()
        .expect("git runs")
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(p, text).expect("write");
}

/// A repository with a commit, then staged, unstaged, renamed, deleted and untracked changes.
fn fixture() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "a.txt", "one\ntwo\nthree\n");
    write(d, "b.txt", "bee\n");
    write(d, "old name.txt", "rename me, I am long enough to be detected as a rename\n");
    write(d, "gone.txt", "bye\n");
    write(d, "dir/ü.txt", "unicode\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "first"]);
    write(d, "a.txt", "one\n2\nthree\n");
    git(d, &["add", "a.txt"]);
    write(d, "a.txt", "one\n2\nthree\nfour\n");
    write(d, "b.txt", "bee\nbuzz\n");
    git(d, &["mv", "old name.txt", "new name.txt"]);
    std::fs::remove_file(d.join("gone.txt")).expect("rm");
    write(d, "new.txt", "fresh\n");
    write(d, "sub/deep/x.txt", "x\n");
    write(d, "dir/ü.txt", "unicode changed\n");
    t
}

async fn call(dir: &Path, tool: &str, args: Value) -> Result<Value, (String, String)> {
    let ctx = Ctx::new(dir.to_str().expect("utf8")).expect("ctx");
    registry::run(tool, &args, &ctx)
        .await
        .map(|o| o.data_value().expect("data"))
        .map_err(|e| (e.code().as_str().to_owned(), e.message().to_owned()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_matches_porcelain_v2() {
    let t = fixture();
    let d = t.path();
    let oracle = git(
        d,
        &["-c", "core.quotepath=off", "status", "--porcelain=v2", "-z", "--untracked-files=all", "--branch"],
    );
    let mut want: Vec<(String, String, Option<String>)> = Vec::new();
    let mut fields = oracle.split('\0').filter(|s| !s.is_empty());
    let mut branch = None;
    while let Some(rec) = fields.next() {
        if let Some(b) = rec.strip_prefix("# branch.head ") {
            branch = Some(b.to_owned());
        } else if let Some(p) = rec.strip_prefix("? ") {
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
    let data = call(d, "git_status", json!({})).await.expect("status");
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
    assert_eq!(got, want);
    assert_eq!(data["branch"].as_str(), branch.as_deref());
    assert_eq!(data["state"], "clean");
    assert_eq!(data["clean"], false);
    assert!(want.iter().any(|w| w.2.as_deref() == Some("old name.txt")), "the fixture has a rename");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_of_clean_unborn_and_detached() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "trunk"]);
    let data = call(d, "git_status", json!({"repo_path": "."})).await.expect("unborn");
    assert_eq!(data["unborn"], true);
    assert_eq!(data["branch"], "trunk");
    assert_eq!(data["clean"], true);
    write(d, "f", "x\n");
    git(d, &["add", "f"]);
    git(d, &["commit", "-q", "-m", "c"]);
    let head = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
    git(d, &["checkout", "-q", "--detach"]);
    let data = call(d, "git_status", json!({})).await.expect("detached");
    assert_eq!(data["detached"], true);
    assert_eq!(data["branch"], Value::Null);
    assert_eq!(data["head"], head);
    assert_eq!(data["clean"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_a_merge_in_progress_with_conflicts() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "c.txt", "base\n");
    git(d, &["add", "c.txt"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "other"]);
    write(d, "c.txt", "other\n");
    git(d, &["commit", "-q", "-am", "other"]);
    git(d, &["checkout", "-q", "main"]);
    write(d, "c.txt", "mine\n");
    git(d, &["commit", "-q", "-am", "mine"]);
    let out = git_raw(d, &["merge", "other"]);
    assert!(!out.status.success(), "the merge conflicts");
    let data = call(d, "git_status", json!({})).await.expect("status");
    assert_eq!(data["state"], "merge");
    assert_eq!(data["counts"]["conflicted"], 1);
    assert_eq!(data["entries"][0]["conflicted"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_errors_have_codes() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    let e = call(d, "git_status", json!({})).await.expect_err("not a repo");
    assert_eq!(e.0, "NOT_A_REPOSITORY");
    let e = call(d, "git_status", json!({"path": "../.."})).await.expect_err("escape");
    assert_eq!(e.0, "OUTSIDE_WORKSPACE");
    let e = call(d, "git_status", json!({"path": 5})).await.expect_err("bad type");
    assert_eq!(e.0, "INVALID_ARGUMENT");
}
