//! The omission-placeholder guard: a model that writes `// ... rest of the code unchanged ...`
//! instead of the code would silently delete it (Cline's and Gemini CLI's users lost code this
//! way). New text whose line looks like such a placeholder — a comment that says the code is
//! elsewhere — is refused unless the file already has that line or `allowPlaceholders` is set.

use std::sync::OnceLock;

use regex::Regex;

use crate::error::{Result, ToolError};

fn pattern() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?ix)^\s*(//+|\#+|/\*+|\*|<!--|--|;+|\{/\*)?\s*(\.\.\.|…)?\s*\[?\s*
              ( (rest|remainder)\s+of\s+(the\s+)?(code|file|implementation|function|method|class|content|module)
              | (existing|unchanged|remaining)\s+(code|content|implementation|methods|functions|lines)
                (\s+(here|remains?|unchanged|goes\s+here|omitted|as\s+before))?
              | (code|content|implementation)\s+(remains|stays|is)\s+(the\s+same|unchanged)
              | same\s+as\s+(before|above)
              )\b.*$",
        )
        .ok()
    })
    .as_ref()
}

/// The first line of `new` that is an omission placeholder absent from `old`.
pub fn find(new: &str, old: &str) -> Option<String> {
    let re = pattern()?;
    new.lines()
        .map(str::trim_end)
        .find(|l| {
            let t = l.trim();
            // A placeholder says it stands for code: an ellipsis or a comment marker with it.
            let marked = t.contains("...")
                || t.contains('…')
                || t.starts_with("//")
                || t.starts_with('#')
                || t.starts_with("/*")
                || t.starts_with("<!--")
                || t.starts_with('[');
            marked && t.chars().count() <= 80 && re.is_match(l) && !old.lines().any(|o| o.trim() == t)
        })
        .map(|l| l.trim().to_owned())
}

/// Refuse `new` when it holds a placeholder (unless `allow`).
pub fn check(new: &str, old: &str, allow: bool, display: &str) -> Result<()> {
    if allow {
        return Ok(());
    }
    match find(new, old) {
        None => Ok(()),
        Some(line) => Err(ToolError::invalid(format!(
            "The new text for {display} contains the placeholder line \"{line}\", which would replace real code with a comment. Write the full code, or pass allowPlaceholders: true if the line is meant literally."
        ))
        .with_prop("reason", "omission_placeholder")
        .with_prop("line", line)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_placeholders_only_when_new() {
        for p in [
            "    // ... rest of the code ...",
            "# ... existing code ...",
            "/* rest of implementation unchanged */",
            "// existing methods here",
            "<!-- ... remaining content ... -->",
            "    ... rest of file",
            "[rest of the file]",
            "// code remains the same",
        ] {
            assert!(find(&format!("fn a() {{\n{p}\n}}\n"), "").is_some(), "{p}");
        }
        for ok in [
            "// compute the rest of the values",
            "let rest = code.len(); // the rest",
            "print(\"... done\")",
            "# TODO: handle the remaining cases",
            "// previous implementation was slow",
            "// other functions",
            "const existing = 1;",
        ] {
            assert_eq!(find(ok, ""), None, "{ok}");
        }
        // Already in the file: not new, not refused.
        assert_eq!(find("// ... existing code ...\n", "x\n  // ... existing code ...\n"), None);
        let e = check("// ... rest of code ...", "", false, "a.rs").unwrap_err();
        assert_eq!(e.props()["reason"], "omission_placeholder");
        assert!(check("// ... rest of code ...", "", true, "a.rs").is_ok());
    }
}
