//! Strict argument readers shared by the `code` tools: a wrong type is an `INVALID_ARGUMENT`
//! naming the tool and the argument, never a silent coercion.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::context::Ctx;
use crate::engine::walk::Root;
pub use crate::engine::walk::{Target, below_root};
use crate::error::{Result, ToolError};

fn bad(tool: &str, key: &str, want: &str) -> ToolError {
    ToolError::invalid(format!("{tool}: `{key}` must be {want}"))
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

/// A count (a cap, an offset, a number of lines) as the code family reads it: any JSON number,
/// checked by the reader that takes it ([`uint_of`], [`cap_of`], [`offset_of`]) to be a whole
/// number within that reader's range (`3.0` is 3 and `-0` is 0; `1.5`, `-1` and a number over
/// the range are refused naming the range). Schema: integer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Count(pub f64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => Ok(Self(n.as_f64().unwrap_or(-1.0))),
            _ => Err(serde::de::Error::custom("must be an integer")),
        }
    }
}

crate::value_schema!(Count, {"type": "integer"});

/// An optional whole number from 0 to `max`.
pub fn uint_of(tool: &str, key: &str, value: Option<Count>, max: u64) -> Result<Option<usize>> {
    match value {
        None => Ok(None),
        Some(Count(f)) if f < 0.0 || f.fract() != 0.0 || f > max as f64 => {
            Err(bad(tool, key, &format!("an integer from 0 to {max}")))
        }
        Some(Count(f)) => Ok(Some(f as usize)),
    }
}

/// A cap (a result limit, a length) no larger than `max`, `default` when absent; 0 reads as 1.
pub fn cap_of(tool: &str, key: &str, value: Option<Count>, max: u64, default: usize) -> Result<usize> {
    Ok(uint_of(tool, key, value, max)?.unwrap_or(default).max(1))
}

/// The `offset` of a page (default 0).
pub fn offset_of(tool: &str, value: Option<Count>) -> Result<usize> {
    Ok(uint_of(tool, "offset", value, u64::from(u32::MAX))?.unwrap_or(0))
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
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Sample {
        n: Option<Count>,
        b: Option<bool>,
        s: Option<String>,
        c: Option<Choice>,
    }

    #[derive(Debug, PartialEq, Eq, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Choice {
        A,
        B,
        C,
    }

    fn parse(args: serde_json::Value) -> Result<Sample> {
        crate::call::args::parse("t", &args)
    }

    #[test]
    fn strict_types() {
        let n = parse(serde_json::json!({"n": 1.5})).unwrap().n;
        assert!(uint_of("t", "n", n, 10).is_err());
        assert!(parse(serde_json::json!({"n": "1"})).is_err());
        assert!(parse(serde_json::json!({"b": "yes"})).is_err());
        assert!(parse(serde_json::json!({"s": 3})).is_err());
        let ok = parse(serde_json::json!({"b": true, "s": "x"})).unwrap();
        assert_eq!((ok.b, ok.s.as_deref()), (Some(true), Some("x")));
        let e = parse(serde_json::json!({"c": "x"})).unwrap_err();
        assert_eq!(e.message(), "t: `c` must be one of a, b, c");
        assert_eq!(parse(serde_json::json!({})).unwrap().c.unwrap_or(Choice::A), Choice::A);
        // Whole numbers written as floats, and -0, are counts as before.
        let n = parse(serde_json::json!({"n": 3.0})).unwrap().n;
        assert_eq!(uint_of("t", "n", n, 10).unwrap(), Some(3));
        assert_eq!(uint_of("t", "n", Some(Count(-0.0)), 10).unwrap(), Some(0));
    }

    #[test]
    fn caps_and_offsets() {
        let a = parse(serde_json::json!({"n": 0})).unwrap().n;
        assert_eq!(cap_of("t", "maxResults", a, 10, 7).unwrap(), 1);
        assert_eq!(cap_of("t", "maxResults", None, 10, 7).unwrap(), 7);
        let e = cap_of("t", "maxResults", Some(Count(11.0)), 10, 7).unwrap_err();
        assert_eq!(e.message(), "t: `maxResults` must be an integer from 0 to 10");
        assert_eq!(offset_of("t", Some(Count(3.0))).unwrap(), 3);
        assert_eq!(offset_of("t", None).unwrap(), 0);
        let e = offset_of("t", parse(serde_json::json!({"n": -1})).unwrap().n).unwrap_err();
        assert_eq!(e.message(), "t: `offset` must be an integer from 0 to 4294967295");
    }
}
