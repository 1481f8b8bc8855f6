//! The stream decoder.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::response::{apply_stop, base_message, exception_text, stop_reason, WireUsage};
use super::API;
use crate::message::RawJson;
use crate::providers::catalog::priced;
use crate::providers::events::{BlockView, Differ, Kind, Snapshot, StreamEvent};
use crate::providers::shared::latch::Latch;
use crate::providers::{ResponseError, StreamDecode};
use crate::{AssistantContent, AssistantMessage, ProviderBlock, StopReason, Usage};
use crate::{RedactedThinkingContent, TextContent, ThinkingContent, ToolArguments, ToolCall};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStart {
    content_block_index: usize,
    #[serde(default)]
    start: Option<RawJson>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolStart {
    tool_use_id: String,
    name: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockDelta {
    content_block_index: usize,
    delta: WireDelta,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireDelta {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_use: Option<ToolDelta>,
    #[serde(default)]
    reasoning_content: Option<ReasoningDelta>,
}

#[derive(Deserialize)]
struct ToolDelta {
    #[serde(default)]
    input: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReasoningDelta {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    redacted_content: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BlockStop {
    content_block_index: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageStop {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    usage: Option<WireUsage>,
}

/// A block being streamed, by its `contentBlockIndex`.
#[derive(Debug)]
enum Open {
    Text(String),
    Thinking(String, String),
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
    /// A block of a kind agentmsg does not model, kept as its start.
    Provider(RawJson),
}

#[derive(Debug)]
enum Slot {
    Open(Open),
    Closed(AssistantContent),
}

/// Folds ConverseStream events (the JSON of each event, its type as the single
/// key: `{"contentBlockDelta":{…}}`) into an [`AssistantMessage`].
///
/// A delta that does not fit its block, a second `messageStart`, an event
/// after `messageStop` (but `metadata`, which may follow it), or tool input
/// that is not a JSON object is an error naming the event index; a stream
/// without `messageStop` fails in [`finish`](StreamDecode::finish) as
/// [`ResponseError::Truncated`]; an exception event
/// (`modelStreamErrorException`, `throttlingException`…) ends the message
/// with stopReason `error`.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    latch: Latch,
    skipped: Vec<ResponseError>,
    differ: Differ,
    started: bool,
    message_start: bool,
    slots: BTreeMap<usize, Slot>,
    usage: Option<Usage>,
    stop_reason: Option<String>,
    stopped: bool,
    error: Option<String>,
}

impl StreamDecoder {
    /// A decoder waiting for the stream's first event.
    pub fn new() -> Self {
        Self::default()
    }

    fn parse<T: serde::de::DeserializeOwned>(
        &mut self,
        index: usize,
        kind: &str,
        payload: Value,
    ) -> Result<T, ResponseError> {
        serde_json::from_value(payload).map_err(|e| self.latch.invalid(index, kind, e.to_string()))
    }

    fn handle(&mut self, index: usize, kind: &str, payload: Value) -> Result<(), ResponseError> {
        let exception = kind.ends_with("Exception");
        if self.stopped && kind != "metadata" && !exception {
            return Err(self
                .latch
                .invalid(index, kind, "an event after messageStop"));
        }
        match kind {
            "messageStart" => {
                if self.message_start {
                    return Err(self.latch.invalid(
                        index,
                        kind,
                        "a second messageStart: the stream holds more than one message",
                    ));
                }
                self.message_start = true;
                self.started = true;
            }
            "contentBlockStart" => {
                let start: BlockStart = self.parse(index, kind, payload)?;
                let block = start.content_block_index;
                if self.slots.contains_key(&block) {
                    return Err(self.latch.invalid(
                        index,
                        "contentBlockStart.contentBlockIndex",
                        format!("content block {block} started twice"),
                    ));
                }
                let open = match start.start {
                    // An empty start (`{}`): the first delta tells the kind.
                    Some(raw) if raw.entries().is_empty() => return Ok(()),
                    Some(raw) => {
                        let tool = raw
                            .entries()
                            .into_iter()
                            .find(|(k, _)| k == "toolUse")
                            .map(|(_, v)| v);
                        match tool.map(|t| serde_json::from_str::<ToolStart>(t.get())) {
                            Some(Ok(tool)) if tool.kind.is_none() => Open::Tool {
                                id: tool.tool_use_id,
                                name: tool.name,
                                json: String::new(),
                            },
                            Some(Err(e)) => {
                                return Err(self.latch.invalid(
                                    index,
                                    "contentBlockStart.start.toolUse",
                                    e.to_string(),
                                ))
                            }
                            _ => Open::Provider(raw),
                        }
                    }
                    None => Open::Text(String::new()),
                };
                self.started = true;
                self.slots.insert(block, Slot::Open(open));
            }
            "contentBlockDelta" => {
                let delta: BlockDelta = self.parse(index, kind, payload)?;
                self.delta(index, delta)?;
            }
            "contentBlockStop" => {
                let stop: BlockStop = self.parse(index, kind, payload)?;
                let block = stop.content_block_index;
                match self.slots.remove(&block) {
                    Some(Slot::Open(open)) => {
                        let content = self.close(index, open)?;
                        self.slots.insert(block, Slot::Closed(content));
                    }
                    Some(closed @ Slot::Closed(_)) => {
                        self.slots.insert(block, closed);
                        return Err(self.latch.invalid(
                            index,
                            "contentBlockStop.contentBlockIndex",
                            format!("content block {block} stopped twice"),
                        ));
                    }
                    // A block that brought nothing (an empty text): nothing to keep.
                    None => {}
                }
            }
            "messageStop" => {
                let stop: MessageStop = self.parse(index, kind, payload)?;
                self.started = true;
                self.stopped = true;
                self.stop_reason = stop.stop_reason;
            }
            "metadata" => {
                let metadata: Metadata = self.parse(index, kind, payload)?;
                if let Some(usage) = metadata.usage {
                    self.usage = Some(usage.usage());
                }
            }
            _ if exception => {
                self.error = Some(exception_text(kind, &payload));
                self.stopped = true;
            }
            other => self.skipped.push(ResponseError::Invalid {
                event: Some(index),
                path: other.to_owned(),
                message: "an event of a type agentmsg does not read was skipped".to_owned(),
            }),
        }
        Ok(())
    }

    fn delta(&mut self, index: usize, delta: BlockDelta) -> Result<(), ResponseError> {
        let block = delta.content_block_index;
        let delta = delta.delta;
        self.started = true;
        if matches!(self.slots.get(&block), Some(Slot::Closed(_))) {
            return Err(self.latch.invalid(
                index,
                "contentBlockDelta.contentBlockIndex",
                format!("a delta for content block {block}, which was stopped"),
            ));
        }
        // Text and reasoning open their block with their first delta.
        let slot = self.slots.entry(block).or_insert_with(|| {
            Slot::Open(match (&delta.reasoning_content, &delta.tool_use) {
                (Some(r), _) if r.redacted_content.is_some() => Open::Redacted(String::new()),
                (Some(_), _) => Open::Thinking(String::new(), String::new()),
                (None, Some(_)) => Open::Provider(RawJson::from_value(&Value::Null)),
                (None, None) => Open::Text(String::new()),
            })
        });
        let Slot::Open(open) = slot else {
            return Ok(());
        };
        let fits = match (open, delta) {
            (Open::Text(text), WireDelta { text: Some(d), .. }) => {
                text.push_str(&d);
                true
            }
            (
                Open::Tool { json, .. },
                WireDelta {
                    tool_use: Some(d), ..
                },
            ) => {
                json.push_str(&d.input);
                true
            }
            (
                Open::Thinking(text, signature),
                WireDelta {
                    reasoning_content: Some(r),
                    ..
                },
            ) if r.redacted_content.is_none() => {
                text.push_str(r.text.as_deref().unwrap_or_default());
                signature.push_str(r.signature.as_deref().unwrap_or_default());
                true
            }
            (
                Open::Redacted(data),
                WireDelta {
                    reasoning_content:
                        Some(ReasoningDelta {
                            redacted_content: Some(more),
                            ..
                        }),
                    ..
                },
            ) => {
                data.push_str(&more);
                true
            }
            (Open::Provider(_), _) => {
                self.skipped.push(ResponseError::Invalid {
                    event: Some(index),
                    path: "contentBlockDelta.delta".to_owned(),
                    message: format!(
                        "a delta on content block {block}, of a kind agentmsg keeps as it started, was skipped"
                    ),
                });
                true
            }
            (
                _,
                WireDelta {
                    text: None,
                    tool_use: None,
                    reasoning_content: None,
                },
            ) => {
                self.skipped.push(ResponseError::Invalid {
                    event: Some(index),
                    path: "contentBlockDelta.delta".to_owned(),
                    message: "a delta of a kind agentmsg does not read (a citation…) was skipped"
                        .to_owned(),
                });
                true
            }
            _ => false,
        };
        if !fits {
            return Err(self.latch.invalid(
                index,
                "contentBlockDelta.delta",
                format!("the delta does not fit content block {block}"),
            ));
        }
        Ok(())
    }

    fn close(&mut self, index: usize, open: Open) -> Result<AssistantContent, ResponseError> {
        Ok(match open {
            Open::Text(text) => AssistantContent::Text(TextContent::new(text)),
            Open::Thinking(thinking, signature) => AssistantContent::Thinking(ThinkingContent {
                thinking,
                signature: Some(signature).filter(|s| !s.is_empty()),
            }),
            Open::Redacted(data) => {
                AssistantContent::RedactedThinking(RedactedThinkingContent::new(data))
            }
            Open::Tool { id, name, json } => {
                let arguments = if json.trim().is_empty() {
                    ToolArguments::new()
                } else {
                    match RawJson::from_json(&json) {
                        Ok(value) if value.is_object() => {
                            ToolArguments::from_raw(value).unwrap_or_default()
                        }
                        Ok(other) => {
                            return Err(self.latch.invalid(
                                index,
                                "contentBlockDelta.delta.toolUse.input",
                                format!("tool input of `{name}` is not a JSON object: {other}"),
                            ))
                        }
                        Err(e) => {
                            return Err(self.latch.invalid(
                                index,
                                "contentBlockDelta.delta.toolUse.input",
                                format!("tool input of `{name}` is not valid JSON: {e}"),
                            ))
                        }
                    }
                };
                AssistantContent::ToolCall(ToolCall::new(id, name, arguments))
            }
            Open::Provider(start) => {
                AssistantContent::ProviderBlock(ProviderBlock::new(API, start))
            }
        })
    }

    fn snapshot(&self) -> Snapshot<'_> {
        let mut blocks = Vec::new();
        for slot in self.slots.values() {
            let view = match slot {
                Slot::Closed(block) => BlockView::of(block, true),
                Slot::Open(Open::Text(text)) => BlockView::new(Kind::Text, text.as_str(), false),
                Slot::Open(Open::Thinking(text, signature)) => BlockView {
                    signature: Some(signature.as_str()).filter(|s| !s.is_empty()),
                    ..BlockView::new(Kind::Thinking, text.as_str(), false)
                },
                Slot::Open(Open::Redacted(data)) => {
                    BlockView::new(Kind::Redacted, data.as_str(), false)
                }
                Slot::Open(Open::Tool { id, name, json }) => BlockView {
                    id: id.as_str().into(),
                    name,
                    ..BlockView::new(Kind::ToolCall, json.as_str(), false)
                },
                // Shown once it is whole.
                Slot::Open(Open::Provider(_)) => continue,
            };
            blocks.push(view);
        }
        Snapshot {
            started: self.started,
            blocks,
            usage: self.usage.clone(),
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
        let (index, parsed) = self.latch.next::<Map<String, Value>>(event)?;
        let mut entries = parsed.into_iter();
        let (Some((kind, payload)), None) = (entries.next(), entries.next()) else {
            return Err(self.latch.invalid(
                index,
                "event",
                "an event must be an object with one key, its type",
            ));
        };
        self.handle(index, &kind, payload)?;
        let mut differ = std::mem::take(&mut self.differ);
        let events = differ.events(&self.snapshot());
        self.differ = differ;
        Ok(events)
    }

    fn partial(&self) -> AssistantMessage {
        self.snapshot().partial(base_message())
    }

    fn unfinished(&self) -> Option<ResponseError> {
        if let Err(bad) = self.latch.check() {
            return Some(bad);
        }
        (self.error.is_none() && !self.stopped).then(|| ResponseError::Truncated {
            events: self.latch.events(),
            message: "no messageStop".to_owned(),
        })
    }

    /// [`finish`](StreamDecode::finish), also returning what was skipped
    /// (deltas and events of kinds agentmsg does not read).
    ///
    /// A stream that stopped at the output limit (`max_tokens`) inside a
    /// block keeps its text and thinking as far as they went; an unfinished
    /// tool call is dropped (reported), never half-parsed.
    ///
    /// # Errors
    /// As [`finish`](StreamDecode::finish).
    fn finish_with_warnings(
        mut self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some(unfinished) = self.unfinished() {
            return Err(unfinished);
        }
        let mut message = base_message();
        if let Some(usage) = self.usage.take() {
            message.usage = usage;
        }
        let cut = matches!(
            self.stop_reason.as_deref(),
            Some("max_tokens" | "model_context_window_exceeded")
        );
        let mut skipped = std::mem::take(&mut self.skipped);
        for (block, slot) in std::mem::take(&mut self.slots) {
            match slot {
                Slot::Closed(content) => message.content.push(content),
                // Bedrock often ends a text or reasoning block with the
                // message alone; a tool call must be whole.
                Slot::Open(Open::Tool { name, .. }) if cut || self.error.is_some() => {
                    skipped.push(ResponseError::Invalid {
                        event: None,
                        path: format!("contentBlock[{block}]"),
                        message: format!("the call of `{name}` was cut off and is dropped"),
                    })
                }
                Slot::Open(open) => {
                    let index = self.latch.events().saturating_sub(1);
                    message.content.push(self.close(index, open)?);
                }
            }
        }
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return Ok((priced(message), skipped));
        }
        apply_stop(&mut message, self.stop_reason.as_deref());
        Ok((priced(message), skipped))
    }
}
