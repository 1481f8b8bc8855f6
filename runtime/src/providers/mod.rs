//! Provider wire formats: request encoders, response and stream decoders.
//!
//! One module per API, each behind its Cargo feature (all on by default):
//! [`openai_chat`], [`openai_responses`], [`anthropic`], [`gemini`], and
//! behind its own feature (off by default) `bedrock`; `vertex` holds where
//! Vertex AI serves Gemini and Claude. Each
//! module's codec ([`openai_chat::OpenaiChat`], [`openai_responses::OpenaiResponses`],
//! [`anthropic::Anthropic`], [`gemini::Gemini`]) implements one trait,
//! [`Codec`]:
//! - `encode_request(&Request) -> Result<Encoded, EncodeError>`;
//! - `decode_response_with_warnings(&str)`, which returns the
//!   [`AssistantMessage`] and what was skipped or kept in a changed form, and
//!   `decode_response` without them (written once, in the trait);
//! - `stop_reason(&str) -> StopReason`, the API's stop or finish reason mapped;
//! - a `StreamDecoder` implementing [`StreamDecode`].
//!
//! The module also has the same names as functions (`anthropic::encode_request`
//! and so on), for code that names its API at compile time. [`Api`] names an
//! API at run time and dispatches to its codec.
//!
//! Each module is split by direction: `request` (the encoder), `response` (the
//! wire types and the body decoder) and `stream` (the stream state machine);
//! what two APIs do alike lives once in a crate-private `shared` module.

use serde::{Deserialize, Serialize};

use crate::project::Report;
use crate::AssistantMessage;

#[cfg(feature = "anthropic")]
pub mod anthropic;
mod api;
#[cfg(feature = "bedrock")]
pub mod bedrock;
mod body;
mod catalog;
mod codec;
mod conversation;
mod decode;
mod dispatch;
mod events;
mod framing;
#[cfg(feature = "gemini")]
pub mod gemini;
#[cfg(feature = "openai-chat")]
pub mod openai_chat;
#[cfg(feature = "openai-responses")]
pub mod openai_responses;
mod options;
mod provider_error;
mod shared;
#[cfg(feature = "vertex")]
pub mod vertex;

pub use api::{Api, UnknownApi};
pub use body::Body;
pub use catalog::{Catalog, ModelInfo};
pub use codec::Codec;
pub use conversation::Conversation;
pub use decode::{Events, StreamError, StreamReader};
pub use dispatch::AnyStreamDecoder;
pub use events::{PartialJson, StreamEvent};
pub use framing::{
    FrameError, FrameErrorKind, JsonArrayParser, SseEvent, SseParser, DEFAULT_MAX_EVENT,
};
pub use options::{
    Effort, OptionChange, OptionChangeKind, OptionParseError, PromptCache, Reasoning,
    ResponseFormat, ToolChoice,
};
// The HTTP client retries by the same statuses.
#[cfg(feature = "http")]
pub(crate) use provider_error::retryable_status;
pub use provider_error::ProviderError;

/// A request to a model, before it is encoded for one provider.
///
/// Build it with [`Request::new`] and the `with_*` methods; new options come as
/// new methods, so code that builds requests this way keeps compiling.
///
/// The request borrows its conversation when it is given one to borrow (a
/// [`SessionContext`](crate::session::SessionContext), a [`to_llm`](crate::to_llm)
/// result, a slice): see [`Conversation`]. Encoding it, for one provider or
/// several ([`Request::for_model`]), copies no message of the input.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::{openai_chat, Effort, Reasoning, Request, ToolChoice};
/// use agentmsg::Message;
/// let request = Request::new("gpt-5", vec![Message::user("Hi")])
///     .with_reasoning(Reasoning::Effort(Effort::Low))
///     .with_tool_choice(ToolChoice::None)
///     .with_stop(["END"]);
/// let encoded = openai_chat::encode_request(&request)?;
/// assert_eq!(encoded.body["reasoning_effort"], "low");
/// // gpt-5 reasons and takes no stop sequences: left out, and said.
/// assert!(encoded.body.get("stop").is_none());
/// assert_eq!(encoded.options[0].option, "stop");
/// # Ok::<(), agentmsg::providers::EncodeError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Request<'a> {
    /// The model id.
    pub model: String,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation: any projection of a transcript, owned or borrowed (the
    /// encoder prepares it for its own target).
    pub messages: Conversation<'a>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The output token limit.
    pub max_tokens: Option<u32>,
    /// The provider serving the model, when it is not the API's own (`groq`,
    /// `openrouter`, `azure`, `bedrock`…). It names the [`Target`](crate::Target)
    /// the encoder prepares for, so reasoning that this provider wrote goes back to
    /// it. `None`: the API's own provider (`openai`, `anthropic`, `google`).
    pub provider: Option<String>,
    /// How much the model reasons; `None`: the model's default.
    pub reasoning: Option<Reasoning>,
    /// The sampling temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling: the probability mass to sample from.
    pub top_p: Option<f64>,
    /// Texts that end the output when the model writes them.
    pub stop: Vec<String>,
    /// Which tools the model may or must call; `None`: the API's default.
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may call several tools in one turn; `None`: the API's
    /// default (yes).
    pub parallel_tool_calls: Option<bool>,
    /// JSON output matching a schema.
    pub response_format: Option<ResponseFormat>,
    /// Prompt caching.
    pub cache: Option<PromptCache>,
    /// An opaque id of the end user, for the provider's abuse detection.
    pub user: Option<String>,
    /// Key-value pairs stored with the request (OpenAI `metadata`).
    pub metadata: std::collections::BTreeMap<String, String>,
    /// A fixed sampling seed, for repeatable outputs where the API takes one
    /// (Chat Completions `seed`, Gemini `generationConfig.seed`).
    pub seed: Option<i64>,
    /// Top-k sampling: only the `k` likeliest tokens (Anthropic `top_k`,
    /// Gemini `generationConfig.topK`).
    pub top_k: Option<u32>,
    /// The presence penalty (Chat Completions `presence_penalty`, Gemini
    /// `generationConfig.presencePenalty`).
    pub presence_penalty: Option<f64>,
    /// The frequency penalty (Chat Completions `frequency_penalty`, Gemini
    /// `generationConfig.frequencyPenalty`).
    pub frequency_penalty: Option<f64>,
    /// The service tier, as the API names it (OpenAI `service_tier`: `auto`,
    /// `default`, `flex`, `priority`; Anthropic `service_tier`: `auto`,
    /// `standard_only`). Gemini has none.
    pub service_tier: Option<String>,
    /// Fields set in the encoded body last, for a provider option agentmsg
    /// does not model (a gateway's own field, `top_k` for vLLM…): an object
    /// is merged into the body's object of the same name, any other value
    /// replaces the field, and `null` removes it.
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Whether the reply is asked for as a stream: the encoder sets the API's
    /// own switch (`"stream": true`, and for Chat `stream_options.include_usage`
    /// so the last chunk reports usage). Gemini streams by URL
    /// (`:streamGenerateContent?alt=sse`), so its body does not change.
    pub stream: bool,
}

impl<'a> Request<'a> {
    /// A request for `model` with these messages: a `Vec<Message>`, or
    /// anything it can borrow them from (see [`Conversation`]).
    pub fn new(model: impl Into<String>, messages: impl Into<Conversation<'a>>) -> Self {
        Self {
            model: model.into(),
            messages: messages.into(),
            ..Self::default()
        }
    }

    /// The same request for another model (of this API or another), borrowing
    /// this one's messages: the second provider's request copies no message.
    #[must_use]
    pub fn for_model(&self, model: impl Into<String>) -> Request<'_> {
        Request {
            model: model.into(),
            ..self.reborrow()
        }
    }

    /// A copy of this request that borrows its messages from it.
    pub fn reborrow(&self) -> Request<'_> {
        Request {
            model: self.model.clone(),
            system: self.system.clone(),
            messages: self.messages.reborrow(),
            tools: self.tools.clone(),
            max_tokens: self.max_tokens,
            provider: self.provider.clone(),
            reasoning: self.reasoning,
            temperature: self.temperature,
            top_p: self.top_p,
            stop: self.stop.clone(),
            tool_choice: self.tool_choice.clone(),
            parallel_tool_calls: self.parallel_tool_calls,
            response_format: self.response_format.clone(),
            cache: self.cache.clone(),
            user: self.user.clone(),
            metadata: self.metadata.clone(),
            seed: self.seed,
            top_k: self.top_k,
            presence_penalty: self.presence_penalty,
            frequency_penalty: self.frequency_penalty,
            service_tier: self.service_tier.clone(),
            extra_body: self.extra_body.clone(),
            stream: self.stream,
        }
    }

    /// The same request owning its messages (borrowed ones are cloned), for
    /// keeping it past what it borrowed from.
    pub fn into_owned(self) -> Request<'static> {
        Request {
            messages: Conversation::Owned(self.messages.into_owned()),
            model: self.model,
            system: self.system,
            tools: self.tools,
            max_tokens: self.max_tokens,
            provider: self.provider,
            reasoning: self.reasoning,
            temperature: self.temperature,
            top_p: self.top_p,
            stop: self.stop,
            tool_choice: self.tool_choice,
            parallel_tool_calls: self.parallel_tool_calls,
            response_format: self.response_format,
            cache: self.cache,
            user: self.user,
            metadata: self.metadata,
            seed: self.seed,
            top_k: self.top_k,
            presence_penalty: self.presence_penalty,
            frequency_penalty: self.frequency_penalty,
            service_tier: self.service_tier,
            extra_body: self.extra_body,
            stream: self.stream,
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
    pub(crate) fn provider_or<'s>(&'s self, default: &'s str) -> &'s str {
        self.provider.as_deref().unwrap_or(default)
    }

    /// What every encoder does once it has checked the model id (which each
    /// API checks its own way): checks that the options hold together, then
    /// prepares the messages for `api` as [`Request::provider`] (or
    /// `provider`) serves it.
    #[cfg_attr(
        not(any(
            feature = "openai-chat",
            feature = "openai-responses",
            feature = "anthropic",
            feature = "gemini"
        )),
        allow(dead_code)
    )]
    pub(crate) fn prepared(
        &self,
        provider: &str,
        api: &str,
    ) -> Result<crate::project::Prepared, EncodeError> {
        self.prepared_with(provider, api, |target| target)
    }

    /// [`prepared`](Self::prepared) for the target `adjust` makes of the
    /// one [`Target::new`](crate::Target::new) derives from the API's name.
    pub(crate) fn prepared_with(
        &self,
        provider: &str,
        api: &str,
        adjust: impl FnOnce(crate::Target) -> crate::Target,
    ) -> Result<crate::project::Prepared, EncodeError> {
        options::check(self)?;
        let mut target = adjust(crate::Target::new(
            self.provider_or(provider),
            api,
            &self.model,
        ));
        target.context_window = Catalog::builtin()
            .model(&self.model)
            .map(|m| m.context_window)
            .filter(|&window| window != 0);
        Ok(self.messages.prepare(&target))
    }

    /// The same request with `value` set at `field` of the encoded body
    /// ([`extra_body`](Self::extra_body)).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::providers::{Api, Request};
    /// use agentmsg::Message;
    /// let request = Request::new("llama3.2", vec![Message::user("Hi")])
    ///     .with_extra_body("top_k", 20)
    ///     .with_extra_body("stream_options", serde_json::json!({"continuous_usage_stats": true}))
    ///     .with_stream(true);
    /// let body = Api::OpenaiChat.encode(&request)?.body;
    /// assert_eq!(body["top_k"], 20);
    /// // Merged into the encoder's own object.
    /// assert_eq!(body["stream_options"]["include_usage"], true);
    /// assert_eq!(body["stream_options"]["continuous_usage_stats"], true);
    /// # Ok::<(), agentmsg::providers::EncodeError>(())
    /// ```
    #[must_use]
    pub fn with_extra_body(
        mut self,
        field: impl Into<String>,
        value: impl Into<serde_json::Value>,
    ) -> Self {
        self.extra_body.insert(field.into(), value.into());
        self
    }

    /// The same request, asking for a streamed reply or not.
    #[must_use]
    pub fn with_stream(mut self, stream: bool) -> Self {
        self.stream = stream;
        self
    }

    /// The same request with an output token limit.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// The same request with this much reasoning.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: Reasoning) -> Self {
        self.reasoning = Some(reasoning);
        self
    }

    /// The same request with a sampling temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// The same request with nucleus sampling.
    #[must_use]
    pub fn with_top_p(mut self, top_p: f64) -> Self {
        self.top_p = Some(top_p);
        self
    }

    /// The same request with these stop sequences.
    #[must_use]
    pub fn with_stop<S: Into<String>>(mut self, stop: impl IntoIterator<Item = S>) -> Self {
        self.stop = stop.into_iter().map(Into::into).collect();
        self
    }

    /// The same request with a tool choice.
    #[must_use]
    pub fn with_tool_choice(mut self, tool_choice: ToolChoice) -> Self {
        self.tool_choice = Some(tool_choice);
        self
    }

    /// The same request, allowing several tool calls in one turn or not.
    #[must_use]
    pub fn with_parallel_tool_calls(mut self, parallel: bool) -> Self {
        self.parallel_tool_calls = Some(parallel);
        self
    }

    /// The same request, asking for JSON output matching a schema.
    #[must_use]
    pub fn with_response_format(mut self, format: ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// The same request with prompt caching.
    #[must_use]
    pub fn with_cache(mut self, cache: PromptCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// The same request, naming the end user (an opaque id).
    #[must_use]
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// The same request with one more metadata pair.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
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
#[non_exhaustive]
pub struct Encoded {
    /// The JSON body to send: a `Value` that serializes with each tool call's
    /// arguments in the model's order.
    pub body: Body,
    /// What `prepare` and the encoder changed, by input message index.
    pub report: Report,
    /// The request options the API or model could not take as given: left out
    /// or sent changed, each with the reason. The body is valid either way.
    pub options: Vec<OptionChange>,
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
}

fn at_event(event: Option<usize>) -> String {
    event.map_or_else(String::new, |e| format!("event {e}: "))
}

/// Folds a provider's stream events, one at a time, into an [`AssistantMessage`].
pub trait StreamDecode {
    /// Takes one event (the JSON of one SSE `data:` payload or chunk) and
    /// returns what it told: blocks begun, grown and ended, usage, the end.
    ///
    /// # Errors
    /// [`ResponseError`] naming the event, for an event the decoder cannot
    /// read.
    fn push(&mut self, event: &str) -> Result<Vec<StreamEvent>, ResponseError>;

    /// The message so far: the blocks read, a tool call's arguments parsed as
    /// far as they go.
    fn partial(&self) -> AssistantMessage;

    /// The message, once every event has been pushed, with what was skipped
    /// or kept in a changed form, as [`ResponseError::Invalid`] values naming
    /// their event. A stream that stopped before its end is an error (or a
    /// message whose stopReason is `error`).
    ///
    /// # Errors
    /// [`ResponseError::Truncated`] for a stream that ended before its end
    /// event, or the error an event carried.
    fn finish_with_warnings(self) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError>;

    /// The error the provider reported in the stream, once one came (the
    /// message then ends with stopReason `error`).
    fn provider_error(&self) -> Option<&ProviderError> {
        None
    }

    /// Why [`finish_with_warnings`](Self::finish_with_warnings) would fail
    /// now (an event could not be read, or the stream stopped before its
    /// end), told without consuming the decoder, so that a caller can take
    /// the [`partial`](Self::partial) message only when it is needed.
    /// `None` when the stream can finish.
    ///
    /// The built-in decoders check here everything `finish_with_warnings`
    /// checks before it builds the message; the default says `None`.
    fn unfinished(&self) -> Option<ResponseError> {
        None
    }

    /// [`finish_with_warnings`](Self::finish_with_warnings) without the
    /// warnings.
    ///
    /// # Errors
    /// As [`finish_with_warnings`](Self::finish_with_warnings).
    fn finish(self) -> Result<AssistantMessage, ResponseError>
    where
        Self: Sized,
    {
        self.finish_with_warnings().map(|(message, _)| message)
    }
}
