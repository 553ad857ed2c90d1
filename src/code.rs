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
tool_export!(
    "List the definitions in a source file or directory, via tree-sitter (`list_symbols`).",
    list_symbols,
    "list_symbols",
    "args: ListSymbolsArgs, ctx: ToolContext"
);
tool_export!(
    "Find where a symbol is defined (`find_symbol`).",
    find_symbol,
    "find_symbol",
    "args: FindSymbolArgs, ctx: ToolContext"
);
tool_export!(
    "Find every use of an identifier (`find_references`).",
    find_references,
    "find_references",
    "args: FindReferencesArgs, ctx: ToolContext"
);
tool_export!(
    "Ranked search of the codebase: definitions first, then files (`search_codebase`).",
    search_codebase,
    "search_codebase",
    "args: SearchCodebaseArgs, ctx: ToolContext"
);
tool_export!(
    "A depth-limited map of the project's folders and files (`project_map`).",
    project_map,
    "project_map",
    "args: ProjectMapArgs, ctx: ToolContext"
);
