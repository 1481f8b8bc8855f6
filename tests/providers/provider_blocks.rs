//! Issue 13, "real-world responses": what a provider answers beyond the blocks
//! agentmsg models (server-side tool calls and results, citations, images the
//! model made) is kept in its place, written and read back unchanged, replayed
//! to the API and provider that wrote it, and dropped, reported, for another.

use agentmsg::message::{MediaSource, RawJson};
use agentmsg::project::ChangeKind;
use agentmsg::providers::{anthropic, gemini, openai_chat, openai_responses, Request};
use agentmsg::providers::{StreamDecode, StreamEvent};
use agentmsg::{
    prepare, AgentMessage, AssistantContent, AssistantMessage, ImageContent, Message,
    ProviderBlock, StopReason, Target, TextContent,
};
use serde_json::{json, Value};

use crate::common;
use crate::transcripts::PNG;

const SEARCH: &str =
    r#"{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"rust"}}"#;
const RESULT: &str = r#"{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://www.rust-lang.org","title":"Rust","encrypted_content":"EqgfCio","page_age":null}]}"#;
const CITATIONS: &str = r#"[{"type":"web_search_result_location","url":"https://www.rust-lang.org","title":"Rust","encrypted_index":"Eo8BCio","cited_text":"A language empowering everyone"}]"#;

/// `json` as a decoder keeps it: compact, its keys in serde_json's order.
fn raw(json: &str) -> RawJson {
    RawJson::from_json(json).expect("JSON")
}

/// A web search answered by Claude: the server's call, its result, and a
/// text that cites it.
fn searched() -> AssistantMessage {
    AssistantMessage::new([
        AssistantContent::ProviderBlock(ProviderBlock::new("anthropic-messages", raw(SEARCH))),
        AssistantContent::ProviderBlock(ProviderBlock::new("anthropic-messages", raw(RESULT))),
        AssistantContent::Text(TextContent::new("Rust is fast.").with_citations(raw(CITATIONS))),
    ])
    .with_origin("anthropic-messages", "anthropic", "claude-sonnet-4-5")
    .with_timestamp(1)
}

fn conversation(reply: AssistantMessage) -> Vec<Message> {
    vec![
        Message::user("What is Rust?"),
        Message::Assistant(reply),
        Message::user("And Go?"),
    ]
}

fn assistant_of(messages: &[Message]) -> &AssistantMessage {
    messages
        .iter()
        .find_map(|m| match m {
            Message::Assistant(a) => Some(a),
            _ => None,
        })
        .expect("an assistant message")
}

#[test]
fn a_provider_block_line_reads_and_writes_back_byte_for_byte() {
    // Keys out of order, as a provider may write them: kept as they are.
    let line = r#"{"role":"assistant","content":[{"type":"providerBlock","api":"anthropic-messages","block":{"type":"server_tool_use","name":"web_search","id":"srvtoolu_01","input":{"query":"rust"}}},{"type":"text","text":"Rust is fast.","citations":[{"type":"web_search_result_location","url":"https://www.rust-lang.org","cited_text":"A language"}]},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"stop","timestamp":1}"#;
    let message = AgentMessage::from_line(line).expect("decodes");
    assert_eq!(message.to_line().expect("writes"), line);
    let Some(Message::Assistant(assistant)) = message.as_llm() else {
        panic!("an assistant message");
    };
    let AssistantContent::ProviderBlock(block) = &assistant.content[0] else {
        panic!("{:?}", assistant.content[0]);
    };
    assert_eq!(block.type_name(), "server_tool_use");
    assert_eq!(block.block.to_value()["input"]["query"], "rust");
    assert_eq!(
        assistant.tool_calls().count(),
        0,
        "a server call is no client call"
    );
    assert!(matches!(assistant.content[2], AssistantContent::Image(_)));
    // Read as a `Message` from text, from a `Value` and in a list: the same
    // blocks (serde's generic readers may hand the block over as a value, whose
    // keys then come in serde_json's order: the transcript reader above keeps
    // the bytes).
    let as_value = |m: &Message| serde_json::to_value(m).expect("serializes");
    let exact = as_value(message.as_llm().expect("an LLM message"));
    let direct: Message = serde_json::from_str(line).expect("from text");
    let value: Value = serde_json::from_str(line).expect("JSON");
    let via_value: Message = serde_json::from_value(value.clone()).expect("from a value");
    assert_eq!(as_value(&direct), exact);
    assert_eq!(as_value(&via_value), exact);
    let list: Vec<AgentMessage> =
        serde_json::from_str(&format!("[{line},{line}]")).expect("a list");
    assert_eq!(list[1].to_line().expect("writes"), line);

    // The transcript's JSON Schema takes the line, and a message decoded from
    // a provider, written as a line.
    let schema = agentmsg::transcript::transcript_line_schema();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let value: Value = serde_json::from_str(line).expect("JSON");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let written = AgentMessage::from(Message::Assistant(searched()))
        .to_line()
        .expect("writes");
    let value: Value = serde_json::from_str(&written).expect("JSON");
    assert!(validator.is_valid(&value), "{written}");
    assert_eq!(
        AgentMessage::from_line(&written).expect("reads").as_llm(),
        Some(&Message::Assistant(searched()))
    );
}

/// A transcript written as a pretty JSON array: the provider block and the
/// citations come back on one JSON Lines line each, keys in their order.
#[test]
fn a_pretty_json_array_transcript_writes_back_as_one_line_per_message() {
    let pretty = r#"[
  {
    "role": "assistant",
    "content": [
      {
        "type": "providerBlock",
        "api": "anthropic-messages",
        "block": {
          "type": "server_tool_use",
          "name": "web_search",
          "input": { "query": "a b\n c" }
        }
      },
      { "type": "text", "text": "x", "citations": [ { "url": "https://a b" } ] }
    ],
    "stopReason": "stop"
  }
]"#;
    let transcript = agentmsg::transcript::read_transcript(pretty.as_bytes()).expect("reads");
    let line = transcript.messages[0].to_line().expect("writes");
    assert_eq!(
        line,
        r#"{"role":"assistant","content":[{"type":"providerBlock","api":"anthropic-messages","block":{"type":"server_tool_use","name":"web_search","input":{"query":"a b\n c"}}},{"type":"text","text":"x","citations":[{"url":"https://a b"}]}],"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}"#
    );
    assert_eq!(
        AgentMessage::from_line(&line)
            .expect("reads")
            .to_line()
            .expect("writes"),
        line
    );
}

#[test]
fn a_malformed_provider_block_is_an_error_that_says_what() {
    for (line, said) in [
        (
            r#"{"role":"assistant","content":[{"type":"providerBlock","api":"anthropic-messages","block":[1]}]}"#,
            "must be a JSON object",
        ),
        (
            r#"{"role":"assistant","content":[{"type":"providerBlock","block":{"type":"x"}}]}"#,
            "api",
        ),
        (
            r#"{"role":"user","content":[{"type":"providerBlock","api":"anthropic-messages","block":{"type":"x"}}]}"#,
            "`providerBlock` blocks cannot appear in user messages",
        ),
    ] {
        let error = match serde_json::from_str::<Message>(line) {
            Ok(message) => panic!("{line} decoded as {message:?}"),
            Err(error) => error.to_string(),
        };
        assert!(error.contains(said), "{line}: {error}");
    }
}

#[test]
fn prepare_replays_provider_blocks_and_citations_to_their_provider_and_api_only() {
    let messages = conversation(searched());

    // Another Claude model of the same provider and API takes them back.
    let same = prepare(
        &messages,
        &Target::new("anthropic", "anthropic-messages", "claude-opus-4-5"),
    );
    assert_eq!(assistant_of(&same.messages).content, searched().content);
    assert_eq!(same.report.count(ChangeKind::DroppedProviderData), 0);

    // Another API: both blocks dropped, the citations removed, each said.
    let other = prepare(
        &messages,
        &Target::new("openai", "openai-responses", "gpt-5"),
    );
    let kept = &assistant_of(&other.messages).content;
    assert_eq!(kept.len(), 1, "{kept:?}");
    let AssistantContent::Text(text) = &kept[0] else {
        panic!("{kept:?}");
    };
    assert_eq!(
        (text.text.as_str(), text.citations.as_ref()),
        ("Rust is fast.", None)
    );
    let said = common::change_details(&other.report, ChangeKind::DroppedProviderData);
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(
        said[0].contains("`server_tool_use`") && said[0].contains("anthropic/anthropic-messages"),
        "{said:?}"
    );
    assert!(said[1].contains("`web_search_tool_result`"), "{said:?}");
    assert!(said[2].contains("citations of text block 2"), "{said:?}");

    // The same API from another provider (a proxy): its server state is not there.
    let proxy = prepare(
        &messages,
        &Target::new("bedrock", "anthropic-messages", "claude-sonnet-4-5"),
    );
    assert_eq!(proxy.report.count(ChangeKind::DroppedProviderData), 3);
    // Deterministic: the same input, the same output.
    assert_eq!(
        prepare(
            &messages,
            &Target::new("openai", "openai-responses", "gpt-5")
        )
        .messages,
        other.messages
    );
}

#[test]
fn an_image_the_model_made_goes_back_where_assistant_turns_take_images() {
    let image = ImageContent {
        source: MediaSource::Base64 {
            data: PNG.to_owned(),
            mime_type: "image/png".to_owned(),
        },
    };
    let reply = AssistantMessage::new([
        AssistantContent::Text(TextContent::new("Here it is.")),
        AssistantContent::Image(image.clone()),
    ])
    .with_origin("google-generative-ai", "google", "gemini-2.5-flash-image");
    let messages = conversation(reply.clone());

    let gemini_target = Target::new("google", "google-generative-ai", "gemini-2.5-flash-image");
    let kept = prepare(&messages, &gemini_target);
    assert_eq!(assistant_of(&kept.messages).content, reply.content);
    assert!(kept.report.is_empty(), "{:?}", kept.report);

    let claude = prepare(
        &messages,
        &Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    );
    let content = &assistant_of(&claude.messages).content;
    assert!(
        matches!(&content[1], AssistantContent::Text(t) if t.text == "[image/png image made by the model omitted]"),
        "{content:?}"
    );
    let said = common::change_details(&claude.report, ChangeKind::ImagePlaceholder);
    assert!(said[0].contains("assistant turns"), "{said:?}");

    let blind = prepare(&messages, &gemini_target.clone().vision(false));
    assert_eq!(blind.report.count(ChangeKind::ImagePlaceholder), 1);

    // Gemini replays it as inlineData; the body passes the schema.
    let body = gemini::encode_request(&Request::new("gemini-2.5-flash-image", messages.clone()))
        .expect("encodes")
        .body;
    assert_eq!(
        body["contents"][1]["parts"][1],
        json!({"inlineData": {"mimeType": "image/png", "data": PNG}})
    );
    assert!(common::schema_errors("gemini-generatecontent-request.schema.json", &body).is_empty());
    // Chat Completions has no image in assistant turns: a placeholder, said.
    let encoded = openai_chat::encode_request(&Request::new("gpt-4o", messages)).expect("encodes");
    assert!(
        encoded.body["messages"][1]["content"]
            .as_str()
            .is_some_and(|t| t.contains("image made by the model omitted")),
        "{}",
        encoded.body
    );
}

/// The recorded Anthropic web search: decoded, then sent back to the same
/// model in the next request, every server block in its place, the citations
/// on their text, and a body the published schema takes.
#[test]
fn anthropic_server_blocks_go_back_in_place_and_pass_the_schema() {
    common::require_conformance!();
    let dir = common::conformance_dir().join("responses/vercel/anthropic");
    for name in [
        "anthropic-web-search-tool.1.json",
        "anthropic-web-fetch-tool.1.json",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect("fixture");
        let wire: Value = serde_json::from_str(&text).expect("JSON");
        let reply = anthropic::decode_response(&text).expect("decodes");
        assert!(reply.tool_calls().next().is_none(), "{name}");
        let model = reply.model.clone();
        let encoded =
            anthropic::encode_request(&Request::new(model, conversation(reply))).expect("encodes");
        let replayed = &encoded.body["messages"][1]["content"];
        // Every block back, in order; `citations: null` is no citation.
        let mut expected = wire["content"].clone();
        for block in expected.as_array_mut().expect("content") {
            if block["citations"].is_null() {
                if let Some(map) = block.as_object_mut() {
                    map.remove("citations");
                }
            }
        }
        assert_eq!(replayed, &expected, "{name}");
        let errors = common::schema_errors("anthropic-messages-request.schema.json", &encoded.body);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        assert_eq!(
            encoded.report.count(ChangeKind::DroppedProviderData),
            0,
            "{name}"
        );

        // To another API: dropped, and said.
        let reply = anthropic::decode_response(&text).expect("decodes");
        let blocks = reply
            .content
            .iter()
            .filter(|b| matches!(b, AssistantContent::ProviderBlock(_)))
            .count();
        let encoded = openai_responses::encode_request(&Request::new("gpt-5", conversation(reply)))
            .expect("encodes");
        assert!(
            encoded.report.count(ChangeKind::DroppedProviderData) >= blocks,
            "{name}: {:?}",
            encoded.report
        );
        assert!(
            common::schema_errors("openai-responses-request.schema.json", &encoded.body).is_empty()
        );
    }
}

/// The recorded Responses server-side tools: each item goes back into the
/// input as it came, and the body passes the published schema.
#[test]
fn responses_items_go_back_into_the_input_as_they_came() {
    common::require_conformance!();
    let dir = common::conformance_dir().join("responses/vercel/openai/responses");
    for name in [
        "openai-web-search-tool.1.json",
        "openai-file-search-tool.1.json",
        "openai-code-interpreter-tool.1.json",
        "openai-image-generation-tool.1.json",
        "openai-mcp-tool.1.json",
        "openai-compaction.1.json",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect("fixture");
        let wire: Value = serde_json::from_str(&text).expect("JSON");
        let reply = openai_responses::decode_response(&text).expect("decodes");
        assert_ne!(reply.stop_reason, StopReason::ToolUse, "{name}");
        let model = reply.model.clone();
        let encoded = openai_responses::encode_request(&Request::new(model, conversation(reply)))
            .expect("encodes");
        let input = encoded.body["input"].as_array().expect("input");
        for item in wire["output"].as_array().expect("output") {
            let kind = item["type"].as_str().unwrap_or_default();
            if matches!(kind, "message" | "reasoning") {
                continue;
            }
            assert!(
                input.contains(item),
                "{name}: `{kind}` item not replayed as it came"
            );
        }
        let errors = common::schema_errors("openai-responses-request.schema.json", &encoded.body);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
        // The generated image is at hand, while its item goes back as it is.
        if name == "openai-image-generation-tool.1.json" {
            let reply = openai_responses::decode_response(&text).expect("decodes");
            let image = reply
                .content
                .iter()
                .find_map(|b| match b {
                    AssistantContent::ProviderBlock(p) => p.image(),
                    _ => None,
                })
                .expect("an image");
            assert_eq!(image.source.mime_type(), Some("image/webp"));
            // "RIFF" (the recording shortens the rest of the data).
            assert!(image.source.data().is_some_and(|d| d.starts_with("UklGR")));
        }
        // URL citations go back on their text, as the API wants them.
        if name == "openai-web-search-tool.1.json" {
            let cited = input.iter().any(|item| {
                item["type"] == "message"
                    && item["content"][0]["annotations"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty())
            });
            assert!(cited, "{name}: annotations not replayed");
        }
    }
}

/// A code-execution answer as Gemini streams it (the shape of the Firebase
/// SDK's `streaming-success-code-execution` mock), with grounding metadata.
const CODE_EXECUTION: [&str; 4] = [
    r#"{"candidates":[{"content":{"parts":[{"text":"Let me compute it:\n\n"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
    r#"{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print(sum([2, 3, 5, 7, 11]))\n"}}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
    r#"{"candidates":[{"content":{"parts":[{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"28\n"}}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
    r#"{"candidates":[{"content":{"parts":[{"text":"The sum is 28."}],"role":"model"},"finishReason":"STOP","index":0,"groundingMetadata":{"webSearchQueries":["first primes"]}}],"usageMetadata":{"promptTokenCount":21,"candidatesTokenCount":12,"totalTokenCount":33},"modelVersion":"gemini-2.5-flash","responseId":"r1"}"#,
];

#[test]
fn gemini_code_execution_and_grounding_are_kept_and_go_back_as_parts() {
    let mut decoder = gemini::StreamDecoder::new();
    let mut whole = Vec::new();
    for chunk in CODE_EXECUTION {
        for event in decoder.push(chunk).expect("pushes") {
            if let StreamEvent::Block { index, block } = event {
                whole.push((index, block));
            }
        }
    }
    let partial = decoder.partial();
    let (message, warnings) = decoder.finish_with_warnings().expect("finishes");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(partial.content, message.content);
    let kinds: Vec<String> = message
        .content
        .iter()
        .map(|b| match b {
            AssistantContent::ProviderBlock(p) => p.type_name(),
            other => other.kind().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "text",
            "executableCode",
            "codeExecutionResult",
            "text",
            "groundingMetadata"
        ]
    );
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(
        whole.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        [1, 2, 4],
        "each whole block is told once, at its index"
    );

    // The same chunks as one body give the same message.
    let mut body: Value = serde_json::from_str(CODE_EXECUTION[3]).expect("JSON");
    let parts: Vec<Value> = CODE_EXECUTION
        .iter()
        .map(|c| {
            serde_json::from_str::<Value>(c).expect("JSON")["candidates"][0]["content"]["parts"][0]
                .clone()
        })
        .collect();
    body["candidates"][0]["content"]["parts"] = Value::Array(parts);
    let (from_body, _) = gemini::decode_response_with_warnings(&body.to_string()).expect("decodes");
    assert_eq!(from_body.content.len(), 5);
    // (The body was written from a `Value`, so its keys are sorted.)
    let value = |c: &[AssistantContent]| serde_json::to_value(c).expect("serializes");
    assert_eq!(
        value(&from_body.content[1..3]),
        value(&message.content[1..3])
    );
    assert_eq!(
        value(&from_body.content[4..5]),
        value(&message.content[4..5])
    );

    // Back to Gemini: the parts in place; the grounding metadata, no part, said.
    let encoded = gemini::encode_request(&Request::new("gemini-2.5-flash", conversation(message)))
        .expect("encodes");
    let parts = &encoded.body["contents"][1]["parts"];
    assert_eq!(
        parts[1]["executableCode"]["code"],
        "print(sum([2, 3, 5, 7, 11]))\n"
    );
    assert_eq!(parts[2]["codeExecutionResult"]["output"], "28\n");
    assert_eq!(parts.as_array().map(Vec::len), Some(4), "{parts}");
    let said = common::change_details(&encoded.report, ChangeKind::DroppedProviderData);
    assert!(
        said.iter().any(|d| d.contains("`groundingMetadata`")),
        "{said:?}"
    );
    assert!(
        common::schema_errors("gemini-generatecontent-request.schema.json", &encoded.body)
            .is_empty()
    );
}

#[test]
fn a_gemini_stream_that_ends_cleanly_without_finish_reason_is_a_stop() {
    // Chunks that stop after their last candidate, without a finishReason.
    let text = [
        r#"{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"responseId":"r2","modelVersion":"gemini-2.5-flash"}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"lo."}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"totalTokenCount":5},"responseId":"r2","modelVersion":"gemini-2.5-flash"}"#,
    ];
    let mut decoder = gemini::StreamDecoder::new();
    for chunk in text {
        decoder.push(chunk).expect("pushes");
    }
    let (message, warnings) = decoder.finish_with_warnings().expect("a clean end");
    assert_eq!(
        (message.text_content().as_str(), message.stop_reason),
        ("Hello.", StopReason::Stop)
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let said = warnings[0].to_string();
    assert!(
        said.contains("event 1") && said.contains("without a finishReason"),
        "{said}"
    );

    // With a function call, the clean end is a toolUse.
    let mut decoder = gemini::StreamDecoder::new();
    decoder
        .push(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"now","args":{}}}],"role":"model"}}],"responseId":"r3"}"#)
        .expect("pushes");
    assert_eq!(
        decoder.finish().expect("a clean end").stop_reason,
        StopReason::ToolUse
    );

    // Cut while a call's arguments still stream, or before any candidate: an error.
    let mut decoder = gemini::StreamDecoder::new();
    decoder
        .push(r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#)
        .expect("pushes");
    let error = decoder.finish().expect_err("cut mid-call").to_string();
    assert!(error.contains("still streaming"), "{error}");
    let mut decoder = gemini::StreamDecoder::new();
    decoder
        .push(r#"{"usageMetadata":{"promptTokenCount":3}}"#)
        .expect("pushes");
    assert!(decoder.finish().is_err());
}

/// An Anthropic stream with a server-side search: the server blocks come whole
/// (input from its deltas), the citations gather on their text, no client
/// call is told, and the message equals the body of the same reply.
#[test]
fn an_anthropic_stream_keeps_server_blocks_and_citations_as_the_body_does() {
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_9","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"rust\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        &format!(r#"{{"type":"content_block_start","index":1,"content_block":{RESULT}}}"#),
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"","citations":[]}}"#,
        &format!(
            r#"{{"type":"content_block_delta","index":2,"delta":{{"type":"citations_delta","citation":{}}}}}"#,
            &CITATIONS[1..CITATIONS.len() - 1]
        ),
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Rust is fast."}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":20}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let mut decoder = anthropic::StreamDecoder::new();
    let mut told = Vec::new();
    for event in &events {
        told.extend(decoder.push(event).expect("pushes"));
    }
    assert!(
        !told.iter().any(|e| matches!(
            e,
            StreamEvent::ToolCallStart { .. } | StreamEvent::ToolCallEnd { .. }
        )),
        "{told:?}"
    );
    let blocks: Vec<usize> = told
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Block { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(blocks, [0, 1]);
    let partial = decoder.partial();
    let (streamed, warnings) = decoder.finish_with_warnings().expect("finishes");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(partial.content, streamed.content);
    assert_eq!(streamed.stop_reason, StopReason::Stop);

    let body = format!(
        r#"{{"id":"msg_9","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{SEARCH},{RESULT},{{"type":"text","text":"Rust is fast.","citations":{CITATIONS}}}],"stop_reason":"end_turn","usage":{{"input_tokens":10,"output_tokens":20}}}}"#
    );
    let mut decoded = anthropic::decode_response(&body).expect("decodes");
    decoded.timestamp = streamed.timestamp;
    assert_eq!(decoded, streamed);
    assert_eq!(decoded.content, searched().content);
}

/// A search answer of an OpenAI-compatible server: OpenAI's URL `annotations`
/// on the message, xAI's and Perplexity's `citations` beside the choices. The
/// body and the stream keep them alike: the annotations as the text's
/// citations, the sources as a provider block; neither is a tool call, and
/// Chat Completions takes neither back (said).
#[test]
fn chat_completions_search_sources_are_kept_in_body_and_stream() {
    let annotations = r#"[{"type":"url_citation","url_citation":{"url":"https://www.rust-lang.org","title":"Rust","start_index":0,"end_index":4}}]"#;
    let body = format!(
        r#"{{"id":"chatcmpl-1","model":"grok-3","created":1,"choices":[{{"index":0,"message":{{"role":"assistant","content":"Rust is fast.","annotations":{annotations}}},"finish_reason":"stop"}}],"citations":["https://www.rust-lang.org","https://doc.rust-lang.org"],"usage":{{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}}}"#
    );
    let (message, warnings) = openai_chat::decode_response_with_warnings(&body).expect("decodes");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.content.len(), 2, "{:?}", message.content);
    let AssistantContent::Text(text) = &message.content[0] else {
        panic!("{:?}", message.content);
    };
    assert_eq!(
        text.citations.as_ref().map(RawJson::to_value),
        Some(serde_json::from_str(annotations).unwrap())
    );
    let AssistantContent::ProviderBlock(sources) = &message.content[1] else {
        panic!("{:?}", message.content);
    };
    assert_eq!(
        (sources.api.as_str(), sources.type_name().as_str()),
        ("openai-completions", "citations")
    );
    assert_eq!(
        sources.block.to_value()["citations"][1],
        "https://doc.rust-lang.org"
    );

    let chunks = [
        r#"{"id":"chatcmpl-1","model":"grok-3","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"Rust is"}}]}"#.to_owned(),
        format!(r#"{{"id":"chatcmpl-1","model":"grok-3","created":1,"choices":[{{"index":0,"delta":{{"content":" fast.","annotations":{annotations}}}}}]}}"#),
        r#"{"id":"chatcmpl-1","model":"grok-3","created":1,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"citations":["https://www.rust-lang.org","https://doc.rust-lang.org"],"usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}"#.to_owned(),
    ];
    let mut decoder = openai_chat::StreamDecoder::new();
    let mut told = Vec::new();
    for chunk in &chunks {
        told.extend(decoder.push(chunk).expect("pushes"));
    }
    let partial = decoder.partial();
    let streamed = decoder.finish().expect("finishes");
    assert_eq!(streamed.content, message.content);
    assert_eq!(partial.content, message.content);
    assert!(
        told.iter()
            .any(|e| matches!(e, StreamEvent::Block { index: 1, .. })),
        "{told:?}"
    );

    let next = Request::new("grok-3", conversation(message));
    let encoded = openai_chat::encode_request(&next).expect("encodes");
    assert_eq!(encoded.body["messages"][1]["content"], "Rust is fast.");
    assert_eq!(
        encoded.report.count(ChangeKind::DroppedProviderData),
        2,
        "{:?}",
        encoded.report
    );
}

/// Which recorded Anthropic bodies with server-side blocks replay to a body
/// the published request schema takes: the blocks of the tools the spec
/// describes (web search and fetch, code execution, tool search) do; the
/// beta ones it does not list yet (MCP, compaction, advisor) are replayed all
/// the same (the API takes them with their beta header) and are named here,
/// as are blocks with fields newer than the spec cut (`caller`).
#[test]
fn recorded_anthropic_server_blocks_replay_within_the_schema_or_are_beta() {
    common::require_conformance!();
    const BETA: [&str; 4] = [
        "mcp_tool_use",
        "mcp_tool_result",
        "compaction",
        "advisor_tool_result",
    ];
    let dir = common::conformance_dir().join("responses/vercel/anthropic");
    let mut valid = 0;
    for path in common::files_ending(&dir, ".json") {
        let name = common::file_name(&path);
        let text = std::fs::read_to_string(&path).expect("fixture");
        let Ok(reply) = anthropic::decode_response(&text) else {
            continue;
        };
        let kinds: Vec<String> = reply
            .content
            .iter()
            .filter_map(|b| match b {
                AssistantContent::ProviderBlock(p) => Some(p.type_name()),
                _ => None,
            })
            .collect();
        if kinds.is_empty() || reply.stop_reason == StopReason::Error {
            continue;
        }
        let model = reply.model.clone();
        let encoded =
            anthropic::encode_request(&Request::new(model, conversation(reply))).expect("encodes");
        let errors = common::schema_errors("anthropic-messages-request.schema.json", &encoded.body);
        if errors.is_empty() {
            valid += 1;
        } else {
            // A block of a beta tool, or one with the `caller` of programmatic
            // tool calling (2026), which the spec cut does not list yet.
            let newer = reply_blocks_with_caller(&text);
            assert!(
                kinds.iter().any(|k| BETA.contains(&k.as_str())) || newer,
                "{name}: {kinds:?}: {errors:#?}"
            );
        }
    }
    assert!(valid >= 14, "only {valid} bodies replay within the schema");
}

/// Whether a recorded body has a server-side block with a `caller`.
fn reply_blocks_with_caller(body: &str) -> bool {
    let wire: Value = serde_json::from_str(body).expect("JSON");
    wire["content"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|b| b.get("caller").is_some() && b["type"] != "tool_use")
}

/// Gemini's image models: the final image is an image block; a draft it made
/// while reasoning (`thought: true`) is kept whole, its image at hand.
#[test]
fn a_gemini_image_is_an_image_block_and_a_thought_image_stays_whole() {
    let body = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"inlineData": {"mimeType": "image/png", "data": PNG}, "thought": true},
        {"text": "Here is your cat."},
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"inlineData": {"mimeType": "audio/L16;rate=24000", "data": "AAAA"}},
    ]}, "finishReason": "STOP"}], "modelVersion": "gemini-3-pro-image-preview", "responseId": "r4"});
    let (message, warnings) =
        gemini::decode_response_with_warnings(&body.to_string()).expect("decodes");
    assert!(warnings.is_empty(), "{warnings:?}");
    let AssistantContent::ProviderBlock(draft) = &message.content[0] else {
        panic!("{:?}", message.content);
    };
    assert_eq!(draft.block.to_value()["thought"], true);
    assert_eq!(
        draft
            .image()
            .and_then(|i| i.source.data().map(str::to_owned))
            .as_deref(),
        Some(PNG)
    );
    assert!(
        matches!(&message.content[2], AssistantContent::Image(i) if i.source.mime_type() == Some("image/png"))
    );
    let AssistantContent::ProviderBlock(audio) = &message.content[3] else {
        panic!("{:?}", message.content);
    };
    assert!(audio.image().is_none());
    assert_eq!(message.stop_reason, StopReason::Stop);
}
