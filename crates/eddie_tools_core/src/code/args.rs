//! Strict argument readers shared by the `code` tools: a wrong type is an `INVALID_ARGUMENT`
//! naming the tool and the argument, never a silent coercion.

use std::path::PathBuf;

use serde_json::Value;

use crate::context::Ctx;
use crate::engine::walk::Root;
use crate::error::{Result, ToolError};

fn bad(tool: &str, key: &str, want: &str) -> ToolError {
    ToolError::invalid(format!("{tool}: `{key}` must be {want}"))
}

/// An optional string.
pub fn opt_str(args: &Value, tool: &str, key: &str) -> Result<Option<String>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(bad(tool, key, "a string")),
    }
}

/// A required, non-empty string.
pub fn req_str(args: &Value, tool: &str, key: &str) -> Result<String> {
    match opt_str(args, tool, key)? {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(ToolError::invalid(format!("{tool}: `{key}` is required (a non-empty string)"))),
    }
}

/// An optional boolean with a default.
pub fn bool_or(args: &Value, tool: &str, key: &str, default: bool) -> Result<bool> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(tool, key, "a boolean")),
    }
}

/// An optional non-negative integer no larger than `max`.
pub fn opt_uint(args: &Value, tool: &str, key: &str, max: u64) -> Result<Option<usize>> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(-1.0);
            if f < 0.0 || f.fract() != 0.0 || f > max as f64 {
                return Err(bad(tool, key, &format!("an integer from 0 to {max}")));
            }
            Ok(Some(f as usize))
        }
        Some(_) => Err(bad(tool, key, &format!("an integer from 0 to {max}"))),
    }
}

/// An optional cap (a result limit, a length) no larger than `max`, `default` when absent; 0
/// reads as 1.
pub fn cap(args: &Value, tool: &str, key: &str, max: u64, default: usize) -> Result<usize> {
    Ok(opt_uint(args, tool, key, max)?.unwrap_or(default).max(1))
}

/// The optional `offset` of a page (default 0).
pub fn offset(args: &Value, tool: &str) -> Result<usize> {
    Ok(opt_uint(args, tool, "offset", u64::from(u32::MAX))?.unwrap_or(0))
}

/// One of `allowed` (default `allowed[0]`).
pub fn choice(args: &Value, tool: &str, key: &str, allowed: &[&'static str]) -> Result<&'static str> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(allowed[0]),
        Some(Value::String(s)) => allowed
            .iter()
            .copied()
            .find(|a| a == s)
            .ok_or_else(|| bad(tool, key, &format!("one of {}", allowed.join(", ")))),
        Some(_) => Err(bad(tool, key, &format!("one of {}", allowed.join(", ")))),
    }
}

/// A glob list: a string (split on commas outside braces: `"*.py,*.{js,ts}"`) or an array of
/// strings.
pub fn glob_list(args: &Value, tool: &str, key: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    match args.get(key) {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => out.extend(split_top_level_commas(s)),
        Some(Value::Array(items)) => {
            for it in items {
                let Value::String(s) = it else {
                    return Err(bad(tool, key, "a string or an array of strings"));
                };
                out.extend(split_top_level_commas(s));
            }
        }
        Some(_) => return Err(bad(tool, key, "a string or an array of strings")),
    }
    Ok(out)
}

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

/// A resolved search path: the walk root, or a single file.
pub struct Target {
    /// Where to walk (for a file: its parent; unused).
    pub root: Root,
    /// `Some((real path, workspace-relative path))` when the path is a regular file.
    pub file: Option<(PathBuf, String)>,
    /// The real workspace root.
    pub workspace_real: PathBuf,
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

/// Path of `rel` (workspace-relative) relative to the search root `root_rel`.
pub fn below_root<'a>(rel: &'a str, root_rel: &str) -> &'a str {
    if root_rel.is_empty() {
        return rel;
    }
    rel.strip_prefix(root_rel).and_then(|r| r.strip_prefix('/')).unwrap_or(rel)
}

// ---- typed arguments (after `crate::call::args::parse`)

/// `value`, refused when empty.
pub fn non_empty(tool: &str, key: &str, value: String) -> Result<String> {
    if value.is_empty() {
        return Err(ToolError::invalid(format!("{tool}: `{key}` is required (a non-empty string)")));
    }
    Ok(value)
}

/// A cap no larger than `max`, `default` when absent; 0 reads as 1.
pub fn cap_of(tool: &str, key: &str, value: Option<u64>, max: u64, default: usize) -> Result<usize> {
    match value {
        Some(v) if v > max => Err(bad(tool, key, &format!("an integer from 0 to {max}"))),
        Some(v) => Ok(usize::try_from(v).unwrap_or(usize::MAX).max(1)),
        None => Ok(default.max(1)),
    }
}

/// The `offset` of a page (default 0).
pub fn offset_of(tool: &str, value: Option<u64>) -> Result<usize> {
    let max = u64::from(u32::MAX);
    match value {
        Some(v) if v > max => Err(bad(tool, "offset", &format!("an integer from 0 to {max}"))),
        Some(v) => Ok(usize::try_from(v).unwrap_or(usize::MAX)),
        None => Ok(0),
    }
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

    #[test]
    fn strict_types() {
        let a = serde_json::json!({"n": 1.5, "b": "yes", "s": 3, "c": "x"});
        assert!(opt_uint(&a, "t", "n", 10).is_err());
        assert!(bool_or(&a, "t", "b", false).is_err());
        assert!(opt_str(&a, "t", "s").is_err());
        assert!(choice(&a, "t", "c", &["a", "b"]).is_err());
        assert_eq!(choice(&a, "t", "missing", &["a", "b"]).unwrap(), "a");
    }

    #[test]
    fn caps_and_offsets() {
        let a = serde_json::json!({"maxResults": 0, "offset": 3});
        assert_eq!(cap(&a, "t", "maxResults", 10, 7).unwrap(), 1);
        assert_eq!(cap(&serde_json::json!({}), "t", "maxResults", 10, 7).unwrap(), 7);
        let e = cap(&serde_json::json!({"maxResults": 11}), "t", "maxResults", 10, 7).unwrap_err();
        assert_eq!(e.message(), "t: `maxResults` must be an integer from 0 to 10");
        assert_eq!(offset(&a, "t").unwrap(), 3);
        assert_eq!(offset(&serde_json::json!({}), "t").unwrap(), 0);
        let e = offset(&serde_json::json!({"offset": -1}), "t").unwrap_err();
        assert_eq!(e.message(), "t: `offset` must be an integer from 0 to 4294967295");
    }
}
