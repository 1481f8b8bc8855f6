use agentmsg::{AgentMessage, AudioContent, TextContent};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "recording", to_llm = assistant)]
struct Recording {
    #[agent_message(content)]
    caption: TextContent,
    #[agent_message(content)]
    clip: AudioContent,
}

fn main() {}
