//! The `eddie` family: the 13 built-in tools of `@eddie/tools`, with eddie's schemas
//! byte-for-byte (`eddie.json`). `builtinTools` is exactly this family, in this order.

use serde_json::Value;

use super::{Family, Permission, RunFuture, ToolSpec};
use crate::context::Ctx;
use crate::error::ToolError;
use crate::{fs, plan, search, shell, tasks};

const fn spec(n: &'static str, js: &'static str, mutating: bool, confirms: bool, p: Permission) -> ToolSpec {
    ToolSpec::new("eddie", n, js, mutating, confirms, p)
}

use Permission::{Dangerous, Moderate, None as Safe};

/// The family.
pub const FAMILY: Family = Family {
    name: "eddie",
    tools: &[
        spec("bash", "bash", true, true, Dangerous),
        spec("file_read", "fileRead", false, false, Safe),
        spec("file_write", "fileWrite", true, true, Moderate),
        spec("file_search", "fileSearch", false, false, Safe),
        spec("get_folder_tree_structure", "getFolderTreeStructure", false, false, Safe),
        spec("get_plan", "getPlan", false, false, Safe),
        spec("complete_task", "completeTask", true, false, Moderate),
        spec("update_plan", "updatePlan", true, true, Moderate),
        spec("agent__new_task_list", "agentNewTaskList", true, true, Moderate),
        spec("agent__new_task", "agentNewTask", true, true, Moderate),
        // Creates `.tasks/<name>.json` when the list is missing.
        spec("agent__get_task_list", "agentGetTaskList", true, false, Safe),
        spec("agent__set_task_status", "agentSetTaskStatus", true, true, Moderate),
        spec("agent__delete_task", "agentDeleteTask", true, true, Moderate),
    ],
    schemas: include_str!("eddie.json"),
    run,
    partial_on_cancel: false,
};

fn run<'a>(name: &'a str, args: &'a Value, ctx: &'a Ctx) -> RunFuture<'a> {
    Box::pin(async move {
        match name {
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
    })
}
