//! Responses that real servers send and the first decoders refused or
//! misread (issue 13): each decodes as the provider's own SDK reads it.

use agentmsg::providers::{
    anthropic, openai_chat, openai_responses, ResponseError, StreamDecode, StreamEvent,
};
use agentmsg::{AssistantContent, StopReason};

#[test]
fn tool_calls_null_from_compatible_servers_is_no_tool_call() {
    let body = r#"{"id":"cmpl-1","object":"chat.completion","created":1,"model":"mistral-large",
        "choices":[{"index":0,"message":{"role":"assistant","content":"Hi","tool_calls":null},
        "finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#;
    let message = openai_chat::decode_response(body).expect("decodes");
    assert_eq!(message.text_content(), "Hi");
    assert_eq!(message.tool_calls().count(), 0);
    assert_eq!(message.stop_reason, StopReason::Stop);
    let mut stream = openai_chat::StreamDecoder::new();
    for chunk in [
        r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi","tool_calls":null},"finish_reason":null}]}"#,
        r#"{"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":null},"finish_reason":"stop"}]}"#,
        "[DONE]",
    ] {
        stream.push(chunk).expect("a null list is an empty one");
    }
    assert_eq!(stream.finish().unwrap().text_content(), "Hi");
}

#[test]
fn an_anthropic_stream_cut_by_max_tokens_inside_a_tool_call_is_a_length_stop() {
    let mut stream = anthropic::StreamDecoder::new();
    let mut events = Vec::new();
    for event in [
        r#"{"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I will write it."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.txt\",\"text\":\"long"}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":64}}"#,
        r#"{"type":"message_stop"}"#,
    ] {
        events.extend(stream.push(event).expect("every event reads"));
    }
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Done {
            stop_reason: StopReason::Length
        })
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallEnd { .. })),
        "{events:?}"
    );
    let partial = stream.partial();
    assert_eq!(partial.tool_calls().count(), 0);
    let (message, warnings) = stream
        .finish_with_warnings()
        .expect("a length stop, not an error");
    assert_eq!(message.stop_reason, StopReason::Length);
    assert_eq!(message.text_content(), "I will write it.");
    assert_eq!(
        message.tool_calls().count(),
        0,
        "the unfinished call is dropped"
    );
    assert_eq!(message.usage.output, 64);
    assert!(
        warnings.iter().any(|w| w
            .to_string()
            .contains("`write` was cut by the output limit")),
        "{warnings:?}"
    );
    // Without the limit, a block left open is still an error.
    let mut stream = anthropic::StreamDecoder::new();
    for event in [
        r#"{"type":"message_start","message":{"id":"m","model":"c","content":[]}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#,
        r#"{"type":"message_stop"}"#,
    ] {
        stream.push(event).unwrap();
    }
    let error = stream.finish().expect_err("a block never stopped");
    assert!(
        error
            .to_string()
            .contains("content block 0 was never stopped"),
        "{error}"
    );
}

#[test]
fn a_responses_decoder_refuses_bodies_that_are_not_responses_and_says_what_they_are() {
    let cases = [
        ("{}", "an empty or unknown object"),
        (
            r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}"#,
            "Chat Completions",
        ),
        (
            r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}]}"#,
            "Anthropic Messages",
        ),
        (
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}"#,
            "Gemini",
        ),
    ];
    for (body, what) in cases {
        let error = openai_responses::decode_response(body).expect_err(body);
        assert!(matches!(error, ResponseError::Invalid { .. }), "{error:?}");
        let text = error.to_string();
        assert!(
            text.contains("not a Responses body") && text.contains(what),
            "{text}"
        );
    }
    // An error body is still a message.
    let message = openai_responses::decode_response(
        r#"{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}"#,
    )
    .unwrap();
    assert_eq!(message.stop_reason, StopReason::Error);
}

#[test]
fn server_side_tool_blocks_are_kept_in_place_and_never_taken_for_client_calls() {
    let body = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",
        "content":[
          {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"rust"}},
          {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
          {"type":"text","text":"Rust is a language.","citations":[]}],
        "stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":5}}"#;
    let (message, warnings) = anthropic::decode_response_with_warnings(body).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(message.tool_calls().count(), 0);
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.text_content(), "Rust is a language.");
    let kinds: Vec<String> = message
        .content
        .iter()
        .map(|c| match c {
            AssistantContent::ProviderBlock(p) => format!("{}:{}", p.api, p.type_name()),
            other => other.kind().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "anthropic-messages:server_tool_use",
            "anthropic-messages:web_search_tool_result",
            "text"
        ]
    );
    // A `tool_use` stop with only server-side blocks is no client turn.
    let paused = body.replace("end_turn", "tool_use");
    let message = anthropic::decode_response(&paused).unwrap();
    assert_eq!(message.stop_reason, StopReason::Stop);
    let paused = body.replace("end_turn", "pause_turn");
    let message = anthropic::decode_response(&paused).unwrap();
    assert_eq!(message.stop_reason, StopReason::Paused);
}

/// What decoding one recorded body or stream gave: the message and its warnings.
type Decoded = Result<(agentmsg::AssistantMessage, Vec<ResponseError>), ResponseError>;

/// The streams of a chunk file: split where the next one starts (Anthropic
/// `message_start`, Responses `response.created`); Gemini files hold one.
fn streams(lines: Vec<String>, start: &str) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for line in lines {
        match out.last_mut() {
            Some(stream) if !line.contains(start) => stream.push(line),
            _ => out.push(vec![line]),
        }
    }
    out
}

fn fold<D: StreamDecode>(
    mut decoder: D,
    lines: &[String],
    finish: impl FnOnce(D) -> Decoded,
) -> Decoded {
    for line in lines {
        decoder.push(line)?;
    }
    finish(decoder)
}

/// Every recorded response and stream of the three APIs with server-side
/// tools, decoded with its warnings, by file.
fn census() -> Vec<(String, Decoded)> {
    let dir = crate::common::conformance_dir().join("responses/vercel");
    let mut out = Vec::new();
    for (sub, api) in [
        ("anthropic", "anthropic"),
        ("openai/responses", "responses"),
        ("google", "gemini"),
    ] {
        let dir = dir.join(sub);
        for path in crate::common::files_ending(&dir, ".json") {
            let body = std::fs::read_to_string(&path).expect("fixture");
            let decoded = match api {
                "anthropic" => anthropic::decode_response_with_warnings(&body),
                "responses" => openai_responses::decode_response_with_warnings(&body),
                _ => agentmsg::providers::gemini::decode_response_with_warnings(&body),
            };
            out.push((crate::common::file_name(&path), decoded));
        }
        for path in crate::common::files_ending(&dir, ".chunks.txt") {
            let lines = crate::common::chunk_lines(&path);
            let name = crate::common::file_name(&path);
            let groups = match api {
                "anthropic" => streams(lines, "\"type\":\"message_start\""),
                "responses" => streams(lines, "\"type\":\"response.created\""),
                _ => vec![lines],
            };
            for lines in groups {
                let decoded = match api {
                    "anthropic" => fold(anthropic::StreamDecoder::new(), &lines, |d| {
                        d.finish_with_warnings()
                    }),
                    "responses" => fold(openai_responses::StreamDecoder::new(), &lines, |d| {
                        d.finish_with_warnings()
                    }),
                    _ => fold(
                        agentmsg::providers::gemini::StreamDecoder::new(),
                        &lines,
                        |d| d.finish_with_warnings(),
                    ),
                };
                out.push((name.clone(), decoded));
            }
        }
    }
    out
}

/// Issue 13: server-side tool blocks, their results and citations are kept
/// (as provider blocks, and citations on their text), never skipped, and
/// never taken for client tool calls. Before this, the same 161 recordings
/// gave 319 "skipped: agentmsg does not model it" warnings, and the citations
/// of 20 texts were dropped without one; now each of those 319 blocks is a
/// provider block and each citation list is kept.
#[test]
fn no_recorded_response_loses_a_block() {
    crate::common::require_conformance!();
    let mut decoded = 0;
    let mut provider_blocks = 0;
    let mut cited = 0;
    let mut lost = Vec::new();
    for (name, result) in census() {
        let Ok((message, warnings)) = result else {
            continue; // the bad recordings are the decoders' own tests' business
        };
        decoded += 1;
        for w in &warnings {
            let text = w.to_string();
            if text.contains("does not model") || text.contains("was skipped") {
                lost.push(format!("{name}: {text}"));
            }
        }
        for block in &message.content {
            match block {
                AssistantContent::ProviderBlock(p) => {
                    provider_blocks += 1;
                    assert_eq!(p.api, message.api, "{name}");
                    assert!(p.block.is_object(), "{name}");
                }
                AssistantContent::Text(t) if t.citations.is_some() => cited += 1,
                _ => {}
            }
        }
        if message.stop_reason == StopReason::ToolUse {
            assert!(message.tool_calls().next().is_some(), "{name}");
        }
    }
    eprintln!(
        "{decoded} responses: {provider_blocks} provider blocks, {cited} cited texts, {} lost",
        lost.len()
    );
    assert!(decoded >= 130, "only {decoded} responses decoded");
    assert!(
        provider_blocks >= 319,
        "only {provider_blocks} provider blocks"
    );
    assert!(cited >= 20, "only {cited} texts with citations");
    assert!(lost.is_empty(), "{}", lost.join("\n"));
}
