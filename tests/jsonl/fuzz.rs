//! Whatever the bytes, decoding a line or a transcript returns a value or a typed
//! error and never panics; any JSON object with an unregistered kind is kept byte
//! for byte, wherever its role is.

use agentmsg::custom::Registry;
use agentmsg::transcript::{decode_line, DecodeMode};
use agentmsg::{AgentMessage, JsonlReader};
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "fuzzNote", version = 2)]
struct FuzzNote {
    text: String,
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        "[a-z\"\\\\{}:,\\[\\] ]{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map("[a-zA-Z]{1,6}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,80}", strict in any::<bool>()) {
        let mode = if strict { DecodeMode::Strict } else { DecodeMode::Lenient };
        let registry = Registry::new().with::<FuzzNote>();
        let _ = decode_line(&text, &registry, mode);
        let _ = JsonlReader::new(text.as_bytes()).with_registry(&registry).mode(mode).count();
        let _ = serde_json::from_str::<AgentMessage>(&text);
    }

    #[test]
    fn cut_and_spliced_lines_never_panic(cut in 0usize..200, splice in "[{}\\[\\]\",:\\\\ a-z0-9]{0,6}") {
        let lines = [
            r#"{"role":"fuzzNote","text":"a \"quoted\" {brace}","v":2,"id":"x","extra":[1,{"role":"user"}]}"#,
            r#"{"role":"user","content":[{"type":"text","text":"a {b}"}],"timestamp":5,"id":"m","turnId":"t"}"#,
        ];
        let registry = Registry::new().with::<FuzzNote>();
        for line in lines {
            let cut = cut.min(line.len());
            let text = format!("{}{}{}", &line[..cut], splice, &line[cut..]);
            for mode in [DecodeMode::Lenient, DecodeMode::Strict] {
                // Whatever decodes into a type was one well-formed JSON object.
                if let Ok(AgentMessage::Llm(_) | AgentMessage::Custom(_)) = decode_line(&text, &registry, mode) {
                    let parsed = serde_json::from_str::<serde_json::Value>(&text);
                    prop_assert!(parsed.is_ok_and(|v| v.is_object()), "{}", text);
                }
            }
        }
    }

    #[test]
    fn kept_lines_know_whether_they_are_json(cut in 0usize..160, splice in "[{}\\[\\]\",:\\\\ a-z0-9]{0,6}") {
        // An unregistered kind is kept without being parsed; `validate`, `id` and
        // `turn_id` parse it on first use and must agree with a full parse.
        let line = r#"{"role":"someday","text":"a \"quoted\" {brace}","id":"m1","turnId":"t1","extra":[1,{"id":"inner"}]}"#;
        let cut = cut.min(line.len());
        let text = format!("{}{}{}", &line[..cut], splice, &line[cut..]);
        let parsed = serde_json::from_str::<serde_json::Value>(&text).ok().filter(|v| v.is_object());
        match decode_line(&text, &Registry::empty(), DecodeMode::Lenient) {
            Ok(AgentMessage::Unknown(kept)) => {
                prop_assert_eq!(kept.raw(), text.as_str());
                prop_assert_eq!(kept.validate().is_ok(), parsed.is_some(), "{}", text);
                let id = parsed.as_ref().and_then(|v| v.get("id")).and_then(|v| v.as_str());
                prop_assert_eq!(kept.id().map(|id| id.as_str()), id);
                let turn = parsed.as_ref().and_then(|v| v.get("turnId")).and_then(|v| v.as_str());
                prop_assert_eq!(kept.turn_id().map(|t| t.as_str()), turn);
                if let Some(value) = &parsed {
                    prop_assert_eq!(Some(kept.kind()), value.get("role").and_then(|r| r.as_str()));
                }
            }
            Ok(other) => prop_assert!(false, "{text} decoded as {other:?}"),
            // Not kept: then it is not an object (or has no string role).
            Err(_) => prop_assert!(parsed.as_ref().and_then(|v| v.get("role")).and_then(|r| r.as_str()).is_none(), "{}", text),
        }
    }

    #[test]
    fn unregistered_objects_are_kept_exactly(
        fields in prop::collection::btree_map("[a-zA-Z]{1,6}", json_value(), 0..5),
        position in 0usize..6,
        kind in "[a-z][a-zA-Z]{0,10}",
    ) {
        prop_assume!(!matches!(kind.as_str(), "user" | "system" | "assistant" | "toolResult"));
        let mut entries: Vec<String> = fields
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "role" | "id" | "turnId" | "v"))
            .map(|(k, v)| format!("{}: {}", serde_json::to_string(k).unwrap(), v))
            .collect();
        let at = position.min(entries.len());
        entries.insert(at, format!("\"role\" : \"{kind}\""));
        let line = format!("{{ {} }}", entries.join(" , "));
        let kept = decode_line(&line, &Registry::empty(), DecodeMode::Lenient).unwrap();
        let unknown = kept.as_unknown().unwrap();
        prop_assert_eq!(unknown.raw(), line.as_str());
        prop_assert_eq!(unknown.kind(), kind.as_str());
        prop_assert_eq!(kept.to_line().unwrap(), line);
    }
}
