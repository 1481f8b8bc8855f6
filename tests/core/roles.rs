//! Role rules at run time: converting a block out of `Content` into a role, and
//! decoding a block in a role that does not allow it, are errors that name the
//! block and the role.

use agentmsg::message::{BlockKind, RawJson, RoleError};
use agentmsg::{
    AssistantContent, AudioContent, Content, DocumentContent, ImageContent, Message, ProviderBlock,
    RedactedThinkingContent, Role, TextContent, ThinkingContent, ToolCall, ToolResultContent,
    UserContent,
};
use serde_json::json;

fn every_block() -> Vec<Content> {
    vec![
        TextContent::new("t").into(),
        ImageContent::from_url("https://example.com/a.png").into(),
        AudioContent {
            data: "SUQz".into(),
            mime_type: "audio/mpeg".into(),
        }
        .into(),
        DocumentContent::from_url("https://example.com/a.pdf").into(),
        ThinkingContent::new("hmm").into(),
        RedactedThinkingContent::new("opaque").into(),
        ToolCall::new("c1", "read", json!({"path": "a.rs"})).into(),
        ProviderBlock::new(
            "anthropic-messages",
            RawJson::from_json(
                r#"{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}"#,
            )
            .unwrap(),
        )
        .into(),
    ]
}

/// Which blocks each role allows, as DESIGN.md's table says.
fn allowed(role: Role, kind: BlockKind) -> bool {
    use BlockKind::*;
    match role {
        Role::System => kind == Text,
        Role::User => matches!(kind, Text | Image | Audio | Document),
        Role::Assistant => matches!(
            kind,
            Text | Image | Thinking | RedactedThinking | ToolCall | ProviderBlock
        ),
        Role::ToolResult => matches!(kind, Text | Image),
    }
}

#[track_caller]
fn check<T: TryFrom<Content, Error = RoleError> + Into<Content>>(role: Role) {
    for block in every_block() {
        let kind = block.kind();
        match T::try_from(block.clone()) {
            Ok(converted) => {
                assert!(allowed(role, kind), "{kind} accepted in {role}");
                assert_eq!(converted.into(), block, "the block is kept as it was");
            }
            Err(err) => {
                assert!(!allowed(role, kind), "{kind} refused in {role}");
                assert_eq!(err, RoleError { block: kind, role });
                let shown = err.to_string();
                assert!(shown.contains(&format!("`{kind}`")), "{shown}");
                assert!(shown.contains(role.as_str()), "{shown}");
            }
        }
    }
}

#[test]
fn try_from_content_follows_the_table() {
    check::<UserContent>(Role::User);
    check::<AssistantContent>(Role::Assistant);
    check::<ToolResultContent>(Role::ToolResult);
}

#[test]
fn try_from_errors_read_well() {
    let err = UserContent::try_from(Content::from(ThinkingContent::new("x"))).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`thinking` blocks cannot appear in user messages"
    );
    let err = AssistantContent::try_from(Content::from(AudioContent {
        data: String::new(),
        mime_type: "audio/wav".into(),
    }))
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`audio` blocks cannot appear in assistant messages"
    );
    let err = ToolResultContent::try_from(Content::from(AudioContent {
        data: String::new(),
        mime_type: "audio/wav".into(),
    }))
    .unwrap_err();
    assert_eq!(err.block, BlockKind::Audio);
    assert_eq!(err.role, Role::ToolResult);
}

#[test]
fn decoding_a_block_in_the_wrong_role_names_both() {
    let cases = [
        (
            json!({"role":"user","content":[{"type":"thinking","thinking":"x"}]}),
            "`thinking` blocks cannot appear in user messages",
        ),
        (
            json!({"role":"user","content":[{"type":"toolCall","id":"c","name":"n","arguments":{}}]}),
            "`toolCall` blocks cannot appear in user messages",
        ),
        (
            json!({"role":"assistant","content":[{"type":"document","url":"https://example.com/a.pdf"}]}),
            "`document` blocks cannot appear in assistant messages",
        ),
        (
            json!({"role":"user","content":[{"type":"providerBlock","api":"anthropic-messages","block":{"type":"compaction"}}]}),
            "`providerBlock` blocks cannot appear in user messages",
        ),
        (
            json!({"role":"toolResult","toolCallId":"c","toolName":"n","content":[{"type":"audio","data":"","mimeType":"audio/wav"}]}),
            "`audio` blocks cannot appear in toolResult messages",
        ),
        (
            json!({"role":"system","content":[{"type":"image","url":"https://example.com/a.png"}]}),
            "`image` blocks cannot appear in system messages",
        ),
    ];
    for (value, expected) in cases {
        let text = value.to_string();
        let err = serde_json::from_str::<Message>(&text).unwrap_err();
        assert!(err.to_string().starts_with(expected), "{err}");
        assert!(
            err.line() == 1 && err.column() > 0,
            "the error has a position: {err}"
        );
        let err = serde_json::from_value::<Message>(value).unwrap_err();
        assert!(err.to_string().starts_with(expected), "{err}");
    }
}

#[test]
fn unknown_and_malformed_blocks_are_serde_errors() {
    let err = serde_json::from_str::<UserContent>(r#"{"type":"video","url":"x"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown variant `video`"), "{err}");
    let err =
        serde_json::from_str::<AssistantContent>(r#"{"type":"toolCall","id":"c"}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `name`"), "{err}");
    let err = serde_json::from_str::<UserContent>(r#"{"text":"no type"}"#).unwrap_err();
    assert!(err.to_string().contains("missing field `type`"), "{err}");
    let err = serde_json::from_str::<UserContent>(r#"{"type":"image","data":"AAAA"}"#).unwrap_err();
    assert!(
        err.to_string()
            .contains("image block has `data` but no `mimeType`"),
        "{err}"
    );
}

#[test]
fn role_enums_convert_from_their_blocks() {
    assert_eq!(
        UserContent::from(TextContent::new("a")).kind(),
        BlockKind::Text
    );
    assert_eq!(
        AssistantContent::from(ToolCall::new("c", "n", json!(null))).kind(),
        BlockKind::ToolCall
    );
    assert_eq!(
        ToolResultContent::from(ImageContent::from_url("u")).kind(),
        BlockKind::Image
    );
    for block in every_block() {
        let kind = block.kind();
        let value = serde_json::to_value(&block).unwrap();
        assert_eq!(value["type"], kind.as_str());
    }
}
