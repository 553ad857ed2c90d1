//! [`ToolOutput`]: the `{schema, content, data}` result every tool returns.

use std::borrow::Cow;

use serde_json::Value;

use crate::error::{Result, ToolError};

/// A tool result, exactly `{schema, content, data}`.
///
/// `data` is usually a [`Value`]. A tool with a very large result (the whole tree of
/// `get_folder_tree_structure`) may instead hand over its data already serialised
/// ([`ToolOutput::from_json_text`]); then `data` is `Null` and [`ToolOutput::data_json`] /
/// [`ToolOutput::data_value`] give the data either way.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The outputSchema `$id` (e.g. `eddie.tool.file_read.result.v1`), from the tool's definition.
    pub schema: &'static str,
    /// The text the model reads.
    pub content: String,
    /// Structured data matching the outputSchema (`Null` when it came as JSON text).
    pub data: Value,
    data_text: Option<String>,
}

impl ToolOutput {
    /// A new result. Its `schema` is stamped by the pipeline from the tool's definition
    /// (`outputSchema.$id`, see [`crate::registry::output_id`]), so a tool cannot return another.
    pub fn new(content: impl Into<String>, data: Value) -> Self {
        Self { schema: "", content: content.into(), data, data_text: None }
    }

    /// A new result whose data is already JSON text (it must be valid JSON).
    pub fn from_json_text(content: impl Into<String>, data_json: String) -> Self {
        Self { schema: "", content: content.into(), data: Value::Null, data_text: Some(data_json) }
    }

    /// This result with `schema` as its outputSchema `$id`.
    pub fn with_schema(mut self, schema: &'static str) -> Self {
        self.schema = schema;
        self
    }

    /// `data` as JSON text.
    pub fn data_json(&self) -> Result<Cow<'_, str>> {
        match &self.data_text {
            Some(text) => Ok(Cow::Borrowed(text)),
            None => serde_json::to_string(&self.data)
                .map(Cow::Owned)
                .map_err(|e| ToolError::internal(format!("serialise result: {e}"))),
        }
    }

    /// `data` as JSON text, taken out of this result (no copy when it came as JSON text).
    pub fn take_data_json(&mut self) -> Result<String> {
        match self.data_text.take() {
            Some(text) => Ok(text),
            None => self.data_json().map(Cow::into_owned),
        }
    }

    /// `data` as a [`Value`] (parsed when it came as JSON text).
    pub fn data_value(&self) -> Result<Value> {
        match &self.data_text {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| ToolError::internal(format!("result is not JSON: {e}"))),
            None => Ok(self.data.clone()),
        }
    }

    /// The result as one JSON object (key order schema, content, data).
    pub fn to_json(&self) -> Result<Value> {
        Ok(serde_json::json!({ "schema": self.schema, "content": self.content, "data": self.data_value()? }))
    }
}

/// The JSON text of the object `fields` (as `serde_json::to_string` writes it: compact, in the
/// map's order) with the value of the field `key` replaced by `raw`, JSON text written apart
/// (a large list written straight from its source instead of as a [`Value`] tree).
pub fn object_json_with_raw(fields: &serde_json::Map<String, Value>, key: &str, raw: &str) -> Result<String> {
    let err = |e: serde_json::Error| ToolError::internal(format!("serialise result: {e}"));
    let mut out = Vec::with_capacity(raw.len() + 1024);
    out.push(b'{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, k).map_err(err)?;
        out.push(b':');
        if k == key {
            out.extend_from_slice(raw.as_bytes());
        } else {
            serde_json::to_writer(&mut out, v).map_err(err)?;
        }
    }
    out.push(b'}');
    String::from_utf8(out).map_err(|e| ToolError::internal(format!("serialise result: {e}")))
}

/// `json` (JSON text) with every non-ASCII character written as a `\uXXXX` escape (two, a
/// surrogate pair, beyond U+FFFF), the same JSON value in ASCII; `None` when `json` is ASCII
/// already, or when the escapes would make it more than an eighth longer. (V8 reads ASCII
/// text as a one-byte string and parses it faster than UTF-8 it must decode first.)
///
/// Outside strings JSON text is ASCII, so only characters inside strings are escaped.
pub fn ascii_json(json: &str) -> Option<String> {
    let bytes = json.as_bytes();
    // The ASCII runs are skipped by `ascii_valid_up_to` (word at a time): only the other
    // characters are looked at, one by one.
    let non_ascii = || {
        let mut at = 0;
        std::iter::from_fn(move || {
            at += encoding_rs::Encoding::ascii_valid_up_to(bytes.get(at..)?);
            let c = json.get(at..)?.chars().next()?;
            let found = (at, c);
            at += c.len_utf8();
            Some(found)
        })
    };
    // Escape bytes less the UTF-8 bytes, by the length of each character's encoding.
    let extra: usize = non_ascii().map(|(_, c)| if c.len_utf8() == 4 { 8 } else { 6 - c.len_utf8() }).sum();
    if extra == 0 || extra > json.len() / 8 {
        return None;
    }
    let mut out = String::with_capacity(json.len() + extra);
    let mut from = 0;
    for (at, c) in non_ascii() {
        out.push_str(&json[from..at]);
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{u:04x}"));
        }
        from = at + c.len_utf8();
    }
    out.push_str(&json[from..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_json_is_the_same_value_in_ascii() {
        let v = serde_json::json!({
            "é": ["café", "€ 5", "😀 and 𝄞", "\u{2028}\u{2029}", "\u{fffd}", "\u{7f}\u{80}\u{ff}\u{100}\u{ffff}"],
            "ascii": "plain \"quoted\" \\ /",
            "n": [1, 2.5, null, true],
            "long": "x".repeat(400),
        });
        let text = serde_json::to_string(&v).unwrap();
        let ascii = ascii_json(&text).unwrap();
        assert!(ascii.is_ascii(), "{ascii}");
        assert_eq!(serde_json::from_str::<Value>(&ascii).unwrap(), v);
        assert!(ascii.contains("\\ud83d\\ude00") && ascii.contains("caf\\u00e9"), "{ascii}");
        assert_eq!(ascii_json("{\"a\":\"plain\"}"), None);
        // Non-ASCII first and last, and runs of ASCII longer than a word between them.
        let run = "0123456789abcdef".repeat(8);
        assert_eq!(ascii_json(&format!("\"é{run}😀\"")), Some(format!("\"\\u00e9{run}\\ud83d\\ude00\"")));
        assert_eq!(
            ascii_json(&format!("[\"{}€\"]", "a".repeat(100))),
            Some(format!("[\"{}\\u20ac\"]", "a".repeat(100)))
        );
        // Mostly non-ASCII text stays UTF-8 (its escapes would be much longer).
        assert_eq!(ascii_json(&serde_json::to_string(&"日本語のテキスト".repeat(10)).unwrap()), None);
    }
}
