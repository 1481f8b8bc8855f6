//! A `JsonlDir` holds a session file's lock for one append at a time: the lock
//! is free when an append returns, whether it succeeded or failed, so another
//! writer (another store, as another process would be) gets in between two
//! appends of a writer that never pauses, and the store's own reads and
//! deletes never wait for it.
#![cfg(unix)]

use crate::store_fixture;
use crate::{now, one_entry};

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agentmsg::store::{Cursor, Expect, JsonlDir, PageRequest, SessionStore, StoreError};
use store_fixture::message;

/// Whether another open file description gets the lock of `path` now.
fn lock_is_free(path: &Path) -> bool {
    let probe = File::open(path).unwrap();
    let free = probe.try_lock().is_ok();
    if free {
        probe.unlock().unwrap();
    }
    free
}

#[test]
fn the_lock_is_free_when_an_append_returns() {
    let (_root, dir, store) = one_entry();
    let path = dir.join("s.jsonl");
    assert!(lock_is_free(&path));
    now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap();
    assert!(lock_is_free(&path));
    // A refused append gives it back too.
    let e = now(store.append("s", &[message("c", Some("b"), "x")], Expect::Empty)).unwrap_err();
    assert!(matches!(e, StoreError::Conflict { .. }), "{e}");
    assert!(lock_is_free(&path));
    // And one that found its file renamed away.
    let moved = dir.join("archived.jsonl");
    std::fs::rename(&path, &moved).unwrap();
    let e = now(store.append("s", &[message("c", Some("b"), "x")], Expect::Any)).unwrap_err();
    assert!(matches!(e, StoreError::NotFound { .. }), "{e}");
    assert!(lock_is_free(&moved));
}

/// A held lock makes an append of a store that waits for none fail at once
/// with `LockTimeout`; the same store's own loads, listings and deletes
/// between its appends never find the lock taken.
#[test]
fn the_store_never_waits_for_itself() {
    let root = tempfile::tempdir().unwrap();
    let store = JsonlDir::open(root.path())
        .unwrap()
        .lock_timeout(Duration::ZERO);
    now(store.create("s")).unwrap();
    now(store.append("s", &[message("a", None, "one")], Expect::Empty)).unwrap();
    let held = File::open(root.path().join("s.jsonl")).unwrap();
    held.lock().unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(matches!(e, StoreError::LockTimeout { .. }), "{e}");
    held.unlock().unwrap();
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

/// One writer appending without a pause: another store (as another process
/// would) gets each of its appends in while the first goes on.
#[test]
fn a_writer_that_never_pauses_lets_another_in() {
    let (_root, dir, busy) = one_entry();
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
