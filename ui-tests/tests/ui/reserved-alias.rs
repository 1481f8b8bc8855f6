use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "note", aliases = ["notice", "user"])]
struct Note {
    text: String,
}

fn main() {}
