//! [`UnknownMessage`]: a line kept as it was, and why.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde::de::IgnoredAny;
use serde::Serialize;

use super::codec::envelope::{role_of, Envelope, KeptHead};
use super::failure::{DecodeError, UnknownReason};
use crate::{MessageId, ParentId, TurnId};

/// A line kept as it was, with its kind and why it was not decoded. Writing the
/// transcript back emits [`raw`](Self::raw) unchanged.
///
/// Lines read by the transcript reader ([`decode_line`](crate::transcript::decode_line),
/// [`JsonlReader`](crate::JsonlReader)) keep their exact bytes. Keeping a line
/// costs about a copy of it: a line that no decoder ran on (an unregistered or
/// ambiguous kind, a newer version) is checked only for its `{`, its string
/// `"role"` and its closing `}`, and the rest is parsed on first use by
/// [`id`](Self::id), [`turn_id`](Self::turn_id) or [`validate`](Self::validate)
/// (once; the answer is cached). A line whose decoder ran and failed was parsed
/// already: a syntax error there makes [`decode_line`](crate::transcript::decode_line) fail with
/// [`DecodeError::NotJson`] instead. [`UnknownMessage::new`] validates at once.
///
/// The generic `Deserialize` of [`AgentMessage`](crate::AgentMessage) (used by
/// `serde_json::from_str::<Vec<AgentMessage>>`) cannot see the input's bytes, so
/// it keeps a re-encoding of the object: `role` first, the other keys sorted, then
/// `id`, `turnId` and `v`.
#[derive(Clone)]
pub struct UnknownMessage {
    raw: String,
    /// The exact bytes of a line that is not UTF-8 (`raw` is then a lossy text
    /// of them).
    bytes: Option<Box<[u8]>>,
    kind: KeptKind,
    reason: UnknownReason,
    /// `id`, `turnId` and whether `raw` is well-formed, read on first use.
    parsed: OnceLock<FullParse>,
}

/// Where the kind of a kept line is: a span of its raw text (no allocation), or
/// its own text when the role had escapes.
#[derive(Clone)]
enum KeptKind {
    Span(usize, usize),
    Owned(String),
}

/// What a full parse of a kept line found.
#[derive(Clone, Default)]
struct FullParse {
    id: Option<MessageId>,
    turn_id: Option<TurnId>,
    parent_id: ParentId,
    /// Why the raw text is not one JSON object, if it is not.
    error: Option<String>,
}

impl FullParse {
    /// Parses `raw` once: its `id` and `turnId` (when strings), or why it is not
    /// one JSON object.
    fn parse(raw: &str) -> Self {
        // A derived struct also reads a JSON array; only an object is a line.
        if !raw.trim_start().starts_with('{') {
            return Self {
                error: Some("expected a JSON object".to_owned()),
                ..Self::default()
            };
        }
        match KeptHead::read(raw) {
            Ok(head) => Self {
                id: head.id,
                turn_id: head.turn_id,
                parent_id: head.parent_id,
                error: None,
            },
            Err(e) => Self {
                error: Some(e.to_string()),
                ..Self::default()
            },
        }
    }
}

impl UnknownMessage {
    /// Keeps a re-encoding of an object the generic `Deserialize` read (it
    /// cannot see the input's bytes), with the envelope it took out.
    pub(crate) fn re_encoded(
        raw: String,
        kind: String,
        reason: UnknownReason,
        envelope: Envelope,
    ) -> Self {
        Self {
            raw,
            bytes: None,
            kind: KeptKind::Owned(kind),
            reason,
            parsed: OnceLock::from(FullParse {
                id: envelope.id,
                turn_id: envelope.turn_id,
                parent_id: envelope.parent_id,
                error: None,
            }),
        }
    }

    /// Keeps `raw`, a JSON object whose `"role"` is its kind, for `reason`. Fails
    /// when `raw` is not one JSON object (it is parsed in full here).
    pub fn new(raw: impl Into<String>, reason: UnknownReason) -> Result<Self, DecodeError> {
        let raw = raw.into();
        let kind = match role_of(&raw) {
            Some(Ok(kind)) => kind.into_owned(),
            _ => String::new(),
        };
        Self::keep(raw, kind, reason)
    }

    /// Keeps `raw` after a full parse (its decoder ran, or the caller asked).
    pub(crate) fn keep(
        raw: String,
        kind: String,
        reason: UnknownReason,
    ) -> Result<Self, DecodeError> {
        let head = FullParse::parse(&raw);
        if let Some(error) = head.error {
            return Err(DecodeError::NotJson(error));
        }
        Ok(Self {
            raw,
            bytes: None,
            kind: KeptKind::Owned(kind),
            reason,
            parsed: OnceLock::from(head),
        })
    }

    /// Keeps `line` as it is, parsing nothing: the caller found its string
    /// `"role"` (`kind`, a slice of `line` or an unescaped copy). Only the
    /// object's braces are checked here; [`FullParse::parse`] runs on first use.
    pub(crate) fn keep_unparsed(
        line: &str,
        kind: Cow<'_, str>,
        reason: UnknownReason,
    ) -> Result<Self, DecodeError> {
        let braced = |text: &str| text.starts_with('{') && text.ends_with('}');
        if !(braced(line) || braced(line.trim_matches([' ', '\t', '\n', '\r']))) {
            // Not an object: say where the parser stops.
            let error = match serde_json::from_str::<IgnoredAny>(line) {
                Err(e) => e.to_string(),
                Ok(_) => "expected a JSON object".to_owned(),
            };
            return Err(DecodeError::NotJson(error));
        }
        let kind = match kind {
            Cow::Borrowed(kind) => {
                let start = (kind.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
                match line.get(start..start.wrapping_add(kind.len())) {
                    Some(span) if std::ptr::eq(span, kind) => {
                        KeptKind::Span(start, start + kind.len())
                    }
                    _ => KeptKind::Owned(kind.to_owned()),
                }
            }
            Cow::Owned(kind) => KeptKind::Owned(kind),
        };
        Ok(Self {
            raw: line.to_owned(),
            bytes: None,
            kind,
            reason,
            parsed: OnceLock::new(),
        })
    }

    /// Keeps a line that is not a transcript line at all, byte for byte, with
    /// why: what [`decode_line`](crate::transcript::decode_line) said of it (`error`), or that it is not UTF-8.
    /// Its kind is its `"role"` when it has a string one, otherwise empty. It
    /// never reaches a model, and a transcript writer emits its bytes unchanged.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::custom::Registry;
    /// # use agentmsg::transcript::{decode_line, DecodeMode, UnknownMessage, UnknownReason};
    /// let line = br#"{"content":"no role"}"#;
    /// let error = decode_line(std::str::from_utf8(line).unwrap(), &Registry::new(), DecodeMode::Lenient)
    ///     .unwrap_err();
    /// let kept = UnknownMessage::malformed(line.to_vec(), error);
    /// assert_eq!(kept.raw_bytes(), line);
    /// assert!(matches!(kept.reason(), UnknownReason::Malformed(_)));
    ///
    /// let bytes = b"{\"role\":\"user\xff\"}".to_vec();
    /// let kept = UnknownMessage::malformed(bytes, agentmsg::transcript::DecodeError::MissingRole);
    /// assert_eq!(kept.reason(), &UnknownReason::NotUtf8 { valid_up_to: 13 });
    /// assert_eq!(kept.raw_bytes(), b"{\"role\":\"user\xff\"}");
    /// ```
    pub fn malformed(raw: Vec<u8>, error: DecodeError) -> Self {
        match String::from_utf8(raw) {
            Ok(raw) => {
                let kind = match role_of(&raw) {
                    Some(Ok(kind)) => kind.into_owned(),
                    _ => String::new(),
                };
                let message = error.to_string();
                Self {
                    raw,
                    bytes: None,
                    kind: KeptKind::Owned(kind),
                    reason: UnknownReason::Malformed(Box::new(error)),
                    parsed: OnceLock::from(FullParse {
                        error: Some(message),
                        ..FullParse::default()
                    }),
                }
            }
            Err(e) => {
                let valid_up_to = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes().into_boxed_slice();
                Self {
                    raw: String::from_utf8_lossy(&bytes).into_owned(),
                    bytes: Some(bytes),
                    kind: KeptKind::Owned(String::new()),
                    reason: UnknownReason::NotUtf8 { valid_up_to },
                    parsed: OnceLock::from(FullParse {
                        error: Some(format!(
                            "not UTF-8 (invalid byte at column {})",
                            valid_up_to + 1
                        )),
                        ..FullParse::default()
                    }),
                }
            }
        }
    }

    fn parsed(&self) -> &FullParse {
        self.parsed.get_or_init(|| FullParse::parse(&self.raw))
    }

    /// The exact text of the line (without its newline). For a line that is not
    /// UTF-8 ([`UnknownReason::NotUtf8`]) this is a lossy text of it, with
    /// U+FFFD for each bad sequence; [`raw_bytes`](Self::raw_bytes) has the bytes.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The exact bytes of the line (without its newline); what a transcript
    /// writer emits.
    pub fn raw_bytes(&self) -> &[u8] {
        match &self.bytes {
            Some(bytes) => bytes,
            None => self.raw.as_bytes(),
        }
    }

    /// The `"role"` of the line.
    pub fn kind(&self) -> &str {
        match &self.kind {
            KeptKind::Span(start, end) => self.raw.get(*start..*end).unwrap_or_default(),
            KeptKind::Owned(kind) => kind,
        }
    }

    /// Why it was not decoded.
    pub fn reason(&self) -> &UnknownReason {
        &self.reason
    }

    /// The line's `"id"`, when it is a string (and the line is well-formed).
    pub fn id(&self) -> Option<&MessageId> {
        self.parsed().id.as_ref()
    }

    /// The line's `"turnId"`, when it is a string (and the line is well-formed).
    pub fn turn_id(&self) -> Option<&TurnId> {
        self.parsed().turn_id.as_ref()
    }

    /// The line's `"parentId"`: [`ParentId::Previous`] when absent (or the
    /// line is not well-formed), [`ParentId::Root`] when `null` or not a
    /// string.
    pub fn parent_id(&self) -> &ParentId {
        &self.parsed().parent_id
    }

    /// `Ok` when the raw text is one well-formed JSON object; otherwise
    /// [`DecodeError::NotJson`] with the parser's message. A line whose kind no
    /// decoder claims is kept without being parsed; this parses it (once).
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::AgentMessage;
    /// # use agentmsg::custom::Registry;
    /// # use agentmsg::transcript::{decode_line, DecodeMode};
    /// let line = r#"{"role":"someday","x":[1,}"#;
    /// let kept = decode_line(line, &Registry::new(), DecodeMode::Lenient).unwrap();
    /// let kept = kept.as_unknown().unwrap();
    /// assert_eq!(kept.raw(), line); // still kept byte for byte
    /// assert!(kept.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), DecodeError> {
        match &self.parsed().error {
            None => Ok(()),
            Some(error) => Err(DecodeError::NotJson(error.clone())),
        }
    }

    /// The line parsed as a JSON value.
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(&self.raw)
    }

    /// The exact text of the line (lossy for a line that is not UTF-8; see
    /// [`raw`](Self::raw)).
    pub fn into_raw(self) -> String {
        self.raw
    }
}

impl fmt::Debug for UnknownMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownMessage")
            .field("raw", &self.raw)
            .field("kind", &self.kind())
            .field("reason", &self.reason)
            .finish()
    }
}

/// Two kept lines are equal when their bytes, kinds and reasons are.
impl PartialEq for UnknownMessage {
    fn eq(&self, other: &Self) -> bool {
        self.raw_bytes() == other.raw_bytes()
            && self.kind() == other.kind()
            && self.reason == other.reason
    }
}

impl Eq for UnknownMessage {}

/// Emits the kept line as it is (as a raw JSON value); fails when the line is
/// not well-formed JSON (see [`UnknownMessage::validate`]). The transcript
/// writers do not parse it: they copy its bytes.
impl Serialize for UnknownMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.bytes.is_some() {
            return Err(serde::ser::Error::custom(
                "a kept line that is not UTF-8 cannot be serialized as JSON; write its raw_bytes",
            ));
        }
        let raw: &serde_json::value::RawValue =
            serde_json::from_str(&self.raw).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom::Registry;
    use crate::transcript::{decode_line, DecodeMode};
    use crate::AgentMessage;

    #[test]
    fn messages_cross_threads() {
        // A kept line caches its parse in a `OnceLock`, which keeps it `Sync`.
        fn send_sync<T: Send + Sync>() {}
        send_sync::<AgentMessage>();
        send_sync::<UnknownMessage>();
        let line = r#"{"role":"someday","id":"a"}"#;
        let kept = decode_line(line, &Registry::new(), DecodeMode::Lenient).unwrap();
        let id = std::thread::scope(|s| s.spawn(|| kept.id().cloned()).join().ok().flatten());
        assert_eq!(id.as_ref().map(MessageId::as_str), Some("a"));
        assert_eq!(kept.id(), id.as_ref());
    }
}
