//! `list_symbols`: the definitions (classes, functions, methods, interfaces, types, ...) of one
//! source file, or of the source files in a directory (top level only unless `recursive`),
//! from tree-sitter parse trees.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::args::lenient::{Cap, Flag, StringOrList};
use crate::code::args;
use crate::code::scan::{self, ScanOptions};
use crate::code::symbols::{self, Kind, Symbol};
use crate::context::Ctx;
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{Stop, WalkOptions};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "list_symbols";
/// Default cap on files listed.
pub const DEFAULT_MAX_FILES: usize = 200;

/// The arguments of `list_symbols`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A source file or a directory, relative to the workspace.
    pub path: String,
    /// For a directory: include subdirectories (default false).
    pub recursive: Option<Flag>,
    /// function, method, class, interface, type, enum, module, variable, constant, property, struct, trait, impl, macro or union. class also matches structs, interface traits, function methods.
    pub kind: Option<Kind>,
    /// Only these files (globs, as grep's include).
    pub include: Option<StringOrList>,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: Option<Flag>,
    /// Include dot-files and dot-directories (default false; .git is never searched).
    pub include_hidden: Option<Flag>,
    /// Search dependency folders too: node_modules, .venv, __pycache__, dist, build, target, vendor, ... (default false, unless path is inside one).
    pub include_dependencies: Option<Flag>,
    /// Most files listed (default 200).
    pub max_files: Option<Cap<1_000_000>>,
}

/// Run the tool.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let path = args::non_empty(NAME, "path", a.path)?;
    let recursive = Flag::or(a.recursive, false);
    let kind = a.kind;
    let include = Includes::new(&args::globs(a.include), false)?;
    let include_dependencies = Flag::get(a.include_dependencies);
    let walk = WalkOptions {
        respect_gitignore: Flag::or(a.respect_gitignore, true),
        include_hidden: Flag::or(a.include_hidden, false),
        max_depth: if recursive { None } else { Some(1) },
        ..Default::default()
    };
    let max_files = Cap::or(a.max_files, DEFAULT_MAX_FILES);
    let target = args::target(ctx, Some(&path))?;
    scan::check_language(&target)?;
    let walk = WalkOptions {
        skip_dependency_dirs: crate::engine::walk::skips_dependencies(include_dependencies, &target.root.rel),
        ..walk
    };
    let stop = Stop::new(ctx.cancel.flag(), None);
    let (files, stats) = crate::blocking(NAME, move || {
        let opts = ScanOptions { include: &include, walk, needle: None, needle_ignore_case: false };
        scan::scan(&target, &opts, &stop, |_, lang, src, stop| {
            let mut syms = symbols::symbols_until(lang, src, &|| stop.should_stop());
            if let Some(k) = kind {
                syms.retain(|s| k.matches(s.kind));
            }
            Some((lang, syms))
        })
    })
    .await?;
    let cancelled = ctx.cancel.is_cancelled();
    let total_symbols: usize = files.iter().map(|(_, (_, s))| s.len()).sum();
    let total_files = files.len();
    let mut content = format!(
        "{total_symbols} definition(s) in {total_files} source file(s) under {path}{}.",
        if total_files > max_files {
            format!(" (showing the first {max_files} files)")
        } else {
            String::new()
        }
    );
    if stats.skipped > 0 {
        content.push_str(&format!(" {} files not parsed (over 1 MiB, or minified).", stats.skipped));
    }
    if cancelled {
        content.push_str(" Cancelled: results are partial.");
    }
    stats.ignored.push_note(&mut content);
    let mut out = Vec::new();
    for (rel, (lang, syms)) in files.iter().take(max_files) {
        content.push_str(&format!("\n\n{rel}:"));
        for s in syms {
            content.push_str(&format!("\n{}", describe(s)));
        }
        if syms.is_empty() {
            content.push_str("\n  (no definitions)");
        }
        out.push(json!({
            "path": rel,
            "language": lang.name(),
            "symbols": syms.iter().map(Symbol::to_json).collect::<Vec<_>>(),
        }));
    }
    let data = json!({
        "path": path,
        "files": out,
        "totalFiles": total_files,
        "totalSymbols": total_symbols,
        "truncated": total_files > max_files,
        "skipped": stats.skipped,
        "cancelled": cancelled,
        "ignored": stats.ignored.to_json(),
    });
    Ok(ToolOutput::new(content, data))
}

/// `  method start (line 10, in Engine)`.
pub fn describe(s: &Symbol) -> String {
    let indent = if s.container.is_some() { "    " } else { "  " };
    format!("{indent}{} {} (line {})", s.kind, s.name, s.line)
}

/// The `list_symbols` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "list_symbols",
    js_name: "listSymbols",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    // Alfredo `list_code_definition_names`
    tool_aliases: &["list_code_definition_names"],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("list_symbols.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::testing::{ctx, ws};
    use crate::error::ErrorCode;
    use serde_json::Value;

    async fn call(dir: &std::path::Path, args: Value) -> Result<ToolOutput> {
        (TOOL.run)(&args, &ctx(dir)).await
    }

    #[tokio::test]
    async fn file_and_directory() {
        let t = ws(&[
            ("src/a.py", "class Agent:\n    def run(self): pass\n"),
            ("src/b.ts", "export function go() {}\n"),
            ("src/deep/c.rs", "fn deep() {}\n"),
            ("src/readme.md", "# not code\n"),
        ]);
        let o = call(t.path(), json!({"path": "src/a.py"})).await.unwrap();
        assert_eq!(o.data["files"][0]["symbols"][1]["name"], "run");
        assert_eq!(o.data["files"][0]["symbols"][1]["container"], "Agent");
        assert!(o.content.contains("class Agent (line 1)"), "{}", o.content);
        let o = call(t.path(), json!({"path": "src"})).await.unwrap();
        assert_eq!(o.data["totalFiles"], 2);
        let o = call(t.path(), json!({"path": "src", "recursive": true, "kind": "function"})).await.unwrap();
        assert_eq!(o.data["totalSymbols"], 3, "{}", o.content);
    }

    #[tokio::test]
    async fn errors() {
        let t = ws(&[("a.md", "x")]);
        assert_eq!(call(t.path(), json!({})).await.unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(
            call(t.path(), json!({"path": "a.md"})).await.unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            call(t.path(), json!({"path": "../x"})).await.unwrap_err().code(),
            ErrorCode::OutsideWorkspace
        );
        assert_eq!(call(t.path(), json!({"path": "nope.ts"})).await.unwrap_err().code(), ErrorCode::NotFound);
        assert_eq!(
            call(t.path(), json!({"path": ".", "kind": "widget"})).await.unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }

    #[tokio::test]
    async fn an_unknown_kind_names_the_kinds() {
        let t = ws(&[("a.ts", "x")]);
        let e = call(t.path(), json!({"path": ".", "kind": "widget"})).await.unwrap_err();
        assert_eq!(
            e.message(),
            "list_symbols: `kind` must be one of function, method, class, interface, type, enum, module, variable, constant, property, struct, trait, impl, macro, union"
        );
    }
}
