//! `project_map`: a depth-limited map of the project's folders and files. The tree is
//! `get_folder_tree_structure`'s engine ([`crate::engine::walk::tree::Tree`]: the same order, paging
//! and entry shapes), with a default depth of three levels, filtered by the shared ignore rules
//! (`.gitignore`, `.ignore`, `.git/info/exclude`; `.git` itself is never listed). Every result
//! counts what was left out (ignore files, dot-entries, dependency directories), so that an
//! agent knows what is not shown. An abort returns what was listed so far, flagged `cancelled`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::args::lenient::{Cap, Flag, Offset};
use crate::code::args;
use crate::context::Ctx;
use crate::engine::walk::tree::{Page, Tree, TreeOptions};
use crate::engine::walk::{GitignoreFilter, IgnoreCounts};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "project_map";
/// Default depth (as `get_folder_tree_structure`'s `maxDepth`: 2 = three levels).
pub const DEFAULT_MAX_DEPTH: usize = 2;
/// Default page of flat entries (as `get_folder_tree_structure`).
const DEFAULT_MAX_ENTRIES: usize = 200;

/// The arguments of `project_map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// Directory to map, relative to the workspace (default ".").
    pub path: Option<String>,
    /// Levels below the first (default 2: three levels).
    pub max_depth: Option<Offset<1000>>,
    /// List dot-entries (default false).
    pub include_hidden: Option<Flag>,
    /// List dependency folders such as node_modules (default false).
    pub include_dependencies: Option<Flag>,
    /// Leave out what .gitignore, .ignore and .git/info/exclude ignore (default true); the count is in ignored.gitignore.
    pub respect_gitignore: Option<Flag>,
    /// Flat entries per page (default 200).
    pub max_entries: Option<Cap<1_000_000>>,
    /// Flat entries to skip (from pagination.nextOffset).
    pub offset: Option<Offset>,
}

/// Run the tool.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = a.path.unwrap_or_else(|| ".".to_owned());
    let max_depth = Offset::or(a.max_depth, DEFAULT_MAX_DEPTH);
    let include_hidden = Flag::or(a.include_hidden, false);
    let include_dependencies = Flag::or(a.include_dependencies, false);
    let respect_gitignore = Flag::or(a.respect_gitignore, true);
    let max_entries = Cap::or(a.max_entries, DEFAULT_MAX_ENTRIES);
    let offset = Offset::or(a.offset, 0);
    let target = args::target(ctx, Some(&path))?;
    let resolved = ctx.workspace.resolve(&path)?;
    let prefix = ctx.workspace.relative(&resolved.lexical);
    let cancel = ctx.cancel.flag();
    crate::blocking(NAME, move || {
        let opts = TreeOptions { max_depth: Some(max_depth as f64), include_hidden, include_dependencies };
        let filter = GitignoreFilter::new(&target.workspace_real, respect_gitignore);
        let tree = Tree::walk_filtered(&resolved.real, &resolved.lexical, opts, &cancel, &filter)?;
        let (gitignored, git_dirs) = filter.counts();
        let (dot_entries, dependencies) = tree.left_out();
        let ignored =
            IgnoreCounts::from_parts((gitignored, dot_entries + git_dirs, 0, dependencies)).to_json();
        let page = Page {
            root_label: &path,
            prefix: &prefix,
            max_entries: max_entries as f64,
            offset: offset as f64,
        };
        let cancelled = tree.cancelled();
        let extra = [("maxDepth", json!(max_depth)), ("ignored", ignored), ("cancelled", json!(cancelled))];
        let mut out = tree.result(&page, &extra)?;
        let mut not_shown = Vec::new();
        if gitignored > 0 {
            not_shown.push(format!("{gitignored} ignored by .gitignore/.ignore (respectGitignore: false)"));
        }
        if dot_entries > 0 {
            not_shown.push(format!("{dot_entries} hidden entries (includeHidden: true)"));
        }
        if dependencies > 0 {
            not_shown.push(format!("{dependencies} dependency directories (includeDependencies: true)"));
        }
        if !not_shown.is_empty() {
            out.content.push_str(&format!("\nNot shown: {}.", not_shown.join(", ")));
        }
        if cancelled {
            out.content
                .push_str("\nCancelled: the map is partial (directories not listed yet show as empty).");
        }
        Ok(out)
    })
    .await
}

/// The `project_map` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "project_map",
    js_name: "projectMap",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("project_map.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::testing::ctx;
    use crate::error::ErrorCode;
    use serde_json::Value;

    async fn call(dir: &std::path::Path, args: Value) -> Result<ToolOutput> {
        (TOOL.run)(&args, &ctx(dir)).await
    }

    #[tokio::test]
    async fn depth_limited_tree_with_counts() {
        let t = tempfile::tempdir().unwrap();
        for f in ["a/b/c/d/e.txt", "a/x.txt", ".env", "node_modules/p/i.js", "README.md"] {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        let data = |o: &ToolOutput| o.data_value().unwrap();
        let o = call(t.path(), json!({"maxDepth": 1})).await.unwrap();
        assert_eq!(data(&o)["pageEntries"], json!(["a/", "a/b/", "a/x.txt", "README.md"]));
        assert_eq!(data(&o)["ignored"], json!({"total": 2, "gitignore": 0, "hidden": 1, "excluded": 1}));
        assert!(o.content.contains("Not shown: 1 hidden"), "{}", o.content);
        let o = call(t.path(), json!({})).await.unwrap();
        assert_eq!(data(&o)["maxDepth"], 2);
        assert!(data(&o)["pageEntries"].as_array().unwrap().iter().any(|e| e == "a/b/c/"));
        assert!(!data(&o)["pageEntries"].as_array().unwrap().iter().any(|e| e == "a/b/c/d/"));
        let o = call(t.path(), json!({"includeHidden": true, "includeDependencies": true})).await.unwrap();
        assert_eq!(data(&o)["ignored"]["total"], 0);
    }

    #[tokio::test]
    async fn gitignore_is_followed_and_counted() {
        let t = tempfile::tempdir().unwrap();
        for f in [
            "src/a.rs",
            "src/gen/out.rs",
            "logs/x.log",
            "keep.log",
            ".git/HEAD",
            "sub/.gitignore",
            "sub/tmp.bin",
        ] {
            let p = t.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        std::fs::write(t.path().join(".gitignore"), "logs/\nsrc/gen/\n*.log\n!keep.log\n").unwrap();
        std::fs::write(t.path().join("sub/.gitignore"), "*.bin\n").unwrap();
        let o = call(t.path(), json!({"includeHidden": true})).await.unwrap();
        let d = o.data_value().unwrap();
        assert_eq!(
            d["pageEntries"],
            json!([".gitignore", "keep.log", "src/", "src/a.rs", "sub/", "sub/.gitignore"])
        );
        assert_eq!(d["ignored"], json!({"total": 4, "gitignore": 3, "hidden": 1, "excluded": 0}));
        assert!(o.content.contains("3 ignored by .gitignore"), "{}", o.content);
        // Below the root, the rules of the directories above still apply.
        let o = call(t.path(), json!({"path": "src"})).await.unwrap();
        assert_eq!(o.data_value().unwrap()["pageEntries"], json!(["src/a.rs"]));
        let o = call(t.path(), json!({"respectGitignore": false})).await.unwrap();
        assert_eq!(o.data_value().unwrap()["ignored"]["gitignore"], 0);
        assert_eq!(o.data_value().unwrap()["pagination"]["totalEntries"], 9);
    }

    #[tokio::test]
    async fn errors() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(
            call(t.path(), json!({"path": "../"})).await.unwrap_err().code(),
            ErrorCode::OutsideWorkspace
        );
        assert_eq!(
            call(t.path(), json!({"maxDepth": 1001})).await.unwrap_err().message(),
            "project_map: `maxDepth` must be an integer from 0 to 1000 (got 1001)"
        );
        // The one value policy: a number as a string is that number.
        assert!(call(t.path(), json!({"maxDepth": "3"})).await.is_ok());
        assert_eq!(call(t.path(), json!({"path": "missing"})).await.unwrap_err().code(), ErrorCode::NotFound);
    }
}
