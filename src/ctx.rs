//! `ctx` → [`eddie_tools_core::Ctx`]: cwd, the confirm callback (a threadsafe function
//! awaited from tokio, never blocking the JS thread), env, and the AbortSignal.

use std::collections::HashMap;
use std::sync::Arc;

use eddie_tools_core::call::gate::Approved;
use eddie_tools_core::context::{AskFn, Cancel, ConfirmFn, GitCredentialsFn, OutputFn, PromptKind};
use eddie_tools_core::registry::Permission;
use eddie_tools_core::{Ctx, ErrorCode, ToolError};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode, UnknownReturnValue};
use napi_derive::napi;

/// `confirm(message) => boolean | Promise<boolean>`, called from any thread.
type ConfirmTsfn = ThreadsafeFunction<String, Either<bool, Promise<bool>>, String, Status, false>;

/// Ask the JS callback and await its answer (plain or promised).
async fn ask(tsfn: &ConfirmTsfn, message: String) -> eddie_tools_core::Result<bool> {
    let failed = |e: Error| {
        let reason = if e.status == Status::InvalidArg {
            "ctx.confirm must return a boolean or a Promise<boolean>".to_owned()
        } else {
            e.reason.clone()
        };
        ToolError::new(ErrorCode::ConfirmFailed, format!("confirm failed: {reason}"))
    };
    match tsfn.call_async_catch(message).await.map_err(failed)? {
        Either::A(answer) => Ok(answer),
        Either::B(promise) => match promise.await {
            Ok(answer) => Ok(answer),
            // The promise was collected without settling (nothing referenced it): it can never
            // answer, which is a confirm left pending, so the call waits for its abort like one.
            Err(e) if e.reason == PROMISE_DROPPED => std::future::pending().await,
            Err(e) => Err(failed(e)),
        },
    }
}

/// napi's reason when a promise we await is garbage-collected unsettled (its `then` callbacks,
/// which hold the answer's channel, are dropped with it).
const PROMISE_DROPPED: &str = "oneshot canceled";

/// `ask(question) => string | Promise<string>`, called from any thread.
type AskTsfn = ThreadsafeFunction<String, Either<String, Promise<String>>, String, Status, false>;

/// What `ctx.onOutput` receives: one decoded piece of a running command's output.
#[napi(object)]
pub struct OutputChunk {
    /// `stdout` or `stderr`.
    pub stream: String,
    /// The text (never a split character).
    pub text: String,
}

/// `onOutput(chunk)`, fire and forget; its return value and exceptions are ignored.
type OutputTsfn = ThreadsafeFunction<OutputChunk, UnknownReturnValue, OutputChunk, Status, false>;

/// What `ctx.gitCredentials` receives: a git remote over http(s) that asks for a login.
#[napi(object)]
pub struct GitCredentialRequest {
    /// `http` or `https`.
    pub protocol: String,
    /// `host` or `host:port`.
    pub host: String,
    /// The remote's URL, without user and password.
    pub url: String,
    /// The user named in the remote URL, if any.
    pub username: Option<String>,
}

/// What `ctx.gitCredentials` returns for a remote it has a login for.
#[napi(object)]
pub struct GitCredentials {
    pub username: String,
    pub password: String,
}

/// `gitCredentials(request) => GitCredentials | null | Promise<GitCredentials | null>`.
type GitCredentialsTsfn = ThreadsafeFunction<
    GitCredentialRequest,
    Either<Promise<Option<GitCredentials>>, Option<GitCredentials>>,
    GitCredentialRequest,
    Status,
    false,
>;

/// Ask the JS `gitCredentials` callback and await its answer (`None`: no login for it).
async fn git_credentials(
    tsfn: &GitCredentialsTsfn,
    req: eddie_tools_core::context::GitCredentialRequest,
) -> eddie_tools_core::Result<Option<(String, String)>> {
    let failed = |e: Error| {
        let reason = if e.status == Status::InvalidArg {
            "ctx.gitCredentials must return {username, password}, null, or a Promise of one".to_owned()
        } else {
            e.reason.clone()
        };
        ToolError::new(ErrorCode::AuthFailed, format!("ctx.gitCredentials failed: {reason}"))
    };
    let js =
        GitCredentialRequest { protocol: req.protocol, host: req.host, url: req.url, username: req.username };
    let answer = match tsfn.call_async_catch(js).await.map_err(failed)? {
        Either::A(promise) => promise.await.map_err(failed)?,
        Either::B(v) => v,
    };
    Ok(answer.map(|c| (c.username, c.password)))
}

/// Ask the JS `ask` callback and await its answer.
async fn ask_user(tsfn: &AskTsfn, question: String) -> eddie_tools_core::Result<String> {
    let failed = |e: Error| {
        let reason = if e.status == Status::InvalidArg {
            "ctx.ask must return a string or a Promise<string>".to_owned()
        } else {
            e.reason.clone()
        };
        ToolError::new(ErrorCode::AskFailed, format!("ask failed: {reason}"))
    };
    match tsfn.call_async_catch(question).await.map_err(failed)? {
        Either::A(answer) => Ok(answer),
        Either::B(promise) => promise.await.map_err(failed),
    }
}

/// A callback property of `obj` as a threadsafe function (`None` when absent).
fn callback<T: FromNapiValue>(obj: &Object<'_>, name: &str) -> std::result::Result<Option<T>, ToolError> {
    let value: Option<Unknown> = obj.get(name).map_err(|e| invalid(&e.reason))?;
    match value.as_ref().map(|c| c.get_type()) {
        None | Some(Ok(ValueType::Undefined | ValueType::Null)) => Ok(None),
        Some(Ok(ValueType::Function)) => match value {
            Some(f) => T::from_unknown(f).map(Some).map_err(|e| invalid(&e.reason)),
            None => Ok(None),
        },
        _ => Err(invalid(&format!("ctx.{name} must be a function"))),
    }
}

/// The permission session of `ctx`: `ctx.sessionId` if it is a non-empty string, else an id
/// kept on the ctx object itself under `Symbol.for('eddie.tools.session')` (non-enumerable).
/// A frozen ctx, or a fresh object per call, has no lasting session.
fn session(env: &Env, obj: &Object<'_>) -> Option<String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    if let Ok(Some(id)) = obj.get::<Unknown>("sessionId")
        && id.get_type().ok() == Some(ValueType::String)
        && let Ok(id) = String::from_unknown(id)
        && !id.is_empty()
    {
        return Some(format!("id:{id}"));
    }
    let global = env.get_global().ok()?;
    let symbol_ctor: Object = global.get_named_property_unchecked("Symbol").ok()?;
    let symbol_for: Function<&str, Unknown> = symbol_ctor.get_named_property("for").ok()?;
    let key = symbol_for.apply(symbol_ctor, "eddie.tools.session").ok()?;
    let existing: Unknown = obj.get_property(key).ok()?;
    if existing.get_type().ok() == Some(ValueType::String) {
        return String::from_unknown(existing).ok();
    }
    let id = format!("ctx:{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let object_ctor: Object = global.get_named_property_unchecked("Object").ok()?;
    let target = Object::from_unknown(obj.to_unknown()).ok()?;
    // A frozen, sealed or non-extensible ctx cannot carry the id: no lasting session.
    let extensible: Function<Object, bool> = object_ctor.get_named_property("isExtensible").ok()?;
    if !extensible.apply(object_ctor, target).ok()? {
        return None;
    }
    let define: Function<FnArgs<(Object, Unknown, Object)>, Unknown> =
        object_ctor.get_named_property("defineProperty").ok()?;
    let mut desc = Object::new(env).ok()?;
    desc.set_named_property("value", id.as_str()).ok()?;
    if define.apply(object_ctor, FnArgs::from((target, key, desc))).is_err() {
        // A Proxy may refuse; do not leave its exception pending.
        let mut ignored = std::ptr::null_mut();
        // SAFETY: a valid env on the JS thread; the out pointer is a local.
        unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut ignored) };
        return None;
    }
    let stored: Unknown = obj.get_property(key).ok()?;
    (stored.get_type().ok() == Some(ValueType::String)).then_some(id)
}

/// Everything taken from `ctx` on the JS thread.
pub struct Converted {
    /// The core context.
    pub ctx: Ctx,
    /// Set when `ctx.signal` was already aborted.
    pub already_aborted: bool,
}

fn invalid(message: &str) -> ToolError {
    ToolError::invalid(message)
}

/// The abort listener a call put on `ctx.signal`; [`AbortHook::release`] takes it off again
/// (on the JS thread, when the call settles), so a long-lived signal collects no listeners.
pub struct AbortHook {
    signal: ObjectRef<false>,
    listener: FunctionRef<(), ()>,
}

/// `signal.removeEventListener(type, listener)`.
type RemoveEventListener<'a> = Function<'a, FnArgs<(&'a str, Function<'a, (), ()>)>, ()>;

impl AbortHook {
    /// Remove the listener and drop the references (JS thread only).
    pub fn release(self, env: &Env) {
        let remove = || -> Result<()> {
            let signal = self.signal.get_value(env)?;
            let remove: Option<RemoveEventListener> = signal.get("removeEventListener")?;
            if let Some(remove) = remove {
                remove.apply(signal, FnArgs::from(("abort", self.listener.borrow_back(env)?)))?;
            }
            Ok(())
        };
        // A signal whose removeEventListener throws keeps the listener; the call is done anyway.
        let _ = remove();
        let _ = self.signal.unref(env);
    }
}

/// Convert `ctx`. Errors are core errors so that they reject with a code. Without
/// `may_confirm`, `ctx.confirm` is only checked to be a function (the tool never asks). Without
/// `watch`, `ctx.signal` is only checked for an abort that came first (a call that settles on
/// the JS thread cannot be aborted while it runs; [`hook`] hooks it later if it goes async).
pub fn convert(
    env: &Env,
    ctx: Option<Object<'_>>,
    may_confirm: bool,
    watch: bool,
) -> std::result::Result<(Converted, Option<AbortHook>), ToolError> {
    let Some(obj) = ctx else { return Err(invalid("ctx must be an object with a string cwd")) };
    let cwd: Option<Unknown> = obj.get("cwd").map_err(|e| invalid(&e.reason))?;
    let cwd = match cwd {
        Some(v) if v.get_type().ok() == Some(ValueType::String) => {
            String::from_unknown(v).map_err(|e| invalid(&e.reason))?
        }
        _ => return Err(invalid("ctx.cwd must be a string")),
    };
    let mut core = Ctx::new(&cwd)?;

    let confirm: Option<Unknown> = obj.get("confirm").map_err(|e| invalid(&e.reason))?;
    match confirm.as_ref().map(|c| c.get_type()) {
        None | Some(Ok(ValueType::Undefined | ValueType::Null)) => {}
        Some(Ok(ValueType::Function)) if !may_confirm => {}
        Some(Ok(ValueType::Function)) => {
            let Some(f) = confirm else { return Err(invalid("ctx.confirm must be a function")) };
            let tsfn = ConfirmTsfn::from_unknown(f).map_err(|e| invalid(&e.reason))?;
            let tsfn = Arc::new(tsfn);
            let f: ConfirmFn = Arc::new(move |message| {
                let tsfn = Arc::clone(&tsfn);
                Box::pin(async move { ask(&tsfn, message).await })
            });
            core = core.with_confirm(f);
        }
        _ => return Err(invalid("ctx.confirm must be a function")),
    }

    if let Some(tsfn) = callback::<AskTsfn>(&obj, "ask")? {
        let tsfn = Arc::new(tsfn);
        let f: AskFn = Arc::new(move |question| {
            let tsfn = Arc::clone(&tsfn);
            Box::pin(async move { ask_user(&tsfn, question).await })
        });
        core = core.with_ask(f);
    }
    if let Some(tsfn) = callback::<OutputTsfn>(&obj, "onOutput")? {
        let f: OutputFn = Arc::new(move |chunk: eddie_tools_core::context::OutputChunk| {
            let js = OutputChunk { stream: chunk.stream.to_owned(), text: chunk.text };
            let (done, delivered) = tokio::sync::oneshot::channel::<()>();
            tsfn.call_with_return_value(js, ThreadsafeFunctionCallMode::NonBlocking, move |_, _| {
                let _ = done.send(());
                Ok(())
            });
            Box::pin(async move {
                let _ = delivered.await;
            })
        });
        core = core.with_on_output(f);
    }
    if let Some(tsfn) = callback::<GitCredentialsTsfn>(&obj, "gitCredentials")? {
        let tsfn = Arc::new(tsfn);
        let f: GitCredentialsFn = Arc::new(move |req| {
            let tsfn = Arc::clone(&tsfn);
            Box::pin(async move { git_credentials(&tsfn, req).await })
        });
        core = core.with_git_credentials(f);
    }
    if let Some(s) = session(env, &obj) {
        core = core.with_session(s);
    }

    let env_value: Option<Unknown> = obj.get("env").map_err(|e| invalid(&e.reason))?;
    if let Some(v) = env_value
        && v.get_type().ok() == Some(ValueType::Object)
    {
        let vars = Object::from_unknown(v).map_err(|e| invalid(&e.reason))?;
        let mut map = HashMap::new();
        for key in Object::keys(&vars).map_err(|e| invalid(&e.reason))? {
            let val: Unknown = vars.get_named_property(&key).map_err(|e| invalid(&e.reason))?;
            match val.get_type() {
                Ok(ValueType::Undefined) => {}
                _ => {
                    let s = val.coerce_to_string().and_then(|s| s.into_utf8()).and_then(|s| s.into_owned());
                    map.insert(key, s.map_err(|e| invalid(&e.reason))?);
                }
            }
        }
        core = core.with_env(map);
    }

    if let Some(policy) = network(&obj)? {
        core = core.with_network(policy);
    }
    if let Some(ep) = browser_endpoint(&obj)? {
        core = core.with_browser_endpoint(ep);
    }
    core.approved = approved(&obj)?;
    core.max_permission = max_permission(&obj)?;
    if let Some(policy) = sandbox(env, &obj)? {
        core = core.with_sandbox(policy);
    }

    let signal: Option<Unknown> = obj.get("signal").map_err(|e| invalid(&e.reason))?;
    let mut already_aborted = false;
    let mut hook = None;
    if let Some(s) = signal
        && s.get_type().ok() == Some(ValueType::Object)
    {
        let s = Object::from_unknown(s).map_err(|e| invalid(&e.reason))?;
        match watch_signal(env, &s, &core.cancel, watch)
            .map_err(|e| invalid(&format!("ctx.signal: {}", e.reason)))?
        {
            Watch::Aborted => already_aborted = true,
            Watch::Hooked(h) => hook = Some(h),
            Watch::NotASignal => {}
        }
    }
    Ok((Converted { ctx: core, already_aborted }, hook))
}

/// A string of `obj[key]`, if it is one (`None` when absent or null).
fn string_of(v: Unknown<'_>) -> Option<String> {
    (v.get_type().ok() == Some(ValueType::String)).then(|| String::from_unknown(v).ok()).flatten()
}

/// The strings of a JS array (`None` when it is not an array of strings).
fn strings_of(v: Unknown<'_>) -> Option<Vec<String>> {
    if !v.is_array().unwrap_or(false) {
        return None;
    }
    let arr = Array::from_unknown(v).ok()?;
    (0..arr.len()).map(|i| arr.get::<Unknown>(i).ok().flatten().and_then(string_of)).collect()
}

/// `ctx.approved`: what the host approved before the call (see the core's `call::gate`):
/// - `true`: the tool's own question only (never a destructive command, hooks or a protected
///   branch it did not show);
/// - an array of prompt texts, or a plan `{prompts: [{text}]}` as `planCall` returns it:
///   exactly those prompts;
/// - `{kinds: ['action', 'hooks', ...]}`: every prompt of those kinds (a CLI's `--yes`).
fn approved(obj: &Object<'_>) -> std::result::Result<Approved, ToolError> {
    const SHAPE: &str = "ctx.approved must be true, an array of prompt texts, a plan {prompts: [{kind, text}]} \
                         (as planCall returns it) or {kinds: ['action' | 'destructive' | 'hooks' | 'protected']}";
    let value: Option<Unknown> = obj.get("approved").map_err(|e| invalid(&e.reason))?;
    let Some(v) = value else { return Ok(Approved::Nothing) };
    match v.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(Approved::Nothing),
        Ok(ValueType::Boolean) => {
            let yes = bool::from_unknown(v).map_err(|e| invalid(&e.reason))?;
            return Ok(if yes { Approved::Kinds(vec![PromptKind::Action]) } else { Approved::Nothing });
        }
        Ok(ValueType::Object) => {}
        _ => return Err(invalid(SHAPE)),
    }
    if v.is_array().unwrap_or(false) {
        return prompt_texts(v).map(|t| Approved::Texts(Arc::new(t))).ok_or_else(|| invalid(SHAPE));
    }
    let o = Object::from_unknown(v).map_err(|e| invalid(&e.reason))?;
    let kinds: Option<Unknown> = o.get("kinds").map_err(|e| invalid(&e.reason))?;
    if let Some(kinds) = kinds.filter(|k| k.get_type().ok() != Some(ValueType::Undefined)) {
        let names = strings_of(kinds).ok_or_else(|| invalid(SHAPE))?;
        let mut out = Vec::new();
        for n in names {
            out.push(match n.as_str() {
                "action" => PromptKind::Action,
                "destructive" => PromptKind::Destructive,
                "hooks" => PromptKind::Hooks,
                "protected" => PromptKind::Protected,
                _ => return Err(invalid(&format!("ctx.approved.kinds: unknown kind `{n}`; {SHAPE}"))),
            });
        }
        return Ok(Approved::Kinds(out));
    }
    let prompts: Option<Unknown> = o.get("prompts").map_err(|e| invalid(&e.reason))?;
    prompts.and_then(prompt_texts).map(|t| Approved::Texts(Arc::new(t))).ok_or_else(|| invalid(SHAPE))
}

/// The texts of an array of prompts: strings, or `{text}` objects (as `planCall` returns them).
fn prompt_texts(v: Unknown<'_>) -> Option<std::collections::HashSet<String>> {
    if !v.is_array().unwrap_or(false) {
        return None;
    }
    let arr = Array::from_unknown(v).ok()?;
    let mut texts = std::collections::HashSet::new();
    for i in 0..arr.len() {
        let item: Unknown = arr.get(i).ok()??;
        let text = match item.get_type().ok()? {
            ValueType::String => string_of(item)?,
            ValueType::Object => string_of(Object::from_unknown(item).ok()?.get::<Unknown>("text").ok()??)?,
            _ => return None,
        };
        texts.insert(text);
    }
    Some(texts)
}

/// `ctx.maxPermission`: `'none' | 'moderate' | 'dangerous'`; a tool above it is refused.
fn max_permission(obj: &Object<'_>) -> std::result::Result<Option<Permission>, ToolError> {
    let value: Option<Unknown> = obj.get("maxPermission").map_err(|e| invalid(&e.reason))?;
    let Some(v) = value else { return Ok(None) };
    if matches!(v.get_type(), Ok(ValueType::Undefined | ValueType::Null)) {
        return Ok(None);
    }
    match string_of(v).as_deref() {
        Some("none") => Ok(Some(Permission::None)),
        Some("moderate") => Ok(Some(Permission::Moderate)),
        Some("dangerous") => Ok(Some(Permission::Dangerous)),
        _ => Err(invalid("ctx.maxPermission must be 'none', 'moderate' or 'dangerous'")),
    }
}

/// `ctx.browser = {endpoint}`: a running browser's DevTools websocket for the browser tools.
fn browser_endpoint(obj: &Object<'_>) -> std::result::Result<Option<String>, ToolError> {
    let value: Option<Unknown> = obj.get("browser").map_err(|e| invalid(&e.reason))?;
    let Some(v) = value else { return Ok(None) };
    match v.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(None),
        Ok(ValueType::Object) => {}
        _ => return Err(invalid("ctx.browser must be an object {endpoint}")),
    }
    let o = Object::from_unknown(v).map_err(|e| invalid(&e.reason))?;
    let ep: Option<Unknown> = o.get("endpoint").map_err(|e| invalid(&e.reason))?;
    match ep.map(|e| (e.get_type(), e)) {
        None | Some((Ok(ValueType::Undefined | ValueType::Null), _)) => Ok(None),
        Some((Ok(ValueType::String), e)) => {
            Ok(Some(String::from_unknown(e).map_err(|e| invalid(&e.reason))?))
        }
        _ => Err(invalid("ctx.browser.endpoint must be a string (a ws:// DevTools URL)")),
    }
}

/// `ctx.sandbox`: a mode string (`'workspace-write' | 'read-only' | 'off'`) or `{mode,
/// writableRoots?, network?: 'off' | 'loopback' | 'on'}`, required for every command of the
/// call. Absent (or null): the default sandbox, best effort. Bad values are `INVALID_ARGUMENT`.
fn sandbox(
    env: &Env,
    obj: &Object<'_>,
) -> std::result::Result<Option<eddie_tools_core::engine::process::sandbox::Policy>, ToolError> {
    let value: Option<Unknown> = obj.get("sandbox").map_err(|e| invalid(&e.reason))?;
    let Some(v) = value else { return Ok(None) };
    let json =
        crate::convert::to_json(env, v, 0).map_err(|e| invalid(&format!("ctx.sandbox: {}", e.reason)))?;
    eddie_tools_core::engine::process::sandbox::Policy::from_json(&json.unwrap_or(serde_json::Value::Null))
}

/// `ctx.network = {allowPrivate, allowHosts, denyHosts}`: who the network tools may reach.
/// Absent (or null): the environment decides (`EDDIE_NET_*`), else nothing private.
fn network(
    obj: &Object<'_>,
) -> std::result::Result<Option<eddie_tools_core::context::NetworkPolicy>, ToolError> {
    let value: Option<Unknown> = obj.get("network").map_err(|e| invalid(&e.reason))?;
    let Some(v) = value else { return Ok(None) };
    match v.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(None),
        Ok(ValueType::Object) => {}
        _ => return Err(invalid("ctx.network must be an object {allowPrivate, allowHosts, denyHosts}")),
    }
    let o = Object::from_unknown(v).map_err(|e| invalid(&e.reason))?;
    let flag: Option<Unknown> = o.get("allowPrivate").map_err(|e| invalid(&e.reason))?;
    let allow_private = match flag.map(|f| (f.get_type(), f)) {
        None | Some((Ok(ValueType::Undefined | ValueType::Null), _)) => false,
        Some((Ok(ValueType::Boolean), f)) => bool::from_unknown(f).map_err(|e| invalid(&e.reason))?,
        _ => return Err(invalid("ctx.network.allowPrivate must be a boolean")),
    };
    let list = |key: &str| -> std::result::Result<Vec<String>, ToolError> {
        let v: Option<Unknown> = o.get(key).map_err(|e| invalid(&e.reason))?;
        let Some(v) = v else { return Ok(Vec::new()) };
        match v.get_type() {
            Ok(ValueType::Undefined | ValueType::Null) => Ok(Vec::new()),
            _ if v.is_array().unwrap_or(false) => {
                let arr = Array::from_unknown(v).map_err(|e| invalid(&e.reason))?;
                let mut out = Vec::new();
                for i in 0..arr.len() {
                    let item: Option<Unknown> = arr.get(i).map_err(|e| invalid(&e.reason))?;
                    match item {
                        Some(item) if item.get_type().ok() == Some(ValueType::String) => {
                            out.push(String::from_unknown(item).map_err(|e| invalid(&e.reason))?);
                        }
                        _ => return Err(invalid(&format!("ctx.network.{key} must be an array of strings"))),
                    }
                }
                Ok(out)
            }
            _ => Err(invalid(&format!("ctx.network.{key} must be an array of strings"))),
        }
    };
    Ok(Some(eddie_tools_core::context::NetworkPolicy {
        allow_private,
        allow_hosts: list("allowHosts")?,
        deny_hosts: list("denyHosts")?,
    }))
}

enum Watch {
    Aborted,
    Hooked(AbortHook),
    NotASignal,
}

/// `signal.addEventListener(type, listener, options)`.
type AddEventListener<'a> = Function<'a, FnArgs<(&'a str, Function<'a, (), ()>, Object<'a>)>, ()>;

/// Hook `ctx.signal` to `cancel` (a call that did not watch it at first and now goes async).
pub fn hook(
    env: &Env,
    ctx: Option<Object<'_>>,
    cancel: &Cancel,
) -> std::result::Result<Option<AbortHook>, ToolError> {
    let Some(obj) = ctx else { return Ok(None) };
    let signal: Option<Unknown> = obj.get("signal").map_err(|e| invalid(&e.reason))?;
    let Some(s) = signal.filter(|s| s.get_type().ok() == Some(ValueType::Object)) else { return Ok(None) };
    let s = Object::from_unknown(s).map_err(|e| invalid(&e.reason))?;
    match watch_signal(env, &s, cancel, true).map_err(|e| invalid(&format!("ctx.signal: {}", e.reason)))? {
        Watch::Aborted => {
            cancel.cancel();
            Ok(None)
        }
        Watch::Hooked(h) => Ok(Some(h)),
        Watch::NotASignal => Ok(None),
    }
}

/// Hook `signal` to `cancel` (when `hook`), unless it is already aborted.
fn watch_signal(env: &Env, signal: &Object<'_>, cancel: &Cancel, hook: bool) -> Result<Watch> {
    let aborted: Option<bool> = signal.get("aborted")?;
    if aborted == Some(true) {
        return Ok(Watch::Aborted);
    }
    if !hook {
        return Ok(Watch::NotASignal);
    }
    let add: Option<AddEventListener> = signal.get("addEventListener")?;
    let Some(add) = add else { return Ok(Watch::NotASignal) };
    let cancel = cancel.clone();
    let listener = env.create_function_from_closure::<(), (), _>("onabort", move |_| {
        cancel.cancel();
        Ok(())
    })?;
    let mut options = Object::new(env)?;
    options.set_named_property("once", true)?;
    let listener_ref = listener.create_ref()?;
    add.apply(signal, FnArgs::from(("abort", listener, options)))?;
    Ok(Watch::Hooked(AbortHook { signal: signal.create_ref()?, listener: listener_ref }))
}
