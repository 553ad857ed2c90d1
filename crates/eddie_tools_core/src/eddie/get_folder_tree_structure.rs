//! `get_folder_tree_structure` (eddie): the directory tree under a path, with a paged flat
//! view, on the tree engine ([`crate::engine::walk::tree`]).

use serde_json::Value;

use crate::context::Ctx;
use crate::engine::js;
use crate::engine::walk::tree::{Page, Tree, TreeOptions};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// Default page of flat entries.
pub const DEFAULT_MAX_ENTRIES: f64 = 200.0;

/// Run the tool.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let requested = match args.get("path") {
        None | Some(Value::Null) => ".".to_owned(),
        Some(v) => js::string(v),
    };
    let root_label = if requested.is_empty() { ".".to_owned() } else { requested.clone() };
    let resolved = ctx.workspace.resolve(&requested)?;
    let opts = TreeOptions {
        max_depth: js::real_number(args.get("maxDepth")).map(|d| d.floor().max(0.0)),
        include_hidden: js::truthy(args.get("includeHidden")),
        include_dependencies: js::truthy(args.get("includeDependencies")),
    };
    let max_entries =
        js::real_number(args.get("maxEntries")).map_or(DEFAULT_MAX_ENTRIES, |m| m.floor().max(1.0));
    let offset = js::real_number(args.get("offset")).map_or(0.0, |o| o.floor().max(0.0));
    let prefix = ctx.workspace.relative(&resolved.lexical);
    let cancel = ctx.cancel.flag();
    crate::blocking("get_folder_tree_structure", move || {
        let tree = Tree::walk(&resolved.real, &resolved.lexical, opts, &cancel)?;
        if tree.cancelled() {
            return Err(ToolError::cancelled());
        }
        let page = Page { root_label: &root_label, prefix: &prefix, max_entries, offset };
        tree.result(&page, &[])
    })
    .await
}

/// The `get_folder_tree_structure` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "get_folder_tree_structure",
    js_name: "getFolderTreeStructure",
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
