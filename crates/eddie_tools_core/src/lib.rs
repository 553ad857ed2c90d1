//! Pure Rust core of `@eddie/tools-native`: every tool's behaviour, with no napi.
//!
//! Each tool is an `async fn run(args: &serde_json::Value, ctx: &Ctx) -> Result<ToolOutput>`
//! in a module of its family. Arguments are taken as JSON and coerced the way the
//! `@eddie/tools` handlers coerce them; results are `{schema, content, data}`. Every path
//! goes through [`workspace::Workspace::resolve`], every write through
//! [`engine::store`], and every failure is a [`error::ToolError`] with a stable code.
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
