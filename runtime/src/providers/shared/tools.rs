//! Tool declarations: the schemas as the OpenAI APIs take them, and the names
//! and object schemas Anthropic Messages and Bedrock Converse check alike.

use serde_json::{json, Value};

#[cfg(any(feature = "anthropic", feature = "bedrock"))]
use crate::providers::{EncodeError, ToolSpec};

/// The `parameters` of a function tool: the schema, or an empty object schema
/// for none (`null` or `{}`).
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
pub(crate) fn tool_parameters(parameters: &Value) -> Value {
    match parameters {
        Value::Object(map) if !map.is_empty() => parameters.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// Each tool encoded by `encode` (given its index), in order; a name declared
/// twice is an error at `tools[i].name`.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn encode_tools(
    tools: &[ToolSpec],
    encode: impl Fn(usize, &ToolSpec) -> Result<Value, EncodeError>,
) -> Result<Vec<Value>, EncodeError> {
    let mut out = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        if tools.iter().take(i).any(|t| t.name == tool.name) {
            return Err(EncodeError::invalid(
                format!("tools[{i}].name"),
                format!("`{}` is declared twice", tool.name),
            ));
        }
        out.push(encode(i, tool)?);
    }
    Ok(out)
}

/// Checks the name of tool `i` against `^[a-zA-Z0-9_-]{1,max}$`, which `api`
/// requires.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn check_name(i: usize, name: &str, max: usize, api: &str) -> Result<(), EncodeError> {
    let valid = !name.is_empty()
        && name.len() <= max
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        return Ok(());
    }
    Err(EncodeError::invalid(
        format!("tools[{i}].name"),
        format!("`{name}` does not match ^[a-zA-Z0-9_-]{{1,{max}}}$, which {api} requires"),
    ))
}

/// The input schema of tool `i` as an object schema: an empty one for none
/// (`null` or `{}`), `"type": "object"` added when missing.
///
/// # Errors
/// [`EncodeError::Invalid`] for a schema of another type, which `api` does
/// not take, or one that is not a JSON object.
#[cfg(any(feature = "anthropic", feature = "bedrock"))]
pub(crate) fn object_schema(i: usize, parameters: &Value, api: &str) -> Result<Value, EncodeError> {
    match parameters {
        Value::Null => Ok(json!({"type": "object", "properties": {}})),
        Value::Object(map) if map.is_empty() => Ok(json!({"type": "object", "properties": {}})),
        Value::Object(map) => match map.get("type") {
            Some(Value::String(t)) if t == "object" => Ok(Value::Object(map.clone())),
            None => {
                let mut map = map.clone();
                map.insert("type".into(), "object".into());
                Ok(Value::Object(map))
            }
            Some(other) => Err(EncodeError::invalid(
                format!("tools[{i}].parameters.type"),
                format!("{api} takes only object schemas, found {other}"),
            )),
        },
        other => Err(EncodeError::invalid(
            format!("tools[{i}].parameters"),
            format!("the schema must be a JSON object, found {other}"),
        )),
    }
}
