use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(to_llm = user("{text}"))]
struct Notice {
    text: String,
}

fn main() {}
