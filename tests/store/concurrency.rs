//! 8 writers appending to one session, and to 100 sessions, on every backend:
//! each writer has its own store handle (its own file descriptors or database
//! connection, as a writer in another process would), appends one entry at a
//! time as a child of the leaf it knows, and retries from the leaf a conflict
//! reports. Afterwards every entry is there exactly once, each session is one
//! parent chain (no fork), and a JsonlDir's files hold no torn line.
//!
//! Each writer makes `AGENTMSG_STORE_APPENDS` appends (default 1,000: all six
//! tests take about 17 s in a debug build on 2 cores).

use crate::store_fixture;

use std::collections::{BTreeMap, HashSet};

use agentmsg::store::{Cursor, PageRequest, SessionStore, StoredEntry};
use store_fixture::{append_child, assert_chain, Reopen};

const WRITERS: usize = 8;
const SESSIONS: usize = 100;

fn appends_per_writer() -> usize {
    match std::env::var("AGENTMSG_STORE_APPENDS") {
        Ok(n) => n.parse().expect("AGENTMSG_STORE_APPENDS is a number"),
        Err(_) => 1000,
    }
}

fn line(id: &str, parent: Option<&str>) -> StoredEntry {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    StoredEntry::from_line(format!(
        r#"{{"role":"notice","text":"written by {id}, a line long enough to be written in more than one piece if it were torn: {}","id":"{id}","parentId":{parent}}}"#,
        "x".repeat(64)
    ))
    .0
}

async fn one_session(reopen: Reopen) {
    let n = appends_per_writer();
    let store = reopen.open().await;
    store.create("shared").await.unwrap();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let reopen = reopen.clone();
        tasks.push(tokio::spawn(async move {
            let store = reopen.open().await;
            let mut leaf = None;
            let mut conflicts = 0;
            for i in 0..n {
                let id = format!("w{w}-{i}");
                conflicts += append_child(&store, "shared", &mut leaf, |p| line(&id, p)).await;
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for task in tasks {
        conflicts += task.await.unwrap();
    }
    let loaded = store.load("shared", Cursor::START).await.unwrap();
    assert!(
        loaded.problems.is_empty() && loaded.torn.is_empty(),
        "{:?}",
        loaded.problems
    );
    assert_eq!(loaded.entries.len(), WRITERS * n);
    let ids = assert_chain("shared", &loaded.entries);
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), WRITERS * n, "an entry is there twice");
    for w in 0..WRITERS {
        for i in 0..n {
            assert!(unique.contains(&format!("w{w}-{i}")), "w{w}-{i} is missing");
        }
    }
    let info = store.open("shared").await.unwrap();
    assert_eq!(info.entries as usize, WRITERS * n);
    assert_eq!(info.leaf.as_ref(), ids.last());
    eprintln!(
        "one session: {} appends, {conflicts} conflicts retried",
        WRITERS * n
    );
    check_files(&reopen);
}

async fn hundred_sessions(reopen: Reopen) {
    let n = appends_per_writer();
    let store = reopen.open().await;
    for s in 0..SESSIONS {
        store.create(&format!("s{s:03}")).await.unwrap();
    }
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let reopen = reopen.clone();
        tasks.push(tokio::spawn(async move {
            let store = reopen.open().await;
            let mut leaves: BTreeMap<String, Option<String>> = BTreeMap::new();
            let mut conflicts = 0;
            for i in 0..n {
                // Each writer walks the sessions in its own order.
                let session = format!("s{:03}", (i * 7 + w * 13) % SESSIONS);
                let leaf = leaves.entry(session.clone()).or_default();
                let id = format!("w{w}-{i}");
                conflicts += append_child(&store, &session, leaf, |p| line(&id, p)).await;
            }
            conflicts
        }));
    }
    let mut conflicts = 0;
    for task in tasks {
        conflicts += task.await.unwrap();
    }
    let mut all = HashSet::new();
    let page = store
        .list(&PageRequest {
            after: None,
            limit: SESSIONS,
        })
        .await
        .unwrap();
    assert_eq!(page.sessions.len(), SESSIONS);
    for info in page.sessions {
        let loaded = store.load(&info.id, Cursor::START).await.unwrap();
        assert!(loaded.problems.is_empty() && loaded.torn.is_empty());
        assert_eq!(info.entries as usize, loaded.entries.len());
        for id in assert_chain(&info.id, &loaded.entries) {
            assert!(all.insert(id), "an entry is there twice");
        }
    }
    assert_eq!(all.len(), WRITERS * n);
    eprintln!(
        "100 sessions: {} appends, {conflicts} conflicts retried",
        WRITERS * n
    );
    check_files(&reopen);
}

/// A JsonlDir's files: every line whole (ends with a newline, is JSON), and
/// agentmsg's reader reads each file whole, with nothing torn.
fn check_files(reopen: &Reopen) {
    let Reopen::Dir(dir) = reopen else { return };
    for file in std::fs::read_dir(dir).unwrap() {
        let path = file.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            bytes.is_empty() || bytes.ends_with(b"\n"),
            "{}",
            path.display()
        );
        let mut lines = 0;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            serde_json::from_slice::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{}: torn line: {e}", path.display()));
            lines += 1;
        }
        let read = agentmsg::transcript::read_transcript(bytes.as_slice()).unwrap();
        assert!(read.torn.is_none());
        assert_eq!(read.messages.len(), lines);
    }
}

macro_rules! backends {
    ($($test:ident),*) => {
        mod jsonl_dir {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    let f = crate::store_fixture::jsonl_dir().await;
                    super::$test(f.reopen.clone()).await;
                }
            )*
        }
        #[cfg(feature = "sqlite")]
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    let f = crate::store_fixture::sqlite().await;
                    super::$test(f.reopen.clone()).await;
                }
            )*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $test() {
                    if let Some(f) = crate::store_fixture::postgres(stringify!($test)).await {
                        super::$test(f.reopen.clone()).await;
                    }
                }
            )*
        }
    };
}

backends!(one_session, hundred_sessions);
