//! What a [`JsonlDir`](super::JsonlDir) keeps of a session to check that an
//! append keeps it a tree: the ids of its entries and the ids they name as
//! parents. The check itself is the shared [`check_tree`], which the SQL
//! stores use too, so every backend refuses the same appends with the same
//! error.

use foldhash::HashSet;

use super::{check_tree, StoreError, StoredEntry};

/// The ids of a session's entries and the ids they name as parents.
#[derive(Default)]
pub(super) struct TreeIndex {
    ids: HashSet<String>,
    /// Parents that are no id of the session. `check_tree` asks whether an id
    /// is named as a parent only of an id the session does not have, so a
    /// parent that is an id already (a chain's: the common case) is not kept
    /// twice.
    parents: HashSet<String>,
}

impl std::fmt::Debug for TreeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeIndex")
            .field("ids", &self.ids.len())
            .field("parents", &self.parents.len())
            .finish()
    }
}

impl TreeIndex {
    /// Forgets every id.
    pub(super) fn clear(&mut self) {
        self.ids.clear();
        self.parents.clear();
    }

    /// Notes an entry stored (read from the file, or just written).
    pub(super) fn note(&mut self, entry: &StoredEntry) {
        if let Some(id) = entry.id() {
            if !self.ids.contains(id) {
                self.parents.remove(id);
                self.ids.insert(id.to_owned());
            }
        }
        if let Some(parent) = entry.parent().id().map(crate::MessageId::as_str) {
            if !self.ids.contains(parent) && !self.parents.contains(parent) {
                self.parents.insert(parent.to_owned());
            }
        }
    }

    /// Checks that `entries`, appended to the session, keep it a tree (see
    /// [`check_tree`]); they are noted once written.
    pub(super) fn check(&self, session: &str, entries: &[StoredEntry]) -> Result<(), StoreError> {
        check_tree(
            session,
            entries,
            |id| self.ids.contains(id),
            |id| self.parents.contains(id),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: Option<u8>, parent: Option<u8>) -> StoredEntry {
        let key = |k: Option<u8>| k.map_or("null".to_owned(), |k| format!("\"k{k}\""));
        StoredEntry::from_line(format!(
            r#"{{"role":"notice","text":"t","id":{},"parentId":{}}}"#,
            key(id),
            key(parent)
        ))
        .0
    }

    fn admit(index: &mut TreeIndex, entries: &[StoredEntry]) -> Result<(), StoreError> {
        index.check("s", entries)?;
        entries.iter().for_each(|e| index.note(e));
        Ok(())
    }

    #[test]
    fn a_chain_is_admitted_and_its_repeat_refused() {
        let mut index = TreeIndex::default();
        let chain: Vec<_> = (0..5).map(|i| entry(Some(i + 1), Some(i))).collect();
        admit(&mut index, &chain).unwrap();
        // Only the dangling k0 is kept as a parent apart from the ids.
        assert_eq!((index.ids.len(), index.parents.len()), (5, 1));
        let e = admit(&mut index, &chain[2..3]).unwrap_err();
        assert!(e.to_string().contains("has an entry with this id"), "{e}");
        // k0 is named as a parent (dangling): an entry may not take it.
        let e = admit(&mut index, &[entry(Some(0), None)]).unwrap_err();
        assert!(
            e.to_string().contains("name this id as their parent"),
            "{e}"
        );
        admit(&mut index, &[entry(Some(6), Some(5))]).unwrap();
        index.clear();
        admit(&mut index, &chain[2..3]).unwrap();
    }

    /// A parent noted before its entry (a file out of order) stops being a
    /// mere parent once the id comes: it is taken.
    #[test]
    fn a_parent_that_becomes_an_id_is_taken() {
        let mut index = TreeIndex::default();
        index.note(&entry(Some(2), Some(1)));
        index.note(&entry(Some(1), None));
        assert_eq!((index.ids.len(), index.parents.len()), (2, 0));
        let e = admit(&mut index, &[entry(Some(1), None)]).unwrap_err();
        assert!(e.to_string().contains("has an entry with this id"), "{e}");
    }
}
