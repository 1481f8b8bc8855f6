//! What a decode and re-encode of a line would lose.
//!
//! The reader keeps a line it cannot decode byte for byte, but a line it *can*
//! decode is read into its type, and a key that the type does not have (a field a
//! newer pi writes, a typo in a hand-made line) is skipped by serde. Writing the
//! message back then drops it. [`dropped_fields`] finds such keys, so that
//! `agentmsg check` can say so before a program rewrites the file.

use serde_json::{Map, Value};

use crate::AgentMessage;

/// The keys of `raw` that `message` (what `raw` decoded to) does not write back,
/// as paths (`usage.premium`, `content[1].partialJson`), in key order.
///
/// It compares `raw` with [`AgentMessage::to_line`] of `message`, key by key,
/// into nested objects and into arrays of the same length. A key is not counted
/// as dropped when
/// - its value is a default the writer leaves out (`null`, `0`, `""`, `[]`, `{}`),
/// - or the written object has the same value under a key `raw` lacks (an alias
///   written under its canonical name, as `thinkingSignature` → `signature`),
/// - or it is the top-level `v` (the envelope's version).
///
/// A kept line ([`AgentMessage::Unknown`]) is written back as it is: nothing is
/// dropped. Nor is anything reported for a custom message that was migrated
/// from an older `v`, whose fields are expected to change.
///
/// Fails when `raw` is not JSON, or when `message` cannot be encoded.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::custom::Registry;
/// use agentmsg::transcript::{decode_line, dropped_fields, DecodeMode};
///
/// let raw = r#"{"role":"user","content":"hi","mood":"curious","timestamp":0}"#;
/// let message = decode_line(raw, Registry::global(), DecodeMode::Lenient).unwrap();
/// assert_eq!(dropped_fields(raw, &message).unwrap(), ["mood"]);
/// ```
pub fn dropped_fields(raw: &str, message: &AgentMessage) -> serde_json::Result<Vec<String>> {
    let original: Value = serde_json::from_str(raw)?;
    match message {
        AgentMessage::Unknown(_) => return Ok(Vec::new()),
        AgentMessage::Custom(entry) => {
            let stored = original.get("v").and_then(Value::as_u64).unwrap_or(1);
            if stored < u64::from(entry.message.version()) {
                return Ok(Vec::new());
            }
        }
        AgentMessage::Llm(_) => {}
    }
    let written: Value = serde_json::from_str(&message.to_line()?)?;
    let mut dropped = Vec::new();
    if let (Value::Object(mut original), Value::Object(written)) = (original, written) {
        original.remove("v");
        missing_keys(&original, &written, "", &mut dropped);
    }
    Ok(dropped)
}

fn missing_keys(
    original: &Map<String, Value>,
    written: &Map<String, Value>,
    path: &str,
    out: &mut Vec<String>,
) {
    for (key, value) in original {
        let here = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        match written.get(key) {
            Some(kept) => missing_in(value, kept, &here, out),
            None if is_default(value) => {}
            None if written
                .iter()
                .any(|(k, v)| !original.contains_key(k) && v == value) => {}
            None => out.push(here),
        }
    }
}

fn missing_in(original: &Value, written: &Value, path: &str, out: &mut Vec<String>) {
    match (original, written) {
        (Value::Object(original), Value::Object(written)) => {
            missing_keys(original, written, path, out);
        }
        (Value::Array(original), Value::Array(written)) if original.len() == written.len() => {
            for (i, (a, b)) in original.iter().zip(written).enumerate() {
                missing_in(a, b, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// A value the writer leaves out rather than writing.
fn is_default(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::Registry;
    use crate::transcript::{decode_line, DecodeMode};

    fn dropped(raw: &str) -> Vec<String> {
        let message = decode_line(raw, Registry::global(), DecodeMode::Lenient).unwrap();
        dropped_fields(raw, &message).unwrap()
    }

    #[test]
    fn keys_the_types_lack_are_reported_with_their_paths() {
        let raw = r#"{"role":"assistant","content":[{"type":"text","text":"a","annotations":["s1"]},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"},"partial":true}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"premium":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0,"currency":"USD"}},"stopReason":"stop","timestamp":5,"latencyMs":120,"id":"m1"}"#;
        assert_eq!(
            dropped(raw),
            [
                "content[0].annotations",
                "content[1].partial",
                "latencyMs",
                "usage.cost.currency",
                "usage.premium",
            ]
        );
    }

    #[test]
    fn aliases_defaults_and_the_envelope_are_not_drops() {
        // `thinkingSignature` and `textSignature` are written back as `signature`; a zero timestamp, a
        // null error and an empty response id are defaults the writer leaves out.
        let raw = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","thinkingSignature":"sig"},{"type":"text","text":"a","textSignature":"ts"}],"api":"x","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":0,"errorMessage":null,"responseId":"","id":"m1","turnId":"t1"}"#;
        assert_eq!(dropped(raw), Vec::<String>::new());
        // `details` and `arguments` are kept whole, whatever their keys.
        let raw = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":"ok","details":{"anything":{"deep":[1,{"x":2}]}},"isError":false,"timestamp":1}"#;
        assert_eq!(dropped(raw), Vec::<String>::new());
        // The plain-string form of user content is read as one text block.
        assert_eq!(
            dropped(r#"{"role":"user","content":"hi"}"#),
            Vec::<String>::new()
        );
    }

    #[test]
    fn kept_lines_drop_nothing_and_bad_json_is_an_error() {
        let raw = r#"{"role":"someoneElsesKind","whatever":{"a":1}}"#;
        assert_eq!(dropped(raw), Vec::<String>::new());
        let message = decode_line(
            r#"{"role":"user","content":"hi"}"#,
            Registry::global(),
            DecodeMode::Lenient,
        )
        .unwrap();
        assert!(dropped_fields("{\"role\":", &message).is_err());
    }

    #[test]
    fn a_built_in_custom_kind_reports_its_unknown_keys() {
        let raw =
            r#"{"role":"compactionSummary","summary":"s","tokensBefore":10,"trigger":"auto"}"#;
        assert_eq!(dropped(raw), ["trigger"]);
    }
}
