//! `cache_delete` (Floyd): delete a key from one tier, or from every tier.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Tier;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "cache_delete";

/// The arguments of `cache_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The key.
    pub key: String,
    /// Only this tier (default: every tier).
    pub tier: Option<Tier>,
}

/// Run `cache_delete` on the calling thread.
pub fn run_sync(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let key = super::check_key(&a.key)?;
    let stores = super::existing(ctx, &super::tiers(a.tier), a.tier.is_none())?;
    let mut from = Vec::new();
    for (tier, store) in &stores {
        if store.delete(key)? {
            from.push(tier.as_str());
        }
    }
    let content = if from.is_empty() {
        format!("\"{key}\" was not in the cache.")
    } else {
        format!("Deleted \"{key}\" from the {} tier.", from.join(", "))
    };
    Ok(ToolOutput::new(content, json!({"key": key, "deleted": !from.is_empty(), "tiers": from})))
}

/// The blocking form.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    super::blocking(NAME, args, ctx, run_sync)
}

/// The `cache_delete` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "cacheDelete",
    family: "memory",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("cache_delete.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let (args, ctx) = (args.clone(), ctx.clone());
            crate::blocking(NAME, move || super::parsed(NAME, &args, &ctx, run_sync)).await
        })
    },
};
