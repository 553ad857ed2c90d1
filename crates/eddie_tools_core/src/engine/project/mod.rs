//! What a project is: its languages (the one extension → language table), its manifests, and
//! the project types and commands detected from them. Used by `detect_project` and the exec
//! runners, `project_scan`, and the code family's parsers.

pub mod detect;
pub mod languages;
pub mod manifests;
