//! The one registry: every tool with its name, JS export name, whether it mutates, its
//! description and its input/output JSON Schemas (byte-identical to `@eddie/tools`), and
//! [`run`] to dispatch a call by name.

use std::sync::OnceLock;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;
use crate::{fs, plan, search, shell, tasks};

/// Static facts about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// The model-facing name (`file_read`).
    pub name: &'static str,
    /// The JS export (`fileRead`).
    pub js_name: &'static str,
    /// Whether a call can change the workspace or run code (defensive: `true` when in doubt).
    pub mutating: bool,
    /// Whether the tool asks `ctx.confirm` before acting.
    pub confirms: bool,
}

const fn spec(name: &'static str, js_name: &'static str, mutating: bool, confirms: bool) -> ToolSpec {
    ToolSpec { name, js_name, mutating, confirms }
}

/// Every tool, in `builtinTools` order.
pub const TOOLS: &[ToolSpec] = &[
    spec("bash", "bash", true, true),
    spec("file_read", "fileRead", false, false),
    spec("file_write", "fileWrite", true, true),
    spec("file_search", "fileSearch", false, false),
    spec("get_folder_tree_structure", "getFolderTreeStructure", false, false),
    spec("get_plan", "getPlan", false, false),
    spec("complete_task", "completeTask", true, false),
    spec("update_plan", "updatePlan", true, true),
    spec("agent__new_task_list", "agentNewTaskList", true, true),
    spec("agent__new_task", "agentNewTask", true, true),
    // Creates `.tasks/<name>.json` when the list is missing.
    spec("agent__get_task_list", "agentGetTaskList", true, false),
    spec("agent__set_task_status", "agentSetTaskStatus", true, true),
    spec("agent__delete_task", "agentDeleteTask", true, true),
];

/// The schemas of every tool, as `@eddie/tools` defines them (`name`, `description`,
/// `jsonSchema`, `outputSchema`), in [`TOOLS`] order.
pub fn definitions() -> &'static [Value] {
    static DEFS: OnceLock<Vec<Value>> = OnceLock::new();
    DEFS.get_or_init(|| serde_json::from_str(include_str!("schemas.json")).unwrap_or_default())
}

/// The definition of tool `name`.
pub fn definition(name: &str) -> Option<&'static Value> {
    definitions().iter().find(|d| d.get("name").and_then(Value::as_str) == Some(name))
}

/// The spec of tool `name` (model name or JS name).
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name || t.js_name == name)
}

/// Run tool `name` (model or JS name) with `args`.
pub async fn run(name: &str, args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let Some(spec) = find(name) else {
        return Err(ToolError::new(ErrorCode::UnknownTool, format!("Unknown tool: {name}")));
    };
    if !args.is_object() {
        return Err(ToolError::invalid(format!("arguments of {} must be an object", spec.name)));
    }
    ctx.cancel.check()?;
    match spec.name {
        "bash" => shell::bash::run(args, ctx).await,
        "file_read" => fs::file_read::run(args, ctx).await,
        "file_write" => fs::file_write::run(args, ctx).await,
        "file_search" => search::file_search::run(args, ctx).await,
        "get_folder_tree_structure" => search::tree::run(args, ctx).await,
        "get_plan" => plan::get_plan::run(args, ctx).await,
        "complete_task" => plan::complete_task::run(args, ctx).await,
        "update_plan" => plan::update_plan::run(args, ctx).await,
        "agent__new_task_list" => tasks::new_task_list::run(args, ctx).await,
        "agent__new_task" => tasks::new_task::run(args, ctx).await,
        "agent__get_task_list" => tasks::get_task_list::run(args, ctx).await,
        "agent__set_task_status" => tasks::set_task_status::run(args, ctx).await,
        "agent__delete_task" => tasks::delete_task::run(args, ctx).await,
        other => Err(ToolError::internal(format!("tool {other} is registered but not dispatched"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_and_schemas_agree() {
        let defs = definitions();
        assert_eq!(defs.len(), TOOLS.len());
        for (spec, def) in TOOLS.iter().zip(defs) {
            assert_eq!(def["name"], spec.name);
            let id = def["outputSchema"]["$id"].as_str().unwrap_or_default();
            assert!(id.starts_with("eddie.tool."), "{id}");
            assert_eq!(def["jsonSchema"]["type"], "object");
        }
    }

    #[test]
    fn schema_ids_match_what_tools_return() {
        let id = |n: &str| definition(n).and_then(|d| d["outputSchema"]["$id"].as_str()).unwrap_or_default();
        assert_eq!(id("bash"), crate::shell::bash::SCHEMA);
        assert_eq!(id("file_read"), crate::fs::file_read::SCHEMA);
        assert_eq!(id("file_write"), crate::fs::file_write::SCHEMA);
        assert_eq!(id("file_search"), crate::search::file_search::SCHEMA);
        assert_eq!(id("get_folder_tree_structure"), crate::search::tree::SCHEMA);
        for n in ["get_plan", "complete_task", "update_plan"] {
            assert_eq!(id(n), crate::plan::SCHEMA);
        }
        for t in TOOLS.iter().filter(|t| t.name.starts_with("agent__")) {
            assert_eq!(id(t.name), crate::tasks::SCHEMA);
        }
    }
}
