//! OpenAI Chat Completions (`POST /v1/chat/completions`, api id
//! `openai-completions`): request encoder, response decoder and stream decoder.
//!
//! Encoding (after [`prepare`] for
//! `Target::new("openai", "openai-completions", model)`):
//!
//! | agentmsg | Chat Completions |
//! |---|---|
//! | `Request::system`, system messages | `{"role":"system","content":…}` |
//! | user text / image / audio / document | `text`, `image_url` (data URL or URL), `input_audio` (wav, mp3 only), `file` (`file_data` data URL + `filename`) |
//! | assistant text and tool calls | `content` and `tool_calls` (`arguments` is a JSON string) |
//! | thinking a compatible server wrote (its signature names the field: `reasoning_content`, `reasoning`, `reasoning_text`) | the same field on the assistant message, when `prepare` kept it (the same provider and model); DeepSeek requires it back on a turn that called a tool |
//! | other thinking, redacted thinking | not sent (OpenAI's API takes no reasoning back); reported |
//! | tool result | one `{"role":"tool","tool_call_id":…}` message each; images follow in a user message |
//! | `max_tokens` | `max_completion_tokens` |
//!
//! Decoding: `reasoning_content` / `reasoning` / `reasoning_text` (sent by
//! OpenAI-compatible servers) become a thinking block whose signature is the
//! field's name (as pi keeps it), then text, refusal (as text, stop reason
//! `guardRail`) and tool calls, in that order. Tool-call arguments that are not a
//! JSON object are kept as `{"value": <the JSON, or the raw text when it is not
//! JSON>}` and reported by [`decode_response_with_warnings`] and
//! [`finish_with_warnings`](super::StreamDecode::finish_with_warnings); a custom tool call becomes a tool
//! call with arguments `{"input": …}` (also reported). `usage.input` excludes the cached prompt tokens,
//! which are `usage.cacheRead`. The timestamp is the response's `created` (0 when
//! absent).
//!
//! [`prepare`]: crate::prepare

mod options;
mod request;
mod response;
mod stream;

pub use request::encode_request;
pub use response::{decode_response, decode_response_with_warnings, stop_reason};
pub use stream::StreamDecoder;

/// OpenAI Chat Completions (and the servers that copy it) as a [`Codec`](super::Codec): this module's functions, for code
/// generic over the API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct OpenaiChat;
super::codec::impl_codec!(OpenaiChat);

/// The api id of Chat Completions.
pub const API: &str = super::Api::OpenaiChat.id();
/// The provider id written into decoded messages.
pub const PROVIDER: &str = "openai";
