//! A compact HTML tree for the extractor: html5ever's tree builder writes into our own
//! [`TreeSink`], which keeps nodes as 20-byte structs in one `Vec` linked by `u32` indexes,
//! element names as atoms, only the attributes the extractor reads, and text as ranges of the
//! page itself (the tokenizer's text shares the page's buffer) or, for text the parser made
//! (entities, joined runs), of one text arena. Comments, processing instructions and doctypes
//! are not kept. Every walk over the tree is iterative (no recursion on nesting depth).

use std::borrow::Cow;
use std::cell::RefCell;

use html5ever::interface::{ElemName, ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::{Attribute, LocalName, Namespace, QualName, local_name, ns};

/// A node's index in [`Tree::nodes`].
pub type Id = u32;
/// No node.
pub const NONE: Id = u32::MAX;
/// The document node.
pub const DOCUMENT: Id = 0;
/// The one node every comment and processing instruction is made as: never attached.
const DETACHED: Id = 1;

const KIND_SHIFT: u32 = 30;
const KIND_ELEMENT: u32 = 0;
const KIND_PAGE_TEXT: u32 = 1;
const KIND_ARENA_TEXT: u32 = 2;
const KIND_OTHER: u32 = 3;
const LEN_MASK: u32 = (1 << KIND_SHIFT) - 1;
/// Elements: the namespace in two bits below the kind, then the attribute count in four, then
/// the name (an index in [`Tree::names`]) in 24.
const NS_SHIFT: u32 = 28;
const COUNT_SHIFT: u32 = 24;
const COUNT_MASK: u32 = 0xf;
const NAME_MASK: u32 = (1 << COUNT_SHIFT) - 1;

/// One node as stored: 20 bytes (its last child is known while the tree is built only:
/// [`Tree::lasts`]).
#[derive(Debug, Clone)]
pub struct Node {
    parent: Id,
    first: Id,
    next: Id,
    /// Element: its first attribute in [`Tree::attrs`]; text: where it starts.
    a: u32,
    /// The kind (two top bits); element: namespace, attribute count and name; text: its length.
    b: u32,
}

/// A node as read: its name and links.
#[derive(Debug, Clone)]
pub struct NodeRef {
    /// An element's local name (empty for the others).
    pub name: LocalName,
    /// Links (`NONE` when there is none).
    pub parent: Id,
    /// The first child.
    pub first: Id,
    kind: u32,
}

impl NodeRef {
    /// An element (not text, not the document).
    pub fn is_element(&self) -> bool {
        self.kind == KIND_ELEMENT
    }

    /// A text node.
    pub fn is_text(&self) -> bool {
        matches!(self.kind, KIND_PAGE_TEXT | KIND_ARENA_TEXT)
    }
}

impl Node {
    fn new(kind: u32, a: u32, len: u32) -> Self {
        Node { parent: NONE, first: NONE, next: NONE, a, b: (kind << KIND_SHIFT) | len }
    }

    fn kind(&self) -> u32 {
        self.b >> KIND_SHIFT
    }

    fn is_element(&self) -> bool {
        self.kind() == KIND_ELEMENT
    }

    fn is_text(&self) -> bool {
        matches!(self.kind(), KIND_PAGE_TEXT | KIND_ARENA_TEXT)
    }
}

/// A kept attribute (8 bytes): its value is a range of the page or of the text arena (as text
/// nodes).
#[derive(Debug, Clone)]
struct Attr {
    start: u32,
    /// The kind (page or arena text, as for nodes, two bits), the name (its index in [`KEPT`],
    /// four bits) and the length.
    b: u32,
}

const ATTR_NAME_SHIFT: u32 = 26;
const ATTR_LEN_MASK: u32 = (1 << ATTR_NAME_SHIFT) - 1;

/// The attributes the extractor reads; the others are dropped as the tree is built. A `style`
/// that hides its element is kept as `hidden`.
const KEPT: [LocalName; 10] = [
    local_name!("class"),
    local_name!("id"),
    local_name!("href"),
    local_name!("src"),
    local_name!("alt"),
    local_name!("title"),
    local_name!("role"),
    local_name!("hidden"),
    local_name!("aria-hidden"),
    local_name!("summary"),
];

/// A parsed page.
#[derive(Debug)]
pub struct Tree {
    /// Every node; 0 is the document.
    pub nodes: Vec<Node>,
    /// Each node's last child, while the tree is built (appending is then one step); gone
    /// once it is, when only walks from the first child read it.
    lasts: Vec<Id>,
    attrs: Vec<Attr>,
    /// Text the parser made that is not a slice of the page.
    arena: String,
    /// The page (shared with the text nodes that are slices of it).
    page: StrTendril,
    /// Where the last text taken from the page ends: the tags being built are just after it.
    cursor: usize,
    /// Element names (0: the empty name of the other nodes).
    names: Vec<LocalName>,
    name_ids: std::collections::HashMap<LocalName, u32>,
    /// The last answer of [`Tree::before`] (the node, the child before it), checked before it
    /// is used: the parser inserts run after run before the same node (foster parenting).
    before_hint: (Id, Id),
}

/// The builder's view: the tree behind a `RefCell` (the `TreeSink` methods take `&self`).
struct Sink {
    tree: RefCell<Tree>,
}

/// An element's name as the tree builder asks for it.
#[derive(Debug)]
pub struct Name {
    ns: Namespace,
    local: LocalName,
}

impl ElemName for Name {
    fn ns(&self) -> &Namespace {
        &self.ns
    }
    fn local_name(&self) -> &LocalName {
        &self.local
    }
}

const NAMESPACES: [Namespace; 3] = [ns!(html), ns!(svg), ns!(mathml)];

fn ns_code(ns: &Namespace) -> u32 {
    match *ns {
        ns!(svg) => 1,
        ns!(mathml) => 2,
        _ => 0,
    }
}

/// Tags whose whitespace is kept as written.
fn preformatted(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("pre")
            | local_name!("textarea")
            | local_name!("listing")
            | local_name!("xmp")
            | local_name!("plaintext")
    )
}

/// Block-level tags: whitespace between two of them, or at the start of one, is not text.
pub fn is_block(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("html")
            | local_name!("head")
            | local_name!("body")
            | local_name!("div")
            | local_name!("p")
            | local_name!("section")
            | local_name!("article")
            | local_name!("main")
            | local_name!("aside")
            | local_name!("nav")
            | local_name!("header")
            | local_name!("footer")
            | local_name!("ul")
            | local_name!("ol")
            | local_name!("li")
            | local_name!("dl")
            | local_name!("dt")
            | local_name!("dd")
            | local_name!("table")
            | local_name!("thead")
            | local_name!("tbody")
            | local_name!("tfoot")
            | local_name!("tr")
            | local_name!("td")
            | local_name!("th")
            | local_name!("caption")
            | local_name!("colgroup")
            | local_name!("col")
            | local_name!("blockquote")
            | local_name!("pre")
            | local_name!("hr")
            | local_name!("figure")
            | local_name!("figcaption")
            | local_name!("form")
            | local_name!("fieldset")
            | local_name!("address")
            | local_name!("details")
            | local_name!("summary")
            | local_name!("center")
            | local_name!("menu")
            | local_name!("title")
            | local_name!("meta")
            | local_name!("link")
            | local_name!("script")
            | local_name!("style")
            | local_name!("noscript")
            | local_name!("template")
    ) || is_heading(name)
}

/// `h1` to `h6`.
pub fn is_heading(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
    )
}

impl Tree {
    /// Parse `page` (html5ever's tree builder, as browsers build the tree).
    pub fn parse(page: StrTendril) -> Tree {
        // One node per tag at most, plus the text between tags: a first size that rarely grows,
        // and at most 1.5 times the page (20-byte nodes and, while building, a 4-byte last child
        // each), whatever a page of `<` says.
        let tags = memchr::memchr_iter(b'<', page.as_bytes()).count();
        let mut nodes = Vec::with_capacity(tags.min(page.len() / 16) + 8);
        nodes.push(Node::new(KIND_OTHER, 0, 0));
        nodes.push(Node::new(KIND_OTHER, 0, 0));
        let mut lasts = Vec::with_capacity(nodes.capacity());
        lasts.extend([NONE, NONE]);
        let tree = Tree {
            nodes,
            lasts,
            attrs: Vec::new(),
            arena: String::new(),
            page: page.clone(),
            cursor: 0,
            names: vec![LocalName::from("")],
            name_ids: Default::default(),
            before_hint: (NONE, NONE),
        };
        let sink = Sink { tree: RefCell::new(tree) };
        html5ever::parse_document(sink, Default::default()).one(page)
    }

    /// The bytes the tree holds on the heap (beside the page it shares).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * size_of::<Node>()
            + self.attrs.capacity() * size_of::<Attr>()
            + self.arena.capacity()
            + self.names.capacity() * size_of::<LocalName>()
    }

    /// The node `id`.
    pub fn node(&self, id: Id) -> NodeRef {
        let n = &self.nodes[id as usize];
        let kind = n.kind();
        let name = if kind == KIND_ELEMENT { (n.b & NAME_MASK) as usize } else { 0 };
        NodeRef {
            name: self.names.get(name).cloned().unwrap_or_default(),
            parent: n.parent,
            first: n.first,
            kind,
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// A text node's text (empty for the others).
    pub fn text(&self, id: Id) -> &str {
        let n = &self.nodes[id as usize];
        let (start, len) = (n.a as usize, (n.b & LEN_MASK) as usize);
        match n.kind() {
            KIND_PAGE_TEXT => self.page.get(start..start + len).unwrap_or(""),
            KIND_ARENA_TEXT => self.arena.get(start..start + len).unwrap_or(""),
            _ => "",
        }
    }

    /// An element's attribute `name`.
    pub fn attr(&self, id: Id, name: &LocalName) -> Option<&str> {
        let n = &self.nodes[id as usize];
        if !n.is_element() {
            return None;
        }
        let (start, count) = (n.a as usize, ((n.b >> COUNT_SHIFT) & COUNT_MASK) as usize);
        let code = KEPT.iter().position(|k| k == name)? as u32;
        let a =
            self.attrs.get(start..start + count)?.iter().find(|a| (a.b >> ATTR_NAME_SHIFT) & 0xf == code)?;
        let (s, len) = (a.start as usize, (a.b & ATTR_LEN_MASK) as usize);
        if a.b >> KIND_SHIFT == KIND_PAGE_TEXT {
            self.page.get(s..s + len)
        } else {
            self.arena.get(s..s + len)
        }
    }

    /// `id` is an element named `name`.
    pub fn is(&self, id: Id, name: &LocalName) -> bool {
        let n = &self.nodes[id as usize];
        n.is_element() && self.names.get((n.b & NAME_MASK) as usize) == Some(name)
    }

    /// The element children of `id`... and text: every child, in order.
    pub fn children(&self, id: Id) -> Children<'_> {
        Children { tree: self, at: self.nodes[id as usize].first }
    }

    /// The first element named `name` in document order below `from`.
    pub fn find(&self, from: Id, name: &LocalName) -> Option<Id> {
        self.descendants(from).find(|&d| self.is(d, name))
    }

    /// Every node below `root` in document order (`root` not included), iteratively.
    pub fn descendants(&self, root: Id) -> Descendants<'_> {
        Descendants { tree: self, root, at: self.nodes[root as usize].first }
    }

    /// The next node after `id` in document order that is not below it, within `root`.
    pub fn skip(&self, mut id: Id, root: Id) -> Id {
        loop {
            if id == root {
                return NONE;
            }
            // The links only: no name copied on each step of a walk.
            let n = &self.nodes[id as usize];
            if n.next != NONE {
                return n.next;
            }
            id = n.parent;
            if id == NONE {
                return NONE;
            }
        }
    }

    /// The `<body>` (or the document when there is none).
    pub fn body(&self) -> Id {
        let html = self.children(DOCUMENT).find(|&c| self.is(c, &local_name!("html")));
        html.and_then(|h| self.children(h).find(|&c| self.is(c, &local_name!("body")))).unwrap_or(DOCUMENT)
    }

    /// The page's `<title>`, its whitespace collapsed.
    pub fn title(&self) -> Option<String> {
        let t = self.find(DOCUMENT, &local_name!("title"))?;
        let mut s = String::new();
        for d in self.descendants(t) {
            s.push_str(self.text(d));
        }
        let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
        (!t.is_empty()).then_some(t)
    }
}

/// Children of a node.
pub struct Children<'a> {
    tree: &'a Tree,
    at: Id,
}

impl Iterator for Children<'_> {
    type Item = Id;
    fn next(&mut self) -> Option<Id> {
        (self.at != NONE).then(|| {
            let id = self.at;
            self.at = self.tree.nodes[id as usize].next;
            id
        })
    }
}

/// Descendants of a node in document order.
pub struct Descendants<'a> {
    tree: &'a Tree,
    root: Id,
    at: Id,
}

impl Descendants<'_> {
    /// Do not go below the node last returned.
    pub fn skip_children(&mut self, last: Id) {
        self.at = self.tree.skip(last, self.root);
    }
}

impl Iterator for Descendants<'_> {
    type Item = Id;
    fn next(&mut self) -> Option<Id> {
        if self.at == NONE {
            return None;
        }
        let id = self.at;
        let n = &self.tree.nodes[id as usize];
        self.at = if n.first != NONE { n.first } else { self.tree.skip(id, self.root) };
        Some(id)
    }
}

impl Tree {
    fn push(&mut self, node: Node) -> Id {
        let id = self.nodes.len() as Id;
        grow(&mut self.nodes, 1);
        self.nodes.push(node);
        grow(&mut self.lasts, 1);
        self.lasts.push(NONE);
        id
    }

    /// Where `text` is kept: a range of the page when it is a slice of it, else of the arena.
    fn place(&mut self, text: &str) -> (u32, u32) {
        let (page, p) = (self.page.as_bytes().as_ptr() as usize, text.as_ptr() as usize);
        if p >= page && p + text.len() <= page + self.page.len() {
            self.cursor = p - page + text.len();
            ((p - page) as u32, (KIND_PAGE_TEXT << KIND_SHIFT) | text.len() as u32)
        } else {
            let start = self.arena.len() as u32;
            grow_text(&mut self.arena, text.len());
            self.arena.push_str(text);
            (start, (KIND_ARENA_TEXT << KIND_SHIFT) | text.len() as u32)
        }
    }

    /// `text` added to the end of the text node `id`; `false` when it is not (the caller adds a
    /// text node of its own). A slice of the page that does not follow the node's is copied
    /// with it into the arena once (a node leaves the page once), and text in the arena grows
    /// there while it is the arena's end. A node in the arena that is not at its end is not
    /// copied again: a page that interleaves text (foster parenting moves text before a table
    /// while the cells' text goes on) would copy the growing text over and over.
    fn extend_text(&mut self, id: Id, text: &str) -> bool {
        let n = &self.nodes[id as usize];
        let (start, len) = (n.a as usize, (n.b & LEN_MASK) as usize);
        let page = self.page.as_bytes().as_ptr() as usize;
        if n.kind() == KIND_PAGE_TEXT && page + start + len == text.as_ptr() as usize {
            // The next slice of the page: the range grows.
            self.nodes[id as usize].b += text.len() as u32;
        } else if n.kind() == KIND_ARENA_TEXT && start + len == self.arena.len() {
            grow_text(&mut self.arena, text.len());
            self.arena.push_str(text);
            self.nodes[id as usize].b += text.len() as u32;
        } else if n.kind() == KIND_ARENA_TEXT {
            return false;
        } else {
            let old = self.text(id).to_owned();
            let at = self.arena.len() as u32;
            grow_text(&mut self.arena, old.len() + text.len());
            self.arena.push_str(&old);
            self.arena.push_str(text);
            let n = &mut self.nodes[id as usize];
            n.a = at;
            n.b = (KIND_ARENA_TEXT << KIND_SHIFT) | (old.len() + text.len()) as u32;
        }
        true
    }

    /// Whitespace that says nothing: at the start of a block, or after a block, outside
    /// preformatted text.
    fn idle_space(&self, parent: Id, text: &str) -> bool {
        if !text.bytes().all(|b| b.is_ascii_whitespace()) {
            return false;
        }
        let p = self.node(parent);
        let after_block = match self.lasts[parent as usize] {
            NONE => is_block(&p.name),
            last => self.node(last).is_element() && is_block(&self.node(last).name),
        };
        if !after_block {
            return false;
        }
        let mut at = parent;
        for _ in 0..64 {
            if at == NONE {
                return true;
            }
            if preformatted(&self.node(at).name) {
                return false;
            }
            at = self.node(at).parent;
        }
        false
    }

    /// The child of `parent` just before `id` (`NONE` for the first): the last answer when it
    /// still holds, else found from the first child.
    fn before(&mut self, parent: Id, id: Id) -> Id {
        let (node, hint) = self.before_hint;
        if node == id {
            let holds = match hint {
                NONE => self.nodes[parent as usize].first == id,
                h => self.nodes[h as usize].next == id && self.nodes[h as usize].parent == parent,
            };
            if holds {
                return hint;
            }
        }
        let mut prev = NONE;
        let mut at = self.nodes[parent as usize].first;
        while at != NONE && at != id {
            prev = at;
            at = self.nodes[at as usize].next;
        }
        self.before_hint = (id, prev);
        prev
    }

    fn detach(&mut self, id: Id) {
        let parent = self.nodes[id as usize].parent;
        if parent == NONE {
            return;
        }
        let next = self.nodes[id as usize].next;
        let prev = self.before(parent, id);
        if prev == NONE {
            self.nodes[parent as usize].first = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if self.lasts[parent as usize] == id {
            self.lasts[parent as usize] = prev;
        }
        let n = &mut self.nodes[id as usize];
        n.parent = NONE;
        n.next = NONE;
    }

    fn append_child(&mut self, parent: Id, child: Id) {
        self.detach(child);
        let last = self.lasts[parent as usize];
        if last == NONE {
            self.nodes[parent as usize].first = child;
        } else {
            self.nodes[last as usize].next = child;
        }
        self.lasts[parent as usize] = child;
        self.nodes[child as usize].parent = parent;
    }

    fn append(&mut self, parent: Id, child: NodeOrText<Id>) {
        match child {
            NodeOrText::AppendNode(DETACHED) => {}
            NodeOrText::AppendNode(id) => self.append_child(parent, id),
            NodeOrText::AppendText(t) => {
                let last = self.lasts[parent as usize];
                let extended =
                    last != NONE && self.nodes[last as usize].is_text() && self.extend_text(last, &t);
                if !extended && !self.idle_space(parent, &t) {
                    let (a, b) = self.place(&t);
                    let id = self.push(Node { b, ..Node::new(0, a, 0) });
                    self.append_child(parent, id);
                }
            }
        }
    }

    fn insert_before(&mut self, sibling: Id, child: NodeOrText<Id>) {
        let parent = self.nodes[sibling as usize].parent;
        if parent == NONE {
            return;
        }
        let prev = self.before(parent, sibling);
        let id = match child {
            NodeOrText::AppendNode(DETACHED) => return,
            NodeOrText::AppendNode(id) => {
                self.detach(id);
                id
            }
            NodeOrText::AppendText(t) => {
                if prev != NONE && self.nodes[prev as usize].is_text() && self.extend_text(prev, &t) {
                    return;
                }
                let (a, b) = self.place(&t);
                self.push(Node { b, ..Node::new(0, a, 0) })
            }
        };
        // `detach` may have changed the links before `sibling`: find its neighbour again.
        let prev = self.before(parent, sibling);
        if prev == NONE {
            self.nodes[parent as usize].first = id;
        } else {
            self.nodes[prev as usize].next = id;
        }
        let n = &mut self.nodes[id as usize];
        n.next = sibling;
        n.parent = parent;
        self.before_hint = (sibling, id);
    }

    fn element(&mut self, name: QualName, attrs: Vec<Attribute>) -> Id {
        let start = self.attrs.len() as u32;
        let mut count = 0;
        for a in attrs {
            if a.name.ns != ns!() {
                continue;
            }
            if a.value.len() > ATTR_LEN_MASK as usize {
                continue;
            }
            let name = if a.name.local == local_name!("style") {
                let s: String =
                    a.value.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase();
                if !(s.contains("display:none") || s.contains("visibility:hidden")) {
                    continue;
                }
                7
            } else if let Some(code) = KEPT.iter().position(|k| *k == a.name.local) {
                code as u32
            } else {
                continue;
            };
            // The value as written in the tag, found just after the last text, else copied.
            let window =
                self.page.get(self.cursor..(self.cursor + (16 << 10)).min(self.page.len())).unwrap_or("");
            let (s, b) = match memchr::memmem::find(window.as_bytes(), a.value.as_bytes()) {
                Some(i) if !a.value.is_empty() => {
                    ((self.cursor + i) as u32, (KIND_PAGE_TEXT << KIND_SHIFT) | a.value.len() as u32)
                }
                _ => self.place(&a.value),
            };
            let b = (b & !LEN_MASK) | (name << ATTR_NAME_SHIFT) | (b & LEN_MASK);
            grow(&mut self.attrs, 1);
            self.attrs.push(Attr { start: s, b });
            count += 1;
        }
        let ns = ns_code(&name.ns);
        let next = self.names.len() as u32;
        let name_id = *self.name_ids.entry(name.local.clone()).or_insert(next);
        if name_id == next {
            self.names.push(name.local);
        }
        let b = (ns << NS_SHIFT) | (count.min(COUNT_MASK) << COUNT_SHIFT) | (name_id & NAME_MASK);
        self.push(Node { b, ..Node::new(KIND_ELEMENT, start, 0) })
    }
}

impl TreeSink for Sink {
    type Handle = Id;
    type Output = Tree;
    type ElemName<'a> = Name;

    fn finish(self) -> Tree {
        let mut t = self.tree.into_inner();
        // The tree is held through the readability pass and the Markdown: the room reserved
        // ahead (a node per `<`, growth by a quarter) is given back, and what only building
        // reads (the table of names, each node's last child) goes.
        t.nodes.shrink_to_fit();
        t.attrs.shrink_to_fit();
        t.arena.shrink_to_fit();
        t.name_ids = Default::default();
        t.lasts = Vec::new();
        t
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Id {
        DOCUMENT
    }

    fn elem_name<'a>(&'a self, target: &'a Id) -> Name {
        let t = self.tree.borrow();
        let n = &t.nodes[*target as usize];
        let ns =
            if n.is_element() { NAMESPACES[((n.b >> NS_SHIFT) & 3) as usize % 3].clone() } else { ns!() };
        Name { ns, local: t.node(*target).name }
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _flags: ElementFlags) -> Id {
        self.tree.borrow_mut().element(name, attrs)
    }

    fn create_comment(&self, _text: StrTendril) -> Id {
        DETACHED
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> Id {
        DETACHED
    }

    fn append(&self, parent: &Id, child: NodeOrText<Id>) {
        self.tree.borrow_mut().append(*parent, child);
    }

    fn append_based_on_parent_node(&self, element: &Id, prev_element: &Id, child: NodeOrText<Id>) {
        let has_parent = self.tree.borrow().node(*element).parent != NONE;
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _name: StrTendril, _public_id: StrTendril, _system_id: StrTendril) {}

    fn get_template_contents(&self, target: &Id) -> Id {
        // The template's contents go into the template itself (the extractor drops both).
        *target
    }

    fn same_node(&self, x: &Id, y: &Id) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &Id, new_node: NodeOrText<Id>) {
        self.tree.borrow_mut().insert_before(*sibling, new_node);
    }

    fn add_attrs_if_missing(&self, _target: &Id, _attrs: Vec<Attribute>) {
        // Only for a second <html> or <body> tag: the extractor reads neither's attributes.
    }

    fn remove_from_parent(&self, target: &Id) {
        self.tree.borrow_mut().detach(*target);
    }

    fn reparent_children(&self, node: &Id, new_parent: &Id) {
        let mut t = self.tree.borrow_mut();
        let mut at = t.nodes[*node as usize].first;
        while at != NONE {
            let next = t.nodes[at as usize].next;
            t.append_child(*new_parent, at);
            at = next;
        }
    }
}

/// Room for `more` items, growing by a quarter rather than doubling: the tree's vectors are
/// most of a call's memory, and a doubled one is up to half empty.
fn grow<T>(v: &mut Vec<T>, more: usize) {
    if v.len() + more > v.capacity() {
        v.reserve_exact(more.max(v.capacity() / 4).max(64));
    }
}

/// [`grow`] for the text arena.
fn grow_text(s: &mut String, more: usize) {
    if s.len() + more > s.capacity() {
        s.reserve_exact(more.max(s.capacity() / 4).max(1024));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Tree {
        Tree::parse(StrTendril::from_slice(s))
    }

    /// The tree as a compact string: `<tag>…</tag>` and text.
    fn shape(t: &Tree, root: Id) -> String {
        let mut s = String::new();
        let mut stack = vec![(root, false)];
        while let Some((id, done)) = stack.pop() {
            let n = t.node(id);
            if done {
                s.push_str(&format!("</{}>", &*n.name));
                continue;
            }
            if n.is_text() {
                s.push_str(t.text(id));
                continue;
            }
            if id != root {
                s.push_str(&format!("<{}>", &*n.name));
                stack.push((id, true));
            }
            let kids: Vec<Id> = t.children(id).collect();
            stack.extend(kids.into_iter().rev().map(|k| (k, false)));
        }
        s
    }

    #[test]
    fn misnested_and_unclosed_tags_make_the_tree_browsers_make() {
        let t = parse("<p>one<b>two<p>three</b>four</p></p><ul><li>a<li>b</ul>");
        assert_eq!(
            shape(&t, t.body()),
            "<p>one<b>two</b></p><p><b>three</b>four</p><p></p><ul><li>a</li><li>b</li></ul>"
        );
        // The adoption agency moves nodes around (remove_from_parent, reparent_children).
        let t = parse("<div><a href=x>1<div>2</a>3</div>");
        assert_eq!(shape(&t, t.body()), "<div><a>1</a><div><a>2</a>3</div></div>");
        // Foster parenting puts text before a table (append_before_sibling).
        let t = parse("<table>lost<tr><td>cell</td></tr></table>");
        assert_eq!(shape(&t, t.body()), "lost<table><tbody><tr><td>cell</td></tr></tbody></table>");
    }

    /// Foster parenting moves text before a table while the cells' text goes on into the arena:
    /// the text before the table must not be copied to the arena's end each time it grows
    /// (20,000 cells copied it 20,000 times: an arena of ~200 MB for a 300 KB page). Elements
    /// moved before the table keep their order, and the text reads the same.
    #[test]
    fn a_page_that_interleaves_text_is_held_in_a_tree_of_about_its_size() {
        let mut page = String::from("<table><tr>");
        for _ in 0..20_000 {
            page.push_str("<td>&amp;</td>X");
        }
        let t = parse(&page);
        assert!(t.arena.len() < 2 * page.len(), "arena {} for a page of {}", t.arena.len(), page.len());
        let body = t.body();
        let before_table: String =
            t.children(body).take_while(|&c| !t.node(c).is_element()).map(|c| t.text(c)).collect();
        assert_eq!(before_table, "X".repeat(20_000));
        let cells: String = t.descendants(body).filter(|&d| t.node(d).is_text()).map(|d| t.text(d)).collect();
        assert_eq!(cells.matches('&').count(), 20_000);
        // Runs of elements and text moved before one table, in the page's order.
        let t = parse("<table>a<b>1</b>b<i>2</i>c<br>d<tr><td>x</td></tr></table>");
        assert_eq!(
            shape(&t, t.body()),
            "a<b>1</b>b<i>2</i>c<br></br>d<table><tbody><tr><td>x</td></tr></tbody></table>"
        );
        // A page of nothing but `<` reserves no more than 1.5 times itself for nodes.
        let t = parse(&"<".repeat(100_000));
        assert!(t.nodes.capacity() * size_of::<Node>() <= 100_000 * 3 / 2 + 8 * size_of::<Node>());
    }

    #[test]
    fn text_is_a_slice_of_the_page_or_of_the_arena_and_reads_the_same() {
        let t = parse(
            "<p>plain text here</p><p>a &lt;b&gt; &amp; c</p><pre>\n  kept  \n</pre><div>\n <p>x</p>\n</div>",
        );
        let texts: Vec<&str> =
            t.descendants(DOCUMENT).filter(|&d| t.node(d).is_text()).map(|d| t.text(d)).collect();
        assert_eq!(texts, ["plain text here", "a <b> & c", "  kept  \n", "x"]);
        assert!(t.arena.len() < 20, "{}", t.arena);
        assert_eq!(t.attr(t.body(), &local_name!("class")), None);
        let t = parse("<a href=\"/x\" class=k style=\"display: none\" onclick=\"evil()\">l</a>");
        let a = t.find(DOCUMENT, &local_name!("a")).unwrap();
        assert_eq!(t.attr(a, &local_name!("href")), Some("/x"));
        assert_eq!(t.attr(a, &local_name!("class")), Some("k"));
        assert_eq!(t.attr(a, &local_name!("hidden")), Some("display: none"));
        assert_eq!(t.attr(a, &local_name!("onclick")), None);
    }

    #[test]
    fn ten_thousand_nested_elements_parse_and_walk_without_recursion() {
        let html = format!("{}deep{}", "<div>".repeat(10_000), "</div>".repeat(10_000));
        let t = parse(&html);
        let deep = t.descendants(DOCUMENT).filter(|&d| t.is(d, &local_name!("div"))).count();
        assert_eq!(deep, 10_000);
        assert!(t.descendants(DOCUMENT).any(|d| t.text(d) == "deep"));
        drop(t);
    }
}
