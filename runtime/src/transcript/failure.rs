//! Why a line did not decode: [`UnknownReason`] when it was kept (as
//! [`AgentMessage::Unknown`](crate::AgentMessage::Unknown), or rejected in
//! strict mode), [`DecodeError`] when it could not be. Each can hold the other
//! (a strict rejection says its reason; a kept line that is no transcript line
//! says its error), so they are one module.

use std::fmt;

/// A line could not be decoded (and, in lenient mode, could not be kept either).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The line is not one JSON object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// The object has no `"role"`.
    #[error("the object has no \"role\"")]
    MissingRole,
    /// The `"role"` is not a string.
    #[error("\"role\" is not a string")]
    RoleNotString,
    /// The `"role"` is a string whose escapes are not Unicode text (a lone
    /// surrogate).
    #[error("\"role\" is not valid text: {0}")]
    RoleNotText(String),
    /// Strict mode: the line would have been kept as `Unknown`.
    #[error("kind `{kind}`: {reason}")]
    Rejected {
        /// The `"role"` of the line.
        kind: String,
        /// Why it was not decoded.
        reason: UnknownReason,
    },
}

/// Why a line was kept as [`AgentMessage::Unknown`](crate::AgentMessage::Unknown) (or, in strict mode, rejected).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnknownReason {
    /// No registered type claims the kind.
    UnknownKind,
    /// Two registered types claim the kind.
    AmbiguousKind {
        /// The type registered first.
        first: &'static str,
        /// The type registered second.
        second: &'static str,
    },
    /// The line was written by a newer version of the kind.
    NewerVersion {
        /// The `"v"` of the line.
        found: u32,
        /// The version compiled in.
        supported: u32,
    },
    /// The body does not decode as the kind's type.
    Invalid {
        /// The decoder's error, with the line's column.
        error: String,
    },
    /// Migrating an older version failed.
    Migration {
        /// The stored version.
        from: u32,
        /// The migration's error.
        error: String,
    },
    /// The line is not a transcript line at all: not one JSON object, no
    /// `"role"`, a `"role"` that is not a string, a fragment cut off by a crash.
    /// The transcript reader keeps it (lenient) so that nothing is lost.
    Malformed(Box<DecodeError>),
    /// The line is not UTF-8.
    /// [`UnknownMessage::raw_bytes`](super::UnknownMessage::raw_bytes) holds
    /// its exact bytes; [`UnknownMessage::raw`](super::UnknownMessage::raw) a
    /// lossy text of them.
    NotUtf8 {
        /// How many bytes from the start of the line are valid UTF-8.
        valid_up_to: usize,
    },
}

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownKind => f.write_str("no registered type claims this kind"),
            Self::AmbiguousKind { first, second } => {
                write!(f, "the kind is claimed by both `{first}` and `{second}`")
            }
            Self::NewerVersion { found, supported } => write!(
                f,
                "written by version {found} of the kind; this build reads up to version {supported}"
            ),
            Self::Invalid { error } => write!(f, "the body does not decode: {error}"),
            Self::Migration { from, error } => {
                write!(f, "migration from version {from} failed: {error}")
            }
            Self::Malformed(error) => write!(f, "not a transcript line: {error}"),
            Self::NotUtf8 { valid_up_to } => {
                write!(f, "not UTF-8 (invalid byte at column {})", valid_up_to + 1)
            }
        }
    }
}
