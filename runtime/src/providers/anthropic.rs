//! Anthropic Messages (`anthropic-messages`): request encoder, response decoder
//! and stream decoder.
//!
//! A request body, as [`encode_request`] writes it:
//!
//! ```json
//! {"model":"claude-sonnet-4-5","max_tokens":4096,"system":[{"type":"text","text":"Be terse."}],
//!  "messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}
//! ```
//!
//! What the encoder does beyond a one-to-one mapping, each recorded in the
//! [`Report`] (tool-call ids are already mapped to `^[a-zA-Z0-9_-]{1,64}$` by
//! [`prepare`]):
//! - system messages of the transcript join the top-level `system`;
//! - consecutive turns of one role are merged (tool results always form one user
//!   turn, with the `tool_result` blocks first);
//! - audio (Anthropic takes none), images and documents of a MIME type Anthropic
//!   does not read become a text placeholder;
//! - thinking without a signature cannot be replayed and is dropped;
//! - a document's title longer than [`MAX_DOCUMENT_TITLE`] characters is cut;
//! - trailing whitespace of a final assistant turn (a prefill) is removed, as
//!   Anthropic refuses it;
//! - `max_tokens`, required by Anthropic, is [`DEFAULT_MAX_TOKENS`] when the
//!   request has none.
//!
//! ```
//! use agentmsg_runtime::providers::{anthropic, Request, StreamDecode};
//! use agentmsg_runtime::{Message, StopReason};
//!
//! let request = Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]).with_system("Be terse.");
//! let encoded = anthropic::encode_request(&request)?;
//! assert_eq!(encoded.body["max_tokens"], anthropic::DEFAULT_MAX_TOKENS);
//! assert_eq!(encoded.body["system"][0]["text"], "Be terse.");
//!
//! let reply = anthropic::decode_response(
//!     r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
//!         "content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn",
//!         "usage":{"input_tokens":9,"output_tokens":3,"cache_read_input_tokens":100}}"#,
//! )?;
//! assert_eq!((reply.text_content().as_str(), reply.stop_reason), ("Hello.", StopReason::Stop));
//! assert_eq!((reply.usage.input, reply.usage.cache_read), (9, 100));
//!
//! let mut stream = anthropic::StreamDecoder::new();
//! for event in [
//!     r#"{"type":"message_start","message":{"id":"msg_2","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}"#,
//!     r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
//!     r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
//!     r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"a.rs\"}"}}"#,
//!     r#"{"type":"content_block_stop","index":0}"#,
//!     r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#,
//!     r#"{"type":"message_stop"}"#,
//! ] {
//!     stream.push(event)?;
//! }
//! let message = stream.finish()?;
//! assert_eq!(message.stop_reason, StopReason::ToolUse);
//! assert_eq!(message.tool_calls().next().map(|c| c.arguments["path"].clone()), Some("a.rs".into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The decoders keep the blocks agentmsg models (text, thinking with its
//! signature, redacted thinking, tool use) in their order and skip the
//! server-side tool blocks (`server_tool_use`, `web_search_tool_result`,
//! `web_fetch_tool_result`, `code_execution_tool_result`, `mcp_tool_use`,
//! `compaction`, …) and text citations. A `fallback` block (the server switched
//! models) sets the message's `model` to the model that answered. `model` is
//! the id the response names (often dated, such as `claude-sonnet-4-5-20250929`).
//! Requests are encoded with the signatures of thinking made by exactly
//! `request.model` (see [`prepare`]), so store the id you request with if you
//! want thinking to replay.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{EncodeError, Encoded, Request, ResponseError, StreamDecode};
use crate::content::{
    AssistantContent, DocumentContent, ImageContent, MediaSource, RedactedThinkingContent,
    TextContent, ThinkingContent, ToolCall, ToolResultContent, UserContent,
};
use crate::message::{now_ms, AssistantMessage, Message, StopReason};
use crate::project::{prepare, ChangeKind, Report, Target};
use crate::usage::Usage;

/// The text of the user turn put before a conversation that opens with the
/// model's turn (both APIs want a user turn first).
pub(crate) const OPENING: &str = "(continued)";

/// The longest document `title` Anthropic takes, in characters (its request
/// schema's `maxLength`); a longer one is cut.
pub const MAX_DOCUMENT_TITLE: usize = 500;

/// The provider name written into decoded messages and used for the target.
pub const PROVIDER: &str = "anthropic";
/// The API identifier.
pub const API: &str = "anthropic-messages";
/// `max_tokens` when the request sets none (Anthropic requires the field; this is
/// the default the Vercel AI SDK uses too).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

// ---------------------------------------------------------------------------
// Encoding

/// Encodes a request as an Anthropic Messages body. Runs [`prepare`] for the
/// target `anthropic` (or [`Request::provider`]) / `anthropic-messages` /
/// `request.model` first, so any
/// projection of a transcript may be given.
///
/// # Errors
/// [`EncodeError::Invalid`] for an empty model, a tool name Anthropic rejects,
/// a tool schema that is not an object schema, or a conversation with no
/// message left to send.
pub fn encode_request(request: &Request) -> Result<Encoded, EncodeError> {
    if request.model.trim().is_empty() {
        return Err(invalid("model", "the model id is empty"));
    }
    let target = Target::new(request.provider_or(PROVIDER), API, &request.model);
    let prepared = prepare(&request.messages, &target);
    let origins: Vec<usize> = prepared.origins.iter().map(|o| o.index()).collect();
    let mut encoder = Encoder {
        report: prepared.report,
        turns: Vec::new(),
        system: Vec::new(),
    };
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        encoder.system.push(text_block(system));
    }
    let mut seen_conversation = false;
    for (message, &index) in prepared.messages.iter().zip(&origins) {
        match message {
            Message::System(system) => {
                if seen_conversation {
                    encoder.change(
                        index,
                        ChangeKind::UnsupportedContent,
                        "a system message in the conversation was moved to the top-level `system`",
                    );
                }
                for block in system.content.iter().filter(|t| !t.text.is_empty()) {
                    encoder.system.push(text_block(&block.text));
                }
            }
            Message::User(user) => {
                seen_conversation = true;
                let blocks = encoder.user_blocks(index, &user.content);
                encoder.push_turn(index, Role::User, blocks, false);
            }
            Message::Assistant(assistant) => {
                seen_conversation = true;
                let blocks = encoder.assistant_blocks(index, &assistant.content);
                encoder.push_turn(index, Role::Assistant, blocks, false);
            }
            Message::ToolResult(result) => {
                seen_conversation = true;
                let mut block = Map::new();
                block.insert("type".into(), "tool_result".into());
                block.insert("tool_use_id".into(), result.tool_call_id.as_str().into());
                let content = encoder.tool_result_content(index, &result.content);
                if !content.is_empty() {
                    block.insert("content".into(), Value::Array(content));
                } else if result.is_error {
                    block.insert("content".into(), json!([text_block("error")]));
                }
                if result.is_error {
                    block.insert("is_error".into(), true.into());
                }
                encoder.push_turn(index, Role::User, vec![Value::Object(block)], true);
            }
        }
    }
    encoder.open_with_user();
    encoder.trim_final_assistant();
    if encoder.turns.is_empty() {
        return Err(invalid("messages", "no message left to send"));
    }

    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    body.insert(
        "max_tokens".into(),
        request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
    );
    if !encoder.system.is_empty() {
        body.insert("system".into(), Value::Array(encoder.system));
    }
    let messages = encoder
        .turns
        .into_iter()
        .map(|turn| {
            let mut content = turn.content;
            if turn.role == Role::User {
                // tool_result blocks must open the user turn that answers the calls.
                content
                    .sort_by_key(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
            }
            json!({"role": turn.role.as_str(), "content": content})
        })
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools = Vec::with_capacity(request.tools.len());
        for (i, tool) in request.tools.iter().enumerate() {
            if request.tools.iter().take(i).any(|t| t.name == tool.name) {
                return Err(invalid(
                    format!("tools[{i}].name"),
                    format!("`{}` is declared twice", tool.name),
                ));
            }
            tools.push(encode_tool(i, tool)?);
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    Ok(Encoded {
        body: Value::Object(body),
        report: encoder.report,
    })
}

fn encode_tool(i: usize, tool: &super::ToolSpec) -> Result<Value, EncodeError> {
    let valid_name = !tool.name.is_empty()
        && tool.name.len() <= 128
        && tool
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(invalid(
            format!("tools[{i}].name"),
            format!(
                "`{}` does not match ^[a-zA-Z0-9_-]{{1,128}}$, which Anthropic requires",
                tool.name
            ),
        ));
    }
    let schema = match &tool.parameters {
        Value::Null => json!({"type": "object", "properties": {}}),
        Value::Object(map) if map.is_empty() => json!({"type": "object", "properties": {}}),
        Value::Object(map) => match map.get("type") {
            Some(Value::String(t)) if t == "object" => Value::Object(map.clone()),
            None => {
                let mut map = map.clone();
                map.insert("type".into(), "object".into());
                Value::Object(map)
            }
            Some(other) => {
                return Err(invalid(
                    format!("tools[{i}].parameters.type"),
                    format!("Anthropic takes only object schemas, found {other}"),
                ))
            }
        },
        other => {
            return Err(invalid(
                format!("tools[{i}].parameters"),
                format!("the schema must be a JSON object, found {other}"),
            ))
        }
    };
    let mut out = Map::new();
    out.insert("name".into(), tool.name.clone().into());
    if !tool.description.is_empty() {
        out.insert("description".into(), tool.description.clone().into());
    }
    out.insert("input_schema".into(), schema);
    Ok(Value::Object(out))
}

fn invalid(path: impl Into<String>, message: impl Into<String>) -> EncodeError {
    EncodeError::Invalid {
        path: path.into(),
        message: message.into(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
        }
    }
}

struct Turn {
    role: Role,
    content: Vec<Value>,
    /// The input index of the first message in the turn.
    first_index: usize,
    /// The input index of the last message in the turn.
    last_index: usize,
    /// Whether the turn so far holds only tool results.
    only_results: bool,
}

struct Encoder {
    report: Report,
    turns: Vec<Turn>,
    system: Vec<Value>,
}

impl Encoder {
    fn change(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.report.record(index, kind, detail);
    }

    /// The conversation must open with a user turn; one that opens with the
    /// model's gets a short user turn before it.
    fn open_with_user(&mut self) {
        let Some(first) = self.turns.first().filter(|t| t.role == Role::Assistant) else {
            return;
        };
        let index = first.first_index;
        self.turns.insert(
            0,
            Turn {
                role: Role::User,
                content: vec![text_block(OPENING)],
                first_index: index,
                last_index: index,
                only_results: false,
            },
        );
        self.change(
            index,
            ChangeKind::UnsupportedContent,
            format!("the conversation opened with the model's turn: a user turn `{OPENING}` was put before it"),
        );
    }

    fn push_turn(&mut self, index: usize, role: Role, content: Vec<Value>, is_result: bool) {
        if content.is_empty() {
            self.change(
                index,
                ChangeKind::UnsupportedContent,
                format!(
                    "a {} message with nothing Anthropic can take was dropped",
                    if is_result {
                        "tool result"
                    } else {
                        role.as_str()
                    }
                ),
            );
            return;
        }
        if let Some(last) = self.turns.last_mut() {
            if last.role == role {
                let expected = is_result && last.only_results;
                last.content.extend(content);
                last.last_index = index;
                last.only_results &= is_result;
                if !expected {
                    self.change(
                        index,
                        ChangeKind::MergedTurns,
                        format!("merged into the previous {} turn", role.as_str()),
                    );
                }
                return;
            }
        }
        self.turns.push(Turn {
            role,
            content,
            first_index: index,
            last_index: index,
            only_results: is_result,
        });
    }

    /// A conversation that ends with an assistant turn asks the model to go on
    /// from it, and Anthropic refuses such a turn when it ends in whitespace.
    fn trim_final_assistant(&mut self) {
        let Some(turn) = self.turns.last_mut().filter(|t| t.role == Role::Assistant) else {
            return;
        };
        let index = turn.last_index;
        let Some(Value::Object(block)) = turn.content.last_mut() else {
            return;
        };
        let Some(Value::String(text)) = block.get_mut("text") else {
            return;
        };
        let trimmed = text.trim_end().len();
        if trimmed == text.len() {
            return;
        }
        text.truncate(trimmed);
        if trimmed == 0 {
            turn.content.pop();
            if turn.content.is_empty() {
                self.turns.pop();
            }
        }
        self.change(
            index,
            ChangeKind::UnsupportedContent,
            "trailing whitespace removed from the final assistant turn, which Anthropic refuses",
        );
    }

    fn user_blocks(&mut self, index: usize, content: &[UserContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                UserContent::Text(t) => {
                    if !t.text.is_empty() {
                        out.push(text_block(&t.text));
                    }
                }
                UserContent::Image(image) => out.push(self.image_block(index, image)),
                UserContent::Audio(audio) => {
                    self.change(
                        index,
                        ChangeKind::UnsupportedContent,
                        format!(
                            "Anthropic takes no audio input: a {} clip became a text placeholder",
                            audio.mime_type
                        ),
                    );
                    out.push(text_block(&format!(
                        "[audio ({}) omitted: this model does not take audio]",
                        audio.mime_type
                    )));
                }
                UserContent::Document(document) => out.push(self.document_block(index, document)),
            }
        }
        out
    }

    fn image_block(&mut self, index: usize, image: &ImageContent) -> Value {
        match &image.source {
            MediaSource::Base64 { data, mime_type } => {
                if IMAGE_TYPES.contains(&mime_type.as_str()) {
                    json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
                } else {
                    self.change(
                        index,
                        ChangeKind::ImagePlaceholder,
                        format!(
                            "Anthropic does not read {mime_type} images: sent a text placeholder"
                        ),
                    );
                    text_block(&format!(
                        "[image ({mime_type}) omitted: unsupported format]"
                    ))
                }
            }
            MediaSource::Url(url) => {
                json!({"type": "image", "source": {"type": "url", "url": url}})
            }
        }
    }

    fn document_block(&mut self, index: usize, document: &DocumentContent) -> Value {
        let source = match &document.source {
            MediaSource::Base64 { data, mime_type } if mime_type == "application/pdf" => {
                json!({"type": "base64", "media_type": "application/pdf", "data": data})
            }
            MediaSource::Base64 { data, mime_type } if mime_type.starts_with("text/") => {
                use base64::Engine as _;
                let text = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok());
                match text {
                    Some(text) => json!({"type": "text", "media_type": "text/plain", "data": text}),
                    None => {
                        self.change(
                            index,
                            ChangeKind::UnsupportedContent,
                            format!("a {mime_type} document is not valid base64 UTF-8: sent a text placeholder"),
                        );
                        return text_block(&format!(
                            "[document ({mime_type}) omitted: unreadable]"
                        ));
                    }
                }
            }
            MediaSource::Base64 { mime_type, .. } => {
                self.change(
                    index,
                    ChangeKind::UnsupportedContent,
                    format!("Anthropic reads PDF and plain-text documents, not {mime_type}: sent a text placeholder"),
                );
                return text_block(&format!(
                    "[document{} ({mime_type}) omitted: unsupported format]",
                    document
                        .title
                        .as_deref()
                        .map(|t| format!(" \"{t}\""))
                        .unwrap_or_default()
                ));
            }
            MediaSource::Url(url) => json!({"type": "url", "url": url}),
        };
        let mut block = Map::new();
        block.insert("type".into(), "document".into());
        block.insert("source".into(), source);
        if let Some(title) = document.title.as_deref().filter(|t| !t.is_empty()) {
            // The request schema takes a `title` of 1 to 500 characters.
            let short = match title.char_indices().nth(MAX_DOCUMENT_TITLE) {
                Some((end, _)) => {
                    self.change(
                        index,
                        ChangeKind::UnsupportedContent,
                        format!(
                            "document title cut to the {MAX_DOCUMENT_TITLE} characters Anthropic takes"
                        ),
                    );
                    &title[..end]
                }
                None => title,
            };
            block.insert("title".into(), short.into());
        }
        Value::Object(block)
    }

    fn assistant_blocks(&mut self, index: usize, content: &[AssistantContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                AssistantContent::Text(t) => {
                    if !t.text.is_empty() {
                        out.push(text_block(&t.text));
                    }
                }
                AssistantContent::Thinking(thinking) => match thinking.signature() {
                    Some(signature) => out.push(json!({
                        "type": "thinking",
                        "thinking": thinking.thinking,
                        "signature": signature,
                    })),
                    None => self.change(
                        index,
                        ChangeKind::DroppedThinking,
                        "thinking without a signature cannot be replayed to Anthropic: dropped",
                    ),
                },
                AssistantContent::RedactedThinking(r) => {
                    out.push(json!({"type": "redacted_thinking", "data": r.data}));
                }
                AssistantContent::ToolCall(call) => out.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": call.arguments,
                })),
            }
        }
        out
    }

    fn tool_result_content(&mut self, index: usize, content: &[ToolResultContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                ToolResultContent::Text(t) => {
                    if !t.text.is_empty() {
                        out.push(text_block(&t.text));
                    }
                }
                ToolResultContent::Image(image) => out.push(self.image_block(index, image)),
            }
        }
        out
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

// ---------------------------------------------------------------------------
// Decoding

/// A response body or the `message` of a `message_start` event.
#[derive(Deserialize)]
struct WireMessage {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Option<Vec<Value>>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    stop_details: Option<StopDetails>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Debug, Deserialize, Default, Clone)]
struct StopDetails {
    #[serde(default)]
    explanation: Option<String>,
    #[serde(default)]
    category: Option<String>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

impl WireError {
    fn describe(&self) -> String {
        match (&self.kind, &self.message) {
            (Some(kind), Some(message)) => format!("{kind}: {message}"),
            (None, Some(message)) => message.clone(),
            (Some(kind), None) => kind.clone(),
            (None, None) => "unknown error".to_owned(),
        }
    }
}

/// The content blocks agentmsg models; every other type is skipped.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
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
        input: Value,
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
    let wire: WireMessage = serde_json::from_str(body).map_err(|source| ResponseError::Json {
        event: None,
        source,
    })?;
    let mut message = base_message();
    if wire.kind.as_deref() == Some("error") || wire.error.is_some() {
        message.stop_reason = StopReason::Error;
        message.error_message = Some(
            wire.error
                .as_ref()
                .map_or_else(|| "unknown error".to_owned(), WireError::describe),
        );
        return Ok(message);
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
        let block: WireBlock =
            serde_json::from_value(block).map_err(|e| ResponseError::Invalid {
                event: None,
                path: format!("content[{i}]"),
                message: e.to_string(),
            })?;
        if let Some(content) = block_content(block, None, &format!("content[{i}].input"))? {
            message.content.push(content);
        }
    }
    if let Some(usage) = wire.usage {
        message.usage = usage_from(&usage);
    }
    apply_stop(
        &mut message,
        wire.stop_reason.as_deref(),
        wire.stop_details.as_ref(),
    );
    Ok(message)
}

fn base_message() -> AssistantMessage {
    AssistantMessage {
        api: API.to_owned(),
        provider: PROVIDER.to_owned(),
        timestamp: now_ms(),
        ..AssistantMessage::default()
    }
}

fn block_content(
    block: WireBlock,
    event: Option<usize>,
    path: &str,
) -> Result<Option<AssistantContent>, ResponseError> {
    Ok(match block {
        WireBlock::Text { text } => Some(AssistantContent::Text(TextContent::new(text))),
        WireBlock::Thinking {
            thinking,
            signature,
        } => Some(AssistantContent::Thinking(ThinkingContent {
            thinking,
            signature: signature.filter(|s| !s.is_empty()),
        })),
        WireBlock::RedactedThinking { data } => Some(AssistantContent::RedactedThinking(
            RedactedThinkingContent::new(data),
        )),
        WireBlock::ToolUse { id, name, input } => {
            let input = match input {
                Value::Object(_) | Value::Null => input,
                other => {
                    return Err(ResponseError::Invalid {
                        event,
                        path: path.to_owned(),
                        message: format!("tool input must be a JSON object, found {other}"),
                    })
                }
            };
            Some(AssistantContent::ToolCall(ToolCall::new(id, name, input)))
        }
        WireBlock::Other => None,
    })
}

fn usage_from(usage: &WireUsage) -> Usage {
    let mut out = Usage::default();
    apply_usage(&mut out, usage);
    out
}

fn apply_usage(out: &mut Usage, usage: &WireUsage) {
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
    out.total_tokens = Some(
        out.input
            .saturating_add(out.output)
            .saturating_add(out.cache_read)
            .saturating_add(out.cache_write),
    );
}

fn apply_stop(message: &mut AssistantMessage, reason: Option<&str>, details: Option<&StopDetails>) {
    message.stop_reason = match reason {
        Some("end_turn" | "stop_sequence") | None => StopReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => StopReason::Length,
        Some("tool_use") => StopReason::ToolUse,
        Some("refusal") => StopReason::GuardRail,
        Some("pause_turn") => StopReason::Paused,
        Some(other) => {
            message.error_message = Some(format!("unknown stop_reason `{other}`"));
            StopReason::Error
        }
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

// ---------------------------------------------------------------------------
// Streaming

/// One stream event, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
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
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    stop_details: Option<StopDetails>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
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
enum Open {
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
enum Slot {
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
    events: usize,
    message: Option<AssistantMessage>,
    slots: BTreeMap<usize, Slot>,
    /// The finished blocks, by stream index (kept in that order).
    done: BTreeMap<usize, AssistantContent>,
    usage: Usage,
    stop_reason: Option<String>,
    stop_details: Option<StopDetails>,
    stopped: bool,
    error: Option<String>,
    failed: Option<(usize, String)>,
}

impl StreamDecoder {
    /// A decoder waiting for `message_start`.
    pub fn new() -> Self {
        Self::default()
    }

    fn fail(&mut self, event: usize, path: &str, message: impl Into<String>) -> ResponseError {
        let message = message.into();
        self.failed = Some((event, format!("{path}: {message}")));
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
                            self.failed = Some((index, e.to_string()));
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
                    _ => Open::Skipped,
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
        let index = self.events;
        self.events += 1;
        if let Some((at, why)) = &self.failed {
            return Err(ResponseError::Invalid {
                event: Some(index),
                path: "stream".to_owned(),
                message: format!("the stream already failed at event {at}: {why}"),
            });
        }
        let parsed: WireEvent = match serde_json::from_str(event) {
            Ok(parsed) => parsed,
            Err(source) => {
                self.failed = Some((index, format!("invalid JSON: {source}")));
                return Err(ResponseError::Json {
                    event: Some(index),
                    source,
                });
            }
        };
        self.handle(index, parsed)
    }

    fn finish(self) -> Result<AssistantMessage, ResponseError> {
        if let Some((event, why)) = self.failed {
            return Err(ResponseError::Invalid {
                event: Some(event),
                path: "stream".to_owned(),
                message: why,
            });
        }
        if let Some(error) = self.error {
            let mut message = self.message.unwrap_or_else(base_message);
            message.content.extend(self.done.into_values());
            message.usage = self.usage;
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return Ok(message);
        }
        let Some(mut message) = self.message else {
            return Err(ResponseError::Truncated {
                events: self.events,
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
                events: self.events,
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
                events: self.events,
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
        Ok(message)
    }
}
