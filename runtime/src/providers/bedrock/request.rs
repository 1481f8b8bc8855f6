//! The request encoder.

use serde_json::{json, Map, Value};

use super::options::write_options;
use super::{is_claude, API, PROVIDER};
use crate::message::MediaSource;
use crate::project::{ChangeKind, IdRule};
use crate::providers::body::calls_of;
use crate::providers::options::OptionReport;
use crate::providers::shared::tools::{check_name, encode_tools, object_schema};
use crate::providers::shared::turns::{write_turns, BlockWriter, Conversation, Turns};
use crate::providers::{Body, EncodeError, Encoded, Request, ToolSpec};
use crate::ToolResultMessage;
use crate::{AssistantContent, DocumentContent, ImageContent, ToolResultContent, UserContent};

/// The image formats Converse reads, by MIME type.
const IMAGE_FORMATS: [(&str, &str); 4] = [
    ("image/png", "png"),
    ("image/jpeg", "jpeg"),
    ("image/gif", "gif"),
    ("image/webp", "webp"),
];

/// The document formats Converse reads, by MIME type.
const DOCUMENT_FORMATS: [(&str, &str); 9] = [
    ("application/pdf", "pdf"),
    ("text/csv", "csv"),
    ("application/msword", "doc"),
    (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "docx",
    ),
    ("application/vnd.ms-excel", "xls"),
    (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "xlsx",
    ),
    ("text/html", "html"),
    ("text/plain", "txt"),
    ("text/markdown", "md"),
];

/// The longest document `name` Converse takes, in characters.
const MAX_DOCUMENT_NAME: usize = 200;

/// The URL path of a Converse call for `model`: `/model/{modelId}/converse`,
/// or `/model/{modelId}/converse-stream` for a stream. The id is
/// percent-encoded as one path segment (an inference profile's `:` and an
/// ARN's `/` included), as the AWS SDKs encode it, so the path signs as sent.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::bedrock::model_path;
/// assert_eq!(model_path("us.anthropic.claude-sonnet-4-5-20250929-v1:0", false),
///     "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse");
/// assert_eq!(
///     model_path("arn:aws:bedrock:us-east-1:123456789012:inference-profile/x", true),
///     "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fx/converse-stream",
/// );
/// ```
pub fn model_path(model: &str, stream: bool) -> String {
    let mut path = String::from("/model/");
    for byte in model.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            path.push(char::from(byte));
        } else {
            path.push_str(&format!("%{byte:02X}"));
        }
    }
    path.push_str(if stream {
        "/converse-stream"
    } else {
        "/converse"
    });
    path
}

/// Encodes a request as a Bedrock Converse body. Runs
/// [`prepare`](crate::prepare) for the target `amazon-bedrock` (or
/// [`Request::provider`]) / `bedrock-converse-stream` / `request.model` first
/// (tool-call ids as Converse takes them, `[a-zA-Z0-9_-]`, at most 64; signed
/// thinking only, for a Claude model), so any projection of a transcript may
/// be given. The model id is not in the body: it goes in the URL
/// ([`model_path`]).
///
/// # Errors
/// [`EncodeError::Invalid`] for an empty model, a tool name Converse rejects,
/// a tool schema that is not an object schema, or a conversation with no
/// message left to send.
pub fn encode_request(request: &Request) -> Result<Encoded, EncodeError> {
    if request.model.trim().is_empty() {
        return Err(EncodeError::invalid("model", "the model id is empty"));
    }
    let claude = is_claude(&request.model);
    let prepared = request.prepared_with(PROVIDER, API, |target| {
        target
            .id_rule(IdRule::Anthropic)
            .tool_result_images(true)
            .unsigned_thinking(!claude)
    })?;
    let origins: Vec<usize> = prepared.provenance.iter().map(|o| o.index()).collect();
    let mut encoder = Encoder {
        conversation: Conversation {
            report: prepared.report,
            turns: Turns::new("Bedrock", ["user", "assistant"]),
            system: Vec::new(),
        },
        claude,
    };
    if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
        encoder
            .conversation
            .system
            .push(Encoder::text_block(system));
    }
    let messages = write_turns(&mut encoder, &prepared.messages, &origins)?;
    let Conversation { report, system, .. } = encoder.conversation;

    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    let tools = encode_tools(&request.tools, encode_tool)?;
    let mut options = OptionReport::default();
    write_options(request, tools, &mut body, &mut options);
    let body = Body::with_arguments(
        Value::Object(body),
        calls_of(&prepared.messages),
        ("messages", "content"),
        |block| {
            let id = block.get("toolUse")?.get("toolUseId")?.as_str()?;
            Some((id, &["toolUse", "input"]))
        },
    );
    Ok(Encoded {
        body,
        report,
        options: options.0,
    })
}

/// One tool as a `toolSpec`.
fn encode_tool(i: usize, tool: &ToolSpec) -> Result<Value, EncodeError> {
    check_name(i, &tool.name, 64, "Bedrock")?;
    let schema = object_schema(i, &tool.parameters, "Bedrock")?;
    let mut spec = Map::new();
    spec.insert("name".into(), tool.name.clone().into());
    if !tool.description.is_empty() {
        spec.insert("description".into(), tool.description.clone().into());
    }
    spec.insert("inputSchema".into(), json!({ "json": schema }));
    Ok(json!({ "toolSpec": spec }))
}

/// The request being encoded, for a Claude model or another.
struct Encoder {
    conversation: Conversation,
    claude: bool,
}

impl BlockWriter for Encoder {
    fn conversation(&mut self) -> &mut Conversation {
        &mut self.conversation
    }

    fn text_block(text: &str) -> Value {
        json!({ "text": text })
    }

    fn is_result(block: &Value) -> bool {
        block.get("toolResult").is_some()
    }

    fn user_blocks(&mut self, index: usize, content: &[UserContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                UserContent::Text(t) => {
                    if !t.text.is_empty() {
                        out.push(json!({ "text": t.text }));
                    }
                }
                UserContent::Image(image) => out.push(self.image_block(index, image)),
                UserContent::Audio(audio) => {
                    self.change(
                        index,
                        ChangeKind::UnsupportedContent,
                        format!(
                            "Converse takes no audio from agentmsg's models: a {} clip became a text placeholder",
                            audio.mime_type
                        ),
                    );
                    out.push(json!({"text": format!(
                        "[audio ({}) omitted: this model does not take audio]",
                        audio.mime_type
                    )}));
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
                        out.push(json!({ "text": t.text }));
                    }
                }
                // `prepare` made every assistant image text for this API.
                AssistantContent::Image(_) => {}
                AssistantContent::ProviderBlock(provider) => {
                    if provider.api == API && provider.block.is_object() {
                        out.push(provider.block.to_value());
                    } else {
                        self.change(
                            index,
                            ChangeKind::DroppedProviderData,
                            format!(
                                "dropped a `{}` block of `{}`: Bedrock takes back only its own",
                                provider.type_name(),
                                provider.api
                            ),
                        );
                    }
                }
                AssistantContent::Thinking(thinking) => {
                    if thinking.thinking.is_empty() && thinking.signature().is_none() {
                        continue;
                    }
                    match thinking.signature() {
                        Some(signature) => out.push(json!({"reasoningContent": {"reasoningText": {
                            "text": thinking.thinking, "signature": signature
                        }}})),
                        None if !self.claude => out.push(json!({"reasoningContent": {
                            "reasoningText": {"text": thinking.thinking}
                        }})),
                        None => self.change(
                            index,
                            ChangeKind::DroppedThinking,
                            "thinking without a signature cannot be replayed to Claude on Bedrock: dropped",
                        ),
                    }
                }
                AssistantContent::RedactedThinking(r) => {
                    out.push(json!({"reasoningContent": {"redactedContent": r.data}}));
                }
                AssistantContent::ToolCall(call) => out.push(json!({"toolUse": {
                    "toolUseId": call.id,
                    "name": call.name,
                    "input": call.arguments.to_value(),
                }})),
            }
        }
        out
    }

    fn tool_result_block(&mut self, index: usize, result: &ToolResultMessage) -> Value {
        let mut content = self.tool_result_content(index, &result.content);
        if content.is_empty() {
            // `content` is required; an empty result says so.
            content.push(json!({"text": if result.is_error { "error" } else { "(no output)" }}));
        }
        json!({"toolResult": {
            "toolUseId": result.tool_call_id,
            "content": content,
            "status": if result.is_error { "error" } else { "success" },
        }})
    }
}

impl Encoder {
    fn change(&mut self, index: usize, kind: ChangeKind, detail: impl Into<String>) {
        self.conversation.report.record(index, kind, detail);
    }

    fn image_block(&mut self, index: usize, image: &ImageContent) -> Value {
        match &image.source {
            MediaSource::Base64 { data, mime_type } => {
                match IMAGE_FORMATS.iter().find(|(m, _)| m == mime_type) {
                    Some((_, format)) => {
                        json!({"image": {"format": format, "source": {"bytes": data}}})
                    }
                    None => {
                        self.change(
                            index,
                            ChangeKind::ImagePlaceholder,
                            format!(
                                "Converse does not read {mime_type} images: sent a text placeholder"
                            ),
                        );
                        json!({"text": format!("[image ({mime_type}) omitted: unsupported format]")})
                    }
                }
            }
            MediaSource::Url(url) if url.starts_with("s3://") => {
                let format = url
                    .rsplit('.')
                    .next()
                    .map(str::to_ascii_lowercase)
                    .map(|ext| if ext == "jpg" { "jpeg".to_owned() } else { ext })
                    .filter(|ext| IMAGE_FORMATS.iter().any(|(_, f)| f == ext));
                match format {
                    Some(format) => {
                        json!({"image": {"format": format, "source": {"s3Location": {"uri": url}}}})
                    }
                    None => self.url_placeholder(index, "image", url),
                }
            }
            MediaSource::Url(url) => self.url_placeholder(index, "image", url),
        }
    }

    fn url_placeholder(&mut self, index: usize, what: &str, url: &str) -> Value {
        self.change(
            index,
            ChangeKind::ImagePlaceholder,
            format!("Converse fetches no URL but `s3://` ones (of a known format): the {what} at {url} became a text placeholder"),
        );
        json!({"text": format!("[{what} omitted: {url}]")})
    }

    fn document_block(&mut self, index: usize, document: &DocumentContent) -> Value {
        let name = self.document_name(index, document.title.as_deref());
        match &document.source {
            MediaSource::Base64 { data, mime_type } => {
                let format = DOCUMENT_FORMATS
                    .iter()
                    .find(|(m, _)| mime_type == m)
                    .map(|(_, f)| *f);
                match format {
                    Some(format) if !data.is_empty() => json!({"document": {
                        "format": format, "name": name, "source": {"bytes": data}
                    }}),
                    _ => {
                        self.change(
                            index,
                            ChangeKind::UnsupportedContent,
                            format!("Converse does not read {mime_type} documents: sent a text placeholder"),
                        );
                        json!({"text": format!("[document \"{name}\" ({mime_type}) omitted: unsupported format]")})
                    }
                }
            }
            MediaSource::Url(url) if url.starts_with("s3://") => {
                let ext = url
                    .rsplit('.')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                match DOCUMENT_FORMATS.iter().find(|(_, f)| *f == ext) {
                    Some((_, format)) => json!({"document": {
                        "format": format, "name": name, "source": {"s3Location": {"uri": url}}
                    }}),
                    None => self.url_placeholder(index, "document", url),
                }
            }
            MediaSource::Url(url) => self.url_placeholder(index, "document", url),
        }
    }

    /// A document `name` Converse accepts: alphanumerics, single spaces,
    /// hyphens, parentheses and square brackets, 1 to 200 characters.
    fn document_name(&mut self, index: usize, title: Option<&str>) -> String {
        let Some(title) = title.filter(|t| !t.trim().is_empty()) else {
            return "document".to_owned();
        };
        let mut name = String::with_capacity(title.len());
        for c in title.chars() {
            let c = if c.is_alphanumeric() || matches!(c, '-' | '(' | ')' | '[' | ']') {
                c
            } else {
                ' '
            };
            if c == ' ' && (name.is_empty() || name.ends_with(' ')) {
                continue;
            }
            name.push(c);
        }
        let mut name: String = name.trim_end().chars().take(MAX_DOCUMENT_NAME).collect();
        name.truncate(name.trim_end().len());
        if name.is_empty() {
            name = "document".to_owned();
        }
        if name != title {
            self.change(
                index,
                ChangeKind::UnsupportedContent,
                format!("the document title `{title}` sent as the name `{name}`, which Converse accepts"),
            );
        }
        name
    }

    fn tool_result_content(&mut self, index: usize, content: &[ToolResultContent]) -> Vec<Value> {
        let mut out = Vec::with_capacity(content.len());
        for block in content {
            match block {
                ToolResultContent::Text(t) => {
                    if !t.text.is_empty() {
                        out.push(json!({ "text": t.text }));
                    }
                }
                ToolResultContent::Image(image) => out.push(self.image_block(index, image)),
            }
        }
        out
    }
}
