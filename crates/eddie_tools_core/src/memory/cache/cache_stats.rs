//! `cache_stats` (Floyd): entries, bytes, cap, hits, misses, expirations and evictions per tier.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Tier, TierStats};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result};
use crate::output::ToolOutput;

const NAME: &str = "cache_stats";

/// The arguments of `cache_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Only this tier (default: every tier).
    pub tier: Option<Tier>,
}

/// Run `cache_stats` on the calling thread.
pub fn run_sync(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let now = super::now_ms();
    let mut tiers = Map::new();
    let mut total = TierStats::default();
    let mut lines = Vec::new();
    for tier in super::tiers(a.tier) {
        let store = match super::store(ctx, tier) {
            Ok(s) => s,
            Err(e) if a.tier.is_none() && e.code() == ErrorCode::StoreUnavailable => continue,
            Err(e) => return Err(e),
        };
        let exists = store.exists();
        let s = if exists { store.stats(now)? } else { TierStats::default() };
        let cap = super::cap(ctx, tier);
        for (t, x) in [
            (&mut total.entries, s.entries),
            (&mut total.bytes, s.bytes),
            (&mut total.hits, s.hits),
            (&mut total.misses, s.misses),
            (&mut total.expirations, s.expirations),
            (&mut total.evictions, s.evictions),
        ] {
            *t += x;
        }
        lines.push(format!(
            "{}: {} entries, {} of {cap} bytes, {} hits, {} misses, {} expired, {} evicted",
            tier.as_str(),
            s.entries,
            s.bytes,
            s.hits,
            s.misses,
            s.expirations,
            s.evictions
        ));
        tiers.insert(
            tier.as_str().into(),
            json!({"entries": s.entries, "bytes": s.bytes, "capBytes": cap, "hits": s.hits, "misses": s.misses, "expirations": s.expirations, "evictions": s.evictions, "backend": store.backend(), "location": store.location(), "exists": exists}),
        );
    }
    let totals = json!({"entries": total.entries, "bytes": total.bytes, "hits": total.hits, "misses": total.misses, "expirations": total.expirations, "evictions": total.evictions});
    Ok(ToolOutput::new(lines.join("\n"), json!({"tiers": tiers, "totals": totals})))
}

/// The blocking form.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    super::blocking(NAME, args, ctx, run_sync)
}

/// The `cache_stats` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "cacheStats",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("cache_stats.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let (args, ctx) = (args.clone(), ctx.clone());
            crate::blocking(NAME, move || super::parsed(NAME, &args, &ctx, run_sync)).await
        })
    },
};
