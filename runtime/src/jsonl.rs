//! Transcript files: a streaming JSON Lines reader and an appending writer.
//!
//! One message object per line, UTF-8, `\n` between lines:
//!
//! ```json
//! {"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292}
//! {"role":"notice","text":"session resumed"}
//! ```
//!
//! The reader also accepts a JSON array of the same objects. Lines it cannot
//! decode into their type are kept as [`AgentMessage::Unknown`] with their exact
//! bytes (lenient, the default) or reported with their line number (strict); a
//! last line cut off by a crash is reported as [`ReadError::TornLastLine`] after
//! every line before it.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::de::IgnoredAny;

use crate::envelope::{decode_line, AgentMessage, DecodeError, DecodeMode};
use crate::registry::Registry;

/// A transcript could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A line could not be decoded (or, in strict mode, was not decoded into its
    /// type).
    #[error("line {line}: {source}")]
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        #[source]
        source: DecodeError,
    },
    /// An element of a transcript in JSON-array form could not be decoded.
    #[error("element {index} of the JSON array: {source}")]
    Element {
        /// The element's index, from 0.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: DecodeError,
    },
    /// The last line has no newline and is cut off mid-object: a crash during a
    /// write. Every line before it was read.
    #[error("line {line}: torn last line ({bytes} bytes cut off mid-object, no newline); every line before it was read")]
    TornLastLine {
        /// The line number, from 1.
        line: usize,
        /// How many bytes the torn line has.
        bytes: usize,
    },
    /// A line is not UTF-8.
    #[error("line {line}: not UTF-8: {source}")]
    NotUtf8 {
        /// The line number, from 1.
        line: usize,
        /// Where the bytes stop being UTF-8.
        #[source]
        source: std::str::Utf8Error,
    },
    /// A transcript in JSON-array form does not parse as an array.
    #[error("the transcript starts with `[` but is not a JSON array of objects: {0}")]
    Array(#[source] serde_json::Error),
    /// The input failed.
    #[error("reading line {line}: {source}")]
    Io {
        /// The line being read, from 1.
        line: usize,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

enum State {
    Start,
    Lines,
    Array(std::iter::Enumerate<std::vec::IntoIter<Box<serde_json::value::RawValue>>>),
    Done,
}

/// Reads a transcript from any [`BufRead`], one message at a time.
///
/// ```
/// # use agentmsg_runtime::{JsonlReader, AgentMessage};
/// let text = "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"someday\",\"x\":1}\n";
/// let messages: Vec<AgentMessage> = JsonlReader::new(text.as_bytes())
///     .collect::<Result<_, _>>()
///     .unwrap();
/// assert!(messages[0].is_llm());
/// assert_eq!(messages[1].as_unknown().unwrap().raw(), "{\"role\":\"someday\",\"x\":1}");
/// ```
pub struct JsonlReader<'r, R> {
    input: R,
    registry: &'r Registry,
    mode: DecodeMode,
    line: usize,
    buf: Vec<u8>,
    state: State,
}

impl<R: BufRead> JsonlReader<'static, R> {
    /// A lenient reader decoding through the global registry.
    pub fn new(input: R) -> Self {
        Self {
            input,
            registry: Registry::global(),
            mode: DecodeMode::Lenient,
            line: 0,
            buf: Vec::with_capacity(1024),
            state: State::Start,
        }
    }
}

impl<'r, R: BufRead> JsonlReader<'r, R> {
    /// The same reader in `mode`.
    #[must_use]
    pub fn mode(mut self, mode: DecodeMode) -> Self {
        self.mode = mode;
        self
    }

    /// The same reader in strict mode: every line that would be kept as
    /// `Unknown` is an error naming its line.
    #[must_use]
    pub fn strict(self) -> Self {
        self.mode(DecodeMode::Strict)
    }

    /// The same reader decoding custom kinds through `registry`.
    pub fn with_registry<'a>(self, registry: &'a Registry) -> JsonlReader<'a, R> {
        JsonlReader {
            input: self.input,
            registry,
            mode: self.mode,
            line: self.line,
            buf: self.buf,
            state: self.state,
        }
    }

    /// The number of the last line read (from 1; 0 before the first).
    pub fn line(&self) -> usize {
        self.line
    }

    /// Reads every message. The first error other than a torn last line is
    /// returned; a torn last line is reported in [`Transcript::torn`] with every
    /// message before it.
    pub fn read_all(self) -> Result<Transcript, ReadError> {
        let mut transcript = Transcript::default();
        for item in self {
            match item {
                Ok(message) => transcript.messages.push(message),
                Err(ReadError::TornLastLine { line, bytes }) => {
                    transcript.torn = Some(TornLine { line, bytes });
                }
                Err(error) => return Err(error),
            }
        }
        Ok(transcript)
    }

    fn start(&mut self) -> Result<(), ReadError> {
        // The first non-blank byte of the first chunk tells JSON Lines from an
        // array; nothing is consumed, so line numbers and bytes stay exact.
        let first = self
            .input
            .fill_buf()
            .map_err(|source| ReadError::Io { line: 1, source })?
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .copied();
        if first != Some(b'[') {
            self.state = State::Lines;
            return Ok(());
        }
        let mut text = String::new();
        self.input
            .read_to_string(&mut text)
            .map_err(|source| ReadError::Io {
                line: self.line + 1,
                source,
            })?;
        let elements: Vec<Box<serde_json::value::RawValue>> =
            serde_json::from_str(&text).map_err(ReadError::Array)?;
        self.state = State::Array(elements.into_iter().enumerate());
        Ok(())
    }

    fn next_line(&mut self) -> Option<Result<AgentMessage, ReadError>> {
        loop {
            self.buf.clear();
            let read = match self.input.read_until(b'\n', &mut self.buf) {
                Ok(read) => read,
                Err(source) => {
                    self.state = State::Done;
                    return Some(Err(ReadError::Io {
                        line: self.line + 1,
                        source,
                    }));
                }
            };
            if read == 0 {
                self.state = State::Done;
                return None;
            }
            self.line += 1;
            let terminated = self.buf.last() == Some(&b'\n');
            if terminated {
                self.buf.pop();
            }
            let line = match std::str::from_utf8(&self.buf) {
                Ok(line) => line,
                Err(source) => {
                    return Some(Err(ReadError::NotUtf8 {
                        line: self.line,
                        source,
                    }))
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            if !terminated {
                if let Err(error) = serde_json::from_str::<IgnoredAny>(line) {
                    if error.is_eof() {
                        return Some(Err(ReadError::TornLastLine {
                            line: self.line,
                            bytes: self.buf.len(),
                        }));
                    }
                }
            }
            return Some(
                decode_line(line, self.registry, self.mode).map_err(|source| ReadError::Line {
                    line: self.line,
                    source,
                }),
            );
        }
    }
}

impl<R: BufRead> Iterator for JsonlReader<'_, R> {
    type Item = Result<AgentMessage, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match &mut self.state {
                State::Start => {
                    if let Err(error) = self.start() {
                        self.state = State::Done;
                        return Some(Err(error));
                    }
                }
                State::Lines => return self.next_line(),
                State::Array(elements) => {
                    let (index, raw) = elements.next()?;
                    return Some(
                        decode_line(raw.get(), self.registry, self.mode)
                            .map_err(|source| ReadError::Element { index, source }),
                    );
                }
                State::Done => return None,
            }
        }
    }
}

/// Every message of a transcript, and the torn last line if there was one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Transcript {
    /// The messages, in order.
    pub messages: Vec<AgentMessage>,
    /// The last line, when a crash cut it off.
    pub torn: Option<TornLine>,
}

/// A last line cut off mid-object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornLine {
    /// The line number, from 1.
    pub line: usize,
    /// How many bytes it has.
    pub bytes: usize,
}

/// Reads a whole transcript (JSON Lines or a JSON array) leniently through the
/// global registry. See [`JsonlReader::read_all`].
pub fn read_transcript<R: BufRead>(input: R) -> Result<Transcript, ReadError> {
    JsonlReader::new(input).read_all()
}

/// A message could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The message does not encode (its `Serialize` is not a struct or map, or
    /// failed).
    #[error("message {index} (kind `{kind}`) does not encode: {source}")]
    Encode {
        /// The message's index among those written by this writer, from 0.
        index: usize,
        /// Its kind.
        kind: String,
        /// The encoder's error.
        #[source]
        source: serde_json::Error,
    },
    /// The output failed.
    #[error("writing the transcript: {0}")]
    Io(#[from] io::Error),
}

/// Writes a transcript as JSON Lines, one whole line per message. Output is
/// buffered: call [`flush`](Self::flush) to hand it to the OS (and, with
/// [`fsync`](JsonlWriter::fsync) on, to the disk).
///
/// ```
/// # use agentmsg_runtime::{JsonlWriter, AgentMessage, Message};
/// let mut writer = JsonlWriter::new(Vec::new());
/// writer.write(&AgentMessage::from(Message::user("hi"))).unwrap();
/// let bytes = writer.into_inner().unwrap();
/// assert!(bytes.ends_with(b"}\n"));
/// ```
pub struct JsonlWriter<W: Write> {
    out: BufWriter<W>,
    line: Vec<u8>,
    sync: Option<fn(&mut W) -> io::Result<()>>,
    written: usize,
}

impl<W: Write> JsonlWriter<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            out: BufWriter::new(inner),
            line: Vec::with_capacity(1024),
            sync: None,
            written: 0,
        }
    }

    /// Writes one message as one line. A kept `Unknown` line is written byte for
    /// byte (a multi-line array element has its newlines, which are whitespace
    /// there, removed).
    pub fn write(&mut self, message: &AgentMessage) -> Result<(), WriteError> {
        self.line.clear();
        let encoded = match message {
            AgentMessage::Unknown(unknown) if unknown.raw().contains('\n') => {
                self.line
                    .extend(unknown.raw().bytes().filter(|b| *b != b'\n'));
                Ok(())
            }
            _ => message.write_line(&mut self.line),
        };
        encoded.map_err(|source| WriteError::Encode {
            index: self.written,
            kind: message.kind().to_owned(),
            source,
        })?;
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.written += 1;
        Ok(())
    }

    /// Writes every message, in order.
    pub fn write_all<'a, I>(&mut self, messages: I) -> Result<(), WriteError>
    where
        I: IntoIterator<Item = &'a AgentMessage>,
    {
        messages.into_iter().try_for_each(|m| self.write(m))
    }

    /// Hands everything written so far to the output (and syncs it to disk when
    /// [`fsync`](JsonlWriter::fsync) is on).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        if let Some(sync) = self.sync {
            sync(self.out.get_mut())?;
        }
        Ok(())
    }

    /// How many messages this writer wrote.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Flushes and gives the output back.
    pub fn into_inner(mut self) -> Result<W, WriteError> {
        self.flush()?;
        self.out
            .into_inner()
            .map_err(|e| WriteError::Io(e.into_error()))
    }
}

impl JsonlWriter<File> {
    /// Opens `path` for appending (creating it if needed). When the file ends
    /// in a torn line (no final newline), a newline is written first, so the torn
    /// line stays the only damaged one.
    pub fn append(path: impl AsRef<Path>) -> io::Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let len = file.seek(SeekFrom::End(0))?;
        if len > 0 {
            file.seek(SeekFrom::End(-1))?;
            let mut last = [0u8; 1];
            file.read_exact(&mut last)?;
            if last != *b"\n" {
                file.write_all(b"\n")?;
            }
        }
        Ok(Self::new(file))
    }

    /// With `on`, every [`flush`](Self::flush) also syncs the file's data to disk
    /// (`File::sync_data`).
    #[must_use]
    pub fn fsync(mut self, on: bool) -> Self {
        self.sync = if on {
            Some(|file: &mut File| file.sync_data())
        } else {
            None
        };
        self
    }
}

/// Writes `messages` as JSON Lines to `output` and flushes it.
pub fn write_jsonl<'a, W, I>(output: W, messages: I) -> Result<W, WriteError>
where
    W: Write,
    I: IntoIterator<Item = &'a AgentMessage>,
{
    let mut writer = JsonlWriter::new(output);
    writer.write_all(messages)?;
    writer.into_inner()
}
