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
        ValueType::Boolean => {
            // SAFETY: we are on the JS thread inside the call that handed us `env`; `value` is a
            // live handle of that call's scope (the caller's argument, or an element read from it
            // below with the same `env`), and get_type just said it is a boolean.
            Some(Value::Bool(unsafe { bool::from_napi_value(env.raw(), value.raw())? }))
        }
        ValueType::Number => {
            // SAFETY: as for Boolean: a live handle of `env` on the JS thread, checked to be a number.
            let f = unsafe { f64::from_napi_value(env.raw(), value.raw())? };
            number(f)
        }
        ValueType::String => {
            // SAFETY: as for Boolean: a live handle of `env` on the JS thread, checked to be a string.
            Some(Value::String(unsafe { String::from_napi_value(env.raw(), value.raw())? }))
        }
        ValueType::BigInt => {
            let s = value.coerce_to_string()?.into_utf8()?.into_owned()?;
            Some(Value::String(s))
        }
        ValueType::Object => {
            // SAFETY: as for Boolean: a live handle of `env` on the JS thread, checked to be an
            // object (arrays included); the `Object` borrows nothing beyond this call's scope.
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
    // SAFETY: on the JS thread with `env`; `unknown` was created just above by `into_unknown(*env)`
    // in this scope, and it is an error object, so viewing it as an `Object` is the right type.
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

/// Text prepared off the JS thread in the form V8 copies fastest: ASCII as Latin-1 (one-byte,
/// no decoding), other large text as UTF-16 (two-byte, no decoding) when asked; short text stays
/// UTF-8. (UTF-16 needs twice the bytes, so large JSON data is left for V8 to decode.)
enum JsText {
    Utf8(String),
    Ascii(String),
    Utf16(Vec<u16>),
}

impl JsText {
    /// Below this many bytes V8's own UTF-8 decoding costs less than a conversion here.
    const CONVERT_FROM: usize = 1024;

    fn new(text: String, utf16: bool) -> Self {
        if text.len() < Self::CONVERT_FROM {
            Self::Utf8(text)
        } else if text.is_ascii() {
            Self::Ascii(text)
        } else if !utf16 {
            Self::Utf8(text)
        } else {
            // UTF-16 never has more units than UTF-8 has bytes.
            let mut units = vec![0u16; text.len()];
            let n = encoding_rs::mem::convert_str_to_utf16(&text, &mut units);
            units.truncate(n);
            Self::Utf16(units)
        }
    }

    fn to_js<'env>(&self, env: &'env Env) -> Result<napi::JsString<'env>> {
        match self {
            Self::Utf8(s) => env.create_string(s),
            Self::Ascii(s) => env.create_string_latin1(s.as_bytes()),
            Self::Utf16(units) => env.create_string_utf16(units),
        }
    }
}

/// `content` ready to cross. When it repeats a large data string (a command's whole output,
/// say) or a joined list (a glob's paths, one per line), only the text around it crosses and
/// V8 joins the parts as a rope, so the large text is copied into the JS heap once.
enum Content {
    Whole(JsText),
    /// `field`: the data string (`data_strings`) or joined list (`data_lists`) in the middle.
    Around {
        before: JsText,
        field: Middle,
        after: JsText,
    },
}

/// What a split content has in its middle.
#[derive(Clone, Copy)]
enum Middle {
    String(usize),
    List(usize),
}

/// A result ready to cross: `data` serialised and both texts converted off the JS thread.
pub struct Rendered {
    schema: &'static str,
    content: Content,
    data_json: JsText,
    /// Large top-level string fields of `data`, sent as strings rather than inside the JSON
    /// (escaping and `JSON.parse` would cost more than a copy); `null` in `data_json`.
    data_strings: Vec<(String, JsText)>,
    /// Long top-level lists of strings (a glob's paths), each sent as one text joined by `\n`
    /// and split on the JS side (one copy and a split instead of a JSON string per item and
    /// `JSON.parse`); `null` in `data_json`. Only lists whose items hold no `\n`.
    data_lists: Vec<(String, JsText)>,
    /// `data` crosses as the JSON text `dataJson`, not parsed (`ctx.dataAsJson`).
    as_json: bool,
}

impl Rendered {
    /// A top-level data string at least this long crosses on its own.
    const SEPARATE_FROM: usize = 64 * 1024;
    /// A top-level list of at least this many strings crosses joined.
    const JOIN_FROM: usize = 256;

    /// Serialise and convert `out`; run this on a worker thread. `as_json`: `data` is handed
    /// over as its JSON text, whole.
    pub fn new(mut out: ToolOutput, as_json: bool) -> std::result::Result<Self, ToolError> {
        let mut large = Vec::new();
        let mut lists = Vec::new();
        if !as_json && let Some(fields) = out.data.as_object_mut() {
            for (key, value) in fields.iter_mut() {
                if let serde_json::Value::String(text) = value
                    && text.len() >= Self::SEPARATE_FROM
                {
                    large.push((key.clone(), std::mem::take(text)));
                    *value = serde_json::Value::Null;
                } else if let Some(joined) = joined_list(value, Self::JOIN_FROM) {
                    lists.push((key.clone(), joined));
                    *value = serde_json::Value::Null;
                }
            }
        }
        let data_json = out.take_data_json()?;
        // Mostly-ASCII JSON crosses as ASCII (its few other characters escaped): V8 parses a
        // one-byte string faster than it decodes UTF-8 into a two-byte one and parses that.
        // `dataJson` (as_json) is handed over as written.
        let data_json = match (as_json, data_json.len() >= JsText::CONVERT_FROM) {
            (false, true) => match eddie_tools_core::output::ascii_json(&data_json) {
                Some(ascii) => JsText::Ascii(ascii),
                None => JsText::new(data_json, false),
            },
            _ => JsText::new(data_json, false),
        };
        // A list's text is found in the content too (a glob's paths, one per line).
        let strings = large.iter().enumerate().map(|(i, (_, text))| (Middle::String(i), text));
        let joined = lists.iter().enumerate().map(|(i, (_, text))| (Middle::List(i), text));
        let content = match strings
            .chain(joined)
            .find_map(|(i, text)| find_whole(&out.content, text).map(|at| (i, at, at + text.len())))
        {
            Some((field, start, end)) => Content::Around {
                before: JsText::new(out.content[..start].to_owned(), true),
                field,
                after: JsText::new(out.content[end..].to_owned(), true),
            },
            None => Content::Whole(JsText::new(out.content, true)),
        };
        let data_strings = large.into_iter().map(|(key, text)| (key, JsText::new(text, true))).collect();
        let lists = lists.into_iter().map(|(key, text)| (key, JsText::new(text, true))).collect();
        Ok(Self { schema: out.schema, content, data_json, data_strings, data_lists: lists, as_json })
    }
}

/// `value`'s items joined by `\n` when it is a list of at least `min` strings none of which
/// holds a `\n` (so that splitting the text gives back exactly the list).
fn joined_list(value: &serde_json::Value, min: usize) -> Option<String> {
    let items = value.as_array().filter(|a| a.len() >= min)?;
    let mut joined = String::with_capacity(items.iter().map(|v| v.as_str().map_or(0, |s| s.len() + 1)).sum());
    for (i, item) in items.iter().enumerate() {
        let text = item.as_str().filter(|s| !s.contains('\n'))?;
        if i > 0 {
            joined.push('\n');
        }
        joined.push_str(text);
    }
    Some(joined)
}

/// Where `needle` first occurs in `haystack`, found by its first bytes and then checked whole
/// (a miss or a false start just means the content crosses whole).
fn find_whole(haystack: &str, needle: &str) -> Option<usize> {
    let probe = &needle.as_bytes()[..needle.len().min(64)];
    let at = memchr::memmem::find(haystack.as_bytes(), probe)?;
    (haystack.as_bytes().get(at..at + needle.len()) == Some(needle.as_bytes())).then_some(at)
}

/// `{schema, content, data}` as a JS object. `data` crosses as one JSON string parsed by V8's
/// `JSON.parse`, which is much faster than building a large tree object by object.
pub fn output<'env>(env: &'env Env, out: &Rendered) -> Result<Object<'env>> {
    let mut obj = Object::new(env)?;
    obj.set_named_property("schema", out.schema)?;
    if out.as_json {
        let Content::Whole(content) = &out.content else {
            return Err(Error::from_reason("content split from data given as JSON"));
        };
        obj.set_named_property("content", content.to_js(env)?)?;
        obj.set_named_property("dataJson", out.data_json.to_js(env)?)?;
        return Ok(obj);
    }
    let json: Object = env.get_global()?.get_named_property("JSON")?;
    let parse: Function<napi::JsString, Unknown> = json.get_named_property("parse")?;
    let data = parse.apply(json, out.data_json.to_js(env)?)?;
    let mut strings = Vec::with_capacity(out.data_strings.len());
    let mut lists = Vec::with_capacity(out.data_lists.len());
    if !out.data_strings.is_empty() {
        // The keys are already in place (as null), so the key order is the data's own.
        let mut fields = Object::from_unknown(data)?;
        for (key, text) in &out.data_strings {
            let js = text.to_js(env)?;
            fields.set_named_property(key, js)?;
            strings.push(js);
        }
    }
    if !out.data_lists.is_empty() {
        let mut fields = Object::from_unknown(data)?;
        let string: Function<Unknown, Unknown> = env.get_global()?.get_named_property("String")?;
        let proto: Object = string.get_named_property("prototype")?;
        let split: Function<napi::JsString, Unknown> = proto.get_named_property("split")?;
        let newline = env.create_string("\n")?;
        for (key, text) in &out.data_lists {
            let js = text.to_js(env)?;
            fields.set_named_property(key, split.apply(js, newline)?)?;
            lists.push(js);
        }
    }
    let content = match &out.content {
        Content::Whole(text) => text.to_js(env)?.to_unknown(),
        Content::Around { before, field, after } => {
            let string: Function<Unknown, Unknown> = env.get_global()?.get_named_property("String")?;
            let proto: Object = string.get_named_property("prototype")?;
            let concat: Function<FnArgs<(napi::JsString, napi::JsString)>, Unknown> =
                proto.get_named_property("concat")?;
            let middle = match *field {
                Middle::String(i) => strings.get(i),
                Middle::List(i) => lists.get(i),
            };
            let middle = middle.copied().ok_or_else(|| Error::from_reason("missing data string"))?;
            concat.apply(before.to_js(env)?, FnArgs::from((middle, after.to_js(env)?)))?
        }
    };
    obj.set_named_property("content", content)?;
    obj.set_named_property("data", data)?;
    Ok(obj)
}
