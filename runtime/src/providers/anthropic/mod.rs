//! Anthropic Messages (`anthropic-messages`): request encoder, response decoder
//! and stream decoder.
//!
//! A request body, as [`encode_request`] writes it:
//!
//! ```json
//! {"model":"claude-sonnet-4-5","max_tokens":4096,"system":[{"type":"text","text":"Be terse."}],
//!  "messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}
//! ```
//!
//! What the encoder does beyond a one-to-one mapping, each recorded in the
//! [`Report`] (tool-call ids are already mapped to `^[a-zA-Z0-9_-]{1,64}$` by
//! [`prepare`]):
//! - system messages of the transcript join the top-level `system`;
//! - consecutive turns of one role are merged (tool results always form one user
//!   turn, with the `tool_result` blocks first);
//! - audio (Anthropic takes none), images and documents of a MIME type Anthropic
//!   does not read become a text placeholder;
//! - thinking without a signature cannot be replayed and is dropped;
//! - a document's title longer than [`MAX_DOCUMENT_TITLE`] characters is cut;
//! - trailing whitespace of a final assistant turn (a prefill) is removed, as
//!   Anthropic refuses it;
//! - `max_tokens`, required by Anthropic, is [`DEFAULT_MAX_TOKENS`] when the
//!   request has none;
//! - thinking is off (and said in the options) for a request that continues a
//!   tool loop whose assistant turn has no thinking block (the model changed
//!   mid-loop, so the other model's thinking was dropped): Anthropic keeps one
//!   thinking configuration per assistant turn and refuses thinking there.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::providers::{anthropic, Request, StreamDecode};
//! use agentmsg::{Message, StopReason};
//!
//! let request = Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]).with_system("Be terse.");
//! let encoded = anthropic::encode_request(&request)?;
//! assert_eq!(encoded.body["max_tokens"], anthropic::DEFAULT_MAX_TOKENS);
//! assert_eq!(encoded.body["system"][0]["text"], "Be terse.");
//!
//! let reply = anthropic::decode_response(
//!     r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
//!         "content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn",
//!         "usage":{"input_tokens":9,"output_tokens":3,"cache_read_input_tokens":100}}"#,
//! )?;
//! assert_eq!((reply.text_content().as_str(), reply.stop_reason), ("Hello.", StopReason::Stop));
//! assert_eq!((reply.usage.input, reply.usage.cache_read), (9, 100));
//!
//! let mut stream = anthropic::StreamDecoder::new();
//! for event in [
//!     r#"{"type":"message_start","message":{"id":"msg_2","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":9,"output_tokens":1}}}"#,
//!     r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
//!     r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}"#,
//!     r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"a.rs\"}"}}"#,
//!     r#"{"type":"content_block_stop","index":0}"#,
//!     r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#,
//!     r#"{"type":"message_stop"}"#,
//! ] {
//!     stream.push(event)?;
//! }
//! let message = stream.finish()?;
//! assert_eq!(message.stop_reason, StopReason::ToolUse);
//! assert_eq!(message.tool_calls().next().and_then(|c| c.arguments.get("path")), Some("a.rs".into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The decoders keep every block in its order: those agentmsg models (text with
//! its `citations`, thinking with its signature, redacted thinking, tool use)
//! as its own blocks, and every other one (`server_tool_use`,
//! `web_search_tool_result`, `web_fetch_tool_result`,
//! `code_execution_tool_result`, `mcp_tool_use`, `mcp_tool_result`,
//! `compaction`, `fallback`…) as a [`ProviderBlock`] holding the block as it
//! came (in a stream, with the `input` of its `input_json_delta`s and the
//! `content` of its `compaction_delta`s). They are never client tool calls: a
//! `tool_use` stop with no client call is a `stop`, and `pause_turn` (a long
//! server-side turn to continue) is `paused`. The encoder sends them back in
//! place to Anthropic, and [`prepare`] drops them, reported, for any other API
//! or provider; a `fallback` block, which Anthropic takes in no request, is
//! dropped there too. A `fallback` block (the server switched
//! models) also sets the message's `model` to the model that answered. `model` is
//! the id the response names (often dated, such as `claude-sonnet-4-5-20250929`).
//! Requests are encoded with the signatures of thinking made by
//! `request.model` or by a snapshot of it: a dated id and its alias
//! (`claude-sonnet-4-5-20250929` and `claude-sonnet-4-5`) are one model (see
//! [`Target::produced`](crate::Target::produced) and [`prepare`]), so a stored
//! reply replays to the alias it was asked for; another model gets none.
//!
//! [`Report`]: crate::project::Report
//! [`prepare`]: crate::prepare
//! [`ProviderBlock`]: crate::ProviderBlock

mod options;
mod request;
mod response;
mod stream;

pub use request::encode_request;
pub(crate) use response::decode_block;
pub use response::{decode_response, decode_response_with_warnings, stop_reason};
// The usage report reads Claude Code logs' usage as this decoder does.
#[cfg(feature = "usage-report")]
pub(crate) use response::{usage_from, WireUsage};
pub use stream::StreamDecoder;

/// The Anthropic Messages API as a [`Codec`](super::Codec): this module's functions, for code
/// generic over the API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Anthropic;
super::codec::impl_codec!(Anthropic);

/// The longest document `title` Anthropic takes, in characters (its request
/// schema's `maxLength`); a longer one is cut.
pub const MAX_DOCUMENT_TITLE: usize = 500;

/// The provider name written into decoded messages and used for the target.
pub const PROVIDER: &str = "anthropic";
/// The API identifier.
pub const API: &str = super::Api::Anthropic.id();
/// `max_tokens` when the request sets none (Anthropic requires the field; this is
/// the default the Vercel AI SDK uses too).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;
