//! Golden files pin the transcript format: each file under tests/golden decodes to
//! the typed value checked field by field, and re-encodes to the same bytes.

use std::fmt::Debug;
use std::path::PathBuf;

use agentmsg::message::MediaSource;
use agentmsg::{
    AssistantContent, AssistantMessage, Content, Cost, LlmMessage, Message, MessageId, Role,
    StopReason, SystemMessage, ToolResultContent, ToolResultMessage, TurnId, UserContent,
    UserMessage,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn read(name: &str) -> String {
    let path = golden_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Decodes the golden file as `T`, and checks that writing it back gives the same
/// JSON value and the same bytes (the files are pretty-printed in our order).
#[track_caller]
fn golden<T: Serialize + DeserializeOwned + PartialEq + Debug>(name: &str) -> T {
    let text = read(name);
    let value: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let written = serde_json::to_string_pretty(&value).unwrap() + "\n";
    assert_eq!(
        serde_json::from_str::<Value>(&written).unwrap(),
        serde_json::from_str::<Value>(&text).unwrap(),
        "{name}: a different JSON value"
    );
    assert_eq!(written, text, "{name}: same value, different bytes");
    let again: T = serde_json::from_str(&written).unwrap();
    assert_eq!(again, value, "{name}: decode(encode(x)) != x");
    value
}

use crate::common::PNG_1X1;

fn png_source() -> MediaSource {
    MediaSource::Base64 {
        data: PNG_1X1.into(),
        mime_type: "image/png".into(),
    }
}

/// A block file decodes in the roles that allow it and is refused by the others,
/// with an error that names the block.
#[track_caller]
fn block_in_roles(name: &str, kind: &str, user: bool, assistant: bool, tool_result: bool) {
    let text = read(name);
    let user_result = serde_json::from_str::<UserContent>(&text);
    let assistant_result = serde_json::from_str::<AssistantContent>(&text);
    let tool_result_result = serde_json::from_str::<ToolResultContent>(&text);
    for (role, allowed, err) in [
        ("user", user, user_result.err()),
        ("assistant", assistant, assistant_result.err()),
        ("toolResult", tool_result, tool_result_result.err()),
    ] {
        match (allowed, err) {
            (true, None) => {}
            (true, Some(e)) => panic!("{name} should decode in {role}: {e}"),
            (false, None) => panic!("{name} should not decode in {role}"),
            (false, Some(e)) => assert!(e.to_string().contains(kind), "{role}: {e}"),
        }
    }
}

#[test]
fn text_block() {
    let Content::Text(text) = golden::<Content>("blocks/text.json") else {
        panic!("not text")
    };
    assert_eq!(text.text, "fn main() {\n    println!(\"héllo\");\n}");
    block_in_roles("blocks/text.json", "text", true, true, true);
}

#[test]
fn image_block_with_data() {
    let Content::Image(image) = golden::<Content>("blocks/image-data.json") else {
        panic!("not an image")
    };
    assert_eq!(image.source, png_source());
    assert_eq!(image.to_bytes().unwrap().get(..4), Some(&b"\x89PNG"[..]));
    block_in_roles("blocks/image-data.json", "image", true, true, true);
}

#[test]
fn image_block_with_url() {
    let Content::Image(image) = golden::<Content>("blocks/image-url.json") else {
        panic!("not an image")
    };
    assert_eq!(
        image.source,
        MediaSource::Url("https://example.com/cat.jpg".into())
    );
    block_in_roles("blocks/image-url.json", "image", true, true, true);
}

#[test]
fn audio_block() {
    let Content::Audio(audio) = golden::<Content>("blocks/audio.json") else {
        panic!("not audio")
    };
    assert_eq!(audio.mime_type, "audio/mpeg");
    assert!(audio.data.starts_with("SUQzBA"));
    assert_eq!(audio.to_bytes().unwrap().get(..3), Some(&b"ID3"[..]));
    block_in_roles("blocks/audio.json", "audio", true, false, false);
}

#[test]
fn document_block_with_data_and_title() {
    let Content::Document(doc) = golden::<Content>("blocks/document-data-title.json") else {
        panic!("not a document")
    };
    assert_eq!(doc.mime_type(), Some("application/pdf"));
    assert_eq!(doc.to_base64(), Some("JVBERi0xLjcKJeLjz9MK"));
    assert_eq!(doc.title.as_deref(), Some("spec.pdf"));
    block_in_roles(
        "blocks/document-data-title.json",
        "document",
        true,
        false,
        false,
    );
}

#[test]
fn document_block_with_url() {
    let Content::Document(doc) = golden::<Content>("blocks/document-url.json") else {
        panic!("not a document")
    };
    assert_eq!(doc.url(), Some("https://example.com/spec.pdf"));
    assert_eq!(doc.title, None);
}

#[test]
fn thinking_block() {
    let Content::Thinking(thinking) = golden::<Content>("blocks/thinking.json") else {
        panic!("not thinking")
    };
    assert_eq!(thinking.thinking, "The user wants the file read first.");
    assert_eq!(thinking.signature(), Some("EqQBCkgIARABGAIiQL3Tz"));
    block_in_roles("blocks/thinking.json", "thinking", false, true, false);
}

#[test]
fn redacted_thinking_block() {
    let Content::RedactedThinking(redacted) = golden::<Content>("blocks/redacted-thinking.json")
    else {
        panic!("not redacted thinking")
    };
    assert_eq!(redacted.data, "EmwKAhgBEgy3va3pzix/LafPsn4a");
    block_in_roles(
        "blocks/redacted-thinking.json",
        "redactedThinking",
        false,
        true,
        false,
    );
}

#[test]
fn tool_call_block() {
    let Content::ToolCall(call) = golden::<Content>("blocks/tool-call.json") else {
        panic!("not a tool call")
    };
    assert_eq!(call.id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(call.name, "read");
    assert_eq!(
        call.arguments.to_value(),
        json!({"limit":200,"path":"src/main.rs","recursive":false,"tags":["a","b"]})
    );
    assert_eq!(call.signature.as_deref(), Some("CiQB0e2Kb7"));
    block_in_roles("blocks/tool-call.json", "toolCall", false, true, false);
}

#[test]
fn system_message() {
    let Message::System(system) = golden::<Message>("messages/system.json") else {
        panic!("not system")
    };
    assert_eq!(system.content.len(), 2);
    assert_eq!(system.text(), "You are terse.Answer in English.");
    assert_eq!(system.timestamp, 1765233665292);
    // The concrete type reads the same object (the role is not its field).
    assert_eq!(
        serde_json::from_str::<SystemMessage>(&read("messages/system.json")).unwrap(),
        system
    );
}

#[test]
fn user_message() {
    let message = golden::<Message>("messages/user.json");
    assert_eq!(message.role(), Role::User);
    let Message::User(user) = message else {
        panic!("not user")
    };
    assert_eq!(user.timestamp, 1765233665292);
    assert_eq!(user.text(), "What is in these?");
    let [UserContent::Text(_), UserContent::Image(data), UserContent::Image(url), UserContent::Audio(audio), UserContent::Document(doc)] =
        user.content.as_slice()
    else {
        panic!("blocks: {:?}", user.content)
    };
    assert_eq!(data.source, png_source());
    assert_eq!(url.url(), Some("https://example.com/cat.jpg"));
    assert_eq!(audio.mime_type, "audio/mpeg");
    assert_eq!(doc.title.as_deref(), Some("spec.pdf"));
    // The concrete type reads the same object (the role is not its field).
    assert_eq!(
        serde_json::from_str::<UserMessage>(&read("messages/user.json")).unwrap(),
        user
    );
}

#[test]
fn assistant_message() {
    let Message::Assistant(reply) = golden::<Message>("messages/assistant.json") else {
        panic!("not assistant")
    };
    assert_eq!(reply.api, "anthropic-messages");
    assert_eq!(reply.provider, "anthropic");
    assert_eq!(reply.model, "claude-opus-4-5");
    assert_eq!(
        reply.response_id.as_deref(),
        Some("msg_01XFDUDYJgAACzvnptvVoYEL")
    );
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
    assert_eq!(reply.error_message, None);
    assert_eq!(reply.timestamp, 1765233669389);
    assert_eq!(reply.text_content(), "Reading it.");
    assert_eq!(reply.thinking().count(), 1);
    assert_eq!(reply.redacted_thinking().count(), 1);
    let calls: Vec<_> = reply.tool_calls().map(|c| c.name.as_str()).collect();
    assert_eq!(calls, ["read"]);
    let usage = &reply.usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.reasoning,
            usage.cache_read,
            usage.cache_write
        ),
        (2775, 141, 40, 1024, 512)
    );
    assert_eq!(usage.total_tokens, Some(4452));
    assert_eq!(
        usage.cost,
        Some(Cost {
            input: 0.013875,
            output: 0.003525,
            cache_read: 0.000512,
            cache_write: 0.0032,
            total: 0.021112,
        })
    );
    // The concrete type reads the same object (the role is not its field).
    assert_eq!(
        serde_json::from_str::<AssistantMessage>(&read("messages/assistant.json")).unwrap(),
        reply
    );
}

#[test]
fn assistant_error_message() {
    let Message::Assistant(reply) = golden::<Message>("messages/assistant-error.json") else {
        panic!("not assistant")
    };
    assert!(reply.content.is_empty());
    assert_eq!(reply.stop_reason, StopReason::Error);
    assert!(reply.stop_reason.is_failure());
    assert!(reply.is_context_overflow());
    assert_eq!(reply.usage.cost, Some(Cost::default()));
    assert_eq!(reply.usage.total_tokens, Some(0));
}

#[test]
fn tool_result_message() {
    let Message::ToolResult(result) = golden::<Message>("messages/tool-result.json") else {
        panic!("not a tool result")
    };
    assert_eq!(result.tool_call_id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(result.tool_name, "screenshot");
    assert!(result.is_error);
    assert_eq!(result.timestamp, 1765233669400);
    assert_eq!(result.text(), "Saved to shot.png");
    assert!(
        matches!(result.content.get(1), Some(ToolResultContent::Image(i)) if i.source == png_source())
    );
    assert_eq!(result.details, Some(json!({"bytes":70,"path":"shot.png"})));
    // The concrete type reads the same object (the role is not its field).
    assert_eq!(
        serde_json::from_str::<ToolResultMessage>(&read("messages/tool-result.json")).unwrap(),
        result
    );
}

#[test]
fn llm_message_with_envelope() {
    let line = golden::<LlmMessage>("messages/llm-message-envelope.json");
    assert_eq!(
        line.id,
        Some(MessageId::from("0193a4b2-7c1e-7000-8000-000000000001"))
    );
    assert_eq!(line.turn_id, Some(TurnId::from("t1")));
    let Message::User(user) = &line.message else {
        panic!("not user")
    };
    assert_eq!(user.text(), "hi");
    // Read as a bare Message, the envelope is set aside, not kept in the body.
    let bare: Message = serde_json::from_str(&read("messages/llm-message-envelope.json")).unwrap();
    assert_eq!(bare, line.message);
    let written = serde_json::to_value(&bare).unwrap();
    assert_eq!(written.get("id"), None);
    assert_eq!(written.get("turnId"), None);
}

/// The example lines of DESIGN.md's "LLM messages" section, one JSON object per
/// line, written back byte for byte.
#[test]
fn design_example_lines() {
    let text = read("design.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    let mut roles = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let message: LlmMessage =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        assert_eq!(message.id, None);
        assert_eq!(message.turn_id, None);
        assert_eq!(
            serde_json::to_string(&message).unwrap(),
            *line,
            "line {}",
            i + 1
        );
        roles.push(message.message.role());
    }
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::ToolResult]
    );

    let messages: Vec<Message> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let Message::Assistant(reply) = &messages[2] else {
        panic!()
    };
    assert_eq!(reply.usage.total(), 2916);
    assert_eq!(reply.usage.cost.map(|c| c.total), Some(0.0174));
    let call = reply.tool_calls().next().unwrap();
    assert_eq!((call.id.as_str(), call.name.as_str()), ("toolu_01", "read"));
    assert_eq!(
        reply.thinking().next().and_then(|t| t.signature()),
        Some("EqQB…")
    );
    let Message::ToolResult(result) = &messages[3] else {
        panic!()
    };
    assert_eq!(result.details, Some(json!({"bytes":12})));
    assert!(!result.is_error);
}

/// Forms that are read but written in the canonical form.
#[test]
fn read_only_forms_are_normalised() {
    let cases = [
        (
            json!({"type":"thinking","thinking":"x","thinkingSignature":"sig"}),
            json!({"type":"thinking","thinking":"x","signature":"sig"}),
        ),
        (
            json!({"type":"toolCall","id":"c","name":"n","arguments":{},"thoughtSignature":"ts"}),
            json!({"type":"toolCall","id":"c","name":"n","arguments":{},"signature":"ts"}),
        ),
    ];
    for (input, canonical) in cases {
        let block: AssistantContent = serde_json::from_value(input).unwrap();
        assert_eq!(serde_json::to_value(&block).unwrap(), canonical);
    }
    for role in ["user", "system"] {
        let input = json!({"role": role, "content": "plain", "timestamp": 1});
        let message: Message = serde_json::from_value(input).unwrap();
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            json!({"role": role, "content":[{"type":"text","text":"plain"}], "timestamp": 1})
        );
    }
}
