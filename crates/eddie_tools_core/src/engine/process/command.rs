//! Running one command to completion: splitting a command line ([`split_words`]), and
//! [`execute`], which runs a supervised tree with a time limit, bounded capture,
//! streaming to `ctx.onOutput`, per-line observation and cancellation.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::context::{BoxFuture, Ctx, OutputChunk};
use crate::engine::process::capture::{Capture, Captured, Utf8Decoder};
use crate::engine::process::sandbox::{self, Plan};
use crate::engine::process::supervisor::{self, Spec, Tree};
use crate::error::{ErrorCode, Result, ToolError};

/// Default time limit of a command, in seconds.
pub const DEFAULT_TIMEOUT_S: f64 = 120.0;
/// Largest time limit, in seconds (a day).
pub const MAX_TIMEOUT_S: f64 = 86_400.0;
/// Default bytes kept per stream (head + tail).
pub const DEFAULT_MAX_BYTES: usize = 32 * 1024;
/// Largest bytes kept per stream.
pub const MAX_MAX_BYTES: usize = 1024 * 1024;
/// Slack after the grace before the tree is killed the hard way.
const SLACK: Duration = Duration::from_millis(1500);

/// Split a command line into words as a POSIX shell would (quotes and backslashes), without
/// any expansion. `Err(op)` names unquoted shell syntax (`|`, `&&`, `;`, `>`, `$(`, a glob...).
pub fn split_words(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err("an unterminated ' quote".to_owned()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some('\n') => {}
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err("an unterminated \" quote".to_owned()),
                        },
                        Some(ch @ ('$' | '`')) => return Err(format!("{ch} inside double quotes")),
                        Some(ch) => cur.push(ch),
                        None => return Err("an unterminated \" quote".to_owned()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(ch) => cur.push(ch),
                }
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' | '~' | '{' | '#'
                if !(in_word && matches!(c, '#' | '~' | '{')) =>
            {
                return Err(c.to_string());
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// Quote `s` for display as one shell word.
pub fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Resolve a `cwd` argument inside the workspace; it must be an existing directory.
pub fn resolve_cwd(ctx: &Ctx, cwd: Option<&str>) -> Result<(PathBuf, String)> {
    let shown = cwd.unwrap_or(".").to_owned();
    let resolved = ctx.workspace.resolve(&shown)?;
    match std::fs::metadata(&resolved.real) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(ToolError::new(ErrorCode::NotADirectory, format!("cwd is not a directory: {shown}")));
        }
        Err(_) => return Err(ToolError::new(ErrorCode::NotFound, format!("cwd does not exist: {shown}"))),
    }
    let rel = ctx.workspace.relative(&resolved.lexical);
    Ok((resolved.real, if rel.is_empty() { ".".to_owned() } else { rel }))
}

/// One command to run.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The program (looked up in the child's `PATH`).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Where it runs.
    pub cwd: PathBuf,
    /// `cwd` relative to the workspace (`.` for the root).
    pub cwd_shown: String,
    /// Its whole environment.
    pub env: HashMap<String, String>,
    /// Names of inherited variables dropped as secrets.
    pub dropped_env: Vec<String>,
    /// Time limit.
    pub timeout: Option<Duration>,
    /// Bytes kept per stream.
    pub max_bytes: usize,
    /// Text written to its stdin (then closed); `None`: stdin is `/dev/null`.
    pub stdin: Option<String>,
    /// The sandbox it runs in ([`sandbox::plan`] of the call's ctx).
    pub sandbox: Plan,
}

impl Invocation {
    /// The command line, shell-quoted, for messages.
    pub fn display(&self) -> String {
        std::iter::once(&self.program).chain(&self.args).map(|a| quote(a)).collect::<Vec<_>>().join(" ")
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It exited (or was killed by someone else's signal).
    Exited,
    /// The time limit killed it.
    Timeout,
    /// The caller aborted.
    Cancelled,
    /// A [`Keep::First`] stream (named) went over its limit, which ended the command.
    OutputLimit(&'static str),
}

/// The result of [`execute`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// How it ended.
    pub ending: Ending,
    /// Exit code, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, if any.
    pub signal: Option<String>,
    /// Wall time from spawn to the end of the whole tree.
    pub duration: Duration,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// The sandbox it ran in, as applied (`None`: started without one).
    pub sandbox: Option<Plan>,
}

impl Outcome {
    /// `ok`, `failed`, `timeout` or `cancelled`.
    pub fn status(&self) -> &'static str {
        match self.ending {
            Ending::Timeout => "timeout",
            Ending::Cancelled => "cancelled",
            Ending::OutputLimit(_) => "failed",
            Ending::Exited if self.exit_code == Some(0) => "ok",
            Ending::Exited => "failed",
        }
    }

    /// A one-line summary (`exit 1 after 2.31 s`).
    pub fn summary(&self, inv: &Invocation) -> String {
        let secs = self.duration.as_secs_f64();
        let how = match (self.ending, self.exit_code, &self.signal) {
            (Ending::Timeout, _, _) => format!(
                "timed out after {} s; the whole process tree was killed",
                inv.timeout.map_or(0.0, |t| t.as_secs_f64())
            ),
            (Ending::Cancelled, _, _) => "cancelled; the whole process tree was killed".to_owned(),
            (Ending::OutputLimit(name), _, _) => {
                format!("{name} went over its limit; the whole process tree was killed")
            }
            (_, Some(c), _) => format!("exit {c}"),
            (_, None, Some(s)) => format!("killed by {s}"),
            _ => "ended".to_owned(),
        };
        format!("{how} ({secs:.2} s)")
    }

    /// The text for the model: command, summary, then each non-empty stream.
    pub fn render(&self, inv: &Invocation) -> String {
        let mut s = format!("$ {}\n{}\n", inv.display(), self.summary(inv));
        for (name, c) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            if c.total_bytes > 0 {
                s.push_str(&format!("--- {name} ---\n"));
                c.render_into(&mut s);
                if !s.ends_with('\n') {
                    s.push('\n');
                }
            }
        }
        if self.stdout.total_bytes == 0 && self.stderr.total_bytes == 0 {
            s.push_str("(no output)\n");
        }
        s
    }

    /// The data fields shared by `run` and the runners.
    pub fn into_json(self, inv: &Invocation) -> Value {
        let (status, stdout_stats, stderr_stats) = (self.status(), self.stdout.stats(), self.stderr.stats());
        json!({
            "command": inv.program,
            "args": inv.args,
            "cwd": inv.cwd_shown,
            "status": status,
            "success": status == "ok",
            "exitCode": self.exit_code,
            "signal": self.signal,
            "timedOut": self.ending == Ending::Timeout,
            "durationMs": (self.duration.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
            "stdout": self.stdout.into_text(),
            "stderr": self.stderr.into_text(),
            "stdoutStats": stdout_stats,
            "stderrStats": stderr_stats,
            "droppedEnv": inv.dropped_env,
            "sandbox": self.sandbox.as_ref().unwrap_or(&inv.sandbox).report(),
        })
    }
}

/// The error for a failed spawn (Node's wording: `spawn <program> ENOENT`), or
/// `SANDBOX_UNAVAILABLE` when the sandbox the host requires could not be set up.
pub fn spawn_error(program: &str, e: &std::io::Error) -> ToolError {
    if let Some(err) = sandbox::unavailable_error(e) {
        return err;
    }
    let (code, errno) = match e.raw_os_error() {
        Some(libc::ENOENT) => (ErrorCode::NotFound, "ENOENT".to_owned()),
        Some(libc::EACCES) => (ErrorCode::PermissionDenied, "EACCES".to_owned()),
        Some(libc::ENOEXEC) => (ErrorCode::Io, "ENOEXEC".to_owned()),
        _ => (ErrorCode::Io, e.to_string()),
    };
    ToolError::new(code, format!("spawn {program} {errno}")).with_prop("syscall", format!("spawn {program}"))
}

/// Fail with `NOT_FOUND` (`spawn <program> ENOENT`) unless the program exists: in the child's
/// `PATH` (relative entries are relative to its cwd), or as a path relative to its cwd.
/// Checked before anyone is asked to confirm; the spawn itself still reports a late failure.
pub fn check_program(inv: &Invocation) -> Result<()> {
    let found = if inv.program.contains('/') {
        inv.cwd.join(&inv.program).is_file()
    } else {
        let path = inv.env.get("PATH").map_or("/usr/local/bin:/usr/bin:/bin", String::as_str);
        path.split(':').any(|dir| {
            let dir = if dir.is_empty() { inv.cwd.clone() } else { inv.cwd.join(dir) };
            dir.join(&inv.program).is_file()
        })
    };
    if found {
        Ok(())
    } else {
        Err(spawn_error(&inv.program, &std::io::Error::from_raw_os_error(libc::ENOENT)))
    }
}

/// Splits decoded text into lines for an observer; overlong lines are cut at 4 KiB.
#[derive(Default)]
struct Lines {
    partial: String,
}

impl Lines {
    fn push(&mut self, text: &str, stream: &'static str, on_line: &mut dyn FnMut(&'static str, &str)) {
        let mut rest = text;
        while let Some(i) = rest.find('\n') {
            let part = &rest[..i];
            if self.partial.is_empty() {
                on_line(stream, part.trim_end_matches('\r'));
            } else {
                self.append(part);
                let line = std::mem::take(&mut self.partial);
                on_line(stream, line.trim_end_matches('\r'));
            }
            rest = &rest[i + 1..];
        }
        self.append(rest);
    }

    fn append(&mut self, part: &str) {
        if self.partial.len() < 4096 {
            let room = crate::engine::text::utf8::floor_boundary(part, 4096 - self.partial.len());
            self.partial.push_str(&part[..room]);
        }
    }

    fn finish(&mut self, stream: &'static str, on_line: &mut dyn FnMut(&'static str, &str)) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            on_line(stream, &line);
        }
    }
}

/// A per-line observer: `(stream, line)`.
pub type LineFn<'a> = dyn FnMut(&'static str, &str) + Send + 'a;

/// What a stream keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Head and tail, `max_bytes` in all, with counts and the middle's error lines; every
    /// chunk also goes to `ctx.onOutput` and the line observer (the exec family).
    HeadTail(usize),
    /// The first `n` bytes, decoded at the end; one byte more ends the command with
    /// [`Ending::OutputLimit`] (Node's `maxBuffer`, for `bash`). Nothing is streamed.
    First(usize),
}

/// What a stream's bytes go into.
enum Sink {
    Decoded { decoder: Utf8Decoder, capture: Capture },
    Raw { bytes: Vec<u8>, max: usize },
}

/// One output stream being read.
struct Stream {
    name: &'static str,
    sink: Sink,
    lines: Lines,
    open: bool,
    /// A [`Keep::First`] limit was passed (the stream is no longer read).
    over: bool,
    /// Delivery of the last chunk handed to `ctx.onOutput`.
    delivered: Option<BoxFuture<()>>,
}

impl Stream {
    fn new(name: &'static str, keep: Keep) -> Self {
        let sink = match keep {
            Keep::HeadTail(max_bytes) => {
                let head = max_bytes * 2 / 5;
                Sink::Decoded {
                    decoder: Utf8Decoder::default(),
                    capture: Capture::new(head, max_bytes - head),
                }
            }
            Keep::First(max) => Sink::Raw { bytes: Vec::new(), max },
        };
        Self { name, sink, lines: Lines::default(), open: true, over: false, delivered: None }
    }

    fn feed(&mut self, text: &str, ctx: &Ctx, on_line: &mut Option<&mut LineFn<'_>>) {
        if text.is_empty() {
            return;
        }
        if let Sink::Decoded { capture, .. } = &mut self.sink {
            capture.push(text);
        }
        if let Some(f) = on_line {
            self.lines.push(text, self.name, *f);
        }
        if let Some(cb) = &ctx.on_output {
            self.delivered = Some(cb(OutputChunk { stream: self.name, text: text.to_owned() }));
        }
    }

    fn read(
        &mut self,
        got: std::io::Result<usize>,
        buf: &[u8],
        ctx: &Ctx,
        on_line: &mut Option<&mut LineFn<'_>>,
    ) {
        let n = match got {
            Ok(0) | Err(_) => {
                self.open = false;
                if let Sink::Decoded { decoder, .. } = &mut self.sink {
                    let rest = decoder.finish();
                    self.feed(&rest, ctx, on_line);
                    if let Some(f) = on_line {
                        self.lines.finish(self.name, *f);
                    }
                }
                return;
            }
            Ok(n) => n,
        };
        match &mut self.sink {
            Sink::Decoded { decoder, .. } => {
                let text = decoder.push(&buf[..n]);
                self.feed(&text, ctx, on_line);
            }
            Sink::Raw { bytes, max } => {
                let keep = n.min(max.saturating_sub(bytes.len()));
                bytes.extend_from_slice(&buf[..keep]);
                if keep < n {
                    self.over = true;
                    self.open = false;
                }
            }
        }
    }

    fn finish(self) -> Captured {
        match self.sink {
            Sink::Decoded { capture, .. } => capture.finish(),
            Sink::Raw { bytes, .. } => Captured::first(&bytes),
        }
    }
}

/// Read `pipe` into `buf`; a dropped pipe reads as its end.
async fn read_pipe(pipe: &mut Option<supervisor::OutPipe>, buf: &mut [u8]) -> std::io::Result<usize> {
    match pipe {
        Some(p) => p.read(buf).await,
        None => Ok(0),
    }
}

/// One supervised command for [`launch`].
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    /// What to start (program, arguments, cwd, environment, stdin pipe, grace).
    pub spec: Spec<'a>,
    /// Written to its stdin (then closed) when [`Spec::stdin`] asks for a pipe.
    pub stdin: Option<&'a str>,
    /// Time limit.
    pub timeout: Option<Duration>,
    /// What each stream keeps.
    pub keep: Keep,
}

/// Run `inv` to the end of its whole process tree. A time limit or an abort terminates the
/// tree (`SIGTERM`, then `SIGKILL` after a second) and the output so far is still returned.
/// `on_line`, if any, sees every complete line of both streams, in order per stream.
pub async fn execute(inv: &Invocation, ctx: &Ctx, on_line: Option<&mut LineFn<'_>>) -> Result<Outcome> {
    ctx.cancel.check()?;
    let args: Vec<OsString> = inv.args.iter().map(OsString::from).collect();
    let launch_spec = Launch {
        spec: Spec {
            program: inv.program.as_ref(),
            args: &args,
            cwd: &inv.cwd,
            env: Some(&inv.env),
            stdin: inv.stdin.is_some(),
            grace: supervisor::DEFAULT_GRACE,
            sandbox: Some(&inv.sandbox),
        },
        stdin: inv.stdin.as_deref(),
        timeout: inv.timeout,
        keep: Keep::HeadTail(inv.max_bytes),
    };
    launch(&launch_spec, ctx, on_line, |e| spawn_error(&inv.program, &e)).await
}

/// The one process runner: start `l` as a supervised tree and read both streams until the
/// whole tree is gone. A time limit, an abort or a [`Keep::First`] overflow terminates the
/// tree (`SIGTERM`, then `SIGKILL` after the grace); the output so far is still returned, with
/// the [`Ending`]. A failed spawn is `spawn_failed`'s error.
pub async fn launch(
    l: &Launch<'_>,
    ctx: &Ctx,
    mut on_line: Option<&mut LineFn<'_>>,
    spawn_failed: impl FnOnce(std::io::Error) -> ToolError,
) -> Result<Outcome> {
    let started = Instant::now();
    let mut tree = Tree::spawn(&l.spec).map_err(spawn_failed)?;
    let applied = tree.sandbox().cloned();
    if let (Some(text), Some(mut pipe)) = (l.stdin.map(str::to_owned), tree.take_stdin()) {
        // A command that does not read its stdin must not block us: write in the background.
        tokio::spawn(async move {
            let _ = pipe.write_all(text.as_bytes()).await;
            let _ = pipe.shutdown().await;
        });
    }
    let (mut out_pipe, mut err_pipe) = (tree.take_stdout(), tree.take_stderr());
    if out_pipe.is_none() || err_pipe.is_none() {
        return Err(ToolError::internal("the command's output pipes are missing"));
    }
    let mut out = Stream::new("stdout", l.keep);
    let mut err = Stream::new("stderr", l.keep);
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let deadline = l.timeout.map(|t| tokio::time::Instant::from_std(started + t));
    let mut ending = Ending::Exited;
    let mut status = None;
    let mut hard_deadline: Option<tokio::time::Instant> = None;
    loop {
        if status.is_some() && !out.open && !err.open {
            break;
        }
        let timer = async {
            match (ending, deadline, hard_deadline) {
                (_, _, Some(h)) => tokio::time::sleep_until(h).await,
                (Ending::Exited, Some(d), None) => tokio::time::sleep_until(d).await,
                _ => std::future::pending::<()>().await,
            }
        };
        let cancelled = async {
            if ending == Ending::Exited {
                ctx.cancel.cancelled().await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            got = read_pipe(&mut out_pipe, &mut out_buf), if out.open => out.read(got, &out_buf, ctx, &mut on_line),
            got = read_pipe(&mut err_pipe, &mut err_buf), if err.open => err.read(got, &err_buf, ctx, &mut on_line),
            st = tree.wait(), if status.is_none() => {
                status = Some(st.map_err(|e| ToolError::new(ErrorCode::Io, format!("wait failed: {e}")))?);
                // The tree is gone, so nobody holds the pipes: they end as soon as drained.
                // (A grandchild that escaped through another mechanism cannot hold us up.)
                hard_deadline.get_or_insert(tokio::time::Instant::now() + SLACK);
            }
            () = timer => {
                if hard_deadline.is_some() {
                    if status.is_none() {
                        tree.kill_now();
                        hard_deadline = Some(tokio::time::Instant::now() + SLACK);
                        continue;
                    }
                    break;
                }
                ending = Ending::Timeout;
                tree.terminate();
                hard_deadline = Some(tokio::time::Instant::now() + tree.grace() + SLACK);
            }
            () = cancelled => {
                ending = Ending::Cancelled;
                tree.terminate();
                hard_deadline = Some(tokio::time::Instant::now() + tree.grace() + SLACK);
            }
        }
        // A stream that went over its limit is no longer read (its writer gets `EPIPE`), and
        // the command ends as Node ends one that passes `maxBuffer`.
        for (stream, pipe) in [(&out, &mut out_pipe), (&err, &mut err_pipe)] {
            if !stream.open {
                pipe.take();
            }
            if stream.over && ending == Ending::Exited {
                ending = Ending::OutputLimit(stream.name);
                tree.terminate();
                if status.is_none() {
                    hard_deadline = Some(tokio::time::Instant::now() + tree.grace() + SLACK);
                }
            }
        }
    }
    if status.is_none() {
        status = tree.wait().await.ok();
    }
    // Every chunk reaches ctx.onOutput before the result does (its queue is FIFO).
    for last in [out.delivered.take(), err.delivered.take()].into_iter().flatten() {
        let _ = tokio::time::timeout(Duration::from_secs(5), last).await;
    }
    let (exit_code, signal) = status.map(supervisor::describe).unwrap_or((None, None));
    Ok(Outcome {
        ending,
        exit_code,
        signal,
        duration: started.elapsed(),
        stdout: out.finish(),
        stderr: err.finish(),
        sandbox: applied,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_a_shell_without_expansion() {
        assert_eq!(split_words("npm run lint -- --fix").unwrap(), ["npm", "run", "lint", "--", "--fix"]);
        assert_eq!(split_words(r#"echo 'a b' "c \"d\"" e\ f"#).unwrap(), ["echo", "a b", "c \"d\"", "e f"]);
        assert_eq!(split_words("a=b c#d").unwrap(), ["a=b", "c#d"]);
        assert_eq!(split_words("").unwrap(), Vec::<String>::new());
        for bad in
            ["a | b", "a && b", "a; b", "a > f", "echo $HOME", "echo `x`", "ls *.rs", "x \"$y\"", "'open"]
        {
            assert!(split_words(bad).is_err(), "{bad}");
        }
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("--flag=x"), "--flag=x");
    }
}
