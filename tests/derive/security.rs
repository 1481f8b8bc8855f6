//! The security property: a custom message's data reaches the model only through
//! its declared projection, and kept (`Unknown`) lines never do. Random
//! transcripts hide secrets in custom fields outside the projection and in lines
//! that are kept undecoded; none may appear in `to_llm`'s output, before or after
//! a round trip through JSON Lines.

use agentmsg::custom::ExtensionMessage;
use agentmsg::transcript::{read_transcript, write_jsonl};
use agentmsg::{to_llm, AgentMessage, Message, TextContent};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "secNotice")]
struct Notice {
    text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "secCall", to_llm = user("[{from}] {request}"))]
struct AgentCall {
    from: String,
    request: String,
    token: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "secShot", to_llm = user)]
struct Screenshot {
    #[agent_message(content)]
    caption: TextContent,
    path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "secApproval", version = 2, to_llm = with(Approval::render))]
struct Approval {
    call: String,
    granted: bool,
    approver_password: String,
}

impl Approval {
    fn render(&self) -> Vec<Message> {
        vec![Message::user(format!(
            "{} granted={}",
            self.call, self.granted
        ))]
    }
}

/// What one generated line is, with the secret it hides and the text the model
/// should see.
#[derive(Debug, Clone)]
enum Entry {
    User(String),
    Assistant(String),
    Notice { secret: String },
    Call { visible: String, secret: String },
    Shot { visible: String, secret: String },
    Approval { visible: String, secret: String },
    Extension { secret: String },
    UnknownKind { secret: String },
    NewerVersion { visible: String, secret: String },
    InvalidBody { secret: String },
}

fn visible() -> impl Strategy<Value = String> {
    "[a-z ]{1,24}"
}

fn secret() -> impl Strategy<Value = String> {
    any::<u64>().prop_map(|n| format!("SECRET{n:016x}"))
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        visible().prop_map(Entry::User),
        visible().prop_map(Entry::Assistant),
        secret().prop_map(|secret| Entry::Notice { secret }),
        (visible(), secret()).prop_map(|(visible, secret)| Entry::Call { visible, secret }),
        (visible(), secret()).prop_map(|(visible, secret)| Entry::Shot { visible, secret }),
        (visible(), secret()).prop_map(|(visible, secret)| Entry::Approval { visible, secret }),
        secret().prop_map(|secret| Entry::Extension { secret }),
        secret().prop_map(|secret| Entry::UnknownKind { secret }),
        (visible(), secret()).prop_map(|(visible, secret)| Entry::NewerVersion { visible, secret }),
        secret().prop_map(|secret| Entry::InvalidBody { secret }),
    ]
}

fn build(entry: &Entry) -> AgentMessage {
    let line = |text: String| AgentMessage::from_line(&text).unwrap();
    match entry.clone() {
        Entry::User(text) => Message::user(text).into(),
        Entry::Assistant(text) => Message::assistant(text).into(),
        Entry::Notice { secret } => Notice { text: secret }.into(),
        Entry::Call { visible, secret } => AgentCall {
            from: "planner".into(),
            request: visible,
            token: secret,
        }
        .into(),
        Entry::Shot { visible, secret } => Screenshot {
            caption: TextContent::new(visible),
            path: secret,
        }
        .into(),
        Entry::Approval { visible, secret } => Approval {
            call: visible,
            granted: true,
            approver_password: secret,
        }
        .into(),
        Entry::Extension { secret } => {
            ExtensionMessage::new("audit", &serde_json::json!({ "key": secret }))
                .unwrap()
                .into()
        }
        Entry::UnknownKind { secret } => {
            line(format!(r#"{{"role":"secFuture","content":"{secret}"}}"#))
        }
        // A newer version of a kind that would be projected: kept, not projected.
        Entry::NewerVersion { visible, secret } => line(format!(
            r#"{{"role":"secApproval","call":"{visible} {secret}","granted":true,"approver_password":"x","v":3}}"#
        )),
        // A body that does not decode as its (projected) kind: kept, not projected.
        Entry::InvalidBody { secret } => line(format!(
            r#"{{"role":"secCall","from":"{secret}","request":5,"token":"t"}}"#
        )),
    }
}

fn secrets(entries: &[Entry]) -> Vec<&str> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::User(_) | Entry::Assistant(_) => None,
            Entry::Notice { secret }
            | Entry::Call { secret, .. }
            | Entry::Shot { secret, .. }
            | Entry::Approval { secret, .. }
            | Entry::Extension { secret }
            | Entry::UnknownKind { secret }
            | Entry::NewerVersion { secret, .. }
            | Entry::InvalidBody { secret } => Some(secret.as_str()),
        })
        .collect()
}

fn projected_text(messages: &[AgentMessage]) -> String {
    let projected = to_llm(messages);
    serde_json::to_string(&projected).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn secrets_never_reach_the_model(entries in prop::collection::vec(entry(), 0..40)) {
        let transcript: Vec<AgentMessage> = entries.iter().map(build).collect();
        let written = write_jsonl(Vec::new(), &transcript).unwrap();
        let reread = read_transcript(&written[..]).unwrap();
        prop_assert_eq!(&reread.messages, &transcript);
        for messages in [&transcript, &reread.messages] {
            let text = projected_text(messages);
            for secret in secrets(&entries) {
                prop_assert!(!text.contains(secret), "{} leaked into {}", secret, text);
            }
            // The declared projections did happen: the test can fail.
            for entry in &entries {
                if let Entry::Call { visible, .. }
                | Entry::Shot { visible, .. }
                | Entry::Approval { visible, .. }
                | Entry::User(visible)
                | Entry::Assistant(visible) = entry
                {
                    prop_assert!(text.contains(visible.as_str()), "{} missing from {}", visible, text);
                }
            }
        }
    }
}
