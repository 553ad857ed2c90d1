//! `cache_clear` (Floyd): delete every entry of one tier, or of every tier.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Tier;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "cache_clear";

/// The arguments of `cache_clear`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Only this tier (default: every tier).
    pub tier: Option<Tier>,
}

/// Run `cache_clear` on the calling thread.
pub fn run_sync(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let stores = super::existing(ctx, &super::tiers(a.tier), a.tier.is_none())?;
    let mut cleared = Map::new();
    let mut total = 0;
    for (tier, store) in &stores {
        let n = store.clear()?;
        total += n;
        cleared.insert(tier.as_str().into(), json!(n));
    }
    let names: Vec<&str> = stores.iter().map(|(t, _)| t.as_str()).collect();
    Ok(ToolOutput::new(
        format!(
            "Cleared {total} entries ({}).",
            if names.is_empty() { "no tier".into() } else { names.join(", ") }
        ),
        json!({"cleared": cleared, "total": total}),
    ))
}

/// The blocking form.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    super::blocking(NAME, args, ctx, run_sync)
}

/// The `cache_clear` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "cacheClear",
    family: "memory",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("cache_clear.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let (args, ctx) = (args.clone(), ctx.clone());
            crate::blocking(NAME, move || super::parsed(NAME, &args, &ctx, run_sync)).await
        })
    },
};
