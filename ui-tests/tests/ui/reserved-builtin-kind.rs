use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

// A built-in kind: its lines would become unknown and vanish from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "compactionSummary")]
struct MySummary {
    summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "myBranch", aliases = ["branchSummary"])]
struct MyBranch {
    summary: String,
}

fn main() {}
