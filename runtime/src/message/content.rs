//! Content blocks, the per-role content enums and the role rules.
//!
//! Every block is a struct of its own ([`TextContent`], [`ImageContent`], …). A
//! message holds the enum of its role ([`UserContent`], [`AssistantContent`],
//! [`ToolResultContent`]), so a block that may not appear in a role cannot be put
//! there: the constructors take any block that implements the role's trait
//! ([`IntoUserContent`], [`IntoAssistantContent`], [`IntoToolResultContent`],
//! [`IntoSystemContent`]) and the compiler names the block and the role otherwise.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

pub use super::arguments::ToolArguments;
use super::Role;
pub use crate::json::raw_json::RawJson;

/// A block of plain text, with the provider's opaque signature when it gave
/// one. `textSignature` (pi's name; OpenAI Responses' message id and phase) is
/// read as `signature`. In an assistant message it may carry the provider's
/// `citations`, verbatim (see [`TextContent::citations`]).
///
/// ```json
/// {"type":"text","text":"fn main() {}"}
/// {"type":"text","text":"Done.","signature":"msg_68af…"}
/// {"type":"text","text":"Rust is fast.","citations":[{"type":"web_search_result_location","url":"https://…","cited_text":"…"}]}
/// ```
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::{Content, TextContent};
/// // A pi line's block: its `textSignature` is kept, and written back as `signature`.
/// let block: Content =
///     serde_json::from_str(r#"{"type":"text","text":"Done.","textSignature":"msg_1"}"#).unwrap();
/// assert_eq!(block, Content::Text(TextContent::new("Done.").with_signature("msg_1")));
/// assert_eq!(
///     serde_json::to_string(&block).unwrap(),
///     r#"{"type":"text","text":"Done.","signature":"msg_1"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// The provider's opaque data about this text, kept to be given back to the
    /// same model (not written when `None`): Gemini's `thoughtSignature` on a text
    /// part, or the id (and phase) of an OpenAI Responses message, as pi stores
    /// them.
    #[serde(
        default,
        alias = "textSignature",
        skip_serializing_if = "Option::is_none"
    )]
    pub signature: Option<String>,
    /// What the provider cites for this text, exactly as it wrote it (not
    /// written when `None`): Anthropic's `citations` array, or the
    /// `annotations` array of an OpenAI Responses `output_text` (URL and file
    /// citations). Its shape is the API's own, so it goes back only to the API
    /// of the message that holds it ([`prepare`](crate::prepare) drops it,
    /// with a report, for another).
    /// Not written when `None` or JSON `null` (which reads back as `None`).
    #[serde(default, skip_serializing_if = "no_citations")]
    pub citations: Option<RawJson>,
}

fn no_citations(citations: &Option<RawJson>) -> bool {
    citations.as_ref().is_none_or(|c| c.get() == "null")
}

impl TextContent {
    /// A text block without a signature.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            signature: None,
            citations: None,
        }
    }

    /// The same block with these citations (the provider's JSON, verbatim).
    #[must_use]
    pub fn with_citations(mut self, citations: RawJson) -> Self {
        self.citations = Some(citations);
        self
    }
}

/// A block that a provider wrote and agentmsg does not model, kept verbatim in
/// its place among the other blocks: a server-side tool call and its result
/// (Anthropic `server_tool_use`, `web_search_tool_result`, `mcp_tool_use`…;
/// OpenAI Responses `web_search_call`, `code_interpreter_call`, `mcp_call`…;
/// Gemini `executableCode`, `codeExecutionResult`), a compaction, the
/// grounding metadata of a Gemini answer. Allowed in assistant messages.
///
/// It is never a client tool call. The encoder of the API that wrote it
/// replays it in place, as it is (Anthropic: the block in the assistant
/// content; Responses: the item in the input; Gemini: the part);
/// [`prepare`](crate::prepare) drops it, with a report, for another API or
/// provider.
///
/// ```json
/// {"type":"providerBlock","api":"anthropic-messages","block":{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"rust"}}}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProviderBlock {
    /// The API that wrote it, such as `anthropic-messages`.
    pub api: String,
    /// The block, item or part, exactly as the provider wrote it (a JSON object).
    #[serde(deserialize_with = "object_block")]
    pub block: RawJson,
}

fn object_block<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RawJson, D::Error> {
    let raw = RawJson::deserialize(deserializer)?;
    if !raw.is_object() {
        return Err(de::Error::custom(format_args!(
            "providerBlock `block` must be a JSON object, found {}",
            raw.get().chars().take(40).collect::<String>()
        )));
    }
    Ok(raw)
}

impl ProviderBlock {
    /// The image the block carries, when it is one agentmsg knows: the result
    /// of an OpenAI Responses `image_generation_call` (base64, of its
    /// `output_format`, PNG when it names none), or a Gemini part's
    /// `inlineData` of an image type (a thought image). The block itself stays
    /// as it is, to go back to its provider.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::ProviderBlock;
    /// use agentmsg::message::{MediaSource, RawJson};
    /// let call = RawJson::from_json(r#"{"type":"image_generation_call","id":"ig_1","status":"completed","output_format":"webp","result":"UklGRg=="}"#)?;
    /// let image = ProviderBlock::new("openai-responses", call).image().unwrap();
    /// assert_eq!(image.source, MediaSource::Base64 { data: "UklGRg==".into(), mime_type: "image/webp".into() });
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn image(&self) -> Option<ImageContent> {
        let block = self.block.to_value();
        let base64 = |data: &serde_json::Value, mime: String| {
            let data = data.as_str().filter(|d| !d.is_empty())?;
            Some(ImageContent {
                source: MediaSource::Base64 {
                    data: data.to_owned(),
                    mime_type: mime,
                },
            })
        };
        if block.get("type").and_then(serde_json::Value::as_str) == Some("image_generation_call") {
            let format = block
                .get("output_format")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("png");
            return base64(block.get("result")?, format!("image/{format}"));
        }
        let inline = block.get("inlineData")?;
        let mime = inline.get("mimeType")?.as_str()?;
        if !mime.starts_with("image/") {
            return None;
        }
        base64(inline.get("data")?, mime.to_owned())
    }

    /// The block `block` written by `api`.
    pub fn new(api: impl Into<String>, block: RawJson) -> Self {
        Self {
            api: api.into(),
            block,
        }
    }

    /// The block's own `"type"` (`server_tool_use`, `web_search_call`…), if it
    /// has one; a Gemini part is named by its one key (`executableCode`…).
    pub fn type_name(&self) -> String {
        if let Some(kind) = self.block.type_name() {
            return kind;
        }
        match self.block.to_value() {
            serde_json::Value::Object(map) => map
                .keys()
                .find(|k| k.as_str() != "thoughtSignature")
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        }
    }
}

impl From<&str> for TextContent {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<String> for TextContent {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

/// Where the bytes of an image or a document are: inline as base64, or at a URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MediaSource {
    /// Inline data.
    Base64 {
        /// The bytes, base64 (standard alphabet, padded).
        data: String,
        /// The MIME type, such as `image/png`.
        mime_type: String,
    },
    /// A URL the provider fetches itself (`https:`, `gs:`, a file id…).
    Url(String),
}

impl MediaSource {
    /// The MIME type of inline data; `None` for a URL.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            Self::Base64 { mime_type, .. } => Some(mime_type),
            Self::Url(_) => None,
        }
    }

    /// The base64 data; `None` for a URL.
    pub fn data(&self) -> Option<&str> {
        match self {
            Self::Base64 { data, .. } => Some(data),
            Self::Url(_) => None,
        }
    }

    /// The URL; `None` for inline data.
    pub fn url(&self) -> Option<&str> {
        match self {
            Self::Url(url) => Some(url),
            Self::Base64 { .. } => None,
        }
    }
}

/// The flat JSON form shared by image and document blocks.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MediaWire {
    #[serde(default)]
    data: Option<String>,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    title: Option<String>,
}

impl MediaWire {
    fn into_source<E: de::Error>(self, block: &str) -> Result<(MediaSource, Option<String>), E> {
        let source = match (self.data, self.mime_type, self.url) {
            (Some(data), Some(mime_type), None) => MediaSource::Base64 { data, mime_type },
            (None, None, Some(url)) => MediaSource::Url(url),
            (Some(_), None, None) => {
                return Err(E::custom(format_args!(
                    "{block} block has `data` but no `mimeType`"
                )))
            }
            (None, Some(_), None) => {
                return Err(E::custom(format_args!(
                    "{block} block has `mimeType` but no `data`"
                )))
            }
            (None, None, None) => {
                return Err(E::custom(format_args!(
                    "{block} block needs `data` and `mimeType`, or `url`"
                )))
            }
            _ => {
                return Err(E::custom(format_args!(
                    "{block} block has both `url` and `data`; it takes one of them"
                )))
            }
        };
        Ok((source, self.title))
    }
}

fn serialize_source<M: SerializeMap>(map: &mut M, source: &MediaSource) -> Result<(), M::Error> {
    match source {
        MediaSource::Base64 { data, mime_type } => {
            map.serialize_entry("data", data)?;
            map.serialize_entry("mimeType", mime_type)
        }
        MediaSource::Url(url) => map.serialize_entry("url", url),
    }
}

/// An image: base64 data with its MIME type, or a URL. Allowed in user and
/// tool-result messages, and in assistant messages (an image the model made).
///
/// ```json
/// {"type":"image","data":"iVBORw0KGgo…","mimeType":"image/png"}
/// {"type":"image","url":"https://example.com/cat.jpg"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImageContent {
    /// Where the image is.
    pub source: MediaSource,
}

impl Serialize for ImageContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        serialize_source(&mut map, &self.source)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for ImageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (source, _) = MediaWire::deserialize(deserializer)?.into_source("image")?;
        Ok(Self { source })
    }
}

/// A clip of audio, base64 with its MIME type. Allowed in user messages.
///
/// ```json
/// {"type":"audio","data":"SUQzBAAAAAAA…","mimeType":"audio/mpeg"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// The bytes, base64.
    pub data: String,
    /// The MIME type, such as `audio/wav`.
    pub mime_type: String,
}

/// A document (PDF…): base64 data with its MIME type, or a URL, and an optional
/// title. Allowed in user messages.
///
/// ```json
/// {"type":"document","data":"JVBERi0xLjcK…","mimeType":"application/pdf","title":"spec.pdf"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DocumentContent {
    /// Where the document is.
    pub source: MediaSource,
    /// A title shown to the model, if the provider takes one.
    pub title: Option<String>,
}

impl Serialize for DocumentContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        serialize_source(&mut map, &self.source)?;
        if let Some(title) = &self.title {
            map.serialize_entry("title", title)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for DocumentContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (source, title) = MediaWire::deserialize(deserializer)?.into_source("document")?;
        Ok(Self { source, title })
    }
}

/// The model's reasoning, with the provider's opaque signature when it gave one.
/// Allowed in assistant messages. `thinkingSignature` (pi's name) is read as
/// `signature`.
///
/// ```json
/// {"type":"thinking","thinking":"The user wants…","signature":"EqQBCkgIARABGAIi…"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ThinkingContent {
    /// The reasoning text.
    pub thinking: String,
    /// The provider's signature, echoed back unchanged to the same model.
    #[serde(
        default,
        alias = "thinkingSignature",
        skip_serializing_if = "Option::is_none"
    )]
    pub signature: Option<String>,
}

/// A `thinking` block as a block list reads it: pi marks reasoning the
/// provider returned encrypted as `"redacted": true`, with the opaque data in
/// its signature (`{"type":"thinking","thinking":"[Reasoning redacted]",
/// "thinkingSignature":"EmwK…","redacted":true}`); that is redacted thinking.
#[derive(Deserialize)]
pub(crate) struct ThinkingWire {
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default, alias = "thinkingSignature")]
    signature: Option<String>,
    #[serde(default)]
    redacted: bool,
}

impl ThinkingWire {
    pub(crate) fn into_block<E: de::Error>(self) -> Result<Content, E> {
        if self.redacted {
            return Ok(Content::RedactedThinking(RedactedThinkingContent {
                data: self.signature.unwrap_or_default(),
            }));
        }
        Ok(Content::Thinking(ThinkingContent {
            thinking: self.thinking.ok_or_else(|| E::missing_field("thinking"))?,
            signature: self.signature,
        }))
    }
}

impl ThinkingContent {
    /// A thinking block without a signature.
    pub fn new(thinking: impl Into<String>) -> Self {
        Self {
            thinking: thinking.into(),
            signature: None,
        }
    }
}

/// Reasoning the provider returned encrypted; only the same model can read it.
/// Allowed in assistant messages.
///
/// ```json
/// {"type":"redactedThinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a…"}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct RedactedThinkingContent {
    /// The opaque data.
    pub data: String,
}

impl RedactedThinkingContent {
    /// A redacted-thinking block.
    pub fn new(data: impl Into<String>) -> Self {
        Self { data: data.into() }
    }
}

/// A call of a tool by the model. Allowed in assistant messages. Gemini's
/// `thoughtSignature` (pi's name) is read as `signature`.
///
/// ```json
/// {"type":"toolCall","id":"toolu_01","name":"read","arguments":{"path":"a.rs"}}
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id that the tool result answers with.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object in the order the model wrote it.
    pub arguments: ToolArguments,
    /// The provider's signature on this call, echoed back to the same model.
    #[serde(
        default,
        alias = "thoughtSignature",
        skip_serializing_if = "Option::is_none"
    )]
    pub signature: Option<String>,
}

impl ToolCall {
    /// A tool call. `arguments` that are not a JSON object (a `Value` that is
    /// not one) are wrapped as `{"value": …}` so nothing is lost; `null` becomes
    /// `{}`.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<ToolArguments>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            signature: None,
        }
    }
}

/// `with_signature` and `signature` for the blocks that carry a provider's
/// opaque signature.
macro_rules! signed_blocks {
    ($($block:ident),+) => {$(
        impl $block {
            /// The same block with `signature`.
            #[must_use]
            pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
                self.signature = Some(signature.into());
                self
            }

            /// The signature, treating an empty string as none.
            pub fn signature(&self) -> Option<&str> {
                self.signature.as_deref().filter(|s| !s.is_empty())
            }
        }
    )+};
}

signed_blocks!(TextContent, ThinkingContent, ToolCall);

/// The kinds of content block, as written in `"type"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BlockKind {
    /// `"text"`
    Text,
    /// `"image"`
    Image,
    /// `"audio"`
    Audio,
    /// `"document"`
    Document,
    /// `"thinking"`
    Thinking,
    /// `"redactedThinking"`
    RedactedThinking,
    /// `"toolCall"`
    ToolCall,
    /// `"providerBlock"`
    ProviderBlock,
}

impl BlockKind {
    /// The block's `"type"` as written in JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Document => "document",
            Self::Thinking => "thinking",
            Self::RedactedThinking => "redactedThinking",
            Self::ToolCall => "toolCall",
            Self::ProviderBlock => "providerBlock",
        }
    }
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Content of a user message: text, image, audio or document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserContent {
    /// A text block.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
    /// An audio clip.
    Audio(AudioContent),
    /// A document.
    Document(DocumentContent),
}

/// Content of an assistant message: text, an image the model made, thinking,
/// redacted thinking, a tool call, or a provider's own block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantContent {
    /// A text block.
    Text(TextContent),
    /// An image the model generated (Gemini `inlineData`, an OpenAI image
    /// generation result).
    Image(ImageContent),
    /// Reasoning.
    Thinking(ThinkingContent),
    /// Encrypted reasoning.
    RedactedThinking(RedactedThinkingContent),
    /// A tool call.
    ToolCall(ToolCall),
    /// A block of the provider's own (a server-side tool call or result…),
    /// kept verbatim; never a client tool call.
    ProviderBlock(ProviderBlock),
}

/// Content of a tool result: text or image.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ToolResultContent {
    /// A text block.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
}

/// Any content block, whatever the role.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Content {
    /// A text block.
    Text(TextContent),
    /// An image.
    Image(ImageContent),
    /// An audio clip.
    Audio(AudioContent),
    /// A document.
    Document(DocumentContent),
    /// Reasoning.
    Thinking(ThinkingContent),
    /// Encrypted reasoning.
    RedactedThinking(RedactedThinkingContent),
    /// A tool call.
    ToolCall(ToolCall),
    /// A provider's own block.
    ProviderBlock(ProviderBlock),
}

impl Content {
    /// Which kind of block this is.
    pub fn kind(&self) -> BlockKind {
        match self {
            Self::Text(_) => BlockKind::Text,
            Self::Image(_) => BlockKind::Image,
            Self::Audio(_) => BlockKind::Audio,
            Self::Document(_) => BlockKind::Document,
            Self::Thinking(_) => BlockKind::Thinking,
            Self::RedactedThinking(_) => BlockKind::RedactedThinking,
            Self::ToolCall(_) => BlockKind::ToolCall,
            Self::ProviderBlock(_) => BlockKind::ProviderBlock,
        }
    }
}

impl UserContent {
    /// Which kind of block this is.
    pub fn kind(&self) -> BlockKind {
        match self {
            Self::Text(_) => BlockKind::Text,
            Self::Image(_) => BlockKind::Image,
            Self::Audio(_) => BlockKind::Audio,
            Self::Document(_) => BlockKind::Document,
        }
    }
}

impl AssistantContent {
    /// Which kind of block this is.
    pub fn kind(&self) -> BlockKind {
        match self {
            Self::Text(_) => BlockKind::Text,
            Self::Image(_) => BlockKind::Image,
            Self::Thinking(_) => BlockKind::Thinking,
            Self::RedactedThinking(_) => BlockKind::RedactedThinking,
            Self::ToolCall(_) => BlockKind::ToolCall,
            Self::ProviderBlock(_) => BlockKind::ProviderBlock,
        }
    }
}

impl ToolResultContent {
    /// Which kind of block this is.
    pub fn kind(&self) -> BlockKind {
        match self {
            Self::Text(_) => BlockKind::Text,
            Self::Image(_) => BlockKind::Image,
        }
    }
}

/// A content block was moved into a role that does not allow it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{block}` blocks cannot appear in {role} messages")]
pub struct RoleError {
    /// The block that did not fit.
    pub block: BlockKind,
    /// The role it was meant for.
    pub role: Role,
}

/// A role enum is read as any block, then checked: a block of another role is an
/// error that names the block and the role (`a `thinking` block cannot appear in a
/// user message`), not serde's "unknown variant". It costs no more than reading
/// the role enum itself: the tag is matched once either way.
macro_rules! role_deserialize {
    ($($role_enum:ident),+) => {
        $(
            impl<'de> Deserialize<'de> for $role_enum {
                fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                    let content = Content::deserialize(deserializer)?;
                    Self::try_from(content).map_err(de::Error::custom)
                }
            }
        )+
    };
}

role_deserialize!(UserContent, AssistantContent, ToolResultContent);

/// `From` each role enum and each block into [`Content`], and `TryFrom` back.
macro_rules! content_conversions {
    ($role_enum:ident, $role:expr, [$($variant:ident($block:ty)),+ $(,)?]) => {
        impl From<$role_enum> for Content {
            fn from(value: $role_enum) -> Self {
                match value {
                    $($role_enum::$variant(block) => Content::$variant(block),)+
                }
            }
        }

        impl TryFrom<Content> for $role_enum {
            type Error = RoleError;

            fn try_from(value: Content) -> Result<Self, RoleError> {
                match value {
                    $(Content::$variant(block) => Ok($role_enum::$variant(block)),)+
                    #[allow(unreachable_patterns)]
                    other => Err(RoleError { block: other.kind(), role: $role }),
                }
            }
        }

        $(
            impl From<$block> for $role_enum {
                fn from(block: $block) -> Self {
                    $role_enum::$variant(block)
                }
            }
        )+
    };
}

content_conversions!(
    UserContent,
    Role::User,
    [
        Text(TextContent),
        Image(ImageContent),
        Audio(AudioContent),
        Document(DocumentContent),
    ]
);
content_conversions!(
    AssistantContent,
    Role::Assistant,
    [
        Text(TextContent),
        Image(ImageContent),
        Thinking(ThinkingContent),
        RedactedThinking(RedactedThinkingContent),
        ToolCall(ToolCall),
        ProviderBlock(ProviderBlock),
    ]
);
content_conversions!(
    ToolResultContent,
    Role::ToolResult,
    [Text(TextContent), Image(ImageContent),]
);

macro_rules! block_into_content {
    ($($variant:ident($block:ty)),+ $(,)?) => {
        $(
            impl From<$block> for Content {
                fn from(block: $block) -> Self {
                    Content::$variant(block)
                }
            }
        )+
    };
}

block_into_content!(
    Text(TextContent),
    Image(ImageContent),
    Audio(AudioContent),
    Document(DocumentContent),
    Thinking(ThinkingContent),
    RedactedThinking(RedactedThinkingContent),
    ToolCall(ToolCall),
    ProviderBlock(ProviderBlock),
);

/// A block that may appear in a user message: [`TextContent`], [`ImageContent`],
/// [`AudioContent`], [`DocumentContent`] (or a [`UserContent`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in a user message",
    label = "not allowed in a user message",
    note = "a user message takes text, image, audio and document blocks (`UserContent`)"
)]
pub trait IntoUserContent {
    /// The block as user content.
    fn into_user_content(self) -> UserContent;
}

/// A block that may appear in an assistant message: [`TextContent`],
/// [`ImageContent`] (an image the model made), [`ThinkingContent`],
/// [`RedactedThinkingContent`], [`ToolCall`], [`ProviderBlock`] (or an
/// [`AssistantContent`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in an assistant message",
    label = "not allowed in an assistant message",
    note = "an assistant message takes text, image, thinking, redacted thinking, tool-call and provider blocks (`AssistantContent`)"
)]
pub trait IntoAssistantContent {
    /// The block as assistant content.
    fn into_assistant_content(self) -> AssistantContent;
}

/// A block that may appear in a tool result: [`TextContent`], [`ImageContent`]
/// (or a [`ToolResultContent`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in a tool result",
    label = "not allowed in a tool result",
    note = "a tool result takes text and image blocks (`ToolResultContent`)"
)]
pub trait IntoToolResultContent {
    /// The block as tool-result content.
    fn into_tool_result_content(self) -> ToolResultContent;
}

/// A block that may appear in a system message: only [`TextContent`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in a system message",
    label = "not allowed in a system message",
    note = "a system message takes text blocks only (`TextContent`)"
)]
pub trait IntoSystemContent {
    /// The block as system content.
    fn into_system_content(self) -> TextContent;
}

macro_rules! role_trait_impls {
    ($trait:ident, $method:ident, $target:ty, [$($block:ty),+ $(,)?]) => {
        $(
            impl $trait for $block {
                fn $method(self) -> $target {
                    self.into()
                }
            }
        )+
    };
}

role_trait_impls!(
    IntoUserContent,
    into_user_content,
    UserContent,
    [
        UserContent,
        TextContent,
        ImageContent,
        AudioContent,
        DocumentContent,
    ]
);
role_trait_impls!(
    IntoAssistantContent,
    into_assistant_content,
    AssistantContent,
    [
        AssistantContent,
        TextContent,
        ImageContent,
        ThinkingContent,
        RedactedThinkingContent,
        ToolCall,
        ProviderBlock,
    ]
);
role_trait_impls!(
    IntoToolResultContent,
    into_tool_result_content,
    ToolResultContent,
    [ToolResultContent, TextContent, ImageContent,]
);
role_trait_impls!(
    IntoSystemContent,
    into_system_content,
    TextContent,
    [TextContent]
);

impl IntoUserContent for &str {
    fn into_user_content(self) -> UserContent {
        UserContent::Text(TextContent::new(self))
    }
}

impl IntoUserContent for String {
    fn into_user_content(self) -> UserContent {
        UserContent::Text(TextContent::new(self))
    }
}

impl IntoAssistantContent for &str {
    fn into_assistant_content(self) -> AssistantContent {
        AssistantContent::Text(TextContent::new(self))
    }
}

impl IntoAssistantContent for String {
    fn into_assistant_content(self) -> AssistantContent {
        AssistantContent::Text(TextContent::new(self))
    }
}

impl IntoToolResultContent for &str {
    fn into_tool_result_content(self) -> ToolResultContent {
        ToolResultContent::Text(TextContent::new(self))
    }
}

impl IntoToolResultContent for String {
    fn into_tool_result_content(self) -> ToolResultContent {
        ToolResultContent::Text(TextContent::new(self))
    }
}

impl IntoSystemContent for &str {
    fn into_system_content(self) -> TextContent {
        TextContent::new(self)
    }
}

impl IntoSystemContent for String {
    fn into_system_content(self) -> TextContent {
        TextContent::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pi's redacted thinking (issue 23, finding 5) is redacted thinking, its
    /// data the signature, whatever the order of the block's keys; a thinking
    /// block without `thinking` that is not redacted is still refused.
    #[test]
    fn pi_redacted_thinking_is_redacted_thinking() {
        for block in [
            r#"{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"EmwK","redacted":true}"#,
            r#"{"redacted":true,"thinkingSignature":"EmwK","type":"thinking"}"#,
            r#"{"type":"thinking","redacted":true,"signature":"EmwK"}"#,
        ] {
            let read: AssistantContent = serde_json::from_str(block).unwrap();
            assert_eq!(
                read,
                AssistantContent::RedactedThinking(RedactedThinkingContent::new("EmwK")),
                "{block}"
            );
        }
        for block in [
            r#"{"type":"thinking","thinking":"t","signature":"s","redacted":false}"#,
            r#"{"signature":"s","thinking":"t","type":"thinking"}"#,
        ] {
            let read: AssistantContent = serde_json::from_str(block).unwrap();
            assert_eq!(
                read,
                AssistantContent::Thinking(ThinkingContent::new("t").with_signature("s")),
                "{block}"
            );
        }
        for block in [
            r#"{"type":"thinking","signature":"s"}"#,
            r#"{"signature":"s","type":"thinking"}"#,
        ] {
            let error = serde_json::from_str::<AssistantContent>(block).unwrap_err();
            assert!(error.to_string().contains("thinking"), "{error}");
        }
    }

    #[test]
    fn raw_json_drops_only_the_whitespace_between_tokens() {
        let raw = RawJson::from_json(
            " {\"a\" : \"x \\\" y\\\\\" ,\n \"b\":[ 1 ,\t2 ], \"c\" : \"\u{e9} \\n\"}\r\n",
        )
        .unwrap();
        assert_eq!(
            raw.get(),
            "{\"a\":\"x \\\" y\\\\\",\"b\":[1,2],\"c\":\"\u{e9} \\n\"}"
        );
        assert!(RawJson::from_json("{\"a\":").is_err());
        assert!(RawJson::from_json("1 2").is_err());
    }

    #[test]
    fn raw_json_reads_from_any_deserializer() {
        // serde's buffered content (an internally tagged enum) hands the value
        // over, not its text: it is kept, compact.
        #[derive(Deserialize)]
        #[serde(tag = "kind")]
        enum Tagged {
            Block { raw: RawJson },
        }
        let Tagged::Block { raw } =
            serde_json::from_str(r#"{"raw":{"z":[1,{"y":null}],"a":"b"},"kind":"Block"}"#).unwrap();
        assert_eq!(
            raw.to_value(),
            serde_json::json!({"z":[1,{"y":null}],"a":"b"})
        );
        let scalars: Vec<RawJson> =
            serde_json::from_value(serde_json::json!([1, "s", null, true, 2.5])).unwrap();
        let texts: Vec<&str> = scalars.iter().map(RawJson::get).collect();
        assert_eq!(texts, ["1", "\"s\"", "null", "true", "2.5"]);
    }

    #[test]
    fn a_provider_block_is_named_by_its_type_or_its_one_key() {
        let anthropic = ProviderBlock::new(
            "anthropic-messages",
            RawJson::from_json(r#"{"type":"web_search_tool_result","tool_use_id":"s"}"#).unwrap(),
        );
        assert_eq!(anthropic.type_name(), "web_search_tool_result");
        let gemini = ProviderBlock::new(
            "google-generative-ai",
            RawJson::from_json(r#"{"thoughtSignature":"c2ln","executableCode":{"code":"1"}}"#)
                .unwrap(),
        );
        assert_eq!(gemini.type_name(), "executableCode");
        assert!(gemini.image().is_none());
    }
}
