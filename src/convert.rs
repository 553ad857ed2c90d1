//! JS values ↔ JSON, and core errors → JS errors.

use eddie_tools_core::error::JsErrorKind;
use eddie_tools_core::{ToolError, ToolOutput};
use napi::bindgen_prelude::*;
use serde_json::{Map, Value};

const MAX_DEPTH: u32 = 256;

/// Convert a JS value as `JSON.stringify` would see it, except that non-finite numbers are
/// treated like `undefined` (absent): eddie's `Number(x)` coercions treat NaN and undefined
/// the same way. `None` means "absent".
pub fn to_json(env: &Env, value: Unknown<'_>, depth: u32) -> Result<Option<Value>> {
    if depth > MAX_DEPTH {
        return Err(Error::new(Status::InvalidArg, "arguments are nested too deeply".to_owned()));
    }
    Ok(match value.get_type()? {
        ValueType::Undefined | ValueType::Function | ValueType::Symbol | ValueType::External => None,
        ValueType::Null => Some(Value::Null),
        ValueType::Boolean => Some(Value::Bool(unsafe { bool::from_napi_value(env.raw(), value.raw())? })),
        ValueType::Number => {
            let f = unsafe { f64::from_napi_value(env.raw(), value.raw())? };
            number(f)
        }
        ValueType::String => Some(Value::String(unsafe { String::from_napi_value(env.raw(), value.raw())? })),
        ValueType::BigInt => {
            let s = value.coerce_to_string()?.into_utf8()?.into_owned()?;
            Some(Value::String(s))
        }
        ValueType::Object => {
            let obj = unsafe { Object::from_napi_value(env.raw(), value.raw())? };
            if obj.is_array()? {
                let len = obj.get_array_length()?;
                let mut items = Vec::with_capacity(len as usize);
                for i in 0..len {
                    let item: Unknown = obj.get_element(i)?;
                    items.push(to_json(env, item, depth + 1)?.unwrap_or(Value::Null));
                }
                Some(Value::Array(items))
            } else {
                let mut map = Map::new();
                for key in Object::keys(&obj)? {
                    let item: Unknown = obj.get_named_property(&key)?;
                    if let Some(v) = to_json(env, item, depth + 1)? {
                        map.insert(key, v);
                    }
                }
                Some(Value::Object(map))
            }
        }
        _ => None,
    })
}

fn number(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_991.0 && !(f == 0.0 && f.is_sign_negative()) {
        return Some(Value::from(f as i64));
    }
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// Build the JS error for a core error: the right constructor, `code`, and extra props.
pub fn js_error<'env>(env: &'env Env, err: &ToolError) -> Unknown<'env> {
    let base = Error::new(err.code().as_str().to_owned(), err.message().to_owned());
    let unknown = match err.kind() {
        JsErrorKind::RangeError => JsRangeError::from(base).into_unknown(*env),
        JsErrorKind::TypeError => JsTypeError::from(base).into_unknown(*env),
        JsErrorKind::Error | JsErrorKind::SyntaxError => JsError::from(base).into_unknown(*env),
    };
    if let Ok(mut obj) = unsafe { Object::from_napi_value(env.raw(), unknown.raw()) } {
        if err.kind() == JsErrorKind::SyntaxError {
            let _ = obj.set_named_property("name", "SyntaxError");
        }
        for (k, v) in err.props() {
            if let Ok(js) = env.to_js_value(v) {
                let _ = obj.set_named_property(k, js);
            }
        }
    }
    unknown
}

/// The rejection for a core error.
pub fn reject(env: &Env, err: &ToolError) -> Error {
    Error::from(js_error(env, err))
}

/// A result ready to cross: `data` already serialised (off the JS thread).
pub struct Rendered {
    schema: &'static str,
    content: String,
    data_json: String,
}

impl Rendered {
    /// Serialise `out`'s data; run this on a worker thread.
    pub fn new(out: ToolOutput) -> std::result::Result<Self, ToolError> {
        let data_json = out.data_json()?.into_owned();
        Ok(Self { schema: out.schema, content: out.content, data_json })
    }
}

/// `{schema, content, data}` as a JS object. `data` crosses as one JSON string parsed by V8's
/// `JSON.parse`, which is much faster than building a large tree object by object.
pub fn output<'env>(env: &'env Env, out: &Rendered) -> Result<Object<'env>> {
    let mut obj = Object::new(env)?;
    obj.set_named_property("schema", out.schema)?;
    obj.set_named_property("content", out.content.as_str())?;
    let json: Object = env.get_global()?.get_named_property("JSON")?;
    let parse: Function<napi::JsString, Unknown> = json.get_named_property("parse")?;
    let data = parse.apply(json, env.create_string(&out.data_json)?)?;
    obj.set_named_property("data", data)?;
    Ok(obj)
}
