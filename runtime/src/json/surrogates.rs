//! Lone UTF-16 surrogates in JSON string escapes (`"cut \ud83d"`).
//!
//! JSON allows any `\uXXXX` escape, and tools that cut strings at UTF-16
//! offsets write half of a surrogate pair (pi does, when it cuts a tool's
//! output in the middle of an emoji). Such a string is not Unicode text, so
//! serde rejects it. What reads it instead reads the line with each lone
//! surrogate as U+FFFD, and says so; the line's own bytes stay as they are
//! wherever the line is kept.

/// Whether `json` may hold a surrogate escape (`\uD800` to `\uDFFF`): a fast
/// test before [`replace_lone_surrogates`].
///
/// Every `\u` starts with a backslash, so this looks for backslashes (one
/// `memchr` pass, no searcher built per call: readers test every line).
pub(crate) fn may_have_surrogates(json: &str) -> bool {
    let bytes = json.as_bytes();
    memchr::memchr_iter(b'\\', bytes).any(|at| {
        bytes.get(at + 1) == Some(&b'u') && matches!(bytes.get(at + 2), Some(b'd' | b'D'))
    })
}

/// `json` with every lone surrogate escape (a high one not followed by a low
/// one, or a low one alone) replaced by `\ufffd`; `None` when it has none.
/// Escaped backslashes are skipped, so `\\ud83d` (a backslash, then text) is
/// left alone.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::transcript::replace_lone_surrogates;
/// assert_eq!(replace_lone_surrogates(r#"{"t":"cut \ud83d"}"#).unwrap(), r#"{"t":"cut \ufffd"}"#);
/// assert_eq!(replace_lone_surrogates(r#"{"t":"\ud83d\ude00 and \\ud83d"}"#), None);
/// ```
pub fn replace_lone_surrogates(json: &str) -> Option<String> {
    let bytes = json.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
            return None;
        }
        let hex = json.get(at + 2..at + 6)?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = bytes.get(at..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let i = at + found;
        match unit(i) {
            Some(0xD800..=0xDBFF) => {
                if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) {
                    at = i + 12;
                    continue;
                }
            }
            Some(0xDC00..=0xDFFF) => {}
            Some(_) => {
                at = i + 6;
                continue;
            }
            // Another escape (`\\`, `\"`, `\n`…): skip the escaped character.
            None => {
                at = i + 2;
                continue;
            }
        }
        let text = out.get_or_insert_with(|| String::with_capacity(json.len()));
        text.push_str(&json[copied..i]);
        text.push_str("\\ufffd");
        copied = i + 6;
        at = i + 6;
    }
    let mut text = out?;
    text.push_str(&json[copied..]);
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        let cases = [
            (r#""a\ud83d""#, Some(r#""a\ufffd""#)),
            (r#""\uDE00x""#, Some(r#""\ufffdx""#)),
            (r#""\ud83d\ud83d\ude00""#, Some(r#""\ufffd\ud83d\ude00""#)),
            (r#""\ud83d\u0041""#, Some(r#""\ufffd\u0041""#)),
            (r#""\ud83d\ude00""#, None),
            (r#""\\ud83d""#, None),
            (r#""\u00e9\n""#, None),
            (r#""\ud8""#, None),
            ("\\", None),
            ("\\u", None),
        ];
        for (json, expected) in cases {
            assert_eq!(replace_lone_surrogates(json).as_deref(), expected, "{json}");
            if let Some(fixed) = expected {
                assert!(serde_json::from_str::<String>(fixed).is_ok(), "{fixed}");
            }
        }
        assert!(may_have_surrogates(r#""\uD83D""#));
        assert!(!may_have_surrogates(r#""\u00e9""#));
        // An escaped backslash before `ud83d` may be one (the test is quick,
        // not exact); a backslash at the end is none.
        assert!(may_have_surrogates(r#""\\ud83d""#));
        assert!(!may_have_surrogates(r#""a\\""#));
        assert!(!may_have_surrogates("\\u"));
    }
}
