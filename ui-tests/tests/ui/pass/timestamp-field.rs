use agentmsg::{AgentMessage, CustomMessage};

use serde::{Deserialize, Serialize};

// A type that keeps its time in a field of its own, under another key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]
#[agent_message(kind = "reading")]
struct Reading {
    #[agent_message(timestamp)]
    at: Option<u64>,
    value: f64,
}

fn main() {
    let reading = Reading {
        at: Some(5),
        value: 1.0,
    };
    assert_eq!(reading.timestamp(), Some(5));
    const { assert!(Reading::TIMESTAMP_FIELD) };
    assert_eq!(<agentmsg::AgentMessage as From<Reading>>::from(reading).timestamp(), Some(5));
}
