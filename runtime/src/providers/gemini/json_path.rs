//! The JSON paths of Vertex AI's streamed function-call arguments
//! (`partialArgs[].jsonPath`, such as `$.a.b[0]["c d"]`): parsed into segments,
//! and followed into the arguments object, creating what is missing.

use serde_json::{Map, Value};

/// One step of a path: an object key or an array index.
pub(super) enum Segment {
    Key(String),
    Index(usize),
}

/// `$.a.b[0]["c d"]` → segments.
pub(super) fn parse_json_path(path: &str) -> Option<Vec<Segment>> {
    let rest = path.strip_prefix('$')?;
    let bytes = rest.as_bytes();
    let mut segments = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i)? {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && !matches!(bytes.get(end), Some(b'.' | b'[')) {
                    end += 1;
                }
                let key = rest.get(start..end)?;
                if key.is_empty() {
                    return None;
                }
                segments.push(Segment::Key(key.to_owned()));
                i = end;
            }
            b'[' => {
                let close = rest.get(i..)?.find(']')? + i;
                let inner = rest.get(i + 1..close)?;
                if let Some(quoted) = inner
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                {
                    segments.push(Segment::Key(quoted.to_owned()));
                } else {
                    segments.push(Segment::Index(inner.parse().ok()?));
                }
                i = close + 1;
            }
            _ => return None,
        }
    }
    Some(segments)
}

/// The value at `segments` under `root`, creating objects, arrays and slots on
/// the way; `None` when the path crosses a value of another kind.
pub(super) fn slot_at<'a>(
    root: &'a mut Map<String, Value>,
    segments: &[Segment],
) -> Option<&'a mut Value> {
    let (first, rest) = segments.split_first()?;
    let Segment::Key(key) = first else {
        return None;
    };
    let mut current = root.entry(key.clone()).or_insert(Value::Null);
    for segment in rest {
        current = match segment {
            Segment::Key(key) => {
                if current.is_null() {
                    *current = Value::Object(Map::new());
                }
                current
                    .as_object_mut()?
                    .entry(key.clone())
                    .or_insert(Value::Null)
            }
            Segment::Index(index) => {
                if current.is_null() {
                    *current = Value::Array(Vec::new());
                }
                let array = current.as_array_mut()?;
                if *index > array.len().saturating_add(1024) {
                    return None;
                }
                while array.len() <= *index {
                    array.push(Value::Null);
                }
                array.get_mut(*index)?
            }
        };
    }
    Some(current)
}
