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

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::call::args::lenient::Cap;
use crate::context::Ctx;
use crate::engine::store::safe_dir::{Kind, SafeDir};
use crate::error::{Result, ToolError};
use crate::output::ToolOutput;

const NAME: &str = "context_load";
const DEFAULT_BUDGET: usize = 32 * 1024;
const MAX_BUDGET: u64 = 1 << 20;

/// The arguments of `context_load`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// A file or folder the work is about: instruction files from its folder up to the repository root apply too (default: the workspace root).
    pub path: Option<String>,
    /// Folders (Stack's project names) whose instruction files to load as well.
    pub projects: Option<Vec<String>>,
    /// The byte budget for the files' text (default 32768, at most 1 MiB).
    pub max_bytes: Option<Cap<MAX_BUDGET>>,
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
    text: Option<String>,
}

fn shown_dir(rel: &str) -> String {
    if rel.is_empty() { "the workspace root".into() } else { format!("{rel}/") }
}

fn join_rel(dir_rel: &str, name: &str) -> String {
    if dir_rel.is_empty() { name.to_owned() } else { format!("{dir_rel}/{name}") }
}

/// A file found: its real path and text (`None`: unreadable).
type Hit = (PathBuf, Option<String>);

/// One walk down the workspace, counting its file-system operations: every folder on the way
/// is opened from its parent (held open, no symlink followed) and every name looked up in the
/// folder held, so the work is linear in the depth. Only a name that is a symlink goes through
/// the workspace resolver (it may lead anywhere inside), and counts for the components the
/// resolver walks.
struct Walk<'a> {
    ctx: &'a Ctx,
    ops: usize,
}

impl Walk<'_> {
    fn read(&mut self, f: std::io::Result<std::fs::File>) -> Option<String> {
        use std::io::Read;
        self.ops += 1;
        let mut bytes = Vec::new();
        f.ok()?.read_to_end(&mut bytes).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Through the workspace resolver (a symlink): a link that leads out is not read.
    fn resolved_file(&mut self, rel: &str) -> Option<Hit> {
        self.ops += rel.split('/').count();
        let r = self.ctx.workspace.resolve(rel).ok()?;
        if !r.real.is_file() {
            return None;
        }
        let text = self.read(std::fs::File::open(&r.real));
        Some((r.real, text))
    }

    /// The regular file `name` in `dir` (whose workspace-relative path is `dir_rel`).
    fn file(&mut self, dir: &SafeDir, dir_rel: &str, name: &str) -> Option<Hit> {
        self.ops += 1;
        match dir.stat(OsStr::new(name)).ok()??.kind {
            Kind::File => {
                self.ops += 1;
                let text = self.read(dir.open_read(OsStr::new(name)));
                Some((dir.path().join(name), text))
            }
            Kind::Symlink => self.resolved_file(&join_rel(dir_rel, name)),
            _ => None,
        }
    }

    /// The subfolder `name` of `dir`, not through a symlink (`Err(true)`: it is a symlink).
    fn child(&mut self, dir: &SafeDir, name: &str) -> std::result::Result<SafeDir, bool> {
        self.ops += 1;
        dir.child(OsStr::new(name))
            .map_err(|_| matches!(dir.stat(OsStr::new(name)), Ok(Some(e)) if e.kind == Kind::Symlink))
    }

    /// The editor rules at a root: `.github/copilot-instructions.md`, `.cursorrules`,
    /// `.cursor/rules/*.mdc` (sorted).
    fn root_files(&mut self, dir: &SafeDir, dir_rel: &str) -> Vec<(String, &'static str, Hit)> {
        let mut out = Vec::new();
        let (copilot, cursorrules) = (AT_ROOT[0], AT_ROOT[1]);
        let hit = match self.child(dir, ".github") {
            Ok(gh) => self.file(&gh, &join_rel(dir_rel, ".github"), "copilot-instructions.md"),
            Err(true) => self.resolved_file(&join_rel(dir_rel, copilot.0)),
            Err(false) => None,
        };
        if let Some(h) = hit {
            out.push((join_rel(dir_rel, copilot.0), copilot.0, h));
        }
        if let Some(h) = self.file(dir, dir_rel, cursorrules.0) {
            out.push((join_rel(dir_rel, cursorrules.0), cursorrules.0, h));
        }
        let rules_rel = join_rel(dir_rel, ".cursor/rules");
        let rules = match self.child(dir, ".cursor") {
            Ok(c) => self.child(&c, "rules"),
            Err(link) => Err(link),
        };
        let names = |names: Vec<std::ffi::OsString>| {
            let mut n: Vec<String> = names
                .into_iter()
                .map(|n| n.to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".mdc"))
                .collect();
            n.sort();
            n
        };
        match rules {
            Ok(r) => {
                self.ops += 1;
                for n in names(r.names().unwrap_or_default()) {
                    if let Some(h) = self.file(&r, &rules_rel, &n) {
                        out.push((join_rel(&rules_rel, &n), ".cursor/rules/*.mdc", h));
                    }
                }
            }
            Err(true) => {
                // A symlinked folder: through the resolver, as a whole.
                self.ops += rules_rel.split('/').count();
                let Ok(r) = self.ctx.workspace.resolve(&rules_rel) else { return out };
                let listed = std::fs::read_dir(&r.real)
                    .map(|d| d.flatten().map(|e| e.file_name()).collect())
                    .unwrap_or_default();
                for n in names(listed) {
                    if let Some(h) = self.resolved_file(&join_rel(&rules_rel, &n)) {
                        out.push((join_rel(&rules_rel, &n), ".cursor/rules/*.mdc", h));
                    }
                }
            }
            Err(false) => {}
        }
        out
    }
}

/// What one folder of the walk holds.
struct Level {
    rel: String,
    git: bool,
    /// `PER_DIR` then `STACK` files, by name.
    files: Vec<(&'static str, Hit)>,
    /// The editor rules (walked at the workspace root and at every folder with a `.git`).
    roots: Vec<(String, &'static str, Hit)>,
}

/// The instruction files for `target` (a real folder inside `ws_real`), in order of
/// precedence, with their text; and how many file-system operations the walk made.
fn discover(ctx: &Ctx, ws_real: &Path, target: &Path) -> (Vec<Found>, usize) {
    let mut walk = Walk { ctx, ops: 1 };
    let Ok(mut dir) = SafeDir::open_root(ws_real) else { return (Vec::new(), walk.ops) };
    let below: Vec<String> = target
        .strip_prefix(ws_real)
        .map(|r| r.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    let mut levels: Vec<Level> = Vec::with_capacity(below.len() + 1);
    let mut rel = String::new();
    let mut next = below.iter();
    loop {
        walk.ops += 1;
        let git = matches!(dir.stat(OsStr::new(".git")), Ok(Some(_)));
        let mut files = Vec::new();
        for (name, _) in PER_DIR.iter().chain(STACK) {
            if let Some(h) = walk.file(&dir, &rel, name) {
                files.push((*name, h));
            }
        }
        let roots = if levels.is_empty() || git { walk.root_files(&dir, &rel) } else { Vec::new() };
        levels.push(Level { rel: rel.clone(), git, files, roots });
        let Some(name) = next.next() else { break };
        // A folder swapped for a symlink since `target` was resolved ends the walk there.
        let Ok(child) = walk.child(&dir, name) else { break };
        dir = child;
        rel = join_rel(&rel, name);
    }
    // The repository root: the nearest folder at or above the target with a .git; the
    // workspace root when there is none. Folders from it down to the target apply, and the
    // workspace root.
    let repo = levels.iter().rposition(|l| l.git).unwrap_or(0);
    let mut chain: Vec<&Level> = levels[repo..].iter().rev().collect();
    if repo != 0 {
        chain.push(&levels[0]);
    }
    let target_rel = levels.last().map(|l| l.rel.clone()).unwrap_or_default();
    let mut found = Vec::new();
    let mut push = |rel: String, (real, text): Hit, why: String, kind: &'static str| {
        found.push(Found { rel, real, why, kind, text });
    };
    for (name, what) in PER_DIR {
        let mut first = true;
        for l in &chain {
            let Some((_, h)) = l.files.iter().find(|(n, _)| n == name) else { continue };
            let why = if *name == "AGENTS.md" && first {
                format!(
                    "{what} in {}: the nearest to {}, it wins for files below it",
                    shown_dir(&l.rel),
                    shown_dir(&target_rel)
                )
            } else if *name == "AGENTS.md" {
                format!(
                    "{what} in {}: applies below it, where nearer AGENTS.md files do not say otherwise",
                    shown_dir(&l.rel)
                )
            } else {
                format!("{what} in {}: applies to files below it", shown_dir(&l.rel))
            };
            first = false;
            push(join_rel(&l.rel, name), h.clone(), why, name);
        }
    }
    let mut roots = vec![&levels[0]];
    if repo != 0 {
        roots.push(&levels[repo]);
    }
    for l in roots {
        for (rel, kind, h) in &l.roots {
            let why = match AT_ROOT.iter().find(|(n, _)| n == kind) {
                Some((_, what)) => format!("{what} for {}", shown_dir(&l.rel)),
                None => format!("Cursor project rule for {}", shown_dir(&l.rel)),
            };
            push(rel.clone(), h.clone(), why, kind);
        }
    }
    for (name, what) in STACK {
        for l in &chain {
            if let Some((_, h)) = l.files.iter().find(|(n, _)| n == name) {
                push(join_rel(&l.rel, name), h.clone(), format!("{what} in {}", shown_dir(&l.rel)), name);
            }
        }
    }
    (found, walk.ops)
}

/// Run `context_load`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let budget = Cap::or(a.max_bytes, DEFAULT_BUDGET);
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
        let mut seen = std::collections::HashSet::new();
        for t in &targets {
            for f in discover(&ctx2, &ws_real, t).0 {
                if seen.insert(f.real.clone()) {
                    all.push(f);
                }
            }
        }
        Ok(all
            .into_iter()
            .map(|mut f| {
                let text = f.text.take();
                (f, text)
            })
            .collect::<Vec<_>>())
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
        content,
        json!({"loaded": loaded, "omitted": omitted, "bytes": used, "budget": budget, "context": context.trim_end()}),
    ))
}

/// The `context_load` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "contextLoad",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("context_load.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// `depth` nested folders `d/d/…`, with an AGENTS.md every 50 levels and a `.git` at 100.
    fn nested(depth: usize) -> (tempfile::TempDir, PathBuf) {
        let ws = tempfile::tempdir().unwrap();
        let mut p = ws.path().to_path_buf();
        std::fs::write(p.join("AGENTS.md"), "root\n").unwrap();
        for i in 1..=depth {
            p.push("d");
            std::fs::create_dir(&p).unwrap();
            if i % 50 == 0 {
                std::fs::write(p.join("AGENTS.md"), format!("level {i}\n")).unwrap();
            }
            if i == 100 {
                std::fs::create_dir(p.join(".git")).unwrap();
            }
        }
        (ws, p)
    }

    fn ops_at(depth: usize) -> (usize, Vec<String>) {
        let (ws, deepest) = nested(depth);
        let ctx = Ctx::new(ws.path().to_str().unwrap()).unwrap();
        let ws_real = ctx.workspace.resolve(".").unwrap().real;
        let target = ctx.workspace.resolve(&deepest.display().to_string()).unwrap().real;
        let (found, ops) = discover(&ctx, &ws_real, &target);
        (ops, found.into_iter().map(|f| f.rel).collect())
    }

    #[test]
    fn the_walk_is_linear_in_depth_450_nested_folders() {
        let (ops_450, found) = ops_at(450);
        let (ops_225, _) = ops_at(225);
        println!("context_load walk: {ops_225} operations for 225 folders, {ops_450} for 450");
        // Nearest AGENTS.md first, from the repository root (level 100) down, plus the root's.
        assert_eq!(found.len(), 8 + 1, "levels 100, 150, …, 450 and the root");
        assert!(found[0].ends_with("AGENTS.md") && found[0].matches("d/").count() == 450, "{}", found[0]);
        assert_eq!(found.last().map(String::as_str), Some("AGENTS.md"));
        // A fixed number of operations per folder: about twice the work for twice the depth,
        // never the square.
        assert!(ops_450 <= 12 * 451, "{ops_450} operations for 450 folders");
        assert!(ops_450 <= 2 * ops_225 + 40, "{ops_225} for 225 folders, {ops_450} for 450");
    }
}
