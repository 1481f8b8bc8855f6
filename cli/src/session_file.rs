//! Opening any session file as a [`Session`]: an agentmsg transcript and a pi
//! session directly, a Claude Code log or a Codex rollout through `import`.
//! `stats`, `check` and `project` read such files as the context of a leaf.

use std::path::Path;

use agentmsg_runtime::{Session, SessionWarning, WarningKind};

use crate::error::CliError;
use crate::import::{detect, Detected};
use crate::load::{Body, Diagnostic, Format, Line, Loaded};

/// Which agent wrote a session file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An agentmsg transcript.
    Agentmsg,
    /// A pi session file.
    Pi,
    /// A Claude Code log (imported).
    ClaudeCode,
    /// A Codex rollout (imported).
    Codex,
}

/// A session read from a file, with what was said while reading it.
pub struct Opened {
    /// The session.
    pub session: Session,
    /// Which agent wrote it.
    pub source: Source,
    /// Problems of the import (Claude Code, Codex).
    pub diagnostics: Vec<Diagnostic>,
}

/// Which agent wrote `bytes`: a transcript unless its first line is not one.
pub fn source_of(bytes: &[u8]) -> Source {
    let first = bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let first = first.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(first);
    #[derive(serde::Deserialize)]
    struct Head {
        role: Option<serde::de::IgnoredAny>,
    }
    if first.starts_with(b"[") {
        return Source::Agentmsg;
    }
    match serde_json::from_slice::<Head>(first) {
        Ok(Head { role: Some(_) }) => return Source::Agentmsg,
        Err(_) => return Source::Agentmsg,
        Ok(_) => {}
    }
    match detect(&String::from_utf8_lossy(bytes)) {
        Detected::Pi => Source::Pi,
        Detected::ClaudeCode(_) => Source::ClaudeCode,
        Detected::Codex(_) => Source::Codex,
        Detected::Unknown { .. } => Source::Agentmsg,
    }
}

/// A session error as a usage-level error naming the file.
fn session_error(path: &Path, e: agentmsg_runtime::SessionError) -> CliError {
    CliError::Usage(format!("{}: {e}", path.display()))
}

/// Opens the session file at `path` (`-`: standard input).
pub fn open(path: &Path) -> Result<Opened, CliError> {
    let bytes = crate::load::read_input(path)?;
    open_bytes(path, &bytes)
}

/// Opens a session from its bytes.
pub fn open_bytes(path: &Path, bytes: &[u8]) -> Result<Opened, CliError> {
    let source = source_of(bytes);
    let (text, diagnostics) = match source {
        Source::Agentmsg | Source::Pi => (None, Vec::new()),
        Source::ClaudeCode | Source::Codex => {
            let text = String::from_utf8_lossy(bytes);
            let imported = match detect(&text) {
                Detected::ClaudeCode(entries) => crate::claude::import(&entries)?,
                Detected::Codex(entries) => crate::codex::import(&entries)?,
                _ => unreachable_source(),
            };
            (Some(imported.text), imported.diagnostics)
        }
    };
    let session = Session::read(text.as_deref().unwrap_or(bytes)).map_err(|e| session_error(path, e))?;
    Ok(Opened {
        session,
        source,
        diagnostics,
    })
}

#[cold]
fn unreachable_source() -> ! {
    unreachable!("source_of and detect agree")
}

/// Whether `stats`, `check` and `project` should read `bytes` as a session (a
/// leaf's context) rather than line by line: another agent's log, a
/// transcript with `parentId`, or a leaf asked for.
pub fn is_session(bytes: &[u8], leaf: Option<&str>) -> bool {
    leaf.is_some()
        || source_of(bytes) != Source::Agentmsg
        || memchr_parent(bytes)
}

fn memchr_parent(bytes: &[u8]) -> bool {
    bytes.windows(10).any(|w| w == b"\"parentId\"")
}

/// A session warning as a diagnostic.
pub fn warning_diagnostic(warning: &SessionWarning) -> Diagnostic {
    let code = match warning.kind {
        WarningKind::MissingParent { .. } => "missing-parent",
        WarningKind::JoinedObjects { .. } => "joined-lines",
        WarningKind::NotAnEntry { .. } => "not-an-entry",
        WarningKind::FirstKeptNotOnPath { .. } => "first-kept-not-on-path",
        _ => "session",
    };
    let text = warning.to_string();
    let message = text
        .split_once(": ")
        .map_or(text.as_str(), |(_, rest)| rest)
        .to_owned();
    Diagnostic::warning(warning.line, code, message)
}

/// The context of `leaf` (the session's leaf when `None`) as a loaded
/// transcript: one line per message, numbered by the entry's line.
pub fn load_context(path: &Path, bytes: &[u8], leaf: Option<&str>) -> Result<Loaded, CliError> {
    let opened = open_bytes(path, bytes)?;
    let session = &opened.session;
    let context = session
        .context(leaf)
        .map_err(|e| session_error(path, e))?;
    let mut diagnostics = opened.diagnostics;
    diagnostics.extend(session.warnings().iter().map(warning_diagnostic));
    let mut lines = Vec::with_capacity(context.messages.len());
    for (message, id) in context.messages.into_iter().zip(&context.entry_ids) {
        let number = id
            .as_ref()
            .and_then(|id| session.entry(id.as_str()))
            .map_or(0, |e| e.line_no());
        let raw = message.to_line().map(String::into_bytes).unwrap_or_default();
        lines.push(Line {
            number,
            gap: Vec::new(),
            raw,
            body: Body::Message(message),
            part: None,
        });
    }
    let total_lines = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    Ok(Loaded {
        format: Format::Jsonl,
        lines,
        diagnostics,
        total_lines,
        bom: false,
        trailing: Vec::new(),
    })
}

/// Reads `path` for `stats`, `check` and `project`: a session's context when
/// it is one ([`is_session`]), the lines of a transcript otherwise.
pub fn load_file_at(path: &Path, leaf: Option<&str>) -> Result<Loaded, CliError> {
    let bytes = crate::load::read_input(path)?;
    if is_session(&bytes, leaf) {
        load_context(path, &bytes, leaf)
    } else {
        Ok(crate::load::load_bytes(&bytes))
    }
}

