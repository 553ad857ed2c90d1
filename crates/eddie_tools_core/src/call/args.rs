//! The one argument policy, applied to every call before its tool sees the arguments.
//!
//! - `null` counts as absent, in every family (strict-mode OpenAI models send `null` for
//!   every optional field they do not use).
//! - Outside the `eddie` family, a key that is neither a property of the tool's input schema
//!   nor one of the tool's accepted aliases (the seeds' spellings) is refused with
//!   `INVALID_ARGUMENT`, naming the valid keys and the closest one, so a foreign or misspelt
//!   option is never silently ignored.
//! - The `eddie` family keeps `@eddie/tools`' behaviour for other keys (its handlers ignore
//!   them), so it stays a drop-in.

use serde_json::{Map, Value};

use crate::error::{Result, ToolError};
use crate::registry::{self, ToolSpec};

/// Names other agents' tools use for an option we spell differently, with what to send
/// instead. Consulted only for a key the tool does not accept.
const HINTS: &[(&str, &str)] = &[
    ("contextLines", "context"),
    ("context_lines", "context"),
    ("filePattern", "include"),
    ("file_pattern", "include"),
    ("include_files", "include"),
    ("excludePatterns", "exclude"),
    ("exclude_files", "exclude"),
    ("exclude_dirs", "exclude"),
    ("case_sensitive", "caseInsensitive (inverted) or caseSensitive"),
    ("use_regex", "literal (inverted)"),
    ("max_results", "maxResults"),
    ("regex", "pattern"),
    ("directory", "path"),
    ("filePath", "path"),
    ("file_path", "path"),
    ("symbolType", "kind"),
    ("include_hidden", "includeHidden"),
];

/// The keys `spec`'s input schema declares.
fn properties(spec: &ToolSpec) -> Option<&'static Map<String, Value>> {
    registry::definition(spec.name)?.get("jsonSchema")?.get("properties")?.as_object()
}

/// Apply the policy to `args` (an object) for `spec`: drop `null` members, then refuse keys
/// the tool does not accept (outside the `eddie` family).
pub fn normalise(spec: &ToolSpec, mut args: Value) -> Result<Value> {
    let Some(obj) = args.as_object_mut() else {
        return Err(ToolError::invalid(format!("arguments of {} must be an object", spec.name)));
    };
    obj.retain(|_, v| !v.is_null());
    if spec.family == crate::eddie::FAMILY.name {
        return Ok(args);
    }
    let Some(props) = properties(spec) else { return Ok(args) };
    let accepted = |k: &str| props.contains_key(k) || spec.aliases.contains(&k);
    if let Some(key) = obj.keys().find(|k| !accepted(k)) {
        return Err(unknown_key(spec, props, key));
    }
    Ok(args)
}

/// `INVALID_ARGUMENT` for `key`, with what to use instead and the valid keys.
fn unknown_key(spec: &ToolSpec, props: &Map<String, Value>, key: &str) -> ToolError {
    let tool = spec.name;
    let hint = HINTS
        .iter()
        .find(|(from, to)| *from == key && to.split(' ').next().is_some_and(|t| props.contains_key(t)))
        .map(|(_, to)| (*to).to_owned())
        .or_else(|| closest(key, props.keys().map(String::as_str)).map(str::to_owned));
    let hint = hint.map(|h| format!(" (use `{h}`)")).unwrap_or_default();
    let valid = props.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
    ToolError::invalid(format!("{tool}: unknown argument `{key}`{hint}; valid arguments: {valid}"))
        .with_prop("argument", key)
}

/// The candidate closest to `key`: the same up to case and `_`/`-` (`max_depth` →
/// `maxDepth`), else the nearest by edit distance when it is near enough to be a typo.
fn closest<'a>(key: &str, candidates: impl Iterator<Item = &'a str> + Clone) -> Option<&'a str> {
    let fold = |s: &str| s.chars().filter(|c| !matches!(c, '_' | '-')).collect::<String>().to_lowercase();
    let folded = fold(key);
    if let Some(same) = candidates.clone().find(|c| fold(c) == folded) {
        return Some(same);
    }
    let (best, distance) = candidates
        .map(|c| (c, strsim::levenshtein(&folded, &fold(c))))
        .min_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)))?;
    (distance <= (folded.chars().count() / 3).max(1)).then_some(best)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::ErrorCode;

    fn spec(name: &str) -> &'static ToolSpec {
        registry::find(name).unwrap()
    }

    #[test]
    fn nulls_are_absent_everywhere() {
        let out = normalise(spec("file_read"), json!({"path": "a", "maxBytes": null})).unwrap();
        assert_eq!(out, json!({"path": "a"}));
        let out = normalise(spec("grep"), json!({"pattern": "x", "path": null, "context": null})).unwrap();
        assert_eq!(out, json!({"pattern": "x"}));
    }

    #[test]
    fn unknown_keys_are_refused_with_the_closest_valid_one() {
        let e = normalise(spec("grep"), json!({"pattern": "x", "contextLines": 2})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("unknown argument `contextLines` (use `context`)"), "{}", e.message());
        let e = normalise(spec("find_symbol"), json!({"symbol": "x", "symbolType": "class"})).unwrap_err();
        assert!(e.message().contains("(use `kind`)"), "{}", e.message());
        let e = normalise(spec("run"), json!({"command": "ls", "timout": 3})).unwrap_err();
        assert!(e.message().contains("unknown argument `timout` (use `timeout`)"), "{}", e.message());
        let e = normalise(spec("run"), json!({"command": "ls", "max_output_bytes": 3})).unwrap_err();
        assert!(e.message().contains("(use `maxOutputBytes`)"), "{}", e.message());
        // Stack's options the exec tools do not have are refused, not ignored.
        for key in ["pattern", "verbose", "linter", "package_manager"] {
            let e = normalise(spec("lint"), json!({key: "x"})).unwrap_err();
            assert!(e.message().contains("valid arguments: path, projectPath"), "{}", e.message());
        }
        let e = normalise(spec("glob"), json!({"nonsense": 1})).unwrap_err();
        assert!(
            e.message().contains("unknown argument `nonsense`; valid arguments: pattern"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn aliases_pass_and_eddie_stays_lenient() {
        let args = json!({"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": true});
        assert_eq!(normalise(spec("edit_file"), args.clone()).unwrap(), args);
        let e =
            normalise(spec("edit_file"), json!({"path": "a", "oldString": "x", "newString": "y", "nope": 1}))
                .unwrap_err();
        assert!(e.message().contains("valid arguments: path, oldString"), "{}", e.message());
        let args = json!({"command": "ls", "whatever": 1});
        assert_eq!(normalise(spec("bash"), args.clone()).unwrap(), args);
        assert_eq!(normalise(spec("bash"), json!([])).unwrap_err().code(), ErrorCode::InvalidArgument);
    }

    #[test]
    fn every_alias_is_not_also_a_property() {
        // An alias that is already a property would hide a schema change.
        for t in registry::tools() {
            let props = properties(t).unwrap();
            for a in t.aliases {
                assert!(!props.contains_key(*a), "{}: alias {a} is a property", t.name);
            }
        }
    }
}
