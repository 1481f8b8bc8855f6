//! A writer killed mid-append: whatever was cut, the next append starts a line
//! of its own, nothing written before the cut is lost, and the reader accepts
//! the file. The writer is this test binary itself, run as a child process.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agentmsg::transcript::read_transcript;
use agentmsg::{AgentMessage, JsonlWriter, Message};

/// Set in the child: the file to append to.
const CHILD_ENV: &str = "AGENTMSG_CRASH_CHILD_FILE";

/// Each line the child writes is big, so that a kill often lands inside one.
fn payload(round: usize, n: usize) -> String {
    format!("round {round} line {n} {}", "x".repeat(256 * 1024))
}

/// Not a test of its own: the child's body. It appends until it is killed.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let round: usize = std::env::var("AGENTMSG_CRASH_ROUND")
        .unwrap()
        .parse()
        .unwrap();
    let mut writer = JsonlWriter::append(&path).unwrap();
    for n in 0.. {
        writer
            .write(&AgentMessage::from(Message::user(payload(round, n))))
            .unwrap();
        writer.flush().unwrap();
    }
}

fn spawn_child(path: &Path, round: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, path)
        .env("AGENTMSG_CRASH_ROUND", round.to_string())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// The `(round, n)` of a line the child wrote.
fn numbers(text: &str) -> Option<(usize, usize)> {
    let rest = text.strip_prefix("round ")?;
    let (round, rest) = rest.split_once(" line ")?;
    let (n, _) = rest.split_once(' ')?;
    Some((round.parse().ok()?, n.parse().ok()?))
}

#[test]
fn a_writer_killed_mid_append_loses_nothing_before_the_cut() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let mut torn_seen = 0;
    const ROUNDS: usize = 6;
    for round in 0..ROUNDS {
        let before = std::fs::metadata(&path).map_or(0, |m| m.len());
        let mut child = spawn_child(&path, round);
        // Let it write a few lines (or give up waiting after a while), then kill
        // it wherever it is.
        let start = Instant::now();
        let wait = 1_000_000 + 250_000 * (round as u64 % 3);
        while std::fs::metadata(&path).map_or(0, |m| m.len()) < before + wait
            && start.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // The next writer appends after whatever was cut.
        let mut writer = JsonlWriter::append(&path).unwrap();
        writer
            .write(&AgentMessage::from(Message::user(format!(
                "after round {round}"
            ))))
            .unwrap();
        writer.flush().unwrap();
        torn_seen += writer.get_ref().ended_torn_tails().len();
    }
    let bytes = std::fs::read(&path).unwrap();
    let read = read_transcript(&bytes[..]).unwrap();
    assert!(read.torn.is_none());
    // Every round: the child's lines 0..k in order, complete, then at most one
    // fragment, then the next writer's line.
    let mut rounds = vec![Vec::new(); ROUNDS];
    let mut afters = Vec::new();
    let mut fragments = 0;
    for message in &read.messages {
        match message {
            AgentMessage::Unknown(kept) => {
                fragments += 1;
                assert!(
                    kept.raw().starts_with("{\"role\":\"user\""),
                    "a fragment of a child's line"
                );
            }
            AgentMessage::Llm(llm) => {
                let text = llm.message.as_user().unwrap().text();
                if let Some(round) = text.strip_prefix("after round ") {
                    afters.push(round.parse::<usize>().unwrap());
                } else {
                    let (round, n) = numbers(&text).unwrap();
                    assert_eq!(text, payload(round, n), "a whole line, not a part");
                    rounds[round].push(n);
                }
            }
            AgentMessage::Custom(_) => unreachable!(),
        }
    }
    assert_eq!(afters, (0..ROUNDS).collect::<Vec<_>>());
    for (round, lines) in rounds.iter().enumerate() {
        assert_eq!(
            *lines,
            (0..lines.len()).collect::<Vec<_>>(),
            "round {round}"
        );
    }
    assert_eq!(
        fragments, torn_seen,
        "each torn tail was ended and reported"
    );
    eprintln!(
        "crash test: {ROUNDS} kills, {} whole lines, {fragments} torn by the kill and kept",
        rounds.iter().map(Vec::len).sum::<usize>()
    );
}
