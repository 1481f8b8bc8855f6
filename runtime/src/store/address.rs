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
/// each followed by `#SESSION` to name a session. In a PostgreSQL URL only a
/// `#` after the user information's `@` can start the session, so a password
/// may hold `#`; a `#` in a `?password=` parameter must be written `%23`.
/// A directory or database whose own name holds `#` is named by
/// [`resolve`](Self::resolve), which asks the file system.
///
/// Neither `Debug` nor any error shows a password: they print the address
/// through [`redact_passwords`](super::redact_passwords).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::store::{StoreAddress, Backend};
/// let address: StoreAddress = "sqlite:agents.db#s-42".parse().unwrap();
/// assert_eq!(address.backend, Backend::Sqlite("agents.db".into()));
/// assert_eq!(address.session.as_deref(), Some("s-42"));
/// let address: StoreAddress = "postgres://agent@db.internal/agents".parse().unwrap();
/// assert_eq!(address.session, None);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct StoreAddress {
    /// The store.
    pub backend: Backend,
    /// The session named after `#`.
    pub session: Option<String>,
}

impl std::fmt::Debug for StoreAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreAddress")
            .field("backend", &self.backend)
            .field("session", &self.session)
            .finish()
    }
}

/// Which store an address names.
#[derive(Clone, PartialEq, Eq)]
pub enum Backend {
    /// A directory of session files.
    JsonlDir(PathBuf),
    /// An SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::JsonlDir(path) => f.debug_tuple("JsonlDir").field(path).finish(),
            Backend::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Backend::Postgres(url) => f
                .debug_tuple("Postgres")
                .field(&super::redact_passwords(url))
                .finish(),
        }
    }
}

impl std::fmt::Display for Backend {
    /// The store as an address would name it, a password redacted.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::JsonlDir(path) => write!(f, "{}", path.display()),
            Backend::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            Backend::Postgres(url) => f.write_str(&super::redact_passwords(url)),
        }
    }
}

impl StoreAddress {
    /// Parses `address` as [`FromStr`] does, except that a directory (`DIR`,
    /// `dir:DIR`) or database file (`sqlite:PATH`) that exists under the whole
    /// text, `#` included, is that store with no session: a store whose own
    /// name holds `#` can still be named.
    pub fn resolve(address: &str) -> Result<StoreAddress, StoreError> {
        let whole = if let Some(path) = address.strip_prefix("sqlite:") {
            Some(Backend::Sqlite(PathBuf::from(path)))
        } else if is_postgres(address) {
            None
        } else {
            Some(Backend::JsonlDir(PathBuf::from(
                address.strip_prefix("dir:").unwrap_or(address),
            )))
        };
        if let Some(backend) = whole {
            let exists = match &backend {
                Backend::JsonlDir(path) => path.is_dir(),
                Backend::Sqlite(path) => path.is_file(),
                Backend::Postgres(_) => false,
            };
            if exists && address.contains('#') {
                return Ok(StoreAddress {
                    backend,
                    session: None,
                });
            }
        }
        address.parse()
    }
}

fn is_postgres(address: &str) -> bool {
    address.starts_with("postgres://") || address.starts_with("postgresql://")
}

impl FromStr for StoreAddress {
    type Err = StoreError;

    fn from_str(address: &str) -> Result<Self, StoreError> {
        let invalid = |reason: &str| StoreError::InvalidAddress {
            address: super::redact_passwords(address),
            reason: reason.to_owned(),
        };
        // In a URL, a `#` before the user information's end is the password's.
        let search_from = if is_postgres(address) {
            address.rfind('@').map_or(0, |at| at + 1)
        } else {
            0
        };
        let (store, session) = match address[search_from..].rfind('#') {
            Some(at) => {
                let (store, session) = (
                    &address[..search_from + at],
                    &address[search_from + at + 1..],
                );
                super::validate_session_id(session).map_err(|e| match e {
                    StoreError::InvalidSessionId { reason, .. } => invalid(&format!(
                        "the session after `#` is no valid session id: {reason}"
                    )),
                    other => invalid(&other.to_string()),
                })?;
                (store, Some(session.to_owned()))
            }
            None => (address, None),
        };
        let backend = if let Some(path) = store.strip_prefix("sqlite:") {
            Backend::Sqlite(PathBuf::from(path))
        } else if is_postgres(store) {
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
                address: super::redact_passwords(url),
                reason: "this build has no PostgreSQL support (feature `postgres`)".to_owned(),
            }),
        }
    }

    /// Opens the store `backend` names to read it: nothing is created or
    /// changed (no directory, no database file, no schema, no journal mode),
    /// and what is not an agentmsg store is a [`StoreError::NotAStore`].
    pub async fn open_existing(backend: &Backend) -> Result<AnyStore, StoreError> {
        match backend {
            Backend::JsonlDir(dir) => JsonlDir::open_existing(dir).map(AnyStore::JsonlDir),
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(path) => super::SqliteStore::open_existing(path)
                .await
                .map(AnyStore::Sqlite),
            #[cfg(feature = "postgres")]
            Backend::Postgres(url) => super::PgStore::connect_existing(url, Default::default())
                .await
                .map(|store| AnyStore::Postgres(Box::new(store))),
            #[allow(unreachable_patterns)]
            _ => AnyStore::open(backend).await,
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

#[cfg(test)]
mod tests {
    use super::{Backend, StoreAddress};

    fn parse(text: &str) -> Result<StoreAddress, String> {
        text.parse::<StoreAddress>().map_err(|e| e.to_string())
    }

    #[test]
    fn addresses() {
        let a = parse("sessions").unwrap();
        assert_eq!(
            (a.backend, a.session),
            (Backend::JsonlDir("sessions".into()), None)
        );
        let a = parse("dir:/var/agents#s-1").unwrap();
        assert_eq!(a.backend, Backend::JsonlDir("/var/agents".into()));
        assert_eq!(a.session.as_deref(), Some("s-1"));
        let a = parse("postgresql://u:p@h:5432/db?sslmode=disable#x.y").unwrap();
        assert_eq!(
            a.backend,
            Backend::Postgres("postgresql://u:p@h:5432/db?sslmode=disable".into())
        );
        assert_eq!(a.session.as_deref(), Some("x.y"));
        assert!(parse("sqlite:").unwrap_err().contains("no path"));
        assert!(parse("sqlite:a.db#../x")
            .unwrap_err()
            .contains("no valid session id"));
        assert!(parse("sqlite:a.db#").unwrap_err().contains("empty"));
    }
}
