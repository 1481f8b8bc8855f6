//! Server-sent events, as the WHATWG spec frames them: lines end in CRLF, LF or
//! CR; a blank line ends an event; `:` starts a comment; `event`, `data`
//! (several lines join with `\n`), `id` and `retry` are the fields. Bytes may
//! arrive in any chunking, a UTF-8 character split across two chunks included.

use memchr::memchr2;

use super::{FrameError, FrameErrorKind, DEFAULT_MAX_EVENT};

/// One event: its index in the stream, name, data and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The 0-based index of the event in the stream (comments and events with
    /// no data are not counted).
    pub index: usize,
    /// The `event` field; empty when the event has none (a `message`).
    pub event: &'a str,
    /// The `data` lines, joined with `\n`.
    pub data: &'a str,
    /// The last `id` seen, if any.
    pub id: Option<&'a str>,
}

impl SseEvent<'_> {
    /// Whether this is the `[DONE]` sentinel that OpenAI-style streams end with.
    pub fn is_done(&self) -> bool {
        self.data.trim() == "[DONE]"
    }
}

/// Frames a byte stream into [`SseEvent`]s.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::providers::SseParser;
/// let mut parser = SseParser::new();
/// let mut seen = Vec::new();
/// for chunk in ["event: a\r\ndata: {\"x\"", ":1}\r\n\r\n: ping\n\ndata: [DONE]\n\n"] {
///     parser.push(chunk.as_bytes(), |e| seen.push((e.event.to_owned(), e.data.to_owned())))?;
/// }
/// parser.finish(|e| seen.push((e.event.to_owned(), e.data.to_owned())))?;
/// assert_eq!(seen, [("a".into(), "{\"x\":1}".into()), ("".into(), "[DONE]".into())]);
/// # Ok::<(), agentmsg::providers::FrameError>(())
/// ```
#[derive(Debug)]
pub struct SseParser {
    /// The bytes of a line not yet ended.
    line: Vec<u8>,
    /// A CR ended the last chunk: a LF opening the next one belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
    events: usize,
    max_event: usize,
    /// Bytes read, for errors.
    offset: u64,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with the default size limit of one event (16 MiB).
    pub fn new() -> Self {
        Self::with_max_event(DEFAULT_MAX_EVENT)
    }

    /// A parser that fails on an event (or a line) longer than `max` bytes.
    pub fn with_max_event(max: usize) -> Self {
        Self {
            line: Vec::new(),
            after_cr: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
            id: None,
            retry: None,
            events: 0,
            max_event: max,
            offset: 0,
        }
    }

    /// The last `retry` field: the reconnection time the server asks for, in
    /// milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// How many events were dispatched.
    pub fn events(&self) -> usize {
        self.events
    }

    /// Reads one chunk, calling `on_event` for each event it completes.
    ///
    /// # Errors
    /// [`FrameError`] naming the event index: a line that is not UTF-8, or an
    /// event over the size limit. The parser should not be used after.
    pub fn push(
        &mut self,
        mut chunk: &[u8],
        mut on_event: impl FnMut(SseEvent<'_>),
    ) -> Result<(), FrameError> {
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
                self.offset += 1;
            }
        }
        while let Some(end) = memchr2(b'\n', b'\r', chunk) {
            let (line, rest) = chunk.split_at(end);
            let mut skip = 1;
            if rest[0] == b'\r' {
                match rest.get(1) {
                    Some(b'\n') => skip = 2,
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            if self.line.is_empty() {
                self.line_done(line, &mut on_event)?;
            } else {
                self.grow(line)?;
                let whole = std::mem::take(&mut self.line);
                let result = self.line_done(&whole, &mut on_event);
                self.line = whole;
                self.line.clear();
                result?;
            }
            self.offset += (end + skip) as u64;
            chunk = &rest[skip.min(rest.len())..];
        }
        if !chunk.is_empty() {
            self.grow(chunk)?;
            self.offset += chunk.len() as u64;
        }
        Ok(())
    }

    /// Ends the stream: a last line without its end, and a last event without
    /// its blank line, are taken as if they were ended (servers often omit the
    /// final blank line).
    ///
    /// # Errors
    /// As [`push`](Self::push).
    pub fn finish(&mut self, mut on_event: impl FnMut(SseEvent<'_>)) -> Result<(), FrameError> {
        if !self.line.is_empty() {
            let whole = std::mem::take(&mut self.line);
            self.line_done(&whole, &mut on_event)?;
        }
        self.dispatch(&mut on_event);
        Ok(())
    }

    fn grow(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        if self.line.len() + bytes.len() > self.max_event {
            return Err(self.too_large());
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn too_large(&self) -> FrameError {
        FrameError {
            event: self.events,
            offset: self.offset,
            kind: FrameErrorKind::TooLarge {
                limit: self.max_event,
            },
        }
    }

    fn line_done(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>),
    ) -> Result<(), FrameError> {
        if line.is_empty() {
            self.dispatch(on_event);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(());
        }
        let line = std::str::from_utf8(line).map_err(|e| FrameError {
            event: self.events,
            offset: self.offset + e.valid_up_to() as u64,
            kind: FrameErrorKind::Utf8,
        })?;
        let (field, value) = match line.find(':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_event {
                    return Err(self.too_large());
                }
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok();
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.has_data {
            on_event(SseEvent {
                index: self.events,
                event: &self.event,
                data: &self.data,
                id: self.id.as_deref(),
            });
            self.events += 1;
        }
        self.event.clear();
        self.data.clear();
        self.has_data = false;
    }
}
