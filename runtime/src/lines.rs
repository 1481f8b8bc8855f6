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
//!   does not read as one value;
//! - a line longer than [`MAX_LINE`] (256 MiB) is an error naming it
//!   ([`LineTooLong`]), so no input (`/dev/zero`, a file of one endless line)
//!   takes more memory than that.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::lines::raw_lines;
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

/// The longest line a reader of agentmsg reads: 256 MiB, without its `\n`.
/// A transcript line that holds a large document inline (a 100 MB PDF is
/// about 134 MB of base64) fits; a longer one is no transcript line, and
/// [`read_line`] and [`read_to_end`] stop at it with [`LineTooLong`]
/// instead of holding it.
pub const MAX_LINE: usize = 256 << 20;

/// A line longer than the limit ([`MAX_LINE`]): what [`read_line`] and
/// [`read_to_end`] fail with, inside an [`io::Error`] of kind
/// [`InvalidData`](io::ErrorKind::InvalidData) (see
/// [`LineTooLong::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{}longer than {limit} bytes, the limit of a line (agentmsg::lines::MAX_LINE): not read further", match .line { Some(line) => format!("line {line}: "), None => String::new() })]
pub struct LineTooLong {
    /// The line's number, from 1, when the reader knows it ([`read_to_end`]
    /// does; [`read_line`] does not count lines).
    pub line: Option<usize>,
    /// The limit it passed.
    pub limit: usize,
}

impl LineTooLong {
    /// The [`LineTooLong`] inside `error`, if that is what it is.
    pub fn of(error: &io::Error) -> Option<&LineTooLong> {
        error.get_ref()?.downcast_ref()
    }

    /// This error with the number of the line it is about (from 1), as an
    /// [`io::Error`].
    #[must_use]
    pub fn at(self, line: usize) -> io::Error {
        LineTooLong {
            line: Some(line),
            ..self
        }
        .into()
    }
}

impl From<LineTooLong> for io::Error {
    fn from(e: LineTooLong) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }
}

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

/// `line` without the `\r` of a CRLF ending: what a program that reads lines
/// itself (by [`raw_lines`], or split at `\n`) compares or prints, so a file
/// written on Windows reads as the same lines.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::lines::{is_blank, raw_lines, without_cr};
///
/// let text = b"{\"role\":\"user\",\"content\":\"hi\"}\r\n \t\r\n";
/// let lines: Vec<_> = raw_lines(text).collect();
/// assert_eq!(without_cr(lines[0].bytes), br#"{"role":"user","content":"hi"}"#);
/// assert!(is_blank(lines[1].bytes) && !is_blank(lines[0].bytes));
/// ```
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
/// What `reader` fails with, and [`LineTooLong`] (without a line number, which
/// the caller gives with [`LineTooLong::at`]) for a line longer than
/// [`MAX_LINE`]: `buf` then holds its first `MAX_LINE` bytes at most.
pub fn read_line<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> io::Result<Option<bool>> {
    read_line_within(reader, buf, MAX_LINE)
}

/// [`read_line`] with the limit `limit`.
fn read_line_within<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    append_line(reader, buf, limit)
}

/// Appends the next line of `reader` to `out`, without its `\n`, stopping
/// with [`LineTooLong`] before the line passes `limit` bytes: the one
/// reading loop of [`read_line`] and [`read_to_end`].
fn append_line<R: BufRead + ?Sized>(
    reader: &mut R,
    out: &mut Vec<u8>,
    limit: usize,
) -> io::Result<Option<bool>> {
    let start = out.len();
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            // The end: a last line without `\n`, or none.
            return Ok((out.len() > start).then_some(false));
        }
        let (line, used, ended) = match memchr::memchr(b'\n', chunk) {
            Some(end) => (&chunk[..end], end + 1, true),
            None => (chunk, chunk.len(), false),
        };
        if out.len() - start + line.len() > limit {
            return Err(LineTooLong { line: None, limit }.into());
        }
        out.extend_from_slice(line);
        reader.consume(used);
        if ended {
            return Ok(Some(true));
        }
    }
}

/// Reads all of `reader` into `out` (appended), as `Read::read_to_end` does,
/// but stops with [`LineTooLong`] (naming the line) at a line longer than
/// [`MAX_LINE`]: the whole-input form of [`read_line`], for a reader that
/// needs all of a file at once. Lines are counted as [`raw_lines`] counts
/// them (a byte-order mark at the start is kept in `out`, not counted).
///
/// # Errors
/// What `reader` fails with, and [`LineTooLong`].
pub fn read_to_end<R: io::Read + ?Sized>(reader: &mut R, out: &mut Vec<u8>) -> io::Result<usize> {
    read_to_end_within(reader, out, MAX_LINE)
}

/// [`read_to_end`] with the limit `limit`: [`read_line`]'s loop, each line
/// appended with its `\n`.
fn read_to_end_within<R: io::Read + ?Sized>(
    reader: &mut R,
    out: &mut Vec<u8>,
    limit: usize,
) -> io::Result<usize> {
    let start = out.len();
    let mut reader = io::BufReader::with_capacity(64 << 10, reader);
    if skip_bom(&mut reader)? {
        out.extend_from_slice(BOM);
    }
    for line in 1.. {
        match append_line(&mut reader, out, limit) {
            Ok(Some(true)) => out.push(b'\n'),
            Ok(Some(false) | None) => break,
            Err(e) => {
                return Err(match LineTooLong::of(&e) {
                    Some(long) => long.at(line),
                    None => e,
                })
            }
        }
    }
    Ok(out.len() - start)
}

/// Skips a byte-order mark at the start of `reader`; whether there was one.
///
/// # Errors
/// What `reader` fails with.
pub fn skip_bom<R: BufRead + ?Sized>(reader: &mut R) -> io::Result<bool> {
    let bom = loop {
        match reader.fill_buf() {
            Ok(head) => break head.starts_with(BOM),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
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
    fn a_line_past_the_limit_is_an_error_and_no_more_is_held() {
        // Within the limit, to the byte, and with a `\n` after it.
        let text = b"abcd\nefgh";
        let mut reader = &text[..];
        let mut buf = Vec::new();
        assert_eq!(
            read_line_within(&mut reader, &mut buf, 4).unwrap(),
            Some(true)
        );
        assert_eq!(buf, b"abcd");
        assert_eq!(
            read_line_within(&mut reader, &mut buf, 4).unwrap(),
            Some(false)
        );
        assert_eq!(read_line_within(&mut reader, &mut buf, 4).unwrap(), None);
        // One byte more, read in small chunks: an error, and no more held.
        let mut reader = std::io::BufReader::with_capacity(2, &b"ab\nabcde\n"[..]);
        assert_eq!(
            read_line_within(&mut reader, &mut buf, 4).unwrap(),
            Some(true)
        );
        let error = read_line_within(&mut reader, &mut buf, 4).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            LineTooLong::of(&error),
            Some(&LineTooLong {
                line: None,
                limit: 4
            })
        );
        assert!(buf.len() <= 4);
        let error = LineTooLong::of(&error).unwrap().at(2);
        assert!(
            error.to_string().starts_with("line 2: longer than 4 bytes"),
            "{error}"
        );

        // An endless line (`/dev/zero`): an error, after at most the limit.
        let mut zeros = std::io::BufReader::new(std::io::repeat(0));
        assert!(read_line_within(&mut zeros, &mut buf, 1 << 16).is_err());
        assert!(buf.len() <= 1 << 16);
    }

    #[test]
    fn reading_to_the_end_names_the_line_past_the_limit() {
        let mut out = Vec::new();
        let n =
            read_to_end_within(&mut &b"\xEF\xBB\xBFabcd\nefgh\n\nijkl"[..], &mut out, 4).unwrap();
        assert_eq!(n, out.len());
        assert_eq!(&out[3..], b"abcd\nefgh\n\nijkl");
        for (text, line) in [
            (&b"abcde"[..], 1),
            (b"\xEF\xBB\xBFabcde", 1),
            (b"abc\n\nabcde\nab", 3),
            (b"a\nb\nc\nd\ne\nabcdef", 6),
        ] {
            let mut out = Vec::new();
            let error = read_to_end_within(&mut &text[..], &mut out, 4).unwrap_err();
            assert_eq!(
                LineTooLong::of(&error).and_then(|e| e.line),
                Some(line),
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        // An endless input of one line: the error, after the limit and a
        // chunk at most.
        let mut out = Vec::new();
        let error = read_to_end_within(&mut std::io::repeat(0), &mut out, 1 << 20).unwrap_err();
        assert!(LineTooLong::of(&error).is_some());
        assert!(out.len() <= (1 << 20) + (64 << 10));
    }

    #[test]
    fn blank_is_json_whitespace_only() {
        assert!(is_blank(b" \t\r"));
        assert!(!is_blank("\u{a0}".as_bytes()));
        assert_eq!(without_cr(b"{}\r"), b"{}");
    }
}
