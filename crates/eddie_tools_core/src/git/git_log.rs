//! `git_log`: commit history read with libgit2, in git's orders (`history.rs`: the default
//! order, `--topo-order`, `--date-order`, ties broken as git breaks them). Filters:
//! `maxCount`/`limit`, `skip`, `since`/`until` (commit date), `author` (a regex on
//! `Name <email>`), `grep` (a regex on the message), and a path (`file`), optionally followed
//! across renames. Each commit: full and short id, author,
//! committer, date, subject, body, parents; with `files`, the changed files with
//! `git log --numstat` counts (merges list none, as git log shows none by default).

use std::collections::HashMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common;
use super::history::{self, Order};
use super::log_numstat::Counter;
use crate::call::args::lenient::{Cap, Flag, Offset};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "git_log";
const DEFAULT_COUNT: usize = 10;
const MAX_COUNT: usize = 100_000;

/// The arguments of `git_log`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The revision to start from (default HEAD), or a range `a..b`.
    pub revision: Option<String>,
    /// At most this many commits (default 10; also: limit, max_count, n).
    pub max_count: Option<Cap<{ MAX_COUNT as u64 }>>,
    /// Skip this many matching commits first.
    pub skip: Option<Offset<{ u32::MAX as u64 }>>,
    /// Only commits with a commit date at or after this (ISO 8601, `2 weeks ago`, `yesterday`).
    pub since: Option<String>,
    /// Only commits with a commit date at or before this.
    pub until: Option<String>,
    /// Only commits whose author (`Name <email>`) matches this regex.
    pub author: Option<String>,
    /// Only commits whose message matches this regex.
    pub grep: Option<String>,
    /// Only commits that change this file or folder (relative to path).
    pub file: Option<String>,
    /// Follow the file across renames (needs file).
    pub follow: Option<Flag>,
    /// Include the changed files of each commit with added/deleted line counts.
    pub files: Option<Flag>,
    /// The order: default (as git log: newest commit date first), topo (--topo-order: no
    /// parent before its children, lines of history kept together) or date (--date-order).
    pub order: Option<Order>,
}

struct Plan {
    revision: Option<String>,
    max: usize,
    skip: usize,
    since: Option<i64>,
    until: Option<i64>,
    author: Option<regex::Regex>,
    grep: Option<regex::Regex>,
    file: Option<String>,
    follow: bool,
    files: bool,
    order: Order,
}

fn regex_arg(name: &str, v: Option<String>) -> Result<Option<regex::Regex>> {
    v.filter(|s| !s.is_empty())
        .map(|s| {
            regex::Regex::new(&s).map_err(|e| {
                ToolError::new(ErrorCode::InvalidRegex, format!("{name}: invalid regular expression: {e}"))
            })
        })
        .transpose()
}

fn date_arg(name: &str, v: Option<String>) -> Result<Option<i64>> {
    v.filter(|s| !s.trim().is_empty())
        .map(|s| {
            common::parse_time(&s).map(|t| t.seconds()).ok_or_else(|| {
                ToolError::invalid(format!(
                    "{name}: cannot read the date {s:?}; use ISO 8601 (2026-01-31 or 2026-01-31T12:00:00Z) or '2 weeks ago'"
                ))
            })
        })
        .transpose()
}

/// Files changed by `commit` against its first parent (the root against the empty tree), with
/// renames detected; `None` for a merge. Counted by `counter` (`log_numstat.rs`) when it can,
/// else by libgit2's diff.
fn changed_files(
    repo: &git2::Repository,
    scope: &super::boundary::Scope,
    commit: &git2::Commit<'_>,
    counter: &mut Counter<'_>,
) -> Result<Option<Vec<Value>>> {
    if commit.parent_count() > 1 {
        return Ok(None);
    }
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "log");
    let tree = commit.tree().map_err(fail)?;
    let parent = match commit.parent_count() {
        0 => None,
        _ => Some(commit.parent(0).and_then(|p| p.tree()).map_err(fail)?),
    };
    if let Some(files) = counter.files(scope, parent.as_ref(), &tree)? {
        return Ok(Some(files));
    }
    let mut opts = common::diff_options(0, &scope.limit(Vec::new()));
    let mut d = repo.diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut opts)).map_err(fail)?;
    common::find_renames(&mut d)?;
    Ok(Some(common::numstat(&d, scope)?))
}

/// Commits a thread takes at a time (consecutive ones: a commit's parent is usually the next
/// commit, whose trees and blobs the same thread then has at hand).
const RUN: usize = 8;
/// At most this many threads diff the commits of one call.
const MAX_THREADS: usize = 4;
/// Helpers start only once the calling thread has spent this long...
const HELP_AFTER: std::time::Duration = std::time::Duration::from_millis(2);
/// ...and, at the pace so far, has at least this much work left per helper (a helper's start,
/// its own repository handle, its cold object cache and its own attribute lookups cost about
/// 1.5 ms on the bench's small repository, where no helper is worth it; with 8 ms here the
/// bench's 2,500-commit history lost its helper and got slower).
const WORK_PER_HELPER: std::time::Duration = std::time::Duration::from_millis(4);

/// One thread's results: (index of a run's first commit, its commits' files).
type Runs = Vec<(usize, Vec<Option<Vec<Value>>>)>;

/// [`changed_files`] of each commit of `ids`, in the same order. The diffs are independent:
/// threads take runs of [`RUN`] consecutive commits from a shared counter. The calling thread
/// starts alone with `repo`; helpers (each with its own handle on the repository: a
/// `git2::Repository` is not `Sync`) are started only when the work left is worth their start
/// (most calls on small commits are done before that).
fn files_of(
    repo: &git2::Repository,
    scope: &super::boundary::Scope,
    ids: &[git2::Oid],
    cancel: &crate::context::Cancel,
) -> Result<Vec<Option<Vec<Value>>>> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let next = AtomicUsize::new(0);
    // Takes runs until none is left (or another thread failed: it moves `next` past the end).
    let work = |r: &git2::Repository, mut on_run: Option<&mut dyn FnMut(usize)>| -> Result<Runs> {
        let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "log");
        let mut counter = Counter::new(r);
        let mut out = Vec::new();
        loop {
            if cancel.is_cancelled() {
                next.store(ids.len(), Relaxed);
                return Err(ToolError::cancelled());
            }
            let at = next.fetch_add(RUN, Relaxed);
            let Some(run) = ids.get(at..(at + RUN).min(ids.len())).filter(|r| !r.is_empty()) else {
                return Ok(out);
            };
            let files: Result<Vec<_>> = run
                .iter()
                .map(|id| changed_files(r, scope, &r.find_commit(*id).map_err(fail)?, &mut counter))
                .collect();
            match files {
                Ok(f) => out.push((at, f)),
                Err(e) => {
                    next.store(ids.len(), Relaxed);
                    return Err(e);
                }
            }
            if let Some(f) = on_run.as_mut() {
                f(at + run.len());
            }
        }
    };
    let cores = super::cores();
    let helpers_max = cores.min(MAX_THREADS).saturating_sub(1);
    let git_dir = repo.path().to_path_buf();
    let workdir = repo.workdir().map(std::path::Path::to_path_buf);
    let (mine, theirs) = std::thread::scope(|s| {
        let started = std::time::Instant::now();
        let mut handles = Vec::new();
        let mut spawn = |done: usize| {
            if handles.len() >= helpers_max || done == 0 {
                return;
            }
            let spent = started.elapsed();
            if spent < HELP_AFTER {
                return;
            }
            let left = spent.mul_f64(ids.len().saturating_sub(next.load(Relaxed)) as f64 / done as f64);
            let wanted = usize::try_from(left.as_nanos() / WORK_PER_HELPER.as_nanos()).unwrap_or(usize::MAX);
            while handles.len() < helpers_max.min(wanted) {
                let (git_dir, workdir, work) = (&git_dir, &workdir, &work);
                handles.push(s.spawn(move || {
                    // A handle kept from an earlier call has the history's objects parsed.
                    if let Some(Ok(kept)) = workdir.as_deref().map(super::handles::lend) {
                        return work(&kept, None);
                    }
                    let r = git2::Repository::open(git_dir)
                        .map_err(|e| super::err(&e, ErrorCode::Internal, "log: reopen the repository"))?;
                    work(&r, None)
                }));
            }
        };
        let mine = work(repo, Some(&mut spawn));
        let theirs: Vec<Result<Runs>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(ToolError::internal("log: a diff thread panicked"))))
            .collect();
        (mine, theirs)
    });
    let mut runs = mine?;
    for r in theirs {
        runs.extend(r?);
    }
    runs.sort_unstable_by_key(|(at, _)| *at);
    Ok(runs.into_iter().flat_map(|(_, files)| files).collect())
}

/// Whether `commit` changes `spec` against its parents: a non-merge when the diff restricted to
/// the path is not empty; a merge when it differs from every parent (git drops a merge that is
/// the same as one of its parents for the path).
fn touches(commit: &git2::Commit<'_>, spec: &str) -> Result<bool> {
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "log");
    let tree = commit.tree().map_err(fail)?;
    let entry = |t: &git2::Tree<'_>| t.get_path(std::path::Path::new(spec)).ok().map(|e| e.id());
    let mine = entry(&tree);
    if commit.parent_count() == 0 {
        return Ok(mine.is_some());
    }
    for p in commit.parents() {
        let pt = p.tree().map_err(fail)?;
        if entry(&pt) == mine {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The rename source of `spec` in `commit` (when the commit renamed something to it).
fn renamed_from(repo: &git2::Repository, commit: &git2::Commit<'_>, spec: &str) -> Result<Option<String>> {
    if commit.parent_count() != 1 {
        return Ok(None);
    }
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "log");
    let tree = commit.tree().map_err(fail)?;
    let parent = commit.parent(0).and_then(|p| p.tree()).map_err(fail)?;
    let mut opts = git2::DiffOptions::new();
    let mut d = repo.diff_tree_to_tree(Some(&parent), Some(&tree), Some(&mut opts)).map_err(fail)?;
    common::find_renames(&mut d)?;
    for delta in d.deltas() {
        if delta.status() == git2::Delta::Renamed
            && delta.new_file().path().is_some_and(|p| p == std::path::Path::new(spec))
        {
            return Ok(delta.old_file().path().map(|p| p.to_string_lossy().into_owned()));
        }
    }
    Ok(None)
}

/// A commit as `git_log` lists it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Commit {
    id: String,
    short_id: String,
    author: common::Person,
    committer: common::Person,
    date: String,
    subject: String,
    body: String,
    parents: Vec<String>,
    /// With `files`: the changed files (none for a merge).
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<Vec<Value>>,
}

/// `git_log`'s data.
#[derive(Serialize)]
struct Log {
    commits: Vec<Commit>,
    count: usize,
    unborn: bool,
    truncated: bool,
}

/// The log as its result: written as JSON text straight from the commits (no `Value` per
/// commit, which cost a small log a quarter of its time), and rendered.
fn log(dir: &std::path::Path, ctx: &Ctx, p: Plan) -> Result<ToolOutput> {
    let data = log_data(dir, ctx, p)?;
    let text =
        serde_json::to_string(&data).map_err(|e| ToolError::internal(format!("serialise result: {e}")))?;
    Ok(ToolOutput::from_json_text(render(&data), text))
}

fn log_data(dir: &std::path::Path, ctx: &Ctx, p: Plan) -> Result<Log> {
    let (repo, scope) = common::checkout_read(&ctx.workspace, dir)?;
    let root = common::workdir(&repo)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "log");
    let mut file = match &p.file {
        Some(f) => common::pathspecs(ctx, dir, &root, std::slice::from_ref(f))?.into_iter().next(),
        None => None,
    };
    if file.as_deref() == Some(".") {
        file = None;
    }
    let (start, hide) = match p.revision.as_deref() {
        Some(r) if r.contains("..") => {
            let (a, b) = r.split_once("..").unwrap_or((r, ""));
            let b = b.trim_start_matches('.');
            let to = common::commit_at(&repo, if b.is_empty() { "HEAD" } else { b })?;
            let from = common::commit_at(&repo, if a.is_empty() { "HEAD" } else { a })?;
            (to.id(), Some(from.id()))
        }
        Some(r) => (common::commit_at(&repo, r)?.id(), None),
        None => match common::head_commit(&repo)? {
            Some(c) => (c.id(), None),
            None => {
                return Ok(Log { commits: Vec::new(), count: 0, unborn: true, truncated: false });
            }
        },
    };
    let walk = history::Walk::new(&repo, start, hide, p.since)?;
    let ordered: Box<dyn Iterator<Item = Result<git2::Commit<'_>>>> = match p.order {
        Order::Default => Box::new(walk),
        order => {
            // git sorts the walk's list; commits newer than until are not in it.
            let mut list = Vec::new();
            for c in walk {
                let c = c?;
                let when = c.time().seconds();
                if p.until.is_none_or(|u| when <= u) {
                    list.push((c.id(), when, c.parent_ids().collect()));
                }
            }
            let ids = history::topo_sort(&list, order == Order::Date);
            Box::new(ids.into_iter().map(|id| repo.find_commit(id).map_err(fail)))
        }
    };
    let mut commits = Vec::new();
    let mut skipped = 0usize;
    let mut more = false;
    let mut short_ids: HashMap<git2::Oid, String> = HashMap::new();
    // The commits whose files to list, in log order (one per entry of commits).
    let mut wanted: Vec<git2::Oid> = Vec::new();
    for (seen, c) in ordered.enumerate() {
        if seen % 256 == 255 {
            ctx.cancel.check()?;
        }
        let c = c?;
        let oid = c.id();
        let when = c.committer().when().seconds();
        if p.until.is_some_and(|u| when > u) {
            continue;
        }
        if let Some(re) = &p.author {
            let a = c.author();
            let who = format!(
                "{} <{}>",
                String::from_utf8_lossy(a.name_bytes()),
                String::from_utf8_lossy(a.email_bytes())
            );
            if !re.is_match(&who) {
                continue;
            }
        }
        if let Some(re) = &p.grep
            && !re.is_match(&String::from_utf8_lossy(c.message_bytes()))
        {
            continue;
        }
        if let Some(f) = file.clone() {
            if !touches(&c, &f)? {
                continue;
            }
            if p.follow
                && let Some(old) = renamed_from(&repo, &c, &f)?
            {
                file = Some(old);
            }
        }
        if skipped < p.skip {
            skipped += 1;
            continue;
        }
        if commits.len() >= p.max {
            more = true;
            break;
        }
        let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
        let (subject, body) = split_message(&message);
        let short = match short_ids.get(&oid) {
            Some(s) => s.clone(),
            None => {
                let s = c
                    .as_object()
                    .short_id()
                    .ok()
                    .and_then(|b| b.as_str().ok().map(str::to_owned))
                    .unwrap_or_else(|| oid.to_string()[..7].to_owned());
                short_ids.insert(oid, s.clone());
                s
            }
        };
        // The author's date is the commit's "date" too: written once.
        let author = common::person(&c.author());
        let entry = Commit {
            id: oid.to_string(),
            short_id: short,
            date: author.date.clone(),
            author,
            committer: common::person(&c.committer()),
            subject,
            body,
            parents: c.parent_ids().map(|p| p.to_string()).collect(),
            files: None,
        };
        if p.files {
            wanted.push(oid);
        }
        commits.push(entry);
    }
    if p.files {
        for (entry, files) in commits.iter_mut().zip(files_of(&repo, &scope, &wanted, &ctx.cancel)?) {
            entry.files = Some(files.unwrap_or_default());
        }
    }
    Ok(Log { count: commits.len(), commits, unborn: false, truncated: more })
}

/// A message's subject (its first paragraph, joined on one line, as git's `%s`) and body
/// (the rest, as `%b`).
pub fn split_message(m: &str) -> (String, String) {
    let m = m.trim_start_matches('\n');
    let (head, body) = match m.find("\n\n") {
        Some(i) => (&m[..i], m[i + 2..].trim_start_matches('\n')),
        None => (m.trim_end_matches('\n'), ""),
    };
    let subject = head.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    (subject, body.to_owned())
}

fn render(d: &Log) -> String {
    let mut out = String::new();
    if d.commits.is_empty() {
        return if d.unborn { "No commits yet.\n".into() } else { "No commits match.\n".into() };
    }
    for c in &d.commits {
        // Writing to a String cannot fail.
        let _ =
            writeln!(out, "{} {} {} <{}> {}", c.short_id, c.date, c.author.name, c.author.email, c.subject);
        for f in c.files.iter().flatten() {
            let count = |v: &Value| v.as_u64().map_or_else(|| "-".to_owned(), |n| n.to_string());
            let (a, dl) = (count(&f["additions"]), count(&f["deletions"]));
            let path = f["path"].as_str().unwrap_or_default();
            let _ = match f["oldPath"].as_str() {
                Some(o) => writeln!(out, "    {a}\t{dl}\t{o} => {path}"),
                None => writeln!(out, "    {a}\t{dl}\t{path}"),
            };
        }
    }
    if d.truncated {
        out.push_str(&format!(
            "[{} commits shown; more match: raise maxCount or use skip]\n",
            d.commits.len()
        ));
    }
    out
}

/// Run `git_log`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let follow = Flag::on(a.follow);
    let file = a.file.filter(|f| !f.is_empty());
    if follow && file.is_none() {
        return Err(ToolError::invalid("follow needs file: the path to follow across renames"));
    }
    let plan = Plan {
        revision: a.revision.filter(|r| !r.is_empty()),
        max: Cap::or(a.max_count, DEFAULT_COUNT),
        skip: Offset::or(a.skip, 0),
        since: date_arg("since", a.since)?,
        until: date_arg("until", a.until)?,
        author: regex_arg("author", a.author)?,
        grep: regex_arg("grep", a.grep)?,
        file,
        follow,
        files: Flag::on(a.files),
        order: a.order.unwrap_or_default(),
    };
    let c = ctx.clone();
    crate::blocking(NAME, move || log(&dir, &c, plan)).await
}

/// The `git_log` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitLog",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[
        ("repo_path", "path"),
        ("limit", "maxCount"),
        ("max_count", "maxCount"),
        ("n", "maxCount"),
        ("count", "maxCount"),
        ("ref", "revision"),
        ("rev", "revision"),
        ("branch", "revision"),
        ("filePath", "file"),
        ("file_path", "file"),
        ("include_files", "files"),
        ("includeFiles", "files"),
        ("stat", "files"),
        ("numstat", "files"),
        ("sort", "order"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_log.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A linear history of `n` commits, each rewriting one file; their ids, newest last.
    fn history(repo: &git2::Repository, n: usize) -> Vec<git2::Oid> {
        let sig = git2::Signature::new("Ada", "ada@example.com", &git2::Time::new(1_700_000_000, 0)).unwrap();
        let mut ids: Vec<git2::Oid> = Vec::new();
        for i in 0..n {
            let blob = repo.blob(format!("line {i}\n").as_bytes()).unwrap();
            let mut tb = repo.treebuilder(None).unwrap();
            tb.insert("f.txt", blob, 0o100_644).unwrap();
            let tree = repo.find_tree(tb.write().unwrap()).unwrap();
            let parent = ids.last().map(|p| repo.find_commit(*p).unwrap());
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            ids.push(repo.commit(Some("HEAD"), &sig, &sig, "m", &tree, &parents).unwrap());
        }
        ids
    }

    /// A call aborted while it runs stops walking and counting (its result has already been
    /// given up by the pipeline; the work must not go on in the background).
    #[test]
    fn a_cancelled_call_stops_walking_and_counting() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let repo = git2::Repository::init(d).unwrap();
        let ids = history(&repo, 300);
        let ctx = Ctx::new(d.to_str().unwrap()).unwrap();
        let scope = super::super::boundary::Scope::of(&ctx.workspace, &repo).unwrap();
        assert_eq!(files_of(&repo, &scope, &ids, &ctx.cancel).unwrap().len(), 300);
        let plan = || Plan {
            revision: None,
            max: 1000,
            skip: 0,
            since: None,
            until: None,
            author: None,
            grep: None,
            file: None,
            follow: false,
            files: false,
            order: Order::Default,
        };
        let all = log(d, &ctx, plan()).unwrap().data_value().unwrap();
        assert_eq!(all["count"], 300);
        ctx.cancel.cancel();
        let e = files_of(&repo, &scope, &ids, &ctx.cancel).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
        let e = log(d, &ctx, plan()).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
    }
}
