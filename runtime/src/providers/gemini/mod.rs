//! Google Gemini `generateContent` (`google-generative-ai`): request encoder,
//! response decoder and stream decoder.
//!
//! A request body, as [`encode_request`] writes it (the model is in the URL, not
//! the body):
//!
//! ```json
//! {"systemInstruction":{"parts":[{"text":"Be terse."}]},
//!  "contents":[{"role":"user","parts":[{"text":"Hi"}]}],
//!  "generationConfig":{"maxOutputTokens":1024}}
//! ```
//!
//! Mapping, with what is changed recorded in the [`Report`]:
//! - roles are `user` and `model`; tool results are `functionResponse` parts of a
//!   user turn (all results of one round in one turn, before any other part), and
//!   consecutive turns of one role are merged;
//! - images, audio and documents are `inlineData` (base64) or `fileData` (URL);
//!   inline images other than PNG, JPEG, WebP, HEIC and HEIF, and documents other
//!   than PDF and text, become a text placeholder; a document's title is not sent;
//!   images left inside tool results follow the `functionResponse` parts as
//!   `inlineData`;
//! - `functionResponse.response` is `{"output": text}`, or `{"error": text}`
//!   for a failed call;
//! - thinking is a `thought: true` part; `thoughtSignature` goes back on the part
//!   that carried it;
//! - tools are `functionDeclarations` with the JSON Schema in
//!   `parametersJsonSchema` (the `parameters` field takes only Gemini's OpenAPI
//!   subset).
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::providers::{gemini, Request, StreamDecode};
//! use agentmsg::{Message, StopReason};
//!
//! let request = Request::new("gemini-2.5-flash", vec![Message::user("Hi")]).with_max_tokens(256);
//! let body = gemini::encode_request(&request)?.body;
//! assert_eq!(body["contents"][0]["parts"][0]["text"], "Hi");
//! assert_eq!(body["generationConfig"]["maxOutputTokens"], 256);
//!
//! let mut stream = gemini::StreamDecoder::new();
//! for chunk in [
//!     r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"r1","modelVersion":"gemini-2.5-flash"}"#,
//!     r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"lo."}]},"finishReason":"STOP"}],"responseId":"r1",
//!        "usageMetadata":{"promptTokenCount":12,"cachedContentTokenCount":8,"candidatesTokenCount":2,"thoughtsTokenCount":5}}"#,
//! ] {
//!     stream.push(chunk)?;
//! }
//! let message = stream.finish()?;
//! assert_eq!((message.text_content().as_str(), message.stop_reason), ("Hello.", StopReason::Stop));
//! // promptTokenCount includes the cached tokens; output includes the thoughts.
//! assert_eq!((message.usage.input, message.usage.cache_read), (4, 8));
//! assert_eq!((message.usage.output, message.usage.reasoning), (7, 5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Gemini may put a `thoughtSignature` on a plain text part. The decoders keep it
//! as the text block's `signature` (as pi keeps it, as `textSignature`): a signed
//! part ends its block, so each signature stays with the text it came with, and
//! the signature of an image part is kept on an empty text block after it.
//! The encoder sends it back on the text's part. Function calls that come
//! without an `id` get a deterministic one (`call_` and 16 hex digits of a hash
//! of the response id, the call's position, name and arguments). An image the
//! model made (`inlineData` of an `image/…` type) becomes an image block, which
//! the encoder sends back as `inlineData`. Other parts agentmsg does not model
//! (`executableCode`, `codeExecutionResult`, thought images, other media…) are
//! kept whole, with
//! their signature, as [`ProviderBlock`]s that go back to Gemini as the same
//! parts; the candidate's `groundingMetadata`, `citationMetadata` and
//! `urlContextMetadata` are kept as provider blocks of their own
//! (`{"groundingMetadata": …}`) after the parts, which describe the answer and
//! are not sent back (reported). Only the first candidate is read. A stream
//! that ends cleanly without a `finishReason` is a stop (see [`StreamDecoder`]).
//!
//! [`prepare`]: crate::prepare
//! [`Report`]: crate::project::Report
//! [`ProviderBlock`]: crate::ProviderBlock

mod json_path;
mod options;
mod request;
mod response;
mod stream;

pub use request::encode_request;
pub use response::{decode_response, decode_response_with_warnings, stop_reason};
pub use stream::StreamDecoder;

/// Google's Gemini `generateContent` API as a [`Codec`](super::Codec): this module's functions, for code
/// generic over the API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Gemini;
super::codec::impl_codec!(Gemini);

/// The provider name written into decoded messages and used for the target.
pub const PROVIDER: &str = "google";
/// The API identifier.
pub const API: &str = super::Api::Gemini.id();
/// The signature Google documents for function calls that a Gemini 3 model did
/// not make itself (a transcript from another model), so that its signature
/// validation lets them through.
pub(crate) const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";
