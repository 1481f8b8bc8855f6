//! Reading a message as pi reads it when it does not decode as the format
//! says: pi passes on what it reads, so a message pi would send is never
//! dropped here either. Each field read so is named, with what was found.
//!
//! What is read leniently (and how pi treats it):
//! - a `timestamp` that is a string (an ISO time or digits) or a fraction:
//!   the milliseconds it says, 0 when it says none (pi never reads it);
//! - an assistant `stopReason` pi-ai does not name (`"refusal"`): `guardRail`
//!   for a refusal, `stop` otherwise (pi skips only `error` and `aborted`);
//! - an image with `data` but no `mimeType`: the type sniffed from the bytes,
//!   or `application/octet-stream` (pi sends it without one);
//! - tool-call `arguments` that are missing or `null` (`{}`, as pi sends
//!   them), a string holding a JSON object (that object), or another value
//!   (`{"value": …}`, as [`ToolCall::new`](crate::ToolCall::new) keeps it);
//! - tool-call `arguments` nested past the JSON reader's limit of 128 levels
//!   (JavaScript reads them): read up to
//!   [`MAX_JSON_DEPTH`](crate::transcript::MAX_JSON_DEPTH) levels.

use serde_json::{Map, Value};

use crate::custom::Registry;
use crate::json::deep::{max_depth, read_deep_json};
use crate::message::MediaSource;
use crate::time::parse_iso8601;
use crate::transcript::{decode_line, DecodeMode};
use crate::{AgentMessage, AssistantContent, ImageContent, Message};

/// serde_json's limit on nesting.
const READER_LIMIT: usize = 128;

/// Arguments nested deeper than this are taken out of the line while it is
/// decoded (the reader stops at 128 levels), then put back.
const DEEP_ARGUMENTS: usize = 64;

/// A field read leniently: its path in the message and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lenience {
    pub field: String,
    pub what: String,
}

/// Reads `raw`, a message object that does not decode, as pi reads it: the
/// message and each field read leniently; `None` when there is nothing pi
/// would read differently (the line stays unknown).
pub(crate) fn read_as_pi(raw: &str, registry: &Registry) -> Option<(AgentMessage, Vec<Lenience>)> {
    let depth = max_depth(raw.as_bytes());
    let fixed;
    let text = match crate::transcript::replace_lone_surrogates(raw) {
        Some(replaced) => {
            fixed = replaced;
            fixed.as_str()
        }
        None => raw,
    };
    let Ok(Value::Object(mut object)) = read_deep_json(text) else {
        return None;
    };
    let role = object.get("role").and_then(Value::as_str)?.to_owned();
    if !matches!(role.as_str(), "user" | "assistant" | "toolResult") {
        return None;
    }
    let mut found = Vec::new();
    let mut note = |field: String, what: String| found.push(Lenience { field, what });
    timestamp(&mut object, &mut note);
    if role == "assistant" {
        stop_reason(&mut object, &mut note);
    }
    let mut deep = Vec::new();
    if let Some(Value::Array(blocks)) = object.get_mut("content") {
        for (index, block) in blocks.iter_mut().enumerate() {
            let Some(block) = block.as_object_mut() else {
                continue;
            };
            match block.get("type").and_then(Value::as_str) {
                Some("image") => image(index, block, &mut note),
                Some("toolCall") => {
                    arguments(index, block, &mut note);
                    let nested = block.get("arguments").map_or(0, value_depth);
                    if depth >= READER_LIMIT && nested > DEEP_ARGUMENTS {
                        if let Some(Value::Object(arguments)) =
                            block.insert("arguments".into(), Value::Object(Map::new()))
                        {
                            note(
                                format!("content[{index}].arguments"),
                                format!("nested {nested} levels deep, past the JSON reader's limit of {READER_LIMIT}; read whole, as pi reads it"),
                            );
                            deep.push((index, arguments));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if found.is_empty() {
        return None;
    }
    let mut message = decode_line(
        &Value::Object(object).to_string(),
        registry,
        DecodeMode::Lenient,
    )
    .ok()?;
    if message.is_unknown() {
        return None;
    }
    if !deep.is_empty() {
        let AgentMessage::Llm(llm) = &mut message else {
            return None;
        };
        let Message::Assistant(assistant) = &mut llm.message else {
            return None;
        };
        for (index, arguments) in deep {
            if let Some(AssistantContent::ToolCall(call)) = assistant.content.get_mut(index) {
                call.arguments = arguments.into();
            }
        }
    }
    Some((message, found))
}

/// The nesting of a value (1 for an empty object or array, 0 for a scalar).
fn value_depth(value: &Value) -> usize {
    // Values reach at most MAX_JSON_DEPTH levels here.
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn timestamp(object: &mut Map<String, Value>, note: &mut impl FnMut(String, String)) {
    let Some(value) = object.get("timestamp") else {
        return;
    };
    if value.is_u64() {
        return;
    }
    let read = match value {
        Value::String(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .or_else(|| parse_iso8601(text).and_then(|ms| u64::try_from(ms).ok())),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f.round() as u64),
        _ => None,
    };
    let what = match read {
        Some(ms) => format!("{value} is no integer of milliseconds; read as {ms}"),
        None => format!("{value} is no time; read as unknown (0)"),
    };
    note("timestamp".to_owned(), what);
    object.insert("timestamp".into(), Value::from(read.unwrap_or(0)));
}

fn stop_reason(object: &mut Map<String, Value>, note: &mut impl FnMut(String, String)) {
    let Some(value) = object.get("stopReason") else {
        return;
    };
    let known = value.as_str().is_some_and(|s| {
        crate::StopReason::ALL
            .iter()
            .any(|reason| reason.as_str() == s)
    });
    if known {
        return;
    }
    let read = match value.as_str() {
        Some("refusal") => crate::StopReason::GuardRail,
        _ => crate::StopReason::Stop,
    };
    note(
        "stopReason".to_owned(),
        format!("{value} is no stop reason; read as `{read}` (pi sends the message)"),
    );
    object.insert("stopReason".into(), Value::from(read.as_str()));
}

fn image(index: usize, block: &mut Map<String, Value>, note: &mut impl FnMut(String, String)) {
    if block.contains_key("mimeType") || block.contains_key("url") {
        return;
    }
    let Some(data) = block.get("data").and_then(Value::as_str) else {
        return;
    };
    let mime = match ImageContent::from_base64(data) {
        Ok(ImageContent {
            source: MediaSource::Base64 { mime_type, .. },
        }) => mime_type,
        _ => "application/octet-stream".to_owned(),
    };
    note(
        format!("content[{index}].mimeType"),
        format!("an image without `mimeType`; read as {mime}, from its bytes"),
    );
    block.insert("mimeType".into(), Value::from(mime));
}

fn arguments(index: usize, block: &mut Map<String, Value>, note: &mut impl FnMut(String, String)) {
    let field = format!("content[{index}].arguments");
    let read = match block.get("arguments") {
        Some(Value::Object(_)) => return,
        None | Some(Value::Null) => {
            note(field, "missing; read as {} (pi sends {})".to_owned());
            Value::Object(Map::new())
        }
        Some(Value::String(text)) => match serde_json::from_str::<Map<String, Value>>(text) {
            Ok(map) => {
                note(
                    field,
                    "a string holding a JSON object; read as that object".to_owned(),
                );
                Value::Object(map)
            }
            Err(_) => {
                note(
                    field,
                    "a string, not an object; read as {\"value\": the string}".to_owned(),
                );
                wrapped(Value::String(text.clone()))
            }
        },
        Some(other) => {
            let what = format!("{} is not an object; read as {{\"value\": …}}", kind(other));
            note(field, what);
            wrapped(other.clone())
        }
    };
    block.insert("arguments".into(), read);
}

fn wrapped(value: Value) -> Value {
    let mut map = Map::new();
    map.insert("value".into(), value);
    Value::Object(map)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "an array",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        _ => "a value",
    }
}
