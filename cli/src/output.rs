//! Standard output and standard error that a closed pipe does not stop.
//!
//! `agentmsg check … | head` closes the pipe early. Like other Unix tools, the
//! command then writes nothing more and says nothing of it; unlike a command
//! killed by `SIGPIPE`, it still finishes its work, so its exit code tells what
//! it found (`check` exits 1 when a file has errors, whether or not anybody read
//! the report).

use std::io::{self, Write};

/// A writer that turns a closed pipe into a sink.
#[derive(Debug)]
pub struct Output<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Output<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            closed: false,
        }
    }
}

impl<W: Write> Write for Output<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// Standard output, locked.
pub fn stdout() -> Output<io::StdoutLock<'static>> {
    Output::new(io::stdout().lock())
}

/// Standard error, locked.
pub fn stderr() -> Output<io::StderrLock<'static>> {
    Output::new(io::stderr().lock())
}

/// Writes a line to standard error, its control characters escaped
/// ([`escape_controls`]: what it says of a transcript, a kind, a model, a
/// tool's name, cannot act on the terminal); a failure to write it is ignored
/// (there is nowhere left to report it), never a panic as with `eprintln!`.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let _ = writeln!(
            $crate::output::stderr(),
            "{}",
            $crate::output::escape_controls(&line)
        );
    }};
}
pub(crate) use note;

/// `text` with what a terminal would act on made visible: control characters
/// (C0 but newline, DEL, C1) and the bidirectional overrides that reorder
/// what is shown are written as `\u{…}` escapes, so a transcript's text (a
/// session name, a message) cannot clear the screen, move the cursor, set a
/// title or forge a table row.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    fn is_control(c: char) -> bool {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    }
    if !text.chars().any(is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_control(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A path or store address as the command shows it: a password in it
/// redacted, control characters escaped.
pub fn shown(path: impl AsRef<std::path::Path>) -> String {
    let text = path.as_ref().to_string_lossy();
    escape_controls(&agentmsg_runtime::store::redact_passwords(&text)).into_owned()
}

/// Creates (or truncates) the file `output` for a copy of `input`: a file
/// that exists keeps its mode, a new one takes the input's (a transcript may
/// hold secrets: a 0600 source gives a 0600 copy), and a copy of standard
/// input or of a store's session is 0600.
pub fn create_like(
    output: &std::path::Path,
    input: &std::path::Path,
) -> std::io::Result<std::fs::File> {
    let like = permissions_like(output, input);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(output)?;
    if let Some(like) = like {
        file.set_permissions(like)?;
    }
    Ok(file)
}

/// The permissions a copy of `input` written to `output` takes: those of the
/// file it replaces, else the input's when it is a regular file; `None` (keep
/// the new file private, 0600) for standard input or a store's session.
pub fn permissions_like(
    output: &std::path::Path,
    input: &std::path::Path,
) -> Option<std::fs::Permissions> {
    std::fs::metadata(output)
        .ok()
        .or_else(|| std::fs::metadata(input).ok().filter(|m| m.is_file()))
        .map(|m| m.permissions())
}

#[cfg(test)]
mod tests {
    use super::{escape_controls, shown};

    #[test]
    fn controls_are_escaped_and_passwords_hidden() {
        assert_eq!(escape_controls("plain é"), "plain é");
        assert_eq!(escape_controls("\u{1b}[2Jx\u{7}"), "\\u{1b}[2Jx\\u{7}");
        assert_eq!(
            escape_controls("a\tb\u{9b}c\u{202e}"),
            "a\\u{9}b\\u{9b}c\\u{202e}"
        );
        assert_eq!(
            shown("postgres://u:secret@h/db#s"),
            "postgres://u:***@h/db#s"
        );
    }
}
