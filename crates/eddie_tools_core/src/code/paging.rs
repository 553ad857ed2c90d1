//! Pages over a list, shared by the `code` tools that take `offset` and a result cap: where a
//! page ends, whether more is left, and the `pagination` object of their results.

use serde_json::{Value, json};

/// One page of a list of `total` items: it starts at `offset` (already no larger than
/// `total`) and shows `returned` of at most `limit` items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// The first item shown.
    pub offset: usize,
    /// The cap asked for.
    pub limit: usize,
    /// How many items the page shows.
    pub returned: usize,
    /// How many items there are in all.
    pub total: usize,
}

impl Page {
    /// The page from `offset` (clamped to `total`) showing `returned` items.
    pub fn new(offset: usize, limit: usize, returned: usize, total: usize) -> Self {
        Self { offset: offset.min(total), limit, returned, total }
    }

    /// Where the next page starts.
    pub fn end(&self) -> usize {
        self.offset + self.returned
    }

    /// Whether items are left after this page.
    pub fn has_more(&self) -> bool {
        self.end() < self.total
    }

    /// The `pagination` object of a result.
    pub fn to_json(&self) -> Value {
        let has_more = self.has_more();
        json!({
            "offset": self.offset,
            "limit": self.limit,
            "returned": self.returned,
            "total": self.total,
            "hasMore": has_more,
            "nextOffset": if has_more { json!(self.end()) } else { Value::Null },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_end_and_say_what_is_left() {
        let p = Page::new(2, 2, 2, 5);
        assert_eq!((p.end(), p.has_more()), (4, true));
        assert_eq!(
            p.to_json().to_string(),
            r#"{"offset":2,"limit":2,"returned":2,"total":5,"hasMore":true,"nextOffset":4}"#
        );
        let last = Page::new(4, 2, 1, 5);
        assert_eq!(
            (last.end(), last.has_more(), last.to_json()["nextOffset"].clone()),
            (5, false, Value::Null)
        );
        // An offset past the end is clamped: nothing shown, nothing left.
        let past = Page::new(9, 2, 0, 5);
        assert_eq!((past.offset, past.end(), past.has_more()), (5, 5, false));
    }
}
