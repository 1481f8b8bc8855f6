//! The `CustomMessage` trait: an application's own message kind, and its
//! object-safe side ([`DynCustomMessage`]) used behind `Box<dyn …>` in a transcript.

use std::any::{Any, TypeId};
use std::fmt;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::message::{Message, MessageId, ParentId, TurnId};

/// An application-defined message kind. Derive it with `#[derive(AgentMessage)]`
/// rather than implementing it by hand: the derive also registers the kind, so
/// persisted transcripts decode back into the type.
///
/// A custom message is written as one flat object whose `"role"` is [`KIND`]:
///
/// ```json
/// {"role":"notice","text":"session resumed","id":"0193…"}
/// ```
///
/// Its data reaches a model only through [`to_llm`](CustomMessage::to_llm), the
/// projection it declares; nothing else turns it into an LLM message.
///
/// `Debug`, `Clone` and `PartialEq` are required because a transcript's
/// [`AgentMessage`](crate::AgentMessage) has them for every message it holds: a
/// kind without them could only be cloned or compared through its JSON, which
/// drops `#[serde(skip)]` fields and compares maps by their order.
///
/// [`KIND`]: CustomMessage::KIND
pub trait CustomMessage:
    DynCustomMessage + fmt::Debug + Clone + PartialEq + Serialize + DeserializeOwned
{
    /// The stable discriminator written as `"role"`.
    const KIND: &'static str;
    /// The schema version of the kind, written as `"v"` when above 1.
    const VERSION: u32 = 1;
    /// Older kinds that also decode into this type.
    const ALIASES: &'static [&'static str] = &[];

    /// Whether the type keeps its time in a field of its own, marked
    /// `#[agent_message(timestamp)]` (pi's kinds do: `"timestamp"` is one of
    /// their fields). Such a type's line carries no envelope `timestamp`.
    const TIMESTAMP_FIELD: bool = false;

    /// What a model sees of this message; empty for a UI-only message.
    fn to_llm(&self) -> Vec<Message> {
        Vec::new()
    }

    /// The time in the field marked `#[agent_message(timestamp)]`, in Unix
    /// milliseconds; `None` for a type without one (its time is in the
    /// envelope, [`AppMessage::timestamp`]).
    fn timestamp(&self) -> Option<u64> {
        None
    }

    /// Brings a stored object of version `from` (below [`VERSION`]) up to the
    /// current shape. `value` is the object without `role`, `id`, `turnId` and `v`.
    ///
    /// [`VERSION`]: CustomMessage::VERSION
    fn migrate(from: u32, value: serde_json::Value) -> Result<serde_json::Value, MigrateError> {
        drop(value);
        Err(no_migration(Self::KIND, from, Self::VERSION))
    }
}

/// The error of the default [`CustomMessage::migrate`], shared by every kind.
fn no_migration(kind: &str, from: u32, to: u32) -> MigrateError {
    MigrateError::new(format!(
        "kind `{kind}` has no migration from version {from} to {to}"
    ))
}

/// A migration of a stored custom message failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MigrateError {
    /// What went wrong, as the migration function said it.
    pub message: String,
}

impl MigrateError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// The object-safe side of [`CustomMessage`], implemented for every custom type.
/// It is what a transcript holds (`Box<dyn DynCustomMessage>`).
pub trait DynCustomMessage: Any + Send + Sync + fmt::Debug {
    /// The kind, [`CustomMessage::KIND`].
    fn kind(&self) -> &'static str;
    /// The schema version, [`CustomMessage::VERSION`].
    fn version(&self) -> u32;
    /// The Rust type's name, for diagnostics.
    fn type_name(&self) -> &'static str;
    /// A boxed clone.
    fn clone_box(&self) -> Box<dyn DynCustomMessage>;
    /// Whether `other` is the same type with an equal value.
    fn eq_dyn(&self, other: &dyn DynCustomMessage) -> bool;
    /// The value as `Any`, for downcasting.
    fn as_any(&self) -> &dyn Any;
    /// The value as mutable `Any`, for downcasting.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The box as `Box<dyn Any>`, for downcasting by value.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// The type's own fields, for any serializer.
    fn as_serialize(&self) -> &dyn erased_serde::Serialize;
    /// The declared projection, [`CustomMessage::to_llm`].
    fn project(&self) -> Vec<Message>;
    /// [`CustomMessage::TIMESTAMP_FIELD`].
    fn has_timestamp_field(&self) -> bool;
    /// The time in the type's own field, [`CustomMessage::timestamp`].
    fn own_timestamp(&self) -> Option<u64>;
}

impl<T: CustomMessage> DynCustomMessage for T {
    fn kind(&self) -> &'static str {
        T::KIND
    }

    fn version(&self) -> u32 {
        T::VERSION
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }

    fn clone_box(&self) -> Box<dyn DynCustomMessage> {
        Box::new(self.clone())
    }

    fn eq_dyn(&self, other: &dyn DynCustomMessage) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }

    fn as_serialize(&self) -> &dyn erased_serde::Serialize {
        self
    }

    fn project(&self) -> Vec<Message> {
        self.to_llm()
    }

    fn has_timestamp_field(&self) -> bool {
        T::TIMESTAMP_FIELD
    }

    fn own_timestamp(&self) -> Option<u64> {
        self.timestamp()
    }
}

impl dyn DynCustomMessage {
    /// Whether the value is a `T`.
    pub fn is<T: CustomMessage>(&self) -> bool {
        self.as_any().type_id() == TypeId::of::<T>()
    }

    /// The value as a `T`, if it is one.
    pub fn downcast_ref<T: CustomMessage>(&self) -> Option<&T> {
        self.as_any().downcast_ref()
    }

    /// The value as a mutable `T`, if it is one.
    pub fn downcast_mut<T: CustomMessage>(&mut self) -> Option<&mut T> {
        self.as_any_mut().downcast_mut()
    }
}

impl Clone for Box<dyn DynCustomMessage> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl PartialEq for dyn DynCustomMessage {
    fn eq(&self, other: &Self) -> bool {
        self.eq_dyn(other)
    }
}

/// A custom message as it stands in a transcript, with its optional `id`,
/// `turnId` and `timestamp`. `AgentMessage::Custom` holds one.
///
/// ```json
/// {"role":"notice","text":"session resumed","timestamp":1765238302057,"id":"0193a4b2-7c1e-7000-8000-000000000001"}
/// ```
///
/// The `timestamp` (Unix milliseconds) is set when the entry is made
/// ([`AppMessage::new`], `AgentMessage::from`), written after the type's
/// fields and read back; a line written before there were timestamps reads
/// with `None`. A type that keeps its time in a field of its own
/// (`#[agent_message(timestamp)]`, as pi's kinds do) has no envelope
/// timestamp: [`AppMessage::timestamp`] reads its field.
#[derive(Debug, Clone)]
pub struct AppMessage {
    /// The message.
    pub message: Box<dyn DynCustomMessage>,
    /// The message's id, if it has one.
    pub id: Option<MessageId>,
    /// The turn that produced it, if known.
    pub turn_id: Option<TurnId>,
    /// Where it hangs in the session tree (`"parentId"`; absent by default).
    pub parent_id: ParentId,
    /// When it was made (`"timestamp"`, Unix milliseconds), for a type without
    /// a timestamp field of its own; `None` on lines written without one.
    /// [`AppMessage::timestamp`] is the time whichever holds it.
    pub timestamp: Option<u64>,
}

impl PartialEq for AppMessage {
    fn eq(&self, other: &Self) -> bool {
        self.message.eq_dyn(&*other.message)
            && self.id == other.id
            && self.turn_id == other.turn_id
            && self.parent_id == other.parent_id
            && self.timestamp == other.timestamp
    }
}

impl AppMessage {
    /// An entry without id or turn, made now: its `timestamp` is the current
    /// time, unless the type keeps its time in a field of its own.
    pub fn new<T: CustomMessage>(message: T) -> Self {
        Self {
            message: Box::new(message),
            id: None,
            turn_id: None,
            parent_id: ParentId::Previous,
            timestamp: made_now(T::TIMESTAMP_FIELD),
        }
    }

    /// This entry with `timestamp` (Unix milliseconds) as its time. For a type
    /// with a timestamp field of its own the field stands and this changes
    /// nothing.
    #[must_use]
    pub fn with_timestamp(mut self, timestamp: u64) -> Self {
        if !self.message.has_timestamp_field() {
            self.timestamp = Some(timestamp);
        }
        self
    }

    /// When the message was made, in Unix milliseconds: its own timestamp
    /// field when the type has one, else the envelope's; `None` for a line
    /// written without one.
    pub fn timestamp(&self) -> Option<u64> {
        if self.message.has_timestamp_field() {
            self.message.own_timestamp()
        } else {
            self.timestamp
        }
    }

    /// What a model sees of the message ([`CustomMessage::to_llm`]), each
    /// projected message carrying the entry's time when it has one (so the
    /// projection is the same whenever it is made).
    pub fn project(&self) -> Vec<Message> {
        let mut projected = self.message.project();
        if let Some(at) = self.timestamp() {
            for message in &mut projected {
                message.set_timestamp(at);
            }
        }
        projected
    }

    /// The kind of the message.
    pub fn kind(&self) -> &'static str {
        self.message.kind()
    }

    /// The message as a `T`, if it is one.
    pub fn downcast_ref<T: CustomMessage>(&self) -> Option<&T> {
        self.message.downcast_ref()
    }

    /// The message as a `T` by value; the entry back when it is not one.
    // As `Box<dyn Any>::downcast`, the value itself comes back on failure; boxing
    // it (128 bytes with two inline ids) would cost an allocation on every miss.
    #[allow(clippy::result_large_err)]
    pub fn downcast<T: CustomMessage>(self) -> Result<T, Self> {
        if self.message.is::<T>() {
            match self.message.into_any().downcast::<T>() {
                Ok(value) => Ok(*value),
                // `is` said it is a `T`; this arm is never taken.
                Err(_) => unreachable_downcast(),
            }
        } else {
            Err(self)
        }
    }
}

/// The time of an entry made now: the current time, unless the type keeps its
/// time in a field of its own.
fn made_now(timestamp_field: bool) -> Option<u64> {
    (!timestamp_field).then(crate::message::now_ms)
}

#[cold]
fn unreachable_downcast<T>() -> T {
    unreachable!("type id checked before downcast")
}
