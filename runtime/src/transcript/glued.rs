//! Lines that hold more than one entry because a write lost its newline:
//! whole objects back to back, or a fragment a crash cut off followed by whole
//! objects. One rule for every reader (the session, `check`, `import`).

use std::ops::Range;

use serde_json::value::RawValue;

/// How many `{` a broken line is tried at for the start of a whole entry.
const SPLIT_TRIES: usize = 256;

/// The parts of a line that holds more than one entry because a write lost
/// its newline, as byte ranges of `line` (without the whitespace between
/// them): whole objects back to back, or a fragment a crash cut off (the
/// first range) followed by whole objects. Each whole object must look like
/// an entry: a string `"role"` (an agentmsg line) or `"type"` (a pi entry).
/// `None` when the line is one JSON value, or not that.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::transcript::split_glued_line;
/// let line = r#"{"role":"user","cont{"role":"user","content":"hi","id":"c"}"#;
/// let parts = split_glued_line(line).unwrap();
/// assert_eq!(&line[parts[0].clone()], r#"{"role":"user","cont"#);
/// assert_eq!(&line[parts[1].clone()], r#"{"role":"user","content":"hi","id":"c"}"#);
/// assert!(split_glued_line(r#"{"role":"user","content":"}{"}"#).is_none());
/// ```
pub fn split_glued_line(line: &str) -> Option<Vec<Range<usize>>> {
    let text = line.trim_end();
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
        return None;
    }
    let start = text.len() - text.trim_start().len();
    if let Some(objects) = entries(text, start).filter(|o| o.len() > 1) {
        return Some(objects);
    }
    text.match_indices('{')
        .filter(|(at, _)| *at > start)
        .take(SPLIT_TRIES)
        .find_map(|(at, _)| {
            let objects = entries(text, at)?;
            let fragment = text.get(start..at)?.trim_end();
            let mut parts = Vec::with_capacity(objects.len() + 1);
            parts.push(start..start + fragment.len());
            parts.extend(objects);
            Some(parts)
        })
}

/// `text[from..]` as one or more whole entries back to back, or `None`.
fn entries(text: &str, from: usize) -> Option<Vec<Range<usize>>> {
    #[derive(serde::Deserialize)]
    struct Tag<'a> {
        #[serde(borrow, default)]
        role: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow, default, rename = "type")]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    let rest = text.get(from..)?;
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<&RawValue>();
    let mut start = 0;
    while let Some(value) = stream.next() {
        let value = value.ok()?;
        let end = stream.byte_offset();
        let tag: Tag = serde_json::from_str(value.get()).ok()?;
        if tag.role.is_none() && tag.kind.is_none() {
            return None;
        }
        let skipped = rest[start..end].len() - rest[start..end].trim_start().len();
        out.push(from + start + skipped..from + end);
        start = end;
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &str) -> Option<Vec<&str>> {
        split_glued_line(line).map(|p| p.into_iter().map(|r| &line[r]).collect())
    }

    #[test]
    fn whole_objects_and_a_fragment_before_them() {
        assert_eq!(
            parts(r#"{"role":"a"} {"type":"b"}"#).unwrap(),
            [r#"{"role":"a"}"#, r#"{"type":"b"}"#]
        );
        assert_eq!(
            parts(r#"{"role":"user","con{"role":"a"}{"role":"b"}"#).unwrap(),
            [
                r#"{"role":"user","con"#,
                r#"{"role":"a"}"#,
                r#"{"role":"b"}"#
            ]
        );
        // Objects that are no entries, a single value, or no object at all.
        assert!(parts(r#"{"a":1}{"b":2}"#).is_none());
        assert!(parts(r#"{"role":"a"}"#).is_none());
        assert!(parts("not json").is_none());
        assert!(parts(r#"{"role":"a"}5"#).is_none());
        assert!(parts("").is_none());
    }
}
