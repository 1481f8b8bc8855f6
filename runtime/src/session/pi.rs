//! pi's session files: detecting them, reading their entries, migrating them in
//! memory as pi does (v1 → v2: ids and parents in file order,
//! `firstKeptEntryIndex` → `firstKeptEntryId`; v2 → v3: `hookMessage` →
//! `custom`), and writing new entries as pi writes them.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::entry::EntryKind;
use super::lenient::Lenience;
use crate::custom::{BranchSummary, CompactionSummary, InjectedMessage, Registry};
use crate::time::{format_iso8601, parse_iso8601};
use crate::transcript::{decode_line, DecodeMode, UnknownMessage};
use crate::{AgentMessage, MessageId, ParentId};

/// pi's current session version.
pub const PI_SESSION_VERSION: u32 = 3;

/// The fields of a pi entry line that the session reads; the rest stays in the
/// line.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PiLine<'a> {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub parent_id: Option<Value>,
    #[serde(default)]
    pub timestamp: Option<Value>,
    #[serde(borrow, default)]
    pub message: Option<&'a RawValue>,
    #[serde(default)]
    pub version: Option<u32>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub first_kept_entry_id: Option<String>,
    #[serde(default)]
    pub first_kept_entry_index: Option<usize>,
    #[serde(default)]
    pub tokens_before: Option<Value>,
    #[serde(default)]
    pub from_id: Option<String>,
    #[serde(default)]
    pub custom_type: Option<String>,
    #[serde(borrow, default)]
    pub content: Option<&'a RawValue>,
    #[serde(default)]
    pub display: Option<bool>,
    #[serde(borrow, default)]
    pub details: Option<&'a RawValue>,
    #[serde(default)]
    pub from_hook: Option<Value>,
    #[serde(default)]
    pub target_id: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub thinking_level: Option<String>,
}

/// Whether JavaScript reads `value` as true (`if (value)`).
fn js_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Whether the first entry of a file says it is a pi session: a `session`
/// header with a string `id`. pi reads no entry of a file whose first line is
/// not that (`loadEntriesFromFile`), so neither is such a file read as one.
pub(crate) fn is_pi(first: &str) -> Option<u32> {
    let head: PiLine<'_> = serde_json::from_str(first).ok()?;
    match (head.kind.as_deref()?, &head.id) {
        ("session", Some(Value::String(_))) => Some(head.version.unwrap_or(1)),
        _ => None,
    }
}

/// An entry read from a pi line.
pub(crate) struct PiEntry {
    pub id: Option<MessageId>,
    pub parent: ParentId,
    pub timestamp: u64,
    pub kind: EntryKind,
    /// `firstKeptEntryIndex` of a v1 compaction, resolved after the migration.
    pub first_kept_index: Option<usize>,
    /// The fields read as pi reads them, not as the format says.
    pub lenient: Vec<Lenience>,
}

/// `tokensBefore` as pi reads it: any number (pi never reads it to build a
/// context), so a fraction is no reason to drop the compaction.
fn tokens_before(value: Option<Value>, lenient: &mut Vec<Lenience>) -> u64 {
    match value {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) if n.is_u64() => n.as_u64().unwrap_or(0),
        Some(other) => {
            let read = other
                .as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map_or(0, |f| f.round() as u64);
            lenient.push(Lenience {
                field: "tokensBefore".to_owned(),
                what: format!("{other} is no whole number of tokens; read as {read}"),
            });
            read
        }
    }
}

fn string_of(value: Option<Value>) -> Option<String> {
    match value {
        Some(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// Reads one pi entry line (already known to be a JSON object) of a file of
/// `version`.
pub(crate) fn read_entry(head: PiLine<'_>, registry: &Registry, version: u32) -> PiEntry {
    let timestamp = match &head.timestamp {
        Some(Value::String(s)) => parse_iso8601(s)
            .and_then(|ms| u64::try_from(ms).ok())
            .unwrap_or(0),
        Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    let id = string_of(head.id).map(MessageId::from);
    let parent = match head.parent_id {
        Some(Value::String(p)) => ParentId::Id(MessageId::from(p)),
        // pi follows a parent only when the entry names one.
        _ => ParentId::Root,
    };
    let kind_name = head.kind.unwrap_or_default();
    let mut lenient = Vec::new();
    let kind = match kind_name.as_str() {
        "session" => EntryKind::Header,
        "message" => EntryKind::Message(match head.message {
            Some(raw) => {
                let (message, found) = read_message(raw.get(), registry, version);
                lenient.extend(found.into_iter().map(|l| Lenience {
                    field: format!("message.{}", l.field),
                    what: l.what,
                }));
                message
            }
            None => AgentMessage::Unknown(UnknownMessage::malformed(
                Vec::new(),
                crate::transcript::DecodeError::MissingRole,
            )),
        }),
        "compaction" => EntryKind::Compaction(CompactionSummary {
            summary: head.summary.unwrap_or_default(),
            tokens_before: tokens_before(head.tokens_before, &mut lenient),
            first_kept_id: head.first_kept_entry_id.map(MessageId::from),
            timestamp,
            // pi reads no file lists from a compaction an extension made
            // (`fromHook`): its details are the extension's own.
            details: match head.from_hook {
                Some(v) if js_truthy(&v) => None,
                _ => head
                    .details
                    .and_then(|raw| serde_json::from_str(raw.get()).ok()),
            },
        }),
        "branch_summary" => EntryKind::BranchSummary(BranchSummary {
            summary: head.summary.unwrap_or_default(),
            from_id: head.from_id.map(MessageId::from),
            timestamp,
        }),
        "custom_message" => EntryKind::CustomMessage(InjectedMessage {
            custom_type: head.custom_type.unwrap_or_default(),
            content: head
                .content
                .and_then(|raw| serde_json::from_str(raw.get()).ok())
                .unwrap_or_default(),
            display: head.display.unwrap_or(false),
            details: head
                .details
                .and_then(|raw| serde_json::from_str(raw.get()).ok()),
            timestamp,
        }),
        "custom" => EntryKind::Custom {
            custom_type: head.custom_type.unwrap_or_default(),
        },
        "label" => EntryKind::Label {
            target: MessageId::from(head.target_id.unwrap_or_default()),
            label: head.label,
        },
        "session_info" => EntryKind::SessionInfo { name: head.name },
        "model_change" => EntryKind::ModelChange {
            provider: head.provider.unwrap_or_default(),
            model_id: head.model_id.unwrap_or_default(),
        },
        "thinking_level_change" => EntryKind::ThinkingLevelChange {
            level: head.thinking_level.unwrap_or_default(),
        },
        _ => EntryKind::Other { kind: kind_name },
    };
    PiEntry {
        id,
        parent,
        timestamp,
        kind,
        first_kept_index: head.first_kept_entry_index,
        lenient,
    }
}

/// Decodes a pi message of a file of `version`: the agentmsg format reads
/// pi-ai's messages (pi's redacted thinking, `"redacted": true` with the data
/// in `thinkingSignature`, included); one that does not decode is read as pi
/// reads it where it can be ([`lenient`](super::lenient)), with the fields
/// read so.
/// pi renames the role `hookMessage` to `custom` only when it migrates a file
/// older than version 3; in a version 3 file it is a role pi does not know
/// (and does not send), so it is kept as an unknown message.
pub(crate) fn read_message(
    raw: &str,
    registry: &Registry,
    version: u32,
) -> (AgentMessage, Vec<Lenience>) {
    if version >= 3 && raw.contains("\"hookMessage\"") && role_is(raw, "hookMessage") {
        if let Ok(kept) = UnknownMessage::new(raw, crate::transcript::UnknownReason::UnknownKind) {
            return (AgentMessage::Unknown(kept), Vec::new());
        }
    }
    let message = match decode_line(raw, registry, DecodeMode::Lenient) {
        Ok(message) => message,
        Err(error) => {
            AgentMessage::Unknown(UnknownMessage::malformed(raw.as_bytes().to_vec(), error))
        }
    };
    if is_malformed(&message) {
        if let Some(read) = super::lenient::read_as_pi(raw, registry) {
            return read;
        }
    }
    (message, Vec::new())
}

/// Whether `message` is a line of a known kind kept unknown because it did
/// not decode.
pub(crate) fn is_malformed(message: &AgentMessage) -> bool {
    match message {
        AgentMessage::Unknown(kept) => matches!(
            kept.reason(),
            crate::transcript::UnknownReason::Invalid { .. }
                | crate::transcript::UnknownReason::Malformed(_)
        ),
        _ => false,
    }
}

/// Whether the message object `raw` has the role `role`.
fn role_is(raw: &str, role: &str) -> bool {
    #[derive(Deserialize)]
    struct Role<'a> {
        #[serde(borrow, default)]
        role: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_str::<Role<'_>>(raw).is_ok_and(|r| r.role.as_deref() == Some(role))
}

/// A new pi entry id: 8 hex digits, not in use (pi's `generateId`).
pub(crate) fn new_id(taken: impl Fn(&str) -> bool) -> MessageId {
    for _ in 0..100 {
        let uuid = MessageId::new();
        // The last digits of a UUIDv7 are random (the first are the clock).
        let text = uuid.as_str();
        let id = &text[text.len() - 8..];
        if !taken(id) {
            return MessageId::from(id);
        }
    }
    MessageId::new()
}

/// The start of a pi entry line: `{"type":…,"id":…,"parentId":…,"timestamp":…`,
/// without the closing brace.
pub(crate) fn entry_head(
    kind: &str,
    id: &MessageId,
    parent: Option<&MessageId>,
    millis: u64,
) -> String {
    let mut line = String::with_capacity(128);
    line.push_str("{\"type\":");
    line.push_str(&Value::from(kind).to_string());
    line.push_str(",\"id\":");
    line.push_str(&Value::from(id.as_str()).to_string());
    line.push_str(",\"parentId\":");
    match parent {
        Some(p) => line.push_str(&Value::from(p.as_str()).to_string()),
        None => line.push_str("null"),
    }
    line.push_str(",\"timestamp\":");
    line.push_str(
        &Value::from(format_iso8601(i64::try_from(millis).unwrap_or(i64::MAX))).to_string(),
    );
    line
}

/// Appends `,"key":value` to a line being built.
pub(crate) fn push_field(line: &mut String, key: &str, value: &Value) {
    line.push(',');
    line.push_str(&Value::from(key).to_string());
    line.push(':');
    line.push_str(&value.to_string());
}

/// A message as pi-ai writes it: the agentmsg line less its envelope keys, with
/// pi's field names for signatures (`thinkingSignature`, `textSignature`,
/// `thoughtSignature`) and redacted thinking as pi keeps it.
pub(crate) fn pi_message_json(message: &AgentMessage) -> Result<String, serde_json::Error> {
    let mut line = Vec::with_capacity(256);
    message
        .clone()
        .with_id(None)
        .with_turn_id(None)
        .with_parent_id(ParentId::Previous)
        .write_line(&mut line)?;
    let mut value: Map<String, Value> = serde_json::from_slice(&line)?;
    if let Some(Value::Array(blocks)) = value.get_mut("content") {
        for block in blocks {
            let Some(map) = block.as_object_mut() else {
                continue;
            };
            let renamed = match map.get("type").and_then(Value::as_str) {
                Some("thinking") => Some("thinkingSignature"),
                Some("text") => Some("textSignature"),
                Some("toolCall") => Some("thoughtSignature"),
                Some("redactedThinking") => {
                    let data = map.remove("data").unwrap_or(Value::from(""));
                    map.clear();
                    map.insert("type".into(), Value::from("thinking"));
                    map.insert("thinking".into(), Value::from(""));
                    map.insert("thinkingSignature".into(), data);
                    map.insert("redacted".into(), Value::from(true));
                    None
                }
                _ => None,
            };
            if let Some(key) = renamed {
                if let Some(signature) = map.remove("signature") {
                    map.insert(key.into(), signature);
                }
            }
        }
    }
    // `role` first, as pi-ai writes it.
    let mut out = String::with_capacity(line.len() + 32);
    out.push('{');
    let role = value.remove("role").unwrap_or(Value::from(message.kind()));
    out.push_str("\"role\":");
    out.push_str(&role.to_string());
    for (key, field) in &value {
        push_field(&mut out, key, field);
    }
    out.push('}');
    Ok(out)
}
