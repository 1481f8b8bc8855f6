//! The PostgreSQL store, for agent services on many machines.

use std::collections::HashSet;
use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_postgres::{Client, Config, GenericClient, NoTls, Statement};

use super::sql::{
    self, name_after, now_ms, Row, MIGRATIONS, PG_MIGRATIONS, SCHEMA_VERSION, VERSION_TABLE,
};
use super::{
    check_tree, leaf_after, redact_passwords, validate_entries, validate_session_id, Appended,
    Cursor, Expect, Loaded, Page, PageRequest, SessionInfo, SessionStore, StoreError, StoredEntry,
};

/// The key of the advisory lock that serializes migrations of one database.
const MIGRATION_LOCK: i64 = 0x6167_656e_746d_7367; // "agentmsg"

/// How a [`PgStore`] connects.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::store::PgOptions;
/// # use std::time::Duration;
/// let options = PgOptions::default()
///     .connections(8)
///     .schema("agents")
///     .connect_timeout(Duration::from_secs(5));
/// assert_eq!(options.statement_timeout, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// How many connections the store keeps (appends and loads run on as many
    /// at once). Default 4.
    pub connections: usize,
    /// The schema the tables live in, created if needed (`None`: the
    /// connection's `search_path`, normally `public`).
    pub schema: Option<String>,
    /// How long connecting may take, from the TCP connection to the first
    /// statements (a server that accepts the connection and never answers
    /// fails here with [`StoreError::Timeout`]). Default 10 s.
    pub connect_timeout: Duration,
    /// How long one operation may wait for the server (a lock held by another
    /// writer included). Also set as the connection's `statement_timeout`.
    /// Past it the operation fails with [`StoreError::Timeout`], and its
    /// connection is cancelled and closed. Default 30 s.
    pub statement_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            connections: 4,
            schema: None,
            connect_timeout: Duration::from_secs(10),
            statement_timeout: Duration::from_secs(30),
        }
    }
}

impl PgOptions {
    /// The same options with `connections` connections.
    #[must_use]
    pub fn connections(mut self, connections: usize) -> Self {
        self.connections = connections;
        self
    }

    /// The same options with the tables in `schema`.
    #[must_use]
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// The same options with `timeout` for connecting.
    #[must_use]
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The same options with `timeout` for each operation.
    #[must_use]
    pub fn statement_timeout(mut self, timeout: Duration) -> Self {
        self.statement_timeout = timeout;
        self
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
///
/// # Never hanging
///
/// Connecting has a time limit ([`PgOptions::connect_timeout`]), and so has
/// each operation ([`PgOptions::statement_timeout`]). An operation whose
/// future is dropped before it finishes (a timeout of the caller's, a task
/// aborted while an append waits on another writer's lock) never gives its
/// connection back to the pool: the query is cancelled on the server and the
/// connection closed, so later operations do not wait behind it.
///
/// # An append whose commit is lost
///
/// When the connection fails while an append is committed, the append may or
/// may not be stored: it fails with [`StoreError::CommitUnknown`]. Retrying
/// the same append with the same [`Expect`] resolves it: when the session
/// ends with exactly those entries after the expected leaf, the retry answers
/// as the first append would have, writing nothing.
///
/// The password of the connection string never appears in an error or in
/// `Debug`.
#[derive(Debug)]
pub struct PgStore {
    config: Config,
    schema: Option<String>,
    read_only: bool,
    statement_timeout: Duration,
    connect_timeout: Duration,
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
    list_first: Statement,
    list_after: Statement,
}

/// A connection borrowed from the store; given back on drop when the
/// operation that used it finished, cancelled and closed when it did not.
struct Pooled<'a> {
    conn: Option<PgConn>,
    store: &'a PgStore,
    /// Whether the operation ran to its end (so nothing is in flight).
    finished: bool,
    _permit: SemaphorePermit<'a>,
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        if self.finished {
            if !conn.client.is_closed() {
                self.store
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(conn);
            }
            return;
        }
        // Dropped mid-operation: a query may still run on the server (an
        // append waiting on a row lock, say). Ask the server to cancel it, and
        // close the connection, which rolls back its transaction.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let token = conn.client.cancel_token();
            runtime.spawn(async move {
                let _ = token.cancel_query(NoTls).await;
            });
        }
        drop(conn);
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
        PgStore::start(url, options, false).await
    }

    /// Connects to read the store: nothing is created or changed (no schema,
    /// no tables; every transaction is read-only). A database without
    /// agentmsg's tables is a [`StoreError::NotAStore`]; appends fail.
    pub async fn connect_existing(url: &str, options: PgOptions) -> Result<PgStore, StoreError> {
        PgStore::start(url, options, true).await
    }

    async fn start(url: &str, options: PgOptions, read_only: bool) -> Result<PgStore, StoreError> {
        let config = Config::from_str(url).map_err(|e| StoreError::InvalidAddress {
            address: redact_passwords(url),
            reason: redact_passwords(&e.to_string()),
        })?;
        let store = PgStore {
            config,
            schema: options.schema,
            read_only,
            statement_timeout: options.statement_timeout,
            connect_timeout: options.connect_timeout,
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(options.connections.max(1)),
        };
        let mut first = store.connect_one(!read_only).await?;
        let ready = async {
            if read_only {
                check_schema(&first.client, url).await?;
            } else {
                migrate(&mut first.client).await?;
            }
            first.prepare().await
        };
        within(store.statement_timeout, "connecting", ready).await?;
        store
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(first.into_conn()?);
        Ok(store)
    }

    /// A new connection, set up, within the connect timeout.
    async fn connect_one(&self, create_schema: bool) -> Result<Unprepared, StoreError> {
        within(self.connect_timeout, "connecting", async {
            let (client, connection) = self.config.connect(NoTls).await?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    log::warn!("agentmsg postgres store: connection closed: {e}");
                }
            });
            let mut setup = format!(
                "SET statement_timeout = {}",
                self.statement_timeout.as_millis().min(i32::MAX as u128)
            );
            if self.read_only {
                setup.push_str("; SET default_transaction_read_only = on");
            }
            if let Some(schema) = &self.schema {
                let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
                if create_schema {
                    client
                        .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}"))
                        .await?;
                }
                setup.push_str(&format!("; SET search_path TO {quoted}"));
            }
            client.batch_execute(&setup).await?;
            Ok(Unprepared {
                client,
                prepared: None,
            })
        })
        .await
    }

    /// Runs `operation` on a pooled connection within the statement timeout.
    /// The connection goes back to the pool only when the operation ran to its
    /// end; dropped or timed out, it is cancelled and closed.
    async fn with_conn<T, F>(&self, what: &'static str, operation: F) -> Result<T, StoreError>
    where
        F: for<'c> AsyncFnOnce(&'c mut PgConn) -> Result<T, StoreError>,
    {
        within(self.statement_timeout, what, async {
            let mut conn = self.get().await?;
            let result = operation(&mut conn).await;
            // A connection the server closed or broke is not given back.
            conn.finished = !matches!(&result, Err(e) if outcome_unknown(e));
            result
        })
        .await
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
            finished: false,
            _permit: permit,
        })
    }
}

/// A connection whose statements are not prepared yet.
struct Unprepared {
    client: Client,
    prepared: Option<[Statement; 7]>,
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
            c.prepare(
                "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
                 FROM agentmsg_sessions ORDER BY id COLLATE \"C\" LIMIT $1",
            )
            .await?,
            c.prepare(
                "SELECT id, name, created_ms, updated_ms, entry_count, leaf_id
                 FROM agentmsg_sessions WHERE id COLLATE \"C\" > $1
                 ORDER BY id COLLATE \"C\" LIMIT $2",
            )
            .await?,
        ]);
        Ok(())
    }

    fn into_conn(self) -> Result<PgConn, StoreError> {
        let [info, lock, insert, update, load, list_first, list_after] = self
            .prepared
            .ok_or_else(|| StoreError::Task("statements not prepared".to_owned()))?;
        Ok(PgConn {
            client: self.client,
            info,
            lock,
            insert,
            update,
            load,
            list_first,
            list_after,
        })
    }
}

/// `future`, failing with [`StoreError::Timeout`] after `limit`.
async fn within<T>(
    limit: Duration,
    operation: &'static str,
    future: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(limit, future).await {
        Ok(result) => result,
        Err(_) => Err(StoreError::Timeout {
            operation,
            after: limit,
        }),
    }
}

/// Checks, changing nothing, that the database holds an agentmsg schema this
/// build reads.
async fn check_schema(client: &Client, url: &str) -> Result<(), StoreError> {
    let found: bool = client
        .query_one("SELECT to_regclass('agentmsg_schema') IS NOT NULL", &[])
        .await?
        .get(0);
    let not_a_store = |reason: &str| StoreError::NotAStore {
        address: redact_passwords(url),
        reason: reason.to_owned(),
    };
    if !found {
        return Err(not_a_store("the database has no agentmsg tables"));
    }
    if let Some(why) = sql::empty_schema(schema_version(client).await?) {
        return Err(not_a_store(why));
    }
    Ok(())
}

/// The database's schema version, when this build reads it.
async fn schema_version(client: &impl GenericClient) -> Result<i64, StoreError> {
    let version = client.query_one(sql::VERSION_QUERY, &[]).await?.get(0);
    sql::readable_version(version)
}

async fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(VERSION_TABLE).await?;
    let version = schema_version(&tx).await?;
    let from = version.max(0) as usize;
    for (shared, own) in MIGRATIONS[from..].iter().zip(&PG_MIGRATIONS[from..]) {
        tx.batch_execute(shared).await?;
        tx.batch_execute(own).await?;
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

/// Whether a failed commit may have been applied: the connection broke, the
/// server went away (operator intervention: a shutdown, a terminated backend,
/// class 57; a connection exception, class 08), or the wait for its answer
/// ended, rather than the server refusing the transaction.
fn outcome_unknown(e: &StoreError) -> bool {
    match e {
        StoreError::Postgres(e) => match e.as_db_error() {
            None => true,
            Some(db) => {
                let code = db.code().code();
                code.starts_with("57") || code.starts_with("08")
            }
        },
        StoreError::Timeout { .. } => true,
        _ => false,
    }
}

/// What an append does on its connection.
async fn append_on(
    conn: &mut PgConn,
    session: &str,
    entries: &[StoredEntry],
    expected: Expect<'_>,
    committing: &AtomicBool,
) -> Result<Appended, StoreError> {
    let PgConn {
        client,
        lock,
        insert,
        update,
        ..
    } = conn;
    let tx = client.transaction().await?;
    let row = tx
        .query_opt(&*lock, &[&session])
        .await?
        .ok_or_else(|| not_found(session))?;
    let count: i64 = row.try_get(0)?;
    let leaf: Option<String> = row.try_get(1)?;
    let name: Option<String> = row.try_get(2)?;
    let ids: Vec<Option<&str>> = entries.iter().map(StoredEntry::id).collect();
    let present: Vec<&str> = ids.iter().flatten().copied().collect();
    let refused = match expected.check(session, leaf.as_deref()) {
        Err(conflict) => Some(conflict),
        Ok(()) => {
            let (taken, named) = stored_relations(&tx, session, &present).await?;
            check_tree(
                session,
                entries,
                |id| taken.contains(id),
                |id| named.contains(id),
            )
            .err()
        }
    };
    if let Some(refused) = refused {
        // A retry of an append whose commit was lost, and did land: the session
        // ends with exactly these entries after the leaf it expected.
        if let Some(appended) = already_stored(&tx, session, count, entries, expected).await? {
            return Ok(appended);
        }
        return Err(refused);
    }
    let seqs: Vec<i64> = (0..entries.len() as i64).map(|i| count + i).collect();
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
    committing.store(true, Ordering::SeqCst);
    tx.commit().await?;
    Ok(Appended {
        first: u64::try_from(count).unwrap_or(0),
        entries: u64::try_from(total).unwrap_or(0),
        leaf,
    })
}

/// Of `ids`, those the session's stored entries have, and those they name as
/// their parent, in one query on the two indexes (none for an append whose
/// entries have no ids).
async fn stored_relations(
    tx: &tokio_postgres::Transaction<'_>,
    session: &str,
    ids: &[&str],
) -> Result<(HashSet<String>, HashSet<String>), StoreError> {
    let mut taken = HashSet::new();
    let mut named = HashSet::new();
    if ids.is_empty() {
        return Ok((taken, named));
    }
    let rows = tx
        .query(
            "SELECT id, parent_id FROM agentmsg_entries
             WHERE session = $1 AND (id = ANY($2) OR parent_id = ANY($2))",
            &[&session, &ids],
        )
        .await?;
    let wanted: HashSet<&str> = ids.iter().copied().collect();
    for row in rows {
        let id: Option<String> = row.try_get(0)?;
        let parent: Option<String> = row.try_get(1)?;
        if let Some(id) = id.filter(|id| wanted.contains(id.as_str())) {
            taken.insert(id);
        }
        if let Some(parent) = parent.filter(|p| wanted.contains(p.as_str())) {
            named.insert(parent);
        }
    }
    Ok((taken, named))
}

/// What the append of `entries` answered, when the session (of `count`
/// entries) already ends with exactly them after the leaf `expected` names.
async fn already_stored(
    tx: &tokio_postgres::Transaction<'_>,
    session: &str,
    count: i64,
    entries: &[StoredEntry],
    expected: Expect<'_>,
) -> Result<Option<Appended>, StoreError> {
    let n = entries.len() as i64;
    if entries.is_empty() || count < n {
        return Ok(None);
    }
    let first = count - n;
    let tail = tx
        .query(
            "SELECT line FROM agentmsg_entries WHERE session = $1 AND seq >= $2 ORDER BY seq",
            &[&session, &first],
        )
        .await?;
    let same = tail.len() == entries.len()
        && tail
            .iter()
            .zip(entries)
            .all(|(row, entry)| row.get::<_, &str>(0) == entry.line());
    if !same {
        return Ok(None);
    }
    let before: Option<String> = tx
        .query_opt(
            "SELECT id FROM agentmsg_entries
             WHERE session = $1 AND seq < $2 AND id IS NOT NULL ORDER BY seq DESC LIMIT 1",
            &[&session, &first],
        )
        .await?
        .map(|row| row.get(0));
    if expected.check(session, before.as_deref()).is_err() {
        return Ok(None);
    }
    Ok(Some(Appended {
        first: u64::try_from(first).unwrap_or(0),
        entries: u64::try_from(count).unwrap_or(0),
        leaf: leaf_after(before.as_deref(), entries).map(str::to_owned),
    }))
}

impl SessionStore for PgStore {
    async fn create(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        self.with_conn("create", async |conn| {
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
        })
        .await
    }

    async fn open(&self, session: &str) -> Result<SessionInfo, StoreError> {
        validate_session_id(session)?;
        self.with_conn("open", async |conn| {
            let row = conn.client.query_opt(&conn.info, &[&session]).await?;
            info_of_row(&row.ok_or_else(|| not_found(session))?)
        })
        .await
    }

    async fn append(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> Result<Appended, StoreError> {
        validate_session_id(session)?;
        validate_entries(entries)?;
        let committing = AtomicBool::new(false);
        let result = self
            .with_conn("append", async |conn| {
                append_on(conn, session, entries, expected, &committing).await
            })
            .await;
        match result {
            Err(e) if committing.load(Ordering::SeqCst) && outcome_unknown(&e) => {
                Err(StoreError::CommitUnknown {
                    session: session.to_owned(),
                    source: Box::new(e),
                })
            }
            other => other,
        }
    }

    async fn load(&self, session: &str, from: Cursor) -> Result<Loaded, StoreError> {
        validate_session_id(session)?;
        self.with_conn("load", async |conn| {
            let PgConn {
                client, info, load, ..
            } = conn;
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
        })
        .await
    }

    async fn list(&self, page: &PageRequest) -> Result<Page, StoreError> {
        let limit = i64::try_from(page.limit)
            .unwrap_or(i64::MAX - 1)
            .saturating_add(1);
        self.with_conn("list", async |conn| {
            // Keyset pagination on the `COLLATE "C"` index: a page reads its
            // own rows, however many sessions come before it.
            let rows = match &page.after {
                Some(after) => {
                    conn.client
                        .query(&conn.list_after, &[after, &limit])
                        .await?
                }
                None => conn.client.query(&conn.list_first, &[&limit]).await?,
            };
            let sessions = rows
                .iter()
                .map(info_of_row)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(sql::page_of(sessions, page.limit))
        })
        .await
    }

    async fn delete(&self, session: &str) -> Result<(), StoreError> {
        validate_session_id(session)?;
        self.with_conn("delete", async |conn| {
            let deleted = conn
                .client
                .execute("DELETE FROM agentmsg_sessions WHERE id = $1", &[&session])
                .await?;
            if deleted == 0 {
                return Err(not_found(session));
            }
            Ok(())
        })
        .await
    }
}
