//! The symbol engine of the `code` family: tree-sitter grammars from crates.io (TypeScript,
//! TSX, JavaScript/JSX, Python, Rust) turned into definitions (`Symbol`) and identifier
//! occurrences. No regex heuristics: a name inside a string or a comment is never a symbol
//! or a reference.

use std::cell::RefCell;

use serde_json::{Value, json};
use tree_sitter::{Node, Parser, Tree};

use crate::engine::project::languages::language;

/// Files larger than this are not parsed during a walk (counted as skipped): a parse tree takes
/// about 30 times the source's size.
pub const MAX_PARSE_BYTES: u64 = 1024 * 1024;
/// The cap for a file the caller names explicitly.
pub const MAX_EXPLICIT_PARSE_BYTES: u64 = 4 * 1024 * 1024;

/// A supported language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`
    JavaScript,
    /// `.py`, `.pyi`
    Python,
    /// `.rs`
    Rust,
}

impl Lang {
    /// The language of a file, by extension (the one table, `engine::project::languages`;
    /// `.tsx` is TypeScript's TSX grammar).
    pub fn of(path: &str) -> Option<Self> {
        let name = path.rsplit('/').next().unwrap_or(path);
        Some(match language(name)? {
            "TypeScript" if name.to_ascii_lowercase().ends_with(".tsx") => Self::Tsx,
            "TypeScript" => Self::TypeScript,
            "JavaScript" => Self::JavaScript,
            "Python" => Self::Python,
            "Rust" => Self::Rust,
            _ => return None,
        })
    }

    /// Its name in results.
    pub fn name(self) -> &'static str {
        match self {
            Self::TypeScript => "typescript",
            Self::Tsx => "tsx",
            Self::JavaScript => "javascript",
            Self::Python => "python",
            Self::Rust => "rust",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }
}

/// The extensions parsed, for messages and include globs.
pub const EXTENSIONS: &str = "ts, tsx, mts, cts, js, jsx, mjs, cjs, py, pyi, rs";

/// A definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name (for a Rust `impl`: the implemented type, or `Trait for Type`).
    pub name: String,
    /// function, method, class, interface, type, enum, module, variable, constant, property,
    /// struct, trait, impl, macro, union.
    pub kind: &'static str,
    /// 1-based line of the name.
    pub line: usize,
    /// 1-based column (characters) of the name.
    pub column: usize,
    /// 1-based last line of the definition.
    pub end_line: usize,
    /// The enclosing class, interface, impl, trait or module, if any.
    pub container: Option<String>,
}

impl Symbol {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "kind": self.kind,
            "line": self.line,
            "column": self.column,
            "endLine": self.end_line,
            "container": self.container,
        })
    }
}

/// A kind filter (the `kind` argument of `list_symbols` and `find_symbol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A function (also matches methods).
    Function,
    /// A method.
    Method,
    /// A class (also matches structs).
    Class,
    /// An interface (also matches traits).
    Interface,
    /// A type alias.
    Type,
    /// An enum.
    Enum,
    /// A module or namespace.
    Module,
    /// A variable.
    Variable,
    /// A constant.
    Constant,
    /// A property or field.
    Property,
    /// A struct.
    Struct,
    /// A trait.
    Trait,
    /// An impl block.
    Impl,
    /// A macro.
    Macro,
    /// A union.
    Union,
}

impl Kind {
    /// The kind's name, as symbols carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Function => "function",
            Self::Method => "method",
            Self::Class => "class",
            Self::Interface => "interface",
            Self::Type => "type",
            Self::Enum => "enum",
            Self::Module => "module",
            Self::Variable => "variable",
            Self::Constant => "constant",
            Self::Property => "property",
            Self::Struct => "struct",
            Self::Trait => "trait",
            Self::Impl => "impl",
            Self::Macro => "macro",
            Self::Union => "union",
        }
    }

    /// Whether a symbol of kind `kind` matches this filter (`class` also takes structs,
    /// `interface` traits, `function` methods).
    pub fn matches(self, kind: &str) -> bool {
        kind_matches(self.as_str(), kind)
    }
}

/// Whether `kind` matches the requested kind filter (`class` also takes structs, `interface`
/// traits, `function` methods).
pub fn kind_matches(filter: &str, kind: &str) -> bool {
    filter == kind
        || matches!((filter, kind), ("class", "struct") | ("interface", "trait") | ("function", "method"))
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Parse `src` (`None` if the grammar could not be loaded or parsing failed).
pub fn parse(lang: Lang, src: &[u8]) -> Option<Tree> {
    parse_until(lang, src, &|| false)
}

/// Parse `src`, giving up (`None`) as soon as `stop()` says so (checked as parsing goes).
pub fn parse_until(lang: Lang, src: &[u8], stop: &dyn Fn() -> bool) -> Option<Tree> {
    PARSER.with(|p| {
        let mut p = p.borrow_mut();
        p.reset();
        p.set_language(&lang.grammar()).ok()?;
        let mut progress = |_: &tree_sitter::ParseState| {
            if stop() { std::ops::ControlFlow::Break(()) } else { std::ops::ControlFlow::Continue(()) }
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let len = src.len();
        let mut read = |i: usize, _: tree_sitter::Point| if i < len { &src[i..] } else { &[] as &[u8] };
        p.parse_with_options(&mut read, None, Some(options))
    })
}

fn text<'a>(n: Node<'_>, src: &'a [u8]) -> &'a str {
    std::str::from_utf8(&src[n.byte_range()]).unwrap_or("")
}

/// 1-based character column of byte `col` in its line.
fn char_column(src: &[u8], n: Node<'_>) -> usize {
    let start = n.start_byte();
    let line_start = start - n.start_position().column;
    String::from_utf8_lossy(&src[line_start..start]).chars().count() + 1
}

/// (kind, name node) when `n` defines something.
fn definition<'t>(lang: Lang, n: Node<'t>, src: &[u8], in_type: bool) -> Option<(&'static str, Node<'t>)> {
    let name = |field: &str| n.child_by_field_name(field);
    let k = n.kind();
    match lang {
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => match k {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                Some(("function", name("name")?))
            }
            "class_declaration" | "abstract_class_declaration" => Some(("class", name("name")?)),
            "method_definition" | "method_signature" | "abstract_method_signature" => {
                Some(("method", name("name")?))
            }
            "interface_declaration" => Some(("interface", name("name")?)),
            "type_alias_declaration" => Some(("type", name("name")?)),
            "enum_declaration" => Some(("enum", name("name")?)),
            "internal_module" | "module" => {
                let nm = name("name")?;
                (nm.kind() == "identifier" || nm.kind() == "nested_identifier").then_some(("module", nm))
            }
            "public_field_definition" | "field_definition" | "property_signature" => {
                let nm = name("name").or_else(|| name("property"))?;
                let is_fn = name("value")
                    .is_some_and(|v| matches!(v.kind(), "arrow_function" | "function_expression"));
                Some((if is_fn { "method" } else { "property" }, nm))
            }
            // CommonJS and prototype style: `exports.run = function () {}`,
            // `Foo.prototype.bar = () => {}` at the top level.
            "assignment_expression" => {
                let right = name("right")?;
                if !matches!(
                    right.kind(),
                    "arrow_function" | "function_expression" | "function" | "generator_function"
                ) {
                    return None;
                }
                let stmt = n.parent()?;
                if stmt.kind() != "expression_statement" || stmt.parent()?.kind() != "program" {
                    return None;
                }
                let left = name("left")?;
                match left.kind() {
                    "member_expression" => Some(("function", left.child_by_field_name("property")?)),
                    "identifier" => Some(("function", left)),
                    _ => None,
                }
            }
            "variable_declarator" => {
                let nm = name("name")?;
                if nm.kind() != "identifier" {
                    return None;
                }
                let decl = n.parent()?;
                let top = decl.parent()?;
                if !matches!(top.kind(), "program" | "export_statement") {
                    return None;
                }
                let is_fn = name("value").is_some_and(|v| {
                    matches!(
                        v.kind(),
                        "arrow_function" | "function_expression" | "function" | "generator_function"
                    )
                });
                let is_const = decl.child(0).is_some_and(|c| text(c, src) == "const");
                Some((
                    if is_fn {
                        "function"
                    } else if is_const {
                        "constant"
                    } else {
                        "variable"
                    },
                    nm,
                ))
            }
            _ => None,
        },
        Lang::Python => match k {
            "function_definition" => Some((if in_type { "method" } else { "function" }, name("name")?)),
            "class_definition" => Some(("class", name("name")?)),
            "assignment" => {
                let left = name("left")?;
                let stmt = n.parent()?;
                let top = stmt.parent()?;
                if left.kind() != "identifier"
                    || stmt.kind() != "expression_statement"
                    || top.kind() != "module"
                {
                    return None;
                }
                let t = text(left, src);
                let upper = t.chars().any(|c| c.is_ascii_uppercase())
                    && t.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                Some((if upper { "constant" } else { "variable" }, left))
            }
            _ => None,
        },
        Lang::Rust => match k {
            "function_item" | "function_signature_item" => {
                Some((if in_type { "method" } else { "function" }, name("name")?))
            }
            "struct_item" => Some(("struct", name("name")?)),
            "enum_item" => Some(("enum", name("name")?)),
            "union_item" => Some(("union", name("name")?)),
            "trait_item" => Some(("trait", name("name")?)),
            "type_item" => Some(("type", name("name")?)),
            "const_item" => Some(("constant", name("name")?)),
            "static_item" => Some(("variable", name("name")?)),
            "mod_item" => Some(("module", name("name")?)),
            "macro_definition" => Some(("macro", name("name")?)),
            "impl_item" => Some(("impl", name("type")?)),
            _ => None,
        },
    }
}

/// Every definition in `src`, in source order.
pub fn symbols(lang: Lang, src: &[u8]) -> Vec<Symbol> {
    symbols_until(lang, src, &|| false)
}

/// [`symbols`], giving up (empty) when `stop()` says so.
pub fn symbols_until(lang: Lang, src: &[u8], stop: &dyn Fn() -> bool) -> Vec<Symbol> {
    let Some(tree) = parse_until(lang, src, stop) else { return Vec::new() };
    symbols_in(lang, &tree, src)
}

/// Every definition in a parsed tree, in source order.
pub fn symbols_in(lang: Lang, tree: &Tree, src: &[u8]) -> Vec<Symbol> {
    let mut out = Vec::new();
    // (node, container name, container is a type whose functions are methods)
    let mut stack: Vec<(Node<'_>, Option<String>, bool)> = vec![(tree.root_node(), None, false)];
    while let Some((n, container, in_type)) = stack.pop() {
        let mut child_container = container.clone();
        let mut child_in_type = in_type;
        if let Some((kind, name_node)) = definition(lang, n, src, in_type) {
            let mut name = text(name_node, src).to_owned();
            if kind == "impl"
                && let Some(tr) = n.child_by_field_name("trait")
            {
                name = format!("{} for {name}", text(tr, src));
            }
            out.push(Symbol {
                name: name.clone(),
                kind,
                line: name_node.start_position().row + 1,
                column: char_column(src, name_node),
                end_line: n.end_position().row + 1,
                container: container.clone(),
            });
            match kind {
                "class" | "interface" | "trait" | "module" | "enum" | "struct" => {
                    child_container = Some(name);
                    child_in_type = kind != "module";
                }
                "impl" => {
                    child_container = Some(text(name_node, src).to_owned());
                    child_in_type = true;
                }
                // Functions nested in functions are local: keep them, but not as methods.
                "function" | "method" => child_in_type = false,
                _ => {}
            }
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
        for c in children.into_iter().rev() {
            stack.push((c, child_container.clone(), child_in_type));
        }
    }
    out
}

/// An identifier occurrence.
#[derive(Debug, Clone)]
pub struct Occurrence {
    /// 1-based line.
    pub line: usize,
    /// 1-based character column.
    pub column: usize,
}

/// Every identifier-like leaf whose text is exactly `name` (identifiers, property, type,
/// field and shorthand identifiers; never strings or comments).
pub fn occurrences(tree: &Tree, src: &[u8], name: &str) -> Vec<Occurrence> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut descend = true;
    loop {
        if descend && cursor.goto_first_child() {
            continue;
        }
        let n = cursor.node();
        if n.child_count() == 0 && n.is_named() && n.kind().ends_with("identifier") && text(n, src) == name {
            out.push(Occurrence { line: n.start_position().row + 1, column: char_column(src, n) });
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        // Climb until a sibling exists.
        loop {
            if !cursor.goto_parent() {
                return out;
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
        descend = true;
    }
}

/// Line `line` (1-based) of `src`, lossy, without its terminator, cut at `max` characters.
pub fn line_text(src: &[u8], line: usize, max: usize) -> String {
    let l = src.split(|b| *b == b'\n').nth(line.saturating_sub(1)).unwrap_or(b"");
    let l = l.strip_suffix(b"\r").unwrap_or(l);
    let s = String::from_utf8_lossy(l);
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(lang: Lang, src: &str) -> Vec<(String, &'static str, usize, Option<String>)> {
        symbols(lang, src.as_bytes()).into_iter().map(|s| (s.name, s.kind, s.line, s.container)).collect()
    }

    #[test]
    fn typescript_definitions() {
        let src = "export function run(a: number) { const inner = 1; return a }\n\
                   export const handler = async () => 1\n\
                   const LIMIT = 3\nlet counter = 0\n\
                   interface Shape { area(): number }\n\
                   type Id = string\nenum Color { Red }\n\
                   export default class Engine extends Base {\n  speed = 1\n  start() {}\n}\n\
                   namespace NS { export function f() {} }\n\
                   // function notReal() {}\nconst s = 'class Fake {}'\n";
        let got = names(Lang::TypeScript, src);
        let want: Vec<(String, &str, usize, Option<String>)> = vec![
            ("run".into(), "function", 1, None),
            ("handler".into(), "function", 2, None),
            ("LIMIT".into(), "constant", 3, None),
            ("counter".into(), "variable", 4, None),
            ("Shape".into(), "interface", 5, None),
            ("area".into(), "method", 5, Some("Shape".into())),
            ("Id".into(), "type", 6, None),
            ("Color".into(), "enum", 7, None),
            ("Engine".into(), "class", 8, None),
            ("speed".into(), "property", 9, Some("Engine".into())),
            ("start".into(), "method", 10, Some("Engine".into())),
            ("NS".into(), "module", 12, None),
            ("f".into(), "function", 12, Some("NS".into())),
            ("s".into(), "constant", 14, None),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn javascript_jsx_python_rust() {
        let js = names(
            Lang::JavaScript,
            "class A { m() {} }\nfunction f() { return <div/> }\nmodule.exports = f\n",
        );
        assert_eq!(
            js.iter().map(|s| (s.0.as_str(), s.1)).collect::<Vec<_>>(),
            [("A", "class"), ("m", "method"), ("f", "function")]
        );
        let py = names(
            Lang::Python,
            "MAX = 3\nx = 1\n@dec\nclass K:\n    def m(self):\n        def local(): pass\n\ndef top(): pass\n",
        );
        assert_eq!(
            py.iter().map(|s| (s.0.as_str(), s.1)).collect::<Vec<_>>(),
            [
                ("MAX", "constant"),
                ("x", "variable"),
                ("K", "class"),
                ("m", "method"),
                ("local", "function"),
                ("top", "function")
            ]
        );
        let rs = names(
            Lang::Rust,
            "pub struct S;\nimpl Display for S { fn fmt(&self) {} }\ntrait T { fn t(); }\nfn free() {}\nmod m { const C: u8 = 1; }\nmacro_rules! mac { () => {} }\n",
        );
        assert_eq!(
            rs.iter().map(|s| (s.0.as_str(), s.1, s.3.as_deref())).collect::<Vec<_>>(),
            [
                ("S", "struct", None),
                ("Display for S", "impl", None),
                ("fmt", "method", Some("S")),
                ("T", "trait", None),
                ("t", "method", Some("T")),
                ("free", "function", None),
                ("m", "module", None),
                ("C", "constant", Some("m")),
                ("mac", "macro", None),
            ]
        );
    }

    #[test]
    fn occurrences_skip_strings_and_comments() {
        let src = b"const foo = 1\n// foo in a comment\nconst s = 'foo'\nbar(foo, obj.foo, { foo })\n";
        let tree = parse(Lang::TypeScript, src).unwrap();
        let occ: Vec<(usize, usize)> =
            occurrences(&tree, src, "foo").iter().map(|o| (o.line, o.column)).collect();
        assert_eq!(occ, [(1, 7), (4, 5), (4, 14), (4, 21)]);
        assert_eq!(line_text(src, 4, 5), "bar(f…");
        assert_eq!(Lang::of("a/b.tsx"), Some(Lang::Tsx));
        assert_eq!(Lang::of("a/b.go"), None);
        let big = "fn a() { let x = 1; }\n".repeat(50_000);
        assert!(parse_until(Lang::Rust, big.as_bytes(), &|| true).is_none(), "a stopped parse gives up");
        assert!(parse(Lang::Rust, b"fn a() {}").is_some(), "and the parser works again after");
    }
}
