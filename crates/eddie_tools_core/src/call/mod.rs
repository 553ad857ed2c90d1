//! The host-neutral call pipeline. A host (the napi binding, a CLI, an MCP server) turns its
//! caller's context into a [`Ctx`] (workspace, confirm, ask, output, the abort signal as
//! [`crate::context::Cancel`], the permission session) and makes one call:
//!
//! ```text
//! call(name, args, ctx)
//!   ├─ an abort that came first            → CANCELLED, nothing runs
//!   ├─ registry::find(name)                → UNKNOWN_TOOL
//!   ├─ args::normalise (the one policy)    → INVALID_ARGUMENT (nulls dropped, unknown keys)
//!   ├─ gate: the host's ceiling            → POLICY_DENIED, no one asked
//!   ├─ gate: a tool above `none` that does
//!   │  not ask by itself is asked about     → DECLINED / APPROVAL_REQUIRED, nothing runs
//!   │  (tools that ask do so through `ctx.confirm_all`, which the same gate judges)
//!   ├─ the tool's `run`, on its own task: a panic becomes INTERNAL
//!   └─ an abort while it runs: partial families return what they have (flagged
//!      `cancelled`); the others are dropped (their guards clean up) → CANCELLED
//! ```
//!
//! [`call_blocking`] is the same for the few tools with a blocking form, on the caller's
//! thread (the napi binding runs it on the JS thread): a call that would wait after all (a
//! large file, a Redis store) is declined and goes through [`call`].

pub mod args;
pub mod gate;

use serde_json::Value;

use crate::context::{Ctx, Prompt};
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;
use crate::registry;
use crate::spec::{Family, ToolSpec};

/// The keys `spec`'s input schema declares.
pub(crate) fn properties(spec: &ToolSpec) -> Option<&'static serde_json::Map<String, Value>> {
    registry::definition(spec.name)?.get("jsonSchema")?.get("properties")?.as_object()
}

/// The argument policy ([`args::normalise`]) for `spec`, with the keys it declares and its
/// family's shared spellings.
pub fn normalise(spec: &ToolSpec, args: Value) -> Result<Value> {
    let shared = registry::family_of(spec.name).map_or(&[][..], |f| f.aliases);
    args::normalise(spec, properties(spec), shared, args)
}

/// The spec and family of `name` (model or JS name), with the arguments after the policy.
pub(crate) fn admit(
    name: &str,
    mut args: Value,
    ctx: &Ctx,
) -> Result<(&'static ToolSpec, &'static Family, Value)> {
    ctx.cancel.check()?;
    let name = registry::route(name, &mut args);
    let Some(spec) = registry::find(name) else {
        return Err(unknown_tool(name));
    };
    let Some(family) = registry::family_of(spec.name) else {
        return Err(ToolError::internal(format!("tool {} has no family {}", spec.name, spec.family)));
    };
    let args = args::normalise(spec, properties(spec), family.aliases, args)?;
    Ok((spec, family, args))
}

/// `UNKNOWN_TOOL` for `name`, naming the closest tools by edit distance over the model names
/// and the other agents' names ([`registry::tool_aliases`]; a JS name such as `readFile` folds
/// to its model name): "Unknown tool: grepp. Did you mean `grep`?". The error carries them as
/// `suggestions` (an empty list when nothing is near), so a host need not compute its own.
pub fn unknown_tool(name: &str) -> ToolError {
    let names = registry::tools().map(|t| t.name).chain(registry::tool_aliases().map(|(alias, _)| alias));
    let near = args::closest_n(name, names, 3);
    let quoted: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
    let hint = match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => format!(". Did you mean {last}?"),
        Some((last, rest)) => format!(". Did you mean {} or {last}?", rest.join(", ")),
    };
    ToolError::new(ErrorCode::UnknownTool, format!("Unknown tool: {name}{hint}"))
        .with_prop("suggestions", near)
}

/// Admit the call for the gate: the tool's level on the ctx, the host's ceiling checked.
fn gated(spec: &'static ToolSpec, mut ctx: Ctx) -> Result<Ctx> {
    ctx.gate = Some(gate::Gate::of(spec));
    gate::check_ceiling(spec, &ctx)?;
    Ok(ctx)
}

/// Everything before a tool runs: admission, the gate's ceiling, and the gate's question about
/// a tool that does not ask by itself.
pub(crate) async fn prepare(
    name: &str,
    args: Value,
    ctx: Ctx,
) -> Result<(&'static ToolSpec, &'static Family, Value, Ctx)> {
    let (spec, family, args) = admit(name, args, &ctx)?;
    let ctx = gated(spec, ctx)?;
    if gate::pipeline_asks(spec) && !gate::approve(&ctx, vec![gate::pipeline_prompt(spec, &args)]).await? {
        return Err(ToolError::new(
            ErrorCode::Declined,
            format!("Declined by the user: {} was not run.", spec.name),
        ));
    }
    Ok((spec, family, args, ctx))
}

/// Run tool `name` (model or JS name) with `args` for a host. The result's `schema` is the
/// `$id` the tool declares ([`registry::stamp`]).
///
/// A failure names paths relative to the workspace ([`ToolError::relative_to`]), except in
/// eddie's built-ins, whose messages stay `@eddie/tools`' own (Node's, with absolute paths).
pub async fn call(name: &str, args: Value, ctx: Ctx) -> Result<ToolOutput> {
    let (spec, family, args, ctx) = prepare(name, args, ctx).await?;
    let root = (family.name != "eddie").then(|| ctx.workspace.root().to_path_buf());
    run_admitted(spec, family, args, ctx).await.map(|out| registry::stamp(spec, out)).map_err(|e| match &root
    {
        Some(root) => e.relative_to(root),
        None => e,
    })
}

/// Run an admitted call: on its own task, a panic is `INTERNAL`; an abort is the family's.
async fn run_admitted(
    spec: &'static ToolSpec,
    family: &'static Family,
    args: Value,
    ctx: Ctx,
) -> Result<ToolOutput> {
    let cancel = ctx.cancel.clone();
    let run = spec.run;
    // A task of its own turns a panic into a rejection with code INTERNAL.
    let task = tokio::spawn(async move { run(&args, &ctx).await });
    let abort = task.abort_handle();
    if family.partial_on_cancel {
        // The tool watches ctx.cancel itself and returns its partial result.
        return task.await.unwrap_or_else(|e| Err(ToolError::internal(panic_text(e))));
    }
    tokio::select! {
        joined = task => joined.unwrap_or_else(|e| Err(ToolError::internal(panic_text(e)))),
        () = cancel.cancelled() => {
            // Dropping the tool's future runs its clean-up (bash's guard kills the group).
            abort.abort();
            Err(ToolError::cancelled())
        }
    }
}

/// Every prompt a call of `name` would ask now, computed without changing anything: the call
/// runs with a plan that records each prompt the gate would put to the person and answers no
/// (a declined call changes nothing, by contract). Tools of level `none` that do not ask are
/// not run at all. An empty list means the call would not ask (a `moderate` tool the session
/// has granted, or a tool that never asks). Errors are the call's own (unknown tool, bad
/// arguments, the host's ceiling, a missing file...).
pub async fn plan(name: &str, args: Value, ctx: Ctx) -> Result<Vec<Prompt>> {
    let (spec, _, args) = admit(name, args, &ctx)?;
    let mut ctx = gated(spec, ctx)?;
    let recorder: gate::PlanRecorder = std::sync::Arc::default();
    ctx.plan = Some(std::sync::Arc::clone(&recorder));
    ctx.confirm = None;
    if gate::pipeline_asks(spec) {
        gate::approve(&ctx, vec![gate::pipeline_prompt(spec, &args)]).await?;
    } else if spec.confirms() {
        let run = spec.run;
        let task = tokio::spawn(async move { run(&args, &ctx).await.map(|_| ()) });
        task.await.unwrap_or_else(|e| Err(ToolError::internal(panic_text(e))))?;
    }
    let prompts = recorder.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default();
    Ok(prompts)
}

/// Run tool `name` on the calling thread if it has a blocking form (a lookup or a few
/// syscalls, no confirm, no child process); `None` if it must go through [`call`]: it has no
/// such form, or this call would wait after all (its form says so, see
/// [`crate::spec::BlockingFn`]). A panic is `INTERNAL`; an abort that came first is
/// `CANCELLED` and nothing runs.
pub fn call_blocking(name: &str, args: Value, ctx: &Ctx) -> Option<Result<ToolOutput>> {
    let spec = registry::find(name)?;
    // A tool the gate asks about goes through the pipeline.
    if spec.permission != registry::Permission::None {
        return None;
    }
    let run = spec.blocking?;
    let work = || {
        let (_, _, args) = admit(name, args, ctx)?;
        let Some(out) = run(&args, ctx)? else { return Ok(None) };
        // An abort while it ran still rejects, as it would for a future.
        ctx.cancel.check()?;
        Ok(Some(registry::stamp(spec, out)))
    };
    // Failures name paths as `call` names them (relative to the workspace outside eddie).
    let relative = spec.family != "eddie";
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .unwrap_or_else(|payload| Err(ToolError::internal(panic_message(payload.as_ref()))))
        .map_err(|e| if relative { e.relative_to(ctx.workspace.root()) } else { e })
        .transpose()
}

fn panic_text(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return "tool task was cancelled".to_owned();
    }
    panic_message(e.into_panic().as_ref())
}

/// The text of a panic's payload, as an `INTERNAL` message.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("internal error (panic): {msg}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ctx() -> (tempfile::TempDir, Ctx) {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.txt"), "one\ntwo\n").unwrap();
        let c = Ctx::new(t.path().to_str().unwrap()).unwrap();
        (t, c)
    }

    #[tokio::test]
    async fn unknown_tools_bad_args_and_early_aborts_reject_with_codes() {
        let (_t, c) = ctx();
        let e = call("nope", json!({}), c.clone()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::UnknownTool);
        let e = call("read_file", json!([1]), c.clone()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = call("readFile", json!({"path": "a.txt", "bogus": 1}), c.clone()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let out = call("readFile", json!({"path": "a.txt", "limit": null}), c.clone()).await.unwrap();
        assert!(out.content.contains("two"), "{}", out.content);
        c.cancel.cancel();
        let e = call("nope", json!({}), c.clone()).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
    }

    #[tokio::test]
    async fn unknown_tools_name_the_closest_tools() {
        let (_t, c) = ctx();
        let cases: &[(&str, Option<&str>)] = &[
            ("grepp", Some("grep")),
            // A swap of two neighbours is one edit.
            ("gerp", Some("grep")),
            ("file_raed", Some("file_read")),
            // JS names and other spellings fold to the model name.
            ("readFiel", Some("read_file")),
            ("File-Read", Some("file_read")),
            // The other agents' names are suggested as themselves.
            ("execute_comand", Some("execute_command")),
            ("git_stats", Some("git_status")),
            ("nope", None),
            ("zzzzzzzzzzzzzz", None),
        ];
        for (name, want) in cases {
            let e = call(name, json!({}), c.clone()).await.unwrap_err();
            assert_eq!(e.code(), ErrorCode::UnknownTool);
            let suggestions = e.props()["suggestions"].as_array().unwrap();
            match want {
                Some(first) => {
                    assert_eq!(suggestions[0], *first, "{name}: {}", e.message());
                    assert!(
                        e.message().starts_with(&format!("Unknown tool: {name}. Did you mean `{first}`")),
                        "{}",
                        e.message()
                    );
                }
                None => {
                    assert!(suggestions.is_empty(), "{name}: {suggestions:?}");
                    assert_eq!(e.message(), format!("Unknown tool: {name}"));
                }
            }
        }
        // Several near names: at most three, best first, in one sentence.
        let e = unknown_tool("git_sho");
        let s = e.props()["suggestions"].as_array().unwrap();
        assert!(!s.is_empty() && s.len() <= 3 && s[0] == "git_show", "{s:?}");
        if s.len() > 1 {
            assert!(e.message().contains(" or `"), "{}", e.message());
        }
    }

    #[tokio::test]
    async fn an_abort_cancels_a_running_call() {
        let (_t, c) = ctx();
        let cancel = c.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            cancel.cancel();
        });
        // bash (not partial) is dropped and rejects; its guard kills the command.
        let c = c.with_confirm(crate::context::constant_confirm(true));
        let started = std::time::Instant::now();
        let e = call("bash", json!({"command": "sleep 30"}), c).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn blocking_forms_go_through_the_same_policy() {
        let (_t, c) = ctx();
        let out =
            call_blocking("file_read", json!({"path": "a.txt", "maxBytes": null}), &c).unwrap().unwrap();
        assert_eq!(out.data["truncated"], false, "{}", out.data);
        assert_eq!(out.content, "one\ntwo\n");
        assert!(call_blocking("grep", json!({}), &c).is_none());
        c.cancel.cancel();
        let e = call_blocking("file_read", json!({"path": "a.txt"}), &c).unwrap().unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
    }

    #[test]
    fn blocking_forms_decline_calls_that_would_wait() {
        let (t, c) = ctx();
        // A small file is read here; a large one (its first read indexes it) goes to `run`.
        let small = call_blocking("read_file", json!({"path": "a.txt"}), &c).unwrap().unwrap();
        assert_eq!(small.schema, "eddie.tool.read_file.result.v1");
        let big = "x\n".repeat(usize::try_from(crate::files::read_file::INLINE_BYTES).unwrap());
        std::fs::write(t.path().join("big.txt"), big).unwrap();
        assert!(call_blocking("read_file", json!({"path": "big.txt"}), &c).is_none());
        // Errors are still errors here (not a reason to go async).
        let e = call_blocking("read_file", json!({"path": "nope.txt"}), &c).unwrap().unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        let e = call_blocking("read_file", json!({"path": "../x"}), &c).unwrap().unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutsideWorkspace);
        // No I/O at all.
        let out = call_blocking("check_permission", json!({"toolName": "bash"}), &c).unwrap().unwrap();
        assert_eq!(out.data["willAsk"], true, "{}", out.data);
        // A cache on a Redis server waits on the network: not here.
        let user = tempfile::tempdir().unwrap();
        let env = |url: Option<&str>| {
            let mut m = std::collections::HashMap::from([(
                "EDDIE_USER_DIR".to_owned(),
                user.path().display().to_string(),
            )]);
            if let Some(u) = url {
                m.insert("EDDIE_CACHE_URL".to_owned(), u.to_owned());
            }
            m
        };
        let args = json!({"key": "k", "value": "v", "tier": "project"});
        let local = c.clone().with_env(env(None));
        assert!(call_blocking("cache_store", args.clone(), &local).unwrap().is_ok());
        let redis = c.clone().with_env(env(Some("redis://127.0.0.1:1")));
        assert!(call_blocking("cache_store", args, &redis).is_none());
    }
}
