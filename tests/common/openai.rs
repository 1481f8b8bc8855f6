//! Messages and random transcripts shared by the two OpenAI codec tests.

use agentmsg::{
    AssistantContent, AssistantMessage, AudioContent, DocumentContent, ImageContent, MediaSource,
    Message, RedactedThinkingContent, StopReason, TextContent, ThinkingContent, ToolCall,
    ToolResultMessage, UserContent, UserMessage,
};
use proptest::prelude::*;
use serde_json::{json, Value};

/// A 1x1 PNG, base64.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

pub fn png() -> ImageContent {
    ImageContent {
        source: MediaSource::Base64 {
            data: PNG.into(),
            mime_type: "image/png".into(),
        },
    }
}

pub fn user(blocks: Vec<UserContent>) -> Message {
    Message::User(UserMessage {
        content: blocks,
        timestamp: 1,
    })
}

pub fn assistant(
    blocks: Vec<AssistantContent>,
    api: &str,
    model: &str,
    stop: StopReason,
) -> Message {
    Message::Assistant(AssistantMessage {
        content: blocks,
        api: api.into(),
        provider: "openai".into(),
        model: model.into(),
        stop_reason: stop,
        timestamp: 2,
        ..AssistantMessage::default()
    })
}

pub fn call(id: &str, name: &str, args: Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall::new(id, name, args))
}

pub fn result(id: &str, name: &str, text: &str) -> Message {
    Message::tool_result(id, name, text)
}

// Random transcripts

pub fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("call_1".to_owned()),
        Just("call_2".to_owned()),
        Just("toolu_".to_owned() + &"y".repeat(70)),
        Just("functions.read:0|fc_9".to_owned()),
        Just(String::new()),
    ]
}

pub fn user_block() -> impl Strategy<Value = UserContent> {
    prop_oneof![
        "[a-z ✓]{0,12}".prop_map(|t| UserContent::Text(TextContent::new(t))),
        Just(UserContent::Image(png())),
        Just(UserContent::Image(ImageContent {
            source: MediaSource::Url("https://example.com/x.png".into())
        })),
        prop_oneof![Just("audio/wav"), Just("audio/mpeg"), Just("audio/ogg")].prop_map(|m| {
            UserContent::Audio(AudioContent {
                data: "AAAA".into(),
                mime_type: m.into(),
            })
        }),
        prop_oneof![
            Just("application/pdf"),
            Just("text/markdown"),
            Just("image/svg+xml")
        ]
        .prop_map(|m| {
            UserContent::Document(DocumentContent {
                source: MediaSource::Base64 {
                    data: "aGk=".into(),
                    mime_type: m.into(),
                },
                title: None,
            })
        }),
    ]
}

pub fn assistant_block() -> impl Strategy<Value = AssistantContent> {
    prop_oneof![
        "[a-z]{0,8}".prop_map(|t| AssistantContent::Text(TextContent::new(t))),
        (any::<bool>(), 0..3u8).prop_map(|(summary, sig)| {
            let text = if summary { "thought" } else { "" };
            let thinking = ThinkingContent::new(text);
            AssistantContent::Thinking(match sig {
                0 => thinking,
                1 => thinking.with_signature("EqQBsig"),
                _ => thinking.with_signature(reasoning_item("rs_p", text)),
            })
        }),
        any::<bool>().prop_map(|r| AssistantContent::RedactedThinking(
            RedactedThinkingContent::new(if r {
                reasoning_item("rs_q", "")
            } else {
                "opaque".to_owned()
            })
        )),
        (id(), "[a-z]{1,6}", any::<Option<bool>>(), any::<bool>()).prop_map(
            |(id, name, arg, fc)| {
                let call = ToolCall::new(id, name, arg.map_or(Value::Null, |a| json!({"a": a})));
                AssistantContent::ToolCall(if fc {
                    call.with_signature("fc_p")
                } else {
                    call
                })
            }
        ),
    ]
}

pub fn reasoning_item(id: &str, summary: &str) -> String {
    let summary: Vec<Value> = if summary.is_empty() {
        vec![]
    } else {
        vec![json!({"type": "summary_text", "text": summary})]
    };
    json!({"type": "reasoning", "id": id, "summary": summary, "encrypted_content": "gAAAAp"})
        .to_string()
}

/// A random message of any role, its assistant messages written by `api`/`model`,
/// another model of the same api, or an Anthropic model.
pub fn message(api: &'static str, model: &'static str) -> impl Strategy<Value = Message> {
    let origin = prop_oneof![
        Just((api, model)),
        Just(("anthropic-messages", "claude-opus-4-5")),
        Just((api, "another-model")),
    ];
    let stop = prop_oneof![
        Just(StopReason::Stop),
        Just(StopReason::ToolUse),
        Just(StopReason::Error),
        Just(StopReason::Aborted),
        Just(StopReason::Length),
    ];
    prop_oneof![
        "[a-z]{0,10}".prop_map(Message::system),
        proptest::collection::vec(user_block(), 0..4).prop_map(user),
        (
            proptest::collection::vec(assistant_block(), 0..5),
            origin,
            stop
        )
            .prop_map(|(blocks, (api, model), stop)| assistant(blocks, api, model, stop)),
        (id(), any::<bool>(), any::<bool>()).prop_map(|(id, image, is_error)| {
            let mut r =
                ToolResultMessage::new(id, "read", [TextContent::new("out")]).with_error(is_error);
            if image {
                r.content.push(png().into());
            }
            Message::ToolResult(r)
        }),
    ]
}
