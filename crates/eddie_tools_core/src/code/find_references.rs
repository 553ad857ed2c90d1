//! `find_references`: every place an identifier is used, across the source files under a
//! path — identifiers, properties, types and fields from tree-sitter parse trees, so mentions
//! in strings and comments and longer names that contain it are not references. Definition
//! sites are marked `isDefinition`.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::args::lenient::{Cap, Flag, Offset, StringOrList};
use crate::code::args;
use crate::code::paging::Page;
use crate::code::scan::{self, ScanOptions};
use crate::code::symbols::{self, Lang};
use crate::context::Ctx;
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{Stop, WalkOptions};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "find_references";
/// Default cap on references returned.
pub const DEFAULT_MAX_RESULTS: usize = 200;

struct Reference {
    line: usize,
    column: usize,
    definition: bool,
    text: String,
}

fn references(lang: Lang, src: &[u8], name: &str, with_definitions: bool, stop: &Stop) -> Vec<Reference> {
    let Some(tree) = symbols::parse_until(lang, src, &|| stop.should_stop()) else { return Vec::new() };
    let defs: Vec<(usize, usize)> = symbols::symbols_in(lang, &tree, src)
        .into_iter()
        .filter(|s| s.name == name)
        .map(|s| (s.line, s.column))
        .collect();
    symbols::occurrences(&tree, src, name)
        .into_iter()
        .map(|o| Reference {
            definition: defs.contains(&(o.line, o.column)),
            text: symbols::line_text(src, o.line, 300),
            line: o.line,
            column: o.column,
        })
        .filter(|r| with_definitions || !r.definition)
        .collect()
}

/// The arguments of `find_references`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The identifier.
    pub symbol: String,
    /// File or directory to search, relative to the workspace (default ".").
    pub path: Option<String>,
    /// Also list the definition sites (default true).
    pub include_definitions: Option<Flag>,
    /// Only these files (globs, as grep's include).
    pub include: Option<StringOrList>,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: Option<Flag>,
    /// Include dot-files and dot-directories (default false; .git is never searched).
    pub include_hidden: Option<Flag>,
    /// Search dependency folders too: node_modules, .venv, __pycache__, dist, build, target, vendor, ... (default false, unless path is inside one).
    pub include_dependencies: Option<Flag>,
    /// Most references returned (default 200).
    pub max_results: Option<Cap<1_000_000>>,
    /// References to skip (from pagination.nextOffset).
    pub offset: Option<Offset>,
}

/// Run the tool.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let name = args::non_empty(NAME, "symbol", a.symbol)?;
    let path = a.path.unwrap_or_else(|| ".".to_owned());
    let with_definitions = Flag::or(a.include_definitions, true);
    let include = Includes::new(&args::globs(a.include), false)?;
    let include_dependencies = Flag::get(a.include_dependencies);
    let walk = WalkOptions {
        respect_gitignore: Flag::or(a.respect_gitignore, true),
        include_hidden: Flag::or(a.include_hidden, false),
        ..Default::default()
    };
    let max_results = Cap::or(a.max_results, DEFAULT_MAX_RESULTS);
    let offset = Offset::or(a.offset, 0);
    let target = args::target(ctx, Some(&path))?;
    scan::check_language(&target)?;
    let walk = WalkOptions {
        skip_dependency_dirs: crate::engine::walk::skips_dependencies(include_dependencies, &target.root.rel),
        ..walk
    };
    let stop = Stop::new(ctx.cancel.flag(), None);
    let n = name.clone();
    let (files, stats) = crate::blocking(NAME, move || {
        let needle = n.clone().into_bytes();
        let opts = ScanOptions { include: &include, walk, needle: Some(&needle), needle_ignore_case: false };
        scan::scan(&target, &opts, &stop, |_, lang, src, stop| {
            let refs = references(lang, src, &n, with_definitions, stop);
            (!refs.is_empty()).then_some(refs)
        })
    })
    .await?;
    let cancelled = ctx.cancel.is_cancelled();
    let total: usize = files.iter().map(|(_, r)| r.len()).sum();
    let mut content = format!("{total} reference(s) to {name:?} in {} file(s) under {path}.", files.len());
    let mut out = Vec::new();
    for (p, r) in
        files.iter().flat_map(|(p, refs)| refs.iter().map(move |r| (p, r))).skip(offset).take(max_results)
    {
        let def = if r.definition { " (definition)" } else { "" };
        content.push_str(&format!("\n{p}:{}:{}{def}  {}", r.line, r.column, r.text.trim()));
        out.push(json!({ "path": p, "line": r.line, "column": r.column, "text": r.text, "isDefinition": r.definition }));
    }
    let page = Page::new(offset, max_results, out.len(), total);
    let (end, has_more) = (page.end(), page.has_more());
    if has_more {
        content.push_str(&format!("\n… {} more: offset {end} (or narrow path)", total - end));
    }
    if cancelled {
        content.push_str("\nCancelled: results are partial.");
    }
    stats.ignored.push_note(&mut content);
    let mut data = json!({
        "symbol": name,
        "path": path,
        "references": out,
        "totalReferences": total,
        "totalFiles": files.len(),
        "truncated": has_more,
        "pagination": page.to_json(),
    });
    stats.append_to(&mut data, cancelled);
    Ok(ToolOutput::new(content, data))
}

/// The `find_references` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "find_references",
    js_name: "findReferences",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("find_references.json"),
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
    async fn references_across_languages() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.ts"), "export const registry = new Map()\nregistry.set('registry', 1) // registry\nconst registryX = 2\n").unwrap();
        std::fs::write(t.path().join("b.py"), "from a import registry\nprint(registry)\n").unwrap();
        std::fs::write(t.path().join("c.md"), "registry\n").unwrap();
        let o = call(t.path(), json!({"symbol": "registry"})).await.unwrap();
        let r = o.data["references"].as_array().unwrap();
        let got: Vec<(&str, u64, bool)> = r
            .iter()
            .map(|x| {
                (
                    x["path"].as_str().unwrap(),
                    x["line"].as_u64().unwrap(),
                    x["isDefinition"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [("a.ts", 1, true), ("a.ts", 2, false), ("b.py", 1, false), ("b.py", 2, false)],
            "{}",
            o.content
        );
        let o = call(t.path(), json!({"symbol": "registry", "includeDefinitions": false, "maxResults": 1}))
            .await
            .unwrap();
        assert_eq!(o.data["totalReferences"], 3);
        assert_eq!(o.data["truncated"], true);
        assert_eq!(o.data["pagination"]["nextOffset"], 1);
        let o = call(t.path(), json!({"symbol": "registry", "includeDefinitions": false, "offset": 1}))
            .await
            .unwrap();
        assert_eq!(o.data["references"][0]["path"], "b.py");
        assert_eq!(o.data["pagination"]["hasMore"], false);
    }

    #[tokio::test]
    async fn errors() {
        let t = tempfile::tempdir().unwrap();
        let e = call(t.path(), json!({"symbol": ""})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let e = call(t.path(), json!({"symbol": "x", "path": "../.."})).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::OutsideWorkspace);
    }
}
