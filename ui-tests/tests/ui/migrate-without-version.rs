use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "approval", migrate = upgrade)]
struct Approval {
    granted: bool,
}

fn upgrade(_from: u32, value: serde_json::Value) -> Result<serde_json::Value, String> {
    Ok(value)
}

fn main() {}
