//! Not public API. Used by generated code.
//!
//! Every item here is named only by the code `#[derive(AgentMessage)]` writes,
//! through `::agentmsg::__private` (or `crate = path`).

use std::fmt::Display;

use crate::message::{AssistantMessage, StopReason, SystemMessage, UserMessage};
use crate::message::{IntoAssistantContent, IntoSystemContent, IntoUserContent};
use crate::{AssistantContent, TextContent, UserContent};

/// Not public API. Used by generated code.
pub use inventory;
/// Not public API. Used by generated code.
pub use serde_json::Value;
/// Not public API. Used by generated code.
pub use std::{format, option::Option, result::Result, vec, vec::Vec};

/// Not public API. Used by generated code.
pub use crate::message::Message;
/// Not public API. Used by generated code.
pub use crate::transcript::custom::Registration;
/// Not public API. Used by generated code.
pub use crate::transcript::custom::{CustomMessage, MigrateError};

/// Not public API. Used by generated code: a template placeholder's field, which
/// must be `Display` (the call is spanned at the field's type).
#[inline]
pub fn display<T: Display>(value: &T) -> &dyn Display {
    value
}

/// Not public API. Used by generated code: a `to_llm = user` content field
/// (spanned at the field's type, so a block the role does not allow is reported
/// there, by `IntoUserContent`'s diagnostic).
#[inline]
pub fn user_content<T: IntoUserContent + Clone>(value: &T) -> UserContent {
    value.clone().into_user_content()
}

/// Not public API. Used by generated code: a `to_llm = assistant` content field.
#[inline]
pub fn assistant_content<T: IntoAssistantContent + Clone>(value: &T) -> AssistantContent {
    value.clone().into_assistant_content()
}

/// Not public API. Used by generated code: a `to_llm = system` content field.
#[inline]
pub fn system_content<T: IntoSystemContent + Clone>(value: &T) -> TextContent {
    value.clone().into_system_content()
}

/// Not public API. Used by generated code. The projection carries no timestamp
/// (0), so projecting twice gives the same messages.
pub fn user_message(content: Vec<UserContent>) -> Message {
    Message::User(UserMessage {
        content,
        timestamp: 0,
    })
}

/// Not public API. Used by generated code.
pub fn assistant_message(content: Vec<AssistantContent>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        stop_reason: StopReason::Stop,
        ..AssistantMessage::default()
    })
}

/// Not public API. Used by generated code.
pub fn system_message(content: Vec<TextContent>) -> Message {
    Message::System(SystemMessage {
        content,
        timestamp: 0,
    })
}

/// Not public API. Used by generated code: `to_llm = user("template")`.
pub fn user_text(text: String) -> Message {
    user_message(vec![UserContent::Text(TextContent::new(text))])
}

/// Not public API. Used by generated code: `to_llm = assistant("template")`.
pub fn assistant_text(text: String) -> Message {
    assistant_message(vec![AssistantContent::Text(TextContent::new(text))])
}

/// Not public API. Used by generated code: `to_llm = system("template")`.
pub fn system_text(text: String) -> Message {
    system_message(vec![TextContent::new(text)])
}

/// Not public API. Used by generated code: `migrate = path`, whose error only
/// needs to be `Display`.
pub fn run_migration<E: Display>(
    migrate: fn(u32, Value) -> Result<Value, E>,
    from: u32,
    value: Value,
) -> Result<Value, MigrateError> {
    migrate(from, value).map_err(|e| MigrateError::new(e.to_string()))
}

/// Not public API. Used by generated code: the type of a field marked
/// `#[agent_message(timestamp)]`.
#[diagnostic::on_unimplemented(
    message = "a `#[agent_message(timestamp)]` field must be `u64` or `Option<u64>`, not `{Self}`",
    label = "not Unix milliseconds",
    note = "the message's time is Unix milliseconds; remove the attribute to keep this field as data"
)]
pub trait FieldTimestamp {
    /// Not public API. The time in Unix milliseconds.
    fn millis(&self) -> Option<u64>;
}

/// 0 is no time, as in an LLM message.
impl FieldTimestamp for u64 {
    fn millis(&self) -> Option<u64> {
        (*self != 0).then_some(*self)
    }
}

impl FieldTimestamp for Option<u64> {
    fn millis(&self) -> Option<u64> {
        *self
    }
}

/// Not public API. Used by generated code: the time in a field marked
/// `#[agent_message(timestamp)]` (spanned at the field's type).
#[inline]
pub fn field_timestamp<T: FieldTimestamp>(value: &T) -> Option<u64> {
    value.millis()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_module_is_named_after_the_version() {
        // The derive names `__private_<version>` (agentmsg-macros' `private_module`):
        // on a version bump, rename the module in runtime/src/lib.rs and src/lib.rs.
        assert_eq!(
            format!("__private_{}", env!("CARGO_PKG_VERSION").replace('.', "_")),
            "__private_0_1_0"
        );
    }
}
