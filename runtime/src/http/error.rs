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
    #[error("{} {}{}: {}", .0.status, .0.error_type.as_deref().unwrap_or("error"), retried(.0.retries), .0.message)]
    Api(Box<ApiError>),
    /// No answer: the connection failed or timed out, each retry included.
    #[error("request failed{}: {message}", retried(*.retries))]
    Connect {
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
    /// The reply could not be decoded (not the API's format, malformed
    /// server-sent events, an event over the size limit, a stream that
    /// ended early).
    #[error("cannot decode the reply: {source}")]
    Decode {
        /// What is wrong, with the event index.
        source: StreamError,
        /// The message as far as it was read (empty for a body).
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
            Self::Api(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the provider said the prompt does not fit the model's context
    /// window: the same rule as [`AssistantMessage::is_context_overflow`],
    /// applied to the error's message (or to a message that ended in such an
    /// error, for a reply that broke off).
    pub fn is_context_overflow(&self) -> bool {
        match self {
            Self::Api(e) => context_overflow_source(&e.message).is_some(),
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
            Self::Api(e) => e.request_id.as_deref(),
            Self::Transport { request_id, .. } | Self::Decode { request_id, .. } => {
                request_id.as_deref()
            }
            _ => None,
        }
    }

    /// The message as far as it was read, for a reply that broke off.
    pub fn partial(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Transport { partial, .. } | Self::Decode { partial, .. } => Some(partial),
            _ => None,
        }
    }

    /// The 0-based index of the stream event the error happened at.
    pub fn event(&self) -> Option<usize> {
        match self {
            Self::Transport { event, .. } => Some(*event),
            Self::Decode { source, .. } => source.event(),
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

/// The statuses worth another try: a timeout, a conflict, too many requests,
/// the server's errors, Anthropic's overloaded.
pub(crate) fn retryable(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=504 | 529)
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
/// `retry-after` in seconds.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    let seconds = value("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| value("retry-after"))?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// An [`ApiError`] from an error reply's status, headers and body.
///
/// OpenAI and compatible servers: `{"error":{"message","type","code"}}`;
/// Anthropic: `{"type":"error","error":{"type","message"},"request_id"}`;
/// Gemini: `{"error":{"code","message","status","details"}}`.
pub(crate) fn api_error(status: u16, headers: &HeaderMap, body: &str, retries: u32) -> ApiError {
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
        message,
        request_id: request_id(headers).or(body_request_id),
        retry_after: retry_after(headers).or(gemini_delay),
        retries,
    }
}
