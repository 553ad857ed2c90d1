//! The `web` family: `web_fetch` (alias tool `fetch`, Stack's name) turns a URL into text for a
//! model, `download` saves a URL into the workspace, `check_url` reports a URL's status, and
//! `web_search` asks Brave, SearXNG or Tavily. Every request goes through the network guard
//! ([`crate::engine::net`]): http(s) only, every resolved address checked, the connection
//! pinned to the checked address, every redirect hop checked again. See the README.

pub mod check_url;
pub mod download;
pub mod extract;
pub mod search;
pub mod web_fetch;

use std::time::Duration;

use serde_json::{Value, json};

use crate::call::args::lenient::JsInt;
use crate::engine::net::Hop;
use crate::error::{Result, ToolError};
use crate::registry::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "web",
    tools: &[web_fetch::TOOL, web_fetch::FETCH, download::TOOL, check_url::TOOL, search::TOOL],
    contract: None,
    aliases: &[
        ("max_chars", "maxChars"),
        ("max_length", "maxChars"),
        ("maxLength", "maxChars"),
        ("start_index", "startIndex"),
        ("max_bytes", "maxBytes"),
        ("no_cache", "noCache"),
        ("follow_cross_host", "followCrossHost"),
        ("follow_redirects", "followRedirects"),
        ("destination", "path"),
        ("dest", "path"),
        ("output", "path"),
        ("q", "query"),
        ("num_results", "count"),
        ("max_results", "count"),
    ],
    partial_on_cancel: false,
};

/// `timeout` (seconds) within `1..=max`, else `default`.
pub fn timeout_of(t: Option<JsInt>, default_s: u64, max_s: u64) -> Result<Duration> {
    match t.map(|t| t.0) {
        None => Ok(Duration::from_secs(default_s)),
        Some(n) if n < 1 => Err(ToolError::invalid("timeout must be at least 1 (seconds)")),
        Some(n) => Ok(Duration::from_secs((n as u64).min(max_s))),
    }
}

/// A byte cap within `1..=max`, else `default`.
pub fn cap_of(what: &str, v: Option<JsInt>, default: usize, max: usize) -> Result<usize> {
    match v.map(|v| v.0) {
        None => Ok(default),
        Some(n) if n < 1 => Err(ToolError::invalid(format!("{what} must be at least 1"))),
        Some(n) => Ok((n as u64).min(max as u64) as usize),
    }
}

/// The redirect chain as JSON.
pub fn chain_json(chain: &[Hop]) -> Value {
    Value::Array(chain.iter().map(|h| json!({"url": h.url, "status": h.status})).collect())
}

/// `text` cut to at most `max` bytes on a character boundary.
pub use crate::engine::text::utf8::head;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_ids_match_what_tools_return() {
        let id = |n: &str| {
            crate::registry::definition(n).and_then(|d| d["outputSchema"]["$id"].as_str()).unwrap_or_default()
        };
        assert_eq!(id("web_fetch"), web_fetch::SCHEMA);
        assert_eq!(id("fetch"), web_fetch::SCHEMA);
        assert_eq!(id("download"), download::SCHEMA);
        assert_eq!(id("check_url"), check_url::SCHEMA);
        assert_eq!(id("web_search"), search::SCHEMA);
        // fetch is web_fetch under Stack's name: same schema, same run.
        let def = |n: &str| crate::registry::definition(n).cloned().unwrap_or_default();
        assert_eq!(def("fetch")["jsonSchema"], def("web_fetch")["jsonSchema"]);
        assert_eq!(def("fetch")["outputSchema"], def("web_fetch")["outputSchema"]);
        assert_eq!(
            def("web_fetch")["jsonSchema"]["properties"]["format"]["enum"],
            json!(["markdown", "text", "html", "raw"])
        );
        for t in FAMILY.tools {
            assert_eq!(t.mutating(), t.confirms(), "{}", t.name);
            assert_ne!(t.permission, crate::registry::Permission::None, "{}: reaches the network", t.name);
        }
    }

    #[test]
    fn head_cuts_on_a_character_boundary() {
        assert_eq!(head("héllo", 2), "h");
        assert_eq!(head("héllo", 3), "hé");
        assert_eq!(head("abc", 10), "abc");
    }
}
