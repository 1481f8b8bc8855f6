//! `agentmsg import`, `context` and `tree` on Claude Code logs and Codex
//! rollouts (written in the layouts those tools write; no real logs of theirs
//! are in the conformance data yet), and on input that is neither.

use crate::common;

use std::collections::BTreeSet;

use agentmsg_runtime::{to_llm, AgentMessage, Message, Session};
use common::{agentmsg_in, agentmsg_stdin};

/// The ids of the tool calls and of the results of a transcript.
fn calls_and_results(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut calls = BTreeSet::new();
    let mut results = BTreeSet::new();
    for line in text.lines() {
        match AgentMessage::from_line(line).unwrap().as_llm() {
            Some(Message::Assistant(a)) => calls.extend(a.tool_calls().map(|c| c.id.clone())),
            Some(Message::ToolResult(r)) => {
                results.insert(r.tool_call_id.clone());
            }
            _ => {}
        }
    }
    (calls, results)
}

const CLAUDE: &[&str] = &[
    r#"{"type":"summary","summary":"Read a file","leafUuid":"u5"}"#,
    r#"{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/p","sessionId":"s1","version":"2.0.61","type":"user","message":{"role":"user","content":"read a.rs"},"uuid":"u1","timestamp":"2025-06-01T10:00:00.000Z"}"#,
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s1","type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"I should read it.","signature":"EqQBsig"}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}},"requestId":"r1","uuid":"u2","timestamp":"2025-06-01T10:00:01.000Z"}"#,
    r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s1","type":"assistant","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"a.rs"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}},"requestId":"r1","uuid":"u3","timestamp":"2025-06-01T10:00:02.000Z"}"#,
    r#"{"type":"file-history-snapshot","messageId":"u3","snapshot":{}}"#,
    r#"{"parentUuid":"u3","isSidechain":false,"sessionId":"s1","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"fn main() {}"}]},"toolUseResult":{"type":"text"},"uuid":"u4","timestamp":"2025-06-01T10:00:03.000Z"}"#,
    r#"{"parentUuid":null,"isSidechain":true,"sessionId":"s1","type":"user","message":{"role":"user","content":"subagent task"},"uuid":"x1","timestamp":"2025-06-01T10:00:03.500Z"}"#,
    r#"{"parentUuid":"u4","isSidechain":false,"sessionId":"s1","type":"assistant","message":{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"It is an empty main."}],"stop_reason":"end_turn","usage":{"input_tokens":30,"output_tokens":8}},"uuid":"u5","timestamp":"2025-06-01T10:00:04.000Z"}"#,
];

#[test]
fn a_claude_code_log_imports_as_a_tree_with_every_call_and_result() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "claude.jsonl", CLAUDE);
    let run = agentmsg_in(dir.path(), &["import", "claude.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let (calls, results) = calls_and_results(&run.stdout);
    assert_eq!(calls, BTreeSet::from(["toolu_01".to_owned()]));
    assert_eq!(calls, results);

    let session = Session::read(run.stdout.as_bytes()).unwrap();
    // The two entries of response msg_01 are one message, with its signature.
    let merged = session.entry("u3").unwrap().message().unwrap();
    let assistant = merged.as_llm().unwrap().as_assistant().unwrap();
    assert_eq!(assistant.content.len(), 2);
    assert_eq!(
        assistant.thinking().next().unwrap().signature.as_deref(),
        Some("EqQBsig")
    );
    assert_eq!(assistant.response_id.as_deref(), Some("msg_01"));
    // The result names the tool from its call.
    let context = session.context(None).unwrap();
    let sent = to_llm(&context.messages);
    let roles: Vec<&str> = sent.iter().map(|m| m.role().as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    assert_eq!(sent[2].as_tool_result().unwrap().tool_name, "Read");
    // The title is a label on the leaf; the subagent's entry is its own root.
    assert_eq!(session.label_of("u5"), Some("Read a file"));
    assert_eq!(session.leaf_id().unwrap().as_str(), "u5");

    // `context` prints the same messages.
    let context = agentmsg_in(dir.path(), &["context", "claude.jsonl"]);
    assert_eq!(context.code, 0, "{context:?}");
    assert_eq!(context.stdout.lines().count(), 4, "{}", context.stdout);
    let tree = agentmsg_in(dir.path(), &["tree", "claude.jsonl"]);
    assert!(
        tree.stdout.contains("label: Read a file"),
        "{}",
        tree.stdout
    );
    assert!(tree.stdout.contains("leaf"), "{}", tree.stdout);
}

const CODEX: &[&str] = &[
    r#"{"timestamp":"2025-09-01T10:00:00.000Z","type":"session_meta","payload":{"id":"c1","timestamp":"2025-09-01T10:00:00.000Z","cwd":"/p","originator":"codex_cli_rs","cli_version":"0.30.0","model_provider":"openai"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:00.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}}"#,
    r#"{"timestamp":"2025-09-01T10:00:00.200Z","type":"turn_context","payload":{"cwd":"/p","model":"gpt-5-codex","effort":"medium"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:01.000Z","type":"response_item","payload":{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Listing."}],"content":null,"encrypted_content":"gAAAAenc"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:01.100Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"call_1"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:01.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":1240},"last_token_usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":40,"reasoning_output_tokens":16,"total_tokens":1240}}}}"#,
    r#"{"timestamp":"2025-09-01T10:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"a.rs\\n\",\"metadata\":{\"exit_code\":0}}"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:02.500Z","type":"event_msg","payload":{"type":"token_count","info":null}}"#,
    r#"{"timestamp":"2025-09-01T10:00:03.000Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\n*** End Patch"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:04.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_2","output":"Done"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:05.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"There is a.rs."}]}}"#,
    r#"{"timestamp":"2025-09-01T10:00:05.100Z","type":"turn_context","payload":{"cwd":"/p","model":"gpt-5","effort":"low"}}"#,
    r#"{"timestamp":"2025-09-01T10:00:05.200Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1300,"cached_input_tokens":0,"output_tokens":9,"reasoning_output_tokens":0,"total_tokens":1309}}}}"#,
    r#"{"timestamp":"2025-09-01T10:00:06.000Z","type":"compacted","payload":{"message":"The user listed files; a.rs exists."}}"#,
    r#"{"timestamp":"2025-09-01T10:00:07.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}"#,
];

#[test]
fn a_codex_rollout_imports_with_every_call_result_and_reasoning() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "rollout-2025-09-01.jsonl", CODEX);
    let run = agentmsg_in(dir.path(), &["import", "rollout-2025-09-01.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let (calls, results) = calls_and_results(&run.stdout);
    assert_eq!(
        calls,
        BTreeSet::from(["call_1".to_owned(), "call_2".to_owned()])
    );
    assert_eq!(calls, results);
    // The reasoning item is kept for replay, encrypted content and all.
    assert!(run.stdout.contains("gAAAAenc"));
    let session = Session::read(run.stdout.as_bytes()).unwrap();
    let thinking = session
        .entries()
        .iter()
        .filter_map(|e| e.message()?.as_llm()?.as_assistant())
        .flat_map(|a| a.thinking())
        .next()
        .unwrap()
        .clone();
    assert_eq!(thinking.thinking, "Listing.");
    // Each response has the model of its turn and the usage of its
    // `token_count`: the open message's, or the line written before it.
    let replies: Vec<_> = session
        .entries()
        .iter()
        .filter_map(|e| e.message()?.as_llm()?.as_assistant())
        .map(|a| {
            (
                a.provider.as_str(),
                a.model.as_str(),
                a.usage.input,
                a.usage.cache_read,
                a.usage.output,
                a.usage.reasoning,
            )
        })
        .collect();
    assert_eq!(
        replies,
        [
            ("openai", "gpt-5-codex", 200, 1000, 40, 16),
            ("openai", "gpt-5-codex", 0, 0, 0, 0),
            ("openai", "gpt-5-codex", 1300, 0, 9, 0),
        ]
    );
    assert!(thinking
        .signature
        .unwrap()
        .contains("\"encrypted_content\":\"gAAAAenc\""));
    // After the compaction the model sees the summary and what follows.
    let sent = to_llm(&session.context(None).unwrap().messages)
        .into_iter()
        .map(|m| m.into_owned())
        .collect::<Vec<_>>();
    assert_eq!(sent.len(), 2);
    assert!(sent[0].as_user().unwrap().text().contains("a.rs exists"));
    assert_eq!(sent[1].as_user().unwrap().text(), "thanks");
}

#[test]
fn input_that_is_no_known_log_exits_one_naming_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "other.jsonl",
        &["", r#"{"event":"start","at":1}"#, r#"{"event":"stop"}"#],
    );
    let run = agentmsg_in(dir.path(), &["import", "other.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr
            .contains("other.jsonl:2: error[unrecognised]: not a pi, Claude Code or Codex log")
            && run.stderr.contains(r#"{"event":"start","at":1}"#),
        "{}",
        run.stderr
    );
}

/// `import` of a Claude Code log or a Codex rollout file converts it one line
/// at a time (a Claude Code log in two passes, sidechains first); of standard
/// input, whole: the same transcript, diagnostics and counts. A line that is
/// no JSON object is left out, and said so, either way.
#[test]
fn claude_and_codex_files_import_streamed_as_they_do_whole() {
    let dir = tempfile::tempdir().unwrap();
    for (name, lines) in [("claude.jsonl", CLAUDE), ("rollout.jsonl", CODEX)] {
        let mut text = lines.join("\r\n");
        text.insert_str(lines[0].len() + 2, "not json\n\n");
        std::fs::write(dir.path().join(name), &text).unwrap();
        let file = agentmsg_in(dir.path(), &["import", name]);
        let whole = agentmsg_stdin(dir.path(), &["import", "-"], text.as_bytes());
        assert_eq!(file.code, whole.code, "{name}: {file:?}");
        assert_eq!(file.stdout, whole.stdout, "{name}");
        assert_eq!(file.stderr.replace(name, "-"), whole.stderr, "{name}");
        assert!(
            file.stderr.contains(&format!(
                "{name}:2: warning[not-an-entry]: not a JSON object; left out"
            )),
            "{name}: {}",
            file.stderr
        );
        assert!(file.stdout.lines().count() > 5, "{name}");
    }
}

/// The `stats --json` of `args`, run in `dir` (with `stdin` when given).
fn stats_json(dir: &std::path::Path, args: &[&str], stdin: Option<&[u8]>) -> serde_json::Value {
    let run = match stdin {
        Some(bytes) => agentmsg_stdin(dir, args, bytes),
        None => agentmsg_in(dir, args),
    };
    assert_eq!(run.code, 0, "{args:?}: {run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

/// A Claude Code log that starts with entries which tell nothing of who
/// wrote it (a `file-history-snapshot`, a `permission-mode`, a hook's
/// `progress` without a `uuid`) is a Claude Code log to `stats` given the
/// file, as it is given standard input: the library's detector decides, not
/// the first line.
#[test]
fn stats_of_a_claude_code_file_starting_with_a_snapshot_reads_it_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = vec![
        r#"{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{},"timestamp":"2025-06-01T10:00:00.000Z"},"isSnapshotUpdate":false}"#,
        r#"{"type":"permission-mode","permissionMode":"acceptEdits","sessionId":"s1"}"#,
    ];
    lines.extend_from_slice(CLAUDE);
    common::write_lines(dir.path(), "claude.jsonl", &lines);
    let text = std::fs::read(dir.path().join("claude.jsonl")).unwrap();
    let file = stats_json(dir.path(), &["stats", "--json", "claude.jsonl"], None);
    let piped = stats_json(dir.path(), &["stats", "--json", "-"], Some(&text));
    assert_eq!(file, piped);
    assert_eq!(file["kinds"]["assistant"], 2, "{file:#}");
    assert_eq!(file["toolCalls"], 1, "{file:#}");
    assert!(file["kinds"].get("(undecodable)").is_none(), "{file:#}");
}

/// Every real Claude Code log of the conformance data reads the same given
/// as a file or on standard input, with its assistant messages.
#[test]
fn stats_reads_every_real_claude_code_log_as_a_file_as_it_does_piped() {
    let Some(data) = common::conformance_or_skip(None) else {
        return;
    };
    let root = data.join("transcripts/claude-code");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 19, "{files:?}");
    let dir = tempfile::tempdir().unwrap();
    for path in files {
        let text = std::fs::read(&path).unwrap();
        let copy = dir.path().join("log.jsonl");
        std::fs::write(&copy, &text).unwrap();
        let file = stats_json(dir.path(), &["stats", "--json", "log.jsonl"], None);
        let piped = stats_json(dir.path(), &["stats", "--json", "-"], Some(&text));
        assert_eq!(file, piped, "{}", path.display());
        assert!(
            file["kinds"]["assistant"].as_u64().unwrap_or(0) > 0,
            "{}: {file:#}",
            path.display()
        );
    }
}

/// A line holding half of a UTF-16 character (an emoji cut in two, as tools
/// cut output) is kept, with U+FFFD for the lone half and a `lone-surrogate`
/// warning at its line, in a Claude Code log and a Codex rollout alike:
/// nothing after it loses its parent, and `context` sends every message.
#[test]
fn a_line_with_a_lone_surrogate_is_kept_and_said() {
    let dir = tempfile::tempdir().unwrap();
    for (name, lines, at, text) in [
        ("claude.jsonl", CLAUDE, 5, "fn main() {}"),
        ("rollout.jsonl", CODEX, 6, "a.rs"),
    ] {
        let mut lines: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        assert!(lines[at].contains(text), "{name}");
        let whole = common::write_lines;
        whole(
            dir.path(),
            name,
            &lines.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let before = agentmsg_in(dir.path(), &["context", name]);
        lines[at] = lines[at].replacen(text, &format!("{text} \\ud83d"), 1);
        whole(
            dir.path(),
            name,
            &lines.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let run = agentmsg_in(dir.path(), &["import", name]);
        assert_eq!(run.code, 0, "{name}: {run:?}");
        assert!(
            run.stderr
                .contains(&format!("{name}:{}: warning[lone-surrogate]", at + 1)),
            "{name}: {}",
            run.stderr
        );
        assert!(
            run.stdout.contains('\u{fffd}') || run.stdout.contains("\\ufffd"),
            "{name}"
        );
        let after = agentmsg_in(dir.path(), &["context", name]);
        assert_eq!(after.code, 0, "{name}: {after:?}");
        assert_eq!(
            after.stdout.lines().count(),
            before.stdout.lines().count(),
            "{name}: {}",
            after.stdout
        );
    }
}

/// Every value of the wrong JSON type is said, at its line and by its
/// field's path: a Codex message whose `content` is a string, a call id
/// that is a number, an `encrypted_content` that is a number; a Claude Code
/// image whose `data` is a number, a usage count that is a string.
#[test]
fn values_of_the_wrong_type_are_said_by_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut codex: Vec<String> = CODEX.iter().map(|l| (*l).to_owned()).collect();
    codex[1] = codex[1].replace(
        r#""content":[{"type":"input_text","text":"list files"}]"#,
        r#""content":"list files""#,
    );
    codex[3] = codex[3].replace(
        r#""encrypted_content":"gAAAAenc""#,
        r#""encrypted_content":7"#,
    );
    codex[4] = codex[4].replace(r#""call_id":"call_1""#, r#""call_id":5"#);
    let mut claude: Vec<String> = CLAUDE.iter().map(|l| (*l).to_owned()).collect();
    claude[1] = claude[1].replace(
        r#""content":"read a.rs""#,
        r#""content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":5}}]"#,
    );
    claude[2] = claude[2].replace(r#""input_tokens":10"#, r#""input_tokens":"10""#);
    for (name, lines, said) in [
        (
            "rollout.jsonl",
            codex,
            vec![
                "rollout.jsonl:2: warning[bad-value]: `payload.content` is a string where an array belongs",
                "rollout.jsonl:4: warning[bad-value]: `payload.encrypted_content` is a number where a string belongs",
                "rollout.jsonl:5: warning[bad-value]: `payload.call_id` is a number where a string belongs",
            ],
        ),
        (
            "claude.jsonl",
            claude,
            vec![
                "claude.jsonl:2: warning[bad-value]: `message.content[0].source.data` is a number where a string belongs",
                "claude.jsonl:3: warning[bad-value]: `message.usage.input_tokens` is a string where a number belongs",
            ],
        ),
    ] {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        common::write_lines(dir.path(), name, &lines);
        let run = agentmsg_in(dir.path(), &["import", name]);
        assert_eq!(run.code, 0, "{name}: {run:?}");
        for said in &said {
            assert!(run.stderr.contains(said), "{said}\n{}", run.stderr);
        }
        assert_eq!(
            run.stderr.matches("bad-value").count(),
            said.len(),
            "{}",
            run.stderr
        );
    }
}
