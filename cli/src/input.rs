//! What a command reads: a file, standard input (`-`) or a store's session
//! (`sqlite:PATH#ID`, `postgres://…#ID`, `DIR#ID`), as bytes or as a
//! [`Session`] of any format the library reads (an agentmsg transcript, a pi
//! session, a Claude Code log or a Codex rollout: [`SessionFormat::detect`]);
//! and the arguments that name inputs (`--api`).
//! `stats`, `check` and `project` read such files as the context of a leaf.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use agentmsg_runtime::providers::{Api, UnknownApi};
use agentmsg_runtime::session::SessionFormat;
use agentmsg_runtime::store::{
    AnyStore, Cursor, EntryProblem, SessionStore, StoreAddress, StoreError,
};
use agentmsg_runtime::Session;

use crate::diag::{unsent_diagnostic, warning_diagnostic, Diagnostic};
use crate::error::CliError;
use crate::load::{Body, Format, Line, LineReader, Loaded};
use crate::output::escape_controls;

/// A session read from a file, with what was said while reading it.
pub struct Opened {
    /// The session.
    pub session: Session,
}

impl Opened {
    /// Says on standard error what was found while reading it: the import's
    /// problems and the session's warnings, against `file`.
    pub fn report(&self, file: &str) {
        for w in self.session.warnings() {
            crate::output::note!("{}", warning_diagnostic(w).render(&file));
        }
    }
}

/// A session error as a usage-level error naming the file.
fn session_error(path: &Path, e: agentmsg_runtime::session::SessionError) -> CliError {
    CliError::Session(format!("{}: {e}", crate::output::shown(path)))
}

/// Opens the session file at `path` (`-`: standard input).
pub fn open(path: &Path) -> Result<Opened, CliError> {
    let bytes = crate::input::read_input(path)?;
    open_bytes(path, &bytes)
}

/// Opens only the path to `leaf` (the last entry when `None`) of the session
/// file at `path`, in the memory of that path ([`Session::open_path`]), when
/// it is a file agentmsg reads in two passes: an agentmsg transcript or a pi
/// session, JSON Lines. `None` for what must be read whole: standard input,
/// anything that is not a regular file, a JSON array, another agent's log.
pub fn open_leaf(path: &Path, leaf: Option<&str>) -> Result<Option<Opened>, CliError> {
    let Some(head) = file_head(path)? else {
        return Ok(None);
    };
    let array = head
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'[');
    let format = SessionFormat::detect(&head);
    if array || !matches!(format, SessionFormat::Agentmsg | SessionFormat::Pi { .. }) {
        return Ok(None);
    }
    let session = Session::open_path(path, leaf).map_err(|e| session_error(path, e))?;
    Ok(Some(Opened { session }))
}

/// Whether `path` names a regular file (which can be read more than once),
/// not standard input (`-`), a pipe or a directory.
pub fn is_regular_file(path: &Path) -> bool {
    path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The first 64 kB of the regular file at `path`, up to its last whole line:
/// enough to tell who wrote it. `None` when `path` is no regular file.
pub fn file_head(path: &Path) -> Result<Option<Vec<u8>>, CliError> {
    if !is_regular_file(path) {
        return Ok(None);
    }
    let read_error = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    let mut head = Vec::with_capacity(1 << 16);
    File::open(path)
        .map_err(read_error)?
        .take(1 << 16)
        .read_to_end(&mut head)
        .map_err(read_error)?;
    if let Some(end) = head.iter().rposition(|&b| b == b'\n') {
        head.truncate(end + 1);
    }
    Ok(Some(head))
}

/// Opens a session from its bytes.
pub fn open_bytes(path: &Path, bytes: &[u8]) -> Result<Opened, CliError> {
    let session = Session::read(bytes).map_err(|e| session_error(path, e))?;
    Ok(Opened { session })
}

/// What a command reads of a session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `check`: a leaf's context for another agent's log or with `--leaf`;
    /// every line of a transcript otherwise (with the tree's warnings).
    Check,
    /// `stats`: every message of another agent's log (all branches, what was
    /// compacted too: what was spent), a leaf's context with `--leaf`, every
    /// line of a transcript otherwise.
    Stats,
    /// `project`: the leaf's context of anything that is a session (another
    /// agent's log, a transcript with `parentId` or a compaction), every line
    /// of a plain transcript.
    Project,
}

fn contains(bytes: &[u8], needle: &[u8]) -> bool {
    bytes.windows(needle.len()).any(|w| w == needle)
}

/// The context of `leaf` (the session's leaf when `None`) as a loaded
/// transcript: one line per message, numbered by the entry's line; with
/// `every`, every message entry of the session instead, in file order.
pub fn load_context(
    path: &Path,
    bytes: &[u8],
    leaf: Option<&str>,
    every: bool,
) -> Result<Loaded, CliError> {
    let total_lines = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    context_loaded(path, open_bytes(path, bytes)?, leaf, every, total_lines)
}

/// [`load_context`] of an opened session, from a file of `total_lines`.
fn context_loaded(
    path: &Path,
    opened: Opened,
    leaf: Option<&str>,
    every: bool,
    total_lines: usize,
) -> Result<Loaded, CliError> {
    let session = &opened.session;
    let context = if every {
        let mut all = agentmsg_runtime::session::SessionContext::default();
        for entry in session.entries() {
            if let Some(message) = entry.message() {
                all.messages
                    .push(agentmsg_runtime::session::ContextMessage::Entry(message));
                all.entry_ids.push(entry.id().cloned());
            }
        }
        all
    } else {
        session.context(leaf).map_err(|e| session_error(path, e))?
    };
    let mut diagnostics: Vec<Diagnostic> =
        session.warnings().iter().map(warning_diagnostic).collect();
    let mut lines = Vec::with_capacity(context.messages.len());
    for (message, id) in context.messages.into_iter().zip(&context.entry_ids) {
        let number = id
            .as_ref()
            .and_then(|id| session.entry(id.as_str()))
            .map_or(0, |e| e.line_no());
        if let Some(d) = unsent_diagnostic(&message, number) {
            diagnostics.push(d);
        }
        let raw = message
            .to_line()
            .map(String::into_bytes)
            .unwrap_or_default();
        lines.push(Line {
            number,
            gap: Vec::new(),
            raw,
            body: Body::Message(message.into_owned()),
            part: None,
        });
    }
    Ok(Loaded {
        format: Format::Jsonl,
        lines,
        diagnostics,
        total_lines,
        bom: false,
        trailing: Vec::new(),
    })
}

/// A transcript to read one line at a time for `stats` and `check`: `None`
/// (read it whole with [`load_file_at`]) for standard input, a `--leaf`, a
/// JSON array, and a file whose first line is not a transcript line (another
/// agent's log).
pub fn stream_transcript(
    path: &Path,
    leaf: Option<&str>,
) -> Result<Option<LineReader<BufReader<File>>>, CliError> {
    if leaf.is_some() {
        return Ok(None);
    }
    let Some(reader) = crate::load::stream_file(path)? else {
        return Ok(None);
    };
    // Who wrote the file, by the library's one rule over its head (a Claude
    // Code log may start with entries, such as `file-history-snapshot`,
    // that tell nothing). A head without a whole line (a first line longer
    // than it) is read whole, where the rule sees the whole file.
    let head = file_head(path)?.unwrap_or_default();
    if head.is_empty() && std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
        return Ok(None);
    }
    match SessionFormat::detect(&head) {
        SessionFormat::Agentmsg => Ok(Some(reader)),
        _ => Ok(None),
    }
}

/// The problems of the session tree in `path` (a cycle or a duplicate id is an
/// error, a missing parent a warning), as [`load_file_at`] reports them.
pub fn tree_diagnostics(path: &Path) -> Result<Vec<Diagnostic>, CliError> {
    let bytes = crate::input::read_input(path)?;
    Ok(match Session::read(&bytes) {
        Ok(session) => session.warnings().iter().map(warning_diagnostic).collect(),
        Err(e) => vec![Diagnostic::error(0, "session", e.to_string())],
    })
}

/// What one pass over a file found: its lines, and whether it is a session
/// (a line names its parent, or is a compaction).
struct Scan {
    lines: usize,
    session: bool,
}

/// Scans the file at `path` one line at a time; `None` when it is no regular
/// file.
fn scan(path: &Path) -> Result<Option<Scan>, CliError> {
    if !is_regular_file(path) {
        return Ok(None);
    }
    let read_error = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path).map_err(read_error)?);
    let mut scan = Scan {
        lines: 0,
        session: false,
    };
    let mut line = Vec::new();
    loop {
        if agentmsg_runtime::lines::read_line(&mut reader, &mut line)
            .map_err(read_error)?
            .is_none()
        {
            return Ok(Some(scan));
        }
        scan.lines += 1;
        if !scan.session
            && (memchr::memmem::find(&line, b"\"parentId\"").is_some()
                || memchr::memmem::find(&line, b"\"compactionSummary\"").is_some())
        {
            scan.session = true;
        }
    }
}

/// Reads `path` for `stats`, `check` and `project` (see [`Purpose`]).
pub fn load_file_at(path: &Path, leaf: Option<&str>, purpose: Purpose) -> Result<Loaded, CliError> {
    // The context of a leaf of a session file is read along its path only.
    if purpose == Purpose::Project || leaf.is_some() {
        if let Some(scan) = scan(path)?.filter(|s| s.session || leaf.is_some()) {
            if let Some(opened) = open_leaf(path, leaf)? {
                return context_loaded(path, opened, leaf, false, scan.lines);
            }
        }
    }
    let (bytes, store) = crate::input::read_input_with(path)?;
    let mut loaded = load_bytes_at(path, &bytes, leaf, purpose)?;
    if !store.is_empty() {
        loaded.diagnostics.extend(store);
        loaded.diagnostics.sort_by_key(|d| d.line);
    }
    Ok(loaded)
}

/// [`load_file_at`] of a file's bytes.
fn load_bytes_at(
    path: &Path,
    bytes: &[u8],
    leaf: Option<&str>,
    purpose: Purpose,
) -> Result<Loaded, CliError> {
    let foreign = SessionFormat::detect(bytes) != SessionFormat::Agentmsg;
    let tree = contains(bytes, b"\"parentId\"");
    // A JSON array is a transcript, read as a whole.
    let array = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'[');
    match purpose {
        _ if array => Ok(crate::load::load_bytes(bytes)),
        _ if leaf.is_some() => load_context(path, bytes, leaf, false),
        Purpose::Project if foreign || tree || contains(bytes, b"\"compactionSummary\"") => {
            load_context(path, bytes, None, false)
        }
        Purpose::Check | Purpose::Stats if foreign => {
            load_context(path, bytes, None, purpose == Purpose::Stats)
        }
        _ => {
            let mut loaded = crate::load::load_bytes(bytes);
            if tree {
                // The tree's own problems: a cycle or a duplicate id is an
                // error, a missing parent a warning.
                match Session::read(bytes) {
                    Ok(session) => loaded
                        .diagnostics
                        .extend(session.warnings().iter().map(warning_diagnostic)),
                    Err(e) => {
                        loaded
                            .diagnostics
                            .push(Diagnostic::error(0, "session", e.to_string()))
                    }
                }
                loaded.diagnostics.sort_by_key(|d| d.line);
            }
            Ok(loaded)
        }
    }
}

/// Whether `path` is a store address (`sqlite:…`, `postgres://…`, `dir:…`, or
/// `DIR#SESSION` where no file has that name) rather than a file.
pub fn is_store_address(path: &Path) -> bool {
    let Some(text) = path.to_str() else {
        return false;
    };
    let is_store = text.starts_with("sqlite:")
        || text.starts_with("postgres://")
        || text.starts_with("postgresql://")
        || text.starts_with("dir:");
    is_store
        || (std::fs::symlink_metadata(path).is_err()
            && text
                .rsplit_once('#')
                .is_some_and(|(dir, _)| Path::new(dir).is_dir()))
}

/// The lines of the session `path` names when it is a store address with a
/// session (`sqlite:PATH#SESSION`, `postgres://…#SESSION`, `DIR#SESSION`), as
/// transcript bytes, with what the store found wrong with its rows; `None`
/// for a plain file path.
///
/// Every stored line keeps its place: a line that is not UTF-8 is written as
/// its bytes where it was, so `check` reports it at its own line number (and
/// the lines after it keep theirs).
pub fn read_session(path: &Path) -> Result<Option<StoreRead>, CliError> {
    if !is_store_address(path) {
        return Ok(None);
    }
    let text = path.to_string_lossy();
    let address = StoreAddress::resolve(&text).map_err(store_error)?;
    let Some(session) = address.session.clone() else {
        return Err(CliError::Usage(format!(
            "{}: a store address needs #SESSION to name a session",
            crate::output::shown(path)
        )));
    };
    let loaded = block_on(async {
        let store = AnyStore::open_existing(&address.backend).await?;
        store.load(&session, Cursor::START).await
    })?
    .map_err(store_error)?;
    for torn in &loaded.torn {
        crate::output::note!(
            "agentmsg: {}: a line torn by a crash ({} bytes) is kept aside in {}",
            crate::output::shown(path),
            torn.raw.len(),
            crate::output::shown(&torn.kept_in)
        );
    }
    // The lines in store order: the entries, and the bytes of the lines that
    // are no text in their places.
    let mut not_text: Vec<(u64, &[u8])> = Vec::new();
    let mut diagnostics = Vec::new();
    for problem in &loaded.problems {
        let line = usize::try_from(problem.position + 1).unwrap_or(usize::MAX);
        match &problem.problem {
            EntryProblem::NotUtf8(bytes) => not_text.push((problem.position, bytes)),
            EntryProblem::ColumnDisagrees { .. } => diagnostics.push(Diagnostic::error(
                line,
                "store-row",
                format!(
                    "the store's row disagrees with its line: {}",
                    problem.problem
                ),
            )),
            // What a line's own keys say, `check` finds again in the line.
            _ => {}
        }
    }
    not_text.sort_by_key(|(position, _)| *position);
    let mut bytes = Vec::with_capacity(loaded.entries.iter().map(|e| e.line().len() + 1).sum());
    let mut not_text = not_text.into_iter().peekable();
    let mut position = loaded.first;
    let mut entries = loaded.entries.iter();
    loop {
        if let Some((_, raw)) = not_text.next_if(|(at, _)| *at <= position) {
            bytes.extend_from_slice(raw);
        } else if let Some(entry) = entries.next() {
            bytes.extend_from_slice(entry.line().as_bytes());
        } else if let Some((_, raw)) = not_text.next() {
            bytes.extend_from_slice(raw);
        } else {
            break;
        }
        bytes.push(b'\n');
        position += 1;
    }
    Ok(Some((bytes, diagnostics)))
}

/// A store session's lines as transcript bytes, with what the store found
/// wrong with its rows.
pub type StoreRead = (Vec<u8>, Vec<Diagnostic>);

pub(crate) fn store_error(e: StoreError) -> CliError {
    match e {
        StoreError::Io { path, source } => CliError::Read { path, source },
        other => CliError::Usage(escape_controls(&other.to_string()).into_owned()),
    }
}

pub(crate) fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CliError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| CliError::Read {
            path: PathBuf::from("<tokio runtime>"),
            source,
        })?;
    Ok(runtime.block_on(future))
}

/// The bytes of `path`, of standard input when it is `-`, or of a store's
/// session when it is a store address (`sqlite:PATH#SESSION`, …); what the
/// store found wrong with its rows is said on standard error.
pub fn read_input(path: &Path) -> Result<Vec<u8>, CliError> {
    let (bytes, store) = read_input_with(path)?;
    for d in store {
        crate::output::note!("{}", d.render(&crate::output::shown(path)));
    }
    Ok(bytes)
}

/// [`read_input`], with what a store found wrong with its rows (a column
/// that disagrees with its line) as diagnostics instead of notes.
pub fn read_input_with(path: &Path) -> Result<(Vec<u8>, Vec<Diagnostic>), CliError> {
    let fail = |source| CliError::Read {
        path: path.to_owned(),
        source,
    };
    if let Some(read) = crate::input::read_session(path)? {
        return Ok(read);
    }
    let bytes = read_plain(path).map_err(fail)?;
    Ok((bytes, Vec::new()))
}

/// The bytes of a file or of standard input (`-`). A FIFO or a device given
/// by name is read as it comes, as standard input is. A line longer than
/// `lines::MAX_LINE` stops it with an error naming the line (`/dev/zero` is
/// one endless line).
fn read_plain(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        agentmsg_runtime::lines::read_to_end(&mut std::io::stdin().lock(), &mut bytes)?;
    } else {
        let mut file = File::open(path)?;
        if let Ok(meta) = file.metadata() {
            bytes.reserve(usize::try_from(meta.len()).unwrap_or(0));
        }
        agentmsg_runtime::lines::read_to_end(&mut file, &mut bytes)?;
    }
    Ok(bytes)
}

/// The help of `--api`: the API ids, and the module names as aliases.
pub const API_HELP: &str = "The provider API: anthropic-messages, openai-completions, openai-responses or google-generative-ai (the module names anthropic, openai_chat, openai_responses and gemini name them too)";

/// Parses `--api` ([`Api`]'s own names and aliases).
pub fn parse_api(name: &str) -> Result<Api, UnknownApi> {
    name.parse()
}
