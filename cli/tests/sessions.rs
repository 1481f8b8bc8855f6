//! `agentmsg sessions` and store addresses where a command takes a file.

mod common;

use agentmsg_runtime::store::{Expect, JsonlDir, SessionStore, StoredEntry};
use common::agentmsg_in;

const LINES: [&str; 3] = [
    r#"{"role":"user","content":"hi","id":"a","timestamp":1765233665292}"#,
    r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}],"id":"b","parentId":"a"}"#,
    r#"{"role":"session_info","name":"first try","id":"n","parentId":"b"}"#,
];

async fn fill<S: SessionStore>(store: &S) {
    store.create("one").await.unwrap();
    store.create("two").await.unwrap();
    let entries: Vec<StoredEntry> = LINES.iter().map(|l| StoredEntry::from_line(*l).0).collect();
    store.append("one", &entries, Expect::Empty).await.unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn sessions_lists_a_directory_store() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(fill(&JsonlDir::open(dir.path().join("s")).unwrap()));
    let run = agentmsg_in(dir.path(), &["sessions", "--store", "s"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    assert!(lines[0].starts_with("ID "));
    assert!(
        lines[1].starts_with("one")
            && lines[1].contains("  3  ")
            && lines[1].ends_with("first try"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("two") && lines[2].contains("  0  "),
        "{}",
        lines[2]
    );

    let run = agentmsg_in(
        dir.path(),
        &["sessions", "--store", "s", "--json", "--limit", "1"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let rows: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "one");
    assert_eq!(rows[0]["leaf"], "n");
    assert_eq!(rows[0]["entries"], 3);
    assert_eq!(rows[0]["name"], "first try");

    let run = agentmsg_in(
        dir.path(),
        &["sessions", "--store", "s", "--json", "--after", "one"],
    );
    assert_eq!(run.stdout.lines().count(), 1);
    assert!(run.stdout.contains("\"two\""));

    // A command that takes a file takes DIR#SESSION.
    let run = agentmsg_in(dir.path(), &["check", "s#one"]);
    assert_eq!(run.code, 1, "{run:?}"); // the ls call has no result
    assert!(
        run.stdout.contains("s#one:2: error[missing-result]"),
        "{}",
        run.stdout
    );

    let run = agentmsg_in(dir.path(), &["sessions", "--store", "missing"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("no session store at missing"),
        "{}",
        run.stderr
    );
}

#[cfg(feature = "sqlite")]
#[test]
fn sessions_and_check_read_an_sqlite_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    runtime().block_on(async {
        let store = agentmsg_runtime::store::SqliteStore::open(&db)
            .await
            .unwrap();
        fill(&store).await;
    });
    let address = format!("sqlite:{}", db.display());
    let run = agentmsg_in(dir.path(), &["sessions", "--store", &address, "--json"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.lines().count(), 2);
    let run = agentmsg_in(
        dir.path(),
        &["sessions", "--store", &format!("{address}#two"), "--json"],
    );
    assert_eq!(run.stdout.lines().count(), 1);
    assert!(run.stdout.contains("\"entries\":0"));

    let run = agentmsg_in(dir.path(), &["stats", &format!("{address}#one")]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("3 lines"), "{}", run.stdout);
    let run = agentmsg_in(dir.path(), &["check", &format!("{address}#nope")]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("session `nope` not found"),
        "{}",
        run.stderr
    );
    let run = agentmsg_in(
        dir.path(),
        &[
            "check",
            &format!("sqlite:{}/absent.db#one", dir.path().display()),
        ],
    );
    assert_eq!(run.code, 2);
    assert!(
        !dir.path().join("absent.db").exists(),
        "reading must not create a database"
    );
}
