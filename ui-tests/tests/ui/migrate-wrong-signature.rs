use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "approval", version = 2, migrate = upgrade)]
struct Approval {
    granted: bool,
}

fn upgrade(value: serde_json::Value) -> serde_json::Value {
    value
}

fn main() {}
