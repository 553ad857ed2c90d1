//! `git_show`: a commit (its header and its diff against the first parent, under a byte
//! budget), or, with `file`, a file's content at a revision (binary files reported, not
//! dumped). Read with libgit2.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::common;
use crate::call::args::lenient::{Offset, StringOrList};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "git_show";

/// The arguments of `git_show`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
    /// The commit, branch or tag (default HEAD; also: ref, commit, rev).
    pub revision: Option<String>,
    /// Show this file's content at the revision instead of the commit (relative to path).
    pub file: Option<String>,
    /// Limit the commit's diff to these files.
    pub files: Option<StringOrList>,
    /// Byte budget of the patch text or file content (default 50000).
    pub max_bytes: Option<Offset<{ common::MAX_BUDGET as u64 }>>,
}

fn show_file(repo: &git2::Repository, rev: &str, spec: &str, budget: usize) -> Result<Value> {
    let tree = common::tree_at(repo, rev)?;
    let entry = tree.get_path(std::path::Path::new(spec)).map_err(|_| {
        ToolError::new(ErrorCode::NotFound, format!("{spec} does not exist at {rev}")).with_prop("path", spec)
    })?;
    let obj = entry.to_object(repo).map_err(|e| super::err(&e, ErrorCode::Internal, "show"))?;
    let Some(blob) = obj.as_blob() else {
        return Err(ToolError::new(
            ErrorCode::IsADirectory,
            format!("{spec} is a folder at {rev}; give a file"),
        ));
    };
    let bytes = blob.content();
    let binary = blob.is_binary();
    let (content, truncated) = if binary {
        (None, false)
    } else {
        let mut cut = bytes.len().min(budget);
        while cut < bytes.len() && cut > 0 && (bytes[cut] & 0xC0) == 0x80 {
            cut -= 1;
        }
        (Some(String::from_utf8_lossy(&bytes[..cut]).into_owned()), cut < bytes.len())
    };
    Ok(json!({
        "kind": "file",
        "revision": rev,
        "file": spec,
        "blob": blob.id().to_string(),
        "size": bytes.len(),
        "binary": binary,
        "content": content,
        "truncated": truncated,
    }))
}

fn show_commit(
    repo: &git2::Repository,
    scope: &super::boundary::Scope,
    rev: &str,
    specs: &[String],
    budget: usize,
) -> Result<Value> {
    let c = common::commit_at(repo, rev)?;
    let fail = |e: git2::Error| super::err(&e, ErrorCode::Internal, "show");
    let tree = c.tree().map_err(fail)?;
    let parent =
        if c.parent_count() > 0 { Some(c.parent(0).and_then(|p| p.tree()).map_err(fail)?) } else { None };
    let mut opts = common::diff_options(3, specs);
    let mut d = repo.diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut opts)).map_err(fail)?;
    common::find_renames(&mut d)?;
    let r = common::render(&d, true, budget, scope)?;
    let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
    let (subject, body) = super::git_log::split_message(&message);
    let text = common::render_text(&r, true);
    Ok(json!({
        "kind": "commit",
        "revision": rev,
        "id": c.id().to_string(),
        "shortId": c.as_object().short_id().ok().and_then(|b| b.as_str().ok().map(str::to_owned)),
        "author": common::person(&c.author()),
        "committer": common::person(&c.committer()),
        "subject": subject,
        "body": body,
        "message": message,
        "parents": c.parent_ids().map(|p| p.to_string()).collect::<Vec<_>>(),
        "files": r.files,
        "totals": {"files": r.files.len(), "additions": r.additions, "deletions": r.deletions},
        "patch": r.patch,
        "truncated": !r.omitted.is_empty(),
        "omittedBytes": r.omitted_bytes,
        "omittedFiles": r.omitted,
        "text": text,
    }))
}

fn render(d: &mut Value) -> String {
    if d["kind"] == "file" {
        let head = format!(
            "{}:{} ({} bytes)\n",
            d["revision"].as_str().unwrap_or(""),
            d["file"].as_str().unwrap_or(""),
            d["size"]
        );
        if d["binary"] == true {
            return format!("{head}binary file, not shown\n");
        }
        let mut s = format!("{head}{}", d["content"].as_str().unwrap_or(""));
        if d["truncated"] == true {
            s.push_str("\n[truncated at maxBytes]\n");
        }
        return s;
    }
    let text = match d.as_object_mut().and_then(|o| o.remove("text")) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let mut s = format!(
        "commit {}\nAuthor: {} <{}>\nDate:   {}\n\n",
        d["id"].as_str().unwrap_or(""),
        d["author"]["name"].as_str().unwrap_or(""),
        d["author"]["email"].as_str().unwrap_or(""),
        d["author"]["date"].as_str().unwrap_or(""),
    );
    for line in d["message"].as_str().unwrap_or("").trim_end().lines() {
        s.push_str(&format!("    {line}\n"));
    }
    s.push('\n');
    s.push_str(&text);
    s
}

/// Run `git_show`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let rev = a.revision.filter(|r| !r.is_empty()).unwrap_or_else(|| "HEAD".into());
    let budget = Offset::or(a.max_bytes, common::DEFAULT_BUDGET);
    let file = a.file.filter(|f| !f.is_empty());
    let files = common::list(a.files);
    let c = ctx.clone();
    let mut data = crate::blocking(NAME, move || {
        let (repo, scope) = common::checkout_read(&c.workspace, &dir)?;
        let root = common::workdir(&repo)?;
        match file {
            Some(f) => {
                let spec = common::pathspecs(&c, &dir, &root, &[f])?.into_iter().next().unwrap_or_default();
                show_file(&repo, &rev, &spec, budget)
            }
            None => {
                let specs = scope.limit(common::pathspecs(&c, &dir, &root, &files)?);
                show_commit(&repo, &scope, &rev, &specs, budget)
            }
        }
    })
    .await?;
    let content = render(&mut data);
    Ok(ToolOutput::new(content, data))
}

/// The `git_show` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "gitShow",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[
        ("repo_path", "path"),
        ("ref", "revision"),
        ("rev", "revision"),
        ("commit", "revision"),
        ("object", "revision"),
        ("filePath", "file"),
        ("file_path", "file"),
        ("max_bytes", "maxBytes"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_show.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
