//! Session stores: where sessions live, one API over three backends.
//!
//! A store keeps sessions by id. A session is a sequence of [`StoredEntry`]s,
//! each one transcript line kept byte for byte (unknown and custom lines too),
//! with the keys the store queries read from it (`id`, `parentId`, kind,
//! timestamp). Every backend gives the same guarantees:
//!
//! - one [`append`](SessionStore::append) call is atomic: concurrent writers, in
//!   this process or others, never interleave or tear each other's entries, and
//!   readers see all of an append or none of it;
//! - an append can name the leaf it expects ([`Expect`]); if another writer
//!   appended first, nothing is written and the call fails with
//!   [`StoreError::Conflict`], which carries the leaf to retry from, so a
//!   session's parent chain never forks unless the application asks for it;
//! - nothing is dropped: a line whose keys cannot be read is stored and loaded
//!   verbatim and reported ([`Loaded::problems`]), and a line torn by a crash is
//!   reported and kept aside ([`Loaded::torn`]).
//!
//! The backends:
//!
//! - [`JsonlDir`], always built: one transcript file per session in a
//!   directory, readable by every agentmsg tool;
//! - `SqliteStore` (feature `sqlite`): one SQLite database file in WAL mode;
//! - `PgStore` (feature `postgres`): PostgreSQL, for agent services on many
//!   machines.
//!
//! [`StoreAddress`] parses the address the command line takes (`DIR`,
//! `sqlite:PATH`, `postgres://…`, each with an optional `#SESSION`), and
//! [`AnyStore`] opens whichever backend it names.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! # use agentmsg::store::{JsonlDir, SessionStore, StoredEntry, Expect, Cursor};
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     // JsonlDir's futures never wait on anything: one poll finishes them.
//! #     let mut f = std::pin::pin!(f);
//! #     let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
//! #     match f.as_mut().poll(&mut cx) { std::task::Poll::Ready(v) => v, _ => unreachable!() }
//! # }
//! # let dir = std::env::temp_dir().join(format!("agentmsg-store-doc-{}", std::process::id()));
//! block_on(async {
//!     let store = JsonlDir::open(&dir)?;
//!     store.create("demo").await?;
//!     let (first, _) = StoredEntry::from_line(r#"{"role":"user","content":"hi","id":"a"}"#);
//!     store.append("demo", &[first], Expect::Empty).await?;
//!     let (second, _) = StoredEntry::from_line(r#"{"role":"notice","text":"later","id":"b","parentId":"a"}"#);
//!     store.append("demo", &[second], Expect::Leaf("a")).await?;
//!     let loaded = store.load("demo", Cursor::START).await?;
//!     assert_eq!(loaded.entries.len(), 2);
//!     assert_eq!(loaded.entries[1].line(), r#"{"role":"notice","text":"later","id":"b","parentId":"a"}"#);
//!     Ok::<_, agentmsg::store::StoreError>(())
//! })
//! .unwrap();
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::collections::{HashMap, HashSet};
use std::future::Future;

mod address;
mod copy;
mod entry;
mod error;
mod file_lock;
mod identity;
mod jsonl_dir;
#[cfg(feature = "postgres")]
mod postgres;
mod regular_file;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;
mod stored_session;
mod tree_index;

pub use crate::redact::redact_passwords;
pub use address::{AnyStore, Backend, StoreAddress};
pub use copy::{copy_session, CopiedSession};
pub use entry::{LineProblem, StoredEntry};
pub use error::StoreError;
pub use jsonl_dir::{JsonlDir, DEFAULT_LOCK_TIMEOUT};
#[cfg(feature = "postgres")]
pub use postgres::{PgOptions, PgStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use stored_session::{StoredSession, StoredSessionError};

/// Where sessions live: the operations every backend offers.
///
/// The methods are `async` (agents run on tokio); each returns a `Send` future,
/// so a store can be used from spawned tasks. They are written as
/// `fn … -> impl Future + Send` rather than `async fn` so that the `Send` bound
/// is part of the trait (a plain `async fn` in a public trait leaves callers
/// unable to require it); implementations still write `async fn`. The trait is
/// therefore not object-safe: code generic over stores takes `S: SessionStore`,
/// and [`AnyStore`] picks a backend at run time.
pub trait SessionStore: Send + Sync {
    /// Creates an empty session. Fails with [`StoreError::Exists`] when one has
    /// the id.
    fn create(&self, session: &str)
        -> impl Future<Output = Result<SessionInfo, StoreError>> + Send;

    /// Opens a session: what [`list`](Self::list) says of it. Fails with
    /// [`StoreError::NotFound`].
    fn open(&self, session: &str) -> impl Future<Output = Result<SessionInfo, StoreError>> + Send;

    /// Appends `entries` to the session, atomically, after checking that its
    /// leaf (the id of its last entry that has one) is what `expected` says.
    /// When it is not, nothing is written and the call fails with
    /// [`StoreError::Conflict`]. Entries are stored as their exact lines; a line
    /// that is blank or holds a newline is refused ([`StoreError::InvalidEntry`])
    /// and nothing is written. The append is persisted (as the backend's
    /// durability setting says) before the future completes.
    fn append(
        &self,
        session: &str,
        entries: &[StoredEntry],
        expected: Expect<'_>,
    ) -> impl Future<Output = Result<Appended, StoreError>> + Send;

    /// Loads the session's entries from `from` on ([`Cursor::START`] for all of
    /// them).
    fn load(
        &self,
        session: &str,
        from: Cursor,
    ) -> impl Future<Output = Result<Loaded, StoreError>> + Send;

    /// Lists sessions in id order, one page at a time.
    fn list(&self, page: &PageRequest) -> impl Future<Output = Result<Page, StoreError>> + Send;

    /// Deletes a session and its entries. Fails with [`StoreError::NotFound`].
    fn delete(&self, session: &str) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Implements [`SessionStore`] for pointers to a store, each call forwarded.
macro_rules! forward_store {
    ($($ty:ty),*) => {$(
        /// The store it points to.
        impl<S: SessionStore + ?Sized> SessionStore for $ty {
            fn create(
                &self,
                session: &str,
            ) -> impl Future<Output = Result<SessionInfo, StoreError>> + Send {
                (**self).create(session)
            }

            fn open(
                &self,
                session: &str,
            ) -> impl Future<Output = Result<SessionInfo, StoreError>> + Send {
                (**self).open(session)
            }

            fn append(
                &self,
                session: &str,
                entries: &[StoredEntry],
                expected: Expect<'_>,
            ) -> impl Future<Output = Result<Appended, StoreError>> + Send {
                (**self).append(session, entries, expected)
            }

            fn load(
                &self,
                session: &str,
                from: Cursor,
            ) -> impl Future<Output = Result<Loaded, StoreError>> + Send {
                (**self).load(session, from)
            }

            fn list(
                &self,
                page: &PageRequest,
            ) -> impl Future<Output = Result<Page, StoreError>> + Send {
                (**self).list(page)
            }

            fn delete(&self, session: &str) -> impl Future<Output = Result<(), StoreError>> + Send {
                (**self).delete(session)
            }
        }
    )*};
}

forward_store!(&S, std::sync::Arc<S>, Box<S>);

/// What an append expects the session's leaf to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect<'a> {
    /// Append whatever the leaf is.
    Any,
    /// The session has no entry with an id yet.
    Empty,
    /// The leaf is the entry with this id.
    Leaf(&'a str),
}

impl<'a> Expect<'a> {
    /// `Leaf(id)`, or `Empty` for `None`.
    pub fn leaf(id: Option<&'a str>) -> Self {
        id.map_or(Expect::Empty, Expect::Leaf)
    }

    /// Checks `actual` (the stored leaf) against the expectation.
    pub(crate) fn check(self, session: &str, actual: Option<&str>) -> Result<(), StoreError> {
        let expected = match self {
            Expect::Any => return Ok(()),
            Expect::Empty => None,
            Expect::Leaf(id) => Some(id),
        };
        if expected == actual {
            return Ok(());
        }
        Err(StoreError::Conflict {
            session: session.to_owned(),
            expected: expected.map(str::to_owned),
            actual: actual.map(str::to_owned),
        })
    }
}

/// What an append did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The position of the first entry appended (from 0).
    pub first: u64,
    /// The number of entries in the session now.
    pub entries: u64,
    /// The session's leaf now.
    pub leaf: Option<String>,
}

/// A position in a session: the number of entries before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cursor(pub u64);

impl Cursor {
    /// The start of a session.
    pub const START: Cursor = Cursor(0);
}

/// A session's entries as loaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// The entries from the cursor on, in order.
    pub entries: Vec<StoredEntry>,
    /// The first entry's position.
    pub first: u64,
    /// The cursor after the last entry: load from it for what comes next.
    pub next: Cursor,
    /// Entries whose keys could not all be read, or whose stored columns
    /// disagree with their line. Each is in `entries` all the same (or, when it
    /// is not text, here with its bytes).
    pub problems: Vec<LoadProblem>,
    /// Lines a crash cut off, kept aside (never entries).
    pub torn: Vec<TornEntry>,
}

/// An entry that was loaded with a problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProblem {
    /// Its position in the session.
    pub position: u64,
    /// What is wrong.
    pub problem: EntryProblem,
}

/// What is wrong with a loaded entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// Its line's keys could not all be read (the entry is loaded as it is).
    #[error("{0}")]
    Line(#[from] LineProblem),
    /// The line is not UTF-8: it is no entry, and its bytes are here.
    #[error("not UTF-8 ({} bytes kept)", .0.len())]
    NotUtf8(Vec<u8>),
    /// A database row whose column disagrees with its line (a row written by
    /// something else): the line is loaded, and the column reported.
    #[error("column `{column}` is {stored:?} but the line says {line:?}")]
    ColumnDisagrees {
        /// The column.
        column: &'static str,
        /// Its stored value.
        stored: Option<String>,
        /// What the line says.
        line: Option<String>,
    },
}

/// A line cut off by a crash mid-append: kept aside, never an entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornEntry {
    /// Where it is kept: the session file itself (its unfinished last line) or
    /// the file it was moved to.
    pub kept_in: std::path::PathBuf,
    /// Its exact bytes.
    pub raw: Vec<u8>,
}

/// A session as [`SessionStore::list`] shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Its id.
    pub id: String,
    /// Its name: that of its last `session_info` line, if any.
    pub name: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// When it was last appended to, in milliseconds since the Unix epoch.
    pub updated_ms: i64,
    /// How many entries it has.
    pub entries: u64,
    /// Its leaf: the id of its last entry that has one.
    pub leaf: Option<String>,
}

/// Which page of sessions to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// List the sessions whose ids sort after this one (`None`: from the
    /// first). Pass the previous [`Page::next`].
    pub after: Option<String>,
    /// At most this many.
    pub limit: usize,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest {
            after: None,
            limit: 100,
        }
    }
}

/// A page of sessions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    /// The sessions, in id order.
    pub sessions: Vec<SessionInfo>,
    /// Where the next page starts, when there is one.
    pub next: Option<String>,
    /// What is named like a session in this page's range but was skipped, with
    /// why: in a [`JsonlDir`], a symbolic link, a directory or a FIFO named
    /// `ID.jsonl`, or a session file another process keeps locked. Never
    /// anything for the SQL stores.
    pub skipped: Vec<SkippedSession>,
}

/// Something named like a session that a listing skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedSession {
    /// The id its name gives.
    pub id: String,
    /// Why it was skipped.
    pub reason: String,
}

/// When an append is on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// An append is in the operating system's hands when it returns: it
    /// survives a crash of the process, not a power loss. The default.
    #[default]
    Os,
    /// An append is synced to the disk before it returns (`fsync`): it survives
    /// a power loss too, at the cost of a disk flush per append.
    Disk,
}

/// The longest session id a store takes.
pub const MAX_SESSION_ID_LEN: usize = crate::redact::MAX_SESSION_ID_LEN;

/// Checks a session id: 1 to 128 ASCII letters, digits, `-`, `_` and `.`, not
/// starting with `.` or `-` (ids are file names in a [`JsonlDir`]; every store
/// takes the same ones, so sessions move between stores).
pub fn validate_session_id(session: &str) -> Result<(), StoreError> {
    let invalid = |reason| {
        Err(StoreError::InvalidSessionId {
            session: session.to_owned(),
            reason,
        })
    };
    match crate::redact::session_id_problem(session) {
        Some(reason) => invalid(reason),
        None => Ok(()),
    }
}

/// Checks that every entry can be stored as one line, by every backend (so a
/// session copies from any store to any other).
pub(crate) fn validate_entries(entries: &[StoredEntry]) -> Result<(), StoreError> {
    for (index, entry) in entries.iter().enumerate() {
        // A key the stores keep in a column of their own (checked when the
        // entry was read).
        if let Some(key) = entry.nul_key() {
            return Err(StoreError::InvalidEntry {
                index,
                reason: key.reason(),
            });
        }
        // Checked when the entry was made (`StoredEntry::from_line`), so
        // that an append does not read each line once more.
        if let Some(reason) = entry.unstorable() {
            return Err(StoreError::InvalidEntry { index, reason });
        }
    }
    Ok(())
}

/// Checks that `entries`, appended to a session whose ids `taken` says and
/// whose entries name as parents what `named_parent` says, keep the session a
/// tree: no id twice (stored, or twice in the append), and no parent that
/// could close a cycle (the entry itself, an entry later in the append, or an
/// id that stored entries already name as their parent).
pub(crate) fn check_tree(
    session: &str,
    entries: &[StoredEntry],
    taken: impl Fn(&str) -> bool,
    named_parent: impl Fn(&str) -> bool,
) -> Result<(), StoreError> {
    let refuse = |index: usize, id: &str, reason| {
        Err(StoreError::BreaksTree {
            session: session.to_owned(),
            index,
            id: id.to_owned(),
            reason,
        })
    };
    // Where each id of the append is (the first place), and the parents its
    // entries named so far. One entry, the common append, has nothing of the
    // append to look up: neither map is filled, so neither allocates.
    // The sets and maps of entry ids hash with foldhash, several times
    // cheaper than std's SipHash on ids of a few dozen bytes
    // (`benches/README.md`, the batch of 100), and seeded at random for each
    // as std's are: the ids come from files anyone may have written, and a
    // fixed seed would let such a file choose ids that collide.
    let mut at: foldhash::HashMap<&str, usize> = HashMap::default();
    if entries.len() > 1 {
        for (index, entry) in entries.iter().enumerate() {
            if let Some(id) = entry.id() {
                if let Some(first) = at.insert(id, index) {
                    return refuse(first, id, "a later entry of the append has the same id");
                }
            }
        }
    }
    let mut parents_so_far: foldhash::HashSet<&str> = HashSet::default();
    for (index, entry) in entries.iter().enumerate() {
        let parent = entry.parent().id().map(crate::MessageId::as_str);
        if let Some(id) = entry.id() {
            if taken(id) {
                return refuse(index, id, "the session has an entry with this id already");
            }
            if parent == Some(id) {
                return refuse(index, id, "its parentId names itself");
            }
            if parent.and_then(|p| at.get(p)).is_some_and(|&p| p > index) {
                return refuse(
                    index,
                    id,
                    "its parentId names an entry that comes later in the append",
                );
            }
            if named_parent(id) || parents_so_far.contains(id) {
                return refuse(
                    index,
                    id,
                    "earlier entries name this id as their parent, which could close a cycle",
                );
            }
        }
        if let Some(parent) = parent.filter(|_| index + 1 < entries.len()) {
            parents_so_far.insert(parent);
        }
    }
    Ok(())
}

/// The leaf after `entries` follow a session whose leaf was `leaf`.
pub(crate) fn leaf_after<'a>(leaf: Option<&'a str>, entries: &'a [StoredEntry]) -> Option<&'a str> {
    entries.iter().rev().find_map(StoredEntry::id).or(leaf)
}
