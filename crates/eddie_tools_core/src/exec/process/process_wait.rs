//! `process_wait`: wait until a background process prints something (`regex`), accepts
//! connections on a port (`port`), or exits (`exit`), within `timeout` seconds.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::run::merge;
use super::{Proc, ProcId};
use crate::call::args::lenient::{Cap, Flag, Offset, Seconds};
use crate::context::Ctx;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

/// A wait: default 30 s, at most an hour, `0` = do not wait (check once).
pub type Wait = Seconds<30_000, 3600, true>;
/// How often a port is probed.
const PORT_POLL: Duration = Duration::from_millis(100);

/// `waitFor` (process_start): what to wait for.
#[derive(Debug, Deserialize, JsonSchema)]
// Nested: the argument policy checks only the top-level keys, so this object refuses its own.
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitFor {
    /// Wait until the output (from cursor) matches this regular expression (Rust regex syntax).
    pub regex: Option<String>,
    /// Wait until 127.0.0.1/::1 accepts TCP connections on this port.
    pub port: Option<Cap<65535>>,
    /// Wait until the process exits (the default when neither regex nor port is given).
    pub exit: Option<Flag>,
    /// Seconds to wait (default 30).
    pub timeout: Option<Wait>,
}

/// What to wait for.
#[derive(Debug, Clone)]
pub struct Condition {
    regex: Option<Regex>,
    port: Option<u16>,
    exit: bool,
    timeout: Duration,
    cursor: u64,
}

impl Condition {
    /// The condition `w` asks for, scanning the output from `cursor` (default 0); with none of
    /// `regex`, `port` and `exit`, `exit`.
    pub fn new(w: WaitFor, cursor: Option<Offset>) -> Result<Self> {
        let regex =
            match w.regex {
                None => None,
                Some(s) if !s.is_empty() => Some(Regex::new(&s).map_err(|e| {
                    ToolError::new(ErrorCode::InvalidRegex, format!("Invalid regex {s:?}: {e}"))
                })?),
                Some(_) => return Err(ToolError::invalid("regex must be a non-empty string")),
            };
        let port = w.port.map(|p| u16::try_from(p.0).unwrap_or(u16::MAX));
        let exit = Flag::on(w.exit) || (regex.is_none() && port.is_none());
        let timeout = Wait::get(w.timeout).unwrap_or(Duration::ZERO);
        let cursor = Offset::or(cursor, 0) as u64;
        Ok(Self { regex, port, exit, timeout, cursor })
    }
}

/// The outcome of a wait.
pub struct Waited {
    /// A sentence for the model.
    pub text: String,
    /// `{satisfied, reason, match, matchCursor, waitedMs}`.
    pub data: Value,
}

async fn port_open(port: u16) -> bool {
    for ip in [SocketAddr::from((Ipv4Addr::LOCALHOST, port)), SocketAddr::from((Ipv6Addr::LOCALHOST, port))] {
        let probe = tokio::task::spawn_blocking(move || {
            std::net::TcpStream::connect_timeout(&ip, Duration::from_millis(250)).is_ok()
        });
        if probe.await.unwrap_or(false) {
            return true;
        }
    }
    false
}

/// Wait for `cond` on `proc`.
pub async fn wait_for(proc: &Proc, cond: &Condition, ctx: &Ctx) -> Result<Waited> {
    let started = tokio::time::Instant::now();
    let deadline = started + cond.timeout;
    let mut scan_from = cond.cursor;
    let mut next_probe = started;
    let done = |reason: &str, m: Option<(String, u64)>| {
        let waited = started.elapsed().as_millis() as u64;
        let satisfied = matches!(reason, "regex" | "port" | "exit");
        let text = match reason {
            "regex" => {
                format!("Matched {:?} after {waited} ms.", m.as_ref().map(|x| x.0.as_str()).unwrap_or(""))
            }
            "port" => format!("Port {} accepts connections (after {waited} ms).", cond.port.unwrap_or(0)),
            "exit" => format!("It {} (after {waited} ms).", proc.state_text()),
            "exited" => format!("It {} before the condition was met.", proc.state_text()),
            _ => {
                format!("Still waiting after {} s; it is {}.", cond.timeout.as_secs_f64(), proc.state_text())
            }
        };
        Waited {
            text,
            data: json!({
                "satisfied": satisfied,
                "reason": reason,
                "match": m.as_ref().map(|x| x.0.clone()),
                "matchCursor": m.as_ref().map(|x| x.1),
                "waitedMs": waited,
            }),
        }
    };
    loop {
        let notified = proc.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(re) = &cond.regex {
            let found = {
                let log = proc.log.lock().map_err(|_| ToolError::internal("process log poisoned"))?;
                let (text, from, _) = log.slice(scan_from, usize::MAX);
                let hit = re.find(text).map(|m| (m.as_str().to_owned(), from + m.start() as u64));
                if hit.is_none() {
                    // Rescan the unfinished last line next time (a match may span chunks).
                    scan_from = from + text.rfind('\n').map_or(0, |i| i + 1) as u64;
                }
                hit
            };
            if let Some(m) = found {
                return Ok(done("regex", Some(m)));
            }
        }
        if let Some(port) = cond.port
            && tokio::time::Instant::now() >= next_probe
        {
            if port_open(port).await {
                return Ok(done("port", None));
            }
            next_probe = tokio::time::Instant::now() + PORT_POLL;
        }
        if proc.exit().is_some() {
            return Ok(done(if cond.exit { "exit" } else { "exited" }, None));
        }
        let wake = if cond.port.is_some() { next_probe.min(deadline) } else { deadline };
        tokio::select! {
            () = &mut notified => {}
            () = tokio::time::sleep_until(wake) => {
                if tokio::time::Instant::now() >= deadline {
                    return Ok(done("timeout", None));
                }
            }
            () = ctx.cancel.cancelled() => return Err(ToolError::cancelled()),
        }
    }
}

const NAME: &str = "process_wait";

/// The arguments of `process_wait`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Process id from process_start (e.g. "p1").
    #[schemars(length(min = 1))]
    pub id: ProcId,
    /// Wait until the output (from cursor) matches this regular expression (Rust regex syntax).
    pub regex: Option<String>,
    /// Wait until 127.0.0.1/::1 accepts TCP connections on this port.
    pub port: Option<Cap<65535>>,
    /// Wait until the process exits (the default when neither regex nor port is given).
    pub exit: Option<Flag>,
    /// Seconds to wait (default 30).
    pub timeout: Option<Wait>,
    /// Search the output from this position (default 0).
    pub cursor: Option<Offset>,
}

/// Run `process_wait`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let Args { id, regex, port, exit, timeout, cursor } = a;
    let cond = Condition::new(WaitFor { regex, port, exit, timeout }, cursor)?;
    let proc = super::find(ctx, &id)?;
    let waited = wait_for(&proc, &cond, ctx).await?;
    let (output, next) = super::tail(&proc, 2048);
    let mut content = format!("{}: {}", proc.id, waited.text);
    if !output.is_empty() {
        content.push_str(&format!("\n--- latest output ---\n{output}"));
    }
    let mut data = proc.describe();
    merge(&mut data, waited.data);
    merge(&mut data, json!({"output": output, "nextCursor": next}));
    Ok(ToolOutput::new(content, data))
}

/// The `process_wait` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "process_wait",
    js_name: "processWait",
    family: "exec",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("process_wait.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
