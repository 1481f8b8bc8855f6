//! pi conformance: every user, assistant and toolResult message of the pi session
//! files in ../shared/conformance/transcripts/pi decodes, and re-encodes to the
//! same JSON value. The only differences allowed are normalised away first:
//! `thinkingSignature` is written back as `signature`, string content as one text
//! block, and the fields listed in [`UNMODELLED`] are not kept.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use agentmsg::{LlmMessage, Message, Role};
use serde_json::{Map, Value};

/// Every field of the pi session files that agentmsg does not model, with why.
/// `entry:<type>` is a field of a session-file entry (the wrapper around a line),
/// `message:<role>` a field of a message object, `block:<type>` of a content block.
const UNMODELLED: &[(&str, &str, &str)] = &[
    ("block:toolCall", "partialJson", "pi's buffer of the arguments' JSON while they stream; the finished arguments are in `arguments`"),
    ("entry:message", "type", "pi's session-file wrapper; an agentmsg line is the message object itself"),
    ("entry:message", "timestamp", "the wrapper's ISO time of writing; the message keeps its own `timestamp` (Unix ms)"),
    ("entry:session", "type", "pi's session header: application state, not a message"),
    ("entry:session", "id", "pi's session id (the file is the session in agentmsg)"),
    ("entry:session", "timestamp", "when the session started"),
    ("entry:session", "cwd", "the coding agent's working directory: application state"),
    ("entry:session", "provider", "the session's initial model: application state (each assistant message names its own)"),
    ("entry:session", "modelId", "as `provider`"),
    ("entry:session", "thinkingLevel", "a request setting, not part of the transcript"),
    ("entry:session", "branchedFrom", "the session file this one was forked from"),
    ("entry:model_change", "type", "a UI/session event: an application's custom message, never sent to a model"),
    ("entry:model_change", "timestamp", "as `type`"),
    ("entry:model_change", "provider", "as `type`"),
    ("entry:model_change", "modelId", "as `type`"),
    ("entry:thinking_level_change", "type", "a request setting change: an application's custom message"),
    ("entry:thinking_level_change", "timestamp", "as `type`"),
    ("entry:thinking_level_change", "thinkingLevel", "as `type`"),
    ("entry:compaction", "type", "pi's compaction entry; agentmsg's built-in `compactionSummary` kind carries it"),
    ("entry:compaction", "timestamp", "as `type`"),
    ("entry:compaction", "summary", "`compactionSummary.summary`"),
    ("entry:compaction", "tokensBefore", "`compactionSummary.tokensBefore`"),
    ("entry:compaction", "firstKeptEntryIndex", "a line index; `compactionSummary.firstKeptId` names a message id instead"),
    ("message:bashExecution", "*", "a custom message kind of pi's coding agent (command, output, exitCode…), decoded through the registry, not an LLM message"),
];

/// The pi message object with the allowed differences normalised away.
fn normalise(message: &Value) -> Value {
    let mut message = message.clone();
    let Some(object) = message.as_object_mut() else {
        return message;
    };
    if let Some(Value::String(text)) = object.get("content") {
        let block = serde_json::json!([{"type": "text", "text": text}]);
        object.insert("content".into(), block);
    }
    if let Some(Value::Array(blocks)) = object.get_mut("content") {
        for block in blocks.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(signature) = block.remove("thinkingSignature") {
                block.insert("signature".into(), signature);
            }
            block.remove("partialJson");
        }
    }
    message
}

#[derive(Default)]
struct Tally {
    by_role: BTreeMap<&'static str, usize>,
    thinking: usize,
    signed: usize,
    tool_calls: usize,
    byte_equal: usize,
    unmodelled: BTreeSet<(String, String)>,
}

fn note(tally: &mut Tally, scope: &str, object: &Map<String, Value>, known: &[&str]) {
    for key in object.keys().filter(|k| !known.contains(&k.as_str())) {
        tally.unmodelled.insert((scope.to_owned(), key.clone()));
    }
}

/// Decodes one pi message object; returns whether it is an LLM message.
/// `raw` is the message's text as pi wrote it, when known.
fn check_message(tally: &mut Tally, origin: &str, message: &Value, raw: Option<&str>) -> bool {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let role: &'static str = match role {
        "user" => "user",
        "assistant" => "assistant",
        "toolResult" => "toolResult",
        other => {
            tally
                .unmodelled
                .insert((format!("message:{other}"), "*".into()));
            return false;
        }
    };
    let line: LlmMessage = serde_json::from_value(message.clone())
        .unwrap_or_else(|e| panic!("{origin}: {role} message does not decode: {e}"));
    assert_eq!(line.id, None, "{origin}");
    assert_eq!(line.turn_id, None, "{origin}");
    assert_eq!(line.message.role().as_str(), role, "{origin}");
    let bare: Message = serde_json::from_value(message.clone())
        .unwrap_or_else(|e| panic!("{origin}: as Message: {e}"));
    assert_eq!(bare, line.message, "{origin}");

    let written = serde_json::to_value(&line).unwrap();
    let expected = normalise(message);
    assert_eq!(
        written, expected,
        "{origin}: re-encoded to a different value"
    );
    if raw.is_some_and(|raw| serde_json::to_string(&line).unwrap() == raw) {
        tally.byte_equal += 1;
    }

    *tally.by_role.entry(role).or_default() += 1;
    if let Message::Assistant(reply) = &line.message {
        tally.thinking += reply.thinking().count();
        tally.tool_calls += reply.tool_calls().count();
        tally.signed += reply.thinking().filter(|t| t.signature().is_some()).count();
    }

    // Fields of the original that the typed value does not hold.
    let object = message.as_object().unwrap();
    let known: &[&str] = match line.message.role() {
        Role::User => &["role", "content", "timestamp"],
        Role::Assistant => &[
            "role",
            "content",
            "api",
            "provider",
            "model",
            "responseId",
            "usage",
            "stopReason",
            "errorMessage",
            "timestamp",
        ],
        Role::ToolResult => &[
            "role",
            "toolCallId",
            "toolName",
            "content",
            "isError",
            "timestamp",
            "details",
        ],
        Role::System => &["role", "content", "timestamp"],
    };
    note(tally, &format!("message:{role}"), object, known);
    for block in object
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
    {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let known: &[&str] = match kind {
            "text" => &["type", "text"],
            "thinking" => &["type", "thinking", "signature", "thinkingSignature"],
            "toolCall" => &[
                "type",
                "id",
                "name",
                "arguments",
                "signature",
                "thoughtSignature",
            ],
            "image" => &["type", "data", "mimeType", "url"],
            _ => &["type"],
        };
        note(tally, &format!("block:{kind}"), block, known);
    }
    if let Some(usage) = object.get("usage").and_then(Value::as_object) {
        let known = &[
            "input",
            "output",
            "reasoning",
            "cacheRead",
            "cacheWrite",
            "totalTokens",
            "cost",
        ];
        note(tally, "usage", usage, known);
        if let Some(cost) = usage.get("cost").and_then(Value::as_object) {
            note(
                tally,
                "cost",
                cost,
                &["input", "output", "cacheRead", "cacheWrite", "total"],
            );
        }
    }
    true
}

fn check_session(tally: &mut Tally, path: &Path) -> usize {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut lines = 0;
    for (i, line) in text.lines().enumerate() {
        let origin = format!("{name}:{}", i + 1);
        let entry: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{origin}: {e}"));
        let object = entry
            .as_object()
            .unwrap_or_else(|| panic!("{origin}: not an object"));
        let kind = object
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match object.get("message") {
            Some(message) if kind == "message" => {
                // pi writes the message last: `{"type":"message",…,"message":{…}}`.
                let raw = line
                    .strip_suffix('}')
                    .and_then(|l| l.split_once(",\"message\":"))
                    .map(|(_, raw)| raw);
                check_message(tally, &origin, message, raw);
                note(tally, "entry:message", object, &["message"]);
            }
            _ => note(tally, &format!("entry:{kind}"), object, &[]),
        }
        lines += 1;
    }
    lines
}

#[test]
fn pi_sessions_decode_and_re_encode() {
    let dir = common::require_conformance!().join("transcripts/pi");
    let mut totals = BTreeMap::new();
    let mut all = Tally::default();
    // Counted independently of agentmsg (with Python's json module).
    // Two thinking blocks in before-compaction.jsonl have an empty signature.
    for (file, lines, user, assistant, tool_result, thinking, signed, tool_calls) in [
        ("before-compaction.jsonl", 1003, 55, 484, 448, 49, 47, 454),
        ("large-session.jsonl", 1019, 88, 453, 373, 1, 1, 391),
    ] {
        let mut tally = Tally::default();
        assert_eq!(
            check_session(&mut tally, &dir.join(file)),
            lines,
            "{file}: lines"
        );
        let by_role = |r| tally.by_role.get(r).copied().unwrap_or(0);
        assert_eq!(
            (by_role("user"), by_role("assistant"), by_role("toolResult")),
            (user, assistant, tool_result),
            "{file}: messages by role"
        );
        assert_eq!(
            (tally.thinking, tally.signed, tally.tool_calls),
            (thinking, signed, tool_calls),
            "{file}: thinking, signed thinking, tool calls"
        );
        totals.insert(file, (user + assistant + tool_result, tally.byte_equal));
        all.unmodelled.extend(tally.unmodelled);
    }
    eprintln!("pi messages decoded and re-encoded (count, byte-equal): {totals:?}");

    let expected: BTreeSet<(String, String)> = UNMODELLED
        .iter()
        .map(|(scope, field, _)| ((*scope).to_owned(), (*field).to_owned()))
        .collect();
    assert_eq!(all.unmodelled, expected, "the unmodelled fields changed");
}

#[test]
fn pi_single_assistant_message() {
    let path = common::require_conformance!()
        .join("transcripts/pi/assistant-message-with-thinking-code.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let message: Value = serde_json::from_str(&text).unwrap();
    let mut tally = Tally::default();
    assert!(check_message(
        &mut tally,
        "assistant-message-with-thinking-code.json",
        &message,
        None
    ));
    assert_eq!(tally.by_role.get("assistant"), Some(&1));
    assert_eq!((tally.thinking, tally.signed), (1, 1));
    assert!(tally.unmodelled.is_empty(), "{:?}", tally.unmodelled);
}

#[test]
fn normalising_changes_only_the_allowed_forms() {
    let pi = serde_json::json!({
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "t", "thinkingSignature": "s"},
            {"type": "toolCall", "id": "c", "name": "n", "arguments": {}, "partialJson": "{"}
        ],
        "stopReason": "toolUse"
    });
    assert_eq!(
        normalise(&pi),
        serde_json::json!({
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "toolCall", "id": "c", "name": "n", "arguments": {}}
            ],
            "stopReason": "toolUse"
        })
    );
    let user = serde_json::json!({"role": "user", "content": "hi", "timestamp": 1});
    assert_eq!(
        normalise(&user),
        serde_json::json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1})
    );
}
