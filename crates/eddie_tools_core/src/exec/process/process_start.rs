//! `process_start`: start a background process (Stack `server`) and return its id.

use std::ffi::OsString;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::super::args::{Env, Text, Word};
use super::super::run;
use super::process_wait::{Condition, WaitFor};
use crate::context::Ctx;
use crate::engine::process::command::{self, spawn_error};
use crate::engine::process::supervisor::{self, Spec, Tree};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "process_start";

/// The arguments of `process_start`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A shell command line, run by bash; or, with args, the program to run without a shell.
    #[schemars(length(min = 1))]
    pub command: String,
    /// Run `command` with bash (`bash -c`). Default: true without args, false with args. shell: false splits a command line into words without a shell.
    pub shell: Option<crate::call::args::lenient::Flag>,
    /// Arguments, passed as they are (no shell).
    pub args: Option<Vec<Word>>,
    /// Working directory, relative to the workspace (default: the workspace root).
    pub cwd: Option<Text>,
    /// Variables to set for the command (null unsets one). Passed even when they look secret.
    pub env: Option<Env>,
    /// Inherited variables to pass even though their names look secret (by default TOKEN/SECRET/PASSWORD/KEY-like variables are dropped).
    pub keep_env: Option<Vec<Word>>,
    /// Before returning, wait for a regex in the output, a port, or the exit.
    pub wait_for: Option<WaitFor>,
    /// Wait until 127.0.0.1/::1 accepts connections on this port before returning (Stack's server; the same as waitFor: {port}).
    pub port: Option<crate::call::args::lenient::Cap<65535>>,
    /// Stack's server: accepted; the process always runs in the background (read it with process_read, stop it with process_kill).
    pub background: Option<crate::call::args::lenient::Flag>,
}

/// Run `process_start`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let Args { command, shell, args, cwd, env, keep_env, wait_for, port, background: _ } = a;
    let wait_for = match (wait_for, port) {
        (Some(_), Some(_)) => {
            return Err(crate::error::ToolError::invalid(
                "process_start: give `port` or `waitFor`, not both (port is waitFor: {port})",
            ));
        }
        (None, Some(port)) => Some(WaitFor { regex: None, port: Some(port), exit: None, timeout: None }),
        (w, None) => w,
    };
    let inv = run::parse(
        run::Args {
            command,
            shell,
            args,
            cwd,
            env,
            keep_env,
            timeout: None,
            max_output_bytes: None,
            stdin: None,
            style: None,
        },
        ctx,
    )?;
    let wait_spec = wait_for.map(|w| Condition::new(w, None)).transpose()?;
    command::check_program(&inv)?;
    super::check_capacity()?;
    let findings = run::assess(&inv, ctx);
    if !run::confirm(ctx, run::confirm_text("Start background process", &inv), &inv, &findings).await? {
        return Ok(ToolOutput::new(
            format!("Declined by the user: `{}` was not started.", inv.display()),
            json!({"id": null, "pid": null, "command": inv.display(), "cwd": inv.cwd_shown, "status": "declined",
                   "output": "", "nextCursor": 0, "wait": null, "droppedEnv": inv.dropped_env,
                   "risk": run::risk_json(&findings), "sandbox": inv.sandbox.report()}),
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
        sandbox: Some(&inv.sandbox),
    })
    .map_err(|e| spawn_error(&inv.program, &e))?;
    let sandbox = tree.sandbox().map_or_else(|| inv.sandbox.report(), |p| p.report());
    let proc = super::register(tree, inv.display(), inv.cwd_shown.clone(), ctx)?;
    let waited = match wait_spec {
        Some(cond) => match super::process_wait::wait_for(&proc, &cond, ctx).await {
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
        json!({"output": output, "nextCursor": next, "wait": waited.map(|w| w.data), "droppedEnv": inv.dropped_env,
               "risk": run::risk_json(&findings), "sandbox": sandbox}),
    );
    Ok(ToolOutput::new(content, data))
}

/// The `process_start` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "process_start",
    js_name: "processStart",
    family: "exec",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    // Stack `server`
    tool_aliases: &["server"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("process_start.json"),
    input: Some(super::super::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
