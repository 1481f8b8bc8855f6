//! Random transcripts written as transcript lines (JSON), one generator for the
//! APIs that take a strict user/model alternation (Anthropic, Gemini), tuned
//! per API by a [`Flavor`].

use agentmsg::providers::{Request, ToolSpec};
use agentmsg::Message;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common;
use crate::scenarios::Api;

/// A one-pixel PNG.
pub(super) use crate::common::PNG_1X1 as PNG;
/// The start of a PDF.
pub(super) const PDF: &str =
    "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg==";

/// What differs between the APIs' random transcripts.
pub(super) struct Flavor {
    /// The tool-call ids to draw from (odd and repeated ones included).
    pub(super) ids: &'static [&'static str],
    /// The model of the request, and another one of the same provider.
    pub(super) models: [&'static str; 2],
    /// `api` and `provider` of the assistant messages.
    pub(super) api: &'static str,
    pub(super) provider: &'static str,
    /// The thinking signature.
    pub(super) signature: &'static str,
    /// An image type the API does not read.
    pub(super) odd_image: &'static str,
    /// A document URL.
    pub(super) document_url: &'static str,
    /// Whether tool calls are sometimes signed.
    pub(super) signed_calls: bool,
    /// Whether `length` is among the stop reasons.
    pub(super) length_stops: bool,
}

fn user_block(f: &'static Flavor) -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z ]{0,12}".prop_map(|t| json!({"type": "text", "text": t})),
        Just(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
        Just(json!({"type": "image", "data": "R0lGOD==", "mimeType": f.odd_image})),
        Just(json!({"type": "image", "url": "https://example.com/a.webp"})),
        Just(json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})),
        Just(json!({"type": "document", "data": PDF, "mimeType": "application/pdf", "title": "t"})),
        Just(json!({"type": "document", "url": f.document_url})),
    ]
}

fn tool_call(f: &'static Flavor) -> BoxedStrategy<Value> {
    let call = move |i: usize| json!({"type": "toolCall", "id": f.ids[i], "name": "read", "arguments": {"path": "a"}});
    if f.signed_calls {
        (0..f.ids.len(), any::<bool>())
            .prop_map(move |(i, signed)| {
                let mut call = call(i);
                if signed {
                    call["signature"] = json!(f.signature);
                }
                call
            })
            .boxed()
    } else {
        (0..f.ids.len()).prop_map(call).boxed()
    }
}

fn assistant_block(f: &'static Flavor) -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z ]{0,12}".prop_map(|t| json!({"type": "text", "text": t})),
        Just(json!({"type": "thinking", "thinking": "hmm", "signature": f.signature})),
        Just(json!({"type": "thinking", "thinking": "unsigned"})),
        Just(json!({"type": "thinking", "thinking": "", "signature": f.signature})),
        Just(json!({"type": "redactedThinking", "data": "b3BhcXVl"})),
        tool_call(f),
    ]
}

fn stop(f: &'static Flavor) -> BoxedStrategy<&'static str> {
    if f.length_stops {
        prop_oneof![
            Just("stop"),
            Just("toolUse"),
            Just("error"),
            Just("aborted"),
            Just("length")
        ]
        .boxed()
    } else {
        prop_oneof![
            Just("stop"),
            Just("toolUse"),
            Just("error"),
            Just("aborted")
        ]
        .boxed()
    }
}

/// One transcript line: a user message, an assistant message, a tool result or
/// a system message.
pub(super) fn message(f: &'static Flavor) -> impl Strategy<Value = Value> {
    let models = prop_oneof![Just(f.models[0]), Just(f.models[1])];
    prop_oneof![
        prop::collection::vec(user_block(f), 0..4)
            .prop_map(|c| json!({"role": "user", "content": c})),
        (
            prop::collection::vec(assistant_block(f), 0..5),
            models,
            stop(f)
        )
            .prop_map(move |(c, m, s)| json!({
                "role": "assistant", "content": c, "api": f.api, "provider": f.provider,
                "model": m, "stopReason": s})),
        (0..f.ids.len(), any::<bool>(), any::<bool>()).prop_map(move |(i, err, image)| {
            let mut content = vec![json!({"type": "text", "text": "out"})];
            if image {
                content.push(json!({"type": "image", "data": PNG, "mimeType": "image/png"}));
            }
            json!({"role": "toolResult", "toolCallId": f.ids[i], "toolName": "read",
                "content": content, "isError": err})
        }),
        Just(json!({"role": "system", "content": "note"})),
    ]
}

/// The random-transcript property: `lines` and a closing user turn, sent to
/// `model` of `api` with `tools`, encode to a body that passes `schema` and the
/// API's own `rules`.
pub(super) fn check_random(
    api: &Api,
    model: &str,
    lines: &[Value],
    tools: Vec<ToolSpec>,
    schema: &str,
    rules: impl Fn(&Value) -> Vec<String>,
) -> Result<(), TestCaseError> {
    let mut messages: Vec<Message> = lines
        .iter()
        .map(|l| serde_json::from_value(l.clone()).expect("generated lines decode"))
        .collect();
    messages.push(Message::user("go on"));
    let request = Request::new(model, messages).with_tools(tools);
    let encoded = (api.encode)(&request).expect("a transcript ending with a user turn encodes");
    let mut errors = common::schema_errors(schema, &encoded.body);
    errors.extend(rules(&encoded.body));
    prop_assert!(errors.is_empty(), "{errors:?}\n{}", encoded.body);
    Ok(())
}

/// An assistant transcript line of the flavor's API with this content, stop
/// reason and model.
pub(super) fn assistant_line(f: &Flavor, content: Value, stop: &str, model: &str) -> String {
    json!({"role": "assistant", "content": content, "api": f.api, "provider": f.provider,
        "model": model, "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": stop, "timestamp": 2})
    .to_string()
}
