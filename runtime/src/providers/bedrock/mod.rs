//! Amazon Bedrock Converse (`bedrock-converse-stream`): request encoder,
//! response decoder and stream decoder, for every model Bedrock serves
//! (Claude, Llama, Mistral, Nova…) through one body.
//!
//! A request body, as [`encode_request`] writes it (the model id goes in the
//! URL, `/model/{modelId}/converse` or `/converse-stream`, see [`model_path`]):
//!
//! ```json
//! {"system":[{"text":"Be terse."}],
//!  "messages":[{"role":"user","content":[{"text":"Hi"}]}],
//!  "inferenceConfig":{"maxTokens":4096}}
//! ```
//!
//! What the encoder does beyond a one-to-one mapping, each recorded in the
//! [`Report`] or in [`Encoded::options`](super::Encoded::options):
//! - system messages of the transcript join the top-level `system`;
//! - consecutive turns of one role are merged (tool results form one user
//!   turn, their `toolResult` blocks first), and a conversation opening with
//!   the model's turn gets a short user turn before it;
//! - images are sent as bytes in the formats Converse reads (png, jpeg, gif,
//!   webp), an `s3://` URL as an `s3Location`; any other image, audio, and an
//!   `http(s)` URL (Converse fetches none) become a text placeholder;
//! - documents are sent as bytes with a `name` Converse accepts (letters,
//!   digits, single spaces, hyphens, parentheses and brackets; at most 200
//!   characters), made from the title;
//! - thinking goes back as `reasoningContent` by the rules of Anthropic
//!   thinking: only thinking this very model wrote (on Bedrock, or as the same Claude on
//!   Anthropic or Vertex AI) is replayed,
//!   with its signature; for a Claude model thinking without a signature is
//!   dropped, and redacted thinking goes back as `redactedContent`;
//! - prompt caching puts a `cachePoint` after the system prompt, the tools and
//!   the last user turn;
//! - `toolChoice` `none`, which Converse lacks, is sent as no tools at all.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::providers::{bedrock, Request, StreamDecode};
//! use agentmsg::{Message, StopReason};
//!
//! let request = Request::new("us.anthropic.claude-sonnet-4-5-20250929-v1:0", vec![Message::user("Hi")])
//!     .with_system("Be terse.");
//! let encoded = bedrock::encode_request(&request)?;
//! assert_eq!(encoded.body["system"][0]["text"], "Be terse.");
//! assert_eq!(encoded.body["messages"][0]["content"][0]["text"], "Hi");
//!
//! let reply = bedrock::decode_response(
//!     r#"{"output":{"message":{"role":"assistant","content":[{"text":"Hello."}]}},
//!         "stopReason":"end_turn","usage":{"inputTokens":9,"outputTokens":3,"cacheReadInputTokens":100}}"#,
//! )?;
//! assert_eq!((reply.text_content().as_str(), reply.stop_reason), ("Hello.", StopReason::Stop));
//! assert_eq!((reply.usage.input, reply.usage.cache_read), (9, 100));
//!
//! let mut stream = bedrock::StreamDecoder::new();
//! for event in [
//!     r#"{"messageStart":{"role":"assistant"}}"#,
//!     r#"{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"read"}}}}"#,
//!     r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"path\":\"a.rs\"}"}}}}"#,
//!     r#"{"contentBlockStop":{"contentBlockIndex":0}}"#,
//!     r#"{"messageStop":{"stopReason":"tool_use"}}"#,
//!     r#"{"metadata":{"usage":{"inputTokens":9,"outputTokens":12,"totalTokens":21}}}"#,
//! ] {
//!     stream.push(event)?;
//! }
//! let message = stream.finish()?;
//! assert_eq!(message.stop_reason, StopReason::ToolUse);
//! assert_eq!(message.tool_calls().next().and_then(|c| c.arguments.get("path")), Some("a.rs".into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The stream's events are the JSON of one ConverseStream event each, its type
//! as the single key (`{"contentBlockDelta":{…}}`), which is how
//! [`EventStreamParser`] gives the frames of AWS's binary event stream
//! ([`Frame::to_event_json`]).
//! Exception events (`{"throttlingException":{"message":…}}`) end the message
//! with stopReason `error`.
//!
//! Blocks agentmsg does not model (`citationsContent`, `image`, a server
//! tool's `toolResult`…) are kept as [`ProviderBlock`](crate::ProviderBlock)s
//! of this API, sent back in place to Bedrock and dropped (reported) for any
//! other.
//!
//! # Moving a transcript between Anthropic, Bedrock and Vertex AI
//!
//! Text, images, documents, tool calls and tool results move both ways
//! (tool-call ids are mapped to what the target takes). Thinking goes back
//! only to the model that wrote it ([`Target::produced`](crate::Target::produced)),
//! and Claude is one model on the three platforms that serve it with
//! Anthropic's signatures: Anthropic's extended-thinking guide says signature
//! values are compatible across the Claude API, Amazon Bedrock and Google
//! Cloud's Vertex AI, a value made on one working on another. So:
//!
//! | from → to | thinking |
//! |---|---|
//! | Anthropic → Claude on Bedrock, the same model | replayed with its signature (as `reasoningContent`) |
//! | Claude on Bedrock → Anthropic or Claude on Vertex, the same model | replayed with its signature |
//! | Claude on Vertex (its replies say `anthropic`) → Bedrock, the same model | replayed with its signature |
//! | a dated snapshot → its alias (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`) on any of them | replayed |
//! | any Claude → another Claude model, on any platform | dropped, reported |
//! | Claude ↔ Llama, Mistral, Nova… on Bedrock, or Gemini | dropped, reported |
//!
//! The same model is recognised through each platform's spelling:
//! `claude-sonnet-4-5-20250929`, `us.anthropic.claude-sonnet-4-5-20250929-v1:0`
//! (any region prefix, or none), an ARN ending in one, `claude-sonnet-4-5@20250929`.
//! Each drop is reported as
//! [`DroppedThinking`](crate::project::ChangeKind::DroppedThinking). Without
//! thinking in the last assistant turn of a tool loop, thinking must be off
//! for that request (Anthropic's rule, which Claude on Bedrock keeps).
//!
//! [`Report`]: crate::project::Report

mod event_stream;
mod options;
mod request;
mod response;
mod signing;
mod stream;

pub use event_stream::{EventStreamError, EventStreamParser, Exception, Frame};
pub use request::{encode_request, model_path};
pub use response::{decode_response, decode_response_with_warnings, stop_reason};
pub use signing::{sign_request, AwsCredentials, SigningError, SIGNING_NAME};
pub use stream::StreamDecoder;

/// The Bedrock Converse API as a [`Codec`](super::Codec): this module's
/// functions, for code generic over the API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Bedrock;
super::codec::impl_codec!(Bedrock);

/// The provider name written into decoded messages and used for the target
/// (pi-ai's name for Bedrock).
pub const PROVIDER: &str = "amazon-bedrock";
/// The API identifier (pi-ai's).
pub const API: &str = super::Api::Bedrock.id();
/// `maxTokens` when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Whether `model` (a foundation model id, an inference profile such as
/// `us.anthropic.claude-…` or an ARN naming one) is an Anthropic Claude model,
/// whose thinking is signed and configured the Anthropic way.
pub fn is_claude(model: &str) -> bool {
    model.contains("anthropic.claude") || model.contains("anthropic/claude")
}
