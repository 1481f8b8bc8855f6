//! A store holds its boundary: it never reads or writes outside its directory,
//! never hangs on what it finds there, never leaks a password, and never takes
//! an append that would make its session unreadable. Each test is an attack
//! that once succeeded.
#![cfg(unix)]

use crate::now;
use crate::store_fixture;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use agentmsg::store::{
    AnyStore, Backend, Cursor, Expect, JsonlDir, PageRequest, SessionStore, StoreAddress,
    StoreError, StoredEntry,
};
use store_fixture::{entry, message, Fixture};

/// Runs `f` on another thread and fails the test if it takes more than 20 s:
/// a hang is a failure here, never a stuck test run.
fn finishes<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} hung"))
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777
}

fn dir_store() -> (tempfile::TempDir, std::path::PathBuf, JsonlDir) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("store");
    let store = JsonlDir::open(&dir).unwrap();
    (root, dir, store)
}

fn not_regular(e: &StoreError, found: &str) -> bool {
    matches!(e, StoreError::NotRegularFile { found: f, .. } if *f == found)
}

/// F1: a link planted at a session's path is never followed, by any operation.
#[test]
fn a_planted_session_link_is_never_followed() {
    let (root, dir, store) = dir_store();
    let outside = root.path().join("outside.txt");
    std::fs::write(
        &outside,
        "{\"role\":\"user\",\"content\":\"secret\",\"id\":\"x\"}\n",
    )
    .unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
    symlink(&outside, dir.join("s.jsonl")).unwrap();
    symlink("/etc/passwd", dir.join("passwd.jsonl")).unwrap();

    let e = now(store.load("s", Cursor::START)).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
    assert!(e.to_string().contains("never follows links"), "{e}");
    let e = now(store.open("s")).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
    let e =
        now(store.append("s", &[message("y", None, "into the link")], Expect::Any)).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
    let e = now(store.create("s")).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
    let e = now(store.delete("s")).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");

    let page = now(store.list(&PageRequest::default())).unwrap();
    assert!(page.sessions.is_empty(), "{page:?}");
    let skipped: Vec<&str> = page.skipped.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(skipped, ["passwd", "s"]);
    assert!(page.skipped[0].reason.contains("symbolic link"), "{page:?}");

    // The target is untouched, and the link is still there.
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "{\"role\":\"user\",\"content\":\"secret\",\"id\":\"x\"}\n"
    );
    assert_eq!(mode(&outside), 0o644);
    assert!(std::fs::symlink_metadata(dir.join("s.jsonl"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// F1: a session file swapped for a link after the store opened it is not
/// written through either.
#[test]
fn a_session_file_replaced_by_a_link_is_not_written() {
    let (root, dir, store) = dir_store();
    now(store.create("s")).unwrap();
    now(store.append("s", &[message("a", None, "one")], Expect::Empty)).unwrap();
    let outside = root.path().join("outside.txt");
    std::fs::write(&outside, "keep\n").unwrap();
    std::fs::remove_file(dir.join("s.jsonl")).unwrap();
    symlink(&outside, dir.join("s.jsonl")).unwrap();
    let e = now(store.append("s", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep\n");
}

/// The store's directory itself may be a link.
#[test]
fn the_store_directory_may_be_a_link() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("real")).unwrap();
    symlink(root.path().join("real"), root.path().join("linked")).unwrap();
    let store = JsonlDir::open(root.path().join("linked")).unwrap();
    now(store.create("s")).unwrap();
    now(store.append("s", &[message("a", None, "hi")], Expect::Empty)).unwrap();
    assert_eq!(
        now(store.load("s", Cursor::START)).unwrap().entries.len(),
        1
    );
    assert!(root.path().join("real/s.jsonl").is_file());
}

/// F2: the torn-line sink does not follow a link planted at its path.
#[test]
fn a_planted_torn_sink_link_is_not_followed() {
    let (root, dir, store) = dir_store();
    now(store.create("t")).unwrap();
    now(store.append("t", &[message("a", None, "one")], Expect::Empty)).unwrap();
    // A crash tears the next line.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("t.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut file, b"{\"role\":\"user\",\"con").unwrap();
    let target = root.path().join("target.txt");
    std::fs::write(&target, "").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
    symlink(&target, dir.join("t.jsonl.torn")).unwrap();
    // A fresh store, so the append reads the torn tail.
    let store = JsonlDir::open(&dir).unwrap();
    let e = now(store.append("t", &[message("b", Some("a"), "two")], Expect::Any)).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
    assert_eq!(std::fs::read(&target).unwrap(), b"");
    assert_eq!(mode(&target), 0o644);
    let e = now(store.load("t", Cursor::START)).unwrap_err();
    assert!(not_regular(&e, "a symbolic link"), "{e}");
}

/// F11, F10: a FIFO, a directory or a link loop named like a session is
/// skipped by `list` (with why) and refused by the others, never waited on.
#[test]
fn fifos_directories_and_loops_are_skipped_never_waited_on() {
    let (_root, dir, store) = dir_store();
    now(store.create("good")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("fifo.jsonl"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::create_dir(dir.join("folder.jsonl")).unwrap();
    symlink(dir.join("loop.jsonl"), dir.join("loop.jsonl")).unwrap();
    let page = finishes("list", move || {
        let page = now(store.list(&PageRequest::default())).unwrap();
        let load = now(store.load("fifo", Cursor::START)).unwrap_err();
        let open = now(store.open("folder")).unwrap_err();
        let append =
            now(store.append("fifo", &[message("a", None, "x")], Expect::Any)).unwrap_err();
        let looped = now(store.load("loop", Cursor::START)).unwrap_err();
        assert!(not_regular(&load, "a FIFO"), "{load}");
        assert!(not_regular(&open, "a directory"), "{open}");
        assert!(not_regular(&append, "a FIFO"), "{append}");
        assert!(not_regular(&looped, "a symbolic link"), "{looped}");
        page
    });
    let ids: Vec<&str> = page.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["good"]);
    let skipped: Vec<(&str, bool)> = page
        .skipped
        .iter()
        .map(|s| (s.id.as_str(), s.reason.contains("not a regular file")))
        .collect();
    assert_eq!(skipped, [("fifo", true), ("folder", true), ("loop", true)]);
}

/// F3b, F3a: what a store creates is private under umask 022.
#[test]
fn created_files_and_directories_are_private() {
    // SAFETY: umask only sets this process's file-creation mask.
    unsafe { libc::umask(0o022) };
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("a/b/store");
    let store = JsonlDir::open(&dir).unwrap();
    for d in [root.path().join("a"), root.path().join("a/b"), dir.clone()] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
    now(store.create("s")).unwrap();
    assert_eq!(mode(&dir.join("s.jsonl")), 0o600);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("s.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut file, b"{\"role\":\"us").unwrap();
    now(store.append("s", &[message("a", None, "x")], Expect::Any)).unwrap();
    assert_eq!(mode(&dir.join("s.jsonl.torn")), 0o600);

    #[cfg(feature = "sqlite")]
    {
        let path = root.path().join("agents.db");
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let store = agentmsg::store::SqliteStore::open(&path).await.unwrap();
            store.create("s").await.unwrap();
            store
                .append("s", &[message("a", None, "x")], Expect::Empty)
                .await
                .unwrap();
            for file in ["agents.db", "agents.db-wal", "agents.db-shm"] {
                assert_eq!(mode(&root.path().join(file)), 0o600, "{file}");
            }
        });
    }
}

/// The advisory lock: a session file another process keeps locked makes an
/// append and a read fail after the timeout, naming the process.
#[test]
fn a_lock_held_elsewhere_times_out_naming_its_holder() {
    let (_root, dir, store) = dir_store();
    now(store.create("s")).unwrap();
    let path = dir.join("s.jsonl");
    let mut holder = std::process::Command::new("flock")
        .arg("-x")
        .arg(&path)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    // Wait until the child holds it.
    let probe = std::fs::File::open(&path).unwrap();
    for _ in 0..200 {
        if probe.try_lock_shared().is_err() {
            break;
        }
        probe.unlock().unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    let store = store.lock_timeout(Duration::from_millis(200));
    let pid = holder.id();
    let (append, load, list) = finishes("locked append", move || {
        (
            now(store.append("s", &[message("a", None, "x")], Expect::Any)).unwrap_err(),
            now(store.load("s", Cursor::START)).unwrap_err(),
            now(store.list(&PageRequest::default())).unwrap(),
        )
    });
    holder.kill().unwrap();
    holder.wait().unwrap();
    for e in [&append, &load] {
        assert!(matches!(e, StoreError::LockTimeout { .. }), "{e}");
        // flock(1) forks its command: the lock is the flock process's or its
        // child's.
        let text = e.to_string();
        assert!(text.contains("locked by process"), "{text}");
        assert!(e.is_retryable());
    }
    if let StoreError::LockTimeout {
        holder: Some(found),
        ..
    } = &append
    {
        assert!(*found >= pid, "{found} vs {pid}");
    }
    assert!(list.sessions.is_empty());
    assert_eq!(list.skipped.len(), 1, "{list:?}");
    assert!(list.skipped[0].reason.contains("locked by"), "{list:?}");
}

/// F21: a JsonlDir keeps its sorted listing while the directory is
/// unchanged (its modification time, once settled), so a page does not read
/// the whole directory again; any change to the directory, or the store's own
/// create, reads it again.
#[test]
fn a_listing_is_kept_while_the_directory_is_unchanged() {
    let (_root, dir, store) = dir_store();
    for id in ["a", "b"] {
        std::fs::File::create(dir.join(format!("{id}.jsonl"))).unwrap();
    }
    let settled = std::time::SystemTime::now() - Duration::from_secs(10);
    let set_mtime = |at| std::fs::File::open(&dir).unwrap().set_modified(at).unwrap();
    let ids = |store: &JsonlDir| -> Vec<String> {
        now(store.list(&PageRequest::default()))
            .unwrap()
            .sessions
            .into_iter()
            .map(|s| s.id)
            .collect()
    };
    set_mtime(settled);
    assert_eq!(ids(&store), ["a", "b"]);
    // A file slipped in with the directory's time put back: the kept
    // listing is what the page is cut from.
    std::fs::File::create(dir.join("c.jsonl")).unwrap();
    set_mtime(settled);
    assert_eq!(ids(&store), ["a", "b"]);
    // The directory's time moved: read again.
    set_mtime(settled + Duration::from_secs(1));
    assert_eq!(ids(&store), ["a", "b", "c"]);
    // The store's own create forgets the listing at once.
    set_mtime(settled);
    assert_eq!(ids(&store), ["a", "b", "c"]);
    now(store.create("d")).unwrap();
    set_mtime(settled);
    assert_eq!(ids(&store), ["a", "b", "c", "d"]);
    // A listing taken within two seconds of the directory's last change is
    // not trusted, though the time is the same (a file system's clock may
    // not tick between two changes).
    let recent = std::time::SystemTime::now();
    set_mtime(recent);
    let fresh = JsonlDir::open(&dir).unwrap();
    assert_eq!(ids(&fresh).len(), 4);
    std::fs::File::create(dir.join("e.jsonl")).unwrap();
    set_mtime(recent);
    assert_eq!(ids(&fresh).len(), 5);
}

/// F20, F27, F22, F23: the smaller ones.
#[test]
fn torn_tails_boms_dangling_links_and_bad_ids() {
    let (_root, dir, store) = dir_store();
    // F20: a torn tail is no entry.
    std::fs::write(
        dir.join("t.jsonl"),
        "{\"role\":\"user\",\"content\":\"a\",\"id\":\"a\"}\n{\"role\":\"us",
    )
    .unwrap();
    let info = now(store.open("t")).unwrap();
    assert_eq!((info.entries, info.leaf.as_deref()), (1, Some("a")));
    let page = now(store.list(&PageRequest::default())).unwrap();
    assert_eq!(page.sessions[0].entries, 1);

    // F27: a byte-order mark before the first line.
    std::fs::write(
        dir.join("b.jsonl"),
        "\u{feff}{\"role\":\"user\",\"content\":\"a\",\"id\":\"a\"}\n",
    )
    .unwrap();
    let loaded = now(store.load("b", Cursor::START)).unwrap();
    assert!(loaded.problems.is_empty(), "{loaded:?}");
    assert_eq!(loaded.entries[0].id(), Some("a"));
    assert_eq!(now(store.open("b")).unwrap().leaf.as_deref(), Some("a"));
    let appended =
        now(store.append("b", &[message("b", Some("a"), "x")], Expect::Leaf("a"))).unwrap();
    assert_eq!(appended.first, 1);

    // F22: a dangling link is the same refusal to create and to append.
    symlink(dir.join("nowhere"), dir.join("d.jsonl")).unwrap();
    let create = now(store.create("d")).unwrap_err();
    let append = now(store.append("d", &[message("a", None, "x")], Expect::Any)).unwrap_err();
    assert!(not_regular(&create, "a symbolic link"), "{create}");
    assert!(not_regular(&append, "a symbolic link"), "{append}");
    assert!(!dir.join("nowhere").exists());

    // F23: the public paths take only ids a store takes.
    for bad in ["../x", "", ".hidden", "a/b"] {
        assert!(matches!(
            store.session_path(bad),
            Err(StoreError::InvalidSessionId { .. })
        ));
        assert!(store.torn_path(bad).is_err());
    }
    assert_eq!(store.session_path("ok").unwrap(), dir.join("ok.jsonl"));
}

/// F28 (and F7): an append that would repeat an id, close a cycle or put NUL
/// in a key is refused on every backend, and the session still opens.
async fn appends_that_break_the_tree_are_refused(f: &Fixture) {
    let store = &f.store;
    store.create("t").await.unwrap();
    store
        .append(
            "t",
            &[message("a", None, "a"), message("b", Some("a"), "b")],
            Expect::Empty,
        )
        .await
        .unwrap();
    let cases: [(&[StoredEntry], &str); 5] = [
        (
            &[message("a", Some("b"), "again")],
            "has an entry with this id",
        ),
        (
            &[message("c", Some("b"), "c"), message("c", Some("b"), "c2")],
            "same id",
        ),
        (&[message("d", Some("d"), "self")], "names itself"),
        (
            &[message("e", Some("f"), "e"), message("f", Some("b"), "f")],
            "later in the append",
        ),
        (
            &[
                entry(r#"{"role":"user","content":"x","id":"g","parentId":"h"}"#),
                message("h", Some("g"), "h"),
            ],
            "later in the append",
        ),
    ];
    for (entries, why) in cases {
        let e = store.append("t", entries, Expect::Any).await.unwrap_err();
        assert!(matches!(e, StoreError::BreaksTree { .. }), "{e}");
        assert!(e.to_string().contains(why), "{e}");
    }
    // A stored dangling parent: its id may not be appended later.
    store
        .append(
            "t",
            &[entry(
                r#"{"role":"user","content":"x","id":"k","parentId":"z"}"#,
            )],
            Expect::Any,
        )
        .await
        .unwrap();
    let e = store
        .append("t", &[message("z", Some("k"), "cycle")], Expect::Any)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("name this id as their parent"),
        "{e}"
    );
    for line in [
        r#"{"role":"user","content":"x","id":"n\u0000ul"}"#,
        r#"{"role":"user","content":"x","id":"n","parentId":"\u0000"}"#,
        r#"{"role":"us\u0000er","content":"x"}"#,
        r#"{"type":"session_info","name":"a\u0000b"}"#,
    ] {
        let e = store
            .append("t", &[entry(line)], Expect::Any)
            .await
            .unwrap_err();
        assert!(
            matches!(e, StoreError::InvalidEntry { reason, .. } if reason.contains("U+0000")),
            "{line}: {e}"
        );
    }
    // Nothing was written, and the session reads as one.
    let loaded = store.load("t", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 3);
    let stored = agentmsg::store::StoredSession::open(store, "t")
        .await
        .unwrap();
    assert_eq!(stored.session().entries().len(), 3);
}

/// F21: paging through 100,000 sessions gives each once, in order.
async fn many_sessions_page(f: &Fixture) {
    const N: usize = 100_000;
    let ids: Vec<String> = (0..N).map(|i| format!("s{i:06}")).collect();
    match &f.reopen {
        store_fixture::Reopen::Dir(dir) => {
            for id in &ids {
                std::fs::File::create(dir.join(format!("{id}.jsonl"))).unwrap();
            }
        }
        #[cfg(feature = "sqlite")]
        store_fixture::Reopen::Sqlite(path) => {
            let mut conn = rusqlite::Connection::open(path).unwrap();
            let tx = conn.transaction().unwrap();
            {
                let mut insert = tx
                    .prepare(
                        "INSERT INTO agentmsg_sessions (id, created_ms, updated_ms, entry_count)
                         VALUES (?1, 1, 1, 0)",
                    )
                    .unwrap();
                for id in &ids {
                    insert.execute([id]).unwrap();
                }
            }
            tx.commit().unwrap();
        }
        #[cfg(feature = "postgres")]
        store_fixture::Reopen::Postgres { url, schema } => {
            let client = store_fixture::admin(url).await;
            client
                .batch_execute(&format!(
                    "INSERT INTO {schema}.agentmsg_sessions (id, created_ms, updated_ms, entry_count)
                     SELECT 's' || lpad(i::text, 6, '0'), 1, 1, 0 FROM generate_series(0, {}) AS i;
                     ANALYZE {schema}.agentmsg_sessions",
                    N - 1
                ))
                .await
                .unwrap();
            // The page query walks the index: no scan, no sort.
            let plan: Vec<String> = client
                .query(
                    &format!(
                        "EXPLAIN SELECT id FROM {schema}.agentmsg_sessions
                         WHERE id COLLATE \"C\" > 's050000' ORDER BY id COLLATE \"C\" LIMIT 501"
                    ),
                    &[],
                )
                .await
                .unwrap()
                .iter()
                .map(|row| row.get(0))
                .collect();
            let plan = plan.join("\n");
            assert!(plan.contains("Index"), "{plan}");
            assert!(!plan.contains("Sort"), "{plan}");
        }
        #[allow(unreachable_patterns)]
        _ => unreachable!(),
    }
    let mut seen = Vec::with_capacity(N);
    let mut request = PageRequest {
        after: None,
        limit: 500,
    };
    loop {
        let page = f.store.list(&request).await.unwrap();
        assert!(page.sessions.len() <= 500);
        seen.extend(page.sessions.into_iter().map(|s| s.id));
        match page.next {
            Some(next) => request.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ids);
}

suite!(appends_that_break_the_tree_are_refused, many_sessions_page);

/// F5: no password in an address error, through any form.
#[test]
fn address_errors_and_debug_never_show_a_password() {
    for (text, secret) in [
        ("postgres://agent:hunter2@db/x#../bad", "hunter2"),
        ("postgres://agent:hun#ter2@db/x#bad/id", "hun#ter2"),
        ("postgresql://agent:s3cr3t@db/x#", "s3cr3t"),
        ("postgres://db/x?password=hunter2#a/b", "hunter2"),
    ] {
        let e = text.parse::<StoreAddress>().unwrap_err();
        let shown = format!("{e} {e:?}");
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("***"), "{shown}");
    }
    // A `#` inside the password is the password's.
    let address: StoreAddress = "postgres://agent:pa#ss@db/x".parse().unwrap();
    assert_eq!(address.session, None);
    assert_eq!(
        address.backend,
        Backend::Postgres("postgres://agent:pa#ss@db/x".into())
    );
    let address: StoreAddress = "postgres://agent:pa#ss@db/x#s1".parse().unwrap();
    assert_eq!(address.session.as_deref(), Some("s1"));
    let shown = format!("{address:?} {}", address.backend);
    assert!(!shown.contains("pa#ss"), "{shown}");
}

/// F24: a store whose directory name holds `#` is named by `resolve`.
#[test]
fn a_directory_with_a_hash_is_a_store() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("my#dir");
    std::fs::create_dir(&dir).unwrap();
    let text = dir.to_str().unwrap();
    let address = StoreAddress::resolve(text).unwrap();
    assert_eq!(address.backend, Backend::JsonlDir(dir.clone()));
    assert_eq!(address.session, None);
    let address = StoreAddress::resolve(&format!("{text}#s1")).unwrap();
    assert_eq!(address.backend, Backend::JsonlDir(dir));
    assert_eq!(address.session.as_deref(), Some("s1"));
}

/// F18: opening to read never creates a store, a schema or a journal mode.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn reading_never_creates_a_sqlite_store() {
    let root = tempfile::tempdir().unwrap();
    let empty = root.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let e = AnyStore::open_existing(&Backend::Sqlite(empty.clone()))
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
    assert_eq!(std::fs::read(&empty).unwrap(), b"");

    // Another application's database keeps its tables and its journal mode.
    let other = root.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('x');")
            .unwrap();
    }
    let before = std::fs::read(&other).unwrap();
    let e = AnyStore::open_existing(&Backend::Sqlite(other.clone()))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not an agentmsg store"), "{e}");
    assert_eq!(std::fs::read(&other).unwrap(), before);
    let conn = rusqlite::Connection::open(&other).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "delete");
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'agentmsg%'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0);

    let missing = root.path().join("missing.db");
    assert!(AnyStore::open_existing(&Backend::Sqlite(missing.clone()))
        .await
        .is_err());
    assert!(!missing.exists());
    assert!(
        AnyStore::open_existing(&Backend::JsonlDir(root.path().join("nodir")))
            .await
            .is_err()
    );
    assert!(!root.path().join("nodir").exists());

    // A real store reads, and refuses to be written through a read-only open.
    let path = root.path().join("agents.db");
    let store = agentmsg::store::SqliteStore::open(&path).await.unwrap();
    store.create("s").await.unwrap();
    drop(store);
    let reader = AnyStore::open_existing(&Backend::Sqlite(path))
        .await
        .unwrap();
    assert_eq!(reader.open("s").await.unwrap().entries, 0);
    assert!(reader
        .append("s", &[message("a", None, "x")], Expect::Any)
        .await
        .is_err());
}

#[cfg(feature = "postgres")]
mod pg {
    use super::*;
    use agentmsg::store::{PgOptions, PgStore};

    fn url(test: &str) -> Option<String> {
        let Ok(url) = std::env::var("AGENTMSG_PG_URL") else {
            if std::env::var_os("CI").is_some()
                || std::env::var_os("AGENTMSG_REQUIRE_CONFORMANCE").is_some()
            {
                panic!("AGENTMSG_PG_URL is not set under CI: the PostgreSQL store tests must run");
            }
            eprintln!(
                "\n==== SKIPPED: PostgreSQL store test `{test}`: AGENTMSG_PG_URL is not set ====\n"
            );
            return None;
        };
        Some(url)
    }

    /// Holds session `s`'s row lock in a transaction of `client`'s, as another
    /// writer in the middle of its append would.
    async fn lock_session_row<'c>(
        client: &'c mut tokio_postgres::Client,
        schema: &str,
    ) -> tokio_postgres::Transaction<'c> {
        let tx = client.transaction().await.unwrap();
        tx.execute(
            &format!("SELECT 1 FROM {schema}.agentmsg_sessions WHERE id = 's' FOR UPDATE"),
            &[],
        )
        .await
        .unwrap();
        tx
    }

    /// `url` with `password` put in its user information.
    fn with_password(url: &str, password: &str) -> String {
        url.replacen("://agentmsg@", &format!("://agentmsg:{password}@"), 1)
    }

    /// F8: a server that takes the connection and never answers fails the
    /// connect after its timeout.
    #[tokio::test]
    async fn a_silent_server_times_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let options = PgOptions::default().connect_timeout(Duration::from_millis(300));
        for url in [
            format!("postgres://agentmsg:hunter2@127.0.0.1:{port}/x"),
            format!("postgres://agentmsg:hunter2@127.0.0.1:{port}/x?connect_timeout=2"),
        ] {
            let e = tokio::time::timeout(
                Duration::from_secs(20),
                PgStore::connect_with(&url, options.clone()),
            )
            .await
            .expect("connect hung")
            .unwrap_err();
            assert!(matches!(e, StoreError::Timeout { .. }), "{e}");
            assert!(!format!("{e} {e:?}").contains("hunter2"));
        }
        held.abort();
    }

    /// F5, F6: connection errors say what the server said, and no password.
    #[tokio::test]
    async fn connection_errors_say_why_without_the_password() {
        let Some(url) = url("connection_errors_say_why_without_the_password") else {
            return;
        };
        let missing_db = with_password(&url, "hunter2").replace("/postgres", "/no_such_db");
        let e = PgStore::connect(&missing_db).await.unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("no_such_db") && text.contains("does not exist"),
            "{text}"
        );
        assert!(!format!("{text} {e:?}").contains("hunter2"));
        // A closed port, a bad option: no password either.
        let closed = "postgres://agentmsg:hunter2@127.0.0.1:1/x";
        let e = PgStore::connect(closed).await.unwrap_err();
        assert!(!format!("{e} {e:?}").contains("hunter2"), "{e}");
        for bad in [
            "postgres://agentmsg:hunter2@127.0.0.1:99999999/x",
            "postgres://127.0.0.1/x?password=hunter2&port=nope",
            "host=127.0.0.1 password=hunter2 port=nope",
            "host=127.0.0.1 password='hunter2",
        ] {
            let e = PgStore::connect(bad).await.unwrap_err();
            assert!(
                !format!("{e} {e:?}").contains("hunter2"),
                "{bad}: {e} {e:?}"
            );
        }
        // The store's Debug shows no password.
        let store = PgStore::connect(&with_password(&url, "hunter2"))
            .await
            .unwrap();
        assert!(!format!("{store:?}").contains("hunter2"));
    }

    /// F9: an append dropped while it waits on another writer's lock does not
    /// leave its connection to block what comes next.
    #[tokio::test]
    async fn a_cancelled_append_under_a_lock_blocks_nothing() {
        let Some(f) =
            store_fixture::postgres("a_cancelled_append_under_a_lock_blocks_nothing").await
        else {
            return;
        };
        let store_fixture::Reopen::Postgres { url, schema } = &f.reopen else {
            unreachable!()
        };
        let options = PgOptions::default().connections(1).schema(schema.clone());
        let store = PgStore::connect_with(url, options).await.unwrap();
        store.create("s").await.unwrap();
        let mut client = store_fixture::admin(url).await;
        let tx = lock_session_row(&mut client, schema).await;
        let waited = tokio::time::timeout(
            Duration::from_millis(500),
            store.append("s", &[message("a", None, "x")], Expect::Any),
        )
        .await;
        assert!(waited.is_err(), "the append should wait on the lock");
        // The lock is still held: the next operations run on a new connection.
        let info = tokio::time::timeout(Duration::from_secs(10), store.open("s"))
            .await
            .expect("open hung behind a cancelled append")
            .unwrap();
        assert_eq!(info.entries, 0);
        tokio::time::timeout(Duration::from_secs(10), store.list(&PageRequest::default()))
            .await
            .expect("list hung")
            .unwrap();
        tx.rollback().await.unwrap();
        // The cancelled append wrote nothing.
        assert_eq!(store.open("s").await.unwrap().entries, 0);
    }

    /// An operation past the statement timeout fails, naming it.
    #[tokio::test]
    async fn an_append_past_its_timeout_fails() {
        let Some(f) = store_fixture::postgres("an_append_past_its_timeout_fails").await else {
            return;
        };
        let store_fixture::Reopen::Postgres { url, schema } = &f.reopen else {
            unreachable!()
        };
        let options = PgOptions::default()
            .schema(schema.clone())
            .statement_timeout(Duration::from_millis(300));
        let store = PgStore::connect_with(url, options).await.unwrap();
        store.create("s").await.unwrap();
        let mut client = store_fixture::admin(url).await;
        let tx = lock_session_row(&mut client, schema).await;
        let e = tokio::time::timeout(
            Duration::from_secs(20),
            store.append("s", &[message("a", None, "x")], Expect::Any),
        )
        .await
        .expect("append hung")
        .unwrap_err();
        assert!(
            matches!(e, StoreError::Timeout { .. } | StoreError::Postgres(_)),
            "{e}"
        );
        assert!(
            e.to_string().contains("timeout") || e.to_string().contains("no answer"),
            "{e}"
        );
        tx.rollback().await.unwrap();
        store
            .append("s", &[message("a", None, "x")], Expect::Any)
            .await
            .unwrap();
    }

    /// An append whose commit is cut off says its outcome is unknown, and a
    /// retry with the same expected leaf resolves it, stored or not.
    #[tokio::test]
    async fn a_lost_commit_is_unknown_and_its_retry_resolves_it() {
        let Some(f) =
            store_fixture::postgres("a_lost_commit_is_unknown_and_its_retry_resolves_it").await
        else {
            return;
        };
        let store_fixture::Reopen::Postgres { url, schema } = &f.reopen else {
            unreachable!()
        };
        let store = PgStore::connect_with(url, PgOptions::default().schema(schema.clone()))
            .await
            .unwrap();
        store.create("s").await.unwrap();
        store
            .append("s", &[message("a", None, "a")], Expect::Empty)
            .await
            .unwrap();
        // A commit that takes its time (a deferred trigger), cut off by the
        // server terminating the connection.
        let admin = store_fixture::admin(url).await;
        admin
            .batch_execute(&format!(
                "CREATE FUNCTION {schema}.slow_commit() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN PERFORM pg_sleep(2); RETURN NULL; END $$;
                 CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON {schema}.agentmsg_entries
                   DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {schema}.slow_commit();"
            ))
            .await
            .unwrap();
        let batch = [message("b", Some("a"), "b")];
        let append = store.append("s", &batch, Expect::Leaf("a"));
        let kill = async {
            for _ in 0..100 {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let killed: i64 = admin
                    .query_one(
                        "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
                         WHERE query LIKE 'COMMIT%' AND pid <> pg_backend_pid()
                           AND wait_event = 'PgSleep'",
                        &[],
                    )
                    .await
                    .unwrap()
                    .get(0);
                if killed > 0 {
                    return;
                }
            }
            panic!("no commit to cut off");
        };
        let (result, ()) = tokio::join!(append, kill);
        let e = result.unwrap_err();
        assert!(matches!(e, StoreError::CommitUnknown { .. }), "{e}");
        assert!(e.to_string().contains("unknown"), "{e}");
        assert!(e.is_retryable());
        admin
            .batch_execute(&format!("DROP TRIGGER slow ON {schema}.agentmsg_entries"))
            .await
            .unwrap();
        // The commit was cut before it landed: the retry writes it.
        let first = store.append("s", &batch, Expect::Leaf("a")).await.unwrap();
        assert_eq!((first.first, first.entries), (1, 2));
        // Had it landed, the retry is recognised and writes nothing again.
        let again = store.append("s", &batch, Expect::Leaf("a")).await.unwrap();
        assert_eq!(again, first);
        assert_eq!(store.open("s").await.unwrap().entries, 2);
        // Anything else after that leaf is still a conflict.
        let other = store
            .append("s", &[message("c", Some("a"), "c")], Expect::Leaf("a"))
            .await
            .unwrap_err();
        assert!(matches!(other, StoreError::Conflict { .. }), "{other}");
    }

    /// F18: a read-only open of a database without agentmsg's tables changes
    /// nothing.
    #[tokio::test]
    async fn reading_never_creates_a_postgres_schema() {
        let Some(url) = url("reading_never_creates_a_postgres_schema") else {
            return;
        };
        let schema = format!("agentmsg_ro_{}", std::process::id());
        let options = PgOptions::default().schema(schema.clone());
        let e = PgStore::connect_existing(&url, options).await.unwrap_err();
        assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
        let client = store_fixture::admin(&url).await;
        let exists: bool = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
                &[&schema],
            )
            .await
            .unwrap()
            .get(0);
        assert!(!exists);
    }
}
