//! `check`, `stats` and `repair` read a JSON Lines file one line at a time, and
//! standard input whole: both must say (and write) exactly the same of the same
//! bytes.

use crate::common;

use std::path::Path;

const USER: &str = r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}"#;
const CALL: &str = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"stopReason":"toolUse","timestamp":2}"#;
const RESULT: &str = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"data"}],"isError":false,"timestamp":3}"#;
const REPLY: &str = r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","usage":{"input":5,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}},"provider":"p","model":"m","api":"a","timestamp":4}"#;
/// A call whose line does not decode (its arguments are a string).
const KEPT_CALL: &str = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"ls","arguments":"oops"}],"stopReason":"toolUse","timestamp":5}"#;
const KEPT_RESULT: &str = r#"{"role":"toolResult","toolCallId":"c2","toolName":"ls","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":6}"#;
const NOTICE: &str = r#"{"role":"someoneElsesKind","text":"kept"}"#;

/// Runs `agentmsg ARGS` with `stdin` on standard input, in `dir`.
fn run(dir: &Path, args: &[&str], stdin: &[u8]) -> common::Run {
    common::agentmsg_stdin(dir, args, stdin)
}

/// The lines of `text` with the file's name (`name:` at a line's start, or a
/// `"file"` field) made `FILE`, sorted: the streamed read tells a foreign log
/// after its diagnostics, the whole read before them.
fn normalized(text: &str, name: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let l = l.replace(&format!("\"file\": \"{name}\""), "\"file\": \"FILE\"");
            match l.strip_prefix(name) {
                Some(rest) if rest.starts_with(':') => format!("FILE{rest}"),
                _ => l,
            }
        })
        .collect();
    lines.sort();
    lines
}

/// `check` and `stats` (text and JSON) give the same of `bytes` read from a
/// file (streamed) and from standard input (read whole).
fn same_streamed_and_whole(name: &str, bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.jsonl"), bytes).unwrap();
    for args in [
        &["check"][..],
        &["check", "--json"],
        &["check", "--quiet"],
        &["stats"],
        &["stats", "--json"],
    ] {
        let file = run(dir.path(), &[args, &["t.jsonl"]].concat(), b"");
        let stdin = run(dir.path(), &[args, &["-"]].concat(), bytes);
        assert_eq!(file.code, stdin.code, "{name}: {args:?}: exit codes");
        assert_eq!(
            normalized(&file.stdout, "t.jsonl"),
            normalized(&stdin.stdout, "-"),
            "{name}: {args:?}: stdout"
        );
        assert_eq!(
            normalized(&file.stderr, "t.jsonl"),
            normalized(&stdin.stderr, "-"),
            "{name}: {args:?}: stderr"
        );
    }
    // repair: the same copy, the same report.
    let file = run(
        dir.path(),
        &["repair", "t.jsonl", "-o", "from-file.jsonl"],
        b"",
    );
    let stdin = run(
        dir.path(),
        &["repair", "-", "-o", "from-stdin.jsonl"],
        bytes,
    );
    assert_eq!(file.code, stdin.code, "{name}: repair: exit codes");
    assert_eq!(
        normalized(&file.stdout.replace("from-file", "OUT"), "t.jsonl"),
        normalized(&stdin.stdout.replace("from-stdin", "OUT"), "-"),
        "{name}: repair: stdout"
    );
    if file.code == 0 {
        assert_eq!(
            std::fs::read(dir.path().join("from-file.jsonl")).unwrap(),
            std::fs::read(dir.path().join("from-stdin.jsonl")).unwrap(),
            "{name}: repair: the copies"
        );
    }
    let dry = run(dir.path(), &["repair", "t.jsonl", "--dry-run"], b"");
    let dry_stdin = run(dir.path(), &["repair", "-", "--dry-run"], bytes);
    assert_eq!(
        normalized(&dry.stdout, "t.jsonl"),
        normalized(&dry_stdin.stdout, "-"),
        "{name}: repair --dry-run"
    );
    // In place, under the file's lock: the same copy again.
    let in_place = run(dir.path(), &["repair", "t.jsonl", "-o", "t.jsonl"], b"");
    assert_eq!(in_place.code, file.code, "{name}: repair in place");
    if file.code == 0 {
        assert_eq!(
            std::fs::read(dir.path().join("t.jsonl")).unwrap(),
            std::fs::read(dir.path().join("from-file.jsonl")).unwrap(),
            "{name}: repair in place"
        );
    }
}

#[test]
fn a_streamed_file_reads_as_the_same_bytes_read_whole() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("blank lines only", b"\n \n\r\n".to_vec()),
        (
            "well formed",
            [USER, CALL, RESULT, REPLY].join("\n").into_bytes(),
        ),
        (
            "orphans and a misplaced result",
            [CALL, USER, RESULT, RESULT, REPLY, CALL].join("\n").into_bytes(),
        ),
        (
            "a kept call's result",
            [USER, KEPT_CALL, KEPT_RESULT, NOTICE, REPLY]
                .join("\n")
                .into_bytes(),
        ),
        (
            "BOM, CRLF, blank lines, trailing blanks",
            format!("\u{feff}{USER}\r\n\r\n{CALL}\r\n  \n{RESULT}\r\n\n\n").into_bytes(),
        ),
        (
            "a lost newline and a torn tail",
            format!("{USER}\n{CALL}{RESULT}\n{REPLY}\n{{\"role\":\"user\",\"con").into_bytes(),
        ),
        (
            "not UTF-8 and not JSON",
            [
                USER.as_bytes(),
                b"{\"role\":\"user\",\"content\":\"\xff\"}",
                b"not json",
                b"[1,2]",
                REPLY.as_bytes(),
            ]
            .join(&b'\n'),
        ),
        (
            "one pretty-printed message",
            serde_json::to_vec_pretty(&serde_json::from_str::<serde_json::Value>(REPLY).unwrap())
                .unwrap(),
        ),
        (
            "a broken first object over several lines",
            b"{\"role\":\n\"user\"\n{\"role\":\"user\",\"content\":\"x\"}\n".to_vec(),
        ),
        (
            "a pi session file",
            b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n".to_vec(),
        ),
    ];
    for (name, bytes) in cases {
        same_streamed_and_whole(name, &bytes);
    }
    for fixture in ["broken.jsonl", "orphaned.jsonl", "pi-v3.jsonl"] {
        let bytes = std::fs::read(common::fixtures().join(fixture)).unwrap();
        same_streamed_and_whole(fixture, &bytes);
    }
}

#[test]
fn a_real_session_streams_as_it_reads_whole() {
    let Some(dir) = common::conformance_or_skip(Some("transcripts/pi")) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let session = dir.join("transcripts/pi/before-compaction.jsonl");
    let out = work.path().join("imported.jsonl");
    let import = run(
        work.path(),
        &[
            "import",
            session.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(import.code, 0, "{}", import.stderr);
    same_streamed_and_whole("before-compaction, imported", &std::fs::read(&out).unwrap());
}

/// `import` of a pi session file converts it one line at a time; of standard
/// input, whole: the transcript, the diagnostics and the counts are the same.
#[test]
fn import_of_a_pi_file_streams_as_it_reads_whole() {
    let work = tempfile::tempdir().unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = vec![(
        "pi-v3.jsonl".to_owned(),
        std::fs::read(common::fixtures().join("pi-v3.jsonl")).unwrap(),
    )];
    // A v1 file whose compaction keeps from an index, with lines that are no
    // entry, invalid UTF-8, CRLF and a header that is not first.
    let mut odd = Vec::new();
    odd.extend_from_slice(b"{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"early\",\"timestamp\":1}}\r\n");
    odd.extend_from_slice(b"{\"type\":\"session\",\"id\":\"s9\",\"timestamp\":\"2025-01-01T00:00:00Z\",\"cwd\":\"/\"}\n");
    odd.extend_from_slice(b"not json at all\n\n");
    odd.extend_from_slice(b"{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\xe9\",\"timestamp\":2}}\n");
    odd.extend_from_slice(b"[1,2]\n");
    odd.extend_from_slice(b"{\"type\":\"compaction\",\"timestamp\":\"2025-01-01T00:00:02Z\",\"summary\":\"S\",\"firstKeptEntryIndex\":2,\"tokensBefore\":10}\n");
    odd.extend_from_slice(b"{\"type\":\"label\",\"id\":\"x\",\"id\":\"y\",\"label\":\"twice\"}");
    cases.push(("odd.jsonl".to_owned(), odd));
    if let Some(dir) = common::conformance_or_skip(Some("transcripts/pi")) {
        for entry in std::fs::read_dir(dir.join("transcripts/pi")).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            cases.push((name, std::fs::read(&path).unwrap()));
        }
    }
    for (name, bytes) in cases {
        std::fs::write(work.path().join(&name), &bytes).unwrap();
        let file = run(work.path(), &["import", &name], b"");
        let whole = run(work.path(), &["import", "-"], &bytes);
        assert_eq!(file.code, whole.code, "{name}: {file:?} {whole:?}");
        assert_eq!(file.stdout, whole.stdout, "{name}");
        assert_eq!(
            normalized(&file.stderr, &name),
            normalized(&whole.stderr, "-"),
            "{name}"
        );
        // And to a file (none for what is no pi session).
        let _ = std::fs::remove_file(work.path().join("out.jsonl"));
        let out = run(work.path(), &["import", &name, "-o", "out.jsonl"], b"");
        assert_eq!(out.code, file.code, "{name}");
        let written = std::fs::read_to_string(work.path().join("out.jsonl")).unwrap_or_default();
        assert_eq!(written, file.stdout, "{name}");
    }
}
