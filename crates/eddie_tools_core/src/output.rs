//! [`ToolOutput`]: the `{schema, content, data}` result every tool returns.

use serde_json::Value;

/// A tool result, exactly `{schema, content, data}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The outputSchema `$id` (e.g. `eddie.tool.file_read.result.v1`).
    pub schema: &'static str,
    /// The text the model reads.
    pub content: String,
    /// Structured data matching the outputSchema.
    pub data: Value,
}

impl ToolOutput {
    /// A new result.
    pub fn new(schema: &'static str, content: impl Into<String>, data: Value) -> Self {
        Self { schema, content: content.into(), data }
    }

    /// The result as one JSON object (key order schema, content, data).
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "schema": self.schema, "content": self.content, "data": self.data })
    }
}
