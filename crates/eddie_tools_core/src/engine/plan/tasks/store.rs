//! Task-list storage: name checks, reading with normalisation, atomic writes, insertion and
//! rendering. These back the `task_list.ts` helpers that `@eddie/tools` exports.

use serde_json::{Map, Value, json};

use crate::engine::js;
use crate::engine::plan::store::{now_iso, pretty_json};
use crate::error::{ErrorCode, JsErrorKind, Result, ToolError};
use crate::output::ToolOutput;
use crate::workspace::{Resolved, Workspace};

/// Valid task statuses, in order.
pub const STATUSES: &[&str] = &["pending", "in_progress", "complete"];

/// `sanitiseTaskListName`: a trimmed name without path separators.
pub fn sanitise_task_list_name(value: Option<&Value>) -> Result<String> {
    let Some(Value::String(s)) = value else {
        return Err(ToolError::invalid("task list name must be a string"));
    };
    let t = s.trim();
    if t.is_empty() {
        return Err(ToolError::invalid("task list name must be provided"));
    }
    if t.contains('/') || t.contains('\\') {
        return Err(ToolError::invalid("task list name must not include path separators"));
    }
    Ok(t.to_owned())
}

/// `sanitiseTaskId`: a trimmed, non-blank id.
pub fn sanitise_task_id(value: Option<&Value>) -> Result<String> {
    match value {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        _ => Err(ToolError::invalid("taskId must be provided")),
    }
}

/// `isTaskListTaskStatus`.
pub fn is_status(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::String(s)) if STATUSES.contains(&s.as_str()))
}

/// Where list `name` lives, confined to the workspace. The storage helpers re-check names.
pub fn locate(ws: &Workspace, name: &str) -> Result<Resolved> {
    if name.contains('/') || name.contains('\\') {
        return Err(ToolError::invalid("list name must not include path separators"));
    }
    let rel = format!(".tasks/{name}.json");
    ws.resolve(&rel)
}

fn non_empty_string(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// Normalise one stored task; `created`/`updated` are the fallbacks for missing timestamps.
pub fn normalise_task(task: &Value, created: &str, updated: Option<&str>) -> Value {
    let empty = Map::new();
    let t = task.as_object().unwrap_or(&empty);
    let id = match t.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => uuid::Uuid::new_v4().to_string(),
    };
    let title = match t.get("title") {
        None | Some(Value::Null) => String::new(),
        Some(v) => js::string(v),
    };
    let status = if is_status(t.get("status")) {
        t.get("status").cloned().unwrap_or_default()
    } else {
        json!("pending")
    };
    let text = |k: &str| t.get(k).filter(|v| v.is_string()).cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    out.insert("id".into(), Value::String(id));
    out.insert("title".into(), Value::String(title));
    out.insert("status".into(), status);
    out.insert("summary".into(), text("summary"));
    out.insert("details".into(), text("details"));
    if let Some(Value::Object(m)) = t.get("metadata") {
        out.insert("metadata".into(), Value::Object(m.clone()));
    }
    out.insert(
        "createdAt".into(),
        Value::String(non_empty_string(t.get("createdAt")).unwrap_or_else(|| created.to_owned())),
    );
    let updated_at = match updated {
        Some(u) => non_empty_string(t.get("updatedAt")).unwrap_or_else(|| u.to_owned()),
        None => created.to_owned(),
    };
    out.insert("updatedAt".into(), Value::String(updated_at));
    Value::Object(out)
}

/// Normalise a document. Missing timestamps fall back to `now`; each task's `updatedAt` is
/// kept when `task_updated` is set (with it as the fallback) and reset to its `createdAt`
/// fallback otherwise (see [`normalise_task`]); the document's `updatedAt` is kept when
/// `keep_updated_at`, else `now`.
fn normalise(doc: &Value, now: &str, task_updated: Option<&str>, keep_updated_at: bool) -> Value {
    let empty = Map::new();
    let d = doc.as_object().unwrap_or(&empty);
    let metadata = match d.get("metadata") {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        _ => json!({}),
    };
    let tasks: Vec<Value> = match d.get("tasks") {
        Some(Value::Array(items)) => items.iter().map(|t| normalise_task(t, now, task_updated)).collect(),
        _ => Vec::new(),
    };
    let stored_updated = if keep_updated_at { non_empty_string(d.get("updatedAt")) } else { None };
    json!({
        "metadata": metadata,
        "tasks": tasks,
        "createdAt": non_empty_string(d.get("createdAt")).unwrap_or_else(|| now.to_owned()),
        "updatedAt": stored_updated.unwrap_or_else(|| now.to_owned()),
    })
}

/// Normalise a stored document as read (every missing timestamp = now, the rest kept).
pub fn normalise_document(doc: &Value) -> Value {
    let now = now_iso();
    normalise(doc, &now, Some(&now), true)
}

/// An empty document stamped now.
pub fn empty_document() -> Value {
    let now = now_iso();
    json!({"metadata": {}, "tasks": [], "createdAt": now, "updatedAt": now})
}

/// Read list `path`; `Ok(None)` when the file does not exist.
pub fn read_existing(path: &Resolved) -> Result<Option<Value>> {
    let text = match std::fs::read_to_string(&path.real) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ToolError::fs(&e, "open", Some(&path.lexical))),
    };
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        ToolError::new(ErrorCode::Parse, format!("Invalid JSON in task list {}: {e}", path.lexical.display()))
            .with_kind(JsErrorKind::SyntaxError)
    })?;
    Ok(Some(normalise_document(&doc)))
}

/// `readTaskListDocument`: the document, or an empty one (not written) when missing.
pub fn read(path: &Resolved) -> Result<Value> {
    Ok(read_existing(path)?.unwrap_or_else(empty_document))
}

/// `ensureTaskListDocument`: read, creating the file with an empty document when missing.
pub fn ensure(path: &Resolved) -> Result<Value> {
    match read_existing(path)? {
        Some(doc) => Ok(doc),
        None => {
            let doc = empty_document();
            write(path, &doc, false)
        }
    }
}

/// `writeTaskListDocument`: normalise and write `doc` atomically; returns what was written.
/// Timestamps: the document's `createdAt` is kept when set, `updatedAt` is now; each task
/// keeps its `createdAt`, and its `updatedAt` only when `preserve_task_updated_at`.
pub fn write(path: &Resolved, doc: &Value, preserve_task_updated_at: bool) -> Result<Value> {
    let now = now_iso();
    let out = normalise(doc, &now, preserve_task_updated_at.then_some(now.as_str()), false);
    crate::engine::store::atomic::write_atomic(&path.real, pretty_json(&out)?.as_bytes(), &path.lexical)?;
    Ok(out)
}

/// Where to put a new task.
#[derive(Debug, Clone, Default)]
pub struct InsertAt {
    /// Insert before the task with this id, when it exists.
    pub before_task_id: Option<String>,
    /// Otherwise insert at this index, when it is a non-negative integer within the list.
    pub position: Option<Value>,
}

/// `insertTaskPayload`: insert `task` per `at` (append by default); returns the index used.
pub fn insert(tasks: &mut Vec<Value>, task: Value, at: &InsertAt) -> usize {
    let mut index = tasks.len();
    if let Some(id) = at.before_task_id.as_deref().filter(|s| !s.is_empty())
        && let Some(i) = tasks.iter().position(|t| t.get("id").and_then(Value::as_str) == Some(id))
    {
        index = i;
    }
    if index == tasks.len()
        && let Some(Value::Number(n)) = &at.position
        && let Some(p) = n.as_f64()
        && p.fract() == 0.0
        && p >= 0.0
        && p <= tasks.len() as f64
    {
        index = p as usize;
    }
    tasks.insert(index, task);
    index
}

fn status_of(t: &Value) -> &str {
    t.get("status").and_then(Value::as_str).unwrap_or("pending")
}

fn non_blank(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.trim().is_empty())
}

/// `renderTaskListContent`: the text body for list `name`.
pub fn render(name: &str, doc: &Value, abridged: bool) -> String {
    let tasks = doc.get("tasks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let next = tasks.iter().find(|t| status_of(t) != "complete");
    let summary_line = match next {
        Some(t) => {
            format!("Next task: {} ({}).", t.get("title").and_then(Value::as_str).unwrap_or(""), status_of(t))
        }
        None => "All tasks are complete.".to_owned(),
    };
    let mut details = Vec::new();
    if let Some(t) = next {
        if let Some(s) = non_blank(t.get("summary")) {
            details.push(format!("Summary: {s}"));
        }
        if let Some(d) = non_blank(t.get("details")) {
            details.push(format!("Details: {d}"));
        }
    }
    if abridged {
        let mut lines = vec![format!("Task list \"{name}\" — {summary_line}")];
        lines.extend(details);
        return lines.join("\n").trim().to_owned();
    }
    let count = |s: &str| tasks.iter().filter(|t| status_of(t) == s).count();
    let mut lines = vec![format!("Task list \"{name}\""), summary_line];
    lines.extend(details);
    lines.push(format!(
        "Tasks: {} total (pending {}, in_progress {}, complete {})",
        tasks.len(),
        count("pending"),
        count("in_progress"),
        count("complete")
    ));
    for (i, t) in tasks.iter().enumerate() {
        let status = status_of(t);
        let bullet = match status {
            "complete" => "✓",
            "in_progress" => "…",
            _ => "•",
        };
        let title = t.get("title").and_then(Value::as_str).unwrap_or("");
        let mut line = format!("{}. {bullet} [{status}] {title}", i + 1);
        if let Some(Value::String(s)) = t.get("summary")
            && !s.is_empty()
        {
            line.push_str(&format!(" — {s}"));
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// `formatTaskListResult`: `{schema, content, data}` with an optional header line.
pub fn format_result(name: &str, doc: Value, header: Option<&str>, abridged: bool) -> ToolOutput {
    let body = render(name, &doc, abridged);
    let content = match header.map(str::trim).filter(|h| !h.is_empty()) {
        Some(h) => format!("{h}\n{body}"),
        None => body,
    };
    ToolOutput::new(content.trim().to_owned(), doc)
}

/// The index of task `id` in `doc`.
pub fn find(doc: &Value, id: &str) -> Option<usize> {
    doc.get("tasks")?.as_array()?.iter().position(|t| t.get("id").and_then(Value::as_str) == Some(id))
}

/// `Could not find task with id "<id>" in list "<name>".`
pub fn not_found(id: &str, name: &str) -> ToolError {
    ToolError::new(
        ErrorCode::TaskNotFound,
        format!("Could not find task with id \"{id}\" in list \"{name}\"."),
    )
}

/// Locate list `name`, read it, and check that task `id` exists (before any confirm).
pub async fn load_with_task(ws: &Workspace, name: &str, id: &str) -> Result<(Resolved, Value)> {
    let path = locate(ws, name)?;
    let doc = {
        let path = path.clone();
        crate::blocking("task list", move || read(&path)).await?
    };
    if find(&doc, id).is_none() {
        return Err(not_found(id, name));
    }
    Ok((path, doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert_eq!(sanitise_task_list_name(Some(&json!(" daily "))).unwrap(), "daily");
        assert!(
            sanitise_task_list_name(Some(&json!("a/b"))).unwrap_err().message().contains("path separators")
        );
        assert_eq!(
            sanitise_task_list_name(Some(&json!(3))).unwrap_err().message(),
            "task list name must be a string"
        );
        assert_eq!(
            sanitise_task_list_name(Some(&json!("  "))).unwrap_err().message(),
            "task list name must be provided"
        );
        assert_eq!(sanitise_task_id(None).unwrap_err().message(), "taskId must be provided");
    }

    #[test]
    fn insert_follows_eddie() {
        let mut v = vec![json!({"id":"a"}), json!({"id":"b"})];
        insert(
            &mut v,
            json!({"id":"x"}),
            &InsertAt { before_task_id: Some("b".into()), position: Some(json!(0)) },
        );
        insert(
            &mut v,
            json!({"id":"y"}),
            &InsertAt { before_task_id: Some("missing".into()), position: Some(json!(0)) },
        );
        insert(&mut v, json!({"id":"z"}), &InsertAt { before_task_id: None, position: Some(json!(1.5)) });
        insert(&mut v, json!({"id":"w"}), &InsertAt { before_task_id: None, position: Some(json!(99)) });
        let ids: Vec<&str> = v.iter().filter_map(|t| t["id"].as_str()).collect();
        assert_eq!(ids, ["y", "a", "x", "b", "z", "w"]);
    }
}
