//! Transcripts: the lines an agent keeps. An [`AgentMessage`](crate::AgentMessage)
//! is one line: an LLM message with its envelope, an application's custom
//! message (found through the [`Registry`](crate::Registry)), or a line kept as
//! it was. Files are JSON Lines ([`JsonlReader`](crate::JsonlReader),
//! [`JsonlWriter`](crate::JsonlWriter)).

pub(crate) mod agent_message;
pub(crate) mod builtin;
pub(crate) mod codec;
pub(crate) mod custom;
pub(crate) mod dropped_fields;
pub(crate) mod glued;
pub(crate) mod jsonl;
pub(crate) mod llm_message;
pub(crate) mod pi_kinds;
pub(crate) mod queries;
pub(crate) mod registry;
pub(crate) mod schema;
pub(crate) mod unknown;
