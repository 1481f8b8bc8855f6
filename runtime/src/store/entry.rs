//! The unit a store keeps: one transcript line, with the keys the store queries.

use std::fmt;

use serde::de::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::{AgentMessage, MessageId, ParentId};

/// One transcript line as a store keeps it: the exact JSON text (no newline),
/// and what the store reads from it to answer queries: `id`, `parentId`, the kind
/// (`"role"`, or pi's `"type"`) and the timestamp.
///
/// The line is the truth: every other field is read from it by
/// [`from_line`](Self::from_line), so they always agree. A line that cannot be
/// read (not JSON, not an object, no kind, an `id` that is not a string) is still
/// an entry, kept byte for byte; `from_line` says what is wrong with it.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::store::StoredEntry;
/// # use agentmsg::ParentId;
/// let (entry, problem) = StoredEntry::from_line(
///     r#"{"role":"user","content":"hi","id":"e2","parentId":"e1","timestamp":1765233665292}"#,
/// );
/// assert!(problem.is_none());
/// assert_eq!(entry.id(), Some("e2"));
/// assert_eq!(entry.parent(), &ParentId::Id("e1".into()));
/// assert_eq!(entry.kind(), "user");
/// assert_eq!(entry.timestamp_ms(), Some(1765233665292));
///
/// let (kept, problem) = StoredEntry::from_line("not json");
/// assert_eq!(kept.line(), "not json");
/// assert!(problem.is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEntry {
    id: Option<String>,
    parent: ParentId,
    kind: String,
    timestamp_ms: Option<i64>,
    name: Option<String>,
    line: String,
    /// The first key a store keeps in a column of its own that holds U+0000,
    /// found when the keys were read (while they are in the cache), so that
    /// an append does not read each key again to check it.
    nul_key: Option<NulKey>,
    /// Why no store can keep the line as one line (a newline or a NUL in it,
    /// or nothing but blanks), found when the keys were read: the line is
    /// never changed after, so an append (which may send it many times, to
    /// several stores) does not read it again to check it.
    unstorable: Option<&'static str>,
}

/// A key a store keeps in a column of its own. PostgreSQL's text columns
/// cannot hold U+0000 (written `\u0000` in the line), so no store takes an
/// entry with one in such a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NulKey {
    /// `id`.
    Id,
    /// `parentId`.
    Parent,
    /// The kind (`role`, or `type`).
    Kind,
    /// The session name of a `session_info` line.
    SessionName,
}

impl NulKey {
    /// Why an entry with U+0000 in this key is refused.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            NulKey::Id => "its id holds U+0000 (NUL), which no store keeps in a key",
            NulKey::Parent => "its parentId holds U+0000 (NUL), which no store keeps in a key",
            NulKey::Kind => "its kind holds U+0000 (NUL), which no store keeps in a key",
            NulKey::SessionName => {
                "its session name holds U+0000 (NUL), which no store keeps in a key"
            }
        }
    }
}

/// Why a line's keys could not all be read. The line is kept all the same.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineProblem {
    /// The line is not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The line is JSON but not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// The object has neither a string `"role"` nor a string `"type"`.
    #[error("no \"role\" (or \"type\") string")]
    NoKind,
    /// A key the store reads holds the wrong type.
    #[error("\"{key}\" is not {expected}")]
    BadKey {
        /// The key.
        key: &'static str,
        /// What it should hold.
        expected: &'static str,
    },
}

impl StoredEntry {
    /// Reads `line` (one JSON object, no newline) tolerantly: what can be read is
    /// read, and the first thing that could not is returned beside the entry.
    pub fn from_line(line: impl Into<String>) -> (StoredEntry, Option<LineProblem>) {
        let line = line.into();
        let (keys, problem) = read_keys(&line);
        let mut entry = StoredEntry {
            id: keys.id,
            parent: keys.parent,
            kind: keys.kind,
            timestamp_ms: keys.timestamp_ms,
            name: keys.name,
            unstorable: unstorable(&line),
            line,
            nul_key: None,
        };
        let nul_key = [
            (NulKey::Id, entry.id()),
            (NulKey::Parent, entry.parent().id().map(MessageId::as_str)),
            (NulKey::Kind, Some(entry.kind())),
            (NulKey::SessionName, entry.session_name()),
        ]
        .into_iter()
        .find(|(_, value)| value.is_some_and(|v| v.contains('\0')))
        .map(|(key, _)| key);
        entry.nul_key = nul_key;
        (entry, problem)
    }

    /// The entry of `message`, encoded as a transcript line.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AgentMessage, Message};
    /// # use agentmsg::store::StoredEntry;
    /// let entry = StoredEntry::from_message(&AgentMessage::from(Message::user("hi"))).unwrap();
    /// assert_eq!(entry.kind(), "user");
    /// ```
    pub fn from_message(message: &AgentMessage) -> serde_json::Result<StoredEntry> {
        let mut line = Vec::with_capacity(256);
        message.write_line(&mut line)?;
        // `write_line` writes JSON, which is UTF-8.
        let line = String::from_utf8(line).map_err(serde::ser::Error::custom)?;
        Ok(StoredEntry::from_line(line).0)
    }

    /// The line's `"id"`.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The line's `"parentId"`.
    pub fn parent(&self) -> &ParentId {
        &self.parent
    }

    /// The line's kind: its `"role"`, or pi's `"type"`; empty when it has
    /// neither.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The line's `"timestamp"` in milliseconds since the Unix epoch (a number,
    /// or an RFC 3339 string as pi writes).
    pub fn timestamp_ms(&self) -> Option<i64> {
        self.timestamp_ms
    }

    /// The session name a `session_info` line sets (pi's convention:
    /// `{"type":"session_info","name":"…"}`).
    pub fn session_name(&self) -> Option<&str> {
        (self.kind == SESSION_INFO)
            .then_some(self.name.as_deref())
            .flatten()
    }

    /// The exact line text.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// The first key a store keeps in a column of its own that holds
    /// U+0000, if any.
    pub(crate) fn nul_key(&self) -> Option<NulKey> {
        self.nul_key
    }

    /// Why the line cannot be stored as one line (it holds a newline or a
    /// NUL, or it is blank), if it cannot.
    pub(crate) fn unstorable(&self) -> Option<&'static str> {
        self.unstorable
    }

    /// The line text, taken out.
    pub fn into_line(self) -> String {
        self.line
    }
}

impl fmt::Display for StoredEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line)
    }
}

/// Why `line` cannot be stored as one line of a transcript, if it cannot.
fn unstorable(line: &str) -> Option<&'static str> {
    // One pass for both.
    if let Some(at) = memchr::memchr2(b'\n', b'\0', line.as_bytes()) {
        return Some(if line.as_bytes()[at] == b'\n' {
            "its line holds a newline"
        } else {
            "its line holds a NUL character (JSON text never does)"
        });
    }
    if line.bytes().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return Some("its line is blank");
    }
    None
}

/// The kind of a line that names the session.
pub(crate) const SESSION_INFO: &str = "session_info";

/// A key that is there (possibly `null`), told apart from a missing key.
#[derive(Default)]
enum Present<'a> {
    #[default]
    Absent,
    Value(&'a RawValue),
}

impl<'de: 'a, 'a> Deserialize<'de> for Present<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&RawValue>::deserialize(deserializer).map(Present::Value)
    }
}

#[derive(serde::Deserialize)]
struct RawKeys<'a> {
    #[serde(borrow, default)]
    id: Present<'a>,
    #[serde(borrow, default, rename = "parentId")]
    parent_id: Present<'a>,
    #[serde(borrow, default)]
    role: Present<'a>,
    #[serde(borrow, default, rename = "type")]
    kind: Present<'a>,
    #[serde(borrow, default)]
    timestamp: Present<'a>,
    #[serde(borrow, default)]
    name: Present<'a>,
}

struct Keys {
    id: Option<String>,
    parent: ParentId,
    kind: String,
    timestamp_ms: Option<i64>,
    name: Option<String>,
}

fn read_keys(line: &str) -> (Keys, Option<LineProblem>) {
    let mut keys = Keys {
        id: None,
        parent: ParentId::Previous,
        kind: String::new(),
        timestamp_ms: None,
        name: None,
    };
    if !line.trim_start().starts_with('{') {
        let problem = match serde_json::from_str::<serde::de::IgnoredAny>(line) {
            Ok(_) => LineProblem::NotAnObject,
            Err(e) => LineProblem::NotJson(e.to_string()),
        };
        return (keys, Some(problem));
    }
    let raw: RawKeys<'_> = match serde_json::from_str(line) {
        Ok(raw) => raw,
        // Not JSON, or an object serde cannot take as one (a duplicate key).
        Err(e) => return (keys, Some(LineProblem::NotJson(e.to_string()))),
    };
    let mut problem = None;
    let mut report = |p: LineProblem| {
        problem.get_or_insert(p);
    };
    if let Present::Value(id) = raw.id {
        match string(id) {
            Some(id) => keys.id = Some(id),
            None if id.get() == "null" => {}
            None => report(LineProblem::BadKey {
                key: "id",
                expected: "a string",
            }),
        }
    }
    if let Present::Value(parent) = raw.parent_id {
        match string(parent) {
            Some(parent) => keys.parent = ParentId::Id(MessageId::from(parent)),
            None if parent.get() == "null" => keys.parent = ParentId::Root,
            None => report(LineProblem::BadKey {
                key: "parentId",
                expected: "a string or null",
            }),
        }
    }
    let role = match raw.role {
        Present::Value(role) => string(role),
        Present::Absent => None,
    };
    let kind = role.or_else(|| match raw.kind {
        Present::Value(kind) => string(kind),
        Present::Absent => None,
    });
    match kind {
        Some(kind) => keys.kind = kind,
        None => report(LineProblem::NoKind),
    }
    if let Present::Value(timestamp) = raw.timestamp {
        keys.timestamp_ms = timestamp_ms(timestamp);
    }
    if keys.kind == SESSION_INFO {
        if let Present::Value(name) = raw.name {
            keys.name = string(name);
        }
    }
    (keys, problem)
}

fn string(raw: &RawValue) -> Option<String> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match text[1..text.len() - 1].contains('\\') {
        false => Some(text[1..text.len() - 1].to_owned()),
        true => serde_json::from_str(text).ok(),
    }
}

fn timestamp_ms(raw: &RawValue) -> Option<i64> {
    let text = raw.get();
    if text.starts_with('"') {
        return string(raw).as_deref().and_then(crate::time::parse_iso8601);
    }
    if let Ok(ms) = text.parse::<i64>() {
        return Some(ms);
    }
    let ms = text.parse::<f64>().ok()?;
    (ms.is_finite() && ms.abs() < 9.0e15).then_some(ms as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nul_in_a_stored_key_is_refused_with_the_key_named() {
        let refused = |line: &str| {
            let (entry, _) = StoredEntry::from_line(line);
            match crate::store::validate_entries(&[entry]) {
                Err(crate::store::StoreError::InvalidEntry { reason, .. }) => Some(reason),
                _ => None,
            }
        };
        assert_eq!(refused(r#"{"role":"user","id":"a","parentId":"b"}"#), None);
        let id = refused(r#"{"role":"user","id":"a\u0000","parentId":"b\u0000"}"#);
        assert!(
            id.is_some_and(|r| r.starts_with("its id holds U+0000")),
            "{id:?}"
        );
        let parent = refused(r#"{"role":"user","id":"a","parentId":"b\u0000"}"#);
        assert!(
            parent.is_some_and(|r| r.starts_with("its parentId holds")),
            "{parent:?}"
        );
        let kind = refused(r#"{"role":"us\u0000er","id":"a"}"#);
        assert!(
            kind.is_some_and(|r| r.starts_with("its kind holds")),
            "{kind:?}"
        );
        let name = refused(r#"{"type":"session_info","name":"n\u0000"}"#);
        assert!(
            name.is_some_and(|r| r.starts_with("its session name holds")),
            "{name:?}"
        );
        // Only a session_info line's name is a session name.
        assert_eq!(refused(r#"{"role":"user","name":"n\u0000"}"#), None);
    }

    #[test]
    fn keys_are_read_tolerantly() {
        let (e, p) = StoredEntry::from_line(
            r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-12-08T22:41:05.292Z"}"#,
        );
        assert!(p.is_none());
        assert_eq!(e.kind(), "message");
        assert_eq!(e.parent(), &ParentId::Root);
        assert_eq!(e.timestamp_ms(), Some(1_765_233_665_292));

        let (e, p) = StoredEntry::from_line(r#"{"role":"user","id":7}"#);
        assert_eq!(e.id(), None);
        assert_eq!(
            p,
            Some(LineProblem::BadKey {
                key: "id",
                expected: "a string"
            })
        );
        let (_, p) = StoredEntry::from_line("[1,2]");
        assert_eq!(p, Some(LineProblem::NotAnObject));
        let (_, p) = StoredEntry::from_line(r#"{"x":1}"#);
        assert_eq!(p, Some(LineProblem::NoKind));
        let (e, p) = StoredEntry::from_line(r#"{"role":"a\"b","id":"x\u0041"}"#);
        assert!(p.is_none());
        assert_eq!((e.kind(), e.id()), ("a\"b", Some("xA")));
        let (e, _) = StoredEntry::from_line(r#"{"role":"session_info","name":"fix CI"}"#);
        assert_eq!(e.session_name(), Some("fix CI"));
    }
}
