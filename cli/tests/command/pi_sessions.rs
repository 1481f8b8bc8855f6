//! `agentmsg import` on the real pi sessions of the conformance data, and the
//! line schema against everything the command writes.

use crate::common;

use std::path::Path;

use agentmsg_runtime::custom::{BranchSummary, CompactionSummary, ExtensionMessage};
use agentmsg_runtime::message::MediaSource;
use agentmsg_runtime::{
    AgentMessage, AssistantMessage, AudioContent, Cost, DocumentContent, ImageContent, LlmMessage,
    Message, MessageId, RedactedThinkingContent, StopReason, SystemMessage, TextContent,
    ThinkingContent, ToolCall, ToolResultContent, ToolResultMessage, TurnId, Usage, UserContent,
    UserMessage,
};
use common::{
    agentmsg, agentmsg_in, agentmsg_stdin, conformance_schema, errors_against, fixtures, pi_session,
};
use serde_json::{json, Value};

const SESSIONS: [&str; 2] = ["before-compaction.jsonl", "large-session.jsonl"];

/// Imports `session` into `dir/<session>` and returns the output path.
fn import(session: &Path, dir: &Path) -> std::path::PathBuf {
    let out = dir.join(session.file_name().unwrap());
    let run = agentmsg(&[
        "import",
        session.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    out
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn import_keeps_every_pi_entry() {
    common::require_conformance!();
    let dir = tempfile::tempdir().unwrap();
    for name in SESSIONS {
        let session = pi_session(name);
        let entries = jsonl(&session);
        let out = import(&session, dir.path());
        let lines = jsonl(&out);
        // Version 1 sessions: no entry has fields the kinds do not hold, so one
        // line per entry.
        assert_eq!(lines.len(), entries.len(), "{name}");
        let session_id = entries[0]["id"].as_str().unwrap();
        let mut counts = (0, 0, 0);
        // Version 1: the ids the session reader gives when it migrates the
        // file (the entry's ordinal, 8 hex digits); the header keeps its own.
        let id_of = |i: usize| match i {
            0 => format!("{session_id}:0"),
            i => format!("{i:08x}"),
        };
        for (i, (entry, line)) in entries.iter().zip(&lines).enumerate() {
            let id = id_of(i);
            assert_eq!(line["id"], id.as_str(), "{name} entry {i}");
            match entry["type"].as_str().unwrap() {
                "message" => {
                    let mut expected = entry["message"].clone();
                    expected["id"] = json!(id);
                    assert_eq!(line, &expected, "{name} entry {i}");
                    counts.0 += 1;
                }
                "compaction" => {
                    let kept = entry["firstKeptEntryIndex"].as_u64().unwrap();
                    assert_eq!(line["role"], "compactionSummary");
                    assert_eq!(line["summary"], entry["summary"]);
                    assert_eq!(line["tokensBefore"], entry["tokensBefore"]);
                    assert_eq!(line["firstKeptId"], id_of(kept as usize).as_str());
                    // pi keeps from a user message: the id points at it.
                    assert_eq!(lines[kept as usize]["role"], "user", "{name} entry {i}");
                    assert!(line["timestamp"].as_u64().unwrap() > 1_700_000_000_000);
                    counts.1 += 1;
                }
                other => {
                    assert_eq!(line["role"], "extension");
                    assert_eq!(line["kind"], format!("pi.{other}").as_str());
                    assert_eq!(&line["data"], entry, "{name} entry {i}");
                    counts.2 += 1;
                }
            }
        }
        let expected_counts = if name == "before-compaction.jsonl" {
            (990, 2, 11)
        } else {
            (914, 0, 105)
        };
        assert_eq!(counts, expected_counts, "{name}");
    }
}

#[test]
fn imported_sessions_check_repair_and_project() {
    common::require_conformance!();
    let dir = tempfile::tempdir().unwrap();
    // large-session is well formed: warnings only (aborted turns, and the
    // `partialJson` pi leaves on the tool calls of three failed turns, which
    // the types do not keep).
    let large = import(&pi_session("large-session.jsonl"), dir.path());
    let run = agentmsg(&["check", large.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let partial_json = |stdout: &str| {
        stdout
            .lines()
            .filter(|l| l.contains("warning[dropped-field]"))
            .map(|l| {
                assert!(
                    l.contains("`content[")
                        && l.contains("].partialJson` is not a field of assistant messages"),
                    "{l}"
                );
            })
            .count()
    };
    assert_eq!(partial_json(&run.stdout), 3, "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .all(|l| l.contains("warning[failed-turn]")
                || l.contains("warning[dropped-field]")
                || l.ends_with("0 errors, 25 warnings")),
        "{}",
        run.stdout
    );

    // before-compaction has one call whose result never came (it was running
    // when the session compacted): one error, at its line.
    let before = import(&pi_session("before-compaction.jsonl"), dir.path());
    let run = agentmsg(&["check", before.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(": error["))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].ends_with(":628: error[missing-result]: the `bash` call `toolu_01571BXn2nSXvrR7sxVHAXXE` has no result"), "{}", errors[0]);
    // pi's `bashExecution` is a built-in kind: read, not kept as unknown.
    assert!(
        !run.stdout.contains("unknown kind `bashExecution`"),
        "{}",
        run.stdout
    );
    assert_eq!(partial_json(&run.stdout), 3, "{}", run.stdout);

    let repaired = dir.path().join("repaired.jsonl");
    let run = agentmsg(&[
        "repair",
        before.to_str().unwrap(),
        "-o",
        repaired.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(":628: added a synthetic error result for the `bash` call `toolu_01571BXn2nSXvrR7sxVHAXXE` of line 628"));
    assert!(run.stdout.contains(": 1 changes, written to"));
    let run = agentmsg(&["check", "-q", repaired.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            // 25 before bashExecution was a built-in kind (3 unknown-kind warnings).
            .ends_with("1004 lines, 1004 messages: 0 errors, 22 warnings\n"),
        "{}",
        run.stdout
    );
    // Only the one line was added; every other line is byte for byte the same.
    let a = std::fs::read_to_string(&before).unwrap();
    let b = std::fs::read_to_string(&repaired).unwrap();
    let mut b_lines: Vec<&str> = b.lines().collect();
    let added = b_lines.remove(628);
    assert!(added
        .starts_with("{\"role\":\"toolResult\",\"toolCallId\":\"toolu_01571BXn2nSXvrR7sxVHAXXE\""));
    assert_eq!(a.lines().collect::<Vec<_>>(), b_lines);

    // The whole session projects to a body Anthropic's schema accepts, with its
    // signed thinking replayed to the model that wrote it.
    let run = agentmsg(&[
        "project",
        before.to_str().unwrap(),
        "--api",
        "anthropic-messages",
        "--model",
        "claude-opus-4-5",
        "--compact",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let body: Value = serde_json::from_str(&run.stdout).unwrap();
    let errors = errors_against(
        &conformance_schema("anthropic-messages-request.schema.json"),
        &body,
    );
    assert!(errors.is_empty(), "{:?}", &errors[..errors.len().min(5)]);
    // The leaf's context is projected, as pi sends it: the last compaction's
    // summary and what it kept (446 messages, not the file's 930). Its 27
    // thinking blocks, 2 of them in aborted turns, which are skipped.
    assert!(
        run.stderr.contains(": 446 messages projected"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout.matches("\"type\":\"thinking\"").count(), 25);
    assert!(
        run.stderr.contains(": line 628: synthetic result"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("kept (unknown) lines"),
        "{}",
        run.stderr
    );
}

#[test]
fn stats_of_an_imported_session_match_the_pi_file() {
    common::require_conformance!();
    let dir = tempfile::tempdir().unwrap();
    let session = pi_session("before-compaction.jsonl");
    let out = import(&session, dir.path());
    let run = agentmsg(&["stats", "--json", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let stats: Value = serde_json::from_str(&run.stdout).unwrap();
    // The same numbers, summed from the pi file as plain JSON.
    let (mut assistants, mut calls, mut input, mut output, mut read, mut write, mut cost) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64, 0f64);
    for entry in jsonl(&session) {
        let m = &entry["message"];
        if m["role"] != "assistant" {
            continue;
        }
        assistants += 1;
        calls += m["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "toolCall")
            .count() as u64;
        input += m["usage"]["input"].as_u64().unwrap();
        output += m["usage"]["output"].as_u64().unwrap();
        read += m["usage"]["cacheRead"].as_u64().unwrap();
        write += m["usage"]["cacheWrite"].as_u64().unwrap();
        cost += m["usage"]["cost"]["total"].as_f64().unwrap();
    }
    assert_eq!(stats["kinds"]["assistant"], assistants);
    assert_eq!(stats["toolCalls"], calls);
    assert_eq!(stats["tokens"]["input"], input);
    assert_eq!(stats["tokens"]["output"], output);
    assert_eq!(stats["tokens"]["cacheRead"], read);
    assert_eq!(stats["tokens"]["cacheWrite"], write);
    assert!((stats["cost"]["total"].as_f64().unwrap() - cost).abs() < 1e-9);
    let rate = read as f64 / (input + read + write) as f64;
    assert!((stats["cacheHitRate"].as_f64().unwrap() - rate).abs() < 1e-12);
    assert_eq!(stats["kinds"]["compactionSummary"], 2);
    assert_eq!(stats["kinds"]["bashExecution"], 3);
}

#[test]
fn import_maps_a_version_3_session() {
    let run = agentmsg(&["import", "pi-v3.jsonl"]);
    // The one line that is not an entry is kept, and reported.
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        concat!(
            r#"{"role":"extension","kind":"pi.session","data":{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/tmp/p"},"id":"s-1:0"}"#,
            "\n",
            r#"{"role":"user","content":"hello","timestamp":1767323046000,"id":"e1","parentId":null}"#,
            "\n",
            r#"{"role":"extension","kind":"pi.model_change","data":{"type":"model_change","id":"e2","parentId":"e1","timestamp":"2026-01-02T03:04:07.000Z","provider":"openai","modelId":"gpt-5"},"id":"e2","parentId":"e1"}"#,
            "\n",
            r#"{"role":"assistant","content":[{"type":"text","text":"Hi."}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":5,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1767323048000,"id":"e3","parentId":"e2"}"#,
            "\n",
            // pi's file lists ride on the compaction, for a later one to carry.
            r#"{"role":"compactionSummary","summary":"Said hello.","tokensBefore":1234,"firstKeptId":"e3","timestamp":1767323049500,"details":{"readFiles":["a.rs"]},"id":"e4","parentId":"e3"}"#,
            "\n",
            r#"{"role":"extension","kind":"pi.compaction","data":{"fromHook":false},"id":"e4/extra"}"#,
            "\n",
            r#"{"role":"branchSummary","summary":"Tried another greeting.","fromId":"e4","timestamp":1767323050000,"id":"e5","parentId":"e1"}"#,
            "\n",
            r#"{"role":"extension","kind":"pi.custom","data":{"type":"custom","id":"e6","parentId":"e5","timestamp":"2026-01-02T03:04:11.000Z","customType":"todo","data":{"count":2}},"id":"e6","parentId":"e5"}"#,
            "\n",
            r#"{"role":"extension","kind":"pi.unparsed","data":"this line is not an entry"}"#,
            "\n",
            r#"{"role":"custom","customType":"todo","content":"2 todos","display":true,"timestamp":1767323052000,"id":"e7","parentId":"e6"}"#,
            "\n",
        )
    );
    assert!(
        run.stderr.contains("pi-v3.jsonl:8: error[not-an-entry]"),
        "{}",
        run.stderr
    );
    // The branch is kept: e5 hangs off e1, so the context at the leaf skips
    // the compacted branch, as pi's does.
    let session = agentmsg_runtime::Session::read(run.stdout.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    let kinds: Vec<&str> = context.messages.iter().map(|m| m.kind()).collect();
    assert_eq!(kinds, ["user", "branchSummary", "extension", "custom"]);
    // pi's `custom` entry (an extension line) is app state: never sent.
    assert_eq!(agentmsg_runtime::to_llm(&context.messages).len(), 3);
    assert!(run
        .stderr
        .contains("10 lines written: 3 messages, 2 summaries, 5 extension lines"));
    // Each line decodes as its kind.
    for line in run.stdout.lines() {
        let message = AgentMessage::from_line(line).unwrap();
        match message.kind() {
            "compactionSummary" => assert_eq!(
                message
                    .downcast_ref::<CompactionSummary>()
                    .unwrap()
                    .first_kept_id,
                Some(MessageId::from("e3"))
            ),
            "branchSummary" => assert_eq!(
                message.downcast_ref::<BranchSummary>().unwrap().summary,
                "Tried another greeting."
            ),
            "extension" => assert!(message
                .downcast_ref::<ExtensionMessage>()
                .unwrap()
                .kind
                .starts_with("pi.")),
            "custom" => assert!(message.is_custom(), "{line}"),
            _ => assert!(message.is_llm(), "{line}"),
        }
    }
}

/// A transcript with every block type, every role, the built-in kinds and an
/// unknown line, written by the runtime.
fn generated_transcript() -> Vec<String> {
    let image = ImageContent {
        source: MediaSource::Base64 {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        },
    };
    let url_image = ImageContent {
        source: MediaSource::Url("https://example.com/a.png".into()),
    };
    let document = DocumentContent {
        source: MediaSource::Url("https://example.com/a.pdf".into()),
        title: Some("spec".into()),
    };
    let audio = AudioContent {
        data: "SUQz".into(),
        mime_type: "audio/mpeg".into(),
    };
    let user = UserMessage {
        content: vec![
            UserContent::Text(TextContent::new("look")),
            UserContent::Image(image.clone()),
            UserContent::Image(url_image),
            UserContent::Audio(audio),
            UserContent::Document(document),
        ],
        timestamp: 5,
    };
    let mut assistant = AssistantMessage::new([ThinkingContent::new("hmm").with_signature("sig")])
        .with_origin("anthropic-messages", "anthropic", "claude-sonnet-4-5")
        .with_stop_reason(StopReason::ToolUse)
        .with_usage(Usage {
            reasoning: 3,
            cost: Some(Cost {
                total: 0.5,
                ..Cost::default()
            }),
            ..Usage::new(10, 5)
        })
        .with_timestamp(6);
    assistant
        .content
        .push(agentmsg_runtime::AssistantContent::RedactedThinking(
            RedactedThinkingContent::new("opaque"),
        ));
    assistant
        .content
        .push(agentmsg_runtime::AssistantContent::ToolCall(ToolCall::new(
            "call_1",
            "read",
            json!({"path": "a"}),
        )));
    assistant.response_id = Some("resp_1".into());
    let mut result = ToolResultMessage::new("call_1", "read", ["text"])
        .with_details(json!({"bytes": 4}))
        .with_timestamp(7);
    result.content.push(ToolResultContent::Image(image));
    let mut failed = AssistantMessage::new(["partial"])
        .with_stop_reason(StopReason::Error)
        .with_timestamp(8);
    failed.error_message = Some("overloaded".into());
    let messages = vec![
        AgentMessage::from(Message::System(
            SystemMessage::new(["You are terse."]).with_timestamp(4),
        )),
        AgentMessage::Llm(
            LlmMessage::with_turn(Message::User(user), TurnId::from("t1"))
                .with_id(MessageId::new()),
        ),
        AgentMessage::from(Message::Assistant(assistant)),
        AgentMessage::from(Message::ToolResult(result)),
        AgentMessage::from(Message::Assistant(failed)),
        AgentMessage::custom(CompactionSummary {
            first_kept_id: Some(MessageId::from("m1")),
            timestamp: 9,
            ..CompactionSummary::new("sum", 100)
        }),
        AgentMessage::custom(BranchSummary::new("branch")),
        AgentMessage::custom(ExtensionMessage::new("note", &json!({"a": [1, 2]})).unwrap())
            .with_id(Some(MessageId::from("x1"))),
        AgentMessage::from_line(r#"{"role":"screenshot","v":3,"path":"a.png","turnId":"t9"}"#)
            .unwrap(),
    ];
    messages.iter().map(|m| m.to_line().unwrap()).collect()
}

#[test]
fn every_line_written_validates_against_the_schema() {
    let run = agentmsg(&["schema"]);
    assert_eq!(run.code, 0);
    let schema: Value = serde_json::from_str(&run.stdout).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut checked = 0;
    let mut check_line = |origin: &str, line: &str| {
        let value: Value = serde_json::from_str(line).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| format!("{}: {e}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{origin}: {line:.200}: {errors:?}");
        checked += 1;
    };
    let generated = generated_transcript();
    assert_eq!(generated.len(), 9);
    for line in &generated {
        check_line("generated", line);
    }
    let dir = tempfile::tempdir().unwrap();
    let sessions = common::conformance_or_skip(Some("the pi sessions")).is_some();
    if sessions {
        for name in SESSIONS {
            let out = import(&pi_session(name), dir.path());
            for line in std::fs::read_to_string(&out).unwrap().lines() {
                check_line(name, line);
            }
        }
    }
    let v3 = agentmsg_in(&fixtures(), &["import", "pi-v3.jsonl"]);
    for line in v3.stdout.lines() {
        check_line("pi-v3", line);
    }
    // The repaired fixture, synthetic result included.
    let repaired = dir.path().join("r.jsonl");
    agentmsg(&["repair", "orphaned.jsonl", "-o", repaired.to_str().unwrap()]);
    for line in std::fs::read_to_string(&repaired).unwrap().lines() {
        check_line("repaired", line);
    }
    let session_lines = if sessions { 1003 + 1019 } else { 0 };
    assert_eq!(checked, 9 + session_lines + 10 + 7);
}

#[test]
fn the_schema_rejects_what_the_reader_rejects() {
    let schema = agentmsg_runtime::transcript::transcript_line_schema();
    for bad in [
        json!({"content": "no role"}),
        json!({"role": "user"}),
        json!({"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}),
        json!({"role": "user", "content": "hi", "v": 2}),
        json!({"role": "assistant", "content": "text is not an array"}),
        json!({"role": "assistant", "content": [{"type": "audio", "data": "x", "mimeType": "audio/wav"}]}),
        json!({"role": "assistant", "content": [{"type": "providerBlock", "api": "anthropic-messages", "block": [1]}]}),
        json!({"role": "user", "content": [{"type": "providerBlock", "api": "anthropic-messages", "block": {}}]}),
        json!({"role": "assistant", "content": [], "stopReason": "finished"}),
        json!({"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "b", "arguments": "{}"}]}),
        json!({"role": "toolResult", "toolName": "read", "content": []}),
        json!({"role": "toolResult", "toolCallId": "a", "toolName": "read", "content": [{"type": "audio", "data": "x", "mimeType": "audio/wav"}]}),
        json!({"role": "user", "content": [{"type": "image", "data": "x"}]}),
        json!({"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png", "url": "https://x"}]}),
        json!({"role": "user", "content": "hi", "timestamp": -1}),
        json!({"role": "user", "content": "hi", "id": 5}),
        json!({"role": "compactionSummary", "tokensBefore": 1}),
        json!({"role": "extension", "data": {}}),
        json!({"role": "notice", "v": 0}),
    ] {
        assert!(!errors_against(&schema, &bad).is_empty(), "accepted {bad}");
        // The reader refuses each of them too (strictly), except the ones the
        // lenient envelope keeps as unknown lines.
        let strict = agentmsg_runtime::transcript::decode_line(
            &bad.to_string(),
            agentmsg_runtime::custom::Registry::global(),
            agentmsg_runtime::transcript::DecodeMode::Strict,
        );
        assert!(strict.is_err(), "the reader accepts {bad}");
    }
}

/// Both real sessions, projected for each API, give bodies the provider's
/// published request schema accepts.
#[test]
fn imported_sessions_project_to_schema_valid_bodies_for_every_api() {
    common::require_conformance!();
    let dir = tempfile::tempdir().unwrap();
    for name in SESSIONS {
        let transcript = import(&pi_session(name), dir.path());
        for (api, schema) in [
            (
                "anthropic-messages",
                "anthropic-messages-request.schema.json",
            ),
            ("openai-completions", "openai-chat-request.schema.json"),
            ("openai-responses", "openai-responses-request.schema.json"),
            (
                "google-generative-ai",
                "gemini-generatecontent-request.schema.json",
            ),
        ] {
            let run = agentmsg(&[
                "project",
                transcript.to_str().unwrap(),
                "--api",
                api,
                "--model",
                "claude-opus-4-5",
                "--compact",
            ]);
            assert_eq!(run.code, 0, "{name} {api}: {}", run.stderr);
            let mut body: Value = serde_json::from_str(&run.stdout).unwrap();
            if api == "google-generative-ai" {
                if let Some(map) = body.as_object_mut() {
                    map.remove("model");
                }
            }
            let errors = errors_against(&conformance_schema(schema), &body);
            assert!(
                errors.is_empty(),
                "{name} {api}: {:?}",
                &errors[..errors.len().min(5)]
            );
            // Every failed turn of the leaf's context is skipped, and reported
            // at its line (before-compaction's context is what its last
            // compaction kept: 7 of the file's 19).
            let failed = if name == "large-session.jsonl" { 22 } else { 7 };
            assert_eq!(
                run.stderr.matches(": skipped failed turn: ").count(),
                failed,
                "{name} {api}"
            );
        }
    }
}

/// `agentmsg context` on pi's own files sends what pi sends: before-compaction
/// (two compactions) 446 messages, not the file's 990; large-session all 914.
/// The same through `import`: the transcript keeps the compactions.
#[test]
fn context_of_pi_sessions_is_what_pi_sends() {
    common::require_conformance!();
    let dir = tempfile::tempdir().unwrap();
    for (name, sent) in [
        ("before-compaction.jsonl", 446),
        ("large-session.jsonl", 914),
    ] {
        let session = pi_session(name);
        let run = agentmsg(&["context", session.to_str().unwrap()]);
        assert_eq!(run.code, 0, "{run:?}");
        assert_eq!(run.stdout.lines().count(), sent, "{name}");
        // Every line is an LLM message (the summary and bash runs as user text).
        for line in run.stdout.lines() {
            let message = AgentMessage::from_line(line).unwrap();
            assert!(message.is_llm(), "{line}");
        }
        let imported = import(&session, dir.path());
        let again = agentmsg(&["context", imported.to_str().unwrap()]);
        assert_eq!(again.stdout, run.stdout, "{name}: imported");
        let tree = agentmsg(&["tree", "--json", session.to_str().unwrap()]);
        let tree: Value = serde_json::from_str(&tree.stdout).unwrap();
        assert_eq!(tree["leaves"].as_array().unwrap().len(), 1);
    }
    let before = pi_session("before-compaction.jsonl");
    let tree = agentmsg(&["tree", before.to_str().unwrap()]);
    assert_eq!(
        tree.stdout.matches("compaction: keeps from").count(),
        2,
        "{}",
        tree.stdout
    );
}

/// `check` pairs calls and results on each branch of a tree, not in file
/// order: a call answered on two branches is fine, a result answering a call
/// of another branch is an error. `repair` leaves them alone.
#[test]
fn check_pairs_calls_and_results_branch_by_branch() {
    let call = |id: &str, parent: &str, call: &str| {
        format!(
            r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"{call}","name":"ls","arguments":{{}}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0}},"stopReason":"toolUse","timestamp":2,"id":"{id}","parentId":"{parent}"}}"#
        )
    };
    let result = |id: &str, parent: &str, call: &str| {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{call}","toolName":"ls","content":[{{"type":"text","text":"a.rs"}}],"isError":false,"timestamp":3,"id":"{id}","parentId":"{parent}"}}"#
        )
    };
    let user = |id: &str, parent: &str| {
        format!(r#"{{"role":"user","content":"go","timestamp":1,"id":"{id}","parentId":{parent}}}"#)
    };
    // The tool ran twice from the same call: two branches, each answered.
    let rerun = [
        user("u", "null"),
        call("a", "u", "c1"),
        result("r1", "a", "c1"),
        result("r2", "a", "c1"),
    ];
    // A second branch from the user message answers the first branch's call.
    let crossed = [
        user("u", "null"),
        call("a", "u", "c1"),
        result("r1", "a", "c1"),
        result("r2", "u", "c1"),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (name, lines) in [("rerun.jsonl", &rerun), ("crossed.jsonl", &crossed)] {
        std::fs::write(dir.path().join(name), lines.join("\n") + "\n").unwrap();
    }
    let run = agentmsg_in(dir.path(), &["check", "rerun.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("0 errors, 0 warnings"),
        "{}",
        run.stdout
    );
    let run = agentmsg_in(dir.path(), &["check", "crossed.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("crossed.jsonl:4: error[result-without-call]"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("1 errors"), "{}", run.stdout);
    // Repair leaves a tree's pairing alone, file and standard input alike
    // (in file order it would drop the rerun's second result).
    let run = agentmsg_in(dir.path(), &["repair", "rerun.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("note: a session tree"),
        "{}",
        run.stdout
    );
    assert_eq!(
        std::fs::read(dir.path().join("out.jsonl")).unwrap(),
        std::fs::read(dir.path().join("rerun.jsonl")).unwrap()
    );
}

/// `context` and `project` read a session file along the leaf's path only;
/// what they print is what the whole read (standard input) prints.
#[test]
fn context_and_project_of_a_file_read_along_the_path_print_what_a_whole_read_does() {
    let mut session = agentmsg_runtime::Session::new();
    let first = session.append(Message::user("first").into()).unwrap();
    for i in 0..20 {
        session
            .append(Message::assistant(format!("old {i}")).into())
            .unwrap();
    }
    session.branch(first.as_str()).unwrap();
    let kept = session.append(Message::assistant("new").into()).unwrap();
    session.append(Message::user("more").into()).unwrap();
    session.compact("Talked.", kept.as_str(), 100).unwrap();
    let leaf = session.append(Message::user("last").into()).unwrap();
    let text = session.to_bytes();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.jsonl"), &text).unwrap();
    let stdin_run = |args: &[&str]| {
        let run = agentmsg_stdin(dir.path(), args, &text);
        assert_eq!(run.code, 0, "{run:?}");
        run.stdout
    };
    for leaf in [None, Some(leaf.as_str()), Some(first.as_str())] {
        let mut args = vec!["context"];
        args.extend(leaf.map(|l| ["--leaf", l]).into_iter().flatten());
        let file = agentmsg_in(dir.path(), &[&args[..], &["s.jsonl"]].concat());
        assert_eq!(file.code, 0, "{file:?}");
        assert_eq!(file.stdout, stdin_run(&[&args[..], &["-"]].concat()));
        let project = [
            "project",
            "--api",
            "openai-completions",
            "--model",
            "gpt-4.1",
        ];
        let mut args = project.to_vec();
        args.extend(leaf.map(|l| ["--leaf", l]).into_iter().flatten());
        let file = agentmsg_in(dir.path(), &[&args[..], &["s.jsonl"]].concat());
        assert_eq!(file.code, 0, "{file:?}");
        assert_eq!(file.stdout, stdin_run(&[&args[..], &["-"]].concat()));
    }
    // The leaf's context: the summary, what it kept, and after.
    let run = agentmsg_in(dir.path(), &["context", "s.jsonl"]);
    assert_eq!(run.stdout.lines().count(), 4, "{}", run.stdout);
}

/// The messages `agentmsg context` prints for `file` in `dir`.
fn context_lines(dir: &Path, file: &str) -> Vec<Value> {
    let run = agentmsg_in(dir, &["context", file]);
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A pi file and its import send the same context, entry types whose rules
/// differ from the transcript's own included: a line holding a lone surrogate
/// (which the import once left unparsed, shifting every later id by one, so
/// that its output failed with a `parentId` cycle), a `system` message and a
/// version 3 `hookMessage` (pi sends neither), a message of role
/// `compactionSummary` (user text, no compaction) and an empty branch summary
/// (pi skips it).
#[test]
fn an_import_sends_the_context_the_pi_file_sends() {
    let entry = |id: &str, parent: &str, message: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:02.000Z","message":{message}}}"#
        )
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#.to_owned(),
        entry("b", "a", r#"{"role":"user","content":[{"type":"text","text":"cut \ud83d"}],"timestamp":2}"#),
        entry("c", "b", r#"{"role":"system","content":[{"type":"text","text":"be terse"}],"timestamp":3}"#),
        entry("d", "c", r#"{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":4}"#),
        entry("e", "d", r#"{"role":"compactionSummary","summary":"We met.","tokensBefore":5,"timestamp":5}"#),
        r#"{"type":"branch_summary","id":"f","parentId":"e","timestamp":"2025-01-01T00:00:06.000Z","fromId":"a","summary":""}"#.to_owned(),
        entry("g", "f", r#"{"role":"user","content":[{"type":"text","text":"next"}],"timestamp":7}"#),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    let run = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("pi.jsonl:3: warning[lone-surrogate]"),
        "{}",
        run.stderr
    );
    // The cut line keeps its bytes: read here with U+FFFD, as the reader does.
    let text = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(text.contains(r#""cut \ud83d""#));
    let imported: Vec<Value> = text
        .lines()
        .map(|l| {
            let fixed = agentmsg_runtime::transcript::replace_lone_surrogates(l);
            serde_json::from_str(fixed.as_deref().unwrap_or(l)).unwrap()
        })
        .collect();
    let ids: Vec<&str> = imported.iter().filter_map(|l| l["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["s1:0", "a", "b", "c", "d", "e", "f", "g"],
        "{imported:#?}"
    );

    let from_pi = context_lines(dir.path(), "pi.jsonl");
    let texts: Vec<&str> = from_pi
        .iter()
        .map(|m| m["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert_eq!(texts[..2], ["hi", "cut \u{fffd}"]);
    assert!(texts[2].contains("<summary>\nWe met.\n</summary>"));
    assert_eq!(texts[3], "next");
    assert_eq!(context_lines(dir.path(), "out.jsonl"), from_pi);
}

/// A version 1 pi file has no ids: `import` names its entries as the session
/// reader does when it migrates the file (`tree` and `context` show them), the
/// entry's ordinal as 8 hex digits.
#[test]
fn a_version_1_import_names_entries_as_the_session_does() {
    let lines = [
        r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#,
        r#"{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":9}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("v1.jsonl"), lines.join("\n") + "\n").unwrap();
    let run = agentmsg_in(dir.path(), &["import", "v1.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let imported = jsonl(&dir.path().join("out.jsonl"));
    let ids: Vec<&str> = imported[1..]
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["00000001", "00000002", "00000003"]);
    assert_eq!(imported[3]["firstKeptId"], "00000002");
    let session = agentmsg_runtime::Session::open(dir.path().join("v1.jsonl")).unwrap();
    let tree_ids: Vec<String> = session
        .entries()
        .iter()
        .filter(|e| !matches!(e.kind(), agentmsg_runtime::session::EntryKind::Header))
        .filter_map(|e| e.id().map(ToString::to_string))
        .collect();
    assert_eq!(tree_ids, ids);
}

/// `check` reads a line holding a lone surrogate as the reader does (with
/// U+FFFD) and warns, where it once called it undecodable.
#[test]
fn check_warns_of_a_lone_surrogate() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.jsonl"),
        "{\"role\":\"user\",\"content\":\"cut \\ud83d\",\"timestamp\":1}\n",
    )
    .unwrap();
    let run = agentmsg_in(dir.path(), &["check", "t.jsonl"]);
    assert!(
        run.stdout.contains("t.jsonl:1: warning[lone-surrogate]"),
        "{run:?}"
    );
    assert!(run.stdout.contains("0 errors"), "{run:?}");
    assert_eq!(run.code, 0, "{run:?}");
}

/// pi's redacted thinking (`"redacted": true`, the opaque data in
/// `thinkingSignature`) goes to Anthropic as `redacted_thinking` with its
/// data, from the pi file and from its import alike; the import keeps the
/// block's bytes, flag included. It went out as a `thinking` block whose text
/// was "[Reasoning redacted]".
#[test]
fn redacted_thinking_goes_to_anthropic_as_redacted_thinking() {
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"[Reasoning redacted]","thinkingSignature":"EmwKAhgB","redacted":true},{"type":"text","text":"hello"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#,
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"again"}],"timestamp":3}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    let run = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let imported = jsonl(&dir.path().join("out.jsonl"));
    assert_eq!(imported[2]["content"][0]["redacted"], true, "{imported:#?}");
    let message = AgentMessage::from_line(&imported[2].to_string()).unwrap();
    let blocks = &message.as_llm().unwrap().as_assistant().unwrap().content;
    assert_eq!(
        blocks[0],
        agentmsg_runtime::AssistantContent::RedactedThinking(RedactedThinkingContent::new(
            "EmwKAhgB"
        ))
    );
    for file in ["pi.jsonl", "out.jsonl"] {
        let (_, body) =
            common::project_in(dir.path(), "anthropic-messages", "claude-sonnet-4-5", file);
        assert_eq!(
            body["messages"][1]["content"][0],
            json!({"type": "redacted_thinking", "data": "EmwKAhgB"}),
            "{file}: {body:#}"
        );
    }
}

/// pi's Responses call ids (`call_x|fc_y`), replayed to the model that made
/// them, go out as pi sends them: `call_id: "call_x"` with the item's own `id:
/// "fc_y"`, and the result answers `call_x`. To another model the item id is
/// left out, as pi leaves it out. The whole id went out as the `call_id`.
#[test]
fn pi_responses_call_ids_go_out_apart() {
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"read a.rs"}],"timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_x|fc_y","name":"read","arguments":{"path":"a.rs"}}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_x|fc_y","toolName":"read","content":[{"type":"text","text":"fn main() {}"}],"isError":false,"timestamp":3}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    let (_, body) = common::project_in(dir.path(), "openai-responses", "gpt-5", "pi.jsonl");
    let input = body["input"].as_array().unwrap();
    let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["call_id"], "call_x", "{body:#}");
    assert_eq!(call["id"], "fc_y", "{body:#}");
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["call_id"], "call_x", "{body:#}");

    let (_, body) = common::project_in(dir.path(), "openai-responses", "gpt-4.1", "pi.jsonl");
    let input = body["input"].as_array().unwrap();
    let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
    assert_eq!(call["call_id"], "call_x", "{body:#}");
    assert!(call.get("id").is_none(), "{body:#}");
}

/// A pi file without a `session` header: pi reads no entry of it
/// (`loadEntriesFromFile` returns none), so `context` sends nothing, and
/// `import` now sends nothing either (it gave a user message): every entry is
/// kept as an extension line, and said so.
#[test]
fn a_pi_file_without_a_header_sends_nothing_through_import_or_context() {
    let lines = [
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":[{"type":"text","text":"again"}],"timestamp":2}}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    assert!(context_lines(dir.path(), "pi.jsonl").is_empty());
    let run = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("pi.jsonl:1: warning[no-session-header]"),
        "{run:?}"
    );
    let imported = jsonl(&dir.path().join("out.jsonl"));
    assert_eq!(imported.len(), 2, "{imported:#?}");
    for line in &imported {
        assert_eq!(line["role"], "extension", "{line}");
        assert_eq!(line["kind"], "pi.message", "{line}");
    }
    assert!(context_lines(dir.path(), "out.jsonl").is_empty());
}

/// Two pi entries on one line (a write that lost its newline): `import`
/// converts both, as `context` reads both, where it kept the line as one
/// unparsed entry.
#[test]
fn an_import_reads_a_joined_line_as_both_entries() {
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#.to_owned()
            + r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":[{"type":"text","text":"again"}],"timestamp":2}}"#,
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"third"}],"timestamp":3}}"#.to_owned(),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    let from_pi = context_lines(dir.path(), "pi.jsonl");
    assert_eq!(from_pi.len(), 3, "{from_pi:#?}");
    let run = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains("pi.jsonl:2: warning[lost-newline]"),
        "{run:?}"
    );
    let imported = jsonl(&dir.path().join("out.jsonl"));
    let ids: Vec<&str> = imported.iter().filter_map(|l| l["id"].as_str()).collect();
    assert_eq!(ids, ["s1:0", "a", "b", "c"]);
    assert_eq!(context_lines(dir.path(), "out.jsonl"), from_pi);
    // Streamed from standard input too.
    let piped = agentmsg_stdin(
        dir.path(),
        &["import", "-"],
        (lines.join("\n") + "\n").as_bytes(),
    );
    assert_eq!(
        piped.stdout,
        std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap()
    );
}

/// What pi passes on, read as pi reads it (issue 23, finding 3), with a
/// warning naming the line and the field: a compaction whose `tokensBefore`
/// is a fraction (it was dropped, and the whole history came back), tool-call
/// arguments that are missing or not an object, a `stopReason` pi-ai does
/// not name, a string `timestamp` and an image without `mimeType` (each
/// dropped its message). The import keeps the bytes and sends the same.
#[test]
fn what_pi_passes_on_is_read_as_pi_reads_it() {
    let usage = r#""usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
    let entry = |id: &str, parent: &str, message: String| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2025-01-01T00:00:02.000Z","message":{message}}}"#
        )
    };
    let assistant = |content: &str, stop: &str| {
        format!(
            r#"{{"role":"assistant","content":[{content}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",{usage},"stopReason":"{stop}","timestamp":3}}"#
        )
    };
    let result = |call: &str| {
        format!(
            r#"{{"role":"toolResult","toolCallId":"{call}","toolName":"read","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":4}}"#
        )
    };
    let png = common::PNG_1X1;
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":"2025-01-01T00:00:01.000Z"}}"#.to_owned(),
        entry("b", "a", assistant(r#"{"type":"toolCall","id":"t1","name":"read"}"#, "toolUse")),
        entry("c", "b", result("t1")),
        entry("d", "c", assistant(r#"{"type":"toolCall","id":"t2","name":"read","arguments":"{\"path\":\"a.rs\"}"}"#, "toolUse")),
        entry("e", "d", result("t2")),
        entry("f", "e", assistant(r#"{"type":"toolCall","id":"t3","name":"read","arguments":[1,2]}"#, "toolUse")),
        entry("g", "f", result("t3")),
        entry("h", "g", format!(r#"{{"role":"user","content":[{{"type":"image","data":"{png}"}}],"timestamp":5}}"#)),
        entry("i", "h", assistant(r#"{"type":"text","text":"I can't help with that."}"#, "refusal")),
        r#"{"type":"compaction","id":"j","parentId":"i","timestamp":"2025-01-01T00:00:09.000Z","summary":"We read files.","firstKeptEntryId":"a","tokensBefore":1234.5}"#.to_owned(),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    let run = agentmsg_in(dir.path(), &["context", "pi.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    for (line, field) in [
        (2, "message.timestamp"),
        (3, "message.content[0].arguments"),
        (5, "message.content[0].arguments"),
        (7, "message.content[0].arguments"),
        (9, "message.content[0].mimeType"),
        (10, "message.stopReason"),
        (11, "tokensBefore"),
    ] {
        assert!(
            run.stderr
                .contains(&format!("pi.jsonl:{line}: warning[lenient]: `{field}`")),
            "line {line}: {}",
            run.stderr
        );
    }
    let sent = context_lines(dir.path(), "pi.jsonl");
    // The summary, then every message from `a`: none dropped.
    assert_eq!(sent.len(), 10, "{sent:#?}");
    assert!(sent[0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("We read files."));
    assert_eq!(sent[1]["timestamp"], 1_735_689_601_000u64);
    assert_eq!(sent[2]["content"][0]["arguments"], json!({}));
    assert_eq!(sent[4]["content"][0]["arguments"], json!({"path": "a.rs"}));
    assert_eq!(sent[6]["content"][0]["arguments"], json!({"value": [1, 2]}));
    assert_eq!(sent[8]["content"][0]["mimeType"], "image/png");
    assert_eq!(sent[9]["stopReason"], "guardRail");

    let import = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(import.code, 0, "{import:?}");
    assert_eq!(context_lines(dir.path(), "out.jsonl"), sent);
}

/// Tool-call arguments nested past serde_json's limit of 128 levels (pi,
/// in JavaScript, reads them): the assistant message is sent, the arguments
/// whole, where it was dropped. They are kept as the text they are (read
/// without recursion), so nothing about them is lenient.
#[test]
fn deeply_nested_arguments_are_read_as_pi_reads_them() {
    let depth = 150;
    let nested = "[".repeat(depth) + &"]".repeat(depth);
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1}}"#.to_owned(),
        format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"t1","name":"deep","arguments":{{"x":{nested}}}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}},"stopReason":"toolUse","timestamp":2}}}}"#),
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"deep","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":3}}"#.to_owned(),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    for file in ["pi.jsonl", "out.jsonl"] {
        if file == "out.jsonl" {
            let run = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
            assert_eq!(run.code, 0, "{run:?}");
        }
        let run = agentmsg_in(dir.path(), &["context", file]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(!run.stderr.contains("warning"), "{file}: {}", run.stderr);
        let sent: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(sent.len(), 3, "{file}: {}", run.stdout);
        assert!(
            sent[1].contains(&format!(r#""arguments":{{"x":{nested}}}"#)),
            "{file}: {}",
            sent[1]
        );
    }
}

/// A pi session's tool-call arguments keep the order the model wrote (pi
/// writes `path`, `oldText`, `newText`; sorted, `newText` came first) in
/// `context`, in `import`, and in the request bodies `project` writes.
#[test]
fn tool_call_arguments_keep_their_order_through_the_command() {
    let args = r#"{"path":"a.rs","oldText":"x","newText":"y","edits":[{"z":1,"a":2}]}"#;
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"fix"}],"timestamp":1}}"#.to_owned(),
        format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"t1","name":"edit","arguments":{args}}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}},"stopReason":"toolUse","timestamp":2}}}}"#),
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"edit","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":3}}"#.to_owned(),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pi.jsonl"), lines.join("\n") + "\n").unwrap();
    let expected = format!(r#""arguments":{args}"#);
    let context = agentmsg_in(dir.path(), &["context", "pi.jsonl"]);
    assert_eq!(context.code, 0, "{context:?}");
    assert!(context.stdout.contains(&expected), "{}", context.stdout);
    let import = agentmsg_in(dir.path(), &["import", "pi.jsonl", "-o", "out.jsonl"]);
    assert_eq!(import.code, 0, "{import:?}");
    let imported = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(imported.contains(&expected), "{imported}");
    let cases = [
        ("anthropic-messages", format!(r#""input":{args}"#)),
        ("google-generative-ai", format!(r#""args":{args}"#)),
        (
            "openai-completions",
            format!(r#""arguments":{}"#, serde_json::to_string(args).unwrap()),
        ),
        (
            "openai-responses",
            format!(r#""arguments":{}"#, serde_json::to_string(args).unwrap()),
        ),
    ];
    for (api, sent) in cases {
        let run = agentmsg_in(
            dir.path(),
            &[
                "project",
                "--api",
                api,
                "--model",
                "m",
                "--compact",
                "out.jsonl",
            ],
        );
        assert_eq!(run.code, 0, "{api}: {run:?}");
        assert!(run.stdout.contains(&sent), "{api}: {}", run.stdout);
        // Pretty, each key on its line in the same order.
        let run = agentmsg_in(
            dir.path(),
            &["project", "--api", api, "--model", "m", "out.jsonl"],
        );
        let at = |key: &str| run.stdout.find(&format!("\"{key}\"")).unwrap_or(0);
        if !api.starts_with("openai") {
            assert!(
                at("path") < at("oldText") && at("oldText") < at("newText"),
                "{api}: {}",
                run.stdout
            );
            assert!(at("z") < at("a"), "{api}: {}", run.stdout);
        }
    }
}
