//! What two or more provider codecs do alike: turn building, tool schemas,
//! documents, argument parsing and the stream failure latch. Crate-private.

#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
pub(crate) mod arguments;
// Every stream decoder's: `Latch` (Anthropic, Gemini, Bedrock) and `FirstBad` (the
// OpenAI APIs) each carry their own features.
pub(crate) mod latch;
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
pub(crate) mod openai_error;
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
pub(crate) mod openai_options;
#[cfg(any(feature = "openai-chat", feature = "openai-responses"))]
pub(crate) mod parts;
#[cfg(any(
    feature = "openai-chat",
    feature = "openai-responses",
    feature = "anthropic",
    feature = "bedrock"
))]
pub(crate) mod tools;
#[cfg(any(feature = "anthropic", feature = "gemini", feature = "bedrock"))]
pub(crate) mod turns;
