use agentmsg::{AgentMessage, ImageContent, TextContent};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "drawing", to_llm = assistant)]
struct Drawing {
    #[agent_message(content)]
    caption: TextContent,
    #[agent_message(content)]
    image: ImageContent,
}

fn main() {}
