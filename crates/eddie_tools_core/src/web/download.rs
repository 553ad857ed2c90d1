//! `download`: save a URL to a workspace path. It asks `ctx.confirm` first, naming the URL and
//! the path; then it streams the body (as served, not decompressed) into a temporary file in
//! the target directory, hashing it (sha256), and renames it into place when complete. A
//! failure, a cap overrun or an abort leaves nothing behind. Progress goes to `ctx.onOutput`.

use std::io::Write;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{cap_of, chain_json, head, timeout_of};
use crate::call::args::lenient::{Flag, JsInt};
use crate::context::{Ctx, OutputChunk};
use crate::engine::net::{self, Guard, Request};
use crate::error::{ErrorCode, Result, ToolError, exists_error};
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.download.result.v1";
const NAME: &str = "download";
/// Default size cap.
pub const DEFAULT_MAX_BYTES: usize = 100 << 20;
/// Largest size cap.
pub const MAX_MAX_BYTES: usize = 4 << 30;

/// The arguments of `download`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The http(s) URL to download.
    #[schemars(length(min = 1))]
    pub url: String,
    /// Where to save it, relative to the workspace (also: destination).
    #[schemars(length(min = 1))]
    pub path: String,
    /// Replace an existing file (default true, and the confirm says so); false refuses an existing file with ALREADY_EXISTS.
    pub overwrite: Option<Flag>,
    /// Size cap in bytes (default 100 MiB); a larger body fails with TOO_LARGE and nothing is written.
    pub max_bytes: Option<JsInt>,
    /// Total time limit in seconds (default 300, at most 3600).
    pub timeout: Option<JsInt>,
}

fn progress(ctx: &Ctx, text: String) -> Option<crate::context::BoxFuture<()>> {
    ctx.on_output.as_ref().map(|f| f(OutputChunk { stream: "stderr", text }))
}

/// Run `download`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let url = net::parse_url(&a.url)?;
    if a.path.is_empty() {
        return Err(ToolError::invalid("path must be a non-empty string"));
    }
    let overwrite = a.overwrite.is_none_or(|f| f.0);
    let cap = cap_of("maxBytes", a.max_bytes, DEFAULT_MAX_BYTES, MAX_MAX_BYTES)?;
    let timeout = timeout_of(a.timeout, 300, 3600)?;
    let guard = Guard::for_ctx(ctx);
    guard.precheck(&url)?;
    let target = ctx.workspace.resolve(&a.path)?;
    let real = target.real.clone();
    let shown = a.path.clone();
    let exists = match std::fs::symlink_metadata(&real) {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::new(
                ErrorCode::IsADirectory,
                format!("{shown} is a directory; give a file path"),
            ));
        }
        Ok(_) if !overwrite => return Err(exists_error(&shown, "pass overwrite: true to replace it")),
        Ok(_) => true,
        Err(_) => false,
    };
    if real.file_name().is_none() {
        return Err(ToolError::invalid(format!("{shown} does not name a file")));
    }

    let replaces = if exists { ", replacing the existing file" } else { "" };
    if !ctx.confirm(format!("Download {url} to {shown} (at most {cap} bytes{replaces})")).await? {
        return Ok(ToolOutput::new(
            SCHEMA,
            format!("Download of {url} to {shown} cancelled by user; nothing written."),
            json!({"url": url.as_str(), "path": shown, "downloaded": false, "cancelled": true, "size": 0, "sha256": null}),
        ));
    }

    let dir =
        real.parent().map(std::path::Path::to_path_buf).unwrap_or_else(|| ctx.workspace.root().to_path_buf());
    // The directories this call creates, removed again when it fails (only while empty).
    let missing: Vec<std::path::PathBuf> =
        dir.ancestors().take_while(|d| !d.exists()).map(std::path::Path::to_path_buf).collect();
    let done = net::bounded(ctx, timeout, &format!("downloading {url}"), async {
        let mut req = Request::get(url.clone());
        req.decompress = false;
        let mut resp = net::send(ctx, &guard, req).await?;
        if !(200..300).contains(&resp.status) {
            let body = resp.body_capped(4096).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&body);
            return Err(ToolError::new(
                ErrorCode::HttpStatus,
                format!(
                    "{} answered HTTP {}; nothing written. Body starts: {}",
                    resp.url,
                    resp.status,
                    head(text.trim(), 300)
                ),
            )
            .with_prop("status", resp.status));
        }
        if let Some(len) = resp.header("content-length").and_then(|n| n.trim().parse::<u64>().ok())
            && len > cap as u64
        {
            return Err(net::client::too_large(&resp.url, cap, Some(len)));
        }
        // Inside the workspace (the path was resolved); make its directory after the confirm.
        std::fs::create_dir_all(&dir).map_err(|e| ToolError::fs(&e, "mkdir", Some(&dir)))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".eddie-download-")
            .suffix(".part")
            .tempfile_in(&dir)
            .map_err(|e| ToolError::fs(&e, "open", Some(&dir)))?;
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        let total = resp.header("content-length").and_then(|n| n.trim().parse::<u64>().ok());
        let mut next_report: u64 = 1 << 20;
        while let Some(chunk) = resp.chunk().await? {
            size += chunk.len() as u64;
            if size > cap as u64 {
                return Err(net::client::too_large(&resp.url, cap, None));
            }
            hasher.update(&chunk);
            tmp.write_all(&chunk).map_err(|e| ToolError::fs(&e, "write", Some(tmp.path())))?;
            if size >= next_report {
                next_report = size + (1 << 20);
                let text = match total {
                    Some(t) => format!("downloaded {size} of {t} bytes\n"),
                    None => format!("downloaded {size} bytes\n"),
                };
                if let Some(f) = progress(ctx, text) {
                    f.await;
                }
            }
        }
        tmp.as_file().sync_all().map_err(|e| ToolError::fs(&e, "fsync", Some(tmp.path())))?;
        Ok((tmp, size, format!("{:x}", hasher.finalize()), resp))
    })
    .await;
    let (tmp, size, sha, resp) = match done {
        Ok(d) => d,
        Err(e) => {
            for d in &missing {
                let _ = std::fs::remove_dir(d);
            }
            return Err(e);
        }
    };
    // Nothing can fail past the rename but the rename itself.
    let persisted =
        if overwrite { tmp.persist(&real).map(|_| ()) } else { tmp.persist_noclobber(&real).map(|_| ()) };
    if let Err(e) = persisted {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            return Err(exists_error(&shown, "pass overwrite: true to replace it"));
        }
        return Err(ToolError::fs(&e.error, "rename", Some(&target.lexical)));
    }
    if let Some(f) = progress(ctx, format!("saved {shown}: {size} bytes\n")) {
        f.await;
    }
    let ct = resp.header("content-type");
    let content = format!("Downloaded {url} to {shown}: {size} bytes, sha256 {sha}.");
    Ok(ToolOutput::new(
        SCHEMA,
        content,
        json!({
            "url": url.as_str(), "finalUrl": resp.url.as_str(), "path": shown, "downloaded": true, "cancelled": false,
            "size": size, "sha256": sha, "status": resp.status, "contentType": ct, "redirects": chain_json(&resp.chain),
        }),
    ))
}

/// The `download` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "download",
    js_name: "download",
    family: "web",
    effects: crate::registry::Effects::Confirms,
    permission: crate::registry::Permission::Dangerous,
    aliases: &[],
    definition: include_str!("download.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
