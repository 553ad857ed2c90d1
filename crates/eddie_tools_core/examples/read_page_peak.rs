//! A per-call heap profile of `browser_read_page` (never shipped; the approach of
//! `web_peak.rs`): every allocation of this process is counted, and the peak of live bytes
//! during one read of an already loaded page, above what was live before it, is reported with
//! its breakdown by phase: the walker's answer reached (`walk`: the CDP frame, its parse, the
//! rows' text), the render straight from the rows (`render`: text and `data.nodes`), and the
//! whole tool call (`browser_read_page`, title and URL included) with its result's data as
//! JSON text (what the binding hands to JS).
//!
//! `read_page_peak <url> <warm-up url>`: Chromium is launched as the browser tools launch it.
//! Prints one JSON line: `peak` (bytes above the start), `chars` (the result's text and data),
//! `rows` (the answer frame holding the walker's rows) and `phases`: `[{phase, peak, held}]`.

mod counting;

use std::sync::atomic::Ordering::Relaxed;

use eddie_tools_core::Ctx;
use eddie_tools_core::browser::tree;
use eddie_tools_core::context::{NetworkPolicy, constant_confirm};
use serde_json::json;

use counting::{LIVE, PEAK, PHASES, mark};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut argv = std::env::args().skip(1);
    let (Some(url), Some(tiny)) = (argv.next(), argv.next()) else {
        return Err("usage: read_page_peak <url> <warm-up url>".into());
    };
    let rt = eddie_tools_core::browser::session::rt()?;
    let dir = tempfile::tempdir()?;
    let ctx = Ctx::new(&dir.path().display().to_string())?
        .with_network(NetworkPolicy { allow_hosts: vec!["127.0.0.1".into()], ..Default::default() })
        .with_confirm(constant_confirm(true));
    let run =
        |tool: &str, args: serde_json::Value| rt.block_on(eddie_tools_core::registry::run(tool, &args, &ctx));
    for _ in 0..2 {
        run("browser_navigate", json!({"url": tiny}))?;
        run("browser_read_page", json!({"maxChars": 500_000}))?;
    }
    run("browser_navigate", json!({"url": url}))?;
    let (b, t) = rt.block_on(eddie_tools_core::browser::open(&ctx, None))?;
    PHASES.lock().map_err(|_| "poisoned")?.reserve(64);
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let walk = rt.block_on(tree::walk(&b, &t))?;
    mark("walk");
    let rows = walk.len();
    let r = t.with(|s| tree::render_walk(&walk, s, 500_000, String::new(), String::new()))??;
    mark("render");
    drop((r, walk));
    mark("dropped");
    let mut out = run("browser_read_page", json!({"maxChars": 500_000}))?;
    // Taken as the binding takes it (no copy).
    let data_json = out.take_data_json()?;
    mark("browser_read_page");
    let chars = out.content.len() + data_json.len();
    drop((out, data_json));
    let (peak, phases) = counting::report(base);
    println!("{}", json!({"peak": peak, "chars": chars, "rows": rows, "phases": phases}));
    run("browser_close_tab", json!({}))?;
    Ok(())
}
