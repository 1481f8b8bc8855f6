//! Other agents' logs as agentmsg transcripts: pi session files, Claude Code
//! logs and Codex rollouts.
//!
//! [`SessionFormat::detect`] tells which agent wrote a log from the head of
//! the file, by one rule; [`import`] converts a log held in memory, and
//! [`import_path`] converts a file one line at a time, writing the transcript
//! as it goes, so memory holds the ids of the log, never the log.
//! [`Session::open`](crate::Session::open) reads all of them through this
//! module, so an application opens another agent's log in one call:
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! # use agentmsg::Session;
//! # use agentmsg::session::SessionFormat;
//! let claude = br#"{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}
//! {"parentUuid":"u1","sessionId":"s","type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}
//! "#;
//! # #[cfg(feature = "anthropic")] {
//! let session = Session::read(claude).unwrap();
//! assert_eq!(session.format(), SessionFormat::ClaudeCode);
//! assert_eq!(session.context(None).unwrap().messages.len(), 2);
//! # }
//! ```
//!
//! The mapping of each log is documented in its module: [`pi`], [`claude`]
//! and [`codex`]. Nothing is dropped in silence: what has no agentmsg form is
//! kept as an `extension` line, and what is read differently from the log is
//! said as an [`ImportWarning`] at its line.

#[cfg(feature = "anthropic")]
pub mod claude;
#[cfg(feature = "openai-responses")]
pub mod codex;
mod detect;
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
mod loose;
pub mod pi;

pub(crate) use detect::file_head;

use std::fmt;
use std::io::Write;
use std::path::Path;

pub use detect::SessionFormat;

/// What an import produced: the transcript (for [`import`]; [`import_path`]
/// writes it instead) and what was counted and said on the way.
#[derive(Debug, Default)]
pub struct Imported {
    /// The transcript, JSON Lines (empty after [`import_path`], which writes it).
    pub text: Vec<u8>,
    /// Lines written.
    pub lines: usize,
    /// Message lines.
    pub messages: usize,
    /// `compactionSummary` and `branchSummary` lines.
    pub summaries: usize,
    /// `extension` lines.
    pub extensions: usize,
    /// What was said, by line of the log.
    pub warnings: Vec<ImportWarning>,
    /// Whether a line of the log was not UTF-8 (its invalid bytes were
    /// replaced by U+FFFD).
    pub lossy: bool,
}

impl Imported {
    /// Says that a log of `format` held no message, if it did not: it
    /// converts to no conversation, never a quiet success.
    #[cfg(any(feature = "anthropic", feature = "openai-responses"))]
    pub(crate) fn said_if_empty(&mut self, format: &str) {
        if self.messages == 0 {
            self.warnings.push(ImportWarning::warning(
                0,
                WarningCode::NoMessages,
                format!(
                    "no user, assistant or tool result in this {format} log ({} lines written, none a message)",
                    self.lines
                ),
            ));
        }
    }

    /// Whether the import found a problem a reader should act on: an error,
    /// or a log with no message.
    pub fn has_problems(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| w.severity == Severity::Error || w.code == WarningCode::NoMessages)
    }
}

/// How bad a problem of an import is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The entry was converted, in a way the warning says.
    Warning,
    /// The entry could not be converted as what it claims to be; it is kept
    /// as an `extension` line.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Warning => "warning",
            Self::Error => "error",
        })
    }
}

/// What an [`ImportWarning`] is about; [`as_str`](Self::as_str) is its
/// short name, as the `agentmsg` command prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningCode {
    /// `no-messages`: the log holds no user, assistant or tool result.
    NoMessages,
    /// `not-an-entry`: a line is not a JSON object.
    NotAnEntry,
    /// `lost-newline`: a line holds several entries (a write that lost its
    /// newline); each is converted.
    LostNewline,
    /// `lone-surrogate`: a string holds half of a UTF-16 character.
    LoneSurrogate,
    /// `bad-message`: a pi `message` entry without a message object.
    BadMessage,
    /// `not-sent`: a pi message of a role pi does not send.
    NotSent,
    /// `no-type`: a pi entry without a string `type`.
    NoType,
    /// `no-session-header`: a pi file without its `session` header, whose
    /// entries pi does not read.
    NoSessionHeader,
    /// `preserved-segment`: messages a Claude Code compaction kept wait for
    /// an entry never written.
    PreservedSegment,
    /// `queued-prompt`: a Claude Code prompt queued while the model worked.
    QueuedPrompt,
    /// `field-not-kept`: a field that has no place in the transcript.
    FieldNotKept,
    /// `result-block-as-text`: tool result blocks kept as their JSON in text.
    ResultBlockAsText,
    /// `duplicate-entry`: a Claude Code entry written twice.
    DuplicateEntry,
    /// `duplicate-uuid`: a Claude Code uuid reused by another entry.
    DuplicateUuid,
    /// `call-aborted`: a Codex call an interrupted turn left without output.
    CallAborted,
    /// `late-output`: a Codex output written after its call was given up.
    LateOutput,
    /// `bad-value`: a field of another JSON type than the log's writer
    /// writes, or a value no transcript can hold (an entry its own parent);
    /// read as the warning says.
    BadValue,
    /// `split-response`: the pieces of one response that could not be made
    /// one message; its usage is counted on the first only.
    SplitResponse,
    /// `compact-boundary`: a Claude Code compaction that cannot join the
    /// history it compacted (no summary follows it, or what it names as
    /// its logical parent is no entry before it): it starts a new root.
    CompactBoundary,
}

impl WarningCode {
    /// The code's short name (`not-an-entry`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoMessages => "no-messages",
            Self::NotAnEntry => "not-an-entry",
            Self::LostNewline => "lost-newline",
            Self::LoneSurrogate => "lone-surrogate",
            Self::BadMessage => "bad-message",
            Self::NotSent => "not-sent",
            Self::NoType => "no-type",
            Self::NoSessionHeader => "no-session-header",
            Self::PreservedSegment => "preserved-segment",
            Self::QueuedPrompt => "queued-prompt",
            Self::FieldNotKept => "field-not-kept",
            Self::ResultBlockAsText => "result-block-as-text",
            Self::DuplicateEntry => "duplicate-entry",
            Self::DuplicateUuid => "duplicate-uuid",
            Self::CallAborted => "call-aborted",
            Self::LateOutput => "late-output",
            Self::BadValue => "bad-value",
            Self::SplitResponse => "split-response",
            Self::CompactBoundary => "compact-boundary",
        }
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something an import said about one line of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportWarning {
    /// The line of the log, from 1 (0: the log as a whole).
    pub line: usize,
    /// How bad it is.
    pub severity: Severity,
    /// What it is about.
    pub code: WarningCode,
    /// What was found and what was done, for a person.
    pub message: String,
}

impl ImportWarning {
    /// A warning at `line`.
    pub fn warning(line: usize, code: WarningCode, message: impl Into<String>) -> Self {
        Self {
            line,
            severity: Severity::Warning,
            code,
            message: message.into(),
        }
    }

    /// An error at `line`.
    pub fn error(line: usize, code: WarningCode, message: impl Into<String>) -> Self {
        Self {
            line,
            severity: Severity::Error,
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {}[{}]: {}",
            self.line, self.severity, self.code, self.message
        )
    }
}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The log could not be read.
    #[error("cannot read the log: {0}")]
    Read(#[source] std::io::Error),
    /// The transcript could not be written.
    #[error("cannot write the transcript: {0}")]
    Write(#[source] std::io::Error),
    /// A line could not be encoded as JSON.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The log is no pi session file, Claude Code log or Codex rollout.
    #[error("line {line}: not a pi, Claude Code or Codex log; the first line it could not place: {text}")]
    Unrecognised {
        /// The line that could not be placed (0: the log is empty).
        line: usize,
        /// Its text, cut at 200 characters.
        text: String,
    },
    /// This build does not read logs of this format (its provider feature is
    /// off: `anthropic` for Claude Code, `openai-responses` for Codex).
    #[error("this build does not read {0} logs (its provider feature is off)")]
    NotBuilt(&'static str),
}

impl From<std::io::Error> for ImportError {
    fn from(e: std::io::Error) -> Self {
        Self::Write(e)
    }
}

/// Converts the log in `bytes` (a pi session file, a Claude Code log or a
/// Codex rollout, as [`SessionFormat::detect`] tells) into a transcript.
/// Invalid UTF-8 is replaced by U+FFFD, and said ([`Imported::lossy`]).
pub fn import(bytes: &[u8]) -> Result<Imported, ImportError> {
    import_as(SessionFormat::detect(bytes), bytes)
}

/// [`import`] of a log of `format`.
pub(crate) fn import_as(format: SessionFormat, bytes: &[u8]) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    let lossy = matches!(text, std::borrow::Cow::Owned(_));
    let mut imported = match format {
        SessionFormat::Pi { .. } => pi::import(&text)?,
        SessionFormat::ClaudeCode => import_claude(&text)?,
        SessionFormat::Codex => import_codex(&text)?,
        SessionFormat::Agentmsg => return Err(detect::unrecognised(&text)),
    };
    imported.lossy = lossy;
    Ok(imported)
}

#[cfg(feature = "anthropic")]
fn import_claude(text: &str) -> Result<Imported, ImportError> {
    in_memory(detect::LogSource::Text(text), claude::import)
}

#[cfg(not(feature = "anthropic"))]
fn import_claude(_: &str) -> Result<Imported, ImportError> {
    Err(ImportError::NotBuilt("Claude Code"))
}

#[cfg(feature = "openai-responses")]
fn import_codex(text: &str) -> Result<Imported, ImportError> {
    in_memory(detect::LogSource::Text(text), codex::import)
}

/// Converts a Claude Code or Codex log with `convert`, the transcript kept
/// in [`Imported::text`].
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
fn in_memory<'s>(
    source: detect::LogSource<'s>,
    convert: impl FnOnce(
        &dyn Fn(detect::Reading) -> Result<detect::LogLines<'s>, ImportError>,
        &mut dyn Write,
    ) -> Result<Imported, ImportError>,
) -> Result<Imported, ImportError> {
    let mut text = Vec::new();
    let mut imported = detect::convert_log(source, &mut text, convert)?;
    imported.text = text;
    Ok(imported)
}

#[cfg(not(feature = "openai-responses"))]
fn import_codex(_: &str) -> Result<Imported, ImportError> {
    Err(ImportError::NotBuilt("Codex"))
}

/// Converts the log at `path` one line at a time, writing the transcript to
/// `out` as it goes; memory holds a line and the log's ids, never the file.
/// The counts and warnings are returned ([`Imported::text`] is empty). The
/// format is told from the file's first 64 KiB.
pub fn import_path(path: &Path, out: &mut dyn Write) -> Result<Imported, ImportError> {
    let head = file_head(path).map_err(ImportError::Read)?;
    match SessionFormat::detect(&head) {
        SessionFormat::Pi { .. } => pi::import_file(path, out),
        #[cfg(feature = "anthropic")]
        SessionFormat::ClaudeCode => {
            detect::convert_log(detect::LogSource::File(path), out, claude::import)
        }
        #[cfg(feature = "openai-responses")]
        SessionFormat::Codex => {
            detect::convert_log(detect::LogSource::File(path), out, codex::import)
        }
        #[cfg(not(feature = "anthropic"))]
        SessionFormat::ClaudeCode => Err(ImportError::NotBuilt("Claude Code")),
        #[cfg(not(feature = "openai-responses"))]
        SessionFormat::Codex => Err(ImportError::NotBuilt("Codex")),
        // Not told by the head (a first line longer than it, say): the
        // whole file.
        SessionFormat::Agentmsg => {
            let bytes = std::fs::read(path).map_err(ImportError::Read)?;
            let mut imported = import(&bytes)?;
            out.write_all(&imported.text).map_err(ImportError::Write)?;
            imported.text = Vec::new();
            Ok(imported)
        }
    }
}

/// The text of a message line of a Claude Code or Codex import: the
/// message written by the runtime's writer, then its envelope (`id`,
/// `parentId`) by the envelope codec.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(crate) fn message_line(
    message: crate::Message,
    id: crate::MessageId,
    parent_id: crate::ParentId,
) -> Result<String, ImportError> {
    let line = crate::LlmMessage {
        message,
        id: Some(id),
        turn_id: None,
        parent_id,
    };
    Ok(serde_json::to_string(&line)?)
}

/// The text of an `extension` line of `kind` holding the JSON text `data`
/// verbatim (an entry of the log, in the order it was written), with its
/// envelope written by the envelope codec.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(crate) fn extension_line(
    kind: &str,
    data: &str,
    id: Option<&crate::MessageId>,
    parent_id: &crate::ParentId,
) -> Result<String, ImportError> {
    /// An `extension` line's own fields.
    #[derive(serde::Serialize)]
    struct Fields<'a> {
        kind: &'a str,
        data: &'a serde_json::value::RawValue,
    }
    let data: &serde_json::value::RawValue = serde_json::from_str(data)?;
    let mut out = Vec::with_capacity(data.get().len() + kind.len() + 64);
    crate::transcript::codec::envelope::write_line(
        &mut serde_json::Serializer::new(&mut out),
        "extension",
        &Fields { kind, data },
        (id, None, parent_id),
        1,
        None,
    )?;
    String::from_utf8(out).map_err(|e| ImportError::Json(serde::ser::Error::custom(e)))
}

/// Unix milliseconds of an ISO 8601 time such as `2025-12-08T22:41:05.306Z`;
/// `None` when it is not one, or before 1970.
pub(crate) fn iso_millis(text: &str) -> Option<u64> {
    crate::time::parse_iso8601(text).and_then(|ms| u64::try_from(ms).ok())
}
