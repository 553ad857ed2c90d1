//! The one registry: every tool with its name, JS export name, family, whether it mutates,
//! its permission level, its description and its input/output JSON Schemas, and [`run`] to
//! dispatch a call by name.
//!
//! Tools come in families. A family owns a list of [`ToolSpec`]s, a JSON array of
//! definitions (`{name, description, jsonSchema, outputSchema}`, in the same order) and a
//! dispatch function. The `eddie` family is `@eddie/tools`' built-ins (`builtinTools`);
//! every other family adds tools from the reference agents. To add a family, give its module
//! a `pub const FAMILY: Family` and list it in [`FAMILIES`].

use std::sync::OnceLock;

use serde_json::Value;

use crate::context::Ctx;
use crate::error::Result;
use crate::output::ToolOutput;
pub use crate::spec::{BlockingFn, Effects, Family, Permission, RunFn, RunFuture, ToolSpec};

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

/// The outputSchema `$id` tool `spec` declares in its definition: the `schema` of every result
/// the pipeline returns for it ([`stamp`]).
pub fn output_id(spec: &ToolSpec) -> &'static str {
    definition(spec.name).and_then(|d| d.get("outputSchema")?.get("$id")?.as_str()).unwrap_or_default()
}

/// `out` with the `$id` its tool declares ([`output_id`]): a tool cannot return another.
pub fn stamp(spec: &ToolSpec, out: ToolOutput) -> ToolOutput {
    out.with_schema(output_id(spec))
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

/// The input schema a model sees for tool `name`: its `jsonSchema`, with the descriptions a
/// verbatim contract leaves out added from its family's [`Family::contract_docs`] (where a
/// property has none). For every other tool it is the `jsonSchema` itself.
pub fn model_schema(name: &str) -> Option<Value> {
    let mut schema = definition(name)?.get("jsonSchema").cloned().unwrap_or_default();
    let docs = family_of(name).map_or(&[][..], |f| f.contract_docs);
    for (_, path, text) in docs.iter().filter(|(tool, _, _)| *tool == name) {
        if let Some(Value::Object(prop)) = property_at(&mut schema, path) {
            prop.entry("description").or_insert_with(|| Value::from(*text));
        }
    }
    Some(schema)
}

/// The schema of the property at `path` (`a.b`, `a[]` for an array's items) inside `schema`.
fn property_at<'a>(schema: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    path.split('.').try_fold(schema, |s, part| {
        let (key, items) = part.strip_suffix("[]").map_or((part, false), |k| (k, true));
        let prop = s.get_mut("properties")?.get_mut(key)?;
        if items { prop.get_mut("items") } else { Some(prop) }
    })
}

/// The reference agents' names for tools this package has under another name, `(alias,
/// canonical)`, from each spec's [`ToolSpec::tool_aliases`]. [`find`] resolves them.
pub fn tool_aliases() -> impl Iterator<Item = (&'static str, &'static str)> {
    tools().flat_map(|t| t.tool_aliases.iter().map(|a| (*a, t.name)))
}

/// What a seed's own spelling of a call means beyond its names: a call of `tool` (a model
/// name or one of its [`ToolSpec::tool_aliases`]) that gives `key` (any call of it, when `key` is `None`) gets
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
        .or_else(|| tool_aliases().find(|(alias, _)| *alias == name).map(|(alias, _)| alias))
}

/// The spec of tool `name` (model name, JS name, or one of its [`ToolSpec::tool_aliases`]).
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    tools()
        .find(|t| t.name == name || t.js_name == name)
        .or_else(|| tools().find(|t| t.tool_aliases.contains(&name)))
}

/// Run tool `name` (model or JS name) with `args` in the current task: the argument policy,
/// the permission gate and dispatch of [`crate::call::call`], without its panic and abort
/// handling (for tests and tools that call tools).
pub async fn run(name: &str, args: &Value, ctx: &Ctx) -> Result<ToolOutput> {
    let (spec, _, args, ctx) = crate::call::prepare(name, args.clone(), ctx.clone()).await?;
    (spec.run)(&args, &ctx).await.map(|out| stamp(spec, out))
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
    fn every_contract_doc_names_a_property_of_its_tool() {
        for family in FAMILIES {
            for (tool, path, _) in family.contract_docs {
                let def = definition(tool).cloned().unwrap_or_default();
                let mut schema = def["jsonSchema"].clone();
                assert!(property_at(&mut schema, path).is_some(), "{tool}: {path}");
                let model = model_schema(tool).unwrap_or_default();
                let mut model2 = model.clone();
                let desc = property_at(&mut model2, path).and_then(|p| p.get("description").cloned());
                assert!(desc.is_some_and(|d| d.as_str().is_some_and(|d| !d.is_empty())), "{tool}: {path}");
            }
        }
        // Every property of eddie's tools has one, and the contract's jsonSchema is untouched.
        for spec in crate::eddie::FAMILY.tools {
            let model = model_schema(spec.name).unwrap_or_default();
            for (key, prop) in model["properties"].as_object().into_iter().flatten() {
                assert!(prop.get("description").is_some(), "{}: {key}", spec.name);
            }
            let def = definition(spec.name).cloned().unwrap_or_default();
            assert!(
                def["jsonSchema"]["properties"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .all(|(_, p)| p.get("description").is_none()),
                "{}",
                spec.name
            );
        }
    }

    #[test]
    fn tool_aliases_name_existing_tools_and_shadow_none() {
        let mut seen = std::collections::HashSet::new();
        for (alias, canonical) in tool_aliases() {
            assert!(tools().all(|t| t.name != alias && t.js_name != alias), "{alias} shadows a tool");
            assert!(seen.insert(alias), "{alias} names two tools");
            assert_eq!(find(alias).map(|t| t.name), Some(canonical), "{alias}");
        }
        // The seeds' names resolve (Stack's read and fetch, Alfredo's execute_command).
        assert_eq!(find("read").map(|t| t.name), Some("read_file"));
        assert_eq!(find("fetch").map(|t| t.name), Some("web_fetch"));
        assert_eq!(find("execute_command").map(|t| t.name), Some("run"));
        assert!(find("no_such_tool").is_none());
    }

    #[test]
    fn every_tool_has_its_definition() {
        for family in FAMILIES {
            for spec in family.tools {
                let def = definition(spec.name).unwrap_or_else(|| panic!("{} has no definition", spec.name));
                assert_eq!(def["name"], spec.name);
                assert_eq!(spec.family, family.name, "{}", spec.name);
                assert_eq!(spec.definition.is_empty(), family.contract.is_some(), "{}", spec.name);
                // Only @eddie/tools' built-ins ignore unknown keys.
                assert_eq!(spec.lenient_keys, family.name == "eddie", "{}", spec.name);
                // A blocking form skips the gate's question: only for tools that never ask.
                if spec.blocking.is_some() {
                    assert_eq!(spec.permission, Permission::None, "{}", spec.name);
                    assert!(!spec.confirms(), "{}", spec.name);
                }
                let id = def["outputSchema"]["$id"].as_str().unwrap_or_default();
                assert!(id.starts_with("eddie.tool."), "{id}");
                assert_eq!(def["jsonSchema"]["type"], "object");
                assert!(def["description"].as_str().is_some_and(|d| !d.is_empty()), "{}", spec.name);
            }
        }
        assert_eq!(definitions().len(), tools().count());
    }

    #[test]
    fn every_property_outside_eddie_has_a_description() {
        // The descriptions come from the `///` comments on each tool's `Args` (eddie's schemas
        // are @eddie/tools' verbatim ones).
        fn walk(s: &Value, path: &str, missing: &mut Vec<String>) {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    let here = format!("{path}.{k}");
                    if v.get("description").and_then(Value::as_str).is_none_or(|d| d.trim().is_empty()) {
                        missing.push(here.clone());
                    }
                    walk(v, &here, missing);
                }
            }
            if let Some(items) = s.get("items") {
                walk(items, &format!("{path}[]"), missing);
            }
            for key in ["anyOf", "oneOf"] {
                for v in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                    walk(v, path, missing);
                }
            }
        }
        let mut missing = Vec::new();
        for t in tools().filter(|t| t.family != "eddie") {
            let def = definition(t.name).cloned().unwrap_or_default();
            assert!(def["jsonSchema"]["properties"].is_object(), "{}", t.name);
            walk(&def["jsonSchema"], t.name, &mut missing);
        }
        assert_eq!(missing, Vec::<String>::new());
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

    /// The `$id`s shared by tools with one result shape: the edits, the patches, the plan
    /// tools and the task-list tools (eddie's contract).
    const SHARED_IDS: &[(&str, &[&str])] = &[
        (
            "eddie.tool.edit.result.v1",
            &["edit_file", "multi_edit", "edit_range", "insert_at", "delete_range"],
        ),
        ("eddie.tool.patch.result.v1", &["apply_unified_diff", "apply_patch"]),
        ("eddie.tool.plan.result.v1", &["get_plan", "complete_task", "update_plan"]),
        (
            "eddie.tool.task_list.result.v1",
            &[
                "agent__new_task_list",
                "agent__new_task",
                "agent__get_task_list",
                "agent__set_task_status",
                "agent__delete_task",
            ],
        ),
    ];

    #[test]
    fn every_result_carries_the_id_its_definition_declares() {
        for t in tools() {
            let declared = definition(t.name).and_then(|d| d["outputSchema"]["$id"].as_str());
            let shared = SHARED_IDS.iter().find(|(_, names)| names.contains(&t.name)).map(|(id, _)| *id);
            let own = format!("eddie.tool.{}.result.v1", t.name);
            assert_eq!(declared, Some(shared.unwrap_or(&own)), "{}", t.name);
            // What the pipeline stamps on a result is the declared id, whatever the tool set.
            let out = ToolOutput::new("", Value::Null).with_schema("eddie.tool.other.result.v1");
            assert_eq!(Some(stamp(t, out).schema), declared, "{}", t.name);
        }
    }

    #[tokio::test]
    async fn every_way_of_running_a_tool_stamps_its_id() {
        use serde_json::json;
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.txt"), "one\n").unwrap();
        let ctx = Ctx::new(t.path().to_str().unwrap()).unwrap();
        let by_run = run("read_file", &json!({"path": "a.txt"}), &ctx).await.unwrap();
        assert_eq!(by_run.schema, "eddie.tool.read_file.result.v1");
        let by_call = crate::call::call("glob", json!({"pattern": "*.txt"}), ctx.clone()).await.unwrap();
        assert_eq!(by_call.schema, "eddie.tool.glob.result.v1");
        // An alias is stamped with its tool's id.
        let by_alias = crate::call::call("read", json!({"path": "a.txt"}), ctx.clone()).await.unwrap();
        assert_eq!(by_alias.schema, "eddie.tool.read_file.result.v1");
        let blocking =
            crate::call::call_blocking("file_read", json!({"path": "a.txt"}), &ctx).unwrap().unwrap();
        assert_eq!(blocking.schema, "eddie.tool.file_read.result.v1");
        // The shared ids: an edit and a plan tool.
        let edit = crate::call::call(
            "edit_file",
            json!({"path": "a.txt", "oldString": "one", "newString": "two"}),
            ctx.clone().with_confirm(crate::context::constant_confirm(true)),
        )
        .await
        .unwrap();
        assert_eq!(edit.schema, "eddie.tool.edit.result.v1");
        let plan = crate::call::call("get_plan", json!({}), ctx).await.unwrap();
        assert_eq!(plan.schema, "eddie.tool.plan.result.v1");
    }
}
