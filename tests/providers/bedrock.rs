//! Bedrock Converse codec: every recorded response and stream of vercel/ai's
//! fixtures, request bodies (written for `scripts/sdk_check_bedrock.py`, which
//! validates them against botocore's service model), replay across providers.

use std::path::Path;

use crate::common;
use agentmsg::project::ChangeKind;
use agentmsg::providers::{
    anthropic, bedrock, Api, PromptCache, Reasoning, Request, ResponseFormat, StreamDecode,
    StreamEvent, ToolChoice, ToolSpec,
};
use agentmsg::{AssistantContent, AssistantMessage, Message, StopReason};
use serde_json::{json, Value};

const CLAUDE: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const SIG: &str = "EqQBCkgIARABGAIiQA==";

fn recordings() -> Option<std::path::PathBuf> {
    Some(common::conformance_or_skip(None)?.join("responses/vercel/bedrock"))
}

fn stream(lines: &[String]) -> Result<(AssistantMessage, Vec<StreamEvent>), String> {
    let mut decoder = bedrock::StreamDecoder::new();
    let mut events = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        events.extend(decoder.push(line).map_err(|e| format!("event {i}: {e}"))?);
    }
    Ok((decoder.finish().map_err(|e| e.to_string())?, events))
}

/// The blocks of a message as (kind, text or call) pairs, for comparing a
/// stream with its whole response.
fn shape(message: &AssistantMessage) -> Vec<(String, String)> {
    message
        .content
        .iter()
        .map(|block| match block {
            AssistantContent::Text(t) => ("text".into(), t.text.clone()),
            AssistantContent::Thinking(t) => ("thinking".into(), t.thinking.clone()),
            AssistantContent::ToolCall(c) => (
                "call".into(),
                format!("{}:{}", c.name, c.arguments.as_str()),
            ),
            other => ("other".into(), format!("{other:?}")),
        })
        .collect()
}

#[test]
fn every_recorded_response_decodes() {
    let Some(dir) = recordings() else { return };
    let files = common::files_ending(&dir, ".json");
    assert!(files.len() >= 10, "{} responses", files.len());
    for path in &files {
        let name = common::file_name(path);
        let body = std::fs::read_to_string(path).unwrap();
        let wire: Value = serde_json::from_str(&body).unwrap();
        let message = bedrock::decode_response(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(message.api, "bedrock-converse-stream", "{name}");
        assert_eq!(message.provider, "amazon-bedrock", "{name}");
        let wire_blocks = wire["output"]["message"]["content"].as_array().unwrap();
        assert_eq!(
            message.content.len(),
            wire_blocks.len(),
            "{name}: every block kept"
        );
        for (block, wire) in message.content.iter().zip(wire_blocks) {
            match block {
                AssistantContent::Text(t) => assert_eq!(wire["text"], t.text.as_str(), "{name}"),
                AssistantContent::ToolCall(c) => {
                    assert_eq!(wire["toolUse"]["toolUseId"], c.id.as_str(), "{name}");
                    assert_eq!(wire["toolUse"]["input"], c.arguments.to_value(), "{name}");
                }
                AssistantContent::Thinking(t) => {
                    let reasoning = &wire["reasoningContent"]["reasoningText"];
                    assert_eq!(reasoning["text"], t.thinking.as_str(), "{name}");
                    assert_eq!(
                        reasoning["signature"],
                        t.signature.as_deref().unwrap(),
                        "{name}"
                    );
                }
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
        let expected = match wire["stopReason"].as_str().unwrap() {
            "tool_use" => StopReason::ToolUse,
            "end_turn" => StopReason::Stop,
            other => panic!("{name}: a fixture stopping with {other}"),
        };
        assert_eq!(message.stop_reason, expected, "{name}");
        let usage = &wire["usage"];
        assert_eq!(
            message.usage.input,
            usage["inputTokens"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            message.usage.output,
            usage["outputTokens"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            message.usage.total_tokens,
            usage["totalTokens"].as_u64(),
            "{name}"
        );
    }
}

#[test]
fn every_recorded_stream_decodes_and_matches_its_response() {
    let Some(dir) = recordings() else { return };
    let files = common::files_ending(&dir, ".chunks.txt");
    assert!(files.len() >= 10, "{} streams", files.len());
    let mut compared = 0;
    for path in &files {
        let name = common::file_name(path);
        let lines = common::chunk_lines(path);
        let (message, events) = stream(&lines).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!message.content.is_empty(), "{name}");
        assert!(
            matches!(
                events.last(),
                Some(StreamEvent::Done { .. } | StreamEvent::Usage { .. })
            ),
            "{name}: {:?}",
            events.last()
        );
        // The deltas add up to the finished blocks.
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, message.text_content(), "{name}");
        if let Some(last) = lines.iter().rev().find(|l| l.starts_with(r#"{"metadata""#)) {
            let last: Value = serde_json::from_str(last).unwrap();
            let usage = &last["metadata"]["usage"];
            assert_eq!(
                message.usage.output,
                usage["outputTokens"].as_u64().unwrap(),
                "{name}"
            );
        }
        // The same recording's whole response, where there is one, has the same
        // blocks (the two were recorded apart, so only where the texts agree).
        let whole = dir.join(name.replace(".chunks.txt", ".json"));
        if let Ok(body) = std::fs::read_to_string(&whole) {
            let response = bedrock::decode_response(&body).unwrap();
            let (a, b) = (shape(&message), shape(&response));
            assert_eq!(
                a.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                b.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                "{name}: block kinds of stream and response"
            );
            assert_eq!(message.stop_reason, response.stop_reason, "{name}");
            compared += 1;
        }
    }
    assert!(compared >= 8, "{compared} pairs compared");
}

#[test]
fn the_reasoning_stream_keeps_its_signature() {
    let Some(dir) = recordings() else { return };
    let lines = common::chunk_lines(&dir.join("amazon-bedrock-reasoning.chunks.txt"));
    let (message, events) = stream(&lines).unwrap();
    let AssistantContent::Thinking(thinking) = &message.content[0] else {
        panic!("{:?}", message.content)
    };
    assert!(thinking
        .signature
        .as_deref()
        .is_some_and(|s| s.starts_with("Ep0CCkgICxAB")));
    assert!(thinking.thinking.starts_with("Let me count the r"));
    assert!(events
        .iter()
        .any(|e| matches!(e, StreamEvent::ThinkingEnd { index: 0, .. })));
}

#[test]
fn stream_faults_name_their_event() {
    let start = r#"{"messageStart":{"role":"assistant"}}"#;
    let cases: [(&str, Vec<&str>, &str); 5] = [
        ("not json", vec![start, "{"], "event 1"),
        (
            "two keys",
            vec![r#"{"messageStart":{},"metadata":{}}"#],
            "event 0",
        ),
        (
            "tool input not JSON",
            vec![
                r#"{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"n"}}}}"#,
                r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{oops"}}}}"#,
                r#"{"contentBlockStop":{"contentBlockIndex":0}}"#,
            ],
            "event 2",
        ),
        (
            "text into a tool call",
            vec![
                r#"{"contentBlockStart":{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"n"}}}}"#,
                r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"hi"}}}"#,
            ],
            "event 1",
        ),
        (
            "event after the end",
            vec![
                start,
                r#"{"messageStop":{"stopReason":"end_turn"}}"#,
                r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"x"}}}"#,
            ],
            "event 2",
        ),
    ];
    for (what, lines, at) in cases {
        let mut decoder = bedrock::StreamDecoder::new();
        let error = lines
            .iter()
            .find_map(|l| decoder.push(l).err())
            .unwrap_or_else(|| panic!("{what}: no error"));
        assert!(error.to_string().contains(at), "{what}: {error}");
    }
    // No messageStop: truncated.
    let mut decoder = bedrock::StreamDecoder::new();
    decoder.push(start).unwrap();
    decoder
        .push(r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"x"}}}"#)
        .unwrap();
    let error = decoder.finish().unwrap_err().to_string();
    assert!(error.contains("no messageStop"), "{error}");
}

#[test]
fn an_exception_event_ends_the_message_with_an_error() {
    let mut decoder = bedrock::StreamDecoder::new();
    decoder
        .push(r#"{"messageStart":{"role":"assistant"}}"#)
        .unwrap();
    decoder
        .push(r#"{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Par"}}}"#)
        .unwrap();
    let events = decoder
        .push(r#"{"modelStreamErrorException":{"message":"Model Stream Error","originalStatusCode":500,"originalMessage":"The model stream failed."}}"#)
        .unwrap();
    assert!(events.iter().any(|e| matches!(e, StreamEvent::Error { message } if message.contains("modelStreamErrorException"))), "{events:?}");
    let message = decoder.finish().unwrap();
    assert_eq!(message.stop_reason, StopReason::Error);
    assert_eq!(
        message.error_message.as_deref(),
        Some("modelStreamErrorException: Model Stream Error (the model's status 500: The model stream failed.)")
    );
    assert_eq!(message.text_content(), "Par");
}

#[test]
fn stop_reasons_and_error_bodies() {
    for (raw, expected) in [
        ("end_turn", StopReason::Stop),
        ("stop_sequence", StopReason::Stop),
        ("max_tokens", StopReason::Length),
        ("model_context_window_exceeded", StopReason::Length),
        ("tool_use", StopReason::ToolUse),
        ("guardrail_intervened", StopReason::GuardRail),
        ("content_filtered", StopReason::GuardRail),
        ("malformed_tool_use", StopReason::Error),
    ] {
        assert_eq!(bedrock::stop_reason(raw), expected, "{raw}");
    }
    let error = bedrock::decode_response(
        r#"{"message":"The security token included in the request is invalid."}"#,
    )
    .unwrap();
    assert_eq!(error.stop_reason, StopReason::Error);
    assert!(error.error_message.unwrap().contains("security token"));
    let error = bedrock::decode_response(r#"{"output":null,"stopReason":"end_turn"}"#);
    assert!(error.is_err());
    // Cache reads and writes, in both spellings.
    let reply = bedrock::decode_response(
        r#"{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn",
            "usage":{"inputTokens":3,"outputTokens":1,"cacheReadInputTokenCount":700,"cacheWriteInputTokens":50,"totalTokens":754}}"#,
    )
    .unwrap();
    assert_eq!((reply.usage.cache_read, reply.usage.cache_write), (700, 50));
    assert_eq!(reply.usage.total_tokens, Some(754));
    // Blocks agentmsg does not model are kept, and go back to Bedrock only.
    let reply = bedrock::decode_response(
        r#"{"output":{"message":{"role":"assistant","content":[{"citationsContent":{"content":[{"text":"x"}],"citations":[]}},
            {"reasoningContent":{"redactedContent":"cmVkYWN0ZWQ="}}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":1}}"#,
    )
    .unwrap();
    assert!(
        matches!(&reply.content[0], AssistantContent::ProviderBlock(b) if b.api == "bedrock-converse-stream")
    );
    assert!(
        matches!(&reply.content[1], AssistantContent::RedactedThinking(r) if r.data == "cmVkYWN0ZWQ=")
    );
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

fn line(value: Value) -> Message {
    serde_json::from_value(value).expect("a message line")
}

fn claude_reply(content: Value, stop: &str, provider: &str, api: &str, model: &str) -> Message {
    line(
        json!({"role": "assistant", "content": content, "api": api, "provider": provider,
        "model": model, "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": stop, "timestamp": 2}),
    )
}

/// Requests covering every block and option the encoder writes.
fn cases() -> Vec<(&'static str, Request<'static>)> {
    let png = common::PNG_1X1;
    let user = line(json!({"role": "user", "content": [
        {"type": "text", "text": "Look at these"},
        {"type": "image", "data": png, "mimeType": "image/png"},
        {"type": "image", "data": png, "mimeType": "image/bmp"},
        {"type": "image", "url": "s3://my-bucket/cat.jpg"},
        {"type": "image", "url": "https://example.com/cat.png"},
        {"type": "document", "data": crate::transcripts::PDF, "mimeType": "application/pdf", "title": "spec: v2.pdf"},
        {"type": "document", "data": "aGVsbG8=", "mimeType": "text/plain"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    ], "timestamp": 1}));
    let own = |content: Value, stop: &str| {
        claude_reply(
            content,
            stop,
            "amazon-bedrock",
            "bedrock-converse-stream",
            CLAUDE,
        )
    };
    let result = |id: &str, error: bool| {
        line(
            json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
        "content": [{"type": "text", "text": "fn main() {}"}, {"type": "image", "data": png, "mimeType": "image/png"}],
        "isError": error, "timestamp": 3}),
        )
    };
    // Written as text, so that the arguments keep the model's key order.
    let mut with_call = own(
        json!([{"type": "thinking", "thinking": "Let me look.", "thinkingSignature": SIG},
        {"type": "redactedThinking", "data": "cmVkYWN0ZWQ="},
        {"type": "text", "text": "Reading."}]),
        "toolUse",
    );
    if let Message::Assistant(a) = &mut with_call {
        let arguments: agentmsg::ToolArguments = r#"{"path":"a.rs","z":1,"a":2}"#.parse().unwrap();
        a.content
            .push(AssistantContent::ToolCall(agentmsg::ToolCall::new(
                "tooluse_a1",
                "read",
                arguments,
            )));
    }
    let every_block = vec![
        line(json!({"role": "system", "content": "You are terse."})),
        user.clone(),
        with_call,
        result("tooluse_a1", false),
        own(json!([{"type": "text", "text": "Done."}]), "stop"),
        Message::user("Thanks"),
    ];
    let parallel = vec![
        Message::user("Read two files"),
        own(
            json!([{"type": "toolCall", "id": "call.with:odd/chars", "name": "read", "arguments": {"path": "a"}},
            {"type": "toolCall", "id": "c2", "name": "now", "arguments": {}}]),
            "toolUse",
        ),
        result("call.with:odd/chars", false),
        result("c2", true),
    ];
    vec![
        (
            "text",
            Request::new(CLAUDE, vec![Message::user("Hi")]).with_system("Be brief."),
        ),
        (
            "every_block",
            Request::new(CLAUDE, every_block.clone())
                .with_tools(tools())
                .with_system("sys")
                .with_cache(PromptCache::new().long()),
        ),
        (
            "parallel_tool_calls",
            Request::new(CLAUDE, parallel.clone()).with_tools(tools()),
        ),
        (
            "options",
            Request::new("amazon.nova-pro-v1:0", vec![Message::user("Hi")])
                .with_tools(tools())
                .with_tool_choice(ToolChoice::Tool("read".into()))
                .with_temperature(1.5)
                .with_top_p(0.9)
                .with_stop(["END", "STOP"])
                .with_max_tokens(100)
                .with_metadata("team", "search")
                .with_metadata("bad key!", "x")
                .with_response_format(ResponseFormat::json_schema(
                    "answer",
                    json!({"type": "object"}),
                )),
        ),
        (
            "thinking",
            Request::new(CLAUDE, every_block)
                .with_tools(tools())
                .with_tool_choice(ToolChoice::Required)
                .with_reasoning(Reasoning::Budget(2000))
                .with_max_tokens(1000)
                .with_cache(PromptCache::new()),
        ),
        (
            "tool_choice_none",
            Request::new(CLAUDE, vec![Message::user("Hi")])
                .with_tools(tools())
                .with_tool_choice(ToolChoice::None)
                .with_stream(true),
        ),
        (
            "opens_with_assistant",
            Request::new(
                "meta.llama3-70b-instruct-v1:0",
                vec![claude_reply(
                    json!([{"type": "thinking", "thinking": "unsigned"}, {"type": "text", "text": "Hello.  "}]),
                    "stop",
                    "amazon-bedrock",
                    "bedrock-converse-stream",
                    "meta.llama3-70b-instruct-v1:0",
                )],
            ),
        ),
    ]
}

#[test]
fn request_bodies_follow_the_rules_and_are_written_for_the_sdk_check() {
    let dir = common::fresh_sdk_dir("bedrock");
    for (name, request) in cases() {
        let encoded = bedrock::encode_request(&request).unwrap_or_else(|e| panic!("{name}: {e}"));
        let body = encoded.body.value();
        assert!(
            body.get("modelId").is_none() && body.get("model").is_none(),
            "{name}"
        );
        // Strict alternation, starting with the user.
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles[0], "user", "{name}");
        assert!(roles.windows(2).all(|w| w[0] != w[1]), "{name}: {roles:?}");
        let text = serde_json::to_string_pretty(&encoded.body).unwrap();
        std::fs::write(dir.join(format!("{name}.json")), &text).unwrap();
        match name {
            "every_block" => {
                let user = &body["messages"][0]["content"];
                assert_eq!(
                    user[1],
                    json!({"image": {"format": "png", "source": {"bytes": common::PNG_1X1}}})
                );
                assert!(user[2]["text"].as_str().unwrap().contains("image/bmp"));
                assert_eq!(
                    user[3]["image"]["source"]["s3Location"]["uri"],
                    "s3://my-bucket/cat.jpg"
                );
                assert_eq!(user[3]["image"]["format"], "jpeg");
                assert!(user[4]["text"]
                    .as_str()
                    .unwrap()
                    .contains("https://example.com/cat.png"));
                assert_eq!(user[5]["document"]["name"], "spec v2 pdf");
                assert_eq!(user[6]["document"]["format"], "txt");
                let assistant = &body["messages"][1]["content"];
                assert_eq!(
                    assistant[0],
                    json!({"reasoningContent": {"reasoningText": {"text": "Let me look.", "signature": SIG}}})
                );
                assert_eq!(
                    assistant[1],
                    json!({"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}})
                );
                assert_eq!(assistant[3]["toolUse"]["toolUseId"], "tooluse_a1");
                // The arguments in the model's order.
                assert!(
                    text.replace([' ', '\n'], "")
                        .contains(r#""input":{"path":"a.rs","z":1,"a":2}"#),
                    "{text}"
                );
                let results = &body["messages"][2]["content"];
                assert_eq!(results[0]["toolResult"]["status"], "success");
                assert_eq!(
                    results[0]["toolResult"]["content"][1]["image"]["format"],
                    "png"
                );
                // Cache points after the system prompt, the tools, the last user turn.
                let point = json!({"cachePoint": {"type": "default", "ttl": "1h"}});
                assert_eq!(body["system"].as_array().unwrap().last(), Some(&point));
                assert_eq!(
                    body["toolConfig"]["tools"].as_array().unwrap().last(),
                    Some(&point)
                );
                let last_user = body["messages"].as_array().unwrap().last().unwrap();
                assert_eq!(
                    last_user["content"].as_array().unwrap().last(),
                    Some(&point)
                );
                assert_eq!(body["system"][0]["text"], "sys");
                assert_eq!(body["system"][1]["text"], "You are terse.");
            }
            "parallel_tool_calls" => {
                let calls = &body["messages"][1]["content"];
                let id = calls[0]["toolUse"]["toolUseId"].as_str().unwrap();
                assert!(
                    id.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                    "{id}"
                );
                assert_eq!(
                    body["messages"][2]["content"][0]["toolResult"]["toolUseId"],
                    id
                );
                assert_eq!(
                    body["messages"][2]["content"][1]["toolResult"]["status"],
                    "error"
                );
            }
            "options" => {
                assert_eq!(
                    body["inferenceConfig"],
                    json!({"maxTokens": 100, "temperature": 1.0, "topP": 0.9, "stopSequences": ["END", "STOP"]})
                );
                assert_eq!(
                    body["toolConfig"]["toolChoice"],
                    json!({"tool": {"name": "read"}})
                );
                assert_eq!(body["requestMetadata"], json!({"team": "search"}));
                assert_eq!(
                    body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"],
                    r#"{"type":"object"}"#
                );
                let options: Vec<&str> = encoded.options.iter().map(|o| o.option).collect();
                assert!(
                    options.contains(&"temperature") && options.contains(&"metadata"),
                    "{options:?}"
                );
            }
            "thinking" => {
                assert_eq!(
                    body["additionalModelRequestFields"],
                    json!({"thinking": {"type": "enabled", "budget_tokens": 2000}})
                );
                assert_eq!(body["inferenceConfig"]["maxTokens"], 3000);
                assert!(body["toolConfig"].get("toolChoice").is_none());
            }
            "tool_choice_none" => assert!(body.get("toolConfig").is_none()),
            "opens_with_assistant" => {
                assert_eq!(body["messages"][0]["content"][0]["text"], "(continued)");
                // Llama's own unsigned thinking goes back to it; the prefill is trimmed.
                assert_eq!(
                    body["messages"][1]["content"][0],
                    json!({"reasoningContent": {"reasoningText": {"text": "unsigned"}}})
                );
                assert_eq!(body["messages"][1]["content"][1]["text"], "Hello.");
            }
            _ => {}
        }
    }
}

#[test]
fn thinking_moves_between_anthropic_and_bedrock_by_the_signature_rules() {
    let thinking = json!([{"type": "thinking", "thinking": "Hmm.", "thinkingSignature": SIG},
        {"type": "text", "text": "Hi."}]);
    let direct = claude_reply(
        thinking.clone(),
        "stop",
        "anthropic",
        "anthropic-messages",
        "claude-sonnet-4-5-20250929",
    );
    let on_bedrock = claude_reply(
        thinking,
        "stop",
        "amazon-bedrock",
        "bedrock-converse-stream",
        CLAUDE,
    );
    // Anthropic's signed thinking goes to the same Claude on Bedrock
    // (Anthropic: a signature verifies on every platform serving the model).
    let messages = vec![Message::user("a"), direct, Message::user("b")];
    let encoded = bedrock::encode_request(&Request::new(CLAUDE, &messages)).unwrap();
    assert_eq!(
        encoded.body["messages"][1]["content"][0]["reasoningContent"]["reasoningText"],
        json!({"text": "Hmm.", "signature": SIG})
    );
    assert!(!common::change_kinds(&encoded.report)
        .iter()
        .any(|(_, k)| *k == ChangeKind::DroppedThinking));
    // Not to another Claude on Bedrock: dropped, and reported.
    let opus = "us.anthropic.claude-opus-4-1-20250805-v1:0";
    let encoded = bedrock::encode_request(&Request::new(opus, &messages)).unwrap();
    assert_eq!(
        encoded.body["messages"][1]["content"],
        json!([{"text": "Hi."}])
    );
    assert!(common::change_kinds(&encoded.report)
        .iter()
        .any(|(i, k)| (*i, *k) == (1, ChangeKind::DroppedThinking)));
    // Bedrock's own goes back to the same model with its signature...
    let messages = vec![Message::user("a"), on_bedrock.clone(), Message::user("b")];
    let encoded = bedrock::encode_request(&Request::new(CLAUDE, &messages)).unwrap();
    assert_eq!(
        encoded.body["messages"][1]["content"][0]["reasoningContent"]["reasoningText"]["signature"],
        SIG
    );
    // ...and to Anthropic's (its alias), with its signature...
    let back = anthropic::encode_request(&Request::new("claude-sonnet-4-5", &messages)).unwrap();
    assert_eq!(
        back.body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Hmm.", "signature": SIG})
    );
    // ...and not to another model, on Bedrock or Anthropic.
    let other = bedrock::encode_request(&Request::new(opus, &messages)).unwrap();
    assert_eq!(
        other.body["messages"][1]["content"],
        json!([{"text": "Hi."}])
    );
    let other = anthropic::encode_request(&Request::new("claude-opus-4-1", &messages)).unwrap();
    assert_eq!(
        other.body["messages"][1]["content"],
        json!([{"type": "text", "text": "Hi."}])
    );
    assert!(common::change_kinds(&other.report)
        .iter()
        .any(|(_, k)| *k == ChangeKind::DroppedThinking));
    // A Llama on Bedrock is no Claude: nothing signed goes to it.
    let llama =
        bedrock::encode_request(&Request::new("meta.llama3-70b-instruct-v1:0", &messages)).unwrap();
    assert_eq!(
        llama.body["messages"][1]["content"],
        json!([{"text": "Hi."}])
    );
}

#[test]
fn the_api_names_bedrock_and_dispatches_to_it() {
    let api: Api = "bedrock-converse-stream".parse().unwrap();
    assert_eq!(api, Api::Bedrock);
    assert_eq!(api.provider(), "amazon-bedrock");
    assert!(Api::ALL.contains(&Api::Bedrock));
    let encoded = api
        .encode(&Request::new(CLAUDE, vec![Message::user("Hi")]))
        .unwrap();
    assert_eq!(encoded.body["messages"][0]["content"][0]["text"], "Hi");
    let mut decoder = api.stream_decoder();
    decoder
        .push(r#"{"messageStart":{"role":"assistant"}}"#)
        .unwrap();
    decoder
        .push(r#"{"messageStop":{"stopReason":"end_turn"}}"#)
        .unwrap();
    let (message, _) = decoder.finish_with_warnings().unwrap();
    assert_eq!(message.api, "bedrock-converse-stream");
    assert!(Path::new(&bedrock::model_path(CLAUDE, true)).ends_with("converse-stream"));
}

mod event_stream {
    use super::*;
    use crate::common::event_stream::event_frame as frame;
    use agentmsg::providers::bedrock::{EventStreamParser, Frame};
    use base64::Engine as _;

    fn recorded_exception() -> Option<Vec<u8>> {
        let dir = recordings()?;
        let text = std::fs::read_to_string(
            dir.join("model-stream-error-exception.eventstream.base64.txt"),
        )
        .unwrap();
        Some(
            base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .unwrap(),
        )
    }

    /// Every recorded stream, written as event-stream frames by the crate's
    /// encoder and fed in random chunks (seeded): the frames come back as the
    /// recorded events, and decode to the same message as the lines do.
    #[test]
    fn frames_in_random_chunks_give_the_recorded_events() {
        let Some(dir) = recordings() else { return };
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        for path in common::files_ending(&dir, ".chunks.txt") {
            let name = common::file_name(&path);
            let lines = common::chunk_lines(&path);
            let mut bytes = Vec::new();
            for line in &lines {
                let value: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
                let (kind, payload) = value.into_iter().next().unwrap();
                bytes.extend(frame(&kind, &payload.to_string()));
            }
            let mut parser = EventStreamParser::new();
            let mut events = Vec::new();
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let (chunk, tail) = rest.split_at((1 + next(40)).min(rest.len()));
                parser
                    .push(chunk, |f| events.push(f.to_event_json()))
                    .unwrap();
                rest = tail;
            }
            parser.finish().unwrap();
            let expected: Vec<Value> = lines
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let got: Vec<Value> = events
                .iter()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(got, expected, "{name}");
            assert_eq!(
                stream(&events).unwrap().0.content,
                stream(&lines).unwrap().0.content,
                "{name}"
            );
        }
    }

    #[test]
    fn the_recorded_exception_frame_is_a_typed_exception_and_ends_the_message() {
        let Some(bytes) = recorded_exception() else {
            return;
        };
        let mut stream_bytes = frame("messageStart", r#"{"role":"assistant"}"#);
        stream_bytes.extend(frame(
            "contentBlockDelta",
            r#"{"contentBlockIndex":0,"delta":{"text":"Hi"}}"#,
        ));
        stream_bytes.extend(&bytes);
        let mut parser = EventStreamParser::new();
        let mut frames = Vec::new();
        for chunk in stream_bytes.chunks(3) {
            parser.push(chunk, |f| frames.push(f)).unwrap();
        }
        parser.finish().unwrap();
        let Some(Frame::Exception(exception)) = frames.last() else {
            panic!("{frames:?}")
        };
        assert_eq!(exception.kind, "modelStreamErrorException");
        assert_eq!(exception.message, "Model Stream Error");
        let events: Vec<String> = frames.iter().map(Frame::to_event_json).collect();
        let (message, _) = stream(&events).unwrap();
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(message.text_content(), "Hi");
        assert!(message
            .error_message
            .unwrap()
            .starts_with("modelStreamErrorException: Model Stream Error"));
    }

    #[test]
    fn a_bad_crc_or_a_cut_frame_is_an_error_naming_the_frame() {
        let mut bytes = frame("messageStart", r#"{"role":"assistant"}"#);
        let second = frame("messageStop", r#"{"stopReason":"end_turn"}"#);
        let start = bytes.len();
        bytes.extend(&second);
        // A payload byte of the second frame flipped: its message CRC fails.
        let at = start + second.len() - 8;
        bytes[at] ^= 0x20;
        let mut parser = EventStreamParser::new();
        let mut count = 0;
        let error = parser.push(&bytes, |_| count += 1).unwrap_err();
        assert_eq!(count, 1);
        assert_eq!((error.frame, error.offset), (1, start as u64), "{error}");
        assert!(error.to_string().contains("checksum"), "{error}");
        // The prelude's CRC.
        let mut bytes = frame("messageStart", "{}");
        bytes[9] ^= 1;
        let error = EventStreamParser::new().push(&bytes, |_| {}).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("event-stream frame 0 (byte 0):"),
            "{error}"
        );
        // Cut short.
        let bytes = frame("messageStart", "{}");
        let mut parser = EventStreamParser::new();
        parser.push(&bytes[..bytes.len() - 1], |_| {}).unwrap();
        assert!(parser
            .finish()
            .unwrap_err()
            .to_string()
            .contains("ended inside"));
        // Longer than the limit: refused before it is buffered.
        let mut parser = EventStreamParser::with_max_frame(64);
        let error = parser
            .push(&frame("messageStart", &"x".repeat(100)), |_| {})
            .unwrap_err();
        assert!(error.to_string().contains("limit of 64"), "{error}");
    }
}

/// Requests signed here, written for `scripts/sigv4_check_bedrock.py`, which
/// signs each again with botocore's signer at the same time with the same
/// credentials: the signatures must be equal (a `.ci/run` step).
#[test]
fn signed_requests_are_written_for_the_botocore_check() {
    use agentmsg::providers::bedrock::{model_path, sign_request, AwsCredentials};
    use std::time::{Duration, UNIX_EPOCH};
    let dir = common::fresh_sdk_dir("sigv4");
    let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    let token = "IQoJb3JpZ2luX2VjEXAMPLETOKEN//////////wEaCXVzLWVhc3QtMSJHMEUCIQ==";
    let models = [
        ("foundation", "amazon.nova-pro-v1:0"),
        ("profile", CLAUDE),
        (
            "arn",
            "arn:aws:bedrock:eu-central-1:123456789012:application-inference-profile/a1b2c3d4e5f6",
        ),
        ("odd", "meta.llama3-70b-instruct-v1:0 ~ä"),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (i, (name, model)) in models.into_iter().enumerate() {
        for stream in [false, true] {
            let token = (i % 2 == 0).then(|| token.to_owned());
            let region = ["us-east-1", "eu-central-1", "ap-southeast-2", "us-west-2"][i];
            let credentials = AwsCredentials::new("AKIDEXAMPLE", secret, token.clone());
            let url = format!(
                "https://bedrock-runtime.{region}.amazonaws.com{}",
                model_path(model, stream)
            );
            let request = Request::new(model, vec![Message::user(format!("Hi {name} ü"))]);
            let body =
                serde_json::to_string(&bedrock::encode_request(&request).unwrap().body).unwrap();
            let accept = if stream {
                "application/vnd.amazon.eventstream"
            } else {
                "application/json"
            };
            let headers = [("content-type", "application/json"), ("accept", accept)];
            let time = 1_700_000_000 + 86_399 * i as u64 + u64::from(stream);
            let signed = sign_request(
                &credentials,
                region,
                "bedrock",
                "POST",
                &url,
                &headers,
                body.as_bytes(),
                UNIX_EPOCH + Duration::from_secs(time),
            )
            .unwrap();
            let authorization = &signed.iter().find(|(n, _)| n == "authorization").unwrap().1;
            assert!(!authorization.contains(secret), "{authorization}");
            assert!(seen.insert(authorization.clone()), "two cases signed alike");
            assert_eq!(
                signed.iter().any(|(n, _)| n == "x-amz-security-token"),
                token.is_some()
            );
            let case = json!({
                "method": "POST", "url": url, "headers": headers, "body": body,
                "access_key_id": "AKIDEXAMPLE", "secret_access_key": secret, "session_token": token,
                "region": region, "service": "bedrock", "time": time, "signed": signed,
            });
            let file = format!("{name}_{}.json", if stream { "stream" } else { "converse" });
            std::fs::write(dir.join(file), serde_json::to_string_pretty(&case).unwrap()).unwrap();
        }
    }
    // A signature depends on the body, the time and the secret.
    let credentials = AwsCredentials::new("AKIDEXAMPLE", secret, None);
    let url = format!(
        "https://bedrock-runtime.us-east-1.amazonaws.com{}",
        model_path(CLAUDE, false)
    );
    let at = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let sign = |c: &AwsCredentials, body: &[u8], at| {
        sign_request(c, "us-east-1", "bedrock", "POST", &url, &[], body, at).unwrap()
    };
    let base = sign(&credentials, b"{}", at);
    assert_ne!(base, sign(&credentials, b"{ }", at));
    assert_ne!(base, sign(&credentials, b"{}", at + Duration::from_secs(1)));
    assert_ne!(
        base,
        sign(
            &AwsCredentials::new("AKIDEXAMPLE", "other", None),
            b"{}",
            at
        )
    );
    assert_eq!(base, sign(&credentials, b"{}", at));
}
