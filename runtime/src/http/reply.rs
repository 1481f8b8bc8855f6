//! [`Reply`]: a decoded reply; and what the client knows of a reply before
//! it is read (its response, content type and headers), which the whole
//! read ([`Client`](super::Client)) and the streamed one
//! ([`ReplyStream`](super::ReplyStream)) both start from.

use std::collections::BTreeMap;
use std::pin::Pin;

use bytes::Bytes;
use futures_core::Stream;

use super::trace::Trace;
use crate::project::Report;
use crate::providers::{Api, OptionChange, ResponseError};
use crate::AssistantMessage;

/// A decoded reply, with what is known about the request that made it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Reply {
    /// The message, with its usage and cost (when the model's price is
    /// known).
    pub message: AssistantMessage,
    /// What the decoder skipped or kept in a changed form.
    pub warnings: Vec<ResponseError>,
    /// What `prepare` and the encoder changed in the request.
    pub report: Report,
    /// The request options the API or model could not take as given.
    pub options: Vec<OptionChange>,
    /// The provider's request id.
    pub request_id: Option<String>,
    /// The rate-limit headers of the reply (`x-ratelimit-*`,
    /// `anthropic-ratelimit-*`, `retry-after`…), by lowercase name.
    pub rate_limits: BTreeMap<String, String>,
    /// How many times the request was retried.
    pub retries: u32,
}

/// What the client knows of a request before its reply is read.
pub(crate) struct Sent {
    pub(crate) response: reqwest::Response,
    /// The URL it went to (credentials redacted).
    pub(crate) url: String,
    /// The reply's `content-type`.
    pub(crate) content_type: Option<String>,
    /// Whether a stream was asked for (and a whole reply came).
    pub(crate) streamed: bool,
    pub(crate) report: Report,
    pub(crate) options: Vec<OptionChange>,
    pub(crate) request_id: Option<String>,
    pub(crate) rate_limits: BTreeMap<String, String>,
    pub(crate) retries: u32,
    /// The request's span (feature `tracing`).
    pub(crate) trace: Trace,
    /// The model the request named, for an API whose replies name none
    /// (else empty: a reply of the other APIs without a model is an error
    /// body, kept as the decoder made it).
    pub(crate) model: String,
}

/// Whether `api`'s replies never name their model (Bedrock's Converse).
pub(crate) fn replies_name_no_model(api: Api) -> bool {
    #[cfg(feature = "bedrock")]
    if api == Api::Bedrock {
        return true;
    }
    let _ = api;
    false
}

/// `message` as the client returns it: with the endpoint's provider when it
/// names one, with the model the request named when the reply named none
/// and `model` is given (Bedrock's Converse replies never name it), and
/// priced once its model is known.
pub(crate) fn stamped(message: &mut AssistantMessage, provider: Option<&str>, model: &str) {
    if let Some(provider) = provider {
        provider.clone_into(&mut message.provider);
    }
    if message.model.is_empty() && !model.is_empty() {
        model.clone_into(&mut message.model);
        crate::providers::Catalog::builtin().fill_cost(message);
    }
}

/// The body of a reply as a boxed stream of chunks.
pub(crate) type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// A content type without its parameters, in lower case (`text/event-stream`
/// of `Text/Event-Stream; charset=utf-8`).
fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a content type is JSON (`application/json`, `…+json`).
pub(crate) fn is_json(content_type: &str) -> bool {
    let essence = essence(content_type);
    essence == "application/json" || essence.ends_with("+json")
}

/// Whether a content type is a stream's: server-sent events, or AWS's
/// event stream (Bedrock's ConverseStream).
pub(crate) fn is_stream(content_type: &str) -> bool {
    matches!(
        essence(content_type).as_str(),
        "text/event-stream" | "application/vnd.amazon.eventstream"
    )
}

/// The first bytes of a body, as text, for an error that says what came.
pub(crate) fn head(body: &[u8]) -> String {
    const HEAD: usize = 200;
    let text = String::from_utf8_lossy(&body[..body.len().min(HEAD)]);
    let mut head = text.into_owned();
    if body.len() > HEAD {
        head.push('…');
    }
    head
}
