//! Repository handles kept between calls (`git/handles.rs`): every call through a kept handle
//! answers what a fresh open answers, whatever the git CLI changed in between; a handle is never
//! lent to two calls at once; a kept handle never lets a call out of its workspace.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use eddie_tools_core::git::handles;
use eddie_tools_core::{Ctx, registry};
use serde_json::{Value, json};

mod remote;
use remote::{git, porcelain_v2, status_entries};

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(p, text).expect("write");
}

async fn call_in(ws: &Path, tool: &str, args: Value) -> Result<Value, (String, String)> {
    let ctx = Ctx::new(ws.to_str().expect("utf8")).expect("ctx");
    registry::run(tool, &args, &ctx)
        .await
        .map(|o| o.data_value().expect("data"))
        .map_err(|e| (e.code().as_str().to_owned(), e.message().to_owned()))
}

/// A repository of two commits with a few changes on top, its files older than a timestamp tick
/// (so that a handle opened on it is kept).
fn repo_at(d: &Path) {
    std::fs::create_dir_all(d).expect("mkdir");
    git(d, &["init", "-q", "-b", "main"]);
    for i in 0..6 {
        write(d, &format!("src/f{i}.txt"), &format!("file {i}\nline two\nline three\n"));
    }
    write(d, "mode.sh", "echo hi\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "first"]);
    write(d, "src/f1.txt", "file 1\nline two changed\nline three\n");
    git(d, &["commit", "-q", "-am", "second"]);
    write(d, "src/f2.txt", "file 2 edited\n");
    write(d, "new.log", "untracked\n");
    write(d, "notes.tmp", "untracked too\n");
    settle();
}

/// Wait out the timestamp tick a handle must be older than to be kept.
fn settle() {
    std::thread::sleep(Duration::from_millis(120));
}

fn real(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).expect("canonicalize")
}

/// git_status of `d` (the workspace) equals git's, and returns the data.
async fn status_equals_git(d: &Path, what: &str) -> Value {
    let data = call_in(d, "git_status", json!({})).await.expect("status");
    assert_eq!(status_entries(&data), porcelain_v2(d), "{what}: status differs from git's");
    data
}

/// git_log (with file counts) and git_show of `d` name the commits git names.
async fn log_equals_git(d: &Path, what: &str) {
    let data = call_in(d, "git_log", json!({"maxCount": 50, "files": true})).await.expect("log");
    let ours: Vec<&str> =
        data["commits"].as_array().expect("commits").iter().map(|c| c["id"].as_str().unwrap()).collect();
    let theirs = git(d, &["log", "-n", "50", "--format=%H"]);
    let theirs: Vec<&str> = theirs.lines().collect();
    assert_eq!(ours, theirs, "{what}: log differs from git's");
    let show = call_in(d, "git_show", json!({"revision": "HEAD"})).await.expect("show");
    assert_eq!(show["id"].as_str(), theirs.first().copied(), "{what}: show HEAD");
}

/// A first status call keeps a handle for `d`; then the next call reuses it.
async fn kept(d: &Path) {
    status_equals_git(d, "first call").await;
    let lent = handles::lend(&real(d)).expect("lend");
    assert!(lent.reused(), "a handle was kept for {}", d.display());
}

/// The commit of every line of a `git_blame` answer.
fn blamed_commits(data: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for h in data["hunks"].as_array().expect("hunks") {
        for _ in 0..h["lines"].as_u64().unwrap() {
            // 39 hex digits: `git blame` shows a boundary commit as `^` and 39 of them.
            out.push(h["commit"].as_str().unwrap()[..39].to_owned());
        }
    }
    out
}

/// The commit of every line, as `git blame` says.
fn git_blame_commits(d: &Path, rev: &str, file: &str) -> Vec<String> {
    git(d, &["blame", "-s", "-l", rev, "--", file])
        .lines()
        .map(|l| l.trim_start_matches('^').chars().take(39).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_handles_see_every_change_the_git_cli_makes() {
    let t = tempfile::tempdir().expect("tempdir");

    // A new commit, then a branch switch: status, diff and blame follow HEAD.
    let d = &t.path().join("commit");
    repo_at(d);
    kept(d).await;
    let before =
        call_in(d, "git_blame", json!({"file": "src/f2.txt", "revision": "HEAD"})).await.expect("blame");
    log_equals_git(d, "before a commit").await;
    git(d, &["commit", "-q", "-am", "third"]);
    status_equals_git(d, "after a commit").await;
    log_equals_git(d, "after a commit").await;
    let after =
        call_in(d, "git_blame", json!({"file": "src/f2.txt", "revision": "HEAD"})).await.expect("blame");
    assert_ne!(blamed_commits(&before), blamed_commits(&after));
    assert_eq!(blamed_commits(&after), git_blame_commits(d, "HEAD", "src/f2.txt"), "blame after a commit");
    settle();
    kept(d).await;
    git(d, &["switch", "-q", "-c", "other", "HEAD~1"]);
    let data = status_equals_git(d, "after a branch switch").await;
    assert_eq!(data["branch"], "other");
    log_equals_git(d, "after a branch switch").await;
    let blame =
        call_in(d, "git_blame", json!({"file": "src/f2.txt", "revision": "HEAD"})).await.expect("blame");
    assert_eq!(blamed_commits(&blame), git_blame_commits(d, "HEAD", "src/f2.txt"), "blame after a switch");
    let diff = call_in(d, "git_diff", json!({"stat": true})).await.expect("diff");
    assert_eq!(diff["totals"]["files"], 0, "the switch left no change: {diff}");

    // An index change.
    let d = &t.path().join("index");
    repo_at(d);
    kept(d).await;
    git(d, &["add", "src/f2.txt"]);
    status_equals_git(d, "after git add").await;
    let staged = call_in(d, "git_diff", json!({"staged": true, "stat": true})).await.expect("diff");
    assert_eq!(staged["totals"]["files"], 1, "{staged}");

    // Config the status depends on: core.fileMode (libgit2 keeps core.* values per handle), then
    // core.excludesFile (kept by its attribute cache).
    let d = &t.path().join("config");
    repo_at(d);
    std::process::Command::new("chmod").arg("+x").arg(d.join("mode.sh")).status().expect("chmod");
    settle();
    kept(d).await;
    git(d, &["config", "core.fileMode", "false"]);
    let data = status_equals_git(d, "after core.fileMode false").await;
    assert!(!data.to_string().contains("mode.sh"), "the mode change is no change now: {data}");
    // core.autocrlf: a file written with CRLF is modified for git without it, clean with it
    // (libgit2 keeps core.autocrlf per handle, for its filters).
    write(d, "src/f0.txt", "file 0\r\nline two\r\nline three\r\n");
    settle();
    kept(d).await;
    git(d, &["config", "core.autocrlf", "true"]);
    status_equals_git(d, "after core.autocrlf true").await;
    let diff = call_in(d, "git_diff", json!({"stat": true})).await.expect("diff");
    let lines: usize = git(d, &["diff", "--numstat"])
        .lines()
        .map(|l| l.split('\t').take(2).map(|n| n.parse::<usize>().unwrap()).sum::<usize>())
        .sum();
    let ours = diff["totals"]["additions"].as_u64().unwrap() + diff["totals"]["deletions"].as_u64().unwrap();
    assert_eq!(ours as usize, lines, "CRLF lines are no change now: {diff}");
    settle();
    kept(d).await;
    write(d, "../excludes", "*.log\n");
    git(d, &["config", "core.excludesFile", d.join("../excludes").to_str().unwrap()]);
    let data = status_equals_git(d, "after core.excludesFile").await;
    assert!(!data.to_string().contains("new.log"), "new.log is ignored now: {data}");

    // .gitignore and info/exclude, rewritten in place with the same size.
    let d = &t.path().join("ignore");
    repo_at(d);
    write(d, ".git/info/exclude", "*.tmp\n");
    settle();
    kept(d).await;
    write(d, ".git/info/exclude", "*.log\n");
    let data = status_equals_git(d, "after info/exclude").await;
    assert!(data.to_string().contains("notes.tmp") && !data.to_string().contains("new.log"), "{data}");
    settle();
    kept(d).await;
    write(d, ".gitignore", "*.tmp\n");
    status_equals_git(d, "after .gitignore").await;

    // git gc: the loose objects go into a pack; then a pack replaced by repack -a -d.
    let d = &t.path().join("gc");
    repo_at(d);
    kept(d).await;
    git(d, &["gc", "-q", "--prune=now"]);
    assert!(std::fs::read_dir(d.join(".git/objects/pack")).expect("pack dir").count() > 0);
    status_equals_git(d, "after gc").await;
    let blame =
        call_in(d, "git_blame", json!({"file": "src/f1.txt", "revision": "HEAD"})).await.expect("blame");
    assert_eq!(blamed_commits(&blame), git_blame_commits(d, "HEAD", "src/f1.txt"));
    write(d, "src/f3.txt", "more\n");
    git(d, &["commit", "-q", "-am", "third"]);
    settle();
    kept(d).await;
    git(d, &["repack", "-q", "-a", "-d"]);
    status_equals_git(d, "after repack -a -d").await;
    log_equals_git(d, "after repack -a -d").await;
    let diff =
        call_in(d, "git_diff", json!({"from": "HEAD~2", "to": "HEAD", "stat": true})).await.expect("diff");
    let want = git(d, &["diff", "--numstat", "HEAD~2", "HEAD"]).lines().count();
    assert_eq!(diff["totals"]["files"], want, "{diff}");

    // An unreachable commit read by id, then pruned: the kept handle still has it parsed in its
    // object cache, but the commit is gone for git.
    let d = &t.path().join("prune");
    repo_at(d);
    git(d, &["switch", "-q", "-c", "doomed"]);
    write(d, "doomed.txt", "doomed\n");
    git(d, &["add", "doomed.txt"]);
    git(d, &["commit", "-q", "-m", "doomed"]);
    let doomed = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
    git(d, &["switch", "-q", "main"]);
    git(d, &["branch", "-q", "-D", "doomed"]);
    git(d, &["reflog", "expire", "--expire=now", "--all"]);
    settle();
    kept(d).await;
    let diff =
        call_in(d, "git_diff", json!({"from": doomed, "to": "HEAD", "stat": true})).await.expect("diff");
    assert_eq!(diff["totals"]["files"], 1, "{diff}");
    settle();
    kept(d).await;
    git(d, &["prune", "--expire=now"]);
    let gone = git_raw_ok(d, &["cat-file", "-e", &doomed]);
    assert!(!gone, "git pruned the commit");
    let e = call_in(d, "git_diff", json!({"from": doomed, "to": "HEAD"})).await.expect_err("pruned");
    assert_eq!(e.0, "REF_NOT_FOUND", "{e:?}");
    for tool in ["git_show", "git_log"] {
        let e = call_in(d, tool, json!({"revision": doomed})).await.expect_err("pruned");
        assert_eq!(e.0, "REF_NOT_FOUND", "{tool}: {e:?}");
    }

    // The repository deleted and created again at the same path.
    let d = &t.path().join("again");
    repo_at(d);
    kept(d).await;
    std::fs::remove_dir_all(d).expect("rm");
    std::fs::create_dir_all(d).expect("mkdir");
    git(d, &["init", "-q", "-b", "trunk"]);
    write(d, "only.txt", "one file\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "another repository"]);
    write(d, "only.txt", "changed\n");
    let data = status_equals_git(d, "after the repository was created again").await;
    assert_eq!(data["branch"], "trunk");
    let blame =
        call_in(d, "git_blame", json!({"file": "only.txt", "revision": "HEAD"})).await.expect("blame");
    assert_eq!(blamed_commits(&blame), git_blame_commits(d, "HEAD", "only.txt"));

    // A worktree added beside it; a repository created inside a folder of it.
    let w = &t.path().join("wt");
    let d = &w.join("main");
    repo_at(d);
    kept(d).await;
    git(d, &["worktree", "add", "-q", "-b", "side", "../linked", "HEAD~1"]);
    status_equals_git(d, "after a worktree was added").await;
    let data = call_in(w, "git_status", json!({"path": "linked"})).await.expect("status");
    assert_eq!(status_entries(&data), porcelain_v2(&w.join("linked")));
    assert_eq!(data["branch"], "side");
    let data = call_in(w, "git_status", json!({"path": "main/src"})).await.expect("status");
    assert_eq!(data["branch"], "main");
    settle();
    let data = call_in(w, "git_status", json!({"path": "main/src"})).await.expect("status");
    assert_eq!(data["branch"], "main");
    assert!(handles::lend(&real(&d.join("src"))).expect("lend").reused());
    git(&d.join("src"), &["init", "-q", "-b", "nested"]);
    let data = call_in(w, "git_status", json!({"path": "main/src"})).await.expect("status");
    assert_eq!(data["branch"], "nested", "the folder is a repository of its own now: {data}");
}

fn git_raw_ok(d: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git").args(args).current_dir(d).output().expect("git").status.success()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_own_writes_through_the_tools_leave_kept_handles_exact() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = &t.path().join("r");
    repo_at(d);
    git(d, &["config", "user.name", "Ada"]);
    git(d, &["config", "user.email", "ada@example.com"]);
    settle();
    kept(d).await;
    let env: std::collections::HashMap<String, String> = [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", std::env::var("HOME").unwrap_or_default()),
        ("GIT_CONFIG_GLOBAL", "/dev/null".to_owned()),
        ("GIT_CONFIG_NOSYSTEM", "1".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    let ctx = Ctx::new(d.to_str().unwrap())
        .expect("ctx")
        .with_confirm(eddie_tools_core::context::constant_confirm(true))
        .with_env(env);
    registry::run("git_stage", &json!({"files": ["src/f2.txt"]}), &ctx).await.expect("stage");
    status_equals_git(d, "after git_stage").await;
    registry::run("git_commit", &json!({"message": "ours", "files": ["src/f2.txt"]}), &ctx)
        .await
        .expect("commit");
    status_equals_git(d, "after git_commit").await;
    registry::run("git_branch", &json!({"create": "b2"}), &ctx).await.expect("branch");
    registry::run("git_branch", &json!({"action": "switch", "name": "b2"}), &ctx).await.expect("switch");
    let data = status_equals_git(d, "after git_branch").await;
    assert_eq!(data["branch"], "b2");
    assert_eq!(git(d, &["log", "-1", "--format=%s"]).trim(), "ours");
    git(d, &["fsck", "--no-progress"]);
}

#[test]
fn a_handle_is_lent_to_one_call_at_a_time() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path().join("r");
    repo_at(&d);
    let d = real(&d);
    drop(handles::lend(&d).expect("lend"));
    assert!(handles::lend(&d).expect("lend").reused(), "the handle was kept");
    let barrier = std::sync::Barrier::new(4);
    let ptrs: Vec<usize> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let lent = handles::lend(&d).expect("lend");
                    let at = std::ptr::from_ref::<git2::Repository>(&lent) as usize;
                    // Every thread holds its handle until all have one.
                    barrier.wait();
                    at
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    let mut distinct = ptrs.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "four calls at once, four handles: {ptrs:?}");
    assert!(handles::kept_count() <= handles::KEEP);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_on_one_repository_each_answer_as_git() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path().join("r");
    repo_at(&d);
    let want = porcelain_v2(&d);
    let blame = call_in(&d, "git_blame", json!({"file": "src/f1.txt"})).await.expect("blame");
    assert_eq!(blamed_commits(&blame), git_blame_commits(&d, "HEAD", "src/f1.txt"));
    let calls: Vec<_> = (0..16)
        .map(|i| {
            let d = d.clone();
            tokio::spawn(async move {
                let tool = ["git_status", "git_diff", "git_blame"][i % 3];
                let args = match tool {
                    "git_blame" => json!({"file": "src/f1.txt"}),
                    _ => json!({}),
                };
                (tool, call_in(&d, tool, args).await.expect("call"))
            })
        })
        .collect();
    for c in calls {
        let (tool, data) = c.await.expect("task");
        match tool {
            "git_status" => assert_eq!(status_entries(&data), want),
            "git_diff" => assert_eq!(data["totals"]["files"], 1, "{data}"),
            _ => assert_eq!(data["hunks"], blame["hunks"]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_handle_never_lets_a_call_out_of_its_workspace() {
    let t = tempfile::tempdir().expect("tempdir");
    let a = &t.path().join("a");
    repo_at(a);
    write(a, "sub/inner.txt", "inner\n");
    settle();
    // Handles kept for the repository root and for its folder `sub`, from workspace `a`.
    kept(a).await;
    call_in(a, "git_status", json!({"path": "sub"})).await.expect("status");
    call_in(a, "git_status", json!({"path": "sub"})).await.expect("status");
    assert!(handles::lend(&real(&a.join("sub"))).expect("lend").reused());

    // Another workspace beside it, with a symlink into `a`: refused, cached handle or not.
    let b = &t.path().join("b");
    std::fs::create_dir_all(b).expect("mkdir");
    std::os::unix::fs::symlink(a, b.join("link")).expect("symlink");
    for path in [a.to_str().unwrap(), "link", "link/sub", "../a"] {
        let e = call_in(b, "git_status", json!({"path": path})).await.expect_err("outside");
        assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{path}: {e:?}");
        let e =
            call_in(b, "git_blame", json!({"path": path, "file": "src/f1.txt"})).await.expect_err("outside");
        assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{path}: {e:?}");
    }

    // A workspace that is the folder `sub` of the repository: the handle kept for `sub` serves
    // it, but only the workspace's paths come out.
    let sub = &a.join("sub");
    let data = call_in(sub, "git_status", json!({})).await.expect("status");
    let paths: Vec<String> = status_entries(&data).into_iter().map(|e| e.0).collect();
    assert_eq!(paths, vec!["sub/inner.txt".to_owned()], "{data}");
    let e = call_in(sub, "git_blame", json!({"file": "../src/f1.txt"})).await.expect_err("outside");
    assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{e:?}");

    // core.worktree pointed elsewhere after a handle was kept: refused like a fresh open.
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    git(a, &["config", "core.worktree", elsewhere.to_str().unwrap()]);
    let e = call_in(a, "git_status", json!({})).await.expect_err("work tree elsewhere");
    assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{e:?}");
}
