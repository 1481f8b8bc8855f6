//! The command holds the stores' boundary: reading a store address never
//! creates or changes a store, hides nothing the store found wrong, shows no
//! password and lets no terminal escape through; and `check` says what
//! `context` and `tree` would refuse.
#![cfg(unix)]

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::agentmsg_in;

fn write(dir: &std::path::Path, name: &str, text: &[u8]) {
    std::fs::write(dir.join(name), text).unwrap();
}

/// F12: a line that is not UTF-8 in a store's session is an error at its
/// own line, as for the file itself, and the lines after it keep theirs.
#[test]
fn check_through_a_store_reports_what_the_file_would() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("store")).unwrap();
    let text = b"{\"role\":\"user\",\"content\":\"a\",\"id\":\"a\"}\n\xff\xfe\n{\"role\":\"toolResult\",\"toolCallId\":\"c\",\"toolName\":\"x\",\"content\":[],\"isError\":false,\"timestamp\":1}\n";
    write(&dir.path().join("store"), "x.jsonl", text);
    let file = agentmsg_in(dir.path(), &["check", "store/x.jsonl"]);
    let store = agentmsg_in(dir.path(), &["check", "store#x"]);
    assert_eq!(file.code, 1, "{file:?}");
    assert_eq!(store.code, 1, "{store:?}");
    let codes = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.contains("error[") || l.contains("warning["))
            .filter_map(|l| {
                l.split_once(": ")
                    .map(|(at, rest)| (at.rsplit(':').next().unwrap_or("").to_owned(), rest))
            })
            .filter_map(|(line, rest)| {
                rest.split_once(':')
                    .map(|(code, _)| format!("{line} {code}"))
            })
            .collect()
    };
    assert!(
        store.stdout.contains("x:2: error[not-utf8]"),
        "{}",
        store.stdout
    );
    assert_eq!(codes(&file.stdout), codes(&store.stdout));
}

/// F12: an SQLite row whose id column disagrees with its line is reported.
#[test]
fn a_row_that_disagrees_with_its_line_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use agentmsg_runtime::store::{Expect, SessionStore, SqliteStore, StoredEntry};
        let store = SqliteStore::open(&db).await.unwrap();
        store.create("x").await.unwrap();
        let line = StoredEntry::from_line(r#"{"role":"user","content":"a","id":"a"}"#).0;
        store.append("x", &[line], Expect::Empty).await.unwrap();
    });
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE agentmsg_entries SET id = 'forged'", [])
        .unwrap();
    drop(conn);
    let run = agentmsg_in(dir.path(), &["check", "sqlite:s.db#x"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("error[store-row]"), "{}", run.stdout);
    assert!(run.stdout.contains("forged"), "{}", run.stdout);
}

/// F18: reading never makes a store of a file or another application's
/// database.
#[test]
fn reading_commands_change_no_database() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "e.db", b"");
    let run = agentmsg_in(dir.path(), &["sessions", "--store", "sqlite:e.db"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("not an agentmsg store"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(dir.path().join("e.db")).unwrap(), b"");

    let other = dir.path().join("other.db");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT)")
        .unwrap();
    drop(conn);
    for args in [
        &["check", "sqlite:other.db#x"][..],
        &["context", "sqlite:other.db#x"],
        &["sessions", "--store", "sqlite:other.db"],
    ] {
        let run = agentmsg_in(dir.path(), args);
        assert_ne!(run.code, 0, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("not an agentmsg store"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let conn = rusqlite::Connection::open(&other).unwrap();
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'agentmsg%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!((tables, mode.as_str()), (0, "delete"));
    // A directory that is not there is not made.
    let run = agentmsg_in(dir.path(), &["sessions", "--store", "nodir"]);
    assert_eq!(run.code, 2);
    assert!(!dir.path().join("nodir").exists());
}

/// F19: names, labels and message text reach the terminal escaped.
#[test]
fn terminal_escapes_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("store")).unwrap();
    let lines = concat!(
        r#"{"role":"user","content":"\u001b]0;owned\u0007 hi \u001b[2J","id":"a","timestamp":1}"#,
        "\n",
        r#"{"role":"session_info","name":"\u001b[2J\nforged  row","id":"n","parentId":"a"}"#,
        "\n",
    );
    write(&dir.path().join("store"), "s.jsonl", lines.as_bytes());
    for args in [
        &["sessions", "--store", "store"][..],
        &["tree", "store/s.jsonl"],
    ] {
        let run = agentmsg_in(dir.path(), args);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        assert!(!run.stdout.contains('\u{1b}'), "{args:?}: {:?}", run.stdout);
        assert!(!run.stdout.contains('\u{7}'), "{args:?}: {:?}", run.stdout);
        assert!(run.stdout.contains("\\u{1b}"), "{args:?}: {:?}", run.stdout);
    }
}

/// The adversarial run's finding: a transcript's kinds, tool names and
/// models reach the terminal escaped from every command that shows them, on
/// standard output and standard error alike (`stats` printed them raw, and
/// `context` its model).
#[test]
fn transcript_strings_reach_the_terminal_escaped_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    // A kind, a tool's name, a provider, a model and a thinking level, each
    // with a title-setting, screen-clearing or C1 sequence.
    let lines = concat!(
        r#"{"role":"user","content":"read a.rs","id":"u1","timestamp":1}"#,
        "\n",
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"\u001b]0;PWNED\u0007read","arguments":{}}],"api":"anthropic-messages","provider":"p\u009b2J","model":"\u001b[2Jclaude","stopReason":"toolUse","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"id":"a1","parentId":"u1","timestamp":2}"#,
        "\n",
        r#"{"role":"\u001b]0;PWNED\u0007\u001b[2J","data":1,"id":"k1","parentId":"a1","timestamp":3}"#,
        "\n",
        r#"{"role":"thinking_level_change","thinkingLevel":"\u001b[2Jhigh","id":"t1","parentId":"k1","timestamp":4}"#,
        "\n",
    );
    write(dir.path(), "s.jsonl", lines.as_bytes());
    let raw = ['\u{1b}', '\u{7}', '\u{9b}'];
    for args in [
        &["stats", "s.jsonl"][..],
        &["stats", "--json", "s.jsonl"],
        &["context", "s.jsonl"],
        &["check", "s.jsonl"],
        &["tree", "s.jsonl"],
        &["project", "--api", "anthropic", "--model", "m", "s.jsonl"],
        &["repair", "--dry-run", "s.jsonl"],
    ] {
        let run = agentmsg_in(dir.path(), args);
        // JSON on standard output escapes C0 itself (`\u001b`); C1 is
        // then a JSON string's character, not the terminal's.
        let json = args.contains(&"--json") || matches!(args[0], "context" | "project");
        for c in raw {
            assert!(!run.stderr.contains(c), "{args:?} {c:?}: {:?}", run.stderr);
            if !(json && c == '\u{9b}') {
                assert!(!run.stdout.contains(c), "{args:?} {c:?}: {:?}", run.stdout);
            }
        }
        let all = format!("{}{}", run.stdout, run.stderr);
        // (`repair` leaves a session tree's pairing, and so names nothing.)
        assert!(
            args[0] == "repair" || all.contains("\\u{1b}") || all.contains("\\u001b"),
            "{args:?} shows none of the strings: {all:?}"
        );
    }
    // What `stats` and `context` say of them, escaped.
    let stats = agentmsg_in(dir.path(), &["stats", "s.jsonl"]);
    for shown in [
        "\\u{1b}]0;PWNED\\u{7}read 1",
        "\\u{1b}]0;PWNED\\u{7}\\u{1b}[2J",
        "p\\u{9b}2J/\\u{1b}[2Jclaude",
    ] {
        assert!(stats.stdout.contains(shown), "{shown}: {}", stats.stdout);
    }
    let context = agentmsg_in(dir.path(), &["context", "s.jsonl"]);
    assert!(
        context.stderr.contains("model p\\u{9b}2J/\\u{1b}[2Jclaude"),
        "{}",
        context.stderr
    );
}

/// Runs `agentmsg ARGS` in `dir`, failing the test when it has not ended in
/// two minutes (a reader that never stops would hang it).
fn agentmsg_ends(dir: &std::path::Path, args: &[&str]) -> common::Run {
    let mut child = common::agentmsg_command(dir, args).spawn().unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("{args:?} did not end in two minutes");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap().into()
}

/// The adversarial run's finding: `check /dev/zero` grew without limit. A
/// line longer than the readers' limit (`lines::MAX_LINE`, 256 MiB) is an
/// error naming the line, from a device read whole and from a file read line
/// by line alike.
#[test]
fn a_line_past_the_limit_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // A file whose second line is 257 MiB of zero bytes (sparse: nothing is
    // written).
    let big = dir.path().join("big.jsonl");
    let head = b"{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n";
    std::fs::write(&big, head).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(head.len() as u64 + (257 << 20))
        .unwrap();
    for (args, line) in [
        (&["check", "/dev/zero"][..], 1),
        (&["stats", "/dev/zero"], 1),
        (&["check", "big.jsonl"], 2),
        (&["stats", "big.jsonl"], 2),
    ] {
        let run = agentmsg_ends(dir.path(), args);
        assert_ne!(run.code, 0, "{args:?}: {run:?}");
        assert!(
            run.stderr
                .contains(&format!("line {line}: longer than 268435456 bytes")),
            "{args:?}: {}",
            run.stderr
        );
    }
}

/// F5: a password in a store address is shown nowhere, through an argument
/// or `AGENTMSG_STORE`.
#[test]
fn store_passwords_are_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["context", "postgres://agent:hunter2@127.0.0.1:1/db#../x"][..],
        &["context", "postgres://agent:hun#ter2@127.0.0.1:1/db#s"],
        &["check", "postgres://agent:hunter2@127.0.0.1:1/db#s"],
        &[
            "sessions",
            "--store",
            "postgres://agent:hunter2@127.0.0.1:1/db#bad/id",
        ],
        &["tree", "postgres://127.0.0.1:1/db?password=hunter2#s"],
    ] {
        let run = agentmsg_in(dir.path(), args);
        assert_ne!(run.code, 0, "{args:?}");
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            !all.contains("hunter2") && !all.contains("ter2"),
            "{args:?}: {all}"
        );
    }
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_agentmsg"))
        .arg("sessions")
        .env(
            "AGENTMSG_STORE",
            "postgres://agent:hunter2@127.0.0.1:1/db#../x",
        )
        .current_dir(dir.path())
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(!all.contains("hunter2"), "{all}");
    assert!(all.contains("***"), "{all}");
}

/// F24, and a link in a store: a directory named with `#` lists, and what is
/// skipped is said.
#[test]
fn sessions_lists_a_hash_directory_and_says_what_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("my#store");
    std::fs::create_dir(&store).unwrap();
    write(
        &store,
        "a.jsonl",
        b"{\"role\":\"user\",\"content\":\"a\",\"id\":\"a\"}\n",
    );
    std::os::unix::fs::symlink("/etc/passwd", store.join("p.jsonl")).unwrap();
    let run = agentmsg_in(dir.path(), &["sessions", "--store", "my#store"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.lines().any(|l| l.starts_with("a ")),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("root"), "{}", run.stdout);
    assert!(run.stderr.contains("skipped `p`"), "{}", run.stderr);
    let run = agentmsg_in(dir.path(), &["context", "my#store#p"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(!run.stdout.contains("root"));
}

/// F26: repair in place through a directory store's address; a database's
/// session is said to be no file.
#[test]
fn repair_through_a_store_address() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("store")).unwrap();
    write(
        &dir.path().join("store"),
        "s.jsonl",
        br#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}],"stopReason":"toolUse","timestamp":1}
"#,
    );
    let run = agentmsg_in(dir.path(), &["repair", "store#s", "-o", "store#s"]);
    assert_eq!(run.code, 0, "{run:?}");
    let text = std::fs::read_to_string(dir.path().join("store/s.jsonl")).unwrap();
    assert!(text.contains("No result provided"), "{text}");
    assert_eq!(agentmsg_in(dir.path(), &["check", "store#s"]).code, 0);
    let run = agentmsg_in(dir.path(), &["repair", "sqlite:x.db#s", "-o", "out.jsonl"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("SQLite or PostgreSQL"),
        "{}",
        run.stderr
    );
}

/// F4: an import's output keeps its input's mode.
#[test]
fn import_output_keeps_the_input_mode() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pi.jsonl");
    std::fs::write(
        &input,
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o600)).unwrap();
    let run = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let mode = std::fs::metadata(dir.path().join("out.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // So does an exported page, which holds the same text.
    let run = agentmsg_in(
        dir.path(),
        &["export", "pi.jsonl", "--html", "-o", "page.html"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let mode = std::fs::metadata(dir.path().join("page.html"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Standard input gives a private file.
    let run = common::agentmsg_stdin(
        dir.path(),
        &["import", "-", "-o", "stdin.jsonl"],
        &std::fs::read(&input).unwrap(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let mode = std::fs::metadata(dir.path().join("stdin.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

/// F13, F14, F15, F25: check says what context and tree would refuse or drop.
#[test]
fn check_says_what_context_would_refuse_or_drop() {
    let dir = tempfile::tempdir().unwrap();
    let files: [(&str, &str, i32, &str); 5] = [
        (
            "dup.jsonl",
            "{\"role\":\"user\",\"content\":\"a\",\"id\":\"x\"}\n{\"role\":\"user\",\"content\":\"b\",\"id\":\"x\"}\n",
            1,
            "error[duplicate-id]",
        ),
        (
            "pibad.jsonl",
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":5}}\n",
            1,
            "error[undecodable]",
        ),
        (
            "picomp.jsonl",
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n{\"type\":\"compaction\",\"id\":\"c\",\"parentId\":\"a\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"summary\":\"s\",\"firstKeptEntryId\":\"nope\",\"tokensBefore\":5}\n",
            0,
            "warning[first-kept-missing]",
        ),
        (
            "picycle.jsonl",
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"id\":\"a\",\"parentId\":\"b\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n",
            1,
            "parentId cycle",
        ),
        (
            "cycle.jsonl",
            "{\"role\":\"user\",\"content\":\"a\",\"id\":\"a\",\"parentId\":\"b\"}\n{\"role\":\"user\",\"content\":\"b\",\"id\":\"b\",\"parentId\":\"a\"}\n",
            1,
            "parentId cycle",
        ),
    ];
    for (name, text, code, says) in files {
        write(dir.path(), name, text.as_bytes());
        let run = agentmsg_in(dir.path(), &["check", name]);
        assert_eq!(run.code, code, "{name}: {run:?}");
        assert!(run.stdout.contains(says), "{name}: {}", run.stdout);
    }
    let run = agentmsg_in(dir.path(), &["context", "pibad.jsonl"]);
    assert!(run.stderr.contains("error[undecodable]"), "{}", run.stderr);
    let run = agentmsg_in(dir.path(), &["context", "picomp.jsonl"]);
    assert!(run.stderr.contains("first-kept-missing"), "{}", run.stderr);
}
