//! The thin napi binding of `@eddie/tools-native`.
//!
//! Each tool is a sync `#[napi]` function that converts `(args, ctx)` on the JS thread and
//! returns a promise; the work runs in `eddie_tools_core` on napi's tokio runtime. Errors
//! reject with a real `Error` (or `RangeError`/`TypeError`) carrying eddie's message and a
//! stable string `code`. All behaviour lives in the core crate.
#![deny(clippy::all)]

// First, so that `tool_export!` is in scope in the family files below it.
#[macro_use]
mod tools;

mod code;
mod convert;
mod ctx;
mod exec;
mod files;
mod task_list;

pub use code::*;
pub use exec::*;
pub use files::*;
pub use task_list::*;
pub use tools::*;
