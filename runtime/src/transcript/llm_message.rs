//! [`LlmMessage`]: a [`Message`] as it stands in a transcript line, with its
//! envelope.

use crate::{Message, MessageId, ParentId, TurnId};

/// A [`Message`] as it stands in a transcript, with its optional `id` and `turnId`
/// flattened into the same JSON object. A line without them decodes with `None`.
///
/// ```json
/// {"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1765233665292,"id":"0193a4b2-7c1e-7000-8000-000000000001","turnId":"t1"}
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct LlmMessage {
    /// The message.
    pub message: Message,
    /// The message's id, if it has one.
    pub id: Option<MessageId>,
    /// The turn that produced it, if known.
    pub turn_id: Option<TurnId>,
    /// Where it hangs in the session tree (`"parentId"`; absent by default).
    pub parent_id: ParentId,
}

impl LlmMessage {
    /// A message without id or turn.
    pub fn new(message: impl Into<Message>) -> Self {
        Self {
            message: message.into(),
            id: None,
            turn_id: None,
            parent_id: ParentId::Previous,
        }
    }

    /// A message in a turn.
    pub fn with_turn(message: impl Into<Message>, turn_id: TurnId) -> Self {
        Self {
            message: message.into(),
            id: None,
            turn_id: Some(turn_id),
            parent_id: ParentId::Previous,
        }
    }

    /// The same message with this id.
    #[must_use]
    pub fn with_id(mut self, id: MessageId) -> Self {
        self.id = Some(id);
        self
    }
}

impl From<Message> for LlmMessage {
    fn from(message: Message) -> Self {
        Self::new(message)
    }
}
