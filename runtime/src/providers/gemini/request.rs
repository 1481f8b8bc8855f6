//! The request encoder.

use super::options::write_options;
use super::response::CANDIDATE_METADATA;
use super::{API, PROVIDER, SKIP_SIGNATURE};
use crate::message::MediaSource;
use crate::project::{ChangeKind, Report};
use crate::providers::body::calls_of;
use crate::providers::options::OptionReport;
use crate::providers::shared::turns::{Side, Turns, OPENING};
use crate::providers::{Body, EncodeError, Encoded, Request, ToolSpec};
use crate::{AssistantContent, DocumentContent, ImageContent, ToolResultContent, UserContent};
use crate::{Message, ToolResultMessage};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

pub(super) const IMAGE_TYPES: [&str; 5] = [
    "image/png",
    "image/jpeg",
    "image/webp",
    "image/heic",
    "image/heif",
];

/// Encodes a request as a Gemini `generateContent` body. Runs [`prepare`](crate::prepare) for
/// the target `google` (or [`Request::provider`]) / `google-generative-ai` /
/// `request.model` first.
///
/// # Errors
/// [`EncodeError::Invalid`] for an empty model, a function name Gemini rejects,
/// a tool schema that is not a JSON object, or a conversation with no message
/// left to send.
pub fn encode_request(request: &Request) -> Result<Encoded, EncodeError> {
    if request.model.trim().is_empty() {
        return Err(EncodeError::invalid("model", "the model id is empty"));
    }
    let prepared = request.prepared(PROVIDER, API)?;
    let origins: Vec<usize> = prepared.provenance.iter().map(|o| o.index()).collect();
    let mut encoder = Encoder {
        report: prepared.report,
        turns: Turns::new("Gemini", ["user", "model"]),
        system: Vec::new(),
        gemini3: request.model.contains("gemini-3"),
        call_names: BTreeMap::new(),
    };
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        encoder.system.push(json!({ "text": system }));
    }
    let mut seen_conversation = false;
    for (message, &index) in prepared.messages.iter().zip(&origins) {
        encoder.message(index, message, seen_conversation);
        seen_conversation |= !matches!(message, Message::System(_));
    }
    encoder
        .turns
        .open_with_user(&mut encoder.report, json!({ "text": OPENING }));
    if encoder.turns.list.is_empty() {
        return Err(EncodeError::invalid("contents", "no message left to send"));
    }

    let mut body = Map::new();
    if !encoder.system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({ "parts": encoder.system }),
        );
    }
    body.insert("contents".into(), Value::Array(contents(encoder.turns)));
    if let Some(tools) = encode_tools(&request.tools)? {
        body.insert("tools".into(), tools);
    }
    let mut options = OptionReport::default();
    write_options(request, &mut body, &mut options);
    let body = Body::with_arguments(
        Value::Object(body),
        calls_of(&prepared.messages),
        ("contents", "parts"),
        |part| {
            let call = part.get("functionCall")?;
            Some((call.get("id")?.as_str()?, &["functionCall", "args"]))
        },
    );
    Ok(Encoded {
        body,
        report: encoder.report,
        options: options.0,
    })
}

/// The `contents`: each user turn puts its function responses first, in the
/// order of the calls they answer.
fn contents(turns: Turns) -> Vec<Value> {
    let mut calls: Vec<String> = Vec::new();
    turns
        .into_named()
        .map(|(role, turn)| {
            let mut parts = turn.content;
            if turn.side == Side::User {
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
            json!({"role": role, "parts": parts})
        })
        .collect()
}

/// The `tools` entry: one `functionDeclarations` list, or `None` for no tools.
fn encode_tools(tools: &[ToolSpec]) -> Result<Option<Value>, EncodeError> {
    if tools.is_empty() {
        return Ok(None);
    }
    let mut declarations = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        if tools.iter().take(i).any(|t| t.name == tool.name) {
            return Err(EncodeError::invalid(
                format!("tools[{i}].name"),
                format!("`{}` is declared twice", tool.name),
            ));
        }
        declarations.push(encode_tool(i, tool)?);
    }
    Ok(Some(json!([{ "functionDeclarations": declarations }])))
}

pub(super) fn encode_tool(i: usize, tool: &ToolSpec) -> Result<Value, EncodeError> {
    let mut chars = tool.name.chars();
    let valid_name = tool.name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    if !valid_name {
        return Err(EncodeError::invalid(
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
            return Err(EncodeError::invalid(
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

pub(super) struct Encoder {
    report: Report,
    turns: Turns,
    system: Vec<Value>,
    gemini3: bool,
    /// The name of each tool call so far, by id (a function response names its call).
    call_names: BTreeMap<String, String>,
}

impl Encoder {
    /// Adds one prepared message of input `index`; `seen_conversation` says
    /// whether a message other than a system message came before it.
    fn message(&mut self, index: usize, message: &Message, seen_conversation: bool) {
        let (side, parts, is_result) = match message {
            Message::System(system) => {
                if seen_conversation {
                    self.change(
                        index,
                        ChangeKind::UnsupportedContent,
                        "a system message in the conversation was moved to `systemInstruction`",
                    );
                }
                for block in system.content.iter().filter(|t| !t.text.is_empty()) {
                    self.system.push(json!({ "text": block.text }));
                }
                return;
            }
            Message::User(user) => (Side::User, self.user_parts(index, &user.content), false),
            Message::Assistant(assistant) => {
                for call in assistant.tool_calls() {
                    self.call_names.insert(call.id.clone(), call.name.clone());
                }
                let parts = self.model_parts(index, &assistant.content);
                (Side::Model, parts, false)
            }
            Message::ToolResult(result) => (Side::User, self.result_parts(index, result), true),
        };
        self.turns
            .push(&mut self.report, index, side, parts, is_result);
    }

    /// A tool result: its `functionResponse`, then its images as parts.
    fn result_parts(&mut self, index: usize, result: &ToolResultMessage) -> Vec<Value> {
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
        // Gemini matches a response to its call by name: take the call's when
        // the result has none.
        let name = match result.tool_name.as_str() {
            "" => self
                .call_names
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
            self.change(
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
        parts
    }

    fn change(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.report.record(index, kind, detail);
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
                AssistantContent::Image(image) => {
                    out.push(media_part(
                        &image.source,
                        guess_mime(&image.source, "image/png"),
                    ));
                }
                AssistantContent::ProviderBlock(provider) => {
                    let part = provider.block.to_value();
                    // A candidate's metadata describes the answer; it is no part.
                    let is_part = part.as_object().is_some_and(|map| {
                        !CANDIDATE_METADATA.iter().any(|key| map.contains_key(*key))
                    });
                    if provider.api == API && is_part {
                        out.push(part);
                    } else {
                        self.change(
                            index,
                            ChangeKind::DroppedProviderData,
                            format!(
                                "dropped a `{}` block of `{}`: Gemini takes back only its own parts",
                                provider.type_name(),
                                provider.api
                            ),
                        );
                    }
                }
                AssistantContent::ToolCall(call) => {
                    let mut part = Map::new();
                    part.insert(
                        "functionCall".into(),
                        json!({"id": call.id, "name": call.name, "args": call.arguments.to_value()}),
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

pub(super) fn media_part(source: &MediaSource, mime: Option<String>) -> Value {
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
pub(super) fn guess_mime(source: &MediaSource, fallback: &str) -> Option<String> {
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
