//! `ctx` → [`eddie_tools_core::Ctx`]: cwd, the confirm callback (a threadsafe function
//! awaited from tokio, never blocking the JS thread), env, and the AbortSignal.

use std::collections::HashMap;
use std::sync::Arc;

use eddie_tools_core::context::{Cancel, ConfirmFn};
use eddie_tools_core::{Ctx, ErrorCode, ToolError};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;

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
        Either::B(promise) => promise.await.map_err(failed),
    }
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
/// `may_confirm`, `ctx.confirm` is only checked to be a function (the tool never asks).
pub fn convert(
    env: &Env,
    ctx: Option<Object<'_>>,
    may_confirm: bool,
) -> std::result::Result<(Converted, Option<AbortHook>), ToolError> {
    let Some(obj) = ctx else { return Err(invalid("ctx must be an object with a string cwd")) };
    let cwd: Option<Unknown> = obj.get("cwd").map_err(|e| invalid(&e.reason))?;
    let cwd = match cwd {
        Some(v) if v.get_type().ok() == Some(ValueType::String) => {
            unsafe { String::from_napi_value(env.raw(), v.raw()) }.map_err(|e| invalid(&e.reason))?
        }
        _ => return Err(invalid("ctx.cwd must be a string")),
    };
    let mut core = Ctx::new(&cwd)?;

    let confirm: Option<Unknown> = obj.get("confirm").map_err(|e| invalid(&e.reason))?;
    match confirm.as_ref().map(|c| c.get_type()) {
        None | Some(Ok(ValueType::Undefined | ValueType::Null)) => {}
        Some(Ok(ValueType::Function)) if !may_confirm => {}
        Some(Ok(ValueType::Function)) => {
            let raw = confirm.map(|c| c.raw()).unwrap_or(std::ptr::null_mut());
            let tsfn =
                unsafe { ConfirmTsfn::from_napi_value(env.raw(), raw) }.map_err(|e| invalid(&e.reason))?;
            let tsfn = Arc::new(tsfn);
            let f: ConfirmFn = Arc::new(move |message| {
                let tsfn = Arc::clone(&tsfn);
                Box::pin(async move { ask(&tsfn, message).await })
            });
            core = core.with_confirm(f);
        }
        _ => return Err(invalid("ctx.confirm must be a function")),
    }

    let env_value: Option<Unknown> = obj.get("env").map_err(|e| invalid(&e.reason))?;
    if let Some(v) = env_value
        && v.get_type().ok() == Some(ValueType::Object)
    {
        let vars = unsafe { Object::from_napi_value(env.raw(), v.raw()) }.map_err(|e| invalid(&e.reason))?;
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

    let signal: Option<Unknown> = obj.get("signal").map_err(|e| invalid(&e.reason))?;
    let mut already_aborted = false;
    let mut hook = None;
    if let Some(s) = signal
        && s.get_type().ok() == Some(ValueType::Object)
    {
        let s = unsafe { Object::from_napi_value(env.raw(), s.raw()) }.map_err(|e| invalid(&e.reason))?;
        match watch_signal(env, &s, &core.cancel)
            .map_err(|e| invalid(&format!("ctx.signal: {}", e.reason)))?
        {
            Watch::Aborted => already_aborted = true,
            Watch::Hooked(h) => hook = Some(h),
            Watch::NotASignal => {}
        }
    }
    Ok((Converted { ctx: core, already_aborted }, hook))
}

enum Watch {
    Aborted,
    Hooked(AbortHook),
    NotASignal,
}

/// `signal.addEventListener(type, listener, options)`.
type AddEventListener<'a> = Function<'a, FnArgs<(&'a str, Function<'a, (), ()>, Object<'a>)>, ()>;

/// Hook `signal` to `cancel`, unless it is already aborted.
fn watch_signal(env: &Env, signal: &Object<'_>, cancel: &Cancel) -> Result<Watch> {
    let aborted: Option<bool> = signal.get("aborted")?;
    if aborted == Some(true) {
        return Ok(Watch::Aborted);
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
