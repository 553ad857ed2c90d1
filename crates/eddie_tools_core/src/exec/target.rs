//! What a runner runs on (Stack's semantics): `path` is the target to test, lint, format or
//! check — a file or directory inside a project — and the project is found by walking up from
//! it; `project` names the project when it must be explicit. `pattern` and `verbose` are mapped
//! onto each runner's own flags, and `runner` (Stack's `linter`, `formatter`,
//! `package_manager`) chooses the tool. A runner that cannot take a target, a pattern or
//! verbose refuses it with a message that names the runner, rather than running something else.

use std::path::{Path, PathBuf};

use crate::context::Ctx;
use crate::engine::process::command;
use crate::error::{ErrorCode, Result, ToolError};
use crate::exec::detect_project::Action;

/// Files that make a directory a project.
const MARKERS: &[&str] = &[
    "package.json",
    "Cargo.toml",
    "go.mod",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "pytest.ini",
    "tox.ini",
    "Pipfile",
    "Makefile",
    "makefile",
    "GNUmakefile",
];

/// Where a runner runs and on what.
#[derive(Debug, Clone)]
pub struct Located {
    /// The project directory (real path).
    pub dir: PathBuf,
    /// It, relative to the workspace (`.` for the root).
    pub shown: String,
    /// The target relative to the project (`tests/test_a.py`), `None` for the whole project.
    pub target: Option<String>,
    /// Whether the target is a directory.
    pub target_is_dir: bool,
}

/// The project and target for `path` and `project`.
pub fn locate(path: Option<String>, project: Option<String>, ctx: &Ctx) -> Result<Located> {
    if let Some(project) = project {
        let (dir, shown) = command::resolve_cwd(ctx, Some(&project))?;
        let Some(path) = path else { return Ok(Located { dir, shown, target: None, target_is_dir: true }) };
        let (real, is_dir) = existing(ctx, &path)?;
        let rel = real.strip_prefix(&dir).map_err(|_| {
            ToolError::invalid(format!("path `{path}` is not inside the project `{project}`"))
        })?;
        return Ok(located(dir, shown, rel, is_dir));
    }
    let Some(path) = path else {
        let (dir, shown) = command::resolve_cwd(ctx, None)?;
        return Ok(Located { dir, shown, target: None, target_is_dir: true });
    };
    let (real, is_dir) = existing(ctx, &path)?;
    let start = if is_dir {
        real.clone()
    } else {
        real.parent().map(Path::to_path_buf).unwrap_or_else(|| real.clone())
    };
    let root = crate::workspace::realpath(ctx.workspace.root())
        .unwrap_or_else(|_| ctx.workspace.root().to_path_buf());
    let mut dir = start.clone();
    let found = loop {
        if MARKERS.iter().any(|m| dir.join(m).is_file()) {
            break Some(dir.clone());
        }
        if dir == root || !dir.pop() || !dir.starts_with(&root) {
            break None;
        }
    };
    let dir = found.unwrap_or(start);
    let shown = rel_shown(&root, &dir);
    let rel = real.strip_prefix(&dir).unwrap_or(Path::new("")).to_path_buf();
    Ok(located(dir, shown, &rel, is_dir))
}

fn located(dir: PathBuf, shown: String, rel: &Path, is_dir: bool) -> Located {
    let rel = rel.to_string_lossy().into_owned();
    Located { dir, shown, target: (!rel.is_empty()).then_some(rel), target_is_dir: is_dir }
}

fn rel_shown(root: &Path, dir: &Path) -> String {
    let rel = dir.strip_prefix(root).map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    if rel.is_empty() { ".".into() } else { rel }
}

/// The real path of `path` (which must exist) and whether it is a directory.
fn existing(ctx: &Ctx, path: &str) -> Result<(PathBuf, bool)> {
    let r = ctx.workspace.resolve(path)?;
    match std::fs::metadata(&r.real) {
        Ok(m) => Ok((r.real, m.is_dir())),
        Err(_) => Err(ToolError::new(ErrorCode::NotFound, format!("path does not exist: {path}"))),
    }
}

/// The tools `runner` may name for each action.
pub fn choices(action: Action) -> &'static [&'static str] {
    match action {
        Action::Lint => &["ruff", "pylint", "mypy", "eslint", "biome", "clippy", "golangci-lint"],
        Action::Format => &["ruff", "black", "prettier", "biome", "rustfmt", "gofmt"],
        Action::Install => &["pip", "poetry", "uv", "npm", "pnpm", "yarn", "bun", "cargo", "go"],
        Action::Test => &["pytest", "cargo", "go", "jest", "vitest", "node", "mocha"],
        Action::Typecheck => &["mypy", "tsc", "cargo", "go"],
        Action::Build => &[],
    }
}

/// The command for the tool `name` chosen for `action` in `dir`, and the executable it needs.
pub fn chosen(action: Action, name: &str, dir: &Path, path_var: Option<&str>) -> Result<Vec<String>> {
    if !choices(action).contains(&name) {
        let list = choices(action);
        return Err(ToolError::invalid(if list.is_empty() {
            format!("{} takes no runner choice; pass `command` instead", action.key())
        } else {
            format!("unknown {} tool `{name}`; choose one of: {}", action.key(), list.join(", "))
        }));
    }
    let w = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let npx = |tool: &str, rest: &[&str]| {
        let mut v = vec!["npx", "--no-install", tool];
        v.extend_from_slice(rest);
        w(&v)
    };
    let python = if on_path("python3", path_var) { "python3" } else { "python" };
    let argv = match (action, name) {
        (Action::Lint, "ruff") => w(&["ruff", "check", "."]),
        (Action::Lint, "pylint") => w(&["pylint", "--recursive=y", "."]),
        (Action::Lint | Action::Typecheck, "mypy") => w(&["mypy", "."]),
        (Action::Lint, "eslint") => npx("eslint", &["."]),
        (Action::Lint, "biome") => npx("biome", &["lint", "."]),
        (Action::Lint, "clippy") => w(&["cargo", "clippy", "--all-targets"]),
        (Action::Lint, "golangci-lint") => w(&["golangci-lint", "run", "./..."]),
        (Action::Format, "ruff") => w(&["ruff", "format", "."]),
        (Action::Format, "black") => w(&["black", "."]),
        (Action::Format, "prettier") => npx("prettier", &["--write", "."]),
        (Action::Format, "biome") => npx("biome", &["format", "--write", "."]),
        (Action::Format, "rustfmt") => w(&["cargo", "fmt", "--all"]),
        (Action::Format, "gofmt") => w(&["gofmt", "-l", "-w", "."]),
        (Action::Install, "pip") if dir.join("requirements.txt").is_file() => {
            w(&[python, "-m", "pip", "install", "-r", "requirements.txt"])
        }
        (Action::Install, "pip") => w(&[python, "-m", "pip", "install", "-e", "."]),
        (Action::Install, "poetry") => w(&["poetry", "install"]),
        (Action::Install, "uv") => w(&["uv", "sync"]),
        (Action::Install, pm @ ("npm" | "pnpm" | "yarn" | "bun")) => w(&[pm, "install"]),
        (Action::Install, "cargo") => w(&["cargo", "fetch"]),
        (Action::Install, "go") => w(&["go", "mod", "download"]),
        (Action::Test, "pytest") => w(&[python, "-m", "pytest"]),
        (Action::Test, "cargo") => w(&["cargo", "test"]),
        (Action::Test, "go") => w(&["go", "test", "./..."]),
        (Action::Test, "jest") => npx("jest", &[]),
        (Action::Test, "vitest") => npx("vitest", &["run"]),
        (Action::Test, "node") => w(&["node", "--test"]),
        (Action::Test, "mocha") => npx("mocha", &[]),
        (Action::Typecheck, "tsc") => npx("tsc", &["--noEmit"]),
        (Action::Typecheck, "cargo") => w(&["cargo", "check", "--all-targets"]),
        (Action::Typecheck, "go") => w(&["go", "vet", "./..."]),
        _ => return Err(ToolError::invalid(format!("no {} command for `{name}`", action.key()))),
    };
    let exe = executable(&argv);
    let found = if argv.first().is_some_and(|p| p == "npx") {
        dir.join("node_modules/.bin").join(&exe).is_file() || on_path(&exe, path_var)
    } else {
        on_path(&exe, path_var)
    };
    if !found {
        return Err(ToolError::new(
            ErrorCode::NoRunner,
            format!(
                "{} `{name}` was chosen, but the `{exe}` executable was not found (searched PATH{}). Install it, or pass `command`.",
                action.key(),
                if argv.first().is_some_and(|p| p == "npx") { " and node_modules/.bin" } else { "" }
            ),
        ));
    }
    Ok(argv)
}

/// The executable a command needs (`eslint` for `npx --no-install eslint .`).
fn executable(argv: &[String]) -> String {
    match argv.first().map(String::as_str) {
        Some("npx") => argv.iter().skip(1).find(|a| !a.starts_with('-')).cloned().unwrap_or_default(),
        Some(p) => p.to_owned(),
        None => String::new(),
    }
}

/// Whether `program` (a name, or a path) is an executable on the child's `PATH`.
fn on_path(program: &str, path_var: Option<&str>) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    crate::exec::detect_project::on_path(program, path_var)
}

/// What a command is, for placing a target, a pattern and verbose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pytest,
    Cargo,
    Go,
    Jest,
    Vitest,
    NodeTest,
    Mocha,
    /// A tool that takes paths where the detected command has `.` (ruff, eslint, prettier, mypy, black, gofmt, biome, pylint).
    PathTool,
    /// A package script (`npm test`, `pnpm run lint`): arguments go to the script's tool.
    Script(Option<ScriptTool>),
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScriptTool {
    Jest,
    Vitest,
    NodeTest,
    Mocha,
    Pytest,
}

fn kind(argv: &[String], scripts: &serde_json::Map<String, serde_json::Value>) -> Kind {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    // Skip `uv run`, `poetry run`, `npx --no-install`, `python -m`.
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "uv" | "poetry" if words.get(i + 1) == Some(&"run") => i += 2,
            "npx" => i += 1,
            "--no-install" => i += 1,
            p if (p.starts_with("python") && words.get(i + 1) == Some(&"-m")) => i += 2,
            _ => break,
        }
    }
    let head = words.get(i).copied().unwrap_or_default();
    match head {
        "pytest" => Kind::Pytest,
        "cargo" => Kind::Cargo,
        "go" => Kind::Go,
        "jest" => Kind::Jest,
        "vitest" => Kind::Vitest,
        "mocha" => Kind::Mocha,
        "node" if words.contains(&"--test") => Kind::NodeTest,
        "ruff" | "eslint" | "prettier" | "mypy" | "black" | "gofmt" | "biome" | "pylint"
        | "golangci-lint" => Kind::PathTool,
        "npm" | "pnpm" | "yarn" | "bun" => {
            let name = match words.get(i + 1) {
                Some(&"run") => words.get(i + 2).copied().unwrap_or_default(),
                Some(n) => n,
                None => "",
            };
            let script = scripts.get(name).and_then(serde_json::Value::as_str).unwrap_or_default();
            let tool = if script.contains("vitest") {
                Some(ScriptTool::Vitest)
            } else if script.contains("jest") {
                Some(ScriptTool::Jest)
            } else if script.contains("node --test") || script.contains("node  --test") {
                Some(ScriptTool::NodeTest)
            } else if script.contains("mocha") {
                Some(ScriptTool::Mocha)
            } else if script.contains("pytest") {
                Some(ScriptTool::Pytest)
            } else {
                None
            };
            Kind::Script(tool)
        }
        _ => Kind::Other,
    }
}

/// What to add to the command: the target, the pattern and verbose.
#[derive(Debug, Default)]
pub struct Extras<'a> {
    /// The target relative to the project.
    pub target: Option<&'a str>,
    /// Whether the target is a directory.
    pub target_is_dir: bool,
    /// A test name filter (or, for pytest, a test file glob such as `test_*.py`).
    pub pattern: Option<&'a str>,
    /// Verbose output.
    pub verbose: bool,
}

/// `argv` with the target, the pattern and verbose placed where its runner takes them.
pub fn apply(
    action: Action,
    mut argv: Vec<String>,
    x: &Extras<'_>,
    scripts: &serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<String>> {
    let k = kind(&argv, scripts);
    let runner = argv.iter().filter(|a| !a.starts_with('-')).take(3).cloned().collect::<Vec<_>>().join(" ");
    let refuse = |what: &str| {
        ToolError::invalid(format!(
            "`{runner}` cannot take {what}: drop it, or pass `command` with the runner's own arguments"
        ))
    };
    let is_test = action == Action::Test;
    let mut last = None;
    // The target.
    if let Some(t) = x.target {
        match k {
            Kind::PathTool => replace_dot(&mut argv, t),
            // After every option (node --test takes what follows a file as more files).
            Kind::Pytest | Kind::Jest | Kind::Vitest | Kind::NodeTest | Kind::Mocha => {
                last = Some(t.to_owned())
            }
            Kind::Go => {
                let dir = if x.target_is_dir { t.to_owned() } else { parent(t) };
                let pkg = if dir.is_empty() { "./...".to_owned() } else { format!("./{dir}/...") };
                if !replace_arg(&mut argv, "./...", &pkg) {
                    argv.push(pkg);
                }
            }
            Kind::Cargo if is_test && !x.target_is_dir && t.starts_with("tests/") && t.ends_with(".rs") => {
                let name = t.trim_start_matches("tests/").trim_end_matches(".rs");
                argv.extend(["--test".to_owned(), name.to_owned()]);
            }
            Kind::Script(Some(_)) => {
                separator(&mut argv);
                last = Some(t.to_owned());
            }
            _ => {
                return Err(refuse(&format!(
                    "a target path (`{t}`); run it on the project directory instead"
                )));
            }
        }
    }
    if !is_test {
        if x.verbose {
            match k {
                Kind::PathTool if argv.iter().any(|a| a == "ruff" || a == "mypy" || a == "black") => {
                    argv.push("--verbose".into());
                }
                Kind::Cargo => argv.insert(argv.len().min(2), "--verbose".into()),
                _ => return Err(refuse("`verbose`")),
            }
        }
        if x.pattern.is_some() {
            return Err(refuse("`pattern` (a test name filter)"));
        }
        argv.extend(last);
        return Ok(argv);
    }
    // Test: pattern and verbose.
    let script_tool = match k {
        Kind::Script(t) => t,
        _ => None,
    };
    if let Some(p) = x.pattern {
        let file_glob = p.contains('*') && (p.ends_with(".py") || p.ends_with(".ts") || p.ends_with(".js"));
        match (k, script_tool) {
            (Kind::Pytest, _) | (Kind::Script(_), Some(ScriptTool::Pytest)) if file_glob => {
                separator_if_script(&mut argv, k);
                argv.extend(["-o".into(), format!("python_files={p}")]);
            }
            (Kind::Pytest, _) | (Kind::Script(_), Some(ScriptTool::Pytest)) => {
                separator_if_script(&mut argv, k);
                argv.extend(["-k".into(), p.to_owned()]);
            }
            (Kind::Cargo, _) => argv.insert(argv.len().min(2), p.to_owned()),
            (Kind::Go, _) => argv.extend(["-run".into(), p.to_owned()]),
            (Kind::Jest | Kind::Vitest, _)
            | (Kind::Script(_), Some(ScriptTool::Jest | ScriptTool::Vitest)) => {
                separator_if_script(&mut argv, k);
                argv.extend(["-t".into(), p.to_owned()]);
            }
            (Kind::NodeTest, _) | (Kind::Script(_), Some(ScriptTool::NodeTest)) => {
                separator_if_script(&mut argv, k);
                argv.push(format!("--test-name-pattern={p}"));
            }
            (Kind::Mocha, _) | (Kind::Script(_), Some(ScriptTool::Mocha)) => {
                separator_if_script(&mut argv, k);
                argv.extend(["--grep".into(), p.to_owned()]);
            }
            _ => return Err(refuse("`pattern`")),
        }
    }
    if x.verbose {
        match (k, script_tool) {
            (Kind::Pytest, _) | (Kind::Script(_), Some(ScriptTool::Pytest)) => {
                separator_if_script(&mut argv, k);
                argv.push("-v".into());
            }
            (Kind::Cargo, _) => argv.insert(argv.len().min(2), "--verbose".into()),
            (Kind::Go, _) => {
                if !argv.iter().any(|a| a == "-v") {
                    argv.insert(argv.len().min(2), "-v".into());
                }
            }
            (Kind::Jest, _) | (Kind::Script(_), Some(ScriptTool::Jest)) => {
                separator_if_script(&mut argv, k);
                argv.push("--verbose".into());
            }
            (Kind::Vitest, _) | (Kind::Script(_), Some(ScriptTool::Vitest)) => {
                separator_if_script(&mut argv, k);
                argv.push("--reporter=verbose".into());
            }
            (Kind::NodeTest, _) | (Kind::Script(_), Some(ScriptTool::NodeTest)) => {
                separator_if_script(&mut argv, k);
                argv.push("--test-reporter=spec".into());
            }
            (Kind::Mocha, _) | (Kind::Script(_), Some(ScriptTool::Mocha)) => {
                separator_if_script(&mut argv, k);
                argv.extend(["--reporter".into(), "spec".into()]);
            }
            _ => return Err(refuse("`verbose`")),
        }
    }
    argv.extend(last);
    Ok(argv)
}

fn parent(t: &str) -> String {
    t.rsplit_once('/').map(|(d, _)| d.to_owned()).unwrap_or_default()
}

/// Replace the `.` argument with the target (or add it).
fn replace_dot(argv: &mut Vec<String>, t: &str) {
    if argv.iter().any(|a| a == "./...") {
        let pkg = format!("./{}/...", t.trim_end_matches('/'));
        replace_arg(argv, "./...", &pkg);
    } else if !replace_arg(argv, ".", t) {
        argv.push(t.to_owned());
    }
}

fn replace_arg(argv: &mut [String], from: &str, to: &str) -> bool {
    match argv.iter_mut().rev().find(|a| *a == from) {
        Some(a) => {
            *a = to.to_owned();
            true
        }
        None => false,
    }
}

/// `--` before arguments meant for a package script's tool (npm and pnpm need it; yarn and
/// bun pass arguments through, and take `--` as well).
fn separator(argv: &mut Vec<String>) {
    if !argv.iter().any(|a| a == "--") {
        argv.push("--".into());
    }
}

fn separator_if_script(argv: &mut Vec<String>, k: Kind) {
    if matches!(k, Kind::Script(_)) {
        separator(argv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    fn scripts(test: &str) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("test".into(), test.into());
        m
    }

    #[test]
    fn targets_patterns_and_verbose_land_where_each_runner_takes_them() {
        let none = serde_json::Map::new();
        let x = |target, pattern, verbose| Extras { target, target_is_dir: false, pattern, verbose };
        let py = apply(
            Action::Test,
            s(&["python3", "-m", "pytest"]),
            &x(Some("tests/test_a.py"), Some("login"), true),
            &none,
        )
        .unwrap();
        assert_eq!(py, s(&["python3", "-m", "pytest", "-k", "login", "-v", "tests/test_a.py"]));
        let glob =
            apply(Action::Test, s(&["python3", "-m", "pytest"]), &x(None, Some("test_*.py"), false), &none)
                .unwrap();
        assert_eq!(glob, s(&["python3", "-m", "pytest", "-o", "python_files=test_*.py"]));
        let cargo = apply(
            Action::Test,
            s(&["cargo", "test"]),
            &x(Some("tests/api.rs"), Some("parses"), false),
            &none,
        )
        .unwrap();
        assert_eq!(cargo, s(&["cargo", "test", "parses", "--test", "api"]));
        let go = apply(
            Action::Test,
            s(&["go", "test", "-v", "./..."]),
            &x(Some("pkg/a/a_test.go"), Some("TestA"), false),
            &none,
        )
        .unwrap();
        assert_eq!(go, s(&["go", "test", "-v", "./pkg/a/...", "-run", "TestA"]));
        let npm = apply(
            Action::Test,
            s(&["npm", "test"]),
            &x(Some("src/a.test.ts"), Some("adds"), true),
            &scripts("vitest run"),
        )
        .unwrap();
        assert_eq!(npm, s(&["npm", "test", "--", "-t", "adds", "--reporter=verbose", "src/a.test.ts"]));
        let node =
            apply(Action::Test, s(&["npm", "test"]), &x(None, Some("adds"), false), &scripts("node --test"))
                .unwrap();
        assert_eq!(node, s(&["npm", "test", "--", "--test-name-pattern=adds"]));
        let lint = apply(Action::Lint, s(&["ruff", "check", "."]), &x(Some("stack_cli"), None, false), &none)
            .unwrap();
        assert_eq!(lint, s(&["ruff", "check", "stack_cli"]));
        let eslint = apply(
            Action::Lint,
            s(&["npx", "--no-install", "eslint", "."]),
            &x(Some("src"), None, false),
            &none,
        )
        .unwrap();
        assert_eq!(eslint, s(&["npx", "--no-install", "eslint", "src"]));
    }

    #[test]
    fn what_a_runner_cannot_take_is_refused_naming_it() {
        let none = serde_json::Map::new();
        let e = apply(
            Action::Test,
            s(&["make", "test"]),
            &Extras { pattern: Some("x"), ..Extras::default() },
            &none,
        )
        .unwrap_err();
        assert!(e.message().contains("`make test` cannot take `pattern`"), "{}", e.message());
        let e = apply(
            Action::Test,
            s(&["npm", "test"]),
            &Extras { pattern: Some("x"), ..Extras::default() },
            &scripts("./run-tests.sh"),
        )
        .unwrap_err();
        assert!(e.message().contains("npm test"), "{}", e.message());
        let e = apply(
            Action::Lint,
            s(&["cargo", "clippy", "--all-targets"]),
            &Extras { target: Some("src/lib.rs"), ..Extras::default() },
            &none,
        )
        .unwrap_err();
        assert!(e.message().contains("cannot take a target path"), "{}", e.message());
    }
}
