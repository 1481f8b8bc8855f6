//! Provider wire formats: request encoders, response and stream decoders.
//!
//! One module per API, each behind its Cargo feature (all on by default):
//! [`openai_chat`], [`openai_responses`], [`anthropic`], [`gemini`]. Each has
//! the same functions:
//! - `encode_request(&Request) -> Result<Encoded, EncodeError>`;
//! - `decode_response(&str) -> Result<AssistantMessage, ResponseError>`, and
//!   `decode_response_with_warnings`, which also returns what was skipped or kept
//!   in a changed form;
//! - `stop_reason(&str) -> StopReason`, the API's stop or finish reason mapped;
//! - a `StreamDecoder` implementing [`StreamDecode`], with `new()` and
//!   `finish_with_warnings()`.
//!
//! Each module is split by direction: `request` (the encoder), `response` (the
//! wire types and the body decoder) and `stream` (the stream state machine);
//! what two APIs do alike lives once in a crate-private `shared` module.

use serde::{Deserialize, Serialize};

use crate::Report;
use crate::{AssistantMessage, Message};

#[cfg(feature = "anthropic")]
pub mod anthropic;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(feature = "openai-chat")]
pub mod openai_chat;
#[cfg(feature = "openai-responses")]
pub mod openai_responses;
mod shared;

/// A request to a model, before it is encoded for one provider.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    /// The model id.
    pub model: String,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation: any projection of a transcript (the encoder prepares it
    /// for its own target).
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The output token limit.
    pub max_tokens: Option<u32>,
    /// The provider serving the model, when it is not the API's own (`groq`,
    /// `openrouter`, `azure`, `bedrock`…). It names the [`Target`](crate::Target)
    /// the encoder prepares for, so reasoning that this provider wrote goes back to
    /// it. `None`: the API's own provider (`openai`, `anthropic`, `google`).
    pub provider: Option<String>,
}

impl Request {
    /// A request for `model` with these messages.
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            model: model.into(),
            messages,
            ..Self::default()
        }
    }

    /// The same request with a system prompt.
    #[must_use]
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// The same request with these tools.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }

    /// The same request, for a model served by `provider`.
    #[must_use]
    pub fn with_provider(mut self, provider: impl Into<String>) -> Self {
        self.provider = Some(provider.into());
        self
    }

    /// The provider the encoder prepares for: [`Request::provider`] or, when
    /// unset, `default`.
    pub(crate) fn provider_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.provider.as_deref().unwrap_or(default)
    }

    /// The same request with an output token limit.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }
}

/// A tool the model may call: its name, what it does, and the JSON Schema of its
/// arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// A tool.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// A request body, with everything that was changed to make it.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The JSON body to send.
    pub body: serde_json::Value,
    /// What `prepare` and the encoder changed, by input message index.
    pub report: Report,
}

/// A request that cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// Part of the request is not valid for this provider.
    #[error("cannot encode {path}: {message}")]
    Invalid {
        /// Where, such as `messages[3].content[1]` or `tools[0].name`.
        path: String,
        /// What is wrong.
        message: String,
    },
}

impl EncodeError {
    /// [`EncodeError::Invalid`] at `path`.
    pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// A response body or stream that cannot be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResponseError {
    /// Not JSON, or JSON of the wrong shape for serde.
    #[error("{}invalid JSON: {source}", at_event(*.event))]
    Json {
        /// The 0-based index of the stream event, for a stream.
        event: Option<usize>,
        /// The parser's error, with line and column.
        source: serde_json::Error,
    },
    /// JSON that does not make sense for this provider.
    #[error("{}invalid {path}: {message}", at_event(*.event))]
    Invalid {
        /// The 0-based index of the stream event, for a stream.
        event: Option<usize>,
        /// The field path, such as `content[2].input`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The stream ended before the message was complete.
    #[error("stream ended after {events} events: {message}")]
    Truncated {
        /// How many events were read.
        events: usize,
        /// What was missing.
        message: String,
    },
}

impl ResponseError {
    /// Parses `text` (a body, or stream event `event`) as `T`.
    pub(crate) fn parse<T: serde::de::DeserializeOwned>(
        text: &str,
        event: Option<usize>,
    ) -> Result<T, Self> {
        serde_json::from_str(text).map_err(|source| Self::Json { event, source })
    }

    /// The warning for a block of a type agentmsg does not model, which a decoder
    /// skipped.
    #[cfg(any(feature = "anthropic", feature = "gemini"))]
    pub(crate) fn skipped(event: Option<usize>, path: String, kind: &str) -> Self {
        Self::Invalid {
            event,
            path,
            message: format!("a block of type `{kind}` was skipped: agentmsg does not model it"),
        }
    }
}

fn at_event(event: Option<usize>) -> String {
    event.map_or_else(String::new, |e| format!("event {e}: "))
}

/// Folds a provider's stream events, one at a time, into an [`AssistantMessage`].
pub trait StreamDecode {
    /// Takes one event: the JSON of one SSE `data:` payload or chunk.
    fn push(&mut self, event: &str) -> Result<(), ResponseError>;

    /// The message, once every event has been pushed. A stream that stopped
    /// before its end is an error (or a message whose stopReason is `error`).
    fn finish(self) -> Result<AssistantMessage, ResponseError>;
}
