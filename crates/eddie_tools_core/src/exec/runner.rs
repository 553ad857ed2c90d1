//! The project runners (`run_tests`, `lint`, `format`, `typecheck`, `build`, `install`):
//! the detected command for the action (or an explicit `command`), run as a supervised tree
//! with the same capture as `run`, plus test counts for known runners.

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::args::{self, Env, Text, Word};
use super::{permission, run};
use crate::context::Ctx;
use crate::engine::process::command::{self, Invocation, execute, split_words};
use crate::engine::process::env;
use crate::error::{ErrorCode, Result, ToolError};
use crate::exec::detect_project::{Action, detect, project_dir};
use crate::exec::testcounts::Counts;
use crate::output::ToolOutput;

/// Default time limit of a runner, in seconds (builds and installs can be slow).
const DEFAULT_TIMEOUT_S: f64 = 600.0;

/// A runner's explicit `command`: a command line (split like a shell would; shell syntax
/// runs through `/bin/sh`) or the words themselves. Schema: non-empty string | string[].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandArg {
    /// `"npm test -- --watch=false"` (not blank, no NUL).
    Line(String),
    /// `["npm", "test"]` (at least one word).
    Words(Vec<String>),
}

impl<'de> Deserialize<'de> for CommandArg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let refused = || serde::de::Error::custom("must be a non-empty string or array of strings");
        match Value::deserialize(d)? {
            Value::String(s) if !s.trim().is_empty() && !s.contains('\0') => Ok(Self::Line(s)),
            Value::Array(items) if !items.is_empty() => items
                .into_iter()
                .map(|v| serde_json::from_value::<Word>(v).map(|w| w.0).map_err(|_| refused()))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map(Self::Words),
            _ => Err(refused()),
        }
    }
}

crate::value_schema!(CommandArg, {"anyOf": [{"type": "string", "minLength": 1}, {"type": "array", "items": {"type": "string"}}]});

/// What a runner takes (each runner's `Args`, declared by [`runner_args`]).
#[derive(Debug)]
pub struct Input {
    /// `path`.
    pub path: Option<Text>,
    /// `projectPath`.
    pub project_path: Option<Text>,
    /// `command`.
    pub command: Option<CommandArg>,
    /// `args`.
    pub args: Option<Vec<Word>>,
    /// `timeout`.
    pub timeout: Option<f64>,
    /// `env`.
    pub env: Option<Env>,
    /// `keepEnv`.
    pub keep_env: Option<Vec<Word>>,
    /// `maxOutputBytes`.
    pub max_output_bytes: Option<f64>,
}

/// Declares a runner's `Args`: the runners take the same arguments, and their schemas differ
/// only in the description of `args`, which names the `$action`.
macro_rules! runner_args {
    ($action:literal) => {
        /// The arguments of the runner.
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct Args {
            /// Project directory, relative to the workspace (default: the workspace root).
            pub path: Option<crate::exec::args::Text>,
            /// Alias of path (Floyd).
            pub project_path: Option<crate::exec::args::Text>,
            /// Run this instead of the detected command (a string is split like a shell would; shell syntax runs through /bin/sh).
            pub command: Option<crate::exec::runner::CommandArg>,
            #[doc = concat!("Extra arguments appended to the ", $action, " command (e.g. a test filter).")]
            pub args: Option<Vec<crate::exec::args::Word>>,
            /// Time limit in seconds (default 600; 0 = none).
            #[schemars(range(min = 0, max = 86400))]
            pub timeout: Option<f64>,
            /// Variables to set for the command (null unsets one). Passed even when they look secret.
            pub env: Option<crate::exec::args::Env>,
            /// Inherited variables to pass even though their names look secret (by default TOKEN/SECRET/PASSWORD/KEY-like variables are dropped).
            pub keep_env: Option<Vec<crate::exec::args::Word>>,
            /// Bytes of each stream to keep (default 32768): the head and the tail; the middle is counted and its error lines kept.
            #[schemars(range(min = 256))]
            pub max_output_bytes: Option<f64>,
        }

        impl From<Args> for crate::exec::runner::Input {
            fn from(a: Args) -> Self {
                Self {
                    path: a.path,
                    project_path: a.project_path,
                    command: a.command,
                    args: a.args,
                    timeout: a.timeout,
                    env: a.env,
                    keep_env: a.keep_env,
                    max_output_bytes: a.max_output_bytes,
                }
            }
        }
    };
}
pub(crate) use runner_args;

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
    a: Input,
    ctx: &Ctx,
    tool: &'static str,
    schema: &'static str,
    action: Action,
) -> Result<ToolOutput> {
    let (dir, shown) = project_dir(a.path, a.project_path, ctx)?;
    let keep = args::words(a.keep_env);
    let (env, dropped_env) = env::child_env(ctx, args::env_value(a.env).as_ref(), &keep)?;
    let extra = args::words(a.args);
    let path = env.get("PATH").cloned();
    let d = dir.clone();
    let project = crate::blocking("detect_project", move || Ok(detect(&d, path.as_deref()))).await?;
    let (mut argv, source) = match a.command {
        None => match project.commands.get(&action) {
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
        Some(CommandArg::Line(s)) => match split_words(&s) {
            Ok(words) if !words.is_empty() => (words, "explicit"),
            // Shell syntax in a project command (`npm test && npm run lint`): use sh.
            _ => (vec!["/bin/sh".to_owned(), "-c".to_owned(), s], "explicit"),
        },
        Some(CommandArg::Words(words)) => (words, "explicit"),
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
        timeout: args::timeout_arg(a.timeout, DEFAULT_TIMEOUT_S)?,
        max_bytes: args::max_bytes_arg(a.max_output_bytes)?,
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
