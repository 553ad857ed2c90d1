//! `run`: a shell command line run by bash (Stack `run`, Alfredo `execute_command`, TunaCode
//! `run_command`: `command` alone), or one program with `args` and no shell (Floyd `run`).
//! A plain line (words and quotes, a program first) runs the same without the shell, so its
//! program is checked (`NOT_FOUND`) before anyone is asked. `shell: false` splits a command
//! line into words without a shell; `shell: true` always uses bash. Either way the command is
//! checked for destructive patterns first ([`crate::engine::process::risk`]); a finding needs
//! a second, explicit confirm.
//!
//! Called by TunaCode's name (`run_command`) or Alfredo's (`execute_command`), the result text
//! has that agent's sections (`STDOUT:` / `STDERR:`, and Alfredo's `Command exited with code
//! N`): see [`crate::registry::IMPLIED`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::args;
use super::args::{Env, Text, Word};
use crate::call::args::lenient::Flag;
use crate::context::Ctx;
use crate::engine::process::capture::Captured;
use crate::engine::process::command::{self, Ending, Invocation, Outcome, execute, split_words};
use crate::engine::process::env;
use crate::engine::process::risk::{self, Finding};
use crate::engine::process::sandbox;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "run";

/// The arguments of `run`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A shell command line, run by bash (pipes, redirections, expansions and && work; a plain line such as `npm test` runs the same without it); or, with args, the program to run without a shell.
    #[schemars(length(min = 1))]
    pub command: String,
    /// Run `command` with bash (`bash -c`). Default: true without args, false with args. shell: false splits a command line into words without a shell (no expansions).
    pub shell: Option<Flag>,
    /// Arguments, passed as they are.
    pub args: Option<Vec<Word>>,
    /// Working directory, relative to the workspace (default: the workspace root).
    pub cwd: Option<Text>,
    /// Variables to set for the command (null unsets one). Passed even when they look secret.
    pub env: Option<Env>,
    /// Inherited variables to pass even though their names look secret (by default TOKEN/SECRET/PASSWORD/KEY-like variables are dropped).
    pub keep_env: Option<Vec<Word>>,
    /// Time limit in seconds (default 120; 0 = none). On expiry the whole process tree gets SIGTERM, then SIGKILL after 1 s.
    pub timeout: Option<args::RunTimeout>,
    /// Bytes of each stream to keep (default 32768): the head and the tail; the middle is counted and its error lines kept.
    pub max_output_bytes: Option<args::OutputBytes>,
    /// Text written to the command's stdin (default: empty stdin).
    pub stdin: Option<Text>,
    /// The result text: default, tunacode (STDOUT/STDERR sections, as TunaCode's run_command) or alfredo (STDOUT/STDERR, then "Command exited with code N", as Alfredo's execute_command). Those names choose theirs.
    pub style: Option<Style>,
}

/// Whose result text a call gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Style {
    /// `$ command`, how it ended, then each stream.
    Default,
    /// TunaCode's `run_command`: `STDOUT:` and `STDERR:` sections.
    Tunacode,
    /// Alfredo's `execute_command`: the sections, then `Command exited with code N`.
    Alfredo,
}

/// The invocation `a` asks for.
pub fn parse(a: Args, ctx: &Ctx) -> Result<Invocation> {
    parse_named(a, ctx).map(|(inv, _)| inv)
}

/// [`parse`], and the kind of shell that runs the command line ([`Shell::kind`]; `None`: the
/// program runs without a shell).
///
/// [`Shell::kind`]: crate::engine::process::shell::Shell::kind
pub fn parse_named(a: Args, ctx: &Ctx) -> Result<(Invocation, Option<&'static str>)> {
    let line = a.command;
    if line.trim().is_empty() || line.contains('\0') {
        return Err(ToolError::invalid("command must be a non-empty string"));
    }
    let split = |line: &str| {
        split_words(line).map_err(|op| {
            ToolError::invalid(format!(
                "with shell: false, `command` is split into words without a shell, and it contains {op}. Drop \
                 shell: false to run it with bash, or pass the program as `command` and its arguments as `args`."
            ))
        })
    };
    let no_shell = |(program, rest): (String, Vec<String>)| -> (String, Vec<String>, Option<&'static str>) {
        (program, rest, None)
    };
    let (program, rest, shell) = match (a.args, a.shell.map(|f| f.0)) {
        (Some(_), Some(true)) => {
            return Err(ToolError::invalid(
                "with shell: true, `command` is the whole command line: put the arguments in it and drop `args`",
            ));
        }
        (Some(list), _) => (line, args::words(Some(list)), None),
        (None, Some(true)) => shell_line(line),
        (None, Some(false)) => no_shell(first_word(split(&line)?)?),
        // A command line alone is a shell's, as every seed documents it. A plain one (words
        // and quotes, a program rather than a shell builtin) runs the same without the shell:
        // its program is checked before anyone is asked.
        (None, None) => match split_words(&line) {
            Ok(words) if words.first().is_some_and(|w| !needs_shell(w)) => no_shell(first_word(words)?),
            _ => shell_line(line),
        },
    };
    let keep = args::words(a.keep_env);
    let (env, dropped_env) = env::child_env(ctx, args::env_value(a.env).as_ref(), &keep)?;
    let (cwd, cwd_shown) = command::resolve_cwd(ctx, args::text(a.cwd).as_deref())?;
    let sandbox = sandbox::plan(ctx)?;
    let inv = Invocation {
        program,
        args: rest,
        cwd,
        cwd_shown,
        env,
        dropped_env,
        timeout: args::RunTimeout::get(a.timeout),
        max_bytes: args::max_bytes(a.max_output_bytes),
        stdin: args::text(a.stdin),
        sandbox,
    };
    Ok((inv, shell))
}

/// The program and its arguments of a split command line.
fn first_word(mut words: Vec<String>) -> Result<(String, Vec<String>)> {
    if words.is_empty() {
        return Err(ToolError::invalid("command must be a non-empty string"));
    }
    let program = words.remove(0);
    Ok((program, words))
}

/// Whether a command line whose first word is `word` needs the shell: a variable assignment,
/// or a bash builtin or keyword (`cd`, `export`, `source`, `if`, ...), which no program on
/// PATH stands for.
fn needs_shell(word: &str) -> bool {
    const BUILTINS: &[&str] = &[
        ".",
        ":",
        "alias",
        "bg",
        "bind",
        "break",
        "builtin",
        "caller",
        "case",
        "cd",
        "command",
        "compgen",
        "complete",
        "continue",
        "declare",
        "dirs",
        "disown",
        "enable",
        "eval",
        "exec",
        "exit",
        "export",
        "fc",
        "fg",
        "for",
        "function",
        "getopts",
        "hash",
        "help",
        "history",
        "if",
        "jobs",
        "let",
        "local",
        "logout",
        "mapfile",
        "popd",
        "pushd",
        "read",
        "readarray",
        "readonly",
        "return",
        "select",
        "set",
        "shift",
        "shopt",
        "source",
        "suspend",
        "time",
        "times",
        "trap",
        "type",
        "typeset",
        "ulimit",
        "umask",
        "unalias",
        "unset",
        "until",
        "wait",
        "while",
        "{",
        "[[",
        "((",
    ];
    word.contains('=') || BUILTINS.contains(&word)
}

/// The shell that runs a command line (bash, or `sh` where there is no bash; on Windows Git
/// Bash, PowerShell or cmd: [`crate::engine::process::shell`]), its arguments and its kind.
fn shell_line(line: String) -> (String, Vec<String>, Option<&'static str>) {
    let shell = crate::engine::process::shell::pick(std::env::var_os("PATH").as_deref());
    let mut argv = shell.argv(&line);
    let program = argv.remove(0);
    (program, argv, Some(shell.kind))
}

/// The destructive patterns in `inv` ([`risk`]), judged against the workspace.
pub fn assess(inv: &Invocation, ctx: &Ctx) -> Vec<Finding> {
    risk::assess_invocation(inv, ctx)
}

/// Ask `action` and, for a destructive command, the second prompt ([`risk::confirm`]).
pub async fn confirm(ctx: &Ctx, action: String, inv: &Invocation, findings: &[Finding]) -> Result<bool> {
    risk::confirm(ctx, action, &inv.display(), findings).await
}

/// The findings as result data.
pub fn risk_json(findings: &[Finding]) -> Value {
    risk::to_json(findings)
}

/// The result when the user said no: nothing ran.
pub fn declined(inv: &Invocation, extra: Value) -> ToolOutput {
    let mut data = json!({
        "command": inv.program, "args": inv.args, "cwd": inv.cwd_shown, "status": "declined", "success": false,
        "exitCode": null, "signal": null, "timedOut": false, "durationMs": 0, "stdout": "", "stderr": "",
        "stdoutStats": empty_stats(), "stderrStats": empty_stats(), "droppedEnv": inv.dropped_env,
        "sandbox": inv.sandbox.report(),
    });
    merge(&mut data, extra);
    ToolOutput::new(format!("Declined by the user: `{}` was not run.", inv.display()), data)
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

/// The result text in a seed's sections ([`Style`]); `None` for the default.
fn sections(outcome: &Outcome, inv: &Invocation, style: Style) -> Option<String> {
    let stream = |c: &Captured, empty: &str| {
        if c.total_bytes == 0 {
            return empty.to_owned();
        }
        let mut s = String::new();
        c.render_into(&mut s);
        s.trim_end_matches('\n').to_owned()
    };
    let body = format!(
        "STDOUT:\n{}\n\nSTDERR:\n{}",
        stream(&outcome.stdout, "(no output)"),
        stream(&outcome.stderr, "(no errors)")
    );
    match style {
        Style::Default => None,
        Style::Tunacode if outcome.status() == "ok" => Some(body),
        Style::Tunacode => Some(format!("{body}\n\n{}", outcome.summary(inv))),
        Style::Alfredo => {
            let end = match (outcome.ending, outcome.exit_code) {
                (Ending::Exited, Some(code)) => format!("Command exited with code {code}"),
                _ => format!("Command did not finish: {}", outcome.summary(inv)),
            };
            Some(format!("{body}\n\n{end}"))
        }
    }
}

/// Run `run`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let style = a.style.unwrap_or(Style::Default);
    let (inv, shell) = parse_named(a, ctx)?;
    command::check_program(&inv)?;
    let findings = assess(&inv, ctx);
    let risk = json!({"risk": risk_json(&findings), "shell": shell});
    if !confirm(ctx, confirm_text("Run command", &inv), &inv, &findings).await? {
        return Ok(declined(&inv, risk));
    }
    let outcome = execute(&inv, ctx, None).await?;
    let content = sections(&outcome, &inv, style).unwrap_or_else(|| outcome.render(&inv));
    let mut data = outcome.into_json(&inv);
    merge(&mut data, risk);
    Ok(ToolOutput::new(content, data))
}

/// The `run` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "run",
    js_name: "runCommand",
    family: "exec",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    // Alfredo `execute_command`, TunaCode `run_command`
    tool_aliases: &["execute_command", "run_command"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("run.json"),
    input: Some(super::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn invocation(args: serde_json::Value) -> Result<Invocation> {
        let dir = tempfile::tempdir().map_err(|e| ToolError::internal(e.to_string()))?;
        let ctx = Ctx::new(dir.path().to_str().unwrap_or_default())?;
        parse(crate::call::args::parse(NAME, &args)?, &ctx)
    }

    #[test]
    fn a_command_line_runs_with_bash_unless_it_is_plain_or_has_args() {
        let argv = |args| invocation(args).map(|i| (i.program, i.args));
        // Plain words and quotes: the program itself, no shell.
        assert_eq!(
            argv(json!({"command": "npm run \"a b\""})).ok(),
            Some(("npm".into(), vec!["run".into(), "a b".into()]))
        );
        // Shell syntax, a builtin, an assignment: bash.
        for line in ["ls | wc -l", "echo $HOME", "cd sub", "A=1 env", "ls *.py", "export X=1"] {
            let (program, rest) = argv(json!({"command": line})).unwrap_or_default();
            let (shell_program, shell_rest, kind) = shell_line(line.to_owned());
            assert_eq!((program, rest), (shell_program, shell_rest), "{line}");
            assert!(matches!(kind, Some("bash" | "sh")), "{line}: {kind:?}");
        }
        // args: a program, never a shell; shell: true with args is refused.
        assert_eq!(
            argv(json!({"command": "echo", "args": ["$X", "|"]})).ok(),
            Some(("echo".into(), vec!["$X".into(), "|".into()]))
        );
        assert!(argv(json!({"command": "echo", "args": ["x"], "shell": true})).is_err());
        // shell: false splits, and refuses what needs a shell; shell: true always uses bash.
        assert_eq!(
            argv(json!({"command": "cd sub", "shell": false})).ok(),
            Some(("cd".into(), vec!["sub".into()]))
        );
        assert!(argv(json!({"command": "a | b", "shell": false})).is_err());
        assert_eq!(
            argv(json!({"command": "ls", "shell": true})).map(|(p, _)| p).ok(),
            Some(shell_line("ls".into()).0)
        );
    }
}
