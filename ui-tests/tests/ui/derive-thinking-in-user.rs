use agentmsg::{AgentMessage, ThinkingContent};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "musing", to_llm = user)]
struct Musing {
    #[agent_message(content)]
    thought: ThinkingContent,
}

fn main() {}
