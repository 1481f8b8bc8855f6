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
//! ## Faults
//!
//! What the client does on each fault (each one tested against a loopback
//! server in `tests/http`). `tests/http/sdk_faults.rs` serves each of them
//! from one server (`scripts/sdk_faults.py`) to agentmsg and to the official
//! Python SDKs (anthropic 2.12, openai 3.54, as pinned in
//! `scripts/requirements-sdk.txt`), all with two retries, and checks every
//! count and wait below; the waits are one run's, measured by the server
//! from a reply to the next request (on a shared 2-core machine, so up to
//! 0.05 s above the bound is the machine).
//!
//! | fault | attempts: agentmsg / anthropic / openai | waits: agentmsg; SDKs (s) | the caller gets |
//! |---|---|---|---|
//! | 503 | 3 / 3 / 3 | 0.52, 0.82; 0.47, 0.94 (bounds 0.375–0.5, 0.75–1) | [`ClientError::Api`]; the SDKs raise |
//! | 503, `x-should-retry: false` | 1 / 1 / 1 | — | the error |
//! | 400, `x-should-retry: true` | 3 / 3 / 3 | 0.44, 0.78; 0.53, 0.79 (backoff) | the error |
//! | 429, `retry-after: 1` | 3 / 3 / 3 | 1.04, 1.01; 1.01, 1.00 | the error |
//! | 429, `retry-after-ms: 300` | 3 / 3 / 3 | 0.33, 0.30; 0.33, 0.32 | the error |
//! | 429, `retry-after` a date 2 s ahead | 3 / 3 / 3 | 1.38, 1.98; 1.39, 1.97 (bounds 1–2) | the error |
//! | 429, `retry-after` a past date, or `0` | 3 / 3 / 3 | 0.44, 0.96; 0.44, 0.82 (backoff) | the error |
//! | 429, `retry-after: 90` | **1** / 1, waiting / 1, waiting | —; still waiting at the 6 s cutoff | agentmsg: the error at once, with [`ClientError::retry_after`] (1) |
//! | 429, `retry-after: 150` | 1 / **1, waiting** / 1 | —; anthropic still waiting at 6 s | anthropic waits any ask (1) |
//! | 529 overloaded | 3 / 3 / 3 | 0.51, 0.96; 0.46, 0.95 (backoff) | the error |
//! | 500 with a 1 MiB body | 3 / 3 / 3 | 0.54, 0.85; 0.52, 0.82 (backoff) | agentmsg reads [`MAX_ERROR_BODY`] (64 KiB) and says so; the SDKs hold the whole body (2) |
//! | connection reset before the reply | 3 / 3 / 3 | 0.47, 0.79; 0.49, 0.87 (backoff) | [`ClientError::Connect`]; `APIConnectionError` |
//! | an error event in a 200 stream | 1 / 1 / 1 | — | [`ClientError::Stream`] with the partial message on all APIs; anthropic and Chat raise, the Responses stream yields the `error` event as an event (3) |
//! | a 200 stream cut by a reset | 1 / 1 / 1 | — | [`ClientError::Transport`] with the event index; openai `APIConnectionError`, anthropic the HTTP library's own `ReadError` |
//! | a 307 to another origin | 1 / 1 / 1 | — | [`ClientError::Redirect`]; both SDKs follow it and send the prompt there (not the key), then raise on its 404 (4) |
//! | a 301, 302 or 303, or a 307/308 to the same origin | | | only a 307 or 308 to the same origin is followed; any other is [`ClientError::Redirect`], never retried |
//! | JSON to a stream request | | | decoded as the whole reply (LiteLLM answers so) |
//! | another body to a stream request | | | [`ClientError::NotAStream`]: content type and first bytes |
//! | a reply that stalls | | | [`ClientError::Transport`] with `timeout`, after the idle timeout |
//!
//! The backoff is the SDKs': retry `n` waits `0.5 s × 2ⁿ` less up to a
//! quarter at random, at most 8 s ([`Retry`]). Where agentmsg differs, and
//! why:
//!
//! 1. A `Retry-After` above [`Retry::max_wait`] (60 s) is not waited for: the
//!    error comes back at once and says how long the provider asked for, so
//!    an agent is never silently stuck for minutes and can tell its user or
//!    pick another model. openai waits up to 120 s and gives up above;
//!    anthropic waits for any ask. `Retry::default().with_max_wait(...)`
//!    sets another limit.
//! 2. An error body is read to 64 KiB, so a broken or hostile server's
//!    gigabyte is never held; a provider's error JSON is a few hundred bytes.
//! 3. An error inside a 200 stream always ends it in `Err`, so a caller
//!    using `item?` cannot take the partial answer for the whole one.
//! 4. No body and no key ever reach another origin.
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
mod reply;
mod stream;
mod trace;
#[cfg(feature = "vertex")]
mod vertex;

#[cfg(feature = "bedrock")]
pub use bedrock::{region_from_env, DEFAULT_BEDROCK_REGION};
pub use client::{Client, ClientBuilder, Retry, USER_AGENT};
pub use endpoint::{Endpoint, ANTHROPIC_VERSION};
pub use error::{ApiError, ClientError, MAX_ERROR_BODY};
#[cfg(feature = "vertex")]
pub use google_token::{ServiceAccountKey, TokenSource, CLOUD_PLATFORM_SCOPE};
pub use key::ApiKey;
pub use reply::Reply;
pub use stream::{ReplyStream, StreamItem};
