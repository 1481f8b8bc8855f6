use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "reading")]
struct Reading {
    #[agent_message(timestamp)]
    timestamp: u64,
    #[agent_message(timestamp)]
    #[serde(rename = "at")]
    at: Option<u64>,
}

fn main() {}
