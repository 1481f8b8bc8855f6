//! What the fuzz targets share: a registry with custom kinds, how a stream
//! target cuts its input into events, and the checks every decoded reply gets.

use agentmsg::custom::Registry;
use agentmsg::providers::StreamDecode;
use agentmsg::{AgentMessage, AssistantMessage, Message, TextContent};
use libfuzzer_sys::arbitrary::Unstructured;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// A UI-only entry: kept, never sent to a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "notice")]
pub struct Notice {
    pub text: String,
}

/// A versioned kind with a migration, an alias and a projection with a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[serde(rename_all = "camelCase")]
#[agent_message(kind = "approval", version = 2, migrate = approval_from_v1, to_llm = user("Tool call {tool_call_id}: {granted}"), aliases = ["permission"])]
pub struct Approval {
    pub tool_call_id: String,
    pub granted: bool,
}

/// v1 stored `{"call": "...", "ok": "yes"|"no"}`.
fn approval_from_v1(from: u32, value: serde_json::Value) -> Result<serde_json::Value, String> {
    if from != 1 {
        return Err(format!("no migration from {from}"));
    }
    let call = value
        .get("call")
        .and_then(|v| v.as_str())
        .ok_or("no `call`")?;
    let ok = value.get("ok").and_then(|v| v.as_str()).ok_or("no `ok`")?;
    Ok(serde_json::json!({ "toolCallId": call, "granted": ok == "yes" }))
}

/// A kind whose fields are content blocks, projected as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, agentmsg::AgentMessage)]
#[agent_message(kind = "memo", to_llm = user)]
pub struct Memo {
    #[agent_message(content)]
    pub body: TextContent,
    pub tags: Vec<String>,
}

/// The built-in kinds and the three above.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        Registry::new()
            .with::<Notice>()
            .with::<Approval>()
            .with::<Memo>()
    })
}

/// The events a stream target pushes.
///
/// Without a `0xFF` byte (which UTF-8 never has, so every seed is of this form)
/// the input is a stream as the conformance fixtures store one: one event's JSON
/// per line, blank lines skipped. With one, the text before the last `0xFF` is cut
/// into events at the places that the bytes after it choose (through
/// `arbitrary`): events split in two, run together, empty, cut mid-character.
pub fn events(data: &[u8]) -> Vec<String> {
    let (text, control) = match data.iter().rposition(|&b| b == 0xFF) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let text = String::from_utf8_lossy(text);
    let Some(control) = control else {
        return text
            .split('\n')
            .filter(|line| !line.trim().is_empty())
            .map(str::to_owned)
            .collect();
    };
    let mut u = Unstructured::new(control);
    let mut rest: &str = &text;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if u.is_empty() {
            out.push(rest.to_owned());
            break;
        }
        let mut cut = u.int_in_range(0..=rest.len()).unwrap_or(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        out.push(rest[..cut].to_owned());
        rest = &rest[cut..];
    }
    out
}

/// Pushes every event, going on after an error (a decoder keeps the first bad
/// event and reports it from `finish`), and returns the decoder.
pub fn push_all<D: StreamDecode + Default>(events: &[String]) -> D {
    let mut decoder = D::default();
    for event in events {
        let _ = decoder.push(event);
    }
    decoder
}

/// Pushes events until the first error, as a client using `?` does; the
/// decoder after the last event pushed, or `None` if one failed.
pub fn push_until_error<D: StreamDecode + Default>(events: &[String]) -> Option<D> {
    let mut decoder = D::default();
    for event in events {
        decoder.push(event).ok()?;
    }
    Some(decoder)
}

/// What holds for every reply a decoder returns: it is a transcript line that
/// writes, and reads back as the same message, through the reader and the
/// line decoder alike.
pub fn check_reply(reply: &AssistantMessage) {
    let message = Message::Assistant(reply.clone());
    let line = serde_json::to_string(&message)
        .unwrap_or_else(|e| panic!("a decoded reply does not serialize: {e}\n{reply:?}"));
    let back: Message = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("a decoded reply does not read back: {e}\n{line}"));
    assert_eq!(back, message, "a decoded reply reads back changed\n{line}");
    let decoded = agentmsg::transcript::decode_line(
        &line,
        registry(),
        agentmsg::transcript::DecodeMode::Strict,
    )
    .unwrap_or_else(|e| panic!("a decoded reply's line is rejected: {e}\n{line}"));
    assert_eq!(decoded.as_llm(), Some(&message), "{line}");
}

/// The line decoder on one line, in both modes, with the properties that hold
/// for any text.
pub fn check_line(text: &str) {
    let registry = registry();
    let lenient = agentmsg::transcript::decode_line(
        text,
        registry,
        agentmsg::transcript::DecodeMode::Lenient,
    );
    let strict =
        agentmsg::transcript::decode_line(text, registry, agentmsg::transcript::DecodeMode::Strict);
    match (&lenient, &strict) {
        // Strict decodes exactly what lenient decodes into a type.
        (Ok(AgentMessage::Unknown(_)), Err(_)) | (Err(_), Err(_)) => {}
        (Ok(a), Ok(b)) if a == b && !a.is_unknown() => {}
        _ => panic!("lenient {lenient:?} and strict {strict:?} disagree on {text:?}"),
    }
    match lenient {
        Ok(AgentMessage::Unknown(kept)) => {
            // Kept byte for byte, and asking about it does not panic.
            assert_eq!(kept.raw(), text);
            let _ = kept.validate();
            let _ = (kept.id(), kept.turn_id(), kept.kind());
            let _ = AgentMessage::Unknown(kept).to_line();
        }
        Ok(message) => {
            // A decoded line writes, and reads back as the same message.
            let line = message
                .to_line()
                .unwrap_or_else(|e| panic!("{text:?} decoded but does not write: {e}"));
            let back = agentmsg::transcript::decode_line(
                &line,
                registry,
                agentmsg::transcript::DecodeMode::Strict,
            )
            .unwrap_or_else(|e| panic!("{text:?} wrote {line:?}, which is rejected: {e}"));
            assert_eq!(back, message, "{text:?} wrote {line:?}");
        }
        Err(_) => {}
    }
}

/// The generic serde path (`serde_json::from_str::<AgentMessage>`, whose
/// `codec/held.rs` holds the keys met before the role and whose
/// `codec/value.rs` hands a custom body's values to its type) on an object
/// with its role first and with its role last: the two must agree, and agree
/// with the line reader (`decode_line`), compared as JSON values (a tool
/// call's arguments held before the role are written again from the values:
/// `1e2` comes back as `100.0`).
pub fn check_generic(text: &str) {
    use serde_json::{Map, Value};
    let generic = |text: &str| serde_json::from_str::<AgentMessage>(text);
    let Ok(mut object) = serde_json::from_str::<Map<String, Value>>(text) else {
        let _ = generic(text);
        return;
    };
    let Some(role) = object.remove("role") else {
        assert!(generic(text).is_err(), "no role, yet decoded: {text:?}");
        return;
    };
    let entry = |key: &str, value: &Value| format!("{}:{value}", Value::from(key));
    let rest: Vec<String> = object.iter().map(|(k, v)| entry(k, v)).collect();
    let role = entry("role", &role);
    let first = format!(
        "{{{}}}",
        [role.clone()]
            .into_iter()
            .chain(rest.clone())
            .collect::<Vec<_>>()
            .join(",")
    );
    let last = format!(
        "{{{}}}",
        rest.into_iter().chain([role]).collect::<Vec<_>>().join(",")
    );
    let as_value = |m: &Result<AgentMessage, serde_json::Error>| match m {
        Ok(m) => Ok((m.is_unknown(), serde_json::to_value(m).ok())),
        Err(_) => Err(()),
    };
    let (a, b) = (generic(&first), generic(&last));
    assert_eq!(
        as_value(&a),
        as_value(&b),
        "role first {first:?} and last {last:?} disagree"
    );
    let line = agentmsg::transcript::decode_line(
        &first,
        Registry::global(),
        agentmsg::transcript::DecodeMode::Lenient,
    );
    match (&line, &a) {
        (Ok(m), _) if m.is_unknown() => {}
        (Ok(m), Ok(g)) => assert_eq!(
            serde_json::to_value(m).ok(),
            serde_json::to_value(g).ok(),
            "decode_line and the generic path disagree on {first:?}"
        ),
        (Ok(m), Err(e)) => {
            panic!("decode_line read {m:?}, the generic path failed ({e}) on {first:?}")
        }
        (Err(_), Ok(g)) if !g.is_unknown() => {
            panic!("the generic path read {g:?}, decode_line failed on {first:?}")
        }
        (Err(_), _) => {}
    }
}
