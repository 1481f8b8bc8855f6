//! [`StreamReader`]: streamed bytes in, [`StreamEvent`]s out, in one step and
//! without callbacks, for any [`Api`] chosen at run time.

use std::collections::VecDeque;

use super::api::Api;
use super::dispatch::AnyStreamDecoder;
use super::framing::{FrameError, SseParser, DEFAULT_MAX_EVENT};
use super::{ResponseError, StreamDecode, StreamEvent};
use crate::AssistantMessage;

/// Why a stream could not be read: its framing, or an event in it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StreamError {
    /// The bytes are not server-sent events (not UTF-8, an event over the
    /// size limit…).
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// An event the API's decoder cannot read, or a stream that ended early.
    #[error(transparent)]
    Response(#[from] ResponseError),
    /// Bytes that are not AWS event-stream frames (a CRC that does not
    /// match…), for Bedrock.
    #[cfg(feature = "bedrock")]
    #[error(transparent)]
    EventStream(#[from] super::bedrock::EventStreamError),
}

impl StreamError {
    /// The 0-based index of the event it happened at (for a stream that ended
    /// early, how many events were read).
    pub fn event(&self) -> Option<usize> {
        match self {
            Self::Frame(e) => Some(e.event),
            Self::Response(
                ResponseError::Json { event, .. } | ResponseError::Invalid { event, .. },
            ) => *event,
            Self::Response(ResponseError::Truncated { events, .. }) => Some(*events),
            #[cfg(feature = "bedrock")]
            Self::EventStream(e) => Some(e.frame),
        }
    }
}

/// Frames server-sent events (for Bedrock, AWS event-stream frames) and
/// decodes them with one API's stream decoder:
/// bytes in any chunking go in, events come out as an iterator, so `?` works.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::{Api, StreamEvent, StreamReader};
/// let mut reader = StreamReader::new(Api::Anthropic);
/// let bytes = concat!(
///     "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
///     "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
///     "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi!\"}}\n\n",
///     "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
///     "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n",
///     "data: {\"type\":\"message_stop\"}\n\n",
/// );
/// let mut text = String::new();
/// for chunk in bytes.as_bytes().chunks(7) {
///     for event in reader.feed(chunk) {
///         if let StreamEvent::TextDelta { delta, .. } = event? {
///             text.push_str(&delta);
///         }
///     }
/// }
/// let (message, _warnings) = reader.finish()?;
/// assert_eq!(text, "Hi!");
/// assert_eq!(message.text_content(), "Hi!");
/// # Ok::<(), agentmsg::providers::StreamError>(())
/// ```
///
/// After an error the reader yields nothing more, and
/// [`finish`](Self::finish) fails; [`partial`](Self::partial) still gives the
/// message as far as it was read.
#[derive(Debug)]
pub struct StreamReader {
    sse: SseParser,
    /// Bedrock's AWS event stream, read in place of server-sent events.
    #[cfg(feature = "bedrock")]
    event_stream: Option<super::bedrock::EventStreamParser>,
    decoder: AnyStreamDecoder,
    ready: VecDeque<Result<StreamEvent, StreamError>>,
    failed: bool,
}

impl StreamReader {
    /// A reader of `api`'s stream, with the default size limit of one event
    /// ([`DEFAULT_MAX_EVENT`]).
    pub fn new(api: Api) -> Self {
        Self::with_max_event(api, DEFAULT_MAX_EVENT)
    }

    /// A reader that fails on an event longer than `max` bytes.
    pub fn with_max_event(api: Api, max: usize) -> Self {
        Self {
            sse: SseParser::with_max_event(max),
            #[cfg(feature = "bedrock")]
            event_stream: (api == Api::Bedrock)
                .then(|| super::bedrock::EventStreamParser::with_max_frame(max)),
            decoder: api.stream_decoder(),
            ready: VecDeque::new(),
            failed: false,
        }
    }

    /// The API it reads.
    pub fn api(&self) -> Api {
        self.decoder.api()
    }

    /// How many server-sent events were read.
    pub fn events(&self) -> usize {
        #[cfg(feature = "bedrock")]
        if let Some(parser) = &self.event_stream {
            return parser.frames();
        }
        self.sse.events()
    }

    /// Whether an error was met (and given out).
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Reads one chunk of bytes and gives the events it completed. Events the
    /// iterator is dropped before giving are dropped too.
    pub fn feed(&mut self, bytes: &[u8]) -> Events<'_> {
        #[cfg(feature = "bedrock")]
        if let (Some(parser), false) = (&mut self.event_stream, self.failed) {
            let (decoder, ready, failed) = (&mut self.decoder, &mut self.ready, &mut self.failed);
            let framed = parser.push(bytes, |frame| {
                decode_json(decoder, ready, failed, &frame.to_event_json());
            });
            if let Err(e) = framed {
                self.fail(e.into());
            }
            return Events {
                inner: self.ready.drain(..),
            };
        }
        if !self.failed {
            let (decoder, ready, failed) = (&mut self.decoder, &mut self.ready, &mut self.failed);
            let framed = self
                .sse
                .push(bytes, |event| decode(decoder, ready, failed, event));
            if let Err(e) = framed {
                self.fail(e.into());
            }
        }
        Events {
            inner: self.ready.drain(..),
        }
    }

    /// Ends the bytes: a last event without its closing blank line is read as
    /// if it had one. Call it before [`finish`](Self::finish) to see that
    /// event's [`StreamEvent`]s; `finish` calls it too.
    pub fn end(&mut self) -> Events<'_> {
        #[cfg(feature = "bedrock")]
        if let (Some(parser), false) = (&mut self.event_stream, self.failed) {
            if let Err(e) = parser.finish() {
                self.fail(e.into());
            }
            return Events {
                inner: self.ready.drain(..),
            };
        }
        if !self.failed {
            let (decoder, ready, failed) = (&mut self.decoder, &mut self.ready, &mut self.failed);
            let framed = self
                .sse
                .finish(|event| decode(decoder, ready, failed, event));
            if let Err(e) = framed {
                self.fail(e.into());
            }
        }
        Events {
            inner: self.ready.drain(..),
        }
    }

    fn fail(&mut self, error: StreamError) {
        self.failed = true;
        self.ready.push_back(Err(error));
    }

    /// The message so far (a streaming tool call's arguments parsed as far as
    /// they go).
    pub fn partial(&self) -> AssistantMessage {
        self.decoder.partial()
    }

    /// The error the provider reported in the stream, once one came.
    pub fn provider_error(&self) -> Option<&super::ProviderError> {
        self.decoder.provider_error()
    }

    /// Why [`finish`](Self::finish) would fail now, once [`end`](Self::end)
    /// has been read (an event could not be read, or the stream stopped
    /// before its end), told without consuming the reader: take the
    /// [`partial`](Self::partial) message then, and only then, since it
    /// copies every text so far.
    pub fn unfinished(&self) -> Option<StreamError> {
        self.decoder.unfinished().map(StreamError::from)
    }

    /// The message, with what the decoder skipped or kept in a changed form.
    ///
    /// # Errors
    /// The first error met, or [`ResponseError::Truncated`] for a stream that
    /// stopped before its end.
    pub fn finish(mut self) -> Result<(AssistantMessage, Vec<ResponseError>), StreamError> {
        let mut first = None;
        for event in self.end() {
            if let Err(e) = event {
                first.get_or_insert(e);
            }
        }
        if let Some(e) = first {
            return Err(e);
        }
        Ok(self.decoder.finish_with_warnings()?)
    }
}

fn decode(
    decoder: &mut AnyStreamDecoder,
    ready: &mut VecDeque<Result<StreamEvent, StreamError>>,
    failed: &mut bool,
    event: super::SseEvent<'_>,
) {
    if *failed {
        return;
    }
    // `[DONE]` ends Chat streams; compatible servers send it after other APIs'
    // streams too, where it tells nothing.
    #[cfg(feature = "openai-chat")]
    let chat = matches!(decoder, AnyStreamDecoder::OpenaiChat(_));
    #[cfg(not(feature = "openai-chat"))]
    let chat = false;
    if event.is_done() && !chat {
        return;
    }
    decode_json(decoder, ready, failed, event.data);
}

/// Decodes one event's JSON.
fn decode_json(
    decoder: &mut AnyStreamDecoder,
    ready: &mut VecDeque<Result<StreamEvent, StreamError>>,
    failed: &mut bool,
    json: &str,
) {
    if *failed {
        return;
    }
    match decoder.push(json) {
        Ok(events) => ready.extend(events.into_iter().map(Ok)),
        Err(e) => {
            *failed = true;
            ready.push_back(Err(e.into()));
        }
    }
}

/// The events one chunk completed: an iterator of `Result<StreamEvent,
/// StreamError>` ([`StreamReader::feed`]).
#[derive(Debug)]
pub struct Events<'a> {
    inner: std::collections::vec_deque::Drain<'a, Result<StreamEvent, StreamError>>,
}

impl Iterator for Events<'_> {
    type Item = Result<StreamEvent, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl ExactSizeIterator for Events<'_> {}
