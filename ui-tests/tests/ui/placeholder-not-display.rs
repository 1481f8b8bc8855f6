use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("{from} asks: {args}"))]
struct AgentCall {
    from: String,
    args: Vec<String>,
}

fn main() {}
