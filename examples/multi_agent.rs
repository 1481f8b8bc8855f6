//! Agents that call each other (MARSYS-style): `agentCall`, `agentResponse` and
//! `agentError` are custom kinds of the transcript, each with a declared
//! projection, so a coordinator's model sees requests, answers and failures as
//! user messages while the transcript keeps them typed.
//!
//! Run with `cargo run --example multi_agent`.

use agentmsg::transcript::read_transcript;
use agentmsg::{to_llm, AgentMessage, JsonlWriter, Message, TurnId};
use serde::{Deserialize, Serialize};

/// One agent asks another to do something.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("[Request from {from} to {to}]: {request}"))]
struct AgentCall {
    from: String,
    to: String,
    request: String,
}

/// The callee's answer; what the model sees depends on the outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "agentResponse", to_llm = with(AgentResponse::render))]
struct AgentResponse {
    from: String,
    response: String,
    elapsed_ms: u64,
}

impl AgentResponse {
    fn render(&self) -> Vec<Message> {
        vec![Message::user(format!(
            "[Response from {}]: {}",
            self.from, self.response
        ))]
    }
}

/// A callee failed; the stack trace stays in the transcript, only the summary
/// reaches the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "agentError", to_llm = user("[Error from {agent}]: {error} (retryable: {retryable})"))]
struct AgentError {
    agent: String,
    error: String,
    retryable: bool,
    trace: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let turn = TurnId::new();
    let transcript: Vec<AgentMessage> = vec![
        Message::system("You coordinate a researcher and a writer.").into(),
        Message::user("Summarize the state of Rust async runtimes.").into(),
        AgentMessage::from(AgentCall {
            from: "coordinator".into(),
            to: "researcher".into(),
            request: "List the maintained async runtimes.".into(),
        })
        .with_turn_id(Some(turn.clone())),
        AgentMessage::from(AgentResponse {
            from: "researcher".into(),
            response: "tokio, async-std (deprecated), smol, glommio.".into(),
            elapsed_ms: 5230,
        })
        .with_turn_id(Some(turn)),
        AgentCall {
            from: "coordinator".into(),
            to: "writer".into(),
            request: "Write two sentences from the researcher's list.".into(),
        }
        .into(),
        AgentError {
            agent: "writer".into(),
            error: "model overloaded".into(),
            retryable: true,
            trace: "at writer::run (writer.rs:42)".into(),
        }
        .into(),
    ];

    let dir = tempfile::tempdir()?;
    let path = dir.path().join("coordinator.jsonl");
    let mut writer = JsonlWriter::append(&path)?.fsync(true);
    writer.write_all(&transcript)?;
    writer.flush()?;
    println!("== {} (what is stored)", path.display());
    print!("{}", std::fs::read_to_string(&path)?);

    let reread = read_transcript(std::io::BufReader::new(std::fs::File::open(&path)?))?;
    assert_eq!(reread.messages, transcript);
    let failures = reread
        .messages
        .iter()
        .filter_map(|m| m.downcast_ref::<AgentError>())
        .filter(|e| e.retryable)
        .count();
    println!("\n== retryable failures in the transcript: {failures}");

    println!("\n== what the coordinator's model sees");
    for message in to_llm(&reread.messages) {
        let text = match &*message {
            Message::System(m) => m.text(),
            Message::User(m) => m.text(),
            Message::Assistant(m) => m.text_content(),
            Message::ToolResult(m) => m.text(),
        };
        println!("{:>9}: {text}", message.role().as_str());
    }
    Ok(())
}
