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
    crate::blocking("get_plan", move || {
        let path = store::locate(&ctx, filename.as_deref())?;
        Ok(store::result(store::read(&path)?, abridged))
    })
    .await
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
    blocking: None,
    definition: "",
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};
