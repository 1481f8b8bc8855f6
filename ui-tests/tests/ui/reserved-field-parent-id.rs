use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

// `parentId` is the envelope's key: the session would take `p1` as the
// entry's parent, and the line would not read back as a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "task")]
struct Task {
    title: String,
    parent_id: String,
}

fn main() {}
