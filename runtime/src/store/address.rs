//! Store addresses as the command line takes them, and a store picked by one.

use std::path::PathBuf;
use std::str::FromStr;

use super::{
    Appended, Cursor, Expect, JsonlDir, Loaded, Page, PageRequest, SessionInfo, SessionStore,
    StoreError, StoredEntry,
};

/// Where a store is, and optionally which session in it:
///
/// - `DIR` or `dir:DIR`: a [`JsonlDir`];
/// - `sqlite:PATH`: an SQLite database file (feature `sqlite`);
/// - `postgres://…` or `postgresql://…`: a PostgreSQL connection URL (feature
///   `postgres`);
///
/// each followed by `#SESSION` to name a session.
///
/// ```
/// # use agentmsg_runtime::store::{StoreAddress, Backend};
/// let address: StoreAddress = "sqlite:agents.db#s-42".parse().unwrap();
/// assert_eq!(address.backend, Backend::Sqlite("agents.db".into()));
/// assert_eq!(address.session.as_deref(), Some("s-42"));
/// let address: StoreAddress = "postgres://agent@db.internal/agents".parse().unwrap();
/// assert_eq!(address.session, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreAddress {
    /// The store.
    pub backend: Backend,
    /// The session named after `#`.
    pub session: Option<String>,
}

/// Which store an address names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// A directory of session files.
    JsonlDir(PathBuf),
    /// An SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

impl FromStr for StoreAddress {
    type Err = StoreError;

    fn from_str(address: &str) -> Result<Self, StoreError> {
        let invalid = |reason: &str| StoreError::InvalidAddress {
            address: address.to_owned(),
            reason: reason.to_owned(),
        };
        let (store, session) = match address.rsplit_once('#') {
            Some((store, session)) => {
                super::validate_session_id(session).map_err(|e| invalid(&e.to_string()))?;
                (store, Some(session.to_owned()))
            }
            None => (address, None),
        };
        let backend = if let Some(path) = store.strip_prefix("sqlite:") {
            Backend::Sqlite(PathBuf::from(path))
        } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
            Backend::Postgres(store.to_owned())
        } else {
            Backend::JsonlDir(PathBuf::from(store.strip_prefix("dir:").unwrap_or(store)))
        };
        let empty = match &backend {
            Backend::JsonlDir(path) | Backend::Sqlite(path) => path.as_os_str().is_empty(),
            Backend::Postgres(_) => false,
        };
        if empty {
            return Err(invalid("no path"));
        }
        Ok(StoreAddress { backend, session })
    }
}

/// Whichever store an address names, as one [`SessionStore`].
#[derive(Debug)]
#[non_exhaustive]
pub enum AnyStore {
    /// A [`JsonlDir`].
    JsonlDir(JsonlDir),
    /// A [`SqliteStore`](super::SqliteStore).
    #[cfg(feature = "sqlite")]
    Sqlite(super::SqliteStore),
    /// A [`PgStore`](super::PgStore) (boxed: it is much larger than the others).
    #[cfg(feature = "postgres")]
    Postgres(Box<super::PgStore>),
}

impl AnyStore {
    /// Opens (or connects to) the store `backend` names. A backend whose
    /// feature this build lacks is an [`StoreError::InvalidAddress`] saying so.
    pub async fn open(backend: &Backend) -> Result<AnyStore, StoreError> {
        match backend {
            Backend::JsonlDir(dir) => JsonlDir::open(dir).map(AnyStore::JsonlDir),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(path) => super::SqliteStore::open(path).await.map(AnyStore::Sqlite),
            #[cfg(not(feature = "sqlite"))]
            Backend::Sqlite(path) => Err(StoreError::InvalidAddress {
                address: format!("sqlite:{}", path.display()),
                reason: "this build has no SQLite support (feature `sqlite`)".to_owned(),
            }),
            #[cfg(feature = "postgres")]
            Backend::Postgres(url) => super::PgStore::connect(url)
                .await
                .map(|store| AnyStore::Postgres(Box::new(store))),
            #[cfg(not(feature = "postgres"))]
            Backend::Postgres(url) => Err(StoreError::InvalidAddress {
                address: url.clone(),
                reason: "this build has no PostgreSQL support (feature `postgres`)".to_owned(),
            }),
        }
    }
}

macro_rules! each {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::JsonlDir($store) => $call,
            #[cfg(feature = "sqlite")]
            AnyStore::Sqlite($store) => $call,
            #[cfg(feature = "postgres")]
            AnyStore::Postgres($store) => $call,
        }
    };
}

impl SessionStore for AnyStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        each!(self, store => store.create(session).await)
    }

    async fn open(&self, session: &str) -> Result<SessionInfo, StoreError> {
        each!(self, store => store.open(session).await)
    }

    async fn append(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> Result<Appended, StoreError> {
        each!(self, store => store.append(session, entries, expected).await)
    }

    async fn load(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        each!(self, store => store.load(session, from).await)
    }

    async fn list(&self, page: &PageRequest) -> Result<Page, StoreError> {
        each!(self, store => store.list(page).await)
    }

    async fn delete(&self, session: &str) -> Result<(), StoreError> {
        each!(self, store => store.delete(session).await)
    }
}
