//! What a [`JsonlDir`](super::JsonlDir) keeps of a session to check that an
//! append keeps it a tree: the ids of its entries and the ids they name as
//! parents, in one table.
//!
//! An append is checked and recorded in one pass, one probe per id and one per
//! parent: an entry's id must be new to the table (neither an id nor a parent
//! named by an entry stored or earlier in the append), and its parent must not
//! be itself. The keys are kept one after another in one string, so recording
//! an entry allocates nothing (amortized). When the pass finds a conflict, what
//! it recorded is undone and the shared [`check_tree`] (which the SQL stores
//! use too) says which rule the append breaks, so every backend refuses the
//! same appends with the same error. The pass refuses exactly what
//! `check_tree` refuses: a later entry of the append that has an id already
//! seen, that an earlier entry names as its parent (the cycle and "later in
//! the append" rules: the earlier entry recorded the name), or that the
//! session holds as an id or a parent; and should the two ever disagree,
//! `check_tree` has the last word.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use super::{check_tree, StoreError, StoredEntry};

/// An entry has the key as its id.
const ID: u8 = 1;
/// An entry names the key as its parent.
const PARENT: u8 = 2;

/// A key: where it is in [`TreeIndex::text`] (its start, with what entries
/// make of it, the flags, in the two highest bits) and its length. 16 bytes, so
/// that a session's table stays small (its memory is most of what a batch of
/// appends pays beyond the write; growing it hashes the keys again, which
/// costs less).
#[derive(Debug, Clone, Copy)]
struct Key {
    at: u64,
    len: u64,
}

/// Where the flags are in [`Key::at`] (a string is never 2^62 bytes long).
const FLAGS_SHIFT: u32 = 62;
const START: u64 = (1 << FLAGS_SHIFT) - 1;

impl Key {
    fn new(start: usize, len: usize, flags: u8) -> Key {
        // usize is at most 64 bits wide: the casts lose nothing.
        Key {
            at: (start as u64 & START) | (u64::from(flags) << FLAGS_SHIFT),
            len: len as u64,
        }
    }

    fn flags(&self) -> u8 {
        (self.at >> FLAGS_SHIFT) as u8
    }

    fn set_flags(&mut self, flags: u8) {
        self.at = (self.at & START) | (u64::from(flags) << FLAGS_SHIFT);
    }
}

/// What [`TreeIndex::admit`] changed, to be undone when the append is not
/// written after all.
#[derive(Debug, Clone, Copy)]
struct Change {
    hash: u64,
    /// The entry (of the append) whose id or parent is the key.
    index: usize,
    /// The key is the entry's parent (else its id).
    parent: bool,
    /// The key was added (else only its `PARENT` flag).
    added: bool,
}

/// The ids of a session's entries and the ids they name as parents.
#[derive(Default)]
pub(super) struct TreeIndex {
    /// Every key, one after another.
    text: String,
    table: HashTable<Key>,
    hasher: foldhash::fast::RandomState,
    /// What the last [`admit`](Self::admit) changed, and where `text` ended
    /// before it.
    changes: Vec<Change>,
    mark: usize,
}

impl std::fmt::Debug for TreeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeIndex")
            .field("keys", &self.table.len())
            .finish()
    }
}

fn key_of<'a>(text: &'a str, key: &Key) -> &'a [u8] {
    // Both were usizes (`Key::new`).
    let start = (key.at & START) as usize;
    text.as_bytes()
        .get(start..start.saturating_add(key.len as usize))
        .unwrap_or_default()
}

fn id_of(entry: &StoredEntry) -> Option<&str> {
    entry.id()
}

fn parent_of(entry: &StoredEntry) -> Option<&str> {
    entry.parent().id().map(crate::MessageId::as_str)
}

impl TreeIndex {
    /// Forgets every key.
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.table.clear();
        self.changes.clear();
        self.mark = 0;
    }

    /// Notes a stored entry (one read from the file: never refused).
    pub(super) fn note(&mut self, entry: &StoredEntry) {
        if let Some(id) = id_of(entry) {
            self.flag(id, ID, false);
        }
        if let Some(parent) = parent_of(entry) {
            self.flag(parent, PARENT, false);
        }
    }

    /// Sets `flag` on `key`, added when missing (`None`), or leaves a key
    /// found as it is when `only_new`; with the key's hash and its flags as
    /// they were.
    fn flag(&mut self, key: &str, flag: u8, only_new: bool) -> (u64, Option<u8>) {
        let hash = self.hasher.hash_one(key.as_bytes());
        let text = &self.text;
        let hasher = &self.hasher;
        match self.table.entry(
            hash,
            |k| key_of(text, k) == key.as_bytes(),
            |k| hasher.hash_one(key_of(text, k)),
        ) {
            Entry::Occupied(mut at) => {
                let before = at.get().flags();
                if !only_new {
                    at.get_mut().set_flags(before | flag);
                }
                (hash, Some(before))
            }
            Entry::Vacant(at) => {
                at.insert(Key::new(self.text.len(), key.len(), flag));
                self.text.push_str(key);
                (hash, None)
            }
        }
    }

    fn has(&self, key: &str, flag: u8) -> bool {
        let hash = self.hasher.hash_one(key.as_bytes());
        self.table
            .find(hash, |k| key_of(&self.text, k) == key.as_bytes())
            .is_some_and(|k| k.flags() & flag != 0)
    }

    /// Checks that `entries`, appended to the session, keep it a tree (as
    /// [`check_tree`] says) and records them; [`undo`](Self::undo) forgets
    /// them again.
    pub(super) fn admit(
        &mut self,
        session: &str,
        entries: &[StoredEntry],
    ) -> Result<(), StoreError> {
        if self.record(entries, true) {
            return Ok(());
        }
        self.undo(entries);
        check_tree(
            session,
            entries,
            |id| self.has(id, ID),
            |id| self.has(id, PARENT),
        )?;
        self.record(entries, false);
        Ok(())
    }

    /// Records `entries`; when `strict`, stops at the first id the table has
    /// (or a parent that names its own entry) and says `false`.
    fn record(&mut self, entries: &[StoredEntry], strict: bool) -> bool {
        self.changes.clear();
        self.mark = self.text.len();
        let (text, hasher) = (&self.text, &self.hasher);
        self.table
            .reserve(entries.len(), |k| hasher.hash_one(key_of(text, k)));
        // The id just added when the next entry names it as its parent (a
        // chain, the common append): it was added with both flags, and the
        // next entry's parent needs no probe of its own.
        let mut named_by_next: Option<&str> = None;
        for (index, entry) in entries.iter().enumerate() {
            let parent = parent_of(entry);
            let flagged = named_by_next.take();
            if let Some(id) = id_of(entry) {
                if strict && parent == Some(id) {
                    return false;
                }
                let next = entries.get(index + 1).and_then(parent_of);
                let flags = if next == Some(id) { ID | PARENT } else { ID };
                let (hash, before) = self.flag(id, flags, strict);
                match before {
                    None => {
                        named_by_next = (flags & PARENT != 0).then_some(id);
                        self.changes.push(Change {
                            hash,
                            index,
                            parent: false,
                            added: true,
                        });
                    }
                    Some(_) if strict => return false,
                    // Not strict: `check_tree` let it through; what to undo
                    // is a flag (an entry's id was a parent only).
                    Some(before) => {
                        for (flag, parent) in [(ID, false), (PARENT, true)] {
                            if flags & flag != 0 && before & flag == 0 {
                                self.changes.push(Change {
                                    hash,
                                    index: index + usize::from(parent),
                                    parent,
                                    added: false,
                                });
                            }
                        }
                    }
                }
            }
            if let Some(parent) = parent.filter(|&p| flagged != Some(p)) {
                let (hash, before) = self.flag(parent, PARENT, false);
                let added = before.is_none();
                if added || before.is_some_and(|flags| flags & PARENT == 0) {
                    self.changes.push(Change {
                        hash,
                        index,
                        parent: true,
                        added,
                    });
                }
            }
        }
        true
    }

    /// Forgets what the last [`admit`](Self::admit) of `entries` recorded.
    pub(super) fn undo(&mut self, entries: &[StoredEntry]) {
        while let Some(change) = self.changes.pop() {
            let Some(entry) = entries.get(change.index) else {
                continue;
            };
            let key = if change.parent {
                parent_of(entry)
            } else {
                id_of(entry)
            };
            let Some(key) = key else { continue };
            let text = &self.text;
            let Ok(at) = self
                .table
                .find_entry(change.hash, |k| key_of(text, k) == key.as_bytes())
            else {
                continue;
            };
            if change.added {
                at.remove();
            } else {
                let flag = if change.parent { PARENT } else { ID };
                let key = at.into_mut();
                key.set_flags(key.flags() & !flag);
            }
        }
        self.text.truncate(self.mark);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(id: Option<u8>, parent: Option<u8>) -> StoredEntry {
        let key = |k: Option<u8>| k.map_or("null".to_owned(), |k| format!("\"k{k}\""));
        StoredEntry::from_line(format!(
            r#"{{"role":"notice","text":"t","id":{},"parentId":{}}}"#,
            key(id),
            key(parent)
        ))
        .0
    }

    /// The keys and their flags, sorted.
    fn keys(index: &TreeIndex) -> Vec<(Vec<u8>, u8)> {
        let mut keys: Vec<_> = index
            .table
            .iter()
            .map(|k| (key_of(&index.text, k).to_vec(), k.flags()))
            .collect();
        keys.sort();
        keys
    }

    fn entries() -> impl Strategy<Value = Vec<StoredEntry>> {
        // Few ids, so that repeats, self-parents and cycles are common.
        let key = proptest::option::weighted(0.85, 0u8..8);
        proptest::collection::vec((key.clone(), key), 0..6)
            .prop_map(|pairs| pairs.into_iter().map(|(i, p)| entry(i, p)).collect())
    }

    proptest! {
        /// Each append is refused exactly when `check_tree` refuses it, with
        /// its error; a refused append leaves the table as it was, and an
        /// admitted one (or one undone) leaves it as noting each entry would.
        #[test]
        fn admit_agrees_with_check_tree(
            stored in entries(),
            appends in proptest::collection::vec(entries(), 1..4),
            undo in any::<bool>(),
        ) {
            let mut index = TreeIndex::default();
            let mut noted = TreeIndex::default();
            for entry in &stored {
                index.note(entry);
                noted.note(entry);
            }
            for append in &appends {
                let before = keys(&index);
                let expected = check_tree("s", append, |id| noted.has(id, ID), |id| noted.has(id, PARENT));
                let admitted = index.admit("s", append);
                prop_assert_eq!(admitted.as_ref().err().map(ToString::to_string), expected.err().map(|e| e.to_string()));
                if admitted.is_err() {
                    prop_assert_eq!(keys(&index), before);
                } else if undo {
                    index.undo(append);
                    prop_assert_eq!(keys(&index), before);
                } else {
                    for entry in append {
                        noted.note(entry);
                    }
                    prop_assert_eq!(keys(&index), keys(&noted));
                }
            }
        }
    }

    #[test]
    fn a_chain_is_admitted_and_its_repeat_refused() {
        let mut index = TreeIndex::default();
        let chain: Vec<_> = (0..5).map(|i| entry(Some(i + 1), Some(i))).collect();
        index.admit("s", &chain).unwrap();
        let e = index.admit("s", &chain[2..3]).unwrap_err();
        assert!(e.to_string().contains("has an entry with this id"), "{e}");
        // k0 is named as a parent (dangling): an entry may not take it.
        let e = index.admit("s", &[entry(Some(0), None)]).unwrap_err();
        assert!(
            e.to_string().contains("name this id as their parent"),
            "{e}"
        );
        index.admit("s", &[entry(Some(6), Some(5))]).unwrap();
    }
}
