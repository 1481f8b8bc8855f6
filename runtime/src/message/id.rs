//! `MessageId` and `TurnId`: strings that hold a UUID without a heap allocation.
//!
//! Every line of a transcript carries an `id` and usually a `turnId`. Both keep
//! up to [`INLINE_ID_BYTES`] (36) bytes inline: a hyphenated UUID or one of pi's
//! 8-digit ids, so reading a line allocates no heap block for them. A longer id
//! goes to the heap.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};
use smallstr::SmallString;

/// How many bytes of an id are kept inline, without allocating.
pub const INLINE_ID_BYTES: usize = 36;

type IdText = SmallString<[u8; INLINE_ID_BYTES]>;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(IdText);

        /// A copy of the bytes (`SmallVec`'s own `clone` pushes them one at a
        /// time; sessions clone every entry's id).
        impl Clone for $name {
            fn clone(&self) -> Self {
                Self(IdText::from_str(self.as_str()))
            }
        }

        impl $name {
            /// A fresh UUIDv7 (kept inline).
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                use std::fmt::Write as _;
                let mut text = IdText::new();
                // 36 bytes, kept inline: writing to it cannot fail.
                let _ = write!(text, "{}", super::uuid_v7::new());
                Self(text)
            }

            /// The id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as an owned `String`.
            pub fn into_string(self) -> String {
                self.0.into_string()
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($name)).field(&self.as_str()).finish()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(IdText::from_str(s))
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                // Short ids move inline (and the `String` is freed); long ones
                // keep its buffer.
                Self(IdText::from_string(s))
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.into_string()
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        /// Hashes and compares as the `str` does, so a map keyed by ids can be
        /// looked up with a `&str`.
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }
    };
}

id_type! {
    /// A message's id in a transcript (`"id"`). [`MessageId::new`] makes a UUIDv7, so
    /// ids sort by creation time.
    ///
    /// Any string is an id. Up to 36 bytes (a UUID, pi's 8-digit
    /// ids) are kept without a heap allocation.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use agentmsg::MessageId;
    /// let id = MessageId::from("e3a1f0c2");
    /// assert_eq!(id.as_str(), "e3a1f0c2");
    /// assert_eq!(serde_json::to_string(&id).unwrap(), r#""e3a1f0c2""#);
    /// assert_eq!(MessageId::new().as_str().len(), 36);
    /// ```
    MessageId
}

id_type! {
    /// The turn of the agent loop that produced a message (`"turnId"`).
    /// [`TurnId::new`] makes a UUIDv7.
    ///
    /// Any string is a turn id. Up to 36 bytes are kept without a
    /// heap allocation.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// use std::collections::HashMap;
    /// use agentmsg::TurnId;
    /// let mut turns = HashMap::new();
    /// turns.insert(TurnId::from("t1"), 3);
    /// assert_eq!(turns.get("t1"), Some(&3)); // looked up by `&str`
    /// ```
    TurnId
}

/// Where a transcript line hangs in the session tree (`"parentId"`).
///
/// A line without the key follows the line before it, so a transcript written
/// before `parentId` existed reads as one branch; `"parentId": null` marks a
/// root; a string names the parent entry. The three stay distinct so a line
/// reads and writes back as it was.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::{AgentMessage, MessageId, ParentId};
/// let line = r#"{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1,"id":"b","parentId":"a"}"#;
/// let message = AgentMessage::from_line(line).unwrap();
/// assert_eq!(message.parent_id(), &ParentId::Id(MessageId::from("a")));
/// assert_eq!(message.to_line().unwrap(), line);
/// let root = AgentMessage::from_line(r#"{"role":"user","content":"hi","timestamp":1,"parentId":null}"#).unwrap();
/// assert_eq!(root.parent_id(), &ParentId::Root);
/// let old = AgentMessage::from_line(r#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
/// assert_eq!(old.parent_id(), &ParentId::Previous);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ParentId {
    /// No `parentId` key: the line follows the line before it.
    #[default]
    Previous,
    /// `"parentId": null`: the line starts a tree.
    Root,
    /// `"parentId": "<id>"`: the line is a child of that entry.
    Id(MessageId),
}

impl ParentId {
    /// Whether the line has no `parentId` key.
    pub fn is_previous(&self) -> bool {
        matches!(self, Self::Previous)
    }

    /// The parent's id, when the line names one.
    pub fn id(&self) -> Option<&MessageId> {
        match self {
            Self::Id(id) => Some(id),
            _ => None,
        }
    }
}

impl Serialize for ParentId {
    /// `null` for a root, the id for a parent; [`ParentId::Previous`] is not
    /// written at all by the line writers (and is `null` if asked).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Id(id) => id.serialize(serializer),
            _ => serializer.serialize_none(),
        }
    }
}

impl<'de> Deserialize<'de> for ParentId {
    /// `null` is [`ParentId::Root`], a string [`ParentId::Id`]; an absent key is
    /// the `Default`, [`ParentId::Previous`].
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<MessageId>::deserialize(deserializer)? {
            Some(id) => Self::Id(id),
            None => Self::Root,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_any_length_round_trip_and_hash_as_their_text() {
        use std::collections::hash_map::DefaultHasher;
        use std::hash::{Hash, Hasher};
        let long = "x".repeat(INLINE_ID_BYTES + 1);
        for text in [
            "",
            "t1",
            "0193a4b2-7c1e-7000-8000-000000000001",
            &long,
            "é✓",
        ] {
            let id = MessageId::from(text);
            assert_eq!(id.as_str(), text);
            assert_eq!(MessageId::from(text.to_owned()), id);
            assert_eq!(String::from(id.clone()), text);
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            assert_eq!(serde_json::from_str::<MessageId>(&json).unwrap(), id);
            let hash = |h: &dyn Fn(&mut DefaultHasher)| {
                let mut s = DefaultHasher::new();
                h(&mut s);
                s.finish()
            };
            assert_eq!(hash(&|s| id.hash(s)), hash(&|s| text.hash(s)));
        }
        // Escapes decode as for a `String`.
        let id: TurnId = serde_json::from_str(r#""a\"b\u00e9""#).unwrap();
        assert_eq!(id, "a\"bé");
        assert!(serde_json::from_str::<TurnId>("3").is_err());
        assert_eq!(format!("{:?}", TurnId::from("t1")), r#"TurnId("t1")"#);
    }
}
