//! The stream decoder.

use super::response::stop_reason;
use super::response::{
    apply_stop, apply_usage, base_message, citations, decode_block, provider_block, StopDetails,
    WireError, WireMessage, WireUsage,
};
use crate::message::RawJson;
use crate::providers::catalog::priced;
use crate::providers::events::{BlockView, Differ, Kind, Snapshot, StreamEvent};
use crate::providers::shared::latch::Latch;
use crate::providers::{ProviderError, ResponseError, StreamDecode};
use crate::ToolArguments;
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
        content_block: RawJson,
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
        #[serde(default)]
        request_id: Option<String>,
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
    CitationsDelta {
        citation: RawJson,
    },
    CompactionDelta {
        #[serde(default)]
        content: Option<String>,
        /// The opaque payload that must go back to the API with the block.
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    #[serde(other)]
    Other,
}

/// A block being streamed.
#[derive(Debug)]
pub(super) enum Open {
    /// A text and its citations so far.
    Text(String, Vec<RawJson>),
    Thinking(String, String),
    Redacted(String),
    Tool {
        id: String,
        name: String,
        start_input: Value,
        json: String,
    },
    /// A block type agentmsg does not model (server tools…), kept as a
    /// provider block: its start, with the JSON of its `input` and the text of
    /// its `content` (and a compaction's `encrypted_content`) as their deltas
    /// bring them.
    Provider {
        start: Value,
        /// `start` as written (its keys in their order).
        raw: RawJson,
        json: String,
        content: Option<String>,
        encrypted: Option<String>,
    },
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
    /// What was not kept (a tool call cut by the output limit, a call's
    /// caller), reported by [`StreamDecoder::finish_with_warnings`].
    skipped: Vec<ResponseError>,
    differ: Differ,
    message: Option<AssistantMessage>,
    slots: BTreeMap<usize, Slot>,
    /// The finished blocks, by stream index (kept in that order).
    done: BTreeMap<usize, AssistantContent>,
    usage: Usage,
    stop_reason: Option<String>,
    stop_details: Option<StopDetails>,
    stopped: bool,
    error: Option<String>,
    failure: Option<ProviderError>,
}

impl StreamDecoder {
    /// A decoder waiting for `message_start`.
    pub fn new() -> Self {
        Self::default()
    }

    fn handle(&mut self, index: usize, event: WireEvent) -> Result<(), ResponseError> {
        if self.stopped && !matches!(event, WireEvent::Ping | WireEvent::Other) {
            return Err(self
                .latch
                .invalid(index, "type", "event after message_stop"));
        }
        match event {
            WireEvent::MessageStart { message: wire } => {
                if self.message.is_some() {
                    return Err(self.latch.invalid(
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
                // A message_start may already carry whole blocks and its stop
                // reason (a call made by code the server ran comes so, with no
                // message_delta after it); a later message_delta overrides it.
                self.stop_reason = wire.stop_reason;
                self.stop_details = wire.stop_details;
                for (i, block) in wire.content.unwrap_or_default().into_iter().enumerate() {
                    let path = format!("message.content[{i}]");
                    self.skipped.extend(super::response::caller_not_kept(
                        &block,
                        Some(index),
                        &path,
                    ));
                    match decode_block(block, Some(index), &path) {
                        Ok(content) => message.content.push(content),
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
                content_block: raw,
            } => {
                let content_block = raw.to_value();
                self.require_started(index)?;
                if self.slots.contains_key(&block) {
                    return Err(self.latch.invalid(
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
                    Some("text") => Open::Text(
                        field("text"),
                        raw.entries()
                            .into_iter()
                            .find(|(key, _)| key == "citations")
                            .map(|(_, list)| list.elements())
                            .unwrap_or_default(),
                    ),
                    Some("thinking") => Open::Thinking(field("thinking"), field("signature")),
                    Some("redacted_thinking") => Open::Redacted(field("data")),
                    Some("tool_use") => {
                        self.skipped.extend(super::response::caller_not_kept(
                            &RawJson::from_value(&content_block),
                            Some(index),
                            "content_block",
                        ));
                        let (id, name) = (field("id"), field("name"));
                        if id.is_empty() || name.is_empty() {
                            return Err(self.latch.invalid(
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
                    _ if !content_block.is_object() => {
                        return Err(self.latch.invalid(
                            index,
                            "content_block",
                            "a content block must be a JSON object",
                        ))
                    }
                    _ => Open::Provider {
                        content: content_block
                            .get("content")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        start: content_block,
                        raw,
                        json: String::new(),
                        encrypted: None,
                    },
                };
                self.slots.insert(block, Slot::Open(open));
            }
            WireEvent::ContentBlockDelta {
                index: block,
                delta,
            } => {
                self.require_started(index)?;
                let Some(Slot::Open(open)) = self.slots.get_mut(&block) else {
                    return Err(self.latch.invalid(
                        index,
                        "index",
                        format!("delta for content block {block}, which is not open"),
                    ));
                };
                let mut unread = false;
                let mismatch = match (open, delta) {
                    (Open::Provider { .. }, WireDelta::Other) => {
                        unread = true;
                        false
                    }
                    (_, WireDelta::Other) => false,
                    (Open::Text(text, _), WireDelta::TextDelta { text: d }) => {
                        text.push_str(&d);
                        false
                    }
                    (Open::Text(_, citations), WireDelta::CitationsDelta { citation }) => {
                        citations.push(citation);
                        false
                    }
                    (Open::Provider { json, .. }, WireDelta::InputJsonDelta { partial_json }) => {
                        json.push_str(&partial_json);
                        false
                    }
                    (
                        Open::Provider {
                            content, encrypted, ..
                        },
                        WireDelta::CompactionDelta {
                            content: more,
                            encrypted_content,
                        },
                    ) => {
                        if let Some(more) = more {
                            content.get_or_insert_with(String::new).push_str(&more);
                        }
                        // The SDKs take the payload as one value, not in pieces.
                        if encrypted_content.is_some() {
                            *encrypted = encrypted_content;
                        }
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
                    return Err(self.latch.invalid(
                        index,
                        "delta.type",
                        format!("delta does not fit content block {block}"),
                    ));
                }
                if unread {
                    self.skipped.push(ResponseError::Invalid {
                        event: Some(index),
                        path: "delta".to_owned(),
                        message: format!(
                            "a delta of a type agentmsg does not read, on provider block {block}, was skipped"
                        ),
                    });
                }
            }
            WireEvent::ContentBlockStop { index: block } => {
                self.require_started(index)?;
                let Some(Slot::Open(open)) = self.slots.insert(block, Slot::Closed) else {
                    return Err(self.latch.invalid(
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
            WireEvent::Error { error, request_id } => {
                self.error = Some(error.describe());
                self.failure = Some(ProviderError {
                    error_type: error.kind.clone(),
                    code: None,
                    message: error.message.clone().unwrap_or_else(|| error.describe()),
                    request_id,
                });
                self.stopped = true;
            }
            WireEvent::Ping | WireEvent::Other => {}
        }
        Ok(())
    }

    fn require_started(&mut self, index: usize) -> Result<(), ResponseError> {
        if self.message.is_none() {
            return Err(self
                .latch
                .invalid(index, "type", "event before message_start"));
        }
        Ok(())
    }

    fn close(
        &mut self,
        index: usize,
        open: Open,
    ) -> Result<Option<AssistantContent>, ResponseError> {
        Ok(match open {
            Open::Text(text, citations) => Some(text_block(text, citations)),
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
                    ToolArguments::from_value(start_input)
                } else {
                    match RawJson::from_json(&json) {
                        Ok(value) if value.is_object() => {
                            ToolArguments::from_raw(value).unwrap_or_default()
                        }
                        Ok(other) => {
                            return Err(self.latch.invalid(
                                index,
                                "input_json_delta",
                                format!("tool input of `{name}` is not a JSON object: {other}"),
                            ))
                        }
                        Err(e) => {
                            return Err(self.latch.invalid(
                                index,
                                "input_json_delta",
                                format!("tool input of `{name}` is not valid JSON: {e}"),
                            ))
                        }
                    }
                };
                Some(AssistantContent::ToolCall(ToolCall::new(id, name, input)))
            }
            Open::Provider {
                start,
                raw,
                json,
                content,
                encrypted,
            } => {
                let mut updates = Vec::new();
                if !json.trim().is_empty() {
                    match RawJson::from_json(&json) {
                        Ok(input) => updates.push(("input", input)),
                        Err(e) => {
                            let kind = start.get("type").and_then(Value::as_str).unwrap_or("");
                            return Err(self.latch.invalid(
                                index,
                                "input_json_delta",
                                format!("input of the `{kind}` block is not valid JSON: {e}"),
                            ));
                        }
                    }
                }
                if let Some(content) = content {
                    updates.push(("content", RawJson::from_value(&Value::String(content))));
                }
                if let Some(encrypted) = encrypted {
                    updates.push((
                        "encrypted_content",
                        RawJson::from_value(&Value::String(encrypted)),
                    ));
                }
                Some(provider_block(raw.with_entries(updates)))
            }
        })
    }
}

/// A finished text block, with its citations when there are any.
fn text_block(text: String, list: Vec<RawJson>) -> AssistantContent {
    let mut array = String::from("[");
    for (i, citation) in list.iter().enumerate() {
        if i > 0 {
            array.push(',');
        }
        array.push_str(citation.get());
    }
    array.push(']');
    AssistantContent::Text(TextContent {
        citations: citations(RawJson::from_json(&array).ok()),
        ..TextContent::new(text)
    })
}

impl StreamDecoder {
    /// Whether the stream stopped at the output limit.
    fn cut_by_limit(&self) -> bool {
        self.stopped
            && matches!(
                self.stop_reason.as_deref(),
                Some("max_tokens" | "model_context_window_exceeded")
            )
    }

    /// The blocks so far, in order (a server-side block once it is whole).
    fn snapshot(&self) -> Snapshot<'_> {
        let mut blocks = Vec::new();
        for (index, slot) in &self.slots {
            let view = match slot {
                Slot::Closed => match self.done.get(index) {
                    Some(block) => BlockView::of(block, true),
                    None => continue,
                },
                Slot::Open(Open::Text(text, _)) => BlockView::new(Kind::Text, text.as_str(), false),
                Slot::Open(Open::Thinking(text, signature)) => BlockView {
                    signature: Some(signature.as_str()).filter(|s| !s.is_empty()),
                    ..BlockView::new(Kind::Thinking, text.as_str(), false)
                },
                Slot::Open(Open::Redacted(data)) => {
                    BlockView::new(Kind::Redacted, data.as_str(), false)
                }
                Slot::Open(Open::Tool { id, name, json, .. }) => BlockView {
                    id: id.as_str().into(),
                    name,
                    ..BlockView::new(Kind::ToolCall, json.as_str(), false)
                },
                // A provider block is shown once it is whole.
                Slot::Open(Open::Provider { .. }) => continue,
            };
            // A call the output limit cut is dropped from the message.
            if view.kind == Kind::ToolCall && !view.closed && self.cut_by_limit() {
                continue;
            }
            blocks.push(view);
        }
        let started = self.message.is_some();
        Snapshot {
            started,
            blocks,
            usage: started.then(|| self.usage.clone()),
            // An error ends the stream with `Error`, never with `Done`.
            stop: (self.stopped && self.error.is_none()).then(|| {
                self.stop_reason
                    .as_deref()
                    .map_or(StopReason::Stop, stop_reason)
            }),
            error: self.error.as_deref(),
        }
    }
}

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        let (index, parsed) = self.latch.next::<WireEvent>(event)?;
        self.handle(index, parsed)?;
        let mut differ = std::mem::take(&mut self.differ);
        let events = differ.events(&self.snapshot());
        self.differ = differ;
        Ok(events)
    }

    fn partial(&self) -> AssistantMessage {
        let base = self.message.clone().unwrap_or_else(base_message);
        self.snapshot().partial(base)
    }

    fn provider_error(&self) -> Option<&ProviderError> {
        self.failure.as_ref()
    }

    fn unfinished(&self) -> Option<ResponseError> {
        if let Err(bad) = self.latch.check() {
            return Some(bad);
        }
        // What streamed before an error is a message (stopReason `error`).
        if self.error.is_some() {
            return None;
        }
        let events = self.latch.events();
        if self.message.is_none() {
            return Some(ResponseError::Truncated {
                events,
                message: "no message_start".to_owned(),
            });
        }
        let mut open = self
            .slots
            .iter()
            .filter(|(_, s)| matches!(s, Slot::Open(_)))
            .map(|(i, _)| i.to_string());
        if !self.stopped {
            let open = open.collect::<Vec<_>>();
            return Some(ResponseError::Truncated {
                events,
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
        // A block the output limit cut is kept as far as it went.
        if self.cut_by_limit() {
            return None;
        }
        open.next().map(|block| ResponseError::Truncated {
            events,
            message: format!("content block {block} was never stopped"),
        })
    }

    /// [`finish`](StreamDecode::finish), also returning what was skipped (a
    /// tool call cut by the output limit, a call's `caller` other than
    /// `direct`) as [`ResponseError::Invalid`] values naming their event.
    ///
    /// A stream the output limit cut (`stop_reason` `max_tokens`) inside a
    /// block, then ended with `message_stop`, is a message with stopReason
    /// `length`: its text and thinking are kept as far as they went, and an
    /// unfinished tool call is dropped (reported here), never half-parsed.
    ///
    /// # Errors
    /// As [`finish`](StreamDecode::finish).
    fn finish_with_warnings(
        mut self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some(unfinished) = self.unfinished() {
            return Err(unfinished);
        }
        if let Some(error) = self.error {
            // What streamed before the error is kept: text and thinking as
            // far as they went; an unfinished tool call cannot be parsed.
            for (block, slot) in std::mem::take(&mut self.slots) {
                match slot {
                    Slot::Open(Open::Text(text, citations)) => {
                        self.done.insert(block, text_block(text, citations));
                    }
                    Slot::Open(Open::Thinking(thinking, signature)) => {
                        let thinking = ThinkingContent {
                            thinking,
                            signature: Some(signature).filter(|s| !s.is_empty()),
                        };
                        self.done
                            .insert(block, AssistantContent::Thinking(thinking));
                    }
                    _ => {}
                }
            }
            let mut message = self.message.unwrap_or_else(base_message);
            message.content.extend(self.done.into_values());
            message.usage = self.usage;
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return Ok((priced(message), self.skipped));
        }
        // `unfinished` said it started and stopped, with no block left open
        // but by the output limit.
        let mut message = self.message.unwrap_or_else(base_message);
        let mut skipped = std::mem::take(&mut self.skipped);
        for (block, slot) in std::mem::take(&mut self.slots) {
            let Slot::Open(open) = slot else { continue };
            // The output limit cut the block: text and thinking are kept as far
            // as they went; a tool call is dropped, never half-parsed.
            match open {
                Open::Tool { name, .. } => skipped.push(ResponseError::Invalid {
                    event: None,
                    path: format!("content_block[{block}]"),
                    message: format!(
                        "the call of `{name}` was cut by the output limit and is dropped"
                    ),
                }),
                Open::Provider { start, .. } => {
                    let kind = start
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    skipped.push(ResponseError::Invalid {
                        event: None,
                        path: format!("content_block[{block}]"),
                        message: format!(
                            "the `{kind}` block was cut by the output limit and is dropped"
                        ),
                    });
                }
                Open::Text(text, citations) => {
                    self.done.insert(block, text_block(text, citations));
                }
                Open::Thinking(thinking, signature) => {
                    let thinking = ThinkingContent {
                        thinking,
                        signature: Some(signature).filter(|s| !s.is_empty()),
                    };
                    self.done
                        .insert(block, AssistantContent::Thinking(thinking));
                }
                Open::Redacted(data) => {
                    let redacted = RedactedThinkingContent::new(data);
                    self.done
                        .insert(block, AssistantContent::RedactedThinking(redacted));
                }
            }
        }
        message.content.extend(self.done.into_values());
        message.usage = self.usage;
        apply_stop(
            &mut message,
            self.stop_reason.as_deref(),
            self.stop_details.as_ref(),
        );
        Ok((priced(message), skipped))
    }
}
