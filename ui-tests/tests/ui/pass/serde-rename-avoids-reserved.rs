//! A field whose Rust name is reserved is fine once serde writes another key,
//! and `rename_all` is taken into account.
use agentmsg::AgentMessage;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "handoff", aliases = ["transfer"])]
struct Handoff {
    #[serde(rename = "targetId")]
    id: String,
    #[serde(rename(serialize = "roleName", deserialize = "roleName"))]
    role: String,
    turn_count: u32,
    r#v2: bool,
}

fn main() {
    let line = agentmsg::AgentMessage::from(Handoff {
        id: "a".into(),
        role: "b".into(),
        turn_count: 1,
        r#v2: true,
    })
    .with_timestamp(5)
    .to_line()
    .unwrap();
    assert_eq!(
        line,
        r#"{"role":"handoff","targetId":"a","roleName":"b","turnCount":1,"v2":true,"timestamp":5}"#
    );
}
