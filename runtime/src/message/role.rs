//! [`Role`]: who speaks a message a model sees.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The roles of the transcript, as written in `"role"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// `"system"`
    System,
    /// `"user"`
    User,
    /// `"assistant"`
    Assistant,
    /// `"toolResult"`
    ToolResult,
}

impl Role {
    /// The role written as `name` in JSON (e.g. `"toolResult"`), if it is one.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::Role;
    /// for role in [Role::System, Role::User, Role::Assistant, Role::ToolResult] {
    ///     assert_eq!(Role::from_name(role.as_str()), Some(role));
    /// }
    /// assert_eq!(Role::from_name("notice"), None);
    /// assert_eq!(Role::from_name("User"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "system" => Some(Self::System),
            "user" => Some(Self::User),
            "assistant" => Some(Self::Assistant),
            "toolResult" => Some(Self::ToolResult),
            _ => None,
        }
    }

    /// The role as written in JSON.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::ToolResult => "toolResult",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
