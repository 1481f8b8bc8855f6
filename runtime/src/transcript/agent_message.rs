//! [`AgentMessage`]: one transcript line, whether it is an LLM message, an
//! application's custom message or a line kept as it was (`Unknown`).

use super::custom::{AppMessage, CustomMessage, DynCustomMessage};
use super::unknown::UnknownMessage;
use crate::{LlmMessage, Message, MessageId, ParentId, Role, TurnId};

/// One line of a transcript.
///
/// An LLM message (`"role"` is `system`, `user`, `assistant` or `toolResult`), a
/// custom message (any other `"role"`, decoded through the
/// [`Registry`](crate::custom::Registry)), or a line that was kept but not
/// decoded:
///
/// ```json
/// {"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292}
/// {"role":"notice","text":"session resumed","id":"0193a4b2-7c1e-7000-8000-000000000001"}
/// ```
///
/// Nothing turns a custom message into an LLM message except its declared
/// projection ([`CustomMessage::to_llm`], applied by [`to_llm`](crate::to_llm)).
#[derive(Debug, Clone, PartialEq)]
pub enum AgentMessage {
    /// A message a model sees.
    Llm(LlmMessage),
    /// An application-defined message.
    Custom(AppMessage),
    /// A line kept as it was: an unregistered kind, a newer version, or a body that
    /// failed to decode.
    Unknown(UnknownMessage),
}

impl AgentMessage {
    /// A custom message without id or turn.
    pub fn custom<T: CustomMessage>(message: T) -> Self {
        Self::Custom(AppMessage::new(message))
    }

    /// The LLM message, if this is one.
    pub fn as_llm(&self) -> Option<&Message> {
        match self {
            Self::Llm(m) => Some(&m.message),
            _ => None,
        }
    }

    /// The LLM message with its envelope, if this is one.
    pub fn as_llm_message(&self) -> Option<&LlmMessage> {
        match self {
            Self::Llm(m) => Some(m),
            _ => None,
        }
    }

    /// The custom message, if this is one.
    pub fn as_custom(&self) -> Option<&dyn DynCustomMessage> {
        match self {
            Self::Custom(c) => Some(&*c.message),
            _ => None,
        }
    }

    /// The kept line, if this is one.
    pub fn as_unknown(&self) -> Option<&UnknownMessage> {
        match self {
            Self::Unknown(u) => Some(u),
            _ => None,
        }
    }

    /// The custom message as a `T`, if it is one.
    pub fn downcast_ref<T: CustomMessage>(&self) -> Option<&T> {
        match self {
            Self::Custom(c) => c.downcast_ref(),
            _ => None,
        }
    }

    /// The custom message as a mutable `T`, if it is one.
    pub fn downcast_mut<T: CustomMessage>(&mut self) -> Option<&mut T> {
        match self {
            Self::Custom(c) => c.message.downcast_mut(),
            _ => None,
        }
    }

    /// The `"role"` written for this line: the LLM role, the custom kind, or the
    /// kind of the kept line (empty when it had none).
    pub fn kind(&self) -> &str {
        match self {
            Self::Llm(m) => m.message.role().as_str(),
            Self::Custom(c) => c.kind(),
            Self::Unknown(u) => u.kind(),
        }
    }

    /// The LLM role, for an LLM message.
    pub fn role(&self) -> Option<Role> {
        self.as_llm().map(Message::role)
    }

    /// The message's id, if it has one.
    pub fn id(&self) -> Option<&MessageId> {
        match self {
            Self::Llm(m) => m.id.as_ref(),
            Self::Custom(c) => c.id.as_ref(),
            Self::Unknown(u) => u.id(),
        }
    }

    /// When the message was made, in Unix milliseconds: an LLM message's
    /// `timestamp` (`None` when it is 0), a custom message's
    /// ([`AppMessage::timestamp`](crate::custom::AppMessage::timestamp)); `None` for
    /// a kept line.
    pub fn timestamp(&self) -> Option<u64> {
        match self {
            Self::Llm(m) => Some(m.message.timestamp()).filter(|&t| t != 0),
            Self::Custom(c) => c.timestamp(),
            Self::Unknown(_) => None,
        }
    }

    /// The turn that produced the message, if known.
    pub fn turn_id(&self) -> Option<&TurnId> {
        match self {
            Self::Llm(m) => m.turn_id.as_ref(),
            Self::Custom(c) => c.turn_id.as_ref(),
            Self::Unknown(u) => u.turn_id(),
        }
    }

    /// Where the line hangs in the session tree: its `"parentId"`
    /// ([`ParentId::Previous`] when the line has none).
    pub fn parent_id(&self) -> &ParentId {
        match self {
            Self::Llm(m) => &m.parent_id,
            Self::Custom(c) => &c.parent_id,
            Self::Unknown(u) => u.parent_id(),
        }
    }

    /// The same message under this parent. A kept line is written back byte
    /// for byte, so it keeps the parent it had.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AgentMessage, Message, MessageId, ParentId};
    /// let m = AgentMessage::from(Message::user("hi")).with_parent_id(ParentId::Root);
    /// assert!(m.to_line().unwrap().ends_with(r#","parentId":null}"#));
    /// ```
    #[must_use]
    pub fn with_parent_id(mut self, parent_id: ParentId) -> Self {
        match &mut self {
            Self::Llm(m) => m.parent_id = parent_id,
            Self::Custom(c) => c.parent_id = parent_id,
            Self::Unknown(_) => {}
        }
        self
    }

    /// The same message in this turn. A kept line is written back byte for byte,
    /// so it keeps the turn it had.
    #[must_use]
    pub fn with_turn_id(mut self, turn_id: Option<TurnId>) -> Self {
        match &mut self {
            Self::Llm(m) => m.turn_id = turn_id,
            Self::Custom(c) => c.turn_id = turn_id,
            Self::Unknown(_) => {}
        }
        self
    }

    /// The same message with this id. A kept line is written back byte for byte,
    /// so it keeps the id it had.
    #[must_use]
    pub fn with_id(mut self, id: Option<MessageId>) -> Self {
        match &mut self {
            Self::Llm(m) => m.id = id,
            Self::Custom(c) => c.id = id,
            Self::Unknown(_) => {}
        }
        self
    }

    /// The same message made at `timestamp` (Unix milliseconds): an LLM
    /// message's `timestamp`, a custom entry's
    /// ([`AppMessage::with_timestamp`](crate::custom::AppMessage::with_timestamp);
    /// a type with a timestamp field of its own keeps its field's). A kept
    /// line is written back byte for byte, so it keeps its own.
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: u64) -> Self {
        match &mut self {
            Self::Llm(m) => m.message.set_timestamp(timestamp),
            Self::Custom(c) => {
                if !c.message.has_timestamp_field() {
                    c.timestamp = Some(timestamp);
                }
            }
            Self::Unknown(_) => {}
        }
        self
    }

    /// Whether this is an LLM message.
    pub fn is_llm(&self) -> bool {
        matches!(self, Self::Llm(_))
    }

    /// Whether this is a custom message.
    pub fn is_custom(&self) -> bool {
        matches!(self, Self::Custom(_))
    }

    /// Whether this is a kept, undecoded line.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown(_))
    }

    /// Appends the line as compact JSON, without a newline. A kept line is
    /// appended byte for byte.
    pub fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Self::Llm(m) => serde_json::to_writer(out, m),
            Self::Custom(c) => c.message.write_json(
                out,
                c.id.as_ref(),
                c.turn_id.as_ref(),
                &c.parent_id,
                c.timestamp,
            ),
            Self::Unknown(u) => {
                out.extend_from_slice(u.raw_bytes());
                Ok(())
            }
        }
    }

    /// The line as compact JSON, without a newline.
    pub fn to_line(&self) -> serde_json::Result<String> {
        let mut out = Vec::with_capacity(256);
        self.write_line(&mut out)?;
        String::from_utf8(out).map_err(serde::ser::Error::custom)
    }
}

impl From<Message> for AgentMessage {
    fn from(message: Message) -> Self {
        Self::Llm(LlmMessage::new(message))
    }
}

impl From<LlmMessage> for AgentMessage {
    fn from(message: LlmMessage) -> Self {
        Self::Llm(message)
    }
}

impl From<AppMessage> for AgentMessage {
    fn from(entry: AppMessage) -> Self {
        Self::Custom(entry)
    }
}

impl From<UnknownMessage> for AgentMessage {
    fn from(unknown: UnknownMessage) -> Self {
        Self::Unknown(unknown)
    }
}

impl<T: CustomMessage> From<T> for AgentMessage {
    fn from(message: T) -> Self {
        Self::custom(message)
    }
}
