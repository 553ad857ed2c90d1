//! The `code` family: search and code navigation for agents — `grep`, `glob`, the tree-sitter
//! symbol tools (`list_symbols`, `find_symbol`, `find_references`, `search_codebase`) and
//! `project_map`. Every walk goes through the one ignore engine ([`crate::engine::walk`]), which honours
//! `.gitignore`, `respectGitignore` and `includeHidden` and counts what it hid. An abort
//! returns what was found so far, flagged `cancelled` (`partial_on_cancel`).

pub mod args;
pub mod find_references;
pub mod find_symbol;
pub mod glob;
pub mod grep;
pub mod list_symbols;
pub mod paging;
pub mod project_map;
pub mod scan;
pub mod search_codebase;
pub mod symbols;
#[cfg(test)]
mod testing;

use crate::spec::Family;

/// The family.
pub const FAMILY: Family = Family {
    name: "code",
    tools: &[
        grep::TOOL,
        glob::TOOL,
        list_symbols::TOOL,
        find_symbol::TOOL,
        find_references::TOOL,
        search_codebase::TOOL,
        project_map::TOOL,
    ],
    contract: None,
    contract_docs: &[],
    // Floyd's spellings (`grep_search`, `search_files`, `find_symbol`, `search_codebase`) and
    // their snake_case forms: each applies to the tools whose schema has the canonical key.
    aliases: &[
        ("filePath", "path"),
        ("filepath", "path"),
        ("file_path", "path"),
        ("filePattern", "include"),
        ("file_pattern", "include"),
        ("excludePatterns", "exclude"),
        ("exclude_patterns", "exclude"),
        ("contextLines", "context"),
        ("context_lines", "context"),
        ("symbolType", "kind"),
        ("symbol_type", "kind"),
        ("case_insensitive", "caseInsensitive"),
        ("include_tests", "includeTests"),
        ("include_docs", "includeDocs"),
        ("include_hidden", "includeHidden"),
        ("respect_gitignore", "respectGitignore"),
        ("max_results", "maxResults"),
    ],
    partial_on_cancel: true,
};

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn an_abort_returns_a_partial_result_flagged_cancelled() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.ts"), "export function hit() {}\nhit()\n").unwrap();
        let ctx = crate::Ctx::new(t.path().to_str().unwrap()).unwrap();
        ctx.cancel.cancel();
        // The tools themselves (the pipeline would refuse a call cancelled before it starts).
        let run = |name: &str| crate::registry::find(name).unwrap().run;
        let calls = [
            ("grep", serde_json::json!({"pattern": "hit"})),
            ("glob", serde_json::json!({"pattern": "*.ts"})),
            ("list_symbols", serde_json::json!({"path": ".", "recursive": true})),
            ("find_symbol", serde_json::json!({"symbol": "hit"})),
            ("find_references", serde_json::json!({"symbol": "hit"})),
            ("search_codebase", serde_json::json!({"query": "hit"})),
        ];
        for (name, args) in calls {
            let out = run(name)(&args, &ctx).await.unwrap();
            assert_eq!(out.data_value().unwrap()["cancelled"], true, "{name}");
            assert!(out.content.contains("Cancelled"), "{name}: {}", out.content);
        }
        // project_map's tree keeps what it listed; cancelled before the start, that is nothing.
        let out = run("project_map")(&serde_json::json!({}), &ctx).await.unwrap();
        let data = out.data_value().unwrap();
        assert_eq!(data["cancelled"], true);
        assert_eq!(data["pagination"]["totalEntries"], 0);
        assert!(out.content.contains("Cancelled"), "{}", out.content);
    }
}
