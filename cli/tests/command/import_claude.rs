//! `agentmsg import` of Claude Code logs: shapes found in real logs that the
//! documented layout does not show (each test a few hand-written lines shaped
//! like the real ones).

use crate::common;

use agentmsg_runtime::{to_llm, Message, Session};
use common::{agentmsg_in, project_in};

/// What the model sees at the transcript's leaf, one word a message: `user`,
/// `assistant(call ids)` or `result(call id)`.
fn sent(transcript: &str) -> Vec<String> {
    let session = Session::read(transcript.as_bytes()).unwrap();
    to_llm(&session.context(None).unwrap().messages)
        .into_iter()
        .map(|m| match m.into_owned() {
            Message::User(_) => "user".to_owned(),
            Message::Assistant(a) => {
                let calls: Vec<_> = a.tool_calls().map(|c| c.id.clone()).collect();
                format!("assistant({})", calls.join(","))
            }
            Message::ToolResult(r) => format!("result({})", r.tool_call_id),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The lines of a transcript, as JSON.
fn lines_of(transcript: &str) -> Vec<serde_json::Value> {
    transcript
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The ids of the transcript's roots (lines whose `parentId` is null).
fn roots(transcript: &str) -> Vec<String> {
    lines_of(transcript)
        .iter()
        .filter(|l| l["parentId"].is_null() && l.get("parentId").is_some())
        .map(|l| l["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The ids on the path from the root to the transcript's leaf.
fn path_ids(transcript: &str) -> Vec<String> {
    let session = Session::read(transcript.as_bytes()).unwrap();
    let path = session.path(None).unwrap();
    path.iter()
        .filter_map(|e| e.id().map(|id| id.as_str().to_owned()))
        .collect()
}

/// A compaction's summary as the model sees it (framed as pi frames it).
fn framed(summary: &str) -> String {
    format!(
        "{}{summary}{}",
        agentmsg_runtime::custom::COMPACTION_SUMMARY_PREFIX,
        agentmsg_runtime::custom::COMPACTION_SUMMARY_SUFFIX
    )
}

/// What the model sees at the transcript's leaf, as text a message.
fn sent_texts(transcript: &str) -> Vec<String> {
    let session = Session::read(transcript.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    to_llm(&context.messages)
        .iter()
        .map(|m| match (m.as_user(), m.as_assistant()) {
            (Some(u), _) => u.text(),
            (_, Some(a)) => a.text_content(),
            _ => String::new(),
        })
        .collect()
}

/// Imports `lines` and checks the transcript, which must have no problem.
fn import(lines: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "session.jsonl", lines);
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(check.code, 0, "{check:?}\n{out}");
    out
}

/// Parallel calls: Claude Code writes each `tool_use` block as an entry of
/// its own (one `message.id`), and gives each result its call's entry as
/// parent, so the first result is a sibling of the second call's entry.
const PARALLEL: &[&str] = &[
    r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"write a and b"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"thinking","thinking":"Both at once.","signature":"SIG"}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a"}}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a2","timestamp":"2026-01-01T00:00:01.100Z"}"#,
    r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"b"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":20}},"uuid":"a3","timestamp":"2026-01-01T00:00:01.200Z"}"#,
    r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"wrote a"}]},"uuid":"r1","toolUseResult":{"success":true},"sourceToolAssistantUUID":"a2","timestamp":"2026-01-01T00:00:02.000Z"}"#,
    r#"{"parentUuid":"a3","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result","content":"wrote b"}]},"uuid":"r2","toolUseResult":{"success":true},"sourceToolAssistantUUID":"a3","timestamp":"2026-01-01T00:00:02.100Z"}"#,
    r#"{"parentUuid":"r2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Both written."}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":3}},"uuid":"a4","timestamp":"2026-01-01T00:00:03.000Z"}"#,
];

#[test]
fn the_results_of_parallel_calls_are_all_on_the_path_to_the_leaf() {
    let out = import(PARALLEL);
    assert_eq!(
        sent(&out),
        [
            "user",
            "assistant(t1,t2)",
            "result(t1)",
            "result(t2)",
            "assistant()"
        ],
        "{out}"
    );
    // The thinking keeps its signature through the merge.
    assert!(out.contains(r#""signature":"SIG""#), "{out}");
}

/// The results written in the other order (the second call finished first),
/// a progress line between a call and its result, and the next reply naming
/// the result written first: all still one path.
#[test]
fn parallel_results_in_any_order_and_through_progress_lines_stay_on_the_path() {
    let mut lines = PARALLEL[..4].to_vec();
    lines.extend([
        r#"{"parentUuid":"a3","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result","content":"wrote b"}]},"uuid":"r2","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"progress","data":{"type":"hook_progress","hookEvent":"PostToolUse"},"toolUseID":"t1","parentToolUseID":"t1","uuid":"p1","timestamp":"2026-01-01T00:00:02.050Z"}"#,
        r#"{"parentUuid":"p1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"wrote a"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.100Z"}"#,
        r#"{"parentUuid":"r2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Both written."}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":3}},"uuid":"a4","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    ]);
    let out = import(&lines);
    assert_eq!(
        sent(&out),
        [
            "user",
            "assistant(t1,t2)",
            "result(t2)",
            "result(t1)",
            "assistant()"
        ],
        "{out}"
    );
    // The progress line is kept.
    assert!(out.contains("hook_progress"), "{out}");
}

/// A branch (an edit of an earlier prompt) stays a branch: only results of
/// one response are chained.
#[test]
fn a_rewind_after_parallel_results_is_still_a_branch() {
    let mut lines = PARALLEL.to_vec();
    lines.push(
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"only a, please"},"uuid":"u2","timestamp":"2026-01-01T00:01:00.000Z"}"#,
    );
    let out = import(&lines);
    assert_eq!(sent(&out), ["user"], "{out}");
}

/// A log holding no message (a file of one system entry, as Claude Code
/// leaves after a model switch) is converted, and said to hold none: the
/// import exits 1, not a quiet success.
#[test]
fn a_log_without_messages_is_converted_and_said_to_have_none() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "session.jsonl",
        &[
            r#"{"parentUuid":"gone","isSidechain":false,"sessionId":"s","type":"system","content":"Model limit reached, now using another","isMeta":false,"uuid":"y1","level":"warning","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("warning[no-messages]"), "{run:?}");
    assert!(run.stdout.contains(r#""kind":"claude.system""#), "{run:?}");
}

/// Claude Code writes a failed request as an assistant entry of its own
/// (`isApiErrorMessage`, model `<synthetic>`): a failed turn, which the
/// context does not send back as something the model said.
#[test]
fn an_api_error_entry_is_a_failed_turn() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"e1","type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 Overloaded"}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}},"isApiErrorMessage":true,"error":"overloaded","uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    ]);
    assert!(out.contains(r#""stopReason":"error""#), "{out}");
    assert!(out.contains(r#""errorMessage":"overloaded""#), "{out}");
    assert!(out.contains("API Error: 529 Overloaded"), "{out}");
}

/// A tool the API runs itself (`server_tool_use`, answered by a result block
/// in the same message) is no call the client answers: kept whole as a
/// provider block of the Messages API (not a call left without a result), and
/// replayed in place to Anthropic only.
#[test]
fn a_server_tool_use_is_kept_and_not_an_unanswered_call() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"news?"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"news"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com","title":"Example"}]},{"type":"text","text":"Here is the news."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    ]);
    assert!(!out.contains(r#""type":"toolCall""#), "{out}");
    assert_eq!(sent(&out), ["user", "assistant()"], "{out}");
    let session = Session::read(out.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    let reply = context.messages[1]
        .as_llm()
        .and_then(Message::as_assistant)
        .unwrap();
    let kept: Vec<String> = reply
        .content
        .iter()
        .filter_map(|block| match block {
            agentmsg_runtime::AssistantContent::ProviderBlock(p) => {
                assert_eq!(p.api, "anthropic-messages");
                let block: serde_json::Value = serde_json::from_str(p.block.get()).unwrap();
                block["type"].as_str().map(str::to_owned)
            }
            _ => None,
        })
        .collect();
    assert_eq!(kept, ["server_tool_use", "web_search_tool_result"], "{out}");
    // Replayed in place to Anthropic, left out (and said) elsewhere.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("out.jsonl"), &out).unwrap();
    let (anthropic, _) = project_in(
        dir.path(),
        "anthropic-messages",
        "claude-opus-4-5",
        "out.jsonl",
    );
    let body = &anthropic.stdout;
    let (search, result, text) = (
        body.find(r#""type": "server_tool_use""#).expect(body),
        body.find(r#""type": "web_search_tool_result""#)
            .expect(body),
        body.find("Here is the news.").expect(body),
    );
    assert!(search < result && result < text, "{body}");
    let (openai, _) = project_in(dir.path(), "openai-completions", "gpt-4o", "out.jsonl");
    assert!(!openai.stdout.contains("srvtoolu_1"), "{openai:?}");
    assert!(openai.stderr.contains("provider"), "{openai:?}");
}

/// Claude Code sometimes writes an entry twice (the same uuid, the same
/// content): the copy is left out, with a warning, instead of two lines with
/// one id that no session can read. An entry reusing a uuid with other
/// content is kept under an id of its own.
#[test]
fn an_entry_written_twice_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let reply = r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#;
    common::write_lines(
        dir.path(),
        "session.jsonl",
        &[
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
            reply,
            reply,
            r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"again"},"uuid":"u2","timestamp":"2026-01-01T00:00:02.000Z"}"#,
            r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"other"},"uuid":"u2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("session.jsonl:3: warning[duplicate-entry]"),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains("session.jsonl:5: warning[duplicate-uuid]"),
        "{run:?}"
    );
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(out.matches(r#""text":"hello""#).count(), 1, "{out}");
    assert!(out.contains(r#""id":"u2~5""#), "{out}");
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}\n{out}");
    assert_eq!(sent(&out), ["user", "assistant()", "user"], "{out}");
}

/// A progress entry written between two blocks of one response (a hook run
/// as the first call starts, before the second call is written), the second
/// block naming it as parent: the response is still one message, and every
/// result on the path.
#[test]
fn a_progress_entry_inside_a_response_does_not_split_it() {
    let out = import(&[
        PARALLEL[0],
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a"}}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":9}},"uuid":"a2","timestamp":"2026-01-01T00:00:01.100Z"}"#,
        r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"progress","data":{"type":"hook_progress","hookEvent":"PreToolUse","hookName":"PreToolUse:Write"},"toolUseID":"t1","parentToolUseID":"t1","uuid":"p1","timestamp":"2026-01-01T00:00:01.150Z"}"#,
        r#"{"parentUuid":"p1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"b"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":20}},"uuid":"a3","timestamp":"2026-01-01T00:00:01.200Z"}"#,
        r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"wrote a"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        r#"{"parentUuid":"a3","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result","content":"wrote b"}]},"uuid":"r2","timestamp":"2026-01-01T00:00:02.100Z"}"#,
        r#"{"parentUuid":"r2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Both written."}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":3}},"uuid":"a4","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    ]);
    assert_eq!(
        sent(&out),
        [
            "user",
            "assistant(t1,t2)",
            "result(t1)",
            "result(t2)",
            "assistant()"
        ],
        "{out}"
    );
    assert!(out.contains("PreToolUse:Write"), "{out}");
}

/// A PDF the user attached (a `document` block) and an image given by URL
/// keep their form instead of becoming their JSON as text.
#[test]
fn a_document_and_an_image_url_keep_their_form() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"type":"text","text":"read these"},{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="},"title":"spec.pdf"},{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    ]);
    let line: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        line["content"][1],
        serde_json::json!({"type":"document","data":"JVBERi0=","mimeType":"application/pdf","title":"spec.pdf"}),
        "{out}"
    );
    assert_eq!(
        line["content"][2],
        serde_json::json!({"type":"image","url":"https://example.com/a.png"}),
        "{out}"
    );
}

/// A compaction that keeps the last messages (Claude Code 2.1's
/// `preservedSegment`): the kept messages were written before the boundary
/// with their first parents, and the next prompt names the last of them.
/// Claude Code relinks the first kept message to the summary as it loads the
/// log, so the model sees the summary and the kept messages, not the
/// compacted history.
#[test]
fn the_messages_a_compaction_keeps_follow_its_summary() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"one"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done one"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
        r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"two"},"uuid":"u2","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a"}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
        r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"a's text"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:04.000Z"}"#,
        r#"{"parentUuid":null,"logicalParentUuid":"r1","isSidechain":false,"sessionId":"s","type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":9000,"preservedSegment":{"headUuid":"u2","anchorUuid":"cs","tailUuid":"r1"}},"uuid":"cb","timestamp":"2026-01-01T00:00:05.000Z"}"#,
        r#"{"parentUuid":"cb","isSidechain":false,"sessionId":"s","type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: the user said one."},"uuid":"cs","timestamp":"2026-01-01T00:00:06.000Z"}"#,
        r#"{"parentUuid":"r1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"three"},"uuid":"u3","timestamp":"2026-01-01T00:00:07.000Z"}"#,
        r#"{"parentUuid":"u3","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a3","timestamp":"2026-01-01T00:00:08.000Z"}"#,
    ]);
    assert_eq!(
        sent(&out),
        [
            "user",
            "user",
            "assistant(t1)",
            "result(t1)",
            "user",
            "assistant()"
        ],
        "{out}"
    );
    let summary = out.find("Summary: the user said one.").unwrap();
    let head = out.find(r#""text":"two""#).unwrap();
    assert!(
        summary < head,
        "the kept messages follow the summary\n{out}"
    );
    assert!(out.contains(r#""id":"u2","parentId":"cs""#), "{out}");
    // The boundary, holding the summary, follows what the first kept
    // message followed: the compacted turn stays on the path, one tree.
    let lines = lines_of(&out);
    let boundary = lines.iter().find(|l| l["id"] == "cb").unwrap();
    assert_eq!(boundary["role"], "compactionSummary", "{out}");
    assert_eq!(boundary["parentId"], "a1", "{out}");
    assert_eq!(roots(&out), ["u1"], "{out}");
    assert_eq!(path_ids(&out)[..3], ["u1", "a1", "cb"], "{out}");
}

/// A text citing what a web search found keeps its `citations`, as the
/// Anthropic decoder keeps them, and they go back to Anthropic with it.
#[test]
fn a_cited_text_keeps_its_citations() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"news?"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"news"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.com","title":"Example","encrypted_content":"ENC"}]},{"type":"text","text":"It rained.","citations":[{"type":"web_search_result_location","url":"https://example.com","title":"Example","cited_text":"rain","encrypted_index":"IDX"}]}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    ]);
    let session = Session::read(out.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    let reply = context.messages[1]
        .as_llm()
        .and_then(Message::as_assistant)
        .unwrap();
    let cited = reply
        .content
        .iter()
        .find_map(|block| match block {
            agentmsg_runtime::AssistantContent::Text(t) => t.citations.as_ref(),
            _ => None,
        })
        .expect(&out);
    assert!(cited.get().contains(r#""encrypted_index":"IDX""#), "{out}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("out.jsonl"), &out).unwrap();
    let (anthropic, _) = project_in(
        dir.path(),
        "anthropic-messages",
        "claude-opus-4-5",
        "out.jsonl",
    );
    assert!(anthropic.stdout.contains("IDX"), "{anthropic:?}");
}

/// A `tool_use` block's fields a tool call has no place for are said, not
/// dropped in silence: a call made by a server tool's code (its `caller`
/// not `direct`) loses what says so. Claude Code's usual `caller` (direct)
/// is no loss and says nothing.
#[test]
fn a_call_field_that_cannot_be_kept_is_said() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "session.jsonl",
        &[
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"list"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
            r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"},"caller":{"type":"direct"}},{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"pwd"},"caller":{"type":"code_execution_20250825","tool_id":"srvtoolu_1"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
            r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"a"},{"tool_use_id":"t2","type":"tool_result","content":"/w"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("session.jsonl:2: warning[field-not-kept]: `caller` of the tool_use `t2`"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("`t1`"), "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(
        sent(&out),
        ["user", "assistant(t1,t2)", "result(t1)", "result(t2)"],
        "{out}"
    );
}

/// A prompt the user typed while Claude worked: Claude Code 2.x records it as
/// a `queued_command` attachment (not a user entry) and sends it to the model
/// with the next request; the model sees the user's words, and the entry's
/// place in the tree is kept.
#[test]
fn a_prompt_queued_while_claude_works_is_a_user_message() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "session.jsonl",
        &[
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"fix the build"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
            r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
            r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"error"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
            r#"{"parentUuid":"r1","isSidechain":false,"sessionId":"s","type":"attachment","attachment":{"type":"queued_command","prompt":"use the release profile","imagePasteIds":[]},"uuid":"q1","timestamp":"2026-01-01T00:00:03.000Z"}"#,
            r#"{"parentUuid":"q1","isSidechain":false,"sessionId":"s","type":"attachment","attachment":{"type":"hook_additional_context","hookName":"PostToolUse","content":["ok"]},"uuid":"h1","timestamp":"2026-01-01T00:00:03.500Z"}"#,
            r#"{"parentUuid":"h1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Building with --release."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a2","timestamp":"2026-01-01T00:00:04.000Z"}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("session.jsonl:4: warning[queued-prompt]"),
        "{run:?}"
    );
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(
        sent(&out),
        ["user", "assistant(t1)", "result(t1)", "user", "assistant()"],
        "{out}"
    );
    let queued = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|l| l["id"] == "q1")
        .unwrap();
    assert_eq!(
        queued,
        serde_json::json!({"role":"user","content":[{"type":"text","text":"use the release profile"}],"timestamp":1767225603000u64,"id":"q1","parentId":"r1"}),
        "{out}"
    );
    // Any other attachment is kept whole, in its place.
    assert!(out.contains(r#""kind":"claude.attachment""#), "{out}");
}

/// A ToolSearch result (Claude Code 2.x with deferred MCP tools) is a list of
/// `tool_reference` blocks, which a tool result cannot hold: kept as their
/// JSON in text, and said, not in silence.
#[test]
fn a_tool_reference_result_is_kept_as_text_and_said() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "session.jsonl",
        &[
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"open the page"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
            r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:mcp__web__open"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
            r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"tool_reference","tool_name":"mcp__web__open"}]}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(
            "session.jsonl:3: warning[result-block-as-text]: the result of `t1` has `tool_reference` blocks"
        ),
        "{run:?}"
    );
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(out.contains(r#"mcp__web__open"#), "{out}");
    assert_eq!(sent(&out), ["user", "assistant(t1)", "result(t1)"], "{out}");
}

/// Claude Code 2.1 can keep only part of the last messages: the boundary's
/// `preservedMessages.uuids` (of `allUuids`) are relinked after the anchor,
/// each after the one before it, so the model sees the summary and those
/// messages only.
#[test]
fn only_the_messages_a_compaction_keeps_follow_its_summary() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"one"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done one"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
        r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"two"},"uuid":"u2","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done two"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
        r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"three"},"uuid":"u3","timestamp":"2026-01-01T00:00:04.000Z"}"#,
        r#"{"parentUuid":"u3","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done three"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a3","timestamp":"2026-01-01T00:00:05.000Z"}"#,
        r#"{"parentUuid":null,"logicalParentUuid":"a3","isSidechain":false,"sessionId":"s","type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":9000,"preservedMessages":{"anchorUuid":"cs","uuids":["u3","a3"],"allUuids":["u2","a2","u3","a3"]}},"uuid":"cb","timestamp":"2026-01-01T00:00:06.000Z"}"#,
        r#"{"parentUuid":"cb","isSidechain":false,"sessionId":"s","type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: one and two."},"uuid":"cs","timestamp":"2026-01-01T00:00:07.000Z"}"#,
        r#"{"parentUuid":"a3","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"four"},"uuid":"u4","timestamp":"2026-01-01T00:00:08.000Z"}"#,
        r#"{"parentUuid":"u4","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_4","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done four"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a4","timestamp":"2026-01-01T00:00:09.000Z"}"#,
    ]);
    assert_eq!(roots(&out), ["u1"], "{out}");
    assert_eq!(
        sent_texts(&out),
        [
            &framed("Summary: one and two."),
            "three",
            "done three",
            "four",
            "done four"
        ],
        "{out}"
    );
}

/// Kept messages that are the anchor itself or above it (metadata no
/// relink can honour without making the tree a loop) are left as written.
#[test]
fn kept_messages_above_their_anchor_are_not_relinked_into_a_loop() {
    let out = import(&[
        r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"one"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"done one"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
        r#"{"parentUuid":null,"logicalParentUuid":"a1","isSidechain":false,"sessionId":"s","type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":9,"preservedSegment":{"headUuid":"u1","anchorUuid":"a1","tailUuid":"a1"},"preservedMessages":{"anchorUuid":"a1","uuids":["u1"]}},"uuid":"cb","timestamp":"2026-01-01T00:00:02.000Z"}"#,
        r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"two"},"uuid":"u2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    ]);
    assert_eq!(sent(&out), ["user", "assistant()", "user"], "{out}");
}

/// A Claude Code message's `stop_reason` is the Messages API's: `import`
/// maps it as `decode` does (one rule, the runtime's), where `refusal` was
/// `error` and `pause_turn` was `stop`.
#[test]
fn stop_reasons_are_mapped_as_decode_maps_them() {
    for (reason, expected) in [
        ("refusal", "guardRail"),
        ("pause_turn", "paused"),
        ("end_turn", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "toolUse"),
    ] {
        assert_eq!(
            agentmsg_runtime::providers::anthropic::stop_reason(reason).as_str(),
            expected
        );
        let reply = format!(
            r#"{{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{{"type":"text","text":"no"}}],"stop_reason":"{reason}","usage":{{"input_tokens":1,"output_tokens":1}}}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}}"#
        );
        let out = import(&[
            r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"hello"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
            &reply,
        ]);
        assert!(
            out.contains(&format!(r#""stopReason":"{expected}""#)),
            "{reason}: {out}"
        );
    }
}

/// A call's arguments keep the order the model wrote them in (sorted,
/// `edits` would come first and `a` before `z`), at every depth: in the
/// imported transcript and in the request body `project` builds from it.
#[test]
fn tool_call_arguments_keep_the_models_order() {
    let args =
        r#"{"path":"a.rs","old_string":"x","new_string":"y","edits":[{"z":1,"a":{"y":2,"b":3}}]}"#;
    let call = format!(
        r#"{{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{{"type":"tool_use","id":"t1","name":"Edit","input":{args}}}],"stop_reason":"tool_use","usage":{{"input_tokens":5,"output_tokens":9}}}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}}"#
    );
    let out = import(&[
        PARALLEL[0],
        &call,
        r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"edited"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
    ]);
    assert!(out.contains(&format!(r#""arguments":{args}"#)), "{out}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("out.jsonl"), &out).unwrap();
    let run = agentmsg_in(
        dir.path(),
        &[
            "project",
            "--api",
            "anthropic-messages",
            "--model",
            "claude-opus-4-5",
            "--compact",
            "out.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(r#""input":{args}"#)),
        "{}",
        run.stdout
    );
}

/// One response written as Claude Code 2.1 writes it when it runs each call
/// as its piece arrives: piece (call t1), its result, a hook's attachment
/// and progress, the next piece (call t2) naming the attachment as parent,
/// its result, then the next response. Every piece says `stop_reason: null`
/// and the response's usage.
const SPLIT: &[&str] = &[
    r#"{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{},"timestamp":"2026-01-01T00:00:00.000Z"},"isSnapshotUpdate":false}"#,
    r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"write a and b"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Writing."}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":40,"cache_read_input_tokens":100,"cache_creation_input_tokens":30}},"requestId":"req_1","uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"a"}}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":40,"cache_read_input_tokens":100,"cache_creation_input_tokens":30}},"requestId":"req_1","uuid":"a2","timestamp":"2026-01-01T00:00:01.100Z"}"#,
    r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"progress","data":{"type":"hook_progress","hookEvent":"PostToolUse","hookName":"PostToolUse:Write"},"toolUseID":"t1","parentToolUseID":"t1","uuid":"p1","timestamp":"2026-01-01T00:00:01.150Z"}"#,
    r#"{"parentUuid":"a2","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"wrote a"}]},"uuid":"r1","toolUseResult":{"success":true},"timestamp":"2026-01-01T00:00:01.200Z"}"#,
    r#"{"parentUuid":"r1","isSidechain":false,"sessionId":"s","type":"attachment","attachment":{"type":"hook_success","hookName":"PostToolUse:Write","content":""},"uuid":"h1","timestamp":"2026-01-01T00:00:01.250Z"}"#,
    r#"{"type":"permission-mode","permissionMode":"acceptEdits","sessionId":"s"}"#,
    r#"{"parentUuid":"h1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"b"}}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":40,"cache_read_input_tokens":100,"cache_creation_input_tokens":30}},"requestId":"req_1","uuid":"a3","timestamp":"2026-01-01T00:00:01.300Z"}"#,
    r#"{"parentUuid":"a3","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result","content":"wrote b"}]},"uuid":"r2","toolUseResult":{"success":true},"timestamp":"2026-01-01T00:00:02.000Z"}"#,
    r#"{"parentUuid":"r2","isSidechain":false,"sessionId":"s","type":"attachment","attachment":{"type":"hook_success","hookName":"PostToolUse:Write","content":""},"uuid":"h2","timestamp":"2026-01-01T00:00:02.050Z"}"#,
    r#"{"parentUuid":"h2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Both written."}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":3}},"requestId":"req_2","uuid":"a4","timestamp":"2026-01-01T00:00:03.000Z"}"#,
];

/// A response split around its calls' results, hook attachments and
/// progress lines is one assistant message with both calls, the response's
/// stop reason (`toolUse`: its pieces said none) and its usage once; the
/// results follow it on the path to the leaf, and `stats` counts the
/// response once.
#[test]
fn a_response_split_around_its_results_is_one_message_with_its_usage_once() {
    let out = import(SPLIT);
    assert_eq!(
        sent(&out),
        [
            "user",
            "assistant(t1,t2)",
            "result(t1)",
            "result(t2)",
            "assistant()"
        ],
        "{out}"
    );
    let session = Session::read(out.as_bytes()).unwrap();
    let replies: Vec<_> = session
        .entries()
        .iter()
        .filter_map(|e| e.message()?.as_llm()?.as_assistant().cloned())
        .collect();
    assert_eq!(replies.len(), 2, "{out}");
    assert_eq!(
        replies[0].stop_reason,
        agentmsg_runtime::StopReason::ToolUse
    );
    assert_eq!(replies[0].content.len(), 3);
    assert_eq!(
        (replies[0].usage.output, replies[0].usage.cache_read),
        (40, 100)
    );
    for hook in ["PostToolUse:Write", "acceptEdits", "file-history-snapshot"] {
        assert!(out.contains(hook), "{hook}: {out}");
    }

    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "session.jsonl", SPLIT);
    let run = agentmsg_in(dir.path(), &["stats", "--json", "session.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(stats["kinds"]["assistant"], 2, "{stats:#}");
    assert_eq!(stats["tokens"]["output"], 43, "{stats:#}");
    assert_eq!(stats["tokens"]["cacheRead"], 100, "{stats:#}");
    assert_eq!(stats["stopReasons"]["toolUse"], 1, "{stats:#}");
}

/// A piece of a response that cannot join it (a prompt of the user came
/// between) is a message of its own, which carries no usage: the
/// response's usage counts once, and the split is said.
#[test]
fn a_split_that_cannot_be_undone_counts_the_usage_once_and_says_so() {
    let lines = [
        SPLIT[1],
        SPLIT[2],
        r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"and quickly"},"uuid":"u2","timestamp":"2026-01-01T00:00:01.050Z"}"#,
        r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":40,"cache_read_input_tokens":100,"cache_creation_input_tokens":30}},"requestId":"req_1","uuid":"a2","timestamp":"2026-01-01T00:00:01.100Z"}"#,
    ];
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "session.jsonl", &lines);
    let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("session.jsonl:4: warning[split-response]"),
        "{}",
        run.stderr
    );
    let stats = agentmsg_in(dir.path(), &["stats", "--json", "session.jsonl"]);
    let stats: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(stats["kinds"]["assistant"], 2, "{stats:#}");
    assert_eq!(stats["tokens"]["output"], 40, "{stats:#}");
}

/// A response's one-hour cache writes are kept (`cacheWrite1h`), a part of
/// its cache writes.
#[test]
fn one_hour_cache_writes_are_kept() {
    let out = import(&[
        SPLIT[1],
        r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Hi."}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":4,"cache_read_input_tokens":0,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}}},"requestId":"req_1","uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    ]);
    let session = Session::read(out.as_bytes()).unwrap();
    let reply = session.entry("a1").unwrap().message().unwrap();
    let usage = &reply.as_llm().unwrap().as_assistant().unwrap().usage;
    assert_eq!(
        (usage.cache_write, usage.cache_write_1h),
        (300, 200),
        "{out}"
    );
}

/// A compacted session: the boundary (written as a root, its
/// `logicalParentUuid` naming the reply before it) and the summary after it.
const COMPACTED: &[&str] = &[
    r#"{"parentUuid":null,"isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"fix the parser"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z"}"#,
    r#"{"parentUuid":"u1","isSidechain":false,"sessionId":"s","type":"assistant","requestId":"req_1","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"p.rs"}}],"stop_reason":"tool_use","usage":{"input_tokens":100,"output_tokens":10,"cache_creation_input_tokens":40,"cache_read_input_tokens":7}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z"}"#,
    r#"{"parentUuid":"a1","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"fn parse() {}"}]},"uuid":"r1","timestamp":"2026-01-01T00:00:02.000Z"}"#,
    r#"{"parentUuid":"r1","isSidechain":false,"sessionId":"s","type":"assistant","requestId":"req_2","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Fixed."}],"stop_reason":"end_turn","usage":{"input_tokens":200,"output_tokens":20}},"uuid":"a2","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    r#"{"parentUuid":null,"logicalParentUuid":"a2","isSidechain":false,"sessionId":"s","type":"system","subtype":"compact_boundary","content":"Conversation compacted","level":"info","compactMetadata":{"trigger":"manual","preTokens":5000},"uuid":"cb","timestamp":"2026-01-01T00:00:04.000Z"}"#,
    r#"{"parentUuid":"cb","isSidechain":false,"sessionId":"s","type":"user","isCompactSummary":true,"isVisibleInTranscriptOnly":true,"message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: the parser was fixed."},"uuid":"cs","timestamp":"2026-01-01T00:00:05.000Z"}"#,
    r#"{"parentUuid":"cs","isSidechain":false,"sessionId":"s","type":"user","message":{"role":"user","content":"now the docs"},"uuid":"u2","timestamp":"2026-01-01T00:00:06.000Z"}"#,
    r#"{"parentUuid":"u2","isSidechain":false,"sessionId":"s","type":"assistant","requestId":"req_3","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Docs done."}],"stop_reason":"end_turn","usage":{"input_tokens":300,"output_tokens":30}},"uuid":"a3","timestamp":"2026-01-01T00:00:07.000Z"}"#,
];

/// `out`, [`COMPACTED`] imported, is one tree: every line kept, one root,
/// the compacted history on the path to the leaf.
fn assert_compacted_is_one_tree(out: &str) {
    assert_eq!(out.lines().count(), COMPACTED.len(), "{out}");
    assert_eq!(roots(out), ["u1"], "{out}");
    assert_eq!(
        path_ids(out),
        ["u1", "a1", "r1", "a2", "cb", "cs", "u2", "a3"],
        "{out}"
    );
}

/// A compacted Claude Code session is one tree: the boundary is a
/// `compactionSummary` of the summary after it, following the history it
/// compacted, so that history is on the path to the leaf while the context
/// there starts at the summary, then what follows. No line is lost: the
/// boundary is in the summary's `details`, the summary's entry an
/// `extension` line; the usage, the page and `check` are unchanged.
#[test]
fn a_compacted_session_is_one_tree() {
    let out = import(COMPACTED);
    assert_compacted_is_one_tree(&out);
    let summary = "This session is being continued from a previous conversation. Summary: the parser was fixed.";
    assert_eq!(
        sent_texts(&out),
        [
            framed(summary),
            "now the docs".to_owned(),
            "Docs done.".to_owned()
        ],
        "{out}"
    );
    let lines = lines_of(&out);
    let boundary = &lines[4];
    assert_eq!(boundary["role"], "compactionSummary", "{out}");
    assert_eq!(boundary["summary"], summary, "{out}");
    assert_eq!(boundary["tokensBefore"], 5000, "{out}");
    assert_eq!(boundary["parentId"], "a2", "{out}");
    assert_eq!(
        boundary["details"]["claudeCode"],
        serde_json::from_str::<serde_json::Value>(COMPACTED[4]).unwrap(),
        "{out}"
    );
    assert_eq!(lines[5]["role"], "extension", "{out}");
    assert_eq!(lines[5]["kind"], "claude.user", "{out}");
    assert_eq!(
        lines[5]["data"],
        serde_json::from_str::<serde_json::Value>(COMPACTED[5]).unwrap(),
        "{out}"
    );

    // Every reply counted once, before and after the compaction, by the
    // session and by `agentmsg usage` over the log alike.
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(dir.path(), "session.jsonl", COMPACTED);
    std::fs::write(dir.path().join("out.jsonl"), &out).unwrap();
    let total = Session::read(out.as_bytes()).unwrap().total_usage();
    assert_eq!(
        (
            total.input,
            total.output,
            total.cache_write,
            total.cache_read
        ),
        (600, 60, 40, 7)
    );
    let usage = agentmsg_in(
        dir.path(),
        &["usage", "--session", "--json", "session.jsonl"],
    );
    assert_eq!(usage.code, 0, "{usage:?}");
    let report: serde_json::Value = serde_json::from_str(&usage.stdout).unwrap();
    assert_eq!(report["totals"]["inputTokens"], 600, "{report:#}");
    assert_eq!(report["totals"]["outputTokens"], 60, "{report:#}");
    assert_eq!(report["totals"]["cacheCreationTokens"], 40, "{report:#}");
    assert_eq!(report["totals"]["cacheReadTokens"], 7, "{report:#}");

    // The page shows the compacted history and the summary.
    let run = agentmsg_in(
        dir.path(),
        &["export", "out.jsonl", "--html", "-o", "page.html"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let page = crate::page_entries::markup(
        &std::fs::read_to_string(dir.path().join("page.html")).unwrap(),
    );
    assert!(page.contains("fix the parser"), "the compacted history");
    assert!(page.contains("the parser was fixed"), "the summary");
    // `context` over the log itself (imported as it is read) alike.
    let context = agentmsg_in(dir.path(), &["context", "session.jsonl"]);
    assert_eq!(context.code, 0, "{context:?}");
    assert_eq!(context.stdout.lines().count(), 3, "{context:?}");
}

/// A boundary that cannot join the history it compacted starts a new root
/// as written (today's reading), and is said with its line: one that no
/// summary follows, and one whose `logicalParentUuid` names no entry.
#[test]
fn a_boundary_that_cannot_join_its_history_is_a_root_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let mut no_summary: Vec<String> = COMPACTED.iter().map(|l| (*l).to_owned()).collect();
    no_summary[5] = no_summary[5].replace(r#""isCompactSummary":true,"#, "");
    let mut no_parent: Vec<String> = COMPACTED.iter().map(|l| (*l).to_owned()).collect();
    no_parent[4] = no_parent[4].replace(
        r#""logicalParentUuid":"a2""#,
        r#""logicalParentUuid":"nobody""#,
    );
    for (lines, why) in [
        (no_summary, "no summary follows it"),
        (
            no_parent,
            "`logicalParentUuid` `nobody` names no entry before it",
        ),
    ] {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        common::write_lines(dir.path(), "session.jsonl", &lines);
        let run = agentmsg_in(dir.path(), &["import", "session.jsonl", "-o", "out.jsonl"]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            run.stderr
                .contains("session.jsonl:5: warning[compact-boundary]"),
            "{run:?}"
        );
        assert!(run.stderr.contains(why), "{run:?}");
        let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
        assert_eq!(out.lines().count(), COMPACTED.len(), "{out}");
        assert_eq!(roots(&out), ["u1", "cb"], "{out}");
        assert!(out.contains(r#""kind":"claude.system""#), "{out}");
        assert!(!out.contains("compactionSummary"), "{out}");
        // The context starts at the boundary, Claude Code's summary sent as
        // the user message it is.
        let texts = sent_texts(&out);
        assert!(
            texts[0].starts_with("This session is being continued"),
            "{texts:?}"
        );
        assert_eq!(texts.len(), 3, "{texts:?}");
    }
}

/// The compacted Claude Code logs of the conformance data: the one whose
/// boundary has its summary is one tree (the rewound branch it compacted on
/// the path, the context starting at the summary); the other's boundaries
/// (one no summary names, one reusing a uuid) are said at their lines.
#[test]
fn the_compacted_claude_code_logs_of_the_conformance_data_are_read_as_one_tree() {
    let Some(data) = common::conformance_or_skip(None) else {
        return;
    };
    let root = data.join("transcripts/claude-code");
    let dir = tempfile::tempdir().unwrap();
    let log = root.join("claude-code-log-fixtures/dag_compact_after_rewind.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(dir.path().join("dag.jsonl"), &text).unwrap();
    let run = agentmsg_in(dir.path(), &["import", "dag.jsonl", "-o", "dag.out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stderr.contains("compact-boundary"), "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("dag.out.jsonl")).unwrap();
    assert_eq!(out.lines().count(), text.lines().count(), "{out}");
    assert_eq!(roots(&out), ["u1"], "{out}");
    assert_eq!(
        path_ids(&out),
        ["u1", "a1", "b2u", "b2a", "b2u2", "b2a2", "cb", "cs", "p1u", "p1a"],
        "{out}"
    );
    assert_eq!(
        sent_texts(&out),
        [
            framed("This session is being continued from a previous conversation that ran out of context. Summary: the user asked for a plan."),
            "After compaction".to_owned(),
            "Final answer".to_owned()
        ],
        "{out}"
    );
    let check = agentmsg_in(dir.path(), &["check", "dag.out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");

    let log = root.join("agent-sessions-stage0/small.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(dir.path().join("small.jsonl"), &text).unwrap();
    let run = agentmsg_in(
        dir.path(),
        &["import", "small.jsonl", "-o", "small.out.jsonl"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    for said in [
        "small.jsonl:21: warning[compact-boundary]: a compaction's boundary left as written, a root: no summary follows it",
        "small.jsonl:51: warning[compact-boundary]: a compaction's boundary left as written, a root: its uuid",
    ] {
        assert!(run.stderr.contains(said), "{said}\n{run:?}");
    }
}

/// A subagent's log (every entry a sidechain's) compacted alike: its lines
/// are written in the first pass, which knows its summary on meeting the
/// boundary.
#[test]
fn a_compacted_subagent_log_is_one_tree() {
    let lines: Vec<String> = COMPACTED
        .iter()
        .map(|l| l.replace(r#""isSidechain":false"#, r#""isSidechain":true"#))
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let out = import(&lines);
    assert_compacted_is_one_tree(&out);
    let texts = sent_texts(&out);
    assert!(
        texts[0].ends_with("the parser was fixed.\n</summary>"),
        "{texts:?}"
    );
    assert_eq!(texts[1..], ["now the docs", "Docs done."], "{texts:?}");
}
