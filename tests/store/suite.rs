//! One suite, run against every store backend: round trip, lines kept byte for
//! byte, branches, conflicts, listing and paging, and what cannot be read
//! reported but never dropped.

use crate::store_fixture;

use agentmsg::store::{
    AnyStore, Cursor, EntryProblem, Expect, LineProblem, PageRequest, SessionStore, StoreError,
    StoredEntry,
};
use agentmsg::{AgentMessage, Message, ParentId};
use store_fixture::{entry, message, Fixture};

async fn round_trip(f: &Fixture) {
    let store = &f.store;
    let info = store.create("s1").await.unwrap();
    assert_eq!(
        (info.id.as_str(), info.entries, info.leaf.as_deref()),
        ("s1", 0, None)
    );
    assert!(matches!(
        store.create("s1").await,
        Err(StoreError::Exists { .. })
    ));

    let hello = StoredEntry::from_message(
        &AgentMessage::from(Message::user("hello")).with_id(Some("m1".into())),
    )
    .unwrap();
    let appended = store
        .append("s1", std::slice::from_ref(&hello), Expect::Empty)
        .await
        .unwrap();
    assert_eq!((appended.first, appended.entries), (0, 1));
    assert_eq!(appended.leaf.as_deref(), Some("m1"));
    let batch = [
        message("m2", Some("m1"), "two"),
        message("m3", Some("m2"), "three"),
    ];
    let appended = store
        .append("s1", &batch, Expect::Leaf("m1"))
        .await
        .unwrap();
    assert_eq!((appended.first, appended.entries), (1, 3));
    assert_eq!(appended.leaf.as_deref(), Some("m3"));

    let loaded = store.load("s1", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries, [hello, batch[0].clone(), batch[1].clone()]);
    assert_eq!(loaded.next, Cursor(3));
    assert!(
        loaded.problems.is_empty() && loaded.torn.is_empty(),
        "{loaded:?}"
    );
    // The first line decodes back into the message written.
    let decoded: AgentMessage =
        agentmsg::transcript::read_transcript(loaded.entries[0].line().as_bytes())
            .unwrap()
            .messages
            .remove(0);
    assert_eq!(decoded.id().map(|id| id.as_str()), Some("m1"));

    let rest = store.load("s1", Cursor(2)).await.unwrap();
    assert_eq!(rest.first, 2);
    assert_eq!(rest.entries, [batch[1].clone()]);
    assert_eq!(rest.next, Cursor(3));
    let none = store.load("s1", loaded.next).await.unwrap();
    assert!(none.entries.is_empty());
    assert_eq!(none.next, Cursor(3));

    let info = store.open("s1").await.unwrap();
    assert_eq!((info.entries, info.leaf.as_deref()), (3, Some("m3")));
    assert!(
        info.updated_ms >= info.created_ms && info.created_ms > 0,
        "{info:?}"
    );

    // Refused appends write nothing.
    let bad = StoredEntry::from_line("{\"role\":\"user\",\n\"content\":\"x\"}").0;
    let err = store
        .append("s1", &[message("m4", Some("m3"), "four"), bad], Expect::Any)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::InvalidEntry { index: 1, .. }),
        "{err}"
    );
    let blank = StoredEntry::from_line("  ").0;
    assert!(matches!(
        store.append("s1", &[blank], Expect::Any).await,
        Err(StoreError::InvalidEntry { index: 0, .. })
    ));
    assert_eq!(store.open("s1").await.unwrap().entries, 3);

    assert!(matches!(
        store
            .append("nope", &[message("x", None, "x")], Expect::Any)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.load("nope", Cursor::START).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.create("../etc/passwd").await,
        Err(StoreError::InvalidSessionId { .. })
    ));

    store.delete("s1").await.unwrap();
    assert!(matches!(
        store.open("s1").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.delete("s1").await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store
            .append("s1", &[message("m9", None, "x")], Expect::Any)
            .await,
        Err(StoreError::NotFound { .. })
    ));
    // The id is free again.
    store.create("s1").await.unwrap();
    assert_eq!(
        store.load("s1", Cursor::START).await.unwrap().entries.len(),
        0
    );
}

/// Lines the store does not understand, or understands only in part, come
/// back byte for byte; those it cannot read are reported at their position.
async fn unknown_and_custom_lines_kept(f: &Fixture) {
    let store = &f.store;
    store.create("odd").await.unwrap();
    let lines = [
        // Key order, spacing, escapes and number forms as written.
        r#"{ "content" : "spaced",   "role":"user" , "id":"a1"}"#,
        r#"{"role":"notice","text":"caf\u00e9 \ud83d\ude00 é","v":3,"id":"a2","parentId":"a1"}"#,
        r#"{"role":"someday","payload":{"x":[1.0e10,-0.0,12345678901234567890]},"id":"a3"}"#,
        r#"{"type":"session_info","name":"the odd one","id":"a4","timestamp":"2025-12-08T22:41:05.292Z"}"#,
        r#"{"role":"bashExecution","command":"ls","output":"a\nb\n","exitCode":0}"#,
        "not json at all",
        "[1,2,3]",
        r#"{"role":"user","id":42}"#,
        r#"{"no":"kind"}"#,
    ];
    let entries: Vec<StoredEntry> = lines.iter().map(|l| StoredEntry::from_line(*l).0).collect();
    store.append("odd", &entries, Expect::Empty).await.unwrap();
    let loaded = store.load("odd", Cursor::START).await.unwrap();
    let got: Vec<&str> = loaded.entries.iter().map(StoredEntry::line).collect();
    assert_eq!(got, lines);
    let problems: Vec<(u64, &EntryProblem)> = loaded
        .problems
        .iter()
        .map(|p| (p.position, &p.problem))
        .collect();
    assert_eq!(problems.len(), 4, "{problems:?}");
    assert!(matches!(
        problems[0],
        (5, EntryProblem::Line(LineProblem::NotJson(_)))
    ));
    assert!(matches!(
        problems[1],
        (6, EntryProblem::Line(LineProblem::NotAnObject))
    ));
    assert!(matches!(
        problems[2],
        (7, EntryProblem::Line(LineProblem::BadKey { key: "id", .. }))
    ));
    assert!(matches!(
        problems[3],
        (8, EntryProblem::Line(LineProblem::NoKind))
    ));
    let info = store.open("odd").await.unwrap();
    assert_eq!(info.name.as_deref(), Some("the odd one"));
    assert_eq!(info.leaf.as_deref(), Some("a4"));
    assert_eq!(info.entries, 9);
    assert_eq!(loaded.entries[3].timestamp_ms(), Some(1_765_233_665_292));
}

/// A session tree: a branch (a second child of an earlier entry) and a
/// compaction, linked by `parentId`, stored and loaded as written.
async fn branches_and_compactions(f: &Fixture) {
    let store = &f.store;
    store.create("tree").await.unwrap();
    let lines = [
        r#"{"role":"user","content":"root","id":"r","parentId":null}"#,
        r#"{"role":"assistant","content":[{"type":"text","text":"first"}],"id":"a","parentId":"r"}"#,
        r#"{"role":"user","content":"follows a, no parentId key","id":"b"}"#,
        r#"{"role":"branchSummary","summary":"tried b","fromId":"b","id":"bs","parentId":"r"}"#,
        r#"{"role":"user","content":"second branch","id":"c","parentId":"bs"}"#,
        r#"{"role":"compactionSummary","summary":"so far","tokensBefore":1200,"firstKeptId":"c","id":"k","parentId":"c"}"#,
    ];
    let mut leaf = None;
    for line in lines {
        let e = entry(line);
        let appended = store
            .append("tree", &[e], Expect::leaf(leaf.as_deref()))
            .await
            .unwrap();
        leaf = appended.leaf;
    }
    assert_eq!(leaf.as_deref(), Some("k"));
    let loaded = store.load("tree", Cursor::START).await.unwrap();
    let parents: Vec<&ParentId> = loaded.entries.iter().map(StoredEntry::parent).collect();
    assert_eq!(
        parents,
        [
            &ParentId::Root,
            &ParentId::Id("r".into()),
            &ParentId::Previous,
            &ParentId::Id("r".into()),
            &ParentId::Id("bs".into()),
            &ParentId::Id("c".into()),
        ]
    );
    let kinds: Vec<&str> = loaded.entries.iter().map(StoredEntry::kind).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "user",
            "branchSummary",
            "user",
            "compactionSummary"
        ]
    );
    assert_eq!(
        loaded
            .entries
            .iter()
            .map(StoredEntry::line)
            .collect::<Vec<_>>(),
        lines
    );
}

/// An append that expects a stale leaf writes nothing and says which leaf to
/// retry from.
async fn conflicts(f: &Fixture) {
    let store = &f.store;
    store.create("c").await.unwrap();
    store
        .append("c", &[message("x1", None, "one")], Expect::Empty)
        .await
        .unwrap();
    store
        .append("c", &[message("x2", Some("x1"), "two")], Expect::Leaf("x1"))
        .await
        .unwrap();
    let err = store
        .append(
            "c",
            &[message("y2", Some("x1"), "stale")],
            Expect::Leaf("x1"),
        )
        .await
        .unwrap_err();
    assert!(err.is_retryable());
    match &err {
        StoreError::Conflict {
            session,
            expected,
            actual,
        } => {
            assert_eq!(session, "c");
            assert_eq!(expected.as_deref(), Some("x1"));
            assert_eq!(actual.as_deref(), Some("x2"));
        }
        other => panic!("not a conflict: {other}"),
    }
    assert!(err.to_string().contains("retry"), "{err}");
    assert!(matches!(
        store
            .append("c", &[message("z", None, "z")], Expect::Empty)
            .await,
        Err(StoreError::Conflict { expected: None, .. })
    ));
    assert_eq!(store.open("c").await.unwrap().entries, 2);
    store
        .append(
            "c",
            &[message("y2", Some("x2"), "retried")],
            Expect::Leaf("x2"),
        )
        .await
        .unwrap();
    let loaded = store.load("c", Cursor::START).await.unwrap();
    store_fixture::assert_chain("c", &loaded.entries);
    // An id-less line does not move the leaf.
    store
        .append(
            "c",
            &[entry(r#"{"role":"notice","text":"no id"}"#)],
            Expect::Leaf("y2"),
        )
        .await
        .unwrap();
    assert_eq!(store.open("c").await.unwrap().leaf.as_deref(), Some("y2"));
}

async fn listing_and_paging(f: &Fixture) {
    let store = &f.store;
    for i in 0..25 {
        let id = format!("list-{i:02}");
        store.create(&id).await.unwrap();
        for j in 0..(i % 4) {
            let parent = (j > 0).then(|| format!("{id}-{}", j - 1));
            store
                .append(
                    &id,
                    &[message(&format!("{id}-{j}"), parent.as_deref(), "x")],
                    Expect::Any,
                )
                .await
                .unwrap();
        }
    }
    store
        .append(
            "list-07",
            &[entry(r#"{"role":"session_info","name":"seventh"}"#)],
            Expect::Any,
        )
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut request = PageRequest {
        after: None,
        limit: 10,
    };
    let mut pages = 0;
    loop {
        let page = store.list(&request).await.unwrap();
        pages += 1;
        assert!(page.sessions.len() <= 10);
        seen.extend(page.sessions);
        match page.next {
            Some(next) => request.after = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let ids: Vec<&str> = seen.iter().map(|s| s.id.as_str()).collect();
    let expected: Vec<String> = (0..25).map(|i| format!("list-{i:02}")).collect();
    assert_eq!(ids, expected);
    for (i, info) in seen.iter().enumerate() {
        let n = (i % 4) as u64 + u64::from(i == 7);
        assert_eq!(info.entries, n, "{info:?}");
        let leaf = (i % 4 > 0).then(|| format!("list-{i:02}-{}", i % 4 - 1));
        assert_eq!(info.leaf, leaf);
        assert_eq!(info.name.as_deref(), (i == 7).then_some("seventh"));
    }
    let all = store.list(&PageRequest::default()).await.unwrap();
    assert_eq!((all.sessions.len(), all.next), (25, None));
    let exact = store
        .list(&PageRequest {
            after: None,
            limit: 25,
        })
        .await
        .unwrap();
    assert_eq!((exact.sessions.len(), exact.next), (25, None));
    let tail = store
        .list(&PageRequest {
            after: Some("list-23".into()),
            limit: 10,
        })
        .await
        .unwrap();
    assert_eq!(tail.sessions.len(), 1);
}

suite!(
    round_trip,
    unknown_and_custom_lines_kept,
    branches_and_compactions,
    conflicts,
    listing_and_paging,
);

/// With `Durability::Disk` (a sync per append) the stores behave the same.
#[tokio::test]
async fn jsonl_dir_synced_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = agentmsg::store::JsonlDir::open(dir.path())
        .unwrap()
        .durability(agentmsg::store::Durability::Disk);
    let f = Fixture {
        store: AnyStore::JsonlDir(store),
        dir: None,
        reopen: store_fixture::Reopen::Dir(dir.path().to_owned()),
    };
    round_trip(&f).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_synced_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synced.db");
    let store = agentmsg::store::SqliteStore::open_with(&path, agentmsg::store::Durability::Disk)
        .await
        .unwrap();
    let f = Fixture {
        store: AnyStore::Sqlite(store),
        dir: None,
        reopen: store_fixture::Reopen::Sqlite(path),
    };
    round_trip(&f).await;
}

/// JsonlDir: a torn last line (a crash mid-append) is reported on load, moved
/// aside by the next append, and reported from there; the session file stays a
/// clean transcript that agentmsg's reader reads whole.
#[tokio::test]
async fn jsonl_dir_torn_line_is_kept_aside() {
    let f = store_fixture::jsonl_dir().await;
    let AnyStore::JsonlDir(store) = &f.store else {
        unreachable!()
    };
    store.create("t").await.unwrap();
    store
        .append("t", &[message("t1", None, "one")], Expect::Empty)
        .await
        .unwrap();
    let path = store.session_path("t").unwrap();
    let torn = br#"{"role":"user","content":[{"type":"text","text":"cut of"#;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn)
        .unwrap();

    let loaded = store.load("t", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 1);
    assert_eq!(loaded.torn.len(), 1);
    assert_eq!(loaded.torn[0].raw, torn);
    assert_eq!(loaded.torn[0].kept_in, path);

    // A second writer (its own handle, as another process would be) finds it.
    let other = store_fixture::Reopen::Dir(store.dir().to_owned())
        .open()
        .await;
    other
        .append("t", &[message("t2", Some("t1"), "two")], Expect::Leaf("t1"))
        .await
        .unwrap();
    let loaded = store.load("t", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 2);
    assert_eq!(loaded.torn.len(), 1);
    assert_eq!(loaded.torn[0].raw, torn);
    assert_eq!(loaded.torn[0].kept_in, store.torn_path("t").unwrap());
    store_fixture::assert_chain("t", &loaded.entries);
    let text = std::fs::read(&path).unwrap();
    let read = agentmsg::transcript::read_transcript(text.as_slice()).unwrap();
    assert!(read.torn.is_none());
    assert_eq!(read.messages.len(), 2);
    assert!(read.messages.iter().all(|m| m.is_llm()));
    // This writer's cached view catches up with the other's append.
    store
        .append(
            "t",
            &[message("t3", Some("t2"), "three")],
            Expect::Leaf("t2"),
        )
        .await
        .unwrap();

    // A whole line that only lacks its newline is an entry, not torn.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"role":"notice","text":"hand-written","id":"h"}"#)
        .unwrap();
    let loaded = store.load("t", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 4);
    assert!(matches!(
        store.append("t", &[message("t4", Some("t3"), "x")], Expect::Leaf("t3")).await,
        Err(StoreError::Conflict { actual: Some(a), .. }) if a == "h"
    ));
    store
        .append("t", &[message("t4", Some("h"), "x")], Expect::Leaf("h"))
        .await
        .unwrap();
    let loaded = store.load("t", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 5);
    assert_eq!(loaded.torn.len(), 1);

    // Deleting the session removes what was kept aside with it.
    store.delete("t").await.unwrap();
    assert!(!store.torn_path("t").unwrap().exists());
}

/// JsonlDir: a line that is not UTF-8 (written by something else) is no entry,
/// but is reported with its bytes, and counts as a position.
#[tokio::test]
async fn jsonl_dir_foreign_bytes_are_reported() {
    let f = store_fixture::jsonl_dir().await;
    let AnyStore::JsonlDir(store) = &f.store else {
        unreachable!()
    };
    store.create("f").await.unwrap();
    let path = store.session_path("f").unwrap();
    std::fs::write(
        &path,
        b"{\"role\":\"user\",\"content\":\"a\",\"id\":\"f1\"}\n\xff\xfe junk\n\n",
    )
    .unwrap();
    store
        .append("f", &[message("f2", Some("f1"), "b")], Expect::Leaf("f1"))
        .await
        .unwrap();
    let loaded = store.load("f", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 2);
    assert_eq!(loaded.problems.len(), 1);
    assert_eq!(loaded.problems[0].position, 1);
    assert_eq!(
        loaded.problems[0].problem,
        EntryProblem::NotUtf8(b"\xff\xfe junk".to_vec())
    );
    assert_eq!(loaded.next, Cursor(3));
    assert_eq!(store.open("f").await.unwrap().entries, 3);
}

/// SQLite: a row written by something else whose columns disagree with its
/// line is loaded from its line and reported; a non-text line is reported
/// with its bytes.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_foreign_rows_are_reported() {
    let f = store_fixture::sqlite().await;
    f.store.create("f").await.unwrap();
    f.store
        .append("f", &[message("f1", None, "a")], Expect::Empty)
        .await
        .unwrap();
    let store_fixture::Reopen::Sqlite(path) = &f.reopen else {
        unreachable!()
    };
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute(
        "INSERT INTO agentmsg_entries (session, seq, id, parent_id, kind, timestamp_ms, line)
         VALUES ('f', 1, 'wrong', NULL, 'user', NULL, ?1)",
        [r#"{"role":"user","content":"b","id":"f2"}"#],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO agentmsg_entries (session, seq, id, parent_id, kind, timestamp_ms, line)
         VALUES ('f', 2, NULL, NULL, '', NULL, ?1)",
        [&b"\xff\x00bin"[..]],
    )
    .unwrap();
    let loaded = f.store.load("f", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 2);
    assert_eq!(loaded.entries[1].id(), Some("f2"));
    assert_eq!(
        loaded.problems[0].problem,
        EntryProblem::ColumnDisagrees {
            column: "id",
            stored: Some("wrong".into()),
            line: Some("f2".into())
        }
    );
    assert_eq!(loaded.problems[0].position, 1);
    assert_eq!(loaded.problems[1].position, 2);
    assert_eq!(
        loaded.problems[1].problem,
        EntryProblem::NotUtf8(b"\xff\x00bin".to_vec())
    );
    assert_eq!(loaded.next, Cursor(3));
}

/// SQLite: a database at a newer schema version is refused, not misread.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_newer_schema_is_refused() {
    let f = store_fixture::sqlite().await;
    let store_fixture::Reopen::Sqlite(path) = &f.reopen else {
        unreachable!()
    };
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute("UPDATE agentmsg_schema SET version = 99", [])
        .unwrap();
    let err = agentmsg::store::SqliteStore::open(path).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SchemaTooNew {
                found: 99,
                known: 2
            }
        ),
        "{err}"
    );
}

/// PostgreSQL: a foreign row is reported, not dropped.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_foreign_rows_are_reported() {
    let Some(f) = store_fixture::postgres("postgres_foreign_rows_are_reported").await else {
        return;
    };
    f.store.create("f").await.unwrap();
    f.store
        .append("f", &[message("f1", None, "a")], Expect::Empty)
        .await
        .unwrap();
    let store_fixture::Reopen::Postgres { url, schema } = &f.reopen else {
        unreachable!()
    };
    let client = store_fixture::admin(url).await;
    client
        .batch_execute(&format!(
            "SET search_path TO {schema};
             INSERT INTO agentmsg_entries (session, seq, id, parent_id, kind, timestamp_ms, line)
             VALUES ('f', 1, 'f2', 'nobody', 'user', NULL, '{{\"role\":\"user\",\"content\":\"b\",\"id\":\"f2\"}}')"
        ))
        .await
        .unwrap();
    let loaded = f.store.load("f", Cursor::START).await.unwrap();
    assert_eq!(loaded.entries.len(), 2);
    assert_eq!(loaded.problems.len(), 1);
    assert_eq!(
        loaded.problems[0].problem,
        EntryProblem::ColumnDisagrees {
            column: "parent_id",
            stored: Some("nobody".into()),
            line: None
        }
    );
}

/// PostgreSQL: a database at a newer schema version is refused on connect.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_newer_schema_is_refused() {
    let Some(f) = store_fixture::postgres("postgres_newer_schema_is_refused").await else {
        return;
    };
    let store_fixture::Reopen::Postgres { url, schema } = &f.reopen else {
        unreachable!()
    };
    let client = store_fixture::admin(url).await;
    client
        .batch_execute(&format!("UPDATE {schema}.agentmsg_schema SET version = 99"))
        .await
        .unwrap();
    let options = agentmsg::store::PgOptions {
        connections: 1,
        schema: Some(schema.clone()),
        ..Default::default()
    };
    let err = agentmsg::store::PgStore::connect_with(url, options)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::SchemaTooNew {
                found: 99,
                known: 2
            }
        ),
        "{err}"
    );
}

use std::io::Write as _;
