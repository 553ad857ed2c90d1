//! `browser_screenshot`: the viewport, the full page, or one element (`selector` or `ref`) as a
//! PNG. It is written into the workspace (`path`, default `.eddie/screenshots/`), and the
//! result carries it as image content (`data.image`: `{type: "image", mimeType, data}`) for
//! a vision model. Large captures are scaled down by the browser to a pixel budget.

use std::path::PathBuf;

use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::session::{Browser, Tab};
use super::{element, open, page_info, tab_id};
use crate::call::args::lenient::{Flag, Int};
use crate::context::Ctx;
use crate::engine::store::atomic::write_atomic_async;
use crate::error::{ErrorCode, Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "browser_screenshot";
/// Default pixel budget (about 1.2 megapixels: a 1280×800 viewport fits unscaled).
pub const DEFAULT_MAX_PIXELS: u64 = 1_200_000;
/// The tallest capture Chrome renders in one piece, in CSS pixels.
const MAX_SIDE: f64 = 16_384.0;

/// The arguments of `browser_screenshot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Capture the whole scrollable page instead of the viewport.
    pub full_page: Option<Flag>,
    /// Capture only the first element matching this CSS selector.
    pub selector: Option<String>,
    /// Capture only this element (a ref from browser_read_page or browser_find, e.g. e12).
    #[serde(rename = "ref")]
    pub r#ref: Option<String>,
    /// Where to write the PNG, inside the workspace (default `.eddie/screenshots/<time>-tab<N>.png`).
    pub path: Option<String>,
    /// Pixel budget (default 1200000): a larger capture is scaled down to fit.
    pub max_pixels: Option<Int>,
    /// The tab (browser_get_tabs lists them); default: the current tab.
    pub tab_id: Option<Int>,
}

/// A capture.
pub struct Shot {
    /// The PNG, base64.
    pub base64: String,
    /// The PNG bytes.
    pub bytes: Vec<u8>,
    /// Width in pixels.
    pub width: u64,
    /// Height in pixels.
    pub height: u64,
    /// The scale applied (1 = none).
    pub scale: f64,
    /// `viewport`, `fullPage` or `element`.
    pub mode: &'static str,
}

/// What to capture.
pub enum Area {
    /// The viewport.
    Viewport,
    /// The whole page.
    FullPage,
    /// An element's box, in page coordinates.
    Rect(f64, f64, f64, f64),
}

/// Capture `area` of `tab` within `max_pixels`.
pub async fn capture(b: &Browser, tab: &Tab, area: Area, max_pixels: u64) -> Result<Shot> {
    let (x, y, w, h, mode) = match area {
        Area::Rect(x, y, w, h) => (x, y, w, h, "element"),
        Area::Viewport | Area::FullPage => {
            let m = b.conn.call(Some(&tab.session), "Page.getLayoutMetrics", json!({})).await?;
            let vv = &m["cssVisualViewport"];
            if matches!(area, Area::FullPage) {
                let cs = &m["cssContentSize"];
                let w = cs["width"].as_f64().unwrap_or(0.0).max(vv["clientWidth"].as_f64().unwrap_or(0.0));
                let h = cs["height"].as_f64().unwrap_or(0.0).max(vv["clientHeight"].as_f64().unwrap_or(0.0));
                (0.0, 0.0, w, h.min(MAX_SIDE), "fullPage")
            } else {
                let f = |k: &str| vv[k].as_f64().unwrap_or(0.0);
                (f("pageX"), f("pageY"), f("clientWidth"), f("clientHeight"), "viewport")
            }
        }
    };
    let (w, h) = (w.floor().max(1.0), h.floor().max(1.0));
    let mut scale = ((max_pixels as f64) / (w * h)).sqrt().min(1.0);
    if h * scale > MAX_SIDE {
        scale = MAX_SIDE / h;
    }
    // The PNG's sides are rounded up: keep their product within the budget.
    while scale > 0.01 && (w * scale).ceil() * (h * scale).ceil() > max_pixels as f64 {
        scale *= 0.998;
    }
    let clip = json!({"x": x, "y": y, "width": w, "height": h, "scale": scale});
    let r = b
        .conn
        .call(
            Some(&tab.session),
            "Page.captureScreenshot",
            json!({"format": "png", "clip": clip, "captureBeyondViewport": mode != "viewport", "fromSurface": true}),
        )
        .await?;
    let base64 = r["data"].as_str().unwrap_or("").to_owned();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&base64)
        .map_err(|e| ToolError::internal(format!("the browser sent a screenshot that is not base64: {e}")))?;
    let (width, height) = png_size(&bytes)
        .ok_or_else(|| ToolError::internal("the browser sent a screenshot that is not a PNG"))?;
    Ok(Shot { base64, bytes, width, height, scale, mode })
}

/// Width and height from a PNG's IHDR.
pub fn png_size(b: &[u8]) -> Option<(u64, u64)> {
    if b.len() < 24 || &b[..8] != b"\x89PNG\r\n\x1a\n" || &b[12..16] != b"IHDR" {
        return None;
    }
    let be = |s: &[u8]| u64::from(u32::from_be_bytes([s[0], s[1], s[2], s[3]]));
    Some((be(&b[16..20]), be(&b[20..24])))
}

/// The pixel budget.
pub fn budget(v: Option<Int>) -> Result<u64> {
    match v.map(|v| v.0) {
        None => Ok(DEFAULT_MAX_PIXELS),
        Some(n @ 1024..=MAX_PIXELS) => Ok(n as u64),
        Some(n) => Err(ToolError::invalid(format!(
            "maxPixels must be an integer from 1024 to {MAX_PIXELS} (got {n})"
        ))
        .with_prop("argument", "maxPixels")),
    }
}

/// The largest pixel budget.
const MAX_PIXELS: i64 = 50_000_000;

/// The file to write: `path` inside the workspace, else a fresh name under `.eddie/screenshots/`.
pub fn target(ctx: &Ctx, path: Option<&str>, tab: u32) -> Result<(PathBuf, String)> {
    let rel = match path {
        Some(p) if p.trim().is_empty() => return Err(ToolError::invalid("path must be a non-empty string")),
        Some(p) => p.to_owned(),
        None => format!(".eddie/screenshots/{}-tab{tab}.png", chrono::Utc::now().format("%Y%m%d-%H%M%S%.3f")),
    };
    let r = ctx.workspace.resolve(&rel)?;
    if r.real.is_dir() {
        return Err(ToolError::new(
            ErrorCode::IsADirectory,
            format!("{rel} is a directory; give a file path"),
        ));
    }
    let shown = ctx.workspace.relative(&r.lexical);
    Ok((r.real, if shown.is_empty() { rel } else { shown }))
}

/// The image content of a shot.
pub fn image_json(s: &Shot) -> Value {
    json!({"type": "image", "mimeType": "image/png", "data": s.base64})
}

/// Run `browser_screenshot`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let tab = tab_id(a.tab_id)?;
    let max = budget(a.max_pixels)?;
    let full = Flag::on(a.full_page);
    let which = element::Which::of(a.r#ref.as_deref(), a.selector.as_deref(), None, None)?;
    // The path is checked before the browser is involved.
    let _ = target(ctx, a.path.as_deref(), tab.unwrap_or(1))?;
    let (b, t) = open(ctx, tab).await?;
    let (file, shown) = target(ctx, a.path.as_deref(), t.id)?;
    let area = match &which {
        Some(w) => {
            let el = element::resolve(&b, &t, w).await?;
            let (x, y, w, h) = element::page_rect(&b, &t, &el).await?;
            Area::Rect(x, y, w, h)
        }
        None if full => Area::FullPage,
        None => Area::Viewport,
    };
    let shot = capture(&b, &t, area, max).await?;
    write_atomic_async(file, shot.bytes.clone(), PathBuf::from(&shown)).await?;
    let (url, title) = page_info(&b, &t).await;
    let scaled = if shot.scale < 1.0 { format!(", scaled ×{:.3}", shot.scale) } else { String::new() };
    let content = format!(
        "Screenshot of tab {} ({}, {}×{}{scaled}) saved to {shown} ({} bytes): {url}",
        t.id,
        shot.mode,
        shot.width,
        shot.height,
        shot.bytes.len()
    );
    let data = json!({
        "tabId": t.id,
        "url": url,
        "title": title,
        "path": shown,
        "mode": shot.mode,
        "width": shot.width,
        "height": shot.height,
        "scale": (shot.scale * 1000.0).round() / 1000.0,
        "bytes": shot.bytes.len(),
        "image": image_json(&shot),
    });
    Ok(ToolOutput::new(content, data))
}

/// The outputSchema shared with Stack's `screenshot`.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "browserScreenshot",
    family: "browser",
    effects: crate::spec::Effects::Writes,
    permission: crate::spec::Permission::Moderate,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("browser_screenshot.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_size_reads_ihdr() {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        b.extend_from_slice(&640u32.to_be_bytes());
        b.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(png_size(&b), Some((640, 480)));
        assert_eq!(png_size(b"GIF89a"), None);
    }
}
