//! The runtime of [agentmsg](https://docs.rs/agentmsg): the core message types,
//! the registry of custom kinds, transcript I/O, the projection for a target
//! model and the provider codecs.
//!
//! Depend on the `agentmsg` crate rather than on this one: it re-exports all of
//! this, together with `#[derive(AgentMessage)]`.

#![warn(missing_docs)]

pub mod custom;
pub mod message;
pub mod project;
pub mod session;
pub mod transcript;

pub mod import;
pub(crate) mod json;
pub mod lines;
pub(crate) mod preparation;
pub(crate) mod redact;

#[cfg(any_provider)]
pub mod providers;

#[cfg(all(feature = "http", any_provider))]
pub mod http;

#[cfg(all(feature = "agent", any_provider))]
pub mod agent;

pub mod store;

#[cfg(feature = "html")]
pub mod export;

pub mod time;
#[cfg(feature = "usage-report")]
pub mod usage_report;

/// Not public API: what `#[derive(AgentMessage)]` expands to uses. Named after
/// the version (the derive names the module of its own version), so a derive
/// and a runtime of two releases fail to build together instead of misbehaving.
#[doc(hidden)]
#[path = "__private.rs"]
pub mod __private_0_1_0;

// The public surface, by room. Everything else stays inside the crate.

// Messages and their content.
// The core names, at the root. Everything else is in the module named after
// its concept.
pub use custom::CustomMessage;
pub use message::{
    AssistantContent, AssistantMessage, AudioContent, Content, Cost, DocumentContent, ImageContent,
    Message, MessageId, ParentId, ProviderBlock, RedactedThinkingContent, Role, StopReason,
    SystemMessage, TextContent, ThinkingContent, ToolArguments, ToolCall, ToolResultContent,
    ToolResultMessage, TurnId, Usage, UserContent, UserMessage,
};
pub use project::{prepare, to_llm, Target};
pub use session::Session;
pub use transcript::{AgentMessage, JsonlReader, JsonlWriter, LlmMessage};
