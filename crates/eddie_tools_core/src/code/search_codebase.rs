//! `search_codebase`: one query over the whole codebase, ranked for an agent — where the name
//! is *defined* (tree-sitter symbols) first, then the files that mention the most query words
//! the most. Source files only by default; tests and docs on request. The text search is
//! `engine::search` (as under `grep`); every walk goes through the shared ignore engine.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::args::lenient::{Cap, Flag};
use crate::code::args;
use crate::code::symbols::{self, Lang, MAX_PARSE_BYTES};
use crate::context::Ctx;
use crate::engine::search::{self, Found, Matching};
use crate::engine::walk::{Stop, Target};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "search_codebase";
/// Default cap on files returned.
pub const DEFAULT_MAX_RESULTS: usize = 20;
const CODE: &str = "ts,tsx,mts,cts,js,jsx,mjs,cjs,py,pyi,rs,go,java,kt,kts,scala,c,h,cc,cpp,cxx,hpp,hh,cs,rb,php,swift,m,mm,sh,bash,zsh,lua,r,sql,vue,svelte,dart,ex,exs,erl,hs,ml,clj,json,yaml,yml,toml";
const DOCS: &str = "md,mdx,rst,txt,adoc";
/// Test files and folders (gitignore syntax), left out unless `includeTests`.
const TESTS: &[&str] = &[
    "test/",
    "tests/",
    "__tests__/",
    "__test__/",
    "spec/",
    "*.test.*",
    "*.spec.*",
    "test_*.py",
    "*_test.py",
    "*_test.go",
    "*_test.rs",
];

/// The arguments of `search_codebase`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A name or words (a file matching any word is a hit; files matching more words rank higher): at most 64 words of at most 200 characters each.
    #[schemars(length(min = 1, max = 13_000))]
    pub query: String,
    /// Directory to search, relative to the workspace (default ".").
    pub path: Option<String>,
    /// Also search test files and folders (default false).
    pub include_tests: Option<Flag>,
    /// Also search .md, .mdx, .rst, .txt and .adoc files (default false).
    pub include_docs: Option<Flag>,
    /// Match case (default false).
    pub case_sensitive: Option<Flag>,
    /// Honour .gitignore, .ignore and .git/info/exclude (default true).
    pub respect_gitignore: Option<Flag>,
    /// Include dot-files and dot-directories (default false; .git is never searched).
    pub include_hidden: Option<Flag>,
    /// Search dependency folders too: node_modules, .venv, __pycache__, dist, build, target, vendor, ... (default false, unless path is inside one).
    pub include_dependencies: Option<Flag>,
    /// Most files and definitions returned (default 20 each).
    pub max_results: Option<Cap<10_000>>,
}

/// A definition found: its file, language, symbol and line text.
type Definition = (String, Lang, symbols::Symbol, String);

/// Most distinct words in a query.
const MAX_TERMS: usize = 64;
/// Longest word in a query, in characters.
const MAX_TERM_CHARS: usize = 200;

/// The query's distinct words, in order. A query is a few names or words: more than
/// [`MAX_TERMS`] words, or a word longer than [`MAX_TERM_CHARS`], is refused (it would become
/// one huge alternation that every line of every file is run through).
fn terms_of(query: &str) -> Result<Vec<String>> {
    let mut terms: Vec<String> = Vec::new();
    for t in query.split_whitespace() {
        let chars = t.chars().count();
        if chars > MAX_TERM_CHARS {
            return Err(crate::error::ToolError::invalid(format!(
                "{NAME}: a word of `query` is {chars} characters; give names or words of at most {MAX_TERM_CHARS} characters (use grep to search for long text)"
            )));
        }
        if !terms.iter().any(|x| x == t) {
            terms.push(t.to_owned());
        }
        if terms.len() > MAX_TERMS {
            return Err(crate::error::ToolError::invalid(format!(
                "{NAME}: `query` has more than {MAX_TERMS} distinct words; give the few names or words that matter"
            )));
        }
    }
    Ok(terms)
}

/// The text search: any word, in source files (and docs), tests left out unless asked.
fn search_of(a: &Args, terms: &[String], case_sensitive: bool) -> Result<search::Query> {
    let pattern = terms.iter().map(|t| regex::escape(t)).collect::<Vec<_>>().join("|");
    let exts = if Flag::or(a.include_docs, false) { format!("{CODE},{DOCS}") } else { CODE.to_owned() };
    let mut q =
        search::Query::new(pattern, Matching { case_insensitive: !case_sensitive, ..Default::default() })?;
    q.include = vec![format!("*.{{{exts}}}")];
    if !Flag::or(a.include_tests, false) {
        q.exclude = TESTS.iter().map(|t| (*t).to_owned()).collect();
    }
    q.respect_gitignore = Flag::or(a.respect_gitignore, true);
    q.include_hidden = Flag::or(a.include_hidden, false);
    q.include_dependencies = Flag::get(a.include_dependencies);
    q.max_per_file = 3;
    q.max_line_length = 200;
    Ok(q)
}

/// Definitions whose name contains a query word, in files that matched: parsed on the
/// walker's threads, each taking every n-th file. Also how many files were too big or minified
/// to parse.
fn definitions(
    found: &Found,
    target: &Target,
    stop: &Stop,
    lowered: &[String],
    norm: &(dyn Fn(&str) -> String + Sync),
) -> Result<(Vec<Definition>, usize)> {
    let skipped = AtomicUsize::new(0);
    let n = crate::engine::walk::threads();
    let defs = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|k| {
                let skipped = &skipped;
                scope.spawn(move || {
                    let mut defs = Vec::new();
                    for f in found.files.iter().skip(k).step_by(n) {
                        if stop.should_stop() {
                            break;
                        }
                        let Some(lang) = Lang::of(&f.path) else { continue };
                        let real = target.workspace_real.join(&f.path);
                        if std::fs::metadata(&real).map(|m| m.len()).unwrap_or(u64::MAX) > MAX_PARSE_BYTES {
                            skipped.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        let Ok(src) = std::fs::read(&real) else { continue };
                        if crate::code::scan::minified(&src) {
                            skipped.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        for s in symbols::symbols_until(lang, &src, &|| stop.should_stop()) {
                            let name = norm(&s.name);
                            if lowered.iter().any(|t| name.contains(t.as_str())) {
                                let text = symbols::line_text(&src, s.line, 200);
                                defs.push((f.path.clone(), lang, s, text));
                            }
                        }
                    }
                    defs
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.extend(
                h.join()
                    .map_err(|_| crate::ToolError::internal("a search_codebase parser thread panicked"))?,
            );
        }
        Ok::<_, crate::ToolError>(all)
    })?;
    Ok((defs, skipped.into_inner()))
}

/// Files ranked: those defining an exact name first, then by words covered, then by matches.
/// `(index into found.files, score)`.
fn rank(
    found: &Found,
    defs: &[Definition],
    lowered: &[String],
    norm: &dyn Fn(&str) -> String,
) -> Vec<(usize, usize)> {
    let exact = |s: &symbols::Symbol| lowered.iter().any(|t| norm(&s.name) == *t);
    let mut ranked: Vec<(usize, usize)> = found
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let defines = defs.iter().any(|(p, _, s, _)| *p == f.path && exact(s));
            let text: String =
                f.lines.iter().filter(|l| l.is_match).map(|l| norm(&l.text)).collect::<Vec<_>>().join("\n");
            let covered = lowered
                .iter()
                .filter(|t| text.contains(t.as_str()) || norm(&f.path).contains(t.as_str()))
                .count();
            (i, usize::from(defines) * 1_000_000 + covered * 10_000 + f.matches.min(9_999))
        })
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
}

/// What was searched for and how: the result's fixed parts.
struct Asked {
    query: String,
    path: String,
    include_tests: bool,
    include_docs: bool,
    max_results: usize,
}

/// Build the result.
fn render(
    asked: &Asked,
    found: &Found,
    ranked: &[(usize, usize)],
    defs: &[Definition],
    skipped: usize,
) -> ToolOutput {
    let Asked { query, path, include_tests, include_docs, max_results } = asked;
    let (include_tests, include_docs, max_results) = (*include_tests, *include_docs, *max_results);
    let total_files = found.files.len();
    let mut content = format!(
        "search_codebase {query:?} under {path}: {} definition(s), {total_files} matching file(s) ({} searched{}{}).",
        defs.len(),
        found.searched,
        if include_tests { "" } else { "; tests left out: includeTests: true to add them" },
        if include_docs { "" } else { "; docs left out: includeDocs: true to add them" },
    );
    if found.cancelled {
        content.push_str(" Cancelled: results are partial.");
    } else if found.timed_out {
        content.push_str(" Timed out: results are partial.");
    }
    found.ignored.push_note(&mut content);
    let mut def_json = Vec::new();
    if !defs.is_empty() {
        content.push_str("\n\nDefinitions:");
    }
    for (p, lang, s, text) in defs.iter().take(max_results) {
        let inside = s.container.as_deref().map(|c| format!(" in {c}")).unwrap_or_default();
        content.push_str(&format!("\n  {p}:{} {} {}{inside}", s.line, s.kind, s.name));
        let mut v = s.to_json();
        v["path"] = json!(p);
        v["language"] = json!(lang.name());
        v["text"] = json!(text);
        def_json.push(v);
    }
    let mut files_json = Vec::new();
    if total_files > 0 {
        content.push_str("\n\nFiles:");
    }
    for (i, score) in ranked.iter().take(max_results) {
        let f = &found.files[*i];
        content.push_str(&format!("\n  {} ({} matching lines)", f.path, f.matches));
        let lines: Vec<Value> = f
            .lines
            .iter()
            .filter(|l| l.is_match)
            .map(|l| {
                content.push_str(&format!("\n    {}: {}", l.number, l.text.trim()));
                json!({ "line": l.number, "text": l.text })
            })
            .collect();
        files_json.push(json!({ "path": f.path, "matchCount": f.matches, "score": score, "lines": lines }));
    }
    let data = json!({
        "query": query,
        "path": path,
        "definitions": def_json,
        "totalDefinitions": defs.len(),
        "files": files_json,
        "totalFiles": total_files,
        "truncated": total_files > max_results || defs.len() > max_results,
        "filesSearched": found.searched,
        "skipped": skipped,
        "includeTests": include_tests,
        "includeDocs": include_docs,
        "timedOut": found.timed_out,
        "cancelled": found.cancelled,
        "ignored": found.ignored.to_json(),
    });
    ToolOutput::new(content, data)
}

/// Run the tool.
pub async fn run(mut a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let query = args::non_empty(NAME, "query", std::mem::take(&mut a.query))?;
    let case_sensitive = Flag::or(a.case_sensitive, false);
    let asked = Asked {
        path: a.path.clone().unwrap_or_else(|| ".".to_owned()),
        include_tests: Flag::or(a.include_tests, false),
        include_docs: Flag::or(a.include_docs, false),
        max_results: Cap::or(a.max_results, DEFAULT_MAX_RESULTS),
        query,
    };
    let terms = terms_of(&asked.query)?;
    let q = search_of(&a, &terms, case_sensitive)?;
    let target = args::target(ctx, Some(&asked.path))?;
    let stop = Stop::new(ctx.cancel.flag(), Some(Instant::now() + Duration::from_secs(60)));
    let lowered: Vec<String> =
        terms.iter().map(|t| if case_sensitive { t.clone() } else { t.to_lowercase() }).collect();
    let (found, ranked, defs, skipped) = crate::blocking(NAME, move || {
        let found = search::search(&target, &q, &stop)?;
        let norm = |s: &str| if case_sensitive { s.to_owned() } else { s.to_lowercase() };
        let (mut defs, skipped) = definitions(&found, &target, &stop, &lowered, &norm)?;
        let exact = |s: &symbols::Symbol| lowered.iter().any(|t| norm(&s.name) == *t);
        defs.sort_by_key(|(p, _, s, _)| (!exact(s), p.clone(), s.line));
        let ranked = rank(&found, &defs, &lowered, &norm);
        Ok((found, ranked, defs, skipped))
    })
    .await?;
    Ok(render(&asked, &found, &ranked, &defs, skipped))
}

/// The `search_codebase` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: "search_codebase",
    js_name: "searchCodebase",
    family: "code",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("search_codebase.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::testing::{ctx, ws};
    use crate::error::ErrorCode;

    async fn call(dir: &std::path::Path, args: Value) -> Result<ToolOutput> {
        (TOOL.run)(&args, &ctx(dir)).await
    }

    #[tokio::test]
    async fn a_huge_query_is_refused_quickly_with_what_to_give() {
        let t = ws(&[("src/a.ts", "export const x = 1\n")]);
        let long = "a".repeat(1 << 20);
        let e =
            call(t.path(), json!({"query": long})).await.err().map(|e| (e.code(), e.message().to_owned()));
        assert!(
            matches!(&e, Some((ErrorCode::InvalidArgument, m)) if m.contains("at most 200 characters")),
            "{e:?}"
        );
        let many: Vec<String> = (0..65).map(|i| format!("w{i}")).collect();
        let e = call(t.path(), json!({"query": many.join(" ")})).await.err().map(|e| e.code());
        assert_eq!(e, Some(ErrorCode::InvalidArgument));
        // 64 words (repeats count once) are fine.
        let ok: Vec<String> = (0..64).map(|i| format!("w{i} w{i}")).collect();
        assert!(call(t.path(), json!({"query": ok.join(" ")})).await.is_ok());
    }

    #[tokio::test]
    async fn definitions_first_tests_and_docs_on_request() {
        let t = ws(&[
            ("src/use.ts", "import { GLMClient } from './client'\nnew GLMClient()\nGLMClient.x\n"),
            ("src/client.ts", "export class GLMClient {}\n"),
            ("src/client.test.ts", "new GLMClient()\n"),
            ("docs/api.md", "GLMClient docs\n"),
        ]);
        let o = call(t.path(), json!({"query": "glmclient"})).await.unwrap();
        assert_eq!(o.data["definitions"][0]["name"], "GLMClient");
        assert_eq!(o.data["definitions"][0]["path"], "src/client.ts");
        let files: Vec<&str> =
            o.data["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
        assert_eq!(files, ["src/client.ts", "src/use.ts"], "{}", o.content);
        assert_eq!(o.data["ignored"]["excluded"], 1);
        let o = call(
            t.path(),
            json!({"query": "GLMClient", "includeTests": true, "includeDocs": true, "caseSensitive": true}),
        )
        .await
        .unwrap();
        assert_eq!(o.data["totalFiles"], 4);
    }

    #[tokio::test]
    async fn errors() {
        let t = ws(&[("a.ts", "x")]);
        assert_eq!(call(t.path(), json!({"query": 1})).await.unwrap_err().code(), ErrorCode::InvalidArgument);
        assert_eq!(
            call(t.path(), json!({"query": "x", "path": "/tmp"})).await.unwrap_err().code(),
            ErrorCode::OutsideWorkspace
        );
    }
}
