//! The response decoder.

use serde::Deserialize;
use serde_json::Value;

use super::{API, PROVIDER};
use crate::message::{now_ms, RawJson};
use crate::providers::catalog::priced;
use crate::providers::ResponseError;
use crate::{AssistantContent, AssistantMessage, ProviderBlock, StopReason, Usage};
use crate::{RedactedThinkingContent, TextContent, ThinkingContent, ToolArguments, ToolCall};

/// A Converse response body (or an error body, which has a `message`).
#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    output: Option<WireOutput>,
    #[serde(default, rename = "stopReason")]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// An error body's text (`{"message": "…"}`; `Message` in some).
    #[serde(default, alias = "Message")]
    message: Option<String>,
    /// An error body's type, when the gateway names it (`__type`).
    #[serde(default, rename = "__type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct WireOutput {
    #[serde(default)]
    message: Option<WireMessage>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Vec<RawJson>,
}

/// Token usage, in the response body and in a stream's `metadata` event. The
/// cache fields come in two spellings (`…Tokens` and `…TokenCount`).
#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_token_count: Option<u64>,
    #[serde(default)]
    cache_write_input_tokens: Option<u64>,
    #[serde(default)]
    cache_write_input_token_count: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

impl WireUsage {
    pub(super) fn usage(&self) -> Usage {
        let mut out = Usage {
            input: self.input_tokens.unwrap_or_default(),
            output: self.output_tokens.unwrap_or_default(),
            cache_read: (self.cache_read_input_tokens)
                .or(self.cache_read_input_token_count)
                .unwrap_or_default(),
            cache_write: (self.cache_write_input_tokens)
                .or(self.cache_write_input_token_count)
                .unwrap_or_default(),
            ..Usage::default()
        };
        out.total_tokens = Some(self.total_tokens.unwrap_or_else(|| {
            out.input
                .saturating_add(out.output)
                .saturating_add(out.cache_read)
                .saturating_add(out.cache_write)
        }));
        out
    }
}

/// The content blocks agentmsg models, by their single key.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireBlock {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_use: Option<WireToolUse>,
    #[serde(default)]
    reasoning_content: Option<WireReasoning>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireToolUse {
    tool_use_id: String,
    name: String,
    #[serde(default)]
    input: Option<RawJson>,
    /// `server_tool_use`: a call the server runs, never a client call.
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireReasoning {
    #[serde(default)]
    reasoning_text: Option<WireReasoningText>,
    #[serde(default)]
    redacted_content: Option<String>,
}

#[derive(Deserialize)]
struct WireReasoningText {
    #[serde(default)]
    text: String,
    #[serde(default)]
    signature: Option<String>,
}

/// Decodes a Converse response body. An error body (`{"message": "…"}`, with
/// no `output`) becomes a message with stopReason `error` and its
/// `errorMessage`.
///
/// # Errors
/// [`ResponseError::Json`] when the body is not JSON of the right shape,
/// [`ResponseError::Invalid`] when a known block is malformed.
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    <super::Bedrock as crate::providers::Codec>::decode_response(body)
}

/// [`decode_response`], also returning what was kept in a changed form.
/// Every block is kept: those agentmsg does not model (`citationsContent`,
/// `image`, a server tool's blocks…) as [`ProviderBlock`]s of this API.
///
/// # Errors
/// As [`decode_response`].
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let wire: WireResponse = ResponseError::parse(body, None)?;
    let mut message = base_message();
    let Some(output) = wire.output else {
        let Some(text) = wire.message else {
            return Err(ResponseError::Invalid {
                event: None,
                path: "output".to_owned(),
                message: "neither a response (no `output`) nor an error body (no `message`)"
                    .to_owned(),
            });
        };
        message.stop_reason = StopReason::Error;
        message.error_message = Some(match wire.kind {
            Some(kind) => format!("{}: {text}", kind.rsplit('#').next().unwrap_or(&kind)),
            None => text,
        });
        return Ok((message, Vec::new()));
    };
    let content = output.message.map(|m| m.content).unwrap_or_default();
    for (i, block) in content.into_iter().enumerate() {
        message.content.push(decode_block(
            block,
            None,
            &format!("output.message.content[{i}]"),
        )?);
    }
    if let Some(usage) = wire.usage {
        message.usage = usage.usage();
    }
    apply_stop(&mut message, wire.stop_reason.as_deref());
    Ok((priced(message), Vec::new()))
}

/// Maps a Converse `stopReason` to a [`StopReason`]: `end_turn` and
/// `stop_sequence` stop, `max_tokens` and `model_context_window_exceeded` are
/// `length`, `tool_use`, `guardrail_intervened` and `content_filtered` are
/// `guardRail`; any other (`malformed_model_output`, `malformed_tool_use`…) is
/// `error`.
pub fn stop_reason(raw: &str) -> StopReason {
    match raw {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        "guardrail_intervened" | "content_filtered" => StopReason::GuardRail,
        _ => StopReason::Error,
    }
}

pub(super) fn base_message() -> AssistantMessage {
    AssistantMessage {
        api: API.to_owned(),
        provider: PROVIDER.to_owned(),
        timestamp: now_ms(),
        ..AssistantMessage::default()
    }
}

/// Sets the message's stop reason from `reason`: an unknown one is an error
/// naming it, and a `tool_use` stop with no client call (only server tools)
/// is a stop.
pub(super) fn apply_stop(message: &mut AssistantMessage, reason: Option<&str>) {
    message.stop_reason = match reason.map(stop_reason) {
        None => StopReason::Stop,
        Some(StopReason::Error) => {
            let other = reason.unwrap_or_default();
            message.error_message = Some(format!("stopReason `{other}`"));
            StopReason::Error
        }
        Some(StopReason::ToolUse) if message.tool_calls().next().is_none() => StopReason::Stop,
        Some(known) => known,
    };
}

/// One content block (at `path`, of stream event `event`).
pub(super) fn decode_block(
    block: RawJson,
    event: Option<usize>,
    path: &str,
) -> Result<AssistantContent, ResponseError> {
    if !block.is_object() {
        return Err(ResponseError::Invalid {
            event,
            path: path.to_owned(),
            message: format!("a content block must be a JSON object, found {block}"),
        });
    }
    let wire: WireBlock =
        serde_json::from_str(block.get()).map_err(|e| ResponseError::Invalid {
            event,
            path: path.to_owned(),
            message: e.to_string(),
        })?;
    if let Some(text) = wire.text {
        return Ok(AssistantContent::Text(TextContent::new(text)));
    }
    if let Some(reasoning) = wire.reasoning_content {
        if let Some(content) = reasoning_content(reasoning) {
            return Ok(content);
        }
    }
    if let Some(call) = wire.tool_use.filter(|c| c.kind.is_none()) {
        let input = match call.input {
            None => ToolArguments::new(),
            Some(null) if null.get() == "null" => ToolArguments::new(),
            Some(input) if input.is_object() => ToolArguments::from_raw(input).unwrap_or_default(),
            Some(other) => {
                return Err(ResponseError::Invalid {
                    event,
                    path: format!("{path}.toolUse.input"),
                    message: format!("tool input must be a JSON object, found {other}"),
                })
            }
        };
        return Ok(AssistantContent::ToolCall(ToolCall::new(
            call.tool_use_id,
            call.name,
            input,
        )));
    }
    Ok(AssistantContent::ProviderBlock(ProviderBlock::new(
        API, block,
    )))
}

/// A `reasoningContent` block: thinking with its signature, or redacted.
fn reasoning_content(reasoning: WireReasoning) -> Option<AssistantContent> {
    if let Some(data) = reasoning.redacted_content {
        return Some(AssistantContent::RedactedThinking(
            RedactedThinkingContent::new(data),
        ));
    }
    let text = reasoning.reasoning_text?;
    Some(AssistantContent::Thinking(ThinkingContent {
        thinking: text.text,
        signature: text.signature.filter(|s| !s.is_empty()),
    }))
}

/// The text of an exception event or body: `message`, with Bedrock's
/// `originalStatusCode` and `originalMessage` when they are there.
pub(super) fn exception_text(kind: &str, payload: &Value) -> String {
    let message = payload
        .get("message")
        .or_else(|| payload.get("Message"))
        .and_then(Value::as_str)
        .unwrap_or("no message");
    let mut text = format!("{kind}: {message}");
    if let Some(status) = payload.get("originalStatusCode").and_then(Value::as_u64) {
        text.push_str(&format!(" (the model's status {status}"));
        if let Some(original) = payload.get("originalMessage").and_then(Value::as_str) {
            text.push_str(&format!(": {original}"));
        }
        text.push(')');
    }
    text
}
