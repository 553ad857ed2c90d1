//! `get_plan`: read the plan (no confirm, no write).

use serde_json::Value;

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::plan::store;
use crate::error::Result;
use crate::output::ToolOutput;

/// Run `get_plan`.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let abridged = js::truthy(args.get("abridged"));
    let filename = store::sanitise_filename(args.get("filename"))?;
    let ctx = ctx.clone();
    crate::blocking("get_plan", move || read(&ctx, filename.as_deref(), abridged)).await
}

fn read(ctx: &Ctx, filename: Option<&str>, abridged: bool) -> Result<ToolOutput> {
    let path = store::locate(ctx, filename)?;
    Ok(store::result(store::read(&path)?, abridged))
}

/// Run `get_plan` on the calling thread: one read of the plan file.
pub fn run_blocking(args: &Value, ctx: &Ctx) -> Result<Option<ToolOutput>> {
    let abridged = js::truthy(args.get("abridged"));
    let filename = store::sanitise_filename(args.get("filename"))?;
    read(ctx, filename.as_deref(), abridged).map(Some)
}

/// The `get_plan` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "get_plan",
    js_name: "getPlan",
    family: "eddie",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: true,
    blocking: Some(run_blocking),
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
