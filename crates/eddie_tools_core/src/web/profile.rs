//! Phase marks for a per-call memory profile (`examples/web_peak.rs`, run by `bench/web.mjs`):
//! a profiler sets one hook, and `web_fetch` names each phase as it ends (`body`, `decode`, …),
//! so the profiler can read its allocation counters there. Without a hook a mark is one atomic
//! load: nothing in the shipped build counts or allocates.

use std::sync::OnceLock;

static HOOK: OnceLock<fn(&'static str)> = OnceLock::new();

/// Set the hook called at the end of each phase of a call (once per process; `false` when a
/// hook was already set).
pub fn set_hook(hook: fn(&'static str)) -> bool {
    HOOK.set(hook).is_ok()
}

/// The phase `name` has ended.
pub(crate) fn mark(name: &'static str) {
    if let Some(hook) = HOOK.get() {
        hook(name);
    }
}
