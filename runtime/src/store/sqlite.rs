//! The SQLite store: one database file in WAL mode.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, TransactionBehavior};

use super::sql::{self, name_after, now_ms, Row, MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE};
use super::{
    check_tree, leaf_after, validate_entries, validate_session_id, Appended, Cursor, Durability,
    Expect, Loaded, Page, PageRequest, SessionInfo, SessionStore, StoreError, StoredEntry,
};

/// How long a writer waits for another process's transaction before failing
/// with a retryable "database is busy".
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Sessions in one SQLite database file (feature `sqlite`).
///
/// The database is in WAL mode, so loads never wait for appends. Entries are
/// stored as their exact line text, beside the columns the API queries
/// (session, position, id, parent id, kind, timestamp); the schema has a
/// version, and opening a database migrates it to the version this build
/// knows (in one transaction; a newer schema is refused with
/// [`StoreError::SchemaTooNew`]).
///
/// Each append is one `BEGIN IMMEDIATE` transaction that reads the session's
/// leaf, checks it, inserts the entries and updates the session: writers in
/// other processes wait for it (up to 30 s), and the loser of a race gets
/// [`StoreError::Conflict`]. With [`Durability::Os`] (the default) SQLite runs
/// with `synchronous = NORMAL`: a committed append survives a crash of the
/// process, not a power loss. [`Durability::Disk`] sets `synchronous = FULL`.
/// A transaction costs tens of microseconds whatever it holds, so append a
/// turn's entries in one call rather than one call each (`benches/store.rs`:
/// 100 entries per append cost about a tenth of what 100 appends do).
///
/// SQLite's API blocks, so each operation runs on tokio's blocking pool when
/// called inside a tokio runtime (and inline otherwise), over one connection
/// per store.
///
/// A database file the store creates is mode 0600, and so are SQLite's `-wal`
/// and `-shm` files beside it (SQLite gives them the database's mode).
/// [`open_existing`](Self::open_existing) opens a database to read it,
/// changing nothing.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`, with
    /// [`Durability::Os`], and migrates it.
    pub async fn open(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, Durability::Os).await
    }

    /// Opens the database at `path` with `durability`, and migrates it.
    pub async fn open_with(
        path: impl AsRef<Path>,
        durability: Durability,
    ) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref().to_owned();
        let opened = path.clone();
        let conn = blocking(move || {
            create_private(&opened)?;
            let mut conn = Connection::open(&opened)?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            let synchronous = match durability {
                Durability::Os => "NORMAL",
                Durability::Disk => "FULL",
            };
            conn.pragma_update(None, "synchronous", synchronous)?;
            conn.pragma_update(None, "foreign_keys", "ON")?;
            migrate(&mut conn)?;
            Ok(conn)
        })
        .await?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// Opens the database at `path` to read it: nothing is created or changed
    /// (no file, no schema, no journal mode; the connection is read-only). A
    /// missing file, or one without agentmsg's tables, is a
    /// [`StoreError::NotAStore`]; appends fail.
    pub async fn open_existing(path: impl AsRef<Path>) -> Result<SqliteStore, StoreError> {
        let path = path.as_ref().to_owned();
        let opened = path.clone();
        let conn = blocking(move || {
            let not_a_store = |reason: &str| StoreError::NotAStore {
                address: format!("sqlite:{}", opened.display()),
                reason: reason.to_owned(),
            };
            if !opened.is_file() {
                return Err(not_a_store("no such database file"));
            }
            let conn = Connection::open_with_flags(
                &opened,
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?;
            conn.busy_timeout(BUSY_TIMEOUT)?;
            let has_schema: bool = match conn.query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agentmsg_schema')",
                [],
                |row| row.get(0),
            ) {
                Ok(found) => found,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::NotADatabase =>
                {
                    return Err(not_a_store("the file is not an SQLite database"))
                }
                Err(e) => return Err(e.into()),
            };
            if !has_schema {
                return Err(not_a_store("the database has no agentmsg tables"));
            }
            if let Some(why) = sql::empty_schema(schema_version(&conn)?) {
                return Err(not_a_store(why));
            }
            Ok(conn)
        })
        .await?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        blocking(move || f(&mut conn.lock().unwrap_or_else(PoisonError::into_inner))).await
    }
}

/// Runs `f` on tokio's blocking pool inside a runtime, inline outside one.
async fn blocking<T, F>(f: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => runtime
            .spawn_blocking(f)
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?,
        Err(_) => f(),
    }
}

/// Creates the database file, empty and mode 0600, when there is none, so
/// that SQLite (which gives its `-wal` and `-shm` files the database's mode)
/// never makes a transcript readable by others.
fn create_private(path: &Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::io(path)(e)),
    }
}

/// The database's schema version, when this build reads it.
fn schema_version(conn: &Connection) -> Result<i64, StoreError> {
    let version = conn.query_row(sql::VERSION_QUERY, [], |row| row.get(0))?;
    sql::readable_version(version)
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(VERSION_TABLE)?;
    let version = schema_version(&tx)?;
    for migration in &MIGRATIONS[version as usize..] {
        tx.execute_batch(migration)?;
    }
    if version < SCHEMA_VERSION {
        tx.execute("DELETE FROM agentmsg_schema", [])?;
        tx.execute(
            "INSERT INTO agentmsg_schema (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn not_found(session: &str) -> StoreError {
    StoreError::NotFound {
        session: session.to_owned(),
    }
}

fn info(conn: &Connection, session: &str) -> Result<SessionInfo, StoreError> {
    conn.prepare_cached(
        "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
         FROM agentmsg_sessions WHERE id = ?1",
    )?
    .query_row([session], info_of_row)
    .optional()?
    .ok_or_else(|| not_found(session))
}

fn info_of_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        id: row.get(0)?,
        name: row.get(1)?,
        created_ms: row.get(2)?,
        updated_ms: row.get(3)?,
        entries: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
        leaf: row.get(5)?,
    })
}

/// A column read whatever SQLite type a foreign row gave it.
fn text(value: ValueRef<'_>) -> Option<String> {
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

fn load(conn: &Connection, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
    info(conn, session)?;
    let mut statement = conn.prepare_cached(
        "SELECT seq, id, parent_id, kind, timestamp_ms, line FROM agentmsg_entries
         WHERE session = ?1 AND seq >= ?2 ORDER BY seq",
    )?;
    let mut rows = statement.query(params![session, i64::try_from(from.0).unwrap_or(i64::MAX)])?;
    let mut loaded = Loaded {
        first: from.0,
        next: from,
        ..Loaded::default()
    };
    while let Some(row) = rows.next()? {
        let seq: i64 = row.get(0)?;
        let line = match row.get_ref(5)? {
            ValueRef::Text(bytes) | ValueRef::Blob(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Ok(text.to_owned()),
                Err(_) => Err(bytes.to_vec()),
            },
            other => Err(text(other).unwrap_or_default().into_bytes()),
        };
        let timestamp_ms = match row.get_ref(4)? {
            ValueRef::Integer(t) => Some(t),
            _ => None,
        };
        let row = Row {
            seq,
            id: text(row.get_ref(1)?),
            parent_id: text(row.get_ref(2)?),
            kind: text(row.get_ref(3)?),
            timestamp_ms,
            line,
        };
        if let Some(entry) = sql::entry_of_row(row, &mut loaded.problems) {
            loaded.entries.push(entry);
        }
        loaded.next = Cursor(u64::try_from(seq).unwrap_or(0) + 1);
    }
    Ok(loaded)
}

fn append(
    conn: &mut Connection,
    session: &str,
    entries: &[StoredEntry],
    expected: Expect<'_>,
) -> Result<Appended, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (count, leaf, name): (i64, Option<String>, Option<String>) = tx
        .prepare_cached("SELECT entry_count, leaf_id, name FROM agentmsg_sessions WHERE id = ?1")?
        .query_row([session], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .optional()?
        .ok_or_else(|| not_found(session))?;
    expected.check(session, leaf.as_deref())?;
    {
        // The ids of the append the session has already, or names as parents.
        let mut taken = std::collections::HashSet::new();
        let mut named = std::collections::HashSet::new();
        let mut by_id = tx.prepare_cached(
            "SELECT 1 FROM agentmsg_entries WHERE session = ?1 AND id = ?2 LIMIT 1",
        )?;
        let mut by_parent = tx.prepare_cached(
            "SELECT 1 FROM agentmsg_entries WHERE session = ?1 AND parent_id = ?2 LIMIT 1",
        )?;
        for id in entries.iter().filter_map(StoredEntry::id) {
            if by_id.exists(params![session, id])? {
                taken.insert(id);
            }
            if by_parent.exists(params![session, id])? {
                named.insert(id);
            }
        }
        check_tree(
            session,
            entries,
            |id| taken.contains(id),
            |id| named.contains(id),
        )?;
    }
    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO agentmsg_entries (session, seq, id, parent_id, kind, timestamp_ms, line)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (i, entry) in entries.iter().enumerate() {
            insert.execute(params![
                session,
                count + i as i64,
                entry.id(),
                sql::parent_column(entry),
                entry.kind(),
                entry.timestamp_ms(),
                entry.line(),
            ])?;
        }
    }
    let total = count + entries.len() as i64;
    let leaf = leaf_after(leaf.as_deref(), entries).map(str::to_owned);
    tx.prepare_cached(
        "UPDATE agentmsg_sessions SET entry_count = ?2, leaf_id = ?3, name = ?4, updated_ms = ?5
         WHERE id = ?1",
    )?
    .execute(params![
        session,
        total,
        leaf,
        name_after(name.as_deref(), entries),
        now_ms()
    ])?;
    tx.commit()?;
    Ok(Appended {
        first: u64::try_from(count).unwrap_or(0),
        entries: u64::try_from(total).unwrap_or(0),
        leaf,
    })
}

impl SessionStore for SqliteStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let session = session.to_owned();
        self.run(move |conn| {
            let now = now_ms();
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO agentmsg_sessions (id, name, created_ms, updated_ms, entry_count, leaf_id)
                     VALUES (?1, NULL, ?2, ?2, 0, NULL) ON CONFLICT (id) DO NOTHING",
                )?
                .execute(params![session, now])?;
            if inserted == 0 {
                return Err(StoreError::Exists { session });
            }
            info(conn, &session)
        })
        .await
    }

    async fn open(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let session = session.to_owned();
        self.run(move |conn| info(conn, &session)).await
    }

    async fn append(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> Result<Appended, StoreError> {
        validate_session_id(session)?;
        validate_entries(entries)?;
        let session = session.to_owned();
        let entries = entries.to_vec();
        let expected = match expected {
            Expect::Any => None,
            Expect::Empty => Some(None),
            Expect::Leaf(id) => Some(Some(id.to_owned())),
        };
        self.run(move |conn| {
            let expected = match &expected {
                None => Expect::Any,
                Some(leaf) => Expect::leaf(leaf.as_deref()),
            };
            append(conn, &session, &entries, expected)
        })
        .await
    }

    async fn load(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        validate_session_id(session)?;
        let session = session.to_owned();
        self.run(move |conn| {
            // One snapshot for the session check and its entries.
            let tx = conn.transaction()?;
            let loaded = load(&tx, &session, from)?;
            tx.commit()?;
            Ok(loaded)
        })
        .await
    }

    async fn list(&self, page: &PageRequest) -> Result<Page, StoreError> {
        let page = page.clone();
        self.run(move |conn| {
            let limit = i64::try_from(page.limit).unwrap_or(i64::MAX - 1);
            // Keyset pagination on the primary key's index: a page reads its
            // own rows, however many sessions come before it.
            let sessions = match &page.after {
                Some(after) => conn
                    .prepare_cached(
                        "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
                         FROM agentmsg_sessions WHERE id > ?1 ORDER BY id LIMIT ?2",
                    )?
                    .query_map(params![after, limit.saturating_add(1)], info_of_row)?
                    .collect::<Result<Vec<_>, _>>()?,
                None => conn
                    .prepare_cached(
                        "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
                         FROM agentmsg_sessions ORDER BY id LIMIT ?1",
                    )?
                    .query_map(params![limit.saturating_add(1)], info_of_row)?
                    .collect::<Result<Vec<_>, _>>()?,
            };
            Ok(sql::page_of(sessions, page.limit))
        })
        .await
    }

    async fn delete(&self, session: &str) -> Result<(), StoreError> {
        validate_session_id(session)?;
        let session = session.to_owned();
        self.run(move |conn| {
            let deleted =
                conn.execute("DELETE FROM agentmsg_sessions WHERE id = ?1", [&session])?;
            if deleted == 0 {
                return Err(not_found(&session));
            }
            Ok(())
        })
        .await
    }
}
