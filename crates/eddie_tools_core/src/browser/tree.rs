//! The accessibility tree: fetched with `Accessibility.getFullAXTree`, rendered as compact
//! indented text where every interactive node carries a short ref (`e12`) that stays the same
//! across reads (it is keyed by the DOM node), and ranked for `browser_find` without a model.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use super::session::{Browser, Tab, TabState};
use crate::error::Result;

/// One node of the tree.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// The role (`button`, `textbox`, `StaticText`, ...).
    pub role: String,
    /// The accessible name.
    pub name: String,
    /// The value (text fields, sliders).
    pub value: Option<String>,
    /// The description.
    pub description: Option<String>,
    /// The DOM node behind it.
    pub backend: Option<i64>,
    /// Ignored by assistive technology.
    pub ignored: bool,
    /// States and properties (`focused`, `disabled`, `checked`, `level`, ...).
    pub props: Vec<(String, Value)>,
    /// Children, as indexes.
    pub children: Vec<usize>,
    /// Parent, as an index.
    pub parent: Option<usize>,
}

/// Roles whose nodes get a ref (plus anything focusable).
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "textField",
    "ListBoxOption",
    "MenuListPopup",
    "MenuListOption",
    "PopUpButton",
    "ToggleButton",
    "DisclosureTriangle",
];

/// Roles shown only through their children when they have no name.
const TRANSPARENT: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "group",
    "GenericContainer",
    "Section",
    "LayoutTable",
    "LayoutTableRow",
    "LayoutTableCell",
    "Div",
    "Pre",
    "Unknown",
];

/// States shown in the text, in this order.
const SHOWN: &[&str] = &[
    "focused",
    "disabled",
    "checked",
    "pressed",
    "selected",
    "expanded",
    "required",
    "invalid",
    "readonly",
    "level",
    "multiline",
    "modal",
];

impl Node {
    /// Whether it gets a ref.
    pub fn interactive(&self) -> bool {
        INTERACTIVE.contains(&self.role.as_str())
            || self.props.iter().any(|(k, v)| k == "focusable" && v.as_bool() == Some(true))
                && !matches!(self.role.as_str(), "RootWebArea" | "WebArea" | "generic" | "Iframe")
    }

    /// A property's value.
    pub fn prop(&self, key: &str) -> Option<&Value> {
        self.props.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The states worth showing, as `key` or `key=value`.
    pub fn states(&self) -> Vec<String> {
        let mut out = Vec::new();
        for key in SHOWN {
            match self.prop(key) {
                Some(Value::Bool(true)) => out.push((*key).to_owned()),
                Some(Value::Bool(false)) if matches!(*key, "checked" | "expanded" | "pressed") => {
                    out.push(format!("{key}=false"));
                }
                Some(Value::String(s)) if s == "true" => out.push((*key).to_owned()),
                Some(Value::String(s)) if s == "false" => {
                    if matches!(*key, "checked" | "expanded" | "pressed") {
                        out.push(format!("{key}=false"));
                    }
                }
                Some(Value::String(s)) if !s.is_empty() => out.push(format!("{key}={s}")),
                Some(Value::Number(n)) => out.push(format!("{key}={n}")),
                _ => {}
            }
        }
        out
    }
}

fn ax_value(v: &Value) -> Option<String> {
    match &v["value"] {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Parse `Accessibility.getFullAXTree`'s nodes.
pub fn parse(result: &Value) -> Vec<Node> {
    let raw = result["nodes"].as_array().map(Vec::as_slice).unwrap_or_default();
    let index: HashMap<&str, usize> =
        raw.iter().enumerate().filter_map(|(i, n)| n["nodeId"].as_str().map(|id| (id, i))).collect();
    let mut nodes: Vec<Node> = raw
        .iter()
        .map(|n| Node {
            role: n["role"]["value"].as_str().unwrap_or("").to_owned(),
            name: ax_value(&n["name"]).unwrap_or_default(),
            value: ax_value(&n["value"]).filter(|v| !v.is_empty()),
            description: ax_value(&n["description"]).filter(|v| !v.is_empty()),
            backend: n["backendDOMNodeId"].as_i64(),
            ignored: n["ignored"].as_bool().unwrap_or(false),
            props: n["properties"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| Some((p["name"].as_str()?.to_owned(), p["value"]["value"].clone())))
                        .collect()
                })
                .unwrap_or_default(),
            children: n["childIds"]
                .as_array()
                .map(|c| {
                    c.iter().filter_map(|id| id.as_str().and_then(|id| index.get(id).copied())).collect()
                })
                .unwrap_or_default(),
            parent: None,
        })
        .collect();
    for i in 0..nodes.len() {
        let kids = nodes[i].children.clone();
        for k in kids {
            if k < nodes.len() {
                nodes[k].parent = Some(i);
            }
        }
    }
    // A select's popup is a node of Chromium's own inside the select: its ref stands for the
    // select (as the page walker's does), keyed apart from the select's own ref.
    for i in 0..nodes.len() {
        if nodes[i].role == "MenuListPopup"
            && let Some(p) = nodes[i].parent
            && let Some(be) = nodes[p].backend
        {
            nodes[i].backend = Some(-be);
        }
    }
    nodes
}

/// The tree of `tab`, fresh.
pub async fn fetch(b: &Browser, tab: &Tab) -> Result<Vec<Node>> {
    let r = b.conn.call(Some(&tab.session), "Accessibility.getFullAXTree", json!({})).await?;
    Ok(parse(&r))
}

/// The page walker (`walker.js`): the nodes [`fetch`] gives, computed inside the page.
const WALKER: &str = include_str!("walker.js");

/// The isolated world the walker runs in (the page's scripts cannot see it).
const WORLD: &str = "eddie-read-page";

/// The tree of `tab` as the page walker computes it: the same nodes, for [`render`], as
/// [`fetch`] gives (compared on fixture pages by `tests::the_walker_reads_what_the_ax_tree_reads`),
/// without Chromium's whole accessibility tree. The DOM nodes of the nodes that get refs come
/// back through the deep serialisation the first time the walker meets them, and are
/// remembered in the page's isolated world after that.
pub async fn fetch_fast(b: &Browser, tab: &Tab) -> Result<Vec<Node>> {
    let w = walk(b, tab).await?;
    let nodes = rows_of(&w.answer, RowsText(Rows(&w.learned), std::marker::PhantomData))?;
    Ok(link(nodes.unwrap_or_default()))
}

/// The page walker's answer: the frame holding its rows, unparsed, and the backend ids of
/// the elements it met for the first time, in order.
#[derive(Debug)]
pub struct Walk {
    answer: tokio_tungstenite::tungstenite::Utf8Bytes,
    learned: Vec<Option<i64>>,
}

impl Walk {
    /// A walk whose rows are `rows` (their JSON text), as the browser's answer holds them.
    #[cfg(test)]
    fn of_rows(rows: &str, learned: &[Option<i64>]) -> Walk {
        let answer = json!({"id": 1, "result": {"result": {"type": "array", "deepSerializedValue": {
            "type": "array", "value": [{"type": "string", "value": rows}, {"type": "node", "value": {}}]
        }}}});
        let answer = answer.to_string();
        Walk { answer: answer.into(), learned: learned.to_vec() }
    }

    /// The size of the answer holding the rows, in bytes.
    pub fn len(&self) -> usize {
        self.answer.len()
    }

    /// Whether the answer is empty (never, for an answer of the browser).
    pub fn is_empty(&self) -> bool {
        self.answer.is_empty()
    }
}

/// Numbers the reads, so that concurrent reads of one page keep their new elements apart.
static READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Run the page walker in `tab` (see [`fetch_fast`]), for [`render_walk`]: one evaluation in
/// the tools' isolated world, whose answer holds the rows' JSON text and the deep
/// serialisation of the elements the walker met for the first time. The answer's frame is not
/// parsed into a `Value` tree: the elements' backend ids are read from it with typed structs
/// (the rest skipped unread), and it is kept as it came for [`render_walk`], which renders the
/// rows as serde reads them. The ids are then handed back to the page (one more evaluation,
/// only when there are new elements).
pub async fn walk(b: &Browser, tab: &Tab) -> Result<Walk> {
    let read = READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (w, context) = evaluate(b, tab, read).await?;
    learn(b, tab, context, read, &w.learned).await?;
    Ok(w)
}

/// The walker's evaluation as read `read` (see [`walk`]), and the isolated world's context.
async fn evaluate(b: &Browser, tab: &Tab, read: u64) -> Result<(Walk, i64)> {
    let world = b
        .conn
        .call(
            Some(&tab.session),
            "Page.createIsolatedWorld",
            json!({"frameId": tab.target, "worldName": WORLD, "grantUniveralAccess": false}),
        )
        .await?;
    let context = world["executionContextId"].as_i64().unwrap_or_default();
    let method = "Runtime.evaluate";
    let answer = b
        .conn
        .call_frame(
            Some(&tab.session),
            method,
            json!({
                "expression": format!("globalThis.__eddieRead = {read};\n{WALKER}"),
                "contextId": context,
                "serializationOptions": {
                    "serialization": "deep",
                    "maxDepth": 1,
                    "additionalParameters": {"maxNodeDepth": 0, "includeShadowTree": "none"},
                },
            }),
        )
        .await?;
    let run: WalkerRun = crate::browser::cdp::read_result_as(&answer, method)?;
    if let Some(ex) = run.exception {
        let why =
            ex.exception.and_then(|e| e.description).or(ex.text).unwrap_or_else(|| "an exception".into());
        return Err(crate::error::ToolError::internal(format!("the page walker failed: {why}")));
    }
    let learned = run.result.and_then(|r| r.deep).and_then(|d| d.value).map(|l| l.0).unwrap_or_default();
    Ok((Walk { answer, learned }, context))
}

/// Hand read `read`'s new elements' backend ids back to the page (nothing to do without new
/// elements).
async fn learn(b: &Browser, tab: &Tab, context: i64, read: u64, learned: &[Option<i64>]) -> Result<()> {
    if learned.is_empty() {
        return Ok(());
    }
    let ids: Vec<Value> = learned.iter().map(|b| b.map_or(Value::Null, Value::from)).collect();
    let learn = format!("globalThis.__eddieLearn && globalThis.__eddieLearn({read}, {})", Value::Array(ids));
    b.conn
        .call(
            Some(&tab.session),
            "Runtime.evaluate",
            json!({"expression": learn, "contextId": context, "returnByValue": true}),
        )
        .await?;
    Ok(())
}

/// The walker's evaluation, read from its frame: the deep serialisation of its new elements
/// (only their backend ids kept; the rows skipped unread) or its exception.
#[derive(Deserialize)]
struct WalkerRun {
    result: Option<Serialized>,
    #[serde(rename = "exceptionDetails")]
    exception: Option<Thrown>,
}

#[derive(Deserialize)]
struct Serialized {
    #[serde(rename = "deepSerializedValue")]
    deep: Option<Deep>,
}

#[derive(Deserialize)]
struct Deep {
    value: Option<Learned>,
}

/// The backend ids of the walker's new elements: the parts after the rows (which are skipped
/// without being unescaped).
struct Learned(Vec<Option<i64>>);

impl<'de> Deserialize<'de> for Learned {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Parts;
        impl<'de> Visitor<'de> for Parts {
            type Value = Learned;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the walker's answer")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Learned, A::Error> {
                let mut ids = Vec::new();
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    while let Some(p) = seq.next_element::<Part>()? {
                        ids.push(p.value.and_then(|v| v.backend));
                    }
                }
                Ok(Learned(ids))
            }
        }
        d.deserialize_seq(Parts)
    }
}

#[derive(Deserialize)]
struct Part {
    value: Option<PartNode>,
}

#[derive(Deserialize)]
struct PartNode {
    #[serde(rename = "backendNodeId")]
    backend: Option<i64>,
}

#[derive(Deserialize)]
struct Thrown {
    text: Option<String>,
    exception: Option<ThrownObject>,
}

#[derive(Deserialize)]
struct ThrownObject {
    description: Option<String>,
}

/// The rows in the walker's `answer` (`result.deepSerializedValue.value[0].value`), read by
/// `seed` (everything else skipped unread); `None` when they are missing.
fn rows_of<'de, S: DeserializeSeed<'de>>(answer: &'de str, seed: S) -> Result<Option<S::Value>> {
    let seed = Field("result", Field("deepSerializedValue", Field("value", First(Field("value", seed)))));
    let rows = crate::browser::cdp::read_result(answer, "Runtime.evaluate", seed)?;
    Ok(rows.flatten().flatten().flatten().flatten())
}

/// The first item of a JSON array, read by the seed (the rest skipped unread); `None` when
/// the array is empty.
struct First<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for First<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for First<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Self::Value, A::Error> {
        let first = seq.next_element_seed(self.0)?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(first)
    }
}

/// The field `.0` of a JSON object, read by the seed `.1` (everything else skipped unread);
/// `None` without it.
struct Field<S>(&'static str, S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Field<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Field<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "an object with `{}`", self.0)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
        let Field(want, seed) = self;
        let mut seed = Some(seed);
        let mut out = None;
        while let Some(key) = map.next_key::<String>()? {
            match (key == want, seed.take()) {
                (true, Some(s)) => out = Some(map.next_value_seed(s)?),
                (_, s) => {
                    seed = s;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// One row of the walker: `[parent, role, name, value, props, el]` (walker.js).
#[derive(Deserialize)]
struct Row(Option<i64>, String, String, String, Option<Map<String, Value>>, Option<Value>);

/// The walker's rows, read one by one into nodes (see [`parse_walk`]).
struct Rows<'a>(&'a [Option<i64>]);

impl<'de> DeserializeSeed<'de> for Rows<'_> {
    type Value = Vec<Node>;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Vec<Node>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Rows<'_> {
    type Value = Vec<Node>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the walker's rows")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Vec<Node>, A::Error> {
        let learned = self.0;
        let mut nodes: Vec<Node> = Vec::new();
        while let Some(r) = seq.next_element::<Row>()? {
            let parent = r.0.and_then(|p| usize::try_from(p).ok()).filter(|&p| p < nodes.len());
            let mut node = node_of(r, learned, |i| nodes.get(i).and_then(|n: &Node| n.backend));
            node.parent = parent;
            nodes.push(node);
        }
        Ok(nodes)
    }
}

/// A row as a node (without parent or children): `el` is a backend id, the `n<i>`-th learned
/// one, or `p<row>`, a select's popup standing for the select (`backend_of(row)`): the negated
/// id keeps its ref apart.
fn node_of(
    Row(_, role, name, value, props, el): Row,
    learned: &[Option<i64>],
    backend_of: impl Fn(usize) -> Option<i64>,
) -> Node {
    let backend = match &el {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) if s.starts_with('n') => {
            s[1..].parse::<usize>().ok().and_then(|i| learned.get(i).copied().flatten())
        }
        Some(Value::String(s)) if s.starts_with('p') => {
            s[1..].parse::<usize>().ok().and_then(backend_of).map(|b| -b)
        }
        _ => None,
    };
    Node {
        role,
        name,
        value: (!value.is_empty()).then_some(value),
        description: None,
        backend,
        ignored: false,
        props: props.map(|m| m.into_iter().collect()).unwrap_or_default(),
        children: Vec::new(),
        parent: None,
    }
}

/// The walker's rows (`rows`: their JSON text) as nodes; `learned` holds the backend ids of
/// its new elements, in order. Text that is not the walker's rows gives no nodes.
pub fn parse_walk(rows: &str, learned: &[Option<i64>]) -> Vec<Node> {
    let mut de = serde_json::Deserializer::from_str(rows);
    match Rows(learned).deserialize(&mut de).and_then(|n| de.end().map(|()| n)) {
        Ok(n) => link(n),
        Err(_) => Vec::new(),
    }
}

/// `nodes` with their children listed (from their parents).
fn link(mut nodes: Vec<Node>) -> Vec<Node> {
    nodes.shrink_to_fit();
    for i in 0..nodes.len() {
        if let Some(p) = nodes[i].parent {
            nodes[p].children.push(i);
        }
    }
    nodes
}

/// The page's root (the node without a parent).
pub fn root(nodes: &[Node]) -> Option<usize> {
    nodes.iter().position(|n| n.parent.is_none())
}

fn clip(s: &str, max: usize) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match crate::engine::text::utf8::head_chars(&s, max) {
        (head, true) => format!("{head}…"),
        (_, false) => s,
    }
}

/// A rendered tree.
#[derive(Debug)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// The nodes shown, as the text of a JSON array (written node by node, not as a `Value`
    /// tree): objects of `ref` (interactive nodes), `role`, `name`, `value`, `states` (when
    /// there are any) and `depth`.
    pub nodes: String,
    /// Nodes left out for the budget.
    pub omitted: usize,
    /// Nodes shown plus omitted.
    pub total: usize,
    /// Refs handed out.
    pub refs: usize,
}

/// Render the tree as indented text within `max_chars`, assigning refs in `state`.
pub fn render(nodes: &[Node], state: &mut TabState, max_chars: usize) -> Rendered {
    render_into(nodes, state, max_chars, String::new(), String::new())
}

/// [`render`], the text written after `text` and the nodes' JSON array after `json` (what the
/// caller writes before them: a header, the data's first fields); the budget counts the
/// rendered text only.
pub fn render_into(
    nodes: &[Node],
    state: &mut TabState,
    max_chars: usize,
    text: String,
    json: String,
) -> Rendered {
    let mut out = Renderer::new(state, max_chars, text, json);
    let Some(r) = root(nodes) else {
        return out.finish();
    };
    // Iterative depth-first walk: (node, depth, the nearest shown ancestor).
    let mut stack: Vec<(usize, usize, usize)> = nodes[r].children.iter().rev().map(|&c| (c, 0, r)).collect();
    while let Some((i, depth, shown_parent)) = stack.pop() {
        let n = &nodes[i];
        let (child_depth, parent_for_kids) =
            match out.node(n, depth, &nodes[shown_parent].name, !n.children.is_empty()) {
                Step::Skip => continue,
                Step::Hidden => (depth, shown_parent),
                Step::Shown => (depth + 1, i),
            };
        for &c in n.children.iter().rev() {
            stack.push((c, child_depth, parent_for_kids));
        }
    }
    out.finish()
}

/// What the renderer made of a node.
enum Step {
    /// Left out with everything below it.
    Skip,
    /// Not shown; its children move up.
    Hidden,
    /// Shown (or counted as omitted for the budget).
    Shown,
}

/// The text and `data.nodes` of a rendering, written node by node in depth-first order.
struct Renderer<'s> {
    out: Rendered,
    state: &'s mut TabState,
    max_chars: usize,
    /// Where the rendered text starts in `out.text`, and the first node in `out.nodes`.
    text_at: usize,
    nodes_at: usize,
}

impl<'s> Renderer<'s> {
    fn new(state: &'s mut TabState, max_chars: usize, text: String, mut json: String) -> Self {
        json.push('[');
        let (text_at, nodes_at) = (text.len(), json.len());
        let out = Rendered { text, nodes: json, omitted: 0, total: 0, refs: 0 };
        Renderer { out, state, max_chars, text_at, nodes_at }
    }

    /// Render `n` at `depth`, below the shown ancestor named `parent_name`.
    fn node(&mut self, n: &Node, depth: usize, parent_name: &str, has_children: bool) -> Step {
        let role = n.role.as_str();
        if matches!(role, "InlineTextBox" | "LineBreak") {
            return Step::Skip;
        }
        let named = !n.name.trim().is_empty();
        let hidden = n.ignored
            || (TRANSPARENT.contains(&role) && !named && n.value.is_none())
            || role.is_empty()
            || (role == "StaticText"
                && (!named || parent_name.split_whitespace().eq(n.name.split_whitespace())))
            || (matches!(role, "paragraph" | "LabelText" | "listitem" | "list") && !named && !has_children);
        if hidden {
            return Step::Hidden;
        }
        let (out, state) = (&mut self.out, &mut *self.state);
        out.total += 1;
        let line = line_of(n, state, out);
        if out.text.len() - self.text_at + line.len() + depth * 2 < self.max_chars {
            for _ in 0..depth {
                out.text.push_str("  ");
            }
            out.text.push_str(&line);
            out.text.push('\n');
            let shown = Shown {
                r#ref: if n.interactive() { n.backend.map(|be| state.ref_of(be)) } else { None },
                role: display_role(role),
                name: n.name.split_whitespace().collect::<Vec<_>>().join(" "),
                value: n.value.as_deref(),
                states: n.states(),
                depth,
            };
            if let Ok(j) = serde_json::to_string(&shown) {
                if out.nodes.len() > self.nodes_at {
                    out.nodes.push(',');
                }
                out.nodes.push_str(&j);
            }
        } else {
            out.omitted += 1;
        }
        Step::Shown
    }

    fn finish(mut self) -> Rendered {
        self.out.nodes.push(']');
        self.out
    }
}

/// [`render_into`] straight from the walker's rows, as they are read from the browser's
/// answer, without holding their nodes: the walker writes rows in depth-first order, a parent
/// before its children, so only the path from the root to the current row is kept. A row
/// whose parent is not on that path (never written by the walker) is left out with its
/// subtree. An answer that cannot be read is `PARSE`; one without rows, `INTERNAL`.
pub fn render_walk(
    walk: &Walk,
    state: &mut TabState,
    max_chars: usize,
    text: String,
    json: String,
) -> Result<Rendered> {
    let out = Renderer::new(state, max_chars, text, json);
    let rows = Stream { learned: &walk.learned, out };
    rows_of(&walk.answer, RowsText(rows, std::marker::PhantomData))?
        .ok_or_else(|| crate::error::ToolError::internal("the page walker's rows are missing"))
}

/// Rows handed over as their JSON text (a string value), read by the seed `.0` from the text
/// serde unescaped them into (no copy of it kept).
struct RowsText<S, V>(S, std::marker::PhantomData<V>);

impl<'de, S: for<'a> DeserializeSeed<'a, Value = V>, V> DeserializeSeed<'de> for RowsText<S, V> {
    type Value = V;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<V, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, S: for<'a> DeserializeSeed<'a, Value = V>, V> Visitor<'de> for RowsText<S, V> {
    type Value = V;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the walker's rows as JSON text")
    }
    fn visit_str<E: serde::de::Error>(self, text: &str) -> std::result::Result<V, E> {
        let mut de = serde_json::Deserializer::from_str(text);
        self.0.deserialize(&mut de).and_then(|v| de.end().map(|()| v)).map_err(E::custom)
    }
}

/// A row on the path from the root to the current row (see [`render_walk`]).
struct Open {
    row: usize,
    node: Node,
    /// The depth of its children, and the path index of their nearest shown ancestor.
    kids_depth: usize,
    kids_shown: usize,
    /// Left out, with everything below it.
    skip: bool,
}

/// A row read but not rendered yet: whether it has children is known at the next row.
struct Held {
    row: usize,
    node: Node,
    /// Its parent's index on the path; `None`: the root, or a row with no parent on the path.
    at: Option<usize>,
    root: bool,
}

/// The walker's rows rendered one by one (see [`render_walk`]).
struct Stream<'a, 's> {
    learned: &'a [Option<i64>],
    out: Renderer<'s>,
}

impl Stream<'_, '_> {
    /// Render `h` (whose children, if any, come next) and put it on the path.
    fn settle(&mut self, path: &mut Vec<Open>, h: Held, has_children: bool) {
        let open =
            |node, kids_depth, kids_shown, skip| Open { row: h.row, node, kids_depth, kids_shown, skip };
        let entry = match h.at.map(|j| (j, &path[j])) {
            _ if h.root => open(h.node, 0, path.len(), false),
            Some((_, p)) if !p.skip => {
                let (depth, shown) = (p.kids_depth, p.kids_shown);
                match self.out.node(&h.node, depth, &path[shown].node.name, has_children) {
                    Step::Skip => open(h.node, 0, 0, true),
                    Step::Hidden => open(h.node, depth, shown, false),
                    Step::Shown => open(h.node, depth + 1, path.len(), false),
                }
            }
            _ => open(h.node, 0, 0, true),
        };
        path.push(entry);
    }
}

impl<'de> DeserializeSeed<'de> for Stream<'_, '_> {
    type Value = Rendered;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<Rendered, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Stream<'_, '_> {
    type Value = Rendered;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the walker's rows")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> std::result::Result<Rendered, A::Error> {
        let mut path: Vec<Open> = Vec::new();
        let mut held: Option<Held> = None;
        let (mut row, mut rooted) = (0usize, false);
        while let Some(r) = seq.next_element::<Row>()? {
            let parent = r.0.and_then(|p| usize::try_from(p).ok()).filter(|&p| p < row);
            if let Some(h) = held.take() {
                let has_children = parent == Some(h.row);
                self.settle(&mut path, h, has_children);
            }
            let at = parent.and_then(|p| path.iter().rposition(|o| o.row == p));
            if let Some(j) = at {
                path.truncate(j + 1);
            }
            // A select's popup stands for its select, its parent (on the path).
            let popup = |i: usize| path.iter().rev().find(|o| o.row == i).and_then(|o| o.node.backend);
            let node = node_of(r, self.learned, popup);
            let root = parent.is_none() && !rooted;
            rooted |= parent.is_none();
            held = Some(Held { row, node, at, root });
            row += 1;
        }
        if let Some(h) = held.take() {
            self.settle(&mut path, h, false);
        }
        Ok(self.out.finish())
    }
}

/// A shown node in `data.nodes`.
#[derive(serde::Serialize)]
struct Shown<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    r#ref: Option<String>,
    role: &'a str,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    states: Vec<String>,
    depth: usize,
}

fn display_role(role: &str) -> &str {
    match role {
        "StaticText" => "text",
        "RootWebArea" => "document",
        "LabelText" => "label",
        "image" => "img",
        other => other,
    }
}

fn line_of(n: &Node, state: &mut TabState, out: &mut Rendered) -> String {
    let role = display_role(&n.role);
    let mut line = format!("- {role}");
    if !n.name.trim().is_empty() {
        line.push_str(&format!(" \"{}\"", clip(&n.name, 120).replace('"', "\\\"")));
    }
    if n.interactive()
        && let Some(be) = n.backend
    {
        let had = state.refs.contains_key(&be);
        line.push_str(&format!(" [{}]", state.ref_of(be)));
        if !had {
            out.refs += 1;
        }
    }
    if let Some(v) = &n.value {
        line.push_str(&format!(" value=\"{}\"", clip(v, 80).replace('"', "\\\"")));
    }
    let st = n.states();
    if !st.is_empty() {
        line.push_str(&format!(" ({})", st.join(", ")));
    }
    if role == "link"
        && let Some(Value::String(u)) = n.prop("url")
    {
        line.push_str(&format!(" → {}", clip(u, 100)));
    }
    line
}

/// DOM attributes by backend node id (for `browser_find`: placeholder, id, name, labels, ...).
pub async fn attributes(b: &Browser, tab: &Tab) -> Result<HashMap<i64, Vec<(String, String)>>> {
    let doc =
        b.conn.call(Some(&tab.session), "DOM.getDocument", json!({"depth": -1, "pierce": true})).await?;
    let mut out = HashMap::new();
    let mut stack: Vec<&Value> = vec![&doc["root"]];
    while let Some(n) = stack.pop() {
        if let (Some(be), Some(attrs)) = (n["backendNodeId"].as_i64(), n["attributes"].as_array()) {
            let pairs: Vec<(String, String)> = attrs
                .chunks(2)
                .filter_map(|kv| Some((kv.first()?.as_str()?.to_owned(), kv.get(1)?.as_str()?.to_owned())))
                .collect();
            if !pairs.is_empty() {
                out.insert(be, pairs);
            }
        }
        for key in ["children", "shadowRoots"] {
            if let Some(c) = n[key].as_array() {
                stack.extend(c.iter());
            }
        }
        if !n["contentDocument"].is_null() {
            stack.push(&n["contentDocument"]);
        }
    }
    Ok(out)
}

/// One ranked match.
#[derive(Debug, Clone)]
pub struct Match {
    /// The node index.
    pub index: usize,
    /// Its score (higher is better).
    pub score: f64,
    /// Why it matched.
    pub why: Vec<String>,
}

/// Words of `s`, lowercased (camelCase and `kebab-case` split).
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase() || c.is_numeric();
            cur.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

const STOP: &[&str] = &[
    "the", "a", "an", "to", "of", "on", "in", "for", "with", "and", "or", "that", "this", "me", "my",
    "please", "find", "click", "element",
];

/// Query words that name roles.
fn role_words(role: &str) -> &'static [&'static str] {
    match role {
        "button" | "PopUpButton" | "ToggleButton" => &["button", "btn", "submit"],
        "link" => &["link", "anchor", "href"],
        "textbox" | "searchbox" | "textField" => {
            &["input", "field", "textbox", "box", "text", "entry", "search"]
        }
        "combobox" | "listbox" | "MenuListPopup" => {
            &["select", "dropdown", "combobox", "list", "menu", "input", "field"]
        }
        "checkbox" => &["checkbox", "check", "tick", "toggle"],
        "switch" => &["switch", "toggle"],
        "radio" => &["radio", "option", "choice"],
        "heading" => &["heading", "title", "header", "headline"],
        "img" | "image" => &["image", "img", "picture", "photo", "icon", "logo"],
        "tab" => &["tab"],
        "menuitem" => &["menu", "item"],
        "navigation" => &["nav", "navigation", "menu"],
        "form" => &["form"],
        "dialog" => &["dialog", "modal", "popup"],
        _ => &[],
    }
}

/// How well query word `q` matches a field's words: 1 exact, 0.8 prefix, 0.6 inside, 0.5 close.
fn word_score(q: &str, field: &[String]) -> (f64, Option<String>) {
    let mut best = (0.0, None);
    for w in field {
        let s = if w == q {
            1.0
        } else if w.starts_with(q) && q.len() >= 2 {
            0.8
        } else if q.len() >= 3 && w.contains(q) {
            0.6
        } else if q.len() >= 4 && strsim::jaro_winkler(q, w) >= 0.88 {
            0.5
        } else {
            0.0
        };
        if s > best.0 {
            best = (s, Some(w.clone()));
        }
    }
    best
}

/// Rank the nodes for `query`: each query word is matched against the accessible name (weight
/// 3), labels, placeholder, title, alt and aria attributes (2.5), id, name and test ids (2),
/// the value and description (1.5), and the role (1.5, with synonyms: "input" for a textbox).
pub fn rank(
    nodes: &[Node],
    attrs: &HashMap<i64, Vec<(String, String)>>,
    query: &str,
    limit: usize,
) -> Vec<Match> {
    let q: Vec<String> = words(query).into_iter().filter(|w| !STOP.contains(&w.as_str())).collect();
    let q = if q.is_empty() { words(query) } else { q };
    if q.is_empty() {
        return Vec::new();
    }
    let phrase = q.join(" ");
    let mut out: Vec<Match> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.ignored
            || n.backend.is_none()
            || matches!(n.role.as_str(), "InlineTextBox" | "RootWebArea" | "LineBreak" | "")
        {
            continue;
        }
        if n.role == "StaticText"
            && let Some(p) = n.parent
            && nodes[p].name.split_whitespace().eq(n.name.split_whitespace())
        {
            continue; // its parent carries the same text
        }
        let a = n.backend.and_then(|b| attrs.get(&b));
        let attr = |keys: &[&str]| -> String {
            a.map(|a| {
                a.iter()
                    .filter(|(k, _)| keys.contains(&k.as_str()))
                    .map(|(_, v)| v.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
        };
        let fields: [(&str, f64, String); 5] = [
            ("name", 3.0, n.name.clone()),
            (
                "placeholder/label",
                2.5,
                attr(&["placeholder", "aria-label", "title", "alt", "aria-placeholder", "label"]),
            ),
            (
                "id/name",
                2.0,
                attr(&["id", "name", "data-testid", "data-test", "data-test-id", "for", "type", "href"]),
            ),
            (
                "value",
                1.5,
                format!(
                    "{} {}",
                    n.value.clone().unwrap_or_default(),
                    n.description.clone().unwrap_or_default()
                ),
            ),
            ("class", 0.5, attr(&["class"])),
        ];
        let field_words: Vec<Vec<String>> = fields.iter().map(|(_, _, t)| words(t)).collect();
        let roles = role_words(display_role(&n.role));
        let mut score = 0.0;
        let mut why = Vec::new();
        for qw in &q {
            let mut best = (0.0, String::new());
            for (k, (label, weight, _)) in fields.iter().enumerate() {
                let (s, hit) = word_score(qw, &field_words[k]);
                if s * weight > best.0 {
                    let hit = hit.unwrap_or_default();
                    best = (
                        s * weight,
                        if hit == *qw {
                            format!("{label} has \"{qw}\"")
                        } else {
                            format!("{label} has \"{hit}\" ~ \"{qw}\"")
                        },
                    );
                }
            }
            if roles.contains(&qw.as_str()) && 1.5 > best.0 {
                best = (1.5, format!("role {} ~ \"{qw}\"", display_role(&n.role)));
            }
            if best.0 > 0.0 {
                score += best.0;
                why.push(best.1);
            }
        }
        if score == 0.0 {
            continue;
        }
        // The whole query inside the name: a bonus.
        let name_l = n.name.to_lowercase();
        if q.len() > 1 && name_l.contains(&phrase) {
            score += 1.0;
            why.push("name contains the whole query".into());
        }
        if n.interactive() {
            score += 0.3;
        }
        let score = score / (q.len() as f64 * 3.0 + 1.3);
        out.push(Match { index: i, score: (score * 1000.0).round() / 1000.0, why });
    }
    out.sort_by(|a, b| {
        b.score.partial_cmp(&a.score).unwrap_or(std::cmp::Ordering::Equal).then(a.index.cmp(&b.index))
    });
    out.truncate(limit);
    out
}

/// Matches as JSON, with refs assigned.
pub fn matches_json(nodes: &[Node], matches: &[Match], state: &mut TabState) -> Vec<Value> {
    matches
        .iter()
        .map(|m| {
            let n = &nodes[m.index];
            let r = n.backend.map(|b| state.ref_of(b));
            json!({
                "ref": r,
                "role": display_role(&n.role),
                "name": clip(&n.name, 120),
                "value": n.value,
                "states": n.states(),
                "score": m.score,
                "why": m.why,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Ctx;

    #[test]
    fn words_split_camel_kebab_and_punctuation() {
        assert_eq!(words("#submit-button"), ["submit", "button"]);
        assert_eq!(words("emailAddress"), ["email", "address"]);
        assert_eq!(words("Sign up!"), ["sign", "up"]);
    }

    fn tree() -> Vec<Node> {
        let r = json!({"nodes": [
            {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Form"}, "childIds": ["2", "3", "4", "6"], "backendDOMNodeId": 1},
            {"nodeId": "2", "role": {"value": "heading"}, "name": {"value": "Sign up"}, "properties": [{"name": "level", "value": {"value": 1}}], "backendDOMNodeId": 2},
            {"nodeId": "3", "role": {"value": "textbox"}, "name": {"value": "Email"}, "backendDOMNodeId": 3, "properties": [{"name": "focusable", "value": {"value": true}}]},
            {"nodeId": "4", "role": {"value": "button"}, "name": {"value": "Create account"}, "childIds": ["5"], "backendDOMNodeId": 4},
            {"nodeId": "5", "role": {"value": "StaticText"}, "name": {"value": "Create account"}, "backendDOMNodeId": 5},
            {"nodeId": "6", "role": {"value": "link"}, "name": {"value": "Terms"}, "backendDOMNodeId": 6}
        ]});
        parse(&r)
    }

    #[test]
    fn render_gives_stable_refs_to_interactive_nodes() {
        let nodes = tree();
        let mut st = TabState::default();
        let a = render(&nodes, &mut st, 10_000);
        assert_eq!(
            a.text,
            "- heading \"Sign up\" (level=1)\n- textbox \"Email\" [e1]\n- button \"Create account\" [e2]\n- link \"Terms\" [e3]\n"
        );
        let b = render(&nodes, &mut st, 10_000);
        assert_eq!(a.text, b.text);
        assert_eq!(a.total, 4);
        let small = render(&nodes, &mut st, 40);
        assert_eq!(small.omitted, 3, "{}", small.text);
    }

    #[test]
    fn rank_uses_names_roles_and_attributes() {
        let nodes = tree();
        let mut attrs = HashMap::new();
        attrs.insert(
            3,
            vec![
                ("placeholder".to_owned(), "you@example.com".to_owned()),
                ("id".to_owned(), "email".to_owned()),
            ],
        );
        let m = rank(&nodes, &attrs, "email input", 3);
        assert_eq!(nodes[m[0].index].role, "textbox");
        assert!(m[0].why.iter().any(|w| w.contains("role textbox")), "{:?}", m[0].why);
        let m = rank(&nodes, &attrs, "create account button", 3);
        assert_eq!(nodes[m[0].index].name, "Create account");
        let m = rank(&nodes, &attrs, "submit button", 3);
        assert_eq!(nodes[m[0].index].role, "button");
        assert!(rank(&nodes, &attrs, "zzz", 3).is_empty());
    }

    /// The walker's rows cross from their JSON text into nodes exactly: names with quotes,
    /// backslashes, control characters, NULs, line separators and astral characters; refs of
    /// learned, new and popup elements; and text that is not rows gives no nodes.
    #[test]
    fn parse_walk_reads_rows_exactly() {
        let odd = "q\"b\\s\tt\nn\r\u{0}z\u{2028}\u{1F600}\u{FFFD}é";
        let rows = json!([
            [-1, "RootWebArea", odd, "", {"focusable": true}, null],
            [0, "combobox", "Pick", "Green", {"expanded": false, "level": 2, "url": "http://x/?a=\"b\""}, "n1"],
            [1, "MenuListPopup", "", "", {}, "p1"],
            [0, "StaticText", odd, "", null, null],
            [0, "button", "", odd, {}, 77],
            [9, "link", "orphan", "", {}, "n5"]
        ]);
        let nodes = parse_walk(&rows.to_string(), &[None, Some(41)]);
        assert_eq!(nodes.len(), 6);
        assert_eq!(
            (nodes[0].role.as_str(), nodes[0].name.as_str(), nodes[0].parent),
            ("RootWebArea", odd, None)
        );
        assert_eq!(nodes[0].children, [1, 3, 4]);
        assert_eq!((nodes[1].backend, nodes[1].value.as_deref()), (Some(41), Some("Green")));
        assert_eq!(nodes[1].prop("url"), Some(&json!("http://x/?a=\"b\"")));
        assert_eq!(nodes[1].states(), ["expanded=false", "level=2"]);
        assert_eq!((nodes[2].backend, nodes[2].parent), (Some(-41), Some(1)));
        assert_eq!((nodes[3].name.as_str(), nodes[3].value.as_deref(), nodes[3].props.len()), (odd, None, 0));
        assert_eq!((nodes[4].backend, nodes[4].value.as_deref()), (Some(77), Some(odd)));
        // A parent not seen yet and a new element past the learned ones: neither invented.
        assert_eq!((nodes[5].parent, nodes[5].backend), (None, None));
        for bad in [
            "",
            "null",
            "[[0, 1]]",
            "[[-1, \"a\", \"b\", \"\", {}, null]] x",
            "[[-1, \"\\ud800\", \"\", \"\", {}, null]]",
        ] {
            assert!(parse_walk(bad, &[]).is_empty(), "{bad}");
        }
    }

    /// Rendering straight from the rows gives what rendering their nodes gives, byte for
    /// byte, on rows of every shape the renderer treats apart: hidden containers whose children
    /// move up, text repeating its parent's name, empty paragraphs with and without children,
    /// skipped subtrees, a popup standing for its select, rows whose parent is unknown or comes
    /// later, a second parentless row, deep nesting, odd text, and a budget that cuts; also
    /// after a header and the data's first fields.
    #[test]
    fn render_walk_renders_what_render_renders() {
        let odd = "q\"b\\s\tt\nn\r\u{0}z\u{2028}\u{1F600}\u{FFFD}é ";
        let mut rows = vec![
            json!([-1, "RootWebArea", "Doc", "", {"focusable": true}, null]),
            json!([0, "generic", "", "", {}, null]),
            json!([1, "StaticText", "Doc", "", null, null]),
            json!([1, "button", "Go", "", {"focusable": true}, 11]),
            json!([3, "StaticText", " Go ", "", null, null]),
            json!([3, "StaticText", odd, "", null, null]),
            json!([1, "paragraph", "", "", {}, null]),
            json!([1, "paragraph", "", "", {}, null]),
            json!([7, "StaticText", "in p", "", null, null]),
            json!([7, "LineBreak", "", "", {}, null]),
            json!([9, "button", "under a line break", "", {}, 12]),
            json!([7, "InlineTextBox", "x", "", {}, null]),
            json!([1, "combobox", "Pick", "Green", {"expanded": false}, "n0"]),
            json!([12, "MenuListPopup", "", "", {}, "p12"]),
            json!([13, "option", "Green", "", {"selected": true}, "n1"]),
            json!([0, "list", "", "", {}, null]),
            json!([15, "listitem", "", "", {"level": 1}, null]),
            json!([16, "ListMarker", "• ", "", {}, null]),
            json!([16, "link", odd, "", {"url": "http://x/\"y\"", "focusable": true}, 13]),
            json!([40, "button", "parent comes later", "", {}, 14]),
            json!([-1, "RootWebArea", "second root", "", {}, null]),
            json!([20, "button", "under the second root", "", {}, 15]),
            json!([0, "textbox", "", odd, {"focused": true, "required": true, "invalid": "spelling"}, 16]),
            json!([22, "StaticText", odd, "", null, null]),
            json!([22, "StaticText", "a second text", "", null, null]),
            json!([0, "", "no role", "", {}, null]),
            json!([0, "heading", "Deep", "", {"level": 2}, null]),
        ];
        for d in 0..300 {
            let parent = if d == 0 { 26 } else { rows.len() - 1 };
            rows.push(json!([parent, if d % 2 == 0 { "generic" } else { "group" }, "", "", {}, null]));
        }
        let deepest = rows.len() - 1;
        rows.push(json!([deepest, "StaticText", "at the bottom", "", null, null]));
        rows.push(json!([0, "StaticText", "last", "", null, null]));
        let text = serde_json::to_string(&rows).unwrap();
        let learned = [Some(21), None];
        let walk = Walk::of_rows(&text, &learned);
        let nodes = parse_walk(&text, &learned);
        for max in [500_000, 200, 60, 0] {
            let (mut a, mut b) = (TabState::default(), TabState::default());
            let want = render(&nodes, &mut a, max);
            let got = render_walk(&walk, &mut b, max, String::new(), String::new()).unwrap();
            assert_eq!(got.text, want.text, "{max}");
            assert_eq!(got.nodes, want.nodes, "{max}");
            assert_eq!((got.total, got.omitted, got.refs), (want.total, want.omitted, want.refs), "{max}");
            assert_eq!(a.refs, b.refs, "{max}");
            let got = render_walk(&walk, &mut b, max, "head\n".into(), "{\"a\":1,\"nodes\":".into()).unwrap();
            assert_eq!(got.text, format!("head\n{}", want.text), "{max}");
            assert_eq!(got.nodes, format!("{{\"a\":1,\"nodes\":{}", want.nodes), "{max}");
        }
        let full = render(&nodes, &mut TabState::default(), 500_000);
        assert!(full.text.contains("- text \"at the bottom\""), "{}", full.text);
        assert!(full.text.contains("- button \"Go\" [e1]\n  - text \"q"), "{}", full.text);
        assert!(!full.text.contains("second root") && !full.text.contains("comes later"), "{}", full.text);
        assert!(!full.text.contains("line break"), "{}", full.text);
        assert!(full.text.contains("- MenuListPopup [e3]"), "{}", full.text);
        // A row whose parent came before but is not on the path (the walker never writes one):
        // rendering the nodes shows it under that parent; rendering the rows leaves it out.
        let mut rows = rows;
        rows.push(json!([2, "button", "parent not on the path", "", {}, 17]));
        rows.push(json!([rows.len() - 1, "button", "below it", "", {}, 18]));
        let walk = Walk::of_rows(&serde_json::to_string(&rows).unwrap(), &learned);
        let got =
            render_walk(&walk, &mut TabState::default(), 500_000, String::new(), String::new()).unwrap();
        assert_eq!(got.text, full.text);
        // Rows that are not the walker's fail the read at once (`PARSE`); an answer without
        // rows is `INTERNAL` (the caller reads the accessibility tree instead).
        for bad in [
            "",
            "null",
            "[[0, 1]]",
            "[[-1, \"a\", \"b\", \"\", {}, null]] x",
            "[[-1, \"\\ud800\", \"\", \"\", {}, null]]",
        ] {
            let w = Walk::of_rows(bad, &[]);
            let e = render_walk(&w, &mut TabState::default(), 100, String::new(), String::new()).unwrap_err();
            assert_eq!(e.code(), crate::error::ErrorCode::Parse, "{bad}");
        }
        let w = Walk {
            answer: r#"{"id":1,"result":{"result":{"type":"undefined"}}}"#.into(),
            learned: Vec::new(),
        };
        let e = render_walk(&w, &mut TabState::default(), 100, String::new(), String::new()).unwrap_err();
        assert_eq!(e.code(), crate::error::ErrorCode::Internal);
    }

    /// `data.nodes`, written node by node, is the JSON the nodes were before (a `Value` per
    /// node: ref, role, name, value, states, depth, in that order).
    #[test]
    fn render_writes_data_nodes_as_json() {
        let mut nodes = tree();
        nodes[3].value = Some("v \"1\"\n\u{0}".into());
        let r = render(&nodes, &mut TabState::default(), 10_000);
        assert_eq!(
            r.nodes,
            json!([
                {"role": "heading", "name": "Sign up", "states": ["level=1"], "depth": 0},
                {"ref": "e1", "role": "textbox", "name": "Email", "depth": 0},
                {"ref": "e2", "role": "button", "name": "Create account", "value": "v \"1\"\n\u{0}", "depth": 0},
                {"ref": "e3", "role": "link", "name": "Terms", "depth": 0}
            ])
            .to_string()
        );
        assert_eq!(render(&nodes, &mut TabState::default(), 10).nodes, "[]");
        assert_eq!(render(&[], &mut TabState::default(), 10).nodes, "[]");
    }

    /// Pages the walker must read exactly as the accessibility tree does.
    /// Two reads whose new elements differ, learned in the other order: each read's ids go to
    /// its own elements (one list shared by the reads gave the first read's ids to the
    /// second's elements).
    async fn interleaved_reads_learn_their_own_elements(b: &Browser, t: &Tab) {
        let add = |id: &str| {
            json!({"expression": format!(
                "{{ const e = document.createElement('button'); e.id = '{id}'; e.textContent = '{id}'; \
                 document.body.prepend(e) }}"
            )})
        };
        let (one, two) = (
            READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        );
        b.conn.call(Some(&t.session), "Runtime.evaluate", add("first-new")).await.unwrap();
        let (w1, c1) = evaluate(b, t, one).await.unwrap();
        b.conn.call(Some(&t.session), "Runtime.evaluate", add("second-new")).await.unwrap();
        let (w2, c2) = evaluate(b, t, two).await.unwrap();
        assert_eq!((w1.learned.len(), w2.learned.len()), (1, 2));
        learn(b, t, c2, two, &w2.learned).await.unwrap();
        learn(b, t, c1, one, &w1.learned).await.unwrap();
        let (mut s_ax, mut s_walk) = (TabState::default(), TabState::default());
        let ax = render(&fetch(b, t).await.unwrap(), &mut s_ax, 500_000);
        let fast = fetch_fast(b, t).await.unwrap();
        let walked = render(&fast, &mut s_walk, 500_000);
        assert!(ax.text.contains("second-new"), "{}", ax.text);
        assert_eq!(walked.text, ax.text);
        assert_eq!(s_walk.refs, s_ax.refs);
        // Reads whose learning never comes (dropped mid-way) leave at most 8 lists of elements
        // in the page; warm reads leave none.
        let mut context = c1;
        for i in 0..12 {
            b.conn.call(Some(&t.session), "Runtime.evaluate", add(&format!("dropped-{i}"))).await.unwrap();
            context =
                evaluate(b, t, READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)).await.unwrap().1;
        }
        let kept = json!({"expression": "globalThis.__eddiePending.size", "contextId": context, "returnByValue": true});
        let kept = b.conn.call(Some(&t.session), "Runtime.evaluate", kept).await.unwrap();
        assert_eq!(kept["result"]["value"], 8, "{kept}");
        // A read that learns (the dropped reads' elements, still new to it) takes its own list away.
        fetch_fast(b, t).await.unwrap();
        let kept = json!({"expression": "globalThis.__eddiePending.size", "contextId": context, "returnByValue": true});
        let kept = b.conn.call(Some(&t.session), "Runtime.evaluate", kept).await.unwrap();
        assert_eq!(kept["result"]["value"], 7, "{kept}");
    }

    fn fixtures() -> Vec<(&'static str, String)> {
        let form = r#"<!doctype html><html><head><title>Sign up</title></head><body>
<h1>Create your account</h1>
<form action="/done" method="get">
  <label for="email">Email address</label> <input id="email" name="email" type="email" placeholder="you@example.com">
  <label><input type="checkbox" name="news"> Send me news</label>
  <button id="submit-button" type="submit">Create account</button>
  <button type="button" disabled>Disabled thing</button>
</form>
<p>Already registered? <a href="/login">Log in</a></p>
</body></html>"#;
        let big = format!(
            "<!doctype html><html><head><title>Big</title></head><body><h1>Inventory</h1><ul>{}</ul></body></html>",
            (0..400)
                .map(|i| format!("<li><a href=\"#i{i}\">Item {i}</a> <span>costs {i} coins</span> <button>Button {i}</button></li>"))
                .collect::<String>()
        );
        let rich = r#"<!doctype html><html><head><title>Rich</title><style>.gone{display:none}.ghost{visibility:hidden}</style></head><body>
<nav aria-label="Main"><ul><li><a href="/a">A</a><ul><li><a href="/b">B</a></li></ul></li></ul></nav>
<main><h2>Settings</h2><h3 aria-level="4">Sub</h3>
<p>Some <em>text</em> and <strong>more</strong>.</p>
<select name="c"><option>Red</option><option selected>Green</option></select>
<textarea>hello</textarea><input type="text" value="v1" readonly><input type="password" value="abc"><input type="range" value="30">
<input type="radio" name="r" checked><input type="checkbox" aria-label="tick">
<div role="button" tabindex="0">Fake</div><div tabindex="0">Focus me</div><span title="tip">hover</span>
<button aria-pressed="true">Bold</button><button aria-expanded="false">Menu</button>
<div class="gone"><button>Hidden</button></div><div aria-hidden="true"><button>Aria hidden</button></div>
<div class="ghost"><button>Ghost</button><span style="visibility:visible">visible child</span></div>
<img src="data:," alt="Logo"><table><tr><th>H</th></tr><tr><td>cell</td></tr></table>
<details><summary>More</summary><p>inside</p></details>
<div role="tablist"><div role="tab" aria-selected="true">T1</div><div role="tab" aria-selected="false">T2</div></div>
<ol><li>one</li><li>two</li></ol>
<label>Name <input name="n" required></label>
<a>no href</a><a href="https://example.com/x">ext</a>
</main></body></html>"#;
        vec![("form", form.to_owned()), ("big", big), ("rich", rich.to_owned())]
    }

    /// The tests here that drive Chromium share the process's browser and its current tab: one
    /// at a time (two navigating the one tab at once abort each other's loads).
    fn one_browser_test() -> std::sync::MutexGuard<'static, ()> {
        static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        ONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Serve `pages` on loopback by path (`/form`, ...), for at most 200 connections.
    async fn serve(
        pages: Vec<(&'static str, String)>,
    ) -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            for _ in 0..200 {
                let Ok((mut sock, _)) = listener.accept().await else { return };
                let pages = pages.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    let n = tokio::time::timeout(std::time::Duration::from_secs(5), sock.read(&mut buf))
                        .await
                        .ok()
                        .and_then(|r| r.ok())
                        .unwrap_or(0);
                    let head = String::from_utf8_lossy(&buf[..n]);
                    let path =
                        head.split_whitespace().nth(1).unwrap_or("/").trim_start_matches('/').to_owned();
                    let body =
                        pages.iter().find(|(p, _)| *p == path).map(|(_, b)| b.clone()).unwrap_or_default();
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                });
            }
        });
        (addr, task)
    }

    /// The page walker's rows cross to the nodes exactly, whatever a page's text holds: quotes,
    /// backslashes, tabs, newlines, NULs, line separators, astral characters, and a lone
    /// surrogate a script made in a text (U+FFFD, as it is not UTF-8); and a page of 50,000
    /// nodes.
    #[test]
    fn the_walker_reads_odd_text_and_large_pages_exactly() {
        let odd_page = r#"<!doctype html><html><head><title>Odd</title></head><body><p id="p"></p><button id="b"></button>
<script>
const odd = 'q"b\\s\tt\nn\r\0z\u2028\u{1F600}\ud800é'
document.getElementById('p').append(document.createTextNode(odd))
document.getElementById('b').setAttribute('aria-label', 'lbl ' + odd)
</script></body></html>"#;
        let large_page = r#"<!doctype html><html><head><title>Large</title></head><body><div id="d"></div>
<script>
const d = document.getElementById('d')
for (let i = 0; i < 25000; i++) { const p = document.createElement('p'); p.textContent = 'Row ' + i; d.append(p) }
</script></body></html>"#;
        let _one = one_browser_test();
        let rt = crate::browser::session::rt().unwrap();
        rt.block_on(async {
            let (addr, server) =
                serve(vec![("odd", odd_page.to_owned()), ("large", large_page.to_owned())]).await;
            let dir = tempfile::tempdir().unwrap();
            let ctx =
                Ctx::new(dir.path().to_str().unwrap()).unwrap().with_network(crate::context::NetworkPolicy {
                    allow_hosts: vec!["127.0.0.1".into()],
                    ..Default::default()
                });
            let go = |page: &str| {
                crate::call::args::parse("browser_navigate", &json!({"url": format!("http://{addr}/{page}")}))
                    .unwrap()
            };
            crate::browser::browser_navigate::run(go("odd"), &ctx).await.unwrap();
            let (b, t) = crate::browser::open(&ctx, None).await.unwrap();
            let nodes = fetch_fast(&b, &t).await.unwrap();
            let text = "q\"b\\s\tt\nn\r\u{0}z\u{2028}\u{1F600}\u{FFFD}é";
            assert!(
                nodes.iter().any(|n| n.role == "StaticText" && n.name == text),
                "{:?}",
                nodes.iter().map(|n| (&n.role, &n.name)).collect::<Vec<_>>()
            );
            // Also in an attribute (the element's deep serialisation carries its attributes).
            let label = "lbl q\"b\\s t n \u{0}z\u{2028}\u{1F600}\u{FFFD}é";
            assert!(nodes.iter().any(|n| n.role == "button" && n.name == label && n.backend.is_some()));

            crate::browser::browser_navigate::run(go("large"), &ctx).await.unwrap();
            let (b, t) = crate::browser::open(&ctx, None).await.unwrap();
            let nodes = fetch_fast(&b, &t).await.unwrap();
            assert!(nodes.len() > 50_000, "{}", nodes.len());
            let rows: Vec<&str> =
                nodes.iter().filter(|n| n.role == "StaticText").map(|n| n.name.as_str()).collect();
            assert_eq!(rows, (0..25_000).map(|i| format!("Row {i}")).collect::<Vec<_>>());
            let r = render(&nodes, &mut TabState::default(), 500_000);
            let shown: Vec<Value> = serde_json::from_str(&r.nodes).unwrap();
            assert_eq!(shown.len(), r.total - r.omitted);
            assert!(r.omitted > 0 && r.text.len() < 500_000);
            assert_eq!(shown.last().map(|n| n["depth"].clone()), Some(json!(1)));
            // Rendered straight from the rows: the same.
            let w = walk(&b, &t).await.unwrap();
            let s = render_walk(&w, &mut TabState::default(), 500_000, String::new(), String::new()).unwrap();
            assert_eq!((s.text, s.nodes, s.total, s.omitted), (r.text, r.nodes, r.total, r.omitted));
            crate::browser::session::close_current().await;
            server.abort();
        });
    }

    /// Lone surrogates a script puts into any string a page hands back (attributes of elements
    /// that get refs, values, the title, console messages, a frame's title) never leave a call
    /// waiting for its timeout: Chromium writes them as lone `\ud800` escapes, which the CDP
    /// reader turns into U+FFFD. Every tool that passes page strings back answers at once.
    #[test]
    fn lone_surrogates_in_any_page_string_never_hang_a_call() {
        let page = r#"<!doctype html><html><head><title>x</title></head><body>
<button id="b">B</button><input id="i"><a id="a" href="/p">A</a><a id="a2" href="/q"><img id="g" src="data:,"></a>
<select id="s"><option id="o">O</option></select><textarea id="t"></textarea><div id="d" role="switch" tabindex="0">D</div>
<iframe id="f" srcdoc="<title>inner</title><button>in</button>"></iframe>
<script>
const L = '\ud800', T = '\udc00', H = 'x\ud83d"y'
const set = (id, k, v) => document.getElementById(id).setAttribute(k, v)
set('b', 'aria-label', 'label ' + L); set('b', 'title', 'title ' + T)
set('i', 'placeholder', 'ph ' + L); set('i', 'name', 'nm ' + T); set('i', 'title', 'ti ' + H)
document.getElementById('i').value = 'val ' + L
set('a', 'href', '/p' + L); set('a', 'title', 'at ' + L); set('g', 'alt', 'alt ' + L)
set('o', 'label', 'opt ' + T); set('s', 'aria-description', 'desc ' + L)
set('t', 'aria-label', 'area ' + H); document.getElementById('t').value = 'tv ' + T
set('d', 'aria-label', 'sw ' + L); set('d', 'data-x', L + T + H)
document.title = 'title ' + L
console.log('log ' + L); console.error('err ' + T)
document.getElementById('f').addEventListener('load', (e) => { e.target.contentDocument.title = 'inner ' + L })
</script></body></html>"#;
        let _one = one_browser_test();
        let rt = crate::browser::session::rt().unwrap();
        rt.block_on(async {
            let (addr, server) = serve(vec![("lone", page.to_owned())]).await;
            let dir = tempfile::tempdir().unwrap();
            let ctx = Ctx::new(dir.path().to_str().unwrap())
                .unwrap()
                .with_network(crate::context::NetworkPolicy {
                    allow_hosts: vec!["127.0.0.1".into()],
                    ..Default::default()
                })
                .with_confirm(crate::context::constant_confirm(true));
            // Each call answers well within the CDP command timeout (30 s).
            let call = |tool: &'static str, args: Value| {
                let ctx = &ctx;
                async move {
                    tokio::time::timeout(
                        std::time::Duration::from_secs(12),
                        crate::registry::run(tool, &args, ctx),
                    )
                    .await
                    .unwrap_or_else(|_| panic!("{tool} waited for its timeout"))
                    .unwrap_or_else(|e| panic!("{tool}: {e}"))
                }
            };
            let nav = call("browser_navigate", json!({"url": format!("http://{addr}/lone")})).await;
            assert!(nav.content.contains("title \u{FFFD}"), "{}", nav.content);
            let read = call("browser_read_page", json!({})).await;
            for want in [
                "button \"label \u{FFFD}\" [e",
                "textbox \"ti x\u{FFFD}\\\"y\" [e",
                "value=\"val \u{FFFD}\"",
                "link \"alt \u{FFFD}\" [e",
                "switch \"sw \u{FFFD}\" [e",
                "textbox \"area x\u{FFFD}\\\"y\" [e",
                "value=\"tv \u{FFFD}\"",
            ] {
                assert!(read.content.contains(want), "{want} in {}", read.content);
            }
            let data = read.data_json().unwrap().into_owned();
            let data: Value = serde_json::from_str(&data).unwrap();
            assert!(data["title"].as_str().unwrap().ends_with('\u{FFFD}'), "{data}");
            let tabs = call("browser_get_tabs", json!({})).await;
            assert!(tabs.content.contains("title \u{FFFD}"), "{}", tabs.content);
            let status = call("browser_status", json!({})).await;
            let status = status.data_json().unwrap().into_owned();
            assert!(status.contains("title \u{FFFD}"), "{status}");
            let console = call("browser_console", json!({})).await;
            assert!(console.content.contains("log \u{FFFD}"), "{}", console.content);
            assert!(console.content.contains("err \u{FFFD}"), "{}", console.content);
            let find = call("browser_find", json!({"query": "placeholder ph"})).await;
            assert!(find.content.contains("textbox"), "{}", find.content);
            let click = call("browser_click", json!({"selector": "#d"})).await;
            assert!(click.content.contains("sw \u{FFFD}"), "{}", click.content);
            let typed = call("browser_type", json!({"selector": "#i", "text": "z"})).await;
            assert!(typed.data_json().unwrap().contains("val \u{FFFD}z"), "{:?}", typed.data_json());
            crate::browser::session::close_current().await;
            server.abort();
        });
    }

    /// The old source (the accessibility tree) and the new one (the page walker) render the
    /// same text with the same refs, on every fixture page, and hand out the same refs when
    /// their reads are mixed in one tab.
    #[test]
    fn the_walker_reads_what_the_ax_tree_reads() {
        let _one = one_browser_test();
        let rt = crate::browser::session::rt().unwrap();
        rt.block_on(async {
            let (addr, server) = serve(fixtures()).await;
            let dir = tempfile::tempdir().unwrap();
            let ctx =
                Ctx::new(dir.path().to_str().unwrap()).unwrap().with_network(crate::context::NetworkPolicy {
                    allow_hosts: vec!["127.0.0.1".into()],
                    ..Default::default()
                });
            for (page, _) in fixtures() {
                let args = crate::call::args::parse(
                    "browser_navigate",
                    &json!({"url": format!("http://{addr}/{page}")}),
                )
                .unwrap();
                crate::browser::browser_navigate::run(args, &ctx).await.unwrap();
                let (b, t) = crate::browser::open(&ctx, None).await.unwrap();
                // Two reads of the fresh page at once (both meet every element for the first
                // time): each gets its own rows and learns the right DOM nodes.
                let (w1, w2) = tokio::join!(walk(&b, &t), walk(&b, &t));
                let (mut s1, mut s2) = (TabState::default(), TabState::default());
                let r1 = render_walk(&w1.unwrap(), &mut s1, 500_000, String::new(), String::new()).unwrap();
                let r2 = render_walk(&w2.unwrap(), &mut s2, 500_000, String::new(), String::new()).unwrap();
                let old = fetch(&b, &t).await.unwrap();
                let new = fetch_fast(&b, &t).await.unwrap();
                let (mut s_old, mut s_new) = (TabState::default(), TabState::default());
                let a = render(&old, &mut s_old, 500_000);
                let n = render(&new, &mut s_new, 500_000);
                assert_eq!(a.text, n.text, "{page}");
                assert_eq!(a.nodes, n.nodes, "{page}");
                assert_eq!((a.total, a.refs), (n.total, n.refs), "{page}");
                assert!(a.refs > 0, "{page}");
                assert_eq!((&r1.text, &r2.text), (&a.text, &a.text), "{page}");
                assert_eq!((&s1.refs, &s2.refs), (&s_old.refs, &s_old.refs), "{page}");
                // Rendered straight from the rows (what browser_read_page does): the same.
                let w = walk(&b, &t).await.unwrap();
                let s =
                    render_walk(&w, &mut TabState::default(), 500_000, String::new(), String::new()).unwrap();
                assert_eq!(
                    (&s.text, &s.nodes, s.total, s.refs),
                    (&a.text, &a.nodes, a.total, a.refs),
                    "{page}"
                );
                // A second walk (the DOM nodes now remembered in the page) and a read of the
                // other source with the same state give the same refs.
                let again = fetch_fast(&b, &t).await.unwrap();
                assert_eq!(render(&again, &mut s_old, 500_000).text, a.text, "{page}");
                assert_eq!(render(&old, &mut s_new, 500_000).text, a.text, "{page}");
                if page == fixtures()[0].0 {
                    interleaved_reads_learn_their_own_elements(&b, &t).await;
                }
            }
            crate::browser::session::close_current().await;
            server.abort();
        });
    }
}
