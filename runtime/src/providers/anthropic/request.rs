//! The request encoder.

use super::options::write_options;
use super::{API, DEFAULT_MAX_TOKENS, MAX_DOCUMENT_TITLE, PROVIDER};
use crate::message::MediaSource;
use crate::project::ChangeKind;
use crate::providers::body::calls_of;
use crate::providers::options::OptionReport;
use crate::providers::shared::tools::{check_name, encode_tools, object_schema};
use crate::providers::shared::turns::{write_turns, BlockWriter, Conversation, Turns};
use crate::providers::{Body, EncodeError, Encoded, Request};
use crate::ToolResultMessage;
use crate::{AssistantContent, DocumentContent, ImageContent, ToolResultContent, UserContent};
use serde_json::{json, Map, Value};

pub(super) const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Encodes a request as an Anthropic Messages body. Runs [`prepare`](crate::prepare) for the
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
        return Err(EncodeError::invalid("model", "the model id is empty"));
    }
    let prepared = request.prepared(PROVIDER, API)?;
    let origins: Vec<usize> = prepared.provenance.iter().map(|o| o.index()).collect();
    let mut encoder = Encoder(Conversation {
        report: prepared.report,
        turns: Turns::new("Anthropic", ["user", "assistant"]),
        system: Vec::new(),
    });
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        encoder.0.system.push(text_block(system));
    }
    let messages = write_turns(&mut encoder, &prepared.messages, &origins)?;
    let Conversation { report, system, .. } = encoder.0;

    let mut body = Map::new();
    body.insert("model".into(), request.model.clone().into());
    body.insert(
        "max_tokens".into(),
        request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
    );
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let open_loop = tool_loop_without_thinking(&messages);
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = encode_tools(&request.tools, encode_tool)?;
        body.insert("tools".into(), Value::Array(tools));
    }
    let mut options = OptionReport::default();
    write_options(request, open_loop, &mut body, &mut options);
    if request.stream {
        body.insert("stream".into(), Value::Bool(true));
    }
    let body = Body::with_arguments(
        Value::Object(body),
        calls_of(&prepared.messages),
        ("messages", "content"),
        |block| {
            (block.get("type")? == "tool_use").then_some(())?;
            Some((block.get("id")?.as_str()?, &["input"]))
        },
    );
    Ok(Encoded {
        body,
        report,
        options: options.0,
    })
}

/// Whether the request continues a tool loop (its last turn answers calls)
/// whose assistant turn does not start with a thinking block: the model
/// changed mid-loop (the other model's thinking is not replayed), or the turn
/// was made with thinking off.
/// While thinking is on, Anthropic refuses such a request ("a final
/// `assistant` message must start with a thinking block … To avoid this
/// requirement, disable `thinking`"), and its guide says to keep one thinking
/// configuration per assistant turn, a tool loop being one turn.
fn tool_loop_without_thinking(messages: &[Value]) -> bool {
    let [.., assistant, user] = messages else {
        return false;
    };
    let blocks = |turn: &Value| turn.get("content").and_then(Value::as_array).cloned();
    let answers_calls = user["role"] == "user"
        && blocks(user).is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
    let thinks_first = blocks(assistant)
        .and_then(|b| b.first().cloned())
        .is_some_and(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking");
    answers_calls && assistant["role"] == "assistant" && !thinks_first
}

fn encode_tool(i: usize, tool: &crate::providers::ToolSpec) -> Result<Value, EncodeError> {
    check_name(i, &tool.name, 128, "Anthropic")?;
    let schema = object_schema(i, &tool.parameters, "Anthropic")?;
    let mut out = Map::new();
    out.insert("name".into(), tool.name.clone().into());
    if !tool.description.is_empty() {
        out.insert("description".into(), tool.description.clone().into());
    }
    out.insert("input_schema".into(), schema);
    Ok(Value::Object(out))
}

/// The request being encoded.
pub(super) struct Encoder(Conversation);

impl BlockWriter for Encoder {
    fn conversation(&mut self) -> &mut Conversation {
        &mut self.0
    }

    fn text_block(text: &str) -> Value {
        text_block(text)
    }

    fn is_result(block: &Value) -> bool {
        block.get("type").and_then(Value::as_str) == Some("tool_result")
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

    fn assistant_blocks(&mut self, index: usize, content: &[AssistantContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                AssistantContent::Text(t) => {
                    if !t.text.is_empty() {
                        let mut block = text_block(&t.text);
                        // Citations come only from Anthropic here: prepare
                        // dropped any other API's.
                        if let Some(citations) = &t.citations {
                            block["citations"] = citations.to_value();
                        }
                        out.push(block);
                    }
                }
                // `prepare` made every assistant image text for this API (its
                // `Target::assistant_images` is false): none reaches the encoder.
                AssistantContent::Image(_) => {}
                AssistantContent::ProviderBlock(provider) => {
                    let kind = provider.type_name();
                    if kind == "fallback" {
                        self.change(
                            index,
                            ChangeKind::DroppedProviderData,
                            "dropped a `fallback` block: it tells which model answered, and no request takes it",
                        );
                    } else if provider.api == API && provider.block.is_object() {
                        out.push(provider.block.to_value());
                    } else {
                        self.change(
                            index,
                            ChangeKind::DroppedProviderData,
                            format!(
                                "dropped a `{kind}` block of `{}`: Anthropic takes back only its own",
                                provider.api
                            ),
                        );
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
                    "input": call.arguments.to_value(),
                })),
            }
        }
        out
    }

    fn tool_result_block(&mut self, index: usize, result: &ToolResultMessage) -> Value {
        let mut block = Map::new();
        block.insert("type".into(), "tool_result".into());
        block.insert("tool_use_id".into(), result.tool_call_id.as_str().into());
        let content = self.tool_result_content(index, &result.content);
        if !content.is_empty() {
            block.insert("content".into(), Value::Array(content));
        } else if result.is_error {
            block.insert("content".into(), json!([text_block("error")]));
        }
        if result.is_error {
            block.insert("is_error".into(), true.into());
        }
        Value::Object(block)
    }
}

impl Encoder {
    fn change(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.0.report.record(index, kind, detail);
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

pub(super) fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}
