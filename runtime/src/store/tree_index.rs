//! What a [`JsonlDir`](super::JsonlDir) keeps of a session to check that an
//! append keeps it a tree: the ids of its entries and the ids they name as
//! parents, in one table.
//!
//! An append is checked and recorded in one pass, one probe per id and at most
//! one per parent: an entry's id must be new to the table (neither an id nor a
//! parent named by an entry stored or earlier in the append), and its parent
//! must not be itself. A parent that is the last id recorded (the entry
//! before it in the append, or the session's leaf: the common append) needs
//! no probe. The keys are kept one after another in one buffer, so recording
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
/// An entry names the key as its parent. Only asked of a key without [`ID`]
/// (an id is taken whether or not it is named as a parent too, so
/// [`check_tree`] never asks), so a key with `ID` may lack it.
const PARENT: u8 = 2;

/// A key: where it is in [`TreeIndex::text`] (its start, with what entries
/// make of it, the flags, in the two highest bits) and its hash. 16 bytes, so
/// that a session's table stays small (its memory is most of what a batch of
/// appends pays beyond the write), and growing the table moves the keys
/// without reading their text to hash them again.
#[derive(Debug, Clone, Copy)]
struct Key {
    at: u64,
    hash: u64,
}

/// Where the flags are in [`Key::at`] (a buffer is never 2^62 bytes long).
const FLAGS_SHIFT: u32 = 62;
const START: u64 = (1 << FLAGS_SHIFT) - 1;

impl Key {
    fn new(start: usize, hash: u64, flags: u8) -> Key {
        // usize is at most 64 bits wide: the cast loses nothing.
        Key {
            at: (start as u64 & START) | (u64::from(flags) << FLAGS_SHIFT),
            hash,
        }
    }

    fn start(&self) -> u64 {
        self.at & START
    }

    fn flags(&self) -> u8 {
        (self.at >> FLAGS_SHIFT) as u8
    }

    fn set_flags(&mut self, flags: u8) {
        self.at = (self.at & START) | (u64::from(flags) << FLAGS_SHIFT);
    }
}

/// Below this many keys a table grows fourfold (see [`TreeIndex::grow_for`]):
/// at most 16,384 keys' room (256 kB) spent ahead.
const GROW_FOURFOLD_BELOW: usize = 4096;

/// What [`TreeIndex::admit`] changed, to be undone when the append is not
/// written after all.
#[derive(Debug, Clone, Copy)]
struct Change {
    hash: u64,
    /// The entry (of the append) whose id or parent is the key.
    index: usize,
    /// The key is the entry's parent (else its id).
    parent: bool,
    /// The key was added (else only its flag).
    added: bool,
}

/// The ids of a session's entries and the ids they name as parents.
#[derive(Default)]
pub(super) struct TreeIndex {
    /// Every key, one after another, each after its length (LEB128: one
    /// byte for a key shorter than 128 bytes).
    text: Vec<u8>,
    table: HashTable<Key>,
    hasher: foldhash::fast::RandomState,
    /// Where the last id recorded starts in `text`: a key with the [`ID`]
    /// flag, so a parent that names it needs no probe.
    last: Option<u64>,
    /// What the last [`admit`](Self::admit) changed, where `text` ended and
    /// what `last` was before it.
    changes: Vec<Change>,
    mark: usize,
    last_before: Option<u64>,
}

impl std::fmt::Debug for TreeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeIndex")
            .field("keys", &self.table.len())
            .finish()
    }
}

/// The key that starts at `start` in `text` (empty if none does, which
/// cannot happen: every start was recorded with its key).
fn key_at(text: &[u8], start: u64) -> &[u8] {
    let rest = usize::try_from(start)
        .ok()
        .and_then(|start| text.get(start..))
        .unwrap_or_default();
    // The length, LEB128 (seven bits a byte, the last byte's high bit clear).
    let mut len = 0usize;
    for (i, &byte) in rest.iter().enumerate() {
        let Some(bits) = usize::from(byte & 0x7f).checked_shl(7 * i as u32) else {
            break;
        };
        len |= bits;
        if byte & 0x80 == 0 {
            return rest
                .get(i + 1..)
                .and_then(|key| key.get(..len))
                .unwrap_or_default();
        }
    }
    &[]
}

fn key_of<'a>(text: &'a [u8], key: &Key) -> &'a [u8] {
    key_at(text, key.start())
}

/// Whether a key of the table is `key`, whose hash is `hash`. The whole hash
/// is compared first: the text of a key is read only when it is almost surely
/// the one looked for.
fn is<'a>(text: &'a [u8], hash: u64, key: &'a [u8]) -> impl Fn(&Key) -> bool + 'a {
    move |k| k.hash == hash && key_of(text, k) == key
}

/// Appends `key` to `text`, after its length (see [`key_at`]).
fn push_key(text: &mut Vec<u8>, key: &[u8]) {
    let mut len = key.len();
    while len >= 0x80 {
        text.push((len & 0x7f) as u8 | 0x80);
        len >>= 7;
    }
    text.push(len as u8);
    text.extend_from_slice(key);
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
        self.last = None;
        self.last_before = None;
    }

    /// Notes a stored entry (one read from the file: never refused).
    pub(super) fn note(&mut self, entry: &StoredEntry) {
        if let Some(id) = id_of(entry) {
            let (_, at, _) = self.flag(id, ID, false);
            self.last = Some(at);
        }
        if let Some(parent) = parent_of(entry).filter(|p| !self.is_last(p)) {
            self.flag(parent, PARENT, false);
        }
    }

    /// Whether `key` is the last id recorded.
    fn is_last(&self, key: &str) -> bool {
        self.last
            .is_some_and(|at| key_at(&self.text, at) == key.as_bytes())
    }

    /// Sets `flag` on `key`, added when missing (`None`), or leaves a key
    /// found as it is when `only_new`; with the key's hash, where it starts,
    /// and its flags as they were.
    fn flag(&mut self, key: &str, flag: u8, only_new: bool) -> (u64, u64, Option<u8>) {
        let hash = self.hasher.hash_one(key.as_bytes());
        match self
            .table
            .entry(hash, is(&self.text, hash, key.as_bytes()), |k| k.hash)
        {
            Entry::Occupied(mut at) => {
                let before = at.get().flags();
                if !only_new {
                    at.get_mut().set_flags(before | flag);
                }
                (hash, at.get().start(), Some(before))
            }
            Entry::Vacant(at) => {
                let start = self.text.len();
                at.insert(Key::new(start, hash, flag));
                push_key(&mut self.text, key.as_bytes());
                (hash, start as u64, None)
            }
        }
    }

    fn has(&self, key: &str, flag: u8) -> bool {
        let hash = self.hasher.hash_one(key.as_bytes());
        self.table
            .find(hash, is(&self.text, hash, key.as_bytes()))
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

    /// Makes room for `more` keys (an append's ids: a chain's parents are
    /// ids already there, and a table full of other parents grows itself).
    /// A small table grows fourfold, not twofold: a new session's table
    /// grows while its first entries come, and each growth moves every key
    /// (at random, into the new table), which cost a batch of appends more
    /// than the keys' memory. From [`GROW_FOURFOLD_BELOW`] keys on, it
    /// doubles.
    fn grow_for(&mut self, more: usize) {
        let len = self.table.len();
        if self.table.capacity() - len >= more {
            return;
        }
        let grow = if len < GROW_FOURFOLD_BELOW {
            len * 3
        } else {
            len
        };
        self.table.reserve(more.max(grow), |k| k.hash);
    }

    /// Records `entries`; when `strict`, stops at the first id the table has
    /// (or a parent that names its own entry) and says `false`.
    fn record(&mut self, entries: &[StoredEntry], strict: bool) -> bool {
        self.changes.clear();
        self.mark = self.text.len();
        self.last_before = self.last;
        self.grow_for(entries.len());
        for (index, entry) in entries.iter().enumerate() {
            let parent = parent_of(entry);
            // A chain (each entry the child of the one before, the first of
            // the leaf) records only its ids: each parent is the last id
            // recorded before it.
            let chained = parent.is_some_and(|p| self.is_last(p));
            let mut own = None;
            if let Some(id) = id_of(entry) {
                let (hash, at, before) = self.flag(id, ID, strict);
                match before {
                    None => self.changes.push(Change {
                        hash,
                        index,
                        parent: false,
                        added: true,
                    }),
                    Some(_) if strict => return false,
                    // Not strict: `check_tree` let it through; what to undo
                    // is a flag (the key was a parent only).
                    Some(before) if before & ID == 0 => self.changes.push(Change {
                        hash,
                        index,
                        parent: false,
                        added: false,
                    }),
                    Some(_) => {}
                }
                self.last = Some(at);
                own = Some(at);
            }
            if let Some(parent) = parent.filter(|_| !chained) {
                let (hash, at, before) = self.flag(parent, PARENT, false);
                let added = before.is_none();
                if added || before.is_some_and(|flags| flags & PARENT == 0) {
                    self.changes.push(Change {
                        hash,
                        index,
                        parent: true,
                        added,
                    });
                }
                // The key the entry's id has just added: it names itself.
                if strict && own == Some(at) {
                    return false;
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
            let found = is(&self.text, change.hash, key.as_bytes());
            let Ok(at) = self.table.find_entry(change.hash, found) else {
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
        self.last = self.last_before;
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

    /// The keys and their flags, sorted (a key with `ID` as `ID`: whether
    /// it is a parent too is never asked).
    fn keys(index: &TreeIndex) -> Vec<(Vec<u8>, u8)> {
        let mut keys: Vec<_> = index
            .table
            .iter()
            .map(|k| {
                let flags = if k.flags() & ID != 0 { ID } else { k.flags() };
                (key_of(&index.text, k).to_vec(), flags)
            })
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

    /// Keys of 128 bytes and more keep their length in more than one byte.
    #[test]
    fn long_keys_are_kept_whole() {
        let long = |c: char, n: usize| c.to_string().repeat(n);
        let line = |id: &str, parent: Option<&str>| {
            let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
            StoredEntry::from_line(format!(
                r#"{{"role":"notice","text":"t","id":"{id}","parentId":{parent}}}"#
            ))
            .0
        };
        let (a, b, c) = (long('a', 127), long('b', 128), long('c', 20_000));
        let mut index = TreeIndex::default();
        let chain = [line(&a, None), line(&b, Some(&a)), line(&c, Some(&b))];
        index.admit("s", &chain).unwrap();
        let keys: Vec<Vec<u8>> = keys(&index).into_iter().map(|(k, _)| k).collect();
        let expected: Vec<Vec<u8>> = [&a, &b, &c].map(|k| k.as_bytes().to_vec()).into();
        assert_eq!(keys, expected);
        for taken in [&a, &b, &c] {
            assert!(index.admit("s", &[line(taken, None)]).is_err());
        }
        // A key that is a prefix of one kept is another key.
        index
            .admit("s", &[line(&long('c', 19_999), Some(&c))])
            .unwrap();
    }
}
