//! What the git tools share: opening a checkout, pathspecs from workspace paths, revisions,
//! the configuration (honouring `GIT_CONFIG_GLOBAL` / `GIT_CONFIG_NOSYSTEM` from `ctx.env`),
//! identities, branch protection, the index lock, and diffs as data plus patch text under a
//! byte budget.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::boundary::Scope;
use crate::call::args::lenient::StringOrList;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::workspace::Workspace;

/// The default byte budget of patch text.
pub const DEFAULT_BUDGET: usize = 50_000;
/// The largest byte budget a caller may ask for.
pub const MAX_BUDGET: usize = 10 * 1024 * 1024;

/// A repository with a working tree, opened from `dir` (searching upwards), and the part of it
/// the workspace `ws` lets a call read and write.
pub fn checkout(ws: &Workspace, dir: &Path) -> Result<(git2::Repository, Scope)> {
    let (repo, scope) = super::open(ws, dir)?;
    if repo.is_bare() {
        return Err(bare());
    }
    Ok((repo, scope))
}

/// [`checkout`] for the read-only tools: a handle kept from an earlier call on the same folder
/// when it is still exact ([`super::handles`]), else a fresh open; it goes back to the cache
/// when dropped. The workspace's scope is worked out again on every call.
pub fn checkout_read(ws: &Workspace, dir: &Path) -> Result<(super::handles::Lent, Scope)> {
    let repo = super::handles::lend(dir)?;
    let scope = Scope::of(ws, &repo)?;
    if repo.is_bare() {
        return Err(bare());
    }
    Ok((repo, scope))
}

fn bare() -> ToolError {
    ToolError::new(
        ErrorCode::NotARepository,
        "the repository is bare (no working tree); pass path: a folder of a checkout",
    )
}

/// The working tree root of `repo`.
pub fn workdir(repo: &git2::Repository) -> Result<PathBuf> {
    repo.workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| ToolError::new(ErrorCode::NotARepository, "the repository has no working tree"))
}

/// A list argument (`"a"` or `["a", "b"]`) as strings.
pub fn list(v: Option<StringOrList>) -> Vec<String> {
    match v {
        None => Vec::new(),
        Some(StringOrList::One(s)) if s.is_empty() => Vec::new(),
        Some(StringOrList::One(s)) => vec![s],
        Some(StringOrList::Many(v)) => v,
    }
}

/// Workspace paths (relative to `base`, the folder the call names, or absolute inside the
/// workspace) as repository-relative pathspecs. Escapes are refused like every path.
pub fn pathspecs(ctx: &Ctx, base: &Path, root: &Path, files: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        if f.is_empty() {
            return Err(ToolError::invalid("a file path must be a non-empty string"));
        }
        if f.contains('\0') {
            return Err(ToolError::invalid("a file path must not contain NUL"));
        }
        let joined = if Path::new(f).is_absolute() { PathBuf::from(f) } else { base.join(f) };
        let shown = joined.to_string_lossy().into_owned();
        let r = ctx.workspace.resolve(&shown)?;
        let rel = strip(&r.lexical, root).or_else(|| strip(&r.real, root)).ok_or_else(|| {
            ToolError::new(
                ErrorCode::OutsideWorkspace,
                format!("{f} is outside the repository at {}", root.display()),
            )
        })?;
        out.push(if rel.is_empty() { ".".to_owned() } else { rel });
    }
    Ok(out)
}

fn strip(p: &Path, root: &Path) -> Option<String> {
    let rel = p.strip_prefix(root).ok()?;
    Some(rel.to_string_lossy().trim_end_matches('/').to_owned())
}

/// A revision (`HEAD~2`, a branch, a tag, an id) as an object; `REF_NOT_FOUND` otherwise.
/// Nothing here ever reaches a process, so `--upload-pack=…` is just a name that is not found.
pub fn revision<'r>(repo: &'r git2::Repository, spec: &str) -> Result<git2::Object<'r>> {
    if spec.is_empty() || spec.contains('\0') {
        return Err(ToolError::invalid("a revision must be a non-empty string without NUL"));
    }
    let not_found = |why: &str| {
        ToolError::new(
            ErrorCode::RefNotFound,
            format!("revision {spec:?} not found ({why}); give a branch, tag or commit id"),
        )
        .with_prop("ref", spec)
    };
    let obj = repo.revparse_single(spec).map_err(|e| not_found(e.message()))?;
    // A handle kept between calls (`handles.rs`) may still hold an object `git prune` has
    // removed since in its cache: an object named by id must still be in the object database.
    if spec.len() == obj.id().as_bytes().len() * 2
        && spec.bytes().all(|b| b.is_ascii_hexdigit())
        && !repo.odb().is_ok_and(|db| db.exists(obj.id()))
    {
        return Err(not_found("no such object"));
    }
    Ok(obj)
}

/// A revision peeled to a commit.
pub fn commit_at<'r>(repo: &'r git2::Repository, spec: &str) -> Result<git2::Commit<'r>> {
    revision(repo, spec)?.peel_to_commit().map_err(|e| {
        ToolError::new(ErrorCode::RefNotFound, format!("{spec:?} is not a commit ({})", e.message()))
    })
}

/// A revision peeled to a tree.
pub fn tree_at<'r>(repo: &'r git2::Repository, spec: &str) -> Result<git2::Tree<'r>> {
    revision(repo, spec)?.peel_to_tree().map_err(|e| {
        ToolError::new(
            ErrorCode::RefNotFound,
            format!("{spec:?} has no tree ({}); give a commit", e.message()),
        )
    })
}

/// HEAD's commit, or `None` when the branch is unborn.
pub fn head_commit(repo: &git2::Repository) -> Result<Option<git2::Commit<'_>>> {
    match repo.head() {
        Ok(h) => h.peel_to_commit().map(Some).map_err(|e| super::err(&e, ErrorCode::Internal, "HEAD")),
        Err(e) if matches!(e.code(), git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound) => Ok(None),
        Err(e) => Err(super::err(&e, ErrorCode::Internal, "HEAD")),
    }
}

/// The current branch's short name (`None` when detached); for an unborn branch, the name
/// HEAD points to.
pub fn current_branch(repo: &git2::Repository) -> Option<String> {
    if repo.head_detached().unwrap_or(false) {
        return None;
    }
    let head = repo.find_reference("HEAD").ok()?;
    let target = head.symbolic_target().ok()??;
    Some(target.strip_prefix("refs/heads/").unwrap_or(target).to_owned())
}

/// The configuration git would use: the repository's, with `GIT_CONFIG_GLOBAL` and
/// `GIT_CONFIG_NOSYSTEM` from the call's environment honoured as git honours them.
pub fn config(repo: &git2::Repository, ctx: &Ctx) -> Result<git2::Config> {
    let global = ctx.env_var("GIT_CONFIG_GLOBAL");
    let nosystem =
        ctx.env_var("GIT_CONFIG_NOSYSTEM").is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "reading the git configuration");
    if global.is_none() && !nosystem {
        return repo.config().and_then(|mut c| c.snapshot()).map_err(fail);
    }
    let mut c = git2::Config::new().map_err(fail)?;
    let local = repo.path().join("config");
    if !nosystem && let Ok(p) = git2::Config::find_system() {
        c.add_file(&p, git2::ConfigLevel::System, false).map_err(fail)?;
    }
    match global {
        Some(g) if !g.is_empty() && g != "/dev/null" => {
            if Path::new(&g).is_file() {
                c.add_file(Path::new(&g), git2::ConfigLevel::Global, false).map_err(fail)?;
            }
        }
        Some(_) => {}
        None => {
            if let Ok(p) = git2::Config::find_global() {
                c.add_file(&p, git2::ConfigLevel::Global, false).map_err(fail)?;
            }
        }
    }
    if local.is_file() {
        c.add_file(&local, git2::ConfigLevel::Local, false).map_err(fail)?;
    }
    c.snapshot().map_err(fail)
}

/// An identity: `GIT_<KIND>_NAME` / `_EMAIL` / `_DATE` from the call's environment first (as
/// git does), else `user.name` / `user.email`; a clear `INVALID_ARGUMENT` when there is none.
pub fn signature(cfg: &git2::Config, ctx: &Ctx, kind: &str) -> Result<git2::Signature<'static>> {
    let name = ctx.env_var(&format!("GIT_{kind}_NAME")).or_else(|| cfg.get_string("user.name").ok());
    let email = ctx.env_var(&format!("GIT_{kind}_EMAIL")).or_else(|| cfg.get_string("user.email").ok());
    let (Some(name), Some(email)) = (name.filter(|n| !n.trim().is_empty()), email) else {
        return Err(ToolError::invalid(
            "no git identity: set user.name and user.email in the repository's config \
             (git config user.name \"Your Name\"; git config user.email you@example.com)",
        )
        .with_prop("missing", "user.name/user.email"));
    };
    let when = ctx.env_var(&format!("GIT_{kind}_DATE")).and_then(|d| parse_time(&d));
    let sig = match when {
        Some(t) => git2::Signature::new(&name, &email, &t),
        None => git2::Signature::now(&name, &email),
    };
    sig.map_err(|e| ToolError::invalid(format!("invalid git identity {name:?} <{email}>: {}", e.message())))
}

/// A date: ISO 8601 (`2026-01-02`, `2026-01-02T03:04:05Z`, with an offset), `@<unix>`, a unix
/// number, `N <unit>(s) ago`, `yesterday`, `today`, `now`.
pub fn parse_time(s: &str) -> Option<git2::Time> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
    let s = s.trim();
    let now = Utc::now().timestamp();
    let at = |secs: i64, off: i32| Some(git2::Time::new(secs, off));
    if let Some(n) = s.strip_prefix('@').and_then(|n| n.split_whitespace().next()?.parse::<i64>().ok()) {
        return at(n, 0);
    }
    if let Ok(n) = s.parse::<i64>() {
        return at(n, 0);
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(s) {
        return at(d.timestamp(), d.offset().local_minus_utc() / 60);
    }
    if let Ok(d) = DateTime::parse_from_rfc2822(s) {
        return at(d.timestamp(), d.offset().local_minus_utc() / 60);
    }
    for f in ["%Y-%m-%d %H:%M:%S %z", "%Y-%m-%dT%H:%M:%S%z"] {
        if let Ok(d) = DateTime::parse_from_str(s, f) {
            return at(d.timestamp(), d.offset().local_minus_utc() / 60);
        }
    }
    for f in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"] {
        if let Ok(d) = NaiveDateTime::parse_from_str(s, f) {
            return at(d.and_utc().timestamp(), 0);
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return at(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp(), 0);
    }
    let lower = s.to_ascii_lowercase();
    match lower.as_str() {
        "now" => return at(now, 0),
        "today" => return at(now - now.rem_euclid(86_400), 0),
        "yesterday" => return at(now - 86_400, 0),
        _ => {}
    }
    let words: Vec<&str> =
        lower.split(|c: char| c.is_whitespace() || c == '.').filter(|w| !w.is_empty()).collect();
    if let [n, unit, rest @ ..] = words.as_slice()
        && (rest.is_empty() || rest == ["ago"])
    {
        let n: i64 = n.parse().ok()?;
        let unit = unit.trim_end_matches('s');
        let secs = match unit {
            "second" | "sec" => 1,
            "minute" | "min" => 60,
            "hour" => 3600,
            "day" => 86_400,
            "week" => 7 * 86_400,
            "month" => 30 * 86_400,
            "year" => 365 * 86_400,
            _ => return None,
        };
        return at(now - n.checked_mul(secs)?, 0);
    }
    None
}

/// A git time as strict ISO 8601 with its offset (git's `%aI`).
pub fn iso(t: git2::Time) -> String {
    iso_fast(t).unwrap_or_else(|| iso_chrono(t))
}

/// [`iso`] through chrono's formatter (any date; a time chrono cannot hold as its seconds).
fn iso_chrono(t: git2::Time) -> String {
    use chrono::Offset;
    let off = chrono::FixedOffset::east_opt(t.offset_minutes() * 60).unwrap_or_else(|| chrono::Utc.fix());
    match chrono::DateTime::from_timestamp(t.seconds(), 0) {
        Some(d) => d.with_timezone(&off).format("%Y-%m-%dT%H:%M:%S%:z").to_string(),
        None => t.seconds().to_string(),
    }
}

/// [`iso`] written by hand for years 1–9999 (`None` otherwise): the same text as chrono's
/// `%Y-%m-%dT%H:%M:%S%:z` without parsing the format on every call (`git_log` writes three
/// dates per commit).
fn iso_fast(t: git2::Time) -> Option<String> {
    use std::fmt::Write as _;
    let offset = i64::from(t.offset_minutes());
    // chrono's FixedOffset takes less than a day either way; beyond it `iso` uses UTC.
    if offset.abs() >= 24 * 60 {
        return None;
    }
    let local = t.seconds().checked_add(offset * 60)?;
    let (days, secs) = (local.div_euclid(86_400), local.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date (Howard Hinnant's `civil_from_days`).
    let z = days.checked_add(719_468)?;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if !(1..=9999).contains(&year) {
        return None;
    }
    let (sign, off) = if offset < 0 { ('-', -offset) } else { ('+', offset) };
    let mut out = String::with_capacity(25);
    // Writing to a String cannot fail.
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        off / 60,
        off % 60
    );
    Some(out)
}

/// A signature as data: `{name, email, date}`.
#[derive(serde::Serialize)]
pub struct Person {
    /// The name (invalid UTF-8 replaced).
    pub name: String,
    /// The email (invalid UTF-8 replaced).
    pub email: String,
    /// The date, ISO 8601 with the signature's offset.
    pub date: String,
}

/// A signature as data.
pub fn person(s: &git2::Signature<'_>) -> Person {
    Person {
        name: String::from_utf8_lossy(s.name_bytes()).into_owned(),
        email: String::from_utf8_lossy(s.email_bytes()).into_owned(),
        date: iso(s.when()),
    }
}

/// The protection pattern that matches `branch`: `git config eddie.protectedBranch`
/// (multi-valued, globs), else `main`, `master`, `release/*`.
pub fn protection(repo: &git2::Repository, ctx: &Ctx, branch: &str) -> Result<Option<String>> {
    let cfg = config(repo, ctx)?;
    let mut patterns = Vec::new();
    if let Ok(mut entries) = cfg.multivar("eddie.protectedbranch", None) {
        while let Some(Ok(e)) = entries.next() {
            if let Ok(v) = e.value() {
                patterns.push(v.trim().to_owned());
            }
        }
    }
    let configured = !patterns.is_empty();
    if !configured {
        patterns = vec!["main".into(), "master".into(), "release/*".into()];
    }
    let branch = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    for p in patterns.iter().filter(|p| !p.is_empty()) {
        let matched = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher().is_match(branch))
            .unwrap_or(p == branch);
        if matched {
            return Ok(Some(p.to_string()));
        }
    }
    Ok(None)
}

/// Where the protection comes from, for messages.
pub fn protection_source(repo: &git2::Repository, ctx: &Ctx) -> &'static str {
    match config(repo, ctx)
        .ok()
        .and_then(|c| c.multivar("eddie.protectedbranch", None).ok().map(|mut m| m.next().is_some()))
    {
        Some(true) => "git config eddie.protectedBranch",
        _ => "the default protected branches (main, master, release/*)",
    }
}

/// `LOCKED` when another process holds `index.lock` (it is never removed here).
pub fn check_index_lock(repo: &git2::Repository) -> Result<()> {
    let lock = repo.path().join("index.lock");
    if lock.exists() {
        return Err(ToolError::new(
            ErrorCode::Locked,
            format!(
                "{} exists: another git process is using the repository; wait for it to finish \
                 (remove the file only if no git process is running). Nothing was changed.",
                lock.display()
            ),
        ));
    }
    Ok(())
}

/// `LOCKED` when a lock on ref `name` is held.
pub fn check_ref_lock(repo: &git2::Repository, name: &str) -> Result<()> {
    let lock = repo.path().join(format!("{name}.lock"));
    if lock.exists() {
        return Err(ToolError::new(
            ErrorCode::Locked,
            format!("{} exists: another git process is updating {name}; nothing was changed", lock.display()),
        ));
    }
    Ok(())
}

/// The paths that differ between trees `from` (none: empty) and `to`, both sides of each
/// change: what a checkout from one to the other writes or removes.
pub fn changed_paths(
    repo: &git2::Repository,
    from: Option<&git2::Tree<'_>>,
    to: &git2::Tree<'_>,
) -> Result<std::collections::HashSet<String>> {
    let d = repo
        .diff_tree_to_tree(from, Some(to), None)
        .map_err(|e| super::err(&e, ErrorCode::Internal, "checkout"))?;
    let mut out = std::collections::HashSet::new();
    for delta in d.deltas() {
        for f in [delta.old_file(), delta.new_file()] {
            if let Some(p) = f.path_bytes() {
                out.insert(String::from_utf8_lossy(p).into_owned());
            }
        }
    }
    Ok(out)
}

/// Diff options shared by the tools.
pub fn diff_options(context: u32, pathspecs: &[String]) -> git2::DiffOptions {
    let mut o = git2::DiffOptions::new();
    o.context_lines(context).ignore_submodules(false);
    for p in pathspecs {
        o.pathspec(p);
    }
    o
}

/// Rename detection as git's default (`diff.renames`: renames, 50% similarity).
pub fn find_renames(diff: &mut git2::Diff<'_>) -> Result<()> {
    // A rename pairs a deletion with an addition: without both there is nothing to find.
    let (mut added, mut deleted) = (false, false);
    for d in diff.deltas() {
        match d.status() {
            git2::Delta::Added | git2::Delta::Untracked => added = true,
            git2::Delta::Deleted => deleted = true,
            _ => {}
        }
    }
    if !(added && deleted) {
        return Ok(());
    }
    let mut f = git2::DiffFindOptions::new();
    f.renames(true);
    diff.find_similar(Some(&mut f)).map_err(|e| super::err(&e, ErrorCode::Internal, "rename detection"))
}

/// The status letter of a delta, as `git diff --name-status` prints it.
pub fn letter(d: git2::Delta) -> &'static str {
    use git2::Delta as D;
    match d {
        D::Added | D::Untracked => "A",
        D::Deleted => "D",
        D::Modified => "M",
        D::Renamed => "R",
        D::Copied => "C",
        D::Typechange => "T",
        D::Conflicted => "U",
        _ => "X",
    }
}

fn lossy(b: Option<&[u8]>) -> Option<String> {
    b.map(|b| String::from_utf8_lossy(b).into_owned())
}

/// A diff as data and patch text.
pub struct Rendered {
    /// One object per file (`path`, `oldPath`, `status`, `binary`, `additions`, `deletions`).
    pub files: Vec<Value>,
    /// The patch text kept within the budget.
    pub patch: String,
    /// Total added lines.
    pub additions: usize,
    /// Total deleted lines.
    pub deletions: usize,
    /// Bytes of patch text left out.
    pub omitted_bytes: usize,
    /// Paths whose patch was left out.
    pub omitted: Vec<String>,
}

/// Per-file numbers and (when `with_patch`) patch text under `budget` bytes: a file's patch is
/// kept whole or left out (and counted). Binary files are reported (`binary: true`, no line
/// counts, as `git diff --numstat` prints `-`), never dumped. A file with a side outside the
/// workspace (`scope`) is left out altogether.
pub fn render(diff: &git2::Diff<'_>, with_patch: bool, budget: usize, scope: &Scope) -> Result<Rendered> {
    let mut r = Rendered {
        files: Vec::new(),
        patch: String::new(),
        additions: 0,
        deletions: 0,
        omitted_bytes: 0,
        omitted: Vec::new(),
    };
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "diff");
    for (i, d) in diff.deltas().enumerate() {
        let sides = [d.old_file().path_bytes(), d.new_file().path_bytes()];
        if !sides.into_iter().flatten().all(|p| scope.contains(p)) {
            continue;
        }
        let Some(mut patch) = git2::Patch::from_diff(diff, i).map_err(fail)? else { continue };
        let delta = patch.delta();
        let status = delta.status();
        let new = lossy(delta.new_file().path_bytes());
        let old = lossy(delta.old_file().path_bytes());
        let path =
            if status == git2::Delta::Deleted { old.clone() } else { new.clone().or_else(|| old.clone()) };
        let binary =
            delta.flags().is_binary() || delta.new_file().is_binary() || delta.old_file().is_binary();
        let (adds, dels) = if binary {
            (None, None)
        } else {
            let (_, a, d) = patch.line_stats().map_err(fail)?;
            r.additions += a;
            r.deletions += d;
            (Some(a), Some(d))
        };
        let renamed = matches!(status, git2::Delta::Renamed | git2::Delta::Copied);
        r.files.push(json!({
            "path": path,
            "oldPath": if renamed { old } else { None },
            "status": letter(status),
            "binary": binary,
            "additions": adds,
            "deletions": dels,
        }));
        if with_patch {
            let buf = patch.to_buf().map_err(fail)?;
            let text = String::from_utf8_lossy(&buf);
            if r.patch.len() + text.len() <= budget {
                r.patch.push_str(&text);
            } else {
                r.omitted_bytes += text.len();
                r.omitted.push(path.unwrap_or_default());
            }
        }
    }
    Ok(r)
}

/// The files of a diff with their line counts, as [`render`]'s `files` without a patch: one pass
/// over the whole diff with a line callback (no patch object per file), as `git log --numstat`
/// counts.
pub fn numstat(diff: &git2::Diff<'_>, scope: &Scope) -> Result<Vec<Value>> {
    /// (the file's entry, whether it is in scope, additions, deletions).
    type Entry = (Value, bool, usize, usize);
    let files: std::cell::RefCell<Vec<Entry>> = std::cell::RefCell::new(Vec::new());
    let mut on_file = |d: git2::DiffDelta<'_>, _: f32| {
        let sides = [d.old_file().path_bytes(), d.new_file().path_bytes()];
        let inside = sides.into_iter().flatten().all(|p| scope.contains(p));
        let status = d.status();
        let new = lossy(d.new_file().path_bytes());
        let old = lossy(d.old_file().path_bytes());
        let path =
            if status == git2::Delta::Deleted { old.clone() } else { new.clone().or_else(|| old.clone()) };
        let binary = d.flags().is_binary() || d.new_file().is_binary() || d.old_file().is_binary();
        let renamed = matches!(status, git2::Delta::Renamed | git2::Delta::Copied);
        let entry = json!({
            "path": path,
            "oldPath": if renamed { old } else { None },
            "status": letter(status),
            "binary": binary,
        });
        files.borrow_mut().push((entry, inside, 0, 0));
        true
    };
    let mut on_binary = |_: git2::DiffDelta<'_>, _: git2::DiffBinary<'_>| {
        if let Some(last) = files.borrow_mut().last_mut() {
            last.0["binary"] = json!(true);
        }
        true
    };
    let mut on_line = |_: git2::DiffDelta<'_>, _: Option<git2::DiffHunk<'_>>, l: git2::DiffLine<'_>| {
        if let Some(last) = files.borrow_mut().last_mut() {
            match l.origin() {
                '+' => last.2 += 1,
                '-' => last.3 += 1,
                _ => {}
            }
        }
        true
    };
    diff.foreach(&mut on_file, Some(&mut on_binary), None, Some(&mut on_line))
        .map_err(|e| super::err(&e, ErrorCode::Internal, "diff"))?;
    Ok(files
        .into_inner()
        .into_iter()
        .filter(|(_, inside, _, _)| *inside)
        .map(|(mut v, _, a, d)| {
            let binary = v["binary"] == json!(true);
            v["additions"] = if binary { Value::Null } else { json!(a) };
            v["deletions"] = if binary { Value::Null } else { json!(d) };
            v
        })
        .collect())
}

/// `git diff --stat`-like lines plus the patch, with a note for what the budget left out.
pub fn render_text(r: &Rendered, with_patch: bool) -> String {
    let mut out = String::new();
    for f in &r.files {
        let path = f["path"].as_str().unwrap_or_default();
        let shown = match f["oldPath"].as_str() {
            Some(o) => format!("{o} => {path}"),
            None => path.to_owned(),
        };
        let st = f["status"].as_str().unwrap_or("M");
        if f["binary"].as_bool() == Some(true) {
            out.push_str(&format!("{st} {shown} | binary\n"));
        } else {
            out.push_str(&format!(
                "{st} {shown} | +{} -{}\n",
                f["additions"].as_u64().unwrap_or(0),
                f["deletions"].as_u64().unwrap_or(0)
            ));
        }
    }
    out.push_str(&format!(
        "{} file{} changed, {} insertion{}(+), {} deletion{}(-)\n",
        r.files.len(),
        if r.files.len() == 1 { "" } else { "s" },
        r.additions,
        if r.additions == 1 { "" } else { "s" },
        r.deletions,
        if r.deletions == 1 { "" } else { "s" },
    ));
    if with_patch && !r.patch.is_empty() {
        out.push('\n');
        out.push_str(&r.patch);
    }
    if !r.omitted.is_empty() {
        out.push_str(&format!(
            "\n[patch of {} file{} omitted ({} bytes over the maxBytes budget): {}; pass files: [...] or a larger maxBytes]\n",
            r.omitted.len(),
            if r.omitted.len() == 1 { "" } else { "s" },
            r.omitted_bytes,
            r.omitted.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_writes_what_chrono_writes() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let edges = [
            0,
            -1,
            86_399,
            86_400,
            951_782_400,     // 2000-02-29
            4_107_542_399,   // 2100-02-28T23:59:59
            -62_135_596_800, // 0001-01-01
            -62_135_596_801, // year 0: chrono's path
            253_402_300_799, // 9999-12-31T23:59:59
            253_402_300_800, // year 10000: chrono's path
            i64::MAX,
            i64::MIN,
        ];
        let offsets = [0, 60, -60, 330, -570, 345, -30, 1439, -1439, 1440, -1440, 5000];
        for &s in &edges {
            for &o in &offsets {
                let t = git2::Time::new(s, o);
                assert_eq!(iso(t), iso_chrono(t), "{s} {o}");
            }
        }
        for _ in 0..200_000 {
            let s = (next() % 400_000_000_000) as i64 - 100_000_000_000;
            let o = (next() % 2000) as i32 - 1000;
            let t = git2::Time::new(s, o);
            assert_eq!(iso(t), iso_chrono(t), "{s} {o}");
        }
    }
}
