//! Pure Rust core of `@eddie/tools-native`: every tool's behaviour, with no napi.
//!
//! Layers, each importing only those below it:
//! - [`registry`] lists the families and finds a tool by name; [`call`] is the one pipeline a
//!   host calls through (argument policy, permission gate, abort, panics as `INTERNAL`).
//! - the families (`eddie`, [`files`], [`code`], [`exec`], `web`, `git`, `memory`,
//!   `browser`): one file per tool, `<tool>.rs` with its typed `Args` and its
//!   [`spec::ToolSpec`] (the whole declaration) and `<tool>.json` (description, output schema).
//! - [`engine`]: what more than one family stands on (walk, search, index, store, text,
//!   process, net, patch, plan, project, platform).
//! - [`spec`], [`context`], [`error`], [`output`], [`workspace`]: the types everything uses.
//!
//! Results are `{schema, content, data}` (the pipeline stamps `schema` from the tool's
//! declared output `$id`). Every path goes through [`workspace::Workspace::resolve`], every
//! request through the one network guard, every write through [`engine::store`], and every
//! failure is a [`error::ToolError`] with a stable code.
#![deny(missing_docs)]

#[cfg(feature = "browser")]
pub mod browser;
pub mod call;
pub mod code;
pub mod context;
pub mod eddie;
pub mod engine;
pub mod error;
pub mod exec;
pub mod files;
#[cfg(feature = "git")]
pub mod git;
#[cfg(feature = "memory")]
pub mod memory;
pub mod output;
pub mod registry;
pub mod spec;
#[cfg(feature = "web")]
pub mod web;
pub mod workspace;

pub use context::{Ctx, blocking};
pub use error::{ErrorCode, Result, ToolError};
pub use output::ToolOutput;
