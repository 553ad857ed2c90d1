//! `git_list_checkpoints`: the checkpoints ([`super::git_checkpoint`]) of a repository, newest
//! first.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::common;
use super::git_checkpoint::list;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The arguments of `git_list_checkpoints`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A folder inside the repository (default: the workspace root; also: repo_path, repoPath).
    pub path: Option<String>,
}

/// Run `git_list_checkpoints`.
pub async fn run_list(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let dir = super::locate(ctx, a.path.as_deref())?;
    let ws = ctx.workspace.clone();
    let all = crate::blocking("git_list_checkpoints", move || list(&common::checkout(&ws, &dir)?.0)).await?;
    let mut content = String::new();
    for c in &all {
        content.push_str(&format!(
            "{} {} {}\n",
            c["id"].as_str().unwrap_or(""),
            c["date"].as_str().unwrap_or(""),
            c["message"].as_str().unwrap_or("")
        ));
    }
    if content.is_empty() {
        content.push_str("No checkpoints yet.\n");
    }
    Ok(ToolOutput::new(content, json!({"checkpoints": all, "count": all.len()})))
}

/// The `git_list_checkpoints` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "git_list_checkpoints",
    js_name: "gitListCheckpoints",
    family: "git",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[("repo_path", "path")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("git_list_checkpoints.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move { run_list(crate::call::args::parse("git_list_checkpoints", args)?, ctx).await })
    },
};
