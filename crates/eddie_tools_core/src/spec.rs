//! What declares a tool: [`ToolSpec`] and [`Family`], with the types they are made of. The
//! families sit above this module and fill these in; the list of families
//! ([`crate::registry`]) sits above the families.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;

/// How careful a host should be with a tool (Floyd's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Reads only.
    None,
    /// Changes the workspace in ways that can be undone or reviewed.
    Moderate,
    /// Runs code, deletes, or reaches outside the workspace.
    Dangerous,
}

impl Permission {
    /// The stable string (`none`, `moderate`, `dangerous`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Moderate => "moderate",
            Self::Dangerous => "dangerous",
        }
    }
}

/// What a call of a tool may do to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effects {
    /// Reads only.
    ReadOnly,
    /// Changes the workspace or runs code without asking (`complete_task`, `process_kill`).
    Writes,
    /// Changes the workspace or runs code, and asks `ctx.confirm` before it acts.
    Confirms,
}

/// How a tool runs: its arguments (after the argument policy) and the call's context.
pub type RunFn = for<'a> fn(&'a Value, &'a Ctx) -> RunFuture<'a>;

/// One tool, declared once, in its own module: everything a host needs to list and run it.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// The model-facing name (`file_read`).
    pub name: &'static str,
    /// The JS export (`fileRead`).
    pub js_name: &'static str,
    /// The family it belongs to (`eddie` for `@eddie/tools`' built-ins).
    pub family: &'static str,
    /// What a call may do (defensive: more when in doubt).
    pub effects: Effects,
    /// How careful a host should be with it.
    pub permission: Permission,
    /// Other spellings of arguments, `(alias, canonical)`: the seeds' names, such as
    /// `file_path` for `path`. The pipeline renames an alias to its canonical name before the
    /// tool sees the arguments (see [`crate::call::args`]).
    pub aliases: &'static [(&'static str, &'static str)],
    /// The reference agents' names for this tool (a model trained on Stack calls `read`, one
    /// trained on Alfredo `execute_command`). [`crate::registry::find`] resolves them, so
    /// `runTool`, the CLI and the binding accept them; listings (toolSpecs, MCP, the adapters)
    /// show only the canonical name. A name whose meaning differs between agents is left out
    /// (`search_files` is a glob in Floyd and a content search in Alfredo: the registry routes
    /// Alfredo's calls), as are tools whose arguments would not fit. What a seed's spelling
    /// implies beyond the name is in [`crate::registry::IMPLIED`].
    pub tool_aliases: &'static [&'static str],
    /// Keys the input schema does not declare are ignored instead of refused (`INVALID_ARGUMENT`):
    /// `@eddie/tools`' handlers ignore them, so its built-ins stay drop-ins.
    pub lenient_keys: bool,
    /// The tool's [`BlockingFn`], when it has one.
    pub blocking: Option<BlockingFn>,
    /// `{name, description, jsonSchema, outputSchema}` as JSON text (without `jsonSchema` when
    /// `input` generates it); empty for a tool whose family carries a verbatim contract
    /// ([`Family::contract`]).
    pub definition: &'static str,
    /// The input JSON Schema generated from the tool's typed arguments
    /// ([`crate::call::args::schema`]); `None` when the definition carries it.
    pub input: Option<fn() -> Value>,
    /// Runs it.
    pub run: RunFn,
}

impl ToolSpec {
    /// Whether a call can change the workspace or run code.
    pub const fn mutating(&self) -> bool {
        !matches!(self.effects, Effects::ReadOnly)
    }

    /// Whether the tool asks `ctx.confirm` before acting.
    pub const fn confirms(&self) -> bool {
        matches!(self.effects, Effects::Confirms)
    }
}

/// A boxed tool future, as [`RunFn`]s return it.
pub type RunFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput>> + Send + 'a>>;

/// A family of tools.
pub struct Family {
    /// Its name (`eddie`, `files`, ...).
    pub name: &'static str,
    /// Its tools, in export order.
    pub tools: &'static [ToolSpec],
    /// A verbatim contract of definitions (`[{name, description, jsonSchema, outputSchema}]`)
    /// for tools whose own `definition` is empty: eddie's schemas, kept byte for byte.
    pub contract: Option<&'static str>,
    /// Descriptions for the properties a verbatim [`contract`](Self::contract) leaves without
    /// one, `(tool, property path, description)` (a path is `a.b`, with `a[]` for an array's
    /// items). The contract's `jsonSchema` stays byte for byte; the schema a model sees
    /// ([`crate::registry::model_schema`]) has them.
    pub contract_docs: &'static [(&'static str, &'static str, &'static str)],
    /// Spellings shared by the family's tools, `(alias, canonical)`: each applies to the tools
    /// whose input schema has the canonical key (the tool's own `aliases` add the rest).
    pub aliases: &'static [(&'static str, &'static str)],
    /// When `true`, an abort only sets `ctx.cancel` and the tool itself returns what it has
    /// (flagged `cancelled`); when `false`, the call's future is dropped and it rejects with
    /// `CANCELLED`.
    pub partial_on_cancel: bool,
}

/// A tool that can run to completion on the calling thread: a lookup or a handful of
/// syscalls, no confirm, no child process, no waiting. Hosts run these on their own thread (the
/// napi binding settles them on the JS thread, an already-settled promise), which saves every
/// hop of an async runtime (the latency of a small call).
///
/// `Ok(None)`: this call would wait after all (a large file, a store across the network),
/// decided from the arguments, the ctx and at most one stat; the host then runs the tool's
/// `run` as usual.
pub type BlockingFn = fn(&Value, &Ctx) -> Result<Option<ToolOutput>>;
