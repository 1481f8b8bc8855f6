use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("{from asks"))]
struct AgentCall {
    from: String,
}

fn main() {}
