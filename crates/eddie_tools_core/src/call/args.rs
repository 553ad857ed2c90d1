//! The one argument policy, applied to every call before its tool sees the arguments.
//!
//! - `null` counts as absent, in every family (strict-mode OpenAI models send `null` for
//!   every optional field they do not use).
//! - An alias (the seeds' spellings, `(alias, canonical)` pairs on the tool's spec) is renamed
//!   to its canonical key, so a tool reads one spelling.
//! - Any other key that is not a property of the tool's input schema is refused with
//!   `INVALID_ARGUMENT`, naming the valid keys and the closest one, so a foreign or misspelt
//!   option is never silently ignored.
//! - A tool with `lenient_keys` (the `eddie` family) keeps `@eddie/tools`' behaviour for other
//!   keys (its handlers ignore them), so it stays a drop-in.

use serde_json::{Map, Value};

use crate::error::{Result, ToolError};
use crate::spec::ToolSpec;

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

/// Apply the policy to `args` (an object) for `spec`, whose input schema declares the keys
/// `props` and whose family shares the spellings `shared`: drop `null` members, then refuse
/// keys the tool does not accept (unless it has `lenient_keys`). The pipeline looks `props` and
/// `shared` up ([`crate::call::normalise`]).
pub fn normalise(
    spec: &ToolSpec,
    props: Option<&Map<String, Value>>,
    shared: &'static [(&'static str, &'static str)],
    mut args: Value,
) -> Result<Value> {
    let Some(obj) = args.as_object_mut() else {
        return Err(ToolError::invalid(format!("arguments of {} must be an object", spec.name)));
    };
    obj.retain(|_, v| !v.is_null());
    if spec.lenient_keys {
        return Ok(args);
    }
    let Some(props) = props else { return Ok(args) };
    // An alias becomes its canonical name (when both are given, the canonical one wins).
    for (alias, canonical) in aliases(spec, shared, props) {
        if let Some(v) = obj.remove(alias) {
            obj.entry(canonical).or_insert(v);
        }
    }
    let accepted = |k: &str| props.contains_key(k) || spec.aliases.iter().any(|(_, c)| *c == k);
    if let Some(key) = obj.keys().find(|k| !accepted(k)) {
        return Err(unknown_key(spec, props, key));
    }
    Ok(args)
}

/// The spellings `spec` accepts: its own, and its family's whose canonical key it has.
fn aliases<'a>(
    spec: &'a ToolSpec,
    shared: &'static [(&'static str, &'static str)],
    props: &'a Map<String, Value>,
) -> impl Iterator<Item = (&'static str, &'static str)> + 'a {
    spec.aliases.iter().chain(shared.iter().filter(|(_, c)| props.contains_key(*c))).copied()
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

// ---- typed arguments: each tool's `Args` (serde + schemars) is parsed once and is the
// source of its input schema.

/// Parse `args` (after [`normalise`]) into the tool's typed arguments. A value of the wrong
/// type or form is `INVALID_ARGUMENT` naming the argument and what it must be:
/// "grep: `maxResults` must be an integer from 1 to 100000".
pub fn parse<A: serde::de::DeserializeOwned>(tool: &str, args: &Value) -> Result<A> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().to_string();
        ToolError::invalid(explain(tool, &path, &message)).with_prop("argument", path)
    })
}

/// serde's message as a model-fixable sentence.
fn explain(tool: &str, path: &str, message: &str) -> String {
    let at = |p: &str| if p == "." || p.is_empty() { String::new() } else { format!("`{p}` ") };
    // serde_path_to_error's path ends at the field for an unknown one, and at its parent for
    // a missing one.
    let join = |field: &str| match path {
        "." | "" => field.to_owned(),
        p if p == field || p.ends_with(&format!(".{field}")) => p.to_owned(),
        p => format!("{p}.{field}"),
    };
    if let Some(rest) = message.strip_prefix("missing field `") {
        let field = rest.split('`').next().unwrap_or_default();
        return format!("{tool}: `{}` is required", join(field));
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let field = rest.split('`').next().unwrap_or_default();
        let expected = rest.split_once("expected ").map(|(_, e)| e.replace('`', "")).unwrap_or_default();
        let expected = expected.strip_prefix("one of ").unwrap_or(&expected);
        return format!("{tool}: unknown argument `{}`; valid arguments: {expected}", join(field));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let expected = rest.split_once("expected ").map(|(_, e)| e.replace('`', "")).unwrap_or_default();
        return format!("{tool}: {}must be {expected}", at(path));
    }
    for prefix in ["invalid type: ", "invalid value: ", "invalid length "] {
        if message.starts_with(prefix)
            && let Some((_, expected)) = message.split_once(", expected ")
        {
            let expected = match expected {
                "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer",
                "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
                "f32" | "f64" => "a number",
                other => other,
            };
            return format!("{tool}: {}must be {expected}", at(path));
        }
    }
    format!("{tool}: {}{message}", at(path))
}

/// The input JSON Schema of `A`: draft-07, inlined, without the generator's titles, integer
/// formats and `null` alternatives (a `null` argument counts as absent, see [`normalise`]).
pub fn schema<A: schemars::JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft07();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let mut v = settings.into_generator().into_root_schema_for::<A>().to_value();
    tidy(&mut v);
    // The struct's own doc comment is for Rust readers; the tool's description says it all.
    let Value::Object(mut root) = v else { return v };
    root.remove("description");
    // The argument policy refuses unknown keys for every generated schema, so say so (strict
    // hosts such as OpenAI's structured outputs need it).
    root.entry("additionalProperties").or_insert(Value::Bool(false));
    let mut ordered = Map::new();
    for key in ["type", "properties", "required", "additionalProperties"] {
        if let Some(x) = root.remove(key) {
            ordered.insert(key.into(), x);
        }
    }
    ordered.extend(root);
    Value::Object(ordered)
}

fn tidy(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("title");
            m.remove("format");
            if m.get("default").is_some_and(Value::is_null) {
                m.remove("default");
            }
            if let Some(Value::Array(types)) = m.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let t = types.remove(0);
                    m.insert("type".into(), t);
                }
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alts)) = m.get_mut(key) {
                    alts.retain(|a| {
                        a.get("type").is_none_or(|t| t != "null")
                            && a.get("const").is_none_or(|c| !c.is_null())
                    });
                    if alts.len() == 1 {
                        let only = alts.remove(0);
                        m.remove(key);
                        if let Value::Object(inner) = only {
                            for (k, x) in inner {
                                m.entry(k).or_insert(x);
                            }
                        }
                    }
                }
            }
            // A unit enum whose variants have doc comments comes out as `oneOf` of consts.
            if let Some(Value::Array(alts)) = m.get("oneOf")
                && let Some(values) = alts
                    .iter()
                    .map(|a| a.get("const").filter(|c| c.is_string()).cloned())
                    .collect::<Option<Vec<_>>>()
            {
                m.remove("oneOf");
                m.insert("type".into(), Value::from("string"));
                m.insert("enum".into(), Value::Array(values));
            }
            if let Some(Value::Array(e)) = m.get_mut("enum") {
                e.retain(|x| !x.is_null());
            }
            for (k, x) in m.iter_mut() {
                match (k.as_str(), x) {
                    // A map of property names to schemas: the names are not keywords (a
                    // property may be called `title` or `format`).
                    ("properties" | "definitions" | "$defs", Value::Object(named)) => {
                        named.values_mut().for_each(tidy)
                    }
                    (_, x) => tidy(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Implement `schemars::JsonSchema` for an argument value type whose schema is the given JSON
/// (inlined where it is used): `value_schema!(Flag, {"type": "boolean"})`.
#[macro_export]
macro_rules! value_schema {
    ($ty:ty, $($schema:tt)+) => {
        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!($($schema)+)
            }
        }
    };
}

/// Argument value types that accept what the families accepted before typed arguments (a
/// model's `"false"`, a number as a string), with the schema of the plain type.
pub mod lenient {
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    use crate::engine::js;

    /// A boolean with JavaScript truthiness, except that the strings `"false"`, `"0"` and
    /// `"no"` are false (Alfredo sends `recursive: "false"`). Schema: boolean.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Flag(pub bool);

    impl<'de> Deserialize<'de> for Flag {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let v = Value::deserialize(d)?;
            Ok(Self(match &v {
                Value::String(s) => {
                    !matches!(s.trim().to_ascii_lowercase().as_str(), "" | "false" | "0" | "no")
                }
                other => js::truthy(Some(other)),
            }))
        }
    }

    crate::value_schema!(Flag, {"type": "boolean"});

    /// A boolean with plain JavaScript truthiness (any value). Schema: boolean.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Truthy(pub bool);

    impl<'de> Deserialize<'de> for Truthy {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            Ok(Self(js::truthy(Some(&Value::deserialize(d)?))))
        }
    }

    crate::value_schema!(Truthy, {"type": "boolean"});

    /// An integer by JavaScript's `Number()` (a numeric string counts), floored; refused when
    /// not finite. Schema: integer.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct JsInt(pub i64);

    impl<'de> Deserialize<'de> for JsInt {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let v = Value::deserialize(d)?;
            let n = js::number(Some(&v));
            if n.is_finite() {
                Ok(Self(n.floor().clamp(-9e15, 9e15) as i64))
            } else {
                Err(serde::de::Error::custom("must be a number"))
            }
        }
    }

    crate::value_schema!(JsInt, {"type": "integer"});

    /// One string or a list of strings (globs, excludes). Schema: string | string[].
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum StringOrList {
        /// `"*.py"` (callers may split it on commas).
        One(String),
        /// `["*.py", "*.ts"]`.
        Many(Vec<String>),
    }

    impl<'de> Deserialize<'de> for StringOrList {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let wrong = || serde::de::Error::custom("must be a string or an array of strings");
            match Value::deserialize(d)? {
                Value::String(s) => Ok(Self::One(s)),
                Value::Array(items) => items
                    .into_iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s),
                        _ => Err(wrong()),
                    })
                    .collect::<Result<_, _>>()
                    .map(Self::Many),
                _ => Err(wrong()),
            }
        }
    }

    crate::value_schema!(StringOrList, {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]});
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::call::{normalise, properties};
    use crate::error::ErrorCode;
    use crate::registry;

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
        let e = normalise(spec("grep"), json!({"pattern": "x", "contxtLines": 2})).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("unknown argument `contxtLines`"), "{}", e.message());
        let e = normalise(spec("find_symbol"), json!({"symbol": "x", "knd": "class"})).unwrap_err();
        assert!(e.message().contains("(use `kind`)"), "{}", e.message());
        let e = normalise(spec("run"), json!({"command": "ls", "timout": 3})).unwrap_err();
        assert!(e.message().contains("unknown argument `timout` (use `timeout`)"), "{}", e.message());
        let e = normalise(spec("run"), json!({"command": "ls", "max_output_bytes": 3})).unwrap_err();
        assert!(e.message().contains("(use `maxOutputBytes`)"), "{}", e.message());
        // Options a tool does not have are refused with the list, not ignored.
        for key in ["severity", "fix"] {
            let e = normalise(spec("lint"), json!({key: "x"})).unwrap_err();
            assert!(
                e.message().contains("valid arguments: path, project, projectPath, runner"),
                "{}",
                e.message()
            );
        }
        // Stack's and Floyd's spellings are aliases.
        let out = normalise(spec("lint"), json!({"linter": "ruff"})).unwrap();
        assert_eq!(out, json!({"runner": "ruff"}));
        let out = normalise(spec("grep"), json!({"pattern": "x", "contextLines": 2})).unwrap();
        assert_eq!(out, json!({"pattern": "x", "context": 2}));
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
        let canonical = json!({"path": "a", "oldString": "x", "newString": "y", "all": true});
        assert_eq!(normalise(spec("edit_file"), args).unwrap(), canonical);
        // The canonical spelling wins over an alias given beside it.
        let both = json!({"path": "a", "file_path": "b", "oldString": "x", "newString": "y"});
        assert_eq!(normalise(spec("edit_file"), both).unwrap()["path"], "a");
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
            let shared = registry::family_of(t.name).map_or(&[][..], |f| f.aliases);
            for (a, c) in aliases(t, shared, props) {
                assert!(!props.contains_key(a), "{}: alias {a} is a property", t.name);
                assert_ne!(a, c, "{}", t.name);
            }
        }
    }

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Sample {
        /// The pattern.
        pattern: String,
        /// Most results (default 10).
        #[schemars(range(min = 1))]
        max_results: Option<u64>,
        /// Recurse.
        #[serde(default)]
        recursive: Option<lenient::Flag>,
        /// Count as a JS number.
        line: Option<lenient::JsInt>,
        /// Globs.
        include: Option<lenient::StringOrList>,
    }

    #[test]
    fn typed_arguments_parse_with_fixable_messages() {
        let s: Sample =
            parse("t", &json!({"pattern": "x", "recursive": "false", "line": "12.7", "include": ["a"]}))
                .unwrap();
        assert_eq!(
            (s.recursive, s.line, s.max_results),
            (Some(lenient::Flag(false)), Some(lenient::JsInt(12)), None)
        );
        assert_eq!(s.include, Some(lenient::StringOrList::Many(vec!["a".into()])));
        assert_eq!(s.pattern, "x");
        let e = parse::<Sample>("t", &json!({"pattern": 3})).unwrap_err();
        assert_eq!(e.message(), "t: `pattern` must be a string");
        let e = parse::<Sample>("t", &json!({})).unwrap_err();
        assert_eq!(e.message(), "t: `pattern` is required");
        let e = parse::<Sample>("t", &json!({"pattern": "x", "maxResults": -1})).unwrap_err();
        assert_eq!(e.message(), "t: `maxResults` must be a non-negative integer");
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Inner {
            #[allow(dead_code)]
            regex: Option<String>,
        }
        #[derive(Debug, serde::Deserialize)]
        struct Outer {
            #[allow(dead_code)]
            wait: Inner,
        }
        let e = parse::<Outer>("t", &json!({"wait": {"cursor": 3}})).unwrap_err();
        assert_eq!(e.message(), "t: unknown argument `wait.cursor`; valid arguments: regex");
        let e = parse::<Outer>("t", &json!({})).unwrap_err();
        assert_eq!(e.message(), "t: `wait` is required");
        let e = parse::<Sample>("t", &json!({"pattern": "x", "include": [3]})).unwrap_err();
        assert_eq!(e.message(), "t: `include` must be a string or an array of strings");
        let e = parse::<Sample>("t", &json!({"pattern": "x", "line": "many"})).unwrap_err();
        assert_eq!(e.message(), "t: `line` must be a number");
    }

    #[test]
    fn generated_schemas_are_plain() {
        let s = schema::<Sample>();
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"description": "The pattern.", "type": "string"},
                    "maxResults": {"description": "Most results (default 10).", "type": "integer", "minimum": 1},
                    "recursive": {"description": "Recurse.", "type": "boolean"},
                    "line": {"description": "Count as a JS number.", "type": "integer"},
                    "include": {"description": "Globs.", "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            "{s:#}"
        );
    }
}
