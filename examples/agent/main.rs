//! An agent with two typed tools, a UI-only kind and a typed answer: Anthropic with
//! `ANTHROPIC_API_KEY`, else a scripted model (`offline.rs`). `cargo run -F agent --example agent`
mod offline;

use agentmsg::agent::{Agent, AgentEvent as Ev};
use agentmsg::{Message, Session};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Adds two numbers.
#[derive(Deserialize, JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

/// Counts the characters of a text.
#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

/// A line for the UI: kept in the session, never sent to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
struct Notice {
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct Answer {
    sum: f64,
    length: usize,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let agent = Agent::new(offline::model_or_scripted(), "claude-sonnet-4-5")
        .tool_fn("add", |x: Add| async move { Ok(x.a + x.b) })
        .tool_fn("length", |x: Text| async move { Ok(x.text.len()) })
        .output::<Answer>();
    let mut session = Session::new();
    let text = "Remember: the model never sees this.".to_owned();
    session.append(Notice { text }.into())?;
    let prompt = Message::user("What is 2 + 40, and the length of \"the quick brown fox\"?");
    let outcome = agent
        .prompt(&mut session, prompt, |event| match event {
            Ev::ToolExecutionEnd { result: r, .. } => println!("{}: {}", r.tool_name, r.text()),
            Ev::MessageEnd { message, .. } => println!("[{}]", message.kind()),
            _ => {}
        })
        .await?;
    let Answer { sum, length } = outcome.output()?;
    println!("{sum}, {length} characters; {} turns", outcome.turns);
    Ok(())
}
