//! The project runners (`run_tests`, `lint`, `format`, `typecheck`, `build`, `install`):
//! the detected command for the action (or an explicit `command`), run as a supervised tree
//! with the same capture as `run`, plus test counts for known runners.

use serde_json::{Value, json};

use super::{permission, run};
use crate::context::Ctx;
use crate::engine::process::command::{self, Invocation, execute, split_words, string_array};
use crate::engine::process::env;
use crate::error::{ErrorCode, Result, ToolError};
use crate::exec::detect_project::{Action, detect, project_dir};
use crate::exec::testcounts::Counts;
use crate::output::ToolOutput;

/// Default time limit of a runner, in seconds (builds and installs can be slow).
const DEFAULT_TIMEOUT_S: f64 = 600.0;

fn verb(action: Action) -> &'static str {
    match action {
        Action::Test => "Run tests",
        Action::Lint => "Lint",
        Action::Format => "Format",
        Action::Typecheck => "Type-check",
        Action::Build => "Build",
        Action::Install => "Install dependencies",
    }
}

/// Run the runner `tool` for `action`.
pub async fn run(
    args: &Value,
    ctx: &Ctx,
    tool: &'static str,
    schema: &'static str,
    action: Action,
) -> Result<ToolOutput> {
    let (dir, shown) = project_dir(args, ctx)?;
    let keep = string_array(args, "keepEnv")?.unwrap_or_default();
    let (env, dropped_env) = env::child_env(ctx, args.get("env"), &keep)?;
    let extra = string_array(args, "args")?.unwrap_or_default();
    let path = env.get("PATH").cloned();
    let d = dir.clone();
    let project = crate::blocking("detect_project", move || Ok(detect(&d, path.as_deref()))).await?;
    let (mut argv, source) = match args.get("command") {
        None | Some(Value::Null) => match project.commands.get(&action) {
            Some(found) => (found.argv.clone(), "detected"),
            None => {
                let kinds =
                    if project.types.is_empty() { "none".to_owned() } else { project.types.join(", ") };
                return Err(ToolError::new(
                    ErrorCode::NoRunner,
                    format!(
                        "No {} command found for {shown} (project types: {kinds}). Pass `command`, e.g. {{\"command\": \"npm run {}\"}}.",
                        action.key(),
                        action.key()
                    ),
                ));
            }
        },
        Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\0') => match split_words(s) {
            Ok(words) if !words.is_empty() => (words, "explicit"),
            // Shell syntax in a project command (`npm test && npm run lint`): use sh.
            _ => (vec!["/bin/sh".to_owned(), "-c".to_owned(), s.clone()], "explicit"),
        },
        Some(Value::Array(_)) => match string_array(args, "command")? {
            Some(words) if !words.is_empty() => (words, "explicit"),
            _ => return Err(ToolError::invalid("command must be a non-empty string or array of strings")),
        },
        Some(_) => return Err(ToolError::invalid("command must be a non-empty string or array of strings")),
    };
    argv.extend(extra);
    let program = argv.remove(0);
    let inv = Invocation {
        program,
        args: argv,
        cwd: dir,
        cwd_shown: shown,
        env,
        dropped_env,
        timeout: command::timeout_arg(args, DEFAULT_TIMEOUT_S)?,
        max_bytes: command::max_bytes_arg(args)?,
        stdin: None,
    };
    let extra = json!({
        "tool": tool,
        "action": action.key(),
        "projectTypes": project.types,
        "commandSource": source,
        "tests": null,
    });
    command::check_program(&inv)?;
    if !permission::allow(ctx, tool, run::confirm_text(verb(action), &inv)).await? {
        return Ok(run::declined(schema, &inv, extra));
    }
    let mut counts = Counts::default();
    let outcome = if action == Action::Test {
        let mut observe = |_: &'static str, line: &str| counts.observe(line);
        execute(&inv, ctx, Some(&mut observe)).await?
    } else {
        execute(&inv, ctx, None).await?
    };
    let tests = counts.to_json();
    let mut content = outcome.render(&inv);
    if let Some(t) = tests.as_object() {
        let line = format!(
            "tests ({}): {} passed, {} failed, {} skipped{}\n",
            t["runner"].as_str().unwrap_or(""),
            t["passed"],
            t["failed"],
            t["skipped"],
            if counts.failures.is_empty() {
                String::new()
            } else {
                format!("; failed: {}", counts.failures.join(", "))
            }
        );
        // Right after the summary line, before the output.
        let at = content
            .find('\n')
            .map_or(0, |i| content[i + 1..].find('\n').map_or(content.len(), |j| i + j + 2));
        content.insert_str(at, &line);
    }
    let mut data = outcome.into_json(&inv);
    run::merge(&mut data, extra);
    data["tests"] = tests;
    Ok(ToolOutput::new(schema, content, data))
}
