//! Transcripts: the lines an agent keeps. An [`AgentMessage`] is one line: an
//! LLM message with its envelope ([`LlmMessage`]), an application's custom
//! message (an [`AppMessage`](crate::custom::AppMessage), found through the
//! [`Registry`](crate::custom::Registry)), or a line kept as it was
//! ([`UnknownMessage`]). Files are JSON Lines ([`JsonlReader`],
//! [`JsonlWriter`]); [`decode_line`] reads one line, and the queries
//! ([`MessageQuery`], [`MessageStats`]) answer questions about a slice of them.

pub(crate) mod agent_message;
pub(crate) mod codec;
pub(crate) mod custom;
pub(crate) mod decode;
pub(crate) mod dropped_fields;
pub(crate) mod failure;
mod generic;
pub(crate) mod glued;
pub(crate) mod jsonl;
pub(crate) mod llm_message;
pub(crate) mod queries;
pub(crate) mod repair;
pub(crate) mod schema;
pub(crate) mod unknown;

pub use crate::json::deep::{read_deep_json, MAX_DEPTH as MAX_JSON_DEPTH};
pub use crate::json::surrogates::replace_lone_surrogates;
pub use agent_message::AgentMessage;
pub use decode::{decode_line, DecodeMode};
pub use dropped_fields::dropped_fields;
pub use failure::{DecodeError, UnknownReason};
pub use glued::split_glued_line;
pub use jsonl::{
    is_torn_line, read_transcript, write_jsonl, AppendFile, JsonlReader, JsonlWriter, ReadError,
    TornLine, Transcript, WriteError,
};
pub use llm_message::LlmMessage;
pub use queries::{call_of, last_messages, result_of, MessageQuery, MessageStats};
pub use repair::{kept_line_pairing, RepairPlan, RepairPlanner, SyntheticResult};
pub use schema::transcript_line_schema;
pub use unknown::UnknownMessage;
