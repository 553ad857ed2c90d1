//! `complete_task`: mark task N (1-based) complete. No confirm, as in eddie.

use serde_json::{Map, Value};

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::plan::store;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// Run `complete_task`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let filename = store::sanitise_filename(args.get("filename"))?;
    let n = js::number(args.get("taskNumber"));
    if !n.is_finite() || n.fract() != 0.0 {
        return Err(ToolError::invalid("taskNumber must be an integer"));
    }
    if n < 1.0 {
        return Err(ToolError::invalid("taskNumber must be at least 1"));
    }
    let abridged = js::truthy(args.get("abridged"));
    let path = {
        let ctx = ctx.clone();
        crate::blocking("complete_task", move || store::locate(&ctx, filename.as_deref())).await?
    };
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    crate::blocking("complete_task", move || {
        let plan = store::read(&path)?;
        let mut tasks = plan.get("tasks").and_then(Value::as_array).cloned().unwrap_or_default();
        let index = (n - 1.0) as usize;
        let Some(Value::Object(task)) = tasks.get_mut(index) else {
            return Err(ToolError::new(
                ErrorCode::TaskNotFound,
                "taskNumber must reference an existing task",
            ));
        };
        task.insert("status".into(), Value::String("complete".into()));
        task.insert("completed".into(), Value::Bool(true));
        let mut doc = Map::new();
        doc.insert("tasks".into(), Value::Array(tasks));
        if let Value::Object(m) = &plan {
            for (k, v) in m {
                if k != "tasks" && k != "updatedAt" {
                    doc.insert(k.clone(), v.clone());
                }
            }
        }
        doc.insert("updatedAt".into(), Value::String(store::now_iso()));
        let doc = Value::Object(doc);
        store::write(&path, &doc)?;
        Ok(store::result(doc, abridged))
    })
    .await
}

/// The `complete_task` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "complete_task",
    js_name: "completeTask",
    family: "eddie",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
