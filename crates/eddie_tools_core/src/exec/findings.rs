//! Structured findings of `lint` and `typecheck`: for ruff, eslint, clippy (and `cargo check`)
//! and tsc, the runner asks the tool for its machine-readable output (ruff
//! `--output-format=json`, eslint `--format=json`, cargo `--message-format=json`, tsc
//! `--pretty false`) and reads `{path, line, column, rule, message, severity}` out of it.
//! A command this module does not recognise (a package script, an explicit `command`) runs
//! unchanged and has no findings.

use std::path::Path;

use serde_json::{Value, json};

/// A tool whose output is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parser {
    /// `ruff check --output-format=json`.
    Ruff,
    /// `eslint --format=json`.
    Eslint,
    /// `cargo clippy|check --message-format=json`.
    Cargo,
    /// `tsc --pretty false`.
    Tsc,
}

impl Parser {
    /// The tool's name, as reported in `data.findingsFrom`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ruff => "ruff",
            Self::Eslint => "eslint",
            Self::Cargo => "cargo",
            Self::Tsc => "tsc",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Workspace-relative path (as the tool gave it when it is outside the workspace).
    pub path: String,
    /// 1-based line (0 when the tool gave none).
    pub line: u64,
    /// 1-based column (0 when the tool gave none).
    pub column: u64,
    /// The rule or diagnostic code (`F401`, `no-unused-vars`, `clippy::needless_return`,
    /// `TS2322`), or `null`.
    pub rule: Option<String>,
    /// The message.
    pub message: String,
    /// `error`, `warning` or `info`.
    pub severity: &'static str,
}

impl Finding {
    /// `{path, line, column, rule, message, severity}`.
    pub fn to_json(&self) -> Value {
        json!({
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "rule": self.rule,
            "message": self.message,
            "severity": self.severity,
        })
    }
}

/// Index of the tool's own name in `argv`, past `uv run`, `poetry run`, `npx --no-install`
/// and `python -m`.
fn head(argv: &[String]) -> usize {
    let mut i = 0;
    while i < argv.len() {
        match argv[i].as_str() {
            "uv" | "poetry" if argv.get(i + 1).is_some_and(|a| a == "run") => i += 2,
            "npx" | "--no-install" => i += 1,
            p if p.starts_with("python") && argv.get(i + 1).is_some_and(|a| a == "-m") => i += 2,
            _ => break,
        }
    }
    i
}

/// Whether any argument already chooses an output format.
fn has_format_flag(argv: &[String]) -> bool {
    argv.iter().any(|a| {
        a.starts_with("--output-format")
            || a.starts_with("--format")
            || a == "-f"
            || a.starts_with("--message-format")
            || a.starts_with("--pretty")
    })
}

/// Rewrite `argv` (a lint or typecheck command) to ask for machine-readable output, and say
/// which parser reads it; `None` leaves `argv` unchanged.
pub fn structured(argv: &mut Vec<String>) -> Option<Parser> {
    if has_format_flag(argv) {
        return None;
    }
    let i = head(argv);
    let tool = argv.get(i)?.rsplit('/').next()?.to_owned();
    // Options go before a `--` separator, so that they stay the tool's own.
    let end = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    match tool.as_str() {
        "ruff" if argv.get(i + 1).is_some_and(|a| a == "check") => {
            argv.insert(i + 2, "--output-format=json".to_owned());
            Some(Parser::Ruff)
        }
        "eslint" => {
            argv.insert(end, "--format=json".to_owned());
            Some(Parser::Eslint)
        }
        "cargo" if argv.get(i + 1).is_some_and(|a| a == "clippy" || a == "check") => {
            argv.insert(i + 2, "--message-format=json".to_owned());
            Some(Parser::Cargo)
        }
        "tsc" => {
            argv.insert(end, "--pretty".to_owned());
            argv.insert(end + 1, "false".to_owned());
            Some(Parser::Tsc)
        }
        _ => None,
    }
}

/// `path` as the model should use it: relative to the workspace root when inside it.
fn shown(path: &str, cwd: &Path, workspace: &Path) -> String {
    let p = Path::new(path);
    let abs = if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
    match abs.strip_prefix(workspace) {
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_owned(),
    }
}

fn uint(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The findings in the tool's standard output, or `None` when it is not what the parser
/// expects (the tool crashed before writing its report, say).
pub fn parse(parser: Parser, stdout: &str, cwd: &Path, workspace: &Path) -> Option<Vec<Finding>> {
    let mut out = Vec::new();
    match parser {
        Parser::Ruff => {
            let text = stdout.trim();
            // `ruff check` with nothing to report prints `[]`; an empty output is no findings.
            if text.is_empty() {
                return Some(out);
            }
            for f in serde_json::from_str::<Vec<Value>>(text).ok()? {
                out.push(Finding {
                    path: shown(f["filename"].as_str().unwrap_or(""), cwd, workspace),
                    line: uint(&f["location"]["row"]),
                    column: uint(&f["location"]["column"]),
                    rule: f["code"].as_str().map(str::to_owned),
                    message: f["message"].as_str().unwrap_or("").to_owned(),
                    severity: "error",
                });
            }
        }
        Parser::Eslint => {
            let text = stdout.trim();
            if text.is_empty() {
                return None;
            }
            for file in serde_json::from_str::<Vec<Value>>(text).ok()? {
                let path = shown(file["filePath"].as_str().unwrap_or(""), cwd, workspace);
                for m in file["messages"].as_array().into_iter().flatten() {
                    out.push(Finding {
                        path: path.clone(),
                        line: uint(&m["line"]),
                        column: uint(&m["column"]),
                        rule: m["ruleId"].as_str().map(str::to_owned),
                        message: m["message"].as_str().unwrap_or("").to_owned(),
                        severity: if m["severity"].as_u64() == Some(2) || m["fatal"] == true {
                            "error"
                        } else {
                            "warning"
                        },
                    });
                }
            }
        }
        Parser::Cargo => {
            let mut seen_json = false;
            for line in stdout.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
                seen_json = true;
                if v["reason"] != "compiler-message" {
                    continue;
                }
                let m = &v["message"];
                let severity = match m["level"].as_str() {
                    Some("error" | "error: internal compiler error") => "error",
                    Some("warning") => "warning",
                    _ => continue,
                };
                let spans = m["spans"].as_array();
                let Some(span) = spans.and_then(|s| s.iter().find(|s| s["is_primary"] == true)) else {
                    // "3 warnings emitted" and the like have no place in the code.
                    continue;
                };
                // Span paths are relative to the cargo workspace root, next to the manifest.
                let base = v["manifest_path"].as_str().and_then(|p| Path::new(p).parent()).unwrap_or(cwd);
                let finding = Finding {
                    path: shown(span["file_name"].as_str().unwrap_or(""), base, workspace),
                    line: uint(&span["line_start"]),
                    column: uint(&span["column_start"]),
                    rule: m["code"]["code"].as_str().map(str::to_owned),
                    message: m["message"].as_str().unwrap_or("").to_owned(),
                    severity,
                };
                // A crate built for several targets reports the same finding once per target.
                if !out.contains(&finding) {
                    out.push(finding);
                }
            }
            if !seen_json && !stdout.trim().is_empty() {
                return None;
            }
        }
        Parser::Tsc => {
            for line in stdout.lines() {
                match tsc_line(line) {
                    Some((path, l, c, severity, rule, message)) => out.push(Finding {
                        path: shown(path, cwd, workspace),
                        line: l,
                        column: c,
                        rule: Some(rule.to_owned()),
                        message: message.to_owned(),
                        severity,
                    }),
                    // The rest of a multi-line message.
                    None if line.starts_with(' ') && !line.trim().is_empty() => {
                        if let Some(last) = out.last_mut() {
                            last.message.push('\n');
                            last.message.push_str(line.trim_end());
                        }
                    }
                    None => {}
                }
            }
        }
    }
    Some(out)
}

/// `src/a.ts(3,7): error TS2322: message`.
fn tsc_line(line: &str) -> Option<(&str, u64, u64, &'static str, &str, &str)> {
    let (place, rest) = line.split_once("): ")?;
    let (path, pos) = place.rsplit_once('(')?;
    let (l, c) = pos.split_once(',')?;
    let (severity, rest) = if let Some(r) = rest.strip_prefix("error ") {
        ("error", r)
    } else if let Some(r) = rest.strip_prefix("warning ") {
        ("warning", r)
    } else if let Some(r) = rest.strip_prefix("message ") {
        ("info", r)
    } else {
        return None;
    };
    let (rule, message) = rest.split_once(": ")?;
    if !rule.starts_with("TS") || path.is_empty() {
        return None;
    }
    Some((path, l.parse().ok()?, c.parse().ok()?, severity, rule, message))
}

/// At most this many findings are listed in the text (all are in `data.findings`).
const SHOWN: usize = 200;

/// The findings as the model reads them: a count, then `path:line:column severity rule message`.
pub fn render(parser: Parser, findings: &[Finding]) -> String {
    let errors = findings.iter().filter(|f| f.severity == "error").count();
    let warnings = findings.iter().filter(|f| f.severity == "warning").count();
    let mut s = format!("--- findings ({}: {} errors, {} warnings) ---\n", parser.name(), errors, warnings);
    if findings.is_empty() {
        s.push_str("(none)\n");
    }
    for f in findings.iter().take(SHOWN) {
        let rule = f.rule.as_deref().map(|r| format!(" [{r}]")).unwrap_or_default();
        let first = f.message.lines().next().unwrap_or("");
        s.push_str(&format!("{}:{}:{} {}{rule} {first}\n", f.path, f.line, f.column, f.severity));
    }
    if findings.len() > SHOWN {
        s.push_str(&format!("… {} more in data.findings\n", findings.len() - SHOWN));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn asks_each_tool_for_its_machine_readable_output() {
        let mut a = s(&["ruff", "check", "src"]);
        assert_eq!(structured(&mut a), Some(Parser::Ruff));
        assert_eq!(a, s(&["ruff", "check", "--output-format=json", "src"]));
        let mut a = s(&["python3", "-m", "ruff", "check", "."]);
        assert_eq!(structured(&mut a), Some(Parser::Ruff));
        assert_eq!(a[4], "--output-format=json");
        let mut a = s(&["ruff", "format", "."]);
        assert_eq!(structured(&mut a), None);
        let mut a = s(&["npx", "--no-install", "eslint", "."]);
        assert_eq!(structured(&mut a), Some(Parser::Eslint));
        assert_eq!(a.last().map(String::as_str), Some("--format=json"));
        let mut a = s(&["cargo", "clippy", "--all-targets", "--", "-D", "warnings"]);
        assert_eq!(structured(&mut a), Some(Parser::Cargo));
        assert_eq!(
            a,
            s(&["cargo", "clippy", "--message-format=json", "--all-targets", "--", "-D", "warnings"])
        );
        let mut a = s(&["npx", "--no-install", "tsc", "--noEmit"]);
        assert_eq!(structured(&mut a), Some(Parser::Tsc));
        assert_eq!(a, s(&["npx", "--no-install", "tsc", "--noEmit", "--pretty", "false"]));
        // Left alone: scripts, and commands that already chose a format.
        let mut a = s(&["npm", "run", "lint"]);
        assert_eq!(structured(&mut a), None);
        let mut a = s(&["ruff", "check", "--output-format=github", "."]);
        assert_eq!(structured(&mut a), None);
    }

    #[test]
    fn reads_each_format() {
        let ws = Path::new("/w");
        let ruff = r#"[{"code":"F401","filename":"/w/a/x.py","location":{"row":1,"column":8},"message":"`os` imported but unused"}]"#;
        let f = parse(Parser::Ruff, ruff, Path::new("/w/a"), ws).unwrap();
        assert_eq!(
            f[0].to_json(),
            json!({"path": "a/x.py", "line": 1, "column": 8, "rule": "F401", "message": "`os` imported but unused", "severity": "error"})
        );
        let eslint = r#"[{"filePath":"/w/b.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is unused","line":1,"column":7},{"ruleId":null,"severity":1,"message":"w","line":2,"column":1}]}]"#;
        let f = parse(Parser::Eslint, eslint, ws, ws).unwrap();
        assert_eq!(
            (f[0].severity, f[0].rule.as_deref(), f[1].severity, f[1].rule.as_deref()),
            ("error", Some("no-unused-vars"), "warning", None)
        );
        let cargo = concat!(
            r#"{"reason":"compiler-artifact"}"#,
            "\n",
            r#"{"reason":"compiler-message","manifest_path":"/w/c/Cargo.toml","message":{"level":"warning","message":"unneeded `return` statement","code":{"code":"clippy::needless_return"},"spans":[{"file_name":"src/lib.rs","is_primary":true,"line_start":2,"column_start":5}]}}"#,
            "\n",
            r#"{"reason":"compiler-message","manifest_path":"/w/c/Cargo.toml","message":{"level":"warning","message":"1 warning emitted","code":null,"spans":[]}}"#,
            "\n"
        );
        let f = parse(Parser::Cargo, cargo, ws, ws).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].path.as_str(), f[0].line, f[0].column), ("c/src/lib.rs", 2, 5));
        let tsc = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\n  more detail\nnoise\n";
        let f = parse(Parser::Tsc, tsc, ws, ws).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].path.as_str(), f[0].rule.as_deref()), ("src/a.ts", Some("TS2322")));
        assert!(f[0].message.ends_with("\n  more detail"));
        // Not what the parser expects: no findings claimed.
        assert_eq!(parse(Parser::Ruff, "Traceback ...", ws, ws), None);
        assert_eq!(parse(Parser::Cargo, "error: could not find Cargo.toml", ws, ws), None);
    }
}
