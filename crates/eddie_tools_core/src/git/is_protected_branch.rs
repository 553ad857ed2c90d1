//! `is_protected_branch` (Floyd): whether a branch is protected — by the patterns of
//! `git config eddie.protectedBranch` (multi-valued, globs such as `release/*`), else by the
//! defaults `main`, `master`, `release/*`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::common;
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "is_protected_branch";

/// The arguments of `is_protected_branch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The branch (default: the current branch).
    pub branch: Option<String>,
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
}

/// Run `is_protected_branch`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let c = ctx.clone();
    let data = crate::blocking(NAME, move || {
        let (repo, _) = super::open(&c.workspace, &dir)?;
        let branch = match a.branch.filter(|b| !b.is_empty()) {
            Some(b) => b,
            None => common::current_branch(&repo).ok_or_else(|| {
                ToolError::new(
                    ErrorCode::RefNotFound,
                    "HEAD is detached: there is no current branch; pass branch",
                )
            })?,
        };
        let pattern = common::protection(&repo, &c, &branch)?;
        Ok(json!({
            "branch": branch,
            "protected": pattern.is_some(),
            "pattern": pattern,
            "source": common::protection_source(&repo, &c),
        }))
    })
    .await?;
    let b = data["branch"].as_str().unwrap_or_default();
    let content = match data["pattern"].as_str() {
        Some(p) => format!(
            "{b} is protected (matches {p:?} from {}).\n",
            data["source"].as_str().unwrap_or_default()
        ),
        None => format!("{b} is not protected ({}).\n", data["source"].as_str().unwrap_or_default()),
    };
    Ok(ToolOutput::new(content, data))
}

/// The `is_protected_branch` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "isProtectedBranch",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[
        ("repo_path", "path"),
        ("name", "branch"),
        ("branch_name", "branch"),
        ("branchName", "branch"),
    ],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("is_protected_branch.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
