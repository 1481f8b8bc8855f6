//! The wire form of a transcript line that holds an LLM message: the message's
//! own fields plus the envelope keys (`role`, `id`, `turnId`, `parentId`, `v`), read by one
//! derived decoder. This is the fastest way serde has to read such a line: the
//! same work as decoding the bare message, plus the envelope values, with no
//! wrapper between the parser and the fields.
//!
//! Each `*Line` struct (made by `line_form!`) repeats its message's fields with
//! the same decoding attributes. The compiler checks the field lists
//! (`into_message` names every field of the message); a property test checks the
//! attributes by decoding random, mutated lines both ways
//! (`line_reader_agrees_with_the_message_types` in `tests/core_roundtrip.rs`).

use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::{
    present_value, text_blocks, tool_result_blocks, user_blocks, AssistantMessage, LlmMessage,
    Message, MessageId, ParentId, StopReason, SystemMessage, ToolResultMessage, TurnId,
    UserMessage,
};
use crate::content::{AssistantContent, Role, TextContent, ToolResultContent, UserContent};
use crate::usage::Usage;

/// A line of one LLM role, decoded in one pass.
pub(crate) trait LineForm<'de>: Deserialize<'de> {
    /// The line's role.
    const ROLE: Role;

    /// The message with the line's `id` and `turnId`, or the line's `v` when it
    /// has one (an LLM message has no version, so that is an error).
    fn into_message(self) -> Result<LlmMessage, u32>;
}

/// The role an LLM line must have.
pub(crate) trait RoleName {
    const ROLE: Role;
}

/// The `"role"` value, checked against `R` (nothing is kept).
pub(crate) struct Expect<R>(PhantomData<R>);

impl<'de, R: RoleName> Deserialize<'de> for Expect<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Expect(PhantomData))
    }
}

impl<'de, R: RoleName> Visitor<'de> for Expect<R> {
    type Value = Expect<R>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the role `{}`", R::ROLE.as_str())
    }

    fn visit_str<E: de::Error>(self, role: &str) -> Result<Self::Value, E> {
        if role == R::ROLE.as_str() {
            Ok(self)
        } else {
            Err(E::custom(format_args!("unexpected role `{role}`")))
        }
    }
}

macro_rules! role_name {
    ($name:ident, $role:expr) => {
        pub(crate) struct $name;
        impl RoleName for $name {
            const ROLE: Role = $role;
        }
    };
}

role_name!(IsSystem, Role::System);
role_name!(IsUser, Role::User);
role_name!(IsAssistant, Role::Assistant);
role_name!(IsToolResult, Role::ToolResult);

/// Defines `$line`, the wire form of `Message::$variant($message)`: the message's
/// fields, each listed once with its decoding attributes, then the envelope
/// keys. `into_message` builds the message from the same list, so a field added
/// to the message and not here fails to compile.
macro_rules! line_form {
    (
        $line:ident => $variant:ident($message:ident), role $is:ident {
            $( $(#[$attr:meta])* $field:ident: $ty:ty, )*
        }
    ) => {
        #[doc = concat!("[`", stringify!($message), "`]'s line.")]
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        pub(crate) struct $line {
            #[serde(rename = "role")]
            _role: Expect<$is>,
            $( $(#[$attr])* $field: $ty, )*
            #[serde(default)]
            id: Option<MessageId>,
            #[serde(default)]
            turn_id: Option<TurnId>,
            #[serde(default)]
            parent_id: ParentId,
            #[serde(default)]
            v: Option<u32>,
        }

        impl LineForm<'_> for $line {
            const ROLE: Role = <$is as RoleName>::ROLE;

            #[inline(always)]
            fn into_message(self) -> Result<LlmMessage, u32> {
                if let Some(v) = self.v {
                    return Err(v);
                }
                Ok(LlmMessage {
                    message: Message::$variant($message { $( $field: self.$field, )* }),
                    id: self.id,
                    turn_id: self.turn_id,
                    parent_id: self.parent_id,
                })
            }
        }
    };
}

line_form! {
    SystemLine => System(SystemMessage), role IsSystem {
        #[serde(deserialize_with = "text_blocks")]
        content: Vec<TextContent>,
        #[serde(default)]
        timestamp: u64,
    }
}

line_form! {
    UserLine => User(UserMessage), role IsUser {
        #[serde(deserialize_with = "user_blocks")]
        content: Vec<UserContent>,
        #[serde(default)]
        timestamp: u64,
    }
}

line_form! {
    AssistantLine => Assistant(AssistantMessage), role IsAssistant {
        content: Vec<AssistantContent>,
        #[serde(default)]
        api: String,
        #[serde(default)]
        provider: String,
        #[serde(default)]
        model: String,
        #[serde(default)]
        response_id: Option<String>,
        #[serde(default)]
        usage: Usage,
        #[serde(default)]
        stop_reason: StopReason,
        #[serde(default)]
        error_message: Option<String>,
        #[serde(default)]
        timestamp: u64,
    }
}

line_form! {
    ToolResultLine => ToolResult(ToolResultMessage), role IsToolResult {
        tool_call_id: String,
        tool_name: String,
        #[serde(deserialize_with = "tool_result_blocks")]
        content: Vec<ToolResultContent>,
        #[serde(default)]
        is_error: bool,
        #[serde(default)]
        timestamp: u64,
        #[serde(default, deserialize_with = "present_value")]
        details: Option<serde_json::Value>,
    }
}
