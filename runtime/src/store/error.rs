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
    #[error("postgres: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// A blocking task the store ran on tokio's pool did not finish.
    #[error("store task failed: {0}")]
    Task(String),
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
            StoreError::Conflict { .. } => true,
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
