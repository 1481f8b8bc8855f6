//! The one raw-line reader: how every reader of agentmsg (the
//! [`JsonlReader`](crate::JsonlReader), the session reader, the importers and
//! the `agentmsg` command) splits JSON Lines, under one rule:
//!
//! - lines are numbered from 1, every `\n` ending one (blank lines counted);
//! - a line's bytes are what lies before its `\n`; a `\r` before it (CRLF) is
//!   JSON whitespace, left to [`without_cr`] or to the JSON parser;
//! - a blank line holds only JSON whitespace (space, tab, `\r`)
//!   ([`is_blank`]); no reader reads it as an entry, and it keeps its number;
//! - a UTF-8 byte-order mark ([`BOM`]) at the start of the input
//!   starts no line;
//! - a last line with no `\n` after it may be torn by a crash
//!   ([`RawLine::terminated`], [`is_torn_line`](crate::transcript::is_torn_line));
//! - a line that holds several objects (an append that lost its newline) is
//!   split by [`split_glued_line`](crate::transcript::split_glued_line), and only when it
//!   does not read as one value.
//!
//! ```
//! use agentmsg_runtime::lines::raw_lines;
//! let text = b"\xEF\xBB\xBF{\"a\":1}\r\n\n{\"b\":2}";
//! let lines: Vec<_> = raw_lines(text).collect();
//! assert_eq!(lines.len(), 3);
//! assert_eq!(lines[0].bytes, b"{\"a\":1}\r");
//! assert!(lines[1].is_blank());
//! assert_eq!((lines[2].number, lines[2].terminated), (3, false));
//! ```

use std::io::{self, BufRead};

/// The UTF-8 byte-order mark: an encoding mark, never JSON, skipped where a
/// file (or, for [`JsonlReader`](crate::JsonlReader), a line) starts. The one
/// spelling of it.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line of a text, as [`raw_lines`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLine<'a> {
    /// Its number, from 1.
    pub number: usize,
    /// Where its bytes start in the text.
    pub start: usize,
    /// Its bytes, without the `\n` that ends it.
    pub bytes: &'a [u8],
    /// Whether a `\n` ends it (a last line without one may be torn).
    pub terminated: bool,
}

impl RawLine<'_> {
    /// Whether it holds only JSON whitespace.
    pub fn is_blank(&self) -> bool {
        is_blank(self.bytes)
    }
}

/// Whether `line` holds only JSON whitespace (space, tab, `\r`): a blank line.
/// A line of other spaces (U+00A0…) is not blank.
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// `line` without the `\r` of a CRLF ending.
pub fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The lines of `text`, a byte-order mark at its start skipped.
pub fn raw_lines(text: &[u8]) -> RawLines<'_> {
    let start = if text.starts_with(BOM) { BOM.len() } else { 0 };
    RawLines {
        text,
        at: start,
        number: 0,
    }
}

/// The iterator of [`raw_lines`].
#[derive(Debug, Clone)]
pub struct RawLines<'a> {
    text: &'a [u8],
    at: usize,
    number: usize,
}

impl<'a> Iterator for RawLines<'a> {
    type Item = RawLine<'a>;

    fn next(&mut self) -> Option<RawLine<'a>> {
        // Nothing after the last `\n`: no line more.
        let rest = self.text.get(self.at..).filter(|rest| !rest.is_empty())?;
        self.number += 1;
        let start = self.at;
        match memchr::memchr(b'\n', rest) {
            Some(end) => {
                self.at = start + end + 1;
                Some(RawLine {
                    number: self.number,
                    start,
                    bytes: &rest[..end],
                    terminated: true,
                })
            }
            None => {
                self.at = self.text.len() + 1;
                Some(RawLine {
                    number: self.number,
                    start,
                    bytes: rest,
                    terminated: false,
                })
            }
        }
    }
}

/// Reads the next line of `reader` into `buf` (cleared first), without its
/// `\n`: `None` at the end of the input, else whether a `\n` ended the line.
/// The streaming form of [`raw_lines`] (the caller skips a byte-order mark at
/// the start, as it knows where the input starts).
///
/// # Errors
/// What `reader` fails with.
pub fn read_line<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    buf.clear();
    if reader.read_until(b'\n', buf)? == 0 {
        return Ok(None);
    }
    let terminated = buf.last() == Some(&b'\n');
    if terminated {
        buf.pop();
    }
    Ok(Some(terminated))
}

/// Skips a byte-order mark at the start of `reader`; whether there was one.
///
/// # Errors
/// What `reader` fails with.
pub fn skip_bom<R: BufRead + ?Sized>(reader: &mut R) -> io::Result<bool> {
    let bom = reader.fill_buf()?.starts_with(BOM);
    if bom {
        reader.consume(BOM.len());
    }
    Ok(bom)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(text: &[u8]) -> Vec<(usize, &[u8], bool)> {
        raw_lines(text)
            .map(|l| (l.number, l.bytes, l.terminated))
            .collect()
    }

    #[test]
    fn every_newline_ends_a_line_and_a_last_one_may_be_unterminated() {
        assert_eq!(numbers(b""), []);
        assert_eq!(numbers(b"\n"), [(1, &b""[..], true)]);
        assert_eq!(
            numbers(b"a\nb"),
            [(1, &b"a"[..], true), (2, &b"b"[..], false)]
        );
        assert_eq!(
            numbers(b"a\n\nb\n"),
            [
                (1, &b"a"[..], true),
                (2, &b""[..], true),
                (3, &b"b"[..], true)
            ]
        );
        assert_eq!(numbers(b"\xEF\xBB\xBFa"), [(1, &b"a"[..], false)]);
        assert_eq!(numbers(b"\xEF\xBB\xBF"), []);
    }

    #[test]
    fn the_stream_reads_as_the_slice_does() {
        for text in [&b"a\r\n\n b \nc"[..], b"", b"\n\n", b"x"] {
            let mut reader = text;
            let mut buf = Vec::new();
            let mut streamed = Vec::new();
            while let Some(terminated) = read_line(&mut reader, &mut buf).unwrap() {
                streamed.push((buf.clone(), terminated));
            }
            let sliced: Vec<_> = raw_lines(text)
                .map(|l| (l.bytes.to_vec(), l.terminated))
                .collect();
            assert_eq!(streamed, sliced, "{:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn blank_is_json_whitespace_only() {
        assert!(is_blank(b" \t\r"));
        assert!(!is_blank("\u{a0}".as_bytes()));
        assert_eq!(without_cr(b"{}\r"), b"{}");
    }
}
