//! `project_scan` (Stack): what a project is made of: its name, file and folder counts (with
//! the ignore engine: `.gitignore`/`.ignore`, hidden entries and dependency folders left out),
//! the languages by lines, its manifests (package.json, pyproject, Cargo.toml, go.mod,
//! Dockerfile, compose, CI configs), `has_git`, and the test, lint and build commands that
//! `detect_project` finds (`engine::project`).

use std::collections::HashMap;
use std::io::Read;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::Ctx;
use crate::engine::project::detect::{commands_json, detect};
use crate::engine::project::languages::language;
use crate::engine::project::manifests::manifests;
use crate::engine::walk::{self, Entry, Root, Stop, Visitor, WalkOptions};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "project_scan";
/// Files larger than this are counted but their lines are not.
const MAX_COUNTED_FILE: u64 = 2 << 20;
/// The walk stops after this many files (the counts say so).
const MAX_FILES: usize = 200_000;

/// The arguments of `project_scan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The project folder, relative to the workspace (default: the workspace root).
    pub path: Option<String>,
}

#[derive(Default)]
struct Tally {
    files: usize,
    dirs: usize,
    langs: HashMap<&'static str, (usize, usize)>,
}

impl Visitor for Tally {
    fn visit(&mut self, e: &Entry<'_>, stop: &Stop) -> bool {
        if e.is_dir {
            self.dirs += 1;
            return true;
        }
        self.files += 1;
        if self.files > MAX_FILES {
            stop.quit();
            return false;
        }
        let name = e.rel.rsplit('/').next().unwrap_or(e.rel);
        if let Some(lang) = language(name) {
            let lines = count_lines(e.path);
            let slot = self.langs.entry(lang).or_default();
            slot.0 += 1;
            slot.1 += lines;
        }
        true
    }
}

fn count_lines(p: &std::path::Path) -> usize {
    let Ok(f) = std::fs::File::open(p) else { return 0 };
    if f.metadata().map(|m| m.len() > MAX_COUNTED_FILE).unwrap_or(true) {
        return 0;
    }
    let mut buf = Vec::new();
    if f.take(MAX_COUNTED_FILE).read_to_end(&mut buf).is_err() {
        return 0;
    }
    if buf.contains(&0) {
        return 0;
    }
    let n = memchr::memchr_iter(b'\n', &buf).count();
    if buf.last().is_some_and(|b| *b != b'\n') { n + 1 } else { n }
}

/// Count the files, folders and lines per language below `root` (blocking); also whether the
/// count stopped at [`MAX_FILES`].
fn tally(
    ws_real: &std::path::Path,
    root: &Root,
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<(Tally, bool)> {
    let opts = WalkOptions {
        respect_gitignore: true,
        include_hidden: false,
        skip_dependency_dirs: true,
        visit_dirs: true,
        ..Default::default()
    };
    let stop = Stop::new(cancel, None);
    let (visitors, _) = walk::walk(ws_real, root, &opts, &stop, Tally::default)?;
    let mut t = Tally::default();
    for v in visitors {
        t.files += v.files;
        t.dirs += v.dirs;
        for (k, (f, l)) in v.langs {
            let s = t.langs.entry(k).or_default();
            s.0 += f;
            s.1 += l;
        }
    }
    Ok((t, stop.quitted() && !stop.cancelled()))
}

/// Run `project_scan`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let given = a.path.filter(|p| !p.is_empty()).unwrap_or_else(|| ".".into());
    let r = ctx.workspace.resolve(&given)?;
    let ws_real = ctx.workspace.resolve(".")?.real;
    let rel = ctx.workspace.relative(&r.lexical);
    let (dir, path, cancel) = (r.real.clone(), ctx.env_var("PATH"), ctx.cancel.flag());
    let (tally, found, truncated, project) = crate::blocking(NAME, move || {
        let (t, truncated) = tally(&ws_real, &Root { real: dir.clone(), rel }, cancel)?;
        // The project types and commands, as `detect_project` finds them.
        let project = dir.is_dir().then(|| detect(&dir, path.as_deref()));
        Ok((t, manifests(&dir), truncated, project))
    })
    .await?;
    ctx.cancel.check()?;
    let detected = project
        .map_or(Value::Null, |p| json!({"name": p.name, "types": p.types, "commands": commands_json(&p)}));
    let mut langs: Vec<(&str, usize, usize)> = tally.langs.iter().map(|(k, (f, l))| (*k, *f, *l)).collect();
    langs.sort_by(|x, y| y.2.cmp(&x.2).then(y.1.cmp(&x.1)).then(x.0.cmp(y.0)));
    let total_lines: usize = langs.iter().map(|l| l.2).sum();
    let languages: Vec<Value> = langs
        .iter()
        .map(|(k, f, l)| {
            let pct =
                if total_lines == 0 { 0.0 } else { (*l as f64 * 1000.0 / total_lines as f64).round() / 10.0 };
            json!({"language": k, "files": f, "lines": l, "percent": pct})
        })
        .collect();
    let has = |n: &str| found.iter().any(|(p, _)| p == n);
    let has_git = r.real.join(".git").exists();
    let name = detected
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| r.real.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let commands = detected.get("commands").cloned().unwrap_or_else(|| json!({}));
    let mut content = format!(
        "{name}: {} files, {} folders{}{}",
        tally.files,
        tally.dirs,
        if has_git { ", git repository" } else { "" },
        if truncated { " (counting stopped early)" } else { "" }
    );
    if !languages.is_empty() {
        let top: Vec<String> = langs.iter().take(8).map(|(k, _, l)| format!("{k} {l}")).collect();
        content.push_str(&format!("\nLanguages by lines: {}", top.join(", ")));
    }
    if !found.is_empty() {
        content.push_str(&format!(
            "\nManifests: {}",
            found.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(m) = commands.as_object() {
        for (k, v) in m {
            if let Some(c) = v.get("command").and_then(Value::as_str) {
                content.push_str(&format!("\n  {k:<10} {c}"));
            }
        }
    }
    Ok(ToolOutput::new(
        content,
        json!({
            "name": name,
            "path": if given == "." { ".".to_owned() } else { given.clone() },
            "files": tally.files,
            "dirs": tally.dirs,
            "truncated": truncated,
            "languages": languages,
            "manifests": found.iter().map(|(p, k)| json!({"path": p, "kind": k})).collect::<Vec<_>>(),
            "has_git": has_git,
            "has_pyproject": has("pyproject.toml"),
            "has_package_json": has("package.json"),
            "has_dockerfile": has("Dockerfile"),
            "types": detected.get("types").cloned().unwrap_or_else(|| json!([])),
            "commands": commands,
        }),
    ))
}

/// The `project_scan` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "projectScan",
    family: "memory",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("project_scan.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};
