//! Writers in separate OS processes: this test binary runs itself as the
//! child (the ignored test `child`, told what to do by environment
//! variables).
//!
//! - Two processes appending to one JsonlDir (and SQLite, and PostgreSQL)
//!   session: every entry once, one parent chain, no torn line.
//! - A writer killed (SIGKILL) in the middle of appending large entries: on
//!   reopening, every append it was told had succeeded is there, at most the
//!   one it was writing is lost, a torn line is reported and kept aside, and
//!   the session goes on as one chain.

mod store_fixture;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use agentmsg::store::{AnyStore, Cursor, SessionStore, StoreAddress, StoredEntry};
use store_fixture::{append_child, assert_chain};

const CHILD_ADDRESS: &str = "AGENTMSG_STORE_CHILD_ADDRESS";
const CHILD_WRITER: &str = "AGENTMSG_STORE_CHILD_WRITER";
const CHILD_COUNT: &str = "AGENTMSG_STORE_CHILD_COUNT";
const CHILD_BIG: &str = "AGENTMSG_STORE_CHILD_BIG";

fn line(id: &str, parent: Option<&str>, padding: usize) -> StoredEntry {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    StoredEntry::from_line(format!(
        r#"{{"role":"notice","text":"{}","id":"{id}","parentId":{parent}}}"#,
        "y".repeat(padding)
    ))
    .0
}

async fn open(address: &str) -> (AnyStore, String) {
    let address: StoreAddress = address.parse().unwrap();
    let store = AnyStore::open(&address.backend).await.unwrap();
    (store, address.session.unwrap())
}

/// The child process: appends `CHILD_COUNT` entries as children of the leaf
/// (retrying on conflicts), printing `ack ID` after each append returns.
#[tokio::test]
#[ignore = "run as a child process by the other tests of this file"]
async fn child() {
    let Ok(address) = std::env::var(CHILD_ADDRESS) else {
        panic!("run by the other tests of this file, with {CHILD_ADDRESS} set");
    };
    let writer = std::env::var(CHILD_WRITER).unwrap();
    let count: usize = std::env::var(CHILD_COUNT).unwrap().parse().unwrap();
    let padding = if std::env::var_os(CHILD_BIG).is_some() {
        1 << 20
    } else {
        32
    };
    let (store, session) = open(&address).await;
    let mut leaf = store.open(&session).await.unwrap().leaf;
    for i in 0..count {
        let id = format!("{writer}-{i}");
        append_child(&store, &session, &mut leaf, |p| line(&id, p, padding)).await;
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "ack {id}").unwrap();
        out.flush().unwrap();
    }
}

/// The id a line of the child's output acknowledges (libtest may print
/// `test child ... ` before the first one).
fn ack(line: &str) -> Option<&str> {
    line.find("ack ").map(|at| &line[at + 4..])
}

fn spawn_child(address: &str, writer: &str, count: usize, big: bool) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "child",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ADDRESS, address)
        .env(CHILD_WRITER, writer)
        .env(CHILD_COUNT, count.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if big {
        command.env(CHILD_BIG, "1");
    }
    command.spawn().unwrap()
}

async fn two_processes(address: String) {
    const N: usize = 1000;
    let (store, session) = open(&address).await;
    store.create(&session).await.unwrap();
    let children: Vec<_> = ["p1", "p2"]
        .iter()
        .map(|w| spawn_child(&address, w, N, false))
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "a child writer failed");
        let acks = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(ack)
            .count();
        assert_eq!(acks, N);
    }
    let loaded = store.load(&session, Cursor::START).await.unwrap();
    assert!(loaded.problems.is_empty() && loaded.torn.is_empty());
    let ids: HashSet<String> = assert_chain(&session, &loaded.entries)
        .into_iter()
        .collect();
    assert_eq!(ids.len(), 2 * N);
    assert_eq!(loaded.entries.len(), 2 * N);
}

#[tokio::test]
async fn jsonl_dir_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    two_processes(format!("{}#shared", dir.path().display())).await;
    let text = std::fs::read(dir.path().join("shared.jsonl")).unwrap();
    assert!(text.ends_with(b"\n"));
    let read = agentmsg::transcript::read_transcript(text.as_slice()).unwrap();
    assert!(read.torn.is_none());
    assert_eq!(read.messages.len(), 2000);
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    two_processes(format!(
        "sqlite:{}#shared",
        dir.path().join("s.db").display()
    ))
    .await;
}

/// PostgreSQL: two processes append to one session; the row lock keeps one
/// chain.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_two_processes() {
    let Some(f) = store_fixture::postgres("postgres_two_processes").await else {
        return;
    };
    let store_fixture::Reopen::Postgres { url, schema } = &f.reopen else {
        unreachable!()
    };
    // The children find the fixture's tables through the connection's
    // search_path, set in the URL.
    let separator = if url.contains('?') { '&' } else { '?' };
    two_processes(format!(
        "{url}{separator}options=-c%20search_path%3D{schema}#shared"
    ))
    .await;
}

/// Kills a child writer after it acknowledged `acked` appends of 1 MiB entries
/// (so it is likely in the middle of the next one), several times, and checks
/// what survives each time. Returns how many torn lines were reported.
async fn crash(address: String, rounds: usize) -> usize {
    let (store, session) = open(&address).await;
    store.create(&session).await.unwrap();
    let mut acked: Vec<String> = Vec::new();
    let mut torn_seen = 0;
    for round in 0..rounds {
        let mut child = spawn_child(&address, &format!("c{round}"), 1000, true);
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let mut this_round = 0;
        while this_round < 5 + round {
            let line = lines.next().expect("the child ended early").unwrap();
            if let Some(id) = ack(&line) {
                acked.push(id.to_owned());
                this_round += 1;
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // What it printed before the kill but after the last line read was
        // acknowledged too.
        for line in lines.map_while(Result::ok) {
            if let Some(id) = ack(&line) {
                acked.push(id.to_owned());
            }
        }

        // A fresh handle, as a restarted process would open it.
        let (store, _) = open(&address).await;
        let loaded = store.load(&session, Cursor::START).await.unwrap();
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let ids = assert_chain(&session, &loaded.entries);
        let present: HashSet<&String> = ids.iter().collect();
        for id in &acked {
            assert!(
                present.contains(id),
                "round {round}: acknowledged {id} was lost"
            );
        }
        assert!(
            ids.len() <= acked.len() + 1,
            "round {round}: {} entries, {} acknowledged",
            ids.len(),
            acked.len()
        );
        torn_seen = loaded.torn.len();
        // The entry being written, if it landed whole, counts from now on.
        acked = ids;
    }
    // The session goes on: a new append is a child of the last entry.
    let (store, _) = open(&address).await;
    let mut leaf = store.open(&session).await.unwrap().leaf;
    append_child(&store, &session, &mut leaf, |p| line("after", p, 8)).await;
    let loaded = store.load(&session, Cursor::START).await.unwrap();
    assert_chain(&session, &loaded.entries);
    assert_eq!(loaded.entries.last().unwrap().id(), Some("after"));
    torn_seen
}

#[tokio::test]
async fn jsonl_dir_crash() {
    let dir = tempfile::tempdir().unwrap();
    let torn = crash(format!("{}#crash", dir.path().display()), 4).await;
    eprintln!("torn lines kept aside after 4 kills: {torn}");
    // The session file is a clean transcript; torn lines are beside it.
    let text = std::fs::read(dir.path().join("crash.jsonl")).unwrap();
    let read = agentmsg::transcript::read_transcript(text.as_slice()).unwrap();
    assert!(read.torn.is_none());
    if let Ok(kept) = std::fs::read(dir.path().join("crash.jsonl.torn")) {
        for piece in kept.split(|b| *b == b'\n').filter(|p| !p.is_empty()) {
            assert!(agentmsg::transcript::is_torn_line(piece));
        }
    }
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_crash() {
    let dir = tempfile::tempdir().unwrap();
    let torn = crash(
        format!("sqlite:{}#crash", dir.path().join("c.db").display()),
        4,
    )
    .await;
    assert_eq!(
        torn, 0,
        "SQLite has no torn lines: a transaction is whole or absent"
    );
}
