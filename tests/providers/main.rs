//! The provider codecs: one test binary. `scenarios` holds what every API is
//! asked alike, written once with each API's expectation; the other modules
//! hold what only one API has (its schema rules, recordings and snapshots).

#[path = "../common/mod.rs"]
mod common;

mod anthropic;
mod argument_order;
#[cfg(feature = "bedrock")]
mod bedrock;
mod catalog;
mod events;
mod framing;
mod gemini;
mod openai_chat;
mod openai_responses;
mod options;
#[cfg(feature = "prices")]
mod prices;
mod provider_blocks;
mod real_world;
mod scenarios;
mod transcripts;
