//! `git_blame`: who last changed each line of a file, grouped in hunks, computed by our own
//! blame over libgit2's objects ([`super::blame`], git blame's algorithm and diff). At a revision,
//! or (by default) the working tree's content on top of HEAD, where lines not yet committed carry
//! the zero id, as `git blame` shows them.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common;
use crate::call::args::lenient::Cap;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "git_blame";
const MAX_LINES_SHOWN: usize = 2000;

/// The arguments of `git_blame`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The file to blame (relative to path).
    pub file: String,
    /// Blame the file as of this revision (default: the working tree on top of HEAD).
    pub revision: Option<String>,
    /// First line (1-based).
    pub start_line: Option<Cap>,
    /// Last line (inclusive).
    pub end_line: Option<Cap>,
}

fn blame(
    dir: &std::path::Path,
    ctx: &Ctx,
    file: &str,
    rev: Option<&str>,
    range: (Option<usize>, Option<usize>),
) -> Result<Value> {
    let (repo, _) = common::checkout_read(&ctx.workspace, dir)?;
    let root = common::workdir(&repo)?;
    let spec = common::pathspecs(ctx, dir, &root, &[file.to_owned()])?.into_iter().next().unwrap_or_default();
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "blame");
    let head = match rev {
        Some(r) => Some(common::commit_at(&repo, r)?),
        None => common::head_commit(&repo)?,
    };
    let Some(head) = head else {
        return Err(ToolError::new(
            ErrorCode::RefNotFound,
            "the branch has no commits yet: nothing to blame",
        ));
    };
    let tree = head.tree().map_err(fail)?;
    let in_tree = tree.get_path(std::path::Path::new(&spec)).ok();
    let text: Vec<u8> = match rev {
        Some(_) => {
            let Some(e) = &in_tree else {
                return Err(ToolError::new(
                    ErrorCode::NotFound,
                    format!("{file} does not exist at {}", rev.unwrap_or("HEAD")),
                ));
            };
            let obj = e.to_object(&repo).map_err(fail)?;
            obj.as_blob().map(|b| b.content().to_vec()).ok_or_else(|| {
                ToolError::new(ErrorCode::IsADirectory, format!("{file} is a folder; give a file"))
            })?
        }
        None => {
            let p = root.join(&spec);
            match std::fs::read(&p) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                    return Err(ToolError::new(
                        ErrorCode::IsADirectory,
                        format!("{file} is a folder; give a file"),
                    ));
                }
                Err(e) => return Err(ToolError::fs(&e, "open", Some(&p))),
            }
        }
    };
    if in_tree.is_none() {
        return Err(ToolError::new(
            ErrorCode::NotFound,
            format!("{file} is not committed at HEAD: nothing to blame"),
        ));
    }
    if text.iter().take(8000).any(|b| *b == 0) {
        return Err(ToolError::new(ErrorCode::BinaryFile, format!("{file} is binary")));
    }
    let lines: Vec<&[u8]> = text.split_inclusive(|b| *b == b'\n').collect();
    let total = lines.len();
    let (start, end) = (range.0.unwrap_or(1), range.1.unwrap_or(total).min(total));
    if total > 0 && (start > total || start > end) {
        return Err(ToolError::invalid(format!(
            "the line range {start}-{end} is outside the file's {total} lines"
        )));
    }
    let worktree = if rev.is_none() { Some(text.as_slice()) } else { None };
    let range = if total == 0 { 0..0 } else { start - 1..end };
    let cancelled = || ctx.cancel.is_cancelled();
    let spans = super::blame::blame(&repo, &head, &spec, worktree, range, &cancelled)
        .map_err(|e| if super::blame::is_cancelled(&e) { ToolError::cancelled() } else { fail(e) })?
        .ok_or_else(|| {
            ToolError::new(ErrorCode::NotFound, format!("{file} is not a file at {}", rev.unwrap_or("HEAD")))
        })?;
    let mut who: std::collections::HashMap<git2::Oid, (String, String, String, String)> =
        std::collections::HashMap::new();
    let mut hunks = Vec::with_capacity(spans.len());
    for s in spans {
        let id = s.commit.unwrap_or(git2::Oid::ZERO_SHA1);
        let (author, email, date, summary) = match s.commit {
            Some(id) => match who.get(&id) {
                Some(w) => w.clone(),
                None => {
                    let c = repo.find_commit(id).map_err(fail)?;
                    let a = c.author();
                    let w = (
                        String::from_utf8_lossy(a.name_bytes()).into_owned(),
                        String::from_utf8_lossy(a.email_bytes()).into_owned(),
                        common::iso(a.when()),
                        String::from_utf8_lossy(c.summary_bytes().unwrap_or_default()).into_owned(),
                    );
                    who.insert(id, w.clone());
                    w
                }
            },
            None => {
                ("Not Committed Yet".to_owned(), "not.committed.yet".to_owned(), String::new(), String::new())
            }
        };
        hunks.push(json!({
            "startLine": s.start + 1,
            "lines": s.lines,
            "commit": id.to_string(),
            "shortId": id.to_string()[..8].to_owned(),
            "committed": s.commit.is_some(),
            "author": author,
            "email": email,
            "date": date,
            "summary": summary,
            "origPath": s.path,
            "origStartLine": s.orig_start + 1,
        }));
    }
    let shown: Vec<String> = lines
        .iter()
        .enumerate()
        .skip(start.saturating_sub(1))
        .take(end.saturating_sub(start.saturating_sub(1)).min(MAX_LINES_SHOWN))
        .map(|(_, l)| String::from_utf8_lossy(l).trim_end_matches(['\n', '\r']).to_owned())
        .collect();
    Ok(json!({
        "file": spec,
        "revision": rev.map_or_else(|| "worktree".to_owned(), str::to_owned),
        "startLine": start,
        "endLine": end,
        "totalLines": total,
        "hunks": hunks,
        "lines": shown,
    }))
}

fn render(d: &Value) -> String {
    let mut out = String::new();
    let start = d["startLine"].as_u64().unwrap_or(1);
    let lines = d["lines"].as_array().cloned().unwrap_or_default();
    for h in d["hunks"].as_array().into_iter().flatten() {
        let first = h["startLine"].as_u64().unwrap_or(1);
        let n = h["lines"].as_u64().unwrap_or(0);
        let who = format!(
            "{} ({} {})",
            h["shortId"].as_str().unwrap_or(""),
            h["author"].as_str().unwrap_or(""),
            h["date"].as_str().unwrap_or("").get(..10).unwrap_or("")
        );
        for i in first..first + n {
            let text = usize::try_from(i - start)
                .ok()
                .and_then(|k| lines.get(k))
                .and_then(Value::as_str)
                .unwrap_or("");
            out.push_str(&format!("{who} {i:>5}) {text}\n"));
        }
    }
    if out.is_empty() {
        out.push_str("(no lines)\n");
    }
    out
}

/// Run `git_blame`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    if a.file.is_empty() {
        return Err(ToolError::invalid("file must be a non-empty path"));
    }
    let range = (a.start_line.map(|n| n.0), a.end_line.map(|n| n.0));
    let rev = a.revision.filter(|r| !r.is_empty());
    let c = ctx.clone();
    let data = crate::blocking(NAME, move || blame(&dir, &c, &a.file, rev.as_deref(), range)).await?;
    Ok(ToolOutput::new(render(&data), data))
}

/// The `git_blame` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitBlame",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[
        ("repo_path", "path"),
        ("filePath", "file"),
        ("file_path", "file"),
        ("ref", "revision"),
        ("rev", "revision"),
        ("commit", "revision"),
        ("start_line", "startLine"),
        ("end_line", "endLine"),
        ("start", "startLine"),
        ("end", "endLine"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_blame.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
