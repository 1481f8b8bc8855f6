//! Tool-call arguments sent as a JSON string (OpenAI Chat and Responses).

use serde_json::Value;

use crate::message::RawJson;
use crate::providers::ResponseError;
use crate::ToolArguments;

/// Parses tool-call arguments, keeping their keys in the order written.
/// Anything but a JSON object (or nothing) is kept as `{"value": …}` (the raw
/// text when it is not JSON) and reported in `warnings` under `path` (and
/// `event`, for a stream).
pub(crate) fn parse_arguments(
    raw: &str,
    path: &str,
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> ToolArguments {
    if raw.trim().is_empty() {
        return ToolArguments::new();
    }
    match RawJson::from_json(raw) {
        Ok(json) if json.is_object() => ToolArguments::from_raw(json).unwrap_or_default(),
        Ok(other) => {
            warnings.push(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: "arguments are JSON but not an object; kept as {\"value\": …}".into(),
            });
            ToolArguments::wrap_raw(&other)
        }
        Err(e) => {
            warnings.push(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: format!(
                    "arguments are not valid JSON ({e}); kept as the string {{\"value\": …}}"
                ),
            });
            ToolArguments::wrap(&Value::String(raw.to_owned()))
        }
    }
}

/// Tool-call arguments as they arrive: a JSON string (parsed as by
/// [`parse_arguments`]), an object, or nothing. Anything else is kept as
/// `{"value": …}` and reported.
pub(crate) fn arguments_value(
    value: Option<RawJson>,
    path: String,
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> ToolArguments {
    let Some(json) = value else {
        return ToolArguments::new();
    };
    match json.get().as_bytes().first() {
        Some(b'"') => match serde_json::from_str::<String>(json.get()) {
            Ok(text) => parse_arguments(&text, &path, event, warnings),
            // A string no Rust string holds (a lone surrogate): kept as it is.
            Err(e) => {
                warnings.push(ResponseError::Invalid {
                    event,
                    path,
                    message: format!("arguments are a string that cannot be read ({e}); kept as {{\"value\": …}}"),
                });
                ToolArguments::wrap_raw(&json)
            }
        },
        Some(b'{') => ToolArguments::from_raw(json).unwrap_or_default(),
        Some(b'n') => ToolArguments::new(),
        _ => {
            warnings.push(ResponseError::Invalid {
                event,
                path,
                message: "arguments are neither a string nor an object; kept as {\"value\": …}"
                    .into(),
            });
            ToolArguments::wrap_raw(&json)
        }
    }
}
