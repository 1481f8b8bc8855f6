use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "approval", to_llm = with(Approval::render))]
struct Approval {
    granted: bool,
}

impl Approval {
    fn render(&self) -> String {
        format!("granted: {}", self.granted)
    }
}

fn main() {}
