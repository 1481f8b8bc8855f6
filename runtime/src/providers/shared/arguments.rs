//! Tool-call arguments sent as a JSON string (OpenAI Chat and Responses).

use serde_json::{Map, Value};

use crate::providers::ResponseError;

/// Parses tool-call arguments. Anything but a JSON object (or nothing) is kept as
/// `{"value": …}` (the raw text when it is not JSON) and reported in `warnings`
/// under `path` (and `event`, for a stream).
pub(crate) fn parse_arguments(
    raw: &str,
    path: &str,
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> Map<String, Value> {
    if raw.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            warnings.push(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: "arguments are JSON but not an object; kept as {\"value\": …}".into(),
            });
            wrap_value(other)
        }
        Err(e) => {
            warnings.push(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: format!(
                    "arguments are not valid JSON ({e}); kept as the string {{\"value\": …}}"
                ),
            });
            wrap_value(Value::String(raw.to_owned()))
        }
    }
}

/// Tool-call arguments as they arrive: a JSON string (parsed as by
/// [`parse_arguments`]), an object, or nothing. Anything else is kept as
/// `{"value": …}` and reported.
pub(crate) fn arguments_value(
    value: Option<Value>,
    path: String,
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> Map<String, Value> {
    match value {
        Some(Value::String(raw)) => parse_arguments(&raw, &path, event, warnings),
        Some(Value::Object(map)) => map,
        Some(Value::Null) | None => Map::new(),
        Some(other) => {
            warnings.push(ResponseError::Invalid {
                event,
                path,
                message: "arguments are neither a string nor an object; kept as {\"value\": …}"
                    .into(),
            });
            wrap_value(other)
        }
    }
}

/// Arguments that are not an object, kept as `{"value": …}`.
fn wrap_value(value: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("value".into(), value);
    map
}
