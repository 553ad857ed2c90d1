//! `create_task` (Stack): add a task to a task list (`tasks` by default), after `ctx.confirm`.
//! The description and priority go in the task's `metadata`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::Priority;
use crate::context::Ctx;
use crate::engine::plan::tasks::store;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "create_task";

/// The arguments of `create_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The task's title.
    pub title: String,
    /// What the task is about (default empty).
    pub description: Option<String>,
    /// `low`, `medium` (default) or `high`.
    pub priority: Option<Priority>,
    /// The task list (default `tasks`: `.tasks/tasks.json`, shared with the agent__* tools).
    pub task_list_name: Option<String>,
}

/// Run `create_task`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let title = a.title.trim().to_owned();
    if title.is_empty() {
        return Err(ToolError::invalid("title must not be empty"));
    }
    let name = super::list_name(a.task_list_name.as_deref(), super::DEFAULT_LIST)?;
    let priority = a.priority.unwrap_or_default();
    let description = a.description.unwrap_or_default();
    let path = super::locate(ctx, &name)?;
    // A list that cannot be read is refused before asking.
    super::read(&path).await?;
    if !ctx
        .confirm(format!("Add task \"{title}\" ({} priority) to list \"{name}\"?", priority.as_str()))
        .await?
    {
        return Ok(ToolOutput::new(
            format!("Creating task \"{title}\" was cancelled; nothing changed."),
            json!({"created": false, "cancelled": true, "taskListName": name, "task": null}),
        ));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let mut task = Map::new();
    task.insert("id".into(), json!(id));
    task.insert("title".into(), json!(title));
    task.insert("status".into(), json!("pending"));
    task.insert("summary".into(), Value::Null);
    task.insert("details".into(), Value::Null);
    task.insert("metadata".into(), json!({"priority": priority.as_str(), "description": description}));
    let _guard = crate::engine::store::locks::lock(&path.real).await;
    let task_id = id.clone();
    let doc = crate::blocking("task list", move || {
        let mut doc = store::read(&path)?;
        let mut tasks = doc.get("tasks").and_then(Value::as_array).cloned().unwrap_or_default();
        store::insert(&mut tasks, Value::Object(task), &store::InsertAt::default());
        doc["tasks"] = Value::Array(tasks);
        store::write(&path, &doc, true)
    })
    .await?;
    let stored =
        store::find(&doc, &task_id).map(|i| super::stack_task(&doc["tasks"][i])).unwrap_or(Value::Null);
    Ok(ToolOutput::new(
        format!("Created task {task_id} \"{title}\" ({} priority) in list \"{name}\".", priority.as_str()),
        json!({"created": true, "cancelled": false, "taskListName": name, "task": stored}),
    ))
}

/// The `create_task` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "createTask",
    family: "memory",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("create_task.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
