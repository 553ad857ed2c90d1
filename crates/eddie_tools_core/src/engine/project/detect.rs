//! Project detection: the project types of a directory (npm / pnpm / yarn / bun, cargo, go,
//! python, make) and the commands to test, lint, format, type-check, build and install it.
//! The first language found fills the commands; a Makefile fills what is still missing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::engine::process::command::quote;

/// The things a project can be asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// Run the tests.
    Test,
    /// Run the linter.
    Lint,
    /// Format the code.
    Format,
    /// Type-check.
    Typecheck,
    /// Build.
    Build,
    /// Install dependencies.
    Install,
}

impl Action {
    /// Every action, in output order.
    pub const ALL: [Action; 6] =
        [Action::Test, Action::Lint, Action::Format, Action::Typecheck, Action::Build, Action::Install];

    /// Its key in `commands` (`test`, `lint`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Action::Test => "test",
            Action::Lint => "lint",
            Action::Format => "format",
            Action::Typecheck => "typecheck",
            Action::Build => "build",
            Action::Install => "install",
        }
    }
}

/// A detected command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detected {
    /// The argv.
    pub argv: Vec<String>,
    /// Where it came from (`package.json scripts.test`, `Cargo.toml`, `Makefile target lint`).
    pub source: String,
}

/// What `detect` found.
#[derive(Debug, Clone, Default)]
pub struct Project {
    /// Project types, in priority order (`node`, `cargo`, `go`, `python`, `make`).
    pub types: Vec<&'static str>,
    /// The marker files found.
    pub markers: Vec<String>,
    /// `npm`, `pnpm`, `yarn` or `bun` for node projects.
    pub package_manager: Option<&'static str>,
    /// The project's name (package name, crate name, module path, or directory name).
    pub name: String,
    /// The commands per action.
    pub commands: BTreeMap<Action, Detected>,
}

fn exists(dir: &Path, name: &str) -> bool {
    dir.join(name).exists()
}

fn read(dir: &Path, name: &str) -> Option<String> {
    let path = dir.join(name);
    let meta = std::fs::metadata(&path).ok()?;
    if meta.len() > 4 * 1024 * 1024 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// Whether `program` is on `PATH` (of the child environment `path`).
pub fn on_path(program: &str, path: Option<&str>) -> bool {
    // Windows: `;`-separated, and a program is `<name>.exe` (or `.cmd`, `.bat`, `.com`).
    let (default, sep) = if cfg!(windows) { ("", ';') } else { ("/usr/local/bin:/usr/bin:/bin", ':') };
    let names: Vec<String> = if cfg!(windows) {
        ["", ".exe", ".cmd", ".bat", ".com"].iter().map(|x| format!("{program}{x}")).collect()
    } else {
        vec![program.to_owned()]
    };
    path.unwrap_or(default).split(sep).filter(|d| !d.is_empty()).any(|d| {
        names.iter().any(|n| {
            let p = Path::new(d).join(n);
            std::fs::metadata(&p).is_ok_and(|m| m.is_file() && crate::engine::platform::is_executable(&p, &m))
        })
    })
}

/// Detect `dir`. `path` is the child `PATH`, used to choose between tool spellings.
pub fn detect(dir: &Path, path: Option<&str>) -> Project {
    let mut p = Project {
        name: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        ..Project::default()
    };
    node(dir, &mut p);
    cargo(dir, &mut p);
    go(dir, &mut p);
    python(dir, path, &mut p);
    make(dir, &mut p);
    // Not a project type of its own, but worth knowing (Stack's project_scan reports it).
    for extra in ["Dockerfile", "docker-compose.yml", "compose.yaml", ".github/workflows"] {
        if exists(dir, extra) {
            p.markers.push(extra.to_owned());
        }
    }
    p
}

/// Record `words` for `action` unless an earlier finding has it.
fn add(p: &mut Project, action: Action, words: Vec<String>, source: String) {
    p.commands.entry(action).or_insert(Detected { argv: words, source });
}

/// npm / pnpm / yarn / bun: package.json scripts, lockfiles, `packageManager`, eslint, prettier, tsc.
fn node(dir: &Path, p: &mut Project) {
    if let Some(text) = read(dir, "package.json") {
        p.types.push("node");
        p.markers.push("package.json".into());
        let pkg: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if let Some(n) = pkg.get("name").and_then(Value::as_str) {
            p.name = n.to_owned();
        }
        let declared = pkg.get("packageManager").and_then(Value::as_str).unwrap_or("");
        let pm = if declared.starts_with("pnpm") || exists(dir, "pnpm-lock.yaml") {
            "pnpm"
        } else if declared.starts_with("yarn") || exists(dir, "yarn.lock") {
            "yarn"
        } else if declared.starts_with("bun") || exists(dir, "bun.lockb") || exists(dir, "bun.lock") {
            "bun"
        } else {
            "npm"
        };
        p.package_manager = Some(pm);
        for lock in ["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "bun.lock"] {
            if exists(dir, lock) {
                p.markers.push(lock.into());
            }
        }
        let scripts = pkg.get("scripts").and_then(Value::as_object).cloned().unwrap_or_default();
        let script = |names: &[&'static str]| -> Option<&'static str> {
            names.iter().copied().find(|n| {
                scripts.get(*n).and_then(Value::as_str).is_some_and(|s| !s.contains("no test specified"))
            })
        };
        let run = |name: &str| -> Vec<String> {
            match (pm, name) {
                ("bun", _) => argv(&["bun", "run", name]),
                (_, "test") => argv(&[pm, "test"]),
                _ => argv(&[pm, "run", name]),
            }
        };
        let table: [(Action, &[&'static str]); 5] = [
            (Action::Test, &["test"]),
            (Action::Lint, &["lint"]),
            (Action::Format, &["format", "fmt", "prettier"]),
            (Action::Typecheck, &["typecheck", "type-check", "check-types", "tsc", "types"]),
            (Action::Build, &["build"]),
        ];
        for (action, names) in table {
            if let Some(s) = script(names) {
                add(p, action, run(s), format!("package.json scripts.{s}"));
            }
        }
        let any = |names: &[&str]| names.iter().find(|n| exists(dir, n)).map(|n| (*n).to_owned());
        let eslint = any(&[
            "eslint.config.js",
            "eslint.config.mjs",
            "eslint.config.cjs",
            "eslint.config.ts",
            ".eslintrc",
            ".eslintrc.js",
            ".eslintrc.cjs",
            ".eslintrc.json",
            ".eslintrc.yml",
            ".eslintrc.yaml",
        ]);
        if let Some(cfg) = eslint {
            add(p, Action::Lint, argv(&["npx", "--no-install", "eslint", "."]), cfg);
        }
        let prettier = any(&[
            ".prettierrc",
            ".prettierrc.json",
            ".prettierrc.js",
            ".prettierrc.cjs",
            ".prettierrc.yml",
            ".prettierrc.yaml",
            "prettier.config.js",
            "prettier.config.cjs",
            "prettier.config.mjs",
        ]);
        if let Some(cfg) = prettier {
            add(p, Action::Format, argv(&["npx", "--no-install", "prettier", "--write", "."]), cfg);
        }
        if exists(dir, "tsconfig.json") {
            add(
                p,
                Action::Typecheck,
                argv(&["npx", "--no-install", "tsc", "--noEmit"]),
                "tsconfig.json".into(),
            );
        }
        add(p, Action::Install, argv(&[pm, "install"]), format!("package.json ({pm})"));
    }
}

/// cargo: Cargo.toml.
fn cargo(dir: &Path, p: &mut Project) {
    if let Some(text) = read(dir, "Cargo.toml") {
        p.types.push("cargo");
        p.markers.push("Cargo.toml".into());
        if p.types.len() == 1
            && let Some(name) = text.lines().skip_while(|l| l.trim() != "[package]").find_map(|l| {
                l.trim().strip_prefix("name").map(|r| r.trim_start_matches([' ', '=']).trim_matches('"'))
            })
        {
            p.name = name.to_owned();
        }
        let src = "Cargo.toml".to_owned();
        add(p, Action::Test, argv(&["cargo", "test"]), src.clone());
        add(p, Action::Lint, argv(&["cargo", "clippy", "--all-targets"]), src.clone());
        add(p, Action::Format, argv(&["cargo", "fmt", "--all"]), src.clone());
        add(p, Action::Typecheck, argv(&["cargo", "check", "--all-targets"]), src.clone());
        add(p, Action::Build, argv(&["cargo", "build"]), src.clone());
        add(p, Action::Install, argv(&["cargo", "fetch"]), src);
    }
}

/// go: go.mod (and golangci-lint's config).
fn go(dir: &Path, p: &mut Project) {
    if let Some(text) = read(dir, "go.mod") {
        p.types.push("go");
        p.markers.push("go.mod".into());
        if p.types.len() == 1
            && let Some(m) = text.lines().find_map(|l| l.trim().strip_prefix("module "))
        {
            p.name = m.trim().to_owned();
        }
        let src = "go.mod".to_owned();
        add(p, Action::Test, argv(&["go", "test", "-v", "./..."]), src.clone());
        let golangci = [".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"];
        if let Some(cfg) = golangci.iter().find(|n| exists(dir, n)) {
            add(p, Action::Lint, argv(&["golangci-lint", "run"]), (*cfg).to_owned());
        }
        add(p, Action::Lint, argv(&["go", "vet", "./..."]), src.clone());
        add(p, Action::Format, argv(&["gofmt", "-l", "-w", "."]), src.clone());
        add(p, Action::Typecheck, argv(&["go", "vet", "./..."]), src.clone());
        add(p, Action::Build, argv(&["go", "build", "./..."]), src.clone());
        add(p, Action::Install, argv(&["go", "mod", "download"]), src);
    }
}

/// python: pytest / ruff / black / mypy, through uv or poetry when the project uses them. `path` is the child `PATH`.
fn python(dir: &Path, path: Option<&str>, p: &mut Project) {
    let py_markers =
        ["pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "pytest.ini", "tox.ini", "Pipfile"];
    let found: Vec<&str> = py_markers.iter().copied().filter(|m| exists(dir, m)).collect();
    if !found.is_empty() {
        p.types.push("python");
        p.markers.extend(found.iter().map(|m| (*m).to_owned()));
        let pyproject = read(dir, "pyproject.toml").unwrap_or_default();
        if p.types.len() == 1
            && let Some(name) = pyproject
                .lines()
                .skip_while(|l| !matches!(l.trim(), "[project]" | "[tool.poetry]"))
                .find_map(|l| {
                    l.trim().strip_prefix("name").map(|r| r.trim_start_matches([' ', '=']).trim_matches('"'))
                })
        {
            p.name = name.to_owned();
        }
        let (prefix, manager): (Vec<&str>, &str) = if exists(dir, "uv.lock") {
            (vec!["uv", "run"], "uv")
        } else if exists(dir, "poetry.lock") || pyproject.contains("[tool.poetry]") {
            (vec!["poetry", "run"], "poetry")
        } else {
            (vec![], "pip")
        };
        let python = if on_path("python3", path) || !on_path("python", path) { "python3" } else { "python" };
        // `tool args` through the project's runner, or `python -m tool` when it is not on PATH.
        let tool = |name: &str, rest: &[&str]| -> Vec<String> {
            let mut v: Vec<&str> = prefix.clone();
            if prefix.is_empty() && !on_path(name, path) {
                v.extend([python, "-m", name]);
            } else {
                v.push(name);
            }
            v.extend_from_slice(rest);
            argv(&v)
        };
        let src = found[0].to_owned();
        let mut pytest = prefix.clone();
        if prefix.is_empty() {
            pytest.extend([python, "-m", "pytest"]);
        } else {
            pytest.push("pytest");
        }
        add(p, Action::Test, argv(&pytest), src.clone());
        let ruff = pyproject.contains("[tool.ruff") || exists(dir, "ruff.toml") || exists(dir, ".ruff.toml");
        let black = pyproject.contains("[tool.black]");
        add(p, Action::Lint, tool("ruff", &["check", "."]), src.clone());
        if black && !ruff {
            add(p, Action::Format, tool("black", &["."]), "pyproject.toml [tool.black]".into());
        }
        add(p, Action::Format, tool("ruff", &["format", "."]), src.clone());
        add(p, Action::Typecheck, tool("mypy", &["."]), src.clone());
        if !pyproject.is_empty() {
            let mut build = prefix.clone();
            if prefix.is_empty() {
                build.extend([python, "-m", "build"]);
            } else {
                build = if manager == "uv" { vec!["uv", "build"] } else { vec!["poetry", "build"] };
            }
            add(p, Action::Build, argv(&build), "pyproject.toml".into());
        }
        let install = match manager {
            "uv" => argv(&["uv", "sync"]),
            "poetry" => argv(&["poetry", "install"]),
            _ if exists(dir, "requirements.txt") => {
                argv(&[python, "-m", "pip", "install", "-r", "requirements.txt"])
            }
            _ => argv(&[python, "-m", "pip", "install", "-e", "."]),
        };
        add(p, Action::Install, install, src);
    }
}

/// make: the Makefile's targets fill what is still missing.
fn make(dir: &Path, p: &mut Project) {
    let makefile = ["GNUmakefile", "makefile", "Makefile"].into_iter().find(|m| exists(dir, m));
    if let Some(mk) = makefile {
        p.types.push("make");
        p.markers.push(mk.to_owned());
        let targets = read(dir, mk).map(|t| make_targets(&t)).unwrap_or_default();
        let table: [(Action, &[&str]); 6] = [
            (Action::Test, &["test", "tests", "check"]),
            (Action::Lint, &["lint"]),
            (Action::Format, &["format", "fmt"]),
            (Action::Typecheck, &["typecheck", "type-check", "types"]),
            (Action::Build, &["build", "all"]),
            (Action::Install, &["deps", "install-deps", "setup"]),
        ];
        for (action, names) in table {
            if let Some(t) = names.iter().find(|n| targets.iter().any(|t| t == *n)) {
                add(p, action, argv(&["make", t]), format!("{mk} target {t}"));
            }
        }
    }
}

/// The explicit targets of a Makefile (`name:` at the start of a line; no patterns, no
/// special `.TARGETS`, no variable assignments).
fn make_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with(['\t', ' ', '#', '.']) {
            continue;
        }
        let Some((head, rest)) = line.split_once(':') else { continue };
        if rest.starts_with('=') {
            continue;
        }
        for t in head.split_whitespace() {
            if t.chars().all(|c| c.is_ascii_alphanumeric() || "-_/".contains(c))
                && !out.iter().any(|o| o == t)
            {
                out.push(t.to_owned());
            }
        }
    }
    out
}

/// The detected commands as JSON.
pub fn commands_json(p: &Project) -> Value {
    let mut map = serde_json::Map::new();
    for a in Action::ALL {
        let v = p.commands.get(&a).map_or(Value::Null, |d| {
            json!({
                "command": d.argv.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "),
                "argv": d.argv,
                "source": d.source,
            })
        });
        map.insert(a.key().to_owned(), v);
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn cmd(p: &Project, a: Action) -> Option<String> {
        p.commands.get(&a).map(|d| d.argv.join(" "))
    }

    #[test]
    fn node_with_each_package_manager() {
        let pkg = r#"{"name":"web","scripts":{"test":"vitest","lint":"eslint .","fmt":"prettier -w .","build":"vite build"}}"#;
        let d = project(&[("package.json", pkg), ("pnpm-lock.yaml", ""), ("tsconfig.json", "{}")]);
        let p = detect(d.path(), None);
        assert_eq!(
            (p.types.clone(), p.package_manager, p.name.as_str()),
            (vec!["node"], Some("pnpm"), "web")
        );
        assert_eq!(cmd(&p, Action::Test).as_deref(), Some("pnpm test"));
        assert_eq!(cmd(&p, Action::Lint).as_deref(), Some("pnpm run lint"));
        assert_eq!(cmd(&p, Action::Format).as_deref(), Some("pnpm run fmt"));
        assert_eq!(cmd(&p, Action::Typecheck).as_deref(), Some("npx --no-install tsc --noEmit"));
        assert_eq!(cmd(&p, Action::Install).as_deref(), Some("pnpm install"));
        let d = project(&[
            ("package.json", r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#),
            ("yarn.lock", ""),
        ]);
        let p = detect(d.path(), None);
        assert_eq!((p.package_manager, cmd(&p, Action::Test)), (Some("yarn"), None));
        let d = project(&[("package.json", r#"{"scripts":{"test":"jest"}}"#)]);
        assert_eq!(cmd(&detect(d.path(), None), Action::Test).as_deref(), Some("npm test"));
    }

    #[test]
    fn cargo_go_python_make() {
        let d = project(&[
            ("Cargo.toml", "[package]\nname = \"kit\"\n"),
            ("Makefile", "lint:\n\tcargo clippy\nbench: build\n"),
            ("Dockerfile", "FROM x\n"),
        ]);
        let p = detect(d.path(), None);
        assert_eq!((p.types.clone(), p.name.as_str()), (vec!["cargo", "make"], "kit"));
        assert_eq!(p.markers, ["Cargo.toml", "Makefile", "Dockerfile"]);
        assert_eq!(cmd(&p, Action::Lint).as_deref(), Some("cargo clippy --all-targets"));
        let d = project(&[("go.mod", "module example.com/x\n\ngo 1.22\n")]);
        let p = detect(d.path(), None);
        assert_eq!(
            (p.name.as_str(), cmd(&p, Action::Test).as_deref()),
            ("example.com/x", Some("go test -v ./..."))
        );
        let d =
            project(&[("pyproject.toml", "[project]\nname = \"pkg\"\n[tool.ruff]\n"), ("poetry.lock", "")]);
        let p = detect(d.path(), Some("/nonexistent"));
        assert_eq!(cmd(&p, Action::Test).as_deref(), Some("poetry run pytest"));
        assert_eq!(cmd(&p, Action::Lint).as_deref(), Some("poetry run ruff check ."));
        assert_eq!(cmd(&p, Action::Typecheck).as_deref(), Some("poetry run mypy ."));
        assert_eq!(cmd(&p, Action::Install).as_deref(), Some("poetry install"));
        let d = project(&[("requirements.txt", "requests\n")]);
        let p = detect(d.path(), Some("/nonexistent"));
        assert_eq!(cmd(&p, Action::Test).as_deref(), Some("python3 -m pytest"));
        assert_eq!(cmd(&p, Action::Lint).as_deref(), Some("python3 -m ruff check ."));
        assert_eq!(cmd(&p, Action::Install).as_deref(), Some("python3 -m pip install -r requirements.txt"));
        let d = project(&[(
            "Makefile",
            "VAR := 1\n.PHONY: test\ntest: build\n\t./run\nbuild fmt:\n\ttrue\n%.o: %.c\n",
        )]);
        let p = detect(d.path(), None);
        assert_eq!(cmd(&p, Action::Test).as_deref(), Some("make test"));
        assert_eq!(cmd(&p, Action::Format).as_deref(), Some("make fmt"));
        assert_eq!(cmd(&p, Action::Lint), None);
        assert!(detect(project(&[]).path(), None).types.is_empty());
    }
}
