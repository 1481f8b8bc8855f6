//! The request encoder.

use super::options::write_options;
use super::{API, MIN_OUTPUT_TOKENS, PROVIDER};
use crate::message::{MediaSource, RawJson};
use crate::project::{ChangeKind, Report};
use crate::providers::options::OptionReport;
use crate::providers::shared::parts::{user_parts, DocumentPart, PartWriter};
use crate::providers::shared::tools::tool_parameters;
use crate::providers::{EncodeError, Encoded, Request};
use crate::{AssistantContent, AudioContent, ToolResultContent};
use crate::{AssistantMessage, Message};
use hmac_sha256::Hash as Sha256;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::collections::HashSet;

/// Encodes `request` as a Responses request body.
///
/// The messages are first [prepared](crate::prepare) for
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
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{Message, providers::{Request, openai_responses}};
/// let request = Request::new("gpt-5", vec![Message::user("hi")]).with_system("Be terse.");
/// let body = openai_responses::encode_request(&request).unwrap().body;
/// assert_eq!(body["instructions"], "Be terse.");
/// assert_eq!(body["input"][0]["content"][0]["type"], "input_text");
/// ```
pub fn encode_request(request: &Request) -> Result<Encoded, EncodeError> {
    if request.model.is_empty() {
        return Err(EncodeError::invalid("model", "the model id is empty"));
    }
    let mut prepared = request.prepared(PROVIDER, API)?;
    let mut report = std::mem::take(&mut prepared.report);
    let mut input: Vec<Value> = Vec::new();
    // Item ids already sent: the API refuses an input with an id twice.
    let mut item_ids: HashSet<String> = HashSet::new();
    for (position, message) in prepared.messages.iter().enumerate() {
        let index = prepared.input_index(position).unwrap_or(position);
        match message {
            Message::System(m) => input.push(json!({"role": "system", "content": m.text()})),
            Message::User(m) => {
                let parts = user_parts(&ResponsesParts, index, &m.content, &mut report);
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
                                ToolResultContent::Image(image) => {
                                    ResponsesParts.image(&image.source)
                                }
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
        return Err(EncodeError::invalid(
            "input",
            "nothing to send: no message is left after preparing the transcript",
        ));
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
                return Err(EncodeError::invalid(
                    format!("tools[{i}].name"),
                    "the tool name is empty",
                ));
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
            return Err(EncodeError::invalid("max_tokens", format!("{max} is below {MIN_OUTPUT_TOKENS}, the smallest max_output_tokens the API takes")));
        }
        body.insert("max_output_tokens".into(), json!(max));
    }
    let mut options = OptionReport::default();
    write_options(request, &mut body, &mut options)?;
    if request.stream {
        body.insert("stream".into(), Value::Bool(true));
    }
    Ok(Encoded {
        body: Value::Object(body).into(),
        report,
        options: options.0,
    })
}

/// The reasoning item stored in a thinking signature or redacted-thinking data,
/// if it is one, with its id.
///
/// An item without an id (Codex CLI writes its reasoning items so, and sends
/// them back so: `id` is `skip_serializing` in `codex-rs/protocol`) is
/// replayed without one when it carries `encrypted_content`, which is what
/// the model reads back; the published schema lists `id` as required, but
/// the API takes such an item. Without encrypted content there is nothing to
/// replay.
pub(super) fn stored_reasoning(text: &str) -> Option<(Option<String>, Value)> {
    let value: Value = serde_json::from_str(text).ok()?;
    if value.get("type").and_then(Value::as_str) != Some("reasoning") {
        return None;
    }
    let id = value
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty());
    let encrypted = value
        .get("encrypted_content")
        .and_then(Value::as_str)
        .is_some_and(|e| !e.is_empty());
    if id.is_none() && !encrypted {
        return None;
    }
    Some((id.map(str::to_owned), reasoning_replay(&value)))
}

/// The fields of a reasoning item that are sent back (and stored): `type`, `id`
/// when it has one, `summary`, `content` when not empty, `encrypted_content`
/// when a string.
pub(super) fn reasoning_replay(item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), "reasoning".into());
    if let Some(id) = item
        .get("id")
        .filter(|id| id.as_str().is_some_and(|id| !id.is_empty()))
    {
        out.insert("id".into(), id.clone());
    }
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

pub(super) fn message_id(index: usize, block: usize, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(index.to_le_bytes());
    hasher.update(block.to_le_bytes());
    hasher.update(text.as_bytes());
    let digest = hasher.finalize();
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("msg_{hex}")
}

/// The longest item id the API takes back.
pub(super) const MAX_ITEM_ID: usize = 64;

/// A message item's id and phase as a text block keeps them: pi's
/// `TextSignatureV1`, `{"v":1,"id":…,"phase":…}` in that order, the phase left
/// out when none.
#[derive(Serialize, Deserialize)]
pub(super) struct TextSignatureV1<'a> {
    v: u32,
    #[serde(default)]
    id: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    phase: Option<Cow<'a, str>>,
}

pub(super) fn text_signature(id: &str, phase: Option<&str>) -> String {
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
pub(super) struct StoredMessage<'a> {
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

/// The output items the client runs (not the server), each with the type of
/// the item that answers it, which the API requires with it.
const CLIENT_ITEMS: [(&str, &str); 5] = [
    ("apply_patch_call", "apply_patch_call_output"),
    ("local_shell_call", "local_shell_call_output"),
    ("shell_call", "shell_call_output"),
    ("computer_call", "computer_call_output"),
    // Not `tool_search_call_output`: the published schema and Codex both
    // name it so.
    ("tool_search_call", "tool_search_output"),
];

/// The type of `item` when it is a call the client runs and `content` holds
/// no `<type>_output` provider item with its `call_id`.
fn unanswered_client_call(
    item: &Value,
    content: &[AssistantContent],
) -> Option<(&'static str, &'static str)> {
    let kind = item.get("type").and_then(Value::as_str)?;
    let &(kind, output) = CLIENT_ITEMS.iter().find(|(call, _)| *call == kind)?;
    let call_id = item.get("call_id");
    let answered = content.iter().any(|block| match block {
        AssistantContent::ProviderBlock(p) if p.api == API && p.type_name() == output => {
            p.block.to_value().get("call_id") == call_id
        }
        _ => false,
    });
    (!answered).then_some((kind, output))
}

pub(super) fn assistant_items(
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
                // Annotations come only from Responses here: prepare dropped any
                // other API's citations.
                let annotations = t
                    .citations
                    .as_ref()
                    .map_or_else(|| json!([]), RawJson::to_value);
                let part = json!({"type": "output_text", "text": t.text, "annotations": annotations, "logprobs": []});
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
                    Value::String(call.arguments.as_str().to_owned()),
                );
                items.push(Value::Object(item));
            }
            // `prepare` made every assistant image text for this API (its
            // `Target::assistant_images` is false): none reaches the encoder.
            AssistantContent::Image(_) => {}
            AssistantContent::ProviderBlock(provider) => {
                if provider.api != API || !provider.block.is_object() {
                    report.record(
                        index,
                        ChangeKind::DroppedProviderData,
                        format!(
                            "dropped a `{}` block of `{}`: Responses takes back only its own items",
                            provider.type_name(),
                            provider.api
                        ),
                    );
                    continue;
                }
                let item = provider.block.to_value();
                if let Some((kind, output)) = unanswered_client_call(&item, &m.content) {
                    report.record(
                        index,
                        ChangeKind::DroppedProviderData,
                        format!(
                            "dropped a `{kind}` item: the client runs it and its `{output}` is not in the transcript, which the API would refuse"
                        ),
                    );
                    continue;
                }
                // An item id is sent once per input, as the API requires.
                match item.get("id").and_then(Value::as_str) {
                    Some(id) if !item_ids.insert(id.to_owned()) => duplicates += 1,
                    _ => items.push(item),
                }
            }
            AssistantContent::Thinking(t) => match t.signature().and_then(stored_reasoning) {
                Some((Some(id), _)) if item_ids.contains(&id) => duplicates += 1,
                Some((id, item)) => {
                    item_ids.extend(id);
                    items.push(item);
                }
                None => dropped_thinking += 1,
            },
            AssistantContent::RedactedThinking(r) => match stored_reasoning(&r.data) {
                Some((Some(id), _)) if item_ids.contains(&id) => duplicates += 1,
                Some((id, item)) => {
                    item_ids.extend(id);
                    items.push(item);
                }
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
                "{duplicates} reasoning or provider item(s) already sent earlier in the input not sent again"
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

/// User parts as the Responses API takes them.
struct ResponsesParts;

impl PartWriter for ResponsesParts {
    const DOCUMENTS: &'static str = "only PDF and text documents can be sent inline";

    fn text(&self, text: String) -> Value {
        json!({"type": "input_text", "text": text})
    }

    fn image(&self, source: &MediaSource) -> Value {
        match source {
            MediaSource::Base64 { data, mime_type } => json!({
                "type": "input_image",
                "image_url": format!("data:{mime_type};base64,{data}"),
                "detail": "auto",
            }),
            MediaSource::Url(url) if url.starts_with("file-") => {
                json!({"type": "input_image", "file_id": url, "detail": "auto"})
            }
            MediaSource::Url(url) => {
                json!({"type": "input_image", "image_url": url, "detail": "auto"})
            }
        }
    }

    /// The Responses API takes no audio: a note, reported.
    fn audio(&self, index: usize, audio: &AudioContent, report: &mut Report) -> Value {
        report.record(
            index,
            ChangeKind::UnsupportedContent,
            format!(
                "audio of type {} replaced by a note: the Responses API takes no audio input",
                audio.mime_type
            ),
        );
        self.text(format!(
            "[audio ({}) omitted: not supported]",
            audio.mime_type
        ))
    }

    /// An `input_file` inline, by file id or by URL.
    fn document(&self, _index: usize, part: DocumentPart<'_>, _report: &mut Report) -> Value {
        match part {
            DocumentPart::Text(text) => self.text(text),
            DocumentPart::Pdf { filename, data_url } => {
                json!({"type": "input_file", "filename": filename, "file_data": data_url})
            }
            DocumentPart::FileId(id) => json!({"type": "input_file", "file_id": id}),
            DocumentPart::Url { url, name } => {
                let mut part = json!({"type": "input_file", "file_url": url});
                if let Some(name) = name {
                    part["filename"] = Value::String(name.to_owned());
                }
                part
            }
        }
    }
}
