//! `execute_plan` (Stack): mark a plan in progress (and its first pending step), after
//! `ctx.confirm`. Any task list can be executed as a plan.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::context::Ctx;
use crate::engine::plan::store::now_iso;
use crate::engine::plan::tasks::store;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "execute_plan";

/// The arguments of `execute_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The plan's id, as create_plan returned it (also: plan_id).
    pub plan_id: String,
}

/// Run `execute_plan`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let id = super::list_name(Some(&a.plan_id), "")?;
    let path = super::locate(ctx, &id)?;
    let p = path.clone();
    if crate::blocking("task list", move || store::read_existing(&p)).await?.is_none() {
        return Err(super::plan_not_found(&id));
    }
    if !ctx.confirm(format!("Start executing plan \"{id}\"?")).await? {
        return Ok(ToolOutput::new(
            format!("Executing plan {id} was cancelled; nothing changed."),
            json!({"planId": id, "status": null, "cancelled": true, "steps": []}),
        ));
    }
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let pid = id.clone();
    let doc = crate::blocking("task list", move || {
        let mut doc = store::read_existing(&path)?.ok_or_else(|| super::plan_not_found(&pid))?;
        let mut meta = doc.get("metadata").and_then(Value::as_object).cloned().unwrap_or_else(Map::new);
        meta.insert("status".into(), json!("in_progress"));
        meta.insert("startedAt".into(), json!(now_iso()));
        doc["metadata"] = Value::Object(meta);
        if let Some(tasks) = doc["tasks"].as_array_mut() {
            let running = tasks.iter().any(|t| t["status"] == "in_progress");
            if !running && let Some(t) = tasks.iter_mut().find(|t| t["status"] == "pending") {
                t["status"] = json!("in_progress");
                t["updatedAt"] = json!(now_iso());
            }
        }
        store::write(&path, &doc, true)
    })
    .await?;
    let plan = super::create_plan::plan_view(&id, &doc);
    let steps = plan["steps"].clone();
    let current = steps
        .as_array()
        .and_then(|s| s.iter().find(|t| t["status"] == "in_progress"))
        .map(|t| t["title"].as_str().unwrap_or("").to_owned());
    let content = match &current {
        Some(t) => format!("Plan {id} is in progress; current step: {t}."),
        None => format!("Plan {id} is in progress; no step is pending."),
    };
    Ok(ToolOutput::new(
        content,
        json!({"planId": id, "status": "in_progress", "cancelled": false, "goal": plan["goal"], "steps": steps}),
    ))
}

/// The `execute_plan` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "executePlan",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("execute_plan.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
