//! Escapes for HTML text and attributes, URLs and embedded JSON.

/// Appends `text` to `out` with `& < >` escaped, and `" '` too when
/// `QUOTES`.
fn escape<const QUOTES: bool>(out: &mut String, text: &str) {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let escaped = match b {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if QUOTES => "&quot;",
            b'\'' if QUOTES => "&#39;",
            _ => continue,
        };
        out.push_str(&text[start..i]);
        out.push_str(escaped);
        start = i + 1;
    }
    out.push_str(&text[start..]);
}

/// Appends `text` to `out` with `& < > " '` escaped: safe in element text and
/// in a quoted attribute value.
pub(super) fn html(out: &mut String, text: &str) {
    escape::<true>(out, text);
}

/// Appends `text` to `out` with `& < >` escaped: safe in element text (not
/// in an attribute), and shorter than [`html`] for code and JSON.
pub(super) fn text(out: &mut String, text: &str) {
    escape::<false>(out, text);
}

/// `text` escaped by [`html`].
pub(super) fn html_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    html(&mut out, text);
    out
}

/// Whether a link target may be followed from the page: `http:`, `https:`,
/// `mailto:` or a fragment. Anything else (`javascript:`, `data:`,
/// `vbscript:`, a relative path that a browser resolves against the file)
/// is not.
pub(super) fn safe_link(url: &str) -> bool {
    // Browsers drop ASCII whitespace and controls inside a scheme.
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .take(16)
        .collect::<String>()
        .to_ascii_lowercase();
    cleaned.starts_with("http://")
        || cleaned.starts_with("https://")
        || cleaned.starts_with("mailto:")
        || (cleaned.starts_with('#') && url.starts_with('#'))
}

/// JSON text made inert inside `<script type="application/json">`: `<`, `>`
/// and `&` (so no `</script>` or `<!--` closes or changes the element) and
/// U+2028/U+2029 as `\u` escapes. These characters only occur inside JSON
/// strings, where the escapes mean the same characters.
pub(super) fn inert_json(json: &str, out: &mut Vec<u8>) {
    let mut start = 0;
    for (i, c) in json.char_indices() {
        let escaped = match c {
            '<' => "\\u003c",
            '>' => "\\u003e",
            '&' => "\\u0026",
            '\u{2028}' => "\\u2028",
            '\u{2029}' => "\\u2029",
            _ => continue,
        };
        out.extend_from_slice(&json.as_bytes()[start..i]);
        out.extend_from_slice(escaped.as_bytes());
        start = i + c.len_utf8();
    }
    out.extend_from_slice(&json.as_bytes()[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_escapes_markup_and_quotes() {
        assert_eq!(
            html_string(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        let mut out = String::new();
        text(&mut out, r#"<img src=x onerror="a('b')">&"#);
        assert_eq!(out, r#"&lt;img src=x onerror="a('b')"&gt;&amp;"#);
    }

    #[test]
    fn only_web_and_mail_links_are_safe() {
        assert!(safe_link("https://example.com/a"));
        assert!(safe_link("mailto:a@b.c"));
        assert!(safe_link("#entry-1"));
        assert!(!safe_link("javascript:alert(1)"));
        assert!(!safe_link(" JaVa\tScRiPt:alert(1)"));
        assert!(!safe_link("data:text/html,<script>"));
        assert!(!safe_link("file:///etc/passwd"));
        assert!(!safe_link("a.html"));
    }

    #[test]
    fn inert_json_escapes_what_ends_a_script() {
        let mut out = Vec::new();
        inert_json("[\"</script><!--&\u{2028}\u{2029}é\"]", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "[\"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028\\u2029é\"]"
        );
        let back: Vec<String> = serde_json::from_str(&text).unwrap();
        assert_eq!(back[0], "</script><!--&\u{2028}\u{2029}é");
    }
}
