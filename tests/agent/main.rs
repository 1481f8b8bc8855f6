//! The agent loop on the scripted model and on a real HTTP server on
//! loopback: tools in parallel, failing and panicking tools, terminate, the
//! turn limit, cancellation mid-stream, steering, approval, events in order,
//! usage summed; typed tools and structured output.

#[path = "../http/server.rs"]
#[allow(dead_code)]
mod server;

mod loopback;
mod looped;
mod tools;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentmsg::agent::{AgentEvent, Tool, ToolError, ToolOutput};
use agentmsg::{AgentMessage, AssistantContent, AssistantMessage, Message, ToolCall};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const MODEL: &str = "claude-sonnet-4-5";

/// A banner for the UI: it never reaches the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
pub struct Notice {
    pub text: String,
}

/// Adds two numbers.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first number.
    pub a: f64,
    /// The second number.
    pub b: f64,
}

/// The `add` tool; counts how many of its calls run at once.
#[derive(Clone, Default)]
pub struct Add {
    pub running: Arc<AtomicUsize>,
    pub most: Arc<AtomicUsize>,
    pub delay: Duration,
}

impl Tool for Add {
    const NAME: &'static str = "add";
    type Args = AddArgs;

    async fn call(&self, args: AddArgs) -> Result<ToolOutput, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text((args.a + args.b).to_string()))
    }
}

/// Does what its argument says: fail, panic, sleep, stop the run, or answer
/// in JSON.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ActArgs {
    /// `fail`, `panic`, `sleep`, `stop` or `json`.
    pub what: String,
}

pub struct Act;

impl Tool for Act {
    const NAME: &'static str = "act";
    type Args = ActArgs;

    async fn call(&self, args: ActArgs) -> Result<ToolOutput, ToolError> {
        match args.what.as_str() {
            "fail" => Err(ToolError::new("the disk is full")),
            "panic" => panic!("the tool broke"),
            "sleep" => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok(ToolOutput::text("woke"))
            }
            "stop" => Ok(ToolOutput::text("stopping").with_terminate()),
            "json" => ToolOutput::json(serde_json::json!({"rows": 3, "ok": true})),
            other => Ok(
                ToolOutput::text(format!("did {other}")).with_message(Notice {
                    text: format!("acted: {other}"),
                }),
            ),
        }
    }
}

/// A tool call block.
pub fn call(id: &str, name: &str, arguments: serde_json::Value) -> AssistantContent {
    AssistantContent::from(ToolCall::new(id, name, arguments))
}

/// A reply that calls these tools.
pub fn calls(blocks: Vec<AssistantContent>) -> AssistantMessage {
    AssistantMessage::new(blocks)
}

/// A reply of text.
pub fn text(text: &str) -> AssistantMessage {
    AssistantMessage::new([text])
}

/// Each event as a short line, the updates of one reply folded into one.
pub fn outline(events: &[AgentEvent]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for event in events {
        let line = match event {
            AgentEvent::AgentStart => "agent_start".to_owned(),
            AgentEvent::TurnStart { turn } => format!("turn_start {turn}"),
            AgentEvent::MessageStart { message } => format!("message_start {}", message.kind()),
            AgentEvent::MessageUpdate { .. } => "update".to_owned(),
            AgentEvent::MessageEnd { message, .. } => format!("message_end {}", message.kind()),
            AgentEvent::ToolExecutionStart { call } => format!("tool_start {}", call.id),
            AgentEvent::ToolExecutionEnd { call, result, .. } => {
                format!(
                    "tool_end {}{}",
                    call.id,
                    if result.is_error { " error" } else { "" }
                )
            }
            AgentEvent::TurnEnd { turn, .. } => format!("turn_end {turn}"),
            AgentEvent::AgentEnd { stop_reason, .. } => format!("agent_end {stop_reason:?}"),
            other => format!("{other:?}"),
        };
        if line == "update" && lines.last().is_some_and(|l| l == "update") {
            continue;
        }
        lines.push(line);
    }
    lines
}

/// The session's messages, as (kind, text).
pub fn transcript(session: &agentmsg::Session) -> Vec<(String, String)> {
    session
        .entries()
        .iter()
        .filter_map(|e| e.message())
        .map(|m: &AgentMessage| {
            let text = match m.as_llm() {
                Some(Message::Assistant(a)) => a.text_content(),
                Some(Message::User(u)) => u.text(),
                Some(Message::ToolResult(r)) => r.text(),
                _ => String::new(),
            };
            (m.kind().to_owned(), text)
        })
        .collect()
}

/// The texts of the session's tool results, in order.
pub fn tool_results(session: &agentmsg::Session) -> Vec<String> {
    transcript(session)
        .into_iter()
        .filter(|(kind, _)| kind == "toolResult")
        .map(|(_, text)| text)
        .collect()
}

/// The assistant message of entry `index`.
pub fn reply_at(session: &agentmsg::Session, index: usize) -> AssistantMessage {
    session.entries()[index]
        .message()
        .and_then(|m| m.as_llm()?.as_assistant().cloned())
        .unwrap()
}
