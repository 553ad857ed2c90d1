//! The thin napi binding of `@eddie/tools-native`.
//!
//! `callTool(index, args, ctx)` (behind every named export of `index.js`) and `runTool(name,
//! …)` convert `(args, ctx)` on the JS thread and return a promise; the call runs through the
//! core's pipeline (`eddie_tools_core::call`) on napi's tokio runtime, or, for a tool with a
//! blocking form (a lookup or a few syscalls), right on the JS thread, returning an
//! already-settled promise. Errors
//! reject with a real `Error` (or `RangeError`/`TypeError`) carrying eddie's message and a
//! stable string `code`. All behaviour lives in the core crate.
#![deny(clippy::all)]

mod convert;
mod ctx;
mod task_list;
mod tools;

pub use task_list::*;
pub use tools::*;
