//! The project runners (`run_tests`, `lint`, `format`, `typecheck`, `build`, `install`):
//! the detected command for the action (or an explicit `command`), run as a supervised tree
//! with the same capture as `run`, plus test counts for known runners.

use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::args::{self, Env, Text, Word};
use super::run;
use crate::context::Ctx;
use crate::engine::process::command::{self, Invocation, Outcome, execute, split_words};
use crate::engine::process::env;
use crate::error::{ErrorCode, Result, ToolError};
use crate::exec::detect_project::{Action, Project, detect};
use crate::exec::testcounts::Counts;
use crate::exec::{changes, findings, target};
use crate::output::ToolOutput;

/// Default time limit of a runner, in seconds (builds and installs can be slow).
/// A runner's `timeout`: default 600 s, at most a day, `0` = none.
pub type RunnerTimeout = crate::call::args::lenient::Seconds<
    600_000,
    { crate::engine::process::command::MAX_TIMEOUT_S as u64 },
    true,
>;
/// Most of a linter's report read for findings (its standard output).
const REPORT_LIMIT: usize = 64 * 1024 * 1024;

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

/// What a runner takes (each runner's `Args`, declared by `runner_args!`).
#[derive(Debug)]
pub struct Input {
    /// `path`: the target.
    pub path: Option<Text>,
    /// `project`.
    pub project: Option<Text>,
    /// `projectPath`.
    pub project_path: Option<Text>,
    /// `runner` (Stack's `linter`, `formatter`, `package_manager`).
    pub runner: Option<Word>,
    /// `pattern`.
    pub pattern: Option<Text>,
    /// `verbose`.
    pub verbose: Option<crate::call::args::lenient::Flag>,
    /// `command`.
    pub command: Option<CommandArg>,
    /// `args`.
    pub args: Option<Vec<Word>>,
    /// `timeout`.
    pub timeout: Option<RunnerTimeout>,
    /// `env`.
    pub env: Option<Env>,
    /// `keepEnv`.
    pub keep_env: Option<Vec<Word>>,
    /// `maxOutputBytes`.
    pub max_output_bytes: Option<crate::exec::args::OutputBytes>,
}

/// Declares a runner's `Args`: the runners take the same arguments, and their schemas differ
/// only in the description of `args`, which names the `$action`.
macro_rules! runner_args {
    ($action:literal) => {
        /// The arguments of the runner.
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase")]
        pub struct Args {
            #[doc = concat!("What to ", $action, ": a file or directory inside the project (default: the whole project). The project is found by walking up from it.")]
            pub path: Option<crate::exec::args::Text>,
            /// The project directory, when it must be explicit (default: found from path, else the workspace root).
            pub project: Option<crate::exec::args::Text>,
            /// Alias of project (Floyd).
            pub project_path: Option<crate::exec::args::Text>,
            /// Which tool to use instead of the detected one (also: linter, formatter, package_manager), e.g. ruff, eslint, prettier, pnpm.
            pub runner: Option<crate::exec::args::Word>,
            /// Tests only: a test name filter (pytest -k, cargo test NAME, go test -run, jest/vitest -t, node --test-name-pattern, mocha --grep); for pytest a file glob such as test_*.py selects test files.
            pub pattern: Option<crate::exec::args::Text>,
            /// Verbose output, where the runner has it.
            pub verbose: Option<crate::call::args::lenient::Flag>,
            /// Run this instead of the detected command (a string is split like a shell would; shell syntax runs through /bin/sh).
            pub command: Option<crate::exec::runner::CommandArg>,
            #[doc = concat!("Extra arguments appended to the ", $action, " command (e.g. a test filter).")]
            pub args: Option<Vec<crate::exec::args::Word>>,
            /// Time limit in seconds (default 600; 0 = none).
            pub timeout: Option<crate::exec::runner::RunnerTimeout>,
            /// Variables to set for the command (null unsets one). Passed even when they look secret.
            pub env: Option<crate::exec::args::Env>,
            /// Inherited variables to pass even though their names look secret (by default TOKEN/SECRET/PASSWORD/KEY-like variables are dropped).
            pub keep_env: Option<Vec<crate::exec::args::Word>>,
            /// Bytes of each stream to keep (default 32768): the head and the tail; the middle is counted and its error lines kept.
            pub max_output_bytes: Option<crate::exec::args::OutputBytes>,
        }

        impl From<Args> for crate::exec::runner::Input {
            fn from(a: Args) -> Self {
                Self {
                    path: a.path,
                    project: a.project,
                    project_path: a.project_path,
                    runner: a.runner,
                    pattern: a.pattern,
                    verbose: a.verbose,
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

/// `scripts` of the project's package.json (empty without one).
fn read_scripts(dir: &std::path::Path) -> serde_json::Map<String, Value> {
    std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("scripts").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

/// Run the runner `tool` for `action`.
pub async fn run(a: Input, ctx: &Ctx, tool: &'static str, action: Action) -> Result<ToolOutput> {
    let project_arg = args::text(a.project).or_else(|| args::text(a.project_path));
    let located = if matches!(action, Action::Build | Action::Install) {
        // Building and installing act on a whole project: `path` names it (Stack's `install`).
        target::locate(None, project_arg.or_else(|| args::text(a.path)), ctx)?
    } else {
        target::locate(args::text(a.path), project_arg, ctx)?
    };
    let (dir, shown) = (located.dir.clone(), located.shown.clone());
    let keep = args::words(a.keep_env);
    let (env, dropped_env) = env::child_env(ctx, args::env_value(a.env).as_ref(), &keep)?;
    let extra = args::words(a.args);
    let path = env.get("PATH").cloned();
    let d = dir.clone();
    let project = crate::blocking("detect_project", move || Ok(detect(&d, path.as_deref()))).await?;
    let scripts = read_scripts(&dir);
    let pattern = args::text(a.pattern).filter(|p| !p.is_empty());
    let extras = target::Extras {
        target: located.target.as_deref(),
        target_is_dir: located.target_is_dir,
        pattern: pattern.as_deref(),
        verbose: a.verbose.is_some_and(|f| f.0),
    };
    if a.command.is_some()
        && (extras.target.is_some() || extras.pattern.is_some() || extras.verbose || a.runner.is_some())
    {
        return Err(ToolError::invalid(
            "an explicit `command` runs as given: put the target, filter or verbose flag in it, and drop path/pattern/verbose/runner",
        ));
    }
    let chosen = match &a.runner {
        Some(name) => Some(target::chosen(action, &name.0, &dir, env.get("PATH").map(String::as_str))?),
        None => None,
    };
    let (mut argv, source, shell) =
        command_line(action, a.command, chosen, &project, &extras, &scripts, &shown)?;
    argv.extend(extra);
    // lint and typecheck: ask a known tool for its machine-readable report.
    let parser = if matches!(action, Action::Lint | Action::Typecheck) && source != "explicit" {
        findings::structured(&mut argv)
    } else {
        None
    };
    let program = argv.remove(0);
    let inv = Invocation {
        program,
        args: argv,
        cwd: dir,
        cwd_shown: shown,
        env,
        dropped_env,
        timeout: RunnerTimeout::get(a.timeout),
        max_bytes: args::max_bytes(a.max_output_bytes),
        stdin: None,
        sandbox: crate::engine::process::sandbox::plan(ctx)?,
    };
    let extra = json!({
        "tool": tool,
        "action": action.key(),
        "projectTypes": project.types,
        "commandSource": source,
        "shell": shell,
        "tests": null,
    });
    command::check_program(&inv)?;
    // An explicit command can be anything: the destructive rules apply to every runner.
    let findings = run::assess(&inv, ctx);
    if !run::confirm(ctx, run::confirm_text(verb(action), &inv), &inv, &findings).await? {
        return Ok(run::declined(&inv, extra));
    }
    // format: what is below the target now, to name the files it changed.
    let workspace_real = crate::workspace::realpath(ctx.workspace.root())?;
    let scope = located.target.as_deref().map_or_else(|| inv.cwd.clone(), |t| inv.cwd.join(t));
    let scope_rel =
        scope.strip_prefix(&workspace_real).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let before = if action == Action::Format {
        Some(snapshot(&workspace_real, &scope, &scope_rel).await?)
    } else {
        None
    };
    let (outcome, counts, report) = execute_observed(&inv, ctx, action, parser.is_some()).await?;
    let found = parser.and_then(|p| findings::parse(p, &report, &inv.cwd, &workspace_real).map(|f| (p, f)));
    let changed = match before {
        Some(before) => {
            Some(changes::changed(&before, &snapshot(&workspace_real, &scope, &scope_rel).await?))
        }
        None => None,
    };
    let tests = counts.to_json();
    let content = render(&inv, &outcome, found.as_ref(), changed.as_ref(), &tests, &counts);
    let data = to_data(outcome.into_json(&inv), extra, tests, action, found.as_ref(), changed);
    Ok(ToolOutput::new(content, data))
}

/// The command line to run, where it came from (an explicit `command`, the chosen `runner`,
/// or the command detected for `action`) and the kind of shell that runs it (`None`: none).
fn command_line(
    action: Action,
    command: Option<CommandArg>,
    chosen: Option<Vec<String>>,
    project: &Project,
    extras: &target::Extras<'_>,
    scripts: &serde_json::Map<String, Value>,
    shown: &str,
) -> Result<(Vec<String>, &'static str, Option<&'static str>)> {
    Ok(match (command, chosen) {
        (None, Some(argv)) => (target::apply(action, argv, extras, scripts)?, "chosen", None),
        (None, None) => match project
            .commands
            .get(&action)
            .map(|d| target::apply(action, d.argv.clone(), extras, scripts))
        {
            Some(Ok(argv)) => (argv, "detected", None),
            Some(Err(e)) => return Err(e),
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
        (Some(CommandArg::Line(s)), _) => match split_words(&s) {
            Ok(words) if !words.is_empty() => (words, "explicit", None),
            // Shell syntax in a project command (`npm test && npm run lint`): use sh.
            #[cfg(unix)]
            _ => (vec!["/bin/sh".to_owned(), "-c".to_owned(), s], "explicit", Some("sh")),
            #[cfg(windows)]
            _ => {
                let shell = crate::engine::process::shell::pick(std::env::var_os("PATH").as_deref());
                (shell.argv(&s), "explicit", Some(shell.kind))
            }
        },
        (Some(CommandArg::Words(words)), _) => (words, "explicit", None),
    })
}

/// What is below `scope` now (for `format`), on the blocking pool.
async fn snapshot(workspace_real: &Path, scope: &Path, scope_rel: &str) -> Result<changes::Snapshot> {
    let (w, s, r) = (workspace_real.to_path_buf(), scope.to_path_buf(), scope_rel.to_owned());
    crate::blocking("format", move || changes::snapshot(&w, &s, &r)).await
}

/// Run the command, counting tests (`run_tests`) or keeping the standard output a linter's
/// report is read from (when `report` is asked for).
async fn execute_observed(
    inv: &Invocation,
    ctx: &Ctx,
    action: Action,
    report_wanted: bool,
) -> Result<(Outcome, Counts, String)> {
    let mut counts = Counts::default();
    let mut report = String::new();
    let outcome = if action == Action::Test {
        let mut observe = |_: &'static str, line: &str| counts.observe(line);
        execute(inv, ctx, Some(&mut observe)).await?
    } else if report_wanted {
        let mut observe = |stream: &'static str, line: &str| {
            if stream == "stdout" && report.len() < REPORT_LIMIT {
                report.push_str(line);
                report.push('\n');
            }
        };
        execute(inv, ctx, Some(&mut observe)).await?
    } else {
        execute(inv, ctx, None).await?
    };
    Ok((outcome, counts, report))
}

/// The text for the model: the command's output (its findings in place of a linter's JSON
/// report), the files a formatter changed, and the test counts after the summary line.
fn render(
    inv: &Invocation,
    outcome: &Outcome,
    found: Option<&(findings::Parser, Vec<findings::Finding>)>,
    changed: Option<&Option<Vec<String>>>,
    tests: &Value,
    counts: &Counts,
) -> String {
    let mut content = match found {
        // The report replaces the tool's JSON in the text; data.stdout keeps the JSON.
        Some((p, f)) => {
            let mut c = format!("$ {}\n{}\n", inv.display(), outcome.summary(inv));
            c.push_str(&findings::render(*p, f));
            if outcome.stderr.total_bytes > 0 {
                c.push_str("--- stderr ---\n");
                outcome.stderr.render_into(&mut c);
                if !c.ends_with('\n') {
                    c.push('\n');
                }
            }
            c
        }
        None => outcome.render(inv),
    };
    if let Some(changed) = changed {
        match changed {
            Some(list) if list.is_empty() => content.push_str("files changed: none\n"),
            Some(list) => content.push_str(&format!("files changed ({}): {}\n", list.len(), list.join(", "))),
            None => content.push_str(&format!(
                "files changed: not tracked (more than {} files below the target)\n",
                changes::MAX_FILES
            )),
        }
    }
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
    content
}

/// `data`: the command's outcome, the runner's fields, the test counts, a linter's findings and
/// the files a formatter changed.
fn to_data(
    mut data: Value,
    extra: Value,
    tests: Value,
    action: Action,
    found: Option<&(findings::Parser, Vec<findings::Finding>)>,
    changed: Option<Option<Vec<String>>>,
) -> Value {
    run::merge(&mut data, extra);
    data["tests"] = tests;
    if matches!(action, Action::Lint | Action::Typecheck) {
        data["findings"] =
            found.map_or(Value::Null, |(_, f)| f.iter().map(findings::Finding::to_json).collect());
        data["findingsFrom"] = found.map_or(Value::Null, |(p, _)| json!(p.name()));
    }
    if let Some(changed) = changed {
        data["changedFiles"] = changed.map_or(Value::Null, |l| json!(l));
    }
    data
}
