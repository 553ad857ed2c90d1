//! `create_plan` (Stack): a plan with a goal and ordered steps, stored as a task list of its
//! own (`.tasks/<plan id>.json`: the steps are its tasks, `metadata` holds the goal and the
//! plan's status), after `ctx.confirm`. eddie's `agent__get_task_list` reads it by the id.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::plan::tasks::store;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "create_plan";
const MAX_STEPS: usize = 200;

/// The arguments of `create_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// What the plan achieves.
    pub goal: String,
    /// The ordered steps (1 to 200, each non-empty).
    #[schemars(length(min = 1, max = 200))]
    pub steps: Vec<String>,
}

/// Stack's view of a plan list.
pub fn plan_view(id: &str, doc: &Value) -> Value {
    let meta = doc.get("metadata");
    let steps: Vec<Value> = doc
        .get("tasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| json!({"id": t.get("id").cloned().unwrap_or(Value::Null), "title": t.get("title").cloned().unwrap_or_else(|| json!("")), "status": t.get("status").cloned().unwrap_or_else(|| json!("pending"))}))
        .collect();
    json!({
        "id": id,
        "goal": meta.and_then(|m| m.get("goal")).and_then(Value::as_str).unwrap_or(""),
        "status": meta.and_then(|m| m.get("status")).and_then(Value::as_str).unwrap_or("pending"),
        "steps": steps,
        "created": doc.get("createdAt").cloned().unwrap_or(Value::Null),
    })
}

/// Run `create_plan`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let goal = a.goal.trim().to_owned();
    if goal.is_empty() {
        return Err(ToolError::invalid("goal must not be empty"));
    }
    if a.steps.is_empty() || a.steps.len() > MAX_STEPS {
        return Err(ToolError::invalid(format!("steps must hold 1 to {MAX_STEPS} steps")));
    }
    if a.steps.iter().any(|s| s.trim().is_empty()) {
        return Err(ToolError::invalid("every step must be a non-empty string"));
    }
    let id = format!("plan-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let path = super::locate(ctx, &id)?;
    let n = a.steps.len();
    if !ctx.confirm(format!("Create plan \"{goal}\" with {n} steps?")).await? {
        return Ok(ToolOutput::new(
            format!("Creating the plan \"{goal}\" was cancelled; nothing changed."),
            json!({"created": false, "cancelled": true, "plan": null}),
        ));
    }
    let tasks: Vec<Value> = a
        .steps
        .iter()
        .map(|s| json!({"id": uuid::Uuid::new_v4().to_string(), "title": s.trim(), "status": "pending", "summary": null, "details": null}))
        .collect();
    let doc = json!({"metadata": {"kind": "plan", "goal": goal, "status": "pending"}, "tasks": tasks});
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let written = crate::blocking("task list", move || store::write(&path, &doc, false)).await?;
    let plan = plan_view(&id, &written);
    let mut content = format!("Created plan {id}: {goal}");
    for (i, s) in a.steps.iter().enumerate() {
        content.push_str(&format!("\n{}. {}", i + 1, s.trim()));
    }
    Ok(ToolOutput::new(content, json!({"created": true, "cancelled": false, "plan": plan})))
}

/// The `create_plan` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "createPlan",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("create_plan.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
