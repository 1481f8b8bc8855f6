//! The stream decoder.

use super::response::{base_message, keep_sources, WireError, WireUsage};
use super::stop_reason;
use crate::providers::catalog::priced;
use crate::providers::events::{BlockView, Differ, Kind, Snapshot, StreamEvent};
use crate::providers::shared::arguments::parse_arguments;
use crate::providers::shared::latch::FirstBad;
use crate::providers::shared::openai_error::null_as_empty;
use crate::providers::{ResponseError, StreamDecode};
use crate::Usage;
use crate::{AssistantContent, TextContent, ThinkingContent, ToolCall};
use crate::{AssistantMessage, StopReason};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Deserialize)]
pub(super) struct WireChunk {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    created: Option<u64>,
    #[serde(default)]
    choices: Vec<WireChunkChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    citations: Option<Value>,
    #[serde(default)]
    search_results: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct WireChunkChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
pub(super) struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    reasoning_text: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    tool_calls: Vec<WireToolCallDelta>,
    #[serde(default)]
    annotations: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct WireToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunctionDelta>,
}

#[derive(Deserialize)]
pub(super) struct WireFunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// A block being built from deltas.
pub(super) enum Building {
    Text(String),
    /// Reasoning, and the field it came in.
    Thinking(String, &'static str),
    Call {
        id: String,
        name: String,
        arguments: String,
        event: usize,
    },
}

/// Folds Chat Completions stream chunks (the JSON of each SSE `data:` line, in
/// order) into an [`AssistantMessage`].
///
/// Text and reasoning deltas are appended to the current block of their kind;
/// tool-call deltas are gathered by their `index` and their arguments parsed at
/// [`finish`](StreamDecode::finish). A `[DONE]` payload marks the end (for servers
/// that send no `finish_reason`).
/// Only choice 0 is read. An `{"error":…}` chunk ends the message with stopReason
/// `error`. `push` fails on a chunk that is not JSON, naming the event index, and
/// `finish` then fails too; a stream with no `finish_reason`, error chunk or
/// `[DONE]` fails in `finish` with [`ResponseError::Truncated`].
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::providers::{openai_chat::StreamDecoder, StreamDecode};
/// let mut decoder = StreamDecoder::new();
/// decoder.push(r#"{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hel"}}]}"#).unwrap();
/// decoder.push(r#"{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}"#).unwrap();
/// assert_eq!(decoder.finish().unwrap().text_content(), "Hello");
/// ```
#[derive(Default)]
pub struct StreamDecoder {
    events: usize,
    id: Option<String>,
    model: Option<String>,
    created: Option<u64>,
    blocks: Vec<Building>,
    calls: BTreeMap<u64, usize>,
    finish_reason: Option<String>,
    refused: bool,
    usage: Option<Usage>,
    error: Option<String>,
    failure: Option<crate::providers::ProviderError>,
    bad_event: FirstBad,
    warnings: Vec<ResponseError>,
    done: bool,
    differ: Differ,
    /// The text's URL citations, gathered from the deltas.
    annotations: Vec<Value>,
    /// The response's own sources (`citations`, `search_results`), the latest.
    citations: Option<Value>,
    search_results: Option<Value>,
}

impl std::fmt::Debug for StreamDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamDecoder")
            .field("events", &self.events)
            .field("blocks", &self.blocks.len())
            .field("finish_reason", &self.finish_reason)
            .finish_non_exhaustive()
    }
}

impl StreamDecoder {
    /// A decoder that has seen no event.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends text, or reasoning that came in `thinking`'s field.
    fn append_text(&mut self, text: &str, thinking: Option<&'static str>) {
        match (self.blocks.last_mut(), thinking) {
            (Some(Building::Text(buf)), None) => buf.push_str(text),
            (Some(Building::Thinking(buf, was)), Some(field)) if *was == field => {
                buf.push_str(text)
            }
            (_, Some(field)) => self.blocks.push(Building::Thinking(text.to_owned(), field)),
            (_, None) => self.blocks.push(Building::Text(text.to_owned())),
        }
    }

    fn apply(&mut self, chunk: WireChunk, event: usize) {
        if let Some(error) = &chunk.error {
            self.error = Some(error.describe());
            self.failure = Some(error.provider_error());
            return;
        }
        if self.id.is_none() {
            self.id = chunk.id.filter(|s| !s.is_empty());
        }
        if self.model.is_none() {
            self.model = chunk.model.filter(|s| !s.is_empty());
        }
        if self.created.is_none() {
            self.created = chunk.created.filter(|c| *c > 0);
        }
        if let Some(usage) = &chunk.usage {
            self.usage = Some(usage.to_usage());
        }
        if chunk.citations.is_some() {
            self.citations = chunk.citations;
        }
        if chunk.search_results.is_some() {
            self.search_results = chunk.search_results;
        }
        for choice in chunk.choices {
            if choice.index.unwrap_or(0) != 0 {
                self.warnings.push(ResponseError::Invalid {
                    event: Some(event),
                    path: "choices".into(),
                    message: format!(
                        "choice {} ignored: only choice 0 is read",
                        choice.index.unwrap_or(0)
                    ),
                });
                continue;
            }
            let delta = choice.delta.unwrap_or_default();
            if let Some((reasoning, field)) = super::response::reasoning_field([
                delta.reasoning_content,
                delta.reasoning,
                delta.reasoning_text,
            ]) {
                self.append_text(&reasoning, Some(field));
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.append_text(&text, None);
            }
            if let Some(refusal) = delta.refusal.filter(|t| !t.is_empty()) {
                self.refused = true;
                self.append_text(&refusal, None);
            }
            if let Some(Value::Array(annotations)) = delta.annotations {
                self.annotations.extend(annotations);
            }
            for call in delta.tool_calls {
                let key = match call.index {
                    Some(index) => index,
                    // Servers that send no index: a new id starts a new call.
                    None => match self.calls.iter().next_back() {
                        Some((&last, &position)) => {
                            let new_id = call.id.as_deref().filter(|s| !s.is_empty());
                            let starts_new = matches!(
                                (self.blocks.get(position), new_id),
                                (Some(Building::Call { id, .. }), Some(new_id)) if !id.is_empty() && id != new_id
                            );
                            if starts_new {
                                last.saturating_add(1)
                            } else {
                                last
                            }
                        }
                        None => 0,
                    },
                };
                let position = match self.calls.get(&key) {
                    Some(&position) => position,
                    None => {
                        self.blocks.push(Building::Call {
                            id: String::new(),
                            name: String::new(),
                            arguments: String::new(),
                            event,
                        });
                        let position = self.blocks.len() - 1;
                        self.calls.insert(key, position);
                        position
                    }
                };
                if let Some(Building::Call {
                    id,
                    name,
                    arguments,
                    ..
                }) = self.blocks.get_mut(position)
                {
                    if let Some(new_id) = call.id.filter(|s| !s.is_empty() && id.is_empty()) {
                        *id = new_id;
                    }
                    if let Some(function) = call.function {
                        // Some compatible servers repeat the whole name in
                        // every delta; OpenAI sends it once.
                        if let Some(piece) = function.name.filter(|p| p != name) {
                            name.push_str(&piece);
                        }
                        if let Some(piece) = function.arguments {
                            arguments.push_str(&piece);
                        }
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
    }
}

impl StreamDecoder {
    /// What [`keep_sources`] adds at the end, on the blocks of a snapshot: the
    /// first text with its citations, the sources as a provider block.
    fn sources_view<'a>(&'a self, blocks: &mut Vec<BlockView<'a>>) {
        let mut content: Vec<AssistantContent> = self
            .blocks
            .iter()
            .map(|b| match b {
                Building::Text(text) => AssistantContent::Text(TextContent::new(text.as_str())),
                _ => AssistantContent::Thinking(ThinkingContent::default()),
            })
            .collect();
        let before = content.len();
        keep_sources(
            &mut content,
            (!self.annotations.is_empty()).then(|| Value::Array(self.annotations.clone())),
            [
                ("citations", self.citations.clone()),
                ("search_results", self.search_results.clone()),
            ],
        );
        for (i, block) in content.into_iter().enumerate() {
            match block {
                AssistantContent::Text(text) if text.citations.is_some() && i < before => {
                    if let Some(view) = blocks.get_mut(i) {
                        view.whole = Some(Cow::Owned(AssistantContent::Text(text)));
                    }
                }
                block @ AssistantContent::ProviderBlock(_) => {
                    blocks.push(BlockView::whole(Cow::Owned(block)));
                }
                _ => {}
            }
        }
    }

    fn events_now(&mut self) -> Vec<StreamEvent> {
        let mut differ = std::mem::take(&mut self.differ);
        let events = differ.events(&self.snapshot());
        self.differ = differ;
        events
    }

    /// The blocks so far: text and thinking end when a later block begins,
    /// tool calls (whose pieces may interleave) at the end.
    fn snapshot(&self) -> Snapshot<'_> {
        let last = self.blocks.len().saturating_sub(1);
        let blocks = self
            .blocks
            .iter()
            .enumerate()
            .map(|(i, block)| match block {
                Building::Text(text) => BlockView::new(Kind::Text, text.as_str(), i < last),
                Building::Thinking(text, field) => BlockView {
                    signature: Some(field),
                    ..BlockView::new(Kind::Thinking, text.as_str(), i < last)
                },
                Building::Call {
                    id,
                    name,
                    arguments,
                    ..
                } => BlockView {
                    id: id.as_str().into(),
                    name,
                    ..BlockView::new(Kind::ToolCall, arguments.as_str(), false)
                },
            })
            .collect::<Vec<_>>();
        let mut blocks = blocks;
        let has_calls = blocks.iter().any(|b| b.kind == Kind::ToolCall);
        let ending = self.finish_reason.is_some() || self.done || self.error.is_some();
        if ending {
            self.sources_view(&mut blocks);
        }
        let stop = match (&self.finish_reason, self.done) {
            // An error ends the stream with `Error`, never with `Done`.
            _ if self.error.is_some() => None,
            (Some(reason), _) => Some(stop_reason(reason)),
            (None, true) if has_calls => Some(StopReason::ToolUse),
            (None, true) => Some(StopReason::Stop),
            (None, false) => None,
        }
        .map(|stop| match stop {
            StopReason::Stop if self.refused => StopReason::GuardRail,
            other => other,
        });
        Snapshot {
            started: self.id.is_some() || !self.blocks.is_empty(),
            blocks,
            usage: self.usage.clone(),
            stop,
            error: self.error.as_deref(),
        }
    }
}

impl StreamDecode for StreamDecoder {
    fn partial(&self) -> AssistantMessage {
        let base = base_message(self.id.clone(), self.model.clone(), self.created);
        self.snapshot().partial(base)
    }

    fn provider_error(&self) -> Option<&crate::providers::ProviderError> {
        self.failure.as_ref()
    }

    fn unfinished(&self) -> Option<ResponseError> {
        if let Err(bad) = self.bad_event.check("chunk") {
            return Some(bad);
        }
        // An error chunk ends the message (stopReason `error`); `[DONE]`
        // alone ends it on some compatible servers.
        (self.error.is_none() && self.finish_reason.is_none() && !self.done).then(|| {
            ResponseError::Truncated {
                events: self.events,
                message: "no chunk carried a finish_reason and no [DONE] came".into(),
            }
        })
    }

    fn push(&mut self, event: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        let index = self.events;
        self.events += 1;
        if event.trim() == "[DONE]" {
            self.done = true;
            return Ok(self.events_now());
        }
        let chunk = self.bad_event.parse::<WireChunk>(index, event)?;
        self.apply(chunk, index);
        Ok(self.events_now())
    }

    /// [`finish`](StreamDecode::finish), also returning what was kept in a
    /// changed form (tool-call arguments that were not a JSON object, ignored
    /// extra choices) as [`ResponseError::Invalid`] values naming their event.
    fn finish_with_warnings(
        mut self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some(unfinished) = self.unfinished() {
            return Err(unfinished);
        }
        let mut message = base_message(self.id.take(), self.model.take(), self.created);
        if let Some(usage) = self.usage.take() {
            message.usage = usage;
        }
        let mut warnings = std::mem::take(&mut self.warnings);
        for (position, block) in std::mem::take(&mut self.blocks).into_iter().enumerate() {
            message.content.push(match block {
                Building::Text(text) => AssistantContent::Text(TextContent::new(text)),
                Building::Thinking(text, field) => AssistantContent::Thinking(ThinkingContent {
                    signature: Some(field.to_owned()),
                    ..ThinkingContent::new(text)
                }),
                Building::Call {
                    id,
                    name,
                    arguments,
                    event,
                } => AssistantContent::ToolCall(ToolCall {
                    arguments: parse_arguments(
                        &arguments,
                        &format!("content[{position}].arguments"),
                        Some(event),
                        &mut warnings,
                    ),
                    id,
                    name,
                    signature: None,
                }),
            });
        }
        keep_sources(
            &mut message.content,
            (!self.annotations.is_empty())
                .then(|| Value::Array(std::mem::take(&mut self.annotations))),
            [
                ("citations", self.citations.take()),
                ("search_results", self.search_results.take()),
            ],
        );
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return Ok((priced(message), warnings));
        }
        message.stop_reason = match self.finish_reason {
            Some(reason) => stop_reason(&reason),
            // Some compatible servers end with `[DONE]` and no finish_reason
            // (`unfinished` said one of the two came).
            None if message.tool_calls().next().is_some() => StopReason::ToolUse,
            None => StopReason::Stop,
        };
        if self.refused && message.stop_reason == StopReason::Stop {
            message.stop_reason = StopReason::GuardRail;
        }
        Ok((priced(message), warnings))
    }
}
