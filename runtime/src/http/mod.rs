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
//!   servers by base URL, Azure OpenAI; keys from the environment or given.
//! - [`Client::complete`] gives a [`Reply`]: the decoded message with usage
//!   and cost, the decoder's warnings, the encoder's report, the request id
//!   and rate-limit headers. [`Client::stream`] gives a [`ReplyStream`].
//! - [`ClientError`]: the provider's status, error type and message, whether
//!   it is a context overflow, how long to wait; for a reply that broke off,
//!   the event index and the message so far.
//! - [`Retry`]: connection errors, 408, 409, 429, 5xx and 529 are retried
//!   with backoff, before any byte reaches the caller.
//!
//! The API key is never shown: not by `Debug`, not in an error, not in a log
//! line ([`ApiKey`]).

mod client;
mod endpoint;
mod error;
mod key;
mod stream;

pub use client::{Client, ClientBuilder, Reply, Retry};
pub use endpoint::{Endpoint, ANTHROPIC_VERSION};
pub use error::{ApiError, ClientError};
pub use key::ApiKey;
pub use stream::{ReplyStream, StreamItem};
