//! Argument helpers shared by the `code` tools (their value types are the one policy of
//! [`crate::call::args::lenient`]).

use crate::context::Ctx;
use crate::engine::walk::Root;
pub use crate::engine::walk::{Target, below_root};
use crate::error::{Result, ToolError};

/// `"*.py, *.{js,ts}"` → `["*.py", "*.{js,ts}"]`.
pub fn split_top_level_commas(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                let t = cur.trim();
                if !t.is_empty() {
                    out.push(t.to_owned());
                }
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    let t = cur.trim();
    if !t.is_empty() {
        out.push(t.to_owned());
    }
    out
}

/// Resolve `path` (default `.`) inside the workspace; it must exist.
pub fn target(ctx: &Ctx, path: Option<&str>) -> Result<Target> {
    let p = path.filter(|s| !s.is_empty()).unwrap_or(".");
    let resolved = ctx.workspace.resolve(p)?;
    let meta =
        std::fs::metadata(&resolved.real).map_err(|e| ToolError::fs(&e, "stat", Some(&resolved.lexical)))?;
    let rel = ctx.workspace.relative(&resolved.lexical);
    let workspace_real = crate::workspace::realpath(ctx.workspace.root())?;
    if meta.is_file() {
        return Ok(Target {
            root: Root { real: resolved.real.clone(), rel: rel.clone() },
            file: Some((resolved.real, rel)),
            workspace_real,
        });
    }
    Ok(Target { root: Root { real: resolved.real, rel }, file: None, workspace_real })
}

// ---- typed arguments (after `crate::call::args::parse`)

/// `value`, refused when empty.
pub fn non_empty(tool: &str, key: &str, value: String) -> Result<String> {
    if value.is_empty() {
        return Err(ToolError::invalid(format!("{tool}: `{key}` is required (a non-empty string)")));
    }
    Ok(value)
}

/// A glob list: one string split on commas outside braces (`"*.py,*.{js,ts}"`), or a list.
pub fn globs(value: Option<crate::call::args::lenient::StringOrList>) -> Vec<String> {
    use crate::call::args::lenient::StringOrList;
    match value {
        None => Vec::new(),
        Some(StringOrList::One(s)) => split_top_level_commas(&s),
        Some(StringOrList::Many(items)) => items.iter().flat_map(|s| split_top_level_commas(s)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_commas_outside_braces() {
        assert_eq!(split_top_level_commas("*.py, *.{js,ts},"), ["*.py", "*.{js,ts}"]);
        assert!(split_top_level_commas(" , ").is_empty());
    }

    #[derive(Debug, serde::Deserialize)]
    struct Sample {
        c: Option<Choice>,
    }

    #[derive(Debug, PartialEq, Eq, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Choice {
        A,
        B,
        C,
    }

    #[test]
    fn choices_name_their_values() {
        let parse = |args| crate::call::args::parse::<Sample>("t", &args);
        let e = parse(serde_json::json!({"c": "x"})).unwrap_err();
        assert_eq!(e.message(), "t: `c` must be one of a, b, c");
        assert_eq!(parse(serde_json::json!({})).unwrap().c.unwrap_or(Choice::A), Choice::A);
        assert_eq!(parse(serde_json::json!({"c": "b"})).unwrap().c, Some(Choice::B));
    }
}
