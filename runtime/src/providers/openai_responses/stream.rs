//! The stream decoder.

use super::response::{
    build_message, is_provider_item, provider_item, server_call, stop_reason, WireError,
    WireResponse, WireUsage,
};
use super::{API, PROVIDER};
use crate::providers::catalog::priced;
use crate::providers::events::{BlockView, Differ, Kind, Snapshot, StreamEvent};
use crate::providers::shared::latch::FirstBad;
use crate::providers::{ResponseError, StreamDecode};
use crate::{AssistantMessage, StopReason};
use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Bound;

#[derive(Deserialize)]
pub(super) struct WireEvent {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    output_index: Option<usize>,
    #[serde(default)]
    content_index: Option<usize>,
    #[serde(default)]
    summary_index: Option<usize>,
    #[serde(default)]
    delta: Option<Value>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

/// Folds Responses stream events (the JSON of each SSE `data:` line, in order)
/// into an [`AssistantMessage`].
///
/// Output items are tracked by `output_index` (item ids may change between
/// events): `response.output_item.added` starts one, text, refusal, reasoning
/// summary, reasoning text and function-argument deltas grow it, and
/// `response.output_item.done` replaces it with the final item. The terminal
/// `response.completed`, `response.incomplete` or `response.failed` event gives
/// the status and usage; the items are then decoded as
/// [`decode_response`](super::decode_response) does, so a stream and the body of the same response give
/// the same message. An `error` event makes the stop reason `error`. `push`
/// fails on an event that is not JSON or that comes after the terminal event
/// (one decoder reads one response), naming its index, and `finish` then fails
/// too; a stream without a terminal event fails in `finish` with
/// [`ResponseError::Truncated`].
#[derive(Default)]
pub struct StreamDecoder {
    events: usize,
    items: BTreeMap<usize, Value>,
    started: Option<Value>,
    terminal: Option<(usize, Value)>,
    error: Option<String>,
    failure: Option<crate::providers::ProviderError>,
    bad_event: FirstBad,
    warnings: Vec<ResponseError>,
    /// The output items whose `output_item.done` came.
    done_items: std::collections::BTreeSet<usize>,
    differ: Differ,
}

impl std::fmt::Debug for StreamDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamDecoder")
            .field("events", &self.events)
            .field("items", &self.items.len())
            .field("finished", &self.terminal.is_some())
            .finish_non_exhaustive()
    }
}

/// Appends `delta` to the string at `item[list][index][field]`, creating the
/// list entry (with `kind`) when missing.
pub(super) fn append_in_list(
    item: &mut Value,
    list: &str,
    index: usize,
    kind: &str,
    field: &str,
    delta: &str,
) {
    let Some(object) = item.as_object_mut() else {
        return;
    };
    let entries = object
        .entry(list)
        .or_insert_with(|| Value::Array(Vec::new()));
    if !entries.is_array() {
        *entries = Value::Array(Vec::new());
    }
    let Some(entries) = entries.as_array_mut() else {
        return;
    };
    // A part the stream never announced starts after the known ones (an index
    // far past the end must not allocate up to it).
    let slot = if index < entries.len() {
        index
    } else {
        entries.push(json!({"type": kind, field: ""}));
        entries.len() - 1
    };
    if let Some(entry) = entries.get_mut(slot).and_then(Value::as_object_mut) {
        let text = entry
            .entry(field)
            .or_insert_with(|| Value::String(String::new()));
        match text {
            Value::String(s) => s.push_str(delta),
            other => *other = Value::String(delta.to_owned()),
        }
    }
}

pub(super) fn append_field(item: &mut Value, field: &str, delta: &str) {
    let Some(object) = item.as_object_mut() else {
        return;
    };
    let text = object
        .entry(field)
        .or_insert_with(|| Value::String(String::new()));
    match text {
        Value::String(s) => s.push_str(delta),
        other => *other = Value::String(delta.to_owned()),
    }
}

impl StreamDecoder {
    /// A decoder that has seen no event.
    pub fn new() -> Self {
        Self::default()
    }

    fn apply(&mut self, event: WireEvent, index: usize) {
        let delta = event.delta.as_ref().and_then(Value::as_str);
        match event.kind.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                if let Some(response) = event.response {
                    self.started = Some(response);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" | "response.done" => {
                if let Some(response) = event.response {
                    if event.kind == "response.failed" && self.failure.is_none() {
                        self.failure = Some(failed(&response));
                    }
                    self.terminal = Some((index, response));
                } else {
                    self.warnings.push(ResponseError::Invalid {
                        event: Some(index),
                        path: "response".into(),
                        message: format!("`{}` event without a response", event.kind),
                    });
                }
            }
            "error" => {
                let error = match event.error {
                    Some(error) => error,
                    None => WireError {
                        message: event.message.clone(),
                        kind: None,
                        code: event.code.clone(),
                    },
                };
                if self.error.is_none() {
                    self.error = Some(error.describe());
                    self.failure = Some(error.provider_error());
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                if let (Some(position), Some(item)) = (event.output_index, event.item) {
                    self.items.insert(position, item);
                    if event.kind == "response.output_item.done" {
                        self.done_items.insert(position);
                    }
                }
            }
            _ => {
                let (Some(position), Some(delta)) = (event.output_index, delta) else {
                    return;
                };
                let item = self
                    .items
                    .entry(position)
                    .or_insert_with(|| json!({"type": guess_type(&event.kind)}));
                let content_index = event.content_index.unwrap_or(0);
                match event.kind.as_str() {
                    "response.output_text.delta" => {
                        append_in_list(
                            item,
                            "content",
                            content_index,
                            "output_text",
                            "text",
                            delta,
                        );
                    }
                    "response.refusal.delta" => {
                        append_in_list(item, "content", content_index, "refusal", "refusal", delta);
                    }
                    "response.reasoning_summary_text.delta" => append_in_list(
                        item,
                        "summary",
                        event.summary_index.unwrap_or(0),
                        "summary_text",
                        "text",
                        delta,
                    ),
                    "response.reasoning_text.delta" => {
                        append_in_list(
                            item,
                            "content",
                            content_index,
                            "reasoning_text",
                            "text",
                            delta,
                        );
                    }
                    "response.function_call_arguments.delta" => {
                        append_field(item, "arguments", delta)
                    }
                    "response.custom_tool_call_input.delta" => append_field(item, "input", delta),
                    _ => {}
                }
            }
        }
    }
}

pub(super) fn guess_type(event: &str) -> &'static str {
    if event.starts_with("response.output_text") || event.starts_with("response.refusal") {
        "message"
    } else if event.starts_with("response.reasoning") {
        "reasoning"
    } else if event.starts_with("response.function_call") {
        "function_call"
    } else if event.starts_with("response.custom_tool_call") {
        "custom_tool_call"
    } else {
        "unknown"
    }
}

/// The text of the parts of `item`'s `field` (`content`, `summary`) whose
/// text is in `key`, each with its position.
fn part_texts<'a>(item: &'a Value, field: &str, key: &'a str) -> impl Iterator<Item = &'a str> {
    item.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(move |part| part.get(key).and_then(Value::as_str))
}

impl StreamDecoder {
    /// The blocks so far, one or more per output item as they stream (the
    /// final message is decoded from the terminal response, as a body is).
    fn snapshot(&self) -> Snapshot<'_> {
        let ended = self.terminal.is_some();
        let mut blocks = Vec::new();
        let tools = self
            .terminal
            .as_ref()
            .map(|(_, response)| response)
            .into_iter()
            .chain(&self.started)
            .find_map(|response| response.get("tools").and_then(Value::as_array))
            .map(Vec::as_slice);
        for (position, item) in &self.items {
            let closed = ended || self.done_items.contains(position);
            let str_of = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
            match str_of("type") {
                "message" => {
                    for part in item
                        .get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let text = part
                            .get("text")
                            .or_else(|| part.get("refusal"))
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        blocks.push(BlockView::new(Kind::Text, text, closed));
                    }
                }
                "reasoning" => {
                    let mut text = part_texts(item, "summary", "text")
                        .collect::<Vec<_>>()
                        .join("\n\n");
                    if text.is_empty() {
                        text = part_texts(item, "content", "text")
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    if !text.is_empty() {
                        blocks.push(BlockView::new(Kind::Thinking, text, closed));
                    }
                }
                "function_call" => blocks.push(BlockView {
                    id: str_of("call_id").into(),
                    name: str_of("name"),
                    ..BlockView::new(Kind::ToolCall, str_of("arguments"), closed)
                }),
                // A call the server ran itself is a provider item; while that
                // is not known, nothing after it is shown either, so that no
                // block changes its kind or place.
                "custom_tool_call" => match server_call(
                    tools,
                    item,
                    self.items
                        .range((Bound::Excluded(*position), Bound::Unbounded))
                        .map(|(_, v)| v),
                    ended,
                ) {
                    None => break,
                    Some(true) => {
                        if closed {
                            blocks.push(BlockView::whole(Cow::Owned(provider_item(item))));
                        } else {
                            break;
                        }
                    }
                    // Kept as a call with arguments `{"input": …}`, known at its end.
                    Some(false) => blocks.push(BlockView {
                        id: str_of("call_id").into(),
                        name: str_of("name"),
                        ..BlockView::new(
                            Kind::ToolCall,
                            if closed {
                                json!({"input": str_of("input")}).to_string()
                            } else {
                                String::new()
                            },
                            closed,
                        )
                    }),
                },
                // A provider item is shown once it is whole.
                _ if closed && is_provider_item(item) => {
                    blocks.push(BlockView::whole(Cow::Owned(provider_item(item))));
                }
                _ => {}
            }
        }
        let has_calls = blocks.iter().any(|b| b.kind == Kind::ToolCall);
        let response = self.terminal.as_ref().map(|(_, response)| response);
        let stop = response.map(|r| {
            let status = r
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or("completed");
            match stop_reason(status) {
                StopReason::Stop if has_calls => StopReason::ToolUse,
                other => other,
            }
        });
        let usage = response
            .and_then(|r| r.get("usage"))
            .and_then(|u| WireUsage::deserialize(u).ok())
            .map(|u| u.to_usage());
        Snapshot {
            started: self.started.is_some() || !self.items.is_empty(),
            blocks,
            usage,
            stop,
            error: self.error.as_deref(),
        }
    }
}

/// The error of a `response.failed` event's response (`{"code","message"}`).
fn failed(response: &Value) -> crate::providers::ProviderError {
    let error = response.get("error");
    let text = |name: &str| {
        error.and_then(|e| e.get(name)).and_then(|v| match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let code = text("code");
    crate::providers::ProviderError {
        error_type: text("type").filter(|t| Some(t) != code.as_ref()),
        code,
        message: text("message").unwrap_or_else(|| "the response failed".to_owned()),
        request_id: None,
    }
}

impl StreamDecode for StreamDecoder {
    fn provider_error(&self) -> Option<&crate::providers::ProviderError> {
        self.failure.as_ref()
    }

    fn unfinished(&self) -> Option<ResponseError> {
        if let Err(bad) = self.bad_event.check("event") {
            return Some(bad);
        }
        (self.terminal.is_none() && self.error.is_none()).then(|| ResponseError::Truncated {
            events: self.events,
            message: "no response.completed, response.incomplete, response.failed or error event"
                .into(),
        })
    }

    fn partial(&self) -> AssistantMessage {
        let base = AssistantMessage {
            api: API.to_owned(),
            provider: PROVIDER.to_owned(),
            ..AssistantMessage::default()
        };
        self.snapshot().partial(base)
    }

    fn push(&mut self, event: &str) -> Result<Vec<StreamEvent>, ResponseError> {
        let index = self.events;
        self.events += 1;
        if event.trim() == "[DONE]" {
            return Ok(Vec::new());
        }
        let parsed = self.bad_event.parse::<WireEvent>(index, event)?;
        if let Some((end, _)) = &self.terminal {
            let message = format!(
                "`{}` event after the end of the response at event {end}",
                parsed.kind
            );
            self.bad_event.note(index, message.clone());
            return Err(ResponseError::Invalid {
                event: Some(index),
                path: "type".into(),
                message,
            });
        }
        self.apply(parsed, index);
        let mut differ = std::mem::take(&mut self.differ);
        let events = differ.events(&self.snapshot());
        self.differ = differ;
        Ok(events)
    }

    /// [`finish`](StreamDecode::finish), also returning what was skipped or kept
    /// in a changed form (see
    /// [`decode_response_with_warnings`](super::decode_response_with_warnings)), as
    /// [`ResponseError::Invalid`] values.
    fn finish_with_warnings(
        mut self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some(unfinished) = self.unfinished() {
            return Err(unfinished);
        }
        // `unfinished` said a terminal event or an error came.
        let (terminal_event, response_value) = match self.terminal.take() {
            Some((event, value)) => (Some(event), value),
            None => (None, self.started.take().unwrap_or(Value::Null)),
        };
        let response: WireResponse = if response_value.is_null() {
            WireResponse::default()
        } else {
            WireResponse::deserialize(&response_value).map_err(|e| ResponseError::Invalid {
                event: terminal_event,
                path: "response".into(),
                message: e.to_string(),
            })?
        };
        let mut fallback = WireResponse::default();
        if let Some(started) = &self.started {
            if let Ok(s) = WireResponse::deserialize(started) {
                fallback = s;
            }
        }
        let response = WireResponse {
            id: response.id.or(fallback.id),
            model: response.model.or(fallback.model),
            created_at: response.created_at.or(fallback.created_at),
            tools: response.tools.or(fallback.tools),
            ..response
        };
        let items: Vec<Value> = std::mem::take(&mut self.items).into_values().collect();
        let output = if items.is_empty() {
            response.output.as_deref().unwrap_or_default()
        } else {
            &items
        };
        let mut warnings = std::mem::take(&mut self.warnings);
        let mut message = build_message(&response, output, terminal_event, &mut warnings);
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
        }
        Ok((priced(message), warnings))
    }
}
