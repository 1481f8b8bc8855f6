//! How streamed bytes become the events a stream decoder reads: server-sent
//! events ([`SseParser`]; OpenAI, Anthropic, Gemini with `alt=sse`) and a
//! streamed JSON array ([`JsonArrayParser`]; Gemini without it).

mod json_array;
mod sse;

pub use json_array::JsonArrayParser;
pub use sse::{SseEvent, SseParser};

/// The default size limit of one event: 16 MiB.
pub const DEFAULT_MAX_EVENT: usize = 16 << 20;

/// Bytes that cannot be framed into events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {event} (byte {offset}): {kind}")]
pub struct FrameError {
    /// The 0-based index of the event being read.
    pub event: usize,
    /// The byte offset in the stream.
    pub offset: u64,
    /// What is wrong.
    pub kind: FrameErrorKind,
}

/// What is wrong with a stream's framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameErrorKind {
    /// The event is longer than the limit.
    #[error("longer than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A line or element is not UTF-8.
    #[error("not UTF-8")]
    Utf8,
    /// A byte the framing does not allow there.
    #[error("found {}, expected {expected}", describe(*.found))]
    Syntax {
        /// The byte.
        found: u8,
        /// What could have come.
        expected: &'static str,
    },
    /// The stream ended inside its framing.
    #[error("the stream ended before its end")]
    Truncated,
}

fn describe(byte: u8) -> String {
    if byte.is_ascii_graphic() {
        format!("`{}`", byte as char)
    } else {
        format!("byte 0x{byte:02x}")
    }
}
