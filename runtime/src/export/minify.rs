//! The page's script and style without their comments and the whitespace
//! no reader of them needs: run by the crate's `build.rs` on `page.js` and
//! `page.css`, so the readable files are the source and every page carries
//! the small ones (the CSP hashes are of what is written).
//!
//! Names are kept and nothing is reordered: a token of the source is a token
//! of the result. Strings, template literals and regular expressions are
//! copied as they are; a run of whitespace or comments becomes one line
//! break when it held one and automatic semicolon insertion could read it
//! (not after `{`, `;`, `=`… nor before `}`, `;`…), else one space only
//! where two tokens would otherwise join (`a b`, `a - -b`, `x / /re/`),
//! else nothing.

/// Whether `c` can be part of a name or a number.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || c == '\\' || !c.is_ascii()
}

/// Whether a space must separate `before` and `after` (the characters on
/// either side of removed whitespace) for the tokens to stay apart.
fn needs_space(before: char, after: char) -> bool {
    (is_word(before) && is_word(after))
        || (before == after && matches!(before, '+' | '-' | '/'))
        || (before == '/' && after == '*')
        || (before.is_ascii_digit() && after == '.')
}

/// Words after which a `/` starts a regular expression, not a division.
const BEFORE_REGEX: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "instanceof",
    "yield",
    "await",
];

/// `source`, a script, without comments and needless whitespace.
pub(crate) fn script(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    // Whitespace or a comment seen since the last token; whether it held
    // a line break.
    let mut gap = false;
    let mut gap_newline = false;
    let mut i = 0;
    // Whether a `/` here would start a regular expression.
    let regex_allowed = |out: &str| -> bool {
        let trimmed = out.trim_end();
        let Some(last) = trimmed.chars().last() else {
            return true;
        };
        if is_word(last) {
            let word: String = trimmed
                .chars()
                .rev()
                .take_while(|&c| is_word(c))
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            return BEFORE_REGEX.contains(&word.as_str());
        }
        !matches!(last, ')' | ']' | '}' | '"' | '\'' | '`')
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            gap = true;
            gap_newline |= c == '\n' || c == '\r' || c == '\u{2028}' || c == '\u{2029}';
            i += 1;
            continue;
        }
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            gap = true;
            continue;
        }
        if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                gap_newline |= chars[i] == '\n';
                i += 1;
            }
            i += 2;
            gap = true;
            continue;
        }
        // A token starts: the gap before it, kept as small as it can be.
        if gap && !out.is_empty() {
            let before = out.chars().last().unwrap_or(' ');
            // A line break matters to automatic semicolon insertion
            // except after an opening bracket, a separator or an operator
            // that cannot end an expression, and before a closing bracket
            // or a separator.
            let break_matters = !matches!(
                before,
                '{' | '(' | '[' | ';' | ',' | '=' | ':' | '?' | '&' | '|' | '!'
            ) && !matches!(c, '}' | ')' | ']' | ';' | ',');
            if gap_newline && break_matters {
                out.push('\n');
            } else if needs_space(before, c) {
                out.push(' ');
            }
        }
        gap = false;
        gap_newline = false;
        let start = i;
        match c {
            '"' | '\'' => {
                i += 1;
                while i < chars.len() && chars[i] != c {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            '`' => i = template_end(&chars, i),
            '/' if regex_allowed(&out) => {
                i += 1;
                let mut class = false;
                while i < chars.len() {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => class = true,
                        ']' => class = false,
                        '/' if !class => break,
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
                while i < chars.len() && is_word(chars[i]) {
                    i += 1;
                }
            }
            _ => i += 1,
        }
        let end = i.min(chars.len());
        out.extend(&chars[start..end]);
    }
    out
}

/// Where the template literal starting at `start` (its backtick) ends: past
/// its closing backtick, its `${…}` parts (with their own strings and
/// templates) included.
fn template_end(chars: &[char], start: usize) -> usize {
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '`' => return i + 1,
            '$' if chars.get(i + 1) == Some(&'{') => {
                i += 2;
                let mut depth = 1;
                while i < chars.len() && depth > 0 {
                    match chars[i] {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        '`' => {
                            i = template_end(chars, i);
                            continue;
                        }
                        q @ ('"' | '\'') => {
                            i += 1;
                            while i < chars.len() && chars[i] != q {
                                i += if chars[i] == '\\' { 2 } else { 1 };
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    i
}

/// `source`, a style sheet, without comments and needless whitespace.
pub(crate) fn style(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut gap = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            gap = true;
            i += 1;
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            gap = true;
            continue;
        }
        // A space stays between two parts of a selector or a value; around
        // punctuation it goes (never before `:`, which in a selector is a
        // pseudo-class of a descendant).
        if gap && !out.is_empty() {
            let before = out.chars().last().unwrap_or(' ');
            if !matches!(before, '{' | '}' | ';' | ':' | ',' | '>')
                && !matches!(c, '{' | '}' | ';' | ',' | '>')
            {
                out.push(' ');
            }
        }
        gap = false;
        if c == '"' || c == '\'' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend(&chars[start..i.min(chars.len())]);
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{script, style};

    #[test]
    fn a_script_keeps_its_tokens_and_line_breaks() {
        let js = "var a = 1; // one\n/* two\nlines */ var b = a - -1;\nreturn /x\\/y[/]/g.test(s) / 2 ;\n  c++ + +d";
        assert_eq!(
            script(js),
            "var a=1;var b=a- -1;return/x\\/y[/]/g.test(s)/2;c++ + +d"
        );
    }

    #[test]
    fn a_line_break_stays_where_it_ends_a_statement() {
        assert_eq!(
            script("a = b\n(c)\nx++\n-y\n{\n  z\n}"),
            "a=b\n(c)\nx++\n-y\n{z}"
        );
    }

    #[test]
    fn strings_and_templates_are_copied_as_they_are() {
        let js = "f(\"a  // b\", 'c /* d */', `e ${ g(\"}\") }  f`)  ;";
        assert_eq!(
            script(js),
            "f(\"a  // b\",'c /* d */',`e ${ g(\"}\") }  f`);"
        );
    }

    #[test]
    fn a_division_is_not_a_regular_expression() {
        assert_eq!(script("x = a / b / c;"), "x=a/b/c;");
        assert_eq!(script("x = (a) / 2 + [1][0] / 3;"), "x=(a)/2+[1][0]/3;");
    }

    #[test]
    fn a_style_keeps_descendants_and_pseudo_classes_apart() {
        let css = "/* c */ main .entry :hover ,\n a > b { color : red ; font: 1px \"a  b\" }\n";
        assert_eq!(
            style(css),
            "main .entry :hover,a>b{color :red;font:1px \"a  b\"}"
        );
    }
}
