//! `cache_keys` (Floyd): the live keys of one tier or every tier, filtered by a glob.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Tier;
use crate::call::args::lenient::Cap;
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "cache_keys";
const MAX_LIMIT: u64 = 10_000;

/// The arguments of `cache_keys`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Only this tier (default: every tier).
    pub tier: Option<Tier>,
    /// A glob the keys must match: `*` any run, `?` one character, `[abc]`, `{a,b}`; `\` escapes (also: glob).
    pub pattern: Option<String>,
    /// At most this many keys (default 1000, at most 10000).
    pub limit: Option<Cap<MAX_LIMIT>>,
}

/// Run `cache_keys` on the calling thread.
pub fn run_sync(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let matcher = super::pattern(a.pattern.as_deref())?;
    let limit = Cap::or(a.limit, 1000);
    let now = super::now_ms();
    let stores = super::existing(ctx, &super::tiers(a.tier), a.tier.is_none())?;
    let keep = |k: &str| matcher.as_ref().is_none_or(|m| m.is_match(k));
    let mut keys = Vec::new();
    for (tier, store) in &stores {
        let mut found = store.keys(now, &keep)?;
        found.sort_by(|x, y| x.key.cmp(&y.key));
        keys.extend(found.into_iter().map(|k| {
            json!({"key": k.key, "tier": tier.as_str(), "bytes": k.bytes, "ageMs": now.saturating_sub(k.created_ms), "ttlRemainingMs": k.expires_ms.map(|e| e.saturating_sub(now))})
        }));
    }
    let total = keys.len();
    keys.truncate(limit);
    let mut content = format!("{total} keys");
    if total > limit {
        content.push_str(&format!(" (the first {limit} shown)"));
    }
    content.push(':');
    for k in &keys {
        content.push_str(&format!(
            "\n{} [{}]",
            k["key"].as_str().unwrap_or(""),
            k["tier"].as_str().unwrap_or("")
        ));
    }
    Ok(ToolOutput::new(content, json!({"keys": keys, "count": total, "truncated": total > limit})))
}

/// The blocking form.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    super::blocking(NAME, args, ctx, run_sync)
}

/// The `cache_keys` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "cacheKeys",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("cache_keys.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let (args, ctx) = (args.clone(), ctx.clone());
            crate::blocking(NAME, move || super::parsed(NAME, &args, &ctx, run_sync)).await
        })
    },
};
