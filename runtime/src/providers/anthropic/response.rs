//! The response decoder.

use super::{API, PROVIDER};
use crate::message::now_ms;
use crate::message::RawJson;
use crate::providers::catalog::priced;
use crate::providers::ResponseError;
use crate::Usage;
use crate::{AssistantContent, RedactedThinkingContent, TextContent, ThinkingContent, ToolCall};
use crate::{AssistantMessage, StopReason};
use crate::{ProviderBlock, ToolArguments};
use serde::Deserialize;
use serde_json::Value;

/// A response body or the `message` of a `message_start` event.
#[derive(Deserialize)]
pub(super) struct WireMessage {
    #[serde(default, rename = "type")]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) content: Option<Vec<RawJson>>,
    #[serde(default)]
    pub(super) stop_reason: Option<String>,
    #[serde(default)]
    pub(super) stop_details: Option<StopDetails>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<WireError>,
}

#[derive(Debug, Deserialize, Default, Clone)]
pub(super) struct StopDetails {
    #[serde(default)]
    pub(super) explanation: Option<String>,
    #[serde(default)]
    pub(super) category: Option<String>,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(super) input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) output_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_creation: Option<WireCacheCreation>,
}

/// The cache writes by how long the cache is kept.
#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct WireCacheCreation {
    #[serde(default)]
    pub(super) ephemeral_1h_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct WireError {
    #[serde(default, rename = "type")]
    pub(super) kind: Option<String>,
    #[serde(default)]
    pub(super) message: Option<String>,
}

impl WireError {
    pub(super) fn describe(&self) -> String {
        match (&self.kind, &self.message) {
            (Some(kind), Some(message)) => format!("{kind}: {message}"),
            (None, Some(message)) => message.clone(),
            (Some(kind), None) => kind.clone(),
            (None, None) => "unknown error".to_owned(),
        }
    }
}

/// The content blocks agentmsg models; every other type is kept as a
/// [`ProviderBlock`].
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
        #[serde(default)]
        citations: Option<RawJson>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Option<RawJson>,
    },
    #[serde(other)]
    Other,
}

/// Decodes a non-streaming Anthropic Messages response body. An error body
/// (`{"type":"error","error":{…}}`) becomes a message with stopReason `error`
/// and its `errorMessage`.
///
/// # Errors
/// [`ResponseError::Json`] when the body is not JSON of the right shape,
/// [`ResponseError::Invalid`] when a known block is malformed.
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    <super::Anthropic as crate::providers::Codec>::decode_response(body)
}

/// [`decode_response`], also returning what was skipped or kept in a changed
/// form, as [`ResponseError::Invalid`] values naming the block. Every block is
/// kept: those agentmsg does not model (server-side tool blocks…) as
/// [`ProviderBlock`]s. What is said: a `tool_use`'s `caller` other than
/// `direct` (a call made by code the server ran), which a tool call has no
/// place for.
///
/// # Errors
/// As [`decode_response`].
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let mut warnings = Vec::new();
    let wire: WireMessage = ResponseError::parse(body, None)?;
    let mut message = base_message();
    if wire.kind.as_deref() == Some("error") || wire.error.is_some() {
        message.stop_reason = StopReason::Error;
        message.error_message = Some(
            wire.error
                .as_ref()
                .map_or_else(|| "unknown error".to_owned(), WireError::describe),
        );
        return Ok((message, warnings));
    }
    message.response_id = wire.id;
    if let Some(model) = wire.model {
        message.model = model;
    }
    let Some(content) = wire.content else {
        return Err(ResponseError::Invalid {
            event: None,
            path: "content".to_owned(),
            message: "neither a message (no `content`) nor an error body".to_owned(),
        });
    };
    for (i, block) in content.into_iter().enumerate() {
        let path = format!("content[{i}]");
        warnings.extend(caller_not_kept(&block, None, &path));
        let content = decode_block(block, None, &path)?;
        message.content.push(content);
    }
    if let Some(usage) = wire.usage {
        message.usage = usage_from(&usage);
    }
    apply_stop(
        &mut message,
        wire.stop_reason.as_deref(),
        wire.stop_details.as_ref(),
    );
    Ok((priced(message), warnings))
}

/// Maps a `stop_reason` to a [`StopReason`]: `end_turn` and `stop_sequence`
/// stop, `max_tokens` and `model_context_window_exceeded` are `length`,
/// `tool_use`, `refusal` (`guardRail`) and `pause_turn` (`paused`); any other
/// is `error`.
pub fn stop_reason(stop_reason: &str) -> StopReason {
    match stop_reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        "refusal" => StopReason::GuardRail,
        "pause_turn" => StopReason::Paused,
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

/// The types of block agentmsg reads into its own blocks.
const MODELLED: [&str; 4] = ["text", "thinking", "redacted_thinking", "tool_use"];

/// One content block (at `path`, of stream event `event`): a block agentmsg
/// models as that block, any other (server-side tool blocks, `compaction`,
/// `fallback`…) as a [`ProviderBlock`], never a client tool call.
pub(crate) fn decode_block(
    block: RawJson,
    event: Option<usize>,
    path: &str,
) -> Result<AssistantContent, ResponseError> {
    let kind = block.type_name();
    if !kind.is_some_and(|kind| MODELLED.contains(&kind.as_str())) {
        if !block.is_object() {
            return Err(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: format!("a content block must be a JSON object, found {block}"),
            });
        }
        return Ok(provider_block(block));
    }
    let wire: WireBlock =
        serde_json::from_str(block.get()).map_err(|e| ResponseError::Invalid {
            event,
            path: path.to_owned(),
            message: e.to_string(),
        })?;
    block_content(wire, event, &format!("{path}.input"))
}

/// The warning for a `tool_use` block (at `path`, of stream event `event`)
/// whose `caller` is not `direct`: a call made by code the server ran
/// (programmatic tool calling). The call is kept as a client call; its caller
/// is not, as a tool call has no place for it.
pub(super) fn caller_not_kept(
    block: &RawJson,
    event: Option<usize>,
    path: &str,
) -> Option<ResponseError> {
    #[derive(Deserialize)]
    struct Called {
        #[serde(rename = "type")]
        kind: Option<String>,
        caller: Option<Value>,
    }
    // Most blocks are no call: told from the text without reading it.
    if !block.get().contains("\"tool_use\"") {
        return None;
    }
    let called: Called = serde_json::from_str(block.get()).ok()?;
    if called.kind.as_deref() != Some("tool_use") {
        return None;
    }
    let caller = called.caller.filter(|c| !c.is_null())?;
    if caller.get("type").and_then(Value::as_str) == Some("direct") {
        return None;
    }
    Some(ResponseError::Invalid {
        event,
        path: format!("{path}.caller"),
        message: format!(
            "the call's caller {caller} is not kept: a tool call has no place for it, and a replay sends it as a direct call"
        ),
    })
}

/// A block agentmsg does not model, kept as it is.
pub(super) fn provider_block(block: RawJson) -> AssistantContent {
    AssistantContent::ProviderBlock(ProviderBlock::new(API, block))
}

/// A text's `citations`, kept when there are any.
pub(super) fn citations(citations: Option<RawJson>) -> Option<RawJson> {
    citations.filter(|c| c.get().starts_with('[') && c.get() != "[]")
}

pub(super) fn block_content(
    block: WireBlock,
    event: Option<usize>,
    path: &str,
) -> Result<AssistantContent, ResponseError> {
    Ok(match block {
        WireBlock::Text { text, citations: c } => AssistantContent::Text(TextContent {
            citations: citations(c),
            ..TextContent::new(text)
        }),
        WireBlock::Thinking {
            thinking,
            signature,
        } => AssistantContent::Thinking(ThinkingContent {
            thinking,
            signature: signature.filter(|s| !s.is_empty()),
        }),
        WireBlock::RedactedThinking { data } => {
            AssistantContent::RedactedThinking(RedactedThinkingContent::new(data))
        }
        WireBlock::ToolUse { id, name, input } => {
            let input = match input {
                None => ToolArguments::new(),
                Some(null) if null.get() == "null" => ToolArguments::new(),
                Some(input) if input.is_object() => {
                    ToolArguments::from_raw(input).unwrap_or_default()
                }
                Some(other) => {
                    return Err(ResponseError::Invalid {
                        event,
                        path: path.to_owned(),
                        message: format!("tool input must be a JSON object, found {other}"),
                    })
                }
            };
            AssistantContent::ToolCall(ToolCall::new(id, name, input))
        }
        WireBlock::Other => {
            return Err(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: "a block of an unknown type".to_owned(),
            })
        }
    })
}

pub(crate) fn usage_from(usage: &WireUsage) -> Usage {
    let mut out = Usage::default();
    apply_usage(&mut out, usage);
    out
}

pub(super) fn apply_usage(out: &mut Usage, usage: &WireUsage) {
    if let Some(v) = usage.input_tokens {
        out.input = v;
    }
    if let Some(v) = usage.output_tokens {
        out.output = v;
    }
    if let Some(v) = usage.cache_read_input_tokens {
        out.cache_read = v;
    }
    if let Some(v) = usage.cache_creation_input_tokens {
        out.cache_write = v;
    }
    if let Some(v) = usage
        .cache_creation
        .and_then(|c| c.ephemeral_1h_input_tokens)
    {
        out.cache_write_1h = v;
    }
    out.total_tokens = Some(
        out.input
            .saturating_add(out.output)
            .saturating_add(out.cache_read)
            .saturating_add(out.cache_write),
    );
}

pub(super) fn apply_stop(
    message: &mut AssistantMessage,
    reason: Option<&str>,
    details: Option<&StopDetails>,
) {
    message.stop_reason = match reason.map(stop_reason) {
        None => StopReason::Stop,
        Some(StopReason::Error) => {
            let other = reason.unwrap_or_default();
            message.error_message = Some(format!("unknown stop_reason `{other}`"));
            StopReason::Error
        }
        // Server-side tool blocks are no client calls: a turn without one
        // did not stop for the client's tools.
        Some(StopReason::ToolUse) if message.tool_calls().next().is_none() => StopReason::Stop,
        Some(known) => known,
    };
    if message.stop_reason == StopReason::GuardRail {
        if let Some(details) = details {
            message.error_message = details
                .explanation
                .clone()
                .or_else(|| details.category.as_ref().map(|c| format!("refusal: {c}")));
        }
    }
}
