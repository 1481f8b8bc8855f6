//! The stream decoder.

use super::response::{
    apply_stop, apply_usage, base_message, block_content, StopDetails, WireBlock, WireError,
    WireMessage, WireUsage,
};
use crate::providers::shared::latch::Latch;
use crate::providers::{ResponseError, StreamDecode};
use crate::Usage;
use crate::{AssistantContent, RedactedThinkingContent, TextContent, ThinkingContent, ToolCall};
use crate::{AssistantMessage, StopReason};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One stream event, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum WireEvent {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: WireDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: WireError,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
pub(super) struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    stop_details: Option<StopDetails>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum WireDelta {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    SignatureDelta {
        signature: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

/// A block being streamed.
#[derive(Debug)]
pub(super) enum Open {
    Text(String),
    Thinking(String, String),
    Redacted(String),
    Tool {
        id: String,
        name: String,
        start_input: Value,
        json: String,
    },
    /// A block type agentmsg does not model (server tools…): its deltas are skipped.
    Skipped,
}

#[derive(Debug)]
pub(super) enum Slot {
    Open(Open),
    Closed,
}

/// Folds Anthropic stream events (the JSON of each SSE `data:` line) into an
/// [`AssistantMessage`].
///
/// ```json
/// {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"loc"}}
/// ```
///
/// A second `message_start`, a delta for a block that was never started, an
/// event after `message_stop`, or tool input that is not JSON is an error that
/// names the event index; a stream without `message_stop` fails in
/// [`finish`](StreamDecode::finish) as [`ResponseError::Truncated`]; an `error`
/// event ends the message with stopReason `error`.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    latch: Latch,
    /// Blocks of a type agentmsg does not model, reported by
    /// [`StreamDecoder::finish_with_warnings`].
    skipped: Vec<ResponseError>,
    message: Option<AssistantMessage>,
    slots: BTreeMap<usize, Slot>,
    /// The finished blocks, by stream index (kept in that order).
    done: BTreeMap<usize, AssistantContent>,
    usage: Usage,
    stop_reason: Option<String>,
    stop_details: Option<StopDetails>,
    stopped: bool,
    error: Option<String>,
}

impl StreamDecoder {
    /// A decoder waiting for `message_start`.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`finish`](StreamDecode::finish), also returning what was skipped
    /// (blocks of a type agentmsg does not model) as [`ResponseError::Invalid`]
    /// values naming their event.
    ///
    /// # Errors
    /// As [`finish`](StreamDecode::finish).
    pub fn finish_with_warnings(
        self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        self.latch.check()?;
        if let Some(error) = self.error {
            let mut message = self.message.unwrap_or_else(base_message);
            message.content.extend(self.done.into_values());
            message.usage = self.usage;
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return Ok((message, self.skipped));
        }
        let Some(mut message) = self.message else {
            return Err(ResponseError::Truncated {
                events: self.latch.events(),
                message: "no message_start".to_owned(),
            });
        };
        if !self.stopped {
            let open = self
                .slots
                .iter()
                .filter(|(_, s)| matches!(s, Slot::Open(_)))
                .map(|(i, _)| i.to_string())
                .collect::<Vec<_>>();
            return Err(ResponseError::Truncated {
                events: self.latch.events(),
                message: if open.is_empty() {
                    "no message_stop".to_owned()
                } else {
                    format!(
                        "no message_stop; content blocks {} still open",
                        open.join(", ")
                    )
                },
            });
        }
        if let Some((block, _)) = self.slots.iter().find(|(_, s)| matches!(s, Slot::Open(_))) {
            return Err(ResponseError::Truncated {
                events: self.latch.events(),
                message: format!("content block {block} was never stopped"),
            });
        }
        message.content.extend(self.done.into_values());
        message.usage = self.usage;
        apply_stop(
            &mut message,
            self.stop_reason.as_deref(),
            self.stop_details.as_ref(),
        );
        Ok((message, self.skipped))
    }

    fn fail(&mut self, event: usize, path: &str, message: impl Into<String>) -> ResponseError {
        let message = message.into();
        self.latch.fail(event, format!("{path}: {message}"));
        ResponseError::Invalid {
            event: Some(event),
            path: path.to_owned(),
            message,
        }
    }

    fn handle(&mut self, index: usize, event: WireEvent) -> Result<(), ResponseError> {
        if self.stopped && !matches!(event, WireEvent::Ping | WireEvent::Other) {
            return Err(self.fail(index, "type", "event after message_stop"));
        }
        match event {
            WireEvent::MessageStart { message: wire } => {
                if self.message.is_some() {
                    return Err(self.fail(
                        index,
                        "type",
                        "a second message_start: the stream holds more than one message",
                    ));
                }
                let mut message = base_message();
                message.response_id = wire.id;
                if let Some(model) = wire.model {
                    message.model = model;
                }
                if let Some(usage) = &wire.usage {
                    apply_usage(&mut self.usage, usage);
                }
                // A message_start may already carry whole blocks.
                for (i, block) in wire.content.unwrap_or_default().into_iter().enumerate() {
                    let path = format!("message.content[{i}]");
                    let block: WireBlock = match serde_json::from_value(block) {
                        Ok(block) => block,
                        Err(e) => return Err(self.fail(index, &path, e.to_string())),
                    };
                    match block_content(block, Some(index), &path) {
                        Ok(Some(content)) => message.content.push(content),
                        Ok(None) => {}
                        Err(e) => {
                            self.latch.fail(index, e.to_string());
                            return Err(e);
                        }
                    }
                }
                self.message = Some(message);
            }
            WireEvent::ContentBlockStart {
                index: block,
                content_block,
            } => {
                self.require_started(index)?;
                if self.slots.contains_key(&block) {
                    return Err(self.fail(
                        index,
                        "index",
                        format!("content block {block} started twice"),
                    ));
                }
                let kind = content_block.get("type").and_then(Value::as_str);
                let field = |name: &str| {
                    content_block
                        .get(name)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                if kind == Some("fallback") {
                    // The server switched models: what follows comes from `to`.
                    let to = content_block.pointer("/to/model").and_then(Value::as_str);
                    if let (Some(to), Some(message)) = (to, self.message.as_mut()) {
                        message.model = to.to_owned();
                    }
                }
                let open = match kind {
                    Some("text") => Open::Text(field("text")),
                    Some("thinking") => Open::Thinking(field("thinking"), field("signature")),
                    Some("redacted_thinking") => Open::Redacted(field("data")),
                    Some("tool_use") => {
                        let (id, name) = (field("id"), field("name"));
                        if id.is_empty() || name.is_empty() {
                            return Err(self.fail(
                                index,
                                "content_block",
                                "tool_use block without id or name",
                            ));
                        }
                        Open::Tool {
                            id,
                            name,
                            start_input: content_block.get("input").cloned().unwrap_or(Value::Null),
                            json: String::new(),
                        }
                    }
                    other => {
                        self.skipped.push(ResponseError::skipped(
                            Some(index),
                            format!("content_block[{block}]"),
                            other.unwrap_or_default(),
                        ));
                        Open::Skipped
                    }
                };
                self.slots.insert(block, Slot::Open(open));
            }
            WireEvent::ContentBlockDelta {
                index: block,
                delta,
            } => {
                self.require_started(index)?;
                let Some(Slot::Open(open)) = self.slots.get_mut(&block) else {
                    return Err(self.fail(
                        index,
                        "index",
                        format!("delta for content block {block}, which is not open"),
                    ));
                };
                let mismatch = match (open, delta) {
                    (Open::Skipped, _) | (_, WireDelta::Other) => false,
                    (Open::Text(text), WireDelta::TextDelta { text: d }) => {
                        text.push_str(&d);
                        false
                    }
                    (Open::Thinking(text, _), WireDelta::ThinkingDelta { thinking }) => {
                        text.push_str(&thinking);
                        false
                    }
                    (Open::Thinking(_, sig), WireDelta::SignatureDelta { signature }) => {
                        sig.push_str(&signature);
                        false
                    }
                    (Open::Tool { json, .. }, WireDelta::InputJsonDelta { partial_json }) => {
                        json.push_str(&partial_json);
                        false
                    }
                    _ => true,
                };
                if mismatch {
                    return Err(self.fail(
                        index,
                        "delta.type",
                        format!("delta does not fit content block {block}"),
                    ));
                }
            }
            WireEvent::ContentBlockStop { index: block } => {
                self.require_started(index)?;
                let Some(Slot::Open(open)) = self.slots.insert(block, Slot::Closed) else {
                    return Err(self.fail(
                        index,
                        "index",
                        format!("stop for content block {block}, which is not open"),
                    ));
                };
                if let Some(content) = self.close(index, open)? {
                    self.done.insert(block, content);
                }
            }
            WireEvent::MessageDelta { delta, usage } => {
                self.require_started(index)?;
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if delta.stop_details.is_some() {
                    self.stop_details = delta.stop_details;
                }
                if let Some(usage) = &usage {
                    apply_usage(&mut self.usage, usage);
                }
            }
            WireEvent::MessageStop => {
                self.require_started(index)?;
                self.stopped = true;
            }
            WireEvent::Error { error } => {
                self.error = Some(error.describe());
                self.stopped = true;
            }
            WireEvent::Ping | WireEvent::Other => {}
        }
        Ok(())
    }

    fn require_started(&mut self, index: usize) -> Result<(), ResponseError> {
        if self.message.is_none() {
            return Err(self.fail(index, "type", "event before message_start"));
        }
        Ok(())
    }

    fn close(
        &mut self,
        index: usize,
        open: Open,
    ) -> Result<Option<AssistantContent>, ResponseError> {
        Ok(match open {
            Open::Text(text) => Some(AssistantContent::Text(TextContent::new(text))),
            Open::Thinking(thinking, signature) => {
                Some(AssistantContent::Thinking(ThinkingContent {
                    thinking,
                    signature: Some(signature).filter(|s| !s.is_empty()),
                }))
            }
            Open::Redacted(data) => Some(AssistantContent::RedactedThinking(
                RedactedThinkingContent::new(data),
            )),
            Open::Tool {
                id,
                name,
                start_input,
                json,
            } => {
                let input = if json.trim().is_empty() {
                    start_input
                } else {
                    match serde_json::from_str::<Value>(&json) {
                        Ok(value @ Value::Object(_)) => value,
                        Ok(other) => {
                            return Err(self.fail(
                                index,
                                "input_json_delta",
                                format!("tool input of `{name}` is not a JSON object: {other}"),
                            ))
                        }
                        Err(e) => {
                            return Err(self.fail(
                                index,
                                "input_json_delta",
                                format!("tool input of `{name}` is not valid JSON: {e}"),
                            ))
                        }
                    }
                };
                Some(AssistantContent::ToolCall(ToolCall::new(id, name, input)))
            }
            Open::Skipped => None,
        })
    }
}

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<(), ResponseError> {
        let (index, parsed) = self.latch.next::<WireEvent>(event)?;
        self.handle(index, parsed)
    }

    fn finish(self) -> Result<AssistantMessage, ResponseError> {
        self.finish_with_warnings().map(|(message, _)| message)
    }
}
