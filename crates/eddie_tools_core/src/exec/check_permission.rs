//! `check_permission`: a tool's level (Floyd's) and whether a call would ask now. The levels
//! are enforced by the one gate in the pipeline ([`crate::call::gate`]): a `none` tool runs, a
//! `moderate` one asks once per session, a `dangerous` one on every call. A model cannot grant
//! itself anything (there is no `grantPermission` argument).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::gate;
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;
use crate::registry;
use crate::spec::Permission;

const NAME: &str = "check_permission";

/// The arguments of `check_permission`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
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
    check(a, ctx)
}

/// The blocking form: a lookup, no I/O.
pub fn run_blocking(args: &serde_json::Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    check(crate::call::args::parse(NAME, args)?, ctx).map(Some)
}

fn check(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let name = a.tool_name;
    if name.is_empty() {
        return Err(ToolError::invalid("toolName must be a non-empty string"));
    }
    let Some(spec) = registry::find(&name) else {
        return Err(crate::call::unknown_tool(&name));
    };
    let asks = spec.permission != Permission::None || spec.confirms();
    let (granted_now, will_ask) = match spec.permission {
        _ if !asks => (true, false),
        Permission::Moderate => {
            let g = ctx.session.as_deref().is_some_and(|s| gate::granted(s, spec.name));
            (g, !g)
        }
        _ => (false, true),
    };
    let level = spec.permission.as_str();
    let content = match (will_ask, spec.permission) {
        (false, Permission::Moderate) => format!("{}: moderate; already allowed in this session.", spec.name),
        (false, _) => format!("{}: {level}; runs without asking.", spec.name),
        (true, Permission::Moderate) => {
            format!("{}: moderate; asks once per session (not yet allowed).", spec.name)
        }
        (true, _) => format!("{}: {level}; asks on every call.", spec.name),
    };
    Ok(ToolOutput::new(
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
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "check_permission",
    js_name: "checkPermission",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("check_permission.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
