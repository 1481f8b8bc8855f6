//! Sending requests and streaming replies (feature `http`): a [`Client`] per
//! [`Endpoint`], on reqwest (rustls) and tokio.
//!
//! ```no_run
//! # extern crate agentmsg_runtime as agentmsg;
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use agentmsg::http::{Client, StreamItem};
//! use agentmsg::providers::{Request, StreamEvent};
//! use agentmsg::Message;
//! use futures_util::StreamExt;
//!
//! let client = Client::anthropic()?; // the key from ANTHROPIC_API_KEY
//! let request = Request::new("claude-sonnet-4-5", vec![Message::user("Hi")]);
//! let mut stream = client.stream(&request).await?;
//! while let Some(item) = stream.next().await {
//!     match item? {
//!         StreamItem::Event(StreamEvent::TextDelta { delta, .. }) => print!("{delta}"),
//!         StreamItem::Reply(reply) => println!("\n{:?}", reply.message.usage),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! - [`Endpoint`]: the four APIs' own URLs and headers, OpenAI-compatible
//!   servers by base URL, Azure OpenAI, Amazon Bedrock (feature `bedrock`:
//!   SigV4 or a Bedrock API key) and Gemini and Claude on Google Vertex AI
//!   (feature `vertex`: an access token, or one a service-account key is
//!   exchanged for); keys from the environment or given. One session moves
//!   between them with only the endpoint changed: each reply names its
//!   provider and model, and the next request replays its thinking only where
//!   that provider accepts it (see `providers::bedrock`).
//! - [`Client::complete`] gives a [`Reply`]: the decoded message with usage
//!   and cost, the decoder's warnings, the encoder's report, the request id
//!   and rate-limit headers. [`Client::stream`] gives a [`ReplyStream`].
//! - [`ClientError`]: the provider's status, error type and message, whether
//!   it is a context overflow, how long to wait; for a reply that broke off,
//!   the event index and the message so far.
//! - [`Retry`]: connection errors, 408, 409, 429, 5xx and 529 are retried
//!   with backoff, before any byte reaches the caller.
//!
//! What the client does on each fault (each one tested against a loopback
//! server in `tests/http`):
//!
//! | fault | agentmsg | note |
//! |---|---|---|
//! | 408, 409, 429, 500–504, 529 | retried, 2 retries by default | the official SDKs retry every 5xx |
//! | `x-should-retry: true` / `false` | obeyed over the status, both ways | as the SDKs |
//! | `retry-after-ms`, `retry-after` (seconds or HTTP date) | waited for, up to [`Retry::max_wait`] (60 s) | a longer ask returns the error; the SDKs fall back to their own backoff |
//! | an error body | read to [`MAX_ERROR_BODY`] (64 KiB), the message says it was cut | |
//! | a redirect | only a 307 or 308 to the same origin is followed; any other is [`ClientError::Redirect`], never retried | |
//! | an error event inside a 200 stream | the stream ends in [`ClientError::Stream`] with the partial message; never retried (the reply had begun) | the SDKs raise too |
//! | JSON to a stream request | decoded as the whole reply | LiteLLM answers so |
//! | another body to a stream request | [`ClientError::NotAStream`]: content type and first bytes | |
//! | a reply that breaks off or stalls | [`ClientError::Transport`] with the event index and the partial message | |
//!
//! Redirects: only a 307 or 308 to the same origin is followed; any other
//! is refused with [`ClientError::Redirect`], so no key, header or body ever
//! reaches another origin.
//!
//! The API key is never shown: not by `Debug`, not in an error, not in a log
//! line ([`ApiKey`]).

#[cfg(feature = "bedrock")]
mod bedrock;
mod client;
mod endpoint;
mod error;
#[cfg(feature = "vertex")]
mod google_token;
mod key;
mod redact;
mod redirect;
mod stream;
mod trace;
#[cfg(feature = "vertex")]
mod vertex;

#[cfg(feature = "bedrock")]
pub use bedrock::{region_from_env, DEFAULT_BEDROCK_REGION};
pub use client::{Client, ClientBuilder, Reply, Retry, MAX_ERROR_BODY, USER_AGENT};
pub use endpoint::{Endpoint, ANTHROPIC_VERSION};
pub use error::{ApiError, ClientError};
#[cfg(feature = "vertex")]
pub use google_token::{ServiceAccountKey, TokenSource, CLOUD_PLATFORM_SCOPE};
pub use key::ApiKey;
pub use stream::{ReplyStream, StreamItem};
