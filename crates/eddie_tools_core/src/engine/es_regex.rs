//! ECMAScript regular expressions (flag `u`) for `file_search`, plus a fast prefilter.
//!
//! Matching is done by `regress`, an ECMAScript engine, so lookaround, backreferences, named
//! groups and `\p{…}` behave as in V8. To scan at ripgrep speed, the pattern is also
//! translated, when possible, into a Rust `regex` that matches a **superset** of what the
//! ECMAScript pattern matches on any line. That prefilter runs over the whole file; only lines
//! it touches are handed to `regress`. Patterns the translation does not understand
//! (lookaround, backreferences), and flags other than `g` and `u`, simply have no prefilter.

use crate::error::{ErrorCode, Result, ToolError};

/// A compiled ECMAScript pattern with its optional prefilter.
#[derive(Debug)]
pub struct EsRegex {
    /// The ECMAScript engine.
    pub regex: regress::Regex,
    /// A superset prefilter over bytes, when the pattern could be translated.
    pub prefilter: Option<regex::bytes::Regex>,
}

impl EsRegex {
    /// Compile `pattern` with `flags`; `what` names the argument in the error
    /// (`Invalid content regex: SyntaxError: …`).
    pub fn new(pattern: &str, flags: &str, what: &str) -> Result<Self> {
        // `g` is a property of how JS iterates, not of the pattern; regress has no such flag.
        let engine_flags: String = flags.chars().filter(|&c| c != 'g').collect();
        let regex = regress::Regex::with_flags(pattern, engine_flags.as_str()).map_err(|e| {
            ToolError::new(
                ErrorCode::InvalidRegex,
                format!(
                    "Invalid {what} regex: SyntaxError: Invalid regular expression: /{pattern}/{flags}: {}",
                    v8_message(&e.to_string())
                ),
            )
        })?;
        // The translation reads the pattern in `u` mode with no other flag: `i`, `m` and `s`
        // widen what the pattern matches, and without `u` escapes read differently.
        let prefilter = (engine_flags == "u").then(|| translate(pattern)).flatten().and_then(|rust| {
            regex::bytes::RegexBuilder::new(&rust).size_limit(32 << 20).dfa_size_limit(64 << 20).build().ok()
        });
        Ok(Self { regex, prefilter })
    }

    /// Whether the pattern matches anywhere in `text` (JS `RegExp.prototype.test`).
    pub fn test(&self, text: &str) -> bool {
        self.regex.find(text).is_some()
    }
}

/// Map regress's error texts onto V8's where they differ.
fn v8_message(msg: &str) -> String {
    let lower = msg.to_ascii_lowercase();
    let table: &[(&str, &str)] = &[
        ("unbalanced parenthesis", "Unterminated group"),
        ("unterminated group", "Unterminated group"),
        ("unexpected end of pattern", "Unterminated group"),
        ("nothing to repeat", "Nothing to repeat"),
        ("unbalanced bracket", "Unterminated character class"),
        ("unterminated character class", "Unterminated character class"),
        ("invalid escape", "Invalid escape"),
        ("unmatched ')'", "Unmatched ')'"),
    ];
    for (needle, v8) in table {
        if lower.contains(needle) {
            return (*v8).to_owned();
        }
    }
    msg.to_owned()
}

/// ECMAScript `\s` (WhiteSpace + LineTerminator), as a class body.
const ES_SPACE: &str =
    r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
const ES_WORD: &str = "0-9A-Za-z_";
const ES_DIGIT: &str = "0-9";

/// Translate an ECMAScript (`u` mode) pattern into a Rust regex that matches a superset of
/// its matches when run over a whole file (multi-line, CRLF-aware). `None` if the pattern uses
/// something without a safe translation.
pub fn translate(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut t = Translator { chars, pos: 0, out: String::with_capacity(pattern.len() * 2) };
    t.out.push_str("(?Rm)");
    t.alternation()?;
    if t.pos != t.chars.len() {
        return None;
    }
    Some(t.out)
}

struct Translator {
    chars: Vec<char>,
    pos: usize,
    out: String,
}

impl Translator {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn alternation(&mut self) -> Option<()> {
        loop {
            self.sequence()?;
            if self.peek() == Some('|') {
                self.pos += 1;
                self.out.push('|');
            } else {
                return Some(());
            }
        }
    }

    fn sequence(&mut self) -> Option<()> {
        while let Some(c) = self.peek() {
            match c {
                '|' | ')' => return Some(()),
                _ => {
                    let quantifiable = self.atom()?;
                    self.quantifier(quantifiable)?;
                }
            }
        }
        Some(())
    }

    /// One atom; returns whether a quantifier may follow.
    fn atom(&mut self) -> Option<bool> {
        let c = self.bump()?;
        match c {
            '^' => self.out.push('^'),
            '$' => self.out.push('$'),
            '.' => self.out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '(' => {
                if self.peek() == Some('?') {
                    match (self.peek_at(1), self.peek_at(2)) {
                        (Some(':'), _) => self.pos += 2,
                        (Some('<'), Some(n)) if n != '=' && n != '!' => {
                            // Named group: the name does not matter to a prefilter.
                            let close = self.chars[self.pos..].iter().position(|&c| c == '>')?;
                            self.pos += close + 1;
                        }
                        _ => return None, // lookaround or modifiers
                    }
                }
                self.out.push_str("(?:");
                self.alternation()?;
                if self.bump()? != ')' {
                    return None;
                }
                self.out.push(')');
            }
            '[' => self.class()?,
            '\\' => return self.escape_atom(),
            '*' | '+' | '?' | '{' | '}' | ']' | ')' => return None,
            c => push_literal(&mut self.out, c),
        }
        Some(!matches!(c, '^' | '$'))
    }

    fn escape_atom(&mut self) -> Option<bool> {
        let c = self.bump()?;
        match c {
            'b' => self.out.push_str(r"(?-u:\b)"),
            'B' => self.out.push_str(r"(?-u:\B)"),
            'd' => self.out.push_str(&format!("[{ES_DIGIT}]")),
            'D' => self.out.push_str(&format!("[^{ES_DIGIT}]")),
            'w' => self.out.push_str(&format!("[{ES_WORD}]")),
            'W' => self.out.push_str(&format!("[^{ES_WORD}]")),
            's' => self.out.push_str(&format!("[{ES_SPACE}]")),
            'S' => self.out.push_str(&format!("[^{ES_SPACE}]")),
            'p' | 'P' => {
                let prop = self.property()?;
                self.out.push_str(&format!("\\{c}{{{prop}}}"));
            }
            _ => {
                let ch = self.char_escape(c)?;
                push_literal(&mut self.out, ch);
            }
        }
        Some(!matches!(c, 'b' | 'B'))
    }

    /// `{Name}` or `{Name=Value}` after `\p`; Rust knows the same spellings for the common ones.
    fn property(&mut self) -> Option<String> {
        if self.bump()? != '{' {
            return None;
        }
        let close = self.chars[self.pos..].iter().position(|&c| c == '}')?;
        let body: String = self.chars[self.pos..self.pos + close].iter().collect();
        self.pos += close + 1;
        if body.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '=') {
            Some(body)
        } else {
            None
        }
    }

    /// A character escape (not a class escape); `None` for backreferences and the like.
    fn char_escape(&mut self, c: char) -> Option<char> {
        Some(match c {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'v' => '\u{0B}',
            'f' => '\u{0C}',
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => '\0',
            'x' => {
                let h: String = [self.bump()?, self.bump()?].iter().collect();
                char::from_u32(u32::from_str_radix(&h, 16).ok()?)?
            }
            'u' => self.unicode_escape()?,
            'c' => {
                let l = self.bump()?;
                if !l.is_ascii_alphabetic() {
                    return None;
                }
                char::from_u32(u32::from(l) % 32)?
            }
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|' | '/'
            | '-' => c,
            _ => return None, // backreferences (\1, \k<…>) and anything unexpected
        })
    }

    fn unicode_escape(&mut self) -> Option<char> {
        if self.peek() == Some('{') {
            self.pos += 1;
            let close = self.chars[self.pos..].iter().position(|&c| c == '}')?;
            let h: String = self.chars[self.pos..self.pos + close].iter().collect();
            self.pos += close + 1;
            return char::from_u32(u32::from_str_radix(&h, 16).ok()?);
        }
        let hex4 = |t: &mut Self| -> Option<u32> {
            let h: String = [t.bump()?, t.bump()?, t.bump()?, t.bump()?].iter().collect();
            u32::from_str_radix(&h, 16).ok()
        };
        let hi = hex4(self)?;
        if (0xD800..0xDC00).contains(&hi) && self.peek() == Some('\\') && self.peek_at(1) == Some('u') {
            self.pos += 2;
            let lo = hex4(self)?;
            if !(0xDC00..0xE000).contains(&lo) {
                return None;
            }
            return char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
        }
        char::from_u32(hi) // None for a lone surrogate
    }

    fn class(&mut self) -> Option<()> {
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut body = String::new();
        let mut empty = true;
        loop {
            let c = self.bump()?;
            if c == ']' {
                break;
            }
            empty = false;
            let first = self.class_atom(c, &mut body)?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|n| n != ']') {
                // A range: both ends must be single characters.
                let lo = first?;
                self.pos += 1;
                let n = self.bump()?;
                let mut scratch = String::new();
                let hi = self.class_atom(n, &mut scratch)??;
                if lo > hi {
                    return None;
                }
                // Replace the low end already written with the range.
                let lo_text = class_literal(lo);
                body.truncate(body.len() - lo_text.len());
                body.push_str(&format!("{lo_text}-{}", class_literal(hi)));
            }
        }
        if empty {
            // `[]` matches nothing, `[^]` anything.
            self.out.push_str(if negated { r"[\x{0}-\x{10FFFF}]" } else { r"[^\x{0}-\x{10FFFF}]" });
            return Some(());
        }
        self.out.push('[');
        if negated {
            self.out.push('^');
        }
        self.out.push_str(&body);
        self.out.push(']');
        Some(())
    }

    /// One class member written into `body`; returns the character when it is a single one.
    fn class_atom(&mut self, c: char, body: &mut String) -> Option<Option<char>> {
        if c != '\\' {
            body.push_str(&class_literal(c));
            return Some(Some(c));
        }
        let e = self.bump()?;
        let set = match e {
            'd' => Some(ES_DIGIT.to_owned()),
            'w' => Some(ES_WORD.to_owned()),
            's' => Some(ES_SPACE.to_owned()),
            'D' => Some(format!("[^{ES_DIGIT}]")),
            'W' => Some(format!("[^{ES_WORD}]")),
            'S' => Some(format!("[^{ES_SPACE}]")),
            'p' | 'P' => Some(format!("\\{e}{{{}}}", self.property()?)),
            _ => None,
        };
        if let Some(s) = set {
            body.push_str(&s);
            return Some(None);
        }
        let ch = if e == 'b' { '\u{08}' } else { self.char_escape(e)? };
        body.push_str(&class_literal(ch));
        Some(Some(ch))
    }

    fn quantifier(&mut self, quantifiable: bool) -> Option<()> {
        let Some(c) = self.peek() else { return Some(()) };
        let start = self.out.len();
        match c {
            '*' | '+' | '?' => {
                self.pos += 1;
                self.out.push(c);
            }
            '{' => {
                let close = self.chars[self.pos..].iter().position(|&c| c == '}')?;
                let body: String = self.chars[self.pos + 1..self.pos + close].iter().collect();
                if body.is_empty() || !body.chars().all(|c| c.is_ascii_digit() || c == ',') {
                    return None;
                }
                self.pos += close + 1;
                self.out.push_str(&format!("{{{body}}}"));
            }
            _ => return Some(()),
        }
        if !quantifiable {
            self.out.truncate(start);
            return None;
        }
        if self.peek() == Some('?') {
            self.pos += 1;
            self.out.push('?');
        }
        Some(())
    }
}

fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' || c == ' ' {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", u32::from(c)));
    }
}

fn class_literal(c: char) -> String {
    if c.is_ascii_alphanumeric() || c == '_' { c.to_string() } else { format!("\\x{{{:X}}}", u32::from(c)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translates_common_patterns() {
        for p in [
            "TODO",
            r"\b[A-Z][a-zA-Z]+Error\(",
            r"\p{Script=Han}+",
            r"hello\s+world",
            r"(?<year>\d{4})-(\d{2})",
            r"[^\]a-z\d-]x",
            r"^\s*export (const|let)",
            r"a.*?b$",
            r"\u{1F600}|\uD83D\uDE00",
        ] {
            let t = translate(p).unwrap_or_else(|| panic!("no translation for {p}"));
            regex::bytes::Regex::new(&t).unwrap_or_else(|e| panic!("{p} -> {t}: {e}"));
        }
    }

    #[test]
    fn refuses_what_it_cannot_translate() {
        for p in [r"(?<=a)b", r"a(?=b)", r"(a)\1", r"(?<n>a)\k<n>", r"a(?!b)"] {
            assert!(translate(p).is_none(), "{p}");
        }
    }

    #[test]
    fn flags_other_than_g_and_u_have_no_prefilter() {
        // Found by tests/parsers.rs (prefilter_misses_no_match): the translation ignored the
        // flags, so `/A/iu` had the prefilter `A` and missed a line holding `a`.
        for (flags, prefilter) in
            [("u", true), ("gu", true), ("iu", false), ("mu", false), ("su", false), ("", false)]
        {
            assert_eq!(
                EsRegex::new("A", flags, "content").unwrap().prefilter.is_some(),
                prefilter,
                "{flags}"
            );
        }
    }

    #[test]
    fn compile_errors_read_like_v8() {
        let e = EsRegex::new("(", "gu", "content").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRegex);
        assert!(
            e.message()
                .starts_with("Invalid content regex: SyntaxError: Invalid regular expression: /(/gu: ")
        );
    }
}
