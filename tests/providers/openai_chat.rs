//! OpenAI Chat Completions codec: request bodies against the published schema and
//! our own rules, recorded responses and streams, broken streams, snapshots.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::common;
use agentmsg::project::ChangeKind;
use agentmsg::providers::openai_chat::{self, StreamDecoder};
use agentmsg::providers::{Request, ResponseError, StreamDecode};
use agentmsg::{
    AssistantContent, AssistantMessage, Message, RedactedThinkingContent, StopReason,
    ThinkingContent, ToolCall,
};
use serde_json::{json, Value};

const SCHEMA: &str = "openai-chat-request.schema.json";
const API: &str = "openai-completions";
const MODEL: &str = "gpt-4.1";
use common::change_details;
use common::openai::PNG;

// ---------------------------------------------------------------------------
// A broad set of transcripts

use common::openai::{assistant, text};

/// Transcripts covering every block type and the repairs prepare makes.
fn corpus() -> Vec<(&'static str, Request<'static>)> {
    let thinking_here = assistant(
        vec![
            AssistantContent::Thinking(
                ThinkingContent::new("Let me think.").with_signature("sig-abc"),
            ),
            AssistantContent::RedactedThinking(RedactedThinkingContent::new("opaque")),
            text("Answer."),
        ],
        API,
        MODEL,
        StopReason::Stop,
    );
    common::openai::corpus(API, MODEL, vec![thinking_here])
}

/// The rules the schema does not check (its objects are open).
fn own_rule_errors(body: &Value, request: &Request) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(messages) = body["messages"].as_array() else {
        return vec!["messages is not an array".into()];
    };
    let mut open: Vec<String> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let mut all_calls: HashSet<String> = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let allowed: &[&str] = match m["role"].as_str() {
            Some("system") => &["role", "content"],
            Some("user") => &["role", "content"],
            Some("assistant") => &["role", "content", "tool_calls"],
            Some("tool") => &["role", "content", "tool_call_id"],
            other => {
                errors.push(format!("messages[{i}]: role {other:?}"));
                continue;
            }
        };
        for key in m.as_object().into_iter().flat_map(|o| o.keys()) {
            if !allowed.contains(&key.as_str()) {
                errors.push(format!("messages[{i}]: unexpected key {key}"));
            }
        }
        let role = m["role"].as_str().unwrap_or_default();
        if role != "tool" && !open.is_empty() {
            errors.push(format!(
                "messages[{i}]: calls {open:?} have no tool message before this {role} message"
            ));
            open.clear();
        }
        match role {
            "assistant" => {
                let calls = m["tool_calls"].as_array().cloned().unwrap_or_default();
                if m["content"].is_null() && calls.is_empty() {
                    errors.push(format!(
                        "messages[{i}]: assistant with neither content nor tool_calls"
                    ));
                }
                for (j, c) in calls.iter().enumerate() {
                    let id = c["id"].as_str().unwrap_or_default().to_owned();
                    if id.is_empty() || id.chars().count() > 40 {
                        errors.push(format!(
                            "messages[{i}].tool_calls[{j}].id {id:?} is empty or over 40 chars"
                        ));
                    }
                    match c["function"]["arguments"].as_str().map(serde_json::from_str::<Value>) {
                        Some(Ok(Value::Object(_))) => {}
                        other => errors.push(format!("messages[{i}].tool_calls[{j}]: arguments {other:?} is not a JSON object string")),
                    }
                    if !all_calls.insert(id.clone()) {
                        errors.push(format!("messages[{i}].tool_calls[{j}]: duplicate id {id}"));
                    }
                    open.push(id);
                }
                if m.get("reasoning_content").is_some() || m.get("reasoning").is_some() {
                    errors.push(format!("messages[{i}]: reasoning replayed"));
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap_or_default().to_owned();
                if let Some(pos) = open.iter().position(|c| *c == id) {
                    open.remove(pos);
                    answered.insert(id);
                } else {
                    errors.push(format!(
                        "messages[{i}]: tool message for {id:?}, which is not an open call"
                    ));
                }
                if !m["content"].is_string() {
                    errors.push(format!("messages[{i}]: tool content is not a string"));
                }
            }
            "user" => {
                if let Some(parts) = m["content"].as_array() {
                    if parts.is_empty() {
                        errors.push(format!("messages[{i}]: empty content array"));
                    }
                    for (j, p) in parts.iter().enumerate() {
                        if p["type"] == "input_audio"
                            && !matches!(p["input_audio"]["format"].as_str(), Some("wav" | "mp3"))
                        {
                            errors.push(format!("messages[{i}].content[{j}]: audio format"));
                        }
                        if p["type"] == "image_url" {
                            let url = p["image_url"]["url"].as_str().unwrap_or_default();
                            if !(url.starts_with("data:image/") || url.starts_with("https://")) {
                                errors.push(format!(
                                    "messages[{i}].content[{j}]: image url {url:.40}"
                                ));
                            }
                        }
                        if p["type"] == "file" {
                            let data = p["file"]["file_data"].as_str();
                            if data.is_some_and(|d| !d.starts_with("data:application/pdf;base64,"))
                                || (data.is_some() && p["file"]["filename"].as_str().is_none())
                            {
                                errors.push(format!("messages[{i}].content[{j}]: file part needs a data URL and a filename"));
                            }
                        }
                    }
                } else if !m["content"].is_string() {
                    errors.push(format!(
                        "messages[{i}]: user content is neither string nor array"
                    ));
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        errors.push(format!("calls {open:?} are never answered"));
    }
    if body.get("max_tokens").is_some() {
        errors.push("max_tokens used instead of max_completion_tokens".into());
    }
    if request.max_tokens.map(Value::from).as_ref() != body.get("max_completion_tokens") {
        errors.push("max_completion_tokens does not match the request".into());
    }
    errors
}

const CHECKS: common::openai::Checks = common::openai::Checks {
    model: MODEL,
    encode: openai_chat::encode_request,
    schema: SCHEMA,
    rules: own_rule_errors,
    sdk: "openai-chat",
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
    // Every recorded Responses answer, replayed to a chat model (another api:
    // its reasoning must not go back).
    let dir = data.join("responses/vercel/openai/responses");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let text = std::fs::read_to_string(path).unwrap();
        let answer = agentmsg::providers::openai_responses::decode_response(&text).unwrap();
        let name = format!(
            "from-responses-{}",
            path.file_stem().unwrap().to_string_lossy()
        );
        // Error answers (no model, stop reason error) are skipped by prepare.
        let request = Request::new(
            MODEL,
            vec![
                Message::user("q"),
                Message::Assistant(answer),
                Message::user("go on"),
            ],
        );
        let body = check_case(&name, &request);
        assert!(!body.to_string().contains("encrypted_content"), "{name}");
        count += 1;
    }
    assert!(count > 50, "only {count} cases");
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
fn system_prompt_is_the_first_message() {
    let body = openai_chat::encode_request(&case("text")).unwrap().body;
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Be terse."})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hello"})
    );
}

#[test]
fn user_blocks_map_to_parts_and_unsupported_ones_are_reported() {
    let encoded = openai_chat::encode_request(&case("every-user-block")).unwrap();
    let parts = encoded.body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(
        parts[1]["image_url"]["url"],
        format!("data:image/png;base64,{PNG}")
    );
    assert_eq!(parts[2]["image_url"]["url"], "https://example.com/cat.jpg");
    assert_eq!(
        parts[3]["input_audio"],
        json!({"data": "UklGRg==", "format": "wav"})
    );
    assert_eq!(parts[4]["input_audio"]["format"], "mp3");
    assert_eq!(
        parts[5]["type"], "text",
        "ogg audio must not be sent as input_audio"
    );
    assert_eq!(
        parts[6]["file"],
        json!({"filename": "spec.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjcK"})
    );
    assert_eq!(parts[7], json!({"type": "text", "text": "hello"}));
    assert_eq!(parts[8]["type"], "text");
    assert_eq!(parts[9]["type"], "text");
    let details = change_details(&encoded.report, ChangeKind::UnsupportedContent);
    assert_eq!(details.len(), 4, "{details:?}");
    assert!(details[0].contains("audio/ogg"), "{details:?}");
    assert!(encoded.report.changes.iter().all(|c| c.index == 0));
}

#[test]
fn tool_calls_and_results() {
    let encoded = openai_chat::encode_request(&case("parallel-tool-calls")).unwrap();
    let messages = encoded.body["messages"].as_array().unwrap();
    let calls = messages[1]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0]["function"]["arguments"], "{\"path\":\"a\"}");
    assert_eq!(calls[2]["function"]["arguments"], "{}");
    assert!(messages[1]["content"].is_null());
    // Every call is answered right after its turn; the missing one
    // synthetically, the result without a call is dropped.
    let mut ids: Vec<&str> = messages[2..]
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert_eq!(encoded.report.count(ChangeKind::SyntheticResult), 1);
    assert_eq!(encoded.report.count(ChangeKind::DroppedResult), 1);
    let tools = &encoded.body["tools"];
    assert_eq!(tools[0]["type"], "function");
    assert_eq!(tools[0]["function"]["name"], "read");
    assert_eq!(
        tools[1]["function"]["parameters"],
        json!({"type": "object", "properties": {}})
    );
}

#[test]
fn max_tokens_is_max_completion_tokens() {
    let body = openai_chat::encode_request(&case("tool-round-trip"))
        .unwrap()
        .body;
    assert_eq!(body["max_completion_tokens"], 1024);
    assert!(body.get("max_tokens").is_none());
}

#[test]
fn tool_result_images_move_to_a_user_message() {
    let encoded = openai_chat::encode_request(&case("tool-result-images")).unwrap();
    let messages = encoded.body["messages"].as_array().unwrap();
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(messages[tool]["content"].is_string());
    let after = &messages[tool + 1];
    assert_eq!(after["role"], "user");
    assert!(after["content"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["type"] == "image_url"));
    assert!(encoded.report.count(ChangeKind::MovedImages) >= 1);
}

#[test]
fn thinking_is_not_replayed_and_is_reported() {
    let encoded = openai_chat::encode_request(&case("thinking-with-signatures")).unwrap();
    let text = encoded.body.to_string();
    assert!(
        !text.contains("Let me think") && !text.contains("sig-abc") && !text.contains("opaque")
    );
    assert!(!text.contains("Claude thinks") && !text.contains("EqQB"));
    assert!(text.contains("Answer.") && text.contains("Hi from Claude."));
    // The same-model turn (input 1) is reported by the encoder, the foreign one
    // (input 3) by prepare.
    let dropped: Vec<usize> = encoded
        .report
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::DroppedThinking)
        .map(|c| c.index)
        .collect();
    assert!(
        dropped.contains(&1) && dropped.contains(&3),
        "{:?}",
        encoded.report
    );
}

#[test]
fn long_ids_are_mapped_for_calls_and_results_alike() {
    let encoded = openai_chat::encode_request(&case("ids-too-long")).unwrap();
    let messages = encoded.body["messages"].as_array().unwrap();
    let call_ids: Vec<&str> = messages[1]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let result_ids: Vec<&str> = messages[2..]
        .iter()
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(call_ids, result_ids);
    assert!(call_ids.iter().all(|id| id.len() <= 40));
    assert!(encoded.report.count(ChangeKind::MappedId) >= 1);
}

// ---------------------------------------------------------------------------
// Snapshots

// ---------------------------------------------------------------------------
// Responses and streams

fn fixtures() -> PathBuf {
    common::conformance_dir().join("responses/vercel/openai/chat")
}

fn decode_stream<'a>(
    events: impl IntoIterator<Item = &'a str>,
) -> Result<AssistantMessage, ResponseError> {
    let mut decoder = StreamDecoder::new();
    for event in events {
        decoder.push(event)?;
    }
    decoder.finish()
}

fn sse_data(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:") {
            let data = data.trim_start();
            if data == "[DONE]" {
                break;
            }
            out.push(data.to_owned());
        }
    }
    out
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
    })
}

#[test]
fn every_fixture_decodes() {
    common::require_conformance!();
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let message = if name.ends_with(".chunks.txt") {
            let lines = common::chunk_lines(&path);
            decode_stream(lines.iter().map(String::as_str))
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        } else if name.ends_with(".json") {
            openai_chat::decode_response(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        } else {
            continue;
        };
        seen += 1;
        assert_eq!(message.api, API, "{name}");
        assert_eq!(message.provider, "openai", "{name}");
        if message.stop_reason == StopReason::Error {
            assert!(message.error_message.is_some(), "{name}");
        } else {
            assert!(!message.content.is_empty(), "{name}: no content");
            assert!(message.usage.output > 0, "{name}: no usage");
        }
    }
    assert_eq!(seen, 4);
}

#[test]
fn text_body_and_stream() {
    common::require_conformance!();
    let body = std::fs::read_to_string(fixtures().join("openai-text.json")).unwrap();
    let message = openai_chat::decode_response(&body).unwrap();
    let wire: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        message.text_content(),
        wire["choices"][0]["message"]["content"].as_str().unwrap()
    );
    assert_eq!(message.response_id.as_deref(), wire["id"].as_str());
    assert_eq!(message.model, wire["model"].as_str().unwrap());
    assert_eq!(message.stop_reason, StopReason::Stop);
    let usage = &wire["usage"];
    let cached = usage["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    assert_eq!(
        message.usage.input + cached,
        usage["prompt_tokens"].as_u64().unwrap()
    );
    assert_eq!(message.usage.cache_read, cached);
    assert_eq!(
        message.usage.output,
        usage["completion_tokens"].as_u64().unwrap()
    );
    assert_eq!(message.usage.total_tokens, usage["total_tokens"].as_u64());
    assert_eq!(message.timestamp, wire["created"].as_u64().unwrap() * 1000);

    // The stream is another recording of the same prompt: it must fold to a
    // message of the same shape, with the text of its own deltas.
    let lines = common::chunk_lines(&fixtures().join("openai-text.chunks.txt"));
    let streamed = decode_stream(lines.iter().map(String::as_str)).unwrap();
    let deltas: String = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|c| {
            c["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(streamed.text_content(), deltas);
    assert_eq!(streamed.content.len(), 1);
    assert_eq!(streamed.stop_reason, message.stop_reason);
    assert_eq!(streamed.api, message.api);
    assert!(streamed.usage.output > 0);
}

#[test]
fn stream_and_body_of_one_response_agree() {
    let data = common::require_conformance!();
    // A body rebuilt from the SSE stream's own data is the same response: the
    // stream fold must equal the body decode field for field.
    let events = sse_data(&data.join("responses/sse/openai-chat-tool-calls.sse"));
    let streamed = decode_stream(events.iter().map(String::as_str)).unwrap();
    let chunks: Vec<Value> = events
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let mut calls: Vec<Value> = Vec::new();
    for chunk in &chunks {
        for delta in chunk["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = delta["index"].as_u64().unwrap() as usize;
            if calls.len() <= i {
                calls.push(json!({"id": delta["id"], "type": "function", "function": {"name": delta["function"]["name"], "arguments": ""}}));
            }
            let args = calls[i]["function"]["arguments"]
                .as_str()
                .unwrap()
                .to_owned()
                + delta["function"]["arguments"].as_str().unwrap_or("");
            calls[i]["function"]["arguments"] = Value::String(args);
        }
    }
    let finish = chunks
        .iter()
        .find_map(|c| c["choices"][0]["finish_reason"].as_str())
        .unwrap();
    let usage = chunks
        .iter()
        .find(|c| c["usage"].is_object())
        .map(|c| c["usage"].clone())
        .unwrap();
    let body = json!({
        "id": chunks[0]["id"], "object": "chat.completion", "created": chunks[0]["created"], "model": chunks[0]["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": finish}],
        "usage": usage,
    });
    let decoded = openai_chat::decode_response(&body.to_string()).unwrap();
    assert_eq!(comparable(&streamed), comparable(&decoded));
    assert_eq!(streamed.usage, decoded.usage);
    assert_eq!(streamed.timestamp, decoded.timestamp);
}

#[test]
fn sse_parallel_tool_calls() {
    let data = common::require_conformance!();
    let events = sse_data(&data.join("responses/sse/openai-chat-tool-calls.sse"));
    let message = decode_stream(events.iter().map(String::as_str)).unwrap();
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2, "{message:#?}");
    assert_eq!(calls[0].id, "call_JMW1whyEaYG438VE1OIflxA2");
    assert_eq!(calls[0].arguments.to_value()["city"], "Edinburgh");
    assert_eq!(calls[0].name, "GetWeatherArgs");
    assert_eq!(calls[0].arguments.to_value()["country"], "GB");
    assert_eq!(calls[1].id, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
    assert_eq!(calls[1].name, "get_stock_price");
    assert!(
        calls[1].arguments.to_map().contains_key("ticker"),
        "{:?}",
        calls[1].arguments
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert!(message.usage.input > 0 && message.usage.output > 0);
    assert_eq!(message.model, "gpt-4o-2024-08-06");
}

#[test]
fn azure_stream_with_filter_chunks() {
    common::require_conformance!();
    let lines = common::chunk_lines(&fixtures().join("azure-model-router.1.chunks.txt"));
    let message = decode_stream(lines.iter().map(String::as_str)).unwrap();
    assert!(
        message.text_content().starts_with("Capital"),
        "{}",
        message.text_content()
    );
    assert_eq!(
        message.response_id.as_deref(),
        Some("chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt")
    );
    assert!(message.usage.reasoning > 0 || message.usage.output > 0);
}

#[test]
fn error_body_becomes_an_error_message() {
    common::require_conformance!();
    let body =
        std::fs::read_to_string(fixtures().join("reasoning-model-legacy-parameter-error.json"))
            .unwrap();
    let message = openai_chat::decode_response(&body).unwrap();
    assert_eq!(message.stop_reason, StopReason::Error);
    let text = message.error_message.unwrap();
    assert!(
        text.contains("max_completion_tokens") && text.contains("unsupported_parameter"),
        "{text}"
    );
    assert!(message.content.is_empty());
}

#[test]
fn reasoning_fields_of_compatible_servers() {
    let body = json!({"id": "x", "model": "deepseek-reasoner", "created": 5, "choices": [{"index": 0,
        "message": {"role": "assistant", "reasoning_content": "Hmm.", "content": "42",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
        "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
            "prompt_tokens_details": {"cached_tokens": 60}, "completion_tokens_details": {"reasoning_tokens": 7}}});
    let m = openai_chat::decode_response(&body.to_string()).unwrap();
    assert!(
        matches!(&m.content[0], AssistantContent::Thinking(t) if t.thinking == "Hmm." && t.signature.as_deref() == Some("reasoning_content"))
    );
    assert!(matches!(&m.content[1], AssistantContent::Text(t) if t.text == "42"));
    assert!(
        matches!(&m.content[2], AssistantContent::ToolCall(c) if c.arguments.to_value()["a"] == 1)
    );
    assert_eq!(m.stop_reason, StopReason::ToolUse);
    assert_eq!(
        (
            m.usage.input,
            m.usage.cache_read,
            m.usage.output,
            m.usage.reasoning
        ),
        (40, 60, 20, 7)
    );

    let mut decoder = StreamDecoder::new();
    for chunk in [
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"reasoning": "Think "}}]}),
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"reasoning": "more."}}]}),
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"content": "Done"}, "finish_reason": "length"}]}),
    ] {
        decoder.push(&chunk.to_string()).unwrap();
    }
    let m = decoder.finish().unwrap();
    assert!(
        matches!(&m.content[0], AssistantContent::Thinking(t) if t.thinking == "Think more." && t.signature.as_deref() == Some("reasoning"))
    );
    assert_eq!(m.text_content(), "Done");
    assert_eq!(m.stop_reason, StopReason::Length);
}

#[test]
fn finish_reasons_map_to_stop_reasons() {
    for (reason, expected) in [
        ("stop", StopReason::Stop),
        ("length", StopReason::Length),
        ("tool_calls", StopReason::ToolUse),
        ("function_call", StopReason::ToolUse),
        ("content_filter", StopReason::GuardRail),
    ] {
        let body = json!({"choices": [{"index": 0, "message": {"content": "x"}, "finish_reason": reason}]});
        assert_eq!(
            openai_chat::decode_response(&body.to_string())
                .unwrap()
                .stop_reason,
            expected,
            "{reason}"
        );
    }
    let refusal = json!({"choices": [{"index": 0, "message": {"content": null, "refusal": "I can't."}, "finish_reason": "stop"}]});
    let m = openai_chat::decode_response(&refusal.to_string()).unwrap();
    assert_eq!(m.stop_reason, StopReason::GuardRail);
    assert_eq!(m.text_content(), "I can't.");
}

#[test]
fn invalid_arguments_are_kept_and_reported() {
    let body = json!({"choices": [{"index": 0, "message": {"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": tru"}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "[1,2]"}},
        {"id": "c3", "type": "function", "function": {"name": "h", "arguments": ""}}]}, "finish_reason": "tool_calls"}]});
    let (m, warnings) = openai_chat::decode_response_with_warnings(&body.to_string()).unwrap();
    let calls: Vec<&ToolCall> = m.tool_calls().collect();
    assert_eq!(calls[0].arguments.to_value()["value"], "{\"a\": tru");
    assert_eq!(calls[1].arguments.to_value()["value"], json!([1, 2]));
    assert!(calls[2].arguments.is_empty());
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].to_string().contains("tool_calls[0]"),
        "{}",
        warnings[0]
    );

    let mut decoder = StreamDecoder::new();
    decoder.push(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}"#).unwrap();
    decoder
        .push(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#)
        .unwrap();
    let (m, warnings) = decoder.finish_with_warnings().unwrap();
    assert_eq!(
        m.tool_calls().next().unwrap().arguments.to_value()["value"],
        "{\"a\""
    );
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].to_string().starts_with("event 0:"),
        "{}",
        warnings[0]
    );
}

// ---------------------------------------------------------------------------
// Broken streams

#[test]
fn truncated_stream_is_an_error_naming_the_count() {
    let data = common::require_conformance!();
    let events = sse_data(&data.join("responses/sse/openai-chat-tool-calls.sse"));
    let finish_at = events
        .iter()
        .position(|e| e.contains("\"finish_reason\":\"tool_calls\""))
        .unwrap();
    for cut in [0, 1, finish_at / 2, finish_at] {
        let result = decode_stream(events[..cut].iter().map(String::as_str));
        match result {
            Err(ResponseError::Truncated { events, .. }) => assert_eq!(events, cut),
            other => panic!("cut at {cut}: {other:?}"),
        }
    }
}

#[test]
fn malformed_event_is_an_error_naming_its_index() {
    let data = common::require_conformance!();
    let events = sse_data(&data.join("responses/sse/openai-chat-tool-calls.sse"));
    let mut broken = events.clone();
    broken[3] = broken[3][..broken[3].len() / 2].to_owned();
    let mut decoder = StreamDecoder::new();
    let mut first_error = None;
    for e in &broken {
        if let Err(err) = decoder.push(e) {
            first_error.get_or_insert(err.to_string());
        }
    }
    assert!(first_error.unwrap().starts_with("event 3: invalid JSON"));
    let err = decoder.finish().unwrap_err();
    assert!(err.to_string().starts_with("event 3:"), "{err}");
}

#[test]
fn error_chunk_ends_in_stop_reason_error() {
    let mut decoder = StreamDecoder::new();
    decoder
        .push(r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"par"}}]}"#)
        .unwrap();
    decoder
        .push(r#"{"error":{"message":"overloaded","type":"server_error"}}"#)
        .unwrap();
    let m = decoder.finish().unwrap();
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(m.error_message.as_deref(), Some("server_error: overloaded"));
    assert_eq!(m.text_content(), "par");
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "", "null", "[]", "{}", "42", "\"x\"", "{\"choices\":null}", "{\"choices\":[null]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}",
        "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999999,\"function\":{\"arguments\":1}}]}}]}",
        "{\"usage\":{\"prompt_tokens\":-5}}", "{\"error\":\"x\"}", "[DONE]",
    ];
    for sample in samples {
        let _ = openai_chat::decode_response(sample);
        let mut d = StreamDecoder::new();
        let _ = d.push(sample);
        let _ = d.finish();
    }
    // Every prefix of every event, and every event with one byte changed.
    let Some(data) = common::conformance_or_skip(Some("the recorded stream")) else {
        return;
    };
    let events = sse_data(&data.join("responses/sse/openai-chat-tool-calls.sse"));
    let mut seen: HashMap<bool, usize> = HashMap::new();
    for (i, event) in events.iter().enumerate() {
        for cut in (0..event.len()).step_by(7) {
            if !event.is_char_boundary(cut) {
                continue;
            }
            let mut d = StreamDecoder::new();
            for e in &events[..i] {
                d.push(e).unwrap();
            }
            *seen.entry(d.push(&event[..cut]).is_ok()).or_default() += 1;
            let _ = d.finish();
            let _ = openai_chat::decode_response(&event[..cut]);
        }
    }
    assert!(seen.get(&false).copied().unwrap_or(0) > 0);
}

#[test]
fn tool_call_deltas_without_index() {
    let mut decoder = StreamDecoder::new();
    for chunk in [
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{\"x\""}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"arguments": ":1}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": "{}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "b", "function": {"name": "g", "arguments": ""}}]}, "finish_reason": "tool_calls"}]}),
    ] {
        decoder.push(&chunk.to_string()).unwrap();
    }
    let m = decoder.finish().unwrap();
    let calls: Vec<(&str, &str, Value)> = m
        .tool_calls()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.to_value()))
        .collect();
    assert_eq!(calls, [("a", "f", json!({"x": 1})), ("b", "g", json!({}))]);
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

#[test]
fn done_without_finish_reason_ends_the_stream() {
    let mut decoder = StreamDecoder::new();
    decoder
        .push(r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}"#)
        .unwrap();
    decoder.push("[DONE]").unwrap();
    let m = decoder.finish().unwrap();
    assert_eq!(
        (m.text_content().as_str(), m.stop_reason),
        ("hi", StopReason::Stop)
    );
}

#[test]
fn custom_tool_calls_are_kept() {
    let body = json!({"choices": [{"index": 0, "message": {"tool_calls": [
        {"id": "c1", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}]},
        "finish_reason": "tool_calls"}]});
    let (m, warnings) = openai_chat::decode_response_with_warnings(&body.to_string()).unwrap();
    let call = m.tool_calls().next().unwrap();
    assert_eq!((call.id.as_str(), call.name.as_str()), ("c1", "sql"));
    assert_eq!(call.arguments.to_value()["input"], "SELECT 1");
    assert_eq!(warnings.len(), 1);
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
                let _ = openai_chat::decode_response(&event.to_string());
                let _ = decoder.push(&event.to_string());
            }
            let _ = decoder.finish();
        }
    }
}
