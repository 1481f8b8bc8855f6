//! `agentmsg import` of Codex CLI rollouts: shapes found in real rollouts that
//! the documented layout does not show (each test a few hand-written lines
//! shaped like the real ones).

use crate::common;

use agentmsg_runtime::{to_llm, Session};
use common::{agentmsg_in, project_in};

/// A directory holding `rollout.jsonl`: an OpenAI session's `session_meta`
/// line, then `lines`.
fn rollout(lines: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let meta = r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"s","cwd":"/w","model_provider":"openai"}}"#;
    let all: Vec<&str> = std::iter::once(meta).chain(lines.iter().copied()).collect();
    common::write_lines(dir.path(), "rollout.jsonl", &all);
    dir
}

/// The text of each message the model sees at the transcript's leaf.
fn sent_texts(transcript: &str) -> Vec<String> {
    let session = Session::read(transcript.as_bytes()).unwrap();
    to_llm(&session.context(None).unwrap().messages)
        .into_iter()
        .map(|m| {
            let m = m.into_owned();
            match (m.as_user(), m.as_assistant()) {
                (Some(u), _) => u.text(),
                (_, Some(a)) => a.text_content(),
                _ => String::new(),
            }
        })
        .collect()
}

/// A remote compaction (Codex 0.4x and later) writes an empty `message` and
/// the history that replaces the old one in `replacement_history`: the model
/// sees that history and what follows, and the line is kept with the number
/// of each item in its place (each text is written once).
#[test]
fn a_compaction_with_a_replacement_history_is_the_history_the_model_sees() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first question"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"old answer"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"first question"}]},{"type":"compaction","encrypted_content":"OPAQUE"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":5,"total_tokens":55}}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:05.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second question"}]}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    // Nothing of the compacted line is lost, and nothing written twice: the
    // encrypted item is there once, the kept line numbers the items that
    // follow it (entries `codex:LINE/N`) in their place.
    assert_eq!(run.stdout.matches("OPAQUE").count(), 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains(r#""payload":{"message":"","replacement_history":[0,1]}"#),
        "{}",
        run.stdout
    );
    // The encrypted history is a reply holding it as a provider block.
    assert_eq!(
        sent_texts(&run.stdout),
        ["first question", "", "second question"],
        "{}",
        run.stdout
    );
    // The answer before the compaction is still in the file, off the path.
    assert!(run.stdout.contains("old answer"));
    std::fs::write(dir.path().join("out.jsonl"), &run.stdout).unwrap();
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");
    // To the Responses API it goes back in place, as Codex sends it.
    let (project, body) = project_in(dir.path(), "openai-responses", "gpt-5-codex", "out.jsonl");
    let kinds: Vec<&str> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            i["type"]
                .as_str()
                .unwrap_or(i["role"].as_str().unwrap_or(""))
        })
        .collect();
    assert!(kinds == ["user", "compaction", "user"], "{body:#}");
    assert!(project.stdout.contains("OPAQUE"), "{body:#}");
    // Any other model cannot read it: left out, and said.
    let (other, _) = project_in(
        dir.path(),
        "anthropic-messages",
        "claude-opus-4-5",
        "out.jsonl",
    );
    assert!(!other.stdout.contains("OPAQUE"), "{other:?}");
    assert!(other.stderr.contains("compaction"), "{other:?}");
}

/// An item of a replacement history with fields its message has no place
/// for (Codex writes a user message's `id` and `encrypted_content`) stays in
/// the kept line as written: nothing of it is lost.
#[test]
fn a_replacement_history_item_the_messages_do_not_hold_whole_is_kept_as_written() {
    let item = r#"{"type":"message","role":"user","id":"msg-0","content":[{"type":"input_text","text":"kept question"}],"encrypted_content":"SEALED"}"#;
    let plain = r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"plain question"}]}"#;
    let line = format!(
        r#"{{"timestamp":"2026-01-01T00:00:03.000Z","type":"compacted","payload":{{"message":"","replacement_history":[{plain},{item}]}}}}"#
    );
    let dir = rollout(&[&line]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let kept = run
        .stdout
        .lines()
        .find(|l| l.contains("codex.compacted"))
        .unwrap();
    assert!(
        kept.contains(&format!(r#""replacement_history":[0,{item}]"#)),
        "{kept}"
    );
    assert_eq!(
        run.stdout.matches("plain question").count(),
        1,
        "{}",
        run.stdout
    );
    assert_eq!(
        sent_texts(&run.stdout),
        ["plain question", "kept question"],
        "{}",
        run.stdout
    );
}

/// A rollout holding no message (Codex stopped before the first turn) is
/// converted, and said to hold none: the import exits 1.
#[test]
fn a_rollout_without_messages_is_converted_and_said_to_have_none() {
    let dir = rollout(&[]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("warning[no-messages]"), "{run:?}");
    assert!(run.stdout.contains("codex.session_meta"), "{run:?}");
}

/// Codex writes each assistant `message` item with its `phase` (commentary
/// before calls, the final answer last), which it sends back: kept in the
/// text's signature, where the Responses codec reads it; a refusal part is
/// kept as text.
#[test]
fn an_assistant_message_keeps_its_phase_and_a_refusal_its_text() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"look"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.500Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.3-codex"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}],"phase":"commentary"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.100Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_1"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a.rs"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"There is a.rs."},{"type":"refusal","refusal":"Not that."}],"phase":"final_answer"}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains(r#""signature":"{\"v\":1,\"phase\":\"commentary\"}""#),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(r#""signature":"{\"v\":1,\"phase\":\"final_answer\"}""#),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(r#""text":"Not that.""#),
        "{}",
        run.stdout
    );
    // The Responses request built from it sends each phase back.
    std::fs::write(dir.path().join("out.jsonl"), &run.stdout).unwrap();
    let project = agentmsg_in(
        dir.path(),
        &[
            "project",
            "out.jsonl",
            "--api",
            "openai-responses",
            "--model",
            "gpt-5.3-codex",
        ],
    );
    assert_eq!(project.code, 0, "{project:?}");
    assert!(
        project.stdout.contains(r#""phase": "commentary""#),
        "{}",
        project.stdout
    );
    assert!(
        project.stdout.contains(r#""phase": "final_answer""#),
        "{}",
        project.stdout
    );
}

/// A result line's id is its own (`codex:<line>`), not its call's.
#[test]
fn a_result_line_has_its_own_id() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "rollout.jsonl",
        &[
            r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"ls"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}"#,
            r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a.rs"}}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let result = run.stdout.lines().last().unwrap();
    assert!(result.contains(r#""id":"codex:3""#), "{result}");
    assert!(result.contains(r#""toolCallId":"call_1""#), "{result}");
}

/// A `web_search_call` is a search the provider ran: no call the client
/// answers and no result item, so it is kept whole as a provider block of
/// the response, as the Responses decoder keeps it (not a call left without a
/// result); a tool's output of content items keeps its image as an image.
#[test]
fn a_web_search_is_no_unanswered_call_and_an_output_image_stays_an_image() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"weather, and the chart"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"weather paris"}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sunny. Now the chart."}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.100Z","type":"response_item","payload":{"type":"function_call","name":"view_image","arguments":"{\"path\":\"chart.png\"}","call_id":"call_1"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"chart.png"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo="}]}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    // The search item is kept as written, its keys in their order.
    assert!(
        out.contains(r#"{"type":"providerBlock","api":"openai-responses","block":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"weather paris"}}}"#),
        "{out}"
    );
    assert!(out.contains("weather paris"), "{out}");
    assert!(
        out.contains(r#"{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}"#),
        "{out}"
    );
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}\n{out}");
    // One assistant message: the search did not end the response.
    assert_eq!(out.matches(r#""role":"assistant""#).count(), 1, "{out}");
}

/// Codex's backtrack writes a `thread_rolled_back` event dropping the last
/// user turns: what follows branches off before the first dropped turn, so
/// the model sees the history without them (they stay in the file).
#[test]
fn a_rollback_branches_off_before_the_dropped_turns() {
    let dir = tempfile::tempdir().unwrap();
    common::write_lines(
        dir.path(),
        "rollout.jsonl",
        &[
            r#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"first"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"one"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:05.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}"#,
            r#"{"timestamp":"2026-01-01T00:00:06.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second, again"}]}}"#,
            r#"{"timestamp":"2026-01-01T00:00:07.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two again"}]}}"#,
        ],
    );
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert_eq!(
        sent_texts(&out),
        [
            "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
            "first",
            "one",
            "second, again",
            "two again"
        ],
        "{out}"
    );
    assert!(out.contains(r#""text":"two""#), "{out}");
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}\n{out}");

    // More turns than there are: every turn goes, the context before the
    // first stays.
    let text = std::fs::read_to_string(dir.path().join("rollout.jsonl")).unwrap();
    let text = text.replace(r#""num_turns":1"#, r#""num_turns":5"#);
    std::fs::write(dir.path().join("rollout.jsonl"), text).unwrap();
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sent_texts(&run.stdout),
        [
            "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>",
            "second, again",
            "two again"
        ],
        "{}",
        run.stdout
    );
}

/// Codex writes its reasoning items without an id (and sends them back so):
/// imported, they replay to the Responses API with their encrypted content,
/// where the model reads them, and without an id.
#[test]
fn reasoning_without_an_id_replays_to_the_responses_api() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:00.500Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"Greet."}],"content":null,"encrypted_content":"gAAAA-noid"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi."}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"again"}]}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let (project, body) = project_in(dir.path(), "openai-responses", "gpt-5-codex", "out.jsonl");
    let input = body["input"].as_array().unwrap();
    let reasoning: Vec<&serde_json::Value> =
        input.iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(reasoning.len(), 1, "{body:#}");
    assert_eq!(reasoning[0]["encrypted_content"], "gAAAA-noid");
    assert!(reasoning[0].get("id").is_none(), "{body:#}");
    assert!(!project.stderr.contains("thinking"), "{project:?}");
}

/// A call item's own id goes back with the call (as the Responses decoder
/// keeps it), and a field a tool call has no place for is said, not dropped
/// in silence.
#[test]
fn a_call_keeps_its_item_id_and_says_what_it_cannot_keep() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:00.500Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"search"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call","id":"fc_1","name":"lookup","namespace":"mcp__docs","arguments":"{\"q\":\"x\"}","call_id":"call_1"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"found"}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(
            "rollout.jsonl:4: warning[field-not-kept]: `namespace` of the function_call `call_1`"
        ),
        "{run:?}"
    );
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(out.contains(r#""signature":"fc_1""#), "{out}");
    let (_, body) = project_in(dir.path(), "openai-responses", "gpt-5-codex", "out.jsonl");
    let call = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap();
    assert_eq!(call["id"], "fc_1", "{body:#}");
    assert_eq!(call["call_id"], "call_1", "{body:#}");
}

/// A turn the user interrupts while calls run (`turn_aborted`) leaves them
/// with no output; Codex sends each back with the output `aborted`, so the
/// import gives it that result (said) instead of a call `check` refuses as
/// unanswered. A call whose output comes right after the abort (the tool
/// ended after all) has that output; one written after the next prompt is
/// kept, not a second result.
#[test]
fn a_call_cut_by_an_aborted_turn_has_the_result_codex_sends() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:00.500Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/w","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run the tests"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make test\"}","call_id":"call_cut"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.100Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"ls\"}","call_id":"call_done"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1","reason":"interrupted"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_done","output":"Makefile"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:05.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"the other file first"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:05.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_cut","output":"late"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:06.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("rollout.jsonl:6: warning[call-aborted]: the call `call_cut`"),
        "{run:?}"
    );
    assert!(!run.stderr.contains("`call_done` has no output"), "{run:?}");
    assert!(
        run.stderr.contains("rollout.jsonl:9: warning[late-output]"),
        "{run:?}"
    );
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    let session = Session::read(out.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    let results: Vec<(String, String)> = to_llm(&context.messages)
        .iter()
        .filter_map(|m| m.as_tool_result())
        .map(|r| (r.tool_call_id.clone(), r.text()))
        .collect();
    assert_eq!(
        results,
        [
            ("call_done".to_owned(), "Makefile".to_owned()),
            ("call_cut".to_owned(), "aborted".to_owned())
        ],
        "{out}"
    );
    assert_eq!(
        sent_texts(&out),
        ["run the tests", "", "", "", "the other file first", "ok"],
        "{out}"
    );
    // Sent as Codex sends it: the call's output `aborted`, nothing made up.
    let (project, _) = project_in(dir.path(), "openai-responses", "gpt-5-codex", "out.jsonl");
    assert!(!project.stderr.contains("synthetic"), "{project:?}");
    assert!(
        project.stdout.contains(r#""output": "aborted""#),
        "{project:?}"
    );
}

/// A tool search (Codex 0.13x and later: the model asks for tools it has
/// not loaded) is a `tool_search_call` and its `tool_search_output`: both go
/// back to the Responses API in place, the output with its call, instead of
/// extension lines no model sees that split the response they are in.
#[test]
fn a_tool_search_and_its_output_go_back_in_place() {
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:00.500Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/w","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"add it to my calendar"}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"Need a calendar tool."}],"content":null,"encrypted_content":"ENC1"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.100Z","type":"response_item","payload":{"type":"tool_search_call","call_id":"call_s","status":"completed","execution":"client","arguments":{"query":"calendar"}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.200Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":2,"total_tokens":15}}}}"#,
        r#"{"timestamp":"2026-01-01T00:00:02.300Z","type":"response_item","payload":{"type":"tool_search_output","call_id":"call_s","status":"completed","execution":"client","tools":[{"type":"function","name":"mcp__cal__add","parameters":{"type":"object"}}]}}"#,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call","name":"mcp__cal__add","arguments":"{\"what\":\"lunch\"}","call_id":"call_a"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:04.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_a","output":"added"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:05.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Added."}]}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let check = agentmsg_in(dir.path(), &["check", "out.jsonl"]);
    assert_eq!(check.code, 0, "{check:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(!out.contains("codex.tool_search"), "{out}");
    // Both in the message of the response that made the call, in order,
    // the output after its call (as the Responses encoder takes a client
    // call back only with its output); the next response is a message of
    // its own.
    let session = Session::read(out.as_bytes()).unwrap();
    let context = session.context(None).unwrap();
    let replies: Vec<Vec<String>> = to_llm(&context.messages)
        .iter()
        .filter_map(|m| m.as_assistant())
        .map(|a| {
            a.content
                .iter()
                .map(|b| match b {
                    agentmsg_runtime::AssistantContent::ProviderBlock(p) => {
                        assert_eq!(p.api, "openai-responses");
                        p.type_name().to_owned()
                    }
                    agentmsg_runtime::AssistantContent::Thinking(_) => "thinking".to_owned(),
                    agentmsg_runtime::AssistantContent::ToolCall(c) => c.id.clone(),
                    agentmsg_runtime::AssistantContent::Text(t) => t.text.clone(),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        replies,
        [
            vec!["thinking", "tool_search_call", "tool_search_output"],
            vec!["call_a"],
            vec!["Added."]
        ],
        "{out}"
    );
    // Projected, the search goes back with its output, in order, and nothing
    // of it is dropped.
    let (project, body) = project_in(dir.path(), "openai-responses", "gpt-5-codex", "out.jsonl");
    let kinds: Vec<&str> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["type"].as_str())
        .filter(|t| t.starts_with("tool_search"))
        .collect();
    assert_eq!(
        kinds,
        ["tool_search_call", "tool_search_output"],
        "{body:#}"
    );
    assert!(!project.stderr.contains("dropped"), "{project:?}");
}

/// A `function_call`'s arguments keep the order the model wrote them in
/// (sorted, `edits` would come first and `a` before `z`), at every depth:
/// in the imported transcript and in the request body `project` builds.
#[test]
fn function_call_arguments_keep_the_models_order() {
    let args = r#"{"path":"a.rs","old":"x","new":"y","edits":[{"z":1,"a":{"y":2,"b":3}}]}"#;
    let call = format!(
        r#"{{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{{"type":"function_call","name":"edit","arguments":{},"call_id":"call_1"}}}}"#,
        serde_json::to_string(args).unwrap()
    );
    let dir = rollout(&[
        r#"{"timestamp":"2026-01-01T00:00:00.500Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"edit"}]}}"#,
        &call,
        r#"{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"done"}}"#,
    ]);
    let run = agentmsg_in(dir.path(), &["import", "rollout.jsonl", "-o", "out.jsonl"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = std::fs::read_to_string(dir.path().join("out.jsonl")).unwrap();
    assert!(out.contains(&format!(r#""arguments":{args}"#)), "{out}");
    let run = agentmsg_in(
        dir.path(),
        &[
            "project",
            "--api",
            "openai-responses",
            "--model",
            "gpt-5-codex",
            "--compact",
            "out.jsonl",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let sent = format!(r#""arguments":{}"#, serde_json::to_string(args).unwrap());
    assert!(run.stdout.contains(&sent), "{}", run.stdout);
}
