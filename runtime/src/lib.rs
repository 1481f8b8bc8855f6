//! The runtime of [agentmsg](https://docs.rs/agentmsg): the core message types,
//! the registry of custom kinds, transcript I/O, the projection for a target
//! model and the provider codecs.
//!
//! Depend on the `agentmsg` crate rather than on this one: it re-exports all of
//! this, together with `#[derive(AgentMessage)]`.

#![warn(missing_docs)]

mod content;
pub mod flat;
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

pub mod project;
mod schema;

#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "gemini"
))]
pub mod providers;

#[doc(hidden)]
pub mod __private;

pub use builtin::*;
pub use content::*;
pub use custom::*;
pub use dropped_fields::*;
pub use envelope::*;
pub use jsonl::*;
pub use media::*;
pub use message::*;
pub use overflow::*;
pub use project::*;
pub use registry::*;
pub use schema::*;
pub use usage::*;
