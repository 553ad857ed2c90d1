//! `run`: one program with arguments, no shell (Stack `run`, Floyd `run`, TunaCode `bash`,
//! Alfredo `execute_command`).

use serde_json::{Value, json};

use super::permission;
use crate::context::Ctx;
use crate::engine::process::command::{self, Invocation, execute, opt_string, split_words, string_array};
use crate::engine::process::env;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.run.result.v1";

/// Parse `{command, args?, cwd?, env?, keepEnv?, timeout?, maxOutputBytes?, stdin?}`.
pub fn parse(args: &Value, ctx: &Ctx) -> Result<Invocation> {
    let line = match args.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\0') => s.clone(),
        _ => return Err(ToolError::invalid("command must be a non-empty string")),
    };
    let (program, rest) = match string_array(args, "args")? {
        Some(a) => (line, a),
        None => {
            let mut words = split_words(&line).map_err(|op| {
                ToolError::invalid(format!(
                    "run does not use a shell, and `command` contains {op}. Pass the program as `command` and \
                     its arguments as `args`, or use the bash tool for pipes, redirections and expansions."
                ))
            })?;
            if words.is_empty() {
                return Err(ToolError::invalid("command must be a non-empty string"));
            }
            let program = words.remove(0);
            (program, words)
        }
    };
    let keep = string_array(args, "keepEnv")?.unwrap_or_default();
    let (env, dropped_env) = env::child_env(ctx, args.get("env"), &keep)?;
    let cwd_arg = opt_string(args, "cwd")?;
    let (cwd, cwd_shown) = command::resolve_cwd(ctx, cwd_arg.as_deref())?;
    Ok(Invocation {
        program,
        args: rest,
        cwd,
        cwd_shown,
        env,
        dropped_env,
        timeout: command::timeout_arg(args, command::DEFAULT_TIMEOUT_S)?,
        max_bytes: command::max_bytes_arg(args)?,
        stdin: opt_string(args, "stdin")?,
    })
}

/// The result when the user said no: nothing ran.
pub fn declined(schema: &'static str, inv: &Invocation, extra: Value) -> ToolOutput {
    let mut data = json!({
        "command": inv.program, "args": inv.args, "cwd": inv.cwd_shown, "status": "declined", "success": false,
        "exitCode": null, "signal": null, "timedOut": false, "durationMs": 0, "stdout": "", "stderr": "",
        "stdoutStats": empty_stats(), "stderrStats": empty_stats(), "droppedEnv": inv.dropped_env,
    });
    merge(&mut data, extra);
    ToolOutput::new(schema, format!("Declined by the user: `{}` was not run.", inv.display()), data)
}

fn empty_stats() -> Value {
    json!({"totalBytes": 0, "totalLines": 0, "truncated": false, "omittedBytes": 0, "omittedLines": 0, "keptLines": []})
}

/// Add `extra`'s keys to `data`.
pub fn merge(data: &mut Value, extra: Value) {
    if let (Some(d), Value::Object(e)) = (data.as_object_mut(), extra) {
        d.extend(e);
    }
}

/// The confirm text for running `inv`.
pub fn confirm_text(verb: &str, inv: &Invocation) -> String {
    if inv.cwd_shown == "." {
        format!("{verb}: {}", inv.display())
    } else {
        format!("{verb}: {} (in {})", inv.display(), inv.cwd_shown)
    }
}

/// Run `run`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let inv = parse(args, ctx)?;
    command::check_program(&inv)?;
    if !permission::allow(ctx, "run", confirm_text("Run command", &inv)).await? {
        return Ok(declined(SCHEMA, &inv, json!({})));
    }
    let outcome = execute(&inv, ctx, None).await?;
    let content = outcome.render(&inv);
    Ok(ToolOutput::new(SCHEMA, content, outcome.into_json(&inv)))
}

/// The `run` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "run",
    js_name: "runCommand",
    family: "exec",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: &[],
    definition: include_str!("run.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
