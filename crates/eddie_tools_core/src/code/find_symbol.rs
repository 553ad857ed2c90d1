//! `find_symbol`: where a name is defined (class, function, method, interface, variable,
//! constant, ...), across the source files under a path. Files that do not contain the name
//! are never parsed.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::call::args::lenient::{Cap, Flag, Offset, StringOrList};
use crate::code::args;
use crate::code::paging::Page;
use crate::code::scan::{self, ScanOptions};
use crate::code::symbols::{self, Kind, Lang};
use crate::context::Ctx;
use crate::engine::walk::globs::Includes;
use crate::engine::walk::{Stop, WalkOptions};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "find_symbol";
/// Default cap on definitions returned.
pub const DEFAULT_MAX_RESULTS: usize = 50;

/// One definition found, with its file and line text.
#[derive(Debug, Clone)]
pub struct Found {
    /// The symbol.
    pub symbol: symbols::Symbol,
    /// Its file's language.
    pub lang: Lang,
    /// The text of its line.
    pub text: String,
}

/// Definitions in `src` whose name is `name` (exactly, or containing it ignoring case).
pub fn definitions(
    lang: Lang,
    src: &[u8],
    name: &str,
    exact: bool,
    kind: Option<Kind>,
    stop: &Stop,
) -> Vec<Found> {
    let lower = name.to_lowercase();
    symbols::symbols_until(lang, src, &|| stop.should_stop())
        .into_iter()
        .filter(|s| if exact { s.name == name } else { s.name.to_lowercase().contains(&lower) })
        .filter(|s| kind.is_none_or(|k| k.matches(s.kind)))
        .map(|s| Found { text: symbols::line_text(src, s.line, 300), lang, symbol: s })
        .collect()
}

/// The arguments of `find_symbol`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The name to find.
    pub symbol: String,
    /// File or directory to search, relative to the workspace (default ".").
    pub path: Option<String>,
    /// function, method, class, interface, type, enum, module, variable, constant, property, struct, trait, impl, macro or union. class also matches structs, interface traits, function methods.
    pub kind: Option<Kind>,
    /// Exact, case-sensitive name (default true); false: names containing symbol, ignoring case.
    pub exact: Option<Flag>,
    /// Only these files (globs, as grep's include).
    pub include: Option<StringOrList>,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: Option<Flag>,
    /// Include dot-files and dot-directories (default false; .git is never searched).
    pub include_hidden: Option<Flag>,
    /// Search dependency folders too: node_modules, .venv, __pycache__, dist, build, target, vendor, ... (default false, unless path is inside one).
    pub include_dependencies: Option<Flag>,
    /// Most definitions returned (default 50).
    pub max_results: Option<Cap<1_000_000>>,
    /// Definitions to skip (from pagination.nextOffset).
    pub offset: Option<Offset>,
}

/// Run the tool.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let name = args::non_empty(NAME, "symbol", a.symbol)?;
    let path = a.path.unwrap_or_else(|| ".".to_owned());
    let kind = a.kind;
    let exact = Flag::or(a.exact, true);
    let include = Includes::new(&args::globs(a.include), false)?;
    let include_dependencies = Flag::get(a.include_dependencies);
    let walk = WalkOptions {
        respect_gitignore: Flag::or(a.respect_gitignore, true),
        include_hidden: Flag::or(a.include_hidden, false),
        exclude: None,
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
    let (n, k) = (name.clone(), kind);
    let (files, stats) = crate::blocking(NAME, move || {
        let needle = if exact { n.clone().into_bytes() } else { n.to_ascii_lowercase().into_bytes() };
        // The ignore-case prefilter folds ASCII only: a non-ASCII name is matched by parsing.
        let prefilter = exact || n.is_ascii();
        let opts = ScanOptions {
            include: &include,
            walk,
            needle: prefilter.then_some(needle.as_slice()),
            needle_ignore_case: !exact,
        };
        scan::scan(&target, &opts, &stop, |_, lang, src, stop| {
            let found = definitions(lang, src, &n, exact, k, stop);
            (!found.is_empty()).then_some(found)
        })
    })
    .await?;
    let cancelled = ctx.cancel.is_cancelled();
    // Exact names first, then by path and line.
    let mut all: Vec<(String, Found)> =
        files.into_iter().flat_map(|(p, fs)| fs.into_iter().map(move |f| (p.clone(), f))).collect();
    all.sort_by_key(|(p, f)| (f.symbol.name != name, p.clone(), f.symbol.line));
    let total = all.len();
    let mut content = match total {
        0 => format!("No definition of {name:?} found under {path} ({} source files searched).", stats.files),
        _ => format!("{total} definition(s) of {name:?} under {path}:"),
    };
    let mut out = Vec::new();
    for (p, f) in all.iter().skip(offset).take(max_results) {
        let s = &f.symbol;
        let inside = s.container.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
        content.push_str(&format!(
            "\n{p}:{}:{} {} {}{inside}\n    {}",
            s.line,
            s.column,
            s.kind,
            s.name,
            f.text.trim()
        ));
        let mut v = s.to_json();
        v["path"] = json!(p);
        v["language"] = json!(f.lang.name());
        v["text"] = json!(f.text);
        out.push(v);
    }
    let page = Page::new(offset, max_results, out.len(), total);
    let (end, has_more) = (page.end(), page.has_more());
    if has_more {
        content.push_str(&format!("\n… {} more: offset {end}", total - end));
    }
    if cancelled {
        content.push_str("\nCancelled: results are partial.");
    }
    stats.ignored.push_note(&mut content);
    let mut data = json!({
        "symbol": name,
        "path": path,
        "definitions": out,
        "totalDefinitions": total,
        "truncated": has_more,
        "pagination": page.to_json(),
    });
    stats.append_to(&mut data, cancelled);
    Ok(ToolOutput::new(content, data))
}

/// The `find_symbol` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "find_symbol",
    js_name: "findSymbol",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("find_symbol.json"),
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
    async fn finds_definitions_not_mentions() {
        let t = ws(&[
            ("a.ts", "export class Engine {}\nconst e = new Engine()\n"),
            ("b.py", "# Engine in a comment\nclass EngineFactory: pass\n"),
            ("c.rs", "struct Engine;\n"),
        ]);
        let o = call(t.path(), json!({"symbol": "Engine"})).await.unwrap();
        let d = o.data["definitions"].as_array().unwrap();
        assert_eq!(d.len(), 2, "{}", o.content);
        assert_eq!(
            (d[0]["path"].as_str(), d[0]["kind"].as_str(), d[0]["line"].as_u64()),
            (Some("a.ts"), Some("class"), Some(1))
        );
        assert_eq!(d[1]["kind"], "struct");
        let o = call(t.path(), json!({"symbol": "Engine", "kind": "struct"})).await.unwrap();
        assert_eq!(o.data["totalDefinitions"], 1);
        let o = call(t.path(), json!({"symbol": "engine", "exact": false})).await.unwrap();
        assert_eq!(o.data["totalDefinitions"], 3);
        let o = call(t.path(), json!({"symbol": "engine", "exact": false, "maxResults": 2, "offset": 2}))
            .await
            .unwrap();
        assert_eq!(
            (o.data["definitions"].as_array().unwrap().len(), o.data["pagination"]["hasMore"].as_bool()),
            (1, Some(false))
        );
        assert_eq!(o.data["filesParsed"], 3);
        let o = call(t.path(), json!({"symbol": "Nowhere"})).await.unwrap();
        assert_eq!((o.data["totalDefinitions"].as_u64(), o.data["filesParsed"].as_u64()), (Some(0), Some(0)));
    }

    #[tokio::test]
    async fn minified_files_are_skipped_and_counted_unless_named() {
        let min = format!("class Engine{{}};{}\n", "var a=1;".repeat(4000));
        let t = ws(&[("app.min.js", &min), ("src.js", "class Engine {}\n")]);
        let o = call(t.path(), json!({"symbol": "Engine"})).await.unwrap();
        assert_eq!((o.data["totalDefinitions"].as_u64(), o.data["skipped"].as_u64()), (Some(1), Some(1)));
        let o = call(t.path(), json!({"symbol": "Engine", "path": "app.min.js"})).await.unwrap();
        assert_eq!((o.data["totalDefinitions"].as_u64(), o.data["skipped"].as_u64()), (Some(1), Some(0)));
        assert!(!scan::minified(b"short line\n"));
    }

    #[tokio::test]
    async fn errors() {
        let t = ws(&[("a.ts", "x")]);
        assert_eq!(call(t.path(), json!({})).await.unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(
            call(t.path(), json!({"symbol": "x", "path": "/"})).await.unwrap_err().code(),
            ErrorCode::OutsideWorkspace
        );
        assert_eq!(
            call(t.path(), json!({"symbol": "x", "exact": "maybe"})).await.unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        // The one value policy: "false" is false, as in every family.
        assert!(call(t.path(), json!({"symbol": "x", "exact": "false"})).await.is_ok());
    }
}
