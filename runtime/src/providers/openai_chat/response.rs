//! The response decoder.

use super::{API, PROVIDER};
use crate::message::RawJson;
use crate::providers::catalog::priced;
use crate::providers::shared::arguments::arguments_value;
use crate::providers::shared::openai_error::null_as_empty;
pub(super) use crate::providers::shared::openai_error::WireError;
use crate::providers::ResponseError;
use crate::ProviderBlock;
use crate::Usage;
use crate::{AssistantContent, TextContent, ThinkingContent, ToolCall};
use crate::{AssistantMessage, StopReason};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize, Default)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
    #[serde(default)]
    pub(super) total_tokens: Option<u64>,
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub(super) completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize, Default)]
pub(super) struct PromptDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
pub(super) struct CompletionDetails {
    #[serde(default)]
    pub(super) reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn to_usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        Usage {
            input: prompt.saturating_sub(cached),
            output: self.completion_tokens.unwrap_or(0),
            reasoning: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cache_read: cached,
            cache_write: 0,
            cache_write_1h: 0,
            total_tokens: self.total_tokens,
            cost: None,
        }
    }
}

#[derive(Deserialize)]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) created: Option<u64>,
    #[serde(default)]
    pub(super) choices: Vec<WireChoice>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<WireError>,
    /// The sources of a search (xAI, Perplexity): URLs, and Perplexity's
    /// `search_results`.
    #[serde(default)]
    pub(super) citations: Option<Value>,
    #[serde(default)]
    pub(super) search_results: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct WireChoice {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(default)]
    pub(super) message: Option<WireMessage>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct WireMessage {
    #[serde(default)]
    pub(super) content: Option<Value>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
    #[serde(default)]
    pub(super) reasoning_content: Option<String>,
    #[serde(default)]
    pub(super) reasoning: Option<String>,
    #[serde(default)]
    pub(super) reasoning_text: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    pub(super) tool_calls: Vec<WireToolCall>,
    /// URL citations of the text (OpenAI's search models).
    #[serde(default)]
    pub(super) annotations: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct WireToolCall {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) function: Option<WireFunction>,
    #[serde(default)]
    pub(super) custom: Option<WireCustom>,
}

/// A call of a custom (free-form input) tool.
#[derive(Deserialize)]
pub(super) struct WireCustom {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) input: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireFunction {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<crate::message::RawJson>,
}

/// Maps a `finish_reason` to a [`StopReason`].
pub fn stop_reason(finish_reason: &str) -> StopReason {
    match finish_reason {
        "length" => StopReason::Length,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::GuardRail,
        "error" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

pub(super) fn wrap_input(input: String) -> crate::ToolArguments {
    let mut map = Map::new();
    map.insert("input".into(), Value::String(input));
    map.into()
}

pub(super) fn base_message(
    id: Option<String>,
    model: Option<String>,
    created: Option<u64>,
) -> AssistantMessage {
    AssistantMessage {
        api: API.into(),
        provider: PROVIDER.into(),
        model: model.unwrap_or_default(),
        response_id: id.filter(|s| !s.is_empty()),
        timestamp: created.map_or(0, |c| c.saturating_mul(1000)),
        ..AssistantMessage::default()
    }
}

pub(super) fn error_message(error: &WireError) -> AssistantMessage {
    AssistantMessage {
        api: API.into(),
        provider: PROVIDER.into(),
        stop_reason: StopReason::Error,
        error_message: Some(error.describe()),
        ..AssistantMessage::default()
    }
}

/// Decodes a non-streaming Chat Completions response body (or an error body
/// `{"error":{…}}`, which becomes a message with stopReason `error`).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::providers::openai_chat;
/// let body = r#"{"id":"chatcmpl-1","model":"gpt-4.1","created":1,"choices":[{"index":0,
///   "message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],
///   "usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}"#;
/// let message = openai_chat::decode_response(body).unwrap();
/// assert_eq!(message.text_content(), "Hi");
/// assert_eq!(message.usage.input, 9);
/// ```
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    <super::OpenaiChat as crate::providers::Codec>::decode_response(body)
}

/// [`decode_response`], also returning what was kept in a changed form (such as
/// tool-call arguments that were not a JSON object), as
/// [`ResponseError::Invalid`] values.
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let wire: WireResponse = ResponseError::parse(body, None)?;
    let mut warnings = Vec::new();
    if let Some(error) = &wire.error {
        return Ok((error_message(error), warnings));
    }
    let mut message = base_message(wire.id, wire.model, wire.created);
    if let Some(usage) = &wire.usage {
        message.usage = usage.to_usage();
    }
    let choice = wire
        .choices
        .into_iter()
        .min_by_key(|c| c.index.unwrap_or(0))
        .ok_or_else(|| ResponseError::Invalid {
            event: None,
            path: "choices".into(),
            message: "no choice in the response".into(),
        })?;
    let wire_message = choice.message.unwrap_or_default();
    if let Some((reasoning, field)) = reasoning_field([
        wire_message.reasoning_content,
        wire_message.reasoning,
        wire_message.reasoning_text,
    ]) {
        message
            .content
            .push(AssistantContent::Thinking(ThinkingContent {
                signature: Some(field.to_owned()),
                ..ThinkingContent::new(reasoning)
            }));
    }
    let mut refused = text_content(wire_message.content, &mut message.content, &mut warnings);
    if let Some(refusal) = wire_message.refusal.filter(|r| !r.is_empty()) {
        refused = true;
        message
            .content
            .push(AssistantContent::Text(TextContent::new(refusal)));
    }
    for (i, call) in wire_message.tool_calls.into_iter().enumerate() {
        message.content.push(tool_call(i, call, &mut warnings));
    }
    keep_sources(
        &mut message.content,
        wire_message.annotations,
        [
            ("citations", wire.citations),
            ("search_results", wire.search_results),
        ],
    );
    message.stop_reason = match choice.finish_reason.as_deref() {
        Some(reason) => stop_reason(reason),
        None if message.tool_calls().next().is_some() => StopReason::ToolUse,
        None => StopReason::Stop,
    };
    if refused && message.stop_reason == StopReason::Stop {
        message.stop_reason = StopReason::GuardRail;
    }
    Ok((priced(message), warnings))
}

/// Keeps what a search answer cites: the message's `annotations` (URL
/// citations) as the citations of its first text (as a provider block
/// `{"annotations": …}` when it has no text), and the response's own sources
/// (`citations`, `search_results`: xAI, Perplexity) as one provider block
/// `{"citations": …, "search_results": …}` at the end. Empty lists are none.
pub(super) fn keep_sources(
    content: &mut Vec<AssistantContent>,
    annotations: Option<Value>,
    sources: [(&str, Option<Value>); 2],
) {
    let listed = |v: &Option<Value>| {
        v.as_ref()
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    if listed(&annotations) {
        let annotations = annotations.unwrap_or_default();
        let text = content.iter_mut().find_map(|b| match b {
            AssistantContent::Text(t) => Some(t),
            _ => None,
        });
        match text {
            Some(text) => text.citations = Some(RawJson::from_value(&annotations)),
            None => {
                let mut block = Map::new();
                block.insert("annotations".into(), annotations);
                content.push(provider_block(block));
            }
        }
    }
    let mut block = Map::new();
    for (key, value) in sources {
        if let Some(value) =
            value.filter(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
        {
            block.insert(key.to_owned(), value);
        }
    }
    if !block.is_empty() {
        content.push(provider_block(block));
    }
}

fn provider_block(block: Map<String, Value>) -> AssistantContent {
    AssistantContent::ProviderBlock(ProviderBlock::new(
        API,
        RawJson::from_value(&Value::Object(block)),
    ))
}

/// The message's `content`: a string, or an array of `text` and `refusal`
/// parts (others are reported). Whether a refusal was among them.
fn text_content(
    content: Option<Value>,
    out: &mut Vec<AssistantContent>,
    warnings: &mut Vec<ResponseError>,
) -> bool {
    let mut refused = false;
    match content {
        Some(Value::String(text)) if !text.is_empty() => {
            out.push(AssistantContent::Text(TextContent::new(text)));
        }
        Some(Value::Array(parts)) => {
            for (i, part) in parts.iter().enumerate() {
                match (
                    part.get("type").and_then(Value::as_str),
                    part.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(text)) => {
                        out.push(AssistantContent::Text(TextContent::new(text)));
                    }
                    (Some("refusal"), _) => {
                        if let Some(text) = part.get("refusal").and_then(Value::as_str) {
                            refused = true;
                            out.push(AssistantContent::Text(TextContent::new(text)));
                        }
                    }
                    _ => warnings.push(ResponseError::Invalid {
                        event: None,
                        path: format!("choices[0].message.content[{i}]"),
                        message: "content part of an unknown type skipped".into(),
                    }),
                }
            }
        }
        _ => {}
    }
    refused
}

/// Tool call `i` of the message: a function call, or a custom tool call kept
/// with arguments `{"input": …}` (reported).
fn tool_call(i: usize, call: WireToolCall, warnings: &mut Vec<ResponseError>) -> AssistantContent {
    if let Some(custom) = call.custom {
        warnings.push(ResponseError::Invalid {
            event: None,
            path: format!("choices[0].message.tool_calls[{i}]"),
            message: "custom tool call kept as a tool call with arguments {\"input\": …}".into(),
        });
        return AssistantContent::ToolCall(ToolCall {
            id: call.id.unwrap_or_default(),
            name: custom.name.unwrap_or_default(),
            arguments: wrap_input(custom.input.unwrap_or_default()),
            signature: None,
        });
    }
    let function = call.function.unwrap_or(WireFunction {
        name: None,
        arguments: None,
    });
    let arguments = arguments_value(
        function.arguments,
        format!("choices[0].message.tool_calls[{i}].function.arguments"),
        None,
        warnings,
    );
    AssistantContent::ToolCall(ToolCall {
        id: call.id.unwrap_or_default(),
        name: function.name.unwrap_or_default(),
        arguments,
        signature: None,
    })
}

/// The fields OpenAI-compatible servers put reasoning in, in the order they
/// are read (DeepSeek and llama.cpp `reasoning_content`, vLLM and OpenRouter
/// `reasoning`, some `reasoning_text`), as pi reads them. A thinking block
/// keeps its field as its signature, so the encoder sends the reasoning
/// back in the same field to the model that wrote it.
pub(crate) const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

/// The first non-empty reasoning of `values` (in [`REASONING_FIELDS`]'
/// order) and its field.
pub(super) fn reasoning_field(values: [Option<String>; 3]) -> Option<(String, &'static str)> {
    values
        .into_iter()
        .zip(REASONING_FIELDS)
        .find_map(|(value, field)| Some((value.filter(|v| !v.is_empty())?, field)))
}
