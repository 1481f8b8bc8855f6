//! The repair plan as a library gives it: what it pairs, drops and adds, and
//! what it leaves alone (a session tree, lines kept undecoded).

use agentmsg::transcript::{JsonlReader, RepairPlan, RepairPlanner};
use agentmsg::AgentMessage;

fn read(text: &str) -> Vec<AgentMessage> {
    JsonlReader::new(text.as_bytes())
        .read_all()
        .expect("reads")
        .messages
}

#[test]
fn an_unanswered_call_gets_a_result_and_a_second_result_is_dropped() {
    let messages = read(concat!(
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"ls","arguments":{}},{"type":"toolCall","id":"b","name":"cat","arguments":{}}],"stopReason":"toolUse","timestamp":2,"turnId":"t","id":"x"}"#,
        "\n",
        r#"{"role":"toolResult","toolCallId":"a","toolName":"ls","content":"ok","isError":false,"timestamp":3}"#,
        "\n",
        r#"{"role":"toolResult","toolCallId":"a","toolName":"ls","content":"again","isError":false,"timestamp":4}"#,
        "\n",
        r#"{"role":"user","content":"next","timestamp":5}"#,
        "\n",
    ));
    let plan = RepairPlan::of(&messages);
    assert!(!plan.tree);
    assert_eq!(plan.drop.keys().copied().collect::<Vec<_>>(), [2]);
    // The result for `b` goes after the results the turn kept (position 1).
    let added = &plan.inserts[&1];
    assert_eq!(added.len(), 1);
    assert!(
        added[0].what.contains("`cat` call `b`"),
        "{}",
        added[0].what
    );
    let result = added[0].message.message.as_tool_result().unwrap();
    assert_eq!((result.tool_call_id.as_str(), result.is_error), ("b", true));
    assert_eq!(
        added[0].message.turn_id.as_ref().map(|t| t.as_str()),
        Some("t")
    );
    let repaired = plan.apply(messages.clone());
    let roles: Vec<String> = repaired.iter().map(|m| m.kind().to_owned()).collect();
    assert_eq!(roles, ["assistant", "toolResult", "toolResult", "user"]);
    // The same input, the same plan: no clock, no random ids.
    assert_eq!(RepairPlan::of(&messages), plan);
}

#[test]
fn a_session_tree_is_left_as_it_is() {
    let messages = read(concat!(
        r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"ls","arguments":{}}],"stopReason":"toolUse","timestamp":2,"id":"x","parentId":null}"#,
        "\n",
        r#"{"role":"user","content":"next","timestamp":5,"id":"y","parentId":"x"}"#,
        "\n",
    ));
    let plan = RepairPlan::of(&messages);
    assert!(plan.tree);
    assert!(plan.is_empty());
}

#[test]
fn a_line_kept_undecoded_still_pairs_and_is_never_dropped() {
    // The call's line does not decode (its usage is a string), yet its JSON
    // still names the call, so the result that follows answers it.
    let call = r#"{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"ls","arguments":{}}],"stopReason":"toolUse","usage":"not usage","timestamp":2}"#;
    let messages = read(&format!(
        "{call}\n{}\n",
        r#"{"role":"toolResult","toolCallId":"a","toolName":"ls","content":"ok","isError":false,"timestamp":3}"#
    ));
    assert!(messages[0].is_unknown(), "{:?}", messages[0]);
    let plan = RepairPlan::of(&messages);
    assert!(plan.is_empty(), "{plan:?}");

    // Fed by hand, as a file reader does: a result that does not decode (its
    // content is a number) and answers no call is kept, where a decoded one
    // would be dropped.
    let mut planner = RepairPlanner::new();
    let kept = br#"{"role":"toolResult","toolCallId":"zz","toolName":"ls","content":5}"#;
    planner.add(0, 1, kept, None);
    assert!(planner.finish().is_empty());
    let mut planner = RepairPlanner::new();
    let decoded = read(
        r#"{"role":"toolResult","toolCallId":"zz","toolName":"ls","content":"x","isError":false,"timestamp":1}"#,
    );
    planner.add(0, 1, b"", decoded.first());
    assert_eq!(
        planner.finish().drop.keys().copied().collect::<Vec<_>>(),
        [0]
    );
}
