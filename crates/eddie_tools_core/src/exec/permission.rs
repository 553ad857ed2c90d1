//! Permission levels (Floyd's): a `none` tool runs, a `moderate` one asks `ctx.confirm` once
//! per session, a `dangerous` one on every call. The session is `ctx.sessionId` when the
//! caller gives one, else the ctx object itself (the binding tags it); a ctx without either
//! is a session of one call. A declined question is not remembered: the next call asks again.
//! A model cannot grant itself anything (there is no `grantPermission` argument).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;
use crate::registry::{self, Permission};

/// The outputSchema `$id` of `check_permission`.
pub const SCHEMA: &str = "eddie.tool.check_permission.result.v1";

fn grants() -> &'static Mutex<HashSet<(String, &'static str)>> {
    static GRANTS: OnceLock<Mutex<HashSet<(String, &'static str)>>> = OnceLock::new();
    GRANTS.get_or_init(|| Mutex::new(HashSet::new()))
}

fn granted(session: &str, tool: &'static str) -> bool {
    grants().lock().map(|g| g.contains(&(session.to_owned(), tool))).unwrap_or(false)
}

/// The level of `tool` (model or JS name).
pub fn level(tool: &str) -> Option<Permission> {
    registry::find(tool).map(|s| s.permission)
}

/// Ask for permission to run `tool` as its level says; `message` says what it will do.
pub async fn allow(ctx: &Ctx, tool: &'static str, message: String) -> Result<bool> {
    match level(tool).unwrap_or(Permission::Dangerous) {
        Permission::None => Ok(true),
        Permission::Dangerous => ctx.confirm(message).await,
        Permission::Moderate => {
            if let Some(s) = &ctx.session
                && granted(s, tool)
            {
                return Ok(true);
            }
            let text = format!("{message}\n(Allow {tool} for the rest of this session?)");
            let ok = ctx.confirm(text).await?;
            if ok
                && let Some(s) = &ctx.session
                && let Ok(mut g) = grants().lock()
            {
                g.insert((s.clone(), tool));
            }
            Ok(ok)
        }
    }
}

const NAME: &str = "check_permission";

/// The arguments of `check_permission`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Args {
    /// A tool name, e.g. run_tests.
    #[schemars(length(min = 1))]
    pub tool_name: String,
    /// Accepted for compatibility; permissions do not depend on it.
    #[schemars(with = "Option<String>")]
    pub project_path: Option<serde::de::IgnoredAny>,
}

/// `check_permission`: the level of a tool and whether a call would ask now.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let name = a.tool_name;
    if name.is_empty() {
        return Err(ToolError::invalid("toolName must be a non-empty string"));
    }
    let Some(spec) = registry::find(&name) else {
        return Err(ToolError::new(crate::error::ErrorCode::UnknownTool, format!("Unknown tool: {name}")));
    };
    // The exec family gates by level; other families keep their own confirm behaviour.
    let by_level = spec.family == super::FAMILY.name;
    let (granted_now, will_ask) = match (by_level, spec.permission) {
        (true, Permission::None) => (true, false),
        (true, Permission::Moderate) => {
            let g = ctx.session.as_deref().is_some_and(|s| granted(s, spec.name));
            (g, !g)
        }
        (true, Permission::Dangerous) => (false, true),
        (false, _) => (!spec.confirms(), spec.confirms()),
    };
    let level = spec.permission.as_str();
    let content = match (will_ask, spec.permission) {
        (false, Permission::Moderate) => format!("{}: moderate; already allowed in this session.", spec.name),
        (false, _) => format!("{}: {level}; runs without asking.", spec.name),
        (true, Permission::Moderate) if by_level => {
            format!("{}: moderate; asks once per session (not yet allowed).", spec.name)
        }
        (true, _) if by_level => format!("{}: {level}; asks on every call.", spec.name),
        (true, _) => format!("{}: {level}; asks ctx.confirm before it acts.", spec.name),
    };
    Ok(ToolOutput::new(
        SCHEMA,
        content,
        json!({
            "toolName": spec.name,
            "level": level,
            "granted": granted_now,
            "willAsk": will_ask,
            "session": ctx.session.is_some(),
        }),
    ))
}

/// The `check_permission` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "check_permission",
    js_name: "checkPermission",
    family: "exec",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("check_permission.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
