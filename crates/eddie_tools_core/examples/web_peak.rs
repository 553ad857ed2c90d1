//! A per-call heap profile of `web_fetch`, for `bench/web.mjs` (never shipped): every
//! allocation of this process is counted (a wrapper around the system allocator), and the
//! peak of live bytes during one call, above what was live before it, is reported with its
//! breakdown by phase (`web::profile` marks each phase's end).
//!
//! `web_peak <url> <warm-up url>`: two warm-up calls on the second URL (and html5ever's table
//! of names outside its static set, made once per process), then one measured
//! call on the first (`noCache`, every character, loopback allowed), then what the binding does
//! with the result before it crosses into JS (the data's JSON text, the content as Latin-1 or
//! UTF-16: `src/convert.rs`). Prints one JSON line: `bytes` (the page), `peak` (bytes above the
//! start), and `phases`: `[{phase, peak, held}]`, where `peak` is the most live during the
//! phase and `held` what is still live at its end, both above the start.

mod counting;

use std::sync::atomic::Ordering::Relaxed;

use eddie_tools_core::Ctx;
use eddie_tools_core::context::{NetworkPolicy, constant_confirm};
use serde_json::json;

use counting::{LIVE, PEAK, PHASES, mark};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let (Some(url), Some(tiny)) = (argv.next(), argv.next()) else {
        return Err("usage: web_peak <url> <warm-up url>".into());
    };
    eddie_tools_core::web::profile::set_hook(mark);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let dir = std::env::temp_dir();
    let ctx = Ctx::new(&dir.display().to_string())?
        .with_network(NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() })
        .with_confirm(constant_confirm(true));
    let call = |u: &str| {
        let args = json!({"url": u, "noCache": true, "maxChars": 10_000_000});
        rt.block_on(eddie_tools_core::registry::run("web_fetch", &args, &ctx))
    };
    for _ in 0..2 {
        call(&tiny)?;
    }
    // html5ever's names outside its static set (a page's own tags and attributes) live in one
    // table for the whole process (string_cache's dynamic set, 64 KiB of buckets), made by the
    // first such name the process meets, never again: made here, not in the call measured.
    drop(html5ever::LocalName::from("eddie-web-peak-warm-up"));
    PHASES.lock().map_err(|_| "poisoned")?.reserve(64);
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let out = call(&url)?;
    mark("result");
    // What the binding does before the result crosses (src/convert.rs, `Rendered::new`): the
    // data as JSON text, the content as Latin-1 when ASCII, else as UTF-16 (from 1 KiB).
    let data_json = out.data_json()?.into_owned();
    let bytes = out.data_value()?["bytes"].as_u64().unwrap_or(0);
    let content = out.content;
    let js: (Option<String>, Option<Vec<u16>>) = if content.len() < 1024 || content.is_ascii() {
        (Some(content), None)
    } else {
        let mut units = vec![0u16; content.len()];
        let n = encoding_rs::mem::convert_str_to_utf16(&content, &mut units);
        units.truncate(n);
        drop(content);
        (None, Some(units))
    };
    mark("to JS");
    let chars = js.0.as_ref().map_or(0, String::len) + js.1.as_ref().map_or(0, Vec::len);
    drop((js, data_json));
    let (peak, phases) = counting::report(base);
    println!("{}", json!({"bytes": bytes, "peak": peak, "chars": chars, "phases": phases}));
    Ok(())
}
