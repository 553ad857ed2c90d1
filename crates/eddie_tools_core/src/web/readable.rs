//! The readability pass on [`Tree`]: which part of a page is its article. It follows the ideas
//! of Mozilla's Readability (the algorithm behind Firefox's reader view), written for the
//! compact tree:
//! - nodes nobody sees (scripts, styles, forms' controls, hidden ones) and, in the strict
//!   attempt, nodes whose class, id or role says navigation, a sidebar, comments, a footer… are
//!   set aside;
//! - every paragraph-like block of 25 characters or more scores 1, plus its commas, plus one
//!   per 100 characters (at most 3), given to its parent in full, its grandparent by half and
//!   further ancestors (up to 5) by a third of their level; an ancestor starts from a score for
//!   its tag and for its class and id (words like `content`, `article` up; `sidebar`, `comment`
//!   down);
//! - scores are scaled by the share of text that is not link text; the best becomes the top
//!   candidate, moved up to an ancestor that holds most of the other good candidates, or whose
//!   score is higher;
//! - the top candidate's siblings join it when they score well enough or read as prose;
//! - in the article, blocks that look like lists of links, forms or widgets are dropped, unless
//!   they hold code or are data tables.
//!
//! An attempt whose article has fewer than 500 characters is made again with one rule fewer
//! (unlikely nodes kept, then class weights ignored, then no cleaning), and the longest article
//! found is kept.

use html5ever::{LocalName, local_name};

use super::tree::{Id, NONE, Tree, is_heading};

/// An article shorter than this (characters) makes the pass try again with fewer rules.
pub const CHAR_THRESHOLD: usize = 500;

/// Flags per node.
const GONE: u8 = 1;

/// What the pass found: the nodes of the article, in order, and what to skip inside them.
pub struct Found {
    /// The article's top-level nodes.
    pub roots: Vec<Id>,
    /// Per node: set aside (never written).
    gone: Vec<u8>,
}

impl Found {
    /// The node is set aside.
    pub fn gone(&self, id: Id) -> bool {
        self.gone.get(id as usize).is_some_and(|f| f & GONE != 0)
    }
}

#[derive(Clone, Copy)]
struct Rules {
    strip_unlikely: bool,
    weigh_classes: bool,
    clean: bool,
}

/// Nodes no reader sees, in any attempt.
pub fn invisible(t: &Tree, id: Id) -> bool {
    let n = t.node(id);
    if !n.is_element() {
        return false;
    }
    if matches!(
        n.name,
        local_name!("script")
            | local_name!("style")
            | local_name!("noscript")
            | local_name!("template")
            | local_name!("head")
            | local_name!("title")
            | local_name!("meta")
            | local_name!("link")
            | local_name!("button")
            | local_name!("input")
            | local_name!("select")
            | local_name!("textarea")
            | local_name!("iframe")
            | local_name!("object")
            | local_name!("embed")
            | local_name!("canvas")
            | local_name!("svg")
            | local_name!("math")
            | local_name!("dialog")
    ) {
        return true;
    }
    t.attr(id, &local_name!("hidden")).is_some()
        || t.attr(id, &local_name!("aria-hidden")).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

const UNLIKELY: &[&str] = &[
    "-ad-",
    "ai2html",
    "banner",
    "breadcrumbs",
    "combx",
    "comment",
    "community",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "related",
    "remark",
    "replies",
    "rss",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "supplemental",
    "ad-break",
    "agegate",
    "pagination",
    "pager",
    "popup",
    "yom-remote",
    "toc",
    "navbar",
    "navigation",
    "breadcrumb",
];
const MAYBE: &[&str] = &["and", "article", "body", "column", "content", "main", "mathjax", "shadow"];
const POSITIVE: &[&str] = &[
    "article",
    "body",
    "content",
    "entry",
    "hentry",
    "h-entry",
    "main",
    "page",
    "pagination",
    "post",
    "text",
    "blog",
    "story",
];
const NEGATIVE: &[&str] = &[
    "-ad-",
    "hidden",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "footer",
    "gdpr",
    "masthead",
    "media",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "widget",
    "nav",
    "toc",
];
const UNLIKELY_ROLES: &[&str] =
    &["menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog"];

fn has_any(s: &str, words: &[&str]) -> bool {
    words.iter().any(|w| s.contains(w))
}

/// The class and the id, lowercase, joined.
fn class_id(t: &Tree, id: Id) -> String {
    let mut s = t.attr(id, &local_name!("class")).unwrap_or("").to_ascii_lowercase();
    s.push(' ');
    s.push_str(&t.attr(id, &local_name!("id")).unwrap_or("").to_ascii_lowercase());
    s
}

/// ±25 for the class and for the id.
fn class_weight(t: &Tree, id: Id) -> f32 {
    let mut w = 0.0;
    for attr in [local_name!("class"), local_name!("id")] {
        if let Some(v) = t.attr(id, &attr) {
            let v = v.to_ascii_lowercase();
            if has_any(&v, NEGATIVE) {
                w -= 25.0;
            }
            if has_any(&v, POSITIVE) {
                w += 25.0;
            }
        }
    }
    w
}

/// Text statistics of a subtree, nodes set aside not counted.
#[derive(Default, Clone, Copy)]
pub struct Stats {
    /// Characters, whitespace runs counted as one.
    pub chars: usize,
    /// Characters inside links.
    pub link_chars: usize,
    /// Commas.
    pub commas: usize,
    /// Characters inside headings.
    pub heading_chars: usize,
}

impl Stats {
    /// The share of the text that is link text.
    pub fn link_density(&self) -> f32 {
        if self.chars == 0 { 0.0 } else { self.link_chars as f32 / self.chars as f32 }
    }
}

/// Count `s` into `st`: whitespace runs count as one character (`space` carries the state).
fn count_text(s: &str, st: &mut Stats, (in_link, in_heading): (bool, bool), space: &mut bool) {
    for c in s.chars() {
        if c.is_whitespace() {
            if *space {
                continue;
            }
            *space = true;
        } else {
            *space = false;
        }
        st.chars += 1;
        if in_link {
            st.link_chars += 1;
        }
        if in_heading {
            st.heading_chars += 1;
        }
        if matches!(c, ',' | '，' | '、' | '،' | '﹐' | '︐' | '︑' | '⸲' | '⸴' | '⹁' | '⹌' | '⹎')
        {
            st.commas += 1;
        }
    }
}

/// The statistics of the subtree of `root` (its text trimmed).
pub fn stats(t: &Tree, root: Id, gone: &[u8]) -> Stats {
    let mut st = Stats::default();
    let mut space = true;
    let in_link_root = t.is(root, &local_name!("a"));
    let in_heading_root = t.node(root).is_element() && is_heading(&t.node(root).name);
    let mut it = t.descendants(root);
    // The open links and headings: their ends, as the first node after each.
    let mut link_ends: Vec<Id> = Vec::new();
    let mut heading_end: Option<Id> = None;
    while let Some(d) = it.next() {
        while link_ends.last().is_some_and(|&e| e == d) {
            link_ends.pop();
        }
        if heading_end == Some(d) {
            heading_end = None;
        }
        if gone.get(d as usize).is_some_and(|f| f & GONE != 0) || invisible(t, d) {
            it.skip_children(d);
            continue;
        }
        let n = t.node(d);
        if n.is_text() {
            let within = (in_link_root || !link_ends.is_empty(), in_heading_root || heading_end.is_some());
            count_text(t.text(d), &mut st, within, &mut space);
        } else if n.name == local_name!("a") && n.first != NONE {
            link_ends.push(t.skip(d, root));
        } else if heading_end.is_none() && is_heading(&n.name) && n.first != NONE {
            // (`NONE` when the heading runs to the end of `root`.)
            heading_end = Some(t.skip(d, root));
        }
    }
    if space && st.chars > 0 {
        // A trailing whitespace run is not text.
        st.chars -= 1;
    }
    st
}

fn count_tag(t: &Tree, root: Id, gone: &[u8], names: &[LocalName]) -> usize {
    let mut it = t.descendants(root);
    let mut n = 0;
    while let Some(d) = it.next() {
        if gone.get(d as usize).is_some_and(|f| f & GONE != 0) {
            it.skip_children(d);
            continue;
        }
        if t.node(d).is_element() && names.contains(&t.node(d).name) {
            n += 1;
        }
    }
    n
}

fn has_ancestor(t: &Tree, id: Id, names: &[LocalName], max_depth: usize) -> bool {
    let mut at = t.node(id).parent;
    let mut depth = 0;
    while at != NONE && depth < max_depth {
        if t.node(at).is_element() && names.contains(&t.node(at).name) {
            return true;
        }
        at = t.node(at).parent;
        depth += 1;
    }
    false
}

/// A `div` (or `section`) with no block child reads as a paragraph.
fn reads_as_paragraph(t: &Tree, id: Id) -> bool {
    t.children(id).all(|c| {
        let n = t.node(c);
        !n.is_element()
            || !super::tree::is_block(&n.name)
            || matches!(n.name, local_name!("script") | local_name!("style"))
    })
}

/// Text directly inside `id` (not in a child element), in characters, whitespace trimmed.
fn own_text(t: &Tree, id: Id) -> usize {
    t.children(id).filter(|&c| t.node(c).is_text()).map(|c| t.text(c).trim().chars().count()).sum()
}

/// The starting score of a candidate: its tag and (with `weigh`) its class and id.
fn initial_score(t: &Tree, id: Id, weigh: bool) -> f32 {
    let tag = match t.node(id).name {
        local_name!("div") => 5.0,
        local_name!("pre") | local_name!("td") | local_name!("blockquote") => 3.0,
        local_name!("address")
        | local_name!("ol")
        | local_name!("ul")
        | local_name!("dl")
        | local_name!("dd")
        | local_name!("dt")
        | local_name!("li")
        | local_name!("form") => -3.0,
        local_name!("th") => -5.0,
        ref h if is_heading(h) => -5.0,
        _ => 0.0,
    };
    tag + if weigh { class_weight(t, id) } else { 0.0 }
}

/// Find the article of `t` (below `<body>`), or `None` when there is no text at all.
pub fn find(t: &Tree) -> Option<Found> {
    let attempts = [
        Rules { strip_unlikely: true, weigh_classes: true, clean: true },
        Rules { strip_unlikely: false, weigh_classes: true, clean: true },
        Rules { strip_unlikely: false, weigh_classes: false, clean: true },
        Rules { strip_unlikely: false, weigh_classes: false, clean: false },
    ];
    let mut best: Option<(usize, Found)> = None;
    for rules in attempts {
        let found = attempt(t, rules);
        let chars: usize = found.roots.iter().map(|&r| stats(t, r, &found.gone).chars).sum();
        if chars >= CHAR_THRESHOLD {
            return Some(found);
        }
        if best.as_ref().is_none_or(|(c, _)| chars > *c) {
            best = Some((chars, found));
        }
    }
    best.filter(|(c, _)| *c > 0).map(|(_, f)| f)
}

fn attempt(t: &Tree, rules: Rules) -> Found {
    let body = t.body();
    let mut gone = vec![0u8; t.len()];
    // 1. Set aside what no reader sees, and (strict) what is unlikely to be content; collect
    // the paragraph-like blocks to score.
    let mut to_score: Vec<Id> = Vec::new();
    let mut it = t.descendants(body);
    while let Some(d) = it.next() {
        let n = t.node(d);
        if !n.is_element() {
            continue;
        }
        let unlikely = rules.strip_unlikely
            && n.name != local_name!("a")
            && n.name != local_name!("body")
            && (n.name == local_name!("nav")
                || t.attr(d, &local_name!("role"))
                    .is_some_and(|r| UNLIKELY_ROLES.contains(&r.trim().to_ascii_lowercase().as_str()))
                || {
                    let ci = class_id(t, d);
                    has_any(&ci, UNLIKELY)
                        && !has_any(&ci, MAYBE)
                        && !has_ancestor(
                            t,
                            d,
                            &[local_name!("table"), local_name!("code"), local_name!("pre")],
                            64,
                        )
                });
        // Footers and asides are never the article (Readability drops them in every attempt).
        let aside = matches!(n.name, local_name!("footer") | local_name!("aside"));
        if invisible(t, d) || unlikely || aside {
            gone[d as usize] |= GONE;
            it.skip_children(d);
            continue;
        }
        let scored = match n.name {
            local_name!("p")
            | local_name!("pre")
            | local_name!("td")
            | local_name!("section")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6") => true,
            local_name!("div") => reads_as_paragraph(t, d) || own_text(t, d) >= 25,
            _ => false,
        };
        if scored {
            to_score.push(d);
        }
    }

    // 2. Score them into their ancestors.
    let mut scores: std::collections::HashMap<Id, f32> = std::collections::HashMap::new();
    let mut order: Vec<Id> = Vec::new();
    for &p in &to_score {
        let st = stats(t, p, &gone);
        if st.chars < 25 {
            continue;
        }
        let score = 1.0 + st.commas as f32 + (st.chars / 100).min(3) as f32;
        let mut at = t.node(p).parent;
        let mut level = 0;
        while at != NONE && level < 5 && t.node(at).is_element() {
            let s = scores.entry(at).or_insert_with(|| {
                order.push(at);
                initial_score(t, at, rules.weigh_classes)
            });
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                l => l as f32 * 3.0,
            };
            *s += score / divider;
            at = t.node(at).parent;
            level += 1;
        }
    }
    for (id, s) in scores.iter_mut() {
        *s *= 1.0 - stats(t, *id, &gone).link_density();
    }

    // 3. The top candidate.
    let mut ranked: Vec<(Id, f32)> =
        order.iter().filter_map(|id| scores.get(id).map(|s| (*id, *s))).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut top = match ranked.first() {
        Some(&(id, _)) if id != body => id,
        _ => {
            let mut found = Found { roots: vec![body], gone };
            if rules.clean {
                clean(t, &mut found, &scores, rules);
            }
            return found;
        }
    };
    let top_score = ranked.first().map_or(0.0, |r| r.1);
    // Most of the other good candidates below one ancestor: that ancestor.
    let alternatives: Vec<Id> =
        ranked.iter().skip(1).take(4).filter(|(_, s)| *s / top_score >= 0.75).map(|(id, _)| *id).collect();
    if alternatives.len() >= 3 {
        let mut at = t.node(top).parent;
        while at != NONE && at != body {
            let holding = alternatives.iter().filter(|&&a| is_below(t, a, at)).count();
            if holding >= 3 {
                top = at;
                break;
            }
            at = t.node(at).parent;
        }
    }
    // Climb while the parent scores higher.
    let mut last = scores.get(&top).copied().unwrap_or(0.0);
    let threshold = last / 3.0;
    let mut at = t.node(top).parent;
    while at != NONE && at != body {
        match scores.get(&at) {
            Some(&s) if s >= threshold => {
                if s > last {
                    top = at;
                    break;
                }
                last = s;
            }
            Some(_) => break,
            None => {}
        }
        at = t.node(at).parent;
    }
    // An only child: its parent.
    loop {
        let p = t.node(top).parent;
        if p == NONE || p == body || !t.node(p).is_element() {
            break;
        }
        if t.children(p).filter(|&c| t.node(c).is_element() && gone[c as usize] & GONE == 0).count() != 1 {
            break;
        }
        top = p;
    }

    // 4. Siblings that belong with it.
    let top_score = scores.get(&top).copied().unwrap_or(top_score);
    let sibling_threshold = (top_score * 0.2).max(10.0);
    let top_class = t.attr(top, &local_name!("class")).unwrap_or("").to_owned();
    let parent = t.node(top).parent;
    let mut roots = Vec::new();
    for s in t.children(parent) {
        if s == top {
            roots.push(s);
            continue;
        }
        let n = t.node(s);
        if !n.is_element() || gone[s as usize] & GONE != 0 {
            continue;
        }
        let bonus = if !top_class.is_empty() && t.attr(s, &local_name!("class")) == Some(top_class.as_str()) {
            top_score * 0.2
        } else {
            0.0
        };
        let keep = if scores.get(&s).is_some_and(|sc| sc + bonus >= sibling_threshold) {
            true
        } else if n.name == local_name!("p") || (n.name == local_name!("div") && reads_as_paragraph(t, s)) {
            let st = stats(t, s, &gone);
            let density = st.link_density();
            if st.chars > 80 {
                density < 0.25
            } else {
                st.chars > 0 && density == 0.0 && {
                    let text = collect_text(t, s);
                    let text = text.trim_end();
                    text.ends_with('.') || text.contains(". ")
                }
            }
        } else {
            false
        };
        if keep {
            roots.push(s);
        }
    }
    let mut found = Found { roots, gone };
    if rules.clean {
        clean(t, &mut found, &scores, rules);
    }
    found
}

fn is_below(t: &Tree, id: Id, ancestor: Id) -> bool {
    let mut at = t.node(id).parent;
    while at != NONE {
        if at == ancestor {
            return true;
        }
        at = t.node(at).parent;
    }
    false
}

fn collect_text(t: &Tree, root: Id) -> String {
    let mut s = String::new();
    for d in t.descendants(root) {
        s.push_str(t.text(d));
    }
    s
}

/// A table of data (kept whole), not one used for layout.
fn data_table(t: &Tree, id: Id) -> bool {
    if t.attr(id, &local_name!("role")).is_some_and(|r| r == "presentation") {
        return false;
    }
    if t.attr(id, &local_name!("summary")).is_some() {
        return true;
    }
    let mut rows = 0;
    let mut cols = 0;
    for d in t.descendants(id) {
        let n = t.node(d);
        if !n.is_element() {
            continue;
        }
        match n.name {
            local_name!("table") => return false,
            local_name!("caption") | local_name!("thead") | local_name!("th") => return true,
            local_name!("tr") => {
                rows += 1;
                cols = cols.max(t.children(d).filter(|&c| t.is(c, &local_name!("td"))).count());
            }
            _ => {}
        }
    }
    rows >= 10 || cols > 4 || (rows >= 2 && cols >= 2 && rows * cols >= 6)
}

/// Drop the blocks of the article that look like boilerplate (Readability's conditional
/// cleaning), deepest first so that a block is judged without what was dropped below it.
fn clean(t: &Tree, found: &mut Found, scores: &std::collections::HashMap<Id, f32>, rules: Rules) {
    let mut cands: Vec<Id> = Vec::new();
    for &r in &found.roots {
        let mut it = t.descendants(r);
        let mut all = vec![r];
        all.extend(std::iter::from_fn(|| {
            let d = it.next()?;
            if found.gone[d as usize] & GONE != 0 {
                it.skip_children(d);
            }
            Some(d)
        }));
        for d in all {
            let n = t.node(d);
            if n.is_element()
                && matches!(
                    n.name,
                    local_name!("table")
                        | local_name!("ul")
                        | local_name!("ol")
                        | local_name!("div")
                        | local_name!("section")
                        | local_name!("form")
                        | local_name!("fieldset")
                        | local_name!("h1")
                        | local_name!("h2")
                )
                && found.gone[d as usize] & GONE == 0
            {
                cands.push(d);
            }
        }
    }
    for &d in cands.iter().rev() {
        let n = t.node(d);
        if is_heading(&n.name) {
            if rules.weigh_classes && class_weight(t, d) < 0.0 {
                found.gone[d as usize] |= GONE;
            }
            continue;
        }
        if found.roots.len() == 1 && found.roots[0] == d {
            continue;
        }
        if has_ancestor(t, d, &[local_name!("pre"), local_name!("code")], 256) {
            continue;
        }
        if n.name == local_name!("table") && data_table(t, d) {
            continue;
        }
        // A wrapper around one element only: judged as that element is.
        let mut kids = t.children(d).filter(|&c| {
            let k = t.node(c);
            k.is_element() || (k.is_text() && !t.text(c).trim().is_empty())
        });
        if let (Some(only), None) = (kids.next(), kids.next())
            && t.node(only).is_element()
            && matches!(t.node(only).name, local_name!("div") | local_name!("section"))
        {
            continue;
        }
        let weight = if rules.weigh_classes { class_weight(t, d) } else { 0.0 };
        // A list starts below zero by its tag: only its class can sink it.
        let list = matches!(n.name, local_name!("ul") | local_name!("ol"));
        let score = if list { 0.0 } else { scores.get(&d).copied().unwrap_or(0.0) };
        if weight + score < 0.0 {
            found.gone[d as usize] |= GONE;
            continue;
        }
        let st = stats(t, d, &found.gone);
        // A `div` of phrasing content is a paragraph (Readability makes it a `<p>`): only a
        // run of links goes.
        if n.name == local_name!("div") && reads_as_paragraph(t, d) {
            if st.link_density() > 0.5 {
                found.gone[d as usize] |= GONE;
            }
            continue;
        }
        if st.commas >= 10 {
            continue;
        }
        let gone = &found.gone;
        let code = count_tag(t, d, gone, &[local_name!("pre"), local_name!("code")]);
        if code > 0 {
            continue;
        }
        let is_list = matches!(n.name, local_name!("ul") | local_name!("ol"));
        let p = count_tag(t, d, gone, &[local_name!("p")]) as f32;
        let img = count_tag(t, d, gone, &[local_name!("img")]) as f32;
        let li = count_tag(t, d, gone, &[local_name!("li")]) as f32 - 100.0;
        let input = count_tag(t, d, gone, &[local_name!("input")]) as f32;
        let density = st.link_density();
        let in_figure = has_ancestor(t, d, &[local_name!("figure")], 256);
        let drop = (img > 1.0 && p / img < 0.5 && !in_figure)
            || (!is_list && li > p)
            || (input > (p / 3.0).floor())
            || (!is_list
                && (st.heading_chars as f32) < 0.9 * st.chars as f32
                && st.chars < 25
                && (img == 0.0 || img > 2.0)
                && !in_figure)
            || (!is_list && weight < 25.0 && density > 0.2)
            || (weight >= 25.0 && density > 0.5);
        if drop {
            found.gone[d as usize] |= GONE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tendril::StrTendril;

    fn article_text(t: &Tree, f: &Found) -> String {
        let mut s = String::new();
        for &r in &f.roots {
            let mut it = t.descendants(r);
            while let Some(d) = it.next() {
                if f.gone(d) {
                    it.skip_children(d);
                } else {
                    s.push_str(t.text(d));
                }
            }
        }
        s
    }

    #[test]
    fn an_article_too_short_under_the_strict_rules_is_found_with_fewer_rules() {
        // The long text sits in a "sidebar" (an unlikely class): the strict attempt drops it and
        // keeps a short note, so the pass tries again without that rule.
        let para = "This paragraph is long enough, with commas, clauses, and words, to be scored as content by the readability pass. ";
        let html = format!(
            "<html><head><title>Fallback</title></head><body><div class=\"sidebar\"><p>{}</p><p>{}</p></div><div><p>A short note, here, and there.</p></div></body></html>",
            para.repeat(4),
            para.repeat(3)
        );
        let t = Tree::parse(StrTendril::from_slice(&html));
        let strict = attempt(&t, Rules { strip_unlikely: true, weigh_classes: true, clean: true });
        let strict_text = article_text(&t, &strict);
        assert!(!strict_text.contains("long enough") && strict_text.contains("short note"), "{strict_text}");
        let found = find(&t).unwrap();
        let text = article_text(&t, &found);
        assert!(text.contains("long enough"), "{text}");
        assert!(stats(&t, found.roots[0], &found.gone).chars >= CHAR_THRESHOLD);
    }

    #[test]
    fn the_top_candidate_is_the_content_and_boilerplate_around_it_is_set_aside() {
        let para = "<p>Widgets are configured with a file at the root of the project, and each one has a name, a size and a colour.</p>";
        let html = format!(
            "<body><div id=menu><ul><li><a href=/>Home</a></li><li><a href=/x>Pricing</a></li></ul></div>\
             <div class=post><h2>Fields</h2>{}<div class=share><a href=/s>Share</a> <a href=/t>Tweet</a></div></div>\
             <div class=comments><p>First comment, I think, is here, and it says a lot of things, really.</p></div>\
             <footer><p>Copyright, all rights reserved, by the company that owns this site, forever.</p></footer></body>",
            para.repeat(6)
        );
        let t = Tree::parse(StrTendril::from_slice(&html));
        let found = find(&t).unwrap();
        let text = article_text(&t, &found);
        assert!(text.contains("Widgets are configured") && text.contains("Fields"), "{text}");
        for gone in ["Pricing", "Tweet", "First comment", "Copyright"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
    }
}
