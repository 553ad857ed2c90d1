//! `project_map`: a depth-limited map of the project's folders and files. The tree itself is
//! `get_folder_tree_structure`'s engine (`search::tree`: the same order, paging and entry
//! shapes), with a default depth of three levels; on top of it the shared ignore engine counts
//! what the tree's rules hid (dot-entries, dependency directories), so that an agent knows
//! what is not shown.

use std::time::Instant;

use serde_json::{Value, json};

use super::args;
use super::walk::{self, Root, Stop, Visitor, WalkOptions};
use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.project_map.result.v1";
const TOOL: &str = "project_map";
/// Default depth (as `get_folder_tree_structure`'s `maxDepth`: 2 = three levels).
pub const DEFAULT_MAX_DEPTH: usize = 2;

struct Nothing;
impl Visitor for Nothing {
    fn visit(&mut self, _: &walk::Entry<'_>, _: &Stop) -> bool {
        true
    }
}

/// Run the tool.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path = args::opt_str(args, TOOL, "path")?.unwrap_or_else(|| ".".to_owned());
    let max_depth = args::opt_uint(args, TOOL, "maxDepth", 1000)?.unwrap_or(DEFAULT_MAX_DEPTH);
    let include_hidden = args::bool_or(args, TOOL, "includeHidden", false)?;
    let include_dependencies = args::bool_or(args, TOOL, "includeDependencies", false)?;
    let max_entries = args::opt_uint(args, TOOL, "maxEntries", 1_000_000)?;
    let offset = args::opt_uint(args, TOOL, "offset", u32::MAX as u64)?;
    let mut tree_args = json!({
        "path": path,
        "maxDepth": max_depth,
        "includeHidden": include_hidden,
        "includeDependencies": include_dependencies,
    });
    if let Some(m) = max_entries {
        tree_args["maxEntries"] = json!(m.max(1));
    }
    if let Some(o) = offset {
        tree_args["offset"] = json!(o);
    }
    let tree = crate::search::tree::run(&tree_args, ctx).await?;
    // The same rules, counted (the tree engine lists what it keeps, not what it drops).
    let target = args::target(ctx, Some(&path))?;
    let stop = Stop::new(ctx.cancel.flag(), Some(Instant::now() + std::time::Duration::from_secs(10)));
    let ignored = crate::blocking(TOOL, move || {
        let opts = WalkOptions {
            respect_gitignore: false,
            include_hidden,
            skip_dependency_dirs: !include_dependencies,
            max_depth: Some(max_depth + 1),
            keep_git: true,
            ..Default::default()
        };
        let root = Root { real: target.root.real.clone(), rel: target.root.rel.clone() };
        let (_, counts) = walk::walk(&target.workspace_real, &root, &opts, &stop, || Nothing)?;
        Ok(counts)
    })
    .await?;
    let (_, hidden, deps) = ignored.parts();
    let mut data = tree.data_value()?;
    let mut content = tree.content;
    if hidden + deps > 0 {
        content.push_str(&format!(
            "\nNot shown: {hidden} hidden entries (includeHidden: true), {deps} dependency directories (includeDependencies: true)."
        ));
    }
    data["maxDepth"] = json!(max_depth);
    data["ignored"] = ignored.to_json();
    Ok(ToolOutput::new(SCHEMA, content, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    async fn call(dir: &std::path::Path, args: Value) -> Result<ToolOutput> {
        run(&args, &Ctx::new(dir.to_str().unwrap()).unwrap()).await
    }

    #[tokio::test]
    async fn depth_limited_tree_with_counts() {
        let t = tempfile::tempdir().unwrap();
        for f in ["a/b/c/d/e.txt", "a/x.txt", ".env", "node_modules/p/i.js", "README.md"] {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let o = call(t.path(), json!({"maxDepth": 1})).await.unwrap();
        assert_eq!(o.data["pageEntries"], json!(["a/", "a/b/", "a/x.txt", "README.md"]));
        assert_eq!(o.data["ignored"], json!({"total": 2, "gitignore": 0, "hidden": 1, "excluded": 1}));
        assert!(o.content.contains("Not shown: 1 hidden"), "{}", o.content);
        let o = call(t.path(), json!({})).await.unwrap();
        assert_eq!(o.data["maxDepth"], 2);
        assert!(o.data["pageEntries"].as_array().unwrap().iter().any(|e| e == "a/b/c/"));
        assert!(!o.data["pageEntries"].as_array().unwrap().iter().any(|e| e == "a/b/c/d/"));
        let o = call(t.path(), json!({"includeHidden": true, "includeDependencies": true})).await.unwrap();
        assert_eq!(o.data["ignored"]["total"], 0);
    }

    #[tokio::test]
    async fn errors() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(
            call(t.path(), json!({"path": "../"})).await.unwrap_err().code(),
            ErrorCode::OutsideWorkspace
        );
        assert_eq!(
            call(t.path(), json!({"maxDepth": "3"})).await.unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(call(t.path(), json!({"path": "missing"})).await.unwrap_err().code(), ErrorCode::NotFound);
    }
}
