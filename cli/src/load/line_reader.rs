//! Reading a JSON Lines transcript one line at a time: each non-blank line
//! keeps its number and its bytes, and every problem found while decoding it
//! is reported against its line. Memory holds one line (and the blank lines
//! before it), so a file of any size is read in the space of its longest line.

use std::io::{self, BufRead};

use agentmsg_runtime::custom::Registry;
use agentmsg_runtime::transcript::{decode_line, is_torn_line, DecodeMode, UnknownReason};
use agentmsg_runtime::{lines, AgentMessage};
use serde::de::IgnoredAny;

use super::{Body, Line};
use crate::diag::Diagnostic;

/// Reads the lines of a JSON Lines transcript from `R`, one at a time.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
    /// The number of the last line read.
    number: usize,
    /// Blank lines read since the last non-blank one, byte for byte.
    gap: Vec<u8>,
    /// The entries of a line that held several, not yet handed out.
    pending: std::collections::VecDeque<Line>,
    /// Whether the byte-order mark at the start was looked for.
    started: bool,
    /// Whether the input started with a byte-order mark (skipped).
    bom: bool,
}

impl<R: BufRead> LineReader<R> {
    /// A reader at the start of `reader`, whose bytes are all lines.
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buf: Vec::new(),
            number: 0,
            gap: Vec::new(),
            pending: std::collections::VecDeque::new(),
            started: true,
            bom: false,
        }
    }

    /// A reader at the start of a file: a UTF-8 byte-order mark there is
    /// skipped.
    pub fn at_file_start(reader: R) -> Self {
        Self {
            started: false,
            ..Self::new(reader)
        }
    }

    /// The next non-blank line (or entry of a line that held several), with
    /// what is wrong with it pushed onto `diagnostics`; `None` at the end.
    pub fn next_line(&mut self, diagnostics: &mut Vec<Diagnostic>) -> io::Result<Option<Line>> {
        loop {
            if let Some(line) = self.pending.pop_front() {
                return Ok(Some(line));
            }
            // Lines by the runtime's one rule (`agentmsg_runtime::lines`).
            if !self.started {
                self.started = true;
                self.bom = lines::skip_bom(&mut self.reader)?;
            }
            let read = lines::read_line(&mut self.reader, &mut self.buf);
            // A line past the limit: the error names it.
            let read = read.map_err(|e| match lines::LineTooLong::of(&e) {
                Some(long) => long.at(self.number + 1),
                None => e,
            });
            let Some(terminated) = read? else {
                return Ok(None);
            };
            self.number += 1;
            let piece = self.buf.as_slice();
            if lines::is_blank(piece) {
                self.gap.extend_from_slice(piece);
                if terminated {
                    self.gap.push(b'\n');
                }
                continue;
            }
            let gap = std::mem::take(&mut self.gap);
            read_piece(
                self.number,
                piece,
                !terminated,
                gap,
                &mut self.pending,
                diagnostics,
            );
        }
    }

    /// Whether the input started with a UTF-8 byte-order mark (skipped).
    pub fn bom(&self) -> bool {
        self.bom
    }

    /// How many lines were read (blank ones included).
    pub fn total_lines(&self) -> usize {
        self.number
    }

    /// The blank lines after the last non-blank one, byte for byte (once the
    /// last line was read).
    pub fn trailing(&self) -> &[u8] {
        &self.gap
    }
}

/// Reads one non-blank line, `number`, into `out` (one entry, or several when
/// a write lost its newline).
fn read_piece(
    number: usize,
    piece: &[u8],
    unterminated: bool,
    gap: Vec<u8>,
    out: &mut std::collections::VecDeque<Line>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let trimmed = lines::without_cr(piece);
    // A line that is no message: kept whole, with what is wrong with it.
    let keep = |out: &mut std::collections::VecDeque<Line>, body: Body, gap: Vec<u8>| {
        out.push_back(Line {
            number,
            gap,
            raw: piece.to_vec(),
            body,
            part: None,
        });
    };
    // Cut off inside a character or a value: a torn write, not bad text.
    if unterminated && is_torn_line(piece) {
        diagnostics.push(torn_diagnostic(number, piece.len()));
        keep(out, Body::Torn, gap);
        return;
    }
    let text = match std::str::from_utf8(trimmed) {
        Ok(text) => text,
        Err(e) => {
            let at = e.valid_up_to() + 1;
            let why = format!("not UTF-8 (invalid byte at column {at})");
            diagnostics.push(Diagnostic::error(number, "not-utf8", why));
            keep(out, Body::Undecodable, gap);
            return;
        }
    };
    let mut found = Vec::new();
    let body = decode(text, number, &mut found);
    if matches!(body, Body::Undecodable) {
        let text = text.trim_end_matches([' ', '\t', '\r']);
        if let Some(parts) = agentmsg_runtime::transcript::split_glued_line(text) {
            let parts: Vec<&str> = parts.into_iter().filter_map(|r| text.get(r)).collect();
            diagnostics.push(Diagnostic::warning(
                number,
                "lost-newline",
                format!(
                    "{} entries on one line ({}): a write that lost its newline; read as {} lines",
                    parts.len(),
                    if serde_json::from_str::<IgnoredAny>(parts[0]).is_ok() {
                        "whole objects back to back"
                    } else {
                        "a fragment cut off by a crash, then a whole line"
                    },
                    parts.len()
                ),
            ));
            let count = parts.len();
            let mut gap = Some(gap);
            for (index, part) in parts.into_iter().enumerate() {
                let body = decode(part, number, diagnostics);
                out.push_back(Line {
                    number,
                    gap: gap.take().unwrap_or_default(),
                    raw: part.as_bytes().to_vec(),
                    body,
                    part: Some((index, count)),
                });
            }
            return;
        }
    }
    diagnostics.append(&mut found);
    keep(out, body, gap);
}

fn torn_diagnostic(number: usize, bytes: usize) -> Diagnostic {
    Diagnostic::error(
        number,
        "torn-line",
        format!(
            "torn last line: {bytes} bytes cut off with no newline (a crash during a write); every line before it was read"
        ),
    )
}

pub(crate) fn decode(text: &str, number: usize, diagnostics: &mut Vec<Diagnostic>) -> Body {
    match decode_line(text, Registry::global(), DecodeMode::Lenient) {
        Ok(AgentMessage::Unknown(unknown)) => {
            // A line of an unclaimed kind is kept unparsed; a checker parses it.
            if let Err(e) = unknown.validate() {
                diagnostics.push(Diagnostic::error(number, "undecodable", e.to_string()));
                return Body::Undecodable;
            }
            let kind = unknown.kind();
            let diagnostic = match unknown.reason() {
                UnknownReason::UnknownKind => Diagnostic::warning(
                    number,
                    "unknown-kind",
                    format!("unknown kind `{kind}`: no registered type claims it; kept as is"),
                ),
                UnknownReason::NewerVersion { found, supported } => Diagnostic::warning(
                    number,
                    "newer-version",
                    format!(
                        "kind `{kind}` version {found} is newer than this build reads ({supported}); kept as is"
                    ),
                ),
                UnknownReason::AmbiguousKind { first, second } => Diagnostic::warning(
                    number,
                    "ambiguous-kind",
                    format!("kind `{kind}` is claimed by both `{first}` and `{second}`; kept as is"),
                ),
                UnknownReason::Invalid { error } => Diagnostic::error(
                    number,
                    "invalid-message",
                    format!("`{kind}` line does not decode: {error}"),
                ),
                UnknownReason::Migration { from, error } => Diagnostic::error(
                    number,
                    "migration-failed",
                    format!("`{kind}` line: migration from version {from} failed: {error}"),
                ),
                other => Diagnostic::error(number, "undecodable", other.to_string()),
            };
            diagnostics.push(diagnostic);
            Body::Message(AgentMessage::Unknown(unknown))
        }
        Ok(message) => Body::Message(message),
        Err(e) => {
            diagnostics.push(Diagnostic::error(number, "undecodable", e.to_string()));
            Body::Undecodable
        }
    }
}
