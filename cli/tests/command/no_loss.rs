//! Nothing is lost: the reproducers of data loss found by an adversarial run,
//! replayed through the command. Each keeps every good line and the safety
//! properties (no link followed, the mode kept, no concurrent append lost).

use crate::common;

use std::io::Read;
use std::path::Path;

use agentmsg_runtime::transcript::read_transcript;
use agentmsg_runtime::{AgentMessage, JsonlWriter, Message};
use common::{agentmsg_in, agentmsg_stdin};

const USER: &str = r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}"#;
const CALL: &str = r#"{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"stopReason":"toolUse","timestamp":2}"#;
const RESULT: &str = r#"{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"data"}],"isError":false,"timestamp":3}"#;
const REPLY: &str = r#"{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","timestamp":4}"#;

/// Writes `bytes` to `name` in a new directory, runs `repair NAME -o NAME` there,
/// and gives back the run and the file's bytes after it.
fn repair_in_place(bytes: &[u8]) -> (common::Run, Vec<u8>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, bytes).unwrap();
    let run = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "t.jsonl"]);
    let after = std::fs::read(&path).unwrap();
    (run, after, dir)
}

/// The non-blank lines of `bytes`, as text.
fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_first_line_that_is_an_array_does_not_empty_the_file() {
    let input = format!("[1]\n{USER}\n{REPLY}\n");
    let (run, after, _dir) = repair_in_place(input.as_bytes());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(after, input.as_bytes(), "{run:?}");
    assert!(run.stdout.contains("0 changes"), "{run:?}");
    // The library reads it too, keeping the first line.
    let read = read_transcript(input.as_bytes()).unwrap();
    assert_eq!(read.messages.len(), 3);
    assert_eq!(read.messages[0].as_unknown().unwrap().raw(), "[1]");
}

#[test]
fn an_array_cut_mid_write_keeps_every_byte() {
    let input = format!("[\n{USER},\n{REPLY},\n{{\"role\":\"us");
    let (run, after, _dir) = repair_in_place(input.as_bytes());
    assert_eq!(run.code, 0, "{run:?}");
    // The bytes no line holds (the opening bracket, the cut object) are
    // kept whole in `agentmsg.fragment` lines; the messages stay as they are.
    assert_eq!(fragments(&after), ["[", "{\"role\":\"us"], "{run:?}");
    let text = String::from_utf8(after.clone()).unwrap();
    assert!(text.contains(USER) && text.contains(REPLY), "{text}");
    // Whatever the format, reading the repaired copy never fails.
    assert!(read_transcript(&after[..]).is_ok());
}

/// The text each `agentmsg.fragment` line of `bytes` keeps, in order.
fn fragments(bytes: &[u8]) -> Vec<String> {
    lines(bytes)
        .iter()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|v| v["kind"] == "agentmsg.fragment")
        .map(|v| v["data"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_result_is_kept_when_its_call_line_does_not_decode() {
    // `arguments` as a string; a block type from a newer writer.
    let string_arguments = CALL.replace(r#"{"path":"a"}"#, r#""{\"path\":\"a\"}""#);
    let newer_block = CALL.replace(
        r#"[{"type":"toolCall""#,
        r#"[{"type":"hologram","x":1},{"type":"toolCall""#,
    );
    for call in [string_arguments, newer_block] {
        assert!(
            AgentMessage::from_line(&call).unwrap().is_unknown(),
            "{call}"
        );
        let input = format!("{USER}\n{call}\n{RESULT}\n{REPLY}\n");
        let (run, after, _dir) = repair_in_place(input.as_bytes());
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(after, input.as_bytes(), "{run:?}");
        assert!(!run.stdout.contains("dropped"), "{run:?}");
        // check agrees: the result has its call; only the kept line is wrong.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.jsonl"), &input).unwrap();
        let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
        assert!(!check.stdout.contains("result-without-call"), "{check:?}");
        assert!(check.stdout.contains("t.jsonl:2: "), "{check:?}");
    }
    // A kept result line still answers its call: no synthetic second result.
    let kept_result = RESULT.replace(r#""isError":false"#, r#""isError":"no""#);
    let input = format!("{USER}\n{CALL}\n{kept_result}\n{REPLY}\n");
    let (run, after, _dir) = repair_in_place(input.as_bytes());
    assert_eq!(after, input.as_bytes(), "{run:?}");
    // And a decoded second result is not dropped because of a kept first one.
    let input = format!("{USER}\n{CALL}\n{kept_result}\n{RESULT}\n{REPLY}\n");
    let (run, after, _dir) = repair_in_place(input.as_bytes());
    assert_eq!(after, input.as_bytes(), "{run:?}");
    // A result that answers nothing, even counting the kept lines, still goes.
    let stray = RESULT.replace("\"c1\"", "\"c9\"");
    let input = format!("{USER}\n{CALL}\n{RESULT}\n{stray}\n{REPLY}\n");
    let (run, after, _dir) = repair_in_place(input.as_bytes());
    assert_eq!(lines(&after), [USER, CALL, RESULT, REPLY], "{run:?}");
}

#[cfg(unix)]
#[test]
fn in_place_repair_follows_no_planted_link_and_keeps_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let input = format!("{USER}\n{CALL}\n");
    std::fs::write(&path, &input).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A link planted at the old fixed temporary name, pointing at a victim.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("t.jsonl.agentmsg-tmp")).unwrap();
    let run = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "t.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert!(meta.file_type().is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&input) && after.contains("No result provided"));
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");

    // A transcript reached through a link stays a link; its target is repaired.
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    std::fs::write(&path, &input).unwrap();
    let run = agentmsg_in(dir.path(), &["repair", "link.jsonl", "-o", "link.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("No result provided"));

    // The owner is kept too, where the repairing process may set it (root).
    {
        use std::os::unix::fs::MetadataExt;
        let root = std::fs::metadata(&path).unwrap().uid() == 0;
        if root && std::os::unix::fs::chown(&path, Some(4321), Some(4321)).is_ok() {
            std::fs::write(&path, &input).unwrap();
            let run = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "t.jsonl"]);
            assert_eq!(run.code, 0, "{run:?}");
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (4321, 4321));
        }
    }
    // A new output gets the input's mode.
    let run = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "new.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let mode = std::fs::metadata(dir.path().join("new.jsonl"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn in_place_repair_loses_no_concurrent_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, format!("{USER}\n{CALL}\n")).unwrap();
    const APPENDS: usize = 3000;
    let appender = {
        let path = path.clone();
        std::thread::spawn(move || {
            let mut writer = JsonlWriter::append(&path).unwrap();
            for i in 0..APPENDS {
                let message = AgentMessage::from(Message::user(format!("append {i}")));
                writer.write(&message).unwrap();
                writer.flush().unwrap();
            }
        })
    };
    let mut repairs = 0;
    while !appender.is_finished() || repairs < 3 {
        let run = agentmsg_in(dir.path(), &["repair", "t.jsonl", "-o", "t.jsonl"]);
        assert_eq!(run.code, 0, "{run:?}");
        repairs += 1;
    }
    appender.join().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let appended: Vec<&str> = text.lines().filter(|l| l.contains("append ")).collect();
    assert_eq!(appended.len(), APPENDS, "after {repairs} repairs");
    for (i, line) in appended.iter().enumerate() {
        assert!(line.contains(&format!("\"append {i}\"")), "{line}");
    }
    assert_eq!(text.matches("No result provided").count(), 1);
}

#[test]
fn blank_lines_crlf_and_a_bom_survive_repair() {
    let input = format!("\u{feff}{USER}\r\n\n   \n{CALL}\n{RESULT}\n\n{REPLY}\n\n");
    let (run, after, _dir) = repair_in_place(input.as_bytes());
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(String::from_utf8(after).unwrap(), input);
}

#[test]
fn a_torn_tail_then_an_append_leaves_a_readable_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let torn = &REPLY[..40];
    std::fs::write(&path, format!("{USER}\n{torn}")).unwrap();
    let mut writer = JsonlWriter::append(&path).unwrap();
    writer.write(&Message::user("after").into()).unwrap();
    writer.flush().unwrap();
    assert_eq!(
        writer.get_ref().ended_torn_tails(),
        [(USER.len() + 1 + torn.len()) as u64]
    );
    drop(writer);
    let bytes = std::fs::read(&path).unwrap();
    let read = read_transcript(&bytes[..]).unwrap();
    assert_eq!(read.messages.len(), 3);
    assert_eq!(read.messages[1].as_unknown().unwrap().raw(), torn);
    assert!(read.torn.is_none());
    // check names the fragment; repair keeps it and the copy reads back.
    let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(
        check.stdout.contains("t.jsonl:2: error[undecodable]"),
        "{check:?}"
    );
    // repair keeps the fragment whole in a line check accepts, and names it.
    let (run, after, dir2) = repair_in_place(&bytes);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("t.jsonl:2:"), "{run:?}");
    assert_eq!(fragments(&after), [torn]);
    let (was, now) = (lines(&bytes), lines(&after));
    assert_eq!((&now[0], &now[2]), (&was[0], &was[2]));
    assert_eq!(read_transcript(&after[..]).unwrap().messages.len(), 3);
    let check = agentmsg_in(dir2.path(), &["check", "t.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn a_write_cut_inside_a_character_is_a_torn_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{USER}\n{{\"role\":\"user\",\"content\":\"caf\u{e9}\"}}\n");
    // Cut between the two bytes of `é`.
    let cut = text.find('\u{e9}').unwrap() + 1;
    std::fs::write(dir.path().join("t.jsonl"), &text.as_bytes()[..cut]).unwrap();
    let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert!(
        check.stdout.contains("t.jsonl:2: error[torn-line]"),
        "{check:?}"
    );
    assert!(!check.stdout.contains("not-utf8"), "{check:?}");
    let read = read_transcript(&text.as_bytes()[..cut]).unwrap();
    assert_eq!(read.messages.len(), 1);
    assert_eq!(
        read.torn.unwrap().raw,
        &text.as_bytes()[USER.len() + 1..cut]
    );
}

#[test]
fn a_lone_surrogate_role_is_not_called_a_non_string() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"role\":\"\\ud800\",\"x\":1}\n{\"x\":1,\"role\":\"\\udc00x\"}\n",
    )
    .unwrap();
    let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(!check.stdout.contains("not a string"), "{check:?}");
    assert_eq!(
        check.stdout.matches("\"role\" is not valid text").count(),
        2,
        "{check:?}"
    );
}

/// Runs `agentmsg ARGS` in `dir`, reads `keep` bytes of its output, then closes
/// the pipe; gives the exit code and standard error.
fn run_into_closed_pipe(dir: &Path, args: &[&str], keep: usize) -> (i32, String) {
    let mut child = common::agentmsg_command(dir, args).spawn().unwrap();
    // Standard error is drained on its own, so a command that reports much
    // there first cannot block.
    let mut stderr = child.stderr.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0; keep];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    let status = child.wait().unwrap();
    (
        status.code().expect("exited, not killed"),
        drain.join().unwrap(),
    )
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_right_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    // Far more report than a pipe holds, so writes meet the closed pipe.
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!("not json {i}\n"));
    }
    std::fs::write(dir.path().join("bad.jsonl"), &text).unwrap();
    let mut good = String::new();
    for _ in 0..10_000 {
        good.push_str(USER);
        good.push('\n');
        good.push_str(REPLY);
        good.push('\n');
    }
    std::fs::write(dir.path().join("good.jsonl"), &good).unwrap();
    for args in [
        &["check", "bad.jsonl"][..],
        &["check", "--json", "bad.jsonl"],
    ] {
        let (code, stderr) = run_into_closed_pipe(dir.path(), args, 10);
        assert_eq!(code, 1, "{args:?}: errors were found: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    let (code, stderr) = run_into_closed_pipe(
        dir.path(),
        &[
            "project",
            "good.jsonl",
            "--api",
            "anthropic-messages",
            "--model",
            "m",
        ],
        10,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    let (code, stderr) = run_into_closed_pipe(dir.path(), &["schema"], 10);
    assert_eq!((code, stderr.as_str()), (0, ""));
}

#[test]
fn invalid_base64_media_is_found_and_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","data":"not base64!","mimeType":"image/png"},{"type":"audio","data":"AAA","mimeType":"audio/wav"},{"type":"document","data":"JVBERi0=","mimeType":"application/pdf"}],"timestamp":1}"#;
    std::fs::write(dir.path().join("t.jsonl"), format!("{line}\n")).unwrap();
    let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert_eq!(
        check.stdout.matches("error[invalid-media]").count(),
        2,
        "{check:?}"
    );
    for api in [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ] {
        let run = agentmsg_in(
            dir.path(),
            &["project", "t.jsonl", "--api", api, "--model", "m"],
        );
        assert_eq!(run.code, 0, "{api}: {run:?}");
        assert!(!run.stdout.contains("not base64!"), "{api}: {}", run.stdout);
        assert!(!run.stdout.contains("\"AAA\""), "{api}: {}", run.stdout);
        assert!(
            run.stdout.contains("JVBERi0="),
            "{api}: the valid PDF is sent"
        );
        assert_eq!(
            run.stderr.matches("invalid media: replaced").count(),
            2,
            "{api}: {}",
            run.stderr
        );
    }
}

#[test]
fn a_cost_too_large_to_add_saturates() {
    let dir = tempfile::tempdir().unwrap();
    let reply = r#"{"role":"assistant","content":[{"type":"text","text":"x"}],"stopReason":"stop","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":1e308,"output":0,"cacheRead":0,"cacheWrite":0,"total":1e308}},"timestamp":1}"#;
    std::fs::write(dir.path().join("t.jsonl"), format!("{reply}\n{reply}\n")).unwrap();
    let text = agentmsg_in(dir.path(), &["stats", "t.jsonl"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(!text.stdout.contains("inf"), "{}", text.stdout);
    let json = agentmsg_in(dir.path(), &["stats", "--json", "t.jsonl"]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let total = value.pointer("/cost/total").unwrap();
    assert_eq!(total.as_f64(), Some(f64::MAX), "{}", json.stdout);
}

#[test]
fn undecodable_lines_of_every_kind_are_kept_by_the_reader() {
    // Not UTF-8, not an object, no role, a non-string role, a duplicate id, and
    // a BOM on line 1: each kept with its reason, and reading goes on.
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(USER.as_bytes());
    bytes.extend_from_slice(
        b"\n{\"role\":\"user\",\"content\":\"\xff\"}\n[1,2]\n{\"content\":\"x\"}\n{\"role\":7}\n",
    );
    bytes.extend_from_slice(b"{\"role\":\"user\",\"content\":\"a\",\"id\":\"1\",\"id\":\"2\"}\n");
    bytes.extend_from_slice(REPLY.as_bytes());
    bytes.push(b'\n');
    let read = read_transcript(&bytes[..]).unwrap();
    assert_eq!(read.messages.len(), 7);
    assert!(read.messages[0].is_llm(), "the BOM is not part of line 1");
    assert!(read.messages[6].is_llm());
    for kept in &read.messages[1..6] {
        assert!(kept.is_unknown(), "{kept:?}");
    }
    let mut out = Vec::new();
    let written =
        agentmsg_runtime::transcript::write_jsonl(&mut out, &read.messages[1..6]).unwrap();
    let start = 3 + USER.len() + 1;
    let end = bytes.len() - REPLY.len() - 1;
    assert_eq!(written.as_slice(), &bytes[start..end]);
    // Strict mode names the line.
    let strict = agentmsg_runtime::JsonlReader::new(&bytes[..])
        .strict()
        .read_all()
        .unwrap_err();
    assert!(strict.to_string().starts_with("line 2:"), "{strict}");
}

#[test]
fn stdin_can_be_repaired_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = agentmsg_stdin(
        dir.path(),
        &["repair", "-", "-o", "out.jsonl"],
        format!("{USER}\n{CALL}\n").as_bytes(),
    );
    assert_eq!(run.code, 0, "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(out.lines().count(), 3);
}

#[test]
fn a_line_that_lost_its_newline_gives_back_every_entry() {
    // A fragment a crash cut off, then a whole line written without the
    // newline an appending writer would have added; and two whole lines.
    let torn = &REPLY[..40];
    let input = format!("{USER}\n{torn}{CALL}\n{RESULT}{REPLY}\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.jsonl"), &input).unwrap();
    let check = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert!(
        check.stdout.contains("t.jsonl:2: warning[lost-newline]"),
        "{check:?}"
    );
    assert!(
        check.stdout.contains("t.jsonl:3: warning[lost-newline]"),
        "{check:?}"
    );
    assert!(!check.stdout.contains("missing-result"), "{check:?}");
    let (run, after, repaired) = repair_in_place(input.as_bytes());
    assert_eq!(run.code, 0, "{run:?}");
    // The fragment is kept in a line `check` accepts: clean after repair.
    let again = agentmsg_in(repaired.path(), &["check", "t.jsonl"]);
    assert!(!again.stdout.contains("error["), "{again:?}");
    let kept = format!(
        r#"{{"role":"extension","kind":"agentmsg.fragment","data":{}}}"#,
        serde_json::Value::from(torn)
    );
    assert_eq!(
        lines(&after),
        [USER, kept.as_str(), CALL, RESULT, REPLY],
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("t.jsonl:2: split the line into the 2 entries"),
        "{run:?}"
    );
    // Repairing again changes nothing.
    let (again, twice, _dir) = repair_in_place(&after);
    assert_eq!(twice, after, "{again:?}");
}
