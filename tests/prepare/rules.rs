//! One transcript per rule of `prepare`, each modelled on a reported bug.

use crate::common;

use agentmsg::project::{validate, ChangeKind, IdRule, ProblemKind, Provenance, ThinkingPolicy};
use agentmsg::{prepare, AssistantContent, Message, Target, ToolResultContent, UserContent};

use common::{change_kinds, lines};

fn json(messages: &[Message]) -> String {
    serde_json::to_string(messages).expect("serialize")
}

fn claude() -> Target {
    Target::new("anthropic", "anthropic-messages", "claude-sonnet-4-5")
}

fn roles(messages: &[Message]) -> Vec<&'static str> {
    messages.iter().map(|m| m.role().as_str()).collect()
}

/// The ids of every call and result, in order.
fn tool_ids(messages: &[Message]) -> Vec<String> {
    let mut ids = Vec::new();
    for m in messages {
        match m {
            Message::Assistant(a) => ids.extend(a.tool_calls().map(|c| c.id.clone())),
            Message::ToolResult(r) => ids.push(r.tool_call_id.clone()),
            _ => {}
        }
    }
    ids
}

fn assert_stable(input: &[Message], target: &Target) {
    let first = prepare(input, target);
    let second = prepare(input, target);
    assert_eq!(
        json(&first.messages),
        json(&second.messages),
        "not deterministic"
    );
    let again = prepare(&first.messages, target);
    assert_eq!(
        json(&again.messages),
        json(&first.messages),
        "not idempotent"
    );
    assert!(
        again.report.is_empty(),
        "second pass changed:\n{}",
        again.report
    );
}

/// pi#3555: the session was killed while tools ran, so the transcript ends
/// with an assistant turn whose calls have no results ("Messages must contain
/// at least one tool result following tool use").
#[test]
fn trailing_calls_without_results_get_synthetic_error_results() {
    let input = lines(
        r#"
        {"role":"user","content":[{"type":"text","text":"run the tests and show me the log"}],"timestamp":1765233665292}
        {"role":"assistant","content":[{"type":"text","text":"Running both."},{"type":"toolCall","id":"toolu_01A","name":"bash","arguments":{"command":"cargo test"}},{"type":"toolCall","id":"toolu_01B","name":"read","arguments":{"path":"test.log"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},"stopReason":"toolUse","timestamp":1765233669389}
        {"role":"toolResult","toolCallId":"toolu_01B","toolName":"read","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1765233669400}
        "#,
    );
    let prepared = prepare(&input, &claude());
    assert_eq!(
        roles(&prepared.messages),
        ["user", "assistant", "toolResult", "toolResult"]
    );
    // The existing result stays right after the turn; the synthetic one follows it.
    let existing = prepared.messages[2].as_tool_result().expect("result");
    assert_eq!(existing.tool_call_id, "toolu_01B");
    let synthetic = prepared.messages[3]
        .as_tool_result()
        .expect("synthetic result");
    assert_eq!(synthetic.tool_call_id, "toolu_01A");
    assert_eq!(synthetic.tool_name, "bash");
    assert!(synthetic.is_error);
    assert_eq!(synthetic.text(), "No result provided");
    assert_eq!(
        synthetic.timestamp, 1765233669389,
        "stamped with the turn's time, not the clock"
    );
    assert_eq!(prepared.provenance[3], Provenance::SyntheticResult(1));
    let changes = change_kinds(&prepared.report);
    assert_eq!(changes, [(1, ChangeKind::SyntheticResult)]);
    assert_eq!(validate(&input)[0].kind, ProblemKind::MissingResult);
    assert_stable(&input, &claude());
}

/// pi#4189 / pi#3555: the user pressed Esc while the model streamed a tool
/// call; the transcript ends with the aborted turn. The turn is not replayed,
/// and no synthetic result is made for a call that is not sent.
#[test]
fn trailing_aborted_turn_is_skipped_without_synthetic_results() {
    let input = lines(
        r#"
        {"role":"user","content":[{"type":"text","text":"write 1000 lines of lorem ipsum to hello.txt"}],"timestamp":1}
        {"role":"assistant","content":[{"type":"toolCall","id":"toolu_01W","name":"write","arguments":{"path":"hello.txt"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":2}
        {"role":"toolResult","toolCallId":"toolu_01W","toolName":"write","content":[{"type":"text","text":"wrote 1000 lines"}],"isError":false,"timestamp":3}
        {"role":"user","content":[{"type":"text","text":"now append 1000 more, direct file write only"}],"timestamp":4}
        {"role":"assistant","content":[{"type":"thinking","thinking":"I will","thinkingSignature":""},{"type":"toolCall","id":"toolu_01X","name":"write","arguments":{"path":"hel"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"aborted","errorMessage":"Request was aborted","timestamp":5}
        "#,
    );
    let prepared = prepare(&input, &claude());
    assert_eq!(
        roles(&prepared.messages),
        ["user", "assistant", "toolResult", "user"]
    );
    assert!(!tool_ids(&prepared.messages).contains(&"toolu_01X".to_owned()));
    let changes = change_kinds(&prepared.report);
    assert_eq!(changes, [(4, ChangeKind::SkippedFailedTurn)]);
    assert_stable(&input, &claude());
}

/// pi#960 / pi#1140: a turn errored mid-stream after a tool call; the app had
/// written a result for it. pi skipped the assistant but kept the result, and
/// Anthropic answered "unexpected tool_use_id found in tool_result blocks"
/// for every later request.
#[test]
fn results_of_an_errored_turn_go_with_it() {
    let input = lines(
        r#"
        {"role":"user","content":"check the deploy","timestamp":1}
        {"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"toolCall","id":"toolu_01E","name":"bash","arguments":{"command":"kubectl get pods"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"error","errorMessage":"terminated","timestamp":2}
        {"role":"toolResult","toolCallId":"toolu_01E","toolName":"bash","content":[{"type":"text","text":"Tool execution was interrupted"}],"isError":true,"timestamp":3}
        {"role":"user","content":"try again","timestamp":4}
        {"role":"assistant","content":[{"type":"toolCall","id":"toolu_01F","name":"bash","arguments":{"command":"kubectl get pods"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":5}
        {"role":"toolResult","toolCallId":"toolu_01F","toolName":"bash","content":[{"type":"text","text":"3 pods running"}],"isError":false,"timestamp":6}
        "#,
    );
    let prepared = prepare(&input, &claude());
    assert_eq!(
        roles(&prepared.messages),
        ["user", "user", "assistant", "toolResult"]
    );
    assert_eq!(tool_ids(&prepared.messages), ["toolu_01F", "toolu_01F"]);
    let changes = change_kinds(&prepared.report);
    assert_eq!(
        changes,
        [
            (1, ChangeKind::SkippedFailedTurn),
            (2, ChangeKind::DroppedResult)
        ]
    );
    let problems: Vec<_> = validate(&input).iter().map(|p| (p.index, p.kind)).collect();
    assert_eq!(
        problems,
        [
            (1, ProblemKind::FailedTurn),
            (2, ProblemKind::ResultOfFailedTurn)
        ]
    );
    assert_stable(&input, &claude());
}

/// pydantic-ai#5869: thinking from another model (or unsigned) was replayed to
/// Claude as literal `<thinking>` text; the model imitated it and leaked its
/// reasoning into answers. By default foreign thinking is dropped; `AsText`
/// keeps it as plain text, without tags.
#[test]
fn foreign_thinking_is_dropped_by_default_and_plain_as_text() {
    let input = lines(
        r#"
        {"role":"user","content":"show my last hands","timestamp":1}
        {"role":"assistant","content":[{"type":"thinking","thinking":"SECRET internal reasoning","thinkingSignature":"{\"type\":\"reasoning\",\"id\":\"rs_68a1\",\"encrypted_content\":\"gAAAAB…\"}"},{"type":"text","text":"Here are your 5 most recent hands!"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":2}
        {"role":"user","content":"and what is my equity?","timestamp":3}
        "#,
    );
    let dropped = prepare(&input, &claude());
    let body = json(&dropped.messages);
    assert!(!body.contains("SECRET"), "{body}");
    assert!(!body.contains("encrypted_content"), "{body}");
    let reply = dropped.messages[1].as_assistant().expect("assistant");
    assert_eq!(reply.content.len(), 1);
    assert_eq!(reply.text_content(), "Here are your 5 most recent hands!");
    assert_eq!(dropped.report.count(ChangeKind::DroppedThinking), 1);
    assert!(dropped.report.changes[0]
        .detail
        .contains("openai/openai-responses/gpt-5"));

    let as_text = prepare(&input, &claude().thinking(ThinkingPolicy::AsText));
    let reply = as_text.messages[1].as_assistant().expect("assistant");
    assert!(
        matches!(&reply.content[0], AssistantContent::Text(t) if t.text == "SECRET internal reasoning")
    );
    let body = json(&as_text.messages);
    assert!(
        !body.contains("<thinking>") && !body.contains("encrypted_content"),
        "{body}"
    );
    assert_eq!(as_text.report.count(ChangeKind::ThinkingAsText), 1);

    // The very model that wrote it gets it back, signature and all.
    let same = prepare(&input, &Target::new("openai", "openai-responses", "gpt-5"));
    assert_eq!(json(&same.messages), json(&input));
    assert!(same.report.is_empty());
    assert_stable(&input, &claude());
    assert_stable(&input, &claude().thinking(ThinkingPolicy::AsText));
}

/// pydantic-ai#7597: a stream interrupted mid-thinking left `signature: ""`;
/// replayed to the same Claude it was "Invalid `signature` in `thinking`
/// block", and the conversation was stuck for good. An empty signature counts
/// as none: Claude takes only signed thinking, so the block goes.
#[test]
fn empty_signature_counts_as_none() {
    let input = lines(
        r#"
        {"role":"user","content":"hi","timestamp":1}
        {"role":"assistant","content":[{"type":"thinking","thinking":"The user greets","thinkingSignature":"EqQBCkgIARABGAIiQF"},{"type":"text","text":"Hello!"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":2}
        {"role":"user","content":"tell me a long story","timestamp":3}
        {"role":"assistant","content":[{"type":"thinking","thinking":"A story about","thinkingSignature":""},{"type":"text","text":"Once upon"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"length","timestamp":4}
        {"role":"user","content":"go on","timestamp":5}
        "#,
    );
    let prepared = prepare(&input, &claude());
    let first = prepared.messages[1].as_assistant().expect("assistant");
    assert_eq!(
        first.thinking().next().and_then(|t| t.signature()),
        Some("EqQBCkgIARABGAIiQF")
    );
    let second = prepared.messages[3].as_assistant().expect("assistant");
    assert_eq!(
        second.thinking().count(),
        0,
        "unsigned thinking is not sent to Claude"
    );
    assert_eq!(second.text_content(), "Once upon");
    assert!(!json(&prepared.messages).contains(r#""signature":"""#));
    let changes = change_kinds(&prepared.report);
    assert_eq!(changes, [(3, ChangeKind::DroppedThinking)]);
    assert!(prepared.report.changes[0].detail.contains("no signature"));
    assert_eq!(validate(&input)[0].kind, ProblemKind::EmptySignature);

    // A target that takes unsigned thinking keeps the block, without the "".
    let lenient = claude().unsigned_thinking(true);
    let prepared = prepare(&input, &lenient);
    let second = prepared.messages[3].as_assistant().expect("assistant");
    let thinking = second.thinking().next().expect("thinking kept");
    assert_eq!(thinking.signature, None);
    assert_stable(&input, &claude());
    assert_stable(&input, &lenient);
}

/// A tool call's signature (Gemini's `thoughtSignature`) is only for the model
/// that made it; an empty one counts as none.
#[test]
fn tool_call_signatures_go_back_only_to_their_model() {
    let input = lines(
        r#"
        {"role":"user","content":"weather in Paris?","timestamp":1}
        {"role":"assistant","content":[{"type":"toolCall","id":"get_weather_0","name":"get_weather","arguments":{"city":"Paris"},"thoughtSignature":"CiQBcsjafE"},{"type":"toolCall","id":"get_weather_1","name":"get_weather","arguments":{"city":"Lyon"},"thoughtSignature":""}],"api":"google-generative-ai","provider":"google","model":"gemini-3-pro-preview","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":2}
        {"role":"toolResult","toolCallId":"get_weather_0","toolName":"get_weather","content":"18°C","isError":false,"timestamp":3}
        {"role":"toolResult","toolCallId":"get_weather_1","toolName":"get_weather","content":"20°C","isError":false,"timestamp":4}
        "#,
    );
    let gemini = Target::new("google", "google-generative-ai", "gemini-3-pro-preview");
    let same = prepare(&input, &gemini);
    let calls: Vec<_> = same.messages[1]
        .as_assistant()
        .expect("assistant")
        .tool_calls()
        .map(|c| c.signature.clone())
        .collect();
    assert_eq!(calls, [Some("CiQBcsjafE".to_owned()), None]);
    assert_eq!(same.report.count(ChangeKind::DroppedThinking), 1);

    let other = prepare(&input, &claude());
    assert!(other.messages[1]
        .as_assistant()
        .expect("assistant")
        .tool_calls()
        .all(|c| c.signature.is_none()));
    assert_eq!(other.report.count(ChangeKind::DroppedThinking), 2);
    assert_stable(&input, &gemini);
    assert_stable(&input, &claude());
}

/// A text block's signature (pi's `textSignature`: Gemini's `thoughtSignature`
/// on a text part, or an OpenAI Responses message id) is only for the model that
/// wrote it; an empty one counts as none. The text itself always goes.
#[test]
fn text_signatures_go_back_only_to_their_model() {
    let input = lines(
        r#"
        {"role":"user","content":"hi","timestamp":1}
        {"role":"assistant","content":[{"type":"text","text":"Hello","textSignature":"CiQBcsjafE"},{"type":"text","text":" there","textSignature":""}],"api":"google-generative-ai","provider":"google","model":"gemini-3-pro-preview","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":2}
        {"role":"user","content":"and?","timestamp":3}
        "#,
    );
    let signatures = |prepared: &agentmsg::project::Prepared| -> Vec<Option<String>> {
        prepared.messages[1]
            .as_assistant()
            .expect("assistant")
            .content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text(t) => Some(t.signature.clone()),
                _ => None,
            })
            .collect()
    };
    let gemini = Target::new("google", "google-generative-ai", "gemini-3-pro-preview");
    let same = prepare(&input, &gemini);
    assert_eq!(signatures(&same), [Some("CiQBcsjafE".to_owned()), None]);
    assert_eq!(same.report.count(ChangeKind::DroppedThinking), 1);
    assert_eq!(
        same.report.changes[0].detail,
        "removed the empty signature of text block 1"
    );

    let other = prepare(&input, &claude());
    assert_eq!(signatures(&other), [None, None]);
    assert_eq!(
        other.messages[1].as_assistant().map(|m| m.text_content()),
        Some("Hello there".to_owned())
    );
    assert_eq!(other.report.count(ChangeKind::DroppedThinking), 2);

    let problems = validate(&input);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].kind, ProblemKind::EmptySignature);
    assert_eq!(problems[0].detail, "text block 1 has an empty signature");
    assert_stable(&input, &gemini);
    assert_stable(&input, &claude());
}

/// langchain#37756: a thread moved from Kimi (through Fireworks) to Claude
/// carries ids like `functions.write_todos:0`; Anthropic answers "String should
/// match pattern '^[a-zA-Z0-9_-]+$'".
#[test]
fn ids_with_dots_and_colons_are_mapped_for_anthropic() {
    let input = lines(
        r#"
        {"role":"user","content":"plan the refactor","timestamp":1}
        {"role":"assistant","content":[{"type":"toolCall","id":"functions.write_todos:0","name":"write_todos","arguments":{"todos":["a"]}},{"type":"toolCall","id":"functions.write_todos.0","name":"write_todos","arguments":{"todos":["b"]}}],"api":"openai-completions","provider":"fireworks","model":"accounts/fireworks/models/kimi-k2-instruct","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":2}
        {"role":"toolResult","toolCallId":"functions.write_todos:0","toolName":"write_todos","content":"saved","isError":false,"timestamp":3}
        {"role":"toolResult","toolCallId":"functions.write_todos.0","toolName":"write_todos","content":"saved","isError":false,"timestamp":4}
        {"role":"user","content":"continue with Claude","timestamp":5}
        "#,
    );
    let prepared = prepare(&input, &claude());
    let ids = tool_ids(&prepared.messages);
    assert_eq!(ids.len(), 4);
    for id in &ids {
        assert!(IdRule::Anthropic.accepts(id), "{id}");
        assert!(
            id.starts_with("functions_write_todos_0_"),
            "{id}: keeps a readable prefix"
        );
    }
    assert_ne!(
        ids[0], ids[1],
        "`:` and `.` must not collide once sanitized"
    );
    assert_eq!(ids[0], ids[2], "a call and its result get the same id");
    assert_eq!(ids[1], ids[3]);
    assert_eq!(prepared.ids.stored(&ids[0]), "functions.write_todos:0");
    assert_eq!(prepared.ids.stored(&ids[1]), "functions.write_todos.0");
    assert_eq!(prepared.ids.len(), 2);
    let mapped: Vec<usize> = prepared
        .report
        .iter()
        .filter(|c| c.kind == ChangeKind::MappedId)
        .map(|c| c.index)
        .collect();
    assert_eq!(mapped, [1, 1, 2, 3]);
    // An OpenAI chat target accepts these ids as they are.
    let chat = prepare(
        &input,
        &Target::new("openai", "openai-completions", "gpt-4o"),
    );
    assert_eq!(chat.report.count(ChangeKind::MappedId), 0);
    assert_stable(&input, &claude());
}

/// pi#1022: OpenAI Responses ids are stored as `call_id|item_id`, and the
/// item id of a Copilot/Codex call can run to hundreds of characters of
/// base64 (`+`, `/`, `=`): a 446-character id is sent back as `call_id`, and
/// the API refuses it ("Expected a string with maximum length 64").
#[test]
fn a_446_character_responses_id_is_shortened_reversibly() {
    let item = format!("fc_{}", "Zm9vYmFy+/=".repeat(40));
    let stored = format!("call_N7iYNRPXLl9czpXh3bDyMpIL|{item}");
    let stored = &stored[..446];
    assert_eq!(stored.chars().count(), 446);
    let input = vec![
        Message::user("fix it"),
        Message::Assistant(
            agentmsg::AssistantMessage::new([agentmsg::ToolCall::new(
                stored,
                "edit",
                serde_json::json!({"path": "a.rs"}),
            )])
            .with_origin("openai-responses", "github-copilot", "gpt-5.1-codex")
            .with_timestamp(2),
        ),
        Message::ToolResult(
            agentmsg::ToolResultMessage::new(stored, "edit", ["done"]).with_timestamp(3),
        ),
    ];
    for target in [
        Target::new("openai", "openai-responses", "gpt-5.1"),
        Target::new("openai", "openai-completions", "gpt-4o"),
        claude(),
    ] {
        let prepared = prepare(&input, &target);
        let ids = tool_ids(&prepared.messages);
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[0], ids[1]);
        assert!(
            target.id_rule.accepts(&ids[0]),
            "{:?}: {}",
            target.id_rule,
            ids[0]
        );
        assert!(
            ids[0].starts_with("call_N7iYNRPXLl9czpXh3bDyMpIL"),
            "{}",
            ids[0]
        );
        assert_eq!(prepared.ids.stored(&ids[0]), stored);
        assert_stable(&input, &target);
    }
    // Ids that fit stay as they are.
    let short = prepare(&input[..1], &claude());
    assert!(short.ids.is_empty());
}

/// Results written after a user's steering message are moved up to their
/// turn; a result for no call and a second result are dropped.
#[test]
fn stray_duplicate_and_late_results() {
    let input = lines(
        r#"
        {"role":"toolResult","toolCallId":"toolu_old","toolName":"read","content":"left from a compacted turn","isError":false,"timestamp":1}
        {"role":"user","content":"read a.rs","timestamp":2}
        {"role":"assistant","content":[{"type":"toolCall","id":"toolu_01R","name":"read","arguments":{"path":"a.rs"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":3}
        {"role":"user","content":"and be quick","timestamp":4}
        {"role":"toolResult","toolCallId":"toolu_01R","toolName":"read","content":"fn main() {}","isError":false,"timestamp":5}
        {"role":"toolResult","toolCallId":"toolu_01R","toolName":"read","content":"fn main() {}","isError":false,"timestamp":6}
        "#,
    );
    let prepared = prepare(&input, &claude());
    assert_eq!(
        roles(&prepared.messages),
        ["user", "assistant", "toolResult", "user"]
    );
    assert_eq!(prepared.provenance[2], Provenance::Input(4));
    let changes = change_kinds(&prepared.report);
    assert_eq!(
        changes,
        [
            (0, ChangeKind::DroppedResult),
            (4, ChangeKind::ReorderedResult),
            (5, ChangeKind::DroppedResult)
        ]
    );
    let problems: Vec<_> = validate(&input).iter().map(|p| p.kind).collect();
    assert_eq!(
        problems,
        [
            ProblemKind::ResultWithoutCall,
            ProblemKind::MisplacedResult,
            ProblemKind::DuplicateResult
        ]
    );
    assert_stable(&input, &claude());
}

const SCREENSHOT: &str = r#"
{"role":"user","content":[{"type":"text","text":"what is on screen?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1}
{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"screenshot","arguments":{}},{"type":"toolCall","id":"call_2","name":"read","arguments":{"path":"a.txt"}}],"api":"openai-completions","provider":"openai","model":"gpt-4o","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":2}
{"role":"toolResult","toolCallId":"call_1","toolName":"screenshot","content":[{"type":"text","text":"captured"},{"type":"image","data":"/9j/4AAQ","mimeType":"image/jpeg"}],"isError":false,"timestamp":3}
{"role":"toolResult","toolCallId":"call_2","toolName":"read","content":"hello","isError":false,"timestamp":4}
{"role":"user","content":"thanks","timestamp":5}
"#;

#[test]
fn images_become_placeholders_naming_their_type_without_vision() {
    let input = lines(SCREENSHOT);
    let target = Target::new("deepseek", "openai-completions", "deepseek-chat").vision(false);
    let prepared = prepare(&input, &target);
    let user = prepared.messages[0].as_user().expect("user");
    assert!(matches!(&user.content[1], UserContent::Text(t) if t.text.contains("image/png")));
    let result = prepared.messages[2].as_tool_result().expect("result");
    assert!(
        matches!(&result.content[1], ToolResultContent::Text(t) if t.text.contains("image/jpeg"))
    );
    let changes = change_kinds(&prepared.report);
    assert_eq!(
        changes,
        [
            (0, ChangeKind::ImagePlaceholder),
            (2, ChangeKind::ImagePlaceholder)
        ]
    );
    assert_stable(&input, &target);
}

#[test]
fn tool_result_images_move_into_a_user_message_after_the_results() {
    let input = lines(SCREENSHOT);
    let target = Target::new("openai", "openai-completions", "gpt-4o");
    assert!(target.vision && !target.tool_result_images);
    let prepared = prepare(&input, &target);
    assert_eq!(
        roles(&prepared.messages),
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "user",
            "user"
        ]
    );
    let result = prepared.messages[2].as_tool_result().expect("result");
    assert!(result
        .content
        .iter()
        .all(|c| matches!(c, ToolResultContent::Text(_))));
    assert!(result
        .text()
        .contains("image/jpeg image: attached in the user message after the tool results"));
    let moved = prepared.messages[4].as_user().expect("moved images");
    assert!(moved
        .content
        .iter()
        .any(|c| matches!(c, UserContent::Image(_))));
    assert!(moved.text().contains("`screenshot`"));
    assert_eq!(prepared.provenance[4], Provenance::MovedImages(2));
    assert_eq!(prepared.report.count(ChangeKind::MovedImages), 1);
    // The user's own image stays where it is, and Claude takes images in results.
    assert!(prepared.messages[0]
        .as_user()
        .expect("user")
        .content
        .iter()
        .any(|c| matches!(c, UserContent::Image(_))));
    assert!(prepare(&input, &claude()).report.is_empty());
    assert_stable(&input, &target);
}

#[test]
fn duplicate_and_empty_call_ids_become_unique() {
    let input = lines(
        r#"
        {"role":"user","content":"go","timestamp":1}
        {"role":"assistant","content":[{"type":"toolCall","id":"call_0","name":"a","arguments":{}},{"type":"toolCall","id":"","name":"b","arguments":{}}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":2}
        {"role":"toolResult","toolCallId":"call_0","toolName":"a","content":"A","isError":false,"timestamp":3}
        {"role":"toolResult","toolCallId":"","toolName":"b","content":"B","isError":false,"timestamp":4}
        {"role":"assistant","content":[{"type":"toolCall","id":"call_0","name":"a","arguments":{}}],"api":"google-generative-ai","provider":"google","model":"gemini-2.5-flash","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse","timestamp":5}
        {"role":"toolResult","toolCallId":"call_0","toolName":"a","content":"A2","isError":false,"timestamp":6}
        "#,
    );
    let target = Target::new("google", "google-generative-ai", "gemini-2.5-flash");
    let prepared = prepare(&input, &target);
    let ids = tool_ids(&prepared.messages);
    assert_eq!(ids[0], "call_0");
    assert_eq!(ids[0], ids[2]);
    assert_eq!(ids[1], ids[3]);
    assert_eq!(ids[4], ids[5]);
    assert!(!ids[1].is_empty());
    assert_ne!(ids[4], "call_0", "the second call_0 gets its own id");
    assert_eq!(prepared.ids.stored(&ids[4]), "call_0");
    assert_eq!(prepared.ids.stored(&ids[1]), "");
    let problems: Vec<_> = validate(&input).iter().map(|p| (p.index, p.kind)).collect();
    assert_eq!(
        problems,
        [
            (1, ProblemKind::EmptyCallId),
            (4, ProblemKind::DuplicateCallId)
        ]
    );
    assert_stable(&input, &target);
}

#[test]
fn a_turn_left_empty_is_dropped() {
    let input = lines(
        r#"
        {"role":"user","content":"think about it","timestamp":1}
        {"role":"assistant","content":[{"type":"redactedThinking","data":"EmwKAhgB"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop","timestamp":2}
        {"role":"user","content":"well?","timestamp":3}
        "#,
    );
    let prepared = prepare(&input, &claude());
    assert_eq!(roles(&prepared.messages), ["user", "user"]);
    let changes = change_kinds(&prepared.report);
    assert_eq!(
        changes,
        [
            (1, ChangeKind::DroppedThinking),
            (1, ChangeKind::DroppedEmptyMessage)
        ]
    );
    let same = prepare(
        &input,
        &Target::new("anthropic", "anthropic-messages", "claude-opus-4-5"),
    );
    assert!(same.report.is_empty());
    assert_stable(&input, &claude());
}

/// `prepare` takes `to_llm`'s borrowed `Cow`s as well as owned messages.
#[test]
fn borrowed_and_owned_input_prepare_alike() {
    let input = lines(SCREENSHOT);
    let cows: Vec<std::borrow::Cow<'_, Message>> =
        input.iter().map(std::borrow::Cow::Borrowed).collect();
    let refs: Vec<&Message> = input.iter().collect();
    let target = Target::new("openai", "openai-completions", "gpt-4o");
    let owned = prepare(&input, &target);
    assert_eq!(prepare(&cows, &target), owned);
    assert_eq!(prepare(&refs, &target), owned);
}
