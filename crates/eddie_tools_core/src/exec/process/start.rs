//! `process_start`: start a background process (Stack `server`) and return its id.

use std::ffi::OsString;

use serde_json::{Value, json};

use super::super::{permission, run};
use crate::context::Ctx;
use crate::engine::process::command::{self, spawn_error};
use crate::engine::process::supervisor::{self, Spec, Tree};
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.process_start.result.v1";

/// Run `process_start`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let inv = run::parse(args, ctx)?;
    let wait_spec = match args.get("waitFor") {
        None | Some(Value::Null) => None,
        Some(w) => Some(crate::exec::process::wait::Condition::parse(w)?),
    };
    command::check_program(&inv)?;
    super::check_capacity()?;
    if !permission::allow(ctx, "process_start", run::confirm_text("Start background process", &inv)).await? {
        return Ok(ToolOutput::new(
            SCHEMA,
            format!("Declined by the user: `{}` was not started.", inv.display()),
            json!({"id": null, "pid": null, "command": inv.display(), "cwd": inv.cwd_shown, "status": "declined",
                   "output": "", "nextCursor": 0, "wait": null, "droppedEnv": inv.dropped_env}),
        ));
    }
    let argv: Vec<OsString> = inv.args.iter().map(OsString::from).collect();
    let tree = Tree::spawn(&Spec {
        program: inv.program.as_ref(),
        args: &argv,
        cwd: &inv.cwd,
        env: Some(&inv.env),
        stdin: true,
        grace: supervisor::DEFAULT_GRACE,
    })
    .map_err(|e| spawn_error(&inv.program, &e))?;
    let proc = super::register(tree, inv.display(), inv.cwd_shown.clone(), ctx)?;
    let waited = match wait_spec {
        Some(cond) => match crate::exec::process::wait::wait_for(&proc, &cond, ctx).await {
            Ok(w) => Some(w),
            Err(e) => {
                // The caller gave up before it got the id: nobody could stop it later.
                proc.kill(true);
                return Err(e);
            }
        },
        None => None,
    };
    let (output, next) = super::tail(&proc, 4096);
    let mut content =
        format!("Started {} as {} (pid {}), {}.", inv.display(), proc.id, proc.pid, proc.state_text());
    if let Some(w) = &waited {
        content.push_str(&format!(" {}", w.text));
    }
    if !output.is_empty() {
        content.push_str(&format!("\n--- output so far ---\n{output}"));
    }
    let mut data = proc.describe();
    run::merge(
        &mut data,
        json!({"output": output, "nextCursor": next, "wait": waited.map(|w| w.data), "droppedEnv": inv.dropped_env}),
    );
    Ok(ToolOutput::new(SCHEMA, content, data))
}

/// The `process_start` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "process_start",
    js_name: "processStart",
    family: "exec",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: &[],
    definition: include_str!("process_start.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
