//! From bytes to text: the charset (a BOM, then the `Content-Type` charset, then `<meta>`, then
//! UTF-8 when it is valid, else a guess), what kind of body it is, and for HTML the main
//! content (our readability pass on a compact tree) turned into Markdown or plain text.

use encoding_rs::Encoding;
use tendril::StrTendril;

use super::markdown::{self, View};
use super::readable;
use super::tree::{Id, Tree};

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML or XHTML.
    Html,
    /// Text to pass through (plain, Markdown, JSON, XML, CSS, JavaScript, CSV).
    Text,
    /// Anything else: reported by type and size, never dumped.
    Binary,
}

/// The MIME type of a `Content-Type` value (lowercase, no parameters).
pub fn mime_of(content_type: Option<&str>) -> Option<String> {
    let ct = content_type?.split(';').next()?.trim().to_ascii_lowercase();
    (!ct.is_empty()).then_some(ct)
}

/// The kind of a body from its type, sniffing the bytes when the type says nothing useful.
pub fn kind_of(mime: Option<&str>, bytes: &[u8]) -> Kind {
    match mime {
        Some("text/html" | "application/xhtml+xml") => Kind::Html,
        Some(m)
            if m.starts_with("text/")
                || m.ends_with("+json")
                || m.ends_with("+xml")
                || matches!(
                    m,
                    "application/json"
                        | "application/xml"
                        | "application/javascript"
                        | "application/x-javascript"
                        | "application/ecmascript"
                        | "application/x-sh"
                        | "application/toml"
                        | "application/yaml"
                        | "application/x-yaml"
                        | "application/sql"
                        | "application/graphql"
                        | "application/x-ndjson"
                ) =>
        {
            Kind::Text
        }
        Some(m) if m != "application/octet-stream" && m != "binary/octet-stream" => Kind::Binary,
        _ => sniff(bytes),
    }
}

fn sniff(bytes: &[u8]) -> Kind {
    let start = &bytes[..bytes.len().min(1024)];
    if start.contains(&0) && !start.starts_with(&[0xff, 0xfe]) && !start.starts_with(&[0xfe, 0xff]) {
        return Kind::Binary;
    }
    let lower: String =
        String::from_utf8_lossy(start).trim_start_matches('\u{feff}').trim_start().to_ascii_lowercase();
    if lower.starts_with("<!doctype html") || lower.starts_with("<html") || lower.contains("<body") {
        return Kind::Html;
    }
    let control = start.iter().filter(|b| **b < 0x09 || (0x0e..0x20).contains(*b)).count();
    if control * 20 > start.len().max(1) { Kind::Binary } else { Kind::Text }
}

/// A decoded body.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The encoding used (its WHATWG name).
    pub encoding: &'static str,
    /// Where the encoding came from: `bom`, `header`, `meta`, `utf-8` or `detected`.
    pub source: &'static str,
    /// Some bytes were invalid in that encoding (replaced by U+FFFD).
    pub malformed: bool,
}

/// The `charset` parameter of a `Content-Type` value.
pub fn charset_param(content_type: Option<&str>) -> Option<String> {
    content_type?.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset")).then(|| v.trim().trim_matches(['"', '\'']).to_owned())
    })
}

/// The charset a `<meta charset>` or `<meta http-equiv content="...; charset=">` names in
/// the first 8 KiB.
pub fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(8192)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&lower[at..], b"<meta") {
        let start = at + i;
        let end = memchr::memchr(b'>', &lower[start..]).map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = memchr::memmem::find(tag, b"charset") {
            let rest = &tag[c + 7..];
            let rest = rest.iter().skip_while(|b| b.is_ascii_whitespace()).copied().collect::<Vec<u8>>();
            if let Some(v) = rest.strip_prefix(b"=") {
                let v: Vec<u8> = v
                    .iter()
                    .skip_while(|b| b.is_ascii_whitespace() || **b == b'"' || **b == b'\'')
                    .take_while(|b| !(b.is_ascii_whitespace() || matches!(**b, b'"' | b'\'' | b';' | b'/')))
                    .copied()
                    .collect();
                if let Some(enc) = Encoding::for_label(&v) {
                    // A page that names UTF-16 in a meta tag is read as UTF-8 (HTML's rule).
                    return Some(if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                        encoding_rs::UTF_8
                    } else {
                        enc
                    });
                }
            }
        }
        at = end.max(start + 5);
        if at >= lower.len() {
            break;
        }
    }
    None
}

/// The encoding of `bytes`, where it came from, and the length of its BOM: a BOM wins (as in
/// browsers), then the header's charset, then (HTML) the `<meta>` charset, then UTF-8 when the
/// bytes are valid UTF-8, else `chardetng`'s guess.
fn encoding_of(
    bytes: &[u8],
    content_type: Option<&str>,
    html: bool,
) -> (&'static Encoding, &'static str, usize) {
    if let Some((enc, len)) = Encoding::for_bom(bytes) {
        (enc, "bom", len)
    } else if let Some(enc) = charset_param(content_type).and_then(|c| Encoding::for_label(c.as_bytes())) {
        (enc, "header", 0)
    } else if let Some(enc) = html.then(|| meta_charset(bytes)).flatten() {
        (enc, "meta", 0)
    } else if std::str::from_utf8(bytes).is_ok() {
        (encoding_rs::UTF_8, "utf-8", 0)
    } else {
        let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
        det.feed(bytes, true);
        (det.guess(None, chardetng::Utf8Detection::Deny), "detected", 0)
    }
}

/// Decode `bytes`: a BOM wins (as in browsers), then the header's charset, then (HTML) the
/// `<meta>` charset, then UTF-8 when the bytes are valid UTF-8, else `chardetng`'s guess.
pub fn decode(bytes: &[u8], content_type: Option<&str>, html: bool) -> Decoded {
    let (enc, source, bom) = encoding_of(bytes, content_type, html);
    let (text, malformed) = enc.decode_without_bom_handling(&bytes[bom..]);
    Decoded { text: text.into_owned(), encoding: enc.name(), source, malformed }
}

/// [`decode`] a body this call owns: valid UTF-8 becomes the text in place, never copied.
pub fn decode_owned(mut bytes: Vec<u8>, content_type: Option<&str>, html: bool) -> Decoded {
    let (enc, source, mut bom) = encoding_of(&bytes, content_type, html);
    if enc == encoding_rs::UTF_8 {
        // One validation: the text when it is UTF-8, else the bytes back for the decoder.
        bytes.drain(..bom);
        match String::from_utf8(bytes) {
            Ok(text) => return Decoded { text, encoding: enc.name(), source, malformed: false },
            Err(e) => (bytes, bom) = (e.into_bytes(), 0),
        }
    }
    let (text, malformed) = enc.decode_without_bom_handling(&bytes[bom..]);
    Decoded { text: text.into_owned(), encoding: enc.name(), source, malformed }
}

/// The tags dropped from a page when the readability pass finds nothing.
const BOILERPLATE: &[&str] = &[
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "iframe", "svg",
    "button",
];

/// What [`convert`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Markdown.
    Markdown,
    /// The kept nodes as HTML.
    Html,
}

/// A page converted.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The Markdown or HTML.
    pub text: String,
    /// The page's title: its `<title>`, else its first `<h1>`.
    pub title: Option<String>,
    /// Whether the readability pass found the article (else it is the whole body, boilerplate
    /// dropped).
    pub readable: bool,
}

/// The main content of the page `html` (fetched from `url`, for resolving links) as Markdown
/// or HTML. The page is the parser's input itself (not copied beside it), and the tree's text
/// nodes are slices of it: one compact tree (`tree.rs`), our readability pass on it
/// (`readable.rs`), and the Markdown written straight from it (`markdown.rs`).
pub fn convert(html: StrTendril, url: Option<&str>, form: Form) -> Converted {
    let tree = Tree::parse(html);
    super::profile::mark("parse");
    let found = readable::find(&tree);
    super::profile::mark("readability");
    let base = url.and_then(|u| url::Url::parse(u).ok());
    let title = tree.title().or_else(|| {
        let h1 = tree.find(tree.body(), &html5ever::local_name!("h1"))?;
        let mut s = String::new();
        for d in tree.descendants(h1) {
            s.push_str(tree.text(d));
        }
        let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
        (!t.is_empty()).then_some(t)
    });
    let body = [tree.body()];
    let gone = |id: Id| found.as_ref().is_some_and(|f| f.gone(id));
    let boilerplate = |id: Id| tree.node(id).is_element() && BOILERPLATE.contains(&&*tree.node(id).name);
    let view = match &found {
        Some(f) => View { tree: &tree, roots: &f.roots, skip: &gone, base: base.as_ref(), demote_h1: true },
        None => View { tree: &tree, roots: &body, skip: &boilerplate, base: base.as_ref(), demote_h1: false },
    };
    let mut text = match form {
        Form::Markdown => markdown::markdown(&view),
        Form::Html => markdown::html(&view),
    };
    let readable = found.is_some();
    // The tree and the page are gone before the Markdown is tidied.
    drop(found);
    drop(tree);
    if form == Form::Markdown {
        markdown::tidy(&mut text);
    }
    Converted { text, title, readable }
}

/// The `<title>` of a page.
pub fn title_of(html: &str) -> Option<String> {
    let lower = html.get(..html.len().min(65536))?.to_ascii_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title")?;
    let t = html.get(open_end..close)?.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then_some(t)
}

/// HTML to Markdown, no readability pass: the whole body (for a whole page, its boilerplate
/// dropped); links, headings, lists, code blocks and tables kept, scripts and styles dropped.
pub fn markdown(html: &str, whole_page: bool) -> String {
    let tree = Tree::parse(StrTendril::from_slice(html));
    let body = [tree.body()];
    let boilerplate =
        |id: Id| whole_page && tree.node(id).is_element() && BOILERPLATE.contains(&&*tree.node(id).name);
    let mut md = markdown::markdown(&View {
        tree: &tree,
        roots: &body,
        skip: &boilerplate,
        base: None,
        demote_h1: false,
    });
    markdown::tidy(&mut md);
    md
}

/// HTML to plain text: the Markdown without its markup characters for links and emphasis.
pub fn text(html: &str, whole_page: bool) -> String {
    text_of(&markdown(html, whole_page))
}

/// The plain text of Markdown made by [`markdown`].
pub fn text_of(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut in_code = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            out.push_str(line);
        } else {
            out.push_str(&strip_inline(line.trim_start_matches('#').trim_start()));
        }
        out.push('\n');
    }
    tidy(&out)
}

/// `[text](url)` → `text`, `![alt](src)` → `alt`, `**x**`/`*x*`/`` `x` `` → `x`.
fn strip_inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '!' && chars.get(i + 1) == Some(&'[') {
            i += 1;
            continue;
        }
        if c == ']' && chars.get(i + 1) == Some(&'(') {
            // skip the (url)
            let mut depth = 0;
            let mut j = i + 1;
            while j < chars.len() {
                match chars[j] {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            i = j + 1;
            continue;
        }
        if matches!(c, '[' | '*' | '`' | '\\') {
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Trailing spaces gone, runs of blank lines cut to one, no blank start or end.
fn tidy(s: &str) -> String {
    let mut s = s.to_owned();
    markdown::tidy(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_come_from_the_bom_the_header_the_meta_then_utf8_then_a_guess() {
        // Shift_JIS 日本語 = 93 fa 96 7b 8c ea
        let sjis =
            b"<html><head><meta charset=\"shift_jis\"></head><body>\x93\xfa\x96\x7b\x8c\xea</body></html>";
        let d = decode(sjis, Some("text/html"), true);
        assert!(d.text.contains("日本語"), "{}", d.text);
        assert_eq!((d.encoding, d.source), ("Shift_JIS", "meta"));
        let d = decode(b"caf\xe9", Some("text/plain; charset=ISO-8859-1"), false);
        assert_eq!((d.text.as_str(), d.encoding, d.source), ("café", "windows-1252", "header"));
        let d = decode("\u{feff}héllo".as_bytes(), Some("text/plain; charset=iso-8859-1"), false);
        assert_eq!((d.text.as_str(), d.source), ("héllo", "bom"));
        let d = decode(
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb18030\">\xd6\xd0\xce\xc4",
            None,
            true,
        );
        assert!(d.text.ends_with("中文"), "{}", d.text);
        let d = decode(b"plain \xff\xfe\xfd bytes that are not utf-8 \xe9\xe8", None, false);
        assert_eq!(d.source, "detected");
        let d = decode("ok ünïcode".as_bytes(), None, false);
        assert_eq!((d.encoding, d.source, d.malformed), ("UTF-8", "utf-8", false));
        let d = decode(b"bad \xff utf8", Some("text/plain; charset=utf-8"), false);
        assert!(d.malformed && d.text.contains('\u{fffd}'));
    }

    #[test]
    fn a_body_decoded_in_place_reads_as_the_same_body_decoded_from_a_borrow() {
        let cases: &[(&[u8], Option<&str>, bool)] = &[
            ("\u{feff}<p>héllo</p>".as_bytes(), Some("text/html"), true),
            ("\u{feff}héllo".as_bytes(), Some("text/plain; charset=iso-8859-1"), false),
            (b"\xff\xfeh\x00i\x00", None, false),
            (b"caf\xe9", Some("text/plain; charset=ISO-8859-1"), false),
            (b"<meta charset=\"shift_jis\">\x93\xfa\x96\x7b\x8c\xea", Some("text/html"), true),
            ("ok ünïcode".as_bytes(), None, false),
            ("<p>ünïcode</p>".as_bytes(), Some("text/html; charset=utf-8"), true),
            (b"bad \xff utf8", Some("text/plain; charset=utf-8"), false),
            (b"\xef\xbb\xbfbad \xff after a BOM", None, false),
            (b"plain \xff\xfe\xfd bytes that are not utf-8 \xe9\xe8", None, false),
            (b"", None, true),
            (b"\xef\xbb\xbf", None, true),
        ];
        for (bytes, ct, html) in cases {
            let borrowed = decode(bytes, *ct, *html);
            let owned = decode_owned(bytes.to_vec(), *ct, *html);
            assert_eq!(
                (&owned.text, owned.encoding, owned.source, owned.malformed),
                (&borrowed.text, borrowed.encoding, borrowed.source, borrowed.malformed),
                "{bytes:?} {ct:?}"
            );
        }
    }

    #[test]
    fn kinds_by_type_then_by_sniffing() {
        assert_eq!(kind_of(Some("text/html"), b""), Kind::Html);
        assert_eq!(kind_of(Some("application/json"), b"{}"), Kind::Text);
        assert_eq!(kind_of(Some("application/vnd.api+json"), b"{}"), Kind::Text);
        assert_eq!(kind_of(Some("application/pdf"), b"%PDF-1.7"), Kind::Binary);
        assert_eq!(kind_of(Some("image/png"), b"\x89PNG"), Kind::Binary);
        assert_eq!(kind_of(None, b"<!DOCTYPE html><html>"), Kind::Html);
        assert_eq!(kind_of(Some("application/octet-stream"), b"\x00\x01\x02binary"), Kind::Binary);
        assert_eq!(kind_of(None, b"just some text\n"), Kind::Text);
    }

    #[test]
    fn markdown_keeps_structure_and_drops_boilerplate() {
        let html = r#"<html><head><title>T</title><style>x{}</style></head><body>
            <nav><a href="/">Home</a> <a href="/a">Nav link</a></nav>
            <article><h1>Main title</h1><p>Some <a href="https://e.x/l">link</a> and <code>code</code>.</p>
            <ul><li>one</li><li>two</li></ul><pre><code class="language-rust">fn main() {}</code></pre>
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></article>
            <footer>Copyright footer</footer><script>alert(1)</script></body></html>"#;
        let md = markdown(html, true);
        assert!(md.contains("# Main title"), "{md}");
        assert!(md.contains("[link](https://e.x/l)"), "{md}");
        assert!(md.contains("- one") && md.contains("```"), "{md}");
        assert!(md.contains("| a"), "{md}");
        assert!(!md.contains("Nav link") && !md.contains("Copyright") && !md.contains("alert"), "{md}");
        let t = text(html, true);
        assert!(t.contains("Some link and code.") && !t.contains("https://e.x/l"), "{t}");
        assert_eq!(title_of(html).as_deref(), Some("T"));
    }

    const URL: Option<&str> = Some("https://docs.example/a/page.html");
    const PROSE: &str = "This sentence is long enough, with commas, clauses, and words, to be scored as the article by the pass. ";

    fn md(html: &str) -> Converted {
        convert(StrTendril::from_slice(html), URL, Form::Markdown)
    }

    #[test]
    fn malformed_html_reads_as_browsers_read_it() {
        let html = format!(
            "<html><head><title>Broken</title><body><div class=content><p>First paragraph. {PROSE}\
             <p>Second <b>bold <i>both</b> italic</i> and more. {PROSE}</p></p></p>\
             <div><p>Third paragraph inside an unclosed div. {PROSE}<ul><li>item one<li>item two</ul>\
             <p>A <a href=\"/x\">link <p>split by a paragraph</a> ends. {PROSE}"
        );
        let c = md(&html);
        assert!(c.readable);
        assert_eq!(c.title.as_deref(), Some("Broken"));
        let text = text_of(&c.text);
        for want in [
            "First paragraph.",
            "Second bold both italic and more.",
            "Third paragraph inside an unclosed div.",
            "- item one\n- item two",
            "split by a paragraph",
        ] {
            assert!(text.contains(want), "{want:?} not in {text}");
        }
        assert!(c.text.contains("- item one\n- item two"), "{}", c.text);
        assert!(c.text.contains("**bold *both***"), "{}", c.text);
        assert!(c.text.contains("[link](https://docs.example/x)"), "{}", c.text);
        assert!(!c.text.contains('<'), "{}", c.text);
    }

    #[test]
    fn a_page_of_only_navigation_gives_its_links_and_an_empty_page_nothing() {
        let nav = "<html><head><title>Site</title></head><body><nav><ul><li><a href=\"/a\">Alpha</a></li>\
                   <li><a href=\"/b\">Beta</a></li></ul></nav><footer>© Site</footer><script>x()</script></body></html>";
        let c = md(nav);
        // As before (Readability's last attempt keeps the links): the links, no footer.
        assert_eq!(c.text, "- [Alpha](https://docs.example/a)\n- [Beta](https://docs.example/b)");
        assert!(c.readable);
        for empty in ["", "<html><body><nav></nav><script>only()</script></body></html>"] {
            let c = md(empty);
            assert_eq!((c.text.as_str(), c.readable), ("", false), "{empty}");
        }
    }

    #[test]
    fn nested_lists_and_tables_keep_their_shape() {
        let html = format!(
            "<article><h2>Lists</h2><p>{PROSE}{PROSE}</p>\
             <ul><li>one<ul><li>one.a</li><li>one.b<ol><li>deep</li><li>deeper</li></ol></li></ul></li><li>two</li></ul>\
             <table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a|b</td><td><code>x</code></td></tr>\
             <tr><td>long cell</td><td>2</td></tr></tbody></table><p>{PROSE}</p></article>"
        );
        let c = md(&html);
        assert!(
            c.text.contains("- one\n  - one.a\n  - one.b\n    1. deep\n    2. deeper\n- two"),
            "{}",
            c.text
        );
        assert!(
            c.text.contains(
                "| Name      | Value |\n| --------- | ----- |\n| a\\|b      | `x`   |\n| long cell | 2     |"
            ),
            "{}",
            c.text
        );
        // A list of paragraphs (a list starts below zero by its tag; it stays), on a page long
        // enough for the strict attempt (with cleaning) to be the answer.
        let para_list = format!(
            "<article><p>{PROSE}{PROSE}{PROSE}{PROSE}{PROSE}</p><p>Other uses:</p><ul class=simple><li><p>Bind a device to a server.</p></li>\
             <li><p>Query the exports of a server.</p></li></ul><p>{PROSE}</p></article>"
        );
        let c = md(&para_list);
        assert!(
            c.text.contains("Other uses:\n\n- Bind a device to a server.\n- Query the exports of a server."),
            "{}",
            c.text
        );
        // A table used for layout: its cells are blocks.
        let layout =
            format!("<table><tr><td><h2>Side</h2><p>{PROSE}</p></td><td><pre>code</pre></td></tr></table>");
        let c = md(&layout);
        assert!(
            c.text.contains("## Side\n\nThis sentence") && c.text.contains("```\ncode\n```"),
            "{}",
            c.text
        );
    }

    #[test]
    fn code_blocks_keep_their_text_byte_for_byte() {
        let code =
            "fn main() {\n\tlet s = \"<a> & b\";\n\n\n    if a < b && c { }   \n    let t = \"```\";\n}";
        let escaped = code.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
        let html = format!(
            "<article><p>{PROSE}{PROSE}</p><pre><code class=\"language-rust\">{escaped}</code></pre>\
             <p>Inline <code>a &lt;b&gt; &amp;&amp; `c`</code> here. {PROSE}</p></article>"
        );
        let c = md(&html);
        assert!(c.text.contains(&format!("````rust\n{code}\n````")), "{}", c.text);
        assert!(c.text.contains("Inline `` a <b> && `c` `` here."), "{}", c.text);
        // The text form keeps the code's lines as well.
        assert!(text_of(&c.text).contains("    if a < b && c { }"), "{}", text_of(&c.text));
    }

    #[test]
    fn pages_in_legacy_charsets_come_out_as_text() {
        use super::super::web_fetch::{Format, render_body};
        let mut latin = b"<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><article><p>Un caf\xe9 cr\xe8me, \xab bien s\xfbr \xbb. "
            .to_vec();
        latin.extend_from_slice(PROSE.as_bytes());
        latin.extend_from_slice(b"</p></article></body></html>");
        let (text, title) = render_body(&latin, Some("text/html"), "https://e.x/", Format::Markdown);
        assert!(text.starts_with("Un café crème, « bien sûr »."), "{text}");
        assert_eq!(title.as_deref(), Some("Café"));
        let mut sjis = b"<html><head><title>t</title></head><body><p>\x93\xfa\x96\x7b\x8c\xea ".to_vec();
        sjis.extend_from_slice(PROSE.as_bytes());
        sjis.extend_from_slice(b"</p></body></html>");
        let (text, _) =
            render_body(&sjis, Some("text/html; charset=Shift_JIS"), "https://e.x/", Format::Markdown);
        assert!(text.starts_with("日本語 This sentence"), "{text}");
    }

    #[test]
    fn a_ten_megabyte_page_is_held_in_a_tree_of_less_than_its_size_and_a_half() {
        assert_eq!(size_of::<super::super::tree::Node>(), 20);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../__test__/fixtures/web");
        let page = std::fs::read_to_string(dir.join("path.html")).unwrap();
        let (head, rest) = page.split_at(page.find("<body").unwrap());
        let body = &rest[..rest.rfind("</body>").unwrap()];
        let mut big = head.to_owned();
        while big.len() < 10 << 20 {
            big.push_str(body);
        }
        big.push_str("</body></html>");
        let tree = Tree::parse(StrTendril::from_slice(&big));
        let bytes = tree.heap_bytes();
        assert!(bytes < big.len() * 3 / 2, "the tree holds {bytes} bytes for a page of {}", big.len());
        drop(tree);
        let c = md(&big);
        assert!(c.readable && c.text.len() < big.len(), "{}", c.text.len());
        assert!(c.text.contains("path.basename"));
    }

    #[test]
    fn ten_thousand_levels_of_nesting_need_no_deep_stack() {
        // 10,000 open elements: divs, quotes, lists and inline spans, five to a level.
        let html = format!(
            "<title>Deep</title>{}<p>{PROSE}{PROSE}{PROSE}deep item</p>",
            "<div><blockquote><ul><li><span>".repeat(2_000)
        );
        // A 256 KiB stack: any walk that recursed per level would overflow it.
        let (md, text) = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || {
                let c = md(&html);
                let text = text_of(&c.text);
                (c, text)
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(md.readable);
        assert!(text.contains("This sentence") && text.contains("deep item"), "{}", text.len());
        assert!(md.text.contains("> - > - > - "), "{}", &md.text[..100.min(md.text.len())]);
    }
}
