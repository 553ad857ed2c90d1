//! The `code` family: search and code navigation for agents — `grep`, `glob`, the tree-sitter
//! symbol tools (`list_symbols`, `find_symbol`, `find_references`, `search_codebase`) and
//! `project_map`. Every walk goes through the one ignore engine ([`walk`]), which honours
//! `.gitignore`, `respectGitignore` and `includeHidden` and counts what it hid. An abort
//! returns what was found so far, flagged `cancelled` (`partial_on_cancel`).

pub mod args;
pub mod glob;
pub mod globs;
pub mod grep;
pub mod walk;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::ToolError;
use crate::registry::{Family, Permission, RunFuture, ToolSpec};

const fn spec(name: &'static str, js_name: &'static str) -> ToolSpec {
    ToolSpec { name, js_name, family: "code", mutating: false, confirms: false, permission: Permission::None }
}

/// The family.
pub const FAMILY: Family = Family {
    name: "code",
    tools: &[spec("grep", "grep"), spec("glob", "glob")],
    schemas: include_str!("schemas.json"),
    run,
    partial_on_cancel: true,
};

fn run<'a>(name: &'a str, args: &'a Value, ctx: &'a Ctx) -> RunFuture<'a> {
    Box::pin(async move {
        match name {
            "grep" => grep::run(args, ctx).await,
            "glob" => glob::run(args, ctx).await,
            other => Err(ToolError::internal(format!("tool {other} is registered but not dispatched"))),
        }
    })
}
