//! `crate = path` for a renamed dependency.
extern crate agentmsg as messages;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, messages::AgentMessage)]
#[agent_message(kind = "ping", crate = messages)]
struct Ping {}

fn main() {
    use messages::CustomMessage;
    assert_eq!(Ping::KIND, "ping");
}
