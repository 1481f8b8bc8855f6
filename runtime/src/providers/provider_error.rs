//! [`ProviderError`]: an error the provider reported inside a stream that
//! began with success.

/// An error the provider reported inside a streamed reply (Anthropic's
/// `event: error`, Responses' `response.failed` or `error`, a Chat chunk
/// with `error`, a Gemini chunk with `error`): its type, code, message and
/// request id, as the stream decoder read them
/// ([`StreamReader::provider_error`](super::StreamReader::provider_error)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProviderError {
    /// The provider's error type (`overloaded_error`, `server_error`,
    /// `UNAVAILABLE`…).
    pub error_type: Option<String>,
    /// The provider's error code, when it has one besides the type
    /// (`rate_limit_exceeded`, `500`…).
    pub code: Option<String>,
    /// What it said.
    pub message: String,
    /// The request id the event carried, if any.
    pub request_id: Option<String>,
}

impl ProviderError {
    /// Whether the error is worth another try by what its type or code says:
    /// an overloaded or unavailable server, a rate limit, the server's own
    /// error. The official SDKs retry the same statuses.
    pub fn is_retryable(&self) -> bool {
        let retryable = |label: &str| {
            let label = label.to_ascii_lowercase();
            [
                "overloaded",
                "rate_limit",
                "server_error",
                "api_error",
                "internal",
                "unavailable",
                "resource_exhausted",
                "timeout",
                "deadline_exceeded",
            ]
            .iter()
            .any(|word| label.contains(word))
                || label.parse().is_ok_and(retryable_status)
        };
        self.error_type.as_deref().is_some_and(retryable)
            || self.code.as_deref().is_some_and(retryable)
    }
}

/// The statuses worth another try: a timeout, a conflict, too many requests,
/// the server's errors, Anthropic's overloaded (the HTTP client's
/// `Retry` policy, and a stream error's code).
pub(crate) fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=504 | 529)
}

#[cfg(test)]
mod tests {
    use super::ProviderError;

    fn with(error_type: Option<&str>, code: Option<&str>) -> ProviderError {
        ProviderError {
            error_type: error_type.map(str::to_owned),
            code: code.map(str::to_owned),
            ..ProviderError::default()
        }
    }

    #[test]
    fn a_code_that_is_a_status_is_retryable_as_the_client_retries_it() {
        for status in [
            "408", "409", "429", "500", "501", "502", "503", "504", "529",
        ] {
            assert!(with(None, Some(status)).is_retryable(), "{status}");
        }
        for status in ["400", "401", "403", "404", "422"] {
            assert!(!with(None, Some(status)).is_retryable(), "{status}");
        }
        assert!(with(Some("overloaded_error"), None).is_retryable());
        assert!(with(None, Some("rate_limit_exceeded")).is_retryable());
        assert!(!with(Some("invalid_request_error"), Some("invalid_prompt")).is_retryable());
    }
}
