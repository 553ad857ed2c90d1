//! Helpers for the `code` tools' unit tests.

use std::path::Path;

use crate::context::Ctx;

/// A temporary workspace holding `files` (path, content), their directories made as needed.
pub fn ws(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (p, c) in files {
        let f = t.path().join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, c).unwrap();
    }
    t
}

/// A context whose workspace is `dir`.
pub fn ctx(dir: &Path) -> Ctx {
    Ctx::new(dir.to_str().unwrap()).unwrap()
}
