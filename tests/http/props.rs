//! Any chunking of a stream gives the same events and message.

use agentmsg::providers::{Api, StreamEvent, StreamReader};
use proptest::prelude::*;

/// An Anthropic stream with thinking, text with multi-byte characters, and a
/// tool call whose arguments stream in pieces.
fn anthropic_stream() -> Vec<u8> {
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think — ü"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Héllo 🌍 "}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"world"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.rs\", "}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"\"text\": \"fn main() {}\"}"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    events
        .iter()
        .map(|e| format!("event: x\r\ndata: {e}\r\n\r\n: ping\r\n\r\n"))
        .collect::<String>()
        .into_bytes()
}

fn read(bytes: &[u8], cuts: &[usize]) -> (Vec<StreamEvent>, agentmsg::AssistantMessage) {
    let mut reader = StreamReader::new(Api::Anthropic);
    let mut events = Vec::new();
    let mut start = 0;
    let mut cuts = cuts
        .iter()
        .map(|c| c % (bytes.len() + 1))
        .collect::<Vec<_>>();
    cuts.sort_unstable();
    for cut in cuts.into_iter().chain([bytes.len()]) {
        for event in reader.feed(&bytes[start..cut.max(start)]) {
            events.push(event.expect("decodes"));
        }
        start = cut.max(start);
    }
    events.extend(reader.end().map(|e| e.expect("decodes")));
    let (mut message, _) = reader.finish().expect("finishes");
    message.timestamp = 0;
    (events, message)
}

proptest! {
    #[test]
    fn any_chunking_gives_the_same_events(cuts in proptest::collection::vec(any::<usize>(), 0..40)) {
        let bytes = anthropic_stream();
        let whole = read(&bytes, &[]);
        let chunked = read(&bytes, &cuts);
        prop_assert_eq!(&chunked, &whole);
        let ended = whole.0.iter().any(|e| matches!(e, StreamEvent::ToolCallEnd { call, .. } if call.arguments.to_value()["text"] == "fn main() {}"));
        prop_assert!(ended, "the call ends with its arguments");
    }
}
