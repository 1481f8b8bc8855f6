//! `PromptEditor`: prompt surgery for hooks, over prepared messages paired
//! with the ids of their transcript lines.

use agentmsg::project::{
    validate, EditError, LastAssistant, LastUser, PromptEditor, PromptMessage,
};
use agentmsg::{
    prepare, LlmMessage, Message, MessageId, Role, Target, TextContent, ThinkingContent,
};

fn id(s: &str) -> MessageId {
    MessageId::from(s)
}

/// A stored transcript with ids on every line: a turn with two calls, one
/// answered with an image, the other never answered.
fn stored() -> Vec<LlmMessage> {
    let lines = r#"
{"role":"system","content":"You are terse.","id":"s0"}
{"role":"user","content":"look at the screen","id":"u1","timestamp":1}
{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"screenshot","arguments":{}},{"type":"toolCall","id":"call_2","name":"bash","arguments":{"command":"ls"}}],"api":"openai-completions","provider":"openai","model":"gpt-4o","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":2,"id":"a2"}
{"role":"toolResult","toolCallId":"call_1","toolName":"screenshot","content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"isError":false,"timestamp":3,"id":"r3"}
{"role":"assistant","content":[{"type":"text","text":"A terminal."}],"api":"openai-completions","provider":"openai","model":"gpt-4o","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":4,"id":"a4"}
"#;
    lines
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("line decodes"))
        .collect()
}

fn editor() -> PromptEditor {
    let stored = stored();
    let messages: Vec<&Message> = stored.iter().map(|l| &l.message).collect();
    let ids: Vec<Option<MessageId>> = stored.iter().map(|l| l.id.clone()).collect();
    let prepared = prepare(
        &messages,
        &Target::new("openai", "openai-completions", "gpt-4o"),
    );
    // system, user, assistant, result, synthetic result, moved images, assistant
    assert_eq!(prepared.messages.len(), 7);
    PromptEditor::from_prepared(prepared, &ids)
}

fn roles(editor: &PromptEditor) -> Vec<Role> {
    editor.messages().map(Message::role).collect()
}

fn texts(editor: &PromptEditor) -> Vec<String> {
    editor
        .messages()
        .map(|m| match m {
            Message::User(u) => u.text(),
            Message::Assistant(a) => a.text_content(),
            Message::ToolResult(r) => r.text(),
            Message::System(s) => s.text(),
        })
        .collect()
}

#[test]
fn ids_follow_the_prepared_messages_and_derived_ones_have_none() {
    let editor = editor();
    let ids: Vec<Option<&str>> = editor.ids().map(|i| i.map(MessageId::as_str)).collect();
    assert_eq!(
        ids,
        [
            Some("s0"),
            Some("u1"),
            Some("a2"),
            Some("r3"),
            None,
            None,
            Some("a4")
        ]
    );
}

#[test]
fn insert_after_a_turn_lands_after_its_results_and_moved_images() {
    let mut editor = editor();
    editor
        .insert_after(&id("a2"), PromptMessage::user(["Describe it in one line."]))
        .expect("a2 exists");
    assert_eq!(editor.len(), 8);
    assert_eq!(
        roles(&editor),
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::ToolResult,
            Role::ToolResult,
            Role::User,
            Role::User,
            Role::Assistant
        ]
    );
    assert_eq!(texts(&editor)[6], "Describe it in one line.");
    // The same for an anchor on one of the turn's results.
    let mut editor = self::editor();
    editor
        .insert_after(&id("r3"), PromptMessage::user(["x"]))
        .expect("r3 exists");
    assert_eq!(texts(&editor)[6], "x");
    assert!(validate(&editor.into_messages()).is_empty());
}

#[test]
fn insert_before_a_result_lands_before_its_turn() {
    let mut editor = editor();
    editor
        .insert_before(&id("r3"), PromptMessage::user(["Use the tools."]))
        .expect("r3 exists");
    assert_eq!(texts(&editor)[2], "Use the tools.");
    assert_eq!(roles(&editor)[3], Role::Assistant);
    editor
        .insert_before(&id("u1"), PromptMessage::assistant(["Ready."]))
        .expect("u1 exists");
    assert_eq!(texts(&editor)[1], "Ready.");
    assert!(validate(&editor.into_messages()).is_empty());
}

#[test]
fn an_unknown_id_is_an_error_and_changes_nothing() {
    let mut editor = editor();
    let before = editor.clone();
    let err = editor
        .insert_after(&id("nope"), PromptMessage::user(["x"]))
        .expect_err("unknown id");
    assert_eq!(err, EditError::UnknownId { id: id("nope") });
    assert_eq!(err.to_string(), "no message has id `nope`");
    assert!(editor
        .insert_before(&id("nope"), PromptMessage::user(["x"]))
        .is_err());
    assert_eq!(editor, before);
}

#[test]
fn append_to_extends_the_last_message_of_the_role() {
    let mut editor = editor();
    editor
        .append_to(LastUser, [TextContent::new(" [build mode]")])
        .expect("there is a user message");
    // The last user message is the one carrying the moved images.
    let last_user = editor
        .messages()
        .filter_map(Message::as_user)
        .last()
        .expect("user");
    assert!(last_user.text().ends_with(" [build mode]"));
    editor
        .append_to(LastAssistant, [ThinkingContent::new("noted")])
        .expect("there is an assistant message");
    let last = editor
        .messages()
        .last()
        .and_then(Message::as_assistant)
        .expect("assistant");
    assert_eq!(last.thinking().count(), 1);

    let mut empty = PromptEditor::new(vec![Message::user("hi")]);
    let err = empty
        .append_to(LastAssistant, ["x"])
        .expect_err("no assistant");
    assert_eq!(
        err,
        EditError::NoMessage {
            role: Role::Assistant
        }
    );
    assert_eq!(
        err.to_string(),
        "there is no assistant message to append to"
    );
}

#[test]
fn added_messages_carry_no_invented_ids_or_timestamps() {
    let mut editor = PromptEditor::new(vec![Message::system("sys"), Message::user("hi")]);
    editor.prepend(PromptMessage::user(["first"]));
    editor.append(PromptMessage::assistant(["last"]));
    assert_eq!(texts(&editor), ["sys", "first", "hi", "last"]);
    let messages = editor.into_messages();
    let first = serde_json::to_value(&messages[1]).expect("json");
    assert_eq!(
        first,
        serde_json::json!({"role": "user", "content": [{"type": "text", "text": "first"}]})
    );
    let last = serde_json::to_value(&messages[3]).expect("json");
    assert!(last.get("timestamp").is_none(), "{last}");
    assert!(last.get("model").is_none(), "{last}");
}

#[test]
fn a_stray_result_is_its_own_anchor() {
    let mut editor = PromptEditor::with_ids([
        (Some(id("u")), Message::user("hi")),
        (
            Some(id("r")),
            Message::tool_result("call_9", "read", "stale"),
        ),
        (Some(id("a")), Message::assistant("hello")),
    ]);
    editor
        .insert_before(&id("r"), PromptMessage::user(["before"]))
        .expect("r exists");
    editor
        .insert_after(&id("r"), PromptMessage::user(["after"]))
        .expect("r exists");
    assert_eq!(texts(&editor), ["hi", "before", "stale", "after", "hello"]);
}
