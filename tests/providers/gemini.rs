//! Gemini generateContent codec: request bodies against the published schema and
//! our own role rules, the recorded responses and streams, snapshots.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common;
use crate::scenarios::{check_request_bodies, Api, APIS};
use agentmsg::project::ChangeKind;
use agentmsg::providers::{gemini, Request, ResponseError, StreamDecode, ToolSpec};
use agentmsg::{AgentMessage, AssistantContent, AssistantMessage, Message, StopReason};
use serde_json::{json, Value};

use common::{change_details, chunk_lines, file_name, lines, pi_messages};

const SCHEMA: &str = "gemini-generatecontent-request.schema.json";
const MODEL: &str = "gemini-3-pro-preview";
use crate::transcripts::{PDF, PNG};
const SIG: &str = "EqQBCkgIARABGAIiQA==";

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
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
                "additionalProperties": false}),
        ),
        ToolSpec::new("now", "", json!({})),
    ]
}

fn cases() -> Vec<(String, Request<'static>)> {
    let user = |text: &str| json!({"role": "user", "content": text, "timestamp": 1}).to_string();
    let result = |id: &str, content: Value, err: bool| {
        json!({"role": "toolResult", "toolCallId": id, "toolName": "read", "content": content,
            "isError": err, "timestamp": 3})
        .to_string()
    };
    let call = |id: &str| json!({"type": "toolCall", "id": id, "name": "read", "arguments": {"path": "a.rs"}});
    let signed_call = |id: &str| json!({"type": "toolCall", "id": id, "name": "read", "arguments": {"path": "a.rs"}, "signature": SIG});
    let thought = json!({"type": "thinking", "thinking": "Let me look.", "signature": SIG});
    let list: Vec<(&str, Vec<String>, Option<&str>)> = vec![
        ("text", vec![
            json!({"role": "system", "content": "You are terse."}).to_string(),
            user("Hello"),
            assistant(json!([{"type": "text", "text": "Hi."}]), "stop", MODEL),
            user("Bye"),
        ], Some("Be helpful.")),
        ("every_block", vec![
            json!({"role": "user", "content": [
                {"type": "text", "text": "Look at these"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "image", "url": "https://example.com/cat.jpg"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "document", "data": PDF, "mimeType": "application/pdf", "title": "spec.pdf"},
                {"type": "document", "url": "gs://bucket/a.pdf"},
            ], "timestamp": 1}).to_string(),
            assistant(json!([thought, {"type": "text", "text": "Reading.", "textSignature": "RXRleHQ="},
                signed_call("c1")]), "toolUse", MODEL),
            result("c1", json!([{"type": "text", "text": "fn main() {}"},
                {"type": "image", "data": PNG, "mimeType": "image/png"}]), false),
            assistant(json!([{"type": "text", "text": "Done."}]), "stop", MODEL),
            user("Thanks"),
        ], Some("sys")),
        ("parallel_tool_calls", vec![
            user("Read two files"),
            assistant(json!([signed_call("call_a"), {"type": "toolCall", "id": "call_b", "name": "now", "arguments": {}}]), "toolUse", MODEL),
            result("call_a", json!([{"type": "text", "text": "A"}]), false),
            json!({"role": "toolResult", "toolCallId": "call_b", "toolName": "now",
                "content": [{"type": "text", "text": "12:00"}], "isError": true}).to_string(),
            user("and now?"),
        ], None),
        ("tool_result_images", vec![
            user("Screenshot please"),
            assistant(json!([signed_call("s1")]), "toolUse", MODEL),
            result("s1", json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]), false),
        ], None),
        ("thinking_signatures", vec![
            user("Think"),
            assistant(json!([thought, {"type": "text", "text": "Thought."}]), "stop", MODEL),
            user("Other model"),
            assistant(json!([{"type": "thinking", "thinking": "foreign", "signature": "c2ln"},
                {"type": "text", "text": "from flash"}, call("f1")]), "toolUse", "gemini-2.5-flash"),
            result("f1", json!([{"type": "text", "text": "ok"}]), false),
            user("last"),
        ], None),
        ("failed_turns", vec![
            user("Try"),
            assistant(json!([{"type": "text", "text": "Partial"}, call("bad1")]), "error", MODEL),
            result("bad1", json!([{"type": "text", "text": "late"}]), false),
            assistant(json!([{"type": "text", "text": "cut"}]), "aborted", MODEL),
            user("Try again"),
        ], None),
        ("orphaned_calls", vec![
            user("Go"),
            assistant(json!([signed_call("orphan")]), "toolUse", MODEL),
            user("Never mind"),
            result("nobody", json!([{"type": "text", "text": "stray"}]), true),
            user("Still there?"),
        ], None),
        ("odd_ids", vec![
            user("ids"),
            assistant(json!([signed_call("functions.read:0"), call(&"x".repeat(100))]), "toolUse", MODEL),
            result("functions.read:0", json!([{"type": "text", "text": "1"}]), false),
            result(&"x".repeat(100), json!([{"type": "text", "text": "2"}]), true),
        ], None),
        ("same_role_runs", vec![
            user("one"),
            user("two"),
            assistant(json!([{"type": "text", "text": "a"}]), "stop", MODEL),
            assistant(json!([{"type": "text", "text": "b"}]), "stop", MODEL),
            json!({"role": "system", "content": "Late system note."}).to_string(),
            user("three"),
        ], None),
        ("unsupported_media", vec![json!({"role": "user", "content": [
                {"type": "image", "data": "Qk0=", "mimeType": "image/bmp"},
                {"type": "document", "data": "UEsDBA==", "mimeType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
                {"type": "document", "data": "aGVsbG8=", "mimeType": "text/markdown"},
            ], "timestamp": 1}).to_string()], None),
        ("foreign_calls_on_gemini3", vec![
            user("go"),
            json!({"role": "assistant", "content": [{"type": "toolCall", "id": "toolu_1", "name": "read", "arguments": {"path": "x"}},
                {"type": "toolCall", "id": "toolu_2", "name": "read", "arguments": {"path": "y"}}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse", "timestamp": 2}).to_string(),
            result("toolu_1", json!([{"type": "text", "text": "1"}]), false),
            result("toolu_2", json!([{"type": "text", "text": "2"}]), false),
        ], None),
    ];
    list.into_iter()
        .map(|(name, ls, system)| {
            let mut request = Request::new(MODEL, lines(&ls.join("\n"))).with_tools(tools());
            if let Some(system) = system {
                request = request.with_system(system);
            }
            if name == "text" {
                request = request.with_max_tokens(1000);
            }
            (name.to_owned(), request)
        })
        .collect()
}

fn pi_cases() -> Vec<(String, Request<'static>)> {
    if common::conformance_or_skip(Some("the pi-session cases")).is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for file in ["before-compaction.jsonl", "large-session.jsonl"] {
        let messages = pi_messages(file);
        assert!(
            messages.len() > 500,
            "{file}: only {} messages",
            messages.len()
        );
        let stem = file.trim_end_matches(".jsonl").replace('-', "_");
        for (model, cuts) in [
            (MODEL, vec![7, 41, 150, messages.len()]),
            ("gemini-2.5-flash", vec![messages.len()]),
        ] {
            for cut in cuts {
                let cut = cut.min(messages.len());
                let request = Request::new(model, messages[..cut].to_vec())
                    .with_system("You are a coding agent.")
                    .with_tools(tools())
                    .with_max_tokens(8192);
                out.push((
                    format!("pi_{stem}_{}_{cut}", model.replace(['-', '.'], "_")),
                    request,
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Our own rules, for what the schema does not catch

const DATA_FIELDS: [&str; 7] = [
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

fn role_errors(body: &Value, gemini3: bool) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(contents) = body.get("contents").and_then(Value::as_array) else {
        return vec!["no contents array".into()];
    };
    let mut previous = "";
    let mut open_calls: Vec<(String, String)> = Vec::new();
    for (i, turn) in contents.iter().enumerate() {
        let role = turn["role"].as_str().unwrap_or_default();
        if !matches!(role, "user" | "model") {
            errors.push(format!("contents[{i}]: role `{role}`"));
        }
        if role == previous {
            errors.push(format!("contents[{i}]: two {role} turns in a row"));
        }
        if i == 0 && role != "user" {
            errors.push("contents[0] is not a user turn".into());
        }
        let parts = turn["parts"].as_array().cloned().unwrap_or_default();
        if parts.is_empty() {
            errors.push(format!("contents[{i}]: no parts"));
        }
        let mut responses = Vec::new();
        let mut seen_other = false;
        let mut calls = Vec::new();
        for (j, part) in parts.iter().enumerate() {
            let at = format!("contents[{i}].parts[{j}]");
            let data: Vec<_> = DATA_FIELDS
                .iter()
                .filter(|f| part.get(**f).is_some())
                .collect();
            if data.len() != 1 {
                errors.push(format!("{at}: {} data fields {data:?}", data.len()));
            }
            if let Some(signature) = part.get("thoughtSignature").and_then(Value::as_str) {
                let alphabet = signature
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+/_-=".contains(&b));
                if !alphabet || signature.len() % 4 != 0 {
                    errors.push(format!("{at}: thoughtSignature is not base64"));
                }
            }
            if let Some(call) = part.get("functionCall") {
                if role != "model" {
                    errors.push(format!("{at}: functionCall in a {role} turn"));
                }
                if calls.is_empty() && gemini3 && part.get("thoughtSignature").is_none() {
                    errors.push(format!(
                        "{at}: the first functionCall of a turn has no thoughtSignature (Gemini 3)"
                    ));
                }
                calls.push((
                    call["id"].as_str().unwrap_or_default().to_owned(),
                    call["name"].as_str().unwrap_or_default().to_owned(),
                ));
            } else if let Some(response) = part.get("functionResponse") {
                if role != "user" {
                    errors.push(format!("{at}: functionResponse in a {role} turn"));
                }
                if seen_other {
                    errors.push(format!("{at}: functionResponse after other parts"));
                }
                if !response["response"].is_object() {
                    errors.push(format!("{at}: response is not an object"));
                }
                responses.push((
                    response["id"].as_str().unwrap_or_default().to_owned(),
                    response["name"].as_str().unwrap_or_default().to_owned(),
                ));
            } else {
                seen_other = true;
                if part.get("text").is_some_and(|t| t == "")
                    && part.get("thoughtSignature").is_none()
                {
                    errors.push(format!("{at}: empty text"));
                }
            }
            if part.get("thought").is_some() && role != "model" {
                errors.push(format!("{at}: thought in a {role} turn"));
            }
        }
        if role == "user" && open_calls != responses {
            errors.push(format!(
                "contents[{i}]: responses {responses:?} do not answer calls {open_calls:?}"
            ));
        }
        if role == "model" && !responses.is_empty() {
            errors.push(format!("contents[{i}]: responses in a model turn"));
        }
        open_calls = calls;
        previous = role;
    }
    if !open_calls.is_empty() {
        errors.push(format!("the last turn has unanswered calls {open_calls:?}"));
    }
    for (k, declaration) in body["tools"][0]["functionDeclarations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if declaration.get("parameters").is_some() {
            errors.push(format!(
                "tools[0].functionDeclarations[{k}]: uses `parameters`, not parametersJsonSchema"
            ));
        }
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
    check_request_bodies(CODEC, SCHEMA, &all, |request, body| {
        role_errors(body, request.model.contains("gemini-3"))
    });
}

pub(super) fn encode(name: &str) -> agentmsg::providers::Encoded {
    let (_, request) = cases()
        .into_iter()
        .find(|(n, _)| n == name)
        .expect("case exists");
    gemini::encode_request(&request).expect("encodes")
}

#[test]
fn system_instruction_tools_and_generation_config() {
    let body = encode("text").body;
    assert_eq!(
        body["systemInstruction"],
        json!({"parts": [{"text": "Be helpful."}, {"text": "You are terse."}]})
    );
    assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 1000}));
    assert!(body.get("model").is_none(), "the model is in the URL");
    let declarations = &body["tools"][0]["functionDeclarations"];
    assert_eq!(
        declarations[0]["parametersJsonSchema"]["required"],
        json!(["path"])
    );
    assert_eq!(declarations[1], json!({"name": "now", "description": ""}));
    assert!(encode("parallel_tool_calls")
        .body
        .get("generationConfig")
        .is_none());
}

#[test]
fn every_block_type_maps_to_its_gemini_form() {
    let encoded = encode("every_block");
    let body = &encoded.body;
    let user = &body["contents"][0]["parts"];
    assert_eq!(
        user[1],
        json!({"inlineData": {"mimeType": "image/png", "data": PNG}})
    );
    assert_eq!(
        user[2],
        json!({"fileData": {"fileUri": "https://example.com/cat.jpg", "mimeType": "image/jpeg"}})
    );
    assert_eq!(
        user[3],
        json!({"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}})
    );
    assert_eq!(
        user[4],
        json!({"inlineData": {"mimeType": "application/pdf", "data": PDF}})
    );
    assert_eq!(
        user[5],
        json!({"fileData": {"fileUri": "gs://bucket/a.pdf", "mimeType": "application/pdf"}})
    );
    let model = &body["contents"][1];
    assert_eq!(model["role"], "model");
    assert_eq!(
        model["parts"][0],
        json!({"text": "Let me look.", "thought": true, "thoughtSignature": SIG})
    );
    assert_eq!(
        model["parts"][1],
        json!({"text": "Reading.", "thoughtSignature": "RXRleHQ="}),
        "a text signature goes back on its text"
    );
    assert_eq!(
        model["parts"][2],
        json!({"functionCall": {"id": "c1", "name": "read", "args": {"path": "a.rs"}}, "thoughtSignature": SIG})
    );
    let results = &body["contents"][2]["parts"];
    let output = results[0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap_or_default();
    assert!(
        output.starts_with("fn main() {}\n"),
        "text blocks are joined by lines: {output}"
    );
    assert_eq!(results[0]["functionResponse"]["id"], "c1");
    assert!(
        results
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p.get("inlineData").is_some())),
        "{results}"
    );
    let kinds: Vec<_> = encoded.report.changes.iter().map(|c| c.kind).collect();
    assert!(
        kinds.contains(&ChangeKind::UnsupportedContent),
        "title: {kinds:?}"
    );
    assert!(kinds.contains(&ChangeKind::MovedImages), "{kinds:?}");
}

#[test]
fn parallel_results_are_grouped_in_one_user_turn() {
    let encoded = encode("parallel_tool_calls");
    let contents = encoded.body["contents"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(contents.len(), 3);
    let parts = contents[2]["parts"].as_array().cloned().unwrap_or_default();
    assert_eq!(parts.len(), 3);
    assert_eq!(
        parts[1]["functionResponse"],
        json!({"id": "call_b", "name": "now", "response": {"error": "12:00"}})
    );
    assert_eq!(parts[2], json!({"text": "and now?"}));
    let merged: Vec<_> = encoded
        .report
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::MergedTurns)
        .map(|c| c.index)
        .collect();
    assert_eq!(merged, [4]);
}

#[test]
fn same_role_runs_merge_and_thinking_replays_only_to_its_model() {
    let encoded = encode("same_role_runs");
    let roles: Vec<_> = encoded.body["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["role"].clone())
        .collect();
    assert_eq!(roles, [json!("user"), json!("model"), json!("user")]);
    assert_eq!(
        encoded.body["systemInstruction"]["parts"][0]["text"],
        "Late system note."
    );
    let encoded = encode("thinking_signatures");
    let text = encoded.body.to_string();
    assert!(
        text.contains("Let me look.") && !text.contains("foreign") && !text.contains("c2ln"),
        "{text}"
    );
    // The flash call lost its (foreign) signature, and Gemini 3 needs one: the documented skip value.
    let flash = &encoded.body["contents"][3]["parts"];
    let call = flash
        .as_array()
        .and_then(|p| p.iter().find(|p| p.get("functionCall").is_some()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(call["thoughtSignature"], "skip_thought_signature_validator");
}

#[test]
fn foreign_parallel_calls_get_one_skip_signature() {
    let encoded = encode("foreign_calls_on_gemini3");
    let parts = encoded.body["contents"][1]["parts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        parts[0]["thoughtSignature"],
        "skip_thought_signature_validator"
    );
    assert!(parts[1].get("thoughtSignature").is_none());
    let request = Request::new(
        "gemini-2.5-pro",
        cases()
            .into_iter()
            .find(|(n, _)| n == "foreign_calls_on_gemini3")
            .map(|(_, r)| r.messages)
            .unwrap_or_default(),
    );
    let body = gemini::encode_request(&request).expect("encodes").body;
    assert!(
        !body
            .to_string()
            .contains("skip_thought_signature_validator"),
        "only Gemini 3 validates signatures"
    );
}

#[test]
fn failed_turns_and_orphans_are_repaired() {
    let text = encode("failed_turns").body.to_string();
    assert!(
        !text.contains("bad1") && !text.contains("Partial"),
        "{text}"
    );
    let body = encode("orphaned_calls").body;
    let text = body.to_string();
    assert!(!text.contains("nobody"));
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["id"],
        "orphan"
    );
}

// ---------------------------------------------------------------------------
// Responses and streams

const CODEC: &Api = &APIS[1];

fn decode_chunks(path: &Path) -> Result<AssistantMessage, ResponseError> {
    let lines = chunk_lines(path);
    CODEC.decode_events(lines.iter().map(String::as_str))
}

fn shape(message: &AssistantMessage) -> Vec<String> {
    message
        .content
        .iter()
        .map(|c| match c {
            AssistantContent::Text(t) if t.signature.is_some() => "signed text".to_owned(),
            AssistantContent::Text(_) => "text".to_owned(),
            AssistantContent::Thinking(_) => "thinking".to_owned(),
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
    assert!(bodies.len() >= 5);
    for path in &bodies {
        let name = file_name(path);
        let message = CODEC.decode_file(path);
        assert_eq!(
            (message.api.as_str(), message.provider.as_str()),
            ("google-generative-ai", "google"),
            "{name}"
        );
        if name.contains("429") {
            assert_eq!(message.stop_reason, StopReason::Error);
            let error = message.error_message.unwrap_or_default();
            assert!(
                error.contains("RESOURCE_EXHAUSTED")
                    && error.contains("429")
                    && error.contains("quota"),
                "{error}"
            );
            continue;
        }
        assert!(
            !message.model.is_empty() && message.response_id.is_some(),
            "{name}"
        );
        assert!(!message.content.is_empty(), "{name}");
        assert!(
            message.usage.input > 0 && message.usage.output > 0,
            "{name}: {:?}",
            message.usage
        );
    }
}

#[test]
fn every_stream_decodes() {
    common::require_conformance!();
    let streams = CODEC.recordings(".chunks.txt");
    assert!(streams.len() >= 9);
    for path in &streams {
        let name = file_name(path);
        let message = decode_chunks(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!message.model.is_empty(), "{name}");
        assert_ne!(
            message.stop_reason,
            StopReason::Error,
            "{name}: {:?}",
            message.error_message
        );
        if message.tool_calls().next().is_some() {
            assert_eq!(message.stop_reason, StopReason::ToolUse, "{name}");
        }
        for call in message.tool_calls() {
            assert!(!call.id.is_empty(), "{name}");
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
        let stream = decode_chunks(&stream_path).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(body.model, stream.model, "{stem}");
        assert_eq!(body.stop_reason, stream.stop_reason, "{stem}");
        assert_eq!(shape(&body), shape(&stream), "{stem}");
        let args = |m: &AssistantMessage| {
            m.tool_calls()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(args(&body), args(&stream), "{stem}");
        compared += 1;
    }
    assert_eq!(compared, 5);
}

#[test]
fn decoded_fields_match_the_recordings() {
    common::require_conformance!();
    let dir = CODEC.dir();
    let raw: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("google-tool-call-gemini3.json")).expect("read"),
    )
    .expect("json");
    let message = CODEC.decode_file(&dir.join("google-tool-call-gemini3.json"));
    let call = message.tool_calls().next().expect("a call");
    assert_eq!(
        call.signature.as_deref(),
        raw["candidates"][0]["content"]["parts"][0]["thoughtSignature"].as_str()
    );
    assert_eq!(
        call.arguments.to_value(),
        json!({"location": "San Francisco"})
    );
    assert!(
        call.id.starts_with("call_") && call.id.len() == 21,
        "{}",
        call.id
    );
    assert_eq!(
        CODEC
            .decode_file(&dir.join("google-tool-call-gemini3.json"))
            .tool_calls()
            .next()
            .map(|c| c.id.clone()),
        Some(call.id.clone()),
        "ids are deterministic"
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.reasoning
        ),
        (29, 15 + 1801, 1801)
    );
    assert_eq!(message.usage.total_tokens, Some(1845));
    assert_eq!(
        message.response_id.as_deref(),
        Some("JniLacKqGqH0xs0P0O776As")
    );

    let text = CODEC.decode_file(&dir.join("google-text.json"));
    assert_eq!(shape(&text), ["signed text"]);
    assert!(text
        .text_content()
        .starts_with("There are **3** r's in strawberry."));

    let streamed =
        decode_chunks(&dir.join("google-stream-tool-call-arguments.chunks.txt")).expect("stream");
    let calls: Vec<_> = streamed
        .tool_calls()
        .map(|c| (c.name.clone(), c.arguments.to_value()))
        .collect();
    assert_eq!(
        calls,
        [
            ("getWeather".to_owned(), json!({"location": "Boston"})),
            (
                "getWeather".to_owned(),
                json!({"location": "San Francisco"})
            ),
        ]
    );
    let ids: BTreeSet<_> = streamed.tool_calls().map(|c| c.id.clone()).collect();
    assert_eq!(ids.len(), 2);
    assert!(streamed
        .tool_calls()
        .next()
        .and_then(|c| c.signature.as_ref())
        .is_some());

    let items =
        decode_chunks(&dir.join(
            "google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt",
        ))
        .expect("stream");
    let call = items.tool_calls().next().expect("a call");
    assert_eq!(
        call.arguments.to_value(),
        json!({"operations": [
            {"action": "add", "description": "Fresh red apple", "itemid": "apple_001", "price": 0.5},
            {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001", "price": 0.3},
        ]})
    );

    let nested =
        decode_chunks(&dir.join("google-vertex-stream-tool-call-arguments-nested.1.chunks.txt"))
            .expect("stream");
    let call = nested.tool_calls().next().expect("a call");
    let ingredients = call
        .arguments
        .get("recipe")
        .and_then(|r| r.get("ingredients").cloned())
        .as_ref()
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    assert!(ingredients.len() >= 7, "{call:?}");
    assert_eq!(
        ingredients[0],
        json!({"amount": "16 oz", "name": "Lasagna noodles"})
    );

    let no_args =
        decode_chunks(&dir.join("google-stream-no-args-tool-call.chunks.txt")).expect("stream");
    assert!(no_args
        .tool_calls()
        .next()
        .is_some_and(|c| c.arguments.is_empty()));

    let reasoning = decode_chunks(&dir.join("google-reasoning.chunks.txt")).expect("stream");
    assert_eq!(shape(&reasoning), ["signed text"]);
    assert!(reasoning.usage.reasoning > 0 && reasoning.usage.output > reasoning.usage.reasoning);
}

#[test]
fn cached_tokens_are_not_counted_as_input_and_finish_reasons_map() {
    let body = |reason: &str| {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "x"}]}, "finishReason": reason}],
            "usageMetadata": {"promptTokenCount": 1000, "cachedContentTokenCount": 800, "candidatesTokenCount": 10,
                "thoughtsTokenCount": 5, "totalTokenCount": 1015},
            "modelVersion": "gemini-2.5-pro", "responseId": "r"})
        .to_string()
    };
    let message = gemini::decode_response(&body("STOP")).expect("decodes");
    assert_eq!(
        (
            message.usage.input,
            message.usage.cache_read,
            message.usage.output,
            message.usage.reasoning
        ),
        (200, 800, 15, 5)
    );
    assert_eq!(message.usage.total_tokens, Some(1015));
    for (reason, stop) in [
        ("MAX_TOKENS", StopReason::Length),
        ("SAFETY", StopReason::GuardRail),
        ("RECITATION", StopReason::GuardRail),
        ("MALFORMED_FUNCTION_CALL", StopReason::Error),
        ("OTHER", StopReason::Error),
        ("STOP", StopReason::Stop),
    ] {
        let message = gemini::decode_response(&body(reason)).expect("decodes");
        assert_eq!(message.stop_reason, stop, "{reason}");
        assert_eq!(
            message.error_message.is_some(),
            stop != StopReason::Stop && stop != StopReason::Length,
            "{reason}"
        );
    }
    let blocked = gemini::decode_response(
        r#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}"#,
    )
    .expect("decodes");
    assert_eq!(blocked.stop_reason, StopReason::GuardRail);
    assert!(gemini::decode_response("{").is_err());
    let bad = r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":[1]}}]},"finishReason":"STOP"}]}"#;
    assert!(gemini::decode_response(bad)
        .expect_err("array args")
        .to_string()
        .contains("candidates[0].content.parts[0].functionCall.args"));
}

#[test]
fn truncated_garbled_and_spliced_streams_never_pass() {
    common::require_conformance!();
    for path in CODEC.recordings(".chunks.txt") {
        let name = file_name(&path);
        let lines = chunk_lines(&path);
        for cut in 0..lines.len() {
            let prefix: Vec<&str> = lines.iter().take(cut).map(String::as_str).collect();
            let finished = prefix.iter().any(|l| l.contains("\"finishReason\""));
            let mut decoder = gemini::StreamDecoder::new();
            let pushed = prefix.iter().try_for_each(|l| decoder.push(l).map(drop));
            match pushed.and_then(|()| decoder.finish_with_warnings()) {
                // A stream cut between chunks looks like one that ended cleanly
                // without a finishReason: a stop, never silently (a warning says so).
                Ok((message, warnings)) => assert!(
                    finished
                        || message.stop_reason == StopReason::Error
                        || warnings
                            .iter()
                            .any(|w| w.to_string().contains("without a finishReason")),
                    "{name} cut at {cut}"
                ),
                Err(error) => assert!(!finished, "{name} cut at {cut}: {error}"),
            }
        }
        if let Some((i, line)) = lines.iter().enumerate().find(|(_, l)| l.len() > 20) {
            let half = &line[..line
                .char_indices()
                .nth(line.chars().count() / 2)
                .map_or(0, |(b, _)| b)];
            let mut events: Vec<&str> = lines.iter().map(String::as_str).collect();
            events[i] = half;
            let error = CODEC.decode_events(events).expect_err("half a chunk");
            assert!(
                error.to_string().contains(&format!("event {i}")),
                "{name}: {error}"
            );
        }
    }
    let a = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"one"}"#;
    let b = r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]},"finishReason":"STOP"}],"responseId":"two"}"#;
    let error = CODEC.decode_events([a, b]).expect_err("spliced");
    assert!(error.to_string().starts_with("event 1:"), "{error}");
    let error = CODEC.decode_events([r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}]}}]}}]}"#])
        .expect_err("pieces without a call");
    assert!(error.to_string().contains("partialArgs"), "{error}");
    let error = CODEC.decode_events([
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":[{"jsonPath":"a..b","stringValue":"x"}],"willContinue":true}}]}}]}"#,
    ])
    .expect_err("bad path");
    assert!(error.to_string().starts_with("event 1:"), "{error}");
    let message = CODEC.decode_events([
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}],"responseId":"one"}"#,
        r#"{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}"#,
    ])
    .expect("an error chunk is a message");
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("INTERNAL (500): Internal error")
    );
}

#[test]
fn decoded_messages_replay_to_the_same_model() {
    common::require_conformance!();
    let dir = CODEC.dir();
    for name in [
        "google-tool-call-gemini3.json",
        "google-text.json",
        "google-stream-tool-call-arguments.chunks.txt",
    ] {
        let message = if name.ends_with(".json") {
            CODEC.decode_file(&dir.join(name))
        } else {
            decode_chunks(&dir.join(name)).expect(name)
        };
        let mut messages = vec![Message::user("q"), Message::Assistant(message.clone())];
        for call in message.tool_calls() {
            messages.push(Message::tool_result(
                call.id.clone(),
                call.name.clone(),
                "ok",
            ));
        }
        messages.push(Message::user("next"));
        let body = gemini::encode_request(&Request::new(message.model.clone(), messages))
            .expect("encodes")
            .body;
        let parts = body["contents"][1]["parts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let sent: Vec<&str> = parts
            .iter()
            .filter_map(|p| p["thoughtSignature"].as_str())
            .collect();
        let stored: Vec<&str> = message
            .content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text(t) => t.signature.as_deref(),
                AssistantContent::Thinking(t) => t.signature.as_deref(),
                AssistantContent::ToolCall(c) => c.signature.as_deref(),
                _ => None,
            })
            .collect();
        assert_eq!(
            sent, stored,
            "{name}: every signature goes back byte for byte"
        );
        assert!(!sent.contains(&"skip_thought_signature_validator"));
        assert!(common::schema_errors(SCHEMA, &body).is_empty());
        assert!(
            role_errors(&body, true).is_empty(),
            "{name}: {:?}",
            role_errors(&body, true)
        );
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Arbitrary JSON paths in streamed arguments never panic.
        #[test]
        fn arbitrary_json_paths_never_panic(paths in prop::collection::vec("[$.\\[\\]a-c0-9'\"]{0,12}", 1..6)) {
            let mut decoder = gemini::StreamDecoder::new();
            let _ = decoder.push(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#);
            for path in &paths {
                let chunk = json!({"candidates": [{"content": {"parts": [{"functionCall": {
                    "partialArgs": [{"jsonPath": path, "stringValue": "v", "willContinue": true}], "willContinue": true}}]}}]});
                let _ = decoder.push(&chunk.to_string());
            }
            let _ = decoder.push(r#"{"candidates":[{"finishReason":"STOP"}]}"#);
            let _ = decoder.finish();
        }
    }
}

#[test]
fn media_gemini_cannot_read_becomes_a_placeholder() {
    let encoded = encode("unsupported_media");
    let parts = encoded.body["contents"][0]["parts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        parts[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("image/bmp")),
        "{parts:?}"
    );
    assert!(
        parts[1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("wordprocessingml")),
        "{parts:?}"
    );
    assert_eq!(
        parts[2],
        json!({"inlineData": {"mimeType": "text/markdown", "data": "aGVsbG8="}})
    );
    let kinds: Vec<_> = encoded.report.changes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [ChangeKind::ImagePlaceholder, ChangeKind::UnsupportedContent]
    );
}

#[test]
fn a_result_without_a_tool_name_takes_its_calls() {
    let call = agentmsg::ToolCall::new("c1", "read", json!({"path": "a"})).with_signature(SIG);
    let messages = vec![
        Message::user("go"),
        Message::Assistant(AssistantMessage::new([call]).with_origin(
            "google-generative-ai",
            "google",
            MODEL,
        )),
        Message::tool_result("c1", "", "text"),
    ];
    let body = gemini::encode_request(&Request::new(MODEL, messages))
        .expect("encodes")
        .body;
    assert_eq!(
        body["contents"][2]["parts"][0]["functionResponse"]["name"],
        "read"
    );
}

mod random_transcripts {
    use super::*;
    use crate::transcripts::Flavor;
    use proptest::prelude::*;

    pub(super) static FLAVOR: Flavor = Flavor {
        ids: &["c1", "c2", "functions.read:0", "", "c1"],
        models: [MODEL, "gemini-2.5-flash"],
        api: "google-generative-ai",
        provider: "google",
        signature: SIG,
        odd_image: "image/gif",
        document_url: "https://example.com/a",
        signed_calls: true,
        length_stops: false,
    };

    pub(super) fn message() -> impl Strategy<Value = Value> {
        crate::transcripts::message(&FLAVOR)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Transcripts no test wrote by hand: every body passes the schema and
        /// the role rules.
        #[test]
        fn random_transcripts_encode_to_valid_bodies(lines in prop::collection::vec(message(), 1..10)) {
            crate::transcripts::check_random(CODEC, MODEL, &lines, tools(), SCHEMA, |body| role_errors(body, true))?;
        }
    }
}

/// pi keeps Gemini's signature of a text part as the text block's
/// `textSignature`; so do we, and it goes back on that text, to that model only.
#[test]
fn text_signatures_stay_with_their_text() {
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "A"},
        {"text": "B", "thoughtSignature": "U0lHMQ=="},
        {"text": "C"},
        {"inlineData": {"mimeType": "image/png", "data": PNG}, "thoughtSignature": "U0lHMg=="},
        {"text": "", "thoughtSignature": "U0lHMw=="},
        {"text": "", "thought": true, "thoughtSignature": SIG},
    ]}, "finishReason": "STOP"}], "modelVersion": MODEL, "responseId": "r"});
    let message = gemini::decode_response(&body.to_string()).expect("decodes");
    let blocks: Vec<_> = message
        .content
        .iter()
        .map(|c| match c {
            AssistantContent::Text(t) => (t.text.as_str(), t.signature.as_deref(), false),
            AssistantContent::Thinking(t) => (t.thinking.as_str(), t.signature.as_deref(), true),
            AssistantContent::Image(_) => ("<image>", None, false),
            other => panic!("unexpected block {other:?}"),
        })
        .collect();
    assert_eq!(
        blocks,
        [
            ("AB", Some("U0lHMQ=="), false),
            ("C", None, false),
            ("<image>", None, false),
            ("", Some("U0lHMg=="), false),
            ("", Some("U0lHMw=="), false),
            ("", Some(SIG), true),
        ],
        "a signed part ends its block; an image part's signature has its own block"
    );
    // pi's form of the same block reads back the same.
    let line = AgentMessage::from(Message::Assistant(message.clone()))
        .to_line()
        .expect("writes");
    assert!(
        line.contains(r#"{"type":"text","text":"AB","signature":"U0lHMQ=="}"#),
        "{line}"
    );
    let pi = line.replace(r#""signature":"U0lHMQ==""#, r#""textSignature":"U0lHMQ==""#);
    assert_eq!(
        AgentMessage::from_line(&pi).expect("decodes").as_llm(),
        Some(&Message::Assistant(message.clone()))
    );

    let request = |model: &str| {
        let messages = vec![
            Message::user("q"),
            Message::Assistant(message.clone()),
            Message::user("next"),
        ];
        gemini::encode_request(&Request::new(model, messages)).expect("encodes")
    };
    let same = request(MODEL);
    assert_eq!(
        same.body["contents"][1]["parts"],
        json!([
            {"text": "AB", "thoughtSignature": "U0lHMQ=="},
            {"text": "C"},
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"text": "", "thoughtSignature": "U0lHMg=="},
            {"text": "", "thoughtSignature": "U0lHMw=="},
            {"text": "", "thought": true, "thoughtSignature": SIG},
        ])
    );
    assert!(same.report.changes.is_empty(), "{:?}", same.report.changes);

    let other = request("gemini-2.5-flash");
    assert_eq!(
        other.body["contents"][1]["parts"],
        json!([{"text": "AB"}, {"text": "C"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]),
        "another model gets neither the signatures nor the blocks that were only signatures (the image stays: it is no signature"
    );
    let dropped = change_details(&other.report, ChangeKind::DroppedThinking);
    assert!(
        dropped
            .iter()
            .any(|d| d
                .starts_with("removed the signature of text block 0: it was written by google/")),
        "{dropped:?}"
    );
    assert_eq!(
        dropped.len(),
        4,
        "three text signatures and one thinking block: {dropped:?}"
    );
}
