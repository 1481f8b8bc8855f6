//! [`ClientError`], and the provider's error read from an error reply.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::message::context_overflow_source;
use crate::providers::{Api, EncodeError, StreamError};
use crate::AssistantMessage;

/// An error status from the provider, with what its body said.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status.
    pub status: u16,
    /// The provider's error type (`invalid_request_error`,
    /// `overloaded_error`, `RESOURCE_EXHAUSTED`…), when the body has one.
    pub error_type: Option<String>,
    /// The provider's error code, when its body has one besides the type
    /// (OpenAI's `{"type":"invalid_request_error","code":"model_not_found"}`).
    pub code: Option<String>,
    /// The URL the request went to (credentials in it redacted).
    pub url: String,
    /// The provider's own verdict on a retry: the `x-should-retry` header,
    /// which the client obeys over the status; for an error inside a stream,
    /// what its type says ([`ProviderError::is_retryable`](crate::providers::ProviderError::is_retryable)).
    pub should_retry: Option<bool>,
    /// The provider's message, or the body as text when it is not the API's
    /// error JSON, or `STATUS status code (no body)`.
    pub message: String,
    /// The provider's request id (a header, or Anthropic's `request_id`).
    pub request_id: Option<String>,
    /// How long the provider asked to wait (`retry-after-ms`, `retry-after`,
    /// or Gemini's `RetryInfo`).
    pub retry_after: Option<Duration>,
    /// How many times the request was retried before this answer.
    pub retries: u32,
}

/// Why a request failed. The API key never appears in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No key was given and none is in the environment.
    #[error("no API key for {api}: set {vars} or give one with Endpoint::with_key")]
    MissingKey {
        /// The API.
        api: Api,
        /// The environment variables looked in.
        vars: String,
    },
    /// The endpoint cannot make a request (an invalid header, a client that
    /// cannot be built).
    #[error("invalid endpoint: {0}")]
    Endpoint(String),
    /// The request cannot be encoded for the API.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The provider answered with an error status.
    #[error("{} {}{}{} from {}: {}", .0.status, .0.error_type.as_deref().unwrap_or("error"), .0.code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default(), retried(.0.retries), .0.url, .0.message)]
    Api(Box<ApiError>),
    /// The server answered with a redirect the client does not follow: to
    /// another origin (which would receive the key, the headers and the
    /// body), or a 301, 302 or 303 (which would turn the POST into a GET).
    /// Only a 307 or 308 to the same origin is followed. Never retried.
    #[error("refused a {status} redirect from {url} to {location}: {reason}")]
    Redirect {
        /// The redirect's status.
        status: u16,
        /// The URL the request was sent to (credentials redacted).
        url: String,
        /// The redirect's `Location` (credentials redacted).
        location: String,
        /// Why it was refused.
        reason: String,
    },
    /// No answer: the connection failed or timed out, each retry included.
    #[error("request to {url} failed{}: {message}", retried(*.retries))]
    Connect {
        /// The URL the request went to (credentials in it redacted).
        url: String,
        /// What failed.
        message: String,
        /// Whether it was a timeout.
        timeout: bool,
        /// How many times the request was retried.
        retries: u32,
    },
    /// The reply broke off while it was read: the connection failed, or no
    /// bytes came for the idle timeout.
    #[error("reply broke off at event {event}: {message}")]
    Transport {
        /// The 0-based index of the event being read.
        event: usize,
        /// What failed.
        message: String,
        /// Whether the idle timeout ran out.
        timeout: bool,
        /// The message as far as it was read.
        partial: Box<AssistantMessage>,
        /// The provider's request id.
        request_id: Option<String>,
    },
    /// The provider reported an error inside a reply that began with
    /// success (Anthropic's `event: error`, Responses' `response.failed` or
    /// `error`, a Chat or Gemini error chunk). The [`ApiError`] has the
    /// reply's status (200), the provider's error type, code and message,
    /// the request id, and whether the error is worth another try
    /// ([`ApiError::is_retryable`]); `partial` is the message as far as it
    /// streamed.
    #[error("{} {}{} in the stream from {} at event {event}: {}", .error.error_type.as_deref().unwrap_or("error"), .error.code.as_deref().map(|c| format!("({c})")).unwrap_or_default(), if .error.is_retryable() { " (retryable)" } else { "" }, .error.url, .error.message)]
    Stream {
        /// What the provider said.
        error: Box<ApiError>,
        /// The 0-based index of the event that carried the error.
        event: usize,
        /// The message as far as it streamed.
        partial: Box<AssistantMessage>,
    },
    /// A stream was asked for and the reply is neither the API's stream nor
    /// a whole reply of it (an HTML page, a gateway's own JSON).
    #[error("the reply to a stream request is `{content_type}`, not the API's stream: {source}; it began: {head:?}")]
    NotAStream {
        /// The reply's `content-type` (empty when it had none).
        content_type: String,
        /// The first bytes of the body, as text.
        head: String,
        /// Why it could not be read.
        source: Box<StreamError>,
        /// The provider's request id.
        request_id: Option<String>,
    },
    /// The reply could not be decoded (not the API's format, malformed
    /// server-sent events, an event over the size limit, a stream that
    /// ended early).
    #[error("cannot decode the reply: {source}")]
    Decode {
        /// What is wrong, with the event index.
        source: StreamError,
        /// The message as far as it was read (empty for a body, and for a
        /// stream whose last event could not be read).
        partial: Box<AssistantMessage>,
        /// The provider's request id.
        request_id: Option<String>,
    },
}

fn retried(retries: u32) -> String {
    match retries {
        0 => String::new(),
        1 => " (after 1 retry)".to_owned(),
        n => format!(" (after {n} retries)"),
    }
}

impl ClientError {
    /// The HTTP status of an error reply.
    pub fn status(&self) -> Option<u16> {
        self.api_error().map(|e| e.status)
    }

    /// The provider's error, for an error status.
    pub fn api_error(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) | Self::Stream { error: e, .. } => Some(e),
            _ => None,
        }
    }

    /// Whether another try may succeed: the provider's verdict or status
    /// for an error reply or an error in the stream
    /// ([`ApiError::is_retryable`]), and a connection that failed or broke
    /// off.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api(e) | Self::Stream { error: e, .. } => e.is_retryable(),
            Self::Connect { .. } | Self::Transport { .. } => true,
            _ => false,
        }
    }

    /// Whether the provider said the prompt does not fit the model's context
    /// window: the same rule as [`AssistantMessage::is_context_overflow`],
    /// applied to the error's message (or to a message that ended in such an
    /// error, for a reply that broke off).
    pub fn is_context_overflow(&self) -> bool {
        match self {
            Self::Api(e) => context_overflow_source(&e.message).is_some(),
            Self::Stream { error, partial, .. } => {
                context_overflow_source(&error.message).is_some() || partial.is_context_overflow()
            }
            Self::Transport { partial, .. } | Self::Decode { partial, .. } => {
                partial.is_context_overflow()
            }
            _ => false,
        }
    }

    /// How long the provider asked to wait before another try.
    pub fn retry_after(&self) -> Option<Duration> {
        self.api_error().and_then(|e| e.retry_after)
    }

    /// The provider's request id, when the reply had one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Api(e) | Self::Stream { error: e, .. } => e.request_id.as_deref(),
            Self::Transport { request_id, .. }
            | Self::Decode { request_id, .. }
            | Self::NotAStream { request_id, .. } => request_id.as_deref(),
            _ => None,
        }
    }

    /// The message as far as it was read, for a reply that broke off.
    pub fn partial(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Transport { partial, .. }
            | Self::Decode { partial, .. }
            | Self::Stream { partial, .. } => Some(partial),
            _ => None,
        }
    }

    /// The 0-based index of the stream event the error happened at.
    pub fn event(&self) -> Option<usize> {
        match self {
            Self::Transport { event, .. } | Self::Stream { event, .. } => Some(*event),
            Self::Decode { source, .. } => source.event(),
            Self::NotAStream { source, .. } => source.event(),
            _ => None,
        }
    }

    /// Whether a timeout (connect, or idle between events) caused it.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            Self::Connect { timeout: true, .. } | Self::Transport { timeout: true, .. }
        )
    }
}

impl ApiError {
    /// Whether this answer is worth another try: the provider's
    /// `x-should-retry` when it sent one (as the official SDKs obey it, both
    /// ways), else the status ([`Retry`](super::Retry)).
    pub fn is_retryable(&self) -> bool {
        self.should_retry
            .unwrap_or_else(|| crate::providers::retryable_status(self.status))
    }
}

/// The `x-should-retry` header: `true` or `false`, anything else ignored.
fn should_retry(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The request id among `headers`.
pub(crate) fn request_id(headers: &HeaderMap) -> Option<String> {
    [
        "request-id",
        "x-request-id",
        "x-goog-request-id",
        "apim-request-id",
    ]
    .iter()
    .find_map(|name| headers.get(*name)?.to_str().ok())
    .map(str::to_owned)
}

/// How long `headers` ask to wait: `retry-after-ms` (OpenAI), then
/// `retry-after` in seconds or as an HTTP date (counted from now; a date
/// past is no wait).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| Some(headers.get(name)?.to_str().ok()?.trim());
    let number = |name: &str| text(name)?.parse::<f64>().ok();
    let seconds = number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"));
    match seconds {
        Some(seconds) => Duration::try_from_secs_f64(seconds).ok(),
        None => {
            let date = httpdate::parse_http_date(text("retry-after")?).ok()?;
            Some(
                date.duration_since(std::time::SystemTime::now())
                    .unwrap_or_default(),
            )
        }
    }
}

/// An [`ApiError`] from an error reply's status, headers and body.
///
/// OpenAI and compatible servers: `{"error":{"message","type","code"}}`;
/// Anthropic: `{"type":"error","error":{"type","message"},"request_id"}`;
/// Gemini: `{"error":{"code","message","status","details"}}`.
///
/// `cut`: the body was longer than [`MAX_ERROR_BODY`]
/// and only its start was read; the message says so.
pub(crate) fn api_error(
    status: u16,
    url: &str,
    headers: &HeaderMap,
    body: &str,
    cut: bool,
    retries: u32,
) -> ApiError {
    let json = serde_json::from_str::<Value>(body).ok();
    let error = json.as_ref().map(|j| j.get("error").unwrap_or(j));
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let error_type = error.and_then(|e| {
        text(e.get("type"))
            .or_else(|| text(e.get("status")))
            .or_else(|| text(e.get("code")))
    });
    // A code besides the type (OpenAI's `model_not_found`); Gemini's numeric
    // code only repeats the status.
    let code = error
        .and_then(|e| text(e.get("code")))
        .filter(|code| Some(code) != error_type.as_ref() && *code != status.to_string());
    let message = error
        .and_then(|e| match e {
            Value::String(s) => Some(s.clone()),
            _ => text(e.get("message")),
        })
        .unwrap_or_else(|| {
            let body = body.trim();
            if body.is_empty() {
                format!("{status} status code (no body)")
            } else {
                body.chars().take(2000).collect()
            }
        });
    let message = if cut {
        format!(
            "{message} [the error body is over {} KiB; only its start was read]",
            MAX_ERROR_BODY / 1024
        )
    } else {
        message
    };
    let body_request_id = json.as_ref().and_then(|j| text(j.get("request_id")));
    let gemini_delay = error
        .and_then(|e| e.get("details")?.as_array())
        .and_then(|details| {
            details
                .iter()
                .find_map(|d| d.get("retryDelay")?.as_str().map(str::to_owned))
        })
        .and_then(|delay| delay.strip_suffix('s')?.parse::<f64>().ok())
        .and_then(|s| Duration::try_from_secs_f64(s).ok());
    ApiError {
        status,
        error_type,
        code,
        url: super::redact::url(url),
        should_retry: should_retry(headers),
        message,
        request_id: request_id(headers).or(body_request_id),
        retry_after: retry_after(headers).or(gemini_delay),
        retries,
    }
}

/// The most of an error reply's body that is read: a provider's error JSON is
/// a few hundred bytes, and a hostile or broken server's gigabyte is not held
/// (nor read again on each retry).
pub const MAX_ERROR_BODY: usize = 64 * 1024;

/// An HTTP error and its causes, without the URL.
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    // reqwest names the URL in its own message; the causes say what failed.
    if let Some(url) = error.url() {
        text = text.replace(&format!(" ({url})"), "");
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
