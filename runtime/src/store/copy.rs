//! Copying sessions from one store to another ([`copy_session`]): for
//! example a directory of session files to PostgreSQL when a service outgrows
//! one machine.

use super::{Cursor, Expect, SessionStore, StoreError, StoredEntry};

/// How many entries one append of a copy carries.
const BATCH: usize = 1000;

/// What [`copy_session`] did to one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedSession {
    /// The session's id.
    pub id: String,
    /// Entries the target held already (a copy begun before, or done).
    pub already: u64,
    /// Entries appended now.
    pub copied: u64,
    /// Rows of the source that are no entry (not UTF-8; a line a crash tore),
    /// which no store takes as an entry and so are not copied.
    pub not_copied: u64,
    /// Entries the source holds.
    pub source_entries: u64,
    /// Entries the target holds once done.
    pub target_entries: u64,
}

impl CopiedSession {
    /// Whether the target holds as many entries as the source.
    pub fn complete(&self) -> bool {
        self.source_entries == self.target_entries
    }
}

/// Copies the session `id` of `from` into `to`, and counts both at the end.
///
/// Idempotent and resumable: a session the target lacks is created; one it
/// holds must begin with the source's entries, line for line (a copy begun
/// before, or done), and only the rest is appended, in batches of 1000,
/// each expecting the leaf the one before left. A target whose entries are
/// not the start of the source's is refused with [`StoreError::Diverged`],
/// and nothing is written.
pub async fn copy_session<F, T>(from: &F, to: &T, id: &str) -> Result<CopiedSession, StoreError>
where
    F: SessionStore,
    T: SessionStore,
{
    let source = from.load(id, Cursor::START).await?;
    let not_copied = u64::try_from(source.problems.len() + source.torn.len()).unwrap_or(u64::MAX);
    let target = match to.load(id, Cursor::START).await {
        Ok(loaded) => loaded.entries,
        Err(StoreError::NotFound { .. }) => {
            to.create(id).await?;
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let diverged = target
        .iter()
        .enumerate()
        .find(|&(i, t)| source.entries.get(i).is_none_or(|s| s.line() != t.line()));
    if let Some((position, _)) = diverged {
        return Err(StoreError::Diverged {
            session: id.to_owned(),
            position: u64::try_from(position).unwrap_or(u64::MAX),
        });
    }
    let already = target.len();
    let mut leaf = to.open(id).await?.leaf;
    let mut copied = 0u64;
    for batch in source.entries[already..].chunks(BATCH) {
        let entries: Vec<StoredEntry> = batch.to_vec();
        let appended = to
            .append(id, &entries, Expect::leaf(leaf.as_deref()))
            .await?;
        leaf = appended.leaf;
        copied += u64::try_from(entries.len()).unwrap_or(u64::MAX);
    }
    let target_entries = to.open(id).await?.entries;
    Ok(CopiedSession {
        id: id.to_owned(),
        already: u64::try_from(already).unwrap_or(u64::MAX),
        copied,
        not_copied,
        source_entries: from.open(id).await?.entries,
        target_entries,
    })
}
