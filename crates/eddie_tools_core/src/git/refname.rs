//! What git refuses, refused before libgit2 sees it: branch names by the rules of
//! `git check-ref-format --branch` (plus the file system's limits, since a ref is a file), and
//! messages containing NUL. Each refusal is `INVALID_ARGUMENT` naming the rule.

use std::path::Path;

use crate::error::{Result, ToolError};

/// The longest name of one file (`NAME_MAX`), which bounds each `/`-separated component; the
/// last one also names the ref's lock file, `<name>.lock`, so it may have 5 bytes less.
pub const MAX_COMPONENT: usize = 255;
/// The longest path the system opens (`PATH_MAX`), which bounds `<git dir>/refs/heads/<name>.lock`.
pub const MAX_PATH: usize = 4096;

/// The rule `name` breaks as a branch name, if any.
pub fn branch_rule(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a branch name must not be empty".into());
    }
    if name.starts_with('-') {
        return Some("a branch name must not begin with '-' (it would read as an option)".into());
    }
    if name == "HEAD" {
        return Some("HEAD is not a valid branch name".into());
    }
    if name == "@" {
        return Some("a ref name cannot be the single character '@'".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_ascii_control()) {
        return Some(format!(
            "a ref name must not contain control characters (found U+{:04X}; NUL, newline, tab and DEL included)",
            u32::from(c)
        ));
    }
    if let Some(c) = name.chars().find(|c| matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\')) {
        return Some(format!("a ref name must not contain {c:?} (nor space, ~, ^, :, ?, *, [ or \\)"));
    }
    if name.contains("..") {
        return Some("a ref name must not contain '..'".into());
    }
    if name.contains("@{") {
        return Some("a ref name must not contain '@{'".into());
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Some("a ref name must not begin or end with '/' or contain '//'".into());
    }
    if name.ends_with('.') {
        return Some("a ref name must not end with '.'".into());
    }
    let last = name.split('/').count();
    for (i, part) in name.split('/').enumerate() {
        if part.starts_with('.') {
            return Some(format!(
                "no '/'-separated component may begin with '.' (component {}: {part:?})",
                i + 1
            ));
        }
        if part.ends_with(".lock") {
            return Some(format!(
                "no '/'-separated component may end with '.lock' (component {}: {part:?})",
                i + 1
            ));
        }
        if part.len() > MAX_COMPONENT {
            return Some(format!(
                "each '/'-separated component must be at most {MAX_COMPONENT} bytes, the file system's name limit \
                 (component {} has {} bytes)",
                i + 1,
                part.len()
            ));
        }
        if i + 1 == last && part.len() + ".lock".len() > MAX_COMPONENT {
            return Some(format!(
                "the last '/'-separated component must be at most {} bytes: the ref's lock file adds '.lock' \
                 and a file name holds {MAX_COMPONENT} bytes (it has {} bytes)",
                MAX_COMPONENT - ".lock".len(),
                part.len()
            ));
        }
    }
    None
}

/// `INVALID_ARGUMENT` naming the rule when `name` is not a valid branch name; with the git dir,
/// also when the ref's lock file path would pass the system's path limit.
pub fn check_branch(name: &str, git_dir: Option<&Path>) -> Result<()> {
    if let Some(rule) = branch_rule(name) {
        return Err(invalid(name, &rule));
    }
    if let Some(dir) = git_dir {
        let len = dir.as_os_str().len() + "/refs/heads/".len() + name.len() + ".lock".len();
        if len >= MAX_PATH {
            return Err(invalid(
                name,
                &format!(
                    "the ref's file would have a {len}-byte path, past the system's {MAX_PATH}-byte limit"
                ),
            ));
        }
    }
    Ok(())
}

fn invalid(name: &str, rule: &str) -> ToolError {
    let shown: String = name.chars().take(80).collect();
    let more = if shown.len() < name.len() { format!("… ({} bytes)", name.len()) } else { String::new() };
    ToolError::invalid(format!("{shown:?}{more} is not a valid branch name: {rule}")).with_prop("rule", rule)
}

/// `INVALID_ARGUMENT` when a commit message (or a note kept as one) contains NUL, which git
/// refuses: a commit object's message is NUL-free text.
pub fn check_message(what: &str, message: &str) -> Result<()> {
    if message.contains('\0') {
        return Err(ToolError::invalid(format!(
            "{what} must not contain NUL (U+0000): git refuses a commit message with a NUL byte"
        ))
        .with_prop("rule", "no NUL in a commit message"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_of_git_check_ref_format() {
        let dir255 = format!("{}/x", "d".repeat(255));
        for ok in ["main", "feature/x", "a.b", "ü/ñ", "x@y", "release/1.0", &"a".repeat(250), &dir255] {
            assert_eq!(branch_rule(ok), None, "{ok}");
        }
        for (bad, rule) in [
            ("", "empty"),
            ("-x", "begin with '-'"),
            ("HEAD", "HEAD"),
            ("@", "'@'"),
            ("a\0b", "control"),
            ("a\nb", "control"),
            ("a\u{7f}", "control"),
            ("a b", "' '"),
            ("a~1", "'~'"),
            ("a^", "'^'"),
            ("a:b", "':'"),
            ("a?", "'?'"),
            ("a*", "'*'"),
            ("a[", "'['"),
            ("a\\b", "'\\\\'"),
            ("a..b", "'..'"),
            ("a@{1}", "'@{'"),
            ("/a", "'/'"),
            ("a/", "'/'"),
            ("a//b", "'//'"),
            ("a.", "end with '.'"),
            (".a", "begin with '.'"),
            ("x/.a", "component 2"),
            ("a.lock", "'.lock'"),
            ("x/a.lock/y", "'.lock'"),
            (&"a".repeat(251), "at most 250 bytes"),
            (&"a".repeat(255), "at most 250 bytes"),
            (&"a".repeat(256), "at most 255 bytes"),
            (&format!("{}/x", "d".repeat(256)), "component 1 has 256 bytes"),
        ] {
            let got = branch_rule(bad).unwrap_or_else(|| panic!("{bad:?} passed"));
            assert!(got.contains(rule), "{bad:?}: {got}");
        }
        let long = vec!["a".repeat(200); 30].join("/");
        assert!(check_branch(&long, None).is_ok());
        assert!(check_branch(&long, Some(Path::new("/r/.git"))).is_err());
        assert!(check_message("message", "a\0b").is_err());
        assert!(check_message("message", "fine").is_ok());
    }
}
