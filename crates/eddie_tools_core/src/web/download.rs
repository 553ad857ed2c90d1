//! `download`: save a URL to a workspace path. It asks first (through `ctx.confirm_all`),
//! naming the URL and the path; then it streams the body (as served, not decompressed) into a
//! temporary file in the target directory, hashing it (sha256), and renames it into place when
//! complete. The directory is opened by walking down from the workspace root with no symlink
//! followed (`engine::store::safe_dir`), after the confirm; the temp file is made in that open
//! directory and renamed within it, after walking the path once more to check that it still
//! leads there. So a folder swapped for a symlink during the confirm or while the body streams
//! gets nothing written through it (`OUTSIDE_WORKSPACE`). A failure, a cap overrun or an abort
//! leaves nothing behind. The file is written through `engine::store::staged` (on the blocking
//! pool; synced before the rename and the directory after it). Progress goes to
//! `ctx.onOutput`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{chain_json, head};
use crate::call::args::lenient::{Cap, Flag, Seconds};
use crate::context::{Ctx, OutputChunk, Prompt};
use crate::engine::net::{self, Guard, Request};
use crate::engine::store::staged::Staging;
use crate::error::{ErrorCode, Result, ToolError, exists_error};
use crate::output::ToolOutput;

const NAME: &str = "download";
/// Default size cap.
pub const DEFAULT_MAX_BYTES: usize = 100 << 20;
/// Largest size cap.
pub const MAX_MAX_BYTES: usize = 4 << 30;
/// Bytes gathered before one write on the blocking pool.
const WRITE_BATCH: usize = 256 << 10;

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
    pub max_bytes: Option<Cap<{ MAX_MAX_BYTES as u64 }>>,
    /// Total time limit in seconds (default 300, at most 3600).
    pub timeout: Option<Seconds<300_000, 3600>>,
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
    let overwrite = Flag::or(a.overwrite, true);
    let cap = Cap::or(a.max_bytes, DEFAULT_MAX_BYTES);
    let timeout = Seconds::duration(a.timeout);
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
    let Some(name) = real.file_name().map(OsStr::to_os_string) else {
        return Err(ToolError::invalid(format!("{shown} does not name a file")));
    };
    let dir: PathBuf =
        real.parent().map(Path::to_path_buf).unwrap_or_else(|| ctx.workspace.root().to_path_buf());

    let replaces = if exists { ", replacing the existing file" } else { "" };
    let prompt = Prompt::action(format!("Download {url} to {shown} (at most {cap} bytes{replaces})"));
    if !ctx.confirm_all(vec![prompt]).await? {
        return Ok(ToolOutput::new(
            format!("Download of {url} to {shown} cancelled by user; nothing written."),
            json!({"url": url.as_str(), "path": shown, "downloaded": false, "cancelled": true, "size": 0, "sha256": null}),
        ));
    }

    let mut staging: Option<Staging> = None;
    let done = net::bounded(ctx, timeout, &format!("downloading {url}"), async {
        let mut req = Request::get(url.clone());
        req.decompress = false;
        // Streamed to the file: hyper's growing buffer, fewer reads.
        req.small_reads = false;
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
        // The directory, walked from the workspace root with no symlink followed, after the
        // confirm; made when missing.
        let st = staging
            .insert(Staging::begin(&ctx.workspace, &dir, (".eddie-download-", ".part"), &shown).await?);
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        let total = resp.header("content-length").and_then(|n| n.trim().parse::<u64>().ok());
        let mut next_report: u64 = 1 << 20;
        let mut batch: Vec<u8> = Vec::with_capacity(WRITE_BATCH);
        while let Some(chunk) = resp.chunk().await? {
            size += chunk.len() as u64;
            if size > cap as u64 {
                return Err(net::client::too_large(&resp.url, cap, None));
            }
            hasher.update(&chunk);
            batch.extend_from_slice(&chunk);
            if batch.len() >= WRITE_BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(WRITE_BATCH));
                st.write(full).await?;
            }
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
        st.write(batch).await?;
        Ok((size, format!("{:x}", hasher.finalize()), resp))
    })
    .await;
    let (size, sha, resp) = match done {
        Ok(d) => d,
        Err(e) => {
            if let Some(st) = staging.take() {
                st.discard().await?;
            }
            return Err(e);
        }
    };
    let Some(st) = staging.take() else {
        return Err(ToolError::internal("download finished without a staged file"));
    };
    st.commit(name, overwrite).await?;
    if let Some(f) = progress(ctx, format!("saved {shown}: {size} bytes\n")) {
        f.await;
    }
    let ct = resp.header("content-type");
    let content = format!("Downloaded {url} to {shown}: {size} bytes, sha256 {sha}.");
    Ok(ToolOutput::new(
        content,
        json!({
            "url": url.as_str(), "finalUrl": resp.url.as_str(), "path": shown, "downloaded": true, "cancelled": false,
            "size": size, "sha256": sha, "status": resp.status, "contentType": ct, "redirects": chain_json(&resp.chain),
        }),
    ))
}

/// The `download` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "download",
    js_name: "download",
    family: "web",
    effects: crate::spec::Effects::Confirms,
    permission: crate::spec::Permission::Dangerous,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("download.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
