//! The runtime of [agentmsg](https://docs.rs/agentmsg): the core message types,
//! the registry of custom kinds, transcript I/O, the projection for a target
//! model and the provider codecs.
//!
//! Depend on the `agentmsg` crate rather than on this one: it re-exports all of
//! this, together with `#[derive(AgentMessage)]`.

#![warn(missing_docs)]

mod message;
mod project;
mod transcript;

mod session;

pub mod import;
pub mod lines;

#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini"
))]
pub mod providers;

#[cfg(all(
    feature = "http",
    any(
        feature = "openai-chat",
        feature = "openai-responses",
        feature = "anthropic",
        feature = "gemini"
    )
))]
pub mod http;

pub mod store;

#[cfg(feature = "html")]
pub mod export;

pub mod time;

/// Not public API: what `#[derive(AgentMessage)]` expands to uses. Named after
/// the version (the derive names the module of its own version), so a derive
/// and a runtime of two releases fail to build together instead of misbehaving.
#[doc(hidden)]
#[path = "__private.rs"]
pub mod __private_0_1_0;

// The public surface, by room. Everything else stays inside the crate.

// Messages and their content.
pub use message::content::{
    AssistantContent, AudioContent, BlockKind, Content, DocumentContent, ImageContent,
    IntoAssistantContent, IntoSystemContent, IntoToolResultContent, IntoUserContent, MediaSource,
    ProviderBlock, RawJson, RedactedThinkingContent, RoleError, TextContent, ThinkingContent,
    ToolArguments, ToolCall, ToolResultContent, UserContent,
};
pub use message::media::{Base64Problem, MediaError, MediaFormat, MediaKind};
pub use message::overflow::{context_overflow_source, known_overflow_sources};
pub use message::usage::{Cost, ModelPricing, Usage};
pub use message::{
    AssistantMessage, Message, MessageId, ParentId, Role, StopReason, SystemMessage,
    ToolResultMessage, TurnId, UserMessage,
};

// Transcripts: lines, custom kinds, files.
pub use session::lenient::{read_deep_json, MAX_DEPTH as MAX_JSON_DEPTH};
pub use transcript::agent_message::AgentMessage;
pub use transcript::builtin::{
    BranchSummary, CompactionSummary, ExtensionMessage, BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
pub use transcript::codec::decode::{decode_line, DecodeError, DecodeMode};
pub use transcript::codec::surrogates::replace_lone_surrogates;
pub use transcript::custom::{CustomEntry, CustomMessage, DynCustomMessage, MigrateError};
pub use transcript::dropped_fields::dropped_fields;
pub use transcript::glued::split_glued_line;
pub use transcript::jsonl::{
    is_torn_line, read_transcript, write_jsonl, AppendFile, JsonlReader, JsonlWriter, ReadError,
    TornLine, Transcript, WriteError, BOM,
};
pub use transcript::llm_message::LlmMessage;
pub use transcript::registry::{DuplicateKind, Registration, Registry, RegistryError};
pub use transcript::schema::transcript_line_schema;
pub use transcript::unknown::{UnknownMessage, UnknownReason};

// Sessions: a transcript as a tree, and the context at a leaf.
pub use session::{
    estimate_context_tokens, estimate_tokens, plan_compaction, serialize_conversation,
    should_compact, summary_prompt, CompactionPlan, ContextMessage, ContextTokens, Entry,
    EntryKind, ModelRef, Session, SessionContext, SessionError, SessionFormat, SessionWarning,
    WarningKind, DEFAULT_SUMMARY_PROMPT, PI_SESSION_VERSION, SUMMARY_SYSTEM_PROMPT,
    TOOL_RESULT_MAX_CHARS, UPDATE_SUMMARY_PROMPT,
};
pub use transcript::pi_kinds::{BashExecution, CustomContent, CustomContentMessage};
pub use transcript::queries::{call_of, last_messages, result_of, MessageQuery, Summary};

// What the model sees, prepared for one target.
pub use project::{
    prepare, to_llm, to_llm_with_report, validate, AppendTarget, Change, ChangeKind, EditError,
    IdMap, IdRule, LastAssistant, LastUser, LlmProjection, Origin, PartOf, Prepared, Problem,
    ProblemKind, PromptEditor, PromptMessage, Report, Target, ThinkingPolicy, Validator,
    NO_RESULT_TEXT,
};
