//! The exec family's argument value types and bounds, for its typed arguments
//! ([`crate::call::args::parse`]): what `run`, the background processes and the runners
//! accepted before typed arguments, with the schema of the plain type.

use schemars::JsonSchema;
use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::call::args::lenient::{Cap, Seconds};
use crate::engine::process::command::{DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_S, MAX_MAX_BYTES, MAX_TIMEOUT_S};

/// The input schema of `A` ([`crate::call::args::schema`]), with the `null` that an `env`
/// value may be (it unsets the variable) put back: the tidying drops `null` alternatives
/// because a `null` argument counts as absent, which holds for arguments, not for the
/// values inside `env`.
pub fn schema<A: JsonSchema>() -> Value {
    let mut v = crate::call::args::schema::<A>();
    nullable(&mut v);
    v
}

/// Marks a schema whose `type` also admits `null` (see [`schema`]).
const NULLABLE: &str = "x-eddie-nullable";

fn nullable(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.remove(NULLABLE).is_some()
                && let Some(t) = m.get("type").cloned()
            {
                m.insert("type".into(), Value::Array(vec![t, Value::from("null")]));
            }
            m.values_mut().for_each(nullable);
        }
        Value::Array(a) => a.iter_mut().for_each(nullable),
        _ => {}
    }
}

/// A word of a command line, or a name: a string without NUL, or a number (as JSON spells
/// it). Schema: string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word(pub String);

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s.contains('\0') => {
                Err(D::Error::invalid_value(Unexpected::Str(&s), &"a string without NUL"))
            }
            Value::String(s) => Ok(Self(s)),
            Value::Number(n) => Ok(Self(n.to_string())),
            other => Err(D::Error::invalid_type(unexpected(&other), &"a string")),
        }
    }
}

crate::value_schema!(Word, {"type": "string"});

/// The words of a list argument.
pub fn words(list: Option<Vec<Word>>) -> Vec<String> {
    list.unwrap_or_default().into_iter().map(|w| w.0).collect()
}

/// A string without NUL. Schema: string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.contains('\0') {
            return Err(D::Error::invalid_value(Unexpected::Str(&s), &"a string without NUL"));
        }
        Ok(Self(s))
    }
}

crate::value_schema!(Text, {"type": "string"});

/// The text of an optional [`Text`] argument.
pub fn text(value: Option<Text>) -> Option<String> {
    value.map(|t| t.0)
}

/// `env`: variables to set (name → string; numbers and booleans are spelt out) or to unset
/// (`null`). The names and values are checked by
/// [`crate::engine::process::env::child_env`]. Schema: object of string | null.
#[derive(Debug, Clone, PartialEq)]
pub struct Env(pub Map<String, Value>);

impl<'de> Deserialize<'de> for Env {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(m) => Ok(Self(m)),
            other => Err(D::Error::invalid_type(unexpected(&other), &"an object of strings")),
        }
    }
}

crate::value_schema!(Env, {"type": "object", "additionalProperties": {"type": "string", "x-eddie-nullable": true}});

/// `env` as [`crate::engine::process::env::child_env`] takes it.
pub fn env_value(env: Option<Env>) -> Option<Value> {
    env.map(|e| Value::Object(e.0))
}

fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// A command's `timeout` (`run`): default 120 s, at most a day, `0` = none.
pub type RunTimeout = Seconds<{ (DEFAULT_TIMEOUT_S * 1000.0) as u64 }, { MAX_TIMEOUT_S as u64 }, true>;

/// `maxOutputBytes` per stream: from 256 to [`MAX_MAX_BYTES`] (default [`DEFAULT_MAX_BYTES`]).
pub type OutputBytes = Cap<{ MAX_MAX_BYTES as u64 }, 256>;

/// `maxOutputBytes` as the invocation takes it.
pub fn max_bytes(v: Option<OutputBytes>) -> usize {
    Cap::or(v, DEFAULT_MAX_BYTES)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::ErrorCode;
    use crate::registry;

    #[test]
    fn run_timeouts_take_fractions_and_zero_for_none() {
        use std::time::Duration;
        type T = RunTimeout;
        assert_eq!(T::get(None), Some(Duration::from_secs(120)));
        assert_eq!(T::get(Some(Seconds(0.0))), None);
        assert_eq!(T::get(Some(Seconds(2.5))), Some(Duration::from_millis(2500)));
    }

    #[tokio::test]
    async fn timeouts_follow_the_one_value_policy() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::context::Ctx::new(dir.path().to_str().unwrap()).unwrap();
        let e =
            registry::run("process_wait", &json!({"id": "p1", "timeout": "soon"}), &ctx).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            e.message(),
            "process_wait: `timeout` must be a number of seconds from 0 (none) to 3600 (got \"soon\")"
        );
        let e = registry::run("run", &json!({"command": "true", "timeout": 86_401}), &ctx).await.unwrap_err();
        assert_eq!(
            e.message(),
            "run: `timeout` must be a number of seconds from 0 (none) to 86400 (got 86401)"
        );
        let e = registry::run("process_write", &json!({"id": "p1", "stdin": "x", "timeout": 0}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(
            e.message(),
            "process_write: `timeout` must be a number of seconds above 0 and at most 3600 (got 0)"
        );
    }

    #[test]
    fn lenient_values() {
        let w: Vec<Word> = serde_json::from_value(json!(["a", 5, 1.5])).unwrap();
        assert_eq!(w.into_iter().map(|w| w.0).collect::<Vec<_>>(), ["a", "5", "1.5"]);
        assert!(serde_json::from_value::<Word>(json!("a\u{0}b")).is_err());
        assert!(serde_json::from_value::<Word>(json!({})).is_err());
        assert!(serde_json::from_value::<Text>(json!("a\u{0}b")).is_err());
        assert!(serde_json::from_value::<Text>(json!(1)).is_err());
        assert!(serde_json::from_value::<Env>(json!({"A": null, "B": 1})).is_ok());
        assert!(serde_json::from_value::<Env>(json!("x")).is_err());
        assert_eq!(max_bytes(None), DEFAULT_MAX_BYTES);
        assert_eq!(max_bytes(serde_json::from_value(json!("300")).unwrap()), 300);
        assert!(serde_json::from_value::<OutputBytes>(json!(5)).is_err());
        assert!(serde_json::from_value::<OutputBytes>(json!(1e12)).is_err());
    }
}
