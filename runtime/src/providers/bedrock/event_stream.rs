//! AWS's binary event stream (`application/vnd.amazon.eventstream`), the
//! framing of ConverseStream: each frame is a prelude (total and header
//! lengths, their CRC-32), typed headers, a payload and the frame's CRC-32.
//! The frames are read by `aws-smithy-eventstream` (which checks both CRCs);
//! this turns them into the JSON events [`StreamDecoder`](super::StreamDecoder)
//! reads, as [`SseParser`](crate::providers::SseParser) does for SSE.

use aws_smithy_eventstream::frame::{DecodedFrame, MessageFrameDecoder};
use aws_smithy_types::event_stream::{HeaderValue, Message};
use bytes::BytesMut;
use serde_json::Value;

use crate::providers::DEFAULT_MAX_EVENT;

/// The length of a frame's prelude: total length, headers length, their CRC.
const PRELUDE: usize = 12;

/// A frame that cannot be read: its index and where it starts in the stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event-stream frame {frame} (byte {offset}): {message}")]
pub struct EventStreamError {
    /// The 0-based index of the frame.
    pub frame: usize,
    /// The byte offset of the frame's start.
    pub offset: u64,
    /// What is wrong (a CRC that does not match names both values).
    pub message: String,
}

/// An exception the service sent in the stream instead of an event
/// (`:message-type` `exception` or `error`): `modelStreamErrorException`,
/// `throttlingException`, `validationException`, `internalServerException`,
/// `serviceUnavailableException`…
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exception {
    /// The exception's type (`:exception-type`, or an error's `:error-code`).
    pub kind: String,
    /// Its `message` (or an error's `:error-message`).
    pub message: String,
    /// The payload's JSON as sent (`{}` for an error frame without one).
    pub payload: String,
}

/// One frame of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame {
    /// An event: its `:event-type` (`messageStart`, `contentBlockDelta`…)
    /// and its JSON payload.
    Event {
        /// The event's type.
        kind: String,
        /// The JSON payload.
        payload: String,
    },
    /// An exception.
    Exception(Exception),
}

impl Frame {
    /// The frame as the JSON event [`StreamDecoder`](super::StreamDecoder)
    /// reads: `{"<type>": payload}`.
    pub fn to_event_json(&self) -> String {
        let (kind, payload) = match self {
            Frame::Event { kind, payload } => (kind, payload.as_str()),
            Frame::Exception(e) => (&e.kind, e.payload.as_str()),
        };
        let key = Value::String(kind.clone()).to_string();
        let payload = if payload.trim().is_empty() {
            "{}"
        } else {
            payload
        };
        format!("{{{key}:{payload}}}")
    }
}

/// Frames the bytes of an AWS event stream, in any chunking, into
/// [`Frame`]s.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::bedrock::{EventStreamParser, Frame};
/// use base64::Engine as _;
/// // A recorded `modelStreamErrorException` frame.
/// let bytes = base64::engine::general_purpose::STANDARD.decode(
///     "AAAA3QAAAGfHkZB6DTptZXNzYWdlLXR5cGUHAAlleGNlcHRpb24POmV4Y2VwdGlvbi10eXBlBwAZbW9kZWxTdHJlYW1FcnJvckV4Y2VwdGlvbg06Y29udGVudC10eXBlBwAQYXBwbGljYXRpb24vanNvbnsibWVzc2FnZSI6Ik1vZGVsIFN0cmVhbSBFcnJvciIsIm9yaWdpbmFsU3RhdHVzQ29kZSI6NTAwLCJvcmlnaW5hbE1lc3NhZ2UiOiJUaGUgbW9kZWwgc3RyZWFtIGZhaWxlZC4ifVczQxM=",
/// )?;
/// let mut parser = EventStreamParser::new();
/// let mut frames = Vec::new();
/// for chunk in bytes.chunks(5) {
///     parser.push(chunk, |frame| frames.push(frame))?;
/// }
/// parser.finish()?;
/// let [Frame::Exception(exception)] = &frames[..] else { panic!("{frames:?}") };
/// assert_eq!(exception.kind, "modelStreamErrorException");
/// assert_eq!(exception.message, "Model Stream Error");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct EventStreamParser {
    decoder: MessageFrameDecoder,
    buffer: BytesMut,
    /// Whether the next bytes start a frame (its prelude not read yet).
    at_start: bool,
    frames: usize,
    /// The offset of the current frame's start.
    offset: u64,
    /// How many bytes were pushed.
    pushed: u64,
    max_frame: usize,
}

impl Default for EventStreamParser {
    fn default() -> Self {
        Self::new()
    }
}

impl EventStreamParser {
    /// A parser with the default size limit of one frame (16 MiB, which is
    /// also the format's own limit).
    pub fn new() -> Self {
        Self::with_max_frame(DEFAULT_MAX_EVENT)
    }

    /// A parser that fails on a frame longer than `max` bytes, before
    /// buffering it.
    pub fn with_max_frame(max: usize) -> Self {
        Self {
            decoder: MessageFrameDecoder::new(),
            buffer: BytesMut::new(),
            at_start: true,
            frames: 0,
            offset: 0,
            pushed: 0,
            max_frame: max,
        }
    }

    /// How many frames were read.
    pub fn frames(&self) -> usize {
        self.frames
    }

    fn error(&self, message: impl Into<String>) -> EventStreamError {
        EventStreamError {
            frame: self.frames,
            offset: self.offset,
            message: message.into(),
        }
    }

    /// Reads one chunk, calling `on_frame` for each frame it completes.
    ///
    /// # Errors
    /// [`EventStreamError`] naming the frame: a CRC that does not match, a
    /// frame over the size limit, headers that do not parse, an event whose
    /// payload is not UTF-8. The parser should not be used after.
    pub fn push(
        &mut self,
        chunk: &[u8],
        mut on_frame: impl FnMut(Frame),
    ) -> Result<(), EventStreamError> {
        self.buffer.extend_from_slice(chunk);
        self.pushed += chunk.len() as u64;
        loop {
            if self.at_start {
                if self.buffer.len() < PRELUDE {
                    return Ok(());
                }
                let total = u32::from_be_bytes([
                    self.buffer[0],
                    self.buffer[1],
                    self.buffer[2],
                    self.buffer[3],
                ]) as usize;
                if total > self.max_frame {
                    return Err(self.error(format!(
                        "{total} bytes long, more than the limit of {}",
                        self.max_frame
                    )));
                }
                self.at_start = false;
            }
            let decoded = self
                .decoder
                .decode_frame(&mut self.buffer)
                .map_err(|e| self.error(e.to_string()))?;
            match decoded {
                DecodedFrame::Incomplete => return Ok(()),
                DecodedFrame::Complete(message) => {
                    let frame = self.frame(&message)?;
                    // The next frame starts where the unread bytes do.
                    self.offset = self.pushed - self.buffer.len() as u64;
                    self.frames += 1;
                    self.at_start = true;
                    on_frame(frame);
                }
            }
        }
    }

    /// Ends the stream.
    ///
    /// # Errors
    /// [`EventStreamError`] when it ended inside a frame.
    pub fn finish(&mut self) -> Result<(), EventStreamError> {
        if !self.at_start || !self.buffer.is_empty() {
            return Err(self.error("the stream ended inside the frame"));
        }
        Ok(())
    }

    fn frame(&self, message: &Message) -> Result<Frame, EventStreamError> {
        let header = |name: &str| {
            message
                .headers()
                .iter()
                .find(|h| h.name().as_str() == name)
                .and_then(|h| match h.value() {
                    HeaderValue::String(s) => Some(s.as_str().to_owned()),
                    _ => None,
                })
        };
        let payload = std::str::from_utf8(message.payload())
            .map_err(|e| self.error(format!("the payload is not UTF-8: {e}")))?
            .to_owned();
        let message_type = header(":message-type").unwrap_or_else(|| "event".to_owned());
        match message_type.as_str() {
            "event" => {
                let kind = header(":event-type")
                    .ok_or_else(|| self.error("an event frame without `:event-type`"))?;
                Ok(Frame::Event { kind, payload })
            }
            "exception" => {
                let kind = header(":exception-type")
                    .ok_or_else(|| self.error("an exception frame without `:exception-type`"))?;
                let message = serde_json::from_str::<Value>(&payload)
                    .ok()
                    .and_then(|v| {
                        v.get("message")
                            .or_else(|| v.get("Message"))
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                Ok(Frame::Exception(Exception {
                    kind,
                    message,
                    payload,
                }))
            }
            "error" => {
                let kind = header(":error-code").unwrap_or_else(|| "error".to_owned());
                let message = header(":error-message").unwrap_or_default();
                let payload = serde_json::json!({ "message": message }).to_string();
                Ok(Frame::Exception(Exception {
                    kind,
                    message,
                    payload,
                }))
            }
            other => Err(self.error(format!("an unknown `:message-type` `{other}`"))),
        }
    }
}
