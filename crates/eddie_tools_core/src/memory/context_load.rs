//! `context_load` (Stack): the instruction files an agent should read for the workspace, or
//! for a path in it, each with why it applies, within a byte budget.
//!
//! - Per directory, from the workspace root down to the directory of `path` (or from the
//!   repository root below the workspace root that holds `path`): `AGENTS.md`, `CLAUDE.md`,
//!   `GEMINI.md`, `SOUL.md`, `TOOLS.md`.
//! - At the workspace root (and at a repository root below it): `.github/copilot-instructions.md`,
//!   `.cursorrules`, `.cursor/rules/*.mdc`.
//! - Order of precedence: `AGENTS.md` nearest first (the nearest wins for files below it, the
//!   AGENTS.md convention), then the other agents' files nearest first, then the editor rules,
//!   then `SOUL.md` and `TOOLS.md`. Files are taken in that order while they fit in `maxBytes`;
//!   the others are listed as omitted. Nothing outside the workspace is read.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::args::lenient::JsInt;
use crate::context::Ctx;
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

/// The outputSchema `$id`.
pub const SCHEMA: &str = "eddie.tool.context_load.result.v1";
const NAME: &str = "context_load";
const DEFAULT_BUDGET: i64 = 32 * 1024;
const MAX_BUDGET: i64 = 1 << 20;

/// The arguments of `context_load`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A file or folder the work is about: instruction files from its folder up to the repository root apply too (default: the workspace root).
    pub path: Option<String>,
    /// Folders (Stack's project names) whose instruction files to load as well.
    pub projects: Option<Vec<String>>,
    /// The byte budget for the files' text (default 32768, at most 1 MiB).
    pub max_bytes: Option<JsInt>,
}

fn input_schema() -> Value {
    let mut v = crate::call::args::schema::<Args>();
    if let Some(o) = v.as_object_mut() {
        o.entry("required").or_insert_with(|| json!([]));
    }
    v
}

/// Files looked for in every folder of the chain, in order of precedence.
const PER_DIR: &[(&str, &str)] = &[
    ("AGENTS.md", "agent instructions (AGENTS.md convention)"),
    ("CLAUDE.md", "Claude Code instructions"),
    ("GEMINI.md", "Gemini CLI instructions"),
];
/// Files looked for at a root only.
const AT_ROOT: &[(&str, &str)] = &[
    (".github/copilot-instructions.md", "GitHub Copilot repository instructions"),
    (".cursorrules", "Cursor rules"),
];
/// Stack's workspace files, last.
const STACK: &[(&str, &str)] =
    &[("SOUL.md", "the agent's persona (Stack)"), ("TOOLS.md", "tool notes (Stack)")];

struct Found {
    rel: String,
    real: PathBuf,
    why: String,
    kind: &'static str,
}

fn rel_of(ws_real: &Path, p: &Path) -> String {
    p.strip_prefix(ws_real)
        .map(|r| r.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
        .unwrap_or_default()
}

fn shown_dir(rel: &str) -> String {
    if rel.is_empty() { "the workspace root".into() } else { format!("{rel}/") }
}

/// The folders from `top` down to `dir` (both real, `dir` inside `top`).
fn chain(top: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut d = dir;
    while d != top {
        match d.parent() {
            Some(p) if p.starts_with(top) => {
                out.push(p.to_path_buf());
                d = p;
            }
            _ => break,
        }
    }
    out.reverse();
    out
}

fn is_file(ctx: &Ctx, ws_real: &Path, p: &Path) -> Option<PathBuf> {
    // Through the workspace resolver: a link that leads out is not read.
    let rel = rel_of(ws_real, p);
    let r = ctx.workspace.resolve(&rel).ok()?;
    r.real.is_file().then_some(r.real)
}

fn discover(ctx: &Ctx, ws_real: &Path, target: &Path) -> Vec<Found> {
    // The repository root: the nearest folder at or above the target (within the workspace)
    // with a .git; the workspace root when there is none.
    let mut repo = ws_real.to_path_buf();
    let mut d = Some(target);
    while let Some(x) = d {
        if !x.starts_with(ws_real) {
            break;
        }
        if x.join(".git").exists() {
            repo = x.to_path_buf();
            break;
        }
        d = x.parent();
    }
    let mut dirs = chain(&repo, target);
    if repo != ws_real {
        dirs.insert(0, ws_real.to_path_buf());
    }
    let nearest_first: Vec<&PathBuf> = dirs.iter().rev().collect();
    let target_rel = rel_of(ws_real, target);
    let mut found = Vec::new();
    for (name, what) in PER_DIR {
        let mut first = true;
        for d in &nearest_first {
            let p = d.join(name);
            if let Some(real) = is_file(ctx, ws_real, &p) {
                let drel = rel_of(ws_real, d);
                let why = if *name == "AGENTS.md" && first {
                    format!(
                        "{what} in {}: the nearest to {}, it wins for files below it",
                        shown_dir(&drel),
                        shown_dir(&target_rel)
                    )
                } else if *name == "AGENTS.md" {
                    format!(
                        "{what} in {}: applies below it, where nearer AGENTS.md files do not say otherwise",
                        shown_dir(&drel)
                    )
                } else {
                    format!("{what} in {}: applies to files below it", shown_dir(&drel))
                };
                first = false;
                found.push(Found { rel: rel_of(ws_real, &p), real, why, kind: name });
            }
        }
    }
    let mut roots = vec![ws_real.to_path_buf()];
    if repo != ws_real {
        roots.push(repo.clone());
    }
    for root in &roots {
        let rrel = shown_dir(&rel_of(ws_real, root));
        for (name, what) in AT_ROOT {
            if let Some(real) = is_file(ctx, ws_real, &root.join(name)) {
                found.push(Found {
                    rel: rel_of(ws_real, &root.join(name)),
                    real,
                    why: format!("{what} for {rrel}"),
                    kind: name,
                });
            }
        }
        let rules = root.join(".cursor/rules");
        if let Some(dir) = is_dir(ctx, ws_real, &rules) {
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .map(|r| {
                    r.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.ends_with(".mdc"))
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            for n in names {
                if let Some(real) = is_file(ctx, ws_real, &rules.join(&n)) {
                    found.push(Found {
                        rel: rel_of(ws_real, &rules.join(&n)),
                        real,
                        why: format!("Cursor project rule for {rrel}"),
                        kind: ".cursor/rules/*.mdc",
                    });
                }
            }
        }
    }
    for (name, what) in STACK {
        for d in &nearest_first {
            if let Some(real) = is_file(ctx, ws_real, &d.join(name)) {
                found.push(Found {
                    rel: rel_of(ws_real, &d.join(name)),
                    real,
                    why: format!("{what} in {}", shown_dir(&rel_of(ws_real, d))),
                    kind: name,
                });
            }
        }
    }
    found
}

fn is_dir(ctx: &Ctx, ws_real: &Path, p: &Path) -> Option<PathBuf> {
    let r = ctx.workspace.resolve(&rel_of(ws_real, p)).ok()?;
    r.real.is_dir().then_some(r.real)
}

/// Run `context_load`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let budget = match a.max_bytes.map(|b| b.0) {
        None => DEFAULT_BUDGET,
        Some(n) if n < 1 => return Err(ToolError::invalid("maxBytes must be at least 1")),
        Some(n) => n.min(MAX_BUDGET),
    } as usize;
    let ws_real = ctx.workspace.resolve(".")?.real;
    let mut targets = Vec::new();
    let mut given = vec![a.path.clone().unwrap_or_else(|| ".".into())];
    given.extend(a.projects.clone().unwrap_or_default());
    for p in &given {
        if p.is_empty() {
            return Err(ToolError::invalid("path must not be empty"));
        }
        let r = ctx.workspace.resolve(p)?;
        let dir = if r.real.is_dir() {
            r.real
        } else if r.real.exists() {
            r.real.parent().map(Path::to_path_buf).unwrap_or_else(|| ws_real.clone())
        } else {
            return Err(ToolError::new(crate::error::ErrorCode::NotFound, format!("{p} does not exist"))
                .with_prop("path", p.clone()));
        };
        targets.push(dir);
    }
    let ctx2 = ctx.clone();
    let found = crate::blocking(NAME, move || {
        let mut all: Vec<Found> = Vec::new();
        for t in &targets {
            for f in discover(&ctx2, &ws_real, t) {
                if !all.iter().any(|g| g.real == f.real) {
                    all.push(f);
                }
            }
        }
        let mut out = Vec::new();
        for f in all {
            let text = std::fs::read(&f.real).map(|b| String::from_utf8_lossy(&b).into_owned());
            out.push((f, text.ok()));
        }
        Ok(out)
    })
    .await?;
    let mut used = 0usize;
    let (mut loaded, mut omitted) = (Vec::new(), Vec::new());
    let mut context = String::new();
    for (f, text) in found {
        let Some(text) = text else {
            omitted.push(json!({"path": f.rel, "kind": f.kind, "why": f.why, "bytes": Value::Null, "reason": "unreadable"}));
            continue;
        };
        if used + text.len() > budget {
            omitted.push(json!({"path": f.rel, "kind": f.kind, "why": f.why, "bytes": text.len(), "reason": "over the byte budget"}));
            continue;
        }
        used += text.len();
        context.push_str(&format!("<!-- {}: {} -->\n{}\n", f.rel, f.why, text.trim_end()));
        if !context.ends_with("\n\n") {
            context.push('\n');
        }
        loaded
            .push(json!({"path": f.rel, "kind": f.kind, "why": f.why, "bytes": text.len(), "content": text}));
    }
    let mut content = if loaded.is_empty() {
        "No instruction files (AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md, .cursorrules, .cursor/rules/*.mdc, SOUL.md, TOOLS.md) apply.".to_owned()
    } else {
        context.trim_end().to_owned()
    };
    if !omitted.is_empty() {
        content.push_str(&format!("\n\n[{} files omitted (byte budget {budget}):", omitted.len()));
        for o in &omitted {
            content.push_str(&format!(" {}", o["path"].as_str().unwrap_or("")));
        }
        content.push(']');
    }
    Ok(ToolOutput::new(
        SCHEMA,
        content,
        json!({"loaded": loaded, "omitted": omitted, "bytes": used, "budget": budget, "context": context.trim_end()}),
    ))
}

/// The `context_load` tool.
pub const TOOL: crate::registry::ToolSpec = crate::registry::ToolSpec {
    name: NAME,
    js_name: "contextLoad",
    family: "memory",
    effects: crate::registry::Effects::ReadOnly,
    permission: crate::registry::Permission::None,
    aliases: &[],
    definition: include_str!("context_load.json"),
    input: Some(input_schema),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
