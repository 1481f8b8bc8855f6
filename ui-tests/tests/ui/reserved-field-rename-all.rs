use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "notice")]
struct Notice {
    turn_id: String,
    text: String,
}

fn main() {}
