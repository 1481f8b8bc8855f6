//! The PostgreSQL store, for agent services on many machines.

use std::str::FromStr;
use std::sync::{Mutex, PoisonError};

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::{Client, Config, NoTls, Statement};

use super::sql::{self, name_after, now_ms, Row, MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE};
use super::{
    leaf_after, validate_entries, validate_session_id, Appended, Cursor, Expect, Loaded, Page,
    PageRequest, SessionInfo, SessionStore, StoreError, StoredEntry,
};

/// The key of the advisory lock that serializes migrations of one database.
const MIGRATION_LOCK: i64 = 0x6167_656e_746d_7367; // "agentmsg"

/// How a [`PgStore`] connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// How many connections the store keeps (appends and loads run on as many
    /// at once). Default 4.
    pub connections: usize,
    /// The schema the tables live in, created if needed (`None`: the
    /// connection's `search_path`, normally `public`).
    pub schema: Option<String>,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            connections: 4,
            schema: None,
        }
    }
}

/// Sessions in PostgreSQL (feature `postgres`), shared by agent services on
/// many machines.
///
/// The schema is the SQLite store's: a versioned schema, migrated on connect
/// (under an advisory lock, so services starting together migrate once; a newer
/// schema is refused with [`StoreError::SchemaTooNew`]), and entries stored as
/// their exact line text beside the columns the API queries.
///
/// An append is one transaction that locks the session's row
/// (`SELECT … FOR UPDATE`), checks the leaf, inserts the entries and updates
/// the session. Appenders to one session, from any number of processes and
/// machines, are thereby serialized: the one that waited reads the leaf the
/// other committed and, if it expected the old one, fails with
/// [`StoreError::Conflict`] (retryable) instead of forking the session. A
/// commit returns once the server has made it durable by its own
/// `synchronous_commit` setting (on, by default).
///
/// Connections are plain TCP (`NoTls`): use it on a trusted network or a
/// loopback or Unix socket.
#[derive(Debug)]
pub struct PgStore {
    config: Config,
    schema: Option<String>,
    idle: Mutex<Vec<PgConn>>,
    permits: Semaphore,
}

/// A connection and its prepared statements.
#[derive(Debug)]
struct PgConn {
    client: Client,
    info: Statement,
    lock: Statement,
    insert: Statement,
    update: Statement,
    load: Statement,
}

/// A connection borrowed from the store; given back on drop.
struct Pooled<'a> {
    conn: Option<PgConn>,
    store: &'a PgStore,
    _permit: SemaphorePermit<'a>,
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if !conn.client.is_closed() {
                self.store
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(conn);
            }
        }
    }
}

impl std::ops::Deref for Pooled<'_> {
    type Target = PgConn;
    fn deref(&self) -> &PgConn {
        self.conn
            .as_ref()
            .expect("a pooled connection is there until drop")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut PgConn {
        self.conn
            .as_mut()
            .expect("a pooled connection is there until drop")
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`
    /// or a key-value connection string) with the default [`PgOptions`], and
    /// migrates it.
    pub async fn connect(url: &str) -> Result<PgStore, StoreError> {
        PgStore::connect_with(url, PgOptions::default()).await
    }

    /// Connects with `options`, and migrates the database.
    pub async fn connect_with(url: &str, options: PgOptions) -> Result<PgStore, StoreError> {
        let config = Config::from_str(url).map_err(|e| StoreError::InvalidAddress {
            address: redact(url),
            reason: e.to_string(),
        })?;
        let store = PgStore {
            config,
            schema: options.schema,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(options.connections.max(1)),
        };
        let mut first = store.connect_one(true).await?;
        migrate(&mut first.client).await?;
        first.prepare().await?;
        store
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(first.into_conn()?);
        Ok(store)
    }

    async fn connect_one(&self, create_schema: bool) -> Result<Unprepared, StoreError> {
        let (client, connection) = self.config.connect(NoTls).await?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                log::warn!("agentmsg postgres store: connection closed: {e}");
            }
        });
        if let Some(schema) = &self.schema {
            let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
            if create_schema {
                client
                    .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}"))
                    .await?;
            }
            client
                .batch_execute(&format!("SET search_path TO {quoted}"))
                .await?;
        }
        Ok(Unprepared {
            client,
            prepared: None,
        })
    }

    async fn get(&self) -> Result<Pooled<'_>, StoreError> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => {
                let mut fresh = self.connect_one(false).await?;
                fresh.prepare().await?;
                fresh.into_conn()?
            }
        };
        Ok(Pooled {
            conn: Some(conn),
            store: self,
            _permit: permit,
        })
    }
}

/// A connection whose statements are not prepared yet.
struct Unprepared {
    client: Client,
    prepared: Option<[Statement; 5]>,
}

impl Unprepared {
    async fn prepare(&mut self) -> Result<(), StoreError> {
        let c = &self.client;
        self.prepared = Some([
            c.prepare(
                "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
                 FROM agentmsg_sessions WHERE id = $1",
            )
            .await?,
            c.prepare(
                "SELECT entry_count, leaf_id, name FROM agentmsg_sessions WHERE id = $1 FOR UPDATE",
            )
            .await?,
            c.prepare(
                "INSERT INTO agentmsg_entries (session, seq, id, parent_id, kind, timestamp_ms, line)
                 SELECT $1, * FROM UNNEST($2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],
                                          $6::BIGINT[], $7::TEXT[])",
            )
            .await?,
            c.prepare(
                "UPDATE agentmsg_sessions
                 SET entry_count = $2, leaf_id = $3, name = $4, updated_ms = $5 WHERE id = $1",
            )
            .await?,
            c.prepare(
                "SELECT seq, id, parent_id, kind, timestamp_ms, line FROM agentmsg_entries
                 WHERE session = $1 AND seq >= $2 ORDER BY seq",
            )
            .await?,
        ]);
        Ok(())
    }

    fn into_conn(self) -> Result<PgConn, StoreError> {
        let [info, lock, insert, update, load] = self
            .prepared
            .ok_or_else(|| StoreError::Task("statements not prepared".to_owned()))?;
        Ok(PgConn {
            client: self.client,
            info,
            lock,
            insert,
            update,
            load,
        })
    }
}

/// `url` without its password, for error messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(VERSION_TABLE).await?;
    let version: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM agentmsg_schema",
            &[],
        )
        .await?
        .get(0);
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    for migration in &MIGRATIONS[version.max(0) as usize..] {
        tx.batch_execute(migration).await?;
    }
    if version < SCHEMA_VERSION {
        tx.execute("DELETE FROM agentmsg_schema", &[]).await?;
        tx.execute(
            "INSERT INTO agentmsg_schema (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

fn not_found(session: &str) -> StoreError {
    StoreError::NotFound {
        session: session.to_owned(),
    }
}

fn info_of_row(row: &tokio_postgres::Row) -> Result<SessionInfo, StoreError> {
    Ok(SessionInfo {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        created_ms: row.try_get(2)?,
        updated_ms: row.try_get(3)?,
        entries: u64::try_from(row.try_get::<_, i64>(4)?).unwrap_or(0),
        leaf: row.try_get(5)?,
    })
}

impl SessionStore for PgStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let conn = self.get().await?;
        let now = now_ms();
        let inserted = conn
            .client
            .execute(
                "INSERT INTO agentmsg_sessions (id, name, created_ms, updated_ms, entry_count, leaf_id)
                 VALUES ($1, NULL, $2, $2, 0, NULL) ON CONFLICT (id) DO NOTHING",
                &[&session, &now],
            )
            .await?;
        if inserted == 0 {
            return Err(StoreError::Exists {
                session: session.to_owned(),
            });
        }
        let row = conn.client.query_one(&conn.info, &[&session]).await?;
        info_of_row(&row)
    }

    async fn open(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        let conn = self.get().await?;
        let row = conn.client.query_opt(&conn.info, &[&session]).await?;
        info_of_row(&row.ok_or_else(|| not_found(session))?)
    }

    async fn append(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> Result<Appended, StoreError> {
        validate_session_id(session)?;
        validate_entries(entries)?;
        let mut conn = self.get().await?;
        let PgConn {
            client,
            lock,
            insert,
            update,
            ..
        } = &mut *conn;
        let tx = client.transaction().await?;
        let row = tx
            .query_opt(&*lock, &[&session])
            .await?
            .ok_or_else(|| not_found(session))?;
        let count: i64 = row.try_get(0)?;
        let leaf: Option<String> = row.try_get(1)?;
        let name: Option<String> = row.try_get(2)?;
        expected.check(session, leaf.as_deref())?;
        let seqs: Vec<i64> = (0..entries.len() as i64).map(|i| count + i).collect();
        let ids: Vec<Option<&str>> = entries.iter().map(StoredEntry::id).collect();
        let parents: Vec<Option<&str>> = entries.iter().map(sql::parent_column).collect();
        let kinds: Vec<&str> = entries.iter().map(StoredEntry::kind).collect();
        let times: Vec<Option<i64>> = entries.iter().map(StoredEntry::timestamp_ms).collect();
        let lines: Vec<&str> = entries.iter().map(StoredEntry::line).collect();
        tx.execute(
            &*insert,
            &[&session, &seqs, &ids, &parents, &kinds, &times, &lines],
        )
        .await?;
        let total = count + entries.len() as i64;
        let leaf = leaf_after(leaf.as_deref(), entries).map(str::to_owned);
        let name = name_after(name.as_deref(), entries);
        tx.execute(&*update, &[&session, &total, &leaf, &name, &now_ms()])
            .await?;
        tx.commit().await?;
        Ok(Appended {
            first: u64::try_from(count).unwrap_or(0),
            entries: u64::try_from(total).unwrap_or(0),
            leaf,
        })
    }

    async fn load(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        validate_session_id(session)?;
        let mut conn = self.get().await?;
        let PgConn {
            client, info, load, ..
        } = &mut *conn;
        // One snapshot for the session check and its entries.
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        if tx.query_opt(&*info, &[&session]).await?.is_none() {
            return Err(not_found(session));
        }
        let from_seq = i64::try_from(from.0).unwrap_or(i64::MAX);
        let rows = tx.query(&*load, &[&session, &from_seq]).await?;
        tx.commit().await?;
        let mut loaded = Loaded {
            first: from.0,
            next: from,
            ..Loaded::default()
        };
        loaded.entries.reserve(rows.len());
        for row in rows {
            let seq: i64 = row.try_get(0)?;
            let row = Row {
                seq,
                id: row.try_get(1)?,
                parent_id: row.try_get(2)?,
                kind: row.try_get(3)?,
                timestamp_ms: row.try_get(4)?,
                line: Ok(row.try_get(5)?),
            };
            if let Some(entry) = sql::entry_of_row(row, &mut loaded.problems) {
                loaded.entries.push(entry);
            }
            loaded.next = Cursor(u64::try_from(seq).unwrap_or(0) + 1);
        }
        Ok(loaded)
    }

    async fn list(&self, page: &PageRequest) -> Result<Page, StoreError> {
        let conn = self.get().await?;
        let limit = i64::try_from(page.limit).unwrap_or(i64::MAX - 1);
        let rows = conn
            .client
            .query(
                "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
                 FROM agentmsg_sessions WHERE $1::TEXT IS NULL OR id COLLATE \"C\" > $1
                 ORDER BY id COLLATE \"C\" LIMIT $2",
                &[&page.after, &limit.saturating_add(1)],
            )
            .await?;
        let mut sessions = rows
            .iter()
            .map(info_of_row)
            .collect::<Result<Vec<_>, _>>()?;
        let more = sessions.len() > page.limit;
        sessions.truncate(page.limit);
        let next = more
            .then(|| sessions.last().map(|s| s.id.clone()))
            .flatten();
        Ok(Page { sessions, next })
    }

    async fn delete(&self, session: &str) -> Result<(), StoreError> {
        validate_session_id(session)?;
        let conn = self.get().await?;
        let deleted = conn
            .client
            .execute("DELETE FROM agentmsg_sessions WHERE id = $1", &[&session])
            .await?;
        if deleted == 0 {
            return Err(not_found(session));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            super::redact("postgres://agent:s3cret@db:5432/x"),
            "postgres://agent:***@db:5432/x"
        );
        assert_eq!(super::redact("host=db user=agent"), "host=db user=agent");
    }
}
