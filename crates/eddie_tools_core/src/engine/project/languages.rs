//! The one extension → language table.

/// The language of a file name, by extension or name.
pub fn language(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if lower == "dockerfile" || lower.starts_with("dockerfile.") {
        return Some("Dockerfile");
    }
    if lower == "makefile" {
        return Some("Makefile");
    }
    let ext = lower.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "rs" => "Rust",
        "ts" | "tsx" | "mts" | "cts" => "TypeScript",
        "js" | "jsx" | "mjs" | "cjs" => "JavaScript",
        "py" | "pyi" => "Python",
        "go" => "Go",
        "java" => "Java",
        "kt" | "kts" => "Kotlin",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "C++",
        "cs" => "C#",
        "rb" => "Ruby",
        "php" => "PHP",
        "swift" => "Swift",
        "scala" => "Scala",
        "dart" => "Dart",
        "lua" => "Lua",
        "zig" => "Zig",
        "ex" | "exs" => "Elixir",
        "hs" => "Haskell",
        "sh" | "bash" | "zsh" => "Shell",
        "sql" => "SQL",
        "html" | "htm" => "HTML",
        "css" | "scss" | "sass" | "less" => "CSS",
        "vue" => "Vue",
        "svelte" => "Svelte",
        "md" | "markdown" | "mdx" => "Markdown",
        "json" => "JSON",
        "yaml" | "yml" => "YAML",
        "toml" => "TOML",
        "xml" => "XML",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::language;

    #[test]
    fn by_extension_any_case_and_by_name() {
        for (name, lang) in [
            ("a.rs", "Rust"),
            ("A.TSX", "TypeScript"),
            ("x.d.mts", "TypeScript"),
            ("b.cjs", "JavaScript"),
            ("c.pyi", "Python"),
            ("Dockerfile.dev", "Dockerfile"),
            ("makefile", "Makefile"),
        ] {
            assert_eq!(language(name), Some(lang), "{name}");
        }
        for name in ["README", "rs", "a.unknown", ""] {
            assert_eq!(language(name), None, "{name}");
        }
    }
}
