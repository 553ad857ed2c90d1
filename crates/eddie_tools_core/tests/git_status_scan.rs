//! `git_status`'s own scan of the working tree (`git/status_scan.rs`) and libgit2's
//! `statuses()` run on the same repositories, both compared with
//! `git status --porcelain=v2 -z --untracked-files=all` (the git CLI as the oracle) and with
//! each other; the cases that must fall back; and attacks on the scan (symlinks in place of
//! tracked folders, swapped while it runs; FIFOs).
#![cfg(target_os = "linux")]
// A test binary: a failed `expect` is a failed test, with its message.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;

use eddie_tools_core::git::git_status::status_both_ways;
use serde_json::Value;

mod remote;
use remote::{git, porcelain_v2, status_entries};

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn chmod(p: &Path, mode: u32) {
    let mut perm = std::fs::metadata(p).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, mode);
    std::fs::set_permissions(p, perm).expect("chmod");
}

fn mkfifo(p: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        p,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .expect("mkfifo");
}

/// Runs the status both ways on a thread of its own (a FIFO opened for reading would hang
/// it: bounded to 60 s), checks both equal git's and each other (the whole JSON), and says
/// whether the scan gave the first.
fn both(d: &Path) -> (Value, bool) {
    both_with(d, true)
}

/// [`both`]; without git's answer when `oracle` is false.
fn both_with(d: &Path, oracle: bool) -> (Value, bool) {
    let want = porcelain_v2(d);
    let dir = d.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let cwd = dir.to_str().expect("utf8");
        let fast = status_both_ways(cwd, true).expect("scan");
        let slow = status_both_ways(cwd, false).expect("statuses");
        let _ = tx.send((fast, slow));
    });
    let ((fast, by_scan), (slow, slow_scan)) =
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("status within 60 s");
    assert!(!slow_scan);
    if oracle {
        assert_eq!(status_entries(&fast), want, "scan against git");
        assert_eq!(status_entries(&slow), want, "statuses() against git");
    }
    assert_eq!(fast, slow, "scan against statuses(), whole result");
    (fast, by_scan)
}

#[test]
fn scan_and_statuses_match_porcelain_v2() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "racy.txt", "one\n");
    write(d, "run.sh", "echo hi\n");
    write(d, "link", "placeholder\n");
    write(d, "becomes-link.txt", "soon a symlink\n");
    write(d, "becomes-dir", "soon a folder\n");
    write(d, "gone/a.txt", "a\n");
    write(d, "gone/deep/b.txt", "b\n");
    write(d, "dir-becomes-file/x.txt", "x\n");
    write(d, "mixed/tracked.txt", "t\n");
    write(d, ".gitignore", "build/\n*.o\n");
    write(d, "build/keep.txt", "tracked inside an ignored folder\n");
    write(d, "sub/.gitignore", "*.log\n!keep.log\n");
    write(d, "sub/tracked.txt", "t\n");
    write(d, "with space/名前 ü.txt", "non-ASCII\n");
    write(d, "rename me.txt", "a file long enough for git to see its rename as a rename\n");
    write(d, "staged.txt", "s\n");
    write(d, "unstaged-size.txt", "short\n");
    write(d, "index-gone.txt", "deleted in the index\n");
    git(d, &["add", "-f", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    // The symlink `link` is committed as one, then replaced by a file.
    std::fs::remove_file(d.join("link")).expect("rm");
    std::os::unix::fs::symlink("racy.txt", d.join("link")).expect("symlink");
    git(d, &["add", "link"]);
    git(d, &["commit", "-q", "-m", "link"]);
    git(d, &["update-index", "--refresh"]);
    std::fs::remove_file(d.join("link")).expect("rm");
    write(d, "link", "a file again\n");
    // Same second as the index write, same size: racily clean.
    write(d, "racy.txt", "two\n");
    chmod(&d.join("run.sh"), 0o755);
    std::fs::remove_file(d.join("becomes-link.txt")).expect("rm");
    std::os::unix::fs::symlink("run.sh", d.join("becomes-link.txt")).expect("symlink");
    std::fs::remove_file(d.join("becomes-dir")).expect("rm");
    write(d, "becomes-dir/inner.txt", "now a folder\n");
    std::fs::remove_dir_all(d.join("gone")).expect("rm -r");
    std::fs::remove_dir_all(d.join("dir-becomes-file")).expect("rm -r");
    write(d, "dir-becomes-file", "a file where a folder was\n");
    write(d, "mixed/new.txt", "untracked beside a tracked file\n");
    write(d, "build/keep.txt", "tracked inside an ignored folder, edited\n");
    write(d, "build/out.o", "ignored\n");
    write(d, "build/more/new.txt", "ignored with its folder\n");
    write(d, "only-ignored/a.o", "ignored\n");
    write(d, "only-ignored/deeper/b.o", "ignored\n");
    write(d, "sub/a.log", "ignored by the nested rule\n");
    write(d, "sub/keep.log", "negated back in\n");
    write(d, "sub/x.bak", "ignored by info/exclude\n");
    write(d, ".git/info/exclude", "*.bak\n");
    write(d, "with space/名前 ü.txt", "non-ASCII, edited\n");
    write(d, "with space/новый файл.txt", "untracked\n");
    git(d, &["mv", "rename me.txt", "renamed.txt"]);
    write(d, "staged.txt", "staged change\n");
    git(d, &["add", "staged.txt"]);
    write(d, "staged.txt", "staged change, then edited\n");
    write(d, "unstaged-size.txt", "longer than before\n");
    git(d, &["rm", "-q", "--cached", "index-gone.txt"]);
    write(d, "added.txt", "new in the index\n");
    git(d, &["add", "added.txt"]);
    write(d, "ita.txt", "intent to add\n");
    git(d, &["add", "-N", "ita.txt"]);
    write(d, "fresh/deeper/n.txt", "untracked, two levels down\n");
    std::fs::create_dir_all(d.join("empty/inside")).expect("mkdir");
    mkfifo(&d.join("pipe"));
    mkfifo(&d.join("mixed/pipe"));
    let want = porcelain_v2(d);
    for (path, xy) in [
        ("racy.txt", ".M"),
        ("run.sh", ".M"),
        ("link", ".T"),
        ("becomes-link.txt", ".T"),
        ("becomes-dir", ".D"),
        ("becomes-dir/inner.txt", "??"),
        ("gone/deep/b.txt", ".D"),
        ("dir-becomes-file/x.txt", ".D"),
        ("dir-becomes-file", "??"),
        ("mixed/new.txt", "??"),
        ("build/keep.txt", ".M"),
        ("sub/keep.log", "??"),
        ("with space/名前 ü.txt", ".M"),
        ("with space/новый файл.txt", "??"),
        ("renamed.txt", "R."),
        ("staged.txt", "MM"),
        ("unstaged-size.txt", ".M"),
        ("index-gone.txt", "D."),
        ("index-gone.txt", "??"),
        ("added.txt", "A."),
        ("ita.txt", ".A"),
        ("fresh/deeper/n.txt", "??"),
    ] {
        assert!(want.iter().any(|w| w.0 == path && w.1 == xy), "git reports {path} {xy}: {want:?}");
    }
    for absent in ["build/out.o", "build/more/new.txt", "only-ignored/a.o", "sub/a.log", "sub/x.bak", "pipe"]
    {
        assert!(!want.iter().any(|w| w.0.starts_with(absent)), "git leaves out {absent}");
    }
    let (_, by_scan) = both(d);
    assert!(by_scan, "the scan applies to this repository");
    // An unborn branch with staged files, and a clean tree, by the scan too.
    let u = tempfile::tempdir().expect("tempdir");
    git(u.path(), &["init", "-q", "-b", "main"]);
    write(u.path(), "a.txt", "a\n");
    write(u.path(), "b/c.txt", "c\n");
    git(u.path(), &["add", "a.txt"]);
    assert!(both(u.path()).1);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "all"]);
    let (clean, by_scan) = both(d);
    assert!(by_scan && clean["clean"] == Value::Bool(true), "{clean}");
    // The index's cache-tree is valid but names another tree than HEAD's now: staged
    // changes, from libgit2's HEAD-vs-index.
    git(d, &["reset", "-q", "--soft", "HEAD~1"]);
    let (soft, by_scan) = both(d);
    assert!(by_scan && soft["counts"]["staged"].as_u64() > Some(5), "{soft}");
}

/// Content filters make hashing differ from git's plain blob id: the call falls back.
#[test]
fn attributes_and_special_cases_fall_back() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "a.txt", "one\r\ntwo\r\n");
    write(d, "b.txt", "b\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    write(d, ".gitattributes", "*.txt text eol=lf\n");
    write(d, "a.txt", "one\r\ntwo\r\nthree\r\n");
    assert!(!both(d).1, "an untracked .gitattributes: fallback");
    git(d, &["add", ".gitattributes"]);
    assert!(!both(d).1, "a tracked .gitattributes: fallback");
    git(d, &["rm", "-q", "--cached", ".gitattributes"]);
    std::fs::remove_file(d.join(".gitattributes")).expect("rm");
    assert!(both(d).1, "no attributes: the scan");
    write(d, ".git/info/attributes", "*.txt text\n");
    assert!(!both(d).1, "info/attributes: fallback");
    std::fs::remove_file(d.join(".git/info/attributes")).expect("rm");
    git(d, &["update-index", "--index-version", "4"]);
    assert!(!both(d).1, "index version 4: fallback");
    git(d, &["update-index", "--index-version", "2"]);
    git(d, &["update-index", "--skip-worktree", "b.txt"]);
    assert!(!both(d).1, "a skip-worktree entry: fallback");
    git(d, &["update-index", "--no-skip-worktree", "b.txt"]);
    assert!(both(d).1, "back to the common case");
    git(d, &["config", "core.autocrlf", "input"]);
    assert!(!both(d).1, "core.autocrlf: fallback");
    git(d, &["config", "--unset", "core.autocrlf"]);
    // A FIFO where the index has a file: never opened (the call returns), and libgit2
    // decides, as before: it says `.D` where git says `.M`.
    std::fs::remove_file(d.join("b.txt")).expect("rm");
    mkfifo(&d.join("b.txt"));
    let (data, by_scan) = both_with(d, false);
    assert!(!by_scan, "a FIFO at a tracked path: fallback");
    assert!(status_entries(&data).contains(&("b.txt".into(), ".D".into(), None)), "{data}");
    std::fs::remove_file(d.join("b.txt")).expect("rm");
    // A nested repository: libgit2's business.
    std::fs::create_dir_all(d.join("nested")).expect("mkdir");
    git(&d.join("nested"), &["init", "-q"]);
    // (libgit2 lists nothing for an empty nested repository where git lists `nested/`: as
    // before.)
    assert!(!both_with(d, false).1, "a nested repository: fallback");
}

/// A split index (`git update-index --split-index`): the index file holds only what differs
/// from a shared index, behind a required `link` extension. Git says a reader must refuse an
/// index with a required extension it does not know; the scan must not read the partial list
/// as the whole index (its files would come out deleted or untracked).
#[test]
fn a_split_index_is_not_read_as_a_whole_index() {
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    for i in 0..20 {
        write(d, &format!("f{i}.txt"), &format!("{i}\n"));
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["update-index", "--split-index"]);
    write(d, "f3.txt", "changed\n");
    write(d, "new.txt", "new\n");
    git(d, &["add", "f3.txt"]);
    git(d, &["commit", "-q", "-m", "second"]);
    write(d, "f5.txt", "edited, longer\n");
    let cwd = d.to_str().expect("utf8");
    // libgit2 (the fallback) refuses a split index, as it did before the scan existed; what
    // must never happen is an answer made from the partial list.
    match status_both_ways(cwd, true) {
        Ok((data, by_scan)) => {
            assert!(!by_scan, "a split index: the scan leaves it: {data}");
            assert_eq!(status_entries(&data), porcelain_v2(d), "against git");
        }
        Err(e) => {
            assert_eq!(e.code().as_str(), "UNSUPPORTED_REPOSITORY", "libgit2's refusal: {e:?}");
            assert!(e.message().contains("git update-index --no-split-index"), "{e:?}");
        }
    }
}

/// A symlink to a folder outside the workspace where a tracked folder was: the scan lists
/// the tracked files as deleted and the link as untracked (as git), and never reads through.
#[test]
fn a_symlink_in_place_of_a_tracked_folder_is_not_followed() {
    let outside = tempfile::tempdir().expect("tempdir");
    write(outside.path(), "secret.txt", "outside\n");
    write(outside.path(), "a.txt", "a, but different\n");
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(d, "d/a.txt", "a\n");
    write(d, "d/sub/b.txt", "b\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    std::fs::remove_dir_all(d.join("d")).expect("rm -r");
    std::os::unix::fs::symlink(outside.path(), d.join("d")).expect("symlink");
    let (data, by_scan) = both(d);
    assert!(by_scan);
    let got = status_entries(&data);
    assert!(got.contains(&("d/a.txt".into(), ".D".into(), None)), "{got:?}");
    assert!(got.contains(&("d".into(), "??".into(), None)), "{got:?}");
    assert!(!data.to_string().contains("secret"), "{data}");
}

/// A folder swapped for a symlink to the outside while the scan runs (another thread swaps
/// it back and forth 300 times): no call errs, and none ever lists a file of the outside.
/// `openat(O_NOFOLLOW | O_DIRECTORY)` relative to the parent refuses the link, and the call
/// then falls back to libgit2 (which lstat()s and does not follow either).
#[test]
fn a_folder_swapped_for_a_symlink_during_the_scan_is_not_followed() {
    let outside = tempfile::tempdir().expect("tempdir");
    write(outside.path(), "secret.txt", "outside\n");
    let t = tempfile::tempdir().expect("tempdir");
    let d = t.path().to_path_buf();
    git(&d, &["init", "-q", "-b", "main"]);
    for i in 0..200 {
        write(&d, &format!("d/f{i}.txt"), "x\n");
    }
    for i in 0..50 {
        write(&d, &format!("e{}/f.txt", i), "x\n");
    }
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "base"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (d, out, stop) = (d.clone(), outside.path().to_path_buf(), stop.clone());
        std::thread::spawn(move || {
            for _ in 0..300 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                std::fs::rename(d.join("d"), d.join("d.real")).expect("rename");
                std::os::unix::fs::symlink(&out, d.join("d")).expect("symlink");
                std::thread::sleep(std::time::Duration::from_micros(300));
                std::fs::remove_file(d.join("d")).expect("rm link");
                std::fs::rename(d.join("d.real"), d.join("d")).expect("rename back");
                std::thread::sleep(std::time::Duration::from_micros(300));
            }
        })
    };
    for _ in 0..40 {
        let (data, _) = status_both_ways(d.to_str().expect("utf8"), true).expect("status");
        assert!(!data.to_string().contains("secret"), "{data}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().expect("swapper");
}
