//! OpenAI Responses (`POST /v1/responses`, api id `openai-responses`): request
//! encoder, response decoder and stream decoder.
//!
//! Encoding (after [`prepare`] for
//! `Target::new("openai", "openai-responses", model)`):
//!
//! | agentmsg | Responses |
//! |---|---|
//! | `Request::system` | `instructions` |
//! | system messages in the transcript | `{"role":"system","content":…}` input items |
//! | user text / image / document | `input_text`, `input_image` (with `detail: "auto"`), `input_file` (`file_data` data URL + `filename`, `file_url` or `file_id`) |
//! | user audio | not taken by the API: a text note, reported |
//! | assistant text | an output `message` item whose `output_text` parts carry `annotations: []` and `logprobs: []` |
//! | tool call | a `function_call` item (`call_id`, `arguments` as a JSON string, the item `id` when known) |
//! | tool result | a `function_call_output` item (`output` is a string, or a list when it holds images, which prepare's default target moves into a user message) |
//! | thinking / redacted thinking from this API | the `reasoning` item it came from |
//! | `max_tokens` | `max_output_tokens` |
//!
//! ## Reasoning items
//!
//! A `reasoning` output item is decoded into one block that keeps the item for
//! replay: the item's `type`, `id`, `summary`, `content` (when present) and
//! `encrypted_content` (byte for byte) are written as compact JSON into
//! - [`ThinkingContent::signature`], with the summary texts (joined by a blank
//!   line) as the thinking text, when the item has a summary or reasoning text;
//! - [`RedactedThinkingContent::data`] when it has neither.
//!
//! The encoder turns such a block back into that same item. The API requires a
//! reasoning item to be followed by the item that followed it in the response
//! ("Item 'rs_…' of type 'reasoning' was provided without its required following
//! item"), so: the decoder keeps the replay JSON only when the next output item
//! is one agentmsg replays as it was (a message or a function call), and the
//! encoder sends a reasoning item only when the next item it sends for that
//! assistant message is not reasoning; anything else is dropped and reported.
//! The API also refuses an item id twice: a reasoning item already sent is not
//! sent again, and a repeated `function_call` id is left out. The `id` of a
//! `function_call` item is kept in [`ToolCall::signature`] (the call id is
//! [`ToolCall::id`]), so the following item is replayed with its own id.
//!
//! ## Message ids and phases
//!
//! The first text block of a `message` output item keeps the item's `id` and
//! `phase` (`commentary` or `final_answer`) as its [`TextContent::signature`], in
//! pi's form: `{"v":1,"id":"msg_…","phase":"commentary"}` (pi's older form, the
//! bare id, is read too). The encoder starts a new message item at each signed
//! text block, with that id and phase (the API asks for the phase to be sent back
//! with every assistant message of the models that have one), and adds the
//! unsigned text blocks after it to the same item. A message item with no stored
//! id, or whose id is longer than 64 characters or already sent, gets a
//! deterministic one (`msg_` + a hash of its position and text). Like every
//! signature, the stored id and phase go back only to the model that wrote them.
//!
//! Decoding: usage `input` excludes the cached tokens (`cacheRead`) and the
//! tokens written to the cache (`cache_write_tokens`, `cacheWrite`); reasoning
//! tokens are `usage.reasoning`. `status` maps to the stop reason (`completed`
//! → `stop`, or `toolUse` when there is a call; `incomplete` → `length`, or
//! `guardRail` for `content_filter`; `failed` → `error`; `cancelled` →
//! `aborted`). Output items agentmsg does not model (web search, file search,
//! code interpreter, image generation, MCP, shell, apply-patch, tool search,
//! compaction…) are skipped and reported as warnings. A `custom_tool_call` becomes
//! a tool call with arguments `{"input": …}`; a `multi_tool_use.parallel`
//! wrapper call is split into the calls it carries (ids `<call_id>_<n>`).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::{EncodeError, Encoded, Request, ResponseError, StreamDecode};
use crate::content::{
    AssistantContent, MediaSource, RedactedThinkingContent, TextContent, ThinkingContent, ToolCall,
    ToolResultContent, UserContent,
};
use crate::message::{AssistantMessage, Message, StopReason};
use crate::project::{prepare, ChangeKind, Report, Target};
use crate::usage::Usage;

/// The api id of the Responses API.
pub const API: &str = "openai-responses";
/// The provider id written into decoded messages.
pub const PROVIDER: &str = "openai";
/// The smallest `max_output_tokens` the API takes.
pub(crate) const MIN_OUTPUT_TOKENS: u32 = 16;

/// Encodes `request` as a Responses request body.
///
/// The messages are first [prepared](prepare) for
/// `Target::new("openai", "openai-responses", &request.model)` (the provider is
/// [`Request::provider`] when set); the report holds
/// prepare's changes followed by the encoder's own (each change's `index` is the
/// input message it comes from). The body is stateless: it sets neither `store` nor
/// `include`; to replay reasoning with `store: false`, add
/// `"include": ["reasoning.encrypted_content"]` to the request that produces it.
/// Fails on an empty model id, an empty tool name, `max_tokens` below 16, or no
/// message left to send.
///
/// ```
/// # use agentmsg_runtime::{Message, providers::{Request, openai_responses}};
/// let request = Request::new("gpt-5", vec![Message::user("hi")]).with_system("Be terse.");
/// let body = openai_responses::encode_request(&request).unwrap().body;
/// assert_eq!(body["instructions"], "Be terse.");
/// assert_eq!(body["input"][0]["content"][0]["type"], "input_text");
/// ```
pub fn encode_request(request: &Request) -> Result<Encoded, EncodeError> {
    if request.model.is_empty() {
        return Err(EncodeError::Invalid {
            path: "model".into(),
            message: "the model id is empty".into(),
        });
    }
    let target = Target::new(request.provider_or(PROVIDER), API, &request.model);
    let mut prepared = prepare(&request.messages, &target);
    let mut report = std::mem::take(&mut prepared.report);
    let mut input: Vec<Value> = Vec::new();
    // Item ids already sent: the API refuses an input with an id twice.
    let mut item_ids: HashSet<String> = HashSet::new();
    for (position, message) in prepared.messages.iter().enumerate() {
        let index = prepared.input_index(position).unwrap_or(position);
        match message {
            Message::System(m) => input.push(json!({"role": "system", "content": m.text()})),
            Message::User(m) => {
                let parts = user_parts(index, &m.content, &mut report);
                if parts.is_empty() {
                    report.record(
                        index,
                        ChangeKind::DroppedEmptyMessage,
                        "empty user message dropped",
                    );
                    continue;
                }
                input.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant(m) => {
                assistant_items(index, m, &mut input, &mut item_ids, &mut report);
            }
            Message::ToolResult(m) => {
                let has_images = m
                    .content
                    .iter()
                    .any(|c| matches!(c, ToolResultContent::Image(_)));
                let output = if has_images {
                    Value::Array(
                        m.content
                            .iter()
                            .map(|block| match block {
                                ToolResultContent::Text(t) => {
                                    json!({"type": "input_text", "text": t.text})
                                }
                                ToolResultContent::Image(image) => image_part(&image.source),
                            })
                            .collect(),
                    )
                } else {
                    Value::String(m.text())
                };
                input.push(json!({
                    "type": "function_call_output",
                    "call_id": m.tool_call_id,
                    "output": output,
                }));
            }
        }
    }

    if input.is_empty() {
        return Err(EncodeError::Invalid {
            path: "input".into(),
            message: "nothing to send: no message is left after preparing the transcript".into(),
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(request.model.clone()));
    if let Some(system) = &request.system {
        body.insert("instructions".into(), Value::String(system.clone()));
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        let mut tools = Vec::with_capacity(request.tools.len());
        for (i, tool) in request.tools.iter().enumerate() {
            if tool.name.is_empty() {
                return Err(EncodeError::Invalid {
                    path: format!("tools[{i}].name"),
                    message: "the tool name is empty".into(),
                });
            }
            let mut function = Map::new();
            function.insert("type".into(), "function".into());
            function.insert("name".into(), Value::String(tool.name.clone()));
            if !tool.description.is_empty() {
                function.insert(
                    "description".into(),
                    Value::String(tool.description.clone()),
                );
            }
            function.insert("parameters".into(), tool_parameters(&tool.parameters));
            function.insert("strict".into(), Value::Bool(false));
            tools.push(Value::Object(function));
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = request.max_tokens {
        if max < MIN_OUTPUT_TOKENS {
            return Err(EncodeError::Invalid {
                path: "max_tokens".into(),
                message: format!("{max} is below {MIN_OUTPUT_TOKENS}, the smallest max_output_tokens the API takes"),
            });
        }
        body.insert("max_output_tokens".into(), json!(max));
    }
    Ok(Encoded {
        body: Value::Object(body),
        report,
    })
}

fn tool_parameters(parameters: &Value) -> Value {
    match parameters {
        Value::Object(map) if !map.is_empty() => parameters.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

fn image_part(source: &MediaSource) -> Value {
    match source {
        MediaSource::Base64 { data, mime_type } => json!({
            "type": "input_image",
            "image_url": format!("data:{mime_type};base64,{data}"),
            "detail": "auto",
        }),
        MediaSource::Url(url) if url.starts_with("file-") => {
            json!({"type": "input_image", "file_id": url, "detail": "auto"})
        }
        MediaSource::Url(url) => json!({"type": "input_image", "image_url": url, "detail": "auto"}),
    }
}

fn user_parts(index: usize, content: &[UserContent], report: &mut Report) -> Vec<Value> {
    let mut parts = Vec::with_capacity(content.len());
    for block in content {
        match block {
            UserContent::Text(t) => parts.push(json!({"type": "input_text", "text": t.text})),
            UserContent::Image(image) => parts.push(image_part(&image.source)),
            UserContent::Audio(audio) => {
                report.record(index,
                    ChangeKind::UnsupportedContent,
                    format!(
                        "audio of type {} replaced by a note: the Responses API takes no audio input",
                        audio.mime_type
                    ),
                );
                parts.push(json!({
                    "type": "input_text",
                    "text": format!("[audio ({}) omitted: not supported]", audio.mime_type),
                }));
            }
            UserContent::Document(doc) => {
                parts.push(document_part(
                    index,
                    &doc.source,
                    doc.title.as_deref(),
                    report,
                ));
            }
        }
    }
    parts
}

fn document_part(
    index: usize,
    source: &MediaSource,
    title: Option<&str>,
    report: &mut Report,
) -> Value {
    let name = title.filter(|t| !t.is_empty());
    match source {
        MediaSource::Base64 { data, mime_type }
            if mime_type.eq_ignore_ascii_case("application/pdf") =>
        {
            json!({
                "type": "input_file",
                "filename": name.unwrap_or("document.pdf"),
                "file_data": format!("data:{mime_type};base64,{data}"),
            })
        }
        MediaSource::Base64 { data, mime_type } if mime_type.starts_with("text/") => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok());
            match decoded {
                Some(text) => {
                    report.record(
                        index,
                        ChangeKind::UnsupportedContent,
                        format!("{mime_type} document sent as text"),
                    );
                    let heading = name.map(|n| format!("{n}\n\n")).unwrap_or_default();
                    json!({"type": "input_text", "text": format!("{heading}{text}")})
                }
                None => unsupported_document(index, mime_type, report),
            }
        }
        MediaSource::Base64 { mime_type, .. } => unsupported_document(index, mime_type, report),
        MediaSource::Url(url) if url.starts_with("file-") => {
            json!({"type": "input_file", "file_id": url})
        }
        MediaSource::Url(url) => {
            let mut part = json!({"type": "input_file", "file_url": url});
            if let Some(name) = name {
                part["filename"] = Value::String(name.to_owned());
            }
            part
        }
    }
}

fn unsupported_document(index: usize, mime_type: &str, report: &mut Report) -> Value {
    report.record(index,
        ChangeKind::UnsupportedContent,
        format!("{mime_type} document replaced by a note: only PDF and text documents can be sent inline"),
    );
    json!({"type": "input_text", "text": format!("[document ({mime_type}) omitted: unsupported type]")})
}

/// The reasoning item stored in a thinking signature or redacted-thinking data,
/// if it is one.
fn stored_reasoning(text: &str) -> Option<(String, Value)> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("type").and_then(Value::as_str) != Some("reasoning") {
        return None;
    }
    let id = value
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())?;
    Some((id.to_owned(), reasoning_replay(&value)))
}

/// The fields of a reasoning item that are sent back (and stored): `type`, `id`,
/// `summary`, `content` when not empty, `encrypted_content` when a string.
fn reasoning_replay(item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), "reasoning".into());
    out.insert(
        "id".into(),
        item.get("id")
            .cloned()
            .unwrap_or(Value::String(String::new())),
    );
    let summary: Vec<Value> = item
        .get("summary")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .map(|text| json!({"type": "summary_text", "text": text}))
                .collect()
        })
        .unwrap_or_default();
    out.insert("summary".into(), Value::Array(summary));
    if let Some(content) = item
        .get("content")
        .and_then(Value::as_array)
        .filter(|c| !c.is_empty())
    {
        let content: Vec<Value> = content
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(|text| json!({"type": "reasoning_text", "text": text}))
            .collect();
        if !content.is_empty() {
            out.insert("content".into(), Value::Array(content));
        }
    }
    if let Some(encrypted) = item.get("encrypted_content").filter(|v| v.is_string()) {
        out.insert("encrypted_content".into(), encrypted.clone());
    }
    Value::Object(out)
}

fn message_id(index: usize, block: usize, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(index.to_le_bytes());
    hasher.update(block.to_le_bytes());
    hasher.update(text.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("msg_{hex}")
}

/// The longest item id the API takes back.
const MAX_ITEM_ID: usize = 64;

/// A message item's id and phase as a text block keeps them: pi's
/// `TextSignatureV1`, `{"v":1,"id":…,"phase":…}` in that order, the phase left
/// out when none.
#[derive(Serialize, Deserialize)]
struct TextSignatureV1<'a> {
    v: u32,
    #[serde(default)]
    id: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<Cow<'a, str>>,
}

fn text_signature(id: &str, phase: Option<&str>) -> String {
    let signature = TextSignatureV1 {
        v: 1,
        id: Some(id.into()),
        phase: phase.filter(|p| !p.is_empty()).map(Into::into),
    };
    // Strings and a number: writing them cannot fail.
    serde_json::to_string(&signature).unwrap_or_default()
}

/// The id and phase a text block's signature holds.
#[derive(Default)]
struct StoredMessage<'a> {
    id: Option<Cow<'a, str>>,
    phase: Option<&'static str>,
}

impl<'a> StoredMessage<'a> {
    /// Reads pi's `{"v":1,"id":…,"phase":…}`, or a bare id (pi's older form). A
    /// phase other than the API's two is left out.
    fn parse(signature: &'a str) -> Self {
        if !signature.starts_with('{') {
            return Self {
                id: Some(signature.into()),
                phase: None,
            };
        }
        match serde_json::from_str::<TextSignatureV1<'_>>(signature) {
            Ok(v1) if v1.v == 1 => Self {
                id: v1.id.filter(|id| !id.is_empty()),
                phase: match v1.phase.as_deref() {
                    Some("commentary") => Some("commentary"),
                    Some("final_answer") => Some("final_answer"),
                    _ => None,
                },
            },
            _ => Self::default(),
        }
    }
}

fn assistant_items(
    index: usize,
    m: &AssistantMessage,
    input: &mut Vec<Value>,
    item_ids: &mut HashSet<String>,
    report: &mut Report,
) {
    let mut items: Vec<Value> = Vec::new();
    let mut dropped_thinking = 0usize;
    let mut duplicates = 0usize;
    for (block_index, block) in m.content.iter().enumerate() {
        match block {
            AssistantContent::Text(t) if t.text.is_empty() => {}
            AssistantContent::Text(t) => {
                let part = json!({"type": "output_text", "text": t.text, "annotations": [], "logprobs": []});
                let stored = t.signature().map(StoredMessage::parse);
                // An unsigned text block joins the message item before it.
                let open = items
                    .last_mut()
                    .filter(|last| stored.is_none() && last["type"] == "message")
                    .and_then(|last| last.get_mut("content"))
                    .and_then(Value::as_array_mut);
                if let Some(content) = open {
                    content.push(part);
                    continue;
                }
                let stored = stored.unwrap_or_default();
                let id = stored
                    .id
                    .filter(|id| id.len() <= MAX_ITEM_ID && item_ids.insert(id.to_string()))
                    .map_or_else(|| message_id(index, block_index, &t.text), Cow::into_owned);
                let mut item = json!({
                    "type": "message",
                    "role": "assistant",
                    "id": id,
                    "status": "completed",
                    "content": [part],
                });
                if let (Some(phase), Some(map)) = (stored.phase, item.as_object_mut()) {
                    map.insert("phase".into(), phase.into());
                }
                items.push(item);
            }
            AssistantContent::ToolCall(call) => {
                let mut item = Map::new();
                item.insert("type".into(), "function_call".into());
                if let Some(id) = call.signature.as_deref().filter(|s| s.starts_with("fc")) {
                    if item_ids.insert(id.to_owned()) {
                        item.insert("id".into(), Value::String(id.to_owned()));
                    }
                }
                item.insert("call_id".into(), Value::String(call.id.clone()));
                item.insert("name".into(), Value::String(call.name.clone()));
                item.insert(
                    "arguments".into(),
                    Value::String(Value::Object(call.arguments.clone()).to_string()),
                );
                items.push(Value::Object(item));
            }
            AssistantContent::Thinking(t) => match t.signature().and_then(stored_reasoning) {
                Some((id, item)) if item_ids.insert(id.clone()) => items.push(item),
                Some(_) => duplicates += 1,
                None => dropped_thinking += 1,
            },
            AssistantContent::RedactedThinking(r) => match stored_reasoning(&r.data) {
                Some((id, item)) if item_ids.insert(id.clone()) => items.push(item),
                Some(_) => duplicates += 1,
                None => dropped_thinking += 1,
            },
        }
    }
    if dropped_thinking > 0 {
        report.record(
            index,
            ChangeKind::DroppedThinking,
            format!(
                "{dropped_thinking} thinking block(s) without a Responses reasoning item not sent"
            ),
        );
    }
    if duplicates > 0 {
        report.record(
            index,
            ChangeKind::DroppedThinking,
            format!(
                "{duplicates} reasoning item(s) already sent earlier in the input not sent again"
            ),
        );
    }
    let mut unpaired = 0usize;
    let count = items.len();
    let mut kept = Vec::with_capacity(count);
    for (i, item) in items.iter().enumerate() {
        let is_reasoning = item["type"] == "reasoning";
        let followed = items
            .get(i + 1)
            .is_some_and(|next| next["type"] != "reasoning");
        if is_reasoning && !followed {
            unpaired += 1;
            continue;
        }
        kept.push(item.clone());
    }
    if unpaired > 0 {
        report.record(index,
            ChangeKind::DroppedThinking,
            format!(
                "{unpaired} reasoning item(s) not sent: a reasoning item must be followed by the item that followed it"
            ),
        );
    }
    if kept.is_empty() {
        report.record(
            index,
            ChangeKind::DroppedEmptyMessage,
            "assistant message with nothing to send dropped",
        );
    }
    input.extend(kept);
}

// ---------------------------------------------------------------------------
// Responses

#[derive(Deserialize)]
struct WireError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

impl WireError {
    fn describe(&self) -> String {
        let mut text = self
            .message
            .clone()
            .unwrap_or_else(|| "unknown error".into());
        let code = match &self.code {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        if let Some(label) = code.or_else(|| self.kind.clone()) {
            text = format!("{label}: {text}");
        }
        text
    }
}

#[derive(Deserialize, Default, Clone)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize, Default, Clone)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
}

#[derive(Deserialize, Default, Clone)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let input = self.input_tokens.unwrap_or(0);
        let details = self.input_tokens_details.clone().unwrap_or_default();
        let cached = details.cached_tokens.unwrap_or(0);
        let written = details.cache_write_tokens.unwrap_or(0);
        Usage {
            input: input.saturating_sub(cached).saturating_sub(written),
            output: self.output_tokens.unwrap_or(0),
            reasoning: self
                .output_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cache_read: cached,
            cache_write: written,
            total_tokens: self.total_tokens,
            cost: None,
        }
    }
}

#[derive(Deserialize, Default)]
struct IncompleteDetails {
    #[serde(default)]
    reason: Option<String>,
}

/// The parts of a response object that the decoder reads.
#[derive(Deserialize, Default)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    created_at: Option<u64>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    output: Vec<Value>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    incomplete_details: Option<IncompleteDetails>,
}

#[derive(Deserialize, Default)]
struct WirePart {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireItem {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    content: Option<Vec<WirePart>>,
    #[serde(default)]
    summary: Option<Vec<WirePart>>,
    /// Read as any value, so that an odd one does not cost the item its text.
    #[serde(default)]
    phase: Option<Value>,
}

/// Whether an output item becomes a block that is replayed as the same item
/// (so a reasoning item before it can be replayed too).
fn is_replayed_item(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("message") => true,
        Some("function_call") => !item
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(is_parallel_wrapper),
        _ => false,
    }
}

fn is_parallel_wrapper(name: &str) -> bool {
    matches!(name, "parallel" | "multi_tool_use.parallel")
}

/// The calls inside a `multi_tool_use.parallel` wrapper that some models emit
/// (`{"tool_uses":[{"recipient_name":"functions.x","parameters":{…}}…]}`).
fn unwrap_parallel(
    name: &str,
    arguments: &Map<String, Value>,
) -> Option<Vec<(String, Map<String, Value>)>> {
    if !is_parallel_wrapper(name) {
        return None;
    }
    let uses = arguments.get("tool_uses")?.as_array()?;
    if uses.is_empty() {
        return None;
    }
    uses.iter()
        .map(|entry| {
            let name = entry
                .get("recipient_name")?
                .as_str()?
                .strip_prefix("functions.")?;
            let parameters = match entry.get("parameters") {
                Some(Value::Object(map)) => map.clone(),
                None | Some(Value::Null) => Map::new(),
                Some(_) => return None,
            };
            Some((name.to_owned(), parameters))
        })
        .collect()
}

fn parse_arguments(
    raw: &str,
    path: &str,
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> Map<String, Value> {
    if raw.trim().is_empty() {
        return Map::new();
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            warnings.push(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: "arguments are JSON but not an object; kept as {\"value\": …}".into(),
            });
            wrap_value(other)
        }
        Err(e) => {
            warnings.push(ResponseError::Invalid {
                event,
                path: path.to_owned(),
                message: format!(
                    "arguments are not valid JSON ({e}); kept as the string {{\"value\": …}}"
                ),
            });
            wrap_value(Value::String(raw.to_owned()))
        }
    }
}

fn wrap_value(value: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("value".into(), value);
    map
}

/// Turns output items into content blocks, in order. `event` names the stream
/// event for warnings.
fn output_content(
    output: &[Value],
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> (Vec<AssistantContent>, bool) {
    let mut content = Vec::new();
    let mut refused = false;
    for (i, raw) in output.iter().enumerate() {
        let item = match WireItem::deserialize(raw) {
            Ok(item) => item,
            Err(e) => {
                warnings.push(ResponseError::Invalid {
                    event,
                    path: format!("output[{i}]"),
                    message: format!("output item skipped: {e}"),
                });
                continue;
            }
        };
        match item.kind.as_str() {
            "message" => {
                // The item's first text block keeps its id and phase.
                let mut signature = item
                    .id
                    .as_deref()
                    .filter(|id| !id.is_empty())
                    .map(|id| text_signature(id, item.phase.as_ref().and_then(Value::as_str)));
                let mut text = |text: String| {
                    let block = TextContent::new(text);
                    AssistantContent::Text(match signature.take() {
                        Some(signature) => block.with_signature(signature),
                        None => block,
                    })
                };
                for (j, part) in item.content.unwrap_or_default().into_iter().enumerate() {
                    match (part.kind.as_str(), part.text, part.refusal) {
                        ("output_text", Some(part_text), _) => content.push(text(part_text)),
                        ("refusal", _, Some(refusal)) => {
                            refused = true;
                            content.push(text(refusal));
                        }
                        (kind, _, _) => warnings.push(ResponseError::Invalid {
                            event,
                            path: format!("output[{i}].content[{j}]"),
                            message: format!("content part of type `{kind}` skipped"),
                        }),
                    }
                }
            }
            "reasoning" => {
                let summary: Vec<String> = item
                    .summary
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|p| p.text)
                    .collect();
                let mut text = summary.join("\n\n");
                if text.is_empty() {
                    text = item
                        .content
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|p| p.text)
                        .collect::<Vec<_>>()
                        .join("\n\n");
                }
                let replayable = item.id.as_deref().is_some_and(|id| !id.is_empty())
                    && output.get(i + 1).is_some_and(is_replayed_item);
                if !replayable {
                    warnings.push(ResponseError::Invalid {
                        event,
                        path: format!("output[{i}]"),
                        message: "reasoning item not kept for replay: the item after it is not one agentmsg replays"
                            .into(),
                    });
                    if !text.is_empty() {
                        content.push(AssistantContent::Thinking(ThinkingContent::new(text)));
                    }
                    continue;
                }
                let stored = reasoning_replay(raw).to_string();
                content.push(if text.is_empty() {
                    AssistantContent::RedactedThinking(RedactedThinkingContent::new(stored))
                } else {
                    AssistantContent::Thinking(ThinkingContent::new(text).with_signature(stored))
                });
            }
            "function_call" => {
                let path = format!("output[{i}].arguments");
                let arguments = match item.arguments {
                    Some(Value::String(raw)) => parse_arguments(&raw, &path, event, warnings),
                    Some(Value::Object(map)) => map,
                    Some(Value::Null) | None => Map::new(),
                    Some(other) => {
                        warnings.push(ResponseError::Invalid {
                            event,
                            path,
                            message: "arguments are neither a string nor an object; kept as {\"value\": …}"
                                .into(),
                        });
                        wrap_value(other)
                    }
                };
                let call_id = item.call_id.or(item.id.clone()).unwrap_or_default();
                let name = item.name.unwrap_or_default();
                if let Some(calls) = unwrap_parallel(&name, &arguments) {
                    warnings.push(ResponseError::Invalid {
                        event,
                        path: format!("output[{i}]"),
                        message: format!(
                            "`{name}` wrapper split into {} calls with ids {call_id}_0…",
                            calls.len()
                        ),
                    });
                    for (k, (name, arguments)) in calls.into_iter().enumerate() {
                        content.push(AssistantContent::ToolCall(ToolCall {
                            id: format!("{call_id}_{k}"),
                            name,
                            arguments,
                            signature: None,
                        }));
                    }
                    continue;
                }
                content.push(AssistantContent::ToolCall(ToolCall {
                    id: call_id,
                    name,
                    arguments,
                    signature: item.id.filter(|id| !id.is_empty()),
                }));
            }
            "custom_tool_call" => {
                warnings.push(ResponseError::Invalid {
                    event,
                    path: format!("output[{i}]"),
                    message: "custom tool call kept as a tool call with arguments {\"input\": …}"
                        .into(),
                });
                let mut arguments = Map::new();
                arguments.insert(
                    "input".into(),
                    Value::String(item.input.unwrap_or_default()),
                );
                content.push(AssistantContent::ToolCall(ToolCall {
                    id: item.call_id.or(item.id).unwrap_or_default(),
                    name: item.name.unwrap_or_default(),
                    arguments,
                    signature: None,
                }));
            }
            other => warnings.push(ResponseError::Invalid {
                event,
                path: format!("output[{i}]"),
                message: format!(
                    "output item of type `{other}` skipped: agentmsg does not model it"
                ),
            }),
        }
    }
    (content, refused)
}

/// Builds the message from a response object and its output items.
fn build_message(
    response: &WireResponse,
    output: &[Value],
    event: Option<usize>,
    warnings: &mut Vec<ResponseError>,
) -> AssistantMessage {
    let (content, refused) = output_content(output, event, warnings);
    let mut message = AssistantMessage {
        content,
        api: API.into(),
        provider: PROVIDER.into(),
        model: response.model.clone().unwrap_or_default(),
        response_id: response.id.clone().filter(|s| !s.is_empty()),
        timestamp: response.created_at.map_or(0, |c| c.saturating_mul(1000)),
        ..AssistantMessage::default()
    };
    if let Some(usage) = &response.usage {
        message.usage = usage.to_usage();
    }
    let has_calls = message.tool_calls().next().is_some();
    let reason = response
        .incomplete_details
        .as_ref()
        .and_then(|d| d.reason.as_deref());
    message.stop_reason = match response.status.as_deref() {
        Some("completed") | None if has_calls => StopReason::ToolUse,
        Some("completed") | None => StopReason::Stop,
        Some("incomplete") if reason == Some("content_filter") => StopReason::GuardRail,
        Some("incomplete") => StopReason::Length,
        Some("cancelled") => StopReason::Aborted,
        Some("failed") => StopReason::Error,
        Some(other) => {
            message.error_message = Some(format!("the response did not finish (status `{other}`)"));
            StopReason::Error
        }
    };
    if refused && message.stop_reason == StopReason::Stop {
        message.stop_reason = StopReason::GuardRail;
    }
    if let Some(error) = &response.error {
        message.stop_reason = StopReason::Error;
        message.error_message = Some(error.describe());
    } else if message.stop_reason == StopReason::Error && message.error_message.is_none() {
        message.error_message = Some("the response failed".into());
    }
    message
}

/// Decodes a non-streaming Responses body (or an error body `{"error":{…}}`,
/// which becomes a message with stopReason `error`).
///
/// ```
/// # use agentmsg_runtime::providers::openai_responses;
/// let body = r#"{"id":"resp_1","model":"gpt-5","created_at":1,"status":"completed",
///   "output":[{"type":"message","id":"msg_1","role":"assistant","content":[
///     {"type":"output_text","text":"Hi","annotations":[]}]}],
///   "usage":{"input_tokens":9,"output_tokens":1,"total_tokens":10}}"#;
/// let message = openai_responses::decode_response(body).unwrap();
/// assert_eq!(message.text_content(), "Hi");
/// assert_eq!(message.response_id.as_deref(), Some("resp_1"));
/// ```
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    decode_response_with_warnings(body).map(|(message, _)| message)
}

/// [`decode_response`], also returning what was skipped or kept in a changed
/// form (output items agentmsg does not model, reasoning that cannot be
/// replayed, tool-call arguments that are not a JSON object), as
/// [`ResponseError::Invalid`] values.
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let response: WireResponse =
        serde_json::from_str(body).map_err(|source| ResponseError::Json {
            event: None,
            source,
        })?;
    let mut warnings = Vec::new();
    let message = build_message(&response, &response.output, None, &mut warnings);
    Ok((message, warnings))
}

// ---------------------------------------------------------------------------
// Streams

#[derive(Deserialize)]
struct WireEvent {
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
/// [`decode_response`] does, so a stream and the body of the same response give
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
    bad_event: Option<(usize, String)>,
    warnings: Vec<ResponseError>,
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
fn append_in_list(
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

fn append_field(item: &mut Value, field: &str, delta: &str) {
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

    /// [`finish`](StreamDecode::finish), also returning what was skipped or kept
    /// in a changed form (see [`decode_response_with_warnings`]), as
    /// [`ResponseError::Invalid`] values.
    pub fn finish_with_warnings(
        mut self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some((event, message)) = self.bad_event.take() {
            return Err(ResponseError::Invalid {
                event: Some(event),
                path: "event".into(),
                message: format!("the stream had a malformed event: {message}"),
            });
        }
        let (terminal_event, response_value) =
            match self.terminal.take() {
                Some((event, value)) => (Some(event), value),
                None if self.error.is_some() => (None, self.started.take().unwrap_or(Value::Null)),
                None => return Err(ResponseError::Truncated {
                    events: self.events,
                    message:
                        "no response.completed, response.incomplete, response.failed or error event"
                            .into(),
                }),
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
            ..response
        };
        let items: Vec<Value> = std::mem::take(&mut self.items).into_values().collect();
        let output = if items.is_empty() {
            &response.output
        } else {
            &items
        };
        let mut warnings = std::mem::take(&mut self.warnings);
        let mut message = build_message(&response, output, terminal_event, &mut warnings);
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
        }
        Ok((message, warnings))
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
                let text = match &event.error {
                    Some(error) => error.describe(),
                    None => WireError {
                        message: event.message.clone(),
                        kind: None,
                        code: event.code.clone(),
                    }
                    .describe(),
                };
                if self.error.is_none() {
                    self.error = Some(text);
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                if let (Some(position), Some(item)) = (event.output_index, event.item) {
                    self.items.insert(position, item);
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

fn guess_type(event: &str) -> &'static str {
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

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<(), ResponseError> {
        let index = self.events;
        self.events += 1;
        if event.trim() == "[DONE]" {
            return Ok(());
        }
        match serde_json::from_str::<WireEvent>(event) {
            Ok(parsed) => {
                if let Some((end, _)) = &self.terminal {
                    let message = format!(
                        "`{}` event after the end of the response at event {end}",
                        parsed.kind
                    );
                    if self.bad_event.is_none() {
                        self.bad_event = Some((index, message.clone()));
                    }
                    return Err(ResponseError::Invalid {
                        event: Some(index),
                        path: "type".into(),
                        message,
                    });
                }
                self.apply(parsed, index);
                Ok(())
            }
            Err(source) => {
                if self.bad_event.is_none() {
                    self.bad_event = Some((index, source.to_string()));
                }
                Err(ResponseError::Json {
                    event: Some(index),
                    source,
                })
            }
        }
    }

    fn finish(self) -> Result<AssistantMessage, ResponseError> {
        self.finish_with_warnings().map(|(message, _)| message)
    }
}
