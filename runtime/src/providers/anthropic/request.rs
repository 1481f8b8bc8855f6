//! The request encoder.

use super::options::write_options;
use super::{API, DEFAULT_MAX_TOKENS, MAX_DOCUMENT_TITLE, PROVIDER};
use crate::message::MediaSource;
use crate::project::{ChangeKind, Report};
use crate::providers::body::calls_of;
use crate::providers::options::OptionReport;
use crate::providers::shared::turns::{Side, Turns, OPENING};
use crate::providers::{Body, EncodeError, Encoded, Request};
use crate::Message;
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
    let mut encoder = Encoder {
        report: prepared.report,
        turns: Turns::new("Anthropic", ["user", "assistant"]),
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
                encoder
                    .turns
                    .push(&mut encoder.report, index, Side::User, blocks, false);
            }
            Message::Assistant(assistant) => {
                seen_conversation = true;
                let blocks = encoder.assistant_blocks(index, &assistant.content);
                encoder
                    .turns
                    .push(&mut encoder.report, index, Side::Model, blocks, false);
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
                encoder.turns.push(
                    &mut encoder.report,
                    index,
                    Side::User,
                    vec![Value::Object(block)],
                    true,
                );
            }
        }
    }
    encoder
        .turns
        .open_with_user(&mut encoder.report, text_block(OPENING));
    encoder.trim_final_assistant();
    if encoder.turns.list.is_empty() {
        return Err(EncodeError::invalid("messages", "no message left to send"));
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
    let messages: Vec<Value> = encoder
        .turns
        .into_named()
        .map(|(role, turn)| {
            let mut content = turn.content;
            if turn.side == Side::User {
                // tool_result blocks must open the user turn that answers the calls.
                content
                    .sort_by_key(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"));
            }
            json!({"role": role, "content": content})
        })
        .collect();
    let open_loop = tool_loop_without_thinking(&messages);
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools = Vec::with_capacity(request.tools.len());
        for (i, tool) in request.tools.iter().enumerate() {
            if request.tools.iter().take(i).any(|t| t.name == tool.name) {
                return Err(EncodeError::invalid(
                    format!("tools[{i}].name"),
                    format!("`{}` is declared twice", tool.name),
                ));
            }
            tools.push(encode_tool(i, tool)?);
        }
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
        report: encoder.report,
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

pub(super) fn encode_tool(
    i: usize,
    tool: &crate::providers::ToolSpec,
) -> Result<Value, EncodeError> {
    let valid_name = !tool.name.is_empty()
        && tool.name.len() <= 128
        && tool
            .name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !valid_name {
        return Err(EncodeError::invalid(
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
                return Err(EncodeError::invalid(
                    format!("tools[{i}].parameters.type"),
                    format!("Anthropic takes only object schemas, found {other}"),
                ))
            }
        },
        other => {
            return Err(EncodeError::invalid(
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

pub(super) struct Encoder {
    report: Report,
    turns: Turns,
    system: Vec<Value>,
}

impl Encoder {
    fn change(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.report.record(index, kind, detail);
    }

    /// A conversation that ends with an assistant turn asks the model to go on
    /// from it, and Anthropic refuses such a turn when it ends in whitespace.
    fn trim_final_assistant(&mut self) {
        let Some(turn) = self.turns.list.last_mut().filter(|t| t.side == Side::Model) else {
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
                self.turns.list.pop();
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
