//! The shared engines: what more than one tool family stands on, with no tool of its own.
//! Tools live in the families (`eddie`, `files`, `code`, `exec`, `web`, `git`, `memory`,
//! `browser`); an engine never reads tool arguments or builds a tool result, and imports no
//! family.

pub mod es_regex;
pub mod index;
pub mod js;
#[cfg(feature = "net")]
pub mod net;
pub mod patch;
pub mod plan;
pub mod platform;
pub mod process;
pub mod project;
pub mod search;
pub mod store;
pub mod text;
pub mod walk;
