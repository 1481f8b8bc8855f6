//! What the SQL stores share: the schema, its migrations, and reading a row
//! back into an entry.

use super::{EntryProblem, LoadProblem, Page, SessionInfo, StoreError, StoredEntry};
use crate::ParentId;

/// The schema version this build writes and reads.
pub(crate) const SCHEMA_VERSION: i64 = 2;

/// Holds the schema version (one row; none before the first migration).
pub(crate) const VERSION_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS agentmsg_schema (version BIGINT NOT NULL)";

/// Migration `i` takes the schema from version `i` to `i + 1`. Each is plain SQL
/// both SQLite and PostgreSQL run (PostgreSQL then runs its own part,
/// [`PG_MIGRATIONS`]).
pub(crate) const MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    // 0 → 1: sessions and their entries, each entry its exact line text with the
    // columns the API queries.
    "CREATE TABLE agentmsg_sessions (
        id TEXT PRIMARY KEY,
        name TEXT,
        created_ms BIGINT NOT NULL,
        updated_ms BIGINT NOT NULL,
        entry_count BIGINT NOT NULL,
        leaf_id TEXT
    );
    CREATE TABLE agentmsg_entries (
        session TEXT NOT NULL REFERENCES agentmsg_sessions (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        id TEXT,
        parent_id TEXT,
        kind TEXT NOT NULL,
        timestamp_ms BIGINT,
        line TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    );
    CREATE INDEX agentmsg_entries_by_id ON agentmsg_entries (session, id);",
    // 1 → 2: the entries that name an id as their parent, found without a scan
    // (an append refuses an id its session's entries already name as parent).
    "CREATE INDEX agentmsg_entries_by_parent ON agentmsg_entries (session, parent_id);",
];

/// PostgreSQL's own part of each migration, run after the shared one.
#[cfg(feature = "postgres")]
pub(crate) const PG_MIGRATIONS: [&str; SCHEMA_VERSION as usize] = [
    "",
    // Sessions are listed in byte order (`COLLATE "C"`, as the other stores
    // sort ids), which the primary key's index, in the database's collation,
    // cannot give: without this index each page is a scan and a sort.
    "CREATE INDEX agentmsg_sessions_by_id_c ON agentmsg_sessions (id COLLATE \"C\");",
];

/// The schema version a database holds (0 before the first migration), in
/// SQL both SQLite and PostgreSQL run.
pub(crate) const VERSION_QUERY: &str =
    "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM agentmsg_schema";

/// `version`, the schema version a database holds, when this build reads it.
pub(crate) fn readable_version(version: i64) -> Result<i64, StoreError> {
    if version > SCHEMA_VERSION {
        return Err(StoreError::SchemaTooNew {
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    Ok(version)
}

/// Why a database whose schema is at `version` cannot be read without
/// migrating it: a schema table with no version in it.
pub(crate) fn empty_schema(version: i64) -> Option<&'static str> {
    (version < 1).then_some("the database's agentmsg schema is empty")
}

/// The page of `sessions`, fetched as at most `limit + 1` rows in id order
/// (one more than the page, to know whether another follows).
pub(crate) fn page_of(mut sessions: Vec<SessionInfo>, limit: usize) -> Page {
    let more = sessions.len() > limit;
    sessions.truncate(limit);
    let next = more
        .then(|| sessions.last().map(|s| s.id.clone()))
        .flatten();
    Page {
        sessions,
        next,
        skipped: Vec::new(),
    }
}

/// A row of `agentmsg_entries` as read, before it is checked.
pub(crate) struct Row {
    pub seq: i64,
    pub id: Option<String>,
    pub parent_id: Option<String>,
    pub kind: Option<String>,
    pub timestamp_ms: Option<i64>,
    /// The line; `Err` with the bytes when it is not text.
    pub line: Result<String, Vec<u8>>,
}

/// The entry a row holds (its line is the truth), with a problem for each
/// column that disagrees with the line and for a line whose keys do not read.
/// `None` when the line is not text: its bytes are in the problem.
pub(crate) fn entry_of_row(row: Row, problems: &mut Vec<LoadProblem>) -> Option<StoredEntry> {
    let position = u64::try_from(row.seq).unwrap_or(0);
    let line = match row.line {
        Ok(line) => line,
        Err(bytes) => {
            problems.push(LoadProblem {
                position,
                problem: EntryProblem::NotUtf8(bytes),
            });
            return None;
        }
    };
    let (entry, problem) = StoredEntry::from_line(line);
    if let Some(problem) = problem {
        problems.push(LoadProblem {
            position,
            problem: problem.into(),
        });
    }
    let mut disagree = |column, stored: Option<String>, line: Option<String>| {
        if stored != line {
            problems.push(LoadProblem {
                position,
                problem: EntryProblem::ColumnDisagrees {
                    column,
                    stored,
                    line,
                },
            });
        }
    };
    disagree("id", row.id, entry.id().map(str::to_owned));
    disagree(
        "parent_id",
        row.parent_id,
        entry.parent().id().map(|p| p.as_str().to_owned()),
    );
    disagree("kind", row.kind, Some(entry.kind().to_owned()));
    disagree(
        "timestamp_ms",
        row.timestamp_ms.map(|t| t.to_string()),
        entry.timestamp_ms().map(|t| t.to_string()),
    );
    if entry.line().contains('\n') {
        problems.push(LoadProblem {
            position,
            problem: EntryProblem::Line(super::LineProblem::NotJson(
                "the stored line holds a newline".to_owned(),
            )),
        });
    }
    Some(entry)
}

/// The `parent_id` column of an entry.
pub(crate) fn parent_column(entry: &StoredEntry) -> Option<&str> {
    match entry.parent() {
        ParentId::Id(id) => Some(id.as_str()),
        ParentId::Previous | ParentId::Root => None,
    }
}

/// The session name after `entries` follow a session named `name`.
pub(crate) fn name_after<'a>(name: Option<&'a str>, entries: &'a [StoredEntry]) -> Option<&'a str> {
    entries
        .iter()
        .rev()
        .find_map(StoredEntry::session_name)
        .or(name)
}

/// Milliseconds since the Unix epoch, now.
pub(crate) fn now_ms() -> i64 {
    i64::try_from(crate::time::now_millis()).unwrap_or(i64::MAX)
}
