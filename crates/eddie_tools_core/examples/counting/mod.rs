//! The counting allocator of the per-call heap profiles (`web_peak.rs`, `read_page_peak.rs`;
//! never shipped): every allocation of the process is counted (a wrapper around the system
//! allocator), the live bytes and their peak, and [`mark`] closes a phase.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

pub static LIVE: AtomicUsize = AtomicUsize::new(0);
pub static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is passed on to `System` unchanged; the wrapper only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `(phase, peak, live at its end)`, absolute; room is made before the measured call, so a
/// mark allocates nothing.
pub static PHASES: Mutex<Vec<(&'static str, usize, usize)>> = Mutex::new(Vec::new());

pub fn mark(phase: &'static str) {
    let live = LIVE.load(Relaxed);
    let peak = PEAK.swap(live, Relaxed).max(live);
    if let Ok(mut p) = PHASES.lock()
        && p.len() < p.capacity()
    {
        p.push((phase, peak, live));
    }
}

/// The peak of live bytes above `base` and the phases, each `{phase, peak, held}` above `base`.
pub fn report(base: usize) -> (usize, Vec<serde_json::Value>) {
    let phases = PHASES.lock().map(|p| p.clone()).unwrap_or_default();
    let peak = phases.iter().map(|p| p.1).max().unwrap_or(base) - base;
    let phases = phases
        .iter()
        .map(|&(phase, p, live)| serde_json::json!({"phase": phase, "peak": p.saturating_sub(base), "held": live as i64 - base as i64}))
        .collect();
    (peak, phases)
}
