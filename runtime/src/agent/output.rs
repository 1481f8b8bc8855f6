//! Structured output: a reply asked for as a Rust type, and decoded into it.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::tool::{at, described, from_json_at};
use crate::providers::ResponseFormat;
use crate::{AssistantMessage, StopReason};

/// The [`ResponseFormat`] asking for JSON of type `T`: its schema generated
/// by `schemars`, made strict (every object closed with
/// `additionalProperties: false` and all its properties required, as
/// OpenAI's strict mode and Anthropic's structured outputs ask; an optional
/// field stays nullable), named after the type. Each encoder writes it as its
/// API's JSON-schema response format (OpenAI `response_format`, Responses
/// `text.format`, Anthropic `output_config.format`, Gemini
/// `responseJsonSchema`).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::agent::output;
/// use agentmsg::providers::{openai_chat, Request};
/// use agentmsg::Message;
///
/// /// A city and its country.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Place { city: String, country: Option<String> }
///
/// let request = Request::new("gpt-4.1", vec![Message::user("Where is the Louvre?")])
///     .with_response_format(output::response_format::<Place>());
/// let body = openai_chat::encode_request(&request)?.body;
/// let format = &body["response_format"]["json_schema"];
/// assert_eq!(format["name"], "Place");
/// assert_eq!(format["strict"], true);
/// assert_eq!(format["schema"]["required"], serde_json::json!(["city", "country"]));
/// assert_eq!(format["schema"]["additionalProperties"], false);
/// # Ok::<(), agentmsg::providers::EncodeError>(())
/// ```
pub fn response_format<T: JsonSchema + ?Sized>() -> ResponseFormat {
    let (mut schema, description) = described::<T>();
    let name: String = T::schema_name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    strict(&mut schema);
    let format = ResponseFormat::json_schema(
        if name.is_empty() {
            "output".into()
        } else {
            name
        },
        schema,
    );
    match description {
        Some(description) => format.with_description(description),
        None => format,
    }
}

/// Closes every object of `schema` and requires all its properties; drops
/// `format` from non-strings (`double`, `uint32`), which strict modes refuse.
fn strict(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            let is_string = match object.get("type") {
                Some(Value::String(t)) => t == "string",
                Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
                _ => false,
            };
            if !is_string {
                object.remove("format");
            }
            if let Some(Value::Object(properties)) = object.get("properties") {
                let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
                object.insert("required".into(), Value::Array(names));
                object.insert("additionalProperties".into(), Value::Bool(false));
            }
            for value in object.values_mut() {
                strict(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strict),
        _ => {}
    }
}

/// A reply that is not the JSON asked for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The reply has no text (it ended with `stop_reason`).
    #[error("the reply has no text to decode (it ended with {stop_reason:?})")]
    NoText {
        /// Why the reply ended.
        stop_reason: StopReason,
    },
    /// The text is not JSON.
    #[error("the reply is not JSON: {source}")]
    NotJson {
        /// The parser's error, with line and column.
        source: serde_json::Error,
        /// The reply's text.
        text: String,
    },
    /// The JSON does not fit the type.
    #[error("the reply does not fit `{type_name}`{}: {message}", at(.path))]
    DoesNotFit {
        /// The type asked for.
        type_name: String,
        /// The field path (`items[2].name`; empty for the whole value).
        path: String,
        /// What is wrong.
        message: String,
        /// The reply's text.
        text: String,
    },
}

/// Decodes the text of `reply` as `T`. A text wrapped in a Markdown code
/// fence (as models without a schema mode write it) is read inside the fence.
///
/// # Errors
/// [`OutputError`]: no text, not JSON, or JSON that does not fit `T`, with
/// the field path.
pub fn decode<T: DeserializeOwned>(reply: &AssistantMessage) -> Result<T, OutputError> {
    let text = reply.text_content();
    let body = unfenced(&text);
    if body.trim().is_empty() {
        return Err(OutputError::NoText {
            stop_reason: reply.stop_reason,
        });
    }
    if let Err(source) = serde_json::from_str::<serde::de::IgnoredAny>(body) {
        return Err(OutputError::NotJson {
            source,
            text: text.clone(),
        });
    }
    from_json_at(body).map_err(|(path, message)| OutputError::DoesNotFit {
        type_name: std::any::type_name::<T>().to_owned(),
        path,
        message,
        text: text.clone(),
    })
}

/// The inside of a Markdown code fence around all of `text`, or `text`.
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(rest) = rest.strip_suffix("```") else {
        return trimmed;
    };
    match rest.find('\n') {
        Some(newline) => &rest[newline + 1..],
        None => rest,
    }
}
