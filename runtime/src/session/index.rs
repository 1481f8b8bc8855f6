//! The entries of a session by id.
//!
//! The table holds entry indexes only: the ids stay in the entries, so
//! indexing a session of 100,000 entries copies no id, and the table is an
//! eighth of the size a map keyed by the ids would be.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::node::Node;

/// Entry indexes, found by the id of their entry.
#[derive(Clone, Default)]
pub(crate) struct IdIndex {
    table: HashTable<usize>,
    hasher: foldhash::fast::RandomState,
}

impl std::fmt::Debug for IdIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdIndex")
            .field("len", &self.table.len())
            .finish()
    }
}

fn id_of<N: Node>(entries: &[N], i: usize) -> Option<&str> {
    entries.get(i)?.id().map(|id| id.as_str())
}

impl IdIndex {
    /// Room for `additional` more entries.
    pub(crate) fn reserve<N: Node>(&mut self, additional: usize, entries: &[N]) {
        let hasher = &self.hasher;
        self.table.reserve(additional, |&i| {
            hasher.hash_one(id_of(entries, i).unwrap_or_default())
        });
    }

    /// The index of the entry whose id is `id`.
    pub(crate) fn get<N: Node>(&self, entries: &[N], id: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        self.table
            .find(hash, |&i| id_of(entries, i) == Some(id))
            .copied()
    }

    /// Whether an entry has the id `id`.
    pub(crate) fn contains<N: Node>(&self, entries: &[N], id: &str) -> bool {
        self.get(entries, id).is_some()
    }

    /// Indexes entry `i` under its id (nothing when it has none), in one
    /// probe; when another entry already has that id, it stays indexed and
    /// its index is returned.
    pub(crate) fn insert<N: Node>(&mut self, entries: &[N], i: usize) -> Option<usize> {
        let id = id_of(entries, i)?;
        let hasher = &self.hasher;
        let hash = hasher.hash_one(id);
        match self.table.entry(
            hash,
            |&j| id_of(entries, j) == Some(id),
            |&j| hasher.hash_one(id_of(entries, j).unwrap_or_default()),
        ) {
            hashbrown::hash_table::Entry::Occupied(at) => Some(*at.get()),
            hashbrown::hash_table::Entry::Vacant(at) => {
                at.insert(i);
                None
            }
        }
    }
}
