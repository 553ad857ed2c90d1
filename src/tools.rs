//! One exported async function per tool, plus the registry view for `index.js`.

use eddie_tools_core::{Ctx, ToolError, call, registry};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::convert::{Rendered, js_error, output as output_object, reject, to_json};
use crate::ctx::{AbortHook, Converted, convert};

/// What a call needs from JS, converted on the JS thread: the arguments as JSON and the core
/// ctx (or the error to reject with), and the abort hook to release when it settles.
type Prepared = (std::result::Result<(serde_json::Value, Ctx), ToolError>, Option<AbortHook>);

/// Convert `args` and `ctx` of a call of `name` (on the JS thread); see [`convert`] for
/// `may_confirm` and `watch`.
fn prepare(
    env: &Env,
    name: &str,
    args: Unknown<'_>,
    ctx: Option<Object<'_>>,
    may_confirm: bool,
    watch: bool,
) -> Prepared {
    let converted = to_json(env, args, 0)
        .map_err(|e| ToolError::invalid(format!("arguments of {name} must be JSON-compatible: {}", e.reason)))
        .and_then(|a| a.ok_or_else(|| ToolError::invalid(format!("arguments of {name} must be an object"))))
        .and_then(|a| convert(env, ctx, may_confirm, watch).map(|(c, hook)| ((a, c), hook)));
    match converted {
        Ok(((args, converted), hook)) => (Ok((args, host_ctx(converted))), hook),
        Err(e) => (Err(e), None),
    }
}

/// Run tool `name` for JS: convert `args` and `ctx` on the JS thread, then one call into the
/// core's pipeline ([`call::call`]: argument policy, panics, aborts), settled on the JS thread.
/// A tool with a blocking form runs right here, on the JS thread, and returns a settled promise
/// (no thread hop at all), unless this call would wait ([`call::call_blocking`] says `None`).
pub(crate) fn spawn<'env>(
    env: &'env Env,
    name: &'static str,
    args: Unknown<'_>,
    ctx: Option<Object<'_>>,
) -> Result<PromiseRaw<'env, Object<'env>>> {
    let spec = registry::find(name);
    // `ctx.dataAsJson`: `data` stays JSON text (`dataJson`), for hosts that only pass it on.
    let as_json = ctx.as_ref().is_some_and(|o| matches!(o.get::<bool>("dataAsJson"), Ok(Some(true))));
    if spec.is_some_and(|s| s.blocking.is_some() && s.permission == registry::Permission::None) {
        let (prepared, _) = prepare(env, name, args, ctx, false, false);
        let (args, core) = match prepared {
            Ok(p) => p,
            Err(e) => return settled(env, Err(e)),
        };
        // The JSON arguments are small here (a key, a path): kept in case the call goes async.
        // Rendering can panic too (it is ours): that is INTERNAL, not a throw.
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            call::call_blocking(name, args.clone(), &core)
                .map(|r| r.and_then(|out| Rendered::new(out, as_json)))
        }))
        .unwrap_or_else(|payload| Some(Err(ToolError::internal(call::panic_message(payload.as_ref())))));
        if let Some(result) = ran {
            return settled(env, result);
        }
        let hook = match crate::ctx::hook(env, ctx, &core.cancel) {
            Ok(hook) => hook,
            Err(e) => return settled(env, Err(e)),
        };
        return run_async(env, name, Ok((args, core)), hook, as_json);
    }
    // Only tools that may ask get a confirm channel (creating one costs a threadsafe function).
    let may_confirm = spec.is_none_or(|s| s.confirms() || s.permission != registry::Permission::None);
    let (prepared, hook) = prepare(env, name, args, ctx, may_confirm, true);
    run_async(env, name, prepared, hook, as_json)
}

/// An already-settled promise of a call's result (for calls that ran on the JS thread). A
/// failure to build the result object rejects it too: it never throws synchronously.
fn settled<'env>(
    env: &'env Env,
    result: std::result::Result<Rendered, ToolError>,
) -> Result<PromiseRaw<'env, Object<'env>>> {
    let error = match result.map(|out| output_object(env, &out)) {
        Ok(Ok(obj)) => return PromiseRaw::resolve(env, obj),
        Ok(Err(e)) => ToolError::internal(format!("building the result failed: {}", e.reason)),
        Err(e) => e,
    };
    PromiseRaw::reject(env, js_error(env, &error))
}

/// The call on napi's tokio runtime, settled on the JS thread (releasing the abort hook there).
fn run_async<'env>(
    env: &'env Env,
    name: &'static str,
    prepared: std::result::Result<(serde_json::Value, Ctx), ToolError>,
    hook: Option<AbortHook>,
    as_json: bool,
) -> Result<PromiseRaw<'env, Object<'env>>> {
    let work = async move {
        let (args, ctx) = prepared?;
        call::call(name, args, ctx).await
    };
    // Core errors reach the settle callback as values, where they become JS errors with codes.
    env.spawn_future_with_callback(
        async move { Ok(work.await.and_then(|out| Rendered::new(out, as_json))) },
        move |env, result: std::result::Result<Rendered, ToolError>| {
            if let Some(hook) = hook {
                hook.release(env);
            }
            match result {
                Ok(out) => output_object(env, &out),
                Err(e) => Err(reject(env, &e)),
            }
        },
    )
}

/// The core context of a converted `ctx`: a signal that was already aborted cancels the call
/// before it starts.
fn host_ctx(converted: Converted) -> Ctx {
    if converted.already_aborted {
        converted.ctx.cancel.cancel();
    }
    converted.ctx
}

/// Run the tool at `index` in [`registry::tools`] order (the order of `toolSpecs()`): what
/// each named export of `index.js` (`readFile`, `grep`, ...) calls, so that a tool needs no
/// export of its own here. Internal: use the named exports or [`run_tool`].
#[napi(
    catch_unwind,
    ts_args_type = "index: number, args: Record<string, unknown>, ctx: ToolContext",
    ts_return_type = "Promise<ToolResult>"
)]
pub fn call_tool<'env>(
    env: &'env Env,
    index: u32,
    args: Unknown<'_>,
    ctx: Option<Object<'_>>,
) -> Result<PromiseRaw<'env, Object<'env>>> {
    match registry::tools().nth(index as usize) {
        Some(spec) => spawn(env, spec.name, args, ctx),
        None => run_tool(env, format!("#{index}"), args, ctx),
    }
}

/// Run any tool by its model name (`file_read`) or JS name (`fileRead`).
#[napi(
    catch_unwind,
    ts_args_type = "name: string, args: Record<string, unknown>, ctx: ToolContext",
    ts_return_type = "Promise<ToolResult>"
)]
pub fn run_tool<'env>(
    env: &'env Env,
    name: String,
    args: Unknown<'_>,
    ctx: Option<Object<'_>>,
) -> Result<PromiseRaw<'env, Object<'env>>> {
    match registry::static_name(&name) {
        Some(name) => spawn(env, name, args, ctx),
        None => env.spawn_future_with_callback(
            async move { Ok(call::unknown_tool(&name)) },
            |env, e: ToolError| -> Result<Object> { Err(reject(env, &e)) },
        ),
    }
}

/// One prompt a call would ask (see `planCall`).
#[napi(object)]
pub struct ConfirmationPrompt {
    /// `action` (the tool's own question), `destructive`, `hooks` or `protected`.
    pub kind: String,
    /// The text to show the person approving.
    pub text: String,
}

/// Every prompt a call would ask now, computed without changing anything (the call runs with a
/// plan that records each prompt and answers no). For hosts that approve before the call: show
/// every prompt, then run the call with `ctx.approved = the prompts shown`; a prompt that was not
/// shown still goes to `ctx.confirm`, and with none the call fails with `APPROVAL_REQUIRED`.
/// Resolves to `[]` when the call would not ask; rejects with the call's own error (unknown
/// tool, bad arguments, `POLICY_DENIED`, a missing file...).
#[napi(
    catch_unwind,
    ts_args_type = "name: string, args: Record<string, unknown>, ctx: ToolContext",
    ts_return_type = "Promise<ConfirmationPrompt[]>"
)]
pub fn plan_call<'env>(
    env: &'env Env,
    name: String,
    args: Unknown<'_>,
    ctx: Option<Object<'_>>,
) -> Result<PromiseRaw<'env, Array<'env>>> {
    // A plan never asks: no confirm channel.
    let (prepared, hook) = prepare(env, &name, args, ctx, false, true);
    let work = async move {
        let (args, ctx) = prepared?;
        call::plan(&name, args, ctx).await
    };
    env.spawn_future_with_callback(
        async move { Ok(work.await) },
        move |env, result: std::result::Result<Vec<eddie_tools_core::context::Prompt>, ToolError>| {
            if let Some(hook) = hook {
                hook.release(env);
            }
            match result {
                Ok(prompts) => {
                    let mut arr = env.create_array(u32::try_from(prompts.len()).unwrap_or(u32::MAX))?;
                    for (i, p) in prompts.into_iter().enumerate() {
                        let js = ConfirmationPrompt { kind: p.kind.as_str().to_owned(), text: p.text };
                        arr.set(u32::try_from(i).unwrap_or(u32::MAX), js)?;
                    }
                    Ok(arr)
                }
                Err(e) => Err(reject(env, &e)),
            }
        },
    )
}

/// End a permission session (`ctx.sessionId`): the tools it allowed ask again. Returns whether
/// it had granted anything. Sessions also expire after two hours without a call.
#[napi(catch_unwind)]
pub fn end_session(session_id: String) -> bool {
    eddie_tools_core::call::gate::end_session(&format!("id:{session_id}"))
}

/// One registry entry: eddie's definition plus our facts.
#[napi(object)]
pub struct NativeToolSpec {
    /// Model-facing name (`file_read`).
    pub name: String,
    /// JS export name (`fileRead`).
    pub js_name: String,
    /// Its family (`eddie` = `@eddie/tools`' built-ins, in `builtinTools`).
    pub family: String,
    /// How careful a host should be: `none`, `moderate` or `dangerous`.
    pub permission: String,
    /// The description sent to the model.
    pub description: String,
    /// Input JSON Schema (identical to `@eddie/tools`).
    pub json_schema: serde_json::Value,
    /// Schema of `result.data` (identical to `@eddie/tools`).
    /// The input schema a model sees: `jsonSchema`, plus the property descriptions a verbatim
    /// contract (eddie's) leaves out.
    pub model_schema: serde_json::Value,
    pub output_schema: serde_json::Value,
    /// Whether the tool can change the workspace or run code.
    pub mutating: bool,
    /// Whether a call may ask `ctx.confirm` (its level is not `none`, or it asks by itself).
    pub confirms: bool,
}

/// Every tool of every family, `builtinTools` first.
#[napi(catch_unwind)]
pub fn tool_specs() -> Vec<NativeToolSpec> {
    registry::tools().filter_map(native_spec).collect()
}

/// The spec of tool `name`: its model name (`file_read`), JS name (`fileRead`), or another
/// agent's name (`toolAliases()`). Throws the core's `UNKNOWN_TOOL` otherwise, whose message names
/// the closest tools and whose `suggestions` lists them.
#[napi(catch_unwind)]
pub fn tool_spec(env: &Env, name: String) -> Result<NativeToolSpec> {
    registry::find(&name).and_then(native_spec).ok_or_else(|| reject(env, &call::unknown_tool(&name)))
}

/// The JS view of one registry entry.
fn native_spec(t: &'static registry::ToolSpec) -> Option<NativeToolSpec> {
    let def = registry::definition(t.name)?;
    Some(NativeToolSpec {
        name: t.name.to_owned(),
        js_name: t.js_name.to_owned(),
        family: t.family.to_owned(),
        permission: t.permission.as_str().to_owned(),
        description: def.get("description").and_then(|d| d.as_str()).unwrap_or_default().to_owned(),
        json_schema: def.get("jsonSchema").cloned().unwrap_or_default(),
        output_schema: def.get("outputSchema").cloned().unwrap_or_default(),
        model_schema: registry::model_schema(t.name).unwrap_or_default(),
        mutating: t.mutating(),
        confirms: t.confirms() || t.permission != registry::Permission::None,
    })
}

/// The stable error codes, in declaration order.
#[napi(catch_unwind)]
pub fn error_codes() -> Vec<String> {
    eddie_tools_core::ErrorCode::ALL.iter().map(|c| c.as_str().to_owned()).collect()
}

/// The other agents' tool names that `runTool` accepts, as `{alias: canonicalName}`.
#[napi(catch_unwind)]
pub fn tool_aliases() -> std::collections::HashMap<String, String> {
    eddie_tools_core::registry::tool_aliases().map(|(a, c)| (a.to_owned(), c.to_owned())).collect()
}

/// Ask every running command tree of this process to stop (SIGTERM to each tree, SIGKILL
/// after a second); returns how many there were. `index.js` calls it on `process.exit`.
#[napi(catch_unwind)]
pub fn terminate_all_processes() -> u32 {
    u32::try_from(eddie_tools_core::engine::process::supervisor::terminate_all()).unwrap_or(u32::MAX)
}
