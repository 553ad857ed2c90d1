//! The `code` family's exports: search and code navigation (see `eddie_tools_core::code`).
//! An AbortSignal makes these tools return what they found so far, flagged `cancelled`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

tool_export!(
    "Search file contents with a regex or literal, ripgrep-fast (`grep`).",
    grep,
    "grep",
    "args: GrepArgs, ctx: ToolContext"
);
tool_export!("Find files by glob pattern (`glob`).", glob, "glob", "args: GlobArgs, ctx: ToolContext");
