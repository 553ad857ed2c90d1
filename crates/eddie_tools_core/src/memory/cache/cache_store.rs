//! `cache_store` (Floyd): store a value under a key in a tier (`reasoning` by default), with
//! an optional TTL in milliseconds. A tier over its byte cap evicts its least recently used
//! entries.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Entry, Tier, Ttl};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "cache_store";

/// The arguments of `cache_store`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The key (1 to 1024 bytes).
    pub key: String,
    /// The value (text; JSON as a string; at most 1 MiB by default; also: content).
    pub value: String,
    /// `reasoning` (process memory, default), `project` (.eddie/cache.db) or `vault` (per user).
    pub tier: Option<Tier>,
    /// Time to live in milliseconds (omit for no expiry; also: ttl_ms).
    pub ttl: Option<Ttl>,
}

/// Run `cache_store` on the calling thread.
pub fn run_sync(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let key = super::check_key(&a.key)?;
    let tier = a.tier.unwrap_or(Tier::Reasoning);
    let (max, cap) = (super::max_value(ctx), super::cap(ctx, tier));
    let size = (key.len() + a.value.len()) as u64;
    if a.value.len() as u64 > max || size > cap {
        return Err(ToolError::new(
            ErrorCode::TooLarge,
            format!(
                "value is {} bytes; the cap is {} bytes per value and {cap} bytes for the {} tier",
                a.value.len(),
                max,
                tier.as_str()
            ),
        ));
    }
    let now = super::now_ms();
    let ttl = a.ttl.map(|t| t.0.ceil() as u64);
    let expires = ttl.map(|t| now.saturating_add(t));
    let store = super::store(ctx, tier)?;
    let put = store.put(Entry { key, value: &a.value, now_ms: now, expires_ms: expires }, cap)?;
    let mut content = format!(
        "Stored \"{key}\" in the {} tier ({} bytes{}).",
        tier.as_str(),
        a.value.len(),
        ttl.map(|t| format!(", expires in {t} ms")).unwrap_or_default()
    );
    if put.evicted > 0 {
        content.push_str(&format!(
            " Evicted {} least recently used entries to stay within {cap} bytes.",
            put.evicted
        ));
    }
    let expires_at = expires
        .and_then(|e| chrono::DateTime::from_timestamp_millis(e as i64))
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    Ok(ToolOutput::new(
        content,
        json!({"key": key, "tier": tier.as_str(), "stored": true, "replaced": put.replaced, "evicted": put.evicted, "bytes": a.value.len(), "ttl": ttl, "expiresAt": expires_at}),
    ))
}

/// The blocking form.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    super::blocking(NAME, args, ctx, run_sync)
}

/// The `cache_store` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "cacheStore",
    family: "memory",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: Some(run_blocking),
    definition: include_str!("cache_store.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| {
        Box::pin(async move {
            let (args, ctx) = (args.clone(), ctx.clone());
            crate::blocking(NAME, move || super::parsed(NAME, &args, &ctx, run_sync)).await
        })
    },
};
