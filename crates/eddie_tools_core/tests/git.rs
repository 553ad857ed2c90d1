//! The git family against the git CLI as oracle: fixture repositories are built with `git`
//! (no global or system config, fixed identities and dates) and each tool's data is compared
//! with what git itself reports.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;
use std::process::Command;

use eddie_tools_core::{Ctx, registry};
use serde_json::{Value, json};

mod remote;
use remote::{blamed_lines, line_porcelain, numstat, ours, porcelain_v2, status_entries};

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
    let want = porcelain_v2(d);
    let branch = Some(git(d, &["branch", "--show-current"]).trim().to_owned());
    let data = call(d, "git_status", json!({})).await.expect("status");
    let got = status_entries(&data);
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

/// The cases a status of our own could get wrong, against git: a file edited in the same second
/// as the index write (same size), a mode change, a file replaced by a symlink and another by a
/// folder, a tracked file inside an ignored folder (edited) beside ignored and untracked ones,
/// nested `.gitignore` files with a negation, `.git/info/exclude`, `core.excludesFile`, an
/// intent-to-add entry, a staged deletion and an untracked folder two levels deep.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_edge_cases_match_porcelain_v2() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "racy.txt", "one\n");
    write(d, "run.sh", "echo hi\n");
    write(d, "link-me.txt", "becomes a symlink\n");
    write(d, "was-file", "becomes a folder\n");
    write(d, "staged-gone.txt", "deleted in the index\n");
    write(d, ".gitignore", "build/\n*.o\n");
    write(d, "build/keep.txt", "tracked inside an ignored folder\n");
    write(d, "sub/.gitignore", "*.log\n!keep.log\n");
    write(d, "sub/tracked.txt", "t\n");
    git(d, &["add", "-f", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    // Refresh the index now, then edit racy.txt within the same second, size unchanged.
    git(d, &["update-index", "--refresh"]);
    write(d, "racy.txt", "two\n");
    let mut perm = std::fs::metadata(d.join("run.sh")).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(d.join("run.sh"), perm).expect("chmod");
    std::fs::remove_file(d.join("link-me.txt")).expect("rm");
    std::os::unix::fs::symlink("racy.txt", d.join("link-me.txt")).expect("symlink");
    std::fs::remove_file(d.join("was-file")).expect("rm");
    write(d, "was-file/inner.txt", "now a folder\n");
    git(d, &["rm", "-q", "--cached", "staged-gone.txt"]);
    write(d, "build/keep.txt", "tracked inside an ignored folder, edited\n");
    write(d, "build/out.o", "ignored\n");
    write(d, "build/new.txt", "ignored with its folder\n");
    write(d, "sub/a.log", "ignored by the nested rule\n");
    write(d, "sub/keep.log", "negated back in\n");
    write(d, "sub/x.bak", "ignored by info/exclude\n");
    write(d, ".git/info/exclude", "*.bak\n");
    let excludes = t.path().join(".git").join("my-excludes");
    std::fs::write(&excludes, "*.tmp\n").expect("excludes");
    git(d, &["config", "core.excludesFile", excludes.to_str().expect("utf8")]);
    write(d, "scratch.tmp", "ignored by core.excludesFile\n");
    write(d, "ita.txt", "intent to add\n");
    git(d, &["add", "-N", "ita.txt"]);
    write(d, "fresh/deeper/n.txt", "untracked, two levels down\n");
    let want = porcelain_v2(d);
    // The fixture reaches each case (so a change of git's behaviour cannot hollow the test).
    for (path, xy) in [
        ("racy.txt", ".M"),
        ("run.sh", ".M"),
        ("link-me.txt", ".T"),
        ("was-file", ".D"),
        ("was-file/inner.txt", "??"),
        ("staged-gone.txt", "D."),
        ("build/keep.txt", ".M"),
        ("sub/keep.log", "??"),
        ("fresh/deeper/n.txt", "??"),
    ] {
        assert!(want.iter().any(|w| w.0 == path && w.1 == xy), "git reports {path} {xy}: {want:?}");
    }
    for ignored in ["build/out.o", "build/new.txt", "sub/a.log", "sub/x.bak", "scratch.tmp"] {
        assert!(!want.iter().any(|w| w.0 == ignored), "git ignores {ignored}");
    }
    let data = call(d, "git_status", json!({})).await.expect("status");
    assert_eq!(status_entries(&data), want);
}

// ---------------------------------------------------------------------------------------------
// Shared by the tests below.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use eddie_tools_core::context::constant_confirm;

fn env_isolated() -> HashMap<String, String> {
    let mut env = HashMap::new();
    env.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    env.insert("HOME".into(), std::env::var("HOME").unwrap_or_default());
    env.insert("GIT_CONFIG_GLOBAL".into(), "/dev/null".into());
    env.insert("GIT_CONFIG_NOSYSTEM".into(), "1".into());
    env
}

/// A ctx whose confirm answers `answers` in turn (then `true`), recording the prompts.
fn ctx_with(dir: &Path, answers: Vec<bool>) -> (Ctx, Arc<Mutex<Vec<String>>>) {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let p = Arc::clone(&prompts);
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    let confirm: eddie_tools_core::context::ConfirmFn = Arc::new(move |m: String| {
        p.lock().unwrap().push(m);
        let a = answers.lock().unwrap().next().unwrap_or(true);
        Box::pin(async move { Ok(a) })
    });
    let ctx = Ctx::new(dir.to_str().unwrap()).unwrap().with_confirm(confirm).with_env(env_isolated());
    (ctx, prompts)
}

async fn call_ctx(ctx: &Ctx, tool: &str, args: Value) -> Result<Value, (String, String)> {
    registry::run(tool, &args, ctx)
        .await
        .map(|o| o.data_value().expect("data"))
        .map_err(|e| (e.code().as_str().to_owned(), e.message().to_owned()))
}

async fn call_yes(dir: &Path, tool: &str, args: Value) -> Result<Value, (String, String)> {
    let ctx = Ctx::new(dir.to_str().unwrap())
        .unwrap()
        .with_confirm(constant_confirm(true))
        .with_env(env_isolated());
    call_ctx(&ctx, tool, args).await
}

/// Patch text without `index` lines (abbreviation lengths differ between implementations).
fn strip_index(p: &str) -> String {
    p.lines().filter(|l| !l.starts_with("index ")).collect::<Vec<_>>().join("\n")
}

/// Every file under `dir` (with `.git`), as path → (size, hash), for byte-identity checks.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, (usize, u64)> {
    snapshot_with(dir, true)
}

/// Like [`snapshot`], without `.git/objects` (refs, index, working tree, config).
fn snapshot_no_objects(dir: &Path) -> std::collections::BTreeMap<String, (usize, u64)> {
    snapshot_with(dir, false)
}

fn snapshot_with(dir: &Path, objects: bool) -> std::collections::BTreeMap<String, (usize, u64)> {
    use std::hash::{Hash, Hasher};
    let h = |b: &[u8]| {
        let mut s = std::collections::hash_map::DefaultHasher::new();
        b.hash(&mut s);
        (b.len(), s.finish())
    };
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            let ft = e.file_type().unwrap();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if ft.is_dir() {
                if objects || rel != ".git/objects" {
                    stack.push(p);
                }
            } else if ft.is_symlink() {
                out.insert(rel, h(std::fs::read_link(&p).unwrap().to_string_lossy().as_bytes()));
            } else {
                out.insert(rel, h(&std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// The fixture plus a binary file (committed, then changed) and a second commit.
fn diff_fixture() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "a.txt", "one\ntwo\nthree\n");
    write(
        d,
        "old name.txt",
        "rename me, I am long enough to be detected as a rename\nline two\nline three\n",
    );
    write(d, "gone.txt", "bye\n");
    write(d, "dir/ü.txt", "unicode\n");
    std::fs::write(d.join("bin.dat"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    write(d, "crlf.txt", "a\r\nb\r\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "first"]);
    write(d, "a.txt", "one\nTWO\nthree\nfour\n");
    git(d, &["commit", "-q", "-am", "second"]);
    write(d, "a.txt", "one\n2\nthree\n");
    git(d, &["add", "a.txt"]);
    write(d, "a.txt", "zero\none\n2\nthree\nfour\n");
    git(d, &["mv", "old name.txt", "new name.txt"]);
    std::fs::remove_file(d.join("gone.txt")).unwrap();
    std::fs::write(d.join("bin.dat"), [0u8, 9, 9, 9, 0, 1]).unwrap();
    write(d, "dir/ü.txt", "unicode changed\n");
    write(d, "crlf.txt", "a\r\nB\r\nc\r\n");
    write(d, "untracked.txt", "not in git diff\n");
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_matches_numstat_and_patch_in_every_scope() {
    let t = diff_fixture();
    let d = t.path();
    let q = ["-c", "core.quotepath=off"];
    let scopes: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["diff"]),
        (json!({"staged": true}), vec!["diff", "--cached"]),
        (json!({"cached": true}), vec!["diff", "--cached"]),
        (json!({"from": "HEAD~1", "to": "HEAD"}), vec!["diff", "HEAD~1", "HEAD"]),
        (json!({"from": "HEAD~1..HEAD"}), vec!["diff", "HEAD~1..HEAD"]),
        (json!({"from": "HEAD~1"}), vec!["diff", "HEAD~1"]),
        (json!({"files": ["a.txt"]}), vec!["diff", "--", "a.txt"]),
        (json!({"file": "dir", "staged": false}), vec!["diff", "--", "dir"]),
        (json!({"context": 0}), vec!["diff", "-U0"]),
    ];
    for (args, cli) in scopes {
        let data = call(d, "git_diff", args.clone()).await.expect("diff");
        let mut ns: Vec<&str> = q.to_vec();
        ns.extend(&cli[..1]);
        ns.extend(["--numstat", "-z"]);
        ns.extend(&cli[1..]);
        let want = numstat(&git(d, &ns));
        assert_eq!(ours(&data["files"]), want, "{args}");
        // The patch text quotes non-ASCII names as git does by default (core.quotepath).
        let patch = git(d, &cli);
        assert_eq!(strip_index(data["patch"].as_str().unwrap()), strip_index(&patch), "{args}");
        assert_eq!(data["hasChanges"], !want.is_empty());
    }
    // The staged rename is detected, the binary file reported, not dumped.
    let staged = call(d, "git_diff", json!({"staged": true})).await.unwrap();
    assert!(
        staged["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["oldPath"] == "old name.txt" && f["status"] == "R")
    );
    let wt = call(d, "git_diff", json!({})).await.unwrap();
    let bin = wt["files"].as_array().unwrap().iter().find(|f| f["path"] == "bin.dat").unwrap().clone();
    assert_eq!(bin["binary"], true);
    assert!(wt["patch"].as_str().unwrap().contains("Binary files a/bin.dat and b/bin.dat differ"));
    // Without rename detection: a deletion and an addition.
    let plain = call(d, "git_diff", json!({"staged": true, "renames": false})).await.unwrap();
    let want = numstat(&git(d, &["diff", "--cached", "--no-renames", "--numstat", "-z"]));
    assert_eq!(ours(&plain["files"]), want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diff_budget_counts_what_it_leaves_out() {
    let t = diff_fixture();
    let d = t.path();
    let full = call(d, "git_diff", json!({})).await.unwrap();
    let total = full["patch"].as_str().unwrap().len();
    assert_eq!(full["truncated"], false);
    let cut = call(d, "git_diff", json!({"maxBytes": 200})).await.unwrap();
    assert_eq!(cut["truncated"], true);
    let kept = cut["patch"].as_str().unwrap().len();
    assert!(kept <= 200);
    assert_eq!(kept + cut["omittedBytes"].as_u64().unwrap() as usize, total);
    assert_eq!(cut["files"], full["files"], "every file keeps its numbers");
    let stat = call(d, "git_diff", json!({"stat": true})).await.unwrap();
    assert_eq!(stat["patch"], Value::Null);
    // Errors.
    assert_eq!(call(d, "git_diff", json!({"from": "nope"})).await.unwrap_err().0, "REF_NOT_FOUND");
    assert_eq!(call(d, "git_diff", json!({"to": "HEAD"})).await.unwrap_err().0, "INVALID_ARGUMENT");
    assert_eq!(call(d, "git_diff", json!({"files": ["../../x"]})).await.unwrap_err().0, "OUTSIDE_WORKSPACE");
    assert_eq!(call(d, "git_diff", json!({"context": -1})).await.unwrap_err().0, "INVALID_ARGUMENT");
    let e = tempfile::tempdir().unwrap();
    assert_eq!(call(e.path(), "git_diff", json!({})).await.unwrap_err().0, "NOT_A_REPOSITORY");
}

/// A history of `n` commits by two authors a minute apart, made with git fast-import: files
/// edited in turn, one renamed half-way, a binary file, and messages with bodies.
fn history(n: usize) -> tempfile::TempDir {
    use std::fmt::Write as _;
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let mut s = String::new();
    let base = 1_700_000_000u64;
    for i in 1..=n {
        let (who, mail) =
            if i % 3 == 0 { ("Bob Builder", "bob@example.com") } else { ("Ada", "ada@example.com") };
        let when = base + i as u64 * 60;
        let msg = if i % 7 == 0 {
            format!("fix: thing {i}\n\nBody of {i}.\nSecond line.\n")
        } else {
            format!("commit {i}\n")
        };
        writeln!(s, "commit refs/heads/main\nmark :{i}").unwrap();
        writeln!(s, "author {who} <{mail}> {when} +0100\ncommitter {who} <{mail}> {when} +0100").unwrap();
        write!(s, "data {}\n{msg}", msg.len()).unwrap();
        if i > 1 {
            writeln!(s, "from :{}", i - 1).unwrap();
        }
        let f = if i > n / 2 && i % 20 == 3 {
            "moved/three.txt".to_owned()
        } else {
            format!("file_{}.txt", i % 20)
        };
        if i == n / 2 + 1 {
            writeln!(s, "R file_3.txt moved/three.txt").unwrap();
        }
        let body = format!("line {i}\n").repeat(i % 5 + 1) + "tail\n";
        write!(s, "M 100644 inline {f}\ndata {}\n{body}\n", body.len()).unwrap();
        if i % 50 == 0 {
            let bin = format!("\0bin{i}\0");
            write!(s, "M 100644 inline blob.bin\ndata {}\n{bin}\n", bin.len()).unwrap();
        }
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(d)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    assert!(child.wait().unwrap().success());
    git(d, &["reset", "-q", "--hard", "main"]);
    t
}

fn log_oracle(d: &Path, args: &[&str]) -> Vec<Vec<String>> {
    let mut a = vec!["log", "--format=%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%P%x1f%s%x1f%b%x1e"];
    a.extend(args);
    git(d, &a)
        .split('\x1e')
        .map(|r| r.trim_start_matches('\n'))
        .filter(|r| !r.is_empty())
        .map(|r| r.split('\x1f').map(str::to_owned).collect())
        .collect()
}

fn log_ours(v: &Value) -> Vec<Vec<String>> {
    v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            vec![
                c["id"].as_str().unwrap().to_owned(),
                c["shortId"].as_str().unwrap().to_owned(),
                c["author"]["name"].as_str().unwrap().to_owned(),
                c["author"]["email"].as_str().unwrap().to_owned(),
                c["author"]["date"].as_str().unwrap().to_owned(),
                c["parents"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(" "),
                c["subject"].as_str().unwrap().to_owned(),
                c["body"].as_str().unwrap().to_owned(),
            ]
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_matches_git_log_on_a_2000_commit_history() {
    let t = history(2000);
    let d = t.path();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["-n", "10"]),
        (json!({"limit": 20}), vec!["-n", "20"]),
        (json!({"maxCount": 30, "skip": 1500}), vec!["-n", "30", "--skip", "1500"]),
        (json!({"maxCount": 50, "author": "Bob"}), vec!["-n", "50", "--author=Bob"]),
        (json!({"maxCount": 50, "grep": "fix: thing 1"}), vec!["-n", "50", "--grep=fix: thing 1"]),
        (
            json!({"maxCount": 100, "since": "2023-11-15T00:00:00Z", "until": "2023-11-15T06:00:00Z"}),
            vec!["-n", "100", "--since=2023-11-15T00:00:00Z", "--until=2023-11-15T06:00:00Z"],
        ),
        (json!({"maxCount": 500, "file": "file_5.txt"}), vec!["-n", "500", "--", "file_5.txt"]),
        (
            json!({"maxCount": 500, "file": "moved/three.txt", "follow": true}),
            vec!["-n", "500", "--follow", "--", "moved/three.txt"],
        ),
        (json!({"maxCount": 5, "revision": "HEAD~100"}), vec!["-n", "5", "HEAD~100"]),
        (json!({"maxCount": 50, "revision": "HEAD~10..HEAD"}), vec!["-n", "50", "HEAD~10..HEAD"]),
    ];
    for (args, cli) in cases {
        let data = call(d, "git_log", args.clone()).await.expect("log");
        let want = log_oracle(d, &cli);
        assert!(!want.is_empty(), "{args}: the oracle finds commits");
        assert_eq!(log_ours(&data), want, "{args}");
    }
    // Files with counts, commit by commit, as git log --numstat gives them.
    let data =
        call(d, "git_log", json!({"maxCount": 60, "files": true, "revision": "HEAD~970"})).await.unwrap();
    for c in data["commits"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let want = numstat(&git(d, &["log", "-1", "--format=", "--numstat", "-z", id]));
        assert_eq!(ours(&c["files"]), want, "{id}");
    }
    assert!(
        data["commits"].as_array().unwrap().iter().any(|c| c["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["binary"] == true)),
        "a binary file is among them"
    );
    assert!(
        data["commits"].as_array().unwrap().iter().any(|c| c["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["oldPath"].is_string())),
        "the rename is among them"
    );
    assert_eq!(
        call(d, "git_log", json!({"revision": "--upload-pack=x"})).await.unwrap_err().0,
        "REF_NOT_FOUND"
    );
    assert_eq!(call(d, "git_log", json!({"author": "("})).await.unwrap_err().0, "INVALID_REGEX");
    assert_eq!(
        call(d, "git_log", json!({"since": "the day after never"})).await.unwrap_err().0,
        "INVALID_ARGUMENT"
    );
    assert_eq!(call(d, "git_log", json!({"follow": true})).await.unwrap_err().0, "INVALID_ARGUMENT");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_of_an_unborn_branch_is_empty() {
    let t = tempfile::tempdir().unwrap();
    git(t.path(), &["init", "-q", "-b", "main"]);
    let data = call(t.path(), "git_log", json!({})).await.unwrap();
    assert_eq!(data["count"], 0);
    assert_eq!(data["unborn"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_matches_git_show() {
    let t = diff_fixture();
    let d = t.path();
    let data = call(d, "git_show", json!({})).await.unwrap();
    let head = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
    assert_eq!(data["id"], head);
    assert_eq!(data["subject"], "second");
    let want = numstat(&git(d, &["show", "--format=", "--numstat", "-z", "HEAD"]));
    assert_eq!(ours(&data["files"]), want);
    let patch = git(d, &["show", "--format=", "HEAD"]);
    assert_eq!(strip_index(data["patch"].as_str().unwrap()), strip_index(patch.trim_start_matches('\n')));
    let root = call(d, "git_show", json!({"revision": "HEAD~1"})).await.unwrap();
    let want =
        numstat(&git(d, &["-c", "core.quotepath=off", "show", "--format=", "--numstat", "-z", "HEAD~1"]));
    assert_eq!(ours(&root["files"]), want);
    let f = call(d, "git_show", json!({"revision": "HEAD~1", "file": "a.txt"})).await.unwrap();
    assert_eq!(f["content"], git(d, &["show", "HEAD~1:a.txt"]));
    let b = call(d, "git_show", json!({"file": "bin.dat"})).await.unwrap();
    assert_eq!(b["binary"], true);
    assert_eq!(b["content"], Value::Null);
    assert_eq!(call(d, "git_show", json!({"file": "nope.txt"})).await.unwrap_err().0, "NOT_FOUND");
    assert_eq!(call(d, "git_show", json!({"revision": "nope"})).await.unwrap_err().0, "REF_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_matches_git_blame_porcelain() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "f.txt", "a\nb\nc\nd\n");
    git(d, &["add", "f.txt"]);
    git(d, &["commit", "-q", "-m", "one"]);
    write(d, "f.txt", "a\nB\nc\nd\ne\n");
    git(d, &["commit", "-q", "-am", "two"]);
    git(d, &["mv", "f.txt", "g.txt"]);
    git(d, &["commit", "-q", "-m", "move"]);
    write(d, "g.txt", "a\nB\nc\nD!\ne\n");
    git(d, &["commit", "-q", "-am", "three"]);
    write(d, "g.txt", "a\nB\nlocal\nD!\ne\n");
    /// (final line → (commit, orig line)) from `git blame --porcelain`.
    fn oracle(out: &str) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for l in out.lines() {
            let parts: Vec<&str> = l.split(' ').collect();
            if parts.len() >= 3 && parts[0].len() == 40 && parts[0].chars().all(|c| c.is_ascii_hexdigit()) {
                v.push((parts[0].to_owned(), parts[1].parse().unwrap()));
            }
        }
        v
    }
    fn mine(data: &Value) -> Vec<(String, u64)> {
        let mut v = Vec::new();
        for h in data["hunks"].as_array().unwrap() {
            for k in 0..h["lines"].as_u64().unwrap() {
                v.push((h["commit"].as_str().unwrap().to_owned(), h["origStartLine"].as_u64().unwrap() + k));
            }
        }
        v
    }
    let at_head = call(d, "git_blame", json!({"file": "g.txt", "revision": "HEAD"})).await.unwrap();
    let want = oracle(&git(d, &["blame", "--porcelain", "HEAD", "--", "g.txt"]));
    let got = mine(&at_head);
    assert_eq!(got.iter().map(|x| &x.0).collect::<Vec<_>>(), want.iter().map(|x| &x.0).collect::<Vec<_>>());
    assert_eq!(got, want);
    let wt = call(d, "git_blame", json!({"file": "g.txt"})).await.unwrap();
    let want = oracle(&git(d, &["blame", "--porcelain", "--", "g.txt"]));
    assert_eq!(
        mine(&wt).iter().map(|x| &x.0).collect::<Vec<_>>(),
        want.iter().map(|x| &x.0).collect::<Vec<_>>()
    );
    let range =
        call(d, "git_blame", json!({"file": "g.txt", "revision": "HEAD", "startLine": 2, "endLine": 4}))
            .await
            .unwrap();
    let want = oracle(&git(d, &["blame", "--porcelain", "-L", "2,4", "HEAD", "--", "g.txt"]));
    assert_eq!(mine(&range), want);
    assert_eq!(call(d, "git_blame", json!({"file": "nope.txt"})).await.unwrap_err().0, "NOT_FOUND");
    assert_eq!(
        call(d, "git_blame", json!({"file": "g.txt", "startLine": 99})).await.unwrap_err().0,
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        call(d, "git_blame", json!({"file": "../../etc/passwd"})).await.unwrap_err().0,
        "OUTSIDE_WORKSPACE"
    );
}

/// Blame through merges (a line passes to the first parent that has it unchanged; a merge
/// whose file equals its second parent passes everything there; an evil merge keeps its own
/// lines), a rename with an edit, CRLF lines, a file without a final newline, a line range, and
/// uncommitted lines, each equal to `git blame --line-porcelain`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_through_merges_renames_and_crlf_matches_git() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let base: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    write(d, "m.txt", &base);
    write(d, "crlf.txt", "one\r\ntwo\r\nthree\r\nfour");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "side"]);
    write(d, "m.txt", &base.replace("line 3\n", "side 3\n").replace("line 20\n", "side 20\nside 20b\n"));
    write(d, "crlf.txt", "one\r\nTWO\r\nthree\r\nfour");
    git(d, &["commit", "-q", "-am", "side edits"]);
    git(d, &["checkout", "-q", "main"]);
    let main_text = base.replace("line 10\n", "main 10\n").replace("line 29\n", "");
    write(d, "m.txt", &main_text);
    git(d, &["commit", "-q", "-am", "main edits"]);
    git(d, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    // An evil merge: the merge commit itself changes a line neither parent has.
    git(d, &["checkout", "-q", "-b", "other", "HEAD~1"]);
    write(d, "o.txt", "o\n");
    git(d, &["add", "o.txt"]);
    git(d, &["commit", "-q", "-m", "other"]);
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "--no-commit", "other"]);
    let merged = std::fs::read_to_string(d.join("m.txt")).unwrap();
    write(d, "m.txt", &merged.replace("line 15\n", "evil 15\n"));
    git(d, &["commit", "-q", "-am", "evil merge"]);
    // A rename with an edit (not exact: found by similarity), then more edits.
    std::fs::create_dir_all(d.join("dir")).unwrap();
    git(d, &["mv", "m.txt", "dir/n.txt"]);
    let moved = std::fs::read_to_string(d.join("dir/n.txt")).unwrap();
    write(d, "dir/n.txt", &moved.replace("line 25\n", "moved 25\n"));
    git(d, &["commit", "-q", "-am", "move with an edit"]);
    let moved = std::fs::read_to_string(d.join("dir/n.txt")).unwrap();
    write(d, "dir/n.txt", &format!("top\n{}", moved.replace("line 5\n", "")));
    git(d, &["commit", "-q", "-am", "after the move"]);
    // A merge whose file equals its second parent's: everything passes there.
    git(d, &["checkout", "-q", "-b", "twin", "HEAD~1"]);
    git(d, &["checkout", "-q", "main", "--", "dir/n.txt"]);
    git(d, &["commit", "-q", "-m", "twin takes main's file"]);
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "-s", "ours", "-m", "merge twin", "twin"]);
    let want = |args: &[&str]| line_porcelain(&git(d, args));
    for (file, extra) in [("dir/n.txt", None), ("crlf.txt", None), ("dir/n.txt", Some((4, 17)))] {
        let mut args = json!({"file": file, "revision": "HEAD"});
        let mut cli = vec!["blame", "--line-porcelain"];
        let range;
        if let Some((a, b)) = extra {
            args["startLine"] = json!(a);
            args["endLine"] = json!(b);
            range = format!("{a},{b}");
            cli.extend(["-L", &range]);
        }
        cli.extend(["HEAD", "--", file]);
        let got = call(d, "git_blame", args).await.unwrap();
        assert_eq!(blamed_lines(&got), want(&cli), "{file} {extra:?}");
    }
    // Uncommitted lines (CRLF kept) on top of HEAD.
    write(d, "crlf.txt", "one\r\nTWO\r\nnew\r\nthree\r\nfour");
    let got = call(d, "git_blame", json!({"file": "crlf.txt"})).await.unwrap();
    let mut cli = want(&["blame", "--line-porcelain", "--", "crlf.txt"]);
    assert_eq!(cli.get(2).map(|c| c.0.as_str()), Some("0000000000000000000000000000000000000000"));
    for (g, c) in blamed_lines(&got).iter().zip(cli.iter_mut()) {
        if c.0.starts_with("0000") {
            c.2.clone_from(&g.2); // git names the uncommitted file as it is: so do we
        }
    }
    assert_eq!(blamed_lines(&got), cli);
}

/// During an unfinished merge the working tree has two parents, `HEAD` and `MERGE_HEAD`: the
/// lines the merge brings in are blamed on the other branch's commit, as `git blame` does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_during_an_unfinished_merge_counts_merge_head_as_a_parent() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    write(d, "m.txt", &base);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "side"]);
    write(d, "m.txt", &base.replace("line 9\n", "side 9\nside 9b\n"));
    git(d, &["commit", "-q", "-am", "side edits"]);
    git(d, &["checkout", "-q", "main"]);
    write(d, "m.txt", &base.replace("line 2\n", "main 2\n"));
    git(d, &["commit", "-q", "-am", "main edits"]);
    git(d, &["merge", "-q", "--no-ff", "--no-commit", "side"]);
    assert!(d.join(".git/MERGE_HEAD").exists());
    // And one line of the working tree's own.
    let merged = std::fs::read_to_string(d.join("m.txt")).unwrap();
    write(d, "m.txt", &merged.replace("line 5\n", "mine 5\n"));
    let got = call(d, "git_blame", json!({"file": "m.txt"})).await.unwrap();
    let mut cli = line_porcelain(&git(d, &["blame", "--line-porcelain", "--", "m.txt"]));
    let side = git(d, &["rev-parse", "side"]).trim().to_owned();
    assert_eq!(cli.iter().filter(|c| c.0 == side).count(), 2, "{cli:?}");
    for (g, c) in blamed_lines(&got).iter().zip(cli.iter_mut()) {
        if c.0.starts_with("0000") {
            c.2.clone_from(&g.2);
        }
    }
    assert_eq!(blamed_lines(&got), cli);
}

/// A xorshift generator: `rnd(n)` is a pseudo-random number below `n`.
fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % n.max(1) as u64).unwrap()
    }
}

/// `times` edits of commit `i` at pseudo-random places: a line deleted, inserted or rewritten.
fn random_edits(lines: &mut Vec<String>, i: usize, times: usize, rnd: &mut impl FnMut(usize) -> usize) {
    for _ in 0..times {
        let at = rnd(lines.len() + 1);
        match rnd(4) {
            0 if lines.len() > 5 => {
                lines.remove(at.min(lines.len() - 1));
            }
            1 => lines.insert(at, "}".to_owned()),
            2 => lines.insert(at, format!("    let x{i} = {};", rnd(5))),
            _ => {
                let k = at.min(lines.len() - 1);
                lines[k] = format!("fn g{i}() {{ {k} }}");
            }
        }
    }
}

/// A generated history of 150 commits on two branches merged back and forth, each commit
/// inserting, deleting and rewriting lines at pseudo-random places: every line equals
/// `git blame --line-porcelain`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_of_a_generated_history_matches_git() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let mut rnd = xorshift(0x2545_f491_4f6c_dd1d);
    let mut lines: Vec<String> = (0..40).map(|i| format!("fn f{i}() {{ {i} }}")).collect();
    let save = |lines: &[String]| write(d, "src/lib.rs", &(lines.join("\n") + "\n"));
    save(&lines);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "c0"]);
    git(d, &["branch", "topic"]);
    for i in 1..=150 {
        let branch = if (i / 10) % 2 == 0 { "main" } else { "topic" };
        git(d, &["checkout", "-q", branch]);
        lines = std::fs::read_to_string(d.join("src/lib.rs")).unwrap().lines().map(str::to_owned).collect();
        let times = 1 + rnd(3);
        random_edits(&mut lines, i, times, &mut rnd);
        save(&lines);
        git(d, &["commit", "-q", "-am", &format!("c{i}")]);
        if i % 10 == 0 {
            let other = if branch == "main" { "topic" } else { "main" };
            git(d, &["checkout", "-q", other]);
            let out = git_raw(d, &["merge", "-q", "--no-ff", "-m", &format!("merge {i}"), branch]);
            if !out.status.success() {
                // A conflict: take the merged branch's file, as a resolution would.
                git(d, &["checkout", "-q", "--theirs", "--", "src/lib.rs"]);
                git(d, &["commit", "-q", "-am", &format!("merge {i} (resolved)")]);
            }
        }
    }
    git(d, &["checkout", "-q", "main"]);
    let got = call(d, "git_blame", json!({"file": "src/lib.rs", "revision": "HEAD"})).await.unwrap();
    assert_eq!(
        blamed_lines(&got),
        line_porcelain(&git(d, &["blame", "--line-porcelain", "HEAD", "--", "src/lib.rs"]))
    );
}

/// A history of a file made of runs of repeated lines (where a diff has many equally short
/// answers and git's choice depends on how it calls xdiff: the common tail trimmed in 1 KiB
/// blocks first): every line equals `git blame --line-porcelain`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_of_runs_of_repeated_lines_matches_git() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15);
    // Runs of one line 10 to 60 long: a line inserted into or deleted from a run can be
    // placed anywhere in it, and where the run crosses the trimmed tail's edge matters.
    let alphabet = ["        x += 1;", "        y -= 1;", "    }", ""];
    let mut lines: Vec<String> = Vec::new();
    while lines.len() < 500 {
        let l = alphabet[rnd(alphabet.len())];
        lines.extend(std::iter::repeat_n(l.to_owned(), 10 + rnd(50)));
    }
    let save = |lines: &[String]| write(d, "r.txt", &(lines.join("\n") + "\n"));
    for i in 0..80 {
        if i > 0 {
            for _ in 0..1 + rnd(4) {
                let len = lines.len();
                let at = rnd(len);
                match rnd(3) {
                    0 if len > 100 => {
                        lines.remove(at);
                    }
                    1 => lines.insert(at, lines[at].clone()),
                    _ => lines.insert(at, alphabet[rnd(alphabet.len())].to_owned()),
                }
            }
        }
        save(&lines);
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "--allow-empty", "-m", &format!("c{i}")]);
    }
    let got = call(d, "git_blame", json!({"file": "r.txt", "revision": "HEAD"})).await.unwrap();
    assert_eq!(
        blamed_lines(&got),
        line_porcelain(&git(d, &["blame", "--line-porcelain", "HEAD", "--", "r.txt"]))
    );
}

/// The names of this process's threads called `eddie-blame` (git_blame's workers).
fn blame_workers() -> usize {
    let tasks = std::fs::read_dir("/proc/self/task").unwrap();
    tasks
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
        .filter(|name| name.trim() == "eddie-blame")
        .count()
}

/// A long history that the worker threads walk ahead of the main thread: two branches merged
/// back and forth, the file renamed on one of them (exact and with edits), every commit in the
/// same second (the queue's order then rests on the order commits were queued in), and the
/// blame asked for the whole file, a range, and from each branch: every line equals
/// `git blame --line-porcelain`, and no worker is left running after any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_of_a_merge_heavy_renamed_history_matches_git_with_workers() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15);
    let lines: Vec<String> = (0..120).map(|i| format!("fn f{i}() {{ {i} }}")).collect();
    write(d, "a/lib.rs", &(lines.join("\n") + "\n"));
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "c0"]);
    git(d, &["branch", "topic"]);
    // Where the file is on each branch (a rename on one branch is merged into the other).
    let file = |d: &Path| -> String {
        let out = git(d, &["ls-files"]);
        out.lines().find(|l| l.ends_with(".rs")).unwrap().to_owned()
    };
    for i in 1..=160 {
        let branch = if (i / 7) % 2 == 0 { "main" } else { "topic" };
        git(d, &["checkout", "-q", branch]);
        let name = file(d);
        if i % 37 == 0 {
            // A rename: exact every other time, with an edit otherwise.
            let to = format!("d{i}/lib{i}.rs");
            std::fs::create_dir_all(d.join(format!("d{i}"))).unwrap();
            git(d, &["mv", &name, &to]);
            if i % 74 != 0 {
                let text = std::fs::read_to_string(d.join(&to)).unwrap();
                write(d, &to, &format!("// moved {i}\n{text}"));
            }
            git(d, &["commit", "-q", "-am", &format!("move {i}")]);
            continue;
        }
        let mut lines: Vec<String> =
            std::fs::read_to_string(d.join(&name)).unwrap().lines().map(str::to_owned).collect();
        let times = 1 + rnd(4);
        random_edits(&mut lines, i, times, &mut rnd);
        write(d, &name, &(lines.join("\n") + "\n"));
        git(d, &["commit", "-q", "-am", &format!("c{i}")]);
        if i % 7 == 0 {
            let other = if branch == "main" { "topic" } else { "main" };
            git(d, &["checkout", "-q", other]);
            let out = git_raw(d, &["merge", "-q", "--no-ff", "-m", &format!("merge {i}"), branch]);
            if !out.status.success() {
                // A conflict: take the merged branch's side, as a resolution would.
                git(d, &["checkout", "-q", "--theirs", "--", "."]);
                git(d, &["add", "-A"]);
                git(d, &["commit", "-q", "-m", &format!("merge {i} (resolved)")]);
            }
        }
    }
    for branch in ["main", "topic"] {
        git(d, &["checkout", "-q", branch]);
        let name = file(d);
        let got = call(d, "git_blame", json!({"file": name, "revision": "HEAD"})).await.unwrap();
        let want = line_porcelain(&git(d, &["blame", "--line-porcelain", "HEAD", "--", &name]));
        assert!(want.iter().any(|w| w.2 != name), "the blame crosses a rename");
        assert_eq!(blamed_lines(&got), want, "{branch}");
        assert_eq!(blame_workers(), 0);
        let args = json!({"file": name, "revision": "HEAD", "startLine": 30, "endLine": 60});
        let got = call(d, "git_blame", args).await.unwrap();
        let want =
            line_porcelain(&git(d, &["blame", "--line-porcelain", "-L", "30,60", "HEAD", "--", &name]));
        assert_eq!(blamed_lines(&got), want, "{branch} 30-60");
        assert_eq!(blame_workers(), 0);
    }
}

/// A blob missing from the middle of a long history: the blame fails (the main thread computes
/// the diff a worker could not) and no worker is left running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blame_failing_mid_walk_leaves_no_worker_running() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let mut lines: Vec<String> = (0..200).map(|i| format!("line {i}")).collect();
    for i in 0..60 {
        lines[(i * 7) % 200] = format!("changed {i}");
        write(d, "f.txt", &(lines.join("\n") + "\n"));
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    let ok = call(d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await.unwrap();
    assert_eq!(
        blamed_lines(&ok),
        line_porcelain(&git(d, &["blame", "--line-porcelain", "HEAD", "--", "f.txt"]))
    );
    assert_eq!(blame_workers(), 0);
    // Loose objects (never packed here): remove the file's blob 30 commits back.
    let blob = git(d, &["rev-parse", "HEAD~30:f.txt"]).trim().to_owned();
    std::fs::remove_file(d.join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();
    let err = call(d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await.unwrap_err();
    assert!(!err.0.is_empty(), "{err:?}");
    assert_eq!(blame_workers(), 0);
}

fn porcelain(d: &Path) -> String {
    git(d, &["status", "--porcelain=v2", "--untracked-files=all"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stage_and_unstage_match_git_add_and_restore() {
    let t = fixture();
    let d = t.path();
    // The same repository twice: one staged by the tools, the other by the git CLI.
    let twin = tempfile::tempdir().unwrap();
    let st = Command::new("cp")
        .args(["-a", &format!("{}/.", d.display()), twin.path().to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(porcelain(d), porcelain(twin.path()), "the twins start equal");
    let r = call_yes(d, "git_stage", json!({"files": ["b.txt", "sub", "gone.txt"]})).await.unwrap();
    assert_eq!(r["status"], "done");
    git(twin.path(), &["add", "-A", "--", "b.txt", "sub", "gone.txt"]);
    assert_eq!(porcelain(d), porcelain(twin.path()));
    let r = call_yes(d, "git_unstage", json!({"files": ["a.txt", "new name.txt", "old name.txt"]}))
        .await
        .unwrap();
    assert_eq!(r["status"], "done");
    git(twin.path(), &["restore", "--staged", "--", "a.txt", "new name.txt", "old name.txt"]);
    assert_eq!(porcelain(d), porcelain(twin.path()));
    call_yes(d, "git_stage", json!({})).await.unwrap();
    git(twin.path(), &["add", "-A"]);
    assert_eq!(porcelain(d), porcelain(twin.path()));
    call_yes(d, "git_unstage", json!({})).await.unwrap();
    git(twin.path(), &["restore", "--staged", "."]);
    assert_eq!(porcelain(d), porcelain(twin.path()));
    let e = call_yes(d, "git_stage", json!({"files": ["no-such-file"]})).await.unwrap_err();
    assert_eq!(e.0, "NOT_FOUND");
    let e = call_yes(d, "git_stage", json!({"files": ["../../x"]})).await.unwrap_err();
    assert_eq!(e.0, "OUTSIDE_WORKSPACE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unstage_works_in_an_unborn_repository() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "a.txt", "a\n");
    write(d, "b.txt", "b\n");
    call_yes(d, "git_stage", json!({"files": "a.txt"})).await.unwrap();
    git(d, &["add", "b.txt"]);
    assert_eq!(git(d, &["status", "--porcelain"]), "A  a.txt\nA  b.txt\n");
    let r = call_yes(d, "git_unstage", json!({"files": ["b.txt"]})).await.unwrap();
    assert_eq!(r["unstaged"], json!(["b.txt"]));
    assert_eq!(git(d, &["status", "--porcelain"]), "A  a.txt\n?? b.txt\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_and_locked_stage_unstage_and_commit_change_nothing() {
    let t = fixture();
    let d = t.path();
    git(d, &["config", "user.name", "Ada"]);
    git(d, &["config", "user.email", "ada@example.com"]);
    let before = snapshot(d);
    for (tool, args) in [
        ("git_stage", json!({})),
        ("git_unstage", json!({})),
        ("git_commit", json!({"message": "m", "stageAll": true})),
    ] {
        let (ctx, prompts) = ctx_with(d, vec![false]);
        let r = call_ctx(&ctx, tool, args.clone()).await.unwrap();
        assert_eq!(r["status"], "declined", "{tool}");
        assert_eq!(prompts.lock().unwrap().len(), 1, "{tool} asked once");
        assert_eq!(snapshot(d), before, "{tool}: declined, byte-identical");
    }
    // A held index.lock: LOCKED, nothing changed, the lock left where it is.
    std::fs::write(d.join(".git/index.lock"), b"held").unwrap();
    let before = snapshot(d);
    for (tool, args) in [
        ("git_stage", json!({})),
        ("git_unstage", json!({})),
        ("git_commit", json!({"message": "m", "stageAll": true})),
    ] {
        let (ctx, prompts) = ctx_with(d, vec![]);
        let e = call_ctx(&ctx, tool, args).await.unwrap_err();
        assert_eq!(e.0, "LOCKED", "{tool}: {}", e.1);
        assert!(prompts.lock().unwrap().is_empty(), "{tool} did not ask");
        assert_eq!(snapshot(d), before, "{tool}: locked, byte-identical");
    }
    assert_eq!(std::fs::read(d.join(".git/index.lock")).unwrap(), b"held");
}

fn commit_repo() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "work"]);
    git(d, &["config", "user.name", "Grace Hopper"]);
    git(d, &["config", "user.email", "grace@example.com"]);
    write(d, "a.txt", "a\n");
    git(d, &["add", "a.txt"]);
    git(d, &["commit", "-q", "-m", "base"]);
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_records_what_git_would() {
    let t = commit_repo();
    let d = t.path();
    // Nothing to commit.
    let e = call_yes(d, "git_commit", json!({"message": "nothing"})).await.unwrap_err();
    assert_eq!(e.0, "NOTHING_TO_COMMIT");
    // Tracked changes are committed when nothing is staged (git commit -a); untracked stay.
    write(d, "a.txt", "a\nb\n");
    write(d, "u.txt", "untracked\n");
    let (ctx, prompts) = ctx_with(d, vec![]);
    let r = call_ctx(&ctx, "git_commit", json!({"message": "change a  \n\n\nbody  \n", "repoPath": "."}))
        .await
        .unwrap();
    assert_eq!(prompts.lock().unwrap().as_slice(), ["Commit 1 file to work: change a"]);
    assert_eq!(r["committed"], true);
    assert_eq!(r["id"], git(d, &["rev-parse", "HEAD"]).trim());
    assert_eq!(
        git(d, &["log", "-1", "--format=%an|%ae|%s|%b|%P"]).trim(),
        format!("Grace Hopper|grace@example.com|change a|body\n|{}", git(d, &["rev-parse", "HEAD~1"]).trim())
    );
    assert_eq!(git(d, &["status", "--porcelain"]), "?? u.txt\n");
    // files: staged then committed (Stack).
    let r = call_yes(d, "git_commit", json!({"message": "add u", "files": ["u.txt"]})).await.unwrap();
    assert_eq!(r["files"], json!(["u.txt"]));
    assert_eq!(git(d, &["show", "--format=", "--name-only", "HEAD"]), "u.txt\n");
    // allowEmpty, then amend (keeps the author, replaces the message).
    call_yes(d, "git_commit", json!({"message": "empty", "allowEmpty": true})).await.unwrap();
    assert_eq!(git(d, &["log", "-1", "--format=%s"]).trim(), "empty");
    let parent = git(d, &["rev-parse", "HEAD~1"]);
    call_yes(d, "git_commit", json!({"message": "amended", "amend": true})).await.unwrap();
    assert_eq!(git(d, &["log", "-1", "--format=%s"]).trim(), "amended");
    assert_eq!(git(d, &["rev-parse", "HEAD~1"]), parent);
    // stageAll (Floyd) includes untracked files.
    write(d, "v.txt", "v\n");
    call_yes(d, "git_commit", json!({"message": "all", "stageAll": true})).await.unwrap();
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    assert_eq!(git(d, &["show", "--format=", "--name-only", "HEAD"]), "v.txt\n");
    assert_eq!(
        call_yes(d, "git_commit", json!({"message": "  \n"})).await.unwrap_err().0,
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        call_yes(d, "git_commit", json!({"message": "x", "files": ["nope"]})).await.unwrap_err().0,
        "NOT_FOUND"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_without_an_identity_is_a_clear_error() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "work"]);
    write(d, "a.txt", "a\n");
    git(d, &["add", "a.txt"]);
    let before = snapshot(d);
    let e = call_yes(d, "git_commit", json!({"message": "first"})).await.unwrap_err();
    assert_eq!(e.0, "INVALID_ARGUMENT");
    assert!(e.1.contains("user.name"), "{}", e.1);
    assert_eq!(snapshot(d), before);
    // A first commit on an unborn branch.
    git(d, &["config", "user.name", "Ada"]);
    git(d, &["config", "user.email", "ada@example.com"]);
    call_yes(d, "git_commit", json!({"message": "first"})).await.unwrap();
    assert_eq!(git(d, &["log", "--format=%s"]), "first\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_hooks_run_and_a_failing_hook_means_no_commit() {
    use std::os::unix::fs::PermissionsExt;
    let t = commit_repo();
    let d = t.path();
    let hook = |name: &str, body: &str| {
        let p = d.join(".git/hooks").join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    hook("pre-commit", "#!/bin/sh\necho 'lint failed: a.txt' >&2\nexit 1\n");
    write(d, "a.txt", "changed\n");
    write(d, "n.txt", "new\n");
    let before = snapshot_no_objects(d);
    let head = git(d, &["rev-parse", "HEAD"]);
    let e = call_yes(d, "git_commit", json!({"message": "m", "stageAll": true})).await.unwrap_err();
    assert_eq!(e.0, "HOOK_FAILED");
    assert!(e.1.contains("lint failed: a.txt"), "{}", e.1);
    assert_eq!(git(d, &["rev-parse", "HEAD"]), head);
    assert_eq!(snapshot_no_objects(d), before, "refs, index and working tree are put back byte for byte");
    // A passing pre-commit and a commit-msg hook that edits the message.
    hook("pre-commit", "#!/bin/sh\ntest -n \"$GIT_INDEX_FILE\"\n");
    hook("commit-msg", "#!/bin/sh\necho 'Signed-off-by: Hook' >> \"$1\"\n");
    let r = call_yes(d, "git_commit", json!({"message": "m", "stageAll": true})).await.unwrap();
    assert_eq!(r["committed"], true);
    assert_eq!(git(d, &["log", "-1", "--format=%B"]).trim(), "m\nSigned-off-by: Hook");
    // commit-msg failing.
    hook("commit-msg", "#!/bin/sh\necho 'bad message' >&2\nexit 3\n");
    write(d, "a.txt", "again\n");
    let head = git(d, &["rev-parse", "HEAD"]);
    let e = call_yes(d, "git_commit", json!({"message": "m2"})).await.unwrap_err();
    assert_eq!(e.0, "HOOK_FAILED");
    assert!(e.1.contains("bad message"), "{}", e.1);
    assert_eq!(git(d, &["rev-parse", "HEAD"]), head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_to_a_protected_branch_asks_again() {
    let t = commit_repo();
    let d = t.path();
    git(d, &["config", "--add", "eddie.protectedBranch", "work"]);
    write(d, "a.txt", "changed\n");
    let before = snapshot(d);
    let (ctx, prompts) = ctx_with(d, vec![true, false]);
    let r = call_ctx(&ctx, "git_commit", json!({"message": "m"})).await.unwrap();
    assert_eq!(r["status"], "declined");
    let p = prompts.lock().unwrap().clone();
    assert_eq!(p.len(), 2);
    assert!(
        p[1].contains("work is a protected branch") && p[1].contains("eddie.protectedBranch"),
        "{}",
        p[1]
    );
    assert_eq!(snapshot(d), before);
    let (ctx, prompts) = ctx_with(d, vec![true, true]);
    call_ctx(&ctx, "git_commit", json!({"message": "m"})).await.unwrap();
    assert_eq!(prompts.lock().unwrap().len(), 2);
    assert_eq!(git(d, &["log", "-1", "--format=%s"]).trim(), "m");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn branch_list_create_switch_delete_with_git_refusals() {
    let t = commit_repo();
    let d = t.path();
    // Stack's create: creates and switches.
    let r = call_yes(d, "git_branch", json!({"create": "feature/x"})).await.unwrap();
    assert_eq!(r["switched"], true);
    assert_eq!(git(d, &["branch", "--show-current"]).trim(), "feature/x");
    write(d, "a.txt", "on feature\n");
    git(d, &["commit", "-q", "-am", "feature work"]);
    // Floyd's list and current.
    let l = call_yes(d, "git_branch", json!({"action": "list"})).await.unwrap();
    let names: Vec<&str> =
        l["branches"].as_array().unwrap().iter().map(|b| b["name"].as_str().unwrap()).collect();
    let want = git(d, &["branch", "--format=%(refname:short)"]);
    assert_eq!(names, want.lines().collect::<Vec<_>>());
    assert_eq!(
        call_yes(d, "git_branch", json!({"action": "current"})).await.unwrap()["current"],
        "feature/x"
    );
    // A switch that would overwrite a local change is refused, naming the file; nothing changes.
    write(d, "a.txt", "local edit\n");
    let before = snapshot(d);
    let e = call_yes(d, "git_branch", json!({"action": "switch", "name": "work"})).await.unwrap_err();
    assert_eq!(e.0, "DIRTY_WORKTREE");
    assert!(e.1.contains("a.txt"), "{}", e.1);
    assert_eq!(snapshot(d), before);
    let out = git_raw(d, &["switch", "work"]);
    assert!(!out.status.success(), "git refuses it too");
    // A local change that does not conflict is carried over, as git does.
    write(d, "a.txt", "on feature\n");
    write(d, "new.txt", "untracked\n");
    call_yes(d, "git_branch", json!({"action": "switch", "name": "work"})).await.unwrap();
    assert_eq!(git(d, &["branch", "--show-current"]).trim(), "work");
    assert_eq!(git(d, &["status", "--porcelain"]), "?? new.txt\n");
    // Delete: the unmerged branch needs force; a declined delete changes nothing.
    let e = call_yes(d, "git_branch", json!({"delete": "feature/x"})).await.unwrap_err();
    assert_eq!(e.0, "INVALID_ARGUMENT");
    assert!(e.1.contains("not fully merged"), "{}", e.1);
    let before = snapshot(d);
    let (ctx, _) = ctx_with(d, vec![false]);
    let r = call_ctx(&ctx, "git_branch", json!({"action": "delete", "name": "feature/x", "force": true}))
        .await
        .unwrap();
    assert_eq!(r["status"], "declined");
    assert_eq!(snapshot(d), before);
    call_yes(d, "git_branch", json!({"action": "delete", "name": "feature/x", "force": true})).await.unwrap();
    assert!(git(d, &["branch", "--list", "feature/x"]).is_empty());
    // Refusals: the current branch, a missing one, a bad name, an existing one.
    assert_eq!(call_yes(d, "git_branch", json!({"delete": "work"})).await.unwrap_err().0, "INVALID_ARGUMENT");
    assert_eq!(
        call_yes(d, "git_branch", json!({"action": "switch", "name": "nope"})).await.unwrap_err().0,
        "REF_NOT_FOUND"
    );
    assert_eq!(
        call_yes(d, "git_branch", json!({"action": "create", "name": "--upload-pack=x"}))
            .await
            .unwrap_err()
            .0,
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        call_yes(d, "git_branch", json!({"action": "create", "name": "work"})).await.unwrap_err().0,
        "ALREADY_EXISTS"
    );
    assert_eq!(
        call_yes(d, "git_branch", json!({"action": "create", "name": "x", "startPoint": "nope"}))
            .await
            .unwrap_err()
            .0,
        "REF_NOT_FOUND"
    );
    // A protected branch asks twice before deletion.
    git(d, &["branch", "main"]);
    let (ctx, prompts) = ctx_with(d, vec![true, false]);
    let r = call_ctx(&ctx, "git_branch", json!({"delete": "main"})).await.unwrap();
    assert_eq!(r["status"], "declined");
    assert!(prompts.lock().unwrap()[1].contains("main is a protected branch"));
    assert!(!git(d, &["branch", "--list", "main"]).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_branches_from_config_or_defaults() {
    let t = commit_repo();
    let d = t.path();
    for (b, want) in
        [("main", true), ("master", true), ("release/1.0", true), ("release/1/x", false), ("work", false)]
    {
        let r = call(d, "is_protected_branch", json!({"branch": b, "repoPath": "."})).await.unwrap();
        assert_eq!(r["protected"], want, "{b}");
    }
    assert_eq!(call(d, "is_protected_branch", json!({})).await.unwrap()["branch"], "work");
    git(d, &["config", "--add", "eddie.protectedBranch", "work"]);
    git(d, &["config", "--add", "eddie.protectedBranch", "prod/*"]);
    for (b, want) in [("main", false), ("work", true), ("prod/eu", true)] {
        let r = call(d, "is_protected_branch", json!({"branch": b})).await.unwrap();
        assert_eq!(r["protected"], want, "{b}");
        assert!(r["source"].as_str().unwrap().contains("eddie.protectedBranch"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_snapshot_and_restore_without_touching_index_head_or_branches() {
    use std::os::unix::fs::PermissionsExt;
    let t = fixture();
    let d = t.path();
    std::fs::write(d.join(".gitignore"), "ignored/\n").unwrap();
    write(d, "ignored/keep.txt", "ignored stays\n");
    std::fs::set_permissions(d.join("b.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
    let state = |d: &Path| {
        (
            git(d, &["rev-parse", "HEAD"]),
            std::fs::read(d.join(".git/index")).unwrap(),
            git(d, &["for-each-ref", "refs/heads"]),
        )
    };
    let before_state = state(d);
    let tree_before =
        snapshot_with(d, false).into_iter().filter(|(k, _)| !k.starts_with(".git")).collect::<Vec<_>>();
    let cp = call_yes(d, "git_checkpoint", json!({"message": "before the mess"})).await.unwrap();
    let id = cp["id"].as_str().unwrap().to_owned();
    assert!(cp["ref"].as_str().unwrap().starts_with("refs/eddie/checkpoints/"));
    assert_eq!(state(d), before_state, "index, HEAD and branches untouched");
    // The checkpoint holds the working tree (untracked included, ignored not), as git sees it.
    let files = git(d, &["ls-tree", "-r", "--name-only", cp["commit"].as_str().unwrap()]);
    for f in ["a.txt", "new.txt", "sub/deep/x.txt", "link", "b.txt"] {
        assert!(files.lines().any(|l| l == f), "{f} in {files}");
    }
    assert!(!files.contains("ignored/") && !files.contains("gone.txt"));
    // Mess up the tree, then restore.
    write(d, "a.txt", "garbage\n");
    std::fs::remove_file(d.join("new.txt")).unwrap();
    write(d, "junk/created.txt", "junk\n");
    std::fs::remove_file(d.join("link")).unwrap();
    std::fs::set_permissions(d.join("b.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let (ctx, prompts) = ctx_with(d, vec![false]);
    let declined = snapshot(d);
    let r = call_ctx(&ctx, "git_restore_checkpoint", json!({"checkpoint": id})).await.unwrap();
    assert_eq!(r["status"], "declined");
    assert!(prompts.lock().unwrap()[0].contains("junk/created.txt"));
    assert_eq!(snapshot(d), declined, "declined: byte-identical");
    let r = call_yes(d, "git_restore_checkpoint", json!({"checkpoint": id})).await.unwrap();
    assert_eq!(r["status"], "restored");
    let tree_after =
        snapshot_with(d, false).into_iter().filter(|(k, _)| !k.starts_with(".git")).collect::<Vec<_>>();
    assert_eq!(tree_after, tree_before, "the working tree is back, byte for byte (ignored files untouched)");
    assert_eq!(std::fs::metadata(d.join("b.txt")).unwrap().permissions().mode() & 0o111, 0o111);
    assert_eq!(std::fs::read_link(d.join("link")).unwrap(), Path::new("a.txt"));
    assert_eq!(state(d), before_state);
    // The state before the restore was checkpointed: restoring it brings the mess back.
    let before = r["before"].as_str().unwrap().to_owned();
    let list = call(d, "git_list_checkpoints", json!({})).await.unwrap();
    assert_eq!(list["count"], 2);
    assert_eq!(list["checkpoints"][0]["id"], before.as_str());
    call_yes(d, "git_restore_checkpoint", json!({"checkpoint": "latest"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(d.join("junk/created.txt")).unwrap(), "junk\n");
    assert!(!d.join("new.txt").exists());
    assert_eq!(
        call_yes(d, "git_restore_checkpoint", json!({"checkpoint": "nope"})).await.unwrap_err().0,
        "REF_NOT_FOUND"
    );
    assert_eq!(
        call_yes(d, "git_restore_checkpoint", json!({"checkpoint": "../../heads/main"})).await.unwrap_err().0,
        "REF_NOT_FOUND"
    );
}

/// A bare remote (by path or file://) with one commit, and a clone of it with an identity.
fn remote_pair(file_url: bool) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let bare = t.path().join("origin.git");
    let work = t.path().join("work");
    let seed = t.path().join("seed");
    git(t.path(), &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()]);
    git(t.path(), &["init", "-q", "-b", "main", seed.to_str().unwrap()]);
    write(&seed, "f.txt", "one\ntwo\nthree\n");
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "base"]);
    git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    let url = if file_url { format!("file://{}", bare.display()) } else { bare.display().to_string() };
    git(t.path(), &["clone", "-q", &url, work.to_str().unwrap()]);
    git(&work, &["config", "user.name", "Ada"]);
    git(&work, &["config", "user.email", "ada@example.com"]);
    git(&seed, &["remote", "add", "origin", bare.to_str().unwrap()]);
    git(&seed, &["fetch", "-q", "origin"]);
    git(&seed, &["branch", "-q", "-u", "origin/main"]);
    (t, work, seed)
}

fn refs(d: &Path) -> String {
    git(d, &["for-each-ref", "--format=%(refname) %(objectname)"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_fast_forward_refuses_non_fast_forward_and_protects_force() {
    for file_url in [false, true] {
        let (t, work, seed) = remote_pair(file_url);
        let bare = t.path().join("origin.git");
        let ws = t.path();
        let w = |rel: &str| work.join(rel);
        write(&work, "f.txt", "one\ntwo\nthree\nfour\n");
        git(&work, &["commit", "-q", "-am", "four"]);
        write(&work, "g.txt", "g\n");
        git(&work, &["add", "g.txt"]);
        git(&work, &["commit", "-q", "-m", "g"]);
        let _ = w;
        let ctx = |answers| ctx_with(ws, answers);
        // Declined: nothing sent.
        let remote_before = refs(&bare);
        let (c, prompts) = ctx(vec![false]);
        let r = call_ctx(&c, "git_push", json!({"path": "work", "branch": "feature"})).await;
        assert_eq!(r.unwrap_err().0, "REF_NOT_FOUND");
        let r = call_ctx(&c, "git_push", json!({"repoPath": "work"})).await.unwrap();
        assert_eq!(r["status"], "declined");
        assert_eq!(prompts.lock().unwrap()[0], "Push main → origin/main (2 commits)");
        assert_eq!(refs(&bare), remote_before);
        // main is protected by default: the second question.
        let (c, prompts) = ctx(vec![true, true]);
        let r = call_ctx(&c, "git_push", json!({"repoPath": "work"})).await.unwrap();
        assert_eq!(r["status"], "pushed");
        assert!(prompts.lock().unwrap()[1].contains("main is a protected branch"));
        assert_eq!(git(&bare, &["rev-parse", "main"]), git(&work, &["rev-parse", "main"]));
        assert_eq!(git(&work, &["rev-parse", "origin/main"]), git(&work, &["rev-parse", "main"]));
        let r = call_yes(ws, "git_push", json!({"path": "work"})).await.unwrap();
        assert_eq!(r["status"], "up-to-date");
        // Someone else pushes: ours is no longer a fast-forward.
        git(&seed, &["pull", "-q", "--ff-only"]);
        write(&seed, "s.txt", "s\n");
        git(&seed, &["add", "s.txt"]);
        git(&seed, &["commit", "-q", "-m", "theirs"]);
        git(&seed, &["push", "-q", "origin", "main"]);
        write(&work, "h.txt", "h\n");
        git(&work, &["add", "h.txt"]);
        git(&work, &["commit", "-q", "-m", "mine"]);
        let remote_before = refs(&bare);
        let e = call_yes(ws, "git_push", json!({"path": "work"})).await.unwrap_err();
        assert_eq!(e.0, "NON_FAST_FORWARD");
        let e = call_yes(ws, "git_push", json!({"path": "work", "force": true})).await.unwrap_err();
        assert_eq!(e.0, "PROTECTED_BRANCH");
        assert_eq!(refs(&bare), remote_before);
        // A force push to an unprotected branch is allowed.
        git(&work, &["config", "--add", "eddie.protectedBranch", "release/*"]);
        let r = call_yes(ws, "git_push", json!({"path": "work", "force": true})).await.unwrap();
        assert_eq!(r["force"], true);
        assert_eq!(git(&bare, &["rev-parse", "main"]), git(&work, &["rev-parse", "main"]));
        // A new branch.
        git(&work, &["checkout", "-q", "-b", "topic"]);
        let r = call_yes(ws, "git_push", json!({"path": "work"})).await.unwrap();
        assert_eq!(r["status"], "pushed");
        assert_eq!(git(&bare, &["rev-parse", "topic"]), git(&work, &["rev-parse", "topic"]));
        // Other schemes are refused (http(s) and ssh are served: tests/git_http.rs,
        // tests/git_ssh.rs; here an ssh host does not resolve), as is a missing remote.
        git(&work, &["remote", "add", "net", "git://example.com/r.git"]);
        git(&work, &["remote", "add", "ftp", "ftp://example.com/r.git"]);
        for remote in ["net", "ftp"] {
            assert_eq!(
                call_yes(ws, "git_push", json!({"path": "work", "remote": remote})).await.unwrap_err().0,
                "UNSUPPORTED_SCHEME"
            );
        }
        git(&work, &["remote", "add", "scp", "git@nowhere.invalid:r.git"]);
        assert_eq!(
            call_yes(ws, "git_push", json!({"path": "work", "remote": "scp"})).await.unwrap_err().0,
            "DNS"
        );
        assert_eq!(
            call_yes(ws, "git_push", json!({"path": "work", "remote": "nope"})).await.unwrap_err().0,
            "REF_NOT_FOUND"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_fast_forwards_merges_cleanly_or_changes_nothing() {
    let (t, work, seed) = remote_pair(false);
    let ws = t.path();
    let advance = |file: &str, text: &str, msg: &str| {
        write(&seed, file, text);
        git(&seed, &["add", "-A"]);
        git(&seed, &["commit", "-q", "-m", msg]);
        git(&seed, &["push", "-q", "origin", "main"]);
    };
    // Fast-forward.
    advance("n.txt", "new\n", "theirs 1");
    let (c, prompts) = ctx_with(ws, vec![false]);
    let before = snapshot(&work);
    let r = call_ctx(&c, "git_pull", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["status"], "declined");
    assert_eq!(prompts.lock().unwrap()[0], "Pull origin/main into main: fast-forward (1 new commit)");
    assert_eq!(snapshot(&work), before, "declined: nothing fetched, nothing changed");
    let r = call_yes(ws, "git_pull", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["kind"], "fast-forward");
    assert_eq!(git(&work, &["rev-parse", "HEAD"]), git(&seed, &["rev-parse", "HEAD"]));
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
    assert_eq!(call_yes(ws, "git_pull", json!({"path": "work"})).await.unwrap()["status"], "up-to-date");
    // Diverged without conflict: a clean merge commit.
    advance("f.txt", "ONE\ntwo\nthree\n", "theirs 2");
    write(&work, "f.txt", "one\ntwo\nTHREE\n");
    git(&work, &["commit", "-q", "-am", "mine"]);
    let r = call_yes(ws, "git_pull", json!({"path": "work"})).await.unwrap();
    assert_eq!(r["kind"], "merge");
    assert_eq!(std::fs::read_to_string(work.join("f.txt")).unwrap(), "ONE\ntwo\nTHREE\n");
    assert_eq!(git(&work, &["rev-list", "--parents", "-1", "HEAD"]).split_whitespace().count(), 3);
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
    // A conflicting merge: MERGE_CONFLICT, nothing changed (not even fetched).
    advance("f.txt", "ONE\ntwo\nthree!\n", "theirs 3");
    write(&work, "f.txt", "ONE\ntwo\nthree?\n");
    git(&work, &["commit", "-q", "-am", "mine 2"]);
    let before = snapshot(&work);
    let e = call_yes(ws, "git_pull", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(e.0, "MERGE_CONFLICT");
    assert!(e.1.contains("f.txt"), "{}", e.1);
    assert_eq!(snapshot(&work), before);
    // Local changes in the way: DIRTY_WORKTREE.
    git(&work, &["reset", "-q", "--hard", "origin/main"]);
    advance("n.txt", "newer\n", "theirs 4");
    write(&work, "n.txt", "local edit\n");
    let before = snapshot(&work);
    let e = call_yes(ws, "git_pull", json!({"path": "work"})).await.unwrap_err();
    assert_eq!(e.0, "DIRTY_WORKTREE");
    assert!(e.1.contains("n.txt"));
    assert_eq!(snapshot(&work), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ref_named_like_a_flag_never_starts_a_process() {
    use std::os::unix::fs::PermissionsExt;
    let (t, work, _seed) = remote_pair(false);
    let ws = t.path();
    let marker = ws.join("pwned");
    let evil = ws.join("evil.sh");
    std::fs::write(&evil, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&evil, std::fs::Permissions::from_mode(0o755)).unwrap();
    let name = format!("--upload-pack={}", evil.display());
    // A branch really named like the flag (git's own porcelain refuses to create one).
    let head = git(&work, &["rev-parse", "HEAD"]);
    std::fs::create_dir_all(work.join(".git/refs/heads")).unwrap();
    let refname = "--upload-pack=evil".to_owned();
    std::fs::write(work.join(".git/refs/heads").join(&refname), &head).unwrap();
    let before = eddie_tools_core::engine::process::supervisor::live_count();
    let _ = call_yes(ws, "git_log", json!({"path": "work", "revision": refname})).await.unwrap();
    let _ = call_yes(ws, "git_diff", json!({"path": "work", "from": refname})).await.unwrap();
    let _ = call_yes(ws, "git_show", json!({"path": "work", "revision": refname})).await.unwrap();
    let _ = call_yes(ws, "git_push", json!({"path": "work", "branch": refname})).await;
    let _ = call_yes(ws, "git_push", json!({"path": "work", "branch": name.clone()})).await;
    let _ = call_yes(ws, "git_pull", json!({"path": "work", "branch": name.clone()})).await;
    let _ = call_yes(ws, "git_pull", json!({"path": "work", "remote": name.clone()})).await;
    let _ =
        call_yes(ws, "git_branch", json!({"path": "work", "action": "switch", "name": name.clone()})).await;
    let _ = call_yes(ws, "git_log", json!({"path": "work", "revision": name})).await;
    assert!(!marker.exists(), "no process ran");
    assert_eq!(eddie_tools_core::engine::process::supervisor::live_count(), before);
}

/// Write `rel` and commit it alone with message `msg`.
fn commit_file(d: &Path, rel: &str, text: &str, msg: &str) {
    write(d, rel, text);
    git(d, &["add", rel]);
    git(d, &["commit", "-q", "-m", msg]);
}

// ---- issue 23: the workspace is the boundary, whatever the repository's config says ----

/// An executable script at `p` that appends its name to `marker` when it runs.
fn script(p: &Path, marker: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, format!("#!/bin/sh\necho \"$0\" >> '{}'\n", marker.display())).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_worktree_outside_the_workspace_is_refused_by_every_tool() {
    let ws_t = commit_repo();
    let ws = ws_t.path();
    git(ws, &["branch", "other"]);
    let out_t = tempfile::tempdir().unwrap();
    let outside = out_t.path();
    write(outside, "a.txt", "outside a\n");
    write(outside, "secret.txt", "the secret\n");
    git(ws, &["config", "core.worktree", outside.to_str().unwrap()]);
    // The oracle: git itself now reads the outside folder as the work tree.
    assert!(git(ws, &["status", "--porcelain"]).contains("secret.txt"));
    let before_out = snapshot(outside);
    let before_ws = snapshot(ws);
    let calls = [
        ("git_status", json!({})),
        ("git_diff", json!({})),
        ("git_diff", json!({"from": "HEAD"})),
        ("git_show", json!({})),
        ("git_log", json!({"files": true})),
        ("git_blame", json!({"file": "a.txt"})),
        ("git_stage", json!({})),
        ("git_unstage", json!({})),
        ("git_commit", json!({"message": "steal", "stageAll": true})),
        ("git_commit", json!({"message": "steal"})),
        ("git_branch", json!({"action": "switch", "name": "other"})),
        ("git_branch", json!({"create": "x"})),
        ("git_checkpoint", json!({})),
        ("git_restore_checkpoint", json!({"checkpoint": "latest"})),
        ("is_protected_branch", json!({})),
    ];
    for (tool, args) in calls {
        let e = call_yes(ws, tool, args.clone()).await.unwrap_err();
        assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{tool} {args}: {}", e.1);
        assert!(e.1.contains("core.worktree"), "{tool}: {}", e.1);
    }
    assert_eq!(snapshot(outside), before_out, "nothing outside was written");
    assert_eq!(snapshot(ws), before_ws, "nothing inside changed either");
    assert_eq!(git(ws, &["ls-tree", "-r", "--name-only", "HEAD"]), "a.txt\n");
    // A work tree inside the workspace is fine.
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    write(ws, "sub/n.txt", "n\n");
    git(ws, &["config", "core.worktree", ws.join("sub").to_str().unwrap()]);
    let r = call_yes(ws, "git_status", json!({})).await.unwrap();
    assert!(r["entries"].as_array().unwrap().iter().any(|e| e["path"] == "n.txt"), "{r}");
}

/// An outer repository with the workspace at `outer/ws`: `top.txt` outside the workspace,
/// `ws/in.txt` inside; branch `other` changes both, branch `inner` only `ws/in.txt`.
fn enclosing_repo() -> tempfile::TempDir {
    let t = commit_repo();
    let d = t.path();
    write(d, "top.txt", "top\n");
    write(d, "ws/in.txt", "in\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "layout"]);
    git(d, &["checkout", "-q", "-b", "other"]);
    write(d, "top.txt", "top on other\n");
    write(d, "ws/in.txt", "in on other\n");
    git(d, &["commit", "-q", "-am", "other"]);
    git(d, &["checkout", "-q", "work"]);
    git(d, &["checkout", "-q", "-b", "inner"]);
    write(d, "ws/in.txt", "in on inner\n");
    git(d, &["commit", "-q", "-am", "inner"]);
    git(d, &["checkout", "-q", "work"]);
    t
}

fn paths(files: &Value) -> Vec<String> {
    files.as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_inside_a_larger_repository_reads_and_writes_only_inside_it() {
    let t = enclosing_repo();
    let outer = t.path();
    let ws = outer.join("ws");
    let marker = outer.join("hook-ran");
    script(&outer.join(".git/hooks/pre-commit"), &marker);
    // Local changes on both sides of the boundary.
    write(outer, "top.txt", "top edited outside\n");
    write(outer, "untracked-secret.txt", "secret\n");
    write(outer, "ws/in.txt", "in edited\n");
    write(outer, "ws/new.txt", "new\n");
    // Reads: only the workspace's paths.
    let d = call_yes(&ws, "git_diff", json!({})).await.unwrap();
    assert_eq!(paths(&d["files"]), ["ws/in.txt"], "{d}");
    assert!(!d["patch"].as_str().unwrap().contains("top"), "{d}");
    let d = call_yes(&ws, "git_diff", json!({"from": "work", "to": "other"})).await.unwrap();
    assert_eq!(paths(&d["files"]), ["ws/in.txt"]);
    let d = call_yes(&ws, "git_diff", json!({"from": "other"})).await.unwrap();
    assert_eq!(paths(&d["files"]), ["ws/in.txt"], "{d}");
    let s = call_yes(&ws, "git_show", json!({"revision": "other"})).await.unwrap();
    assert_eq!(paths(&s["files"]), ["ws/in.txt"]);
    assert!(!s["patch"].as_str().unwrap().contains("top on other"));
    let l =
        call_yes(&ws, "git_log", json!({"revision": "other", "files": true, "maxCount": 1})).await.unwrap();
    assert_eq!(paths(&l["commits"][0]["files"]), ["ws/in.txt"]);
    let st = call_yes(&ws, "git_status", json!({})).await.unwrap();
    let entries: Vec<&str> =
        st["entries"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert_eq!(entries, ["ws/in.txt", "ws/new.txt"], "{st}");
    // Writes: a switch that would change top.txt is refused and changes nothing.
    let before = snapshot(outer);
    let e = call_yes(&ws, "git_branch", json!({"action": "switch", "name": "other"})).await.unwrap_err();
    assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{}", e.1);
    assert!(e.1.contains("top.txt"), "{}", e.1);
    assert_eq!(snapshot(outer), before);
    let e = call_yes(
        &ws,
        "git_branch",
        json!({"action": "create", "name": "y", "startPoint": "other", "checkout": true}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{}", e.1);
    assert_eq!(snapshot(outer), before);
    // Staging everything stages only the workspace's changes.
    call_yes(&ws, "git_stage", json!({})).await.unwrap();
    assert_eq!(git(outer, &["diff", "--cached", "--name-only"]), "ws/in.txt\nws/new.txt\n");
    // A commit of everything takes only the workspace's changes; the outside hook never runs.
    let c = call_yes(&ws, "git_commit", json!({"message": "inside", "stageAll": true})).await.unwrap();
    assert_eq!(git(outer, &["show", "--format=", "--name-only", "HEAD"]), "ws/in.txt\nws/new.txt\n");
    assert_eq!(c["files"], json!(["ws/in.txt", "ws/new.txt"]));
    assert!(!marker.exists(), "the hook outside the workspace did not run");
    assert_eq!(c["hooks"]["skipped"][0]["name"], "pre-commit", "{c}");
    assert_eq!(std::fs::read_to_string(outer.join("top.txt")).unwrap(), "top edited outside\n");
    // Something staged outside the workspace is never committed with it.
    git(outer, &["add", "top.txt"]);
    write(outer, "ws/in.txt", "in edited again\n");
    let before = snapshot(outer);
    let e = call_yes(&ws, "git_commit", json!({"message": "m", "files": ["in.txt"]})).await.unwrap_err();
    assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{}", e.1);
    assert!(e.1.contains("top.txt"), "{}", e.1);
    assert_eq!(snapshot(outer), before);
    git(outer, &["restore", "--staged", "top.txt"]);
    git(outer, &["checkout", "-q", "--", "ws/in.txt"]);
    // A switch that only changes the workspace's files is done, and leaves the rest alone.
    call_yes(&ws, "git_branch", json!({"action": "switch", "name": "inner"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(ws.join("in.txt")).unwrap(), "in on inner\n");
    assert_eq!(std::fs::read_to_string(outer.join("top.txt")).unwrap(), "top edited outside\n");
    // A checkpoint holds only the workspace's files.
    let cp = call_yes(&ws, "git_checkpoint", json!({})).await.unwrap();
    let tree = git(outer, &["ls-tree", "-r", "--name-only", cp["commit"].as_str().unwrap()]);
    assert!(tree.lines().all(|l| l.starts_with("ws/")), "{tree}");
    assert!(!tree.contains("untracked-secret"), "{tree}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_never_writes_through_a_symlinked_folder_that_leads_outside() {
    let t = commit_repo();
    let d = t.path();
    git(d, &["checkout", "-q", "-b", "other"]);
    write(d, "dir/file.txt", "on other\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "dir"]);
    git(d, &["checkout", "-q", "work"]);
    let out_t = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(out_t.path(), d.join("dir")).unwrap();
    let before_out = snapshot(out_t.path());
    let before = snapshot(d);
    let e = call_yes(d, "git_branch", json!({"action": "switch", "name": "other"})).await.unwrap_err();
    assert_eq!(e.0, "OUTSIDE_WORKSPACE", "{}", e.1);
    assert!(e.1.contains("dir/file.txt"), "{}", e.1);
    assert_eq!(snapshot(out_t.path()), before_out);
    assert_eq!(snapshot(d), before);
    // A tracked symlink pointing outside is replaced by a switch, never written through.
    git(d, &["checkout", "-q", "-b", "links"]);
    std::fs::remove_file(d.join("dir")).unwrap();
    std::os::unix::fs::symlink(out_t.path().join("target.txt"), d.join("link")).unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "link"]);
    git(d, &["checkout", "-q", "work"]);
    std::fs::remove_file(d.join("link")).ok();
    commit_file(d, "link", "a file on work\n", "a file named link");
    call_yes(d, "git_branch", json!({"action": "switch", "name": "links"})).await.unwrap();
    assert!(std::fs::symlink_metadata(d.join("link")).unwrap().file_type().is_symlink());
    assert_eq!(snapshot(out_t.path()), before_out, "nothing written outside");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_outside_the_workspace_never_run_and_the_confirm_names_the_hooks_that_will() {
    use std::os::unix::fs::PermissionsExt;
    let t = commit_repo();
    let d = t.path();
    let out_t = tempfile::tempdir().unwrap();
    let marker = out_t.path().join("ran");
    // core.hooksPath outside the workspace: the hook is skipped, and the result says so.
    script(&out_t.path().join("hooks/pre-commit"), &marker);
    git(d, &["config", "core.hooksPath", out_t.path().join("hooks").to_str().unwrap()]);
    write(d, "a.txt", "1\n");
    let (ctx, prompts) = ctx_with(d, vec![]);
    let r = call_ctx(&ctx, "git_commit", json!({"message": "one"})).await.unwrap();
    assert_eq!(r["committed"], true);
    assert!(!marker.exists(), "the outside hook never ran");
    assert_eq!(r["hooks"]["ran"], json!([]));
    assert_eq!(r["hooks"]["skipped"][0]["name"], "pre-commit");
    let p = prompts.lock().unwrap().clone();
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].contains("will not run") && p[0].contains("outside the workspace"), "{p:?}");
    // A hook inside the workspace reached through a symlink to the outside is skipped too.
    git(d, &["config", "--unset", "core.hooksPath"]);
    std::fs::create_dir_all(d.join(".git/hooks")).unwrap();
    std::os::unix::fs::symlink(out_t.path().join("hooks/pre-commit"), d.join(".git/hooks/pre-commit"))
        .unwrap();
    write(d, "a.txt", "2\n");
    let r = call_yes(d, "git_commit", json!({"message": "two"})).await.unwrap();
    assert_eq!(r["hooks"]["skipped"][0]["name"], "pre-commit", "{r}");
    assert!(!marker.exists());
    // core.hooksPath inside the workspace: the hooks run, and a prompt of their own says so.
    std::fs::remove_file(d.join(".git/hooks/pre-commit")).unwrap();
    let inside = d.join("ci-hooks");
    let inner_marker = d.join(".git/inner-ran");
    script(&inside.join("pre-commit"), &inner_marker);
    script(&inside.join("commit-msg"), &inner_marker);
    std::fs::set_permissions(inside.join("commit-msg"), std::fs::Permissions::from_mode(0o755)).unwrap();
    git(d, &["config", "core.hooksPath", "ci-hooks"]);
    write(d, "a.txt", "3\n");
    let (ctx, prompts) = ctx_with(d, vec![true, false]);
    let r = call_ctx(&ctx, "git_commit", json!({"message": "three"})).await.unwrap();
    assert_eq!(r["status"], "declined", "declining the hooks prompt declines the commit");
    assert!(!inner_marker.exists());
    let p = prompts.lock().unwrap().clone();
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(p[1].contains("pre-commit") && p[1].contains("commit-msg") && p[1].contains("ci-hooks"), "{p:?}");
    let r = call_yes(d, "git_commit", json!({"message": "three"})).await.unwrap();
    assert_eq!(r["hooks"]["ran"], json!(["pre-commit", "commit-msg"]), "{r}");
    assert_eq!(std::fs::read_to_string(&inner_marker).unwrap().lines().count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_concurrent_commits_each_keep_exactly_their_own_files_and_message() {
    let t = commit_repo();
    let d = t.path();
    for i in 0..10 {
        write(d, &format!("f{i}.txt"), &format!("file {i}\n"));
    }
    let mut tasks = Vec::new();
    for i in 0..10 {
        let dir = d.to_path_buf();
        tasks.push(tokio::spawn(async move {
            call_yes(
                &dir,
                "git_commit",
                json!({"message": format!("add f{i}"), "files": [format!("f{i}.txt")]}),
            )
            .await
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let r = t.await.unwrap().unwrap_or_else(|e| panic!("commit {i}: {e:?}"));
        assert_eq!(r["committed"], true);
        assert_eq!(r["files"], json!([format!("f{i}.txt")]), "{r}");
    }
    // The history is linear: base and ten commits, each with one parent, each with its own file.
    let log = git(d, &["log", "--format=%H %P|%s"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 11, "{log}");
    let mut seen = std::collections::BTreeSet::new();
    for l in &lines[..10] {
        let (ids, subject) = l.split_once('|').unwrap();
        let ids: Vec<&str> = ids.split(' ').collect();
        assert_eq!(ids.len(), 2, "one parent: {l}");
        let i = subject.strip_prefix("add f").unwrap();
        assert_eq!(git(d, &["show", "--format=", "--name-only", ids[0]]), format!("f{i}.txt\n"), "{l}");
        assert!(seen.insert(i.to_owned()));
    }
    assert_eq!(seen.len(), 10);
    assert_eq!(git(d, &["status", "--porcelain"]), "");
    assert!(!d.join(".git/index.lock").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ref_moved_by_another_process_mid_commit_is_retried_not_internal() {
    let t = commit_repo();
    let d = t.path();
    // A side commit made by "another process" (the pre-commit hook) that moves the branch.
    commit_file(d, "side.txt", "side\n", "side");
    let side = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
    git(d, &["reset", "-q", "--hard", "HEAD~1"]);
    let hook = d.join(".git/hooks/pre-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(&hook, format!("#!/bin/sh\ngit update-ref refs/heads/work {side}\n")).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    write(d, "mine.txt", "mine\n");
    let r = call_yes(d, "git_commit", json!({"message": "mine", "files": ["mine.txt"]})).await.unwrap();
    assert_eq!(r["committed"], true);
    assert_eq!(git(d, &["rev-parse", "HEAD~1"]).trim(), side, "the commit went on top of the moved branch");
    assert_eq!(git(d, &["log", "-1", "--format=%s"]).trim(), "mine");
    assert!(git(d, &["show", "--format=", "--name-only", "HEAD"]).contains("mine.txt"));
    // Another process holding index.lock for a moment: the commit waits for it, then goes on.
    std::fs::remove_file(&hook).unwrap();
    write(d, "later.txt", "later\n");
    let lock = d.join(".git/index.lock");
    let (ctx, _) = ctx_with(d, vec![]);
    let l2 = lock.clone();
    let confirm: eddie_tools_core::context::ConfirmFn = Arc::new(move |_m: String| {
        // Taken after the plan, released 300 ms later.
        std::fs::write(&l2, b"other").unwrap();
        let l3 = l2.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            std::fs::remove_file(&l3).unwrap();
        });
        Box::pin(async { Ok(true) })
    });
    let ctx = ctx.with_confirm(confirm);
    let r = call_ctx(&ctx, "git_commit", json!({"message": "later", "files": ["later.txt"]})).await.unwrap();
    assert_eq!(r["committed"], true);
    assert_eq!(git(d, &["log", "-1", "--format=%s"]).trim(), "later");
    assert!(!lock.exists());
}

// ---- issue 27: git's order, Stack's commit, and what git refuses ----

/// `git` with the committer (and author) date set to `date`.
fn git_at(dir: &Path, date: &str, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Our `git_log` ids against `git log --format=%H <flags>` for every order and a few ranges.
async fn assert_log_order(d: &Path, what: &str) {
    for (order, flag) in [
        (None, None),
        (Some("default"), None),
        (Some("topo"), Some("--topo-order")),
        (Some("date"), Some("--date-order")),
    ] {
        for rev in [None, Some("HEAD~1"), Some("side..main"), Some("main..side")] {
            let mut args = vec!["log", "--format=%H"];
            args.extend(flag);
            args.extend(rev);
            let want: Vec<String> = git(d, &args).lines().map(str::to_owned).collect();
            let mut call_args = json!({"maxCount": 1000});
            if let Some(o) = order {
                call_args["order"] = json!(o);
            }
            if let Some(r) = rev {
                call_args["revision"] = json!(r);
            }
            let r = call(d, "git_log", call_args.clone()).await.unwrap();
            let ours: Vec<String> = r["commits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_owned())
                .collect();
            let subjects = |ids: &[String]| -> Vec<String> {
                ids.iter().map(|i| git(d, &["log", "-1", "--format=%s", i]).trim().to_owned()).collect()
            };
            assert_eq!(subjects(&ours), subjects(&want), "{what}: order {order:?} rev {rev:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_comes_out_in_gits_order_same_second_commits_and_merges_included() {
    // Five commits in one second: git log lists them newest first, in parent order.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    for i in 0..5 {
        commit_file(d, "f.txt", &format!("{i}\n"), &format!("c{i}"));
    }
    let r = call(d, "git_log", json!({})).await.unwrap();
    let subjects: Vec<&str> =
        r["commits"].as_array().unwrap().iter().map(|c| c["subject"].as_str().unwrap()).collect();
    assert_eq!(subjects, ["c4", "c3", "c2", "c1", "c0"]);
    // A merge history, every commit in the same second: git's tie-breaking decides everything.
    git(d, &["checkout", "-q", "-b", "side", "HEAD~2"]);
    for i in 0..3 {
        commit_file(d, "s.txt", &format!("{i}\n"), &format!("s{i}"));
    }
    git(d, &["checkout", "-q", "main"]);
    commit_file(d, "g.txt", "g\n", "c5");
    git(d, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    write(d, "f.txt", "after\n");
    git(d, &["commit", "-q", "-am", "c6"]);
    assert_log_order(d, "same second").await;
    // The same shape with dates: a side branch older than main, and a commit dated before its parent.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let mut n = 0;
    let mut commit = |d: &Path, date: &str, file: &str| {
        n += 1;
        write(d, file, &format!("{n}\n"));
        git_at(d, date, &["add", file]);
        git_at(d, date, &["commit", "-q", "-m", &format!("{file} {n}")]);
    };
    commit(d, "2026-01-01T00:00:00Z", "a");
    commit(d, "2026-01-03T00:00:00Z", "a");
    git(d, &["checkout", "-q", "-b", "side", "HEAD~1"]);
    commit(d, "2026-01-02T00:00:00Z", "b");
    commit(d, "2026-01-05T00:00:00Z", "b");
    commit(d, "2025-12-30T00:00:00Z", "b");
    git(d, &["checkout", "-q", "main"]);
    commit(d, "2026-01-04T00:00:00Z", "a");
    git_at(d, "2026-01-06T00:00:00Z", &["merge", "-q", "--no-ff", "-m", "merge", "side"]);
    commit(d, "2026-01-06T00:00:00Z", "c");
    commit(d, "2026-01-06T00:00:00Z", "c");
    assert_log_order(d, "dated").await;
    // Bad orders are refused.
    assert_eq!(call(d, "git_log", json!({"order": "random"})).await.unwrap_err().0, "INVALID_ARGUMENT");
}

/// Every commit's files in `git_log` with files against `git log -1 --numstat` of that commit,
/// and the commits in `git log`'s order, for every order.
async fn assert_log_files(d: &Path, what: &str) {
    for (order, flag) in [("default", None), ("topo", Some("--topo-order")), ("date", Some("--date-order"))] {
        let mut args = vec!["log", "--format=%H"];
        args.extend(flag);
        let want: Vec<String> = git(d, &args).lines().map(str::to_owned).collect();
        let r = call(d, "git_log", json!({"maxCount": 1000, "files": true, "order": order})).await.unwrap();
        let commits = r["commits"].as_array().unwrap();
        let ids: Vec<&str> = commits.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids, want, "{what}: order {order}");
        for c in commits {
            let id = c["id"].as_str().unwrap();
            let files = numstat(&git(d, &["log", "-1", "--format=", "--numstat", "-z", id]));
            assert_eq!(ours(&c["files"]), files, "{what}: order {order}: files of {id}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_files_on_several_threads_stay_in_log_order() {
    // Enough commits for several diff threads, made within a second or two (git's tie-breaking
    // orders those of one second), with a side branch merged in and each commit touching
    // different files: a result put back out of order shows as another commit's files.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    for i in 0..40 {
        write(d, &format!("m{}.txt", i % 7), &format!("{i}\n").repeat(i + 1));
        // A large file rewritten every time: enough work per commit for the helpers to join.
        let big: String = (0..4000).map(|l| format!("line {l} of {}\n", (l * 7 + i) % 13)).collect();
        write(d, "big.txt", &big);
        git(d, &["add", "."]);
        commit_file(d, &format!("only{i}.txt"), &"x\n".repeat(i + 1), &format!("c{i}"));
    }
    git(d, &["checkout", "-q", "-b", "side", "HEAD~20"]);
    for i in 0..15 {
        commit_file(d, &format!("side{i}.txt"), &"y\n".repeat(i + 2), &format!("s{i}"));
    }
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    git(d, &["mv", "only3.txt", "renamed3.txt"]);
    git(d, &["rm", "-q", "only4.txt"]);
    git(d, &["commit", "-q", "-m", "rename and delete"]);
    assert_log_files(d, "same second").await;
    // A linked worktree: the threads reopen its repository (its git dir is
    // .git/worktrees/<name>, the objects are the main repository's).
    let w = tempfile::tempdir().unwrap();
    let linked = w.path().join("linked");
    git(d, &["worktree", "add", "-q", "-b", "wt", linked.to_str().unwrap(), "HEAD~3"]);
    commit_file(&linked, "in-worktree.txt", "w\n", "in the worktree");
    assert_log_files(&linked, "linked worktree").await;
}

/// `git add -A` and a commit (an empty one when nothing changed).
fn commit_all(d: &Path, msg: &str) {
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "--allow-empty", "-m", msg]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_file_counts_match_numstat_for_odd_changes() {
    // One kind of change per commit, every commit in the same second, each commit's files
    // against `git log -1 --numstat -z`: the cases the counting without libgit2's diff
    // decides itself (added, deleted, modified, binary by a NUL in the first 8,000 bytes, no
    // last newline, CRLF, empty files) and those it leaves to libgit2 (mode and kind changes,
    // renames, attributes, merges).
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let put = |rel: &str, bytes: &[u8]| {
        let p = d.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    put("text.txt", b"one\ntwo\nthree\n");
    put("bin.dat", b"\0\x01binary\n");
    put("nonl.txt", b"a\nb");
    put("crlf.txt", b"x\r\ny\r\nz\r\n");
    put("empty.txt", b"");
    put("deep/er/f.txt", b"deep\n");
    commit_all(d, "root commit: every file added");
    let edits: [(&str, &[u8], &str); 9] = [
        ("bin.dat", b"\0\x02binary changed\n", "binary modified"),
        ("text.txt", b"one\ntwo\0\nthree\n", "text becomes binary"),
        ("text.txt", b"one\n2\nthree\nfour\n", "binary becomes text"),
        ("nonl.txt", b"a\nB", "no last newline kept"),
        ("nonl.txt", b"a\nB\n", "last newline added"),
        ("crlf.txt", b"x\r\nY\r\nz\r\n", "crlf line changed"),
        ("crlf.txt", b"x\ny\nz\n", "crlf to lf"),
        ("empty.txt", b"now\nfull\n", "empty file filled"),
        ("empty.txt", b"", "file emptied"),
    ];
    for (rel, bytes, msg) in edits {
        put(rel, bytes);
        commit_all(d, msg);
    }
    std::fs::remove_file(d.join("empty.txt")).unwrap();
    commit_all(d, "empty file deleted");
    put("new-empty.txt", b"");
    commit_all(d, "empty file added");
    let mut late = vec![b'l'; 8500];
    late[8200] = 0;
    late.push(b'\n');
    put("late-nul.txt", &late);
    commit_all(d, "a NUL after the first 8,000 bytes: text");
    put("late-nul.txt", b"short\n");
    commit_all(d, "and changed");
    std::fs::remove_dir_all(d.join("deep")).unwrap();
    commit_all(d, "a folder deleted");
    put("a/b/c.txt", b"c\n");
    put("a/b/d.txt", b"d\n");
    commit_all(d, "a folder added");
    git(d, &["update-index", "--chmod=+x", "text.txt"]);
    git(d, &["commit", "-q", "-m", "mode only"]);
    git(d, &["update-index", "--chmod=+x", "bin.dat"]);
    git(d, &["commit", "-q", "-m", "mode only, binary"]);
    put("text.txt", b"one\n2\nthree\nfive\n");
    git(d, &["add", "text.txt"]);
    git(d, &["commit", "-q", "-m", "executable modified"]);
    std::fs::remove_file(d.join("nonl.txt")).unwrap();
    symlink("text.txt", d.join("nonl.txt")).unwrap();
    commit_all(d, "file turned into a symlink");
    std::fs::remove_file(d.join("nonl.txt")).unwrap();
    symlink("crlf.txt", d.join("nonl.txt")).unwrap();
    commit_all(d, "symlink retargeted");
    std::fs::remove_file(d.join("nonl.txt")).unwrap();
    put("nonl.txt", b"a file again\n");
    commit_all(d, "symlink turned into a file");
    std::fs::remove_file(d.join("new-empty.txt")).unwrap();
    put("new-empty.txt/inside.txt", b"inside\n");
    commit_all(d, "file turned into a folder");
    git(d, &["mv", "late-nul.txt", "moved.txt"]);
    git(d, &["commit", "-q", "-m", "rename"]);
    put(".gitattributes", b"*.dat -diff\nforced.txt diff\n");
    put("forced.txt", b"forced\0text\n");
    commit_all(d, "attributes");
    put("bin.dat", b"plain text now\n");
    put("forced.txt", b"forced\0text\nmore\n");
    commit_all(d, "attributes decide");
    git(d, &["checkout", "-q", "-b", "side", "HEAD~3"]);
    put("side.txt", b"side\n");
    commit_all(d, "on the side");
    git(d, &["checkout", "-q", "main"]);
    git(d, &["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    put("after.txt", b"after\n");
    commit_all(d, "after the merge");
    assert_log_files(d, "odd changes").await;
    let r = call(d, "git_log", json!({"maxCount": 1000, "files": true})).await.unwrap();
    let files = |subject: &str| {
        let c = r["commits"].as_array().unwrap().iter().find(|c| c["subject"] == subject).unwrap();
        c["files"].clone()
    };
    assert_eq!(files("binary modified")[0]["binary"], true);
    assert_eq!(files("mode only")[0]["additions"], 0);
    assert_eq!(files("mode only, binary")[0]["binary"], true);
    // (`git add -A` there also puts bin.dat's mode back: the work tree never had it.)
    let link = files("file turned into a symlink");
    let link = link.as_array().unwrap().iter().find(|f| f["path"] == "nonl.txt").unwrap();
    assert_eq!((link["status"].as_str(), link["additions"].as_u64()), (Some("T"), Some(1)));
    assert_eq!(files("a NUL after the first 8,000 bytes: text")[0]["additions"], 1);
    assert_eq!(files("rename")[0]["oldPath"], "late-nul.txt");
    assert_eq!(files("merge side"), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_file_counts_of_deeply_nested_folders_match_numstat() {
    // A hostile repository's folders nested 300 deep (deeper than the counting walks itself:
    // it hands such a commit to libgit2's diff) beside a shallow file, added, then changed.
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    let deep = format!("{}f.txt", "d/".repeat(300));
    let shallow = format!("{}g.txt", "d/".repeat(3));
    for (i, text) in ["one\n", "one\ntwo\n"].into_iter().enumerate() {
        write(d, &deep, text);
        write(d, &shallow, &text.repeat(i + 2));
        commit_all(d, &format!("deep {i}"));
    }
    write(d, &shallow, "shallow only\n");
    commit_all(d, "shallow only");
    assert_log_files(d, "deep folders").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stacks_commit_without_files_stages_everything_but_ignored_files() {
    let t = commit_repo();
    let d = t.path();
    commit_file(d, ".gitignore", "*.log\n", "ignore logs");
    // Only new files: ours and Floyd's spellings keep today's behaviour (nothing staged, no
    // tracked change: nothing to commit).
    write(d, "n1.txt", "one\n");
    write(d, "dir/n2.txt", "two\n");
    write(d, "debug.log", "ignored\n");
    for args in [json!({"message": "ours"}), json!({"message": "floyd", "repoPath": "."})] {
        let e = call_yes(d, "git_commit", args.clone()).await.unwrap_err();
        assert_eq!(e.0, "NOTHING_TO_COMMIT", "{args}");
    }
    // Stack's spelling (repo_path, no files): everything staged, the ignored file left out.
    let (ctx, prompts) = ctx_with(d, vec![]);
    let r =
        call_ctx(&ctx, "git_commit", json!({"repo_path": ".", "message": "feat: new files"})).await.unwrap();
    assert_eq!(r["committed"], true);
    assert_eq!(r["files"], json!(["dir/n2.txt", "n1.txt"]));
    assert_eq!(r["stagedAll"], true);
    assert!(prompts.lock().unwrap()[0].contains("untracked files included"), "{:?}", prompts.lock().unwrap());
    assert_eq!(git(d, &["show", "--format=", "--name-only", "HEAD"]), "dir/n2.txt\nn1.txt\n");
    assert_eq!(git(d, &["status", "--porcelain", "--ignored"]), "!! debug.log\n");
    let content = eddie_tools_core::registry::run(
        "git_commit",
        &json!({"repo_path": ".", "message": "x", "allowEmpty": true}),
        &ctx,
    )
    .await
    .unwrap()
    .content;
    assert!(content.contains("staged first"), "{content}");
    // Stack's spelling with files stages those only.
    write(d, "n3.txt", "three\n");
    write(d, "n4.txt", "four\n");
    let r = call_yes(d, "git_commit", json!({"repo_path": ".", "message": "n3", "files": ["n3.txt"]}))
        .await
        .unwrap();
    assert_eq!(r["files"], json!(["n3.txt"]));
    assert_eq!(git(d, &["status", "--porcelain"]), "?? n4.txt\n");
}

/// Values git refuses, or that no git name can hold.
fn hostile() -> Vec<String> {
    vec![
        "a\0b".into(),
        "\0".into(),
        "x".repeat(1024 * 1024),
        "a".repeat(255),
        "a".repeat(256),
        "b/".repeat(3000),
        "..".into(),
        "../..".into(),
        "a..b".into(),
        "a...b".into(),
        "HEAD@{".into(),
        "@{-1}".into(),
        "@".into(),
        "x.lock".into(),
        "refs/heads/x.lock".into(),
        "a\u{1}b\u{7f}".into(),
        "line\nbreak".into(),
        "-x".into(),
        "--upload-pack=touch /tmp/x".into(),
        "ssh://-oProxyCommand=touch /tmp/x/y".into(),
        "git@127.0.0.1:repo.git".into(),
        "ext::sh -c touch% /tmp/x".into(),
        "https://user:pass@127.0.0.1:1/x".into(),
        "%00".into(),
        "a b".into(),
        "~^:?*[\\".into(),
        "/".into(),
        "".into(),
        "ü/ñ".into(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_git_tool_refuses_hostile_values_without_internal() {
    let t = commit_repo();
    let d = t.path();
    git(d, &["branch", "other"]);
    write(d, "a.txt", "changed\n");
    // Filled in when a call needs it, so that the hostile value is what is judged.
    let required = json!({"message": "m", "file": "a.txt", "checkpoint": "latest"});
    let mut calls = 0;
    for spec in registry::tools().filter(|s| s.family == "git") {
        let def = registry::definition(spec.name).unwrap();
        let props = def["jsonSchema"]["properties"].as_object().unwrap();
        for (key, schema) in props {
            let text = schema.to_string();
            if !text.contains("\"string\"") {
                continue;
            }
            for v in hostile() {
                let mut args = json!({});
                for r in def["jsonSchema"]["required"].as_array().into_iter().flatten() {
                    let r = r.as_str().unwrap();
                    args[r] = required[r].clone();
                }
                if matches!(spec.name, "git_branch")
                    && !["action", "create", "delete"].contains(&key.as_str())
                {
                    args["action"] = json!("create");
                    args["name"] = json!(format!("sweep-{calls}"));
                }
                args[key.as_str()] = json!(v);
                calls += 1;
                let out = call_yes(d, spec.name, args.clone()).await;
                if let Err((code, msg)) = &out {
                    let shown: String = args.to_string().chars().take(200).collect();
                    assert_ne!(code, "INTERNAL", "{} {shown}: {msg}", spec.name);
                }
            }
        }
    }
    assert!(calls > 300, "{calls} calls");
    // The named rules: NUL in a message, odd and long branch names.
    for (tool, args) in [
        ("git_commit", json!({"message": "a\0b", "stageAll": true})),
        ("git_checkpoint", json!({"message": "a\0b"})),
    ] {
        let e = call_yes(d, tool, args).await.unwrap_err();
        assert_eq!(e.0, "INVALID_ARGUMENT", "{tool}");
        assert!(e.1.contains("NUL"), "{tool}: {}", e.1);
    }
    let ok = "c".repeat(250);
    call_yes(d, "git_branch", json!({"action": "create", "name": ok})).await.unwrap();
    assert!(git(d, &["branch", "--list", &ok]).contains(&ok));
    let branches = git(d, &["branch", "--list"]);
    for (name, rule) in [
        ("a".repeat(255), "250 bytes"),
        ("a".repeat(256), "255 bytes"),
        ("a".repeat(1024), "255 bytes"),
        ("x.lock".into(), ".lock"),
        ("a..b".into(), "'..'"),
        ("a@{1}".into(), "'@{'"),
        ("a\u{1}".into(), "control"),
        ("a b".into(), "' '"),
    ] {
        for args in [json!({"action": "create", "name": name}), json!({"create": name})] {
            let e = call_yes(d, "git_branch", args).await.unwrap_err();
            assert_eq!(e.0, "INVALID_ARGUMENT", "{name:.40}");
            assert!(e.1.contains(rule), "{name:.40}: {}", e.1);
            // git refuses the same names (the long ones when it makes the ref's file).
            assert!(!git_raw(d, &["branch", &name]).status.success(), "git accepts {name:.40}");
        }
    }
    assert_eq!(git(d, &["branch", "--list"]), branches, "nothing else was created");
}

/// Repositories git reads and libgit2 cannot (a split or sparse index, reftable refs, SHA-256
/// object names, an unknown extension): every git tool answers `UNSUPPORTED_REPOSITORY` naming
/// what the repository uses and how git converts it (never `INTERNAL`), and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repositories_libgit2_cannot_read_get_unsupported_repository() {
    let fill = |d: &Path| {
        git(d, &["config", "user.name", "Ada"]);
        git(d, &["config", "user.email", "ada@example.com"]);
        write(d, "a.txt", "a\n");
        write(d, "d/b.txt", "b\n");
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", "base"]);
        write(d, "a.txt", "a, edited\n");
    };
    let required = json!({"message": "m", "file": "a.txt", "checkpoint": "latest"});
    // (how the repository is made, whether it opens at all, what the message must name)
    type Make = fn(&Path);
    let kinds: [(&str, Make, bool, &str); 5] = [
        (
            "split index",
            |d| {
                git(d, &["update-index", "--split-index"]);
            },
            true,
            "git update-index --no-split-index",
        ),
        (
            "sparse index",
            |d| {
                git(d, &["sparse-checkout", "init", "--cone", "--sparse-index"]);
                git(d, &["sparse-checkout", "set", "d"]);
            },
            true,
            "git sparse-checkout init --no-sparse-index",
        ),
        ("reftable", |_| {}, false, "git refs migrate --ref-format=files"),
        ("sha256", |_| {}, false, "sha256"),
        (
            "unknown extension",
            |d| {
                git(d, &["config", "core.repositoryformatversion", "1"]);
                git(d, &["config", "extensions.fooBar", "true"]);
            },
            false,
            "extensions.foobar",
        ),
    ];
    for (kind, make, opens, names) in kinds {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        match kind {
            "reftable" => git(d, &["init", "-q", "-b", "main", "--ref-format=reftable"]),
            "sha256" => git(d, &["init", "-q", "-b", "main", "--object-format=sha256"]),
            _ => git(d, &["init", "-q", "-b", "main"]),
        };
        fill(d);
        make(d);
        let before = snapshot(d);
        let mut unsupported = 0;
        for spec in registry::tools().filter(|s| s.family == "git") {
            let def = registry::definition(spec.name).unwrap();
            let mut args = json!({});
            for r in def["jsonSchema"]["required"].as_array().into_iter().flatten() {
                let r = r.as_str().unwrap();
                args[r] = required[r].clone();
            }
            let out = call_yes(d, spec.name, args).await;
            let Err((code, msg)) = out else {
                assert!(opens, "{kind}: {} answered on a repository libgit2 cannot open", spec.name);
                continue;
            };
            assert_ne!(code, "INTERNAL", "{kind}: {}: {msg}", spec.name);
            if code == "UNSUPPORTED_REPOSITORY" {
                unsupported += 1;
                assert!(msg.contains(names), "{kind}: {}: {msg}", spec.name);
            } else {
                assert!(opens, "{kind}: {}: {code} {msg}", spec.name);
            }
            if !opens {
                assert_eq!(snapshot(d), before, "{kind}: {} changed the repository", spec.name);
            }
        }
        if opens {
            // What reads the index says so; the history itself stays readable.
            for tool in ["git_status", "git_diff", "git_stage"] {
                let (code, msg) = call_yes(d, tool, json!({})).await.unwrap_err();
                assert_eq!(code, "UNSUPPORTED_REPOSITORY", "{kind}: {tool}: {msg}");
            }
            call_yes(d, "git_log", json!({})).await.unwrap();
            assert!(unsupported >= 3, "{kind}: {unsupported}");
        } else {
            assert!(unsupported >= 14, "{kind}: {unsupported}");
        }
    }
}
