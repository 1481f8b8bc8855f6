//! The runtime of [agentmsg](https://docs.rs/agentmsg): the core message types,
//! the registry of custom kinds, transcript I/O, the projection for a target
//! model and the provider codecs.
//!
//! Depend on the `agentmsg` crate rather than on this one: it re-exports all of
//! this, together with `#[derive(AgentMessage)]`.

#![warn(missing_docs)]

mod content;
mod flat;
mod held;
mod media;
mod message;
mod overflow;
mod usage;

mod builtin;
mod custom;
mod dropped_fields;
mod envelope;
mod jsonl;
mod registry;

mod project;
mod schema;

mod pi_kinds;
mod queries;
mod session;

#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini"
))]
pub mod providers;

#[doc(hidden)]
pub mod __private;

// The public surface, by room. Everything else stays inside the crate.

// Messages and their content.
pub use content::{
    AssistantContent, AudioContent, BlockKind, Content, DocumentContent, ImageContent,
    IntoAssistantContent, IntoSystemContent, IntoToolResultContent, IntoUserContent, MediaSource,
    RedactedThinkingContent, Role, RoleError, TextContent, ThinkingContent, ToolCall,
    ToolResultContent, UserContent,
};
pub use media::{Base64Problem, MediaError, MediaFormat, MediaKind};
pub use message::{
    AssistantMessage, LlmMessage, Message, MessageId, ParentId, StopReason, SystemMessage,
    ToolResultMessage, TurnId, UserMessage,
};
pub use overflow::{context_overflow_source, known_overflow_sources};
pub use usage::{Cost, ModelPricing, Usage};

// Transcripts: lines, custom kinds, files.
pub use builtin::{
    BranchSummary, CompactionSummary, ExtensionMessage, BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
};
pub use custom::{CustomEntry, CustomMessage, DynCustomMessage, MigrateError};
pub use dropped_fields::dropped_fields;
pub use envelope::{
    decode_line, AgentMessage, DecodeError, DecodeMode, UnknownMessage, UnknownReason,
};
pub use jsonl::{
    is_torn_line, read_transcript, write_jsonl, AppendFile, JsonlReader, JsonlWriter, ReadError,
    TornLine, Transcript, WriteError,
};
pub use registry::{DuplicateKind, Registration, Registry, RegistryError};
pub use schema::transcript_line_schema;

// Sessions: a transcript as a tree, and the context at a leaf.
pub use pi_kinds::{BashExecution, CustomContent, CustomContentMessage};
pub use queries::{call_of, last_messages, result_of, MessageQuery, Summary};
pub use session::{
    estimate_tokens, plan_compaction, should_compact, CompactionPlan, Entry, EntryKind, ModelRef,
    Session, SessionContext, SessionError, SessionFormat, SessionWarning, WarningKind,
    DEFAULT_SUMMARY_PROMPT, PI_SESSION_VERSION,
};

// What the model sees, prepared for one target.
pub use project::{
    prepare, to_llm, to_llm_with_report, validate, AppendTarget, Change, ChangeKind, ConvertToLlm,
    DefaultConvert, EditError, IdMap, IdRule, LastAssistant, LastUser, LlmProjection, NoTransform,
    Origin, PartOf, Prepared, Problem, ProblemKind, Projector, PromptEditor, PromptMessage, Report,
    Target, ThinkingPolicy, TransformContext, NO_RESULT_TEXT,
};
