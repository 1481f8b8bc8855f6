//! Tool schemas as the OpenAI APIs take them.

use serde_json::{json, Value};

/// The `parameters` of a function tool: the schema, or an empty object schema
/// for none (`null` or `{}`).
pub(crate) fn tool_parameters(parameters: &Value) -> Value {
    match parameters {
        Value::Object(map) if !map.is_empty() => parameters.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}
