use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "event")]
enum Event {
    Started { at: u64 },
    Stopped { at: u64 },
}

fn main() {}
