//! The one registry: every tool with its name, JS export name, family, whether it mutates,
//! its permission level, its description and its input/output JSON Schemas, and [`run`] to
//! dispatch a call by name.
//!
//! Tools come in families. A family owns a list of [`ToolSpec`]s, a JSON array of
//! definitions (`{name, description, jsonSchema, outputSchema}`, in the same order) and a
//! dispatch function. The `eddie` family is `@eddie/tools`' built-ins (`builtinTools`);
//! every other family adds tools from the reference agents. To add a family, give its module
//! a `pub const FAMILY: Family` and list it in [`FAMILIES`].

pub mod eddie;

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

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

/// Static facts about one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSpec {
    /// The model-facing name (`file_read`).
    pub name: &'static str,
    /// The JS export (`fileRead`).
    pub js_name: &'static str,
    /// The family it belongs to (`eddie` for `@eddie/tools`' built-ins).
    pub family: &'static str,
    /// Whether a call can change the workspace or run code (defensive: `true` when in doubt).
    pub mutating: bool,
    /// Whether the tool asks `ctx.confirm` before acting.
    pub confirms: bool,
    /// How careful a host should be with it.
    pub permission: Permission,
    /// Argument names accepted besides the input schema's properties (the seeds' spellings,
    /// such as `file_path` for `path`). Anything else is refused outside the `eddie` family
    /// (see [`crate::call::args`]).
    pub aliases: &'static [&'static str],
}

impl ToolSpec {
    /// A spec of a tool of `family`.
    pub const fn new(
        family: &'static str,
        name: &'static str,
        js_name: &'static str,
        mutating: bool,
        confirms: bool,
        permission: Permission,
    ) -> Self {
        Self { name, js_name, family, mutating, confirms, permission, aliases: &[] }
    }

    /// The same spec, accepting `aliases` as argument names too.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
}

/// A boxed tool future, as family dispatchers return it.
pub type RunFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput>> + Send + 'a>>;

/// A family of tools: specs, schemas (a JSON array in spec order) and a dispatcher.
pub struct Family {
    /// Its name (`eddie`, `files`, ...).
    pub name: &'static str,
    /// Its tools, in export order.
    pub tools: &'static [ToolSpec],
    /// `[{name, description, jsonSchema, outputSchema}, ...]` in `tools` order.
    pub schemas: &'static str,
    /// Runs one of its tools by model name.
    pub run: for<'a> fn(&'a str, &'a Value, &'a Ctx) -> RunFuture<'a>,
    /// When `true`, an abort only sets `ctx.cancel` and the tool itself returns what it has
    /// (flagged `cancelled`); when `false`, the call's future is dropped and it rejects with
    /// `CANCELLED`.
    pub partial_on_cancel: bool,
}

/// A tool that can run to completion on the calling thread: a handful of syscalls, no
/// confirm, no child process, no waiting. Hosts may run these on a blocking pool directly,
/// which saves the hops of an async runtime (the latency of a small call).
pub type BlockingFn = fn(&Value, &Ctx) -> Result<ToolOutput>;

/// The tools with a [`BlockingFn`], by model name.
const BLOCKING: &[(&str, BlockingFn)] = &[("file_read", crate::fs::file_read::run_blocking)];

/// The blocking form of tool `name` (model name), if it has one.
pub fn blocking_form(name: &str) -> Option<BlockingFn> {
    BLOCKING.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Every family, `eddie` first.
pub const FAMILIES: &[&Family] =
    &[&eddie::FAMILY, &crate::files::FAMILY, &crate::code::FAMILY, &crate::exec::FAMILY];

/// Every tool of every family, `builtinTools` first.
pub fn tools() -> impl Iterator<Item = &'static ToolSpec> {
    FAMILIES.iter().flat_map(|f| f.tools.iter())
}

/// The definitions of every tool (`name`, `description`, `jsonSchema`, `outputSchema`), in
/// [`tools`] order.
pub fn definitions() -> &'static [Value] {
    static DEFS: OnceLock<Vec<Value>> = OnceLock::new();
    DEFS.get_or_init(|| {
        FAMILIES
            .iter()
            .flat_map(|f| serde_json::from_str::<Vec<Value>>(f.schemas).unwrap_or_default())
            .collect()
    })
}

/// The family of tool `name` (model name or JS name).
pub fn family_of(name: &str) -> Option<&'static Family> {
    let spec = find(name)?;
    FAMILIES.iter().copied().find(|f| f.name == spec.family)
}

/// The definition of tool `name`.
pub fn definition(name: &str) -> Option<&'static Value> {
    definitions().iter().find(|d| d.get("name").and_then(Value::as_str) == Some(name))
}

/// The spec of tool `name` (model name or JS name).
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    tools().find(|t| t.name == name || t.js_name == name)
}

/// Run tool `name` (model or JS name) with `args` in the current task: the argument policy
/// and dispatch of [`crate::call::call`], without its panic and abort handling (for tests
/// and tools that call tools).
pub async fn run(name: &str, args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let (spec, family, args) = crate::call::admit(name, args.clone(), ctx)?;
    (family.run)(spec.name, &args, ctx).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_lists_schemas_in_spec_order() {
        for family in FAMILIES {
            let defs: Vec<Value> = serde_json::from_str(family.schemas).expect(family.name);
            assert_eq!(defs.len(), family.tools.len(), "{}", family.name);
            for (spec, def) in family.tools.iter().zip(&defs) {
                assert_eq!(def["name"], spec.name);
                assert_eq!(spec.family, family.name, "{}", spec.name);
                let id = def["outputSchema"]["$id"].as_str().unwrap_or_default();
                assert!(id.starts_with("eddie.tool."), "{id}");
                assert_eq!(def["jsonSchema"]["type"], "object");
                assert!(def["description"].as_str().is_some_and(|d| !d.is_empty()), "{}", spec.name);
            }
        }
    }

    #[test]
    fn names_are_unique() {
        // A lookup by model or JS name must find exactly one tool.
        for t in tools() {
            for key in [t.name, t.js_name] {
                let hits = tools().filter(|o| o.name == key || o.js_name == key).count();
                assert_eq!(hits, 1, "{key}");
            }
        }
    }

    #[test]
    fn schema_ids_match_what_tools_return() {
        let id = |n: &str| definition(n).and_then(|d| d["outputSchema"]["$id"].as_str()).unwrap_or_default();
        assert_eq!(id("bash"), crate::shell::bash::SCHEMA);
        assert_eq!(id("file_read"), crate::fs::file_read::SCHEMA);
        assert_eq!(id("file_write"), crate::fs::file_write::SCHEMA);
        assert_eq!(id("file_search"), crate::search::file_search::SCHEMA);
        assert_eq!(id("get_folder_tree_structure"), crate::search::tree::SCHEMA);
        for n in ["get_plan", "complete_task", "update_plan"] {
            assert_eq!(id(n), crate::plan::SCHEMA);
        }
        for t in eddie::FAMILY.tools.iter().filter(|t| t.name.starts_with("agent__")) {
            assert_eq!(id(t.name), crate::tasks::SCHEMA);
        }
    }
}
