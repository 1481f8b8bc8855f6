//! Round trips of every type of the transcript format: decode(encode(x)) == x,
//! from our writer's bytes and from the same object with its keys reordered.

use std::fmt::Debug;

use agentmsg::message::{MediaSource, RawJson};
use agentmsg::{
    AssistantContent, AssistantMessage, AudioContent, Content, Cost, DocumentContent, ImageContent,
    LlmMessage, Message, MessageId, ProviderBlock, RedactedThinkingContent, Role, StopReason,
    SystemMessage, TextContent, ThinkingContent, ToolArguments, ToolCall, ToolResultContent,
    ToolResultMessage, TurnId, Usage, UserContent, UserMessage,
};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// decode(encode(x)) == x from our bytes; and from the keys in sorted order
/// (which puts `role` and `type` after other keys, so readers must look for
/// them) the same value, tool-call arguments then in that sorted order.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    x: &T,
) -> Result<(), TestCaseError> {
    let text = serde_json::to_string(x).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T =
        serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("{e} in {text}")))?;
    prop_assert_eq!(&back, x);
    let sorted = serde_json::to_string(&serde_json::from_str::<Value>(&text).unwrap()).unwrap();
    let back: T = serde_json::from_str(&sorted)
        .map_err(|e| TestCaseError::fail(format!("{e} in {sorted}")))?;
    prop_assert_eq!(
        serde_json::to_value(&back).unwrap(),
        serde_json::to_value(x).unwrap()
    );
    Ok(())
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".*", "[a-zA-Z0-9 _.-]{0,12}"]
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO,
        (0u32..1_000_000).prop_map(|n| f64::from(n) / 1e6),
        any::<u32>().prop_map(f64::from),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        finite().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::btree_map(text(), json(), 0..4).prop_map(|m| m.into_iter().collect())
}

/// Tool-call arguments in an order of their own (not sorted), nested objects
/// too: a round trip must keep it.
fn ordered_arguments() -> impl Strategy<Value = ToolArguments> {
    prop::collection::vec((text(), json_object()), 0..4).prop_map(|entries| {
        let mut seen = std::collections::HashSet::new();
        let fields: Vec<String> = entries
            .into_iter()
            .rev()
            .filter(|(key, _)| seen.insert(key.clone()))
            .map(|(key, inner)| {
                // The inner object's keys reversed: not serde_json's order.
                let inner: Vec<String> = inner
                    .iter()
                    .rev()
                    .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                    .collect();
                format!("{}:{{{}}}", Value::from(key.as_str()), inner.join(","))
            })
            .collect();
        ToolArguments::from_json(&format!("{{{}}}", fields.join(","))).expect("an object")
    })
}

fn text_block() -> impl Strategy<Value = TextContent> {
    let citations = json().prop_filter("`null` is no citations", |v| !v.is_null());
    (
        text(),
        prop::option::of(text()),
        prop::option::of(citations),
    )
        .prop_map(|(text, signature, citations)| TextContent {
            text,
            signature,
            citations: citations.map(|c| RawJson::from_value(&c)),
        })
}

fn provider_block() -> impl Strategy<Value = ProviderBlock> {
    (text(), json_object()).prop_map(|(api, block)| {
        ProviderBlock::new(api, RawJson::from_value(&Value::Object(block)))
    })
}

fn source() -> impl Strategy<Value = MediaSource> {
    prop_oneof![
        (text(), text()).prop_map(|(data, mime_type)| MediaSource::Base64 { data, mime_type }),
        text().prop_map(MediaSource::Url),
    ]
}

fn image() -> impl Strategy<Value = ImageContent> {
    source().prop_map(|source| ImageContent { source })
}

fn audio() -> impl Strategy<Value = AudioContent> {
    (text(), text()).prop_map(|(data, mime_type)| AudioContent { data, mime_type })
}

fn document() -> impl Strategy<Value = DocumentContent> {
    (source(), prop::option::of(text()))
        .prop_map(|(source, title)| DocumentContent { source, title })
}

fn thinking() -> impl Strategy<Value = ThinkingContent> {
    (text(), prop::option::of(text())).prop_map(|(thinking, signature)| ThinkingContent {
        thinking,
        signature,
    })
}

fn redacted() -> impl Strategy<Value = RedactedThinkingContent> {
    text().prop_map(RedactedThinkingContent::new)
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        text(),
        text(),
        ordered_arguments(),
        prop::option::of(text()),
    )
        .prop_map(|(id, name, arguments, signature)| ToolCall {
            id,
            name,
            arguments,
            signature,
        })
}

fn user_content() -> impl Strategy<Value = UserContent> {
    prop_oneof![
        text_block().prop_map(UserContent::Text),
        image().prop_map(UserContent::Image),
        audio().prop_map(UserContent::Audio),
        document().prop_map(UserContent::Document),
    ]
}

fn assistant_content() -> impl Strategy<Value = AssistantContent> {
    prop_oneof![
        text_block().prop_map(AssistantContent::Text),
        image().prop_map(AssistantContent::Image),
        thinking().prop_map(AssistantContent::Thinking),
        redacted().prop_map(AssistantContent::RedactedThinking),
        tool_call().prop_map(AssistantContent::ToolCall),
        provider_block().prop_map(AssistantContent::ProviderBlock),
    ]
}

fn tool_result_content() -> impl Strategy<Value = ToolResultContent> {
    prop_oneof![
        text_block().prop_map(ToolResultContent::Text),
        image().prop_map(ToolResultContent::Image),
    ]
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        user_content().prop_map(Content::from),
        assistant_content().prop_map(Content::from),
    ]
}

fn stop_reason() -> impl Strategy<Value = StopReason> {
    prop::sample::select(StopReason::ALL.to_vec())
}

fn cost() -> impl Strategy<Value = Cost> {
    (finite(), finite(), finite(), finite(), finite()).prop_map(
        |(input, output, cache_read, cache_write, total)| Cost {
            input,
            output,
            cache_read,
            cache_write,
            total,
        },
    )
}

fn usage() -> impl Strategy<Value = Usage> {
    (
        any::<[u64; 6]>(),
        prop::option::of(any::<u64>()),
        prop::option::of(cost()),
    )
        .prop_map(
            |(
                [input, output, reasoning, cache_read, cache_write, cache_write_1h],
                total_tokens,
                cost,
            )| Usage {
                input,
                output,
                reasoning,
                cache_read,
                cache_write,
                cache_write_1h,
                total_tokens,
                cost,
            },
        )
}

fn system() -> impl Strategy<Value = SystemMessage> {
    (prop::collection::vec(text_block(), 0..3), any::<u64>())
        .prop_map(|(content, timestamp)| SystemMessage { content, timestamp })
}

fn user() -> impl Strategy<Value = UserMessage> {
    (prop::collection::vec(user_content(), 0..4), any::<u64>())
        .prop_map(|(content, timestamp)| UserMessage { content, timestamp })
}

fn assistant() -> impl Strategy<Value = AssistantMessage> {
    (
        prop::collection::vec(assistant_content(), 0..4),
        (text(), text(), text()),
        prop::option::of(text()),
        usage(),
        stop_reason(),
        prop::option::of(text()),
        any::<u64>(),
    )
        .prop_map(
            |(
                content,
                (api, provider, model),
                response_id,
                usage,
                stop_reason,
                error_message,
                timestamp,
            )| {
                AssistantMessage {
                    content,
                    api,
                    provider,
                    model,
                    response_id,
                    usage,
                    stop_reason,
                    error_message,
                    timestamp,
                }
            },
        )
}

fn tool_result() -> impl Strategy<Value = ToolResultMessage> {
    (
        (text(), text()),
        prop::collection::vec(tool_result_content(), 0..3),
        any::<bool>(),
        any::<u64>(),
        prop::option::of(json()),
    )
        .prop_map(
            |((tool_call_id, tool_name), content, is_error, timestamp, details)| {
                ToolResultMessage {
                    tool_call_id,
                    tool_name,
                    content,
                    is_error,
                    timestamp,
                    details,
                }
            },
        )
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        system().prop_map(Message::System),
        user().prop_map(Message::User),
        assistant().prop_map(Message::Assistant),
        tool_result().prop_map(Message::ToolResult),
    ]
}

fn llm_message() -> impl Strategy<Value = LlmMessage> {
    (
        message(),
        prop::option::of(text().prop_map(MessageId::from)),
        prop::option::of(text().prop_map(TurnId::from)),
        prop_oneof![
            Just(agentmsg::ParentId::Previous),
            Just(agentmsg::ParentId::Root),
            text().prop_map(|t| agentmsg::ParentId::Id(MessageId::from(t))),
        ],
    )
        .prop_map(|(message, id, turn_id, parent_id)| LlmMessage {
            message,
            id,
            turn_id,
            parent_id,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn text_blocks(x in text_block()) { round_trip(&x)?; }

    #[test]
    fn images(x in image()) { round_trip(&x)?; }

    #[test]
    fn audio_clips(x in audio()) { round_trip(&x)?; }

    #[test]
    fn documents(x in document()) { round_trip(&x)?; }

    #[test]
    fn thinking_blocks(x in thinking()) { round_trip(&x)?; }

    #[test]
    fn redacted_thinking_blocks(x in redacted()) { round_trip(&x)?; }

    #[test]
    fn tool_calls(x in tool_call()) { round_trip(&x)?; }

    #[test]
    fn user_contents(x in user_content()) { round_trip(&x)?; }

    #[test]
    fn assistant_contents(x in assistant_content()) { round_trip(&x)?; }

    #[test]
    fn tool_result_contents(x in tool_result_content()) { round_trip(&x)?; }

    #[test]
    fn contents(x in content()) { round_trip(&x)?; }

    #[test]
    fn roles(x in prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::ToolResult])) {
        round_trip(&x)?;
        prop_assert_eq!(serde_json::to_value(x).unwrap(), Value::from(x.as_str()));
    }

    #[test]
    fn stop_reasons(x in stop_reason()) { round_trip(&x)?; }

    #[test]
    fn costs(x in cost()) { round_trip(&x)?; }

    #[test]
    fn usages(x in usage()) { round_trip(&x)?; }

    #[test]
    fn system_messages(x in system()) { round_trip(&x)?; }

    #[test]
    fn user_messages(x in user()) { round_trip(&x)?; }

    #[test]
    fn assistant_messages(x in assistant()) { round_trip(&x)?; }

    #[test]
    fn tool_result_messages(x in tool_result()) { round_trip(&x)?; }

    #[test]
    fn messages(x in message()) {
        round_trip(&x)?;
        let value = serde_json::to_value(&x).unwrap();
        prop_assert_eq!(value.get("role").and_then(Value::as_str), Some(x.role().as_str()));
    }

    #[test]
    fn llm_messages(x in llm_message()) {
        round_trip(&x)?;
        let value = serde_json::to_value(&x).unwrap();
        prop_assert_eq!(value.get("id").and_then(Value::as_str), x.id.as_ref().map(MessageId::as_str));
        prop_assert_eq!(value.get("turnId").and_then(Value::as_str), x.turn_id.as_ref().map(TurnId::as_str));
        // The same object read as a bare Message drops only the envelope.
        let bare: Message = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        prop_assert_eq!(bare, x.message.clone());
        // Through a `Value` (which sorts keys) it is the same value.
        let through: Message = serde_json::from_value(value).unwrap();
        prop_assert_eq!(serde_json::to_value(through).unwrap(), serde_json::to_value(&x.message).unwrap());
    }

    /// The transcript reader decodes LLM lines through its own wire forms (the
    /// message's fields and the envelope in one decoder); whatever the object,
    /// it must agree with the message types' own `Deserialize`: the same value,
    /// or an error on both sides.
    #[test]
    fn line_reader_agrees_with_the_message_types(
        x in llm_message(),
        drop in prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        extra in prop::option::of(json()),
        string_content in any::<bool>(),
        null_details in any::<bool>(),
    ) {
        let mut value = serde_json::to_value(&x).unwrap();
        let object = value.as_object_mut().unwrap();
        let keys: Vec<String> = object.keys().filter(|k| *k != "role").cloned().collect();
        for index in drop {
            if !keys.is_empty() {
                object.remove(&keys[index.index(keys.len())]);
            }
        }
        if let Some(extra) = extra {
            object.insert("someFutureField".into(), extra);
        }
        if string_content && object.contains_key("content") {
            object.insert("content".into(), Value::from("plain text"));
        }
        if null_details && object.contains_key("toolCallId") {
            object.insert("details".into(), Value::Null);
        }
        let role = object.remove("role").unwrap();
        let rest = serde_json::to_string(&*object).unwrap();
        let body = rest.strip_prefix('{').unwrap().strip_suffix('}').unwrap();
        let sep = if body.is_empty() { "" } else { "," };
        for text in [
            format!("{{\"role\":{role}{sep}{body}}}"),
            format!("{{{body}{sep}\"role\":{role}}}"),
        ] {
            let generic = serde_json::from_str::<LlmMessage>(&text);
            let line = agentmsg::transcript::decode_line(&text, &agentmsg::custom::Registry::new(), agentmsg::transcript::DecodeMode::Strict);
            match (generic, line) {
                (Ok(a), Ok(agentmsg::AgentMessage::Llm(b))) => prop_assert_eq!(a, b, "{}", text),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "{text}\nmessage types: {a:?}\nline reader: {b:?}"),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `dropped_fields` names exactly the keys a message's type lacks: none in
    /// what the writer wrote, and the one key added to it (at the top, in a
    /// content block or in `usage`), with its path.
    #[test]
    fn dropped_fields_are_exactly_the_keys_the_types_lack(
        x in llm_message(),
        // Wrapped in an object, so never a default the writer would leave out
        // (`dropped_fields` does not count those).
        extra in json().prop_map(|v| serde_json::json!({ "value": v })),
        place in any::<prop::sample::Index>(),
    ) {
        let registry = agentmsg::custom::Registry::new();
        let line = agentmsg::AgentMessage::Llm(x).to_line().unwrap();
        let decoded = agentmsg::transcript::decode_line(&line, &registry, agentmsg::transcript::DecodeMode::Strict).unwrap();
        prop_assert_eq!(agentmsg::transcript::dropped_fields(&line, &decoded).unwrap(), Vec::<String>::new());

        let mut value: Value = serde_json::from_str(&line).unwrap();
        let object = value.as_object_mut().unwrap();
        let blocks = object.get("content").and_then(Value::as_array).map_or(0, Vec::len);
        let spots = 1 + blocks + usize::from(object.contains_key("usage"));
        let path = match place.index(spots) {
            0 => {
                object.insert("someFutureField".into(), extra);
                "someFutureField".to_owned()
            }
            i if i <= blocks => {
                let block = &mut object["content"][i - 1];
                block.as_object_mut().unwrap().insert("someFutureField".into(), extra);
                format!("content[{}].someFutureField", i - 1)
            }
            _ => {
                object["usage"].as_object_mut().unwrap().insert("someFutureField".into(), extra);
                "usage.someFutureField".to_owned()
            }
        };
        let line = serde_json::to_string(&value).unwrap();
        let decoded = agentmsg::transcript::decode_line(&line, &registry, agentmsg::transcript::DecodeMode::Strict).unwrap();
        prop_assert_eq!(agentmsg::transcript::dropped_fields(&line, &decoded).unwrap(), vec![path]);
    }
}

#[test]
fn fresh_ids_are_uuid_v7_and_sort_by_creation() {
    let a = MessageId::new();
    let b = MessageId::new();
    assert_eq!(a.as_str().len(), 36);
    assert_eq!(
        a.as_str().as_bytes().get(14),
        Some(&b'7'),
        "version nibble of {a}"
    );
    assert!(a < b, "{a} then {b}");
    assert_eq!(TurnId::new().as_str().as_bytes().get(14), Some(&b'7'));
}

#[test]
fn null_details_are_kept() {
    let line = r#"{"role":"toolResult","toolCallId":"c","toolName":"t","content":[],"isError":false,"details":null}"#;
    let message: Message = serde_json::from_str(line).unwrap();
    assert_eq!(
        message.as_tool_result().and_then(|r| r.details.clone()),
        Some(Value::Null)
    );
    assert_eq!(serde_json::to_string(&message).unwrap(), line);
}

/// serde's own reader of a content block (an internally tagged enum): the
/// reference `Content`'s in-place reader must agree with.
#[derive(serde::Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum SerdeContent {
    Text(TextContent),
    Image(ImageContent),
    Audio(AudioContent),
    Document(DocumentContent),
    Thinking(ThinkingContent),
    RedactedThinking(RedactedThinkingContent),
    ToolCall(ToolCall),
    ProviderBlock(ProviderBlock),
}

impl From<SerdeContent> for Content {
    fn from(block: SerdeContent) -> Self {
        match block {
            SerdeContent::Text(b) => Content::Text(b),
            SerdeContent::Image(b) => Content::Image(b),
            SerdeContent::Audio(b) => Content::Audio(b),
            SerdeContent::Document(b) => Content::Document(b),
            SerdeContent::Thinking(b) => Content::Thinking(b),
            SerdeContent::RedactedThinking(b) => Content::RedactedThinking(b),
            SerdeContent::ToolCall(b) => Content::ToolCall(b),
            SerdeContent::ProviderBlock(b) => Content::ProviderBlock(b),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `Content` reads a block whose `"type"` comes first in place, and buffers
    /// any other; either way it must agree with serde's internally tagged
    /// reader, on the same value or on failing, whatever the order of the keys,
    /// a key dropped, an unknown key, a repeated key or an unknown type.
    #[test]
    fn blocks_read_in_place_agree_with_serde(
        block in content(),
        order in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
        drop in prop::option::of(any::<prop::sample::Index>()),
        extra in prop::option::of(("[a-zA-Z]{1,8}", json())),
        repeat in prop::option::of((any::<prop::sample::Index>(), json())),
        odd_type in prop::option::of(prop_oneof![
            Just(Value::from("video")),
            Just(Value::from(7)),
            Just(Value::Null),
        ]),
        type_first in any::<bool>(),
    ) {
        let Value::Object(object) = serde_json::to_value(&block).unwrap() else {
            unreachable!("a block is an object");
        };
        let mut entries: Vec<(String, Value)> = object.into_iter().collect();
        if let Some(odd) = odd_type {
            for entry in &mut entries {
                if entry.0 == "type" {
                    entry.1 = odd.clone();
                }
            }
        }
        if let Some(index) = drop {
            entries.remove(index.index(entries.len()));
        }
        if let Some(extra) = extra {
            entries.push(extra);
        }
        for index in order {
            let i = index.index(entries.len().max(1));
            if i < entries.len() {
                let entry = entries.remove(i);
                entries.push(entry);
            }
        }
        if type_first {
            if let Some(i) = entries.iter().position(|(k, _)| k == "type") {
                let entry = entries.remove(i);
                entries.insert(0, entry);
            }
        }
        if let Some((index, value)) = repeat {
            if !entries.is_empty() {
                let key = entries[index.index(entries.len())].0.clone();
                entries.push((key, value));
            }
        }
        let body: Vec<String> = entries
            .iter()
            .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
            .collect();
        let text = format!("{{{}}}", body.join(","));
        let ours = serde_json::from_str::<Content>(&text);
        let serde = serde_json::from_str::<SerdeContent>(&text).map(Content::from);
        match (ours, serde) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", text),
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "{text}\nours: {a:?}\nserde: {b:?}"),
        }
    }
}
