//! What can go wrong in a store.

use std::io;
use std::path::PathBuf;

/// A store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The session's leaf was not the one the append expected: another writer
    /// appended first. Nothing was written; reload (or take `actual`) and retry.
    #[error("session `{session}`: leaf is {}, expected {} (another writer appended first; nothing was written, retry)", leaf(.actual), leaf(.expected))]
    Conflict {
        /// The session.
        session: String,
        /// The leaf the append expected (`None`: an empty session).
        expected: Option<String>,
        /// The leaf the store has.
        actual: Option<String>,
    },
    /// A copy's target holds entries that are not the start of the source
    /// session's ([`copy_session`](super::copy_session)); nothing was written.
    #[error("session `{session}`: the target's entry {position} is not the source's; nothing was copied (a different session has this id there)")]
    Diverged {
        /// The session.
        session: String,
        /// The position (from 0) of the first entry that differs.
        position: u64,
    },
    /// No session has this id.
    #[error("session `{session}` not found")]
    NotFound {
        /// The session id.
        session: String,
    },
    /// A session with this id exists already.
    #[error("session `{session}` exists already")]
    Exists {
        /// The session id.
        session: String,
    },
    /// A session id a store cannot use.
    #[error("invalid session id `{session}`: {reason}")]
    InvalidSessionId {
        /// The id.
        session: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An entry of an append cannot be stored as one line; nothing was written.
    #[error("entry {index} of the append: {reason}")]
    InvalidEntry {
        /// Its index in the append, from 0.
        index: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A store address that does not parse.
    #[error("invalid store address `{address}`: {reason}")]
    InvalidAddress {
        /// The address.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// What an address names exists but is no agentmsg store (a database
    /// without agentmsg's tables, say). Reading never creates a store or its
    /// schema, so a read-only open says this instead.
    #[error("{address}: not an agentmsg store ({reason})")]
    NotAStore {
        /// The address (a password in it is redacted).
        address: String,
        /// What was found.
        reason: String,
    },
    /// A path in a [`JsonlDir`](super::JsonlDir) that is not a regular file:
    /// a symbolic link (a store never follows a link inside its directory, so
    /// it cannot be made to read or write outside it), a directory, a FIFO (which
    /// would block a read forever), a socket or a device. Nothing was read or
    /// written through it.
    #[error("{}: is {found}, not a regular file (a store reads and writes only regular files in its directory and never follows links)", .path.display())]
    NotRegularFile {
        /// The path.
        path: PathBuf,
        /// What it is: "a symbolic link", "a directory", "a FIFO"…
        found: &'static str,
    },
    /// Another process held a session file's lock for longer than the store
    /// waits ([`JsonlDir::lock_timeout`](super::JsonlDir::lock_timeout)).
    #[error("{}: locked by {} for more than {waited:?}; nothing was read or written (retry later)", .path.display(), holder_text(.holder))]
    LockTimeout {
        /// The session file.
        path: PathBuf,
        /// How long the store waited.
        waited: std::time::Duration,
        /// The process that holds the lock, when the system says
        /// (`/proc/locks` on Linux).
        holder: Option<u32>,
    },
    /// A database did not answer in time (connecting, or running a statement).
    #[error("{operation}: no answer from the database after {after:?}")]
    Timeout {
        /// What was waiting: "connecting", "append"…
        operation: &'static str,
        /// How long it waited.
        after: std::time::Duration,
    },
    /// The connection failed while an append was being committed: the entries
    /// may or may not be stored. Retry the same append with the same
    /// [`Expect`](super::Expect): a store finds entries it already holds and
    /// answers as the first append would have, or writes them now.
    #[error("session `{session}`: the connection failed while the append was committed, so whether it is stored is unknown (retry it with the same expected leaf: a stored append is recognised, not written twice): {source}")]
    CommitUnknown {
        /// The session.
        session: String,
        /// What failed.
        #[source]
        source: Box<StoreError>,
    },
    /// An entry of an append would break the session's tree: its id is taken,
    /// or its parent would make a cycle. Nothing was written.
    #[error("session `{session}`: entry {index} of the append (id `{id}`): {reason}; nothing was written")]
    BreaksTree {
        /// The session.
        session: String,
        /// The entry's index in the append, from 0.
        index: usize,
        /// Its id.
        id: String,
        /// What it would break.
        reason: &'static str,
    },
    /// The database's schema is newer than this build knows.
    #[error(
        "the store's schema is version {found}; this build knows up to {known} (upgrade agentmsg)"
    )]
    SchemaTooNew {
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// A file of a [`JsonlDir`](super::JsonlDir) failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// SQLite failed.
    #[cfg(feature = "sqlite")]
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[cfg(feature = "postgres")]
    #[error("postgres: {}", postgres_message(.0))]
    Postgres(#[from] tokio_postgres::Error),
    /// A blocking task the store ran on tokio's pool did not finish.
    #[error("store task failed: {0}")]
    Task(String),
}

fn holder_text(pid: &Option<u32>) -> String {
    match pid {
        Some(pid) => format!("process {pid}"),
        None => "another process".to_owned(),
    }
}

/// A PostgreSQL error with what the server said: tokio-postgres's own text is
/// only "db error" for every server error, with the message in its source.
#[cfg(feature = "postgres")]
fn postgres_message(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{} {}: {}", db.severity(), db.code().code(), db.message());
        if let Some(detail) = db.detail() {
            text.push_str(&format!(" ({detail})"));
        }
        return text;
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn leaf(leaf: &Option<String>) -> String {
    match leaf {
        Some(id) => format!("`{id}`"),
        None => "none (empty session)".to_owned(),
    }
}

impl StoreError {
    /// Whether trying the same operation again may succeed: a
    /// [`Conflict`](Self::Conflict) (after taking the new leaf), a busy SQLite
    /// database, a PostgreSQL serialization failure or deadlock.
    pub fn is_retryable(&self) -> bool {
        match self {
            StoreError::Conflict { .. }
            | StoreError::LockTimeout { .. }
            | StoreError::Timeout { .. }
            | StoreError::CommitUnknown { .. } => true,
            #[cfg(feature = "sqlite")]
            StoreError::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
            ),
            #[cfg(feature = "postgres")]
            StoreError::Postgres(e) => e.code().is_some_and(|code| {
                *code == tokio_postgres::error::SqlState::T_R_SERIALIZATION_FAILURE
                    || *code == tokio_postgres::error::SqlState::T_R_DEADLOCK_DETECTED
            }),
            _ => false,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> StoreError {
        let path = path.into();
        move |source| StoreError::Io { path, source }
    }
}
