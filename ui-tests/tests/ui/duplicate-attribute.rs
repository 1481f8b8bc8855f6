use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "notice")]
#[agent_message(kind = "notice2")]
struct Notice {
    text: String,
}

fn main() {}
