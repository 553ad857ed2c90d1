//! `list_symbols`: the definitions (classes, functions, methods, interfaces, types, ...) of one
//! source file, or of the source files in a directory (top level only unless `recursive`),
//! from tree-sitter parse trees.

use serde_json::{Value, json};

use crate::code::args;
use crate::code::scan::{self, ScanOptions};
use crate::code::symbols::{self, KINDS, Symbol};
use crate::context::Ctx;
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{Stop, WalkOptions};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.list_symbols.result.v1";
const NAME: &str = "list_symbols";
/// Default cap on files listed.
pub const DEFAULT_MAX_FILES: usize = 200;

/// Read the optional `kind` filter.
pub fn kind_arg(args: &Value, tool: &str) -> Result<Option<String>> {
    let kind = args::opt_str(args, tool, "kind")?;
    if let Some(k) = &kind
        && !KINDS.contains(&k.as_str())
    {
        return Err(ToolError::invalid(format!("{tool}: `kind` must be one of {}", KINDS.join(", "))));
    }
    Ok(kind)
}

/// Run the tool.
pub async fn run(args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let path = args::req_str(args, NAME, "path")?;
    let recursive = args::bool_or(args, NAME, "recursive", false)?;
    let kind = kind_arg(args, NAME)?;
    let include = Includes::new(&args::glob_list(args, NAME, "include")?, false)?;
    let walk = WalkOptions {
        respect_gitignore: args::bool_or(args, NAME, "respectGitignore", true)?,
        include_hidden: args::bool_or(args, NAME, "includeHidden", false)?,
        max_depth: if recursive { None } else { Some(1) },
        ..Default::default()
    };
    let max_files = args::cap(args, NAME, "maxFiles", 1_000_000, DEFAULT_MAX_FILES)?;
    let target = args::target(ctx, Some(&path))?;
    scan::check_language(&target)?;
    let stop = Stop::new(ctx.cancel.flag(), None);
    let (files, stats) = crate::blocking(NAME, move || {
        let opts = ScanOptions { include: &include, walk, needle: None, needle_ignore_case: false };
        scan::scan(&target, &opts, &stop, |_, lang, src, stop| {
            let mut syms = symbols::symbols_until(lang, src, &|| stop.should_stop());
            if let Some(k) = &kind {
                syms.retain(|s| symbols::kind_matches(k, s.kind));
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
    Ok(ToolOutput::new(SCHEMA, content, data))
}

/// `  method start (line 10, in Engine)`.
pub fn describe(s: &Symbol) -> String {
    let indent = if s.container.is_some() { "    " } else { "  " };
    format!("{indent}{} {} (line {})", s.kind, s.name, s.line)
}

/// The `list_symbols` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: "list_symbols",
    js_name: "listSymbols",
    family: "code",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("list_symbols.json"),
    input: None,
    run: |args, ctx| Box::pin(run(args, ctx)),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::testing::{ctx, ws};
    use crate::error::ErrorCode;

    async fn call(dir: &std::path::Path, args: Value) -> Result<ToolOutput> {
        run(&args, &ctx(dir)).await
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
}
