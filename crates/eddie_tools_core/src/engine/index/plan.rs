//! A regex (parsed by `regex-syntax` into its HIR) turned into a trigram query: an AND/OR tree
//! of byte trigrams that every file holding a match must contain (Russ Cox's codesearch
//! analysis). The query is a necessary condition only: candidates are always verified by the
//! scan's own matcher, so a weak query costs time, never a result.
//!
//! Each HIR node is summarised either by the exact set of strings it can match (kept while
//! small) or by a set of prefixes, a set of suffixes and a query over its inside. Sets that
//! grow past `SET_LIMIT` are first folded into the query, then shortened.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most strings in an exact, prefix or suffix set.
const SET_LIMIT: usize = 64;
/// Classes of at most this many characters are expanded (case-folded letters, `[ab]`).
const CLASS_LIMIT: u32 = 8;

/// A trigram query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Every file (no constraint).
    All,
    /// Files holding this trigram (3 bytes, big-endian in the low 24 bits).
    Tri(u32),
    /// Files satisfying every sub-query.
    And(Vec<Query>),
    /// Files satisfying at least one sub-query.
    Or(Vec<Query>),
}

impl Query {
    /// Whether the query constrains nothing (the scan must run).
    pub fn is_all(&self) -> bool {
        matches!(self, Query::All)
    }

    fn and(self, other: Query) -> Query {
        match (self, other) {
            (Query::All, q) | (q, Query::All) => q,
            (Query::And(mut a), Query::And(b)) => {
                a.extend(b);
                Query::And(dedup(a))
            }
            (Query::And(mut a), q) | (q, Query::And(mut a)) => {
                a.push(q);
                Query::And(dedup(a))
            }
            (a, b) if a == b => a,
            (a, b) => Query::And(vec![a, b]),
        }
    }

    fn or(self, other: Query) -> Query {
        match (self, other) {
            (Query::All, _) | (_, Query::All) => Query::All,
            (Query::Or(mut a), Query::Or(b)) => {
                a.extend(b);
                Query::Or(dedup(a))
            }
            (Query::Or(mut a), q) | (q, Query::Or(mut a)) => {
                a.push(q);
                Query::Or(dedup(a))
            }
            (a, b) if a == b => a,
            (a, b) => Query::Or(vec![a, b]),
        }
    }
}

fn dedup(mut v: Vec<Query>) -> Vec<Query> {
    let mut out: Vec<Query> = Vec::with_capacity(v.len());
    for q in v.drain(..) {
        if !out.contains(&q) {
            out.push(q);
        }
    }
    out
}

/// The trigram of `b[0..3]`.
pub fn trigram(b: &[u8]) -> u32 {
    (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2])
}

/// Every trigram of `s` (AND); `All` when `s` is shorter than 3 bytes.
fn string_query(s: &[u8]) -> Query {
    let mut q = Query::All;
    for w in s.windows(3) {
        q = q.and(Query::Tri(trigram(w)));
    }
    q
}

/// Any of the strings (OR of their trigram ANDs); `All` as soon as one is too short.
fn set_query(set: &BTreeSet<Vec<u8>>) -> Query {
    let mut q: Option<Query> = None;
    for s in set {
        let sq = string_query(s);
        if sq.is_all() {
            return Query::All;
        }
        q = Some(match q {
            None => sq,
            Some(q) => q.or(sq),
        });
    }
    q.unwrap_or(Query::All)
}

type Set = BTreeSet<Vec<u8>>;

#[derive(Debug, Clone)]
struct Info {
    /// Some: the node matches exactly one of these strings.
    exact: Option<Set>,
    /// Every match starts with one of these (when not exact).
    prefix: Set,
    /// Every match ends with one of these (when not exact).
    suffix: Set,
    /// What every match holds (when not exact).
    query: Query,
}

fn one(s: &[u8]) -> Set {
    std::iter::once(s.to_vec()).collect()
}

impl Info {
    fn exact(set: Set) -> Info {
        Info { exact: Some(set), prefix: Set::new(), suffix: Set::new(), query: Query::All }.simplify()
    }

    fn empty() -> Info {
        Info::exact(one(b""))
    }

    fn any() -> Info {
        Info { exact: None, prefix: one(b""), suffix: one(b""), query: Query::All }
    }

    /// (prefixes, suffixes, query) of a node, exact or not.
    fn parts(&self) -> (Set, Set, Query) {
        match &self.exact {
            Some(s) => (s.clone(), s.clone(), set_query(s)),
            None => (self.prefix.clone(), self.suffix.clone(), self.query.clone()),
        }
    }

    fn simplify(mut self) -> Info {
        if let Some(s) = &self.exact
            && s.len() > SET_LIMIT
        {
            let (p, x, q) = self.parts();
            self = Info { exact: None, prefix: p, suffix: x, query: q };
        }
        if self.exact.is_none() {
            if self.prefix.len() > SET_LIMIT {
                self.query = std::mem::replace(&mut self.query, Query::All).and(set_query(&self.prefix));
                self.prefix = shorten(&self.prefix, false);
            }
            if self.suffix.len() > SET_LIMIT {
                self.query = std::mem::replace(&mut self.query, Query::All).and(set_query(&self.suffix));
                self.suffix = shorten(&self.suffix, true);
            }
        }
        self
    }

    fn into_query(self) -> Query {
        let (p, s, q) = self.parts();
        if self.exact.is_some() {
            return q;
        }
        q.and(set_query(&p)).and(set_query(&s))
    }
}

/// Strings cut to 2, then 1, then 0 bytes (from the end for suffixes) until few enough.
fn shorten(set: &Set, keep_end: bool) -> Set {
    for n in [2usize, 1, 0] {
        let cut: Set = set
            .iter()
            .map(|s| {
                if s.len() <= n {
                    s.clone()
                } else if keep_end {
                    s[s.len() - n..].to_vec()
                } else {
                    s[..n].to_vec()
                }
            })
            .collect();
        if cut.len() <= SET_LIMIT {
            return cut;
        }
    }
    one(b"")
}

fn cross(a: &Set, b: &Set) -> Set {
    let mut out = Set::new();
    for x in a {
        for y in b {
            let mut s = x.clone();
            s.extend_from_slice(y);
            out.insert(s);
        }
    }
    out
}

fn concat(a: Info, b: Info) -> Info {
    if let (Some(x), Some(y)) = (&a.exact, &b.exact)
        && x.len() * y.len() <= SET_LIMIT
    {
        return Info::exact(cross(x, y));
    }
    let (ap, asx, aq) = a.parts();
    let (bp, bsx, bq) = b.parts();
    let mut query = aq.and(bq);
    if asx.len() * bp.len() <= SET_LIMIT {
        query = query.and(set_query(&cross(&asx, &bp)));
    }
    let prefix = match &a.exact {
        Some(x) if x.len() * bp.len() <= SET_LIMIT => cross(x, &bp),
        _ => ap,
    };
    let suffix = match &b.exact {
        Some(y) if asx.len() * y.len() <= SET_LIMIT => cross(&asx, y),
        _ => bsx,
    };
    Info { exact: None, prefix, suffix, query }.simplify()
}

fn alternate(items: Vec<Info>) -> Info {
    if items.iter().all(|i| i.exact.is_some()) {
        let mut all = Set::new();
        for i in &items {
            if let Some(s) = &i.exact {
                all.extend(s.iter().cloned());
            }
        }
        return Info::exact(all);
    }
    let (mut prefix, mut suffix, mut query) = (Set::new(), Set::new(), None::<Query>);
    for i in items {
        let (p, s, q) = i.parts();
        prefix.extend(p);
        suffix.extend(s);
        query = Some(match query {
            None => q,
            Some(acc) => acc.or(q),
        });
    }
    Info { exact: None, prefix, suffix, query: query.unwrap_or(Query::All) }.simplify()
}

fn class_strings(c: &Class) -> Option<Set> {
    let mut out = Set::new();
    match c {
        Class::Unicode(u) => {
            let n: u32 = u.ranges().iter().map(|r| u32::from(r.end()) - u32::from(r.start()) + 1).sum();
            if n == 0 || n > CLASS_LIMIT {
                return None;
            }
            for r in u.ranges() {
                for cp in u32::from(r.start())..=u32::from(r.end()) {
                    if let Some(ch) = char::from_u32(cp) {
                        let mut buf = [0u8; 4];
                        out.insert(ch.encode_utf8(&mut buf).as_bytes().to_vec());
                    }
                }
            }
        }
        Class::Bytes(b) => {
            let n: u32 = b.ranges().iter().map(|r| u32::from(r.end()) - u32::from(r.start()) + 1).sum();
            if n == 0 || n > CLASS_LIMIT {
                return None;
            }
            for r in b.ranges() {
                for x in r.start()..=r.end() {
                    out.insert(vec![x]);
                }
            }
        }
    }
    Some(out)
}

fn analyze(h: &Hir) -> Info {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::empty(),
        HirKind::Literal(l) => Info::exact(one(&l.0)),
        HirKind::Class(c) => match class_strings(c) {
            Some(set) => Info::exact(set),
            None => Info::any(),
        },
        HirKind::Capture(c) => analyze(&c.sub),
        HirKind::Repetition(r) => {
            let sub = analyze(&r.sub);
            match (r.min, r.max) {
                (1, Some(1)) => sub,
                (0, Some(1)) => alternate(vec![Info::empty(), sub]),
                (0, _) => Info::any(),
                _ => {
                    let (p, s, q) = sub.parts();
                    Info { exact: None, prefix: p, suffix: s, query: q }.simplify()
                }
            }
        }
        HirKind::Concat(items) => {
            let mut acc = Info::empty();
            for i in items {
                acc = concat(acc, analyze(i));
            }
            acc
        }
        HirKind::Alternation(items) => alternate(items.iter().map(analyze).collect()),
    }
}

/// How a pattern is read (the scan's matcher flags).
#[derive(Debug, Clone, Copy, Default)]
pub struct Flags {
    /// The pattern is a plain string.
    pub literal: bool,
    /// Case-insensitive (Unicode simple case folding, as the matcher).
    pub case_insensitive: bool,
}

/// The trigram query of `pattern`; `All` when it cannot be parsed or has no trigram.
pub fn plan(pattern: &str, flags: Flags) -> Query {
    let escaped;
    let pattern = if flags.literal {
        escaped = regex_syntax::escape(pattern);
        escaped.as_str()
    } else {
        pattern
    };
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .case_insensitive(flags.case_insensitive)
        .build()
        .parse(pattern);
    match hir {
        Ok(h) => analyze(&h).into_query(),
        Err(_) => Query::All,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Query {
        Query::Tri(trigram(s.as_bytes()))
    }

    #[test]
    fn literals_and_regexes() {
        assert_eq!(plan("TODO", Flags::default()), Query::And(vec![t("TOD"), t("ODO")]));
        assert_eq!(plan("a.b", Flags { literal: true, ..Default::default() }), t("a.b"));
        assert!(plan("a.b", Flags::default()).is_all());
        assert!(plan(".", Flags::default()).is_all());
        assert!(plan("\\w+", Flags::default()).is_all());
        let q = plan("\\b[A-Z][a-zA-Z]+Error\\(", Flags::default());
        assert_eq!(q, Query::And(vec![t("Err"), t("rro"), t("ror"), t("or(")]));
        let q = plan("foo|bar", Flags::default());
        assert_eq!(q, Query::Or(vec![t("bar"), t("foo")]));
        assert!(plan("foo|x", Flags::default()).is_all());
        assert!(plan("(", Flags::default()).is_all(), "unparseable: scan");
    }

    #[test]
    fn case_folding_expands() {
        let q = plan("todo", Flags { case_insensitive: true, ..Default::default() });
        let Query::Or(items) = &q else { panic!("{q:?}") };
        assert_eq!(items.len(), 16);
        // The Kelvin sign folds with k.
        let q = plan("kkk", Flags { case_insensitive: true, ..Default::default() });
        let Query::Or(items) = &q else { panic!("{q:?}") };
        assert_eq!(items.len(), 27);
    }
}
