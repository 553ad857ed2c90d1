//! Include filters (`*.ts`, `src/**/*.{js,jsx}`) built on `globset`.
//!
//! A pattern without `/` matches a file's name at any depth (as `rg -g` and `fd -g` do); a
//! pattern with `/` matches the path below the search root. `*` never crosses `/`; `**` does;
//! `{a,b}` alternates.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Result, ToolError};

/// A set of include patterns; empty = everything.
#[derive(Debug, Clone)]
pub struct Includes {
    names: GlobSet,
    paths: GlobSet,
    empty: bool,
}

fn glob(p: &str, case_insensitive: bool) -> Result<globset::Glob> {
    GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| ToolError::invalid(format!("invalid glob {p:?}: {}", e.kind())))
}

impl Includes {
    /// Compile `patterns` (a leading `./` is dropped).
    pub fn new(patterns: &[String], case_insensitive: bool) -> Result<Self> {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for p in patterns {
            let p = p.strip_prefix("./").unwrap_or(p);
            if p.contains('/') {
                paths.add(glob(p, case_insensitive)?);
            } else {
                names.add(glob(p, case_insensitive)?);
            }
        }
        let err = |e: globset::Error| ToolError::invalid(format!("invalid glob: {}", e.kind()));
        Ok(Self {
            names: names.build().map_err(err)?,
            paths: paths.build().map_err(err)?,
            empty: patterns.is_empty(),
        })
    }

    /// Whether nothing was given.
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// Whether `below_root` (POSIX path under the search root) is included.
    pub fn matches(&self, below_root: &str) -> bool {
        if self.empty {
            return true;
        }
        let name = below_root.rsplit('/').next().unwrap_or(below_root);
        (!self.names.is_empty() && self.names.is_match(name))
            || (!self.paths.is_empty() && self.paths.is_match(below_root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inc(p: &[&str]) -> Includes {
        Includes::new(&p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(), false).unwrap()
    }

    #[test]
    fn names_and_paths() {
        let i = inc(&["*.{js,ts}", "src/**/test_*.py"]);
        assert!(i.matches("a/b/c.ts"));
        assert!(i.matches("x.js"));
        assert!(!i.matches("x.tsx"));
        assert!(i.matches("src/a/b/test_x.py"));
        assert!(i.matches("src/test_x.py"));
        assert!(!i.matches("lib/test_x.py"));
        assert!(inc(&[]).matches("anything"));
        assert!(Includes::new(&["a[".to_owned()], false).is_err());
    }
}
