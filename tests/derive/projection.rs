//! `to_llm` and the built-in kinds'
//! projections in pi's wording.

use std::borrow::Cow;

use agentmsg::custom::{
    BranchSummary, CompactionSummary, ExtensionMessage, BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
};
use agentmsg::project::to_llm_with_report;
use agentmsg::transcript::read_transcript;
use agentmsg::{to_llm, AgentMessage, Message, MessageId};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "projNotice")]
struct Notice {
    text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "projHandoff", to_llm = with(Handoff::render))]
struct Handoff {
    to: String,
}

impl Handoff {
    /// Two messages from one entry.
    fn render(&self) -> Vec<Message> {
        vec![
            Message::user(format!("Handing off to {}.", self.to)),
            Message::assistant("Understood."),
        ]
    }
}

fn transcript() -> Vec<AgentMessage> {
    vec![
        Message::system("Be terse.").into(),
        Message::user("hi").into(),
        Notice {
            text: "ui only".into(),
        }
        .into(),
        Handoff {
            to: "reviewer".into(),
        }
        .into(),
        AgentMessage::from_line(r#"{"role":"projFuture","x":1}"#).unwrap(),
        Message::assistant("hello").into(),
    ]
}

#[test]
fn llm_messages_are_borrowed_custom_ones_projected_unknown_counted() {
    let transcript = transcript();
    let report = to_llm_with_report(&transcript);
    assert_eq!(report.ui_only, 1);
    assert_eq!(report.unknown_dropped, 1);
    let roles: Vec<_> = report.messages.iter().map(|m| m.role().as_str()).collect();
    assert_eq!(roles, ["system", "user", "user", "assistant", "assistant"]);
    // Borrowed from the transcript itself, not cloned.
    match &report.messages[1] {
        Cow::Borrowed(m) => assert!(std::ptr::eq(*m, transcript[1].as_llm().unwrap())),
        Cow::Owned(_) => panic!("an LLM message was cloned"),
    }
    assert!(matches!(report.messages[2], Cow::Owned(_)));
    assert_eq!(to_llm(&transcript), report.messages);
}

#[test]
fn builtin_summaries_project_in_pis_words() {
    let compaction = CompactionSummary {
        summary: "We fixed the parser.".into(),
        tokens_before: 48213,
        first_kept_id: Some(MessageId::from("m7")),
        timestamp: 1765238302057,
        details: None,
    };
    let line = AgentMessage::from(compaction.clone()).to_line().unwrap();
    assert_eq!(
        line,
        r#"{"role":"compactionSummary","summary":"We fixed the parser.","tokensBefore":48213,"firstKeptId":"m7","timestamp":1765238302057}"#
    );
    let entries = [AgentMessage::from(compaction)];
    let projected = to_llm(&entries);
    let user = projected[0].as_user().unwrap();
    assert_eq!(
        user.text(),
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\nWe fixed the parser.\n</summary>"
    );
    assert_eq!(user.timestamp, 1765238302057);
    assert!(user.text().starts_with(COMPACTION_SUMMARY_PREFIX));

    // pi's own lines (no firstKeptId) decode.
    let pi = r#"{"role":"branchSummary","summary":"Tried a regex parser.","fromId":"a1b2","timestamp":5}"#;
    let branch = AgentMessage::from_line(pi).unwrap();
    assert_eq!(
        branch
            .downcast_ref::<BranchSummary>()
            .unwrap()
            .from_id
            .as_ref()
            .unwrap()
            .as_str(),
        "a1b2"
    );
    assert_eq!(branch.to_line().unwrap(), pi);
    let text = to_llm(std::slice::from_ref(&branch))[0]
        .as_user()
        .unwrap()
        .text();
    assert_eq!(
        text,
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nTried a regex parser.</summary>"
    );
    assert!(text.starts_with(BRANCH_SUMMARY_PREFIX));
}

#[test]
fn extension_entries_are_ui_only_and_read_seed_004_shape() {
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Progress {
        done: u32,
        total: u32,
    }
    let entry = ExtensionMessage::new("progress", &Progress { done: 1, total: 3 }).unwrap();
    let message = AgentMessage::from(entry.clone()).with_timestamp(5);
    let line = message.to_line().unwrap();
    assert_eq!(
        line,
        r#"{"role":"extension","kind":"progress","data":{"done":1,"total":3},"timestamp":5}"#
    );
    let back = read_transcript(line.as_bytes()).unwrap().messages;
    let entry = back[0].downcast_ref::<ExtensionMessage>().unwrap();
    assert_eq!(
        entry.data_as::<Progress>().unwrap(),
        Progress { done: 1, total: 3 }
    );
    assert!(to_llm(&back).is_empty());
    assert_eq!(to_llm_with_report(&back).ui_only, 1);
}

/// seed 003: project a Notice as a user note; everything else as the default.
fn notes_as_user(messages: &[AgentMessage]) -> Vec<Cow<'_, Message>> {
    messages
        .iter()
        .flat_map(|m| match m.downcast_ref::<Notice>() {
            Some(notice) => vec![Cow::Owned(Message::user(format!(
                "[system] {}",
                notice.text
            )))],
            None => to_llm(std::slice::from_ref(m)),
        })
        .collect()
}

#[test]
fn an_app_projects_its_own_kinds_with_a_plain_function() {
    // An application that wants a conversion of its own writes a function over
    // the transcript; the default stays `to_llm` for everything it leaves alone.
    let transcript = transcript();
    let custom = notes_as_user(&transcript);
    assert_eq!(custom.len(), 6);
    assert_eq!(custom[2].as_user().unwrap().text(), "[system] ui only");
    assert_eq!(custom.len(), to_llm(&transcript).len() + 1);
}
