//! OpenAI Chat Completions (`POST /v1/chat/completions`, api id
//! `openai-completions`): request encoder, response decoder and stream decoder.
//!
//! Encoding (after [`prepare`] for
//! `Target::new("openai", "openai-completions", model)`):
//!
//! | agentmsg | Chat Completions |
//! |---|---|
//! | `Request::system`, system messages | `{"role":"system","content":…}` |
//! | user text / image / audio / document | `text`, `image_url` (data URL or URL), `input_audio` (wav, mp3 only), `file` (`file_data` data URL + `filename`) |
//! | assistant text and tool calls | `content` and `tool_calls` (`arguments` is a JSON string) |
//! | thinking, redacted thinking | not sent (the API takes no reasoning back); reported |
//! | tool result | one `{"role":"tool","tool_call_id":…}` message each; images follow in a user message |
//! | `max_tokens` | `max_completion_tokens` |
//!
//! Decoding: `reasoning_content` / `reasoning` (sent by OpenAI-compatible servers)
//! become a thinking block, then text, refusal (as text, stop reason
//! `guardRail`) and tool calls, in that order. Tool-call arguments that are not a
//! JSON object are kept as `{"value": <the JSON, or the raw text when it is not
//! JSON>}` and reported by [`decode_response_with_warnings`] and
//! [`StreamDecoder::finish_with_warnings`]; a custom tool call becomes a tool
//! call with arguments `{"input": …}` (also reported). `usage.input` excludes the cached prompt tokens,
//! which are `usage.cacheRead`. The timestamp is the response's `created` (0 when
//! absent).

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{EncodeError, Encoded, Request, ResponseError, StreamDecode};
use crate::content::{
    AssistantContent, MediaSource, TextContent, ThinkingContent, ToolCall, ToolResultContent,
    UserContent,
};
use crate::message::{AssistantMessage, Message, StopReason};
use crate::project::{prepare, ChangeKind, Report, Target};
use crate::usage::Usage;

/// The api id of Chat Completions.
pub const API: &str = "openai-completions";
/// The provider id written into decoded messages.
pub const PROVIDER: &str = "openai";

/// Encodes `request` as a Chat Completions request body.
///
/// The messages are first [prepared](prepare) for
/// `Target::new("openai", "openai-completions", &request.model)` (the provider is
/// [`Request::provider`] when set); the report holds
/// prepare's changes followed by the encoder's own (each change's `index` is the
/// input message it comes from). Fails only on a request that cannot be made
/// valid: an empty model id, an empty tool name, or no message left to send.
///
/// ```
/// # use agentmsg_runtime::{Message, providers::{Request, openai_chat}};
/// let request = Request::new("gpt-4.1", vec![Message::user("hi")]).with_system("Be terse.");
/// let body = openai_chat::encode_request(&request).unwrap().body;
/// assert_eq!(body["messages"][0]["role"], "system");
/// assert_eq!(body["messages"][1]["content"], "hi");
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
                let parts = user_parts(index, &m.content, &mut report);
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
                        ToolResultContent::Image(image) => images.push(image_part(&image.source)),
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
        return Err(EncodeError::Invalid {
            path: "messages".into(),
            message: "nothing to send: no message is left after preparing the transcript".into(),
        });
    }
    let mut body = Map::new();
    body.insert("model".into(), Value::String(request.model.clone()));
    body.insert("messages".into(), Value::Array(out));
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
    Ok(Encoded {
        body: Value::Object(body),
        report,
    })
}

/// A tool's parameter schema as the API wants it: a JSON object (`{"type":"object"}`
/// when the spec gave none).
fn tool_parameters(parameters: &Value) -> Value {
    match parameters {
        Value::Object(map) if !map.is_empty() => parameters.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// A data URL for inline bytes, or the URL itself.
fn media_url(source: &MediaSource) -> String {
    match source {
        MediaSource::Base64 { data, mime_type } => format!("data:{mime_type};base64,{data}"),
        MediaSource::Url(url) => url.clone(),
    }
}

fn image_part(source: &MediaSource) -> Value {
    json!({"type": "image_url", "image_url": {"url": media_url(source)}})
}

/// `wav` or `mp3` for the MIME types `input_audio` takes.
fn audio_format(mime_type: &str) -> Option<&'static str> {
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

fn user_parts(index: usize, content: &[UserContent], report: &mut Report) -> Vec<Value> {
    let mut parts = Vec::with_capacity(content.len());
    for block in content {
        match block {
            UserContent::Text(t) => parts.push(json!({"type": "text", "text": t.text})),
            UserContent::Image(image) => parts.push(image_part(&image.source)),
            UserContent::Audio(audio) => match audio_format(&audio.mime_type) {
                Some(format) => parts.push(json!({
                    "type": "input_audio",
                    "input_audio": {"data": audio.data, "format": format},
                })),
                None => {
                    report.record(index,
                        ChangeKind::UnsupportedContent,
                        format!(
                            "audio of type {} replaced by a note: input_audio takes only wav and mp3",
                            audio.mime_type
                        ),
                    );
                    parts.push(json!({
                        "type": "text",
                        "text": format!("[audio ({}) omitted: unsupported format]", audio.mime_type),
                    }));
                }
            },
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
            json!({"type": "file", "file": {
                "filename": name.unwrap_or("document.pdf"),
                "file_data": format!("data:{mime_type};base64,{data}"),
            }})
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
                    json!({"type": "text", "text": format!("{heading}{text}")})
                }
                None => unsupported_document(index, mime_type, report),
            }
        }
        MediaSource::Base64 { mime_type, .. } => unsupported_document(index, mime_type, report),
        MediaSource::Url(url) if url.starts_with("file-") => {
            json!({"type": "file", "file": {"file_id": url}})
        }
        MediaSource::Url(url) => {
            report.record(index,
                ChangeKind::UnsupportedContent,
                "document URL sent as a text reference: Chat Completions takes files inline or by file id",
            );
            let label = name.map(|n| format!("{n}: ")).unwrap_or_default();
            json!({"type": "text", "text": format!("[document {label}{url}]")})
        }
    }
}

fn unsupported_document(index: usize, mime_type: &str, report: &mut Report) -> Value {
    report.record(
        index,
        ChangeKind::UnsupportedContent,
        format!("{mime_type} document replaced by a note: only PDF and text documents can be sent"),
    );
    json!({"type": "text", "text": format!("[document ({mime_type}) omitted: unsupported type]")})
}

/// One text part is sent as a plain string.
fn compact_parts(mut parts: Vec<Value>) -> Value {
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

fn assistant_message(index: usize, m: &AssistantMessage, report: &mut Report) -> Option<Value> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut dropped = 0usize;
    for block in &m.content {
        match block {
            AssistantContent::Text(t) => text.push_str(&t.text),
            AssistantContent::ToolCall(call) => calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": Value::Object(call.arguments.clone()).to_string(),
                },
            })),
            AssistantContent::Thinking(_) | AssistantContent::RedactedThinking(_) => dropped += 1,
        }
    }
    if dropped > 0 {
        report.record(
            index,
            ChangeKind::DroppedThinking,
            format!(
                "{dropped} thinking block(s) not sent: Chat Completions takes no reasoning back"
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
    Some(Value::Object(value))
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

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize, Default)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    fn to_usage(&self) -> Usage {
        let prompt = self.prompt_tokens.unwrap_or(0);
        let cached = self
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens)
            .unwrap_or(0);
        Usage {
            input: prompt.saturating_sub(cached),
            output: self.completion_tokens.unwrap_or(0),
            reasoning: self
                .completion_tokens_details
                .as_ref()
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
            cache_read: cached,
            cache_write: 0,
            total_tokens: self.total_tokens,
            cost: None,
        }
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    created: Option<u64>,
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
    #[serde(default)]
    custom: Option<WireCustom>,
}

/// A call of a custom (free-form input) tool.
#[derive(Deserialize)]
struct WireCustom {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<String>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

/// Maps a `finish_reason` to a [`StopReason`].
pub fn stop_reason(finish_reason: &str) -> StopReason {
    match finish_reason {
        "length" => StopReason::Length,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "content_filter" => StopReason::GuardRail,
        "error" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

/// Parses tool-call arguments. Anything but a JSON object (or nothing) is kept as
/// `{"value": …}` and reported.
fn parse_arguments(
    raw: &str,
    path: &str,
    warnings: &mut Vec<ResponseError>,
    event: Option<usize>,
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

fn wrap_input(input: String) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("input".into(), Value::String(input));
    map
}

fn wrap_value(value: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("value".into(), value);
    map
}

fn base_message(
    id: Option<String>,
    model: Option<String>,
    created: Option<u64>,
) -> AssistantMessage {
    AssistantMessage {
        api: API.into(),
        provider: PROVIDER.into(),
        model: model.unwrap_or_default(),
        response_id: id.filter(|s| !s.is_empty()),
        timestamp: created.map_or(0, |c| c.saturating_mul(1000)),
        ..AssistantMessage::default()
    }
}

fn error_message(error: &WireError) -> AssistantMessage {
    AssistantMessage {
        api: API.into(),
        provider: PROVIDER.into(),
        stop_reason: StopReason::Error,
        error_message: Some(error.describe()),
        ..AssistantMessage::default()
    }
}

/// Decodes a non-streaming Chat Completions response body (or an error body
/// `{"error":{…}}`, which becomes a message with stopReason `error`).
///
/// ```
/// # use agentmsg_runtime::providers::openai_chat;
/// let body = r#"{"id":"chatcmpl-1","model":"gpt-4.1","created":1,"choices":[{"index":0,
///   "message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],
///   "usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}"#;
/// let message = openai_chat::decode_response(body).unwrap();
/// assert_eq!(message.text_content(), "Hi");
/// assert_eq!(message.usage.input, 9);
/// ```
pub fn decode_response(body: &str) -> Result<AssistantMessage, ResponseError> {
    decode_response_with_warnings(body).map(|(message, _)| message)
}

/// [`decode_response`], also returning what was kept in a changed form (such as
/// tool-call arguments that were not a JSON object), as
/// [`ResponseError::Invalid`] values.
pub fn decode_response_with_warnings(
    body: &str,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let wire: WireResponse = serde_json::from_str(body).map_err(|source| ResponseError::Json {
        event: None,
        source,
    })?;
    let mut warnings = Vec::new();
    if let Some(error) = &wire.error {
        return Ok((error_message(error), warnings));
    }
    let mut message = base_message(wire.id, wire.model, wire.created);
    if let Some(usage) = &wire.usage {
        message.usage = usage.to_usage();
    }
    let choice = wire
        .choices
        .into_iter()
        .min_by_key(|c| c.index.unwrap_or(0))
        .ok_or_else(|| ResponseError::Invalid {
            event: None,
            path: "choices".into(),
            message: "no choice in the response".into(),
        })?;
    let wire_message = choice.message.unwrap_or_default();
    let mut refused = false;
    if let Some(reasoning) = wire_message
        .reasoning_content
        .or(wire_message.reasoning)
        .filter(|r| !r.is_empty())
    {
        message
            .content
            .push(AssistantContent::Thinking(ThinkingContent::new(reasoning)));
    }
    match wire_message.content {
        Some(Value::String(text)) if !text.is_empty() => {
            message
                .content
                .push(AssistantContent::Text(TextContent::new(text)));
        }
        Some(Value::Array(parts)) => {
            for (i, part) in parts.iter().enumerate() {
                match (
                    part.get("type").and_then(Value::as_str),
                    part.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(text)) => {
                        message
                            .content
                            .push(AssistantContent::Text(TextContent::new(text)));
                    }
                    (Some("refusal"), _) => {
                        if let Some(text) = part.get("refusal").and_then(Value::as_str) {
                            refused = true;
                            message
                                .content
                                .push(AssistantContent::Text(TextContent::new(text)));
                        }
                    }
                    _ => warnings.push(ResponseError::Invalid {
                        event: None,
                        path: format!("choices[0].message.content[{i}]"),
                        message: "content part of an unknown type skipped".into(),
                    }),
                }
            }
        }
        _ => {}
    }
    if let Some(refusal) = wire_message.refusal.filter(|r| !r.is_empty()) {
        refused = true;
        message
            .content
            .push(AssistantContent::Text(TextContent::new(refusal)));
    }
    for (i, call) in wire_message.tool_calls.into_iter().enumerate() {
        if let Some(custom) = call.custom {
            warnings.push(ResponseError::Invalid {
                event: None,
                path: format!("choices[0].message.tool_calls[{i}]"),
                message: "custom tool call kept as a tool call with arguments {\"input\": …}"
                    .into(),
            });
            message.content.push(AssistantContent::ToolCall(ToolCall {
                id: call.id.unwrap_or_default(),
                name: custom.name.unwrap_or_default(),
                arguments: wrap_input(custom.input.unwrap_or_default()),
                signature: None,
            }));
            continue;
        }
        let path = format!("choices[0].message.tool_calls[{i}].function.arguments");
        let function = call.function.unwrap_or(WireFunction {
            name: None,
            arguments: None,
        });
        let arguments = match function.arguments {
            Some(Value::String(raw)) => parse_arguments(&raw, &path, &mut warnings, None),
            Some(Value::Object(map)) => map,
            Some(Value::Null) | None => Map::new(),
            Some(other) => {
                warnings.push(ResponseError::Invalid {
                    event: None,
                    path,
                    message: "arguments are neither a string nor an object; kept as {\"value\": …}"
                        .into(),
                });
                wrap_value(other)
            }
        };
        message.content.push(AssistantContent::ToolCall(ToolCall {
            id: call.id.unwrap_or_default(),
            name: function.name.unwrap_or_default(),
            arguments,
            signature: None,
        }));
    }
    message.stop_reason = match choice.finish_reason.as_deref() {
        Some(reason) => stop_reason(reason),
        None if message.tool_calls().next().is_some() => StopReason::ToolUse,
        None => StopReason::Stop,
    };
    if refused && message.stop_reason == StopReason::Stop {
        message.stop_reason = StopReason::GuardRail;
    }
    Ok((message, warnings))
}

// ---------------------------------------------------------------------------
// Streams

#[derive(Deserialize)]
struct WireChunk {
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
}

#[derive(Deserialize)]
struct WireChunkChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<WireDelta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireDelta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCallDelta>,
}

#[derive(Deserialize)]
struct WireToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunctionDelta>,
}

#[derive(Deserialize)]
struct WireFunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

/// A block being built from deltas.
enum Building {
    Text(String),
    Thinking(String),
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
/// # use agentmsg_runtime::providers::{openai_chat::StreamDecoder, StreamDecode};
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
    bad_event: Option<(usize, String)>,
    warnings: Vec<ResponseError>,
    done: bool,
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

    /// [`finish`](StreamDecode::finish), also returning what was kept in a
    /// changed form (tool-call arguments that were not a JSON object, ignored
    /// extra choices) as [`ResponseError::Invalid`] values naming their event.
    pub fn finish_with_warnings(
        mut self,
    ) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
        if let Some((event, message)) = self.bad_event.take() {
            return Err(ResponseError::Invalid {
                event: Some(event),
                path: "chunk".into(),
                message: format!("the stream had a malformed chunk: {message}"),
            });
        }
        let mut message = base_message(self.id.take(), self.model.take(), self.created);
        if let Some(usage) = self.usage.take() {
            message.usage = usage;
        }
        let mut warnings = std::mem::take(&mut self.warnings);
        for (position, block) in std::mem::take(&mut self.blocks).into_iter().enumerate() {
            message.content.push(match block {
                Building::Text(text) => AssistantContent::Text(TextContent::new(text)),
                Building::Thinking(text) => AssistantContent::Thinking(ThinkingContent::new(text)),
                Building::Call {
                    id,
                    name,
                    arguments,
                    event,
                } => AssistantContent::ToolCall(ToolCall {
                    arguments: parse_arguments(
                        &arguments,
                        &format!("content[{position}].arguments"),
                        &mut warnings,
                        Some(event),
                    ),
                    id,
                    name,
                    signature: None,
                }),
            });
        }
        if let Some(error) = self.error {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(error);
            return Ok((message, warnings));
        }
        message.stop_reason = match (self.finish_reason, self.done) {
            (Some(reason), _) => stop_reason(&reason),
            // Some compatible servers end with `[DONE]` and no finish_reason.
            (None, true) if message.tool_calls().next().is_some() => StopReason::ToolUse,
            (None, true) => StopReason::Stop,
            (None, false) => {
                return Err(ResponseError::Truncated {
                    events: self.events,
                    message: "no chunk carried a finish_reason and no [DONE] came".into(),
                })
            }
        };
        if self.refused && message.stop_reason == StopReason::Stop {
            message.stop_reason = StopReason::GuardRail;
        }
        Ok((message, warnings))
    }

    fn append_text(&mut self, text: &str, thinking: bool) {
        match (self.blocks.last_mut(), thinking) {
            (Some(Building::Text(buf)), false) | (Some(Building::Thinking(buf)), true) => {
                buf.push_str(text)
            }
            _ => self.blocks.push(if thinking {
                Building::Thinking(text.to_owned())
            } else {
                Building::Text(text.to_owned())
            }),
        }
    }

    fn apply(&mut self, chunk: WireChunk, event: usize) {
        if let Some(error) = &chunk.error {
            self.error = Some(error.describe());
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
            if let Some(reasoning) = delta
                .reasoning_content
                .or(delta.reasoning)
                .filter(|r| !r.is_empty())
            {
                self.append_text(&reasoning, true);
            }
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                self.append_text(&text, false);
            }
            if let Some(refusal) = delta.refusal.filter(|t| !t.is_empty()) {
                self.refused = true;
                self.append_text(&refusal, false);
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

impl StreamDecode for StreamDecoder {
    fn push(&mut self, event: &str) -> Result<(), ResponseError> {
        let index = self.events;
        self.events += 1;
        if event.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        match serde_json::from_str::<WireChunk>(event) {
            Ok(chunk) => {
                self.apply(chunk, index);
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
