//! What happens to a `JsonlDir` session file between two appends of one store
//! (which keeps the file open, and what it read of it, from one append to the
//! next) is seen by the second append: a rename, a replacement, a deletion, a
//! moved store directory, and appends through another handle. An append never
//! writes to a file its path no longer names.
#![cfg(unix)]

use crate::store_fixture;
use crate::{now, one_entry};

use std::path::Path;

use agentmsg::store::{Cursor, Expect, JsonlDir, SessionStore, StoreError};
use store_fixture::message;

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

fn not_found(e: &StoreError) -> bool {
    matches!(e, StoreError::NotFound { session } if session == "s")
}

/// Renamed away (the inode keeps its one link, so only the path tells): the
/// session is gone, and the moved file is not written to.
#[test]
fn a_file_renamed_away_is_not_written() {
    let (_root, dir, store) = one_entry();
    let moved = dir.join("archived.jsonl");
    std::fs::rename(dir.join("s.jsonl"), &moved).unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(not_found(&e), "{e}");
    assert_eq!(lines(&moved), 1);
}

/// Replaced by a rename while another link keeps the old file (so it is not
/// deleted: its link count does not drop to 0): the append goes to the new
/// file, which it reads first.
#[test]
fn a_file_replaced_while_linked_elsewhere_is_not_written() {
    let (root, dir, store) = one_entry();
    let kept = root.path().join("kept.jsonl");
    std::fs::hard_link(dir.join("s.jsonl"), &kept).unwrap();
    let new = root.path().join("new.jsonl");
    std::fs::write(
        &new,
        format!(
            "{}\n{}\n",
            message("x", None, "new").line(),
            message("y", Some("x"), "new").line()
        ),
    )
    .unwrap();
    std::fs::rename(&new, dir.join("s.jsonl")).unwrap();
    // The new file's leaf is `y`: expecting `a` (the old file's) conflicts.
    let e =
        now(store.append("s", &[message("b", Some("a"), "two")], Expect::Leaf("a"))).unwrap_err();
    assert!(matches!(e, StoreError::Conflict { .. }), "{e}");
    let appended =
        now(store.append("s", &[message("z", Some("y"), "three")], Expect::Leaf("y"))).unwrap();
    assert_eq!((appended.first, appended.entries), (2, 3));
    assert_eq!(lines(&kept), 1);
    assert_eq!(lines(&dir.join("s.jsonl")), 3);
}

/// Deleted through another store (which takes the lock): gone for this one.
#[test]
fn a_session_deleted_elsewhere_is_gone() {
    let (_root, dir, store) = one_entry();
    let other = JsonlDir::open(&dir).unwrap();
    now(other.delete("s")).unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(not_found(&e), "{e}");
    // Created again elsewhere: this store appends to the new file.
    now(other.create("s")).unwrap();
    now(store.append("s", &[message("a", None, "again")], Expect::Empty)).unwrap();
    let loaded = now(other.load("s", Cursor::START)).unwrap();
    assert_eq!(loaded.entries.len(), 1);
}

/// The store's directory moved away, and another put in its place: the
/// store's path names the new directory's file, so an append goes there (the
/// check is of the whole path: see `identity.rs`), and never to the file the
/// moved directory holds.
#[test]
fn a_moved_store_directory_is_seen() {
    let (root, dir, store) = one_entry();
    let moved = root.path().join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("s.jsonl"), "").unwrap();
    // The session's file is now the empty one: its leaf is not `a`.
    let e =
        now(store.append("s", &[message("b", Some("a"), "two")], Expect::Leaf("a"))).unwrap_err();
    assert!(matches!(e, StoreError::Conflict { .. }), "{e}");
    now(store.append("s", &[message("a", None, "fresh")], Expect::Empty)).unwrap();
    assert_eq!(lines(&moved.join("s.jsonl")), 1);
    assert_eq!(lines(&dir.join("s.jsonl")), 1);
    // Moved with no directory put in its place: the session is gone.
    std::fs::remove_dir_all(&dir).unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(not_found(&e), "{e}");
    assert_eq!(lines(&moved.join("s.jsonl")), 1);
}

/// Appends through another handle (another store: another open file, as in
/// another process) between two of this one's are read before it appends: its
/// leaf, and its ids (a repeat of one is refused).
#[test]
fn appends_through_another_handle_are_seen() {
    let (_root, dir, store) = one_entry();
    let other = JsonlDir::open(&dir).unwrap();
    now(other.append("s", &[message("b", Some("a"), "other")], Expect::Leaf("a"))).unwrap();
    let e =
        now(store.append("s", &[message("c", Some("a"), "stale")], Expect::Leaf("a"))).unwrap_err();
    assert!(
        matches!(&e, StoreError::Conflict { actual: Some(leaf), .. } if leaf == "b"),
        "{e}"
    );
    let e = now(store.append("s", &[message("b", Some("a"), "again")], Expect::Any)).unwrap_err();
    assert!(matches!(e, StoreError::BreaksTree { .. }), "{e}");
    let appended =
        now(store.append("s", &[message("c", Some("b"), "mine")], Expect::Leaf("b"))).unwrap();
    assert_eq!((appended.first, appended.entries), (2, 3));
}

/// A session created through a store is kept open by it: appends made
/// through another handle right after the creation are seen all the same.
#[test]
fn appends_after_a_create_through_another_handle_are_seen() {
    let root = tempfile::tempdir().unwrap();
    let store = JsonlDir::open(root.path()).unwrap();
    let created = now(store.create("s")).unwrap();
    assert_eq!((created.entries, created.leaf), (0, None));
    let other = JsonlDir::open(root.path()).unwrap();
    now(other.append("s", &[message("a", None, "other")], Expect::Empty)).unwrap();
    let e = now(store.append("s", &[message("a", None, "mine")], Expect::Any)).unwrap_err();
    assert!(matches!(e, StoreError::BreaksTree { .. }), "{e}");
    let appended =
        now(store.append("s", &[message("b", Some("a"), "mine")], Expect::Leaf("a"))).unwrap();
    assert_eq!((appended.first, appended.entries), (1, 2));
}

/// A refused append records nothing: its ids can be appended next.
#[test]
fn a_refused_batch_leaves_its_ids_free() {
    let (_root, _dir, store) = one_entry();
    // `c` twice: refused, after `b` was checked.
    let bad = [
        message("b", Some("a"), "b"),
        message("c", Some("b"), "c"),
        message("c", Some("b"), "c2"),
    ];
    let e = now(store.append("s", &bad, Expect::Any)).unwrap_err();
    assert!(e.to_string().contains("same id"), "{e}");
    let appended = now(store.append("s", &bad[..2], Expect::Leaf("a"))).unwrap();
    assert_eq!(appended.leaf.as_deref(), Some("c"));
}
