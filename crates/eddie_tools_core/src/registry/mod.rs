//! The one registry: every tool with its name, JS export name, family, whether it mutates,
//! its permission level, its description and its input/output JSON Schemas, and [`run`] to
//! dispatch a call by name.
//!
//! Tools come in families. A family owns a list of [`ToolSpec`]s, a JSON array of
//! definitions (`{name, description, jsonSchema, outputSchema}`, in the same order) and a
//! dispatch function. The `eddie` family is `@eddie/tools`' built-ins (`builtinTools`);
//! every other family adds tools from the reference agents. To add a family, give its module
//! a `pub const FAMILY: Family` and list it in [`FAMILIES`].

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
    /// Spellings shared by the family's tools, `(alias, canonical)`: each applies to the tools
    /// whose input schema has the canonical key (the tool's own `aliases` add the rest).
    pub aliases: &'static [(&'static str, &'static str)],
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
const BLOCKING: &[(&str, BlockingFn)] = &[
    ("file_read", crate::eddie::file_read::run_blocking),
    #[cfg(feature = "memory")]
    ("cache_store", crate::memory::cache::cache_store::run_blocking),
    #[cfg(feature = "memory")]
    ("cache_retrieve", crate::memory::cache::cache_retrieve::run_blocking),
    #[cfg(feature = "memory")]
    ("cache_delete", crate::memory::cache::cache_delete::run_blocking),
    #[cfg(feature = "memory")]
    ("cache_clear", crate::memory::cache::cache_clear::run_blocking),
    #[cfg(feature = "memory")]
    ("cache_keys", crate::memory::cache::cache_keys::run_blocking),
    #[cfg(feature = "memory")]
    ("cache_stats", crate::memory::cache::cache_stats::run_blocking),
];

/// The blocking form of tool `name` (model name), if it has one.
pub fn blocking_form(name: &str) -> Option<BlockingFn> {
    BLOCKING.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Every family, `eddie` first.
pub const FAMILIES: &[&Family] = &[
    &crate::eddie::FAMILY,
    &crate::files::FAMILY,
    &crate::code::FAMILY,
    &crate::exec::FAMILY,
    #[cfg(feature = "web")]
    &crate::web::FAMILY,
    #[cfg(feature = "git")]
    &crate::git::FAMILY,
    #[cfg(feature = "memory")]
    &crate::memory::FAMILY,
    #[cfg(feature = "browser")]
    &crate::browser::FAMILY,
];

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
            .flat_map(|f| {
                let contract: Vec<Value> =
                    f.contract.and_then(|c| serde_json::from_str(c).ok()).unwrap_or_default();
                f.tools.iter().map(move |t| {
                    let def: Value = if t.definition.is_empty() {
                        contract.iter().find(|d| d["name"] == t.name).cloned().unwrap_or_default()
                    } else {
                        serde_json::from_str(t.definition).unwrap_or_default()
                    };
                    match (t.input, def) {
                        // The generated schema takes its place after the description.
                        (Some(input), Value::Object(mut m)) => {
                            let output = m.remove("outputSchema");
                            m.insert("jsonSchema".into(), input());
                            if let Some(o) = output {
                                m.insert("outputSchema".into(), o);
                            }
                            Value::Object(m)
                        }
                        (_, def) => def,
                    }
                })
            })
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

/// The reference agents' names for tools this package has under another name, `(alias,
/// canonical)`: a model trained on Stack calls `read`, one trained on Alfredo
/// `execute_command`. [`find`] resolves them, so `runTool`, the CLI and the binding accept
/// them; listings (toolSpecs, MCP, the adapters) show only the canonical names. Names whose
/// meaning differs between agents are left out (`search_files` is a glob in Floyd and a
/// content search in Alfredo), as are tools whose arguments would not fit (Stack's `server`).
pub const TOOL_ALIASES: &[(&str, &str)] = &[
    // Stack 2.9
    ("read", "read_file"),
    ("write", "write_file"),
    ("edit", "edit_file"),
    ("search", "glob"),
    ("copy", "copy_file"),
    ("move", "move_file"),
    ("delete", "delete_file"),
    ("test", "run_tests"),
    // Floyd
    ("grep_search", "grep"),
    // Alfredo
    ("write_to_file", "write_file"),
    ("replace_in_file", "edit_file"),
    ("list_files", "list_directory"),
    ("list_code_definition_names", "list_symbols"),
    ("execute_command", "run"),
    // Stack 2.9's `server` (port: wait until it listens).
    ("server", "process_start"),
    // Floyd's `search_files` (a glob); Alfredo's (`regex`, `file_pattern`) is routed to grep
    // by [`route`].
    ("search_files", "glob"),
    // TunaCode
    ("update_file", "edit_file"),
    ("list_dir", "list_directory"),
    ("run_command", "run"),
];

/// What a seed's own spelling of a call means beyond its names: a call of `tool` (a model
/// name or one of [`TOOL_ALIASES`]) that gives `key` (any call of it, when `key` is `None`) gets
/// `arg: value` unless it says `arg` itself. So a seed's call gets the seed's behaviour where the
/// seeds disagree, and the canonical call keeps ours.
pub struct Implied {
    /// The tool or alias called.
    pub tool: &'static str,
    /// The key only that seed's calls have (`None`: the name alone is the seed's).
    pub key: Option<&'static str>,
    /// The argument it implies.
    pub arg: &'static str,
    /// Its value, as JSON text (`"\"tunacode\""`, `"true"`).
    pub value: &'static str,
}

/// The seeds' implied arguments (see [`Implied`]).
pub const IMPLIED: &[Implied] = &[
    // TunaCode's `write_file {filepath, content}` creates files and never overwrites one.
    Implied { tool: "write_file", key: Some("filepath"), arg: "style", value: r#""tunacode""# },
    // TunaCode's `run_command` and Alfredo's `execute_command` run their command line with the
    // shell (a missing program is the shell's exit 127, as theirs report it) and answer in
    // their own sections.
    Implied { tool: "run_command", key: None, arg: "shell", value: "true" },
    Implied { tool: "run_command", key: None, arg: "style", value: r#""tunacode""# },
    Implied { tool: "execute_command", key: None, arg: "shell", value: "true" },
    Implied { tool: "execute_command", key: None, arg: "style", value: r#""alfredo""# },
];

/// The tool an alias names for these arguments, with the arguments the seed's spelling implies
/// added ([`IMPLIED`]): `search_files` is a glob in Floyd and a content search in Alfredo, whose
/// calls say `regex` (and `file_pattern`).
pub fn route<'a>(name: &'a str, args: &mut Value) -> &'a str {
    if let Some(obj) = args.as_object_mut() {
        for i in IMPLIED.iter().filter(|i| i.tool == name) {
            let given = |k: &str| obj.get(k).is_some_and(|v| !v.is_null());
            // `args` is a program's: no shell to imply.
            if i.arg == "shell" && given("args") {
                continue;
            }
            if i.key.is_none_or(given) && !given(i.arg) {
                let value = serde_json::from_str(i.value).unwrap_or_else(|_| Value::from(i.value));
                obj.insert(i.arg.to_owned(), value);
            }
        }
    }
    if name == "search_files" && (args.get("regex").is_some() || args.get("file_pattern").is_some()) {
        return "grep";
    }
    name
}

/// `name` as a static string a host can hand to [`crate::call::call`]: a tool's model name
/// (for its model or JS name), or the alias itself (so that [`route`] still sees it).
pub fn static_name(name: &str) -> Option<&'static str> {
    tools()
        .find(|t| t.name == name || t.js_name == name)
        .map(|t| t.name)
        .or_else(|| TOOL_ALIASES.iter().find(|(alias, _)| *alias == name).map(|(alias, _)| *alias))
}

/// The spec of tool `name` (model name, JS name, or one of [`TOOL_ALIASES`]).
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    tools().find(|t| t.name == name || t.js_name == name).or_else(|| {
        let canonical = TOOL_ALIASES.iter().find(|(alias, _)| *alias == name)?.1;
        tools().find(|t| t.name == canonical)
    })
}

/// Run tool `name` (model or JS name) with `args` in the current task: the argument policy,
/// the permission gate and dispatch of [`crate::call::call`], without its panic and abort
/// handling (for tests and tools that call tools).
pub async fn run(name: &str, args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let (spec, _, args, ctx) = crate::call::prepare(name, args.clone(), ctx.clone()).await?;
    (spec.run)(&args, &ctx).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_spelling_implies_the_seed_behaviour_and_nothing_else() {
        use serde_json::json;
        let routed = |name: &'static str, mut args: Value| (route(name, &mut args), args);
        // TunaCode's key selects TunaCode's write_file; an explicit style wins; others untouched.
        assert_eq!(
            routed("write_file", json!({"filepath": "a", "content": ""})),
            ("write_file", json!({"filepath": "a", "content": "", "style": "tunacode"}))
        );
        assert_eq!(
            routed("write_file", json!({"filepath": "a", "style": "default"})).1,
            json!({"filepath": "a", "style": "default"})
        );
        assert_eq!(routed("write_file", json!({"filePath": "a"})).1, json!({"filePath": "a"}));
        // The seeds' shell-command names: bash and their sections; a program with args stays one.
        assert_eq!(
            routed("execute_command", json!({"command": "pytest"})),
            ("execute_command", json!({"command": "pytest", "shell": true, "style": "alfredo"}))
        );
        assert_eq!(
            routed("run_command", json!({"command": "ls", "args": ["-l"]})).1,
            json!({"command": "ls", "args": ["-l"], "style": "tunacode"})
        );
        assert_eq!(routed("run", json!({"command": "ls"})).1, json!({"command": "ls"}));
        assert_eq!(routed("search_files", json!({"regex": "a", "path": "."})).0, "grep");
        // Every implied argument is one its tool takes.
        for i in IMPLIED {
            let spec = find(i.tool).unwrap_or_else(|| panic!("{} is not a tool", i.tool));
            let def = definition(spec.name).cloned().unwrap_or_default();
            assert!(def["jsonSchema"]["properties"].get(i.arg).is_some(), "{}: {}", i.tool, i.arg);
        }
    }

    #[test]
    fn tool_aliases_name_existing_tools_and_shadow_none() {
        for (alias, canonical) in TOOL_ALIASES {
            assert!(tools().all(|t| t.name != *alias && t.js_name != *alias), "{alias} shadows a tool");
            assert_eq!(find(alias).map(|t| t.name), Some(*canonical), "{alias}");
        }
    }

    #[test]
    fn every_tool_has_its_definition() {
        for family in FAMILIES {
            for spec in family.tools {
                let def = definition(spec.name).unwrap_or_else(|| panic!("{} has no definition", spec.name));
                assert_eq!(def["name"], spec.name);
                assert_eq!(spec.family, family.name, "{}", spec.name);
                assert_eq!(spec.definition.is_empty(), family.contract.is_some(), "{}", spec.name);
                let id = def["outputSchema"]["$id"].as_str().unwrap_or_default();
                assert!(id.starts_with("eddie.tool."), "{id}");
                assert_eq!(def["jsonSchema"]["type"], "object");
                assert!(def["description"].as_str().is_some_and(|d| !d.is_empty()), "{}", spec.name);
            }
        }
        assert_eq!(definitions().len(), tools().count());
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
        assert_eq!(id("bash"), crate::eddie::bash::SCHEMA);
        assert_eq!(id("file_read"), crate::eddie::file_read::SCHEMA);
        assert_eq!(id("file_write"), crate::eddie::file_write::SCHEMA);
        assert_eq!(id("file_search"), crate::eddie::file_search::SCHEMA);
        assert_eq!(id("get_folder_tree_structure"), crate::eddie::get_folder_tree_structure::SCHEMA);
        for n in ["get_plan", "complete_task", "update_plan"] {
            assert_eq!(id(n), crate::engine::plan::SCHEMA);
        }
        for t in crate::eddie::FAMILY.tools.iter().filter(|t| t.name.starts_with("agent__")) {
            assert_eq!(id(t.name), crate::engine::plan::tasks::SCHEMA);
        }
    }
}
