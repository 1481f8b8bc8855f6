//! A `JsonlDir` keeps a session file's lock from one append to the next while
//! appends come in a burst: the next append still sees a rename, a
//! replacement and a deletion; the lock is given back when appends stop, and
//! in turns while they go on, so another writer gets in; and the store's own
//! reads and deletes never wait for it.
#![cfg(unix)]

use crate::now;
use crate::store_fixture;

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agentmsg::store::{Cursor, Expect, JsonlDir, PageRequest, SessionStore, StoreError};
use store_fixture::message;

/// Long enough that a lock kept after an append is certainly still held at
/// the next step of a test.
const FOREVER: Duration = Duration::from_secs(3600);

/// A store that keeps its locks for `keep`, with session `s` holding entry `a`
/// appended through it (its lock kept when `keep` is not zero).
fn one_entry(keep: Duration) -> (tempfile::TempDir, std::path::PathBuf, JsonlDir) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    let store = JsonlDir::open(&dir).unwrap().keep_lock(keep);
    now(store.create("s")).unwrap();
    now(store.append("s", &[message("a", None, "one")], Expect::Empty)).unwrap();
    (root, dir, store)
}

/// Whether another open file description gets the lock of `path` now.
fn lock_is_free(path: &Path) -> bool {
    let probe = File::open(path).unwrap();
    let free = probe.try_lock().is_ok();
    if free {
        probe.unlock().unwrap();
    }
    free
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn a_kept_lock_is_held_and_the_next_append_still_sees_a_replacement() {
    let (root, dir, store) = one_entry(FOREVER);
    let path = dir.join("s.jsonl");
    assert!(!lock_is_free(&path), "the lock was not kept");
    // Replaced by a rename (another link keeps the old file), as another
    // program that does not take the lock would.
    let old = root.path().join("old.jsonl");
    std::fs::hard_link(&path, &old).unwrap();
    let new = root.path().join("new.jsonl");
    std::fs::write(&new, format!("{}\n", message("x", None, "new").line())).unwrap();
    std::fs::rename(&new, &path).unwrap();
    let appended = now(store.append("s", &[message("b", Some("x"), "two")], Expect::Any)).unwrap();
    assert_eq!((appended.first, appended.entries), (1, 2));
    assert_eq!(lines(&path), 2);
    assert_eq!(lines(&old), 1, "the replaced file was written to");
    // The new file's lock is the one kept now; the old one's is free.
    assert!(lock_is_free(&old));
    assert!(!lock_is_free(&path));
}

#[test]
fn a_kept_lock_does_not_hide_a_rename_away_or_a_deletion() {
    let (_root, dir, store) = one_entry(FOREVER);
    let moved = dir.join("archived.jsonl");
    std::fs::rename(dir.join("s.jsonl"), &moved).unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(matches!(e, StoreError::NotFound { .. }), "{e}");
    assert_eq!(lines(&moved), 1);
    // The failed append gave the lock back.
    assert!(lock_is_free(&moved));

    let (_root, dir, store) = one_entry(FOREVER);
    std::fs::remove_file(dir.join("s.jsonl")).unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(matches!(e, StoreError::NotFound { .. }), "{e}");
}

#[test]
fn a_lock_is_given_back_when_appends_stop() {
    // Kept: released by the store's thread about a millisecond later.
    let (_root, dir, store) = one_entry(Duration::from_micros(500));
    let path = dir.join("s.jsonl");
    let start = Instant::now();
    while !lock_is_free(&path) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the kept lock was not given back"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
    drop(store);
    // Not kept: free when the append returns.
    let (_root, dir, _store) = one_entry(Duration::ZERO);
    assert!(lock_is_free(&dir.join("s.jsonl")));
}

#[test]
fn a_lock_kept_as_long_as_can_be_said_is_kept_and_given_back_by_the_store() {
    let (_root, dir, store) = one_entry(Duration::MAX);
    now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap();
    assert!(!lock_is_free(&dir.join("s.jsonl")));
    assert_eq!(
        now(store.load("s", Cursor::START)).unwrap().entries.len(),
        2
    );
    drop(store);
    assert!(lock_is_free(&dir.join("s.jsonl")));
}

#[test]
fn a_failed_append_gives_the_lock_back() {
    let (_root, dir, store) = one_entry(FOREVER);
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Empty)).unwrap_err();
    assert!(matches!(e, StoreError::Conflict { .. }), "{e}");
    assert!(lock_is_free(&dir.join("s.jsonl")));
}

#[test]
fn the_store_never_waits_for_its_own_kept_lock() {
    // A store that would fail at once on a lock held elsewhere.
    let root = tempfile::tempdir().unwrap();
    let store = JsonlDir::open(root.path())
        .unwrap()
        .keep_lock(FOREVER)
        .lock_timeout(Duration::ZERO);
    now(store.create("s")).unwrap();
    now(store.append("s", &[message("a", None, "one")], Expect::Empty)).unwrap();
    assert_eq!(
        now(store.load("s", Cursor::START)).unwrap().entries.len(),
        1
    );
    now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap();
    assert_eq!(now(store.open("s")).unwrap().entries, 2);
    now(store.append("s", &[message("c", Some("b"), "three")], Expect::Any)).unwrap();
    let page = now(store.list(&PageRequest::default())).unwrap();
    assert_eq!(page.sessions.len(), 1, "{page:?}");
    assert!(page.skipped.is_empty(), "{page:?}");
    now(store.append("s", &[message("d", Some("c"), "four")], Expect::Any)).unwrap();
    now(store.delete("s")).unwrap();
    assert!(!root.path().join("s.jsonl").exists());
}

/// One writer appending without a pause keeps the lock in turns: another
/// store (as another process would) gets each of its appends in while the
/// first goes on.
#[test]
fn a_writer_that_never_pauses_lets_another_in() {
    let (_root, dir, busy) = one_entry(Duration::from_micros(500));
    let other = JsonlDir::open(&dir).unwrap();
    let done = AtomicBool::new(false);
    let start = Instant::now();
    let busy_appends = std::thread::scope(|scope| {
        let busy_writer = scope.spawn(|| {
            let mut parent = "a".to_owned();
            let mut n = 0u32;
            while !done.load(Ordering::Relaxed) && start.elapsed() < Duration::from_secs(30) {
                let id = format!("busy{n}");
                now(busy.append("s", &[message(&id, Some(&parent), "busy")], Expect::Any)).unwrap();
                parent = id;
                n += 1;
            }
            n
        });
        for i in 0..20 {
            let id = format!("other{i}");
            now(other.append("s", &[message(&id, Some("a"), "other")], Expect::Any)).unwrap();
        }
        done.store(true, Ordering::Relaxed);
        busy_writer.join().unwrap()
    });
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the other writer waited until the busy one stopped"
    );
    let loaded = now(other.load("s", Cursor::START)).unwrap();
    assert_eq!(loaded.entries.len(), 1 + 20 + busy_appends as usize);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
}
