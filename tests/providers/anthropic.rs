//! Anthropic Messages codec: request bodies against the published schema and our
//! own role rules, the recorded responses and streams, snapshots.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common;
use crate::scenarios::{check_request_bodies, Api, APIS};
use agentmsg::project::ChangeKind;
use agentmsg::providers::{anthropic, Request, ResponseError, StreamDecode, ToolSpec};
use agentmsg::{AssistantContent, AssistantMessage, Message, StopReason};
use serde_json::{json, Value};

use common::{change_kinds, chunk_lines, file_name, lines, pi_messages};

const SCHEMA: &str = "anthropic-messages-request.schema.json";
const MODEL: &str = "claude-sonnet-4-5";
use crate::transcripts::{PDF, PNG};

// ---------------------------------------------------------------------------
// Transcripts

fn assistant(content: Value, stop: &str, model: &str) -> String {
    crate::transcripts::assistant_line(&random_transcripts::FLAVOR, content, stop, model)
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "read",
            "Read a file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        ToolSpec::new("now", "", json!({})),
    ]
}

/// Every case: a name and its request.
fn cases() -> Vec<(String, Request<'static>)> {
    let user = |text: &str| json!({"role": "user", "content": text, "timestamp": 1}).to_string();
    let result = |id: &str, content: Value, err: bool| {
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read", "content": content,
            "isError": err, "timestamp": 3, "details": {"bytes": 3}})
        .to_string()
    };
    let call = |id: &str| json!({"type": "toolCall", "id": id, "name": "read", "arguments": {"path": "a.rs"}});
    let signed =
        json!({"type": "thinking", "thinking": "Let me look.", "signature": "EqQBCkgIARABGAIiQ=="});
    let mut out: Vec<(String, Vec<String>, Option<&str>)> = vec![
        ("text".into(), vec![
            json!({"role": "system", "content": "You are terse."}).to_string(),
            user("Hello"),
            assistant(json!([{"type": "text", "text": "Hi."}]), "stop", MODEL),
            user("Bye"),
        ], Some("Be helpful.")),
        ("every_block".into(), vec![
            json!({"role": "user", "content": [
                {"type": "text", "text": "Look at these"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "image", "url": "https://example.com/cat.jpg"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "document", "data": PDF, "mimeType": "application/pdf", "title": "spec.pdf"},
                {"type": "document", "url": "https://example.com/a.pdf"},
                {"type": "document", "data": "aGVsbG8gd29ybGQ=", "mimeType": "text/plain"},
            ], "timestamp": 1}).to_string(),
            assistant(json!([signed, {"type": "redactedThinking", "data": "EmwKAhgBEgy3va3pzix"},
                {"type": "text", "text": "Reading."}, call("toolu_01")]), "toolUse", MODEL),
            result("toolu_01", json!([{"type": "text", "text": "fn main() {}"},
                {"type": "image", "data": PNG, "mimeType": "image/png"}]), false),
            assistant(json!([{"type": "text", "text": "Done."}]), "stop", MODEL),
            user("Thanks"),
        ], Some("sys")),
        ("parallel_tool_calls".into(), vec![
            user("Read two files"),
            assistant(json!([{"type": "text", "text": "Both."}, call("toolu_a"),
                {"type": "toolCall", "id": "toolu_b", "name": "now", "arguments": {}}]), "toolUse", MODEL),
            result("toolu_a", json!([{"type": "text", "text": "A"}]), false),
            json!({"role": "toolResult", "toolCallId": "toolu_b", "toolName": "now",
                "content": [{"type": "text", "text": "12:00"}], "isError": false}).to_string(),
            user("and now?"),
        ], None),
        ("tool_result_images".into(), vec![
            user("Screenshot please"),
            assistant(json!([call("toolu_s")]), "toolUse", MODEL),
            result("toolu_s", json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]), false),
        ], None),
        ("thinking_signatures".into(), vec![
            user("Think"),
            assistant(json!([signed, {"type": "text", "text": "Thought."}]), "stop", MODEL),
            user("Again"),
            assistant(json!([{"type": "thinking", "thinking": "unsigned"}, {"type": "text", "text": "ok"}]), "stop", MODEL),
            user("Other model"),
            assistant(json!([{"type": "thinking", "thinking": "foreign", "signature": "c2ln"},
                {"type": "text", "text": "from opus"}]), "stop", "claude-opus-4-5"),
            user("last"),
        ], None),
        ("failed_turns".into(), vec![
            user("Try"),
            assistant(json!([{"type": "text", "text": "Partial"}, call("toolu_f")]), "error", MODEL),
            result("toolu_f", json!([{"type": "text", "text": "late"}]), false),
            assistant(json!([{"type": "text", "text": "cut"}]), "aborted", MODEL),
            user("Try again"),
        ], None),
        ("orphaned_calls".into(), vec![
            user("Go"),
            assistant(json!([call("toolu_orphan")]), "toolUse", MODEL),
            user("Never mind"),
            result("toolu_nobody", json!([{"type": "text", "text": "stray"}]), true),
            user("Still there?"),
        ], None),
        ("odd_ids".into(), vec![
            user("ids"),
            assistant(json!([call("functions.read:0"), call(&"x".repeat(100)), call("call|abc/def")]), "toolUse", MODEL),
            result("functions.read:0", json!([{"type": "text", "text": "1"}]), false),
            result(&"x".repeat(100), json!([{"type": "text", "text": "2"}]), true),
            result("call|abc/def", json!([]), true),
        ], None),
        ("same_role_runs".into(), vec![
            user("one"),
            user("two"),
            assistant(json!([{"type": "text", "text": "a"}]), "stop", MODEL),
            assistant(json!([{"type": "text", "text": "b"}]), "stop", MODEL),
            json!({"role": "system", "content": "Late system note."}).to_string(),
            user("three"),
        ], None),
        ("unsupported_media".into(), vec![
            json!({"role": "user", "content": [
                {"type": "image", "data": "Qk0=", "mimeType": "image/bmp"},
                {"type": "document", "data": "UEsDBA==", "mimeType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "title": "a.docx"},
                {"type": "audio", "data": "SUQz", "mimeType": "audio/mpeg"},
                {"type": "text", "text": ""},
            ], "timestamp": 1}).to_string(),
        ], None),
        ("prefill".into(), vec![
            user("Write JSON"),
            assistant(json!([{"type": "text", "text": "{\n  "}]), "stop", MODEL),
        ], None),
        ("empty_blocks".into(), vec![
            json!({"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "real"}], "timestamp": 1}).to_string(),
            assistant(json!([{"type": "text", "text": ""}]), "stop", MODEL),
            user("more"),
        ], None),
    ];
    out.iter_mut().for_each(|_| ());
    out.into_iter()
        .map(|(name, ls, system)| {
            let mut request = Request::new(MODEL, lines(&ls.join("\n"))).with_tools(tools());
            if let Some(system) = system {
                request = request.with_system(system);
            }
            if name == "text" {
                request = request.with_max_tokens(1000);
            }
            (name, request)
        })
        .collect()
}

fn pi_cases() -> Vec<(String, Request<'static>)> {
    if common::conformance_or_skip(Some("the pi-session cases")).is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (file, model) in [
        ("before-compaction.jsonl", "claude-opus-4-5"),
        ("large-session.jsonl", "claude-sonnet-4-5"),
    ] {
        let messages = pi_messages(file);
        assert!(
            messages.len() > 500,
            "{file}: only {} messages",
            messages.len()
        );
        let stem = file.trim_end_matches(".jsonl").replace('-', "_");
        // Whole sessions, and prefixes that end at every kind of message.
        for cut in [7, 40, 41, 42, 150, messages.len()] {
            let cut = cut.min(messages.len());
            let request = Request::new(model, messages[..cut].to_vec())
                .with_system("You are a coding agent.")
                .with_tools(tools());
            out.push((format!("pi_{stem}_{cut}"), request));
        }
        // The same session for another model: no thinking replays.
        out.push((
            format!("pi_{stem}_other_model"),
            Request::new("claude-haiku-4-5", messages.clone()),
        ));
    }
    out
}

// ---------------------------------------------------------------------------
// Our own rules, for what the schema does not catch

fn role_errors(body: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return vec!["no messages array".into()];
    };
    let id_ok = |id: &str| {
        !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let mut previous_role = "";
    let mut open_calls: BTreeSet<String> = BTreeSet::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap_or_default();
        if role == previous_role {
            errors.push(format!("messages[{i}]: two {role} turns in a row"));
        }
        if i == 0 && role != "user" {
            errors.push("messages[0] is not a user turn".into());
        }
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        if blocks.is_empty() {
            errors.push(format!("messages[{i}]: empty content"));
        }
        let mut answered = BTreeSet::new();
        let mut seen_other = false;
        for (j, block) in blocks.iter().enumerate() {
            let kind = block["type"].as_str().unwrap_or_default();
            let at = format!("messages[{i}].content[{j}]");
            match (role, kind) {
                ("assistant", "image" | "document" | "tool_result") => {
                    errors.push(format!("{at}: {kind} in an assistant turn"))
                }
                ("user", "tool_use" | "thinking" | "redacted_thinking") => {
                    errors.push(format!("{at}: {kind} in a user turn"))
                }
                _ => {}
            }
            match kind {
                "tool_result" => {
                    if seen_other {
                        errors.push(format!("{at}: tool_result after other content"));
                    }
                    let id = block["tool_use_id"].as_str().unwrap_or_default().to_owned();
                    if !open_calls.contains(&id) {
                        errors.push(format!(
                            "{at}: result `{id}` answers no call of the previous turn"
                        ));
                    }
                    if !id_ok(&id) {
                        errors.push(format!("{at}: bad id `{id}`"));
                    }
                    answered.insert(id);
                    for inner in block["content"].as_array().into_iter().flatten() {
                        if !matches!(inner["type"].as_str(), Some("text" | "image")) {
                            errors.push(format!("{at}: {} inside a tool_result", inner["type"]));
                        }
                    }
                }
                "text" => {
                    seen_other = true;
                    if block["text"].as_str().is_none_or(str::is_empty) {
                        errors.push(format!("{at}: empty text"));
                    }
                }
                "thinking" => {
                    if block["signature"].as_str().is_none_or(str::is_empty) {
                        errors.push(format!("{at}: thinking without signature"));
                    }
                }
                _ => seen_other = true,
            }
        }
        if role == "user" {
            for id in open_calls.difference(&answered) {
                errors.push(format!("messages[{i}]: call `{id}` has no result"));
            }
        }
        open_calls.clear();
        if role == "assistant" {
            for block in &blocks {
                if block["type"] == "tool_use" {
                    let id = block["id"].as_str().unwrap_or_default().to_owned();
                    if !id_ok(&id) {
                        errors.push(format!("messages[{i}]: bad tool_use id `{id}`"));
                    }
                    if !open_calls.insert(id.clone()) {
                        errors.push(format!("messages[{i}]: duplicate tool_use id `{id}`"));
                    }
                }
            }
        }
        previous_role = role;
    }
    if let Some(text) = messages
        .last()
        .filter(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_array()?.last()?["text"].as_str())
    {
        if text.trim_end() != text {
            errors.push("the final assistant turn ends in whitespace".into());
        }
    }
    if !open_calls.is_empty() && previous_role == "assistant" {
        // A trailing assistant turn with calls is a prefill; the API refuses it.
        errors.push(format!("the last turn has unanswered calls {open_calls:?}"));
    }
    errors
}

#[test]
fn every_request_body_validates_against_the_schema_and_role_rules() {
    let all: Vec<_> = cases()
        .into_iter()
        .chain(pi_cases())
        .chain(common::generated_cases(
            40,
            proptest::collection::vec(random_transcripts::message(), 1..10),
            |messages| Request::new(MODEL, messages).with_tools(tools()),
        ))
        .collect();
    assert!(all.len() >= 20);
    check_request_bodies(CODEC, SCHEMA, &all, |_, body| role_errors(body));
}

pub(super) fn encode(name: &str) -> agentmsg::providers::Encoded {
    let (_, request) = cases()
        .into_iter()
        .find(|(n, _)| n == name)
        .expect("case exists");
    anthropic::encode_request(&request).expect("encodes")
}

#[test]
fn system_prompt_and_max_tokens() {
    let body = encode("text").body;
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "Be helpful."}, {"type": "text", "text": "You are terse."}])
    );
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(body["model"], MODEL);
    let default = encode("parallel_tool_calls").body;
    assert_eq!(default["max_tokens"], anthropic::DEFAULT_MAX_TOKENS);
    assert!(default.get("system").is_none());
    assert_eq!(
        default["tools"][0]["input_schema"]["required"],
        json!(["path"])
    );
    assert_eq!(
        default["tools"][1],
        json!({"name": "now", "input_schema": {"type": "object", "properties": {}}})
    );
}

#[test]
fn every_block_type_maps_to_its_anthropic_form() {
    let encoded = encode("every_block");
    let body = encoded.body;
    let user = &body["messages"][0]["content"];
    assert_eq!(
        user[1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": PNG})
    );
    assert_eq!(
        user[2]["source"],
        json!({"type": "url", "url": "https://example.com/cat.jpg"})
    );
    assert_eq!(user[3]["type"], "text", "audio becomes a placeholder");
    assert!(user[3]["text"]
        .as_str()
        .unwrap_or_default()
        .contains("audio/wav"));
    assert_eq!(user[4]["source"]["media_type"], "application/pdf");
    assert_eq!(user[4]["title"], "spec.pdf");
    assert!(user[4].get("context").is_none());
    assert_eq!(
        user[5]["source"],
        json!({"type": "url", "url": "https://example.com/a.pdf"})
    );
    assert_eq!(
        user[6]["source"],
        json!({"type": "text", "media_type": "text/plain", "data": "hello world"})
    );
    let assistant = &body["messages"][1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": "Let me look.", "signature": "EqQBCkgIARABGAIiQ=="})
    );
    assert_eq!(
        assistant[1],
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"})
    );
    assert_eq!(
        assistant[3],
        json!({"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.rs"}})
    );
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"][1]["type"], "image",
        "images stay inside tool results"
    );
    assert!(result.get("is_error").is_none());
    let kinds = change_kinds(&encoded.report);
    assert!(
        kinds.contains(&(0, ChangeKind::UnsupportedContent)),
        "{kinds:?}"
    );
}

/// The request schema takes a document `title` of at most 500 characters: a
/// longer one is cut there (on a character, not a byte) and reported; one of
/// 500 goes as it is.
#[test]
fn a_long_document_title_is_cut_to_500_characters() {
    let document = |title: String| {
        let line = json!({"role": "user", "content": [
            {"type": "document", "data": "JVBERi0=", "mimeType": "application/pdf", "title": title}
        ]});
        let message: Message = serde_json::from_value(line).expect("a user message");
        anthropic::encode_request(&Request::new(MODEL, vec![message])).expect("encodes")
    };
    let exact = "é".repeat(anthropic::MAX_DOCUMENT_TITLE);
    let encoded = document(exact.clone());
    assert_eq!(
        encoded.body["messages"][0]["content"][0]["title"],
        exact.as_str()
    );
    assert!(
        encoded.report.changes.is_empty(),
        "{:?}",
        encoded.report.changes
    );

    let encoded = document(format!("{exact}ü and more"));
    assert_eq!(
        encoded.body["messages"][0]["content"][0]["title"],
        exact.as_str()
    );
    let changes = change_kinds(&encoded.report);
    assert_eq!(changes, [(0, ChangeKind::UnsupportedContent)]);
}

#[test]
fn parallel_results_merge_into_one_user_turn_before_other_content() {
    let encoded = encode("parallel_tool_calls");
    let messages = encoded.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(messages.len(), 3);
    let content = messages[2]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let kinds: Vec<_> = content
        .iter()
        .map(|b| b["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(kinds, ["tool_result", "tool_result", "text"]);
    assert_eq!(content[1]["tool_use_id"], "toolu_b");
    let merged: Vec<_> = encoded
        .report
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::MergedTurns)
        .map(|c| c.index)
        .collect();
    assert_eq!(
        merged,
        [4],
        "only the user text joining the results is a merge"
    );
}

#[test]
fn same_role_runs_are_merged_and_reported() {
    let encoded = encode("same_role_runs");
    let roles: Vec<_> = encoded.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["role"].clone())
        .collect();
    assert_eq!(roles, [json!("user"), json!("assistant"), json!("user")]);
    assert_eq!(encoded.body["system"][0]["text"], "Late system note.");
    let kinds = change_kinds(&encoded.report);
    assert!(kinds.contains(&(1, ChangeKind::MergedTurns)), "{kinds:?}");
    assert!(kinds.contains(&(3, ChangeKind::MergedTurns)), "{kinds:?}");
    assert!(
        kinds.contains(&(4, ChangeKind::UnsupportedContent)),
        "{kinds:?}"
    );
}

#[test]
fn thinking_replays_only_with_a_signature_from_the_same_model() {
    let encoded = encode("thinking_signatures");
    let body = &encoded.body;
    let thinking: Vec<_> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "thinking")
        .collect();
    assert_eq!(
        thinking,
        [
            json!({"type": "thinking", "thinking": "Let me look.", "signature": "EqQBCkgIARABGAIiQ=="})
        ]
    );
    assert!(
        encoded
            .report
            .changes
            .iter()
            .filter(|c| c.kind == ChangeKind::DroppedThinking)
            .count()
            >= 2
    );
}

#[test]
fn failed_turns_orphans_and_odd_ids_are_repaired() {
    let failed = encode("failed_turns").body;
    let text = failed.to_string();
    assert!(
        !text.contains("toolu_f") && !text.contains("Partial"),
        "{text}"
    );
    let orphan = encode("orphaned_calls").body;
    let text = orphan.to_string();
    assert!(!text.contains("toolu_nobody"));
    assert!(text.contains("\"tool_use_id\":\"toolu_orphan\""));
    let encoded = encode("odd_ids");
    let ids: Vec<String> = encoded.body["messages"][1]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| b["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(
        ids.iter()
            .all(|id| id.len() <= 64 && !id.contains(['.', ':', '|', '/'])),
        "{ids:?}"
    );
    assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), 3);
    let results: Vec<String> = encoded.body["messages"][2]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids, results);
    assert_eq!(
        encoded.body["messages"][2]["content"][2]["content"],
        json!([{"type": "text", "text": "error"}])
    );
}

#[test]
fn nothing_anthropic_cannot_read_is_sent_broken() {
    let encoded = encode("unsupported_media");
    let content = encoded.body["messages"][0]["content"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(content.len(), 3);
    assert!(content.iter().all(|b| b["type"] == "text"), "{content:?}");
    assert_eq!(
        encoded.report.changes.len(),
        3,
        "{:?}",
        encoded.report.changes
    );
    let empty = encode("empty_blocks").body;
    assert_eq!(
        empty["messages"].as_array().map(Vec::len),
        Some(1),
        "{empty}"
    );
}

// ---------------------------------------------------------------------------
// Responses and streams

const CODEC: &Api = &APIS[0];

/// A chunk file may hold several recorded streams one after another (the
/// programmatic tool-calling fixture does): each ends at its `message_stop`.
fn split_streams(lines: &[String]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    for line in lines {
        if let Some(last) = out.last_mut() {
            last.push(line.clone());
        }
        if line.contains("\"type\":\"message_stop\"") {
            out.push(Vec::new());
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn decode_all_chunks(path: &Path) -> Result<Vec<AssistantMessage>, ResponseError> {
    split_streams(&chunk_lines(path))
        .iter()
        .map(|stream| CODEC.decode_events(stream.iter().map(String::as_str)))
        .collect()
}

/// The first (usually only) stream of a chunk file.
fn decode_chunks(path: &Path) -> Result<AssistantMessage, ResponseError> {
    let lines = split_streams(&chunk_lines(path))
        .into_iter()
        .next()
        .unwrap_or_default();
    CODEC.decode_events(lines.iter().map(String::as_str))
}

fn shape(message: &AssistantMessage) -> Vec<String> {
    message
        .content
        .iter()
        .map(|c| match c {
            AssistantContent::Text(_) => "text".to_owned(),
            AssistantContent::Thinking(t) => format!("thinking(signed={})", t.signature.is_some()),
            AssistantContent::RedactedThinking(_) => "redacted".to_owned(),
            AssistantContent::ToolCall(call) => format!("call:{}", call.name),
            AssistantContent::Image(_) => "image".to_owned(),
            AssistantContent::ProviderBlock(p) => format!("provider:{}", p.type_name()),
        })
        .collect()
}

#[test]
fn every_response_body_decodes() {
    common::require_conformance!();
    let bodies = CODEC.recordings(".json");
    assert!(bodies.len() >= 30, "{} bodies", bodies.len());
    for path in &bodies {
        let message = CODEC.decode_file(path);
        let name = file_name(path);
        assert_eq!(message.api, "anthropic-messages", "{name}");
        assert_eq!(message.provider, "anthropic", "{name}");
        assert!(!message.model.is_empty(), "{name}");
        assert!(
            message
                .response_id
                .as_deref()
                .is_some_and(|id| id.starts_with("msg_")),
            "{name}"
        );
        assert!(
            message.usage.input > 0 || message.usage.cache_read > 0,
            "{name}: {:?}",
            message.usage
        );
        if message.stop_reason == StopReason::ToolUse {
            assert!(
                message.tool_calls().next().is_some(),
                "{name}: toolUse without calls"
            );
        }
    }
}

#[test]
fn every_stream_decodes_and_bad_ones_fail_clearly() {
    common::require_conformance!();
    let streams = CODEC.recordings(".chunks.txt");
    assert!(streams.len() >= 30, "{} streams", streams.len());
    for path in &streams {
        let name = file_name(path);
        let result = decode_all_chunks(path);
        if name.starts_with("duplicate-message-start") || name.starts_with("spliced-message-start")
        {
            let error = result.expect_err(&name);
            let text = error.to_string();
            assert!(
                text.contains("event 1") || text.contains("event 7"),
                "{name}: {text}"
            );
            assert!(text.contains("message_start"), "{name}: {text}");
            continue;
        }
        for message in result.unwrap_or_else(|e| panic!("{name}: {e}")) {
            assert!(!message.model.is_empty(), "{name}");
            assert_ne!(
                message.stop_reason,
                StopReason::Error,
                "{name}: {:?}",
                message.error_message
            );
            if message.stop_reason == StopReason::ToolUse {
                assert!(
                    message.tool_calls().next().is_some(),
                    "{name}: toolUse without calls"
                );
            }
        }
    }
}

#[test]
fn stream_and_body_agree_on_what_both_carry() {
    common::require_conformance!();
    let mut compared = 0;
    for body_path in CODEC.recordings(".json") {
        let name = file_name(&body_path);
        let stem = name.trim_end_matches(".json");
        let stream_path = CODEC.dir().join(format!("{stem}.chunks.txt"));
        if !stream_path.is_file() {
            continue;
        }
        let body = CODEC.decode_file(&body_path);
        let mut streams = decode_all_chunks(&stream_path).unwrap_or_else(|e| panic!("{stem}: {e}"));
        if streams.len() != 1 {
            // Several steps of one exchange; the body is only the last one.
            continue;
        }
        let stream = streams.remove(0);
        assert_eq!(
            (body.api.as_str(), body.provider.as_str()),
            (stream.api.as_str(), stream.provider.as_str())
        );
        assert_eq!(body.stop_reason, stream.stop_reason, "{stem}");
        if body.response_id == stream.response_id {
            // The same response recorded twice: everything but the clock agrees.
            let mut stream = stream;
            stream.timestamp = body.timestamp;
            assert_eq!(body, stream, "{stem}");
        } else {
            // Two recordings of one request: the same kinds of blocks in the same order.
            // Runs of one kind are collapsed: server tools split text differently
            // per run, and a run may call its tools more often than the other.
            let collapse = |v: Vec<String>| {
                let mut v: Vec<String> = v
                    .into_iter()
                    .map(|s| {
                        if s.starts_with("provider:") {
                            "provider".into()
                        } else {
                            s
                        }
                    })
                    .collect();
                v.sort();
                v.dedup();
                v
            };
            let (a, b) = (collapse(shape(&body)), collapse(shape(&stream)));
            assert_eq!(a, b, "{stem}");
        }
        compared += 1;
    }
    assert!(compared >= 20, "only {compared} pairs");
}

#[test]
fn decoded_fields_match_the_recordings() {
    common::require_conformance!();
    let dir = CODEC.dir();
    let thinking = CODEC.decode_file(&dir.join("anthropic-clear-thinking.1.json"));
    let raw: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("anthropic-clear-thinking.1.json")).expect("read"),
    )
    .expect("json");
    let signature = raw["content"][0]["signature"].as_str().expect("signature");
    assert_eq!(
        thinking
            .thinking()
            .next()
            .and_then(|t| t.signature.as_deref()),
        Some(signature)
    );
    assert_eq!(thinking.text_content(), "925 ÷ 5 = 185");
    assert_eq!(
        thinking.response_id.as_deref(),
        Some("msg_01XrsJCi8CQoLcnnWdY8RsJz")
    );
    assert_eq!((thinking.usage.input, thinking.usage.output), (69, 33));

    let streamed =
        decode_chunks(&dir.join("anthropic-clear-thinking.1.chunks.txt")).expect("stream");
    let signature = streamed
        .thinking()
        .next()
        .and_then(|t| t.signature.clone())
        .unwrap_or_default();
    assert!(
        signature.starts_with("EvQBCkYICxgCKkAxhD4N") && signature.ends_with("17BgB"),
        "{signature}"
    );
    assert_eq!(streamed.usage.output, 53, "message_delta usage wins");

    let tool = decode_chunks(&dir.join("anthropic-json-tool.1.chunks.txt")).expect("stream");
    let call = tool.tool_calls().next().expect("a call");
    assert!(!call.arguments.is_empty(), "{call:?}");
    assert_eq!(tool.stop_reason, StopReason::ToolUse);

    for name in [
        "anthropic-tool-no-args.json",
        "anthropic-tool-no-args.chunks.txt",
    ] {
        let message = if name.ends_with(".json") {
            CODEC.decode_file(&dir.join(name))
        } else {
            decode_chunks(&dir.join(name)).expect(name)
        };
        let call = message.tool_calls().next().expect("a call");
        assert!(call.arguments.is_empty(), "{name}: {call:?}");
    }

    for name in [
        "anthropic-refusal.chunks.txt",
        "anthropic-refusal-no-details.json",
    ] {
        let message = if name.ends_with(".json") {
            CODEC.decode_file(&dir.join(name))
        } else {
            decode_chunks(&dir.join(name)).expect(name)
        };
        assert_eq!(message.stop_reason, StopReason::GuardRail, "{name}");
    }
    let refusal = CODEC.decode_file(&dir.join("anthropic-refusal.json"));
    assert_eq!(refusal.stop_reason, StopReason::GuardRail);
    assert!(refusal
        .error_message
        .as_deref()
        .unwrap_or_default()
        .contains("Usage Policy"));

    let cached =
        decode_chunks(&dir.join("anthropic-code-execution-20260120-prompt-cache.1.chunks.txt"))
            .expect("stream");
    assert!(
        cached.usage.cache_read > 0 || cached.usage.cache_write > 0,
        "{:?}",
        cached.usage
    );

    let late_input = decode_chunks(&dir.join("anthropic-message-delta-input-tokens.chunks.txt"))
        .expect("stream");
    assert_eq!((late_input.usage.input, late_input.usage.output), (61, 2));
    assert_eq!(late_input.text_content(), "pong");
}

#[test]
fn the_sdk_sse_recording_decodes() {
    let dir = common::require_conformance!();
    let path = dir.join("responses/sse/anthropic-sdk-tool-use.sse");
    let text = std::fs::read_to_string(&path).expect("sse");
    let mut decoder = anthropic::StreamDecoder::new();
    let mut event_name = String::new();
    let mut events = 0;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            event_name = name.trim().to_owned();
        } else if let Some(data) = line.strip_prefix("data:") {
            let payload: Value = serde_json::from_str(data.trim()).expect("data is JSON");
            assert_eq!(
                payload["type"],
                event_name.as_str(),
                "event name and payload type agree"
            );
            decoder
                .push(data.trim())
                .unwrap_or_else(|e| panic!("event {events}: {e}"));
            events += 1;
        }
    }
    let message = decoder.finish().expect("complete stream");
    assert!(events > 5);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert!(message.text_content().contains("Paris"));
    let call = message.tool_calls().next().expect("a call");
    assert_eq!(call.name, "get_weather");
    assert_eq!(call.id, "toolu_01NRLabsLyVHZPKxbKvkfSMn");
    assert!(
        call.arguments
            .get("location")
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|l| l.contains("Paris")),
        "{call:?}"
    );
}

fn check_truncations(name: &str, lines: &[String]) {
    let full_ok = CODEC
        .decode_events(lines.iter().map(String::as_str))
        .is_ok();
    // Every strict prefix lacks message_stop.
    for cut in 0..lines.len() {
        let prefix = lines.iter().take(cut).map(String::as_str);
        if let Ok(message) = CODEC.decode_events(prefix) {
            assert_eq!(
                message.stop_reason,
                StopReason::Error,
                "{name} cut at {cut}"
            );
        }
    }
    // A line cut in half is a JSON error that names its event.
    if let Some((i, line)) = lines.iter().enumerate().find(|(_, l)| l.len() > 20) {
        let half = &line[..line
            .char_indices()
            .nth(line.chars().count() / 2)
            .map_or(0, |(b, _)| b)];
        let mut decoder = anthropic::StreamDecoder::new();
        let mut error = None;
        for (j, event) in lines.iter().enumerate() {
            let event = if j == i { half } else { event.as_str() };
            if let Err(e) = decoder.push(event) {
                error.get_or_insert(e);
            }
        }
        let error = error
            .map(|e| e.to_string())
            .or_else(|| decoder.finish().err().map(|e| e.to_string()));
        if full_ok {
            let error = error.unwrap_or_else(|| panic!("{name}: half a line passed"));
            assert!(error.contains(&format!("event {i}")), "{name}: {error}");
        }
    }
}

#[test]
fn truncated_and_garbled_streams_never_panic_and_never_pass() {
    common::require_conformance!();
    for path in CODEC.recordings(".chunks.txt") {
        let name = file_name(&path);
        for lines in split_streams(&chunk_lines(&path)) {
            check_truncations(&name, &lines);
        }
    }
    let error = CODEC.decode_events(["{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}"])
        .expect_err("delta before start");
    assert!(error.to_string().starts_with("event 0:"), "{error}");
    let error = CODEC.decode_events([
        r#"{"type":"message_start","message":{"id":"msg_1","model":"m","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"t","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
    ])
    .expect_err("broken tool JSON");
    assert!(error.to_string().starts_with("event 3:"), "{error}");
}

#[test]
fn error_bodies_and_error_events_become_error_messages() {
    let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let message = anthropic::decode_response(body).expect("decodes");
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("overloaded_error: Overloaded")
    );
    let message = CODEC.decode_events([
        r#"{"type":"message_start","message":{"id":"msg_1","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ])
    .expect("an error event is a message");
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(message.response_id.as_deref(), Some("msg_1"));
    assert!(anthropic::decode_response("not json").is_err());
    let error = anthropic::decode_response("{}").expect_err("no content");
    assert!(error.to_string().contains("content"), "{error}");
    assert!(anthropic::decode_response("[1,2]").is_err());
    let bad_block = r#"{"id":"msg_1","model":"m","content":[{"type":"tool_use","id":"t","name":"x","input":[1]}],"stop_reason":"tool_use"}"#;
    assert!(anthropic::decode_response(bad_block)
        .expect_err("array input")
        .to_string()
        .contains("content[0]"));
}

#[test]
fn decoded_messages_replay_to_the_same_model_byte_for_byte() {
    common::require_conformance!();
    let dir = CODEC.dir();
    for name in [
        "anthropic-clear-thinking.1.json",
        "anthropic-clear-thinking.1.chunks.txt",
        "anthropic-json-tool.1.json",
    ] {
        let message = if name.ends_with(".json") {
            CODEC.decode_file(&dir.join(name))
        } else {
            decode_chunks(&dir.join(name)).expect(name)
        };
        let model = message.model.clone();
        let mut messages = vec![Message::user("q"), Message::Assistant(message.clone())];
        for call in message.tool_calls() {
            messages.push(Message::tool_result(
                call.id.clone(),
                call.name.clone(),
                "ok",
            ));
        }
        messages.push(Message::user("next"));
        let body = anthropic::encode_request(&Request::new(model, messages))
            .expect("encodes")
            .body;
        let replayed = &body["messages"][1]["content"];
        for (i, block) in message.content.iter().enumerate() {
            match block {
                AssistantContent::Thinking(t) => {
                    assert_eq!(
                        replayed[i]["signature"].as_str(),
                        t.signature.as_deref(),
                        "{name}"
                    );
                    assert_eq!(
                        replayed[i]["thinking"].as_str(),
                        Some(t.thinking.as_str()),
                        "{name}"
                    );
                }
                AssistantContent::ToolCall(call) => {
                    assert_eq!(replayed[i]["input"], call.arguments.to_value())
                }
                AssistantContent::Text(t) => {
                    assert_eq!(replayed[i]["text"].as_str(), Some(t.text.as_str()))
                }
                AssistantContent::RedactedThinking(r) => {
                    assert_eq!(replayed[i]["data"].as_str(), Some(r.data.as_str()))
                }
                AssistantContent::ProviderBlock(p) => {
                    assert_eq!(replayed[i], p.block.to_value(), "{name}")
                }
                AssistantContent::Image(_) => panic!("{name}: Anthropic answers with no images"),
            }
        }
        assert!(common::schema_errors(SCHEMA, &body).is_empty());
    }
}

/// The blocks of a recorded body, in order, as the decoder must give them:
/// the blocks agentmsg models as its own (a text with its citations), every
/// other one (server tools, compaction, fallback…) as a provider block holding
/// the block unchanged.
fn modelled_blocks(raw: &Value) -> Vec<Value> {
    raw["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| match b["type"].as_str() {
            Some("text") => {
                let mut out = json!({"type": "text", "text": b["text"]});
                if b["citations"].as_array().is_some_and(|c| !c.is_empty()) {
                    out["citations"] = b["citations"].clone();
                }
                out
            }
            Some("thinking") => {
                let mut out = json!({"type": "thinking", "thinking": b["thinking"]});
                if b["signature"].as_str().is_some_and(|s| !s.is_empty()) {
                    out["signature"] = b["signature"].clone();
                }
                out
            }
            Some("redacted_thinking") => json!({"type": "redactedThinking", "data": b["data"]}),
            Some("tool_use") => json!({"type": "toolCall", "id": b["id"], "name": b["name"], "arguments": b["input"]}),
            _ => json!({"type": "providerBlock", "api": "anthropic-messages", "block": b}),
        })
        .collect()
}

#[test]
fn bodies_with_server_tools_decode_into_the_blocks_we_model_in_order() {
    common::require_conformance!();
    let mut with_unmodelled = 0;
    for path in CODEC.recordings(".json") {
        let name = file_name(&path);
        let text = std::fs::read_to_string(&path).expect("fixture");
        let raw: Value = serde_json::from_str(&text).expect("fixture is JSON");
        let expected = modelled_blocks(&raw);
        if expected.iter().any(|b| b["type"] == "providerBlock") {
            with_unmodelled += 1;
        }
        let decoded = anthropic::decode_response(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = serde_json::to_value(&decoded.content).expect("content serializes");
        assert_eq!(got, Value::Array(expected), "{name}");
    }
    assert!(
        with_unmodelled >= 10,
        "only {with_unmodelled} bodies with server-side blocks"
    );
}

#[test]
fn a_final_assistant_turn_loses_its_trailing_whitespace() {
    let encoded = encode("prefill");
    assert_eq!(encoded.body["messages"][1]["content"][0]["text"], "{");
    assert!(encoded
        .report
        .changes
        .iter()
        .any(|c| c.index == 1 && c.kind == ChangeKind::UnsupportedContent));
}

mod random_transcripts {
    use super::*;
    use crate::transcripts::Flavor;
    use proptest::prelude::*;

    pub(super) static FLAVOR: Flavor = Flavor {
        ids: &[
            "toolu_1",
            "toolu_2",
            "functions.read:0",
            "call|x/y",
            "",
            "toolu_1",
        ],
        models: [MODEL, "claude-opus-4-5"],
        api: "anthropic-messages",
        provider: "anthropic",
        signature: "c2ln",
        odd_image: "image/tiff",
        document_url: "https://example.com/a.pdf",
        signed_calls: false,
        length_stops: true,
    };

    pub(super) fn message() -> impl Strategy<Value = Value> {
        crate::transcripts::message(&FLAVOR)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Transcripts no test wrote by hand: every body that encodes passes the
        /// schema and the role rules.
        #[test]
        fn random_transcripts_encode_to_valid_bodies(lines in prop::collection::vec(message(), 1..10)) {
            crate::transcripts::check_random(CODEC, MODEL, &lines, tools(), SCHEMA, role_errors)?;
        }
    }
}

/// Programmatic tool calling: a `tool_use` that code the server ran made
/// carries a `caller` a tool call has no place for. The call is kept as a
/// client call and the caller is said, once per such call, in the body and in
/// the stream of the recorded response.
#[test]
fn a_calls_caller_is_said_not_dropped() {
    common::require_conformance!();
    let dir = CODEC.dir();
    let calls_by_code = |blocks: &[Value]| {
        blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .filter(|b| b.get("caller").is_some_and(|c| c["type"] != "direct"))
            .count()
    };
    let body_text =
        std::fs::read_to_string(dir.join("anthropic-programmatic-tool-calling.1.json")).unwrap();
    let body: Value = serde_json::from_str(&body_text).unwrap();
    let expected = calls_by_code(body["content"].as_array().unwrap());
    assert!(expected > 0, "the recording has calls made by code");
    let (message, warnings) = anthropic::decode_response_with_warnings(&body_text).unwrap();
    assert_eq!(message.tool_calls().count(), expected, "{message:#?}");
    let said: Vec<&ResponseError> = warnings
        .iter()
        .filter(|w| w.to_string().contains(".caller"))
        .collect();
    assert_eq!(said.len(), expected, "{warnings:#?}");
    assert!(
        said[0].to_string().contains("code_execution"),
        "{}",
        said[0]
    );

    let lines = chunk_lines(&dir.join("anthropic-programmatic-tool-calling.1.chunks.txt"));
    // Blocks come in content_block_start events and, whole, in a
    // message_start's content.
    let starts: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|e| match e["type"].as_str() {
            Some("content_block_start") => vec![e["content_block"].clone()],
            Some("message_start") => e["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        })
        .collect();
    let expected = calls_by_code(&starts);
    assert!(expected > 0, "the stream has calls made by code");
    let mut said = 0;
    for stream in split_streams(&lines) {
        let mut decoder = anthropic::StreamDecoder::new();
        for line in &stream {
            decoder.push(line).unwrap();
        }
        let (_, warnings) = decoder.finish_with_warnings().unwrap();
        said += warnings
            .iter()
            .filter(|w| w.to_string().contains("caller"))
            .count();
    }
    assert_eq!(said, expected);
}

/// A message_start that already carries its blocks and `stop_reason`, with no
/// message_delta after it (a call made by code the server ran), ends with that
/// stop reason: `tool_use` is `toolUse`, so an agent loop runs the tool.
#[test]
fn a_message_start_carrying_its_stop_reason_keeps_it() {
    let dir = common::require_conformance!().join("responses/vercel/anthropic");
    let lines = chunk_lines(&dir.join("anthropic-programmatic-tool-calling.1.chunks.txt"));
    let mut seen = 0;
    for stream in split_streams(&lines) {
        let start: Value = serde_json::from_str(&stream[0]).unwrap();
        let Some(reason) = start["message"]["stop_reason"].as_str() else {
            continue;
        };
        if stream.iter().any(|l| l.contains("\"message_delta\"")) {
            continue;
        }
        seen += 1;
        let message = CODEC
            .decode_events(stream.iter().map(String::as_str))
            .unwrap();
        assert_eq!(message.stop_reason, anthropic::stop_reason(reason));
        assert_eq!(message.stop_reason, StopReason::ToolUse, "{message:#?}");
        assert_eq!(message.tool_calls().count(), 1, "{message:#?}");
    }
    assert!(seen >= 10, "{seen} such streams");
}

/// A `compaction_delta` brings the block's `encrypted_content` with its
/// `content` (as the SDKs' accumulators read it); the decoded block keeps it,
/// since that payload is what must go back to the API.
#[test]
fn a_compaction_delta_keeps_its_encrypted_content() {
    let dir = common::require_conformance!().join("responses/vercel/anthropic");
    let lines: Vec<String> = chunk_lines(&dir.join("anthropic-compaction.1.chunks.txt"))
        .into_iter()
        .map(|line| {
            let mut event: Value = serde_json::from_str(&line).unwrap();
            if event["delta"]["type"] == "compaction_delta" {
                event["delta"]["encrypted_content"] = json!("Eo8CCkgIBxABGAIqQOpaque");
            }
            event.to_string()
        })
        .collect();
    let stream = split_streams(&lines).into_iter().next().unwrap();
    let message = CODEC
        .decode_events(stream.iter().map(String::as_str))
        .unwrap();
    let block = message
        .content
        .iter()
        .find_map(|c| match c {
            AssistantContent::ProviderBlock(p) if p.type_name() == "compaction" => Some(p),
            _ => None,
        })
        .expect("a compaction block");
    let block: Value = serde_json::from_str(block.block.get()).unwrap();
    assert_eq!(
        block["encrypted_content"], "Eo8CCkgIBxABGAIqQOpaque",
        "{block}"
    );
    assert!(block["content"]
        .as_str()
        .is_some_and(|c| c.contains("Summary")));
}

/// The model changes in the middle of a tool loop with thinking on
/// (claude-sonnet-4-5 called a tool; claude-opus-4-5 is asked to go on): the
/// foreign thinking block is dropped (and said), so the assistant turn the
/// loop continues has none. Anthropic refuses thinking on such a request ("a
/// final `assistant` message must start with a thinking block … To avoid this
/// requirement, disable `thinking`") and keeps one thinking configuration per
/// assistant turn: thinking is off for this request, and said. It was sent on.
/// From the next user turn, and for the model that made the block, it is on.
#[test]
fn a_model_switch_mid_tool_loop_turns_thinking_off_for_the_request() {
    use agentmsg::providers::{OptionChangeKind, Reasoning};
    let call = json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Read it.", "signature": "EqQBsig"},
            {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "a.rs"}}
        ],
        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse", "timestamp": 2
    });
    let transcript = [
        json!({"role": "user", "content": "read a.rs", "timestamp": 1}),
        call,
        json!({"role": "toolResult", "toolCallId": "toolu_01", "toolName": "read", "content": [{"type": "text", "text": "fn main() {}"}], "isError": false, "timestamp": 3}),
    ]
    .map(|v| v.to_string());
    let request = |model: &str, extra: &[String]| {
        let mut all = transcript.to_vec();
        all.extend_from_slice(extra);
        Request::new(model, lines(&all.join("\n")))
            .with_tools(tools())
            .with_reasoning(Reasoning::Budget(2048))
    };

    let switched = anthropic::encode_request(&request("claude-opus-4-5", &[])).unwrap();
    assert_eq!(
        switched.body["thinking"],
        json!({"type": "disabled"}),
        "{:#}",
        switched.body
    );
    assert_eq!(
        switched.body["messages"][1]["content"][0]["type"],
        "tool_use"
    );
    assert!(change_kinds(&switched.report)
        .iter()
        .any(|(_, kind)| *kind == ChangeKind::DroppedThinking));
    assert!(
        switched
            .options
            .iter()
            .any(|o| o.option == "reasoning" && o.kind == OptionChangeKind::Changed),
        "{:?}",
        switched.options
    );
    let errors = common::schema_errors(SCHEMA, &switched.body);
    assert!(errors.is_empty(), "{errors:?}");

    // The model that made the block: it is replayed, and thinking stays on.
    let same = anthropic::encode_request(&request("claude-sonnet-4-5", &[])).unwrap();
    assert_eq!(same.body["thinking"]["type"], "enabled");
    assert_eq!(same.body["messages"][1]["content"][0]["type"], "thinking");

    // The loop ended (an answer, then a new user turn): a new assistant turn,
    // thinking on.
    let answer = json!({
        "role": "assistant", "content": [{"type": "text", "text": "It is empty."}],
        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-5",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "stop", "timestamp": 4
    });
    let next = json!({"role": "user", "content": "thanks", "timestamp": 5});
    let later = anthropic::encode_request(&request(
        "claude-opus-4-5",
        &[answer.to_string(), next.to_string()],
    ))
    .unwrap();
    assert_eq!(
        later.body["thinking"]["type"], "enabled",
        "{:#}",
        later.body
    );
}
