//! The envelope and the registry, with custom types implemented by hand (the
//! derive is tested in the other `derive_*` files).

use agentmsg::custom::{
    AppMessage, BranchSummary, CompactionSummary, ExtensionMessage, Registry, RegistryError,
};
use agentmsg::transcript::{decode_line, DecodeError, DecodeMode, UnknownReason};
use agentmsg::{AgentMessage, CustomMessage, Message, MessageId, TurnId};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Note {
    text: String,
}

impl CustomMessage for Note {
    const KIND: &'static str = "note";
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Vote {
    choice: String,
    weight: u32,
}

impl CustomMessage for Vote {
    const KIND: &'static str = "vote";
    const VERSION: u32 = 3;
    const ALIASES: &'static [&'static str] = &["ballot"];

    fn to_llm(&self) -> Vec<Message> {
        vec![Message::user(format!("vote: {}", self.choice))]
    }

    fn migrate(
        from: u32,
        mut value: serde_json::Value,
    ) -> Result<serde_json::Value, agentmsg::custom::MigrateError> {
        let map = value
            .as_object_mut()
            .ok_or_else(|| agentmsg::custom::MigrateError::new("not an object"))?;
        if from <= 1 {
            let pick = map
                .remove("pick")
                .ok_or_else(|| agentmsg::custom::MigrateError::new("v1 vote without `pick`"))?;
            map.insert("choice".into(), pick);
        }
        if from <= 2 {
            map.insert("weight".into(), 1.into());
        }
        Ok(value)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct OtherNote {
    body: String,
}

impl CustomMessage for OtherNote {
    const KIND: &'static str = "note";
}

fn registry() -> Registry {
    Registry::new().with::<Note>().with::<Vote>()
}

fn lenient(line: &str) -> AgentMessage {
    decode_line(line, &registry(), DecodeMode::Lenient).unwrap()
}

#[test]
fn custom_line_round_trips_role_first_envelope_last() {
    let message = AgentMessage::custom(Note { text: "hi".into() })
        .with_id(Some(MessageId::from("m1")))
        .with_turn_id(Some(TurnId::from("t1")))
        .with_timestamp(5);
    let line = message.to_line().unwrap();
    assert_eq!(
        line,
        r#"{"role":"note","text":"hi","timestamp":5,"id":"m1","turnId":"t1"}"#
    );
    assert_eq!(serde_json::to_string(&message).unwrap(), line);
    let back = lenient(&line);
    assert_eq!(back, message);
    assert_eq!(back.downcast_ref::<Note>().unwrap().text, "hi");
    assert_eq!(back.kind(), "note");
    assert_eq!(back.id().unwrap().as_str(), "m1");
    assert_eq!(back.turn_id().unwrap().as_str(), "t1");
    assert!(back.as_llm().is_none());
    assert!(back.downcast_ref::<Vote>().is_none());
}

#[test]
fn role_anywhere_is_found() {
    let back = lenient(r#"{"id":"x","text":"late","role":"note"}"#);
    assert_eq!(
        back.downcast_ref::<Note>(),
        Some(&Note {
            text: "late".into()
        })
    );
    assert_eq!(back.id().unwrap().as_str(), "x");
}

#[test]
fn version_written_above_one_and_checked() {
    let vote = AgentMessage::custom(Vote {
        choice: "a".into(),
        weight: 2,
    })
    .with_timestamp(5);
    assert_eq!(
        vote.to_line().unwrap(),
        r#"{"role":"vote","choice":"a","weight":2,"timestamp":5,"v":3}"#
    );
    // Newer than compiled: kept byte for byte.
    let newer = r#"{"role":"vote","choice":"a","weight":2,"v":4}"#;
    let kept = lenient(newer);
    let unknown = kept.as_unknown().unwrap();
    assert_eq!(unknown.raw(), newer);
    assert_eq!(
        unknown.reason(),
        &UnknownReason::NewerVersion {
            found: 4,
            supported: 3
        }
    );
    assert_eq!(kept.to_line().unwrap(), newer);
    // Strict: an error naming the kind.
    let err = decode_line(newer, &registry(), DecodeMode::Strict).unwrap_err();
    assert!(
        matches!(&err, DecodeError::Rejected { kind, .. } if kind == "vote"),
        "{err}"
    );
    assert!(err.to_string().contains("version 4"), "{err}");
}

#[test]
fn older_versions_migrate() {
    // No `v` means version 1.
    let v1 = lenient(r#"{"role":"vote","pick":"b","id":"i1"}"#);
    assert_eq!(
        v1.downcast_ref::<Vote>(),
        Some(&Vote {
            choice: "b".into(),
            weight: 1
        })
    );
    assert_eq!(v1.id().unwrap().as_str(), "i1");
    let v2 = lenient(r#"{"role":"ballot","choice":"c","v":2}"#);
    assert_eq!(
        v2.downcast_ref::<Vote>(),
        Some(&Vote {
            choice: "c".into(),
            weight: 1
        })
    );
    let failed = lenient(r#"{"role":"vote","nothing":true}"#);
    assert!(
        matches!(failed.as_unknown().unwrap().reason(), UnknownReason::Migration { from: 1, error } if error.contains("pick")),
        "{failed:?}"
    );
}

#[test]
fn unknown_kind_kept_exactly_and_strict_rejects() {
    let line = r#"{ "role" : "mystery",  "x":[1,2,{"role":"user"}], "id":"u1" , "turnId":"t9"}"#;
    let kept = lenient(line);
    let unknown = kept.as_unknown().unwrap();
    assert_eq!(unknown.raw(), line);
    assert_eq!(unknown.kind(), "mystery");
    assert_eq!(unknown.reason(), &UnknownReason::UnknownKind);
    assert_eq!(kept.id().unwrap().as_str(), "u1");
    assert_eq!(kept.turn_id().unwrap().as_str(), "t9");
    assert_eq!(kept.to_line().unwrap(), line);
    let err = decode_line(line, &registry(), DecodeMode::Strict).unwrap_err();
    assert_eq!(
        err,
        DecodeError::Rejected {
            kind: "mystery".into(),
            reason: UnknownReason::UnknownKind
        }
    );
}

#[test]
fn invalid_bodies_are_kept_with_the_reason() {
    let kept = lenient(r#"{"role":"note","text":5}"#);
    let reason = kept.as_unknown().unwrap().reason().to_string();
    assert!(reason.contains("invalid type"), "{reason}");
    let kept = lenient(r#"{"role":"assistant","content":"nope"}"#);
    assert_eq!(kept.kind(), "assistant");
    assert!(kept.is_unknown());
}

#[test]
fn lines_that_are_not_objects_are_errors() {
    let r = registry();
    assert!(matches!(
        decode_line("{\"role\":\"note\"", &r, DecodeMode::Lenient),
        Err(DecodeError::NotJson(_))
    ));
    assert!(matches!(
        decode_line("[1]", &r, DecodeMode::Lenient),
        Err(DecodeError::NotJson(_))
    ));
    assert_eq!(
        decode_line(r#"{"text":"x"}"#, &r, DecodeMode::Lenient),
        Err(DecodeError::MissingRole)
    );
    assert_eq!(
        decode_line(r#"{"role":1}"#, &r, DecodeMode::Lenient),
        Err(DecodeError::RoleNotString)
    );
    // An unknown kind followed by garbage is not kept.
    assert!(decode_line(r#"{"role":"zzz",]"#, &r, DecodeMode::Lenient).is_err());
    assert!(decode_line(r#"{"role":"zzz","x":[1,"#, &r, DecodeMode::Lenient).is_err());
}

#[test]
fn unclaimed_lines_are_kept_unparsed_and_checked_on_demand() {
    // No decoder claims the kind, so only the braces and the role are checked
    // when the line is read; the bytes survive either way.
    let merged = r#"{"role":"zzz","x":"ab{"role":"user","content":"hi","id":"u"}"#;
    let kept = lenient(merged);
    let unknown = kept.as_unknown().unwrap();
    assert_eq!(unknown.raw(), merged);
    assert_eq!(unknown.kind(), "zzz");
    assert_eq!(kept.to_line().unwrap(), merged);
    assert!(matches!(unknown.validate(), Err(DecodeError::NotJson(e)) if e.contains("column")));
    assert_eq!(kept.id(), None);
    // A well-formed one validates, wherever its role is and however it is spelt.
    for (line, kind) in [
        (r#"{"x":1,"id":"a","role":"zzz"}"#, "zzz"),
        (r#"{"x":1, "role" : "z\u007az", "id":"a"}"#, "zzz"),
        (r#"{"role":"z\"q","id":"a"}"#, "z\"q"),
    ] {
        let kept = lenient(line);
        let unknown = kept.as_unknown().unwrap();
        assert_eq!((unknown.raw(), unknown.kind()), (line, kind));
        assert_eq!(unknown.validate(), Ok(()));
        assert_eq!(kept.id().map(|id| id.as_str()), Some("a"));
        // Clones and comparisons see the same line, parsed or not.
        let copy = kept.clone();
        assert_eq!(copy, lenient(line));
    }
    // A newer version of a known kind is kept the same way.
    let newer = r#"{"role":"note","text":"x","v":9,"turnId":"t"}"#;
    let kept = lenient(newer);
    assert!(matches!(
        kept.as_unknown().unwrap().reason(),
        UnknownReason::NewerVersion { found: 9, .. }
    ));
    assert_eq!(kept.turn_id().map(|t| t.as_str()), Some("t"));
}

#[test]
fn llm_lines_decode_with_envelope() {
    let line = r#"{"role":"user","content":"hi","timestamp":5,"turnId":"t"}"#;
    let m = lenient(line);
    assert_eq!(m.as_llm().unwrap().as_user().unwrap().text(), "hi");
    assert_eq!(m.turn_id().unwrap().as_str(), "t");
    assert_eq!(m.kind(), "user");
}

#[test]
fn duplicate_kinds_name_both_types_and_decode_to_neither() {
    let r = registry().with::<OtherNote>();
    let dup = r.check().unwrap_err();
    assert_eq!(dup.kind, "note");
    let msg = dup.to_string();
    assert!(msg.contains("Note") && msg.contains("OtherNote"), "{msg}");
    assert!(matches!(
        r.resolve("note"),
        Err(RegistryError::Duplicate(_))
    ));
    let kept = decode_line(r#"{"role":"note","text":"x"}"#, &r, DecodeMode::Lenient).unwrap();
    assert!(matches!(
        kept.as_unknown().unwrap().reason(),
        UnknownReason::AmbiguousKind { .. }
    ));
    // Registering the same type twice is not a duplicate.
    assert!(registry().with::<Note>().check().is_ok());
}

#[test]
fn unknown_kind_error_lists_known_kinds() {
    let err = registry().resolve("nope").unwrap_err();
    let text = err.to_string();
    for kind in [
        "note",
        "vote",
        "ballot",
        "compactionSummary",
        "branchSummary",
        "extension",
    ] {
        assert!(text.contains(kind), "{text}");
    }
    assert!(Registry::empty().kinds().is_empty());
}

#[test]
fn global_registry_has_builtins_and_generic_serde_works() {
    let kinds = Registry::global().kinds();
    for kind in ["compactionSummary", "branchSummary", "extension"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    let text = r#"[
        {"role":"user","content":"hi"},
        {"role":"compactionSummary","summary":"s","tokensBefore":10},
        {"role":"extension","kind":"debug","data":{"a":1},"id":"e"},
        {"role":"unheardOf","z":1,"a":2,"v":1,"id":"q"}
    ]"#;
    let messages: Vec<AgentMessage> = serde_json::from_str(text).unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[1]
            .downcast_ref::<CompactionSummary>()
            .unwrap()
            .tokens_before,
        10
    );
    assert_eq!(
        messages[2].downcast_ref::<ExtensionMessage>().unwrap().kind,
        "debug"
    );
    let unknown = messages[3].as_unknown().unwrap();
    assert_eq!(
        unknown.raw(),
        r#"{"role":"unheardOf","a":2,"z":1,"id":"q","v":1}"#
    );
    assert_eq!(unknown.id().unwrap().as_str(), "q");
    let again = serde_json::to_string(&messages).unwrap();
    let back: Vec<AgentMessage> = serde_json::from_str(&again).unwrap();
    assert_eq!(back, messages);
}

#[test]
fn conversions_and_downcast_by_value() {
    let m: AgentMessage = Message::user("x").into();
    assert!(m.is_llm());
    let c: AgentMessage = BranchSummary::new("b").into();
    assert!(c.is_custom());
    let AgentMessage::Custom(entry) = c else {
        panic!()
    };
    let entry: AppMessage = entry.downcast::<Note>().unwrap_err();
    assert_eq!(entry.downcast::<BranchSummary>().unwrap().summary, "b");
}

#[test]
fn unknown_messages_can_be_made_by_hand_only_from_json_objects() {
    let kept = agentmsg::transcript::UnknownMessage::new(
        r#"{"x":1,"role":"later","turnId":"t"}"#,
        UnknownReason::UnknownKind,
    )
    .unwrap();
    assert_eq!(kept.kind(), "later");
    assert_eq!(kept.turn_id().unwrap().as_str(), "t");
    assert_eq!(kept.to_value().unwrap()["x"], 1);
    let message = AgentMessage::from(kept.clone());
    assert_eq!(serde_json::to_string(&message).unwrap(), kept.raw());
    assert!(
        agentmsg::transcript::UnknownMessage::new("{\"role\":", UnknownReason::UnknownKind)
            .is_err()
    );
    assert!(agentmsg::transcript::UnknownMessage::new("[]", UnknownReason::UnknownKind).is_err());
}
