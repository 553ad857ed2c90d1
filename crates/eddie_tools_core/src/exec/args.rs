//! The exec family's argument value types and bounds, for its typed arguments
//! ([`crate::call::args::parse`]): what `run`, the background processes and the runners
//! accepted before typed arguments, with the schema of the plain type.

use std::time::Duration;

use schemars::JsonSchema;
use serde::de::{Error as _, Unexpected};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::engine::process::command::{DEFAULT_MAX_BYTES, MAX_MAX_BYTES, MAX_TIMEOUT_S};
use crate::error::{Result, ToolError};

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

/// `timeout` in seconds: `default_s` when absent, else a number within `[0, max_s]`.
pub fn timeout_secs(timeout: Option<f64>, default_s: f64, max_s: f64) -> Result<f64> {
    let secs = timeout.unwrap_or(default_s);
    if !secs.is_finite() || !(0.0..=max_s).contains(&secs) {
        return Err(ToolError::invalid(format!("timeout must be between 0 and {max_s} seconds")));
    }
    Ok(secs)
}

/// A command's `timeout` in seconds: default when absent, `0` for none, else within
/// `(0, MAX]`.
pub fn timeout_arg(timeout: Option<f64>, default_s: f64) -> Result<Option<Duration>> {
    let secs = timeout_secs(timeout, default_s, MAX_TIMEOUT_S)?;
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

/// `maxOutputBytes` per stream.
pub fn max_bytes_arg(max_output_bytes: Option<f64>) -> Result<usize> {
    match max_output_bytes {
        None => Ok(DEFAULT_MAX_BYTES),
        Some(v) if !v.is_finite() || v < 256.0 => {
            Err(ToolError::invalid("maxOutputBytes must be a number >= 256"))
        }
        Some(v) => Ok((v as usize).min(MAX_MAX_BYTES)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::ErrorCode;
    use crate::registry;

    #[test]
    fn timeout_secs_defaults_and_bounds() {
        assert_eq!(timeout_secs(None, 30.0, 3600.0).unwrap(), 30.0);
        assert_eq!(timeout_secs(Some(0.0), 30.0, 3600.0).unwrap(), 0.0);
        assert_eq!(timeout_secs(Some(3600.0), 30.0, 3600.0).unwrap(), 3600.0);
        let over = timeout_secs(Some(3600.5), 30.0, 3600.0).unwrap_err();
        assert_eq!(over.message(), "timeout must be between 0 and 3600 seconds");
        let over = timeout_secs(Some(86_401.0), 1.0, MAX_TIMEOUT_S).unwrap_err();
        assert_eq!(over.message(), "timeout must be between 0 and 86400 seconds");
        let neg = timeout_secs(Some(-1.0), 30.0, 3600.0).unwrap_err();
        assert_eq!(neg.code(), ErrorCode::InvalidArgument);
        assert_eq!(timeout_arg(Some(0.0), 120.0).unwrap(), None);
        assert_eq!(timeout_arg(None, 2.5).unwrap(), Some(Duration::from_millis(2500)));
    }

    #[tokio::test]
    async fn a_timeout_that_is_not_a_number_is_refused_by_the_typed_parse() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::context::Ctx::new(dir.path().to_str().unwrap()).unwrap();
        let e = registry::run("process_wait", &json!({"id": "p1", "timeout": "5"}), &ctx).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(e.message(), "process_wait: `timeout` must be a number");
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
        assert_eq!(max_bytes_arg(None).unwrap(), DEFAULT_MAX_BYTES);
        assert_eq!(max_bytes_arg(Some(1e12)).unwrap(), MAX_MAX_BYTES);
        assert_eq!(max_bytes_arg(Some(5.0)).unwrap_err().message(), "maxOutputBytes must be a number >= 256");
    }
}
