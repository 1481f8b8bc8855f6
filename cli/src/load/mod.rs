//! Reading a transcript file so that every line keeps its number and its bytes,
//! and every problem found while decoding is reported against its line: a
//! whole file or array here, a stream one line at a time in `line_reader`.

mod line_reader;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use agentmsg_runtime::session::SessionFormat;
use agentmsg_runtime::{AgentMessage, Message};
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::diag::Diagnostic;
use crate::error::CliError;
use line_reader::decode;
pub(crate) use line_reader::LineReader;

/// The layout of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One object per line.
    Jsonl,
    /// One JSON array of objects.
    Array,
    /// One JSON object (a single message, pretty-printed).
    Object,
}

/// What a line turned out to be.
// Nearly every line is a message: boxing it would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Body {
    /// A message (an `Unknown` one included: it is kept byte for byte).
    Message(AgentMessage),
    /// Not a transcript line at all (not JSON, not an object, no `"role"`, not UTF-8).
    Undecodable,
    /// The last line, cut off mid-object by a crash.
    Torn,
}

/// One non-blank line (or array element) of the file.
#[derive(Debug)]
pub struct Line {
    /// The line number, from 1.
    pub number: usize,
    /// The blank lines just before it, byte for byte with their newlines (JSON
    /// Lines only), so a copy can keep them.
    pub gap: Vec<u8>,
    /// The exact bytes, without the newline (for an array element, its text with
    /// the whitespace between tokens removed, so that it fits on one line).
    pub raw: Vec<u8>,
    /// What it decoded to.
    pub body: Body,
    /// For an entry that shared its line with others (a write that lost its
    /// newline): its index among them, and how many there were.
    pub part: Option<(usize, usize)>,
}

impl Line {
    /// The message, when the line decoded to one.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.body {
            Body::Message(m) => Some(m),
            _ => None,
        }
    }

    /// What a line that was kept but not decoded says of tool calls, read from its
    /// JSON as far as it goes: an assistant line's calls (ids and names), or the
    /// call a tool result answers. `None` when it says neither.
    pub fn stand_in(&self) -> Option<Message> {
        match &self.body {
            Body::Message(message) if !message.is_unknown() => None,
            _ => agentmsg_runtime::transcript::kept_line_pairing(&self.raw),
        }
    }
}

/// A transcript file, read leniently.
#[derive(Debug)]
pub struct Loaded {
    /// How the file is laid out.
    pub format: Format,
    /// Its non-blank lines, in order.
    pub lines: Vec<Line>,
    /// Every problem met while decoding, in line order.
    pub diagnostics: Vec<Diagnostic>,
    /// The number of lines in the file (blank ones included).
    pub total_lines: usize,
    /// Whether the file starts with a UTF-8 byte-order mark (skipped when
    /// reading; a copy keeps it).
    pub bom: bool,
    /// The blank lines after the last line, byte for byte (JSON Lines only).
    pub trailing: Vec<u8>,
}

impl Loaded {
    /// The decoded messages with their line numbers.
    pub fn messages(&self) -> impl Iterator<Item = (usize, &AgentMessage)> + '_ {
        self.lines
            .iter()
            .filter_map(|l| l.message().map(|m| (l.number, m)))
    }
}

/// What the first lines of a file say about what it is, gathered while it is
/// read one line at a time.
#[derive(Debug, Default)]
pub struct Sniff {
    /// Whether a line decoded to a message that is not `Unknown`.
    transcript: bool,
    /// The first lines' bytes (a foreign log is known by its first entries).
    first: Vec<Vec<u8>>,
    /// How many non-blank lines were seen.
    lines: usize,
    /// Whether the first non-blank line starts an object that does not end on it.
    first_broken_object: bool,
    /// Whether a line holds `"parentId"` (the file is a session tree).
    parents: bool,
}

/// How many lines [`Sniff`] keeps to tell another agent's log: as many as
/// [`SessionFormat::detect`] probes.
const SNIFFED_LINES: usize = 50;

impl Sniff {
    /// Looks at the next line.
    pub fn add(&mut self, line: &Line) {
        if self.lines == 0 {
            // The start of an object that does not end on its line (a whole
            // object that is no message, such as another agent's entry, is
            // not the start of a pretty-printed one).
            let starts_object = line.raw.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
            self.first_broken_object = starts_object
                && !matches!(line.body, Body::Message(_))
                && serde_json::from_slice::<IgnoredAny>(&line.raw).is_err();
        }
        self.lines += 1;
        if line.message().is_some_and(|m| !m.is_unknown()) {
            self.transcript = true;
        }
        if !self.parents && memchr::memmem::find(&line.raw, b"\"parentId\"").is_some() {
            self.parents = true;
        }
        if self.first.len() < SNIFFED_LINES {
            self.first.push(line.raw.clone());
        }
    }

    /// Whether a line holds `"parentId"`: the file is a session tree, whose
    /// own problems only a read of the whole tree finds.
    pub fn names_parents(&self) -> bool {
        self.parents
    }

    /// Whether the first line starts an object that does not end on it.
    pub fn starts_broken(&self) -> bool {
        self.first_broken_object
    }

    /// Whether the file may be one message pretty-printed over several lines
    /// (its first line is the start of an object that does not end there),
    /// which only a read of the whole file can tell.
    pub fn may_be_one_pretty_object(&self) -> bool {
        self.first_broken_object && self.lines > 1
    }

    /// Another agent's log, when no line is a message and the first entries
    /// look like one ([`SessionFormat::detect`]).
    pub fn foreign(&self) -> Option<SessionFormat> {
        if self.transcript {
            return None;
        }
        match SessionFormat::detect(&self.first.join(&b'\n')) {
            SessionFormat::Agentmsg => None,
            format => Some(format),
        }
    }
}

/// Whether a file none of whose lines is a message is another agent's log.
pub fn foreign_log(loaded: &Loaded) -> Option<SessionFormat> {
    let mut sniff = Sniff::default();
    for line in &loaded.lines {
        sniff.add(line);
    }
    sniff.foreign()
}

/// A JSON Lines file opened to be read one line at a time; `None` for what is
/// read whole: standard input, anything that is not a regular file (a pipe, a
/// store's session), and a file that starts with `[` (a JSON array).
pub fn stream_file(path: &Path) -> Result<Option<LineReader<BufReader<File>>>, CliError> {
    if path.as_os_str() == "-" || !path.is_file() {
        return Ok(None);
    }
    let fail = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(fail)?;
    stream_reader(BufReader::with_capacity(1 << 20, file)).map_err(fail)
}

/// `reader` (at the start of a file) read one line at a time; `None` when the
/// file starts with `[` (a JSON array) or is all blank, which are read whole.
pub fn stream_reader<R: BufRead>(mut reader: R) -> std::io::Result<Option<LineReader<R>>> {
    // The first byte that is not a byte-order mark or whitespace.
    let head = reader.fill_buf()?;
    let head = head
        .strip_prefix(agentmsg_runtime::lines::BOM)
        .unwrap_or(head);
    match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') | None => Ok(None),
        Some(_) => Ok(Some(LineReader::at_file_start(reader))),
    }
}

/// Reads a transcript from memory.
pub fn load_bytes(bytes: &[u8]) -> Loaded {
    let (bom, bytes) = match bytes.strip_prefix(agentmsg_runtime::lines::BOM) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    let mut loaded = load_body(bytes);
    loaded.bom = bom;
    loaded
}

fn load_body(bytes: &[u8]) -> Loaded {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        match load_array(bytes) {
            Ok(loaded) => return loaded,
            // Not one whole array (JSON Lines whose first line is an array, an
            // array cut off mid-write): read it line by line, so that every good
            // line is decoded and every other one kept.
            Err(why) => {
                let mut loaded = load_jsonl(bytes);
                loaded.diagnostics.insert(0, why);
                return loaded;
            }
        }
    }
    let loaded = load_jsonl(bytes);
    // One message pretty-printed over several lines (a `.json` file of one
    // message): read it as an array of one.
    let first_line_broken = loaded
        .lines
        .first()
        .is_some_and(|l| !matches!(l.body, Body::Message(_)));
    if first == Some(&b'{') && first_line_broken && loaded.lines.len() > 1 {
        if let Ok(text) = std::str::from_utf8(bytes) {
            if serde_json::from_str::<&RawValue>(text).is_ok() {
                let mut wrapped = Vec::with_capacity(bytes.len() + 2);
                wrapped.push(b'[');
                wrapped.extend_from_slice(bytes);
                wrapped.push(b']');
                if let Ok(mut single) = load_array(&wrapped) {
                    single.format = Format::Object;
                    single.total_lines = loaded.total_lines;
                    return single;
                }
            }
        }
    }
    loaded
}

fn load_jsonl(bytes: &[u8]) -> Loaded {
    let mut reader = LineReader::new(bytes);
    let mut lines = Vec::new();
    let mut diagnostics = Vec::new();
    // Reading from memory cannot fail.
    while let Ok(Some(line)) = reader.next_line(&mut diagnostics) {
        lines.push(line);
    }
    Loaded {
        format: Format::Jsonl,
        lines,
        diagnostics,
        total_lines: reader.total_lines(),
        bom: false,
        trailing: reader.trailing().to_vec(),
    }
}

/// Reads a file that is one JSON array; why not, when it is not one.
fn load_array(bytes: &[u8]) -> Result<Loaded, Diagnostic> {
    let total_lines = bytes.split(|b| *b == b'\n').count();
    let mut loaded = Loaded {
        format: Format::Array,
        lines: Vec::new(),
        diagnostics: Vec::new(),
        total_lines,
        bom: false,
        trailing: Vec::new(),
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Diagnostic::warning(
            line_of(bytes, e.valid_up_to()),
            "not-an-array",
            "the file starts with `[` but is not UTF-8, so not a JSON array; read as JSON Lines",
        )
    })?;
    let elements: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| {
        Diagnostic::warning(
            e.line().max(1),
            "not-an-array",
            format!("the file starts with `[` but is not a JSON array ({e}); read as JSON Lines"),
        )
    })?;
    if let Some(other) = elements.iter().find(|e| !e.get().starts_with('{')) {
        return Err(Diagnostic::warning(
            line_of(
                bytes,
                (other.get().as_ptr() as usize).saturating_sub(text.as_ptr() as usize),
            ),
            "not-an-array",
            "the file is a JSON array, but not of objects; read as JSON Lines",
        ));
    }
    for element in elements {
        let offset = (element.get().as_ptr() as usize)
            .saturating_sub(text.as_ptr() as usize)
            .min(bytes.len());
        let number = line_of(bytes, offset);
        let body = decode(element.get(), number, &mut loaded.diagnostics);
        loaded.lines.push(Line {
            number,
            gap: Vec::new(),
            // An element of a parsed array is one JSON value: on one line.
            raw: agentmsg_runtime::message::RawJson::from_json(element.get())
                .map_or_else(|_| element.get().into(), |raw| raw.get().into()),
            body,
            part: None,
        });
    }
    Ok(loaded)
}

/// The 1-based line of byte `offset`.
fn line_of(bytes: &[u8], offset: usize) -> usize {
    bytes
        .get(..offset)
        .map_or(0, |b| b.iter().filter(|c| **c == b'\n').count())
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_and_finds_a_torn_tail() {
        let text = b"{\"role\":\"user\",\"content\":\"hi\"}\n\n{\"role\":\"notice\",\"text\":\"x\"}\nnot json\n{\"role\":\"user\",\"con";
        let loaded = load_bytes(text);
        assert_eq!(loaded.total_lines, 5);
        let numbers: Vec<usize> = loaded.lines.iter().map(|l| l.number).collect();
        assert_eq!(numbers, [1, 3, 4, 5]);
        assert!(matches!(loaded.lines[3].body, Body::Torn));
        assert!(matches!(loaded.lines[2].body, Body::Undecodable));
        let codes: Vec<(usize, &str)> = loaded
            .diagnostics
            .iter()
            .map(|d| (d.line, d.code))
            .collect();
        assert_eq!(
            codes,
            [(3, "unknown-kind"), (4, "undecodable"), (5, "torn-line")]
        );
    }

    #[test]
    fn a_complete_last_line_without_newline_is_not_torn() {
        let loaded = load_bytes(b"{\"role\":\"user\",\"content\":\"hi\"}");
        assert!(loaded.diagnostics.is_empty());
        assert_eq!(loaded.lines.len(), 1);
    }

    #[test]
    fn array_elements_get_the_line_they_start_on() {
        let text = "[\n  {\"role\": \"user\", \"content\": \"a b\"},\n\n  {\"role\": \"assistant\",\n   \"content\": 5}\n]";
        let loaded = load_bytes(text.as_bytes());
        assert_eq!(loaded.format, Format::Array);
        assert_eq!(loaded.lines[0].number, 2);
        assert_eq!(loaded.lines[1].number, 4);
        assert_eq!(
            loaded.lines[0].raw,
            b"{\"role\":\"user\",\"content\":\"a b\"}"
        );
        assert_eq!(loaded.diagnostics.len(), 1);
        assert_eq!(loaded.diagnostics[0].line, 4);
        assert_eq!(loaded.diagnostics[0].code, "invalid-message");
    }

    #[test]
    fn a_torn_array_is_read_as_lines_and_kept() {
        let loaded = load_bytes(b"[\n{\"role\":\"user\",\"content\":\"hi\"},\n{\"role\":\"us");
        assert_eq!(loaded.format, Format::Jsonl);
        assert_eq!(loaded.lines.len(), 3);
        let codes: Vec<(usize, &str)> = loaded
            .diagnostics
            .iter()
            .map(|d| (d.line, d.code))
            .collect();
        assert_eq!(
            codes,
            [
                (3, "not-an-array"),
                (1, "undecodable"),
                (2, "undecodable"),
                (3, "torn-line")
            ]
        );
        let loaded = load_bytes(b"[1, {\"role\":\"user\",\"content\":\"hi\"}]");
        assert_eq!(loaded.lines.len(), 1);
        assert_eq!(loaded.diagnostics[0].code, "not-an-array");
        assert_eq!(loaded.diagnostics[1].code, "undecodable");
    }

    #[test]
    fn a_single_pretty_printed_object_is_one_message() {
        let loaded = load_bytes(b"{\n  \"role\": \"user\",\n  \"content\": \"hi\"\n}\n");
        assert_eq!(loaded.format, Format::Object);
        assert_eq!(loaded.total_lines, 4);
        assert_eq!(loaded.lines.len(), 1);
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        assert_eq!(
            loaded.lines[0].raw,
            b"{\"role\":\"user\",\"content\":\"hi\"}"
        );
    }
}
