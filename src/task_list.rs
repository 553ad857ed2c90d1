//! The `task_list.ts` helpers that `@eddie/tools` exports, backed by the core's task store.

use eddie_tools_core::ToolError;
use eddie_tools_core::engine::plan::tasks::store;
use eddie_tools_core::workspace::Workspace;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::convert::reject;

fn sync_err(e: &ToolError) -> Error<String> {
    Error::new(e.code().as_str().to_owned(), e.message().to_owned())
}

/// `sanitiseTaskListName`: trimmed name; throws for non-strings, blanks and separators.
#[napi(catch_unwind, ts_args_type = "value: unknown")]
pub fn sanitise_task_list_name(value: Option<Value>) -> std::result::Result<String, Error<String>> {
    store::sanitise_task_list_name(value.as_ref()).map_err(|e| sync_err(&e))
}

/// `sanitiseTaskId`: trimmed id; throws `taskId must be provided`.
#[napi(catch_unwind, ts_args_type = "value: unknown")]
pub fn sanitise_task_id(value: Option<Value>) -> std::result::Result<String, Error<String>> {
    store::sanitise_task_id(value.as_ref()).map_err(|e| sync_err(&e))
}

/// `isTaskListTaskStatus`.
#[napi(catch_unwind, ts_args_type = "value: unknown", ts_return_type = "value is TaskListTaskStatus")]
pub fn is_task_list_task_status(value: Option<Value>) -> bool {
    store::is_status(value.as_ref())
}

/// `insertTaskPayload({tasks, task, beforeTaskId?, position?})` → `{tasks, index}`.
#[napi(
    catch_unwind,
    ts_args_type = "options: InsertTaskPayloadOptions",
    ts_return_type = "InsertTaskPayloadResult"
)]
pub fn insert_task_payload(options: Value) -> Value {
    let mut tasks = options.get("tasks").and_then(Value::as_array).cloned().unwrap_or_default();
    let task = options.get("task").cloned().unwrap_or_else(|| json!({}));
    let at = store::InsertAt {
        before_task_id: options.get("beforeTaskId").and_then(Value::as_str).map(str::to_owned),
        position: options.get("position").cloned(),
    };
    let index = store::insert(&mut tasks, task, &at);
    json!({"tasks": tasks, "index": index})
}

/// `renderTaskListContent({listName, document, abridged?})`.
#[napi(catch_unwind, ts_args_type = "options: RenderTaskListContentOptions")]
pub fn render_task_list_content(options: Value) -> String {
    let name = options.get("listName").and_then(Value::as_str).unwrap_or_default();
    let doc = options.get("document").cloned().unwrap_or_else(|| json!({}));
    store::render(name, &doc, options.get("abridged").and_then(Value::as_bool).unwrap_or(false))
}

/// `formatTaskListResult({document, listName, header?, abridged?})`.
#[napi(
    catch_unwind,
    ts_args_type = "options: FormatTaskListResultOptions",
    ts_return_type = "TaskListResult"
)]
pub fn format_task_list_result(options: Value) -> napi::Result<Value> {
    let name = options.get("listName").and_then(Value::as_str).unwrap_or_default().to_owned();
    let doc = options.get("document").cloned().unwrap_or_else(|| json!({}));
    let header = options.get("header").and_then(Value::as_str).map(str::to_owned);
    let abridged = options.get("abridged").and_then(Value::as_bool).unwrap_or(false);
    store::format_result(&name, doc, header.as_deref(), abridged)
        .to_json()
        .map_err(|e| napi::Error::from_reason(e.message()))
}

enum StoreOp {
    Read,
    Ensure,
    Write { document: Value, preserve: bool },
}

fn storage<'env>(env: &'env Env, options: Value, op: StoreOp) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    env.spawn_future_with_callback(
        async move {
            Ok(eddie_tools_core::blocking("task list", move || {
                let root = options.get("rootDir").and_then(Value::as_str).unwrap_or_default();
                let name = options.get("listName").and_then(Value::as_str).unwrap_or_default();
                let ws = Workspace::new(root)?;
                let path = store::locate(&ws, name)?;
                match op {
                    StoreOp::Read => store::read(&path),
                    StoreOp::Ensure => store::ensure(&path),
                    StoreOp::Write { document, preserve } => store::write(&path, &document, preserve),
                }
            })
            .await)
        },
        |env, r: eddie_tools_core::Result<Value>| match r {
            Ok(doc) => env.to_js_value(&doc),
            Err(e) => Err(reject(env, &e)),
        },
    )
}

/// `readTaskListDocument({rootDir, listName})`: the list, or an empty one when missing.
#[napi(
    catch_unwind,
    ts_args_type = "options: ReadTaskListDocumentOptions",
    ts_return_type = "Promise<TaskListDocument>"
)]
pub fn read_task_list_document<'env>(
    env: &'env Env,
    options: Value,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    storage(env, options, StoreOp::Read)
}

/// `ensureTaskListDocument({rootDir, listName})`: read, creating the file when missing.
#[napi(
    catch_unwind,
    ts_args_type = "options: ReadTaskListDocumentOptions",
    ts_return_type = "Promise<TaskListDocument>"
)]
pub fn ensure_task_list_document<'env>(
    env: &'env Env,
    options: Value,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    storage(env, options, StoreOp::Ensure)
}

/// `writeTaskListDocument({rootDir, listName, document, preserveTaskUpdatedAt?})` (atomic).
#[napi(
    catch_unwind,
    ts_args_type = "options: WriteTaskListDocumentOptions",
    ts_return_type = "Promise<TaskListDocument>"
)]
pub fn write_task_list_document<'env>(
    env: &'env Env,
    options: Value,
) -> Result<PromiseRaw<'env, Unknown<'env>>> {
    let document = options.get("document").cloned().unwrap_or_else(|| json!({}));
    let preserve = options.get("preserveTaskUpdatedAt").and_then(Value::as_bool).unwrap_or(false);
    storage(env, options, StoreOp::Write { document, preserve })
}
