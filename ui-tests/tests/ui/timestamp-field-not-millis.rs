use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "reading")]
struct Reading {
    #[agent_message(timestamp)]
    timestamp: String,
    value: f64,
}

fn main() {}
