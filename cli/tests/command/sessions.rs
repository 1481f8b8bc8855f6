//! `agentmsg sessions` and store addresses where a command takes a file.

use crate::common;

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

#[test]
fn sessions_takes_the_address_positionally_and_as_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = JsonlDir::open(dir.path().join("s")).unwrap();
    runtime().block_on(fill(&store));
    let positional = agentmsg_in(dir.path(), &["sessions", "s", "--json"]);
    assert_eq!(positional.code, 0, "{positional:?}");
    assert_eq!(positional.stdout.lines().count(), 2);
    let flag = agentmsg_in(dir.path(), &["sessions", "--store", "s", "--json"]);
    assert_eq!(flag.stdout, positional.stdout);
    let both = agentmsg_in(dir.path(), &["sessions", "s", "--store", "s"]);
    assert_eq!(both.code, 2, "{both:?}");
}

const CLAUDE_LOG: &str = concat!(
    r#"{"parentUuid":null,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    "\n",
    r#"{"parentUuid":"u1","sessionId":"s","type":"assistant","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    "\n",
);

#[test]
fn import_writes_a_new_session_of_any_store() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("log.jsonl"), CLAUDE_LOG).unwrap();
    std::fs::create_dir(dir.path().join("d")).unwrap();
    let mut addresses = vec!["d#s1".to_owned()];
    if cfg!(feature = "sqlite") {
        addresses.push("sqlite:agents.db#s1".to_owned());
    }
    for address in &addresses {
        let run = agentmsg_in(dir.path(), &["import", "log.jsonl", "-o", address]);
        assert_eq!(run.code, 0, "{address}: {run:?}");
        assert!(run.stderr.contains("2 messages"), "{}", run.stderr);
        let context = agentmsg_in(dir.path(), &["context", address]);
        assert_eq!(context.code, 0, "{address}: {context:?}");
        assert_eq!(context.stdout.lines().count(), 2, "{}", context.stdout);
        assert!(context.stdout.contains("hello"));
        // A session is never imported over: it exists already.
        let again = agentmsg_in(dir.path(), &["import", "log.jsonl", "-o", address]);
        assert_eq!(again.code, 2, "{address}: {again:?}");
        assert!(again.stderr.contains("exists already"), "{}", again.stderr);
    }
    assert!(!dir.path().join("sqlite:agents.db#s1").exists());
    let run = agentmsg_in(dir.path(), &["import", "log.jsonl", "-o", "d#"]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn sessions_copy_is_idempotent_resumable_and_counts_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let source = JsonlDir::open(dir.path().join("src")).unwrap();
    runtime().block_on(fill(&source));
    let target = if cfg!(feature = "sqlite") {
        "sqlite:dst.db"
    } else {
        "dst"
    };
    let first = agentmsg_in(dir.path(), &["sessions", "copy", "src", target]);
    assert_eq!(first.code, 0, "{first:?}");
    assert!(
        first
            .stdout
            .contains("one: 3 entries copied, 0 there already, 3 in both stores"),
        "{}",
        first.stdout
    );
    // Again: nothing to copy.
    let again = agentmsg_in(dir.path(), &["sessions", "copy", "src", target]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(
        again
            .stdout
            .contains("one: 0 entries copied, 3 there already"),
        "{}",
        again.stdout
    );
    // The source grows (as a copy that stopped halfway sees it): only the
    // rest is appended.
    runtime().block_on(async {
        let more =
            StoredEntry::from_line(r#"{"role":"user","content":"more","id":"c","parentId":"n"}"#).0;
        source.append("one", &[more], Expect::Any).await.unwrap();
    });
    let resumed = agentmsg_in(dir.path(), &["sessions", "copy", "src", target]);
    assert_eq!(resumed.code, 0, "{resumed:?}");
    assert!(
        resumed
            .stdout
            .contains("one: 1 entries copied, 3 there already, 4 in both stores"),
        "{}",
        resumed.stdout
    );
    let listed = agentmsg_in(dir.path(), &["sessions", target, "--json"]);
    assert!(listed.stdout.contains("\"entries\":4"), "{}", listed.stdout);
    // A target whose session is another one is refused, and left alone.
    let other = JsonlDir::open(dir.path().join("other")).unwrap();
    runtime().block_on(async {
        other.create("one").await.unwrap();
        let line = StoredEntry::from_line(r#"{"role":"user","content":"not the same","id":"x"}"#).0;
        other.append("one", &[line], Expect::Empty).await.unwrap();
    });
    let refused = agentmsg_in(dir.path(), &["sessions", "copy", "src", "other"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("is not the source's"),
        "{}",
        refused.stderr
    );
    let kept = runtime().block_on(other.open("one")).unwrap();
    assert_eq!(kept.entries, 1);
}
