//! Plan storage: locate, read, write and render the plan document.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::engine::store::atomic::write_atomic;
use crate::error::{ErrorCode, JsErrorKind, Result, ToolError};
use crate::output::ToolOutput;
use crate::workspace::Resolved;

const CONFIG_FILES: &[&str] = &[
    "eddie.config.json",
    "eddie.config.yaml",
    "eddie.config.yml",
    ".eddierc",
    ".eddierc.json",
    ".eddierc.yaml",
];
const DEFAULT_DIRECTORY: &str = ".eddie";
const DEFAULT_FILENAME: &str = "plan.json";
const STATUSES: &[&str] = &["pending", "in_progress", "complete"];

/// The `filename` argument: ignored unless a non-blank string; must not hold a separator.
pub fn sanitise_filename(value: Option<&Value>) -> Result<Option<String>> {
    let Some(Value::String(s)) = value else { return Ok(None) };
    let t = s.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.contains('/') || t.contains('\\') {
        return Err(ToolError::invalid("filename must not include directory separators"));
    }
    Ok(Some(t.to_owned()))
}

/// Parse a config file's text the way eddie's loader does.
fn parse_config(name: &str, text: &str, path: &Path) -> Result<Value> {
    let yaml = |t: &str| {
        serde_yaml_ng::from_str::<Value>(t).map_err(|e| {
            ToolError::new(ErrorCode::Parse, format!("Failed to parse {}: {e}", path.display()))
                .with_kind(JsErrorKind::SyntaxError)
        })
    };
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        return yaml(text);
    }
    serde_json::from_str::<Value>(text).or_else(|_| yaml(text))
}

/// Find the plan file: the first config file that exists decides `plan.directory` and
/// `plan.filename`; the `filename` argument overrides the file name. The result is confined
/// to the workspace.
pub fn locate(ctx: &Ctx, filename: Option<&str>) -> Result<Resolved> {
    let root = ctx.workspace.root();
    let config_root = match ctx.env_var("CONFIG_ROOT") {
        Some(c) if !c.trim().is_empty() => ctx.workspace.lexical(&c),
        _ => root.join("config"),
    };
    let mut roots = vec![config_root];
    if roots[0] != root {
        roots.push(root.to_path_buf());
    }
    let mut config = Value::Null;
    'search: for dir in &roots {
        for name in CONFIG_FILES {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    config = parse_config(name, &text, &path)?;
                    break 'search;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(ToolError::fs(&e, "open", Some(&path))),
            }
        }
    }
    let setting = |key: &str| {
        config
            .get("plan")
            .and_then(|p| p.get(key))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let directory = setting("directory").unwrap_or(DEFAULT_DIRECTORY).to_owned();
    let file = filename
        .map(str::to_owned)
        .unwrap_or_else(|| setting("filename").unwrap_or(DEFAULT_FILENAME).to_owned());
    // `path.join(cwd, directory, file)`: an absolute directory is appended under the root.
    let joined = format!("{}/{}", directory.trim_start_matches('/'), file);
    let shown = format!("{directory}/{file}");
    ctx.workspace.resolve_with(&joined, || ToolError::outside_workspace(&shown))
}

fn normalise_task(task: &Value) -> Value {
    let mut t = match task {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let completed = match t.get("completed") {
        Some(Value::Bool(b)) => *b,
        _ => t.get("status").and_then(Value::as_str) == Some("complete"),
    };
    t.insert("completed".into(), Value::Bool(completed));
    Value::Object(t)
}

/// Read the plan: `{tasks, updatedAt, …other keys}`; a missing file is an empty plan.
pub fn read(path: &Resolved) -> Result<Value> {
    let text = match std::fs::read_to_string(&path.real) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(json!({"tasks": [], "updatedAt": null}));
        }
        Err(e) => {
            let syscall = if e.raw_os_error() == Some(libc::EISDIR) { "read" } else { "open" };
            let shown = (syscall == "open").then_some(path.lexical.as_path());
            return Err(ToolError::fs(&e, syscall, shown));
        }
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        ToolError::new(ErrorCode::Parse, format!("Invalid JSON in plan file {}: {e}", path.lexical.display()))
            .with_kind(JsErrorKind::SyntaxError)
    })?;
    let tasks = match doc.get("tasks") {
        Some(Value::Array(items)) => items.iter().map(normalise_task).collect(),
        _ => Vec::new(),
    };
    let mut out = Map::new();
    out.insert("tasks".into(), Value::Array(tasks));
    out.insert(
        "updatedAt".into(),
        doc.get("updatedAt").filter(|v| v.is_string()).cloned().unwrap_or(Value::Null),
    );
    if let Value::Object(m) = doc {
        for (k, v) in m {
            if k != "tasks" && k != "updatedAt" {
                out.insert(k, v);
            }
        }
    }
    Ok(Value::Object(out))
}

/// Write `doc` (already in its final key order) atomically as pretty JSON plus a newline.
pub fn write(path: &Resolved, doc: &Value) -> Result<()> {
    let text = pretty_json(doc)?;
    write_atomic(&path.real, text.as_bytes(), &path.lexical)
}

/// `JSON.stringify(doc, null, 2) + "\n"`.
pub fn pretty_json(doc: &Value) -> Result<String> {
    let doc = crate::engine::js::integral_numbers(doc.clone());
    let mut text =
        serde_json::to_string_pretty(&doc).map_err(|e| ToolError::internal(format!("serialise: {e}")))?;
    text.push('\n');
    Ok(text)
}

/// The current time as `new Date().toISOString()` does.
pub fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Render a plan for the model.
pub fn render(plan: &Value, abridged: bool) -> String {
    let tasks = plan.get("tasks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if tasks.is_empty() {
        return "No plan available.".to_owned();
    }
    let mut lines = vec!["Plan:".to_owned()];
    for (i, task) in tasks.iter().enumerate() {
        let status = task.get("status").and_then(Value::as_str).unwrap_or("");
        let symbol = match status {
            "complete" => "✅",
            "in_progress" => "🔄",
            _ => "⏳",
        };
        let title = task.get("title").map(crate::engine::js::string).unwrap_or_else(|| "undefined".into());
        lines.push(format!("{}. {symbol} {title}", i + 1));
        if let Some(Value::String(details)) = task.get("details")
            && !details.is_empty()
            && (!abridged || status == "in_progress")
        {
            lines.push(format!("   - {details}"));
        }
    }
    lines.join("\n")
}

/// The tool result for a plan.
pub fn result(plan: Value, abridged: bool) -> ToolOutput {
    let content = render(&plan, abridged);
    ToolOutput::new(content, json!({"abridged": abridged, "plan": plan}))
}

/// Whether `s` is a plan task status.
pub fn is_status(s: &str) -> bool {
    STATUSES.contains(&s)
}
