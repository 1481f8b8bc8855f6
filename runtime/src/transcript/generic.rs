//! The generic serde impls of [`AgentMessage`], [`LlmMessage`] and [`Message`],
//! for apps that embed messages in their own data
//! (`serde_json::from_str::<Vec<AgentMessage>>`). The transcript reader does not
//! use them: it decodes a line through [`decode_line`](crate::transcript::decode_line),
//! which sees the line's bytes.

use serde::de::{self, Deserializer, MapAccess};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use super::agent_message::AgentMessage;
use super::codec::envelope::{deserialize_flat, write_line, Envelope, EnvelopeSlot, RoleDispatch};
use super::codec::flat_serializer::FlatMapSerializer;
use super::codec::held::Held;
use super::custom::Registry;
use super::decode::unregistered_reason;
use super::failure::UnknownReason;
use super::llm_message::LlmMessage;
use super::unknown::UnknownMessage;
use crate::message::unversioned;
use crate::{AssistantMessage, Message, Role, SystemMessage, ToolResultMessage, UserMessage};

impl Serialize for AgentMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Llm(m) => m.serialize(serializer),
            Self::Custom(c) => c.serialize(serializer),
            Self::Unknown(u) => u.serialize(serializer),
        }
    }
}

/// Decodes through the global registry, leniently: an unregistered kind, a newer
/// version or a custom body that fails to decode becomes
/// [`AgentMessage::Unknown`] (with a re-encoded object, see [`UnknownMessage`]).
/// An LLM message that fails to decode is an error here; the transcript reader
/// keeps it as `Unknown` too.
impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_flat(
            deserializer,
            AgentDispatch {
                registry: Registry::global(),
            },
        )
    }
}

/// Decodes the body of any line once its role is known.
struct AgentDispatch<'r> {
    registry: &'r Registry,
}

impl<'de> RoleDispatch<'de> for AgentDispatch<'_> {
    type Value = AgentMessage;

    fn dispatch<M: MapAccess<'de>>(
        self,
        role: &str,
        map: M,
        envelope: &EnvelopeSlot,
    ) -> Result<AgentMessage, M::Error> {
        if let Some(role) = Role::from_name(role) {
            return llm_body(role, map, envelope).map(AgentMessage::Llm);
        }
        let kind = role;
        let Some(registration) = self.registry.get(kind) else {
            let body = de::value::MapAccessDeserializer::new(map);
            let fields = serde_json::Map::deserialize(body)?;
            let reason = unregistered_reason(self.registry, kind);
            return keep(kind, &fields, envelope.take(), reason);
        };
        // Held until the version (an envelope key, anywhere) is known, and kept
        // for a body that does not decode.
        let mut fields = Held::deserialize(de::value::MapAccessDeserializer::new(map))?;
        let mut envelope = envelope.take();
        if let Err(reason) = registration.take_timestamp(&mut fields, &mut envelope) {
            let fields = serde_json::Map::deserialize(fields.lend::<M::Error>())?;
            return keep(kind, &fields, envelope, reason);
        }
        match registration.decode_fields(&fields, envelope.clone()) {
            Ok(entry) => Ok(AgentMessage::Custom(entry)),
            Err(reason) => {
                let fields = serde_json::Map::deserialize(fields.lend::<M::Error>())?;
                keep(kind, &fields, envelope, reason)
            }
        }
    }
}

/// A custom object that was not decoded, kept as `Unknown` (re-encoded).
#[cold]
fn keep<E: de::Error>(
    kind: &str,
    fields: &serde_json::Map<String, serde_json::Value>,
    envelope: Envelope,
    reason: UnknownReason,
) -> Result<AgentMessage, E> {
    let mut raw = Vec::new();
    let mut serializer = serde_json::Serializer::new(&mut raw);
    write_line(
        &mut serializer,
        kind,
        fields,
        (
            envelope.id.as_ref(),
            envelope.turn_id.as_ref(),
            &envelope.parent_id,
        ),
        0,
        envelope.timestamp,
    )
    .map_err(de::Error::custom)?;
    if let Some(v) = envelope.v {
        Envelope::append_version_as_read(&mut raw, v);
    }
    let raw = String::from_utf8(raw).map_err(de::Error::custom)?;
    Ok(AgentMessage::Unknown(UnknownMessage::re_encoded(
        raw,
        kind.to_owned(),
        reason,
        envelope,
    )))
}

/// The body of an LLM line of `role` with its envelope: the one decoder the
/// generic impls share.
fn llm_body<'de, M: MapAccess<'de>>(
    role: Role,
    map: M,
    envelope: &EnvelopeSlot,
) -> Result<LlmMessage, M::Error> {
    let body = de::value::MapAccessDeserializer::new(map);
    let message = match role {
        Role::User => Message::User(UserMessage::deserialize(body)?),
        Role::Assistant => Message::Assistant(AssistantMessage::deserialize(body)?),
        Role::ToolResult => Message::ToolResult(ToolResultMessage::deserialize(body)?),
        Role::System => Message::System(SystemMessage::deserialize(body)?),
    };
    let envelope = envelope.take();
    if let Some(v) = envelope.v {
        return Err(unversioned(v, role.as_str()));
    }
    Ok(LlmMessage {
        message,
        id: envelope.id,
        turn_id: envelope.turn_id,
        parent_id: envelope.parent_id,
    })
}

impl Serialize for LlmMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        self.message.serialize(FlatMapSerializer(&mut map))?;
        Envelope::write(
            &mut map,
            self.id.as_ref(),
            self.turn_id.as_ref(),
            &self.parent_id,
            1,
        )?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for LlmMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_flat(deserializer, LlmDispatch)
    }
}

/// Reads a message object (`"role"` and the message's fields); an `id` or
/// `turnId` beside them is ignored.
impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        LlmMessage::deserialize(deserializer).map(|m| m.message)
    }
}

/// Decodes the body of an LLM message once its role is known.
struct LlmDispatch;

impl<'de> RoleDispatch<'de> for LlmDispatch {
    type Value = LlmMessage;

    fn dispatch<M: MapAccess<'de>>(
        self,
        role: &str,
        map: M,
        envelope: &EnvelopeSlot,
    ) -> Result<LlmMessage, M::Error> {
        match Role::from_name(role) {
            Some(role) => llm_body(role, map, envelope),
            None => Err(de::Error::unknown_variant(
                role,
                &["system", "user", "assistant", "toolResult"],
            )),
        }
    }
}
