//! Tool-call arguments keep the order the model wrote (`path`, `oldText`,
//! `newText`, not sorted), at every depth, from each API's body and stream,
//! through a transcript line, and back into each API's request body.

use agentmsg::providers::{
    anthropic, gemini, openai_chat, openai_responses, EncodeError, Encoded, Request, StreamDecode,
};
use agentmsg::{
    AgentMessage, AssistantMessage, Message, ToolArguments, ToolCall, ToolResultMessage,
};
use serde_json::json;

/// Not in serde_json's (sorted) order, with a nested object out of order too.
const ARGS: &str =
    r#"{"path":"a.rs","oldText":"x","newText":"y","opts":{"z":1,"a":[{"q":2,"b":3}]}}"#;

fn arguments_of(message: &AssistantMessage) -> &str {
    message
        .tool_calls()
        .next()
        .unwrap_or_else(|| panic!("no tool call in {message:?}"))
        .arguments
        .as_str()
}

fn stream<D: StreamDecode>(mut decoder: D, events: &[String]) -> AssistantMessage {
    for event in events {
        decoder
            .push(event)
            .unwrap_or_else(|e| panic!("{e}: {event}"));
    }
    decoder.finish().expect("finishes")
}

#[test]
fn every_body_decoder_keeps_the_order() {
    let quoted = serde_json::to_string(ARGS).unwrap();
    let anthropic = anthropic::decode_response(&format!(
        r#"{{"id":"m","type":"message","role":"assistant","model":"c","content":[{{"type":"tool_use","id":"t1","name":"edit","input":{ARGS}}}],"stop_reason":"tool_use","usage":{{"input_tokens":1,"output_tokens":1}}}}"#
    ))
    .unwrap();
    assert_eq!(arguments_of(&anthropic), ARGS);
    // Keys of the block in another order (serde's buffered reader).
    let buffered = anthropic::decode_response(&format!(
        r#"{{"id":"m","type":"message","role":"assistant","model":"c","content":[{{"input":{ARGS},"id":"t1","name":"edit","type":"tool_use"}}],"stop_reason":"tool_use","usage":{{"input_tokens":1,"output_tokens":1}}}}"#
    ))
    .unwrap();
    assert_eq!(arguments_of(&buffered), ARGS);
    let chat = openai_chat::decode_response(&format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"g","choices":[{{"index":0,"message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"t1","type":"function","function":{{"name":"edit","arguments":{quoted}}}}}]}},"finish_reason":"tool_calls"}}]}}"#
    ))
    .unwrap();
    assert_eq!(arguments_of(&chat), ARGS);
    let responses = openai_responses::decode_response(&format!(
        r#"{{"id":"r","object":"response","status":"completed","model":"g","output":[{{"type":"function_call","id":"fc_1","call_id":"t1","name":"edit","arguments":{quoted}}}]}}"#
    ))
    .unwrap();
    assert_eq!(arguments_of(&responses), ARGS);
    let gemini = gemini::decode_response(&format!(
        r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"functionCall":{{"id":"t1","name":"edit","args":{ARGS}}}}}]}},"finishReason":"STOP"}}]}}"#
    ))
    .unwrap();
    assert_eq!(arguments_of(&gemini), ARGS);
}

#[test]
fn every_stream_decoder_keeps_the_order() {
    // The arguments cut in three pieces, as streams send them.
    let (a, rest) = ARGS.split_at(12);
    let (b, c) = rest.split_at(30);
    let pieces = [a, b, c];
    let q = |s: &str| serde_json::to_string(s).unwrap();

    let mut events = vec![
        r#"{"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}"#.to_owned(),
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t1","name":"edit","input":{}}}"#.to_owned(),
    ];
    events.extend(pieces.iter().map(|p| {
        format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
            q(p)
        )
    }));
    events.extend([
        r#"{"type":"content_block_stop","index":0}"#.to_owned(),
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}}"#.to_owned(),
        r#"{"type":"message_stop"}"#.to_owned(),
    ]);
    assert_eq!(
        arguments_of(&stream(anthropic::StreamDecoder::new(), &events)),
        ARGS
    );

    let mut events = vec![format!(
        r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"g","choices":[{{"index":0,"delta":{{"role":"assistant","tool_calls":[{{"index":0,"id":"t1","type":"function","function":{{"name":"edit","arguments":{}}}}}]}}}}]}}"#,
        q(a)
    )];
    events.extend([b, c].iter().map(|p| {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","created":1,"model":"g","choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}}}]}}"#,
            q(p)
        )
    }));
    events.push(r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"g","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.to_owned());
    events.push("[DONE]".to_owned());
    assert_eq!(
        arguments_of(&stream(openai_chat::StreamDecoder::new(), &events)),
        ARGS
    );

    let mut events = vec![
        r#"{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","model":"g","output":[]}}"#.to_owned(),
        r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"t1","name":"edit","arguments":""}}"#.to_owned(),
    ];
    events.extend(pieces.iter().enumerate().map(|(i, p)| {
        format!(
            r#"{{"type":"response.function_call_arguments.delta","sequence_number":{},"output_index":0,"item_id":"fc_1","delta":{}}}"#,
            i + 2,
            q(p)
        )
    }));
    events.push(format!(
        r#"{{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{{"type":"function_call","id":"fc_1","call_id":"t1","name":"edit","arguments":{}}}}}"#,
        q(ARGS)
    ));
    events.push(format!(
        r#"{{"type":"response.completed","sequence_number":6,"response":{{"id":"r","object":"response","status":"completed","model":"g","output":[{{"type":"function_call","id":"fc_1","call_id":"t1","name":"edit","arguments":{}}}]}}}}"#,
        q(ARGS)
    ));
    assert_eq!(
        arguments_of(&stream(openai_responses::StreamDecoder::new(), &events)),
        ARGS
    );

    let events = [format!(
        r#"{{"candidates":[{{"content":{{"role":"model","parts":[{{"functionCall":{{"id":"t1","name":"edit","args":{ARGS}}}}}]}},"finishReason":"STOP"}}]}}"#
    )];
    assert_eq!(
        arguments_of(&stream(gemini::StreamDecoder::new(), &events)),
        ARGS
    );
}

#[test]
fn a_transcript_line_keeps_the_order() {
    let line = format!(
        r#"{{"role":"assistant","content":[{{"type":"toolCall","id":"t1","name":"edit","arguments":{ARGS}}}],"api":"anthropic-messages","provider":"anthropic","model":"c","usage":{{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"toolUse","timestamp":1}}"#
    );
    let message = AgentMessage::from_line(&line).unwrap();
    assert_eq!(message.to_line().unwrap(), line);
    // A block whose `type` is not its first key is read through a buffer.
    let moved = line.replace(
        r#"{"type":"toolCall","id":"t1","name":"edit","arguments":"#,
        r#"{"id":"t1","name":"edit","type":"toolCall","arguments":"#,
    );
    assert_eq!(
        AgentMessage::from_line(&moved).unwrap().to_line().unwrap(),
        line
    );
}

fn conversation() -> Vec<Message> {
    let arguments: ToolArguments = ARGS.parse().unwrap();
    vec![
        Message::user("Fix a.rs."),
        Message::Assistant(AssistantMessage::new([ToolCall::new(
            "t1", "edit", arguments,
        )])),
        Message::ToolResult(ToolResultMessage::new("t1", "edit", ["done"])),
    ]
}

fn sent(encode: fn(&Request) -> Result<Encoded, EncodeError>) -> String {
    let messages = conversation();
    let encoded = encode(&Request::new("m", &messages)).expect("encodes");
    serde_json::to_string(&encoded.body).unwrap()
}

#[test]
fn every_encoder_sends_the_order() {
    let quoted = serde_json::to_string(ARGS).unwrap();
    let body = sent(anthropic::encode_request);
    assert!(body.contains(&format!(r#""input":{ARGS}"#)), "{body}");
    let body = sent(gemini::encode_request);
    assert!(body.contains(&format!(r#""args":{ARGS}"#)), "{body}");
    let body = sent(openai_chat::encode_request);
    assert!(body.contains(&format!(r#""arguments":{quoted}"#)), "{body}");
    let body = sent(openai_responses::encode_request);
    assert!(body.contains(&format!(r#""arguments":{quoted}"#)), "{body}");
    // Pretty too, indented like the rest of the body.
    let messages = conversation();
    let encoded = anthropic::encode_request(&Request::new("m", &messages)).unwrap();
    let pretty = serde_json::to_string_pretty(&encoded.body).unwrap();
    let at = |key: &str| {
        pretty
            .find(&format!("\"{key}\": "))
            .unwrap_or_else(|| panic!("{key} in {pretty}"))
    };
    assert!(
        at("path") < at("oldText") && at("oldText") < at("newText"),
        "{pretty}"
    );
    assert!(at("z") < at("a") && at("q") < at("b"), "{pretty}");
    let compact: serde_json::Value = serde_json::from_str(&pretty).unwrap();
    assert_eq!(compact, *encoded.body);
}

#[test]
fn a_body_changed_after_encoding_sends_the_change() {
    let messages = conversation();
    let mut encoded = anthropic::encode_request(&Request::new("m", &messages)).unwrap();
    let input = &mut encoded.body["messages"][1]["content"][0]["input"];
    assert_eq!(input["path"], "a.rs");
    input["path"] = json!("b.rs");
    let body = serde_json::to_string(&encoded.body).unwrap();
    assert!(body.contains(r#""path":"b.rs""#), "{body}");
    assert!(!body.contains(r#""path":"a.rs""#), "{body}");
    // The value alone is serde_json's (sorted).
    let value = encoded.body.clone().into_value();
    assert_eq!(value["messages"][1]["content"][0]["input"]["newText"], "y");
}
