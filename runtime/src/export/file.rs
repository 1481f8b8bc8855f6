//! The page of a session file, written without holding the session: the
//! file is read twice through the session reader's own line reader
//! ([`EntryReader`]), first for the tree and the totals, then for each entry
//! as it is written.

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::page::{self, EachEntry, Entries, Gathered, Outline};
use super::{ExportError, HtmlOptions};
use crate::custom::Registry;
use crate::session::skeleton::{Bone, Skeleton};
use crate::session::{Entry, EntryKind, EntryReader, LineText};
use crate::session::{SessionError, SessionFormat, SessionWarning, WarningKind};

/// A session file opened for its page: what the page needs of every entry
/// before it writes any (the tree, the totals, the title and the labels),
/// read in one pass that keeps none of the entries' messages.
/// [`write_html`](Self::write_html) reads the file again and writes each
/// entry's markup as it reads it.
///
/// Memory holds the longest line and a skeleton of each entry (its id, its
/// parent, its line number, a compaction's first kept id, and what the
/// page's tree holds of it: about 200 bytes), never the file: a session of any size is exported in the memory of its
/// tree. The page is the one [`html`](super::html) makes of
/// [`Session::open`](crate::Session::open) of the same file, byte for byte: the entries are read
/// by the reader `Session` reads with, and linked by the same rules.
///
/// An agentmsg transcript or a pi session file is read as it is. A Claude
/// Code log or a Codex rollout is converted one line at a time
/// ([`import_path`](crate::import::import_path)) in the first pass, the
/// transcript it converts to read as it is written and kept in an anonymous
/// temporary file (never in memory), which the second pass reads.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{export, Message, Session};
/// let mut session = Session::new();
/// session.append(Message::user("What is 2+2?").into()).unwrap();
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.jsonl");
/// session.save(&path).unwrap();
///
/// let file = export::FileExport::open(&path).unwrap();
/// assert_eq!(file.entry_count(), 1);
/// let mut page = Vec::new();
/// file.write_html(None, &export::HtmlOptions::default(), &mut page).unwrap();
/// let whole = export::html(&Session::open(&path).unwrap(), None, &export::HtmlOptions::default());
/// assert_eq!(String::from_utf8(page).unwrap(), whole.unwrap());
/// ```
pub struct FileExport {
    path: PathBuf,
    source: Source,
    /// Each entry's id, parent and line number, and a compaction's first
    /// kept id.
    skeleton: Skeleton,
    gathered: Gathered,
}

impl fmt::Debug for FileExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileExport")
            .field("path", &self.path)
            .field("format", &self.skeleton.format())
            .field("entries", &self.skeleton.bones().len())
            .finish_non_exhaustive()
    }
}

/// How the file's entries are read.
#[derive(Debug)]
enum Source {
    /// Its lines, the first `len` bytes (what the first pass read: a line
    /// appended since is left out).
    Lines { len: u64 },
    /// The transcript its importer wrote in the first pass, `len` bytes of
    /// an anonymous temporary file (converting the log again would double
    /// the time; a pass holds the lock).
    Imported { spool: Mutex<File>, len: u64 },
}

impl FileExport {
    /// Reads the session file at `path` (a regular file, read again by
    /// [`write_html`](Self::write_html)) for its page, decoding through the
    /// global registry.
    ///
    /// # Errors
    ///
    /// What [`Session::open`](crate::Session::open) fails with on the same file: it cannot be
    /// read, another agent's log cannot be converted, an id is taken twice,
    /// a `parentId` cycle.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SessionError> {
        let path = path.as_ref();
        let mut reader = EntryReader::new(Registry::global());
        let mut warnings = Vec::new();
        let mut entries = Vec::new();
        let mut gathered = Gathered::default();
        let mut each = |entry: Entry, _: &[u8]| {
            gathered.add(&entry);
            entries.push(Bone::of(&entry));
            Ok(())
        };
        let first = |e: ExportError| match e {
            ExportError::Session(e) => e,
            other => SessionError::Io(other.to_string()),
        };
        let detected = SessionFormat::detect(&crate::import::file_head(path)?);
        let (source, format) = match detected {
            SessionFormat::ClaudeCode | SessionFormat::Codex => {
                let mut spool =
                    BufWriter::with_capacity(1 << 16, tempfile::tempfile().map_err(spooled)?);
                let imported =
                    import_lines(path, &mut reader, &mut warnings, &mut each, &mut spool)
                        .map_err(first)?;
                let mut spool = spool.into_inner().map_err(|e| spooled(e.into_error()))?;
                let len = spool.stream_position().map_err(spooled)?;
                let said = imported.warnings.into_iter().map(|w| SessionWarning {
                    line: w.line,
                    kind: WarningKind::Imported(w),
                });
                warnings.splice(0..0, said);
                let spool = Mutex::new(spool);
                (Source::Imported { spool, len }, Some(detected))
            }
            _ => {
                let len = read_lines(File::open(path)?, &mut reader, &mut warnings, &mut each)
                    .map_err(first)?;
                (Source::Lines { len }, None)
            }
        };
        let skeleton = Skeleton::from_read(&reader, format, entries, warnings)?;
        Ok(Self {
            path: path.to_owned(),
            source,
            skeleton,
            gathered,
        })
    }

    /// The file's format.
    pub fn format(&self) -> SessionFormat {
        self.skeleton.format()
    }

    /// How many entries the file holds (as [`Session::entries`](crate::Session::entries) counts
    /// them).
    pub fn entry_count(&self) -> usize {
        self.skeleton.bones().len()
    }

    /// Whether an entry has the id `id`.
    pub fn has_entry(&self, id: &str) -> bool {
        self.skeleton.find(id).is_some()
    }

    /// What was read but is worth telling the user, as
    /// [`Session::warnings`](crate::Session::warnings) says it.
    pub fn warnings(&self) -> &[SessionWarning] {
        self.skeleton.warnings()
    }

    /// Writes the page with `leaf` chosen (the session's leaf when `None`)
    /// to `out`, reading the file again and writing each entry as it is
    /// read. Wrap a file in a [`BufWriter`](std::io::BufWriter).
    ///
    /// # Errors
    ///
    /// When `leaf` names no entry (before anything is written), when the
    /// file cannot be read again or no longer holds the entries the first
    /// reading found ([`ExportError::Changed`]), or when writing fails.
    pub fn write_html<W: Write>(
        &self,
        leaf: Option<&str>,
        options: &HtmlOptions,
        out: W,
    ) -> Result<(), ExportError> {
        let outline = Outline {
            path: self.skeleton.path_indexes(leaf)?,
            nodes: self.skeleton.bones(),
            format: self.skeleton.format(),
            gathered: &self.gathered,
        };
        page::write(&outline, &mut Reread(self), options, out)
    }
}

/// The file's entries read again, each given what the first reading
/// resolved (its id and parent, which a pi version 1 file has only as
/// migrated, and a compaction's first kept id).
struct Reread<'a>(&'a FileExport);

impl Entries for Reread<'_> {
    fn each(&mut self, each: &mut EachEntry<'_>) -> Result<(), ExportError> {
        let file = self.0;
        let known = file.skeleton.bones();
        let mut k = 0;
        let mut resolved = |mut entry: Entry, line: &[u8]| {
            let Some(skeleton) = known.get(k) else {
                return Err(ExportError::Changed);
            };
            let same_id = entry.id.is_none() || entry.id == skeleton.id;
            if entry.line_no != skeleton.line_no || !same_id {
                return Err(ExportError::Changed);
            }
            entry.id.clone_from(&skeleton.id);
            entry.declared.clone_from(&skeleton.declared);
            entry.parent = skeleton.parent;
            if let EntryKind::Compaction(c) = &mut entry.kind {
                c.first_kept_id = skeleton.first_kept.as_deref().cloned();
            }
            k += 1;
            each(&entry, line)
        };
        let mut reader = EntryReader::new(Registry::global());
        // Said by the first reading.
        let mut warnings = Vec::new();
        match &file.source {
            Source::Lines { len } => {
                let read = File::open(&file.path).map_err(SessionError::from)?;
                read_lines(read.take(*len), &mut reader, &mut warnings, &mut resolved)?;
            }
            Source::Imported { spool, len } => {
                // A pass that panicked left nothing a pass from the start
                // cannot read.
                let mut spool = spool
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let read_error = |e: io::Error| ExportError::Session(spooled(e));
                spool.rewind().map_err(read_error)?;
                let mut lines = LineWriter {
                    pending: Vec::new(),
                    number: 0,
                    at: 0,
                    failed: None,
                    line: &mut |number, start, bytes| {
                        read_line(
                            &mut reader,
                            number,
                            start,
                            bytes,
                            &mut warnings,
                            &mut resolved,
                        )
                    },
                };
                // Split as the first pass split what the importer wrote.
                let copied = io::copy(&mut (&mut *spool).take(*len), &mut lines);
                if let Some(e) = lines.failed.take() {
                    return Err(e);
                }
                copied.map_err(read_error)?;
                lines.finish()?;
            }
        }
        if k != known.len() {
            return Err(ExportError::Changed);
        }
        Ok(())
    }
}

/// What reads an entry: `each` is given it with its line's bytes.
type Each<'e> = dyn FnMut(Entry, &[u8]) -> Result<(), ExportError> + 'e;

/// Reads line `number` (`bytes`, at byte `start` of the text) with
/// `reader`, giving `each` every entry it holds with the bytes of its piece
/// of the line, until `each` fails.
fn read_line(
    reader: &mut EntryReader<'_>,
    number: usize,
    start: usize,
    bytes: &[u8],
    warnings: &mut Vec<SessionWarning>,
    each: &mut Each<'_>,
) -> Result<(), ExportError> {
    let mut failed = None;
    reader.line(number, start, bytes, warnings, |entry| {
        if failed.is_some() {
            return;
        }
        let piece = match entry.text {
            LineText::Span(from, to) => bytes
                .get(from.saturating_sub(start)..to.saturating_sub(start))
                .unwrap_or_default(),
            _ => &[],
        };
        if let Err(e) = each(entry, piece) {
            failed = Some(e);
        }
    });
    failed.map_or(Ok(()), Err)
}

/// Reads the lines of `input` (a byte-order mark at its start skipped, as
/// [`crate::lines`] says) into entries; the bytes read.
fn read_lines(
    input: impl Read,
    reader: &mut EntryReader<'_>,
    warnings: &mut Vec<SessionWarning>,
    each: &mut Each<'_>,
) -> Result<u64, ExportError> {
    let mut input = BufReader::with_capacity(1 << 16, input);
    let read_error = |e: io::Error| ExportError::Session(SessionError::from(e));
    let mut at = if crate::lines::skip_bom(&mut input).map_err(read_error)? {
        crate::lines::BOM.len()
    } else {
        0
    };
    let mut buf = Vec::new();
    let mut number = 0;
    while let Some(terminated) =
        crate::lines::read_line(&mut input, &mut buf).map_err(read_error)?
    {
        number += 1;
        read_line(reader, number, at, &buf, warnings, each)?;
        at += buf.len() + usize::from(terminated);
        // A line far longer than the others is not kept.
        if buf.capacity() > 1 << 20 && buf.len() < 1 << 16 {
            buf = Vec::new();
        }
    }
    Ok(at as u64)
}

/// Converts the log at `path` ([`import_path`](crate::import::import_path))
/// and reads the transcript it writes, a line at a time, into entries,
/// writing it to `copy` as well.
fn import_lines(
    path: &Path,
    reader: &mut EntryReader<'_>,
    warnings: &mut Vec<SessionWarning>,
    each: &mut Each<'_>,
    copy: &mut dyn Write,
) -> Result<crate::import::Imported, ExportError> {
    let mut lines = LineWriter {
        pending: Vec::new(),
        number: 0,
        at: 0,
        failed: None,
        line: &mut |number, start, bytes| read_line(reader, number, start, bytes, warnings, each),
    };
    let mut both = Tee {
        lines: &mut lines,
        copy,
        failed: None,
    };
    let imported = crate::import::import_path(path, &mut both);
    if let Some(e) = both.failed.take() {
        return Err(ExportError::Session(spooled(e)));
    }
    let imported = match (imported, lines.failed.take()) {
        (_, Some(e)) => return Err(e),
        (Ok(imported), None) => imported,
        (Err(e), None) => return Err(ExportError::Session(e.into())),
    };
    lines.finish()?;
    Ok(imported)
}

/// A failure to keep the converted transcript in its temporary file or to
/// read it back, said as that (not as a failure to read the log).
fn spooled(e: io::Error) -> SessionError {
    SessionError::Io(format!(
        "the converted transcript could not be kept in a temporary file: {e}"
    ))
}

/// A writer giving what is written to `lines`, and to `copy` (whose error
/// it keeps: the importer's own error would name the log).
struct Tee<'t, 'l> {
    lines: &'t mut LineWriter<'l>,
    copy: &'t mut dyn Write,
    failed: Option<io::Error>,
}

impl Write for Tee<'_, '_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if let Err(e) = self.copy.write_all(data) {
            let said = io::Error::new(e.kind(), e.to_string());
            self.failed = Some(e);
            return Err(said);
        }
        self.lines.write_all(data)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.copy.flush()
    }
}

/// A writer that splits what is written into lines as [`crate::lines`]
/// does (numbered from 1, each without its `\n`), giving each to `line`.
struct LineWriter<'l> {
    pending: Vec<u8>,
    number: usize,
    /// Where `pending` starts in the text.
    at: usize,
    /// What `line` failed with (the writer then fails).
    failed: Option<ExportError>,
    #[allow(clippy::type_complexity)]
    line: &'l mut dyn FnMut(usize, usize, &[u8]) -> Result<(), ExportError>,
}

impl LineWriter<'_> {
    /// Gives `line` the last line, when no `\n` ended it.
    fn finish(&mut self) -> Result<(), ExportError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.number += 1;
        let pending = std::mem::take(&mut self.pending);
        (self.line)(self.number, self.at, &pending)
    }
}

impl Write for LineWriter<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.failed.is_some() {
            return Err(io::Error::other("the page could not be written"));
        }
        let scanned = self.pending.len();
        self.pending.extend_from_slice(data);
        let mut from = 0;
        let mut search = scanned;
        while let Some(end) = memchr::memchr(b'\n', &self.pending[search..]) {
            let end = search + end;
            self.number += 1;
            if let Err(e) = (self.line)(self.number, self.at, &self.pending[from..end]) {
                self.failed = Some(e);
                return Err(io::Error::other("the page could not be written"));
            }
            self.at += end + 1 - from;
            from = end + 1;
            search = from;
        }
        self.pending.drain(..from);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
