use agentmsg::AgentMessage;
use serde::{Deserialize, Serialize};

// pi's built-in kinds: agentmsg reads them itself, so an app type claiming
// one would leave its lines to neither type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "bashExecution")]
struct MyBash {
    command: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "custom")]
struct MyCustom {
    text: String,
}

fn main() {}
