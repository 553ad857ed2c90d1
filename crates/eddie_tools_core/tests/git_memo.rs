//! Results memoised across calls (`git/memo.rs`): blame's blob diffs and log's file counts are
//! kept by object id between calls, and every repeated call still answers as the git CLI (or,
//! where git reads something libgit2 does not, as the same call with nothing memoised): after a
//! new commit, an amend, a `.gitattributes` change, a `replace` ref, an alternates change, in a
//! repository whose object database lies about an id, and with calls running at once.
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;

use eddie_tools_core::git::{handles, memo};
use eddie_tools_core::{Ctx, registry};
use serde_json::{Value, json};

mod remote;
use remote::{blamed_lines, git, line_porcelain, numstat, ours};

fn write(dir: &Path, rel: &str, text: &[u8]) {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(p, text).expect("write");
}

async fn call(ws: &Path, tool: &str, args: Value) -> Value {
    let ctx = Ctx::new(ws.to_str().expect("utf8")).expect("ctx");
    match registry::run(tool, &args, &ctx).await {
        Ok(o) => o.data_value().expect("data"),
        Err(e) => panic!("{tool} {args}: {} {}", e.code().as_str(), e.message()),
    }
}

/// A history of `n` commits on `f.txt` (200 lines, a few rewritten and a few added per commit),
/// with a text file and a binary-by-content file (`b.dat`, a NUL in it) changing beside it.
fn history(d: &Path, n: usize) {
    std::fs::create_dir_all(d).expect("mkdir");
    git(d, &["init", "-q", "-b", "main"]);
    let mut lines: Vec<String> = (0..200).map(|i| format!("line {i}")).collect();
    for c in 0..n {
        for k in 0..3 {
            let at = (c * 37 + k * 71) % lines.len();
            lines[at] = format!("line {at} changed in {c}");
        }
        lines.insert((c * 13) % lines.len(), format!("added in {c}"));
        write(d, "f.txt", (lines.join("\n") + "\n").as_bytes());
        write(d, "notes/n.txt", format!("note {c}\n").repeat(c % 5 + 1).as_bytes());
        write(d, "b.dat", format!("bin\0{c}\nrow\n").as_bytes());
        git(d, &["add", "-A"]);
        git(d, &["commit", "-q", "-m", &format!("commit {c}")]);
    }
}

/// `git_blame f.txt` at HEAD equals `git blame --line-porcelain`.
async fn blame_is_git(d: &Path, what: &str) -> Vec<(String, u64, String)> {
    let got = call(d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await;
    let ours = blamed_lines(&got);
    let want = line_porcelain(&git(d, &["blame", "--line-porcelain", "HEAD", "--", "f.txt"]));
    assert_eq!(ours, want, "{what}: blame differs from git's");
    ours
}

/// `git_log {files: true}`: every commit's files with counts, as (id, numstat rows).
async fn log_files(d: &Path) -> Vec<(String, Vec<(String, Option<String>, String, String)>)> {
    let data = call(d, "git_log", json!({"maxCount": 100, "files": true})).await;
    data["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap().to_owned(), ours(&c["files"])))
        .collect()
}

/// [`log_files`] equals `git log -1 --numstat` of each commit.
async fn log_is_git(d: &Path, what: &str) -> Vec<(String, Vec<(String, Option<String>, String, String)>)> {
    let got = log_files(d).await;
    let ids = git(d, &["log", "-n", "100", "--format=%H"]);
    assert_eq!(
        got.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(),
        ids.lines().collect::<Vec<_>>(),
        "{what}"
    );
    for (id, files) in &got {
        let want = numstat(&git(d, &["log", "-1", "--numstat", "-z", "--format=", id]));
        assert_eq!(files, &want, "{what}: files of {id}");
    }
    got
}

/// Nothing kept: the next call computes everything again (the reference a memoised answer must
/// equal where git itself is no oracle).
fn forget_everything() {
    memo::clear();
    handles::clear();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_calls_after_a_commit_and_an_amend_answer_as_git() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("r");
    history(&d, 40);
    let first = blame_is_git(&d, "first blame").await;
    let log = log_is_git(&d, "first log").await;
    assert!(memo::usage().1 > 0, "the calls memoised something");
    assert_eq!(blame_is_git(&d, "repeated blame").await, first);
    assert_eq!(log_is_git(&d, "repeated log").await, log);
    // A new commit: its diffs are new, the rest comes from the memo.
    let text = std::fs::read_to_string(d.join("f.txt")).unwrap();
    write(&d, "f.txt", text.replace("line 5", "line five").as_bytes());
    write(&d, "b.dat", b"bin\0new\n");
    git(&d, &["commit", "-q", "-am", "new"]);
    blame_is_git(&d, "after a commit").await;
    log_is_git(&d, "after a commit").await;
    // The same commit amended: other blobs under the same message and parent.
    write(&d, "f.txt", text.replace("line 7", "line seven\nand eight").as_bytes());
    git(&d, &["commit", "-q", "-a", "--amend", "-m", "new, amended"]);
    blame_is_git(&d, "after an amend").await;
    log_is_git(&d, "after an amend").await;
    // A line range and the working tree's lines, on the warm memo.
    write(&d, "f.txt", text.replace("line 9", "uncommitted").as_bytes());
    let got = call(&d, "git_blame", json!({"file": "f.txt"})).await;
    let mut want = line_porcelain(&git(&d, &["blame", "--line-porcelain", "--", "f.txt"]));
    let got = blamed_lines(&got);
    for (g, w) in got.iter().zip(want.iter_mut()) {
        // git names the uncommitted lines' path as given; the tools as the file's.
        if w.0.starts_with("0000") {
            w.2.clone_from(&g.2);
        }
    }
    assert_eq!(got, want, "the working tree's blame");
}

/// The `diff` attribute is applied on every call to what the memo holds: a file turned `-diff`
/// is `-` at once, a binary-by-content file turned `diff` is counted, and back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gitattributes_changes_apply_to_memoised_counts() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("r");
    history(&d, 12);
    let plain = log_is_git(&d, "no attributes").await;
    write(&d, ".gitattributes", b"f.txt -diff\n*.dat diff\n");
    let changed = log_is_git(&d, "f.txt -diff, *.dat diff").await;
    assert_ne!(plain, changed, "the attributes changed the counts");
    assert!(changed.iter().any(|(_, f)| f.iter().any(|r| r.0 == "f.txt" && r.2 == "-")));
    assert!(changed.iter().any(|(_, f)| f.iter().any(|r| r.0 == "b.dat" && r.2 != "-")));
    std::fs::remove_file(d.join(".gitattributes")).unwrap();
    assert_eq!(log_is_git(&d, "attributes removed").await, plain);
    // Every other place attributes come from, each alone, each equal to git and unlike `plain`.
    write(&d, ".git/info/attributes", b"f.txt -diff\n");
    assert_ne!(log_is_git(&d, "info/attributes").await, plain);
    std::fs::remove_file(d.join(".git/info/attributes")).unwrap();
    write(&d, "user-attributes", b"*.txt -diff\n");
    git(&d, &["config", "core.attributesFile", d.join("user-attributes").to_str().unwrap()]);
    assert_ne!(log_is_git(&d, "core.attributesFile").await, plain);
    git(&d, &["config", "--unset", "core.attributesFile"]);
    std::fs::remove_file(d.join("user-attributes")).unwrap();
    assert_eq!(log_is_git(&d, "all removed again").await, plain);
    // In a folder, committed (so in the index too), then only in the index.
    write(&d, "notes/.gitattributes", b"n.txt binary\n");
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "attributes"]);
    let committed = log_is_git(&d, "notes/.gitattributes committed").await;
    assert!(committed.iter().any(|(_, f)| f.iter().any(|r| r.0 == "notes/n.txt" && r.2 == "-")));
    // Only in the index: libgit2 reads the index's attributes (as the tools did before the
    // memo, through libgit2's lookup), `git log` reads none, so git is no oracle here.
    std::fs::remove_file(d.join("notes/.gitattributes")).unwrap();
    assert_eq!(log_files(&d).await, committed, "notes/.gitattributes in the index only");
    git(&d, &["rm", "-q", "--cached", "notes/.gitattributes"]);
    let gone = log_is_git(&d, "notes/.gitattributes nowhere").await;
    assert!(!gone.iter().any(|(_, f)| f.iter().any(|r| r.0 == "notes/n.txt" && r.2 == "-")));
}

/// Two repositories with the same commits (the same blob ids), one with attributes: each
/// answers as git in it, whichever was asked first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_repositories_sharing_blob_ids_keep_their_own_attributes() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    history(&a, 10);
    git(t.path(), &["clone", "-q", "--no-local", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(git(&a, &["rev-parse", "HEAD:f.txt"]), git(&b, &["rev-parse", "HEAD:f.txt"]));
    write(&b, ".gitattributes", b"*.txt -diff\n*.dat diff\n");
    let in_a = log_is_git(&a, "a").await;
    let in_b = log_is_git(&b, "b after a").await;
    assert_ne!(in_a, in_b);
    assert_eq!(log_is_git(&a, "a after b").await, in_a);
    forget_everything();
    assert_eq!(log_is_git(&b, "b first").await, in_b);
    assert_eq!(log_is_git(&a, "a after b first").await, in_a);
}

/// The loose object of `id` made to hold the content of the loose object `other` (an object
/// database that lies about `id`: libgit2 does not re-hash what it reads).
fn forge(d: &Path, id: &str, other: &str) {
    let path = |id: &str| d.join(".git/objects").join(&id[..2]).join(&id[2..]);
    let bytes = std::fs::read(path(other)).expect("loose object");
    let p = path(id);
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perm.set_readonly(false);
    std::fs::set_permissions(&p, perm).unwrap();
    std::fs::write(&p, bytes).unwrap();
}

/// A hostile repository whose objects folder gives another content for a blob id that an
/// honest repository has: neither one's answers reach the other's, and a repository that
/// borrows objects (alternates) answers from the one it borrows from now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lying_object_database_or_an_alternates_change_never_leaks_between_repositories() {
    let t = tempfile::tempdir().unwrap();
    let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
    history(&a, 10);
    git(t.path(), &["clone", "-q", "--no-local", a.to_str().unwrap(), b.to_str().unwrap()]);
    git(&b, &["config", "core.bare", "false"]);
    // Unpacked in b: every object loose, so that one can be forged.
    let pack = std::fs::read_dir(b.join(".git/objects/pack")).unwrap();
    let packs: Vec<_> =
        pack.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "pack")).collect();
    for p in packs {
        std::fs::rename(&p, t.path().join("moved.pack")).unwrap();
        std::fs::remove_file(p.with_extension("idx")).unwrap();
        let bytes = std::fs::read(t.path().join("moved.pack")).unwrap();
        let out = std::process::Command::new("git")
            .args(["unpack-objects", "-q"])
            .current_dir(&b)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut ch| {
                use std::io::Write as _;
                ch.stdin.take().unwrap().write_all(&bytes)?;
                ch.wait()
            })
            .unwrap();
        assert!(out.success());
    }
    // HEAD's f.txt made to read as HEAD~1's in b.
    let (head, prev) = (git(&b, &["rev-parse", "HEAD:f.txt"]), git(&b, &["rev-parse", "HEAD~1:f.txt"]));
    forge(&b, &head, &prev);
    git(t.path(), &["clone", "-q", "--shared", a.to_str().unwrap(), c.to_str().unwrap()]);

    let ask = |d: std::path::PathBuf| async move {
        let blame = call(&d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await;
        (blamed_lines(&blame), log_files(&d).await)
    };
    let in_a = ask(a.clone()).await;
    let in_b = ask(b.clone()).await;
    let in_c = ask(c.clone()).await;
    assert_ne!(in_a, in_b, "b's lie shows in b's answers");
    assert_eq!(in_c, in_a, "c borrows a's objects");
    forget_everything();
    assert_eq!(ask(b.clone()).await, in_b, "b's answer is what b gives with nothing memoised");
    assert_eq!(ask(a.clone()).await, in_a, "a's answer after b's");
    // c now borrows b's objects (the alternates file rewritten in place, the same length).
    let alt = c.join(".git/objects/info/alternates");
    let text = std::fs::read_to_string(&alt).unwrap();
    let to_b = text.replace("/a/.git/objects", "/b/.git/objects");
    assert_ne!(text, to_b);
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&alt, to_b).unwrap();
    assert_eq!(ask(c.clone()).await, in_b, "c borrows b's objects now");
    forget_everything();
    assert_eq!(ask(c.clone()).await, in_b, "the same with nothing memoised");
}

/// libgit2 does not read `refs/replace`: with a replace ref for a blob, the tools answer as
/// `git --no-replace-objects`, memoised or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replace_ref_changes_no_answer() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("r");
    history(&d, 10);
    let before = (blame_is_git(&d, "before").await, log_is_git(&d, "before").await);
    let (head, prev) = (git(&d, &["rev-parse", "HEAD:f.txt"]), git(&d, &["rev-parse", "HEAD~2:f.txt"]));
    git(&d, &["replace", &head, &prev]);
    let blame = call(&d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await;
    let want = line_porcelain(&git(
        &d,
        &["--no-replace-objects", "blame", "--line-porcelain", "HEAD", "--", "f.txt"],
    ));
    assert_eq!(blamed_lines(&blame), want);
    assert_eq!(blamed_lines(&blame), before.0);
    assert_eq!(log_files(&d).await, before.1);
    forget_everything();
    assert_eq!(log_files(&d).await, before.1);
}

/// Calls at once on two repositories, memo cold and warm, each answering as git.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_share_the_memo_and_each_answer_as_git() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    history(&a, 30);
    history(&b, 25);
    let want_blame =
        |d: &Path| line_porcelain(&git(d, &["blame", "--line-porcelain", "HEAD", "--", "f.txt"]));
    let (wa, wb) = (want_blame(&a), want_blame(&b));
    let (la, lb) = (log_is_git(&a, "a").await, log_is_git(&b, "b").await);
    forget_everything();
    for _round in 0..2 {
        let mut tasks = Vec::new();
        for i in 0..16 {
            let d = if i % 2 == 0 { a.clone() } else { b.clone() };
            tasks.push(tokio::spawn(async move {
                if i % 4 < 2 {
                    let got = call(&d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await;
                    (i, Some(blamed_lines(&got)), None)
                } else {
                    (i, None, Some(log_files(&d).await))
                }
            }));
        }
        for task in tasks {
            let (i, blame, log) = task.await.unwrap();
            let even = i % 2 == 0;
            if let Some(bl) = blame {
                assert_eq!(bl, if even { wa.clone() } else { wb.clone() }, "blame {i}");
            }
            if let Some(l) = log {
                assert_eq!(l, if even { la.clone() } else { lb.clone() }, "log {i}");
            }
        }
    }
    let (bytes, _) = memo::usage();
    assert!(bytes <= 32 << 20, "the memos stay in their budgets: {bytes} bytes");
}

/// A blob removed after its diffs and counts were memoised: blame and log fail as they do with
/// nothing memoised (the memo answers only for objects the repository still has).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blob_removed_after_it_was_memoised_fails_the_call() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("r");
    history(&d, 12);
    blame_is_git(&d, "before").await;
    log_is_git(&d, "before").await;
    // Loose objects (never packed here): remove f.txt's blob 3 commits back.
    let blob = git(&d, &["rev-parse", "HEAD~3:f.txt"]);
    std::fs::remove_file(d.join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();
    let ctx = Ctx::new(d.to_str().unwrap()).unwrap();
    let blame = registry::run("git_blame", &json!({"file": "f.txt", "revision": "HEAD"}), &ctx).await;
    assert!(blame.is_err(), "blame answered without the blob");
    let log = registry::run("git_log", &json!({"maxCount": 100, "files": true}), &ctx).await;
    assert!(log.is_err(), "log answered without the blob");
}

/// Blame across a rename, repeated, and with `diff.renameLimit` set so low that libgit2 no
/// longer finds the rename: the memoised renames follow the config (part of their key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memoised_renames_follow_the_rename_limit() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("r");
    std::fs::create_dir_all(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    let text = |tag: &str| (0..60).map(|i| format!("{tag} line {i}\n")).collect::<String>();
    write(&d, "a.txt", text("a").as_bytes());
    write(&d, "aa.txt", text("aa").as_bytes());
    write(&d, "b.txt", text("b").as_bytes());
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "three files"]);
    git(&d, &["rm", "-q", "a.txt", "aa.txt", "b.txt"]);
    write(&d, "f.txt", (text("b") + "one more\n").as_bytes());
    git(&d, &["add", "-A"]);
    // libgit2 tries the deleted files in path order: with a limit of 1 it stops before b.txt.
    git(&d, &["commit", "-q", "-m", "b renamed to f with an edit, a and aa deleted"]);
    let followed = blame_is_git(&d, "rename followed").await;
    assert!(followed.iter().any(|l| l.2 == "b.txt"), "the blame crosses the rename");
    assert_eq!(blame_is_git(&d, "repeated").await, followed);
    git(&d, &["config", "diff.renameLimit", "1"]);
    let limited = blamed_lines(&call(&d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await);
    forget_everything();
    let fresh = blamed_lines(&call(&d, "git_blame", json!({"file": "f.txt", "revision": "HEAD"})).await);
    assert_eq!(limited, fresh, "memoised renames under a new limit");
    assert_ne!(limited, followed, "the limit stops libgit2's rename detection here");
    git(&d, &["config", "--unset", "diff.renameLimit"]);
    assert_eq!(blame_is_git(&d, "limit removed").await, followed);
}
