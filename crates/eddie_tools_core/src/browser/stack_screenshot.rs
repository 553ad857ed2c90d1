//! `screenshot` (Stack 2.9): a URL to a PNG file in one call. A new tab loads the URL
//! (through the network guard, like `browser_navigate`), is captured (the viewport, or the
//! full page) into `destination` inside the workspace, and is closed again.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::browser_navigate::{self as navigate, WaitUntil};
use super::browser_screenshot::{self as screenshot, Area};
use super::session;
use crate::call::args::lenient::{Flag, Int, Seconds};
use crate::context::Ctx;
use crate::engine::store::atomic::write_atomic_async;
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "screenshot";

/// The arguments of `screenshot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The page's URL (http, https, or a file:// URL inside the workspace).
    #[schemars(length(min = 1))]
    pub url: String,
    /// Where to write the PNG, inside the workspace (default screenshot.png; also: path).
    pub destination: Option<String>,
    /// Capture the whole page instead of the viewport.
    pub full_page: Option<Flag>,
    /// Pixel budget (default 1200000): a larger capture is scaled down to fit.
    pub max_pixels: Option<Int>,
    /// Time limit in seconds for loading the page (default 30, at most 300).
    pub timeout: Option<Seconds<30_000, 300>>,
}

/// Run `screenshot`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let limit = Seconds::duration(a.timeout);
    let max = screenshot::budget(a.max_pixels)?;
    let dest = a.destination.clone().unwrap_or_else(|| "screenshot.png".to_owned());
    let (file, shown) = screenshot::target(ctx, Some(&dest), 0)?;
    let url = navigate::check_url(ctx, &a.url).await?;
    let b = session::get(ctx).await?;
    let previous = b.current_id();
    let t = b.new_tab().await?;
    session::arm(&b, &t, ctx)?;
    let shot = async {
        let l = navigate::go(&b, &t, &url, WaitUntil::Load, limit).await?;
        let area = if Flag::on(a.full_page) { Area::FullPage } else { Area::Viewport };
        let s = screenshot::capture(&b, &t, area, max).await?;
        Ok::<_, crate::error::ToolError>((l, s))
    }
    .await;
    let _ = b.close_tab(t.id).await;
    b.restore_current(previous);
    let (l, s) = shot?;
    write_atomic_async(file, s.bytes.clone(), std::path::PathBuf::from(&shown)).await?;
    let content =
        format!("Saved a screenshot of {} ({}×{}, {}) to {shown}", l.url, s.width, s.height, s.mode);
    let data = json!({
        "success": true,
        "url": url.as_str(),
        "finalUrl": l.url,
        "destination": shown,
        "title": l.title,
        "status": l.status,
        "width": s.width,
        "height": s.height,
        "bytes": s.bytes.len(),
        "image": screenshot::image_json(&s),
    });
    Ok(ToolOutput::new(content, data))
}

/// The `screenshot` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "screenshot",
    family: "browser",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::Moderate,
    aliases: &[("path", "destination"), ("output", "destination")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("stack_screenshot.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
