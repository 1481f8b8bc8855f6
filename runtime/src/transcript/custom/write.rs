//! A custom message written as a line: its fields through the codec's line
//! writer, refused when the global registry could not read the line back
//! into its type (two types claim its kind).

use super::app_message::{AppMessage, DynCustomMessage};
use super::registry::Registry;
use crate::message::{MessageId, ParentId, TurnId};
use crate::transcript::codec::envelope::write_line;
use serde::Serialize;

/// Fails when a line of `kind` would not read back into its type because the
/// global registry finds two types claiming the kind (a line is never written
/// that its own program would keep as unknown).
fn readable_back<E: serde::ser::Error>(kind: &str, type_name: &str) -> Result<(), E> {
    match Registry::global().duplicate(kind) {
        None => Ok(()),
        Some(duplicate) => Err(E::custom(format_args!(
            "cannot write a `{kind}` line of `{type_name}`: {duplicate}, so it would read back as neither; give one of them another kind"
        ))),
    }
}

impl dyn DynCustomMessage {
    /// Appends the whole line (`role`, fields, `id`, `turnId`, `v`) as compact JSON,
    /// without a newline. The transcript writer's fast path: one function for
    /// every type, which writes the fields through
    /// [`as_serialize`](DynCustomMessage::as_serialize), the one instantiation of
    /// a type's `Serialize`.
    pub fn write_json(
        &self,
        out: &mut Vec<u8>,
        id: Option<&MessageId>,
        turn_id: Option<&TurnId>,
        parent_id: &ParentId,
        timestamp: Option<u64>,
    ) -> serde_json::Result<()> {
        readable_back::<serde_json::Error>(self.kind(), self.type_name())?;
        let mut serializer = serde_json::Serializer::new(out);
        write_line(
            &mut serializer,
            self.kind(),
            self.as_serialize(),
            (id, turn_id, parent_id),
            self.version(),
            timestamp.filter(|_| !self.has_timestamp_field()),
        )
    }
}

impl Serialize for AppMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        readable_back::<S::Error>(self.message.kind(), self.message.type_name())?;
        write_line(
            serializer,
            self.message.kind(),
            self.message.as_serialize(),
            (self.id.as_ref(), self.turn_id.as_ref(), &self.parent_id),
            self.message.version(),
            self.timestamp
                .filter(|_| !self.message.has_timestamp_field()),
        )
    }
}
