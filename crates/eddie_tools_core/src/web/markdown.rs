//! Markdown (and cleaned HTML) written straight from the compact tree: ATX headings, paragraphs,
//! emphasis, inline code and fenced code blocks with their language, lists (nested), links and
//! images (resolved against the page's URL), tables, block quotes. One iterative walk; text
//! inside `<pre>` is kept byte for byte.

use html5ever::{LocalName, local_name};

use super::readable::invisible;
use super::tree::{Id, Tree, is_heading};

/// What to write: the nodes, what to skip, and the URL links are resolved against.
pub struct View<'a> {
    /// The tree.
    pub tree: &'a Tree,
    /// The top-level nodes, in order.
    pub roots: &'a [Id],
    /// A node to skip (set aside by the readability pass, or boilerplate).
    pub skip: &'a dyn Fn(Id) -> bool,
    /// The page's URL.
    pub base: Option<&'a url::Url>,
    /// `<h1>` written as `##` (an article: the page's title is its `#`).
    pub demote_h1: bool,
}

impl View<'_> {
    fn skipped(&self, id: Id) -> bool {
        invisible(self.tree, id) || (self.skip)(id)
    }

    fn url(&self, raw: &str) -> String {
        let raw = raw.trim();
        if raw.starts_with('#') {
            return raw.to_owned();
        }
        match self.base.and_then(|b| b.join(raw).ok()) {
            Some(u) => u.to_string(),
            None => raw.to_owned(),
        }
    }
}

enum Step {
    Enter(Id),
    Exit(Id, usize),
}

struct List {
    ordered: bool,
    n: usize,
}

struct Table {
    rows: Vec<Vec<String>>,
    head: bool,
    /// A table for layout: its cells are written as blocks, not as a grid.
    layout: bool,
}

/// A table written as a Markdown grid: no table inside it and no block but a paragraph in its
/// cells (else it lays a page out, and its cells are written as blocks).
fn is_grid(t: &Tree, table: Id) -> bool {
    for d in t.descendants(table) {
        let n = t.node(d);
        if n.is_element()
            && matches!(
                n.name,
                local_name!("table")
                    | local_name!("pre")
                    | local_name!("ul")
                    | local_name!("ol")
                    | local_name!("dl")
                    | local_name!("div")
                    | local_name!("blockquote")
            )
            || n.is_element() && is_heading(&n.name)
        {
            return false;
        }
    }
    true
}

/// The writer's state.
struct Md {
    out: String,
    /// The prefix of every new line (block quotes, list indentation).
    prefix: String,
    /// Lengths of `prefix` before each push.
    prefixes: Vec<usize>,
    /// A space is owed before the next text.
    space: bool,
    /// Line breaks owed before the next text: 1 a new line, 2 a blank line.
    breaks: u8,
    /// Nothing written since the last line's prefix.
    fresh: bool,
    /// Where an inline opener (`[`, `**`, `*`) was just written, nothing after it yet.
    opener: Option<usize>,
    lists: Vec<List>,
    tables: Vec<Table>,
    /// Depth of elements whose text is all on one line (headings, table cells).
    one_line: usize,
}

impl Md {
    /// Room for `more` bytes: past the estimate the text grows by a quarter, not by doubling.
    fn room(&mut self, more: usize) {
        if self.out.capacity() - self.out.len() < more {
            self.out.reserve_exact(more.max(self.out.capacity() / 4));
        }
    }

    /// A new line now (with the prefix).
    fn newline(&mut self) {
        self.room(self.prefix.len() + 1);
        self.out.push('\n');
        self.out.push_str(&self.prefix);
        self.fresh = true;
        self.space = false;
        self.opener = None;
    }

    /// The end of a block: a blank line before whatever comes next.
    fn block(&mut self) {
        if self.one_line > 0 {
            self.space = true;
            return;
        }
        self.space = false;
        self.breaks = 2;
    }

    /// A line break before whatever comes next.
    fn line(&mut self) {
        if self.one_line > 0 {
            self.space = true;
            return;
        }
        self.breaks = self.breaks.max(1);
    }

    /// Write the breaks owed (none at the very start, none on a line still empty).
    fn flush(&mut self) {
        let breaks = std::mem::take(&mut self.breaks);
        if self.out.is_empty() || self.fresh {
            return;
        }
        if breaks == 2 {
            self.out.push('\n');
            self.out.push_str(self.prefix.trim_end());
        }
        if breaks > 0 {
            self.newline();
        }
    }

    /// Owed breaks and space, then markup `s` (not escaped).
    fn open(&mut self, s: &str) {
        self.flush();
        self.room(s.len() + 1);
        if self.space && !self.fresh {
            self.out.push(' ');
        }
        self.space = false;
        self.out.push_str(s);
        self.fresh = false;
    }

    /// An inline opener: its position, to drop it when nothing follows.
    fn opener(&mut self, s: &str) -> usize {
        self.open(s);
        let at = self.out.len() - s.len();
        self.opener = Some(at);
        at
    }

    fn close(&mut self, s: &str) {
        self.room(s.len());
        self.out.push_str(s);
        self.fresh = false;
        self.opener = None;
    }

    /// Text: whitespace collapsed, Markdown's characters escaped.
    fn text(&mut self, s: &str) {
        // Each character once whitespace runs are one byte, and an escape for about one in
        // eight (the rest, if any, as `String` grows): a text node of 5 MB of spaces reserves
        // about one byte, not 5.6 MB.
        let n = collapsed_len(s);
        self.room(n + n / 8 + 1);
        let mut prev: char = self.out.chars().next_back().unwrap_or(' ');
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_whitespace() {
                if let Some(at) = self.opener.take() {
                    // A space just inside an opener goes before it.
                    if at > 0 && !self.out[..at].ends_with([' ', '\n']) {
                        self.out.insert(at, ' ');
                    }
                } else if !self.fresh || self.breaks > 0 {
                    self.space = true;
                }
                continue;
            }
            if self.breaks > 0 {
                self.flush();
                prev = ' ';
            }
            if self.space && !self.fresh {
                self.out.push(' ');
                prev = ' ';
            }
            self.space = false;
            self.opener = None;
            let next = chars.peek().map_or(' ', |&(_, c)| c);
            let at_start = self.fresh;
            let escape = match c {
                '\\' | '*' | '`' | '[' | ']' => true,
                '-' | '+' => at_start && next.is_whitespace(),
                '_' => !prev.is_alphanumeric() || !next.is_alphanumeric(),
                '<' => next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?'),
                '#' | '>' => self.fresh,
                '|' => !self.tables.is_empty(),
                _ => false,
            };
            if escape {
                self.out.push('\\');
            }
            self.out.push(c);
            self.fresh = false;
            prev = c;
            if at_start && c.is_ascii_digit() {
                // `1. ` at the start of a line would start a list: `1\. `.
                let rest = &s[i + 1..];
                let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let after = &rest[digits..];
                if digits < 9
                    && (after.starts_with(". ") || after.starts_with(") ") || after == "." || after == ")")
                {
                    self.out.push_str(&rest[..digits]);
                    self.out.push('\\');
                    for _ in 0..digits {
                        chars.next();
                    }
                }
            }
        }
    }

    fn push_prefix(&mut self, p: &str) {
        self.prefixes.push(self.prefix.len());
        self.prefix.push_str(p);
    }

    fn pop_prefix(&mut self) {
        if let Some(len) = self.prefixes.pop() {
            self.prefix.truncate(len);
        }
    }
}

fn heading_level(name: &LocalName) -> Option<usize> {
    Some(match *name {
        local_name!("h1") => 1,
        local_name!("h2") => 2,
        local_name!("h3") => 3,
        local_name!("h4") => 4,
        local_name!("h5") => 5,
        local_name!("h6") => 6,
        _ => return None,
    })
}

/// The raw text below `root` (line breaks for `<br>`), nodes skipped left out.
fn raw_text(v: &View, root: Id, out: &mut String) {
    let t = v.tree;
    let mut it = t.descendants(root);
    while let Some(d) = it.next() {
        if v.skipped(d) {
            it.skip_children(d);
            continue;
        }
        if t.node(d).is_text() {
            out.push_str(t.text(d));
        } else if t.is(d, &local_name!("br")) {
            out.push('\n');
        }
    }
}

/// The language of a code block: `language-x`, `lang-x` or `highlight-source-x` on the
/// `<pre>` or its `<code>`.
fn language(t: &Tree, pre: Id) -> String {
    let code = t.children(pre).find(|&c| t.is(c, &local_name!("code")));
    let outer = t.is(pre, &local_name!("code")).then(|| t.node(pre).parent);
    for id in [code, Some(pre), outer].into_iter().flatten() {
        for class in t.attr(id, &local_name!("class")).unwrap_or("").split_whitespace() {
            for p in ["language-", "lang-", "highlight-source-"] {
                if let Some(l) = class.strip_prefix(p)
                    && !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '#' | '.' | '_'))
                {
                    return l.to_owned();
                }
            }
        }
    }
    String::new()
}

/// A fenced code block of `code` (its lines as written), or inline code inside a heading or a
/// table cell.
fn code_block(md: &mut Md, code: &str, lang: &str) {
    let code = code.trim_end_matches(['\n', '\r', ' ', '\t']);
    // Blank lines before the first line are not code (its indentation is).
    let first = code.len() - code.trim_start().len();
    let code = &code[code[..first].rfind('\n').map_or(0, |i| i + 1)..];
    if code.trim().is_empty() {
        return;
    }
    if md.one_line > 0 {
        let f = fence(code, 1);
        md.open(&f);
        md.out.push_str(&code.replace('\n', " "));
        md.close(&f);
        return;
    }
    md.block();
    let f = fence(code, 3);
    md.open(&f);
    md.room(lang.len() + code.len() + (md.prefix.len() + 1) * (code.matches('\n').count() + 2) + f.len());
    md.out.push_str(lang);
    for line in code.split('\n') {
        md.newline();
        md.out.push_str(line);
    }
    md.newline();
    md.out.push_str(&f);
    md.fresh = false;
    md.block();
}

/// Backticks around `s`: one more than its longest run.
fn fence(s: &str, min: usize) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(min))
}

/// The length of `s` with each run of ASCII whitespace counted as one byte.
fn collapsed_len(s: &str) -> usize {
    let mut n = 0;
    let mut space = false;
    for &b in s.as_bytes() {
        let ws = b.is_ascii_whitespace();
        n += usize::from(!ws || !space);
        space = ws;
    }
    n
}

/// About the length of the Markdown of `v`, so its text is reserved once rather than grown by
/// doubling while the tree is held (up to half of a doubled `String` is empty): the text
/// written, each run of whitespace as one byte, and the links' and images' URLs (resolved:
/// the page's URL counted for a relative one), plus a quarter for the markup.
fn estimate(v: &View) -> usize {
    let t = v.tree;
    let mut n = 0;
    let mut count = |id: Id| {
        if t.node(id).is_text() {
            n += collapsed_len(t.text(id));
        } else {
            for name in [local_name!("href"), local_name!("src")] {
                if let Some(u) = t.attr(id, &name) {
                    // `[`, `](`, `)`; a relative URL is resolved against the page's.
                    let relative = !u.starts_with('#') && !u.contains(':');
                    n += u.len() + 4 + if relative { v.base.map_or(0, |b| b.as_str().len()) } else { 0 };
                }
            }
        }
    };
    // As the walk: text is written, an element skipped with what it holds.
    let skipped = |id: Id| t.node(id).is_element() && v.skipped(id);
    for &root in v.roots {
        if skipped(root) {
            continue;
        }
        count(root);
        let mut it = t.descendants(root);
        while let Some(d) = it.next() {
            if skipped(d) {
                it.skip_children(d);
                continue;
            }
            count(d);
        }
    }
    n + n / 4
}

/// The Markdown of `v`.
pub fn markdown(v: &View) -> String {
    let mut md = Md {
        out: String::with_capacity(estimate(v)),
        prefix: String::new(),
        prefixes: Vec::new(),
        space: false,
        breaks: 0,
        fresh: true,
        opener: None,
        lists: Vec::new(),
        tables: Vec::new(),
        one_line: 0,
    };
    walk(v, &mut md, |md, s| md.text(s), enter, exit);
    md.out
}

/// Trailing spaces gone and blank runs cut to one outside code blocks (their lines are kept as
/// written), no blank start or end.
pub fn tidy(s: &mut String) {
    let mut out = String::with_capacity(s.len());
    let mut fence: Option<String> = None;
    let mut blank = 0;
    for line in s.split('\n') {
        let trimmed = line.trim_start_matches([' ', '>']);
        if let Some(f) = &fence {
            out.push('\n');
            out.push_str(line);
            if trimmed.trim_end() == f {
                fence = None;
            }
            continue;
        }
        let line = line.trim_end();
        if line.trim_start_matches('>').is_empty()
            && !line.is_empty()
            && out.rsplit('\n').next() == Some(line)
        {
            continue;
        }
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
        if trimmed.starts_with("```") {
            let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
            fence = Some("`".repeat(ticks));
        }
    }
    *s = out;
}

fn push_children(t: &Tree, id: Id, stack: &mut Vec<Step>, kids: &mut Vec<Id>) {
    kids.clear();
    kids.extend(t.children(id));
    stack.extend(kids.iter().rev().map(|&k| Step::Enter(k)));
}

/// Write the start of element `id`: `None` when it was written whole (children included), else
/// the mark its exit needs (an offset in the output).
fn enter(v: &View, md: &mut Md, id: Id) -> Option<usize> {
    let t = v.tree;
    let name = &t.node(id).name;
    if let Some(level) = heading_level(name) {
        let level = if v.demote_h1 { level.max(2) } else { level };
        if md.one_line > 0 {
            return Some(usize::MAX);
        }
        md.block();
        md.flush();
        let at = md.out.len();
        md.open(&"#".repeat(level));
        md.out.push(' ');
        md.fresh = true;
        md.one_line += 1;
        return Some(at);
    }
    match *name {
        local_name!("pre") | local_name!("xmp") | local_name!("listing") | local_name!("plaintext") => {
            // A `<pre>` holding several `<code>`s (one per flavour of an example): a block each.
            let codes: Vec<Id> =
                t.children(id).filter(|&c| t.is(c, &local_name!("code")) && !v.skipped(c)).collect();
            let parts = if codes.len() > 1 { codes } else { vec![id] };
            for part in parts {
                let mut code = String::new();
                raw_text(v, part, &mut code);
                code_block(md, &code, &language(t, part));
            }
            None
        }
        local_name!("code") | local_name!("kbd") | local_name!("samp") => {
            let mut code = String::new();
            raw_text(v, id, &mut code);
            let code = code.split_whitespace().collect::<Vec<_>>().join(" ");
            if code.is_empty() {
                return None;
            }
            let f = fence(&code, 1);
            let pad = if code.starts_with('`') || code.ends_with('`') { " " } else { "" };
            md.open(&f);
            md.out.push_str(pad);
            md.out.push_str(&code);
            md.out.push_str(pad);
            md.close(&f);
            None
        }
        local_name!("br") => {
            md.line();
            None
        }
        local_name!("hr") => {
            md.block();
            md.open("* * *");
            md.block();
            None
        }
        local_name!("img") => {
            if let Some(src) = t.attr(id, &local_name!("src")).filter(|s| !s.trim().is_empty()) {
                let alt = t
                    .attr(id, &local_name!("alt"))
                    .unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                md.open("![");
                md.text(&alt);
                md.close(&format!("]({})", v.url(src)));
            }
            None
        }
        local_name!("a") => {
            if t.attr(id, &local_name!("href"))
                .is_some_and(|h| !h.trim().is_empty() && !h.trim_start().starts_with("javascript:"))
            {
                return Some(md.opener("["));
            }
            Some(usize::MAX)
        }
        local_name!("strong") | local_name!("b") => Some(md.opener("**")),
        local_name!("em") | local_name!("i") | local_name!("cite") => Some(md.opener("*")),
        local_name!("ul") | local_name!("ol") => {
            if md.lists.is_empty() {
                md.block();
            } else {
                md.line();
            }
            md.lists.push(List { ordered: *name == local_name!("ol"), n: 0 });
            Some(0)
        }
        local_name!("li") => {
            let marker = match md.lists.last_mut() {
                Some(l) => {
                    l.n += 1;
                    if l.n > 1 && md.one_line == 0 {
                        md.breaks = 1;
                    }
                    if l.ordered { format!("{}. ", l.n) } else { "- ".to_owned() }
                }
                None => "- ".to_owned(),
            };
            md.line();
            if md.one_line > 0 {
                return Some(0);
            }
            md.open(&marker);
            md.fresh = true;
            md.push_prefix(&" ".repeat(marker.len()));
            Some(1)
        }
        local_name!("blockquote") => {
            md.block();
            if md.one_line > 0 {
                return Some(0);
            }
            md.flush();
            md.push_prefix("> ");
            md.out.push_str("> ");
            md.fresh = true;
            Some(1)
        }
        local_name!("table") => {
            md.block();
            let layout = md.one_line > 0 || !is_grid(t, id);
            if !layout {
                md.flush();
            }
            md.tables.push(Table { rows: Vec::new(), head: false, layout });
            Some(0)
        }
        local_name!("tr") | local_name!("td") | local_name!("th")
            if md.tables.last().is_none_or(|tb| tb.layout) =>
        {
            md.block();
            Some(0)
        }
        local_name!("tr") => {
            if let Some(tb) = md.tables.last_mut() {
                tb.rows.push(Vec::new());
            }
            Some(0)
        }
        local_name!("td") | local_name!("th") => {
            md.one_line += 1;
            md.space = false;
            md.breaks = 0;
            md.fresh = true;
            Some(md.out.len())
        }
        local_name!("caption") => {
            md.block();
            md.one_line += 1;
            Some(0)
        }
        _ => {
            if super::tree::is_block(name) {
                md.block();
            }
            Some(0)
        }
    }
}

fn exit(v: &View, md: &mut Md, id: Id, at: usize) {
    let t = v.tree;
    let name = &t.node(id).name;
    if let Some(level) = heading_level(name) {
        let level = if v.demote_h1 { level.max(2) } else { level };
        if at == usize::MAX {
            return;
        }
        md.one_line -= 1;
        if md.out.len() <= at + level + 1 {
            // An empty heading: nothing at all.
            md.out.truncate(at);
            md.fresh = true;
        }
        md.block();
        return;
    }
    match *name {
        local_name!("a") => {
            if at == usize::MAX {
                return;
            }
            if md.out.get(at..).is_none_or(|s| s.trim_end() == "[") {
                md.out.truncate(at);
                md.opener = None;
                return;
            }
            let href = t.attr(id, &local_name!("href")).unwrap_or("");
            let title = t.attr(id, &local_name!("title")).map(str::trim).filter(|s| !s.is_empty());
            let url = v.url(href).replace(' ', "%20").replace('(', "%28").replace(')', "%29");
            match title {
                Some(ti) => md.close(&format!("]({url} \"{}\")", ti.replace('"', "\\\""))),
                None => md.close(&format!("]({url})")),
            }
        }
        local_name!("strong")
        | local_name!("b")
        | local_name!("em")
        | local_name!("i")
        | local_name!("cite") => {
            let mark = if matches!(*name, local_name!("strong") | local_name!("b")) { "**" } else { "*" };
            if md.out.get(at..).is_none_or(|s| s.trim_end() == mark) {
                md.out.truncate(at);
                md.opener = None;
                return;
            }
            md.close(mark);
        }
        local_name!("ul") | local_name!("ol") => {
            md.lists.pop();
            if md.lists.is_empty() {
                md.block();
            } else {
                md.line();
            }
        }
        local_name!("li") | local_name!("blockquote") => {
            if at == 1 {
                md.pop_prefix();
            }
            if *name == local_name!("blockquote") {
                md.block();
            }
        }
        local_name!("tr") | local_name!("td") | local_name!("th")
            if md.tables.last().is_none_or(|tb| tb.layout) =>
        {
            md.block();
        }
        local_name!("td") | local_name!("th") => {
            md.one_line -= 1;
            let cell = md.out.get(at..).unwrap_or("").trim().replace('\n', " ");
            md.out.truncate(at);
            md.space = false;
            md.fresh = true;
            if let Some(tb) = md.tables.last_mut() {
                if *name == local_name!("th") && tb.rows.len() == 1 {
                    tb.head = true;
                }
                match tb.rows.last_mut() {
                    Some(r) => r.push(cell),
                    None => tb.rows.push(vec![cell]),
                }
            }
        }
        local_name!("caption") => {
            md.one_line -= 1;
            md.block();
        }
        local_name!("table") => match md.tables.pop() {
            Some(tb) if !tb.layout => write_table(md, tb),
            _ => md.block(),
        },
        _ => {
            if super::tree::is_block(name) {
                md.block();
            }
        }
    }
}

fn write_table(md: &mut Md, tb: Table) {
    let rows: Vec<Vec<String>> = tb.rows.into_iter().filter(|r| !r.is_empty()).collect();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    if cols == 0 {
        return;
    }
    if md.one_line > 0 {
        // A table inside a cell: its cells in a row.
        let cells: Vec<String> = rows.into_iter().flatten().collect();
        md.open(&cells.join(" "));
        return;
    }
    let width = |r: &Vec<String>, c: usize| r.get(c).map_or(0, |s| s.chars().count());
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().map(|r| width(r, c)).max().unwrap_or(0).max(3)).collect();
    let line = |r: &[String]| {
        let mut s = String::from("|");
        for (c, w) in widths.iter().enumerate() {
            let cell = r.get(c).map_or("", String::as_str);
            s.push(' ');
            s.push_str(cell);
            s.push_str(&" ".repeat(w.saturating_sub(cell.chars().count())));
            s.push_str(" |");
        }
        s
    };
    md.block();
    let empty = vec![String::new(); cols];
    let (head, body) = if tb.head { (&rows[0], &rows[1..]) } else { (&empty, &rows[..]) };
    md.open(&line(head));
    md.newline();
    let mut sep = String::from("|");
    for w in &widths {
        sep.push_str(&format!(" {} |", "-".repeat(*w)));
    }
    md.out.push_str(&sep);
    for r in body {
        md.newline();
        md.out.push_str(&line(r));
    }
    md.fresh = false;
    md.block();
}

/// The HTML of `v`: the kept nodes and the attributes the tree keeps (links resolved).
pub fn html(v: &View) -> String {
    let mut out = String::new();
    walk(v, &mut out, |out, s| escape(out, s, false), html_open, html_close);
    out
}

/// An element's start tag with the kept attributes (links resolved).
fn html_open(v: &View, out: &mut String, id: Id) -> Option<usize> {
    let t = v.tree;
    let name = t.node(id).name;
    out.push('<');
    out.push_str(&name);
    for a in [
        local_name!("id"),
        local_name!("class"),
        local_name!("href"),
        local_name!("src"),
        local_name!("alt"),
        local_name!("title"),
    ] {
        if let Some(val) = t.attr(id, &a) {
            let val = if matches!(a, local_name!("href") | local_name!("src")) {
                v.url(val)
            } else {
                val.to_owned()
            };
            out.push(' ');
            out.push_str(&a);
            out.push_str("=\"");
            escape(out, &val, true);
            out.push('"');
        }
    }
    out.push('>');
    (!is_void(&name)).then_some(0)
}

fn html_close(v: &View, out: &mut String, id: Id, _: usize) {
    out.push_str("</");
    out.push_str(&v.tree.node(id).name);
    out.push('>');
}

/// The walk both writers make: text to `text`, each element not skipped to `enter` (which says
/// whether to go below it, with a mark for its `exit`), iteratively.
fn walk<S>(
    v: &View,
    state: &mut S,
    text: impl Fn(&mut S, &str),
    enter: impl Fn(&View, &mut S, Id) -> Option<usize>,
    exit: impl Fn(&View, &mut S, Id, usize),
) {
    let t = v.tree;
    let mut stack: Vec<Step> = v.roots.iter().rev().map(|&r| Step::Enter(r)).collect();
    let mut kids: Vec<Id> = Vec::new();
    while let Some(step) = stack.pop() {
        match step {
            Step::Enter(id) => {
                let n = t.node(id);
                if n.is_text() {
                    text(state, t.text(id));
                    continue;
                }
                if !n.is_element() {
                    push_children(t, id, &mut stack, &mut kids);
                    continue;
                }
                if v.skipped(id) {
                    continue;
                }
                if let Some(at) = enter(v, state, id) {
                    stack.push(Step::Exit(id, at));
                    push_children(t, id, &mut stack, &mut kids);
                }
            }
            Step::Exit(id, at) => exit(v, state, id, at),
        }
    }
}

fn is_void(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("br")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("meta")
            | local_name!("link")
            | local_name!("col")
            | local_name!("area")
            | local_name!("base")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
            | local_name!("embed")
    )
}

fn escape(out: &mut String, s: &str, attr: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' if !attr => out.push_str("&lt;"),
            '>' if !attr => out.push_str("&gt;"),
            '"' if attr => out.push_str("&quot;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A quote-only line is dropped only when it repeats the line before it, not when that
    /// line merely ends in `>` (two quoted paragraphs stay apart).
    #[test]
    fn tidy_drops_a_repeated_quote_line_only() {
        let mut s = String::from("> a =>\n>\n> c\n>\n>\n> d");
        super::tidy(&mut s);
        assert_eq!(s, "> a =>\n>\n> c\n>\n> d");
    }

    /// A text node of 5 MB of whitespace is written as one space: the text reserved for it is
    /// what it collapses to, not its length.
    #[test]
    fn a_run_of_whitespace_reserves_what_it_collapses_to() {
        use super::Tree;
        let html = format!("<p>a{}b</p>", " ".repeat(5 << 20));
        let tree = Tree::parse(tendril::StrTendril::from_slice(&html));
        let body = [tree.body()];
        let md = super::markdown(&super::View {
            tree: &tree,
            roots: &body,
            skip: &|_| false,
            base: None,
            demote_h1: false,
        });
        assert_eq!(md.trim(), "a b");
        assert!(md.capacity() < 1024, "{} bytes reserved for {:?}", md.capacity(), md);
    }
}
