//! What can go wrong reading or changing a session, and what is only worth a
//! warning.

use std::fmt;

use crate::MessageId;

/// A session that cannot be read or an operation that cannot be done. Each
/// names the entries or lines involved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// Two entries have the same id.
    #[error("duplicate id `{id}`: line {first_line} and line {second_line}")]
    DuplicateId {
        /// The id.
        id: MessageId,
        /// The line of the first entry with it.
        first_line: usize,
        /// The line of the second.
        second_line: usize,
    },
    /// Following `parentId` from an entry comes back to it.
    #[error("parentId cycle: {}", join(.ids))]
    Cycle {
        /// The ids on the cycle, each the parent of the one before it (an entry
        /// without an id is shown as `line N`).
        ids: Vec<String>,
    },
    /// No entry has this id.
    #[error("no entry with id `{0}`")]
    NoSuchEntry(String),
    /// The entry is needed as a parent or target but has no id, and its line
    /// is kept byte for byte, so it cannot be given one.
    #[error("the entry on line {line} has no id and is kept verbatim, so nothing can refer to it")]
    NoId {
        /// Its line.
        line: usize,
    },
    /// A pi session of version 1 has no ids in the file: pi rewrites it as
    /// version 3 before it appends, and so must the caller.
    #[error("this pi session is version 1 (no entry ids in the file); migrate it (`Session::migrate`, as pi does on load) before entries are appended")]
    NeedsMigration,
    /// A line of a pi session could not be rewritten by
    /// [`Session::migrate`](super::Session::migrate).
    #[error("line {line}: cannot migrate the entry: {error}")]
    Migrate {
        /// The line.
        line: usize,
        /// What the parser said.
        error: String,
    },
    /// A line could not be encoded.
    #[error("cannot encode the entry: {0}")]
    Encode(String),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(String),
    /// Another agent's log could not be converted ([`import`](crate::import)).
    #[error("cannot import the log: {0}")]
    Import(String),
}

impl From<crate::import::ImportError> for SessionError {
    fn from(error: crate::import::ImportError) -> Self {
        Self::Import(error.to_string())
    }
}

fn join(ids: &[String]) -> String {
    ids.join(" -> ")
}

impl From<serde_json::Error> for SessionError {
    fn from(error: serde_json::Error) -> Self {
        Self::Encode(error.to_string())
    }
}

impl From<std::io::Error> for SessionError {
    fn from(error: std::io::Error) -> Self {
        Self::Io(error.to_string())
    }
}

/// Something read that is kept but worth telling the user, with its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionWarning {
    /// The line of the file (1-based).
    pub line: usize,
    /// What is wrong.
    pub kind: WarningKind,
}

/// What a [`SessionWarning`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// The entry names a parent that no entry has; it is read as a root.
    MissingParent {
        /// The entry's id, if it has one.
        id: Option<MessageId>,
        /// The parent it names.
        parent: MessageId,
    },
    /// The line holds more than one entry (an append that lost its newline):
    /// whole objects back to back, or a fragment a crash cut off followed by
    /// whole objects ([`split_glued_line`](crate::transcript::split_glued_line)); each
    /// whole object is read as an entry, and the fragment is kept.
    JoinedObjects {
        /// How many parts the line holds (the fragment counted).
        count: usize,
    },
    /// A line of a pi session is not a JSON object (pi skips it); it is kept in
    /// the file but is not an entry.
    NotAnEntry {
        /// What the parser said.
        error: String,
    },
    /// A compaction names a first kept entry that no entry has: a context
    /// through it keeps nothing before the compaction but its summary (as pi
    /// builds it), which may be history lost.
    FirstKeptMissing {
        /// The compaction's id, if it has one.
        compaction: Option<MessageId>,
        /// The first kept entry it names.
        first_kept: MessageId,
    },
    /// A field of the entry is not what the format says, and is read as pi
    /// reads it (the message or entry is kept and sent, never dropped).
    Lenient {
        /// The field, as a path (`message.content[0]`, `tokensBefore`).
        field: String,
        /// What was found and how it is read.
        what: String,
    },
    /// What the import of another agent's log (a Claude Code log, a Codex
    /// rollout) said; its line is the log's, not the transcript's.
    Imported(crate::import::ImportWarning),
}

impl fmt::Display for SessionWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        match &self.kind {
            WarningKind::MissingParent { id, parent } => match id {
                Some(id) => write!(f, "entry `{id}` names parent `{parent}`, which no entry has; read as a root"),
                None => write!(f, "the entry names parent `{parent}`, which no entry has; read as a root"),
            },
            WarningKind::JoinedObjects { count } => write!(
                f,
                "{count} parts on one line (an append lost its newline); each whole object read as an entry"
            ),
            WarningKind::NotAnEntry { error } => {
                write!(f, "not a session entry ({error}); kept, not read")
            }
            WarningKind::FirstKeptMissing {
                compaction,
                first_kept,
            } => {
                match compaction {
                    Some(id) => write!(f, "compaction `{id}` keeps from `{first_kept}`")?,
                    None => write!(f, "the compaction keeps from `{first_kept}`")?,
                }
                write!(
                    f,
                    ", which no entry has: a context through it keeps only its summary of what came before"
                )
            }
            WarningKind::Lenient { field, what } => write!(f, "`{field}`: {what}"),
            WarningKind::Imported(warning) => f.write_str(&warning.message),
        }
    }
}
