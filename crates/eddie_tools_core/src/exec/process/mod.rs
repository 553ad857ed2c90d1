//! Background processes (Stack `server`, and the session tools around it): started as
//! supervised trees, identified by short ids (`p1`, `p2`, ...), scoped to the workspace that
//! started them, and all terminated when this Node process exits (exit hooks call
//! [`crate::engine::process::supervisor::terminate_all`]; a crash is covered by the shims' parent-death signal).
//!
//! Output of both streams is decoded (never splitting a character) and appended to one log
//! of the last [`LOG_CAP`] bytes. Positions in it are *cursors*: absolute byte offsets since
//! the start, so a reader that falls behind learns how much it missed.

pub mod process_kill;
pub mod process_list;
pub mod process_read;
pub mod process_start;
pub mod process_wait;
pub mod process_write;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use tokio::sync::{Notify, mpsc};

use crate::context::Ctx;
use crate::engine::process::capture::Utf8Decoder;
use crate::engine::process::supervisor::{self, Tree};
use crate::engine::text::utf8::{ceil_boundary, floor_boundary};
use crate::error::{ErrorCode, Result, ToolError};

/// Bytes of output kept per process.
pub const LOG_CAP: usize = 1024 * 1024;
/// Most processes running at once (per Node process).
pub const MAX_RUNNING: usize = 32;
/// Most finished processes remembered (the oldest are forgotten first).
pub const MAX_FINISHED: usize = 32;

/// The end of a background process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Exit code, if it exited.
    pub code: Option<i32>,
    /// Signal that killed it, if any.
    pub signal: Option<String>,
    /// Whether `process_kill` (or shutdown) ended it.
    pub killed: bool,
    /// When it ended.
    pub at: Instant,
}

/// The retained output of a process.
#[derive(Debug, Default)]
pub struct Log {
    /// Cursor of `text[0]`.
    pub start: u64,
    /// The last [`LOG_CAP`] bytes (or a bit more, until the next trim).
    pub text: String,
}

impl Log {
    /// The cursor just past the end.
    pub fn end(&self) -> u64 {
        self.start + self.text.len() as u64
    }

    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        if self.text.len() > LOG_CAP + LOG_CAP / 4 {
            let cut = ceil_boundary(&self.text, self.text.len() - LOG_CAP);
            self.text.drain(..cut);
            self.start += cut as u64;
        }
    }

    /// The text from `cursor` (clamped into the log), at most `max` bytes ending on a
    /// character boundary: `(text, from, dropped)` where `dropped` counts bytes before the
    /// log's start that the cursor asked for.
    pub fn slice(&self, cursor: u64, max: usize) -> (&str, u64, u64) {
        let from = cursor.clamp(self.start, self.end());
        let dropped = self.start.saturating_sub(cursor);
        let off = ceil_boundary(&self.text, (from - self.start) as usize);
        let rest = &self.text[off..];
        let end = floor_boundary(rest, max);
        (&rest[..end], self.start + off as u64, dropped)
    }
}

/// Requests to a process's monitor task.
enum Control {
    Terminate,
    KillNow,
}

/// One background process.
pub struct Proc {
    /// Its id (`p1`).
    pub id: String,
    /// The workspace it belongs to.
    pub root: PathBuf,
    /// Program and arguments, shell-quoted.
    pub display: String,
    /// Its working directory, relative to the workspace.
    pub cwd: String,
    /// The shim's pid (the tree's session id).
    pub pid: i32,
    /// When it started.
    pub started: Instant,
    /// The same, as an ISO-8601 timestamp.
    pub started_at: String,
    /// Output so far.
    pub log: Mutex<Log>,
    /// Woken on new output and on exit.
    pub notify: Notify,
    exit: Mutex<Option<Exit>>,
    stdin: tokio::sync::Mutex<Option<supervisor::InPipe>>,
    control: mpsc::UnboundedSender<Control>,
    killed: std::sync::atomic::AtomicBool,
}

impl Proc {
    /// How it ended, if it has.
    pub fn exit(&self) -> Option<Exit> {
        self.exit.lock().ok().and_then(|e| e.clone())
    }

    /// `running` or `exited`.
    pub fn status(&self) -> &'static str {
        if self.exit().is_some() { "exited" } else { "running" }
    }

    /// `{id, pid, command, cwd, status, exitCode, signal, killed, startedAt, runtimeMs, outputBytes}`.
    pub fn describe(&self) -> Value {
        let exit = self.exit();
        let end = exit.as_ref().map_or_else(Instant::now, |e| e.at);
        let output_bytes = self.log.lock().map(|l| l.end()).unwrap_or(0);
        json!({
            "id": self.id,
            "pid": self.pid,
            "command": self.display,
            "cwd": self.cwd,
            "status": self.status(),
            "exitCode": exit.as_ref().and_then(|e| e.code),
            "signal": exit.as_ref().and_then(|e| e.signal.clone()),
            "killed": exit.as_ref().is_some_and(|e| e.killed),
            "startedAt": self.started_at,
            "runtimeMs": end.duration_since(self.started).as_millis() as u64,
            "outputBytes": output_bytes,
        })
    }

    /// A one-line state for messages: `running` / `exited with code 1` / `killed by SIGTERM`.
    pub fn state_text(&self) -> String {
        match self.exit() {
            None => "running".to_owned(),
            Some(Exit { code: Some(c), .. }) => format!("exited with code {c}"),
            Some(Exit { signal: Some(s), .. }) => format!("killed by {s}"),
            Some(_) => "exited".to_owned(),
        }
    }

    /// Ask the tree to end (`force`: `SIGKILL` now; else `SIGTERM`, then `SIGKILL`).
    pub fn kill(&self, force: bool) {
        self.killed.store(true, Ordering::SeqCst);
        let _ = self.control.send(if force { Control::KillNow } else { Control::Terminate });
    }

    /// Wait until it has exited, at most `limit`; whether it has.
    pub async fn wait_exit(&self, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.exit().is_some() {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.exit().is_some();
            }
        }
    }
}

fn table() -> &'static Mutex<VecDeque<Arc<Proc>>> {
    static TABLE: OnceLock<Mutex<VecDeque<Arc<Proc>>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(VecDeque::new()))
}

/// Every process of `ctx`'s workspace, oldest first.
pub fn in_workspace(ctx: &Ctx) -> Vec<Arc<Proc>> {
    let root = ctx.workspace.root();
    table().lock().map(|t| t.iter().filter(|p| p.root == root).cloned().collect()).unwrap_or_default()
}

/// A process id argument: `"p1"`, or its number (`1`). Schema: string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcId(pub String);

impl<'de> Deserialize<'de> for ProcId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if !s.is_empty() => Ok(Self(s)),
            Value::Number(n) if n.as_u64().is_some() => Ok(Self(format!("p{n}"))),
            _ => Err(serde::de::Error::custom("must be a process id such as \"p1\"")),
        }
    }
}

crate::value_schema!(ProcId, {"type": "string"});

/// The process `id` of `ctx`'s workspace.
pub fn find(ctx: &Ctx, id: &ProcId) -> Result<Arc<Proc>> {
    let id = &id.0;
    in_workspace(ctx).into_iter().find(|p| p.id == *id).ok_or_else(|| {
        let known: Vec<String> = in_workspace(ctx).iter().map(|p| p.id.clone()).collect();
        let hint = if known.is_empty() {
            "no background process was started in this workspace".to_owned()
        } else {
            format!("known ids: {}", known.join(", "))
        };
        ToolError::new(ErrorCode::ProcessNotFound, format!("No background process {id} ({hint})."))
    })
}

/// Register a started tree and spawn its monitor task.
pub fn register(mut tree: Tree, display: String, cwd: String, ctx: &Ctx) -> Result<Arc<Proc>> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let stdin = tree.take_stdin();
    let (Some(mut out), Some(mut err)) = (tree.take_stdout(), tree.take_stderr()) else {
        return Err(ToolError::internal("the process's output pipes are missing"));
    };
    let proc = Arc::new(Proc {
        id: format!("p{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        root: ctx.workspace.root().to_path_buf(),
        display,
        cwd,
        pid: tree.pid(),
        started: Instant::now(),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        log: Mutex::new(Log::default()),
        notify: Notify::new(),
        exit: Mutex::new(None),
        stdin: tokio::sync::Mutex::new(stdin),
        control: tx,
        killed: std::sync::atomic::AtomicBool::new(false),
    });
    {
        let mut t = table().lock().map_err(|_| ToolError::internal("process table poisoned"))?;
        t.push_back(Arc::clone(&proc));
        // Forget the oldest finished ones beyond the limit.
        let mut finished = t.iter().filter(|p| p.exit().is_some()).count();
        while finished > MAX_FINISHED {
            if let Some(i) = t.iter().position(|p| p.exit().is_some()) {
                t.remove(i);
            }
            finished -= 1;
        }
    }
    let p = Arc::clone(&proc);
    tokio::spawn(async move {
        let mut out_dec = Utf8Decoder::default();
        let mut err_dec = Utf8Decoder::default();
        let (mut out_open, mut err_open) = (true, true);
        let mut out_buf = vec![0u8; 32 * 1024];
        let mut err_buf = vec![0u8; 32 * 1024];
        let mut status = None;
        let mut terminating = false;
        let append = |text: &str| {
            if !text.is_empty() {
                if let Ok(mut l) = p.log.lock() {
                    l.push(text);
                }
                p.notify.notify_waiters();
            }
        };
        loop {
            if status.is_some() && !out_open && !err_open {
                break;
            }
            tokio::select! {
                got = out.read(&mut out_buf), if out_open => match got {
                    Ok(n) if n > 0 => append(&out_dec.push(&out_buf[..n])),
                    _ => { out_open = false; append(&out_dec.finish()); }
                },
                got = err.read(&mut err_buf), if err_open => match got {
                    Ok(n) if n > 0 => append(&err_dec.push(&err_buf[..n])),
                    _ => { err_open = false; append(&err_dec.finish()); }
                },
                st = tree.wait(), if status.is_none() => {
                    status = Some(st.ok());
                    // Nobody can hold the pipes any more; drain what is buffered.
                }
                req = rx.recv(), if status.is_none() => match req {
                    Some(Control::Terminate) if !terminating => { terminating = true; tree.terminate(); }
                    Some(Control::KillNow) => tree.kill_now(),
                    Some(Control::Terminate) => {}
                    None => {}
                },
            }
        }
        let (code, signal) = status.flatten().map(supervisor::describe).unwrap_or((None, None));
        if let Ok(mut e) = p.exit.lock() {
            *e = Some(Exit { code, signal, killed: p.killed.load(Ordering::SeqCst), at: Instant::now() });
        }
        if let Ok(mut s) = p.stdin.try_lock() {
            s.take();
        }
        p.notify.notify_waiters();
    });
    Ok(proc)
}

/// Fail unless fewer than [`MAX_RUNNING`] processes are running.
pub fn check_capacity() -> Result<()> {
    let running = table().lock().map(|t| t.iter().filter(|p| p.exit().is_none()).count()).unwrap_or(0);
    if running >= MAX_RUNNING {
        return Err(ToolError::new(
            ErrorCode::TooManyProcesses,
            format!("{running} background processes are running; stop one with process_kill first."),
        ));
    }
    Ok(())
}

/// The last `max` bytes of a process's output (for summaries).
pub fn tail(p: &Proc, max: usize) -> (String, u64) {
    let Ok(l) = p.log.lock() else { return (String::new(), 0) };
    let from = l.end().saturating_sub(max as u64);
    let (text, _, _) = l.slice(from, max);
    (text.to_owned(), l.end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keeps_the_last_bytes_with_absolute_cursors() {
        let mut l = Log::default();
        let chunk = "é".repeat(1000);
        for _ in 0..1000 {
            l.push(&chunk);
        }
        assert_eq!(l.end(), 2_000_000);
        assert!(l.text.len() <= LOG_CAP + LOG_CAP / 4);
        let (text, from, dropped) = l.slice(0, 10);
        assert_eq!(from, l.start);
        assert_eq!(dropped, l.start);
        assert_eq!(text, "ééééé");
        // A cursor inside a character moves to the next boundary.
        let (text, from, _) = l.slice(l.start + 1, 4);
        assert_eq!((text, from), ("éé", l.start + 2));
        let (text, from, dropped) = l.slice(u64::MAX, 10);
        assert_eq!((text, from, dropped), ("", l.end(), 0));
    }
}
