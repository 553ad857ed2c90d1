//! Search tools: `file_search` (ECMAScript regex over names and contents, results in
//! `localeCompare` order) and `get_folder_tree_structure`.

pub mod collate;
pub mod es_regex;
pub mod file_search;
pub mod tree;

/// Directory names skipped at any depth unless `includeDependencies` is true (matched
/// exactly against a directory's basename; files with these names are kept).
pub const DEPENDENCY_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "vendor",
    ".venv",
    "venv",
    ".tox",
    "__pycache__",
    ".mypy_cache",
    "dist",
    "build",
    "target",
    ".gradle",
    ".idea",
    ".yarn",
    ".pnpm-store",
    "Pods",
];

/// Whether a directory named `name` is a dependency directory.
pub fn is_dependency_dir(name: &[u8]) -> bool {
    DEPENDENCY_DIRS.iter().any(|d| d.as_bytes() == name)
}
