//! Typed, persisted, provider-neutral transcripts for LLM agents.
//!
//! An agent keeps a transcript: the messages it exchanges with a model (user,
//! assistant, tool results) and the application's own entries that live beside
//! them (notices, summaries, approvals, UI state). agentmsg gives that transcript
//! one typed shape, one JSON Lines format on disk, and a way to every provider's
//! wire format. The format is a superset of the message JSON of
//! [pi](https://github.com/badlogic/pi-mono), so pi sessions decode as they are.
//!
//! # Messages and content blocks
//!
//! A [`Message`] is one of four roles: [`SystemMessage`], [`UserMessage`],
//! [`AssistantMessage`] and [`ToolResultMessage`]. Each holds the content blocks
//! its role allows, as an enum of its own: [`UserContent`] (text, image, audio,
//! document), [`AssistantContent`] (text, thinking, redacted thinking, tool call),
//! [`ToolResultContent`] (text, image); a system message holds text. Every block
//! is a struct ([`TextContent`], [`ImageContent`], [`AudioContent`],
//! [`DocumentContent`], [`ThinkingContent`], [`RedactedThinkingContent`],
//! [`ToolCall`]), and [`Content`] is any of them.
//!
//! ```
//! use agentmsg::{AssistantContent, AssistantMessage, Message, Role, StopReason, ThinkingContent, ToolCall, UserMessage};
//! use serde_json::json;
//!
//! let question = UserMessage::new(["Which files are in src?"]);
//! let reply = AssistantMessage::new([
//!     AssistantContent::from(ThinkingContent::new("I should list the directory.")),
//!     AssistantContent::from(ToolCall::new("call_1", "ls", json!({"path": "src"}))),
//! ])
//! .with_origin("anthropic-messages", "anthropic", "claude-opus-4-5");
//! let result = Message::tool_result("call_1", "ls", "lib.rs\nmain.rs");
//!
//! let transcript: Vec<Message> = vec![question.into(), reply.into(), result];
//! assert_eq!(transcript[1].role(), Role::Assistant);
//! let reply = transcript[1].as_assistant().unwrap();
//! assert_eq!(reply.tool_calls().next().map(|c| c.name.as_str()), Some("ls"));
//! assert_eq!(reply.stop_reason, StopReason::ToolUse);
//! ```
//!
//! # Role rules
//!
//! The constructors take any blocks allowed in their role (and strings, as text).
//! A block that the role does not allow does not compile, and the error names the
//! block and the role:
//!
//! ```compile_fail,E0277
//! use agentmsg::{ThinkingContent, UserMessage};
//!
//! // error: `ThinkingContent` cannot appear in a user message
//! let user = UserMessage::new([ThinkingContent::new("let me think")]);
//! ```
//!
//! ```compile_fail,E0277
//! use agentmsg::{AssistantMessage, ImageContent};
//!
//! // error: `ImageContent` cannot appear in an assistant message
//! let reply = AssistantMessage::new([ImageContent::from_url("https://example.com/cat.png")]);
//! ```
//!
//! At run time, the same rules hold: converting a [`Content`] into a role's enum
//! is a `TryFrom` whose [`RoleError`] names both, and decoding a block in the
//! wrong role fails with the same words.
//!
//! ```
//! use agentmsg::{Content, Message, ThinkingContent, UserContent};
//!
//! let block = Content::from(ThinkingContent::new("hmm"));
//! let err = UserContent::try_from(block).unwrap_err();
//! assert_eq!(err.to_string(), "`thinking` blocks cannot appear in user messages");
//!
//! let line = r#"{"role":"user","content":[{"type":"thinking","thinking":"hmm"}]}"#;
//! let err = serde_json::from_str::<Message>(line).unwrap_err();
//! assert!(err.to_string().starts_with("`thinking` blocks cannot appear in user messages"));
//! ```
//!
//! # Media
//!
//! Images, audio and documents are built from bytes, files, base64 or URLs. The
//! MIME type is read from the data itself (PNG, JPEG, GIF, WEBP; MP3, OGG, FLAC,
//! WAV; PDF), and data that is none of these is a [`MediaError`] showing the bytes
//! it saw.
//!
//! ```
//! use agentmsg::{AudioContent, ImageContent, MediaError, UserMessage};
//!
//! let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
//! let image = ImageContent::from_bytes(png)?;
//! assert_eq!(image.mime_type(), Some("image/png"));
//! let user = UserMessage::with_images("What is this?", [image]);
//! assert_eq!(user.content.len(), 2);
//!
//! let err = AudioContent::from_bytes(png).unwrap_err();
//! assert_eq!(err.to_string(), "expected audio data, but the bytes are PNG image (image/png)");
//! # Ok::<(), MediaError>(())
//! ```
//!
//! # Usage and cost
//!
//! An assistant message carries its [`Usage`]: input, output (reasoning
//! included), cache reads and writes, and the [`Cost`] when known. Usages add up,
//! and [`Usage::estimated_cost`] prices them with a [`ModelPricing`].
//!
//! ```
//! use agentmsg::{ModelPricing, Usage};
//!
//! let turns = [Usage::new(1_000, 200), Usage::new(3_000, 400)];
//! let total: Usage = turns.iter().sum();
//! assert_eq!((total.input, total.output), (4_000, 600));
//! let cost = total.estimated_cost(&ModelPricing::new(3.0, 15.0, 0.3, 3.75));
//! assert!((cost.total - 0.021).abs() < 1e-12);
//! assert_eq!(total.cache_hit_rate(), 0.0);
//! ```
//!
//! An error reply tells whether the prompt overflowed the model's context window,
//! whatever the provider's wording: [`AssistantMessage::is_context_overflow`].
//!
//! # The transcript format
//!
//! A transcript is JSON Lines: one message object per line, tagged by `"role"`,
//! with camelCase fields and Unix-millisecond timestamps. Content blocks are tagged
//! by `"type"`. Each line may carry an `"id"` (a UUIDv7 from [`MessageId::new`])
//! and a `"turnId"`, flattened into the same object; [`LlmMessage`] reads and
//! writes them, and a line without them reads as `None`.
//!
//! ```
//! use agentmsg::{LlmMessage, Message, MessageId, TurnId};
//!
//! let lines = r#"{"role":"system","content":[{"type":"text","text":"You are terse."}],"timestamp":1765233665292}
//! {"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292,"id":"0193a4b2-7c1e-7000-8000-000000000001","turnId":"t1"}
//! {"role":"assistant","content":[{"type":"text","text":"Hello."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":12,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"stop","timestamp":1765233669389}"#;
//!
//! for line in lines.lines() {
//!     let message: LlmMessage = serde_json::from_str(line)?;
//!     // Written back, each line is the same bytes.
//!     assert_eq!(serde_json::to_string(&message)?, line);
//! }
//!
//! let second: LlmMessage = serde_json::from_str(lines.lines().nth(1).unwrap())?;
//! assert_eq!(second.id, Some(MessageId::from("0193a4b2-7c1e-7000-8000-000000000001")));
//! assert_eq!(second.turn_id, Some(TurnId::from("t1")));
//! assert_eq!(second.message, Message::User(agentmsg::UserMessage::new(["hi"]).with_timestamp(1765233665292)));
//!
//! // pi's older forms are read too: a string as content, `thinkingSignature`.
//! let pi = r#"{"role":"user","content":"hi","timestamp":1}"#;
//! let message: Message = serde_json::from_str(pi)?;
//! assert_eq!(serde_json::to_string(&message)?, r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}"#);
//! # Ok::<(), serde_json::Error>(())
//! ```
//!
//! | block `type` | fields | allowed in |
//! |---|---|---|
//! | `text` | `text` | system, user, assistant, toolResult |
//! | `image` | `data` (base64) + `mimeType`, or `url` | user, toolResult |
//! | `audio` | `data` (base64) + `mimeType` | user |
//! | `document` | `data` + `mimeType`, or `url`; optional `title` | user |
//! | `thinking` | `thinking`, optional `signature` | assistant |
//! | `redactedThinking` | `data` | assistant |
//! | `toolCall` | `id`, `name`, `arguments` (an object), optional `signature` | assistant |
//!
//! An assistant line adds `api`, `provider`, `model`, `usage`, `stopReason` (one
//! of the 11 [`StopReason`]s), and optionally `responseId` and `errorMessage`; a
//! tool result adds `toolCallId`, `toolName`, `isError` and `details`, which is
//! for the application and never sent to a model.

pub use agentmsg_macros::AgentMessage;
pub use agentmsg_runtime::*;

/// Not public API. Used by generated code.
#[doc(hidden)]
pub mod __private {
    /// Not public API. Used by generated code.
    pub use agentmsg_runtime::__private::*;
}
