//! The `web` family: `web_fetch` (also `fetch`, Stack's name for it: a tool alias) turns a URL into text for a
//! model, `download` saves a URL into the workspace, `check_url` reports a URL's status, and
//! `web_search` asks Brave, SearXNG or Tavily. Every request goes through the network guard
//! ([`crate::engine::net`]): http(s) only, every resolved address checked, the connection
//! pinned to the checked address, every redirect hop checked again. See the README.

pub mod check_url;
pub mod download;
pub mod extract;
mod markdown;
pub mod profile;
mod readable;
mod tree;
pub mod web_fetch;
pub mod web_search;

use serde_json::{Value, json};

use crate::engine::net::Hop;
use crate::spec::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "web",
    tools: &[web_fetch::TOOL, download::TOOL, check_url::TOOL, web_search::TOOL],
    contract: None,
    contract_docs: &[],
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
    fn fetch_is_an_alias_and_every_tool_reaches_the_network_with_care() {
        // fetch is web_fetch under Stack's name: an alias, not a second spec.
        assert_eq!(crate::registry::find("fetch").map(|t| t.name), Some("web_fetch"));
        let def = |n: &str| crate::registry::definition(n).cloned().unwrap_or_default();
        assert_eq!(
            def("web_fetch")["jsonSchema"]["properties"]["format"]["enum"],
            json!(["markdown", "text", "html", "raw"])
        );
        for t in FAMILY.tools {
            assert_eq!(t.mutating(), t.confirms(), "{}", t.name);
            assert_ne!(t.permission, crate::spec::Permission::None, "{}: reaches the network", t.name);
        }
    }

    #[test]
    fn head_cuts_on_a_character_boundary() {
        assert_eq!(head("héllo", 2), "h");
        assert_eq!(head("héllo", 3), "hé");
        assert_eq!(head("abc", 10), "abc");
    }
}
