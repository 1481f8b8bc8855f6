use agentmsg::{AgentMessage, ImageContent};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "screenshot")]
struct Screenshot {
    #[agent_message(content)]
    image: ImageContent,
}

fn main() {}
