//! The request encoder.

use super::options::write_options;
use super::response::REASONING_FIELDS;
use super::{API, PROVIDER};
use crate::message::MediaSource;
use crate::project::{ChangeKind, Report};
use crate::providers::options::OptionReport;
use crate::providers::shared::parts::{user_parts, DocumentPart, PartWriter};
use crate::providers::shared::tools::tool_parameters;
use crate::providers::{EncodeError, Encoded, Request};
use crate::{AssistantContent, AudioContent, ToolResultContent};
use crate::{AssistantMessage, Message};
use serde_json::{json, Map, Value};

/// Encodes `request` as a Chat Completions request body.
///
/// The messages are first [prepared](crate::prepare) for
/// `Target::new("openai", "openai-completions", &request.model)` (the provider is
/// [`Request::provider`] when set); the report holds
/// prepare's changes followed by the encoder's own (each change's `index` is the
/// input message it comes from). Fails only on a request that cannot be made
/// valid: an empty model id, an empty tool name, or no message left to send.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{Message, providers::{Request, openai_chat}};
/// let request = Request::new("gpt-4.1", vec![Message::user("hi")]).with_system("Be terse.");
/// let body = openai_chat::encode_request(&request).unwrap().body;
/// assert_eq!(body["messages"][0]["role"], "system");
/// assert_eq!(body["messages"][1]["content"], "hi");
/// ```
pub fn encode_request(request: &Request) -> Result<Encoded, EncodeError> {
    if request.model.is_empty() {
        return Err(EncodeError::invalid("model", "the model id is empty"));
    }
    let mut prepared = request.prepared(PROVIDER, API)?;
    let mut report = std::mem::take(&mut prepared.report);
    let mut out: Vec<Value> = Vec::new();
    if let Some(system) = &request.system {
        out.push(json!({"role": "system", "content": system}));
    }
    // Images taken out of tool results, sent in one user message after the run of
    // tool messages they came from.
    let mut pending_images: Vec<Value> = Vec::new();
    for (position, message) in prepared.messages.iter().enumerate() {
        let index = prepared.input_index(position).unwrap_or(position);
        if !matches!(message, Message::ToolResult(_)) && !pending_images.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut pending_images)}));
        }
        match message {
            Message::System(m) => {
                out.push(json!({"role": "system", "content": m.text()}));
            }
            Message::User(m) => {
                let parts = user_parts(&ChatParts, index, &m.content, &mut report);
                if parts.is_empty() {
                    report.record(
                        index,
                        ChangeKind::DroppedEmptyMessage,
                        "empty user message dropped",
                    );
                    continue;
                }
                out.push(json!({"role": "user", "content": compact_parts(parts)}));
            }
            Message::Assistant(m) => {
                if let Some(value) = assistant_message(index, m, &mut report) {
                    out.push(value);
                }
            }
            Message::ToolResult(m) => {
                let mut text = String::new();
                let mut images = Vec::new();
                for block in &m.content {
                    match block {
                        ToolResultContent::Text(t) => {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(&t.text);
                        }
                        ToolResultContent::Image(image) => {
                            images.push(ChatParts.image(&image.source))
                        }
                    }
                }
                if !images.is_empty() {
                    report.record(index,
                        ChangeKind::MovedImages,
                        format!(
                            "{} image(s) of the result of `{}` sent in a user message after the tool messages",
                            images.len(),
                            m.tool_call_id
                        ),
                    );
                    if text.is_empty() {
                        text.push_str("(see the attached image)");
                    }
                    pending_images.push(json!({
                        "type": "text",
                        "text": format!("Images returned by the tool call {}:", m.tool_call_id),
                    }));
                    pending_images.extend(images);
                }
                out.push(json!({
                    "role": "tool",
                    "tool_call_id": m.tool_call_id,
                    "content": text,
                }));
            }
        }
    }
    if !pending_images.is_empty() {
        out.push(json!({"role": "user", "content": pending_images}));
    }

    if out.is_empty() {
        return Err(EncodeError::invalid(
            "messages",
            "nothing to send: no message is left after preparing the transcript",
        ));
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(request.model.clone()));
    body.insert("messages".into(), Value::Array(out));
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
            function.insert("name".into(), Value::String(tool.name.clone()));
            if !tool.description.is_empty() {
                function.insert(
                    "description".into(),
                    Value::String(tool.description.clone()),
                );
            }
            function.insert("parameters".into(), tool_parameters(&tool.parameters));
            tools.push(json!({"type": "function", "function": function}));
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = request.max_tokens {
        body.insert("max_completion_tokens".into(), json!(max));
    }
    let mut options = OptionReport::default();
    write_options(request, &mut body, &mut options)?;
    if request.stream {
        body.insert("stream".into(), Value::Bool(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Encoded {
        body: Value::Object(body).into(),
        report,
        options: options.0,
    })
}

/// A data URL for inline bytes, or the URL itself.
pub(super) fn media_url(source: &MediaSource) -> String {
    match source {
        MediaSource::Base64 { data, mime_type } => format!("data:{mime_type};base64,{data}"),
        MediaSource::Url(url) => url.clone(),
    }
}

/// `wav` or `mp3` for the MIME types `input_audio` takes.
pub(super) fn audio_format(mime_type: &str) -> Option<&'static str> {
    let essence = mime_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "audio/wav" | "audio/wave" | "audio/x-wav" | "audio/vnd.wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" | "audio/mpeg3" | "audio/x-mpeg-3" => Some("mp3"),
        _ => None,
    }
}

/// One text part is sent as a plain string.
pub(super) fn compact_parts(mut parts: Vec<Value>) -> Value {
    if parts.len() == 1 && parts[0]["type"] == "text" {
        if let Some(text) = parts
            .pop()
            .and_then(|mut p| p.get_mut("text").map(Value::take))
        {
            return text;
        }
    }
    Value::Array(parts)
}

pub(super) fn assistant_message(
    index: usize,
    m: &AssistantMessage,
    report: &mut Report,
) -> Option<Value> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut dropped = 0usize;
    // Reasoning a compatible server wrote, in the field it came in:
    // `prepare` kept it only for the provider and model that wrote it.
    let mut reasoning: Option<(&str, Vec<&str>)> = None;
    for block in &m.content {
        match block {
            AssistantContent::Text(t) => {
                text.push_str(&t.text);
                if t.citations.is_some() {
                    report.record(
                        index,
                        ChangeKind::DroppedProviderData,
                        "citations of a text not sent: a Chat Completions assistant message takes none",
                    );
                }
            }
            // `prepare` made every assistant image text for this API (its
            // `Target::assistant_images` is false): none reaches the encoder.
            AssistantContent::Image(_) => {}
            AssistantContent::ProviderBlock(provider) => report.record(
                index,
                ChangeKind::DroppedProviderData,
                format!(
                    "dropped a `{}` block of `{}`: Chat Completions takes no provider blocks back",
                    provider.type_name(),
                    provider.api
                ),
            ),
            AssistantContent::ToolCall(call) => calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments.as_str(),
                },
            })),
            AssistantContent::Thinking(t) => {
                let field = t
                    .signature
                    .as_deref()
                    .and_then(|s| REASONING_FIELDS.iter().find(|f| **f == s));
                match (field, &mut reasoning) {
                    (_, _) if t.thinking.trim().is_empty() => {}
                    (Some(field), None) => reasoning = Some((field, vec![t.thinking.as_str()])),
                    (Some(_), Some((_, texts))) => texts.push(t.thinking.as_str()),
                    (None, _) => dropped += 1,
                }
            }
            AssistantContent::RedactedThinking(_) => dropped += 1,
        }
    }
    if dropped > 0 {
        report.record(
            index,
            ChangeKind::DroppedThinking,
            format!(
                "{dropped} thinking block(s) not sent: Chat Completions takes back only the reasoning a compatible server sent (in `reasoning_content`, `reasoning` or `reasoning_text`)"
            ),
        );
    }
    if text.is_empty() && calls.is_empty() {
        report.record(
            index,
            ChangeKind::DroppedEmptyMessage,
            "assistant message with nothing to send dropped",
        );
        return None;
    }
    let mut value = Map::new();
    value.insert("role".into(), "assistant".into());
    value.insert(
        "content".into(),
        if text.is_empty() {
            Value::Null
        } else {
            Value::String(text)
        },
    );
    if !calls.is_empty() {
        value.insert("tool_calls".into(), Value::Array(calls));
    }
    // DeepSeek answers a 400 when a turn that called a tool comes back
    // without its `reasoning_content`; the field is the one it came in, the
    // blocks joined as pi joins them.
    if let Some((field, texts)) = reasoning {
        value.insert(field.to_owned(), Value::String(texts.join("\n")));
    }
    Some(Value::Object(value))
}

/// User parts as Chat Completions takes them.
struct ChatParts;

impl PartWriter for ChatParts {
    const DOCUMENTS: &'static str = "only PDF and text documents can be sent";

    fn text(&self, text: String) -> Value {
        json!({"type": "text", "text": text})
    }

    fn image(&self, source: &MediaSource) -> Value {
        json!({"type": "image_url", "image_url": {"url": media_url(source)}})
    }

    /// wav and mp3 as `input_audio`; any other type becomes a note.
    fn audio(&self, index: usize, audio: &AudioContent, report: &mut Report) -> Value {
        match audio_format(&audio.mime_type) {
            Some(format) => json!({
                "type": "input_audio",
                "input_audio": {"data": audio.data, "format": format},
            }),
            None => {
                report.record(
                    index,
                    ChangeKind::UnsupportedContent,
                    format!(
                        "audio of type {} replaced by a note: input_audio takes only wav and mp3",
                        audio.mime_type
                    ),
                );
                self.text(format!(
                    "[audio ({}) omitted: unsupported format]",
                    audio.mime_type
                ))
            }
        }
    }

    /// A PDF inline or by file id; a URL as a text reference (reported).
    fn document(&self, index: usize, part: DocumentPart<'_>, report: &mut Report) -> Value {
        match part {
            DocumentPart::Text(text) => self.text(text),
            DocumentPart::Pdf { filename, data_url } => {
                json!({"type": "file", "file": {"filename": filename, "file_data": data_url}})
            }
            DocumentPart::FileId(id) => json!({"type": "file", "file": {"file_id": id}}),
            DocumentPart::Url { url, name } => {
                report.record(
                    index,
                    ChangeKind::UnsupportedContent,
                    "document URL sent as a text reference: Chat Completions takes files inline or by file id",
                );
                let label = name.map(|n| format!("{n}: ")).unwrap_or_default();
                self.text(format!("[document {label}{url}]"))
            }
        }
    }
}
