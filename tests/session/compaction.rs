//! Compaction by either policy: nothing the model does not see is ever
//! summarised alone, file lists are carried in an agentmsg transcript as in
//! a pi session, and the token estimates follow their stated rules.

use agentmsg::custom::{CompactionSummary, ExtensionMessage};
use agentmsg::session::{estimate_context_tokens, CompactionPolicy, FileLists};
use agentmsg::transcript::dropped_fields;
use agentmsg::{
    AgentMessage, AssistantMessage, Message, Session, StopReason, TextContent, ToolCall, Usage,
};
use serde_json::json;

const POLICIES: [CompactionPolicy; 2] = [CompactionPolicy::Pi, CompactionPolicy::Agentmsg];

fn notice() -> AgentMessage {
    AgentMessage::custom(ExtensionMessage::new("notification", &json!({"text": "built"})).unwrap())
}

/// The case: only a UI-only notice before the cut. The summariser
/// would get an empty conversation and the model would still see
/// everything: no plan, by either policy.
#[test]
fn a_ui_only_notice_alone_is_never_summarised() {
    let mut session = Session::new();
    session.append(notice()).unwrap();
    session
        .append(Message::user("x".repeat(4000)).into())
        .unwrap();
    session.append(notice()).unwrap();
    for policy in POLICIES {
        // (Keeping 0 tokens, agentmsg keeps only the last notice and
        // summarises the message before it: a real plan.)
        for keep in [1, 10, 1000, 100_000] {
            assert_eq!(
                policy.plan(&session, None, keep).unwrap(),
                None,
                "{policy:?} keeping {keep}"
            );
        }
    }
    // With something the model sees before the cut, both plan.
    session
        .append(Message::user("y".repeat(4000)).into())
        .unwrap();
    for policy in POLICIES {
        let plan = policy.plan(&session, None, 500).unwrap().expect("a plan");
        // pi cuts at the notice before the kept message, a turn's middle to
        // it, so the message before is the split turn's start.
        let asked = format!(
            "{}{}",
            plan.conversation,
            plan.turn_prefix_conversation.clone().unwrap_or_default()
        );
        assert!(
            asked.starts_with(&format!("[User]: {}", "x".repeat(10))),
            "{policy:?}"
        );
    }
}

fn read_and_edit(k: usize, read: &str, edit: &str) -> [AgentMessage; 3] {
    let calls = [
        ToolCall::new(format!("r{k}"), "read", json!({"path": read})),
        ToolCall::new(
            format!("e{k}"),
            "edit",
            json!({"path": edit, "oldText": "a", "newText": "b"}),
        ),
    ];
    [
        Message::Assistant(AssistantMessage::new(calls).with_stop_reason(StopReason::ToolUse))
            .into(),
        Message::tool_result(format!("r{k}"), "read", "text").into(),
        Message::tool_result(format!("e{k}"), "edit", "done").into(),
    ]
}

/// In an agentmsg transcript, by either policy: the compaction line carries
/// the lists in `details` (a key its type writes back, so nothing is
/// dropped), the summary lists them, and the next compaction carries them.
#[test]
fn file_lists_are_carried_in_an_agentmsg_transcript() {
    for policy in POLICIES {
        let mut session = Session::new();
        session.append(Message::user("start").into()).unwrap();
        for m in read_and_edit(1, "a.rs", "b.rs") {
            session.append(m).unwrap();
        }
        session
            .append(Message::user("z".repeat(4000)).into())
            .unwrap();
        let plan = policy.plan(&session, None, 500).unwrap().expect("a plan");
        assert_eq!(plan.files, FileLists::new(["a.rs"], ["b.rs"]), "{policy:?}");
        let summary = plan.summary_text(Some("First."), None);
        assert_eq!(
            summary,
            "First.\n\n<read-files>\na.rs\n</read-files>\n\n<modified-files>\nb.rs\n</modified-files>"
        );
        let id = session.apply_compaction(&plan, summary).unwrap();
        let line = session
            .line(session.entry(id.as_str()).unwrap())
            .into_owned();
        let decoded = AgentMessage::from_line(&line).unwrap();
        assert_eq!(
            dropped_fields(&line, &decoded).unwrap(),
            Vec::<String>::new()
        );
        let written = decoded.downcast_ref::<CompactionSummary>().unwrap();
        assert_eq!(
            written.details,
            Some(json!({"readFiles": ["a.rs"], "modifiedFiles": ["b.rs"]}))
        );

        // Read back, more work, and a second compaction: the first's lists
        // stay, a path read before and edited now is modified only.
        let mut session = Session::read(&session.to_bytes()).unwrap();
        session.append(Message::user("more").into()).unwrap();
        for m in read_and_edit(2, "c.rs", "a.rs") {
            session.append(m).unwrap();
        }
        session
            .append(Message::user("w".repeat(4000)).into())
            .unwrap();
        let plan = policy
            .plan(&session, None, 500)
            .unwrap()
            .expect("a second plan");
        assert_eq!(
            plan.previous_summary
                .as_deref()
                .map(|s| s.starts_with("First.")),
            Some(true)
        );
        assert_eq!(
            plan.files,
            FileLists::new(["c.rs"], ["a.rs", "b.rs"]),
            "{policy:?}"
        );
    }
}

/// A reply whose usage is all zeros: pi 0.73.1 counts the context as 0
/// tokens before the messages after it; agentmsg's rule estimates instead.
#[test]
fn all_zero_usage_counts_as_each_policy_says() {
    let zero = AssistantMessage::new([TextContent::new("ok")]).with_usage(Usage::new(0, 0));
    let messages: Vec<AgentMessage> = vec![
        Message::user("x".repeat(400)).into(),
        Message::Assistant(zero).into(),
        Message::user("12345678").into(),
    ];
    let pi = CompactionPolicy::Pi.context_tokens(&messages);
    assert_eq!((pi.tokens, pi.last_usage_index), (2, Some(1)));
    let ours = CompactionPolicy::Agentmsg.context_tokens(&messages);
    assert_eq!(ours, estimate_context_tokens(&messages));
    assert_eq!((ours.tokens, ours.last_usage_index), (100 + 1 + 2, None));
}

/// Text counts in UTF-16 units in both rules, tool arguments too: a crab is
/// two units, as pi's JavaScript counts it, not one character or four bytes.
#[test]
fn text_and_arguments_count_in_utf16_units() {
    let crabs = "🦀".repeat(8);
    let user: AgentMessage = Message::user(crabs.clone()).into();
    let call = ToolCall::new("c", "t", json!({"k": crabs}));
    let reply: AgentMessage = Message::Assistant(AssistantMessage::new([call])).into();
    for policy in POLICIES {
        assert_eq!(policy.estimate_tokens(&user), 4, "{policy:?}");
        // "t" and {"k":"🦀…"}: 1 + 8 + 16 units.
        assert_eq!(policy.estimate_tokens(&reply), 7, "{policy:?}");
    }
}
