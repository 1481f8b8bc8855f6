//! The events the stream decoders report, on every recorded stream of every
//! API: they rebuild the final message, `partial()` follows them, and the
//! bytes' chunking does not change them.

use agentmsg::providers::{SseParser, StreamDecode, StreamEvent};
use agentmsg::{
    AssistantContent, AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall,
};
use proptest::prelude::*;
use serde_json::Map;

use crate::common;
use crate::scenarios::{Api, APIS};

/// A decoder of `api`, behind the trait.
fn decoder(api: &Api) -> Box<dyn Decoder> {
    match api.name {
        "anthropic" => Box::new(agentmsg::providers::anthropic::StreamDecoder::new()),
        "gemini" => Box::new(agentmsg::providers::gemini::StreamDecoder::new()),
        "openai-chat" => Box::new(agentmsg::providers::openai_chat::StreamDecoder::new()),
        _ => Box::new(agentmsg::providers::openai_responses::StreamDecoder::new()),
    }
}

/// `StreamDecode` with `finish` on a box.
trait Decoder {
    fn push_event(
        &mut self,
        event: &str,
    ) -> Result<Vec<StreamEvent>, agentmsg::providers::ResponseError>;
    fn partial_message(&self) -> AssistantMessage;
    fn finish_boxed(
        self: Box<Self>,
    ) -> Result<AssistantMessage, agentmsg::providers::ResponseError>;
}

impl<D: StreamDecode> Decoder for D {
    fn push_event(
        &mut self,
        event: &str,
    ) -> Result<Vec<StreamEvent>, agentmsg::providers::ResponseError> {
        StreamDecode::push(self, event)
    }
    fn partial_message(&self) -> AssistantMessage {
        StreamDecode::partial(self)
    }
    fn finish_boxed(
        self: Box<Self>,
    ) -> Result<AssistantMessage, agentmsg::providers::ResponseError> {
        (*self).finish()
    }
}

/// The message the events describe: blocks built from starts and deltas,
/// checked against their ends, and the stop reason of `Done`.
fn assemble(
    events: &[StreamEvent],
    strict: bool,
) -> Result<(Vec<AssistantContent>, Option<StopReason>), String> {
    let mut blocks: Vec<AssistantContent> = Vec::new();
    let mut stop = None;
    let slot = |blocks: &mut Vec<AssistantContent>, index: usize| -> Result<(), String> {
        if index != blocks.len() {
            return Err(format!(
                "block {index} started after {} blocks",
                blocks.len()
            ));
        }
        Ok(())
    };
    for event in events {
        match event {
            StreamEvent::TextStart { index } => {
                slot(&mut blocks, *index)?;
                blocks.push(AssistantContent::Text(TextContent::new("")));
            }
            StreamEvent::ThinkingStart { index } => {
                slot(&mut blocks, *index)?;
                blocks.push(AssistantContent::Thinking(ThinkingContent::new("")));
            }
            StreamEvent::ToolCallStart { index, id, name } => {
                slot(&mut blocks, *index)?;
                blocks.push(AssistantContent::ToolCall(ToolCall::new(
                    id.clone(),
                    name.clone(),
                    serde_json::Value::Object(Map::new()),
                )));
            }
            StreamEvent::TextDelta { index, delta } => match blocks.get_mut(*index) {
                Some(AssistantContent::Text(t)) => t.text.push_str(delta),
                other => return Err(format!("text delta for {other:?}")),
            },
            StreamEvent::ThinkingDelta { index, delta } => match blocks.get_mut(*index) {
                Some(AssistantContent::Thinking(t)) => t.thinking.push_str(delta),
                other => return Err(format!("thinking delta for {other:?}")),
            },
            StreamEvent::ToolCallDelta { index, .. }
                if !matches!(blocks.get(*index), Some(AssistantContent::ToolCall(_))) =>
            {
                return Err(format!("tool call delta for block {index}"));
            }
            StreamEvent::TextEnd { index, text } => match blocks.get_mut(*index) {
                Some(AssistantContent::Text(t)) if t.text == text.text || !strict => {
                    *t = text.clone();
                }
                other => return Err(format!("text end {text:?} for {other:?}")),
            },
            StreamEvent::ThinkingEnd { index, block } => {
                let so_far = blocks.get_mut(*index).ok_or("thinking end for no block")?;
                if let (AssistantContent::Thinking(a), AssistantContent::Thinking(b)) =
                    (&*so_far, block)
                {
                    if a.thinking != b.thinking {
                        return Err(format!("thinking deltas {a:?} end as {b:?}"));
                    }
                }
                *so_far = block.clone();
            }
            StreamEvent::ToolCallEnd { index, call } => {
                let so_far = blocks.get_mut(*index).ok_or("call end for no block")?;
                *so_far = AssistantContent::ToolCall(call.clone());
            }
            StreamEvent::Block { index, block } => {
                slot(&mut blocks, *index)?;
                if matches!(block, AssistantContent::ToolCall(_)) {
                    return Err(format!("a whole block {index} is a client tool call"));
                }
                blocks.push(block.clone());
            }
            StreamEvent::Done { stop_reason } => stop = Some(*stop_reason),
            _ => {}
        }
    }
    Ok((blocks, stop))
}

/// Every recorded stream of `api`, each as its events (one stream per file;
/// Anthropic files holding several streams give the first).
fn recorded(api: &Api) -> Vec<(String, Vec<String>)> {
    api.recordings(".chunks.txt")
        .into_iter()
        .map(|path| {
            let mut lines = common::chunk_lines(&path);
            if let Some(stop) = lines
                .iter()
                .position(|l| l.contains("\"type\":\"message_stop\""))
            {
                lines.truncate(stop + 1);
            }
            (common::file_name(&path), lines)
        })
        .collect()
}

/// The events and final message of a stream, or the first error.
fn run(
    api: &Api,
    lines: &[String],
) -> Result<(Vec<StreamEvent>, AssistantMessage, AssistantMessage), String> {
    let mut decoder = decoder(api);
    let mut events = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        events.extend(
            decoder
                .push_event(line)
                .map_err(|e| format!("event {i}: {e}"))?,
        );
    }
    let partial = decoder.partial_message();
    let message = decoder.finish_boxed().map_err(|e| e.to_string())?;
    Ok((events, partial, message))
}

#[test]
fn the_events_of_every_recorded_stream_rebuild_its_message() {
    common::require_conformance!();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for api in &APIS {
        for (name, lines) in recorded(api) {
            let Ok((events, partial, message)) = run(api, &lines) else {
                continue; // streams that fail are the decoders' own tests' business
            };
            checked += 1;
            // A Responses item's `output_item.done` is the item as it ended, which
            // the decoder ends the block with, even where it differs from the
            // deltas before it (one recording has that).
            let strict = api.name != "openai-responses";
            let (blocks, stop) = match assemble(&events, strict) {
                Ok(rebuilt) => rebuilt,
                Err(e) => {
                    wrong.push(format!("{}/{name}: {e}", api.name));
                    continue;
                }
            };
            if !matches!(events.first(), Some(StreamEvent::Start)) {
                wrong.push(format!(
                    "{}/{name}: the first event is {:?}",
                    api.name,
                    events.first()
                ));
            }
            if stop != Some(message.stop_reason) {
                wrong.push(format!(
                    "{}/{name}: Done says {stop:?}, the message {:?}",
                    api.name, message.stop_reason
                ));
            }
            // The Responses message is decoded from the terminal response,
            // which may split or skip items; its blocks are compared there.
            if api.name != "openai-responses" {
                if blocks != message.content {
                    wrong.push(format!(
                        "{}/{name}: events give\n{blocks:?}\nthe message has\n{:?}",
                        api.name, message.content
                    ));
                }
                if partial.content != message.content {
                    wrong.push(format!(
                        "{}/{name}: partial() at the end differs from the message",
                        api.name
                    ));
                }
            }
        }
    }
    assert!(checked >= 60, "only {checked} streams checked");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A recorded stream sent as SSE bytes in any chunking, framed by the SSE
    /// parser and decoded, gives the same events as its lines pushed one by
    /// one, and the same message.
    #[test]
    fn any_chunking_of_the_bytes_gives_the_same_events(
        api in 0..APIS.len(),
        file in any::<prop::sample::Index>(),
        cuts in prop::collection::vec(any::<usize>(), 0..30),
    ) {
        common::require_conformance!(Ok(()));
        let api = &APIS[api];
        let files = recorded(api);
        let (name, lines) = file.get(&files);
        let Ok((events, _, message)) = run(api, lines) else { return Ok(()) };
        let bytes: String = lines.iter().map(|l| format!("data: {l}\r\n\r\n")).collect();
        let bytes = bytes.as_bytes();
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut parser = SseParser::new();
        let mut decoder = decoder(api);
        let mut framed = Vec::new();
        let mut start = 0;
        let mut failed = None;
        for cut in cuts.into_iter().chain([bytes.len()]) {
            parser.push(&bytes[start..cut], |e| match decoder.push_event(e.data) {
                Ok(more) => framed.extend(more),
                Err(error) => failed = Some(error.to_string()),
            }).unwrap();
            start = cut;
        }
        parser.finish(|e| framed.extend(decoder.push_event(e.data).unwrap())).unwrap();
        prop_assert!(failed.is_none(), "{}: {:?}", name, failed);
        prop_assert_eq!(&framed, &events, "{}", name);
        let again = decoder.finish_boxed().unwrap();
        prop_assert_eq!(again.content, message.content);
        prop_assert_eq!(again.stop_reason, message.stop_reason);
    }
}

#[test]
fn a_tool_call_streams_its_arguments_parsed_so_far() {
    use agentmsg::providers::anthropic;
    let mut decoder = anthropic::StreamDecoder::new();
    let mut all = Vec::new();
    for event in [
        r#"{"type":"message_start","message":{"id":"m","model":"claude","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/ma"}}"#,
    ] {
        all.extend(decoder.push(event).unwrap());
    }
    assert_eq!(all[0], StreamEvent::Start);
    assert!(all.contains(&StreamEvent::TextDelta {
        index: 0,
        delta: "Let me look.".into()
    }));
    assert!(all.contains(&StreamEvent::ToolCallStart {
        index: 1,
        id: "toolu_1".into(),
        name: "read".into()
    }));
    // Partial values are computed when asked for: from the deltas, or by the
    // decoder's `partial()`.
    let mut arguments = agentmsg::providers::PartialJson::new();
    let Some(StreamEvent::ToolCallDelta { delta, .. }) = all.last() else {
        panic!("{all:?}")
    };
    arguments.push(delta);
    assert_eq!(arguments.value()["path"], "src/ma");
    let partial = decoder.partial();
    assert_eq!(partial.text_content(), "Let me look.");
    assert_eq!(
        partial.tool_calls().next().unwrap().arguments.to_value()["path"],
        "src/ma"
    );
    let more = decoder
        .push(r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"in.rs\", \"lines\": [1, 2"}}"#)
        .unwrap();
    let [StreamEvent::ToolCallDelta { delta, .. }] = more.as_slice() else {
        panic!("{more:?}")
    };
    assert_eq!(delta, "in.rs\", \"lines\": [1, 2");
    arguments.push(delta);
    let value = arguments.value();
    assert_eq!(value["path"], "src/main.rs");
    assert_eq!(value["lines"], serde_json::json!([1, 2]));
    assert_eq!(
        decoder
            .partial()
            .tool_calls()
            .next()
            .unwrap()
            .arguments
            .to_map(),
        value
    );
    for event in [
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"]}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
        r#"{"type":"message_stop"}"#,
    ] {
        all.extend(decoder.push(event).unwrap());
    }
    assert!(all.iter().any(|e| matches!(e, StreamEvent::ToolCallEnd { index: 1, call } if call.arguments.to_value()["lines"] == serde_json::json!([1, 2]))));
    assert!(all
        .iter()
        .any(|e| matches!(e, StreamEvent::Usage { usage } if usage.output == 9)));
    assert_eq!(
        all.last(),
        Some(&StreamEvent::Done {
            stop_reason: StopReason::ToolUse
        })
    );
    let json = serde_json::to_value(all.last()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"type": "done", "stopReason": "toolUse"})
    );
}

#[test]
fn an_error_event_is_reported_as_it_comes() {
    use agentmsg::providers::anthropic;
    let mut decoder = anthropic::StreamDecoder::new();
    decoder
        .push(r#"{"type":"message_start","message":{"id":"m","model":"c","content":[]}}"#)
        .unwrap();
    let events = decoder
        .push(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
        .unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::Error { message } if message.contains("Overloaded"))),
        "{events:?}"
    );
}
