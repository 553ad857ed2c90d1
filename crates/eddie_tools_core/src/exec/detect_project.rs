//! `detect_project` (Floyd; Stack `project_scan`): the project types of a directory and the
//! commands to test, lint, format, type-check, build and install it.
//!
//! Supported: npm / pnpm / yarn / bun (package.json scripts, lockfiles, `packageManager`),
//! cargo, go, python (pytest / ruff / black / mypy; poetry and uv), and make (targets). The
//! first language found fills the commands; a Makefile fills what is still missing.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::args::{self, Text};
use crate::context::Ctx;
use crate::engine::process::command::{self, quote};
pub use crate::engine::project::detect::{Action, Detected, Project, commands_json, detect, on_path};
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.detect_project.result.v1";

/// The project directory argument (`path`, or Floyd's `projectPath`), resolved.
pub fn project_dir(path: Option<Text>, project_path: Option<Text>, ctx: &Ctx) -> Result<(PathBuf, String)> {
    let given = args::text(path).or_else(|| args::text(project_path));
    command::resolve_cwd(ctx, given.as_deref())
}

const NAME: &str = "detect_project";

/// The arguments of `detect_project`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Project directory, relative to the workspace (default: the workspace root).
    pub path: Option<Text>,
    /// Alias of path (Floyd).
    pub project_path: Option<Text>,
}

/// Run `detect_project`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let (dir, shown) = project_dir(a.path, a.project_path, ctx)?;
    let path = ctx.env_var("PATH");
    let d = dir.clone();
    let p = crate::blocking("detect_project", move || Ok(detect(&d, path.as_deref()))).await?;
    let has_git = dir.join(".git").exists();
    let mut content = if p.types.is_empty() {
        format!(
            "No known project type in {shown} (looked for package.json, Cargo.toml, go.mod, pyproject.toml / setup.py / requirements.txt, Makefile)."
        )
    } else {
        format!(
            "{} project{} in {shown}: {}",
            p.types.join(" + "),
            p.package_manager.map(|m| format!(" ({m})")).unwrap_or_default(),
            p.name
        )
    };
    for a in Action::ALL {
        if let Some(d) = p.commands.get(&a) {
            let line = d.argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
            content.push_str(&format!("\n  {:<10} {line}   ({})", a.key(), d.source));
        }
    }
    Ok(ToolOutput::new(
        content,
        json!({
            "path": shown,
            "name": p.name,
            "types": p.types,
            "primary": p.types.first(),
            "packageManager": p.package_manager,
            "markers": p.markers,
            "hasGit": has_git,
            "commands": commands_json(&p),
        }),
    ))
}

/// The `detect_project` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "detect_project",
    js_name: "detectProject",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("detect_project.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
