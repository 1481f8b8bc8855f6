//! Google Gemini `generateContent` (`google-generative-ai`): request encoder,
//! response decoder and stream decoder.
//!
//! A request body, as [`encode_request`] writes it (the model is in the URL, not
//! the body):
//!
//! ```json
//! {"systemInstruction":{"parts":[{"text":"Be terse."}]},
//!  "contents":[{"role":"user","parts":[{"text":"Hi"}]}],
//!  "generationConfig":{"maxOutputTokens":1024}}
//! ```
//!
//! Mapping, with what is changed recorded in the [`Report`]:
//! - roles are `user` and `model`; tool results are `functionResponse` parts of a
//!   user turn (all results of one round in one turn, before any other part), and
//!   consecutive turns of one role are merged;
//! - images, audio and documents are `inlineData` (base64) or `fileData` (URL);
//!   inline images other than PNG, JPEG, WebP, HEIC and HEIF, and documents other
//!   than PDF and text, become a text placeholder; a document's title is not sent;
//!   images left inside tool results follow the `functionResponse` parts as
//!   `inlineData`;
//! - `functionResponse.response` is `{"output": text}`, or `{"error": text}`
//!   for a failed call;
//! - thinking is a `thought: true` part; `thoughtSignature` goes back on the part
//!   that carried it;
//! - tools are `functionDeclarations` with the JSON Schema in
//!   `parametersJsonSchema` (the `parameters` field takes only Gemini's OpenAPI
//!   subset).
//!
//! ```
//! use agentmsg_runtime::providers::{gemini, Request, StreamDecode};
//! use agentmsg_runtime::{Message, StopReason};
//!
//! let request = Request::new("gemini-2.5-flash", vec![Message::user("Hi")]).with_max_tokens(256);
//! let body = gemini::encode_request(&request)?.body;
//! assert_eq!(body["contents"][0]["parts"][0]["text"], "Hi");
//! assert_eq!(body["generationConfig"]["maxOutputTokens"], 256);
//!
//! let mut stream = gemini::StreamDecoder::new();
//! for chunk in [
//!     r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"r1","modelVersion":"gemini-2.5-flash"}"#,
//!     r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"lo."}]},"finishReason":"STOP"}],"responseId":"r1",
//!        "usageMetadata":{"promptTokenCount":12,"cachedContentTokenCount":8,"candidatesTokenCount":2,"thoughtsTokenCount":5}}"#,
//! ] {
//!     stream.push(chunk)?;
//! }
//! let message = stream.finish()?;
//! assert_eq!((message.text_content().as_str(), message.stop_reason), ("Hello.", StopReason::Stop));
//! // promptTokenCount includes the cached tokens; output includes the thoughts.
//! assert_eq!((message.usage.input, message.usage.cache_read), (4, 8));
//! assert_eq!((message.usage.output, message.usage.reasoning), (7, 5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Gemini may put a `thoughtSignature` on a plain text part. The decoders keep it
//! as the text block's `signature` (as pi keeps it, as `textSignature`): a signed
//! part ends its block, so each signature stays with the text it came with, and
//! the signature of a part agentmsg does not model is kept on an empty text
//! block. The encoder sends it back on the text's part. Function calls that come
//! without an `id` get a deterministic one (`call_` and 16 hex digits of a hash
//! of the response id, the call's position, name and arguments). Parts agentmsg
//! does not model (`inlineData` output, `executableCode`, `codeExecutionResult`)
//! are skipped; only the first candidate is read.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::{EncodeError, Encoded, Request, ResponseError, StreamDecode, ToolSpec};
use crate::content::{
    AssistantContent, DocumentContent, ImageContent, MediaSource, TextContent, ThinkingContent,
    ToolCall, ToolResultContent, UserContent,
};
use crate::message::{now_ms, AssistantMessage, Message, StopReason};
use crate::project::{prepare, ChangeKind, Report, Target};
use crate::usage::Usage;

const IMAGE_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

/// The text of the user turn put before a conversation that opens with the
/// model's turn (both APIs want a user turn first).
pub(crate) const OPENING: &str = "(continued)";

/// The provider name written into decoded messages and used for the target.
pub const PROVIDER: &str = "google";
/// The API identifier.
pub const API: &str = "google-generative-ai";
/// The signature Google documents for function calls that a Gemini 3 model did
/// not make itself (a transcript from another model), so that its signature
/// validation lets them through.
pub(crate) const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

// ---------------------------------------------------------------------------
// Encoding

/// Encodes a request as a Gemini `generateContent` body. Runs [`prepare`] for
/// the target `google` (or [`Request::provider`]) / `google-generative-ai` /
/// `request.model` first.
///
/// # Errors
/// [`EncodeError::Invalid`] for an empty model, a function name Gemini rejects,
/// a tool schema that is not a JSON object, or a conversation with no message
/// left to send.
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
        gemini3: request.model.contains("gemini-3"),
    };
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        encoder.system.push(json!({ "text": system }));
    }
    let mut seen_conversation = false;
    let mut call_names: BTreeMap<String, String> = BTreeMap::new();
    for (message, &index) in prepared.messages.iter().zip(&origins) {
        match message {
            Message::System(system) => {
                if seen_conversation {
                    encoder.change(
                        index,
                        ChangeKind::UnsupportedContent,
                        "a system message in the conversation was moved to `systemInstruction`",
                    );
                }
                for block in system.content.iter().filter(|t| !t.text.is_empty()) {
                    encoder.system.push(json!({ "text": block.text }));
                }
            }
            Message::User(user) => {
                seen_conversation = true;
                let parts = encoder.user_parts(index, &user.content);
                encoder.push_turn(index, Role::User, parts, false);
            }
            Message::Assistant(assistant) => {
                seen_conversation = true;
                for call in assistant.tool_calls() {
                    call_names.insert(call.id.clone(), call.name.clone());
                }
                let parts = encoder.model_parts(index, &assistant.content);
                encoder.push_turn(index, Role::Model, parts, false);
            }
            Message::ToolResult(result) => {
                seen_conversation = true;
                let text = result
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        ToolResultContent::Text(t) => Some(t.text.as_str()),
                        ToolResultContent::Image(_) => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let response = if result.is_error {
                    json!({ "error": text })
                } else {
                    json!({ "output": text })
                };
                // Gemini matches a response to its call by name: take the
                // call's when the result has none.
                let name = match result.tool_name.as_str() {
                    "" => call_names
                        .get(&result.tool_call_id)
                        .cloned()
                        .unwrap_or_default(),
                    name => name.to_owned(),
                };
                let mut parts = vec![json!({"functionResponse": {
                    "id": result.tool_call_id,
                    "name": name,
                    "response": response,
                }})];
                let images: Vec<&ImageContent> = result
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        ToolResultContent::Image(image) => Some(image),
                        ToolResultContent::Text(_) => None,
                    })
                    .collect();
                if !images.is_empty() {
                    encoder.change(
                        index,
                        ChangeKind::MovedImages,
                        format!(
                            "{} image(s) of the tool result sent as parts after the function responses",
                            images.len()
                        ),
                    );
                    for image in images {
                        parts.push(media_part(
                            &image.source,
                            guess_mime(&image.source, "image/png"),
                        ));
                    }
                }
                encoder.push_turn(index, Role::User, parts, true);
            }
        }
    }
    encoder.open_with_user();
    if encoder.turns.is_empty() {
        return Err(invalid("contents", "no message left to send"));
    }

    let mut body = Map::new();
    if !encoder.system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({ "parts": encoder.system }),
        );
    }
    let mut calls: Vec<String> = Vec::new();
    let contents: Vec<Value> = encoder
        .turns
        .into_iter()
        .map(|turn| {
            let mut parts = turn.parts;
            if turn.role == Role::User {
                // Responses first, in the order of the calls they answer.
                parts.sort_by_key(|p| {
                    let id = p.pointer("/functionResponse/id").and_then(Value::as_str);
                    match id {
                        Some(id) => (0, calls.iter().position(|c| c == id).unwrap_or(usize::MAX)),
                        None if p.get("functionResponse").is_some() => (0, usize::MAX),
                        None => (1, 0),
                    }
                });
                calls.clear();
            } else {
                calls = parts
                    .iter()
                    .filter_map(|p| p.pointer("/functionCall/id").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect();
            }
            json!({"role": turn.role.as_str(), "parts": parts})
        })
        .collect();
    body.insert("contents".into(), Value::Array(contents));
    if !request.tools.is_empty() {
        let mut declarations = Vec::with_capacity(request.tools.len());
        for (i, tool) in request.tools.iter().enumerate() {
            if request.tools.iter().take(i).any(|t| t.name == tool.name) {
                return Err(invalid(
                    format!("tools[{i}].name"),
                    format!("`{}` is declared twice", tool.name),
                ));
            }
            declarations.push(encode_tool(i, tool)?);
        }
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    if let Some(max) = request.max_tokens {
        body.insert(
            "generationConfig".into(),
            json!({ "maxOutputTokens": max.min(i32::MAX as u32) }),
        );
    }
    Ok(Encoded {
        body: Value::Object(body),
        report: encoder.report,
    })
}

fn encode_tool(i: usize, tool: &ToolSpec) -> Result<Value, EncodeError> {
    let mut chars = tool.name.chars();
    let valid_name = tool.name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    if !valid_name {
        return Err(invalid(
            format!("tools[{i}].name"),
            format!(
                "`{}` is not a Gemini function name (a letter or `_`, then letters, digits, `_ . : -`; at most 64)",
                tool.name
            ),
        ));
    }
    let schema = match &tool.parameters {
        Value::Null => None,
        Value::Object(map) if map.is_empty() => None,
        Value::Object(map) => Some(Value::Object(map.clone())),
        other => {
            return Err(invalid(
                format!("tools[{i}].parameters"),
                format!("the schema must be a JSON object, found {other}"),
            ))
        }
    };
    let mut out = Map::new();
    out.insert("name".into(), tool.name.clone().into());
    out.insert("description".into(), tool.description.clone().into());
    if let Some(schema) = schema {
        out.insert("parametersJsonSchema".into(), schema);
    }
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
    Model,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Model => "model",
        }
    }
}

struct Turn {
    role: Role,
    parts: Vec<Value>,
    /// The input index of the first message in the turn.
    first_index: usize,
    only_results: bool,
}

struct Encoder {
    report: Report,
    turns: Vec<Turn>,
    system: Vec<Value>,
    gemini3: bool,
}

impl Encoder {
    fn change(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.report.record(index, kind, detail);
    }

    /// The conversation must open with a user turn; one that opens with the
    /// model's gets a short user turn before it.
    fn open_with_user(&mut self) {
        let Some(first) = self.turns.first().filter(|t| t.role == Role::Model) else {
            return;
        };
        let index = first.first_index;
        self.turns.insert(
            0,
            Turn {
                role: Role::User,
                parts: vec![json!({ "text": OPENING })],
                first_index: index,
                only_results: false,
            },
        );
        self.change(
            index,
            ChangeKind::UnsupportedContent,
            format!("the conversation opened with the model's turn: a user turn `{OPENING}` was put before it"),
        );
    }

    fn push_turn(&mut self, index: usize, role: Role, parts: Vec<Value>, is_result: bool) {
        if parts.is_empty() {
            self.change(
                index,
                ChangeKind::UnsupportedContent,
                format!(
                    "a {} message with nothing Gemini can take was dropped",
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
                last.parts.extend(parts);
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
            parts,
            first_index: index,
            only_results: is_result,
        });
    }

    fn user_parts(&mut self, index: usize, content: &[UserContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                UserContent::Text(t) => {
                    if !t.text.is_empty() {
                        out.push(json!({ "text": t.text }));
                    }
                }
                UserContent::Image(ImageContent { source }) => match source.mime_type() {
                    Some(mime) if !IMAGE_TYPES.contains(&mime) => {
                        self.change(
                            index,
                            ChangeKind::ImagePlaceholder,
                            format!("Gemini does not read {mime} images: sent a text placeholder"),
                        );
                        out.push(json!({ "text": format!("[image ({mime}) omitted: unsupported format]") }));
                    }
                    _ => out.push(media_part(source, guess_mime(source, "image/png"))),
                },
                UserContent::Audio(audio) => out.push(json!({"inlineData": {
                    "mimeType": audio.mime_type,
                    "data": audio.data,
                }})),
                UserContent::Document(document) => out.push(self.document_part(index, document)),
            }
        }
        out
    }

    fn document_part(&mut self, index: usize, document: &DocumentContent) -> Value {
        if let Some(mime) = document.source.mime_type() {
            let readable = mime == "application/pdf"
                || mime.starts_with("text/")
                || matches!(
                    mime,
                    "application/json" | "application/xml" | "application/rtf"
                );
            if !readable {
                self.change(
                    index,
                    ChangeKind::UnsupportedContent,
                    format!(
                        "Gemini reads PDF and text documents, not {mime}: sent a text placeholder"
                    ),
                );
                return json!({ "text": format!("[document ({mime}) omitted: unsupported format]") });
            }
        }
        if let Some(title) = document.title.as_deref().filter(|t| !t.is_empty()) {
            self.change(
                index,
                ChangeKind::UnsupportedContent,
                format!("Gemini takes no document title: `{title}` was not sent"),
            );
        }
        media_part(
            &document.source,
            guess_mime(&document.source, "application/pdf"),
        )
    }

    fn model_parts(&mut self, index: usize, content: &[AssistantContent]) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::with_capacity(content.len());
        // Gemini 3 validates the signature of the first call of each step.
        let mut first_call = true;
        for block in content {
            match block {
                AssistantContent::Text(t) => match t.signature() {
                    Some(signature) => {
                        out.push(json!({ "text": t.text, "thoughtSignature": signature }));
                    }
                    None if !t.text.is_empty() => out.push(json!({ "text": t.text })),
                    None => {}
                },
                AssistantContent::Thinking(thinking) => match thinking.signature() {
                    Some(signature) => out.push(json!({
                        "text": thinking.thinking,
                        "thought": true,
                        "thoughtSignature": signature,
                    })),
                    None if !thinking.thinking.is_empty() => {
                        out.push(json!({"text": thinking.thinking, "thought": true}));
                    }
                    None => {}
                },
                AssistantContent::RedactedThinking(_) => self.change(
                    index,
                    ChangeKind::DroppedThinking,
                    "Gemini has no redacted thinking: the block was dropped",
                ),
                AssistantContent::ToolCall(call) => {
                    let mut part = Map::new();
                    part.insert(
                        "functionCall".into(),
                        json!({"id": call.id, "name": call.name, "args": call.arguments}),
                    );
                    match call.signature() {
                        Some(signature) => {
                            part.insert("thoughtSignature".into(), signature.into());
                        }
                        None if self.gemini3 && first_call => {
                            part.insert("thoughtSignature".into(), SKIP_SIGNATURE.into());
                            self.change(
                                index,
                                ChangeKind::UnsupportedContent,
                                format!(
                                    "function call `{}` has no thought signature: sent with `{SKIP_SIGNATURE}`",
                                    call.id
                                ),
                            );
                        }
                        None => {}
                    }
                    first_call = false;
                    out.push(Value::Object(part));
                }
            }
        }
        out
    }
}

fn media_part(source: &MediaSource, mime: Option<String>) -> Value {
    match source {
        MediaSource::Base64 { data, mime_type } => {
            json!({"inlineData": {"mimeType": mime_type, "data": data}})
        }
        MediaSource::Url(url) => {
            let mut file = Map::new();
            file.insert("fileUri".into(), url.clone().into());
            if let Some(mime) = mime {
                file.insert("mimeType".into(), mime.into());
            }
            json!({ "fileData": file })
        }
    }
}

/// The MIME type of a URL source from its extension, else `fallback`.
fn guess_mime(source: &MediaSource, fallback: &str) -> Option<String> {
    let MediaSource::Url(url) = source else {
        return source.mime_type().map(str::to_owned);
    };
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let mime = match ext.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("heic") => "image/heic",
        Some("pdf") => "application/pdf",
        Some("txt") => "text/plain",
        Some("mp3") => "audio/mpeg",
        Some("wav") => "audio/wav",
        _ => fallback,
    };
    Some(mime.to_owned())
}

// ---------------------------------------------------------------------------
// Decoding

/// A `generateContent` response, or one stream chunk.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default)]
    candidates: Option<Vec<WireCandidate>>,
    #[serde(default)]
    usage_metadata: Option<WireUsage>,
    #[serde(default)]
    model_version: Option<String>,
    #[serde(default)]
    response_id: Option<String>,
    #[serde(default)]
    prompt_feedback: Option<PromptFeedback>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCandidate {
    #[serde(default)]
    content: Option<WireContent>,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    finish_message: Option<String>,
}

#[derive(Deserialize)]
struct WireContent {
    #[serde(default)]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(default)]
    thought_signature: Option<String>,
    #[serde(default)]
    function_call: Option<WireFunctionCall>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireFunctionCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    partial_args: Vec<PartialArg>,
    #[serde(default)]
    will_continue: Option<bool>,
}

/// One piece of streamed function-call arguments (Vertex AI).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PartialArg {
    json_path: String,
    #[serde(default)]
    string_value: Option<String>,
    #[serde(default)]
    number_value: Option<serde_json::Number>,
    #[serde(default)]
    bool_value: Option<bool>,
    #[serde(default)]
    will_continue: Option<bool>,
}

#[derive(Debug, Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: Option<u64>,
    #[serde(default)]
    candidates_token_count: Option<u64>,
    #[serde(default)]
    cached_content_token_count: Option<u64>,
    #[serde(default)]
    thoughts_token_count: Option<u64>,
    #[serde(default)]
    tool_use_prompt_token_count: Option<u64>,
    #[serde(default)]
    total_token_count: Option<u64>,
}

impl WireUsage {
    fn has_counts(&self) -> bool {
        self.prompt_token_count.is_some()
            || self.candidates_token_count.is_some()
            || self.total_token_count.is_some()
    }

    /// Gemini's `promptTokenCount` includes the cached tokens, so `input` is
    /// what remains after taking them out; `output` includes the thoughts.
    fn to_usage(self) -> Usage {
        let cached = self.cached_content_token_count.unwrap_or(0);
        let prompt = self.prompt_token_count.unwrap_or(0);
        let thoughts = self.thoughts_token_count.unwrap_or(0);
        let input = prompt
            .saturating_sub(cached)
            .saturating_add(self.tool_use_prompt_token_count.unwrap_or(0));
        let output = self
            .candidates_token_count
            .unwrap_or(0)
            .saturating_add(thoughts);
        Usage {
            input,
            output,
            reasoning: thoughts,
            cache_read: cached,
            cache_write: 0,
            total_tokens: Some(
                self.total_token_count
                    .unwrap_or_else(|| input.saturating_add(output).saturating_add(cached)),
            ),
            cost: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    #[serde(default)]
    block_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(default)]
    code: Option<i64>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

impl WireError {
    fn describe(&self) -> String {
        let mut out = String::new();
        if let Some(status) = &self.status {
            out.push_str(status);
        }
        if let Some(code) = self.code {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&format!("({code})"));
        }
        if let Some(message) = &self.message {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(message);
        }
        if out.is_empty() {
            out.push_str("unknown error");
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenText {
    None,
    Text,
    Thought,
}

/// Folds parts, in order, into assistant content. Shared by the body and the
/// stream decoder so both give the same blocks.
#[derive(Debug)]
struct Builder {
    content: Vec<AssistantContent>,
    open: OpenText,
    /// The content index of a function call whose arguments are still streaming,
    /// and the JSON path of a string that continues in the next piece.
    streaming: Option<(usize, Option<String>)>,
}

impl Builder {
    fn new() -> Self {
        Self {
            content: Vec::new(),
            open: OpenText::None,
            streaming: None,
        }
    }

    fn part(
        &mut self,
        part: WirePart,
        event: Option<usize>,
        path: &str,
    ) -> Result<(), ResponseError> {
        let signature = part.thought_signature.filter(|s| !s.is_empty());
        if let Some(call) = part.function_call {
            self.open = OpenText::None;
            return self.function_call(call, signature, event, &format!("{path}.functionCall"));
        }
        match part.text {
            Some(text) if part.thought == Some(true) => {
                let signed = signature.is_some();
                match (self.open, self.content.last_mut()) {
                    (OpenText::Thought, Some(AssistantContent::Thinking(t))) => {
                        t.thinking.push_str(&text);
                        if signature.is_some() {
                            t.signature = signature;
                        }
                    }
                    _ => self
                        .content
                        .push(AssistantContent::Thinking(ThinkingContent {
                            thinking: text,
                            signature,
                        })),
                }
                self.open = if signed {
                    OpenText::None
                } else {
                    OpenText::Thought
                };
            }
            Some(text) => {
                let open = match (self.open, self.content.last_mut()) {
                    (OpenText::Text, Some(AssistantContent::Text(t))) => {
                        t.text.push_str(&text);
                        Some(t)
                    }
                    _ if !text.is_empty() || signature.is_some() => {
                        self.content
                            .push(AssistantContent::Text(TextContent::new(text)));
                        match self.content.last_mut() {
                            Some(AssistantContent::Text(t)) => Some(t),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                self.open = match (open, signature) {
                    // A signed part ends its block: the signature stays with its text.
                    (Some(t), Some(signature)) => {
                        t.signature = Some(signature);
                        OpenText::None
                    }
                    (Some(_), None) => OpenText::Text,
                    (None, _) => self.open,
                };
            }
            None => {
                // inlineData, executableCode, codeExecutionResult… are not modelled;
                // their signature is kept on an empty text block.
                self.open = OpenText::None;
                if let Some(signature) = signature {
                    self.content.push(AssistantContent::Text(
                        TextContent::new("").with_signature(signature),
                    ));
                }
            }
        }
        Ok(())
    }

    fn function_call(
        &mut self,
        call: WireFunctionCall,
        signature: Option<String>,
        event: Option<usize>,
        path: &str,
    ) -> Result<(), ResponseError> {
        if let Some(name) = call.name.filter(|n| !n.is_empty()) {
            self.streaming = None;
            let args = match call.args {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(args @ Value::Object(_)) => args,
                Some(other) => {
                    return Err(ResponseError::Invalid {
                        event,
                        path: format!("{path}.args"),
                        message: format!("arguments must be a JSON object, found {other}"),
                    })
                }
            };
            let mut tool = ToolCall::new(call.id.unwrap_or_default(), name, args);
            tool.signature = signature;
            self.content.push(AssistantContent::ToolCall(tool));
            if call.will_continue == Some(true) {
                self.streaming = Some((self.content.len() - 1, None));
                self.apply_partial(call.partial_args, event, path)?;
            }
            return Ok(());
        }
        if self.streaming.is_none() {
            if call.partial_args.is_empty() {
                return Ok(());
            }
            return Err(ResponseError::Invalid {
                event,
                path: format!("{path}.partialArgs"),
                message: "argument pieces without a function call in progress".to_owned(),
            });
        }
        self.apply_partial(call.partial_args, event, path)?;
        if call.will_continue != Some(true) {
            self.streaming = None;
        }
        Ok(())
    }

    fn apply_partial(
        &mut self,
        pieces: Vec<PartialArg>,
        event: Option<usize>,
        path: &str,
    ) -> Result<(), ResponseError> {
        let Some((index, continuing)) = self.streaming.as_mut() else {
            return Ok(());
        };
        let Some(AssistantContent::ToolCall(call)) = self.content.get_mut(*index) else {
            return Ok(());
        };
        for (j, piece) in pieces.into_iter().enumerate() {
            let at = format!("{path}.partialArgs[{j}].jsonPath");
            let segments =
                parse_json_path(&piece.json_path).ok_or_else(|| ResponseError::Invalid {
                    event,
                    path: at.clone(),
                    message: format!("cannot read JSON path `{}`", piece.json_path),
                })?;
            let slot =
                slot_at(&mut call.arguments, &segments).ok_or_else(|| ResponseError::Invalid {
                    event,
                    path: at.clone(),
                    message: format!(
                        "JSON path `{}` conflicts with earlier arguments",
                        piece.json_path
                    ),
                })?;
            let appending = continuing.as_deref() == Some(piece.json_path.as_str());
            match (piece.string_value, slot) {
                (Some(s), Value::String(existing)) if appending => existing.push_str(&s),
                (Some(s), slot) => *slot = Value::String(s),
                (None, slot) => {
                    *slot = if let Some(n) = piece.number_value {
                        Value::Number(n)
                    } else if let Some(b) = piece.bool_value {
                        Value::Bool(b)
                    } else {
                        // `nullValue`, or a piece without a value.
                        Value::Null
                    };
                }
            }
            *continuing = if piece.will_continue == Some(true) {
                Some(piece.json_path)
            } else {
                None
            };
        }
        Ok(())
    }

    /// The content, with a deterministic id on every call that came without one.
    fn finish(mut self, response_id: Option<&str>) -> Vec<AssistantContent> {
        let mut n = 0usize;
        for block in &mut self.content {
            if let AssistantContent::ToolCall(call) = block {
                if call.id.is_empty() {
                    let mut hasher = Sha256::new();
                    hasher.update(response_id.unwrap_or_default().as_bytes());
                    hasher.update([0]);
                    hasher.update(n.to_string().as_bytes());
                    hasher.update([0]);
                    hasher.update(call.name.as_bytes());
                    hasher.update([0]);
                    hasher.update(Value::Object(call.arguments.clone()).to_string().as_bytes());
                    let digest = hasher.finalize();
                    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
                    call.id = format!("call_{hex}");
                }
                n += 1;
            }
        }
        self.content
    }
}

enum Segment {
    Key(String),
    Index(usize),
}

/// `$.a.b[0]["c d"]` → segments.
fn parse_json_path(path: &str) -> Option<Vec<Segment>> {
    let rest = path.strip_prefix('$')?;
    let bytes = rest.as_bytes();
    let mut segments = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i)? {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && !matches!(bytes.get(end), Some(b'.' | b'[')) {
                    end += 1;
                }
                let key = rest.get(start..end)?;
                if key.is_empty() {
                    return None;
                }
                segments.push(Segment::Key(key.to_owned()));
                i = end;
            }
            b'[' => {
                let close = rest.get(i..)?.find(']')? + i;
                let inner = rest.get(i + 1..close)?;
                if let Some(quoted) = inner
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
                {
                    segments.push(Segment::Key(quoted.to_owned()));
                } else {
                    segments.push(Segment::Index(inner.parse().ok()?));
                }
                i = close + 1;
            }
            _ => return None,
        }
    }
    Some(segments)
}

/// The value at `segments` under `root`, creating objects, arrays and slots on
/// the way; `None` when the path crosses a value of another kind.
fn slot_at<'a>(root: &'a mut Map<String, Value>, segments: &[Segment]) -> Option<&'a mut Value> {
    let (first, rest) = segments.split_first()?;
    let Segment::Key(key) = first else {
        return None;
    };
    let mut current = root.entry(key.clone()).or_insert(Value::Null);
    for segment in rest {
        current = match segment {
            Segment::Key(key) => {
                if current.is_null() {
                    *current = Value::Object(Map::new());
                }
                current
                    .as_object_mut()?
                    .entry(key.clone())
                    .or_insert(Value::Null)
            }
            Segment::Index(index) => {
                if current.is_null() {
                    *current = Value::Array(Vec::new());
                }
                let array = current.as_array_mut()?;
                if *index > array.len().saturating_add(1024) {
                    return None;
                }
                while array.len() <= *index {
                    array.push(Value::Null);
                }
                array.get_mut(*index)?
            }
        };
    }
    Some(current)
}

/// Decodes a non-streaming `generateContent` response body. An error body
/// (`{"error":{…}}`) becomes a message with stopReason `error` and its
/// `errorMessage`; a prompt blocked by safety filters stopReason `guardRail`.
///
/// # Errors
/// [`ResponseError::Json`] when the body is not JSON of the right shape,
/// [`ResponseError::Invalid`] when a part is malformed.
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    let wire: WireResponse = serde_json::from_str(body).map_err(|source| ResponseError::Json {
        event: None,
        source,
    })?;
    let mut folder = Folder::default();
    folder.chunk(wire, None)?;
    if folder.error.is_none() && folder.finish_reason.is_none() && folder.block_reason.is_none() {
        if folder.saw_candidate {
            folder.finish_reason = Some("STOP".to_owned());
        } else {
            folder.error = Some("the response has no candidates".to_owned());
        }
    }
    Ok(folder.into_message())
}

#[derive(Debug, Default)]
struct Folder {
    builder: Option<Builder>,
    response_id: Option<String>,
    model: Option<String>,
    usage: Option<WireUsage>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
    block_reason: Option<String>,
    error: Option<String>,
    saw_candidate: bool,
}

impl Folder {
    fn chunk(&mut self, wire: WireResponse, event: Option<usize>) -> Result<(), ResponseError> {
        if let Some(error) = wire.error {
            self.error = Some(error.describe());
            return Ok(());
        }
        if let Some(id) = wire.response_id {
            match &self.response_id {
                Some(previous) if *previous != id => {
                    return Err(ResponseError::Invalid {
                        event,
                        path: "responseId".to_owned(),
                        message: format!(
                            "`{id}` after `{previous}`: chunks of two responses are mixed"
                        ),
                    })
                }
                _ => self.response_id = Some(id),
            }
        }
        if self.model.is_none() {
            self.model = wire.model_version;
        }
        if let Some(usage) = wire.usage_metadata.filter(WireUsage::has_counts) {
            self.usage = Some(usage);
        }
        if let Some(reason) = wire.prompt_feedback.and_then(|f| f.block_reason) {
            self.block_reason = Some(reason);
        }
        let builder = self.builder.get_or_insert_with(Builder::new);
        if let Some(candidate) = wire.candidates.and_then(|c| c.into_iter().next()) {
            self.saw_candidate = true;
            if let Some(content) = candidate.content {
                for (i, part) in content.parts.into_iter().enumerate() {
                    builder.part(part, event, &format!("candidates[0].content.parts[{i}]"))?;
                }
            }
            if let Some(reason) = candidate.finish_reason {
                self.finish_reason = Some(reason);
            }
            if candidate.finish_message.is_some() {
                self.finish_message = candidate.finish_message;
            }
        }
        Ok(())
    }

    fn into_message(self) -> AssistantMessage {
        let mut message = AssistantMessage {
            api: API.to_owned(),
            provider: PROVIDER.to_owned(),
            timestamp: now_ms(),
            ..AssistantMessage::default()
        };
        message.content = self
            .builder
            .map(|b| b.finish(self.response_id.as_deref()))
            .unwrap_or_default();
        message.response_id = self.response_id;
        message.model = self.model.unwrap_or_default();
        if let Some(usage) = self.usage {
            message.usage = usage.to_usage();
        }
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return message;
        }
        if let Some(reason) = self.block_reason {
            message.stop_reason = StopReason::GuardRail;
            message.error_message = Some(format!("prompt blocked: {reason}"));
            return message;
        }
        let has_calls = message.tool_calls().next().is_some();
        let reason = self.finish_reason.unwrap_or_default();
        message.stop_reason = match reason.as_str() {
            "STOP" | "FINISH_REASON_UNSPECIFIED" | "" => {
                if has_calls {
                    StopReason::ToolUse
                } else {
                    StopReason::Stop
                }
            }
            "MAX_TOKENS" => StopReason::Length,
            "SAFETY"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION" => StopReason::GuardRail,
            _ => StopReason::Error,
        };
        if matches!(
            message.stop_reason,
            StopReason::GuardRail | StopReason::Error
        ) {
            message.error_message = Some(match self.finish_message {
                Some(detail) => format!("{reason}: {detail}"),
                None => format!("finishReason {reason}"),
            });
        }
        message
    }
}

// ---------------------------------------------------------------------------
// Streaming

/// Folds Gemini `streamGenerateContent` chunks (each one a JSON
/// `GenerateContentResponse`) into an [`AssistantMessage`]. Text and thoughts
/// that arrive in pieces are joined; Vertex AI's streamed function-call
/// arguments (`partialArgs` with a `jsonPath`) are assembled.
///
/// ```json
/// {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"r1"}
/// ```
///
/// A chunk that is not JSON, a malformed part, or chunks of two responses mixed
/// together is an error naming the chunk index; a stream that ends without a
/// `finishReason` fails in [`finish`](StreamDecode::finish) as
/// [`ResponseError::Truncated`]; an error chunk ends the message with stopReason
/// `error`.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    events: usize,
    folder: Folder,
    failed: Option<(usize, String)>,
}

impl StreamDecoder {
    /// A decoder waiting for the first chunk.
    pub fn new() -> Self {
        Self::default()
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
        let wire: WireResponse = match serde_json::from_str(event) {
            Ok(wire) => wire,
            Err(source) => {
                self.failed = Some((index, format!("invalid JSON: {source}")));
                return Err(ResponseError::Json {
                    event: Some(index),
                    source,
                });
            }
        };
        if self.folder.error.is_some() {
            return Ok(());
        }
        self.folder.chunk(wire, Some(index)).inspect_err(|e| {
            self.failed = Some((index, e.to_string()));
        })
    }

    fn finish(self) -> Result<AssistantMessage, ResponseError> {
        if let Some((event, why)) = self.failed {
            return Err(ResponseError::Invalid {
                event: Some(event),
                path: "stream".to_owned(),
                message: why,
            });
        }
        let folder = self.folder;
        if folder.error.is_none() && folder.finish_reason.is_none() && folder.block_reason.is_none()
        {
            return Err(ResponseError::Truncated {
                events: self.events,
                message: "no chunk carried a finishReason".to_owned(),
            });
        }
        Ok(folder.into_message())
    }
}
