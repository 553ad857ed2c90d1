//! JavaScript `localeCompare(…, "en")` order through ICU4X sort keys.
//!
//! `file_search` sorts with the default (tertiary) strength; the tree uses
//! `{sensitivity: "base"}` (primary strength). Both are stable: ties keep their input order.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::{CollatorOptions, Strength};
use icu_collator::{CollatorBorrowed, CollatorPreferences};
use icu_locale_core::locale;

/// How strictly strings are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitivity {
    /// `localeCompare(a, b, "en")`: letters, accents and case.
    Variant,
    /// `localeCompare(a, b, "en", {sensitivity: "base"})`: letters only.
    Base,
}

fn collator(s: Sensitivity) -> Option<&'static CollatorBorrowed<'static>> {
    static VARIANT: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    static BASE: OnceLock<Option<CollatorBorrowed<'static>>> = OnceLock::new();
    let (cell, strength) = match s {
        Sensitivity::Variant => (&VARIANT, Strength::Tertiary),
        Sensitivity::Base => (&BASE, Strength::Primary),
    };
    cell.get_or_init(|| {
        let mut options = CollatorOptions::default();
        options.strength = Some(strength);
        CollatorBorrowed::try_new(CollatorPreferences::from(&locale!("en")), options).ok()
    })
    .as_ref()
}

/// The sort key of `s`. Comparing keys bytewise is comparing the strings.
pub fn sort_key(s: &str, sensitivity: Sensitivity) -> Vec<u8> {
    let mut key = Vec::with_capacity(s.len() * 2);
    match collator(sensitivity) {
        Some(c) => {
            if c.write_sort_key_to(s, &mut key).is_err() {
                key = s.as_bytes().to_vec();
            }
        }
        // Baked data cannot fail to load; fall back to code point order if it ever does.
        None => key.extend_from_slice(s.as_bytes()),
    }
    key
}

/// `a.localeCompare(b, "en", …)` as an [`Ordering`].
pub fn compare(a: &str, b: &str, sensitivity: Sensitivity) -> Ordering {
    sort_key(a, sensitivity).cmp(&sort_key(b, sensitivity))
}

/// Stable sort of `items` by the collation of `key(item)`.
pub fn sort_by_collation<T>(items: &mut Vec<T>, sensitivity: Sensitivity, key: impl Fn(&T) -> &str) {
    let mut keyed: Vec<(Vec<u8>, T)> = items.drain(..).map(|t| (sort_key(key(&t), sensitivity), t)).collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    items.extend(keyed.into_iter().map(|(_, t)| t));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_order_matches_locale_compare() {
        // The order documented in the contract (§2.4), as V8 sorts it.
        let expected = [
            "_x",
            ".hidden",
            "a",
            "b.txt",
            "B.txt",
            "file-10",
            "file-2",
            "readme.md",
            "README.md",
            "src_c",
            "src-b",
            "src.d",
            "src/a",
            "Z",
        ];
        let mut v: Vec<&str> = expected.iter().rev().copied().collect();
        sort_by_collation(&mut v, Sensitivity::Variant, |s| s);
        assert_eq!(v, expected);
    }

    #[test]
    fn base_order_is_stable_for_case_ties() {
        let mut v = vec!["b.txt", "B.txt", "a", "README.md", "readme.md"];
        sort_by_collation(&mut v, Sensitivity::Base, |s| s);
        assert_eq!(v, ["a", "b.txt", "B.txt", "README.md", "readme.md"]);
        assert_eq!(compare("é", "e", Sensitivity::Base), Ordering::Equal);
        assert_eq!(compare("é", "e", Sensitivity::Variant), Ordering::Greater);
    }
}
