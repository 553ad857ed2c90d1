//! `update_plan`: replace the plan, after `ctx.confirm`.

use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::plan::store;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Validate one task the way eddie does; key order title, status, completed, details.
fn sanitise_task(task: &Value) -> Result<Value> {
    let Value::Object(t) = task else { return Err(ToolError::invalid("each task must be an object")) };
    let title = match t.get("title") {
        None | Some(Value::Null) => String::new(),
        Some(v) => js::string(v),
    };
    let title = title.trim();
    if title.is_empty() {
        return Err(ToolError::invalid("task title must be provided"));
    }
    let status = match t.get("status") {
        Some(Value::String(s)) if store::is_status(s) => s.clone(),
        _ => return Err(ToolError::invalid("task status must be pending, in_progress, or complete")),
    };
    let completed = match t.get("completed") {
        Some(Value::Bool(b)) => *b,
        None => status == "complete",
        Some(_) => return Err(ToolError::invalid("task completed must be a boolean")),
    };
    let mut out = Map::new();
    out.insert("title".into(), Value::String(title.to_owned()));
    out.insert("status".into(), Value::String(status));
    out.insert("completed".into(), Value::Bool(completed));
    let details = match t.get("details") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(js::string(v)),
    };
    if let Some(d) = details.filter(|d| !d.is_empty()) {
        out.insert("details".into(), Value::String(d));
    }
    Ok(Value::Object(out))
}

/// Run `update_plan`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let abridged = js::truthy(args.get("abridged"));
    let plan_arg = args.get("plan");
    let source = match plan_arg {
        Some(Value::Object(p)) if p.get("tasks").is_some_and(|t| !t.is_null()) => p.get("tasks"),
        _ => args.get("tasks"),
    };
    let Some(Value::Array(items)) = source else {
        return Err(ToolError::invalid("tasks must be an array of plan entries"));
    };
    let tasks = items.iter().map(sanitise_task).collect::<Result<Vec<_>>>()?;
    let payload = match plan_arg {
        None => Map::new(),
        Some(Value::Object(p)) => p
            .iter()
            .filter(|(k, _)| *k != "tasks" && *k != "updatedAt")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        Some(_) => return Err(ToolError::invalid("plan must be an object if provided")),
    };
    let filename = store::sanitise_filename(args.get("filename"))?;
    let path = {
        let ctx = ctx.clone();
        crate::blocking("update_plan", move || store::locate(&ctx, filename.as_deref())).await?
    };
    let approved = ctx.confirm(format!("Update plan with {} tasks?", tasks.len())).await?;
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    crate::blocking("update_plan", move || {
        if !approved {
            return Ok(store::result(store::read(&path)?, abridged));
        }
        let mut doc = payload;
        doc.insert("tasks".into(), Value::Array(tasks));
        doc.insert("updatedAt".into(), Value::String(store::now_iso()));
        let doc = Value::Object(doc);
        store::write(&path, &doc)?;
        Ok(store::result(doc, abridged))
    })
    .await
}

/// The `update_plan` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "update_plan",
    js_name: "updatePlan",
    family: "eddie",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
