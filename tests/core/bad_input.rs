//! Bad input is an error that says what and where, never a panic.

use agentmsg::message::{context_overflow_source, MediaFormat};
use agentmsg::{AudioContent, DocumentContent, ImageContent, LlmMessage, Message};
use proptest::prelude::*;

const LINES: &[&str] = &[
    r#"{"role":"system","content":[{"type":"text","text":"You are terse."}],"timestamp":1765233665292}"#,
    r#"{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image","url":"https://example.com/a.png"}],"timestamp":1,"id":"m1","turnId":"t1"}"#,
    r#"{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"toolCall","id":"c","name":"n","arguments":{"a":[1,2.5,null]}}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"output":0.2,"cacheRead":0,"cacheWrite":0,"total":0.3}},"stopReason":"toolUse","timestamp":2}"#,
    r#"{"role":"toolResult","toolCallId":"c","toolName":"n","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":3,"details":{"k":"v"}}"#,
];

#[test]
fn every_truncated_line_is_an_error_with_a_position() {
    for line in LINES {
        assert!(serde_json::from_str::<LlmMessage>(line).is_ok(), "{line}");
        for end in 0..line.len() {
            let cut = &line[..end];
            let err = serde_json::from_str::<LlmMessage>(cut)
                .expect_err(&format!("a line cut at byte {end} decoded: {cut}"));
            assert!(err.line() == 1, "{err}");
        }
    }
}

#[test]
fn wrong_fields_are_named() {
    let cases = [
        (r#"{"content":[]}"#, "missing field `role`"),
        (
            r#"{"role":"robot","content":[]}"#,
            "unknown variant `robot`",
        ),
        (r#"{"role":"user"}"#, "missing field `content`"),
        (
            r#"{"role":"user","content":[],"role":"user"}"#,
            "duplicate field `role`",
        ),
        (
            r#"{"role":"user","content":42}"#,
            "a string or an array of content blocks",
        ),
        (
            r#"{"role":"user","content":[],"timestamp":"yesterday"}"#,
            "invalid type: string",
        ),
        (
            r#"{"role":"assistant","content":[],"stopReason":"done"}"#,
            "unknown variant `done`",
        ),
        (
            r#"{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[1]}]}"#,
            "invalid type: an array, expected a JSON object",
        ),
        (
            r#"{"role":"toolResult","content":[]}"#,
            "missing field `toolCallId`",
        ),
        (
            r#"{"role":"user","content":[],"id":7}"#,
            "invalid type: integer `7`",
        ),
        (
            r#"{"role":"user","content":[],"v":2}"#,
            "unexpected `v` (2) on a user message",
        ),
        (r#"[]"#, "invalid type: sequence"),
    ];
    for (line, expected) in cases {
        let err = serde_json::from_str::<LlmMessage>(line).unwrap_err();
        assert!(err.to_string().contains(expected), "{line}: {err}");
        assert!(serde_json::from_str::<Message>(line).is_err(), "{line}");
    }
}

#[test]
fn the_role_may_come_last() {
    let line = r#"{"content":"hi","timestamp":5,"id":"m","turnId":"t","role":"user"}"#;
    let message: LlmMessage = serde_json::from_str(line).unwrap();
    assert_eq!(message.id.as_ref().map(|i| i.as_str()), Some("m"));
    assert_eq!(message.turn_id.as_ref().map(|t| t.as_str()), Some("t"));
    assert_eq!(message.message.timestamp(), 5);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = serde_json::from_slice::<LlmMessage>(&bytes);
        let _ = serde_json::from_slice::<Message>(&bytes);
        let _ = MediaFormat::sniff(&bytes);
        let _ = ImageContent::from_bytes(&bytes);
        let _ = AudioContent::from_bytes(&bytes);
        let _ = DocumentContent::from_bytes(&bytes);
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,200}") {
        let _ = ImageContent::from_base64(text.clone());
        let _ = AudioContent::from_base64(text.clone());
        let _ = DocumentContent::from_base64(text.clone());
        let _ = context_overflow_source(&text);
    }

    #[test]
    fn mutated_lines_never_panic(
        index in 0..LINES.len(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut bytes = LINES[index].as_bytes().to_vec();
        let at = at.index(bytes.len());
        bytes[at] = byte;
        let _ = serde_json::from_slice::<LlmMessage>(&bytes);
    }
}
