//! The `exec` family: processes and project automation from the reference agents.
//!
//! - `run`: a program with arguments, no shell (Stack `run`, Floyd `run`, TunaCode `bash`,
//!   Alfredo `execute_command`).
//! - background processes (Stack `server`): `process_start`, `process_read`, `process_write`,
//!   `process_wait`, `process_kill`, `process_list`.
//! - project runners (Floyd, Stack): `detect_project` (also Stack `project_scan`),
//!   `run_tests`, `lint`, `format`, `typecheck`, `build`, `install`.
//! - permissions (Floyd): `check_permission`; every tool here is gated by its level.
//! - workflow (Floyd, Alfredo): `ask_user`, `ask_followup_question`, `attempt_completion`.
//!
//! Every command runs as a supervised tree ([`crate::supervisor`]): a timeout, an abort, a
//! kill or the end of the command takes down everything it started, daemons included.
//! Aborting a call (`ctx.signal`) makes a running command stop and return what it printed,
//! with `status: "cancelled"` (the family is `partial_on_cancel`).

pub mod ask;
pub mod attempt_completion;
pub mod build;
pub mod capture;
pub mod command;
pub mod detect_project;
pub mod env;
pub mod format;
pub mod install;
pub mod lint;
pub mod permission;
pub mod process;
pub mod run;
pub mod run_tests;
pub mod runner;
pub mod testcounts;
pub mod typecheck;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::ToolError;
use crate::registry::{Family, Permission, RunFuture, ToolSpec};

const fn spec(name: &'static str, js_name: &'static str, mutating: bool, permission: Permission) -> ToolSpec {
    // A tool asks `ctx.confirm` exactly when its level is not `none`.
    let confirms = !matches!(permission, Permission::None);
    ToolSpec { name, js_name, family: "exec", mutating, confirms, permission }
}

use Permission::{Dangerous, Moderate, None as Safe};

/// The family.
pub const FAMILY: Family = Family {
    name: "exec",
    tools: &[
        // `runTool` is taken (run any tool by name), so `run` is `runCommand` in JS.
        spec("run", "runCommand", true, Dangerous),
        spec("process_start", "processStart", true, Dangerous),
        spec("process_read", "processRead", false, Safe),
        spec("process_write", "processWrite", true, Dangerous),
        spec("process_wait", "processWait", false, Safe),
        // Only stops processes this library started in the same workspace.
        spec("process_kill", "processKill", true, Safe),
        spec("process_list", "processList", false, Safe),
        spec("detect_project", "detectProject", false, Safe),
        spec("run_tests", "runTests", true, Dangerous),
        spec("lint", "lint", true, Moderate),
        spec("format", "format", true, Dangerous),
        spec("typecheck", "typecheck", true, Moderate),
        spec("build", "build", true, Dangerous),
        spec("install", "install", true, Dangerous),
        spec("check_permission", "checkPermission", false, Safe),
        spec("ask_user", "askUser", false, Safe),
        spec("ask_followup_question", "askFollowupQuestion", false, Safe),
        spec("attempt_completion", "attemptCompletion", false, Safe),
    ],
    schemas: include_str!("schemas.json"),
    run: dispatch,
    partial_on_cancel: true,
};

fn dispatch<'a>(name: &'a str, args: &'a Value, ctx: &'a Ctx) -> RunFuture<'a> {
    Box::pin(async move {
        match name {
            "run" => run::run(args, ctx).await,
            "process_start" => process::start::run(args, ctx).await,
            "process_read" => process::read::run(args, ctx).await,
            "process_write" => process::write::run(args, ctx).await,
            "process_wait" => process::wait::run(args, ctx).await,
            "process_kill" => process::kill::run(args, ctx).await,
            "process_list" => process::list::run(args, ctx).await,
            "detect_project" => detect_project::run(args, ctx).await,
            "run_tests" => run_tests::run(args, ctx).await,
            "lint" => lint::run(args, ctx).await,
            "format" => format::run(args, ctx).await,
            "typecheck" => typecheck::run(args, ctx).await,
            "build" => build::run(args, ctx).await,
            "install" => install::run(args, ctx).await,
            "check_permission" => permission::run(args, ctx).await,
            "ask_user" => ask::run(args, ctx, "ask_user", ask::SCHEMA_ASK_USER).await,
            "ask_followup_question" => {
                ask::run(args, ctx, "ask_followup_question", ask::SCHEMA_FOLLOWUP).await
            }
            "attempt_completion" => attempt_completion::run(args, ctx).await,
            other => Err(ToolError::internal(format!("tool {other} is registered but not dispatched"))),
        }
    })
}
