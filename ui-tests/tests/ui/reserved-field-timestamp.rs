use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

// `timestamp` is the envelope's key for the message's time, unless the field
// is marked as holding it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "reading")]
struct Reading {
    timestamp: String,
    value: f64,
}

fn main() {}
