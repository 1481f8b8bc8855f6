//! Transcript files: a streaming JSON Lines reader and an appending writer.
//!
//! One message object per line, UTF-8, `\n` between lines:
//!
//! ```json
//! {"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292}
//! {"role":"notice","text":"session resumed"}
//! ```
//!
//! The reader also accepts a JSON array of the same objects (a file that starts
//! with `[` but is not one whole array of objects is read as JSON Lines).
//! Nothing is lost in lenient mode, the default: a line that does not decode
//! into its type, and even a line that is no transcript line at all (not UTF-8,
//! not a JSON object, no `"role"`, a fragment a crash cut off), is kept as
//! [`AgentMessage::Unknown`] with its exact bytes and the reason, and reading
//! goes on. Strict mode reports each such line with its number instead. A last
//! line cut off by a crash is reported as [`ReadError::TornLastLine`] after every
//! line before it, and [`read_all`](JsonlReader::read_all) keeps its bytes in
//! [`Transcript::torn`]. [`AppendFile`] says what holds with concurrent writers.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufWriter, Cursor, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;

use super::custom::Registry;
use crate::transcript::{decode_line, DecodeError, DecodeMode, UnknownMessage};
use crate::AgentMessage;

use crate::lines::BOM;

/// A transcript could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Strict mode: a line was not decoded into its type (or is no transcript
    /// line at all).
    #[error("line {line}: {source}")]
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        #[source]
        source: DecodeError,
    },
    /// Strict mode: an element of a transcript in JSON-array form was not
    /// decoded.
    #[error("element {index} of the JSON array: {source}")]
    Element {
        /// The element's index, from 0.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: DecodeError,
    },
    /// The last line has no newline and is cut off mid-object (or mid-character):
    /// a crash during a write. Every line before it was read.
    #[error("line {line}: torn last line ({bytes} bytes cut off mid-object, no newline); every line before it was read")]
    TornLastLine {
        /// The line number, from 1.
        line: usize,
        /// How many bytes the torn line has.
        bytes: usize,
    },
    /// Strict mode: a line is not UTF-8.
    #[error("line {line}: not UTF-8: {source}")]
    NotUtf8 {
        /// The line number, from 1.
        line: usize,
        /// Where the bytes stop being UTF-8.
        #[source]
        source: std::str::Utf8Error,
    },
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
    /// A file that starts with `[` but is not a JSON array, read as lines from
    /// memory.
    Buffered(Cursor<Vec<u8>>),
    /// The elements of a JSON array, then the torn line after it, if any (its
    /// number and bytes).
    Array(
        std::iter::Enumerate<std::vec::IntoIter<Box<serde_json::value::RawValue>>>,
        Option<(usize, Vec<u8>)>,
    ),
    Done,
}

/// Reads a transcript from any [`BufRead`], one message at a time.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{JsonlReader, AgentMessage};
/// let text = "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"someday\",\"x\":1}\nnot json\n";
/// let messages: Vec<AgentMessage> = JsonlReader::new(text.as_bytes())
///     .collect::<Result<_, _>>()
///     .unwrap();
/// assert!(messages[0].is_llm());
/// assert_eq!(messages[1].as_unknown().unwrap().raw(), "{\"role\":\"someday\",\"x\":1}");
/// assert_eq!(messages[2].as_unknown().unwrap().raw(), "not json"); // kept, not lost
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

    /// Reads every message. In lenient mode only an I/O error fails it: every
    /// line is decoded or kept, and a torn last line is reported in
    /// [`Transcript::torn`] (with its bytes) after every message before it. In
    /// strict mode the first line not decoded is the error.
    pub fn read_all(mut self) -> Result<Transcript, ReadError> {
        let mut transcript = Transcript::default();
        while let Some(item) = self.next() {
            match item {
                Ok(message) => transcript.messages.push(message),
                Err(ReadError::TornLastLine { line, .. }) => {
                    transcript.torn = Some(TornLine {
                        line,
                        raw: std::mem::take(&mut self.buf),
                    });
                }
                Err(error) => return Err(error),
            }
        }
        Ok(transcript)
    }

    fn start(&mut self) -> Result<(), ReadError> {
        // The first non-blank byte of the first chunk tells JSON Lines from an
        // array; nothing is consumed, so line numbers and bytes stay exact.
        let chunk = self
            .input
            .fill_buf()
            .map_err(|source| ReadError::Io { line: 1, source })?;
        if first_token(chunk) != Some(b'[') {
            self.state = State::Lines;
            return Ok(());
        }
        let mut bytes = Vec::new();
        crate::lines::read_to_end(&mut self.input, &mut bytes).map_err(|source| {
            // A line past the limit: the error names it, as the lines do.
            match crate::lines::LineTooLong::of(&source).copied() {
                Some(
                    long @ crate::lines::LineTooLong {
                        line: Some(line), ..
                    },
                ) => ReadError::Io {
                    line,
                    source: crate::lines::LineTooLong { line: None, ..long }.into(),
                },
                _ => ReadError::Io { line: 1, source },
            }
        })?;
        // Byte-order marks start no line (see `next_line`): the array is read
        // without them, as the lines would be.
        let body = without_boms(&bytes);
        let body = &body[..];
        if let Some(elements) = array_of_objects(body) {
            self.state = State::Array(elements.into_iter().enumerate(), None);
            return Ok(());
        }
        // An array, then a last line a crash tore: the array, and the torn line
        // reported after it. (Read as lines instead, the lines kept without the
        // torn one would be that array once written back, and read back as its
        // elements: not the messages written.)
        if let Some(cut) = body.iter().rposition(|b| *b == b'\n').map(|at| at + 1) {
            let (head, tail) = body.split_at(cut);
            if is_torn_line(tail) {
                if let Some(elements) = array_of_objects(head) {
                    let line = head.iter().filter(|b| **b == b'\n').count() + 1;
                    let torn = (line, tail.to_vec());
                    self.state = State::Array(elements.into_iter().enumerate(), Some(torn));
                    return Ok(());
                }
            }
        }
        // Not one whole array of objects (a JSON Lines file whose first line is
        // an array, an array cut off mid-write): its lines are read one by one,
        // so the good ones are decoded and the rest kept as they are.
        self.state = State::Buffered(Cursor::new(bytes));
        Ok(())
    }

    fn next_line(&mut self) -> Option<Result<AgentMessage, ReadError>> {
        loop {
            // One line, by the crate's one rule (`crate::lines`).
            let read = match &mut self.state {
                State::Buffered(cursor) => crate::lines::read_line(cursor, &mut self.buf),
                _ => crate::lines::read_line(&mut self.input, &mut self.buf),
            };
            let terminated = match read {
                Ok(Some(terminated)) => terminated,
                Ok(None) => {
                    self.state = State::Done;
                    return None;
                }
                Err(source) => {
                    self.state = State::Done;
                    return Some(Err(ReadError::Io {
                        line: self.line + 1,
                        source,
                    }));
                }
            };
            self.line += 1;
            // A byte-order mark is an encoding mark, never JSON: skipped at the
            // start of any line (editors put one on line 1; a copy glued
            // after another file puts one further down).
            let bytes = skip_boms(&self.buf);
            let line = match std::str::from_utf8(bytes) {
                Ok(line) => line,
                // Cut off inside a character: a torn write, not bad text.
                Err(e) if !terminated && e.error_len().is_none() => {
                    return Some(Err(ReadError::TornLastLine {
                        line: self.line,
                        bytes: self.buf.len(),
                    }))
                }
                Err(source) => {
                    return Some(match self.mode {
                        DecodeMode::Strict => Err(ReadError::NotUtf8 {
                            line: self.line,
                            source,
                        }),
                        DecodeMode::Lenient => {
                            Ok(AgentMessage::Unknown(UnknownMessage::malformed(
                                bytes.to_vec(),
                                DecodeError::NotJson("not UTF-8".to_owned()),
                            )))
                        }
                    })
                }
            };
            // Blank by JSON's whitespace only: a line of other spaces (U+00A0…)
            // is not blank, and is kept.
            if crate::lines::is_blank(line.as_bytes()) {
                continue;
            }
            if !terminated && is_torn_line(line.as_bytes()) {
                return Some(Err(ReadError::TornLastLine {
                    line: self.line,
                    bytes: self.buf.len(),
                }));
            }
            return Some(match decode_line(line, self.registry, self.mode) {
                Ok(message) => Ok(message),
                Err(source) => match self.mode {
                    DecodeMode::Strict => Err(ReadError::Line {
                        line: self.line,
                        source,
                    }),
                    DecodeMode::Lenient => Ok(AgentMessage::Unknown(UnknownMessage::malformed(
                        line.as_bytes().to_vec(),
                        source,
                    ))),
                },
            });
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
                State::Lines | State::Buffered(_) => return self.next_line(),
                State::Array(elements, torn) => {
                    let Some((index, raw)) = elements.next() else {
                        let (line, raw) = torn.take()?;
                        let bytes = raw.len();
                        self.buf = raw;
                        self.state = State::Done;
                        return Some(Err(ReadError::TornLastLine { line, bytes }));
                    };
                    return Some(match decode_line(raw.get(), self.registry, self.mode) {
                        Ok(message) => Ok(message),
                        Err(source) => match self.mode {
                            DecodeMode::Strict => Err(ReadError::Element { index, source }),
                            DecodeMode::Lenient => Ok(AgentMessage::Unknown(
                                UnknownMessage::malformed(raw.get().as_bytes().to_vec(), source),
                            )),
                        },
                    });
                }
                State::Done => return None,
            }
        }
    }
}

/// The first byte of `chunk` that is neither JSON whitespace nor part of a
/// byte-order mark at the start of a line.
fn first_token(chunk: &[u8]) -> Option<u8> {
    let mut rest = chunk;
    loop {
        rest = skip_boms(rest);
        match rest.split_first() {
            Some((b' ' | b'\t' | b'\r' | b'\n', tail)) => rest = tail,
            Some((first, _)) => return Some(*first),
            None => return None,
        }
    }
}

/// `line` after the byte-order marks it starts with.
fn skip_boms(mut line: &[u8]) -> &[u8] {
    while let Some(rest) = line.strip_prefix(BOM) {
        line = rest;
    }
    line
}

/// `bytes` without the byte-order marks that start its lines.
fn without_boms(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memmem::find(bytes, BOM).is_none() {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(skip_boms(line));
    }
    std::borrow::Cow::Owned(out)
}

/// The elements of `bytes` when it is one JSON array whose elements are all
/// objects.
fn array_of_objects(bytes: &[u8]) -> Option<Vec<Box<serde_json::value::RawValue>>> {
    let elements: Vec<Box<serde_json::value::RawValue>> = serde_json::from_slice(bytes).ok()?;
    elements
        .iter()
        .all(|e| e.get().starts_with('{'))
        .then_some(elements)
}

/// Whether `line`, a last line with no newline after it, was cut off by a
/// crash: it stops inside a character, or inside a JSON value.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::transcript::is_torn_line;
/// assert!(is_torn_line(br#"{"role":"user","cont"#));
/// assert!(is_torn_line(b"{\"text\":\"caf\xc3"));
/// assert!(!is_torn_line(br#"{"role":"user"}"#));
/// assert!(!is_torn_line(b"not json"));
/// ```
pub fn is_torn_line(line: &[u8]) -> bool {
    match std::str::from_utf8(line) {
        Ok(text) => {
            !text.trim().is_empty()
                && serde_json::from_str::<IgnoredAny>(text).is_err_and(|e| e.is_eof())
        }
        Err(e) => e.error_len().is_none(),
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

/// A last line cut off mid-object (or mid-character) by a crash, kept aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornLine {
    /// The line number, from 1.
    pub line: usize,
    /// Its exact bytes (no newline follows them).
    pub raw: Vec<u8>,
}

impl TornLine {
    /// How many bytes it has.
    pub fn bytes(&self) -> usize {
        self.raw.len()
    }
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
/// [`fsync`](JsonlWriter::fsync) on, to the disk). The buffer hands the output
/// whole lines only, so a writer to an [`AppendFile`] never leaves half a line
/// between two of its writes.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{JsonlWriter, AgentMessage, Message};
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
            AgentMessage::Unknown(unknown) if unknown.raw_bytes().contains(&b'\n') => {
                self.line
                    .extend(unknown.raw_bytes().iter().filter(|b| **b != b'\n'));
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
        // One call per whole line: the buffer passes whole lines on.
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

    /// The output (what was flushed to it so far).
    pub fn get_ref(&self) -> &W {
        self.out.get_ref()
    }

    /// Flushes and gives the output back.
    pub fn into_inner(mut self) -> Result<W, WriteError> {
        self.flush()?;
        self.out
            .into_inner()
            .map_err(|e| WriteError::Io(e.into_error()))
    }
}

impl JsonlWriter<AppendFile> {
    /// Opens `path` for appending (creating it if needed, with mode 0600 on Unix:
    /// transcripts hold secrets). Each write to the file is made under its
    /// advisory lock (see [`AppendFile`] for what holds with concurrent writers):
    /// when the file ends in a torn line (no final newline, a crash mid-write), a
    /// newline is written first, so the fragment stays a line of its own (the
    /// reader keeps it) and the next line starts clean;
    /// [`AppendFile::ended_torn_tails`] reports where.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{JsonlWriter, Message, AgentMessage};
    /// # use agentmsg::transcript::read_transcript;
    /// let dir = std::env::temp_dir().join(format!("agentmsg-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("torn.jsonl");
    /// std::fs::write(&path, "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"us").unwrap();
    /// let mut writer = JsonlWriter::append(&path).unwrap();
    /// writer.write(&AgentMessage::from(Message::user("b"))).unwrap();
    /// writer.flush().unwrap();
    /// assert_eq!(writer.get_ref().ended_torn_tails(), [41]);
    /// let read = read_transcript(std::fs::read(&path).unwrap().as_slice()).unwrap();
    /// assert_eq!(read.messages.len(), 3); // the fragment is kept between the two
    /// assert!(read.messages[1].is_unknown());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn append(path: impl AsRef<Path>) -> io::Result<Self> {
        let file = AppendFile::open(path)?;
        Ok(Self::new(file))
    }

    /// With `on`, every [`flush`](Self::flush) also syncs the file's data to disk
    /// (`File::sync_data`) before it returns. Off by default: then a line is in
    /// the OS's hands when `flush` returns, safe from a crash of the process but
    /// not from a power loss.
    #[must_use]
    pub fn fsync(mut self, on: bool) -> Self {
        self.sync = if on {
            Some(|file: &mut AppendFile| file.file.sync_data())
        } else {
            None
        };
        self
    }
}

/// A transcript file opened for appending whole lines under its advisory lock
/// (what [`JsonlWriter::append`] writes to). Each [`write`](Write::write) takes
/// the lock, reopens the path if another program renamed a new file over it,
/// ends a torn tail with a newline, writes all of its bytes, and unlocks.
///
/// # Concurrent writers
///
/// [`JsonlWriter::append`] takes an advisory lock on the file
/// ([`File::lock`]: `flock` on Unix, `LockFileEx` on Windows) for each write it
/// hands to the OS, and writes only whole lines under it. So on any file system
/// that honours the lock (local ones, and NFS, where Linux maps `flock` to POSIX
/// locks), appenders in several processes never interleave or tear each other's
/// lines, even when a write is partial. Under the lock it also checks that the
/// file ends with a newline (a crash may have cut the last line: it ends the
/// fragment with one first, and reports it) and, on Unix, that the path still
/// names the file it holds open (a tool that rewrote the transcript by renaming
/// a new file over it, as `agentmsg repair -o FILE FILE` does under the same
/// lock, makes it reopen the path), so no line goes to a replaced file. A lock
/// is advisory: a program that writes the file without taking it is not held
/// back.
#[derive(Debug)]
pub struct AppendFile {
    file: File,
    path: PathBuf,
    ended: Vec<u64>,
}

impl AppendFile {
    /// Opens (or creates, mode 0600 on Unix) `path` for appending.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_owned();
        let file = Self::open_file(&path)?;
        Ok(Self {
            file,
            path,
            ended: Vec::new(),
        })
    }

    fn open_file(path: &Path) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(path)
    }

    /// The path appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file lengths at which this writer found the file ending without a
    /// newline (a line torn by a crash) and wrote one, in order.
    pub fn ended_torn_tails(&self) -> &[u64] {
        &self.ended
    }

    /// Takes the lock on the file the path names now (reopening it when the one
    /// held open was replaced), and ends a torn tail.
    fn lock(&mut self) -> io::Result<()> {
        loop {
            self.file.lock()?;
            if self.is_current()? {
                break;
            }
            self.file.unlock()?;
            self.file = Self::open_file(&self.path)?;
        }
        let len = self.file.seek(SeekFrom::End(0))?;
        if len > 0 {
            self.file.seek(SeekFrom::End(-1))?;
            let mut last = [0u8; 1];
            self.file.read_exact(&mut last)?;
            if last != *b"\n" {
                self.file.write_all(b"\n")?;
                self.ended.push(len);
            }
        }
        Ok(())
    }

    /// Whether the path still names the open file.
    #[cfg(unix)]
    fn is_current(&self) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let open = self.file.metadata()?;
        match std::fs::metadata(&self.path) {
            Ok(named) => Ok(named.dev() == open.dev() && named.ino() == open.ino()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    #[cfg(not(unix))]
    fn is_current(&self) -> io::Result<bool> {
        Ok(true)
    }
}

impl Write for AppendFile {
    /// Writes all of `buf` under the lock (never a part of it), or fails.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock()?;
        let written = self.file.write_all(buf);
        let unlocked = self.file.unlock();
        written?;
        unlocked?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
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
