//! Whatever the bytes, decoding a line or a transcript returns a value or a typed
//! error and never panics; any JSON object with an unregistered kind is kept byte
//! for byte, wherever its role is.

use agentmsg::{decode_line, AgentMessage, DecodeMode, JsonlReader, Registry};
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
        let line = r#"{"role":"fuzzNote","text":"a \"quoted\" {brace}","v":2,"id":"x","extra":[1,{"role":"user"}]}"#;
        let cut = cut.min(line.len());
        let text = format!("{}{}{}", &line[..cut], splice, &line[cut..]);
        let registry = Registry::new().with::<FuzzNote>();
        for mode in [DecodeMode::Lenient, DecodeMode::Strict] {
            let _ = decode_line(&text, &registry, mode);
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
