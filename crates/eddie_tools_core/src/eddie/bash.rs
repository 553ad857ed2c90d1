//! `bash`: run a shell command in the workspace, after `ctx.confirm`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::process::command::{self, Ending, Keep, Launch};
use crate::engine::process::sandbox::{self, Plan};
use crate::engine::process::supervisor::Spec;
use crate::error::{ErrorCode, JsErrorKind, Result, ToolError};
use crate::output::ToolOutput;

/// Default and largest per-stream output limit, in bytes.
pub const MAX_BYTES: f64 = 512_000.0;
/// Default time limit, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: f64 = 15_000.0;
/// How long a process group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(1000);

/// Parsed arguments.
#[derive(Debug, Clone)]
pub struct BashArgs {
    /// The command line for `/bin/sh -c`.
    pub command: String,
    /// `cwd` as given (relative to the workspace), if any.
    pub cwd: Option<String>,
    /// Time limit in ms; 0 means none (as Node's `exec`).
    pub timeout_ms: u64,
    /// Per-stream byte limit.
    pub max_bytes: usize,
}

impl BashArgs {
    /// Validate with eddie's coercions; a bad `timeoutMs` is Node's `RangeError`.
    pub fn parse(args: &Value) -> Result<Self> {
        let command = match args.get("command") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            _ => return Err(ToolError::invalid("command must be a non-empty string")),
        };
        let cwd = match args.get("cwd") {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        let max_bytes =
            js::finite_floor(args.get("maxBytes")).map_or(MAX_BYTES, |m| m.clamp(1.0, MAX_BYTES)) as usize;
        let timeout = match args.get("timeoutMs") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT_MS,
            v => js::number(v),
        };
        let received = js::number_to_string(timeout);
        if !timeout.is_finite() || timeout.fract() != 0.0 {
            return Err(range_error(format!(
                "The value of \"timeout\" is out of range. It must be an integer. Received {received}"
            )));
        }
        if !(0.0..=9_007_199_254_740_991.0).contains(&timeout) {
            return Err(range_error(format!(
                "The value of \"timeout\" is out of range. It must be >= 0 && <= 9007199254740991. Received {received}"
            )));
        }
        Ok(Self { command, cwd, timeout_ms: timeout as u64, max_bytes })
    }
}

fn range_error(message: String) -> ToolError {
    ToolError::invalid(message).with_kind(JsErrorKind::RangeError)
}

/// TunaCode's own keys of `bash`. eddie's `bash` ignores unknown keys, so these meant nothing
/// to it; a call that gives one is TunaCode's `bash`.
const TUNACODE_KEYS: &[&str] = &["env", "timeout", "capture_output"];
/// TunaCode's default and largest time limits, in seconds.
const TUNACODE_TIMEOUT_S: f64 = 30.0;
const TUNACODE_MAX_TIMEOUT_S: f64 = 300.0;

/// Run `bash`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    if TUNACODE_KEYS.iter().any(|k| args.get(*k).is_some_and(|v| !v.is_null())) {
        return run_tunacode(args, ctx).await;
    }
    let args = BashArgs::parse(args)?;
    let cwd = match &args.cwd {
        Some(c) => {
            let outside = || {
                ToolError::new(
                    ErrorCode::OutsideWorkspace,
                    format!("Requested cwd is outside the workspace: {c}"),
                )
            };
            ctx.workspace.resolve_with(c, outside)?.real
        }
        None => ctx.workspace.resolve(".")?.real,
    };
    // Sandboxed like every command; its contract result ({stdout, stderr}) has no room to say so.
    let sandbox = sandbox::plan(ctx)?;
    // eddie's prompt first, then the destructive rules' second prompt (judged as `sh -c`).
    let workspace = crate::workspace::realpath(ctx.workspace.root())?;
    #[cfg(unix)]
    let argv = ["sh".to_owned(), "-c".to_owned(), args.command.clone()];
    // Windows: judged as the shell that will run it (Git Bash, PowerShell or cmd).
    #[cfg(windows)]
    let argv = crate::engine::process::shell::pick(std::env::var_os("PATH").as_deref()).argv(&args.command);
    let findings = crate::engine::process::risk::assess_argv(
        &argv,
        crate::engine::process::risk::Scope { workspace: &workspace, cwd: &cwd },
    );
    if !crate::engine::process::risk::confirm(
        ctx,
        format!("Run command: {}", args.command),
        &args.command,
        &findings,
    )
    .await?
    {
        let msg = "Command rejected by user.";
        return Ok(ToolOutput::new(msg, json!({"stdout": "", "stderr": msg})));
    }
    let out = execute(&args, &cwd, ctx, &sandbox).await?;
    let content = if !out.stdout.is_empty() {
        out.stdout.clone()
    } else if !out.stderr.is_empty() {
        out.stderr.clone()
    } else {
        "(no output)".to_owned()
    };
    Ok(ToolOutput::new(content, json!({"stdout": out.stdout, "stderr": out.stderr})))
}

fn tunacode_invalid(message: &str) -> ToolError {
    ToolError::invalid(format!("bash (TunaCode's, with env/timeout/capture_output): {message}"))
}

/// TunaCode's `bash`: `command` run by bash with `env` added to the environment (secret-looking
/// inherited variables dropped, as `run` drops them, unless given in `env`), `cwd`, `timeout` in
/// seconds (default 30, at most 300); destructive commands need a second confirm; a failing
/// exit is a result with TunaCode's sections (Command, Exit Code, Working Directory, STDOUT,
/// STDERR), not an error. Data is eddie's `{stdout, stderr}`.
async fn run_tunacode(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let line = match args.get("command") {
        Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\0') => s.clone(),
        _ => return Err(tunacode_invalid("`command` must be a non-empty string")),
    };
    let cwd = match args.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() && !s.contains('\0') => Some(s.clone()),
        _ => return Err(tunacode_invalid("`cwd` must be a non-empty string")),
    };
    let explicit = match args.get("env") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m))
            if m.iter().all(|(k, v)| {
                !k.is_empty() && !k.contains(['=', '\0']) && (v.is_string() || v.is_null())
            }) =>
        {
            Some(Value::Object(m.clone()))
        }
        _ => return Err(tunacode_invalid("`env` must be an object of strings, e.g. {\"MY_VAR\": \"test\"}")),
    };
    let timeout = match args.get("timeout") {
        None | Some(Value::Null) => TUNACODE_TIMEOUT_S,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(t) if t > 0.0 && t <= TUNACODE_MAX_TIMEOUT_S => t,
            _ => {
                return Err(tunacode_invalid(
                    "`timeout` must be a number of seconds above 0 and at most 300",
                ));
            }
        },
        _ => return Err(tunacode_invalid("`timeout` must be a number of seconds above 0 and at most 300")),
    };
    let capture = match args.get("capture_output") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        _ => return Err(tunacode_invalid("`capture_output` must be true or false")),
    };
    if let Some(key) = args.as_object().and_then(|o| {
        o.keys().find(|k| !matches!(k.as_str(), "command" | "cwd" | "env" | "timeout" | "capture_output"))
    }) {
        return Err(tunacode_invalid(&format!(
            "unknown argument `{key}`; valid arguments: command, cwd, env, timeout, capture_output"
        ))
        .with_prop("argument", key.as_str()));
    }
    let (env, dropped_env) = crate::engine::process::env::child_env(ctx, explicit.as_ref(), &[])?;
    let (cwd, cwd_shown) = command::resolve_cwd(ctx, cwd.as_deref())?;
    let has_bash =
        env.get("PATH").is_some_and(|p| std::env::split_paths(p).any(|d| d.join("bash").is_file()));
    #[cfg(unix)]
    let (program, args) = (
        if has_bash { "bash".to_owned() } else { "/bin/sh".to_owned() },
        vec!["-c".to_owned(), line.clone()],
    );
    // Windows: Git Bash, PowerShell or cmd (`Path` is the usual spelling there).
    #[cfg(windows)]
    let (program, args) = {
        let _ = has_bash;
        let path =
            env.iter().find(|(k, _)| k.eq_ignore_ascii_case("PATH")).map(|(_, v)| std::ffi::OsStr::new(v));
        let mut argv = crate::engine::process::shell::pick(path).argv(&line);
        (argv.remove(0), argv)
    };
    let inv = command::Invocation {
        program,
        args,
        cwd,
        cwd_shown,
        env,
        dropped_env,
        timeout: Some(Duration::from_secs_f64(timeout)),
        max_bytes: command::DEFAULT_MAX_BYTES,
        stdin: None,
        sandbox: sandbox::plan(ctx)?,
    };
    let findings = crate::engine::process::risk::assess_invocation(&inv, ctx);
    if !crate::engine::process::risk::confirm(ctx, format!("Run command: {line}"), &inv.display(), &findings)
        .await?
    {
        let msg = "Command rejected by user.";
        return Ok(ToolOutput::new(msg, json!({"stdout": "", "stderr": msg})));
    }
    let out = command::execute(&inv, ctx, None).await?;
    let exit = match (out.ending, out.exit_code, &out.signal) {
        (Ending::Timeout, ..) => format!("timed out after {timeout} s (the process tree was killed)"),
        (Ending::Cancelled, ..) => "cancelled".to_owned(),
        (_, Some(code), _) => code.to_string(),
        (_, None, Some(sig)) => format!("killed by {sig}"),
        (_, None, None) => "unknown".to_owned(),
    };
    let (stdout, stderr) = (out.stdout.into_text(), out.stderr.into_text());
    let section = |text: &str, empty: &str| {
        if !capture {
            "(not captured)".to_owned()
        } else if text.is_empty() {
            empty.to_owned()
        } else {
            text.trim_end_matches('\n').to_owned()
        }
    };
    // The data is eddie's {stdout, stderr} (its schema allows nothing else): the sandbox is said here.
    let applied = out.sandbox.as_ref().unwrap_or(&inv.sandbox);
    let content = format!(
        "Command: {line}\nExit Code: {exit}\nWorking Directory: {}\nSandbox: {}\n\nSTDOUT:\n{}\n\nSTDERR:\n{}",
        inv.cwd_shown,
        applied.summary().trim_start_matches("sandbox: "),
        section(&stdout, "(no output)"),
        section(&stderr, "(no errors)"),
    );
    let data = if capture {
        json!({"stdout": stdout, "stderr": stderr})
    } else {
        json!({"stdout": "", "stderr": ""})
    };
    Ok(ToolOutput::new(content, data))
}

/// Captured output of a successful command.
#[derive(Debug, Clone)]
pub struct Captured {
    /// stdout, UTF-8 decoded.
    pub stdout: String,
    /// stderr, UTF-8 decoded.
    pub stderr: String,
}

/// Run `/bin/sh -c command` as a supervised tree on the process runner, in `sandbox`, keeping
/// the first `maxBytes` of each stream; the failures carry eddie's (Node's `exec`) error shapes.
pub async fn execute(args: &BashArgs, cwd: &std::path::Path, ctx: &Ctx, sandbox: &Plan) -> Result<Captured> {
    #[cfg(unix)]
    let (program, shell_args) =
        ("/bin/sh".to_owned(), vec![std::ffi::OsString::from("-c"), std::ffi::OsString::from(&args.command)]);
    // Windows: Git Bash, PowerShell or cmd (engine::process::shell).
    #[cfg(windows)]
    let (program, shell_args) = {
        let mut argv =
            crate::engine::process::shell::pick(std::env::var_os("PATH").as_deref()).argv(&args.command);
        let program = argv.remove(0);
        (program, argv.into_iter().map(std::ffi::OsString::from).collect::<Vec<_>>())
    };
    let launch = Launch {
        spec: Spec {
            program: std::ffi::OsStr::new(&program),
            args: &shell_args,
            cwd,
            env: ctx.env.as_ref(),
            stdin: false,
            grace: KILL_GRACE,
            sandbox: Some(sandbox),
        },
        stdin: None,
        timeout: (args.timeout_ms > 0).then(|| Duration::from_millis(args.timeout_ms)),
        keep: Keep::First(args.max_bytes),
    };
    let out = command::launch(&launch, ctx, None, |e| {
        if let Some(err) = sandbox::unavailable_error(&e) {
            return err;
        }
        let code = if e.kind() == std::io::ErrorKind::NotFound { ErrorCode::NotFound } else { ErrorCode::Io };
        let errno =
            if e.kind() == std::io::ErrorKind::NotFound { "ENOENT".to_owned() } else { e.to_string() };
        ToolError::new(code, format!("spawn /bin/sh {errno}"))
    })
    .await?;
    let (stdout, stderr) = (out.stdout.into_text(), out.stderr.into_text());
    let failure = |code: ErrorCode, message: String, timed_out: bool| {
        ToolError::new(code, message)
            .with_prop("exitCode", out.exit_code.map_or(Value::Null, |c| json!(c)))
            .with_prop("signal", out.signal.clone().map_or(Value::Null, Value::String))
            .with_prop("timedOut", timed_out)
            .with_prop("stdout", stdout.clone())
            .with_prop("stderr", stderr.clone())
    };
    let failed = format!("Command failed: {}\n{}", args.command, stderr);
    match out.ending {
        Ending::Cancelled => {
            Err(failure(ErrorCode::Cancelled, "The operation was aborted".to_owned(), false))
        }
        Ending::Timeout => Err(failure(ErrorCode::Timeout, failed, true)),
        Ending::OutputLimit(which) => {
            Err(failure(ErrorCode::OutputLimit, format!("{which} maxBuffer length exceeded"), false)
                .with_kind(JsErrorKind::RangeError))
        }
        Ending::Exited if out.exit_code == Some(0) => Ok(Captured { stdout, stderr }),
        Ending::Exited => Err(failure(ErrorCode::CommandFailed, failed, false)),
    }
}

/// The `bash` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "bash",
    js_name: "bash",
    family: "eddie",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_drops_only_a_cut_tail() {
        let decode = |b: &[u8]| crate::engine::process::capture::Captured::first(b).into_text();
        let s = "a😀".as_bytes();
        assert_eq!(decode(&s[..3]), "a");
        assert_eq!(decode(s), "a😀");
        assert_eq!(decode(b"a\xffb"), "a\u{FFFD}b");
    }

    #[test]
    fn timeout_must_be_an_integer() {
        let e = BashArgs::parse(&json!({"command": "true", "timeoutMs": 150.5})).unwrap_err();
        assert_eq!(e.kind(), JsErrorKind::RangeError);
        assert!(e.message().starts_with("The value of \"timeout\" is out of range."));
        assert!(e.message().ends_with("Received 150.5"));
        let a = BashArgs::parse(&json!({"command": "true", "maxBytes": 1e12})).unwrap();
        assert_eq!((a.max_bytes, a.timeout_ms), (512_000, 15_000));
    }
}
