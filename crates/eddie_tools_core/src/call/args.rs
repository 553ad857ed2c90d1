//! The one argument policy, applied to every call before its tool sees the arguments.
//!
//! - `null` counts as absent, in every family (strict-mode OpenAI models send `null` for
//!   every optional field they do not use).
//! - An alias (the seeds' spellings, `(alias, canonical)` pairs on the tool's spec) is renamed
//!   to its canonical key, so a tool reads one spelling.
//! - Outside the `eddie` family, any other key that is not a property of the tool's input
//!   schema is refused with `INVALID_ARGUMENT`, naming the valid keys and the closest one, so a
//!   foreign or misspelt option is never silently ignored.
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
    // An alias becomes its canonical name (when both are given, the canonical one wins).
    for (alias, canonical) in aliases(spec, props) {
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
    props: &'a Map<String, Value>,
) -> impl Iterator<Item = (&'static str, &'static str)> + 'a {
    let shared = registry::family_of(spec.name).map_or(&[][..], |f| f.aliases);
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

/// The candidate closest to `key` (see [`closest_n`]).
fn closest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    closest_n(key, candidates, 1).into_iter().next()
}

/// The candidates closest to `key`, best first, at most `limit`: those the same up to case and
/// `_`/`-` (`max_depth` → `maxDepth`), then the nearest by edit distance (a swap of two
/// neighbours counts as one edit) when near enough to be a typo. Ties go in name order.
pub(crate) fn closest_n<'a>(
    key: &str,
    candidates: impl Iterator<Item = &'a str>,
    limit: usize,
) -> Vec<&'a str> {
    let fold = |s: &str| s.chars().filter(|c| !matches!(c, '_' | '-')).collect::<String>().to_lowercase();
    let folded = fold(key);
    let len = folded.chars().count();
    let near = (len / 3).max(1);
    // The distance is at least the difference in length: candidates that far apart are never
    // compared (a megabyte of name against every tool took seconds).
    let mut ranked: Vec<(usize, &str)> = candidates
        .filter_map(|c| {
            let c_folded = fold(c);
            (len.abs_diff(c_folded.chars().count()) <= near)
                .then(|| (strsim::osa_distance(&folded, &c_folded), c))
        })
        .filter(|(distance, _)| *distance <= near)
        .collect();
    ranked.sort_unstable();
    ranked.dedup_by(|a, b| a.1 == b.1);
    ranked.into_iter().take(limit).map(|(_, c)| c).collect()
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
    // Strict hosts want `required` even when every argument is optional.
    if root.get("type").is_some_and(|t| t == "object") {
        root.entry("required").or_insert(Value::Array(Vec::new()));
    }
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

/// The one value policy: the argument value types every family's `Args` use, with the same
/// coercions and the same messages everywhere.
///
/// | type | accepts | refuses (`INVALID_ARGUMENT`, naming the key and what was given) |
/// |---|---|---|
/// | [`Flag`](lenient::Flag) | `true`/`false`; `1`/`0`; the strings `"true"`, `"false"`, `"yes"`, `"no"`, `"on"`, `"off"`, `"1"`, `"0"` (any case) and `""` (false) | anything else: "must be a boolean (got "maybe")" |
/// | [`Int`](lenient::Int) | a JSON integer, a number with no fraction (`3.0`), a string holding one (`"50"`) | fractions, other strings, other types: "must be an integer (got 1.5)" |
/// | [`Cap<MAX>`](lenient::Cap) | an [`Int`](lenient::Int) from 1 to `MAX` (a result count, a limit) | 0, negatives, over `MAX`: "must be an integer from 1 to 100 (got 500)" |
/// | [`Offset<MAX>`](lenient::Offset) | an [`Int`](lenient::Int) from 0 to `MAX` (a line, a byte position, a number of context lines) | negatives, over `MAX` |
/// | [`Seconds<DEFAULT_MS, MAX_S, ZERO_IS_NONE>`](lenient::Seconds) | a number of seconds (fractions allowed, `0.5`), or a string holding one, up to `MAX_S` | negatives, over `MAX_S` ("must be a number of seconds above 0 and at most 300 (got 900)"); `0` unless the tool declares `ZERO_IS_NONE` (then `0` means none: no limit, or no wait) |
///
/// Strings are accepted because models send them (`"maxResults": "50"`); the schemas say the
/// honest type (`boolean`, `integer`, `number`, with the bounds) so that models send numbers.
/// Over-limit values are refused, not clamped: a model that asked for more than a tool gives
/// learns the limit from the message instead of silently getting less.
pub mod lenient {
    use std::time::Duration;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer};
    use serde_json::{Value, json};

    /// Integers beyond 2^53 are not exact in a JSON number a model sends; they are refused.
    const SAFE: f64 = 9_007_199_254_740_991.0;

    /// `v` as the message shows what was given: its JSON, cut to 40 characters.
    fn shown(v: &Value) -> String {
        let s = v.to_string();
        match s.char_indices().nth(40) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s,
        }
    }

    /// The number in `v`: a JSON number or a string holding a finite one.
    fn number(v: &Value) -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => {
                let t = s.trim();
                // Rust's float parser also reads "inf" and "NaN", which are not numbers here.
                let numeric = !t.is_empty()
                    && t.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'));
                numeric.then(|| t.parse::<f64>().ok()).flatten()
            }
            _ => None,
        }
        .filter(|n| n.is_finite())
    }

    /// The whole number in `v` (see [`Int`]).
    fn whole(v: &Value) -> Option<i64> {
        number(v).filter(|n| n.fract() == 0.0 && n.abs() <= SAFE).map(|n| n as i64)
    }

    /// A whole number within `min..=max`, else the message naming the range and what was given.
    fn ranged<E: serde::de::Error>(v: &Value, min: u64, max: u64) -> Result<u64, E> {
        match whole(v) {
            Some(n) if n >= 0 && (min..=max).contains(&(n as u64)) => Ok(n as u64),
            _ if max >= SAFE as u64 => {
                let from = if min == 0 {
                    "a non-negative integer".to_owned()
                } else {
                    format!("an integer of at least {min}")
                };
                Err(E::custom(format!("must be {from} (got {})", shown(v))))
            }
            _ => Err(E::custom(format!("must be an integer from {min} to {max} (got {})", shown(v)))),
        }
    }

    /// A boolean: `true`/`false`, `1`/`0`, or a string spelling one (`"false"`, `"no"`,
    /// `"off"`, `"0"` and `""` are false; `"true"`, `"yes"`, `"on"`, `"1"` are true).
    /// Schema: boolean.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Flag(pub bool);

    impl Flag {
        /// The flag, `false` when absent.
        pub fn on(v: Option<Self>) -> bool {
            v.is_some_and(|f| f.0)
        }

        /// The flag, `default` when absent.
        pub fn or(v: Option<Self>, default: bool) -> bool {
            v.map_or(default, |f| f.0)
        }

        /// The flag as an optional `bool`.
        pub fn get(v: Option<Self>) -> Option<bool> {
            v.map(|f| f.0)
        }
    }

    impl<'de> Deserialize<'de> for Flag {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let v = Value::deserialize(d)?;
            let b = match &v {
                Value::Bool(b) => Some(*b),
                Value::Number(n) => match n.as_f64() {
                    Some(0.0) => Some(false),
                    Some(1.0) => Some(true),
                    _ => None,
                },
                Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
                    "true" | "yes" | "on" | "1" => Some(true),
                    "false" | "no" | "off" | "0" | "" => Some(false),
                    _ => None,
                },
                _ => None,
            };
            b.map(Self).ok_or_else(|| D::Error::custom(format!("must be a boolean (got {})", shown(&v))))
        }
    }

    crate::value_schema!(Flag, {"type": "boolean"});

    /// An integer: a JSON integer, a number with no fraction, or a string holding one
    /// (`"50"`). Schema: integer.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Int(pub i64);

    impl<'de> Deserialize<'de> for Int {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let v = Value::deserialize(d)?;
            whole(&v)
                .map(Self)
                .ok_or_else(|| D::Error::custom(format!("must be an integer (got {})", shown(&v))))
        }
    }

    crate::value_schema!(Int, {"type": "integer"});

    /// Implements `JsonSchema` for a const-generic value type (inlined where used).
    macro_rules! generic_schema {
        ($ty:ident<$(const $p:ident: $t:ty),+>, $name:literal, |$($q:ident),+| $schema:expr) => {
            impl<$(const $p: $t),+> schemars::JsonSchema for $ty<$($p),+> {
                fn schema_name() -> std::borrow::Cow<'static, str> {
                    format!(concat!($name $(, "_{", stringify!($p), "}")+) $(, $p = $p)+).into()
                }
                fn inline_schema() -> bool {
                    true
                }
                fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                    $(let $q = $p;)+
                    match schemars::Schema::try_from($schema) {
                        Ok(s) => s,
                        Err(_) => schemars::Schema::default(),
                    }
                }
            }
        };
    }

    /// A positive count limit (`maxResults`, `limit`, `count`): an integer from `MIN` (1
    /// unless given: `maxOutputBytes` starts at 256) to `MAX` (no bound by default). Schema:
    /// integer, minimum `MIN` (and maximum `MAX` when bounded).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Cap<const MAX: u64 = { u64::MAX }, const MIN: u64 = 1>(pub usize);

    impl<const MAX: u64, const MIN: u64> Cap<MAX, MIN> {
        /// The cap, `default` when absent.
        pub fn or(v: Option<Self>, default: usize) -> usize {
            v.map_or(default, |c| c.0)
        }
    }

    impl<'de, const MAX: u64, const MIN: u64> Deserialize<'de> for Cap<MAX, MIN> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let n = ranged(&Value::deserialize(d)?, MIN, MAX)?;
            Ok(Self(usize::try_from(n).unwrap_or(usize::MAX)))
        }
    }

    generic_schema!(Cap<const MAX: u64, const MIN: u64>, "Cap", |max, min| if max >= SAFE as u64 {
        json!({"type": "integer", "minimum": min})
    } else {
        json!({"type": "integer", "minimum": min, "maximum": max})
    });

    /// A non-negative position or amount (a line or byte offset, a number of context lines):
    /// an integer from 0 to `MAX` (no bound by default). Schema: integer, minimum 0 (and
    /// maximum `MAX` when bounded).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Offset<const MAX: u64 = { u64::MAX }>(pub usize);

    impl<const MAX: u64> Offset<MAX> {
        /// The offset, `default` when absent.
        pub fn or(v: Option<Self>, default: usize) -> usize {
            v.map_or(default, |c| c.0)
        }
    }

    impl<'de, const MAX: u64> Deserialize<'de> for Offset<MAX> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let n = ranged(&Value::deserialize(d)?, 0, MAX)?;
            Ok(Self(usize::try_from(n).unwrap_or(usize::MAX)))
        }
    }

    generic_schema!(Offset<const MAX: u64>, "Offset", |max| if max >= SAFE as u64 {
        json!({"type": "integer", "minimum": 0})
    } else {
        json!({"type": "integer", "minimum": 0, "maximum": max})
    });

    /// A time limit in seconds: fractions allowed, a numeric string accepted; `DEFAULT_MS`
    /// milliseconds when absent; over `MAX_S` or negative refused; `0` refused unless
    /// `ZERO_IS_NONE`, where it means none (no limit, or no wait: see [`Seconds::get`]).
    /// Schema: number, `exclusiveMinimum` 0 (or `minimum` 0 with `ZERO_IS_NONE`), maximum
    /// `MAX_S`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct Seconds<const DEFAULT_MS: u64, const MAX_S: u64, const ZERO_IS_NONE: bool = false>(pub f64);

    impl<const DEFAULT_MS: u64, const MAX_S: u64, const ZERO_IS_NONE: bool>
        Seconds<DEFAULT_MS, MAX_S, ZERO_IS_NONE>
    {
        /// The time given, else the default; `None` for `0` (only where `ZERO_IS_NONE`).
        pub fn get(v: Option<Self>) -> Option<Duration> {
            let secs = v.map_or(DEFAULT_MS as f64 / 1000.0, |s| s.0);
            (secs > 0.0).then(|| Duration::from_secs_f64(secs))
        }

        /// The time given, else the default (for a limit where `0` is refused).
        pub fn duration(v: Option<Self>) -> Duration {
            Self::get(v).unwrap_or(Duration::ZERO)
        }
    }

    impl<'de, const DEFAULT_MS: u64, const MAX_S: u64, const ZERO_IS_NONE: bool> Deserialize<'de>
        for Seconds<DEFAULT_MS, MAX_S, ZERO_IS_NONE>
    {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let v = Value::deserialize(d)?;
            match number(&v) {
                Some(n) if n > 0.0 && n <= MAX_S as f64 => Ok(Self(n)),
                Some(n) if n == 0.0 && ZERO_IS_NONE => Ok(Self(0.0)),
                _ if ZERO_IS_NONE => Err(D::Error::custom(format!(
                    "must be a number of seconds from 0 (none) to {MAX_S} (got {})",
                    shown(&v)
                ))),
                _ => Err(D::Error::custom(format!(
                    "must be a number of seconds above 0 and at most {MAX_S} (got {})",
                    shown(&v)
                ))),
            }
        }
    }

    generic_schema!(
        Seconds<const DEFAULT_MS: u64, const MAX_S: u64, const ZERO_IS_NONE: bool>,
        "Seconds",
        |_default, max, zero| if zero {
            json!({"type": "number", "minimum": 0, "maximum": max})
        } else {
            json!({"type": "number", "exclusiveMinimum": 0, "maximum": max})
        }
    );

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
            for (a, c) in aliases(t, props) {
                assert!(!props.contains_key(a), "{}: alias {a} is a property", t.name);
                assert_ne!(a, c, "{}", t.name);
            }
        }
    }

    #[test]
    fn every_tool_outside_eddie_refuses_unknown_keys_and_lists_required() {
        // The typed `Args` do not deny unknown fields themselves: this is what refuses them.
        for t in registry::tools().filter(|t| t.family != crate::eddie::FAMILY.name) {
            let e = normalise(t, json!({"zzNotAnArgument": 1})).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{}", t.name);
            assert!(
                e.message().contains("unknown argument `zzNotAnArgument`"),
                "{}: {}",
                t.name,
                e.message()
            );
            let schema = registry::definition(t.name).unwrap()["jsonSchema"].clone();
            assert!(schema["required"].is_array(), "{}: {schema}", t.name);
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
        /// A line.
        line: Option<lenient::Int>,
        /// Globs.
        include: Option<lenient::StringOrList>,
    }

    #[test]
    fn typed_arguments_parse_with_fixable_messages() {
        let s: Sample =
            parse("t", &json!({"pattern": "x", "recursive": "false", "line": "12", "include": ["a"]}))
                .unwrap();
        assert_eq!(
            (s.recursive, s.line, s.max_results),
            (Some(lenient::Flag(false)), Some(lenient::Int(12)), None)
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
        assert_eq!(e.message(), "t: `line` must be an integer (got \"many\")");
    }

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Values {
        flag: Option<lenient::Flag>,
        int: Option<lenient::Int>,
        max_results: Option<lenient::Cap<100>>,
        offset: Option<lenient::Offset>,
        context: Option<lenient::Offset<10>>,
        timeout: Option<lenient::Seconds<30_000, 300>>,
        run_timeout: Option<lenient::Seconds<30_000, 600, true>>,
    }

    fn values(args: Value) -> std::result::Result<Values, String> {
        parse::<Values>("t", &args).map_err(|e| {
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            e.message().to_owned()
        })
    }

    #[test]
    fn flags_take_booleans_and_their_spellings_only() {
        for (given, want) in [
            (json!(true), true),
            (json!(false), false),
            (json!("false"), false),
            (json!(" TRUE "), true),
            (json!("no"), false),
            (json!("yes"), true),
            (json!("off"), false),
            (json!("0"), false),
            (json!("1"), true),
            (json!(""), false),
            (json!(0), false),
            (json!(1), true),
        ] {
            assert_eq!(values(json!({"flag": given})).unwrap().flag, Some(lenient::Flag(want)), "{given}");
        }
        for given in [json!("maybe"), json!(2), json!([]), json!({"a": 1})] {
            let e = values(json!({"flag": given})).unwrap_err();
            assert_eq!(e, format!("t: `flag` must be a boolean (got {given})"));
        }
        assert!(lenient::Flag::on(Some(lenient::Flag(true))));
        assert!(!lenient::Flag::on(None));
    }

    #[test]
    fn integers_take_strings_and_whole_numbers_only() {
        for (given, want) in
            [(json!(50), 50), (json!("50"), 50), (json!(" -3 "), -3), (json!(7.0), 7), (json!("1e3"), 1000)]
        {
            assert_eq!(values(json!({"int": given})).unwrap().int, Some(lenient::Int(want)), "{given}");
        }
        for given in
            [json!(1.5), json!("1.5"), json!("fifty"), json!("inf"), json!(true), json!(1e300), json!([1])]
        {
            let e = values(json!({"int": given})).unwrap_err();
            assert_eq!(e, format!("t: `int` must be an integer (got {given})"));
        }
    }

    #[test]
    fn caps_and_offsets_refuse_what_is_out_of_range() {
        let v = values(json!({"maxResults": "50", "offset": 3, "context": "10"})).unwrap();
        assert_eq!(
            (v.max_results, v.offset, v.context),
            (Some(lenient::Cap(50)), Some(lenient::Offset(3)), Some(lenient::Offset(10)))
        );
        assert_eq!(lenient::Cap::<100>::or(None, 7), 7);
        assert_eq!(lenient::Offset::<10>::or(v.context, 0), 10);
        for (given, got) in
            [(json!(0), "0"), (json!(101), "101"), (json!(-1), "-1"), (json!("2.5"), "\"2.5\"")]
        {
            let e = values(json!({"maxResults": given})).unwrap_err();
            assert_eq!(e, format!("t: `maxResults` must be an integer from 1 to 100 (got {got})"));
        }
        assert_eq!(
            values(json!({"offset": -1})).unwrap_err(),
            "t: `offset` must be a non-negative integer (got -1)"
        );
        assert_eq!(
            values(json!({"context": 11})).unwrap_err(),
            "t: `context` must be an integer from 0 to 10 (got 11)"
        );
        assert_eq!(values(json!({"offset": 0})).unwrap().offset, Some(lenient::Offset(0)));
    }

    #[test]
    fn seconds_take_fractions_and_refuse_over_the_max() {
        use std::time::Duration;
        type T = lenient::Seconds<30_000, 300>;
        type Run = lenient::Seconds<30_000, 600, true>;
        let v = values(json!({"timeout": 0.5, "runTimeout": "2.5"})).unwrap();
        assert_eq!(T::duration(v.timeout), Duration::from_millis(500));
        assert_eq!(Run::get(v.run_timeout), Some(Duration::from_millis(2500)));
        assert_eq!(T::duration(None), Duration::from_secs(30));
        assert_eq!(Run::get(values(json!({"runTimeout": 0})).unwrap().run_timeout), None);
        assert_eq!(T::get(values(json!({"timeout": 300})).unwrap().timeout), Some(Duration::from_secs(300)));
        for (given, got) in
            [(json!(0), "0"), (json!(-1), "-1"), (json!(300.5), "300.5"), (json!("soon"), "\"soon\"")]
        {
            let e = values(json!({"timeout": given})).unwrap_err();
            assert_eq!(
                e,
                format!("t: `timeout` must be a number of seconds above 0 and at most 300 (got {got})")
            );
        }
        for (given, got) in [(json!(-0.5), "-0.5"), (json!(601), "601")] {
            let e = values(json!({"runTimeout": given})).unwrap_err();
            assert_eq!(
                e,
                format!("t: `runTimeout` must be a number of seconds from 0 (none) to 600 (got {got})")
            );
        }
    }

    #[test]
    fn value_schemas_say_the_honest_type_and_bounds() {
        let s = schema::<Values>();
        assert_eq!(
            s["properties"],
            json!({
                "flag": {"type": "boolean"},
                "int": {"type": "integer"},
                "maxResults": {"type": "integer", "minimum": 1, "maximum": 100},
                "offset": {"type": "integer", "minimum": 0},
                "context": {"type": "integer", "minimum": 0, "maximum": 10},
                "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 300},
                "runTimeout": {"type": "number", "minimum": 0, "maximum": 600}
            }),
            "{s:#}"
        );
        // Every argument optional: `required` is still there, empty (strict hosts want it).
        assert_eq!(s["required"], json!([]));
        assert_eq!(s["additionalProperties"], json!(false));
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
                    "line": {"description": "A line.", "type": "integer"},
                    "include": {"description": "Globs.", "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
            "{s:#}"
        );
    }
}
