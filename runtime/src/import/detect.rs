//! Which agent wrote a log (one rule, [`SessionFormat::detect`]), and the
//! lines of a log as the importers read them.

use std::io::{self, BufRead, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::ImportError;
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
use super::{ImportWarning, Imported, WarningCode};

/// How many of a log's first entries tell who wrote it.
const PROBED: usize = 50;

/// How much of a file's head [`import_path`](super::import_path) reads to
/// tell who wrote it.
const HEAD: u64 = 1 << 16;

/// The entry types of a pi session file.
const PI_TYPES: &[&str] = &[
    "session",
    "message",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "model_change",
    "thinking_level_change",
];

/// The format of a session's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionFormat {
    /// An agentmsg transcript (lines with `"role"`).
    Agentmsg,
    /// A pi coding-agent session file of this version (from its header; 1
    /// when it has none).
    Pi {
        /// The version the file was written as (it is migrated in memory).
        version: u32,
    },
    /// A Claude Code log, held (and saved) as the agentmsg transcript it
    /// converts to ([`import`](super)).
    ClaudeCode,
    /// A Codex CLI rollout, held (and saved) as the agentmsg transcript it
    /// converts to ([`import`](super)).
    Codex,
}

impl SessionFormat {
    /// Which agent wrote the log whose first bytes are `head`, by one rule:
    ///
    /// - a JSON array, or a first entry (the first non-blank line that is a
    ///   JSON object) with a `"role"`: an agentmsg transcript;
    /// - a first entry of a pi entry type (a `session` header, or a file
    ///   without one): a pi session file, of the header's version (1 when it
    ///   names none);
    /// - one of the first 50 entries with a string `uuid` and a `parentUuid`
    ///   or `sessionId`: a Claude Code log;
    /// - one of them a `payload`ed `session_meta`, `response_item`,
    ///   `event_msg`, `turn_context` or `compacted` line (or the older
    ///   rollout's header or `record_type` lines): a Codex rollout;
    /// - anything else: an agentmsg transcript (whose lines then say what
    ///   they are not).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::session::SessionFormat;
    /// let head = br#"{"type":"session","version":3,"id":"s1"}"#;
    /// assert_eq!(SessionFormat::detect(head), SessionFormat::Pi { version: 3 });
    /// let head = br#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s"}}"#;
    /// assert_eq!(SessionFormat::detect(head), SessionFormat::Codex);
    /// assert_eq!(SessionFormat::detect(b"{\"role\":\"user\",\"content\":\"hi\"}"), SessionFormat::Agentmsg);
    /// ```
    pub fn detect(head: &[u8]) -> SessionFormat {
        let mut lines = crate::lines::raw_lines(head)
            .map(|line| line.bytes.trim_ascii())
            .filter(|l| !l.is_empty())
            .peekable();
        match lines.peek() {
            Some(first) if first.starts_with(b"[") || has_role(first) => {
                return SessionFormat::Agentmsg
            }
            _ => {}
        }
        let entries: Vec<Map<String, Value>> = lines
            .filter_map(|l| serde_json::from_slice(l).ok())
            .take(PROBED)
            .collect();
        let Some(first) = entries.first() else {
            return SessionFormat::Agentmsg;
        };
        let first_type = first.get("type").and_then(Value::as_str);
        if !first.contains_key("role")
            && !first.contains_key("uuid")
            && !first.contains_key("payload")
            && first_type.is_some_and(|t| PI_TYPES.contains(&t))
        {
            let version = match (first_type, first.get("id")) {
                (Some("session"), Some(Value::String(_))) => first
                    .get("version")
                    .and_then(Value::as_u64)
                    .and_then(|v| u32::try_from(v).ok())
                    .unwrap_or(1),
                _ => 1,
            };
            return SessionFormat::Pi { version };
        }
        if first.contains_key("role") {
            return SessionFormat::Agentmsg;
        }
        if entries.iter().any(is_claude) {
            SessionFormat::ClaudeCode
        } else if entries.iter().any(is_codex) {
            SessionFormat::Codex
        } else {
            SessionFormat::Agentmsg
        }
    }
}

/// Whether `line` is a JSON object with a `"role"`: a transcript line (read
/// without building the object, as most files opened are transcripts).
fn has_role(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        role: Option<serde::de::IgnoredAny>,
    }
    matches!(
        serde_json::from_slice::<Head>(line),
        Ok(Head { role: Some(_) })
    )
}

/// A Claude Code entry: a string `uuid` and a `parentUuid` or `sessionId`.
fn is_claude(e: &Map<String, Value>) -> bool {
    e.get("uuid").is_some_and(Value::is_string)
        && (e.contains_key("parentUuid") || e.contains_key("sessionId"))
}

/// A Codex rollout line: a `payload`ed line of a rollout type, the older
/// layout's header (`instructions`, `id`, `timestamp`) or a `record_type`.
fn is_codex(e: &Map<String, Value>) -> bool {
    let kind = e.get("type").and_then(Value::as_str);
    (e.contains_key("payload")
        && matches!(
            kind,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        ))
        || (e.contains_key("instructions")
            && e.contains_key("id")
            && e.contains_key("timestamp")
            && !e.contains_key("role"))
        || e.get("record_type").is_some()
}

/// Why a log is none an importer reads: its first non-blank line.
pub(super) fn unrecognised(text: &str) -> ImportError {
    let first = text_of_lines(text)
        .map(|(number, l)| (number, l.trim()))
        .find(|(_, l)| !l.is_empty());
    let (line, raw) = first.unwrap_or((0, ""));
    ImportError::Unrecognised {
        line,
        text: raw.chars().take(200).collect(),
    }
}

/// The first 64 KiB of the file at `path`, up to its last whole line.
pub(crate) fn file_head(path: &Path) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD as usize);
    std::fs::File::open(path)?
        .take(HEAD)
        .read_to_end(&mut head)?;
    if let Some(end) = head.iter().rposition(|&b| b == b'\n') {
        head.truncate(end + 1);
    }
    Ok(head)
}

/// The lines of `text` ([`crate::lines`]), numbered, as text.
pub(super) fn text_of_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    crate::lines::raw_lines(text.as_bytes()).filter_map(|line| {
        Some((
            line.number,
            text.get(line.start..line.start + line.bytes.len())?,
        ))
    })
}

/// The lines of `reader` ([`crate::lines`]), numbered from 1, without their
/// `\n` (or `\r\n`), as text (invalid UTF-8 replaced, and said so by the
/// `bool`).
pub(super) fn text_lines<R: BufRead>(
    mut reader: R,
) -> impl Iterator<Item = io::Result<(usize, String, bool)>> {
    let mut number = 0;
    let mut started = false;
    std::iter::from_fn(move || {
        if !started {
            started = true;
            if let Err(e) = crate::lines::skip_bom(&mut reader) {
                return Some(Err(e));
            }
        }
        let mut buf = Vec::new();
        match crate::lines::read_line(&mut reader, &mut buf) {
            Ok(None) => None,
            Ok(Some(_)) => {
                number += 1;
                if buf.ends_with(b"\r") {
                    buf.pop();
                }
                Some(Ok(match String::from_utf8(buf) {
                    Ok(text) => (number, text, false),
                    Err(e) => (
                        number,
                        String::from_utf8_lossy(e.as_bytes()).into_owned(),
                        true,
                    ),
                }))
            }
            Err(e) => Some(Err(e)),
        }
    })
}

/// A line of a Claude Code log or Codex rollout that is a JSON object: its
/// number and its text.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(super) struct LogLine {
    /// The line's number in the log, from 1.
    pub number: usize,
    /// Its text, without the whitespace around it.
    pub text: String,
    /// Where it is said to be no JSON object, when it was not checked to be
    /// one ([`Reading::Lazily`]).
    pub unchecked: Option<SaidLines>,
}

/// The lines said (each once, whatever the passes): its number, and
/// whether it is left out (else it held a lone surrogate).
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(super) type SaidLines =
    std::rc::Rc<std::cell::RefCell<std::collections::BTreeSet<(usize, bool)>>>;

#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
impl LogLine {
    /// What `read` reads of the line (the fields every entry is read by):
    /// from the line as it is, else (a key written twice, which a typed read
    /// refuses) from the object as a map reads it (the last of a repeated
    /// key wins), which then stands for the line.
    /// A line not checked yet is checked when `read` fails (a reading that
    /// succeeds has read all of it, as a check would): one that is no JSON
    /// object is then said, and none.
    pub(super) fn head<H>(&mut self, read: impl Fn(&str) -> Option<H>) -> Option<H> {
        if let Some(head) = read(&self.text) {
            return Some(head);
        }
        if let Some(said) = self.unchecked.take() {
            if !matches!(object_line(&self.text), Some(Ok(_))) {
                said.borrow_mut().insert((self.number, true));
                return None;
            }
        }
        let map: Map<String, Value> = serde_json::from_str(&self.text).ok()?;
        self.text = serde_json::to_string(&map).ok()?;
        read(&self.text)
    }
}

/// The lines of a log that are JSON objects, read anew by each call of the
/// function an importer is given.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(super) type LogLines<'a> = Box<dyn Iterator<Item = Result<LogLine, ImportError>> + 'a>;

/// Which lines of a log the function an importer is given reads.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// The lines that are JSON objects (a string's lone surrogate replaced);
    /// the others are said.
    Entries,
    /// Every non-blank line as written, without the whitespace around it,
    /// not checked and not said (what the line is read for looks for
    /// text in it, and reads as [`object_line`] the lines that hold it).
    #[cfg_attr(not(feature = "anthropic"), allow(dead_code))]
    Raw,
    /// The lines of [`Reading::Entries`], a line that starts as an object
    /// and holds no lone surrogate checked only when the importer's reading
    /// of it fails ([`LogLine::head`]).
    #[cfg_attr(not(feature = "anthropic"), allow(dead_code))]
    Lazily,
}

/// Where a Claude Code log or Codex rollout is read from.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
#[derive(Clone, Copy)]
pub(super) enum LogSource<'a> {
    /// A log held in memory.
    Text(&'a str),
    /// A file, read one line at a time.
    File(&'a Path),
}

/// A non-blank line as an entry of a Claude Code or Codex log: `Err` when it
/// is no JSON object, `None` when it is blank. A string holding half of a
/// UTF-16 character (an emoji cut in two, which no typed read takes) is read
/// with U+FFFD in its place, as pi reads it: the `bool` says so.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(super) fn object_line(raw: &str) -> Option<Result<(std::borrow::Cow<'_, str>, bool), ()>> {
    use crate::json::surrogates::{may_have_surrogates, replace_lone_surrogates};
    use std::borrow::Cow;
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    if !raw.starts_with('{') || serde_json::from_str::<&serde_json::value::RawValue>(raw).is_err() {
        return Some(Err(()));
    }
    Some(Ok(
        match may_have_surrogates(raw)
            .then(|| replace_lone_surrogates(raw))
            .flatten()
        {
            Some(fixed) => (Cow::Owned(fixed), true),
            None => (Cow::Borrowed(raw), false),
        },
    ))
}

/// What is said of a line of a Claude Code or Codex log holding a lone
/// surrogate.
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
fn lone_surrogate(line: usize) -> ImportWarning {
    ImportWarning::warning(
        line,
        WarningCode::LoneSurrogate,
        "a string holds a lone UTF-16 surrogate (half of a character cut in two); read with U+FFFD in its place",
    )
}

#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
/// What is said of a line of a Claude Code or Codex log that is no entry.
pub(super) fn left_out(line: usize) -> ImportWarning {
    ImportWarning::warning(
        line,
        WarningCode::NotAnEntry,
        "not a JSON object; left out of the transcript",
    )
}

/// Converts the Claude Code or Codex log of `source` with `convert`, which
/// reads its lines one at a time (as often as it needs), writing to `out`.
/// Lines that are no JSON object are left out, and said (once, whatever the
/// passes).
#[cfg(any(feature = "anthropic", feature = "openai-responses"))]
pub(super) fn convert_log<'s>(
    source: LogSource<'s>,
    out: &mut dyn std::io::Write,
    convert: impl FnOnce(
        &dyn Fn(Reading) -> Result<LogLines<'s>, ImportError>,
        &mut dyn std::io::Write,
    ) -> Result<Imported, ImportError>,
) -> Result<Imported, ImportError> {
    use std::cell::{Cell, RefCell};
    use std::collections::BTreeSet;
    use std::rc::Rc;
    // Each line said once, whatever the passes: (line, left out?).
    let said_lines = Rc::new(RefCell::new(BTreeSet::new()));
    let lossy = Rc::new(Cell::new(false));
    let keep = |said: &SaidLines, reading: Reading, number: usize, raw: &str| {
        if reading == Reading::Raw {
            let raw = raw.trim();
            return (!raw.is_empty()).then(|| LogLine {
                number,
                text: raw.to_owned(),
                unchecked: None,
            });
        }
        if reading == Reading::Lazily {
            let raw = raw.trim();
            if raw.starts_with('{') && !crate::json::surrogates::may_have_surrogates(raw) {
                return Some(LogLine {
                    number,
                    text: raw.to_owned(),
                    unchecked: Some(Rc::clone(said)),
                });
            }
        }
        match object_line(raw) {
            Some(Ok((text, replaced))) => {
                if replaced {
                    said.borrow_mut().insert((number, false));
                }
                Some(LogLine {
                    number,
                    text: text.into_owned(),
                    unchecked: None,
                })
            }
            Some(Err(())) => {
                said.borrow_mut().insert((number, true));
                None
            }
            None => None,
        }
    };
    let lines = |reading: Reading| -> Result<LogLines<'s>, ImportError> {
        let (left, lossy) = (Rc::clone(&said_lines), Rc::clone(&lossy));
        match source {
            LogSource::Text(text) => Ok(Box::new(
                text_of_lines(text)
                    .filter_map(move |(number, raw)| keep(&left, reading, number, raw).map(Ok)),
            )),
            LogSource::File(path) => {
                let file = std::fs::File::open(path).map_err(ImportError::Read)?;
                let lines = text_lines(io::BufReader::with_capacity(1 << 16, file));
                Ok(Box::new(lines.filter_map(move |line| match line {
                    Err(e) => Some(Err(ImportError::Read(e))),
                    Ok((number, raw, replaced)) => {
                        lossy.set(lossy.get() | replaced);
                        keep(&left, reading, number, &raw).map(Ok)
                    }
                })))
            }
        }
    };
    let mut imported = convert(&lines, out)?;
    let said = std::mem::take(&mut *said_lines.borrow_mut());
    imported
        .warnings
        .extend(said.into_iter().map(|(line, out)| match out {
            true => left_out(line),
            false => lone_surrogate(line),
        }));
    if let LogSource::File(_) = source {
        imported.lossy = lossy.get();
    }
    Ok(imported)
}
