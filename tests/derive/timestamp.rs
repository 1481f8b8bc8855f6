//! Custom messages carry the time they were made (issue 26): in the envelope
//! (`"timestamp"`, Unix milliseconds), read back on every path, projected and
//! kept by sessions; lines written before it read with none.

use agentmsg::custom::{BashExecution, Registry};
use agentmsg::transcript::{decode_line, DecodeMode};
use agentmsg::{to_llm, AgentMessage, CustomMessage, Message, Session};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "stampedApproval", to_llm = with(StampedApproval::render))]
struct StampedApproval {
    tool_call_id: String,
    granted: bool,
}

impl StampedApproval {
    fn render(&self) -> Vec<Message> {
        // `Message::user` stamps the projection's own time; the entry's wins.
        vec![Message::user(format!(
            "{} granted: {}",
            self.tool_call_id, self.granted
        ))]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "stampedNote", to_llm = user("note: {text}"))]
struct StampedNote {
    text: String,
}

/// A type that keeps its time in a field of its own, as pi's kinds do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "ownTime", to_llm = user("at {timestamp}: {text}"))]
struct OwnTime {
    text: String,
    #[agent_message(timestamp)]
    timestamp: u64,
}

/// Versioned, so an old line goes through the migration path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "stampedVote", version = 2, migrate = vote_from_v1)]
struct StampedVote {
    choice: String,
}

fn vote_from_v1(_from: u32, value: serde_json::Value) -> Result<serde_json::Value, String> {
    let pick = value.get("pick").cloned().ok_or("no `pick`")?;
    Ok(serde_json::json!({ "choice": pick }))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn a_custom_message_is_stamped_when_made_and_reads_back_on_every_path() {
    let before = now_ms();
    let message = AgentMessage::from(StampedApproval {
        tool_call_id: "toolu_1".into(),
        granted: true,
    });
    let after = now_ms();
    let at = message.timestamp().expect("stamped when made");
    assert!(
        (before..=after).contains(&at),
        "{before} <= {at} <= {after}"
    );

    let line = message.to_line().unwrap();
    assert_eq!(
        line,
        format!(
            r#"{{"role":"stampedApproval","toolCallId":"toolu_1","granted":true,"timestamp":{at}}}"#
        )
    );
    // The transcript reader, the generic serde impl and a strict read agree.
    let read = AgentMessage::from_line(&line).unwrap();
    assert_eq!(read, message);
    assert_eq!(read.timestamp(), Some(at));
    let generic: AgentMessage = serde_json::from_str(&line).unwrap();
    assert_eq!(generic, message);
    let strict = decode_line(&line, Registry::global(), DecodeMode::Strict).unwrap();
    assert_eq!(strict.timestamp(), Some(at));
    // The key is the envelope's: the type never sees it, so a
    // `deny_unknown_fields` type would not refuse it either.
    assert_eq!(
        read.downcast_ref::<StampedApproval>().unwrap().tool_call_id,
        "toolu_1"
    );
    // The key may stand anywhere in the line.
    let first = format!(
        r#"{{"timestamp":{at},"role":"stampedApproval","toolCallId":"toolu_1","granted":true}}"#
    );
    assert_eq!(
        AgentMessage::from_line(&first).unwrap().timestamp(),
        Some(at)
    );
    let generic: AgentMessage = serde_json::from_str(&first).unwrap();
    assert_eq!(generic.timestamp(), Some(at));
}

#[test]
fn old_lines_without_a_time_still_read_and_write_back_unchanged() {
    let old = r#"{"role":"stampedApproval","toolCallId":"toolu_1","granted":false}"#;
    let read = AgentMessage::from_line(old).unwrap();
    assert!(read.as_custom().is_some(), "{read:?}");
    assert_eq!(read.timestamp(), None);
    assert_eq!(read.to_line().unwrap(), old);
    let generic: AgentMessage = serde_json::from_str(old).unwrap();
    assert_eq!(generic.timestamp(), None);
    // An old version migrates and keeps the line's time.
    let v1 = r#"{"role":"stampedVote","pick":"b","timestamp":42}"#;
    let migrated = AgentMessage::from_line(v1).unwrap();
    assert_eq!(
        migrated
            .downcast_ref::<StampedVote>()
            .map(|v| v.choice.as_str()),
        Some("b")
    );
    assert_eq!(migrated.timestamp(), Some(42));
    let generic: AgentMessage = serde_json::from_str(v1).unwrap();
    assert_eq!(generic.timestamp(), Some(42));
}

#[test]
fn a_time_that_is_not_milliseconds_keeps_the_line_and_says_why() {
    for line in [
        r#"{"role":"stampedNote","text":"x","timestamp":"yesterday"}"#,
        r#"{"role":"stampedNote","text":"x","timestamp":-5}"#,
    ] {
        let kept = AgentMessage::from_line(line).unwrap();
        let reason = kept.as_unknown().expect("kept").reason().to_string();
        assert!(reason.contains("timestamp"), "{line}: {reason}");
        assert_eq!(kept.to_line().unwrap(), line, "kept byte for byte");
        let generic: AgentMessage = serde_json::from_str(line).unwrap();
        let reason = generic.as_unknown().expect("kept").reason().to_string();
        assert!(reason.contains("timestamp"), "{line}: {reason}");
        assert!(decode_line(line, Registry::global(), DecodeMode::Strict).is_err());
    }
}

#[test]
fn the_projected_message_carries_the_time() {
    let note = AgentMessage::from(StampedNote { text: "hi".into() }).with_timestamp(1765238302057);
    let approval = AgentMessage::from(StampedApproval {
        tool_call_id: "t".into(),
        granted: true,
    })
    .with_timestamp(1765238302058);
    let messages = [note, approval];
    let projected = to_llm(&messages);
    assert_eq!(projected.len(), 2);
    assert_eq!(projected[0].text(), "note: hi");
    assert_eq!(projected[0].timestamp(), 1765238302057);
    assert_eq!(projected[1].timestamp(), 1765238302058);
    // Projecting twice gives the same messages.
    let again = AgentMessage::from_line(
        r#"{"role":"stampedApproval","toolCallId":"t","granted":true,"timestamp":9}"#,
    )
    .unwrap();
    let once = to_llm(std::slice::from_ref(&again))[0].clone().into_owned();
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert_eq!(to_llm(std::slice::from_ref(&again))[0].as_ref(), &once);
    assert_eq!(once.timestamp(), 9);
}

#[test]
fn a_type_with_its_own_time_field_writes_one_key_and_reports_it() {
    const { assert!(OwnTime::TIMESTAMP_FIELD) };
    const { assert!(!StampedNote::TIMESTAMP_FIELD) };
    let own = OwnTime {
        text: "x".into(),
        timestamp: 77,
    };
    let message = AgentMessage::from(own.clone());
    assert_eq!(message.timestamp(), Some(77));
    // The field is the time: setting one on the entry changes nothing.
    assert_eq!(message.clone().with_timestamp(5), message);
    let line = message.to_line().unwrap();
    assert_eq!(line, r#"{"role":"ownTime","text":"x","timestamp":77}"#);
    let read = AgentMessage::from_line(&line).unwrap();
    assert_eq!(read.downcast_ref::<OwnTime>(), Some(&own));
    assert_eq!(read.timestamp(), Some(77));
    let generic: AgentMessage = serde_json::from_str(&line).unwrap();
    assert_eq!(generic.downcast_ref::<OwnTime>(), Some(&own));
    assert_eq!(to_llm(std::slice::from_ref(&read))[0].timestamp(), 77);
    // pi's kinds are such types.
    let bash = AgentMessage::from_line(
        r#"{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1765238302057}"#,
    )
    .unwrap();
    assert!(bash.downcast_ref::<BashExecution>().is_some());
    assert_eq!(bash.timestamp(), Some(1765238302057));
}

#[test]
fn a_session_entry_has_its_custom_message_time() {
    let mut session = Session::new();
    session.append(Message::user("hi").into()).unwrap();
    let id = session
        .append(AgentMessage::from(StampedNote { text: "n".into() }).with_timestamp(5))
        .unwrap();
    let entry = session
        .entries()
        .iter()
        .find(|e| e.id() == Some(&id))
        .unwrap();
    assert_eq!(entry.timestamp(), 5);
}
