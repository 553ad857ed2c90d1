//! Destructive-command detection: a shell script (or one program with its arguments) is parsed
//! with tree-sitter-bash, and every simple command in it — inside pipelines, lists, subshells,
//! command substitutions, `sudo …`, `env …`, `xargs …` and `bash -c '…'` — is checked against
//! the rules below. Text that is only data (`echo "rm -rf /"`) is never a command, so it never
//! fires.
//!
//! | rule | fires on |
//! | --- | --- |
//! | `rm-recursive` | `rm -r`/`-rf`/`--recursive` of `/`, `~`, `.`, the workspace itself, anything outside it, or a target that cannot be known before it runs (`$VAR`, `$(…)`, `xargs`) |
//! | `raw-disk` | `dd`, `mkfs`/`mkfs.*`, `shred` |
//! | `git-reset-hard` | `git reset --hard` |
//! | `git-clean` | `git clean` with `-f` and `-d` or `-x` |
//! | `git-push-force` | `git push --force`/`-f`, or a `+refspec` (`--force-with-lease` is the safe form and does not fire) |
//! | `recursive-chmod` | `chmod -R`/`chown -R`/`chgrp -R` of `/`, `~`, or anything outside the workspace |
//! | `fork-bomb` | a function that calls itself in a pipeline or in the background (`:(){ :\|:& };:`) |
//! | `pipe-to-shell` | `curl …`/`wget …` piped into a shell or an interpreter |
//!
//! PowerShell (`powershell`/`pwsh -Command …`) and `cmd /c …` lines (the Windows shells) are
//! split into statements and words (no tree-sitter grammar for them): `Remove-Item -Recurse`
//! (and its aliases `rm`, `ri`, `del`, `rd`, `rmdir`, `erase`), `rd /s`, `del /s` fire
//! `rm-recursive` as above; `format`, `Format-Volume`, `Clear-Disk` fire `raw-disk`; `git …`
//! the git rules; a nested shell is followed.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use tree_sitter::{Node, Parser};

/// One rule that fired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's stable id (`rm-recursive`, `raw-disk`, ...).
    pub rule: &'static str,
    /// The command it fired on, as written.
    pub command: String,
    /// Why, in words a user can judge.
    pub reason: String,
}

/// Where paths in the command are resolved: the workspace root and the command's directory.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The workspace root (a real path).
    pub workspace: &'a Path,
    /// The directory the command runs in (a real path inside the workspace).
    pub cwd: &'a Path,
}

/// Programs that run the command that follows their own options.
const WRAPPERS: &[&str] =
    &["sudo", "doas", "env", "nice", "nohup", "time", "command", "exec", "timeout", "stdbuf", "ionice"];
/// Options of the wrappers that take a value.
const WRAPPER_VALUED: &[&str] =
    &["-u", "-g", "-C", "-D", "-p", "-r", "-t", "-U", "-h", "-n", "-s", "-k", "-o", "-e", "-i"];
/// Programs whose `-c` argument is a script.
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "fish"];
/// What `curl … |` must not feed.
const INTERPRETERS: &[&str] =
    &["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "python", "python3", "perl", "ruby", "node", "php"];
/// How deep `bash -c '…'` nesting is followed.
const MAX_NESTING: usize = 4;

/// The findings for a shell script run in `scope`.
pub fn assess_script(script: &str, scope: Scope<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    script_findings(script, scope, 0, &mut out);
    dedupe(out)
}

/// The findings for one program with its arguments (no shell in between).
pub fn assess_argv(argv: &[String], scope: Scope<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let shown = argv.join(" ");
    command_findings(argv, &shown, scope, 0, &mut out);
    dedupe(out)
}

fn dedupe(mut v: Vec<Finding>) -> Vec<Finding> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|f| seen.insert((f.rule, f.command.clone(), f.reason.clone())));
    v
}

fn script_findings(script: &str, scope: Scope<'_>, depth: usize, out: &mut Vec<Finding>) {
    if depth > MAX_NESTING {
        return;
    }
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
        return;
    }
    let Some(tree) = parser.parse(script, None) else { return };
    let src = script.as_bytes();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "command" => {
                let words = command_words(node, src);
                if !words.is_empty() {
                    command_findings(&words, text(node, src), scope, depth, out);
                }
            }
            "pipeline" => pipeline_findings(node, src, out),
            "function_definition" => fork_bomb(node, src, out),
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            stack.push(child);
        }
    }
}

fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
    node.utf8_text(src).unwrap_or_default()
}

/// A command's name and arguments, unquoted where that is static (`"a b"` → `a b`); variable
/// assignments and redirections before or after them are left out.
fn command_words(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let mut words = Vec::new();
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            match cursor.field_name() {
                Some("name") => words.push(word_value(cursor.node(), src)),
                Some("argument") if !words.is_empty() => words.push(word_value(cursor.node(), src)),
                _ => {}
            }
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    words
}

/// The value of a word as the shell would see it, when that is known without running anything;
/// otherwise its text with the `$`/backquote left in (which the rules treat as unknown).
fn word_value(node: Node<'_>, src: &[u8]) -> String {
    match node.kind() {
        "command_name" => node.named_child(0).map(|c| word_value(c, src)).unwrap_or_default(),
        "raw_string" => text(node, src).trim_matches('\'').to_owned(),
        "string" => {
            let t = text(node, src);
            t.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(t).to_owned()
        }
        "concatenation" => {
            let mut s = String::new();
            let mut cursor = node.walk();
            for c in node.children(&mut cursor) {
                s.push_str(&word_value(c, src));
            }
            s
        }
        "word" => unescape(text(node, src)),
        _ => text(node, src).to_owned(),
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The command a wrapper (`sudo`, `env`, `timeout 5`, ...) runs, if `words` starts with one.
fn unwrap_command(words: &[String]) -> &[String] {
    let mut rest = words;
    while let Some((first, tail)) = rest.split_first() {
        let name = basename(first);
        if !WRAPPERS.contains(&name) {
            break;
        }
        let mut i = 0;
        while i < tail.len() {
            let w = tail[i].as_str();
            if w == "--" {
                i += 1;
                break;
            }
            if w.starts_with('-') {
                i += if WRAPPER_VALUED.contains(&w) { 2 } else { 1 };
            } else if (name == "env" && w.contains('='))
                || (name == "timeout" && w.chars().next().is_some_and(|c| c.is_ascii_digit()))
            {
                // `env VAR=value …`, `timeout 5 …`
                i += 1;
            } else {
                break;
            }
        }
        rest = tail.get(i..).unwrap_or_default();
    }
    rest
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// A Windows program's name: after the last `\` or `/`, lower-case, without `.exe`.
fn windows_name(program: &str) -> String {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program).to_ascii_lowercase();
    base.strip_suffix(".exe").map(str::to_owned).unwrap_or(base)
}

/// The script of a `powershell`/`pwsh` (`-Command`, `-c`) or `cmd` (`/c`, `/k`) argv.
fn windows_script(name: &str, args: &[String]) -> Option<String> {
    let at = args.iter().position(|a| {
        let a = a.to_ascii_lowercase();
        match name {
            "cmd" => a == "/c" || a == "/k",
            _ => a == "-command" || a == "-c" || a == "/command" || a == "/c",
        }
    })?;
    let rest = args.get(at + 1..)?;
    (!rest.is_empty()).then(|| rest.join(" "))
}

/// The words of a PowerShell or cmd statement (quotes removed; good enough for flags and paths).
fn windows_words(statement: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in statement.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// A cmd switch (`/s`, `/q`): a slash and one letter, not a path such as `/` or `/etc`.
fn is_cmd_switch(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 2 && b[0] == b'/' && b[1].is_ascii_alphabetic()
}

/// The findings of a PowerShell or cmd script: each statement (split at `;`, `&`, `|` and
/// line ends) judged by its words.
fn windows_findings(script: &str, scope: Scope<'_>, depth: usize, out: &mut Vec<Finding>) {
    if depth > MAX_NESTING {
        return;
    }
    for statement in script.split([';', '&', '|', '\n', '\r']) {
        let words = windows_words(statement);
        let Some((program, args)) = words.split_first() else { continue };
        let shown = statement.trim().to_owned();
        let name = windows_name(program);
        let lower: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
        let mut found: Vec<(&'static str, String)> = Vec::new();
        let mut fire = |rule: &'static str, reason: String| found.push((rule, reason));
        let targets = || {
            args.iter().zip(&lower).filter(|(_, l)| !l.starts_with('-') && !is_cmd_switch(l)).map(|(a, _)| a)
        };
        match name.as_str() {
            "remove-item" | "rm" | "ri" | "del" | "erase" | "rd" | "rmdir" => {
                // PowerShell: -Recurse (any prefix of it, -r); cmd: /s.
                let recursive =
                    lower.iter().any(|l| (l.len() >= 2 && "-recurse".starts_with(l.as_str())) || l == "/s");
                if recursive {
                    for t in targets() {
                        if let Some(why) = dangerous_target(t, scope) {
                            fire("rm-recursive", format!("recursive delete of `{t}`: {why}"));
                        }
                    }
                }
            }
            "format" | "format-volume" | "clear-disk" => {
                fire("raw-disk", format!("{name} erases a whole volume or disk"));
            }
            "git" => git_findings(args, &mut fire),
            _ => command_findings(&words, &shown, scope, depth + 1, out),
        }
        out.extend(found.into_iter().map(|(rule, reason)| Finding { rule, command: shown.clone(), reason }));
    }
}

fn command_findings(words: &[String], shown: &str, scope: Scope<'_>, depth: usize, out: &mut Vec<Finding>) {
    let words = unwrap_command(words);
    let Some((program, args)) = words.split_first() else { return };
    let name = basename(program);
    let fire = |out: &mut Vec<Finding>, rule: &'static str, reason: String| {
        out.push(Finding { rule, command: shown.trim().to_owned(), reason });
    };
    match name {
        "rm" => {
            let (flags, targets) = split_options(args);
            if flags
                .iter()
                .any(|f| f == "--recursive" || (!f.starts_with("--") && (f.contains('r') || f.contains('R'))))
            {
                for t in &targets {
                    if let Some(why) = dangerous_target(t, scope) {
                        fire(out, "rm-recursive", format!("recursive delete of `{t}`: {why}"));
                    }
                }
            }
        }
        "dd" => fire(out, "raw-disk", "dd writes raw blocks and can overwrite a disk or any file".into()),
        "shred" => fire(out, "raw-disk", "shred destroys file contents beyond recovery".into()),
        n if n == "mkfs" || n.starts_with("mkfs.") => {
            fire(out, "raw-disk", "mkfs formats a device, erasing everything on it".into());
        }
        "chmod" | "chown" | "chgrp" => {
            let (flags, operands) = split_options(args);
            let recursive =
                flags.iter().any(|f| f == "--recursive" || (!f.starts_with("--") && f.contains('R')));
            if recursive {
                for t in operands.iter().skip(1) {
                    if let Some(why) = dangerous_target(t, scope) {
                        fire(out, "recursive-chmod", format!("recursive {name} of `{t}`: {why}"));
                    }
                }
            }
        }
        "git" => git_findings(args, &mut |rule, reason| fire(out, rule, reason)),
        "xargs" => {
            // `… | xargs rm -rf`: the targets come from the input, unknown before it runs.
            let inner = xargs_command(args);
            if let Some((p, rest)) = inner.split_first()
                && basename(p) == "rm"
                && split_options(rest).0.iter().any(|f| {
                    f == "--recursive" || (!f.starts_with("--") && (f.contains('r') || f.contains('R')))
                })
            {
                fire(
                    out,
                    "rm-recursive",
                    "recursive delete of paths read from input (xargs): unknown before it runs".into(),
                );
            } else if !inner.is_empty() {
                command_findings(inner, shown, scope, depth, out);
            }
        }
        n if SHELLS.contains(&n) => {
            if let Some(i) = args
                .iter()
                .position(|a| a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('c')))
                && let Some(script) = args.get(i + 1)
            {
                script_findings(script, scope, depth + 1, out);
            }
        }
        _ => {
            let name = windows_name(program);
            if matches!(name.as_str(), "powershell" | "pwsh" | "cmd")
                && let Some(script) = windows_script(&name, args)
            {
                windows_findings(&script, scope, depth + 1, out);
            }
        }
    }
}

/// `xargs`' own options skipped: the command it runs.
fn xargs_command(args: &[String]) -> &[String] {
    const VALUED: &[&str] = &["-n", "-L", "-P", "-s", "-I", "-d", "-E", "-a"];
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if VALUED.contains(&args[i].as_str()) { 2 } else { 1 };
    }
    args.get(i..).unwrap_or_default()
}

/// Options and operands (everything after `--` is an operand).
fn split_options(args: &[String]) -> (Vec<String>, Vec<String>) {
    let mut flags = Vec::new();
    let mut operands = Vec::new();
    let mut done = false;
    for a in args {
        if !done && a == "--" {
            done = true;
        } else if !done && a.starts_with('-') && a.len() > 1 {
            flags.push(a.clone());
        } else {
            operands.push(a.clone());
        }
    }
    (flags, operands)
}

fn git_findings(args: &[String], fire: &mut dyn FnMut(&'static str, String)) {
    // Global options before the subcommand.
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if matches!(args[i].as_str(), "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") {
            2
        } else {
            1
        };
    }
    let Some((sub, rest)) = args.get(i..).and_then(<[String]>::split_first) else { return };
    let short = |c: char| rest.iter().any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(c));
    match sub.as_str() {
        "reset" if rest.iter().any(|a| a == "--hard") => {
            fire("git-reset-hard", "git reset --hard discards every uncommitted change".into());
        }
        "clean" if (short('f') || rest.iter().any(|a| a == "--force")) && (short('d') || short('x')) => {
            fire(
                "git-clean",
                "git clean -f with -d/-x deletes untracked (and ignored) files for good".into(),
            );
        }
        "push" => {
            if rest.iter().any(|a| a == "--force") || short('f') {
                fire(
                    "git-push-force",
                    "git push --force can overwrite other people's commits on the remote".into(),
                );
            } else if rest.iter().any(|a| a.starts_with('+') && a.len() > 1) {
                fire("git-push-force", "a +refspec force-pushes that ref".into());
            }
        }
        _ => {}
    }
}

/// Why deleting (or chmod-ing) `target` recursively is dangerous, if it is.
fn dangerous_target(target: &str, scope: Scope<'_>) -> Option<String> {
    if target.contains('$') || target.contains('`') {
        return Some("its value is only known when the shell runs it".into());
    }
    if target == "~" || target.starts_with("~/") || target.starts_with('~') {
        return Some("it is in the home directory, outside the workspace".into());
    }
    // A glob deletes what its literal directory holds: judge that directory.
    let literal = match target.find(['*', '?', '[']) {
        Some(i) => {
            let head = &target[..i];
            match head.rfind('/') {
                Some(0) => "/",
                Some(j) => &head[..j],
                None => ".",
            }
        }
        None => target,
    };
    let globbed = literal != target;
    let path = normalise(&scope.cwd.join(literal));
    let ws = normalise(scope.workspace);
    if path == Path::new("/") {
        return Some("it is the root of the file system".into());
    }
    if !path.starts_with(&ws) {
        return Some("it is outside the workspace".into());
    }
    if path == ws {
        return Some(if globbed {
            "it matches everything in the workspace".into()
        } else {
            "it is the whole workspace".into()
        });
    }
    if (target == "." || target == "./") && path == normalise(scope.cwd) {
        return Some("it is the whole current directory".into());
    }
    None
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `curl … | sh`.
fn pipeline_findings(node: Node<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let mut cursor = node.walk();
    let names: Vec<String> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "command")
        .map(|c| {
            let words = command_words(c, src);
            unwrap_command(&words).first().map(|p| basename(p).to_owned()).unwrap_or_default()
        })
        .collect();
    if let Some(i) = names.iter().position(|n| n == "curl" || n == "wget")
        && let Some(sink) = names[i + 1..].iter().find(|n| INTERPRETERS.contains(&n.as_str()))
    {
        out.push(Finding {
            rule: "pipe-to-shell",
            command: text(node, src).trim().to_owned(),
            reason: format!("downloaded text is run by {sink} without being read first"),
        });
    }
}

/// `:(){ :|:& };:` — a function that calls itself in a pipeline or in the background.
fn fork_bomb(node: Node<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let Some(name) = node.child_by_field_name("name").map(|n| text(n, src).to_owned()) else { return };
    let Some(body) = node.child_by_field_name("body") else { return };
    let mut stack = vec![body];
    let mut calls_itself_concurrently = false;
    while let Some(n) = stack.pop() {
        if n.kind() == "pipeline" {
            let mut c = n.walk();
            if n.named_children(&mut c).any(|cmd| {
                cmd.kind() == "command" && command_words(cmd, src).first().is_some_and(|w| *w == name)
            }) {
                calls_itself_concurrently = true;
            }
        }
        if n.kind() == "command" && command_words(n, src).first().is_some_and(|w| *w == name) {
            // A background call: the next sibling is `&`.
            if n.next_sibling().is_some_and(|s| text(s, src) == "&") {
                calls_itself_concurrently = true;
            }
        }
        let mut c = n.walk();
        for child in n.children(&mut c) {
            stack.push(child);
        }
    }
    if calls_itself_concurrently {
        out.push(Finding {
            rule: "fork-bomb",
            command: text(node, src).trim().to_owned(),
            reason: format!(
                "function `{name}` starts copies of itself until the machine runs out of processes"
            ),
        });
    }
}

/// The destructive patterns in a command about to run, judged against the workspace.
pub fn assess_invocation(inv: &super::command::Invocation, ctx: &crate::context::Ctx) -> Vec<Finding> {
    let workspace = crate::workspace::realpath(ctx.workspace.root())
        .unwrap_or_else(|_| ctx.workspace.root().to_path_buf());
    let argv: Vec<String> = std::iter::once(inv.program.clone()).chain(inv.args.iter().cloned()).collect();
    assess_argv(&argv, Scope { workspace: &workspace, cwd: &inv.cwd })
}

/// The second, explicit prompt a destructive command needs at every permission level (even
/// when the session already allows the tool, and whatever a host approved without showing it);
/// `None` without findings.
pub fn prompt(display: &str, findings: &[Finding]) -> Option<crate::context::Prompt> {
    if findings.is_empty() {
        return None;
    }
    let rules: Vec<String> = findings.iter().map(|f| format!("[{}] {}", f.rule, f.reason)).collect();
    Some(crate::context::Prompt::destructive(format!(
        "Destructive command: {}\nRun `{display}` anyway?",
        rules.join("; ")
    )))
}

/// Ask the tool's own question and, for a destructive command, the second prompt, in one go.
pub async fn confirm(
    ctx: &crate::context::Ctx,
    action: String,
    display: &str,
    findings: &[Finding],
) -> crate::error::Result<bool> {
    let mut prompts = vec![crate::context::Prompt::action(action)];
    prompts.extend(prompt(display, findings));
    ctx.confirm_all(prompts).await
}

/// The findings as result data.
pub fn to_json(findings: &[Finding]) -> serde_json::Value {
    serde_json::to_value(findings).unwrap_or_else(|_| serde_json::json!([]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> (PathBuf, PathBuf) {
        (PathBuf::from("/work/ws"), PathBuf::from("/work/ws/sub"))
    }

    fn rules(script: &str) -> Vec<&'static str> {
        let (ws, cwd) = scope();
        assess_script(script, Scope { workspace: &ws, cwd: &cwd }).into_iter().map(|f| f.rule).collect()
    }

    #[test]
    fn each_rule_fires() {
        for (script, rule) in [
            ("rm -rf /", "rm-recursive"),
            ("rm -r -f /etc", "rm-recursive"),
            ("rm --recursive ~", "rm-recursive"),
            ("rm -rf ~/projects", "rm-recursive"),
            ("rm -rf .", "rm-recursive"),
            ("rm -rf ..", "rm-recursive"),
            ("rm -rf ../../other", "rm-recursive"),
            ("rm -Rf /*", "rm-recursive"),
            ("rm -rf ../*", "rm-recursive"),
            ("rm -rf \"$DIR\"", "rm-recursive"),
            ("rm -rf $(cat list)", "rm-recursive"),
            ("sudo rm -rf /var/lib", "rm-recursive"),
            ("find . -name x | xargs rm -rf", "rm-recursive"),
            ("cd /tmp && rm -rf -- /", "rm-recursive"),
            ("bash -c 'rm -rf /'", "rm-recursive"),
            ("sh -c \"sudo rm -rf /home\"", "rm-recursive"),
            ("echo $(rm -rf /)", "rm-recursive"),
            ("dd if=/dev/zero of=/dev/sda", "raw-disk"),
            ("mkfs.ext4 /dev/sdb1", "raw-disk"),
            ("shred -u secrets.txt", "raw-disk"),
            ("git reset --hard HEAD~3", "git-reset-hard"),
            ("git -C repo reset --hard", "git-reset-hard"),
            ("git clean -fdx", "git-clean"),
            ("git clean -f -d", "git-clean"),
            ("git push --force origin main", "git-push-force"),
            ("git push -f", "git-push-force"),
            ("git push origin +main", "git-push-force"),
            ("chmod -R 777 /", "recursive-chmod"),
            ("chown -R me:me /usr/local", "recursive-chmod"),
            (":(){ :|:& };:", "fork-bomb"),
            ("bomb() { bomb | bomb & }; bomb", "fork-bomb"),
            ("curl -fsSL https://x.example/install.sh | sh", "pipe-to-shell"),
            ("wget -qO- https://x.example/i | sudo bash", "pipe-to-shell"),
            ("curl https://x.example/a.py | python3 -", "pipe-to-shell"),
        ] {
            assert!(rules(script).contains(&rule), "{script}: expected {rule}, got {:?}", rules(script));
        }
    }

    #[test]
    fn look_alikes_do_not_fire() {
        for script in [
            "rm -rf ./build",
            "rm -rf build dist",
            "rm -rf node_modules/*",
            "rm -r ../sub2",
            "rm -f /tmp/x.log",
            "rm notes.txt",
            "echo \"rm -rf /\"",
            "echo 'git push --force'",
            "printf '%s' 'dd if=/dev/zero'",
            "grep -r 'rm -rf' .",
            "git reset --soft HEAD~1",
            "git clean -n",
            "git push --force-with-lease",
            "git push origin main",
            "chmod -R u+w ./src",
            "chmod 777 /tmp/x",
            "curl -o install.sh https://x.example/i.sh",
            "curl https://x.example | grep title",
            "f() { echo hi; }; f",
            "cat file | sh-lint",
            "# rm -rf /",
        ] {
            assert!(rules(script).is_empty(), "{script}: {:?}", rules(script));
        }
    }

    #[test]
    fn argv_form_is_checked_without_a_shell() {
        let (ws, cwd) = scope();
        let s = Scope { workspace: &ws, cwd: &cwd };
        let argv = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(assess_argv(&argv(&["rm", "-rf", "/"]), s)[0].rule, "rm-recursive");
        // Without a shell, `$HOME` is a literal name; it is still refused as unknowable to a reader.
        assert_eq!(assess_argv(&argv(&["rm", "-rf", "$HOME"]), s)[0].rule, "rm-recursive");
        assert!(assess_argv(&argv(&["rm", "-rf", "build"]), s).is_empty());
        assert!(assess_argv(&argv(&["echo", "rm -rf /"]), s).is_empty());
        assert_eq!(assess_argv(&argv(&["bash", "-c", "git clean -fdx"]), s)[0].rule, "git-clean");
        assert_eq!(
            assess_argv(&argv(&["/usr/bin/env", "FOO=1", "git", "reset", "--hard"]), s)[0].rule,
            "git-reset-hard"
        );
    }

    #[test]
    fn powershell_and_cmd_deletes_and_formats_are_found() {
        let (ws, cwd) = (std::path::PathBuf::from("/work/ws"), std::path::PathBuf::from("/work/ws"));
        let s = Scope { workspace: &ws, cwd: &cwd };
        let rules = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
            assess_argv(&argv, s).into_iter().map(|f| f.rule).collect::<Vec<_>>()
        };
        let ps = |line: &str| {
            rules(&["C:\\Program Files\\PowerShell\\7\\pwsh.exe", "-NoProfile", "-Command", line])
        };
        assert_eq!(ps("Remove-Item -Recurse -Force /"), ["rm-recursive"]);
        assert_eq!(ps("echo hi; rm -r ../other"), ["rm-recursive"]);
        assert_eq!(ps("Remove-Item -Recurse build"), Vec::<&str>::new(), "inside the workspace");
        assert_eq!(ps("Remove-Item /etc/passwd"), Vec::<&str>::new(), "not recursive");
        assert_eq!(ps("Format-Volume -DriveLetter D"), ["raw-disk"]);
        assert_eq!(ps("git reset --hard HEAD~1"), ["git-reset-hard"]);
        assert_eq!(ps("Write-Output 'Remove-Item -Recurse /'"), Vec::<&str>::new(), "data, not a command");
        let cmd = |line: &str| rules(&["cmd.exe", "/d", "/s", "/c", line]);
        assert_eq!(cmd("rd /s /q \"$HOME\""), ["rm-recursive"]);
        assert_eq!(cmd("cd sub && del /s /q .."), ["rm-recursive"]);
        assert_eq!(cmd("del /q notes.txt"), Vec::<&str>::new());
        assert_eq!(cmd("format D: /q"), ["raw-disk"]);
        assert_eq!(cmd("powershell -c \"Clear-Disk -Number 1\""), ["raw-disk"], "a nested shell is followed");
        assert_eq!(cmd("git clean -fdx"), ["git-clean"]);
    }
}
