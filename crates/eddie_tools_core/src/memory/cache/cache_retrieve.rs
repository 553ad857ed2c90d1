//! `cache_retrieve` (Floyd): the value of a key, with its age and remaining TTL. Without a
//! tier, the tiers are searched in order (reasoning, project, vault).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Tier;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "cache_retrieve";

/// The arguments of `cache_retrieve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The key.
    pub key: String,
    /// Only this tier (default: reasoning, then project, then vault).
    pub tier: Option<Tier>,
}

/// Run `cache_retrieve` on the calling thread.
pub fn run_sync(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let key = super::check_key(&a.key)?;
    let now = super::now_ms();
    let mut stores = Vec::new();
    // Tier by tier, so that a hit in the first never looks for the others' files.
    for t in super::tiers(a.tier) {
        let Some((tier, store)) = super::existing(ctx, &[t], a.tier.is_none())?.pop() else { continue };
        // Without a tier, a miss is counted once, in every tier searched, only when no tier has it.
        if let Some(hit) = store.get(key, now, a.tier.is_some())? {
            let age = now.saturating_sub(hit.created_ms);
            let left = hit.expires_ms.map(|e| e.saturating_sub(now));
            let content = hit.value.clone();
            return Ok(ToolOutput::new(
                content,
                json!({"key": key, "found": true, "tier": tier.as_str(), "value": hit.value, "ageMs": age, "ttlRemainingMs": left}),
            ));
        }
        stores.push((tier, store));
    }
    if a.tier.is_none() {
        for (_, store) in &stores {
            store.miss()?;
        }
    }
    let tried = stores.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>();
    let content = format!(
        "No value for \"{key}\" (searched: {}).",
        if tried.is_empty() { "no tier".into() } else { tried.join(", ") }
    );
    Ok(ToolOutput::new(
        content,
        json!({"key": key, "found": false, "tier": Value::Null, "value": Value::Null, "ageMs": Value::Null, "ttlRemainingMs": Value::Null}),
    ))
}

/// The blocking form.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    super::blocking(NAME, args, ctx, run_sync)
}

/// The `cache_retrieve` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "cacheRetrieve",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("cache_retrieve.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let (args, ctx) = (args.clone(), ctx.clone());
            crate::blocking(NAME, move || super::parsed(NAME, &args, &ctx, run_sync)).await
        })
    },
};
