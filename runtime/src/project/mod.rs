//! What a model sees of a transcript: the default projection of custom messages
//! ([`to_llm`]) and the preparation of those messages for one target model
//! ([`prepare()`]).

mod convert;
mod prepare;

pub use convert::*;
pub use prepare::*;
