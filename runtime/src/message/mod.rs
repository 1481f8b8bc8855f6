//! The messages a model sees: system, user, assistant and tool result, with their
//! roles, content blocks, ids, media and usage.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

mod arguments;
pub(crate) mod content;
mod id;
pub(crate) mod media;
pub(crate) mod overflow;
mod role;
pub(crate) mod usage;
mod uuid_v7;

pub use content::{
    AssistantContent, AudioContent, BlockKind, Content, DocumentContent, ImageContent,
    IntoAssistantContent, IntoSystemContent, IntoToolResultContent, IntoUserContent, MediaSource,
    ProviderBlock, RawJson, RedactedThinkingContent, RoleError, TextContent, ThinkingContent,
    ToolArguments, ToolCall, ToolResultContent, UserContent,
};
pub use id::{MessageId, ParentId, TurnId};
pub use media::{Base64Problem, MediaError, MediaFormat, MediaKind};
pub use overflow::{context_overflow_source, known_overflow_sources};
pub use role::Role;
pub use usage::{Cost, ModelPricing, Usage};

// The transcript reader decodes these four messages through their line forms
// (`transcript/codec/envelope.rs`); a field or decoding attribute changed here
// changes there.

/// The current time in Unix milliseconds, as the constructors stamp it.
pub(crate) use crate::time::now_millis as now_ms;

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// The instructions that frame a conversation.
///
/// ```json
/// {"role":"system","content":[{"type":"text","text":"You are terse."}],"timestamp":1765233665292}
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SystemMessage {
    /// The text blocks; a plain string is read as one block.
    #[serde(
        deserialize_with = "text_blocks",
        serialize_with = "serialize_system_content"
    )]
    pub content: Vec<TextContent>,
    /// Unix milliseconds; 0 (and then not written) when unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: u64,
}

impl SystemMessage {
    /// A system message from text blocks (or strings), stamped with the current time.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::SystemMessage;
    /// let system = SystemMessage::new(["You are terse."]);
    /// assert_eq!(system.text(), "You are terse.");
    /// ```
    pub fn new<I>(content: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoSystemContent,
    {
        Self {
            content: content
                .into_iter()
                .map(IntoSystemContent::into_system_content)
                .collect(),
            timestamp: now_ms(),
        }
    }

    /// The same message with this timestamp (Unix milliseconds).
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The text of all blocks, joined without a separator.
    pub fn text(&self) -> String {
        self.content.iter().map(|t| t.text.as_str()).collect()
    }
}

/// What the user (or the application on the user's behalf) says.
///
/// ```json
/// {"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","data":"iVBOR…","mimeType":"image/png"}],"timestamp":1765233665292}
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UserMessage {
    /// The blocks; a plain string is read as one text block.
    #[serde(deserialize_with = "user_blocks")]
    pub content: Vec<UserContent>,
    /// Unix milliseconds; 0 (and then not written) when unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: u64,
}

impl UserMessage {
    /// A user message from blocks allowed in a user message (text, image, audio,
    /// document, or strings), stamped with the current time.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{UserMessage, TextContent};
    /// let user = UserMessage::new([TextContent::new("hi")]);
    /// assert_eq!(user.text(), "hi");
    /// ```
    ///
    /// A block the role does not allow does not compile:
    ///
    /// ```compile_fail
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{UserMessage, ThinkingContent};
    /// let user = UserMessage::new([ThinkingContent::new("x")]);
    /// ```
    pub fn new<I>(content: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoUserContent,
    {
        Self {
            content: content
                .into_iter()
                .map(IntoUserContent::into_user_content)
                .collect(),
            timestamp: now_ms(),
        }
    }

    /// A text block followed by images.
    pub fn with_images(
        text: impl Into<String>,
        images: impl IntoIterator<Item = ImageContent>,
    ) -> Self {
        let mut message = Self::new([TextContent::new(text)]);
        message
            .content
            .extend(images.into_iter().map(UserContent::Image));
        message
    }

    /// A text block followed by audio clips.
    pub fn with_audio(
        text: impl Into<String>,
        clips: impl IntoIterator<Item = AudioContent>,
    ) -> Self {
        let mut message = Self::new([TextContent::new(text)]);
        message
            .content
            .extend(clips.into_iter().map(UserContent::Audio));
        message
    }

    /// The same message with this timestamp (Unix milliseconds).
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The text of all text blocks, joined without a separator.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                UserContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    Stop,
    /// The output hit the token limit.
    Length,
    /// The model asks for tool calls to be run.
    ToolUse,
    /// The provider reported an error; see `errorMessage`.
    Error,
    /// The caller cancelled the request.
    Aborted,
    /// The agent reached its turn limit.
    MaxTurns,
    /// The user stopped the agent.
    UserStop,
    /// The agent handed off to a human or another agent.
    Handoff,
    /// A guardrail (moderation, safety filter, refusal) stopped it.
    GuardRail,
    /// The context was compacted.
    ContextCompacted,
    /// Generation is paused until external input arrives.
    Paused,
}

impl StopReason {
    /// Every variant, in declaration order.
    pub const ALL: [StopReason; 11] = [
        Self::Stop,
        Self::Length,
        Self::ToolUse,
        Self::Error,
        Self::Aborted,
        Self::MaxTurns,
        Self::UserStop,
        Self::Handoff,
        Self::GuardRail,
        Self::ContextCompacted,
        Self::Paused,
    ];

    /// The reason as written in JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::MaxTurns => "maxTurns",
            Self::UserStop => "userStop",
            Self::Handoff => "handoff",
            Self::GuardRail => "guardRail",
            Self::ContextCompacted => "contextCompacted",
            Self::Paused => "paused",
        }
    }

    /// Whether the turn failed (`error` or `aborted`).
    pub const fn is_failure(self) -> bool {
        matches!(self, Self::Error | Self::Aborted)
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn is_empty(value: &str) -> bool {
    value.is_empty()
}

/// What the model answered, with where it came from, what it cost and why it stopped.
///
/// ```json
/// {"role":"assistant","content":[{"type":"text","text":"Done."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12},"stopReason":"stop","timestamp":1765233669389}
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    /// The blocks, in the order the model produced them.
    pub content: Vec<AssistantContent>,
    /// The API that produced it, such as `anthropic-messages` (empty when unknown).
    #[serde(default, skip_serializing_if = "is_empty")]
    pub api: String,
    /// The provider, such as `anthropic` (empty when unknown).
    #[serde(default, skip_serializing_if = "is_empty")]
    pub provider: String,
    /// The model id, such as `claude-opus-4-5` (empty when unknown).
    #[serde(default, skip_serializing_if = "is_empty")]
    pub model: String,
    /// The provider's id of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Tokens and cost.
    #[serde(default)]
    pub usage: Usage,
    /// Why the model stopped.
    #[serde(default)]
    pub stop_reason: StopReason,
    /// The error text, when `stop_reason` is `error` or `aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Unix milliseconds; 0 (and then not written) when unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: u64,
}

impl AssistantMessage {
    /// An assistant message from blocks allowed in an assistant message (text,
    /// images the model made, thinking, redacted thinking, tool calls, provider
    /// blocks, or strings), stamped with the current time; `stop_reason` is
    /// `toolUse` when there is a tool call, else `stop`.
    ///
    /// ```compile_fail
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AssistantMessage, AudioContent};
    /// let clip = AudioContent { data: "SUQz".into(), mime_type: "audio/mpeg".into() };
    /// let reply = AssistantMessage::new([clip]);
    /// ```
    pub fn new<I>(content: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoAssistantContent,
    {
        let content: Vec<AssistantContent> = content
            .into_iter()
            .map(IntoAssistantContent::into_assistant_content)
            .collect();
        let stop_reason = if content
            .iter()
            .any(|c| matches!(c, AssistantContent::ToolCall(_)))
        {
            StopReason::ToolUse
        } else {
            StopReason::Stop
        };
        Self {
            content,
            stop_reason,
            timestamp: now_ms(),
            ..Self::default()
        }
    }

    /// The same message, attributed to this api, provider and model.
    #[must_use]
    pub fn with_origin(
        mut self,
        api: impl Into<String>,
        provider: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        self.api = api.into();
        self.provider = provider.into();
        self.model = model.into();
        self
    }

    /// The same message with this stop reason.
    #[must_use]
    pub fn with_stop_reason(mut self, stop_reason: StopReason) -> Self {
        self.stop_reason = stop_reason;
        self
    }

    /// The same message with this usage.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The same message with this timestamp (Unix milliseconds).
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The text of all text blocks, joined without a separator (thinking and
    /// tool calls left out); the same as [`AssistantMessage::text_content`],
    /// under the name the other roles use.
    pub fn text(&self) -> String {
        self.text_content()
    }

    /// The text of all text blocks, joined without a separator.
    pub fn text_content(&self) -> String {
        self.text_joined("")
    }

    /// The text of all text blocks, `separator` between each two (pi joins
    /// a summariser's answer with a newline, Claude Code an error's text).
    pub(crate) fn text_joined(&self, separator: &str) -> String {
        let mut text = String::new();
        let blocks = self.content.iter().filter_map(|c| match c {
            AssistantContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        });
        for (i, block) in blocks.enumerate() {
            if i > 0 {
                text.push_str(separator);
            }
            text.push_str(block);
        }
        text
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> + '_ {
        self.content.iter().filter_map(|c| match c {
            AssistantContent::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The thinking blocks, in order.
    pub fn thinking(&self) -> impl Iterator<Item = &ThinkingContent> + '_ {
        self.content.iter().filter_map(|c| match c {
            AssistantContent::Thinking(t) => Some(t),
            _ => None,
        })
    }

    /// The redacted-thinking blocks, in order.
    pub fn redacted_thinking(&self) -> impl Iterator<Item = &RedactedThinkingContent> + '_ {
        self.content.iter().filter_map(|c| match c {
            AssistantContent::RedactedThinking(t) => Some(t),
            _ => None,
        })
    }
}

/// The result of one tool call, sent back to the model.
///
/// ```json
/// {"role":"toolResult","toolCallId":"toolu_01","toolName":"read","content":[{"type":"text","text":"fn main() {}"}],"isError":false,"timestamp":1765233669400,"details":{"bytes":12}}
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The name of the tool that ran.
    pub tool_name: String,
    /// What the model sees of the result.
    #[serde(deserialize_with = "tool_result_blocks")]
    pub content: Vec<ToolResultContent>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// Unix milliseconds; 0 (and then not written) when unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub timestamp: u64,
    /// Data for the application only; never sent to a model. An explicit `null`
    /// is kept as `Some(Value::Null)`, so it is written back.
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<serde_json::Value>,
}

impl ToolResultMessage {
    /// A successful result from blocks allowed in a tool result (text, image, or
    /// strings), stamped with the current time.
    ///
    /// ```compile_fail
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{ToolResultMessage, AudioContent};
    /// let clip = AudioContent { data: String::new(), mime_type: "audio/wav".into() };
    /// let result = ToolResultMessage::new("call_1", "listen", [clip]);
    /// ```
    pub fn new<I>(tool_call_id: impl Into<String>, tool_name: impl Into<String>, content: I) -> Self
    where
        I: IntoIterator,
        I::Item: IntoToolResultContent,
    {
        Self {
            tool_call_id: tool_call_id.into(),
            tool_name: tool_name.into(),
            content: content
                .into_iter()
                .map(IntoToolResultContent::into_tool_result_content)
                .collect(),
            is_error: false,
            timestamp: now_ms(),
            details: None,
        }
    }

    /// The same result marked as an error (or not).
    #[must_use]
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// The same result with application details.
    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The same message with this timestamp (Unix milliseconds).
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: u64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The text of all text blocks, joined without a separator.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                ToolResultContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// A message a model sees, tagged by `"role"`: `system`, `user`, `assistant` or
/// `toolResult`. The role is written first; a reader finds it wherever it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// A system message.
    System(SystemMessage),
    /// A user message.
    User(UserMessage),
    /// An assistant message.
    Assistant(AssistantMessage),
    /// A tool result.
    ToolResult(ToolResultMessage),
}

/// The length of `text` as JavaScript counts it, in UTF-16 units: the unit
/// of pi's token estimate and of its limits on text.
pub(crate) fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

impl Message {
    /// An estimate of the tokens the message costs a model: its characters
    /// over four (pi's heuristic), an image, audio clip or document counted as
    /// 1,200 tokens, redacted thinking as a quarter of its data, a provider's
    /// own block as its JSON text. Characters are UTF-16 units, the unit pi's
    /// JavaScript counts the same heuristic in (text, tool names and the
    /// JSON of tool arguments alike), so the two estimates of one text agree.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::Message;
    /// assert_eq!(Message::user("12345678").estimated_tokens(), 2);
    /// ```
    pub fn estimated_tokens(&self) -> u64 {
        const MEDIA: u64 = 1200;
        let mut chars = 0usize;
        let mut media = 0u64;
        match self {
            Self::User(u) => {
                for block in &u.content {
                    match block {
                        UserContent::Text(t) => chars += utf16_len(&t.text),
                        _ => media += 1,
                    }
                }
            }
            Self::Assistant(a) => {
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => chars += utf16_len(&t.text),
                        AssistantContent::Thinking(t) => chars += utf16_len(&t.thinking),
                        AssistantContent::RedactedThinking(r) => chars += utf16_len(&r.data) / 4,
                        AssistantContent::ToolCall(c) => {
                            chars += utf16_len(&c.name) + utf16_len(c.arguments.as_str())
                        }
                        AssistantContent::Image(_) => media += 1,
                        AssistantContent::ProviderBlock(p) => chars += utf16_len(p.block.get()),
                    }
                }
            }
            Self::ToolResult(r) => {
                for block in &r.content {
                    match block {
                        ToolResultContent::Text(t) => chars += utf16_len(&t.text),
                        ToolResultContent::Image(_) => media += 1,
                    }
                }
            }
            Self::System(s) => chars += s.content.iter().map(|t| utf16_len(&t.text)).sum::<usize>(),
        }
        (chars as u64).div_ceil(4) + media * MEDIA
    }

    /// The text of all its text blocks, joined without a separator, whatever
    /// the role: images, audio, documents, thinking and tool calls are left
    /// out.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::Message;
    /// assert_eq!(Message::user("Hi").text(), "Hi");
    /// assert_eq!(Message::assistant("Hello").text(), "Hello");
    /// assert_eq!(Message::tool_result("call_1", "read", "fn main() {}").text(), "fn main() {}");
    /// assert_eq!(Message::system("Be terse.").text(), "Be terse.");
    /// ```
    pub fn text(&self) -> String {
        match self {
            Self::System(m) => m.text(),
            Self::User(m) => m.text(),
            Self::Assistant(m) => m.text_content(),
            Self::ToolResult(m) => m.text(),
        }
    }

    /// A user message with one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self::User(UserMessage::new([TextContent::new(text)]))
    }

    /// A system message with one text block.
    pub fn system(text: impl Into<String>) -> Self {
        Self::System(SystemMessage::new([TextContent::new(text)]))
    }

    /// An assistant message with one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::Assistant(AssistantMessage::new([TextContent::new(text)]))
    }

    /// A tool result with one text block.
    pub fn tool_result(
        tool_call_id: impl Into<String>,
        tool_name: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::ToolResult(ToolResultMessage::new(
            tool_call_id,
            tool_name,
            [TextContent::new(text)],
        ))
    }

    /// The message's role.
    pub fn role(&self) -> Role {
        match self {
            Self::System(_) => Role::System,
            Self::User(_) => Role::User,
            Self::Assistant(_) => Role::Assistant,
            Self::ToolResult(_) => Role::ToolResult,
        }
    }

    /// The timestamp in Unix milliseconds (0 when unknown).
    pub fn timestamp(&self) -> u64 {
        match self {
            Self::System(m) => m.timestamp,
            Self::User(m) => m.timestamp,
            Self::Assistant(m) => m.timestamp,
            Self::ToolResult(m) => m.timestamp,
        }
    }

    /// Sets the timestamp (Unix milliseconds).
    pub fn set_timestamp(&mut self, timestamp: u64) {
        match self {
            Self::System(m) => m.timestamp = timestamp,
            Self::User(m) => m.timestamp = timestamp,
            Self::Assistant(m) => m.timestamp = timestamp,
            Self::ToolResult(m) => m.timestamp = timestamp,
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The user message, if this is one.
    pub fn as_user(&self) -> Option<&UserMessage> {
        match self {
            Self::User(m) => Some(m),
            _ => None,
        }
    }

    /// The tool result, if this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        match self {
            Self::ToolResult(m) => Some(m),
            _ => None,
        }
    }

    /// The system message, if this is one.
    pub fn as_system(&self) -> Option<&SystemMessage> {
        match self {
            Self::System(m) => Some(m),
            _ => None,
        }
    }
}

impl From<SystemMessage> for Message {
    fn from(m: SystemMessage) -> Self {
        Self::System(m)
    }
}

impl From<UserMessage> for Message {
    fn from(m: UserMessage) -> Self {
        Self::User(m)
    }
}

impl From<AssistantMessage> for Message {
    fn from(m: AssistantMessage) -> Self {
        Self::Assistant(m)
    }
}

impl From<ToolResultMessage> for Message {
    fn from(m: ToolResultMessage) -> Self {
        Self::ToolResult(m)
    }
}

/// A field that is present, even as `null`, is `Some` (absent is `None` by default).
pub(crate) fn present_value<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

/// The error for a `v` on an LLM line: LLM messages have no version.
#[cold]
pub(crate) fn unversioned<E: de::Error>(v: u32, role: &str) -> E {
    E::custom(format_args!("unexpected `v` ({v}) on a {role} message"))
}

/// Reads `content` as a list of blocks, or a plain string as one text block.
struct Blocks<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de> + From<TextContent>> Visitor<'de> for Blocks<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an array of content blocks")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<T>, E> {
        Ok(vec![T::from(TextContent::new(v))])
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Vec<T>, E> {
        Ok(vec![T::from(TextContent::new(v))])
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(block) = seq.next_element()? {
            out.push(block);
        }
        Ok(out)
    }
}

fn blocks<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + From<TextContent>,
{
    deserializer.deserialize_any(Blocks(std::marker::PhantomData))
}

pub(crate) fn text_blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<TextContent>, D::Error> {
    /// A system block must be text; another block is an error naming it.
    struct SystemBlock(TextContent);
    impl<'de> Deserialize<'de> for SystemBlock {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            match Content::deserialize(d)? {
                Content::Text(text) => Ok(Self(text)),
                other => Err(de::Error::custom(RoleError {
                    block: other.kind(),
                    role: Role::System,
                })),
            }
        }
    }
    impl From<TextContent> for SystemBlock {
        fn from(t: TextContent) -> Self {
            Self(t)
        }
    }
    let blocks: Vec<SystemBlock> = blocks(d)?;
    Ok(blocks.into_iter().map(|SystemBlock(t)| t).collect())
}

pub(crate) fn user_blocks<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<UserContent>, D::Error> {
    blocks(d)
}

pub(crate) fn tool_result_blocks<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<ToolResultContent>, D::Error> {
    blocks(d)
}

impl Serialize for SystemContentRef<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let signature = self.0.signature.as_ref();
        let citations = self.0.citations.as_ref().filter(|c| c.get() != "null");
        let len = 2 + usize::from(signature.is_some()) + usize::from(citations.is_some());
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("type", "text")?;
        map.serialize_entry("text", &self.0.text)?;
        if let Some(signature) = signature {
            map.serialize_entry("signature", signature)?;
        }
        if let Some(citations) = citations {
            map.serialize_entry("citations", citations)?;
        }
        map.end()
    }
}

/// A system text block written with its `"type"`.
struct SystemContentRef<'a>(&'a TextContent);

fn serialize_system_content<S: serde::Serializer>(
    content: &[TextContent],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(content.iter().map(SystemContentRef))
}
