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

/// Writes a line to standard error; a failure to write it is ignored (there is
/// nowhere left to report it), never a panic as with `eprintln!`.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::output::stderr(), $($arg)*);
    }};
}
pub(crate) use note;
