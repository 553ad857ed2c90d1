//! JavaScript `localeCompare(…, "en")` order through ICU4X sort keys.
//!
//! `file_search` sorts with the default (tertiary) strength; the tree uses
//! `{sensitivity: "base"}` (primary strength). Both are stable: ties keep their input order.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::CollatorBorrowed;
use icu_collator::options::{CollatorOptions, Strength};

/// How strictly strings are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitivity {
    /// `localeCompare(a, b, "en")`: letters, accents and case.
    Variant,
    /// `localeCompare(a, b, "en", {sensitivity: "base"})`: letters only.
    Base,
}

/// The root collation, which is English's (CLDR tailors none for `en`). Built from the root data
/// alone, so that no other locale's tailoring (2.7 MB of baked data) is linked in;
/// `en_is_the_root_collation` holds it equal to the `en` collator.
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
        Some(CollatorBorrowed::new_root(options))
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

    /// The root collator (what ships) gives the `en` collator's sort keys, at both strengths.
    #[test]
    fn en_is_the_root_collation() {
        use icu_collator::CollatorPreferences;
        use icu_locale_core::locale;
        let words = [
            "a",
            "A",
            "á",
            "Å",
            "æ",
            "ß",
            "ss",
            "ø",
            "œ",
            "ñ",
            "ç",
            "ı",
            "İ",
            "ǆ",
            "ﬁ",
            "Ω",
            "ω",
            "ж",
            "Ж",
            "ё",
            "ع",
            "א",
            "日本",
            "中文",
            "한국",
            "ไทย",
            "हिन्दी",
            "file-10",
            "file-2",
            "_x",
            ".hidden",
            "src/a",
            "src-b",
            "src.d",
            "src_c",
            "README.md",
            "readme.md",
            "Z",
            "z",
            "1",
            "①",
            "½",
            "😀",
            "",
            " ",
            "\t",
            "a\u{301}",
            "ch",
            "ll",
            "Ä",
            "ä",
            "ö",
            "ü",
            "ő",
            "ž",
            "č",
            "đ",
            "ŋ",
            "þ",
        ];
        for (sensitivity, strength) in
            [(Sensitivity::Variant, Strength::Tertiary), (Sensitivity::Base, Strength::Primary)]
        {
            let mut options = CollatorOptions::default();
            options.strength = Some(strength);
            let en = CollatorBorrowed::try_new(CollatorPreferences::from(&locale!("en")), options).unwrap();
            for w in words {
                let mut want = Vec::new();
                en.write_sort_key_to(w, &mut want).unwrap();
                assert_eq!(sort_key(w, sensitivity), want, "{w:?} at {strength:?}");
            }
        }
    }
}
