use agentmsg::{AgentMessage, ImageContent};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "screenshot", to_llm = user)]
struct Screenshot {
    image: ImageContent,
    path: String,
}

fn main() {}
