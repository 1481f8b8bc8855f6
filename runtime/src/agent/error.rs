//! [`AgentError`]: why a run failed, what the loop and its compactors return.

use crate::http::ClientError;
use crate::session::SessionError;

/// Why a run failed. What was appended before stays appended.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// The model's request failed, or its reply broke off (the part that
    /// came is appended, with stop reason `error`).
    #[error("the model failed: {0}")]
    Model(#[from] ClientError),
    /// The session could not be read or appended to.
    #[error("the session failed: {0}")]
    Session(Box<dyn std::error::Error + Send + Sync>),
}

impl From<SessionError> for AgentError {
    fn from(error: SessionError) -> Self {
        Self::Session(Box::new(error))
    }
}
