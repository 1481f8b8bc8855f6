use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "agentCall", to_llm = user("[Request from {sender}]: {request}"))]
struct AgentCall {
    from: String,
    request: String,
}

fn main() {}
