//! OpenAI Responses codec: request bodies against the published schema and
//! our own rules, recorded responses and streams, broken streams, snapshots.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::common;
use agentmsg::project::ChangeKind;
use agentmsg::providers::openai_responses::{self, StreamDecoder};
use agentmsg::providers::{Request, ResponseError, StreamDecode};
use agentmsg::{
    AssistantContent, AssistantMessage, Message, RedactedThinkingContent, StopReason, TextContent,
    ThinkingContent, ToolCall,
};
use serde_json::{json, Value};

const SCHEMA: &str = "openai-responses-request.schema.json";
const API: &str = "openai-responses";
const MODEL: &str = "gpt-5";
use common::change_details;
use common::openai::PNG;

// ---------------------------------------------------------------------------
// A broad set of transcripts

use common::openai::{assistant, result, text};

/// A stored Responses reasoning item, as the decoder writes it.
fn reasoning_json(id: &str, summary: &str, encrypted: &str) -> String {
    let summary: Vec<Value> = if summary.is_empty() {
        vec![]
    } else {
        vec![json!({"type": "summary_text", "text": summary})]
    };
    json!({"type": "reasoning", "id": id, "summary": summary, "encrypted_content": encrypted})
        .to_string()
}

/// Transcripts covering every block type and the repairs prepare makes.
fn corpus() -> Vec<(&'static str, Request<'static>)> {
    let thinking_here = assistant(
        vec![
            AssistantContent::Thinking(
                ThinkingContent::new("Let me think.").with_signature(reasoning_json(
                    "rs_1",
                    "Let me think.",
                    "gAAAA1",
                )),
            ),
            text("Answer."),
            AssistantContent::RedactedThinking(RedactedThinkingContent::new(reasoning_json(
                "rs_2", "", "gAAAA2",
            ))),
            AssistantContent::ToolCall(
                ToolCall::new("call_r", "read", json!({"path": "r"})).with_signature("fc_r"),
            ),
            AssistantContent::Thinking(
                ThinkingContent::new("unpaired")
                    .with_signature(reasoning_json("rs_3", "unpaired", "gAAAA3")),
            ),
            AssistantContent::Thinking(ThinkingContent::new("unsigned")),
            AssistantContent::Thinking(
                ThinkingContent::new("chat signature").with_signature("sig-abc"),
            ),
        ],
        API,
        MODEL,
        StopReason::ToolUse,
    );
    common::openai::corpus(
        API,
        MODEL,
        vec![thinking_here, result("call_r", "read", "R")],
    )
}

/// The rules the schema does not check.
fn own_rule_errors(body: &Value, request: &Request) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(input) = body["input"].as_array() else {
        return vec!["input is not an array".into()];
    };
    let mut open: Vec<String> = Vec::new();
    let mut calls: HashSet<String> = HashSet::new();
    let mut item_ids: HashSet<String> = HashSet::new();
    for (i, item) in input.iter().enumerate() {
        let kind = item["type"].as_str().unwrap_or("message");
        if let Some(id) = item["id"].as_str() {
            if !item_ids.insert(id.to_owned()) {
                errors.push(format!("input[{i}]: duplicate item id {id}"));
            }
        }
        // Items of the assistant turn (its text, its reasoning) may sit between
        // its calls and their outputs, as the model produced them; the next
        // user or system message may not.
        let turn_item = matches!(kind, "function_call_output" | "function_call" | "reasoning")
            || item["role"] == "assistant";
        if !turn_item && !open.is_empty() {
            errors.push(format!(
                "input[{i}]: calls {open:?} are not answered before this {kind} item"
            ));
            open.clear();
        }
        match kind {
            "reasoning" => {
                let next = input
                    .get(i + 1)
                    .map(|n| n["type"].as_str().unwrap_or("message"));
                if matches!(next, None | Some("reasoning")) {
                    errors.push(format!(
                        "input[{i}]: reasoning item without its following item (next: {next:?})"
                    ));
                }
                if item["id"].as_str().is_none_or(str::is_empty) {
                    errors.push(format!("input[{i}]: reasoning item without an id"));
                }
            }
            "message" => {
                let role = item["role"].as_str().unwrap_or_default();
                match &item["content"] {
                    Value::String(_) => {
                        if role == "assistant" {
                            errors.push(format!("input[{i}]: assistant text not as output_text"));
                        }
                    }
                    Value::Array(parts) => {
                        if parts.is_empty() {
                            errors.push(format!("input[{i}]: empty content"));
                        }
                        for (j, p) in parts.iter().enumerate() {
                            let part = p["type"].as_str().unwrap_or_default();
                            let ok = match (role, part) {
                                ("assistant", "output_text") => {
                                    p["annotations"].is_array() && p["logprobs"].is_array()
                                }
                                ("assistant", _) => false,
                                (_, "input_text") => true,
                                (_, "input_image") => {
                                    p["detail"].is_string()
                                        && (p["image_url"].is_string() || p["file_id"].is_string())
                                }
                                (_, "input_file") => {
                                    p["file_url"].is_string()
                                        || p["file_id"].is_string()
                                        || (p["file_data"].as_str().is_some_and(|d| {
                                            d.starts_with("data:application/pdf;base64,")
                                        }) && p["filename"].is_string())
                                }
                                _ => false,
                            };
                            if !ok {
                                errors
                                    .push(format!("input[{i}].content[{j}]: bad {role} part {p}"));
                            }
                        }
                    }
                    other => errors.push(format!("input[{i}]: content {other}")),
                }
                if role == "assistant" && (!item["id"].is_string() || item["status"] != "completed")
                {
                    errors.push(format!(
                        "input[{i}]: assistant message item needs id and status"
                    ));
                }
            }
            "function_call" => {
                let id = item["call_id"].as_str().unwrap_or_default().to_owned();
                if id.is_empty() || id.chars().count() > 64 {
                    errors.push(format!("input[{i}]: call_id {id:?} empty or over 64 chars"));
                }
                match item["arguments"]
                    .as_str()
                    .map(serde_json::from_str::<Value>)
                {
                    Some(Ok(Value::Object(_))) => {}
                    other => errors.push(format!("input[{i}]: arguments {other:?}")),
                }
                if item
                    .get("id")
                    .is_some_and(|v| !v.as_str().is_some_and(|s| s.starts_with("fc")))
                {
                    errors.push(format!("input[{i}]: function_call id is not an fc id"));
                }
                if !calls.insert(id.clone()) {
                    errors.push(format!("input[{i}]: duplicate call_id {id}"));
                }
                open.push(id);
            }
            "function_call_output" => {
                let id = item["call_id"].as_str().unwrap_or_default().to_owned();
                match open.iter().position(|c| *c == id) {
                    Some(pos) => {
                        open.remove(pos);
                    }
                    None => errors.push(format!(
                        "input[{i}]: output for {id:?}, which is not an open call"
                    )),
                }
                if let Some(parts) = item["output"].as_array() {
                    for p in parts {
                        if p["type"] == "input_image" && !p["detail"].is_string() {
                            errors.push(format!("input[{i}]: input_image without detail"));
                        }
                    }
                }
            }
            // An item of the provider's own, replayed as the decoder kept it.
            "web_search_call"
            | "file_search_call"
            | "code_interpreter_call"
            | "image_generation_call"
            | "mcp_call"
            | "mcp_list_tools"
            | "mcp_approval_request"
            | "compaction"
            | "shell_call"
            | "shell_call_output"
            | "tool_search_call"
            | "tool_search_output"
            | "program"
            | "program_output" => {}
            other => errors.push(format!("input[{i}]: unexpected item type {other}")),
        }
    }
    if !open.is_empty() {
        errors.push(format!("calls {open:?} are never answered"));
    }
    if body.get("max_tokens").is_some() {
        errors.push("max_tokens used instead of max_output_tokens".into());
    }
    if request.max_tokens.map(Value::from).as_ref() != body.get("max_output_tokens") {
        errors.push("max_output_tokens does not match the request".into());
    }
    if request.system.as_deref().map(Value::from).as_ref() != body.get("instructions") {
        errors.push("instructions do not match the system prompt".into());
    }
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        if tool["type"] != "function"
            || !tool["parameters"].is_object()
            || !tool["strict"].is_boolean()
        {
            errors.push(format!("tools[{i}]: {tool}"));
        }
    }
    errors
}

const CHECKS: common::openai::Checks = common::openai::Checks {
    model: MODEL,
    encode: openai_responses::encode_request,
    schema: SCHEMA,
    rules: own_rule_errors,
    sdk: "openai-responses",
};

fn check_case(name: &str, request: &Request) -> Value {
    CHECKS.body(name, request)
}

#[test]
fn every_corpus_body_is_valid() {
    let (mut count, data) = CHECKS.corpora(corpus());
    let Some(data) = data else {
        return;
    };
    // Replays of every recorded response (reasoning, calls, unmodelled items
    // skipped) to the model that wrote it.
    for (name, message) in decoded_fixtures() {
        let model = message.model.clone();
        let mut messages = vec![Message::user("start"), Message::Assistant(message)];
        messages.push(Message::user("continue"));
        check_case(
            &format!("replay-{name}"),
            &Request::new(model, messages)
                .with_system("sys")
                .with_max_tokens(16),
        );
        count += 1;
    }
    // Recorded chat answers, replayed to a Responses model.
    let chat = data.join("responses");
    let mut answers = vec![agentmsg::providers::openai_chat::decode_response(
        &std::fs::read_to_string(chat.join("vercel/openai/chat/openai-text.json")).unwrap(),
    )
    .unwrap()];
    let mut decoder = agentmsg::providers::openai_chat::StreamDecoder::new();
    let sse = std::fs::read_to_string(chat.join("sse/openai-chat-tool-calls.sse")).unwrap();
    for data in sse
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .take_while(|d| *d != "[DONE]")
    {
        decoder.push(data).unwrap();
    }
    answers.push(decoder.finish().unwrap());
    for (k, answer) in answers.into_iter().enumerate() {
        let request = Request::new(
            MODEL,
            vec![
                Message::user("q"),
                Message::Assistant(answer),
                Message::user("go on"),
            ],
        );
        check_case(&format!("from-chat-{k}"), &request);
        count += 1;
    }
    assert!(count > 40, "only {count} cases");
}

// ---------------------------------------------------------------------------
// What each rule does

pub(super) fn case(name: &str) -> Request<'static> {
    corpus()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| r)
        .unwrap_or_else(|| panic!("no case {name}"))
}

#[test]
fn system_prompt_is_instructions() {
    let body = openai_responses::encode_request(&case("text"))
        .unwrap()
        .body;
    assert_eq!(body["instructions"], "Be terse.");
    assert_eq!(
        body["input"],
        json!([{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}])
    );
    let body = openai_responses::encode_request(&case("system-in-transcript"))
        .unwrap()
        .body;
    assert_eq!(
        body["input"][0],
        json!({"role": "system", "content": "You are a cat."})
    );
}

#[test]
fn user_blocks_map_to_parts_and_unsupported_ones_are_reported() {
    let encoded = openai_responses::encode_request(&case("every-user-block")).unwrap();
    let parts = encoded.body["input"][0]["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        parts[1],
        json!({"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}"), "detail": "auto"})
    );
    assert_eq!(parts[2]["image_url"], "https://example.com/cat.jpg");
    assert_eq!(parts[2]["detail"], "auto");
    for (i, part) in parts.iter().enumerate().take(6).skip(3) {
        assert_eq!(part["type"], "input_text", "audio {i} must not be sent");
    }
    assert_eq!(
        parts[6],
        json!({"type": "input_file", "filename": "spec.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjcK"})
    );
    assert_eq!(parts[7], json!({"type": "input_text", "text": "hello"}));
    assert_eq!(
        parts[8],
        json!({"type": "input_file", "file_url": "https://example.com/a.pdf"})
    );
    assert_eq!(parts[9]["type"], "input_text");
    let unsupported = encoded.report.count(ChangeKind::UnsupportedContent);
    assert_eq!(unsupported, 5, "{:?}", encoded.report);
}

#[test]
fn tool_calls_and_results() {
    let encoded =
        openai_responses::encode_request(&case("parallel-tool-calls").with_max_tokens(100))
            .unwrap();
    let input = encoded.body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "function_call",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "call_a", "name": "read", "arguments": "{\"path\":\"a\"}"})
    );
    assert!(input[4..]
        .contains(&json!({"type": "function_call_output", "call_id": "call_a", "output": "A"})));
    assert_eq!(encoded.body["max_output_tokens"], 100);
    assert_eq!(
        encoded.body["tools"][0],
        json!({"type": "function", "name": "read", "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, "strict": false})
    );
}

#[test]
fn tool_result_images_follow_the_results() {
    let encoded = openai_responses::encode_request(&case("tool-result-images")).unwrap();
    let input = encoded.body["input"].as_array().unwrap();
    let output = input
        .iter()
        .position(|i| i["type"] == "function_call_output")
        .unwrap();
    let next = &input[output + 1];
    assert_eq!(next["role"], "user");
    let image = next["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "input_image")
        .unwrap();
    assert_eq!(image["detail"], "auto");
    assert!(encoded.report.count(ChangeKind::MovedImages) >= 1);
}

#[test]
fn reasoning_is_replayed_paired_and_only_to_its_model() {
    let encoded = openai_responses::encode_request(&case("thinking-with-signatures")).unwrap();
    let input = encoded.body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input
        .iter()
        .map(|i| i["type"].as_str().unwrap_or("user"))
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "reasoning",
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "user",
            "message",
            "user"
        ],
        "{input:#?}"
    );
    assert_eq!(
        input[1],
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Let me think."}], "encrypted_content": "gAAAA1"})
    );
    assert_eq!(input[3]["encrypted_content"], "gAAAA2");
    assert_eq!(input[4]["id"], "fc_r");
    // rs_3 had nothing after it; the unsigned and foreign-signed blocks cannot be replayed.
    let text = encoded.body.to_string();
    assert!(
        !text.contains("rs_3")
            && !text.contains("unsigned")
            && !text.contains("sig-abc")
            && !text.contains("EqQB")
    );
    assert!(
        encoded
            .report
            .iter()
            .any(|c| c.kind == ChangeKind::DroppedThinking
                && c.index == 1
                && c.detail.contains("followed by the item")),
        "{:#?}",
        encoded.report
    );

    // To another model nothing of it goes back.
    let mut other = case("thinking-with-signatures");
    other.model = "gpt-5-mini".into();
    let body = openai_responses::encode_request(&other).unwrap().body;
    let text = body.to_string();
    assert!(
        !text.contains("reasoning") && !text.contains("gAAAA") && !text.contains("fc_r"),
        "{body:#}"
    );
}

/// A reasoning item without an id, as Codex CLI writes and sends them, goes
/// back with its encrypted content and no id; one with neither has nothing
/// to replay and is dropped, said.
#[test]
fn reasoning_without_an_id_replays_its_encrypted_content() {
    let codex = json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan."}], "encrypted_content": "gAAAA-codex"});
    let empty = json!({"type": "reasoning", "summary": []});
    let reply = assistant(
        vec![
            AssistantContent::Thinking(
                ThinkingContent::new("Plan.").with_signature(codex.to_string()),
            ),
            AssistantContent::RedactedThinking(RedactedThinkingContent::new(empty.to_string())),
            text("Done."),
        ],
        API,
        MODEL,
        StopReason::Stop,
    );
    let request = Request::new(
        MODEL,
        vec![Message::user("go"), reply, Message::user("next")],
    );
    let encoded = openai_responses::encode_request(&request).unwrap();
    let input = encoded.body["input"].as_array().unwrap();
    assert_eq!(input[1], codex, "{input:#?}");
    assert_eq!(input[2]["type"], "message", "{input:#?}");
    assert_eq!(
        encoded.body.to_string().matches("\"reasoning\"").count(),
        1,
        "{:#}",
        encoded.body
    );
    assert!(
        encoded
            .report
            .iter()
            .any(|c| c.kind == ChangeKind::DroppedThinking && c.detail.contains("1 thinking")),
        "{:#?}",
        encoded.report
    );
}

#[test]
fn decoded_reasoning_replays_byte_for_byte() {
    common::require_conformance!();
    for file in [
        "openai-reasoning-encrypted-content.1.json",
        "openai-reasoning-encrypted-content.1.chunks.txt",
    ] {
        let path = fixtures().join(file);
        let group = if file.ends_with(".json") {
            None
        } else {
            responses_of(&path)
                .into_iter()
                .find(|g| g.iter().any(|l| l.contains("\"type\":\"reasoning\"")))
        };
        let message = match &group {
            None => decode_file(&path).unwrap(),
            Some(lines) => decode_stream(lines.iter().map(String::as_str)).unwrap().0,
        };
        // The item as the server sent it (the final one, for a stream).
        let item = if file.ends_with(".json") {
            let body: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            body["output"][0].clone()
        } else {
            group
                .unwrap()
                .iter()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .find(|e| {
                    e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning"
                })
                .unwrap()["item"]
                .clone()
        };
        let encrypted = item["encrypted_content"].as_str().unwrap();
        assert!(encrypted.len() > 100);
        let stored = match &message.content[0] {
            AssistantContent::Thinking(t) => t.signature.clone().unwrap(),
            AssistantContent::RedactedThinking(r) => r.data.clone(),
            other => panic!("{file}: first block {other:?}"),
        };
        assert!(stored.contains(encrypted));
        let model = message.model.clone();
        let request = Request::new(
            model,
            vec![
                Message::user("q"),
                Message::Assistant(message),
                Message::user("more"),
            ],
        );
        let body = openai_responses::encode_request(&request).unwrap().body;
        let input = body["input"].as_array().unwrap();
        assert_eq!(input[1]["type"], "reasoning", "{file}");
        assert_eq!(input[1]["id"], item["id"]);
        assert_eq!(
            input[1]["encrypted_content"].as_str(),
            Some(encrypted),
            "{file}: not byte for byte"
        );
        assert_eq!(input[1]["summary"], item["summary"]);
        match input[2]["type"].as_str() {
            Some("message") => assert_eq!(input[2]["content"][0]["annotations"], json!([])),
            Some("function_call") => assert!(input[2]["id"].as_str().unwrap().starts_with("fc_")),
            other => panic!("{file}: reasoning followed by {other:?}"),
        }
    }
}

#[test]
fn long_ids_are_mapped_for_calls_and_results_alike() {
    let encoded = openai_responses::encode_request(&case("ids-too-long")).unwrap();
    let input = encoded.body["input"].as_array().unwrap();
    let calls: Vec<&str> = input
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| i["call_id"].as_str().unwrap())
        .collect();
    let outputs: Vec<&str> = input
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(calls, outputs);
    assert!(calls.iter().all(|id| id.len() <= 64));
    assert!(encoded.report.count(ChangeKind::MappedId) >= 1);
}

// ---------------------------------------------------------------------------
// Responses and streams

/// A hand-made fixture whose first and last lines lack their closing brace.
const MALFORMED_FIXTURE: &str = "parallel-tool-call-wrapper.1.chunks.txt";

fn fixtures() -> PathBuf {
    common::conformance_dir().join("responses/vercel/openai/responses")
}

fn decode_stream<'a>(
    events: impl IntoIterator<Item = &'a str>,
) -> Result<(AssistantMessage, Vec<ResponseError>), ResponseError> {
    let mut decoder = StreamDecoder::new();
    for event in events {
        decoder.push(event)?;
    }
    decoder.finish_with_warnings()
}

/// The responses of a chunk file: some recordings hold several requests'
/// streams one after the other, each starting with `response.created`.
fn responses_of(path: &Path) -> Vec<Vec<String>> {
    let mut groups: Vec<Vec<String>> = Vec::new();
    for line in common::chunk_lines(path) {
        let starts = line.contains("\"type\":\"response.created\"");
        match groups.last_mut() {
            Some(group) if !starts => group.push(line),
            _ => groups.push(vec![line]),
        }
    }
    groups
}

type Decoded = Result<(AssistantMessage, Vec<ResponseError>), ResponseError>;

/// Every response in a fixture, decoded.
fn decode_all(path: &Path) -> Vec<Decoded> {
    let name = path.to_string_lossy();
    if name.ends_with(".chunks.txt") {
        responses_of(path)
            .iter()
            .map(|lines| decode_stream(lines.iter().map(String::as_str)))
            .collect()
    } else {
        vec![openai_responses::decode_response_with_warnings(
            &std::fs::read_to_string(path).unwrap(),
        )]
    }
}

/// The last response in a fixture.
fn decode_file(path: &Path) -> Result<AssistantMessage, ResponseError> {
    decode_all(path).pop().unwrap().map(|(m, _)| m)
}

fn fixture_paths() -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".json") || n.ends_with(".chunks.txt")
        })
        .collect();
    entries.sort();
    entries
}

/// Every fixture that decodes to a message that is not an error, by file name.
fn decoded_fixtures() -> Vec<(String, AssistantMessage)> {
    fixture_paths()
        .into_iter()
        .filter(|p| !p.ends_with(MALFORMED_FIXTURE))
        .flat_map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            decode_all(&p)
                .into_iter()
                .enumerate()
                .map(move |(k, r)| (format!("{name}#{k}"), r.unwrap().0))
        })
        .filter(|(_, m)| m.stop_reason != StopReason::Error)
        .collect()
}

/// What both a stream and a body carry.
fn comparable(m: &AssistantMessage) -> Value {
    json!({
        "content": m.content,
        "stopReason": m.stop_reason,
        "model": m.model,
        "responseId": m.response_id,
        "api": m.api,
        "provider": m.provider,
        "usage": m.usage,
        "errorMessage": m.error_message,
        "timestamp": m.timestamp,
    })
}

/// The message with `encrypted_content` taken out of stored reasoning items.
fn without_encrypted(m: &AssistantMessage) -> AssistantMessage {
    let strip = |stored: &str| -> String {
        let mut v: Value = serde_json::from_str(stored).unwrap();
        v.as_object_mut().unwrap().remove("encrypted_content");
        // A `program` item's fingerprint is encrypted too.
        v.as_object_mut().unwrap().remove("fingerprint");
        v.to_string()
    };
    let mut m = m.clone();
    for block in &mut m.content {
        match block {
            AssistantContent::Thinking(t) => t.signature = t.signature.as_deref().map(strip),
            AssistantContent::RedactedThinking(r) => r.data = strip(&r.data),
            // A compaction item is encrypted anew in each copy too.
            AssistantContent::ProviderBlock(p) => {
                p.block = agentmsg::message::RawJson::from_json(&strip(p.block.get())).unwrap();
            }
            _ => {}
        }
    }
    m
}

/// `capture-id-<n>` → `capture-id`, everywhere in the JSON text.
fn without_capture_ids(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("capture-id-") {
        out.push_str(&rest[..at + "capture-id".len()]);
        rest = rest[at + "capture-id-".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

fn shape(m: &AssistantMessage) -> Vec<String> {
    m.content
        .iter()
        .map(|c| match c {
            AssistantContent::Text(_) => "text".to_owned(),
            AssistantContent::Thinking(t) => format!("thinking(signed={})", t.signature.is_some()),
            AssistantContent::RedactedThinking(_) => "redacted".to_owned(),
            AssistantContent::ToolCall(c) => format!("call:{}", c.name),
            AssistantContent::Image(_) => "image".to_owned(),
            AssistantContent::ProviderBlock(p) => format!("provider:{}", p.type_name()),
        })
        .collect()
}

#[test]
fn every_fixture_decodes() {
    common::require_conformance!();
    let mut unmodelled: HashMap<String, Vec<String>> = HashMap::new();
    let mut seen = 0;
    for path in fixture_paths() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == MALFORMED_FIXTURE {
            continue;
        }
        let wire: Option<Value> = name
            .ends_with(".json")
            .then(|| serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap());
        for decoded in decode_all(&path) {
            let (message, warnings) = decoded.unwrap_or_else(|e| panic!("{name}: {e}"));
            seen += 1;
            assert_eq!(
                (message.api.as_str(), message.provider.as_str()),
                (API, "openai"),
                "{name}"
            );
            if message.stop_reason == StopReason::Error {
                assert!(message.error_message.is_some(), "{name}");
                continue;
            }
            assert!(
                message.response_id.is_some() && !message.model.is_empty(),
                "{name}"
            );
            if let Some(usage) = wire.as_ref().map(|w| &w["usage"]) {
                let u = &message.usage;
                assert_eq!(
                    Some(u.input + u.cache_read + u.cache_write),
                    usage["input_tokens"].as_u64(),
                    "{name}"
                );
                assert_eq!(Some(u.output), usage["output_tokens"].as_u64(), "{name}");
                assert_eq!(u.total_tokens, usage["total_tokens"].as_u64(), "{name}");
            }
            // Items agentmsg does not model are kept whole, never skipped.
            assert!(
                !warnings
                    .iter()
                    .any(|w| w.to_string().contains("does not model")),
                "{name}: {warnings:?}"
            );
            for block in &message.content {
                if let AssistantContent::ProviderBlock(p) = block {
                    assert_eq!(p.api, API, "{name}");
                    unmodelled
                        .entry(p.type_name())
                        .or_default()
                        .push(name.clone());
                }
            }
            if message.tool_calls().count() > 0 {
                assert_eq!(message.stop_reason, StopReason::ToolUse, "{name}");
            }
        }
    }
    assert_eq!(seen, 64, "60 files, two of which hold 4 and 2 responses");
    let mut kinds: Vec<_> = unmodelled.keys().cloned().collect();
    kinds.sort();
    eprintln!("unmodelled output items: {kinds:?}");
    for expected in [
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "compaction",
    ] {
        assert!(
            unmodelled.contains_key(expected),
            "{expected} not seen: {kinds:?}"
        );
    }
}

#[test]
fn streams_equal_their_final_response() {
    common::require_conformance!();
    // The terminal event carries the whole response: folding the events must
    // give the same message as decoding that object.
    let mut compared = 0;
    for path in fixture_paths() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".chunks.txt") || name == MALFORMED_FIXTURE {
            continue;
        }
        for lines in responses_of(&path) {
            let (streamed, _) = decode_stream(lines.iter().map(String::as_str)).unwrap();
            let last: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
            let response = &last["response"];
            if response["output"].as_array().is_none_or(|o| o.is_empty()) {
                continue;
            }
            let decoded = openai_responses::decode_response(&response.to_string()).unwrap();
            // This capture gives every event a fresh item id.
            let rotating = name.starts_with("github-copilot-id-rotation");
            // output_item.done and the final response carry differently
            // encrypted copies of the same reasoning; the stream keeps the
            // former, as the API documents.
            let (a, b) = (
                comparable(&without_encrypted(&streamed)),
                comparable(&without_encrypted(&decoded)),
            );
            if rotating {
                assert_eq!(without_capture_ids(&a), without_capture_ids(&b), "{name}");
            } else {
                assert_eq!(a, b, "{name}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "only {compared} streams compared");
}

#[test]
fn stream_and_body_fixtures_agree() {
    common::require_conformance!();
    let mut same_recording = 0;
    for path in fixture_paths() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        let chunks = fixtures().join(format!("{stem}.chunks.txt"));
        if !chunks.exists() {
            continue;
        }
        let body = decode_file(&path).unwrap();
        if chunks.ends_with(MALFORMED_FIXTURE) {
            continue;
        }
        let streams: Vec<AssistantMessage> = decode_all(&chunks)
            .into_iter()
            .map(|r| r.unwrap().0)
            .collect();
        let streamed = streams
            .iter()
            .find(|s| s.response_id == body.response_id)
            .unwrap_or(streams.last().unwrap())
            .clone();
        if body.response_id == streamed.response_id {
            assert_eq!(comparable(&streamed), comparable(&body), "{stem}");
            same_recording += 1;
        } else if body.stop_reason != StopReason::Error || streamed.stop_reason != StopReason::Error
        {
            // Two recordings of the same prompt: same kind of answer.
            assert_eq!(streamed.stop_reason, body.stop_reason, "{stem}");
            assert_eq!(
                streamed.tool_calls().count() > 0,
                body.tool_calls().count() > 0,
                "{stem}: {:?} vs {:?}",
                shape(&streamed),
                shape(&body)
            );
        } else {
            assert_eq!(streamed.stop_reason, body.stop_reason, "{stem}");
        }
    }
    assert!(same_recording >= 2);
}

#[test]
fn reasoning_mapping() {
    common::require_conformance!();
    let message =
        decode_file(&fixtures().join("openai-reasoning-encrypted-content.1.json")).unwrap();
    assert_eq!(shape(&message), ["thinking(signed=true)", "text"]);
    let message = decode_file(&fixtures().join("openai-code-interpreter-tool.1.json")).unwrap();
    // Reasoning before a provider item is replayed with it, as is the last
    // one, before the message.
    let replayable: Vec<bool> = message
        .content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Thinking(t) => Some(t.signature.is_some()),
            AssistantContent::RedactedThinking(_) => Some(true),
            _ => None,
        })
        .collect();
    assert_eq!(replayable.last(), Some(&true), "{:?}", shape(&message));
    assert!(replayable.iter().all(|r| *r), "{:?}", shape(&message));
    let copilot = decode_file(&fixtures().join("github-copilot-id-rotation.1.chunks.txt")).unwrap();
    assert!(
        matches!(&copilot.content[0], AssistantContent::Thinking(t) if t.thinking == "**Counting character occurrences**")
    );
    assert!(
        copilot.text_content().starts_with("There are **3** letter"),
        "{}",
        copilot.text_content()
    );
}

#[test]
fn usage_and_calls() {
    common::require_conformance!();
    let message =
        decode_file(&fixtures().join("openai-reasoning-encrypted-content.1.json")).unwrap();
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.reasoning,
            message.usage.total_tokens
        ),
        (865, 163, 128, Some(1028))
    );
    let body = json!({"id": "r", "model": "m", "status": "completed", "output": [
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{\"x\":[1]}"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "g", "arguments": "{oops"}],
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 80}, "output_tokens": 5, "total_tokens": 105}});
    let (m, warnings) = openai_responses::decode_response_with_warnings(&body.to_string()).unwrap();
    let calls: Vec<&ToolCall> = m.tool_calls().collect();
    assert_eq!(
        (calls[0].id.as_str(), calls[0].signature.as_deref()),
        ("call_1", Some("fc_1"))
    );
    assert_eq!(calls[0].arguments.to_value()["x"], json!([1]));
    assert_eq!(calls[1].arguments.to_value()["value"], "{oops");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].to_string().contains("output[1].arguments"));
    assert_eq!((m.usage.input, m.usage.cache_read), (20, 80));
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    let custom = decode_file(&fixtures().join("openai-custom-tool.1.json")).unwrap();
    assert_eq!(
        custom.tool_calls().next().unwrap().arguments.to_value()["input"],
        "SELECT * FROM users WHERE age > 25"
    );
}

#[test]
fn statuses_map_to_stop_reasons() {
    for (status, details, expected) in [
        ("completed", Value::Null, StopReason::Stop),
        (
            "incomplete",
            json!({"reason": "max_output_tokens"}),
            StopReason::Length,
        ),
        (
            "incomplete",
            json!({"reason": "content_filter"}),
            StopReason::GuardRail,
        ),
        ("cancelled", Value::Null, StopReason::Aborted),
        ("failed", Value::Null, StopReason::Error),
        ("in_progress", Value::Null, StopReason::Error),
    ] {
        let body = json!({"status": status, "incomplete_details": details, "output": [
            {"type": "message", "id": "m", "role": "assistant", "content": [{"type": "output_text", "text": "x", "annotations": []}]}]});
        let m = openai_responses::decode_response(&body.to_string()).unwrap();
        assert_eq!(m.stop_reason, expected, "{status}");
        assert_eq!(
            m.error_message.is_some(),
            expected == StopReason::Error,
            "{status}"
        );
    }
    let refusal = json!({"status": "completed", "output": [{"type": "message", "id": "m", "role": "assistant",
        "content": [{"type": "refusal", "refusal": "No."}]}]});
    let m = openai_responses::decode_response(&refusal.to_string()).unwrap();
    assert_eq!(
        (m.stop_reason, m.text_content().as_str()),
        (StopReason::GuardRail, "No.")
    );
}

#[test]
fn error_bodies_and_events() {
    common::require_conformance!();
    for file in [
        "openai-error.1.json",
        "reasoning-model-temperature-error.json",
        "openai-error.1.chunks.txt",
    ] {
        let m = decode_file(&fixtures().join(file)).unwrap();
        assert_eq!(m.stop_reason, StopReason::Error, "{file}");
        let text = m.error_message.unwrap();
        assert!(
            text.contains("quota") || text.contains("temperature"),
            "{file}: {text}"
        );
    }
}

// ---------------------------------------------------------------------------
// Broken streams

#[test]
fn malformed_fixture_is_an_error_naming_the_event() {
    common::require_conformance!();
    let lines = common::chunk_lines(&fixtures().join(MALFORMED_FIXTURE));
    let err = decode_stream(lines.iter().map(String::as_str)).unwrap_err();
    assert!(
        err.to_string().starts_with("event 0: invalid JSON"),
        "{err}"
    );
    // Pushing on past the bad events still ends in an error naming the first.
    let mut decoder = StreamDecoder::new();
    let failed: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| decoder.push(l).err().map(|_| i))
        .collect();
    assert_eq!(failed, [0, 5]);
    let err = decoder.finish().unwrap_err();
    assert!(err.to_string().starts_with("event 0:"), "{err}");
}

#[test]
fn truncated_streams_are_errors() {
    common::require_conformance!();
    for file in [
        "openai-reasoning-encrypted-content.1.chunks.txt",
        "openai-web-search-tool.1.chunks.txt",
        "openai-client-tool-search.2.chunks.txt",
    ] {
        let lines = responses_of(&fixtures().join(file)).remove(0);
        for cut in [0, 1, lines.len() / 2, lines.len() - 1] {
            match decode_stream(lines[..cut].iter().map(String::as_str)) {
                Err(ResponseError::Truncated { events, .. }) => assert_eq!(events, cut, "{file}"),
                other => panic!("{file} cut at {cut}: {other:?}"),
            }
        }
    }
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "", "null", "[]", "{}", "1", "{\"type\":7}", "{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"x\"}",
        "{\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":9223372036854775807,\"delta\":\"x\"}",
        "{\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":[]}",
        "{\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"summary_index\":3,\"delta\":\"x\"}",
        "{\"type\":\"response.completed\",\"response\":{\"output\":[1,\"x\",{\"type\":\"message\",\"content\":7}]}}",
        "{\"type\":\"response.completed\",\"response\":null}", "{\"type\":\"error\"}", "{\"output\":{}}",
    ];
    for sample in samples {
        let _ = openai_responses::decode_response(sample);
        let mut d = StreamDecoder::new();
        let _ = d.push(sample);
        let _ = d.finish();
        let mut d = StreamDecoder::new();
        for s in samples {
            let _ = d.push(s);
        }
        let _ = d.finish();
    }
    if common::conformance_or_skip(Some("the recorded stream")).is_none() {
        return;
    }
    let lines =
        responses_of(&fixtures().join("openai-reasoning-encrypted-content.1.chunks.txt")).remove(0);
    let mut errors = 0;
    for (i, event) in lines.iter().enumerate().step_by(5) {
        for cut in (0..event.len())
            .step_by(53)
            .filter(|c| event.is_char_boundary(*c))
        {
            let mut d = StreamDecoder::new();
            for e in &lines[..i] {
                d.push(e).unwrap();
            }
            if d.push(&event[..cut]).is_err() {
                errors += 1;
            }
            for e in &lines[i + 1..] {
                let _ = d.push(e);
            }
            assert!(d.finish().is_err(), "event {i} cut at {cut} must fail");
        }
    }
    assert!(errors > 0);
}

#[test]
fn parallel_wrapper_is_split() {
    common::require_conformance!();
    let (m, warnings) = openai_responses::decode_response_with_warnings(
        &std::fs::read_to_string(fixtures().join("parallel-tool-call-wrapper.1.json")).unwrap(),
    )
    .unwrap();
    let calls: Vec<(&str, &str, Value)> = m
        .tool_calls()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.to_value()))
        .collect();
    assert_eq!(
        calls,
        [
            (
                "call_parallel_0",
                "weather",
                json!({"location": "San Francisco"})
            ),
            (
                "call_parallel_1",
                "cityAttractions",
                json!({"city": "Rome"})
            ),
        ]
    );
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    assert!(warnings
        .iter()
        .any(|w| w.to_string().contains("wrapper split into 2 calls")));
}

// ---------------------------------------------------------------------------
// Random transcripts

mod random {
    use super::*;
    use common::openai::message;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn random_transcripts_encode_to_valid_bodies(
            messages in proptest::collection::vec(message(API, MODEL), 0..10),
            system in proptest::option::of("[a-z]{1,8}"),
            max in proptest::option::of(16u32..5000),
        ) {
            common::openai::check_random_request(&CHECKS, messages, system, max)?;
        }
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn decoders_never_panic(events in proptest::collection::vec(common::openai::decoder_json(), 0..8)) {
            let mut decoder = StreamDecoder::new();
            for event in &events {
                let _ = openai_responses::decode_response(&event.to_string());
                let _ = decoder.push(&event.to_string());
            }
            let _ = decoder.finish();
        }
    }
}

/// A message item's id and phase are kept on its first text block in pi's
/// `textSignature` form and sent back with it to the model that wrote them; the
/// API asks for the phase of every assistant message of the models that have
/// one ("dropping it can degrade performance").
#[test]
fn message_ids_and_phases_go_back_to_their_model() {
    common::require_conformance!();
    let message = decode_file(&fixtures().join("openai-phase.1.json")).expect("decodes");
    let ids = [
        "msg_0465b6d1ae1f97c500699f883243a481a3b50b985223592984",
        "msg_0465b6d1ae1f97c500699f8835e09c81a3b91e9d502ff18555",
    ];
    let signatures: Vec<_> = message
        .content
        .iter()
        .filter_map(|c| match c {
            AssistantContent::Text(t) => Some(t.signature.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        signatures,
        [
            Some(format!(
                r#"{{"v":1,"id":"{}","phase":"commentary"}}"#,
                ids[0]
            )),
            Some(format!(
                r#"{{"v":1,"id":"{}","phase":"final_answer"}}"#,
                ids[1]
            )),
        ]
    );
    let messages = |m: Message| vec![Message::user("q"), m, Message::user("next")];
    let items = |model: &str, m: Message| {
        let encoded =
            openai_responses::encode_request(&Request::new(model, messages(m))).expect("encodes");
        let items: Vec<Value> = encoded.body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|item| item["type"] == "message" && item["role"] == "assistant")
            .cloned()
            .collect();
        (items, encoded.report)
    };
    let (same, report) = items(&message.model, Message::Assistant(message.clone()));
    let sent: Vec<_> = same
        .iter()
        .map(|i| (i["id"].as_str(), i["phase"].as_str()))
        .collect();
    assert_eq!(
        sent,
        [
            (Some(ids[0]), Some("commentary")),
            (Some(ids[1]), Some("final_answer"))
        ]
    );
    assert!(report.changes.is_empty(), "{:?}", report.changes);

    let (other, report) = items("gpt-5", Message::Assistant(message.clone()));
    assert_eq!(other.len(), 1, "unsigned text shares one message item");
    assert_eq!(other[0]["content"].as_array().map(Vec::len), Some(2));
    for item in &other {
        assert!(item.get("phase").is_none(), "{item}");
        let id = item["id"].as_str().unwrap_or_default();
        assert!(id.starts_with("msg_") && !ids.contains(&id), "{id}");
    }
    let dropped = change_details(&report, ChangeKind::DroppedThinking);
    assert_eq!(report.changes.len(), 2, "{:?}", report.changes);
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    assert!(
        dropped[1].starts_with("removed the signature of text block 1: it was written by openai/"),
        "{dropped:?}"
    );

    // pi's older form (the bare id), a phase the API does not know, an id too
    // long to send back, unsigned text joining the item before it.
    let long = format!("msg_{}", "a".repeat(80));
    let signed = |t: &str, signature: &str| TextContent::new(t).with_signature(signature);
    let blocks = vec![
        signed("one", "msg_old"),
        TextContent::new("two"),
        signed(
            "three",
            r#"{"v":1,"id":"msg_new","phase":"thinking_aloud"}"#,
        ),
        signed(
            "four",
            &format!(r#"{{"v":1,"id":"{long}","phase":"final_answer"}}"#),
        ),
        signed("five", "msg_old"),
    ];
    let (sent, _) = items(
        MODEL,
        assistant(
            blocks.into_iter().map(AssistantContent::Text).collect(),
            API,
            MODEL,
            StopReason::Stop,
        ),
    );
    let sent: Vec<_> = sent
        .iter()
        .map(|i| {
            let texts: Vec<_> = i["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect();
            (
                i["id"].as_str().unwrap_or_default(),
                i["phase"].as_str(),
                texts,
            )
        })
        .collect();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(sent[0], ("msg_old", None, vec!["one", "two"]));
    assert_eq!(sent[1], ("msg_new", None, vec!["three"]));
    assert_eq!(
        (sent[2].1, &sent[2].2),
        (Some("final_answer"), &vec!["four"])
    );
    assert!(
        sent[2].0.starts_with("msg_") && sent[2].0.len() <= 64,
        "{}",
        sent[2].0
    );
    assert!(
        sent[3].0 != "msg_old" && sent[3].0.starts_with("msg_"),
        "an id is sent once: {sent:?}"
    );
}

/// xAI runs its own tools (X search) and streams their calls as
/// `custom_tool_call` items, then the answer, in one response. The response
/// echoes the request's tools, and no `custom` tool of that name is among
/// them: the call is the server's, kept whole as a provider block, and the
/// message stops instead of asking the client to run `x_keyword_search`.
#[test]
fn a_server_side_custom_tool_call_is_not_a_client_call() {
    let tools = json!([{"type": "x_search"}, {"type": "function", "name": "x_keyword_search", "parameters": {"type": "object"}}]);
    let call = |status: &str, input: &str| {
        json!({"call_id": "xs_call_1", "input": input, "name": "x_keyword_search",
            "type": "custom_tool_call", "id": "ctc_r1_xs_call_1", "status": status})
    };
    let query = r#"{"query":"from:xai","limit":5}"#;
    let response = |status: &str, output: Value| {
        json!({"id": "r1", "object": "response", "model": "grok-4-fast-reasoning",
            "created_at": 1, "status": status, "tools": tools, "output": output,
            "usage": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}})
    };
    let message = json!({"type": "message", "id": "msg_r1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Latest posts.", "annotations": [], "logprobs": []}]});
    let events = [
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": call("in_progress", "")}),
        json!({"type": "response.custom_tool_call_input.delta", "output_index": 0, "item_id": "ctc_r1_xs_call_1", "delta": query}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": call("completed", query)}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_r1", "role": "assistant", "content": [], "status": "in_progress"}}),
        json!({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "item_id": "msg_r1", "delta": "Latest posts."}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": message}),
        json!({"type": "response.completed", "response": response("completed", json!([call("completed", query), message]))}),
    ]
    .map(|e| e.to_string());
    let (streamed, _) = decode_stream(events.iter().map(String::as_str)).unwrap();
    let body = response("completed", json!([call("completed", query), message])).to_string();
    let (decoded, _) = openai_responses::decode_response_with_warnings(&body).unwrap();
    for message in [&streamed, &decoded] {
        assert_eq!(message.stop_reason, StopReason::Stop, "{message:#?}");
        assert_eq!(message.tool_calls().count(), 0, "{message:#?}");
        assert_eq!(message.text_content(), "Latest posts.");
        let AssistantContent::ProviderBlock(block) = &message.content[0] else {
            panic!("{message:#?}")
        };
        assert_eq!(block.type_name(), "custom_tool_call");
        assert!(block.block.get().contains("xs_call_1"));
    }

    // The events as they stream never show it as a call either.
    let mut decoder = StreamDecoder::new();
    for event in &events {
        for e in decoder.push(event).unwrap() {
            assert!(!format!("{e:?}").contains("ToolCall"), "{e:?}");
        }
    }

    // Without the echoed tools, the answer after the call tells the same.
    let mut bare = response("completed", json!([call("completed", query), message]));
    bare.as_object_mut().unwrap().remove("tools");
    let bare = openai_responses::decode_response(&bare.to_string()).unwrap();
    assert_eq!(bare.stop_reason, StopReason::Stop);
    assert_eq!(bare.tool_calls().count(), 0);

    // A custom tool the request declared stays the client's call.
    let mut client = response("completed", json!([call("completed", query)]));
    client["tools"] = json!([{"type": "custom", "name": "x_keyword_search"}]);
    let client = openai_responses::decode_response(&client.to_string()).unwrap();
    assert_eq!(client.stop_reason, StopReason::ToolUse);
    assert_eq!(client.tool_calls().next().unwrap().name, "x_keyword_search");
}
